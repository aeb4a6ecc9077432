"""Chapter 13's trained comparison for several seeds: multi-head, grouped-query and multi-head
latent attention with the same KV cache per token, against the n-gram ladder.

The three models of ``course_attention.mla.compare`` (``MODELS``: ``mha``, 4 key/value heads of
width 8; ``gqa``, 2 key/value heads of width 16, chapter 12's Llama-style model; ``mla``, a latent
of width 56 and a rotary key of width 8; each caching 128 numbers per token and within 0.2 % of
chapter 8's GPT's parameters), trained alike by ``mla_compare.train_model`` on chapter 8's corpus
(``TRAINING`` by default: 250 steps of batches of 16 at lr 6e-3, chapter 8's Adam, warm-up and
cosine schedule). For every seed it prints each model's parameters, cache numbers per token,
training time and validation loss, then checks the chapter's claims
(``mla_compare.check_chapter_claims``) when the training is the chapter's. ``--steps`` and
``--batch-size`` train longer (the claims are then not checked). ``--check`` compares the
validation losses with ``mla_compare.RECORDED`` for that training (fails beyond 0.01 nats). The
last line sums it up. Target: the claims hold on every seed.

    .venv/bin/python benchmarks/mla_vs_gqa.py [--seeds 0 1 2] [--steps 700 --batch-size 32]
        [--check]
"""

from __future__ import annotations

import argparse
import sys

import torch

from course_attention import corpus, ngram
from course_attention.mla import compare as mla_compare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=mla_compare.TRAINING["steps"])
    parser.add_argument("--batch-size", type=int, default=mla_compare.TRAINING["batch_size"])
    parser.add_argument("--check", action="store_true", help="compare with mla_compare.RECORDED")
    args = parser.parse_args()
    text = corpus.load()
    ladder = ngram.ladder(text.train, text.valid)
    chapters = (args.steps, args.batch_size) == (mla_compare.TRAINING["steps"],
                                                 mla_compare.TRAINING["batch_size"])
    recorded = mla_compare.RECORDED.get((args.steps, args.batch_size))
    print(f"torch {torch.__version__}, Python {text.python} standard library; {args.steps} steps "
          f"of batches of {args.batch_size}, lr {mla_compare.TRAINING['lr']}")
    print("Kneser–Ney: " + ", ".join(f"{n}-gram {v:.3f}" for n, v in ladder.items()))
    print(f"{'seed':>4} {'model':>5} {'params':>8} {'cache':>5} {'seconds':>7} {'valid':>7}")
    valid: dict[str, list[float]] = {name: [] for name in mla_compare.MODELS}
    failed = []
    for seed in args.seeds:
        runs = {name: mla_compare.train_model(name, seed, args.steps, args.batch_size)
                for name in mla_compare.MODELS}
        for name, run in runs.items():
            valid[name].append(run.valid)
            print(f"{seed:>4} {name:>5} {run.n_params:>8,} {run.cache_numbers:>5} "
                  f"{run.seconds:>7.1f} {run.valid:>7.4f}", flush=True)
            if args.check and recorded is not None and seed in (0, 1, 2):
                then = recorded[name][seed]
                if abs(run.valid - then) > 0.01:
                    failed.append(f"seed {seed} {name}: {run.valid:.4f}, recorded {then}")
        if chapters:
            try:
                mla_compare.check_chapter_claims(mla_compare.chapter_results(runs, ladder))
            except AssertionError as error:
                failed.append(f"seed {seed}: {error}")
    if args.check and recorded is None:
        failed.append(f"mla_compare.RECORDED holds no {args.steps} steps × {args.batch_size}")
    seeds = ", ".join(map(str, args.seeds))
    spans = ", ".join(f"{name} {min(v):.3f}–{max(v):.3f}" for name, v in valid.items())
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
    print(f"mha vs gqa vs mla at {mla_compare.CACHE_NUMBERS} cache numbers per token "
          f"({args.steps} steps): valid {spans}; 3-gram {ladder[3]:.3f}, 2-gram {ladder[2]:.3f} "
          f"(seeds {seeds})")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
