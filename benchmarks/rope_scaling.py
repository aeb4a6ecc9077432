"""Chapter 12's long-context RoPE rules on chapter 10's copy task, without retraining.

For each seed, chapter 10's rotary copy model (``positions.length_generalisation("rotary",
seed)``: trained on strings of 1 to 8 symbols until it fits) copies strings of 1 to 16 symbols
with its rotation as trained (plain) and stretched by factor 2 by each rule of
``course_attention.rope_scaling``: linear interpolation, dynamic NTK, YaRN and Llama 3's. Printed:
the exact-copy share at 8 (trained), 10, 12, 14 and 16 symbols (twice the trained length).

    .venv/bin/python benchmarks/rope_scaling.py [--seeds 0 1 2] [--factor 2]

Last line: ``rope scaling (factor F): at 16 symbols plain a-b, linear …, dynamic …, yarn …,
llama3 … (lowest-highest over the seeds)``.
"""

from __future__ import annotations

import argparse

from course_attention import positions, rope_scaling

SHOWN = (8, 10, 12, 14, 16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--factor", type=float, default=2.0)
    args = parser.parse_args()
    at_16: dict[str, list[float]] = {rule: [] for rule in rope_scaling.RULES}
    print(f"{'seed':>4} {'rule':>8} " + " ".join(f"{n:>6}" for n in SHOWN))
    for seed in args.seeds:
        run = positions.length_generalisation("rotary", seed=seed)
        for rule in rope_scaling.RULES:
            exact = rope_scaling.copy_accuracy_scaled(run.model, rule, args.factor, seed=seed)
            at_16[rule].append(exact[16])
            print(f"{seed:>4} {rule:>8} " + " ".join(f"{exact[n]:6.2f}" for n in SHOWN))
    summary = ", ".join(f"{rule} {min(v):.2f}-{max(v):.2f}" for rule, v in at_16.items())
    print(f"rope scaling (factor {args.factor:g}): at 16 symbols {summary} "
          f"(lowest-highest over seeds {', '.join(map(str, args.seeds))})")


if __name__ == "__main__":
    main()
