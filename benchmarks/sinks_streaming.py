"""Chapter 14's trained models for several seeds: first-position shares, streaming past the
trained context, soft-capping against QK-norm, and the local/global stack.

The models of ``course_attention.sinks.compare`` (``MODELS``), trained as the chapter trains them
(``compare.train_all``: two processes), measured by ``compare.chapter_results``. For every seed it
prints each model's training time and validation loss, the largest share of weight on position 0
per layer (as a multiple of the even share), the streaming losses past the trained context, and
the largest attention logit at the end; then it checks the chapter's claims
(``compare.check_chapter_claims``). The last line sums up the margins the claims rest on, over the
seeds. Target: the claims hold on every seed.

    .venv/bin/python benchmarks/sinks_streaming.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from course_attention.sinks import compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    failed, window_cost, same = [], [], []
    for seed in args.seeds:
        runs = compare.train_all(seed)
        results = compare.chapter_results(runs)
        print(f"seed {seed}")
        for name, run in runs.items():
            print(f"  {name:9s} {run.seconds:5.1f} s  validation {run.valid:.3f}")
        for name, share in results.shares.items():
            print(f"  share on position 0 / even share, per layer: {name:9s} "
                  f"{np.round(share.max(axis=1) / results.uniform, 2).tolist()}")
        for name, curves in results.streaming.items():
            past = {k: round(compare.past(v), 3) for k, v in curves.items()}
            print(f"  streaming past the context, {name}: {past}")
            window_cost.append(past["window"] - past["sinks"])
            same.append(abs(past["sinks"] - past["recompute"]))
        print("  largest logit at the end: " + ", ".join(
            f"{k} {runs[k].max_logit[-1]:.1f}" for k in ("llama", "softcap", "qknorm")))
        try:
            compare.check_chapter_claims(results)
            print("  claims hold")
        except AssertionError as error:
            failed.append(seed)
            print(f"  {error}")
    print(f"sinks_streaming: seeds {args.seeds}, window-only costs {min(window_cost):.3f} to "
          f"{max(window_cost):.3f} nats, sinks vs recompute within {max(same):.4f}, claims "
          f"{'fail on ' + str(failed) if failed else 'hold'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
