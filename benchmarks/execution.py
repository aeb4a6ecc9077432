"""Seconds to execute each chapter in a fresh kernel, against its floor.

The floor is a fresh kernel running only the chapter's setup and import cells (the first two code
cells): what any version of the chapter must pay. Targets: Parts I–II and the appendices (the
book before Part III, training included) ≤ 100 s; Part I and the appendices within their floor
+ 20 s. Part III (chapters 12–15) is timed too, with no target here (chapter 15 has its own).

    .venv/bin/python benchmarks/execution.py [--repeat 3] [--only 07_encoder]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _notebooks import execute, notebooks  # noqa: E402


def floor_notebook(path: Path, tmp: Path) -> Path:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"][:2]
    nb.cells = code
    out = tmp / f"floor_{path.name}"
    nbformat.write(nb, out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="runs per notebook (median kept)")
    parser.add_argument("--only", default="", help="only notebooks whose name contains this")
    args = parser.parse_args()
    tmp = Path(__file__).resolve().parents[1] / "_build" / "bench"
    tmp.mkdir(parents=True, exist_ok=True)
    total = total_floor = part1 = part1_floor = part3 = part3_floor = 0.0
    print(f"{'chapter':32} {'seconds':>8} {'floor':>8} {'ratio':>6}")
    for path in (p for p in notebooks() if args.only in p.stem):
        full = statistics.median(execute(path)[1] for _ in range(args.repeat))
        floor_path = floor_notebook(path, tmp)
        floor = statistics.median(execute(floor_path)[1] for _ in range(args.repeat))
        if path.stem[:2] in {"12", "13", "14", "15"}:
            part3, part3_floor = part3 + full, part3_floor + floor
        else:
            total, total_floor = total + full, total_floor + floor
        if path.stem[:2] in {"01", "02", "03", "04", "05", "06", "07"} or "appendix" in path.stem:
            part1, part1_floor = part1 + full, part1_floor + floor
        print(f"{path.stem:32} {full:8.2f} {floor:8.2f} {full / floor:6.2f}")
    print(
        f"Part I + appendices {part1:.1f} s = floor {part1_floor:.1f} s "
        f"+ {part1 - part1_floor:.1f} s (target: floor + 20 s)"
    )
    if part3:
        print(f"Part III {part3:.1f} s, floor {part3_floor:.1f} s")
    if total:
        print(
            f"Parts I–II + appendices {total:.1f} s (target ≤ 100 s), floor {total_floor:.1f} s, "
            f"ratio {total / total_floor:.2f}"
        )


if __name__ == "__main__":
    main()
