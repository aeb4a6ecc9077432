"""Chapter 9's training for seeds 0, 1, 2: the phase change, the scores, the time.

The chapter's model and data (``induction.train_induction`` defaults: 2 attention-only layers,
d_model 64, 4 heads, 64 token ids, sequences of 48 with a repeated segment of 12 to 24 tokens at
a random offset; AdamW lr 1e-2, batch 64, 1000 steps). For every seed it prints the phase-change
step (first checkpoint with the repeated-token loss below ln(64) / 2), the loss before and after,
the best induction and previous-token scores, the ablation of the best induction head and the
training time. The last line reports the worst of the seeds. Targets: after ≤ 1.5 nats,
induction score ≥ 0.5, ≤ 30 s.

    .venv/bin/python benchmarks/induction.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse

import torch

from course_attention import induction


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(f"torch {torch.__version__}, training on 1 thread (training.fit's default)")
    rows = []
    for seed in args.seeds:
        run = induction.train_induction(seed=seed, progress=False)
        step, before, after = induction.phase_change(run)
        best = run.induction[-1, 1].argmax()
        ablated = induction.head_ablation(run.model, run.eval_batch)[1, best]
        rows.append((step, before, after, float(run.induction[-1].max()), run.seconds))
        print(
            f"seed {seed}: phase change at step {step}, repeated-token loss {before:.2f} -> "
            f"{after:.2f} nats (other tokens {run.other_loss[-1]:.2f}, chance {run.chance:.2f}); "
            f"best induction score {run.induction[-1].max():.2f} (layer 1 head {best}; "
            f"switched off: loss {ablated:.2f}), best previous-token score in layer 0 "
            f"{run.previous[-1, 0].max():.2f}; {run.seconds:.1f} s",
            flush=True,
        )
    never = [r for r in rows if r[0] < 0]
    step = -1 if never else max(r[0] for r in rows)
    print(
        f"induction: phase change at step {step}, repeated-token loss "
        f"{min(r[1] for r in rows):.2f} -> {max(r[2] for r in rows):.2f} nats, best induction "
        f"score {min(r[3] for r in rows):.2f}, {max(r[4] for r in rows):.1f} s"
    )


if __name__ == "__main__":
    main()
