"""Chapter 8's GPT for several seeds: training time, its claims, and what longer training buys.

The chapter's model and training (``gpt.CHAPTER_CONFIG``, ``gpt.CHAPTER_TRAINING``: 2 layers,
d_model 64, 4 heads, 48 characters of context, untied output layer; batches of 32 windows, 700
steps of Adam at lr 6e-3, on the pinned standard-library text of ``corpus``). For every seed it
prints the training time and the validation cross-entropy (nats and bits per character) against
the add-0.1 bigram and the Kneser–Ney n-gram ladder (``ngram``) on the same text, then checks
every claim the chapter makes about its model with ``gpt.claims.check_chapter_claims`` (25 %
below the bigram, below the 3-gram, not down to the 4-gram, no copying of repeated text).
``--tied`` also trains the same model with its output layer tied to the embedding (seed 0) and
checks the chapter's other claim: after this short training the untied model's validation loss
is the lower one. ``--curve`` trains seed 0 for each budget in ``gpt.LONGER_TRAINING`` (each
with its own cosine schedule), and once with weight decay (``gpt.REGULARISED_TRAINING``), and
checks that the recorded losses the chapter quotes still hold (within 0.01 nats). Targets: the
claims, training ≤ 30 s.

    .venv/bin/python benchmarks/train_gpt.py [--seeds 0 1 2] [--tied] [--curve]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import torch

from course_attention import corpus, gpt, ngram


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--tied", action="store_true", help="also train a tied model (seed 0)")
    parser.add_argument("--curve", action="store_true", help="re-measure gpt.LONGER_TRAINING")
    args = parser.parse_args()
    text = corpus.load()
    unigram, bigram = corpus.unigram_bigram_loss(text.train, text.valid)
    ladder = ngram.ladder(text.train, text.valid)
    print(
        f"torch {torch.__version__}, Python {text.python} standard library: "
        f"{len(text.train):,} training / {len(text.valid):,} validation characters"
    )
    print(f"baselines on the validation text: unigram {unigram:.3f}, add-0.1 bigram {bigram:.3f}")
    print("Kneser–Ney: " + ", ".join(
        f"{n}-gram {v:.3f} nats ({ngram.bits(v):.3f} bits)" for n, v in ladder.items()))
    runs = [(seed, gpt.CHAPTER_CONFIG) for seed in args.seeds]
    if args.tied:
        runs.append((0, dataclasses.replace(gpt.CHAPTER_CONFIG, tied=True)))
    worst, slowest, failed = 0.0, 0.0, []
    by_run: dict[tuple[int, bool], float] = {}
    for seed, config in runs:
        model, log = gpt.train_gpt(
            config, text.train, seed=seed, progress=False, **gpt.CHAPTER_TRAINING
        )
        results = gpt.claims.chapter_results(model, log.losses, text.train, text.valid, ladder)
        valid = results.valid
        by_run[seed, config.tied] = valid
        ratio = valid / bigram
        name = "tied " if config.tied else ""
        print(
            f"{name}seed {seed}: {log.seconds:5.1f} s  validation {valid:.3f} nats "
            f"({ngram.bits(valid):.3f} bits) = {ratio:.3f} × bigram; 5-gram {ladder[5]:.3f}; "
            f"repeated text {results.repeat[0]:.2f} → {results.repeat[1]:.2f} nats",
            flush=True,
        )
        if not config.tied:
            worst, slowest = max(worst, ratio), max(slowest, log.seconds)
            try:
                gpt.claims.check_chapter_claims(results)
            except AssertionError as error:
                failed.append(f"seed {seed}: {error}")
    if (0, True) in by_run and (0, False) in by_run:
        tied, untied = by_run[0, True], by_run[0, False]
        print(f"seed 0: tied {tied:.3f} vs untied {untied:.3f} nats")
        if tied <= untied:
            failed.append(f"tied ({tied:.3f}) is not worse than untied ({untied:.3f})")
    if args.curve:
        for steps, recorded in gpt.LONGER_TRAINING.items():
            settings = {**gpt.CHAPTER_TRAINING, "steps": steps}
            model, log = gpt.train_gpt(
                gpt.CHAPTER_CONFIG, text.train, seed=0, progress=False, **settings
            )
            measured = (gpt.validation_loss(model, text.valid), float(log.losses[-50:].mean()))
            print(
                f"curve: {steps:5d} steps {log.seconds:6.1f} s  validation {measured[0]:.4f}, "
                f"training {measured[1]:.4f} nats (recorded {recorded}; 5-gram {ladder[5]:.3f})",
                flush=True,
            )
            if max(abs(m - r) for m, r in zip(measured, recorded, strict=True)) > 0.01:
                failed.append(f"{steps} steps: {measured}, recorded {recorded}")
        reg = gpt.REGULARISED_TRAINING
        settings = {**gpt.CHAPTER_TRAINING, "steps": reg["steps"]}
        model, log = gpt.train_gpt(gpt.CHAPTER_CONFIG, text.train, seed=0, progress=False,
                                   weight_decay=reg["weight_decay"], **settings)
        measured = (gpt.validation_loss(model, text.valid), float(log.losses[-50:].mean()))
        print(f"weight decay {reg['weight_decay']}, {reg['steps']} steps: validation "
              f"{measured[0]:.4f}, training {measured[1]:.4f} (recorded {reg['losses']})")
        if max(abs(m - r) for m, r in zip(measured, reg["losses"], strict=True)) > 0.01:
            failed.append(f"weight decay: {measured}, recorded {reg['losses']}")
    print(
        f"gpt: worst validation {worst:.3f} × bigram ({1 - worst:.1%} below; target ≥ 25 %), "
        f"slowest training {slowest:.1f} s (target ≤ 30 s)"
    )
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
