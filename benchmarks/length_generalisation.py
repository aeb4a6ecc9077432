"""Training steps and seconds of chapter 10's length experiment, per position kind and seed.

Each kind trains with ``positions.length_generalisation`` (stops once it copies ≥ 98% of the
strings of every training length, checked every 100 steps; at most 700 steps). The chapter runs
seed 0, ``tests/test_positions.py`` seeds 1 and 2. Target: the five trainings of one seed
≤ 15 s on one core of the 2-core build machine, so that the whole book executes in ≤ 100 s.

    .venv/bin/python benchmarks/length_generalisation.py [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse

from course_attention import positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    print(
        f"{'kind':>10} {'seed':>4} {'steps':>5} {'fit':>5} {'seconds':>7} {'min 1-8':>7} "
        f"{'n=9':>5} {'n=10':>5} {'n=11':>5} {'n=16':>5}"
    )
    for seed in args.seeds:
        total = 0.0
        for kind in positions.POSITION_KINDS:
            run = positions.length_generalisation(kind, seed)
            total += run.seconds
            ex = run.exact
            print(
                f"{kind:>10} {seed:4d} {run.steps_trained:5d} {str(run.fitted):>5} "
                f"{run.seconds:7.2f} {min(ex[n] for n in range(1, 9)):7.2f} {ex[9]:5.2f} "
                f"{ex[10]:5.2f} {ex[11]:5.2f} {ex[16]:5.2f}"
            )
        print(f"seed {seed}: the five trainings took {total:.1f} s")


if __name__ == "__main__":
    main()
