"""Chapter 7's two trainings (reversal, sorting) for several seeds: time and the chapter's claims.

The same model, data, steps and learning rate as the chapter. For every seed it prints the
training time, the held-out accuracy (overall and the worst trained length), the accuracy on
lengths never trained on (1, 2, 9, 10 digits), where the cross-attention looks, and how much it
moves when the source digits are shuffled; then it checks the claims the chapter asserts for
seed 0 hold for every seed. Target: each training ≤ 4 s on 2 cores (budget: the chapter
≤ 9 s above its import floor, both trainings included).

    .venv/bin/python benchmarks/train_toy.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from course_attention import inspection, modules, tasks, training

STEPS, LR = 200, 1e-2  # as in the chapter
UNSEEN = (1, 2, 9, 10)


def chapter_model(seed: int) -> modules.Seq2SeqTransformer:
    torch.manual_seed(seed)
    return modules.Seq2SeqTransformer(
        tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
    )


def run(name: str, seed: int) -> dict[str, float]:
    task = tasks.sequence_task(name)
    model = chapter_model(seed)
    log = training.train(model, task, steps=STEPS, lr=LR, seed=seed, progress=False)
    acc = training.accuracy_by_length(model, task.test_src, task.test_tgt)
    probe = tasks.strings_of_lengths(name, UNSEEN, n_per_length=100, seed=1)
    unseen = training.accuracy_by_length(model, *probe)
    out = model.greedy_decode(torch.from_numpy(probe[0]), tasks.BOS_ID, tasks.EOS_ID, max_steps=11)
    answer_len = np.array([len(tasks.decode_digits(row)) for row in out.tokens.tolist()])
    probe_len = (probe[0] >= tasks.DIGIT_OFFSET).sum(axis=1)
    typical = {n: int(np.bincount(answer_len[probe_len == n]).argmax()) for n in UNSEEN}
    aligned = inspection.alignment(model, task.test_src, task.test_tgt)
    shift = inspection.order_shift(model, name)
    return {
        "seconds": log.seconds,
        "loss_drop": log.losses[:10].mean() / log.losses[-10:].mean(),
        "accuracy": float(np.mean(list(acc.values()))),  # each length has 100 held-out strings
        "worst_trained": min(acc.values()),
        **{f"acc_{n}": unseen[n] for n in UNSEEN},
        **{f"typical_{n}": typical[n] for n in UNSEEN},
        "mirror": aligned.mirror,
        "mirror_first_layer": inspection.alignment(model, task.test_src, task.test_tgt, 0).mirror,
        "digit": aligned.digit,
        "chance": aligned.chance,
        "ends": aligned.ends,
        "by_position": shift.by_position,
        "by_content": shift.by_content,
    }


CLAIMS = {  # what the chapter asserts (for its seed 0), checked here for every seed
    "reverse": {
        "accuracy ≥ 0.99": lambda r: r["accuracy"] >= 0.99,
        "every trained length ≥ 0.95": lambda r: r["worst_trained"] >= 0.95,
        "loss falls > 20×": lambda r: r["loss_drop"] > 20,
        "1, 9, 10 digits < 0.5 ≤ 2 digits": lambda r: (
            max(r["acc_1"], r["acc_9"], r["acc_10"]) < 0.5 <= r["acc_2"]
        ),
        "typical answer lengths 1→2, 2→2, 9→8, 10→8": lambda r: (
            [r[f"typical_{n}"] for n in UNSEEN] == [2, 2, 8, 8]
        ),
        "anti-diagonal: mirror ≥ 0.7": lambda r: r["mirror"] >= 0.7,
        "first layer's mirror < last layer's / 1.5": lambda r: (
            r["mirror_first_layer"] < r["mirror"] / 1.5
        ),
        "[EOS] row on first digit + [EOS] > 0.75": lambda r: r["ends"] > 0.75,
        "by position: moves < 1/3 of by content": lambda r: r["by_position"] < r["by_content"] / 3,
    },
    "sort": {
        "accuracy ≥ 0.98": lambda r: r["accuracy"] >= 0.98,
        "every trained length ≥ 0.9": lambda r: r["worst_trained"] >= 0.9,
        "on the digit written ≥ 0.85": lambda r: r["digit"] >= 0.85,
        "mirror < 2 × chance": lambda r: r["mirror"] < 2 * r["chance"],
        "by content: moves < 1/3 of by position": lambda r: r["by_content"] < r["by_position"] / 3,
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(f"torch {torch.__version__}, training on 1 thread (training.train's default)")
    failed = []
    for name in CLAIMS:
        for seed in args.seeds:
            r = run(name, seed)
            print(
                f"{name:7} seed {seed}: {r['seconds']:5.2f} s  acc {r['accuracy']:.3f} "
                f"(worst trained length {r['worst_trained']:.2f})  unseen "
                + " ".join(f"{n}:{r[f'acc_{n}']:.2f}" for n in UNSEEN)
                + f"  mirror {r['mirror']:.2f} digit {r['digit']:.2f} ends {r['ends']:.2f}"
                f"  moved by position {r['by_position']:.2f} / by content {r['by_content']:.2f}",
                flush=True,
            )
            failed += [f"{name} seed {seed}: {c}" for c, ok in CLAIMS[name].items() if not ok(r)]
    print("every claim holds for every seed" if not failed else "FAILED:\n  " + "\n  ".join(failed))
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
