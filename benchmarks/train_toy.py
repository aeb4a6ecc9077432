"""Training time and held-out accuracy of chapter 7's encoder–decoder on the reversal task.

The same model, data, seed and steps as the chapter. Target: ≥ 99 % exact-sequence accuracy on
the held-out sequences in ≤ 15 s on 2 cores.

    .venv/bin/python benchmarks/train_toy.py [--runs 3]
"""

from __future__ import annotations

import argparse

import torch

from course_attention import modules, tasks, training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    task = tasks.sequence_task()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'run':>3} {'train s':>8} {'held-out accuracy':>18}")
    for run in range(args.runs):
        torch.manual_seed(0)
        model = modules.Seq2SeqTransformer(
            tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=64, n_heads=4, n_layers=2, max_len=16
        )
        log = training.train(model, task, progress=False)
        accuracy = training.sequence_accuracy(model, task.test_src, task.test_tgt)
        print(f"{run:3d} {log.seconds:8.2f} {accuracy:18.3f}")
    print("target: ≥ 0.990 in ≤ 15 s")


if __name__ == "__main__":
    main()
