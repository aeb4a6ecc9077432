"""Chapter 8's GPT for several seeds: training time, validation loss against the baselines.

The chapter's model and training (``gpt.CHAPTER_CONFIG``, ``gpt.CHAPTER_TRAINING``: 2 layers,
d_model 64, 4 heads, 48 characters of context, untied output layer; batches of 32 windows, 700
steps of Adam at lr 6e-3, on the pinned standard-library text of ``corpus``). For every seed it
prints the training time and the validation cross-entropy (nats per character) against the
unigram and bigram baselines on the same text, then checks the chapter's claim for every seed:
validation loss ≤ 0.75 × bigram. ``--tied`` also trains the same model with its output layer tied
to the embedding (seed 0) and checks the chapter's other claim: after this short training the
untied model's validation loss is the lower one. Targets: the claims, training ≤ 30 s.

    .venv/bin/python benchmarks/train_gpt.py [--seeds 0 1 2] [--tied]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import torch

from course_attention import corpus, gpt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tied", action="store_true", help="also train a tied model (seed 0)")
    args = parser.parse_args()
    text = corpus.load()
    unigram, bigram = corpus.unigram_bigram_loss(text.train, text.valid)
    print(
        f"torch {torch.__version__}, Python {text.python} standard library: "
        f"{len(text.train):,} training / {len(text.valid):,} validation characters"
    )
    print(f"baselines on the validation text: unigram {unigram:.3f}, bigram {bigram:.3f} nats")
    runs = [(seed, gpt.CHAPTER_CONFIG) for seed in args.seeds]
    if args.tied:
        runs.append((0, dataclasses.replace(gpt.CHAPTER_CONFIG, tied=True)))
    worst, slowest, failed = 0.0, 0.0, []
    by_run: dict[tuple[int, bool], float] = {}
    for seed, config in runs:
        model, log = gpt.train_gpt(
            config, text.train, seed=seed, progress=False, **gpt.CHAPTER_TRAINING
        )
        valid = gpt.validation_loss(model, text.valid)
        by_run[seed, config.tied] = valid
        ratio = valid / bigram
        name = "tied " if config.tied else ""
        print(
            f"{name}seed {seed}: {log.seconds:5.1f} s  validation {valid:.3f} nats = "
            f"{ratio:.3f} × bigram ({1 - ratio:.1%} below)",
            flush=True,
        )
        if not config.tied:
            worst, slowest = max(worst, ratio), max(slowest, log.seconds)
            if ratio > 0.75:
                failed.append(f"seed {seed}: {ratio:.3f} × bigram > 0.75")
    if (0, True) in by_run and (0, False) in by_run:
        tied, untied = by_run[0, True], by_run[0, False]
        print(f"seed 0: tied {tied:.3f} vs untied {untied:.3f} nats")
        if tied <= untied:
            failed.append(f"tied ({tied:.3f}) is not worse than untied ({untied:.3f})")
    print(
        f"gpt: worst validation {worst:.3f} × bigram ({1 - worst:.1%} below; target ≥ 25 %), "
        f"slowest training {slowest:.1f} s (target ≤ 30 s)"
    )
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
