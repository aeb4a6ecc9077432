"""Chapter 12's trained comparison for several seeds: chapter 8's GPT-2 block against the modern
block (and the modern block without QK-norm), the n-gram ladder, the largest attention logit.

The three models of ``modern.compare`` (``MODELS``: ``gpt2``, chapter 8's GPT; ``modern``, Qwen3's
recipe with the same parameter count; ``llama``, the same without QK-norm), trained alike by
``compare.train_model`` on chapter 8's corpus (``COMPARE_TRAINING`` by default: 250 steps of
batches of 16 at lr 6e-3, chapter 8's Adam, warm-up and cosine schedule). For every seed it prints
each model's parameters, training time, validation loss and largest attention logit at the start
and the end, then checks the chapter's claims (``compare.check_chapter_claims``) when the training
is the chapter's. ``--steps`` and ``--batch-size`` train longer, ``--lr`` is a stress test at a
higher learning rate (the claims are then not checked: they are about the chapter's training).
``--check`` compares the validation losses with ``compare.RECORDED`` for that training, when it
holds one (fails beyond 0.01 nats). The last line sums it up. Target: the claims hold on every
seed.

    .venv/bin/python benchmarks/modern_vs_gpt2.py [--seeds 0 1 2] [--steps 700 --batch-size 32]
        [--lr 3e-2] [--check]
"""

from __future__ import annotations

import argparse
import sys

import torch

from course_attention import corpus, ngram
from course_attention.modern import compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=compare.COMPARE_TRAINING["steps"])
    parser.add_argument("--batch-size", type=int,
                        default=compare.COMPARE_TRAINING["batch_size"])
    parser.add_argument("--lr", type=float, default=compare.COMPARE_TRAINING["lr"],
                        help="a stress test at a higher learning rate (no claims checked)")
    parser.add_argument("--check", action="store_true", help="compare with compare.RECORDED")
    args = parser.parse_args()
    text = corpus.load()
    ladder = ngram.ladder(text.train, text.valid)
    chapters = (args.steps, args.batch_size, args.lr) == tuple(
        compare.COMPARE_TRAINING[k] for k in ("steps", "batch_size", "lr"))
    recorded = (compare.RECORDED.get((args.steps, args.batch_size))
                if args.lr == compare.COMPARE_TRAINING["lr"] else None)
    print(f"torch {torch.__version__}, Python {text.python} standard library; {args.steps} steps "
          f"of batches of {args.batch_size}, lr {args.lr}")
    print("Kneser–Ney: " + ", ".join(f"{n}-gram {v:.3f}" for n, v in ladder.items()))
    print(f"{'seed':>4} {'model':>7} {'params':>8} {'seconds':>7} {'valid':>7} "
          f"{'logit start':>11} {'logit end':>9}")
    valid: dict[str, list[float]] = {name: [] for name in compare.MODELS}
    logit: dict[str, list[float]] = {name: [] for name in compare.MODELS}
    failed = []
    for seed in args.seeds:
        runs = {name: compare.train_model(name, seed, args.steps, args.batch_size, args.lr)
                for name in compare.MODELS}
        for name, run in runs.items():
            valid[name].append(run.valid)
            logit[name].append(float(run.max_logit[-1]))
            print(f"{seed:>4} {name:>7} {run.n_params:>8,} {run.seconds:>7.1f} {run.valid:>7.4f} "
                  f"{run.max_logit[0]:>11.2f} {run.max_logit[-1]:>9.2f}", flush=True)
            if args.check and recorded is not None and seed in (0, 1, 2):
                then = recorded["valid"][name][seed]
                if abs(run.valid - then) > 0.01:
                    failed.append(f"seed {seed} {name}: {run.valid:.4f}, recorded {then}")
        if chapters:
            try:
                compare.check_chapter_claims(compare.chapter_results(runs, ladder))
            except AssertionError as error:
                failed.append(f"seed {seed}: {error}")
    if args.check and recorded is None:
        failed.append(f"compare.RECORDED holds no {args.steps} steps × {args.batch_size} at lr "
                      f"{args.lr}")
    seeds = ", ".join(map(str, args.seeds))
    spans = ", ".join(f"{name} {min(v):.3f}–{max(v):.3f}" for name, v in valid.items())
    logits = ", ".join(f"{name} {min(v):.1f}–{max(v):.1f}" for name, v in logit.items())
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
    print(f"modern vs gpt2 ({args.steps} steps): valid {spans}; 3-gram {ladder[3]:.3f}, "
          f"2-gram {ladder[2]:.3f}; largest logit at the end {logits} (seeds {seeds})")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
