"""Check or repair the typography of the Chinese catalogues (:mod:`course_book.i18n.typography`).

    python scripts/typography.py                 # count the problems of every catalogue
    python scripts/typography.py --fix           # repair every catalogue in place
    python scripts/typography.py --fix a.po b.po # repair these catalogues only

Prints one line per catalogue with problems (by rule); with ``--fix``, what was repaired and the
entries left alone (a repair that would break their Markdown). Exits 1 when problems remain.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from course_book.i18n.typography import catalogue_problems, catalogues, fix_catalogue


def main(argv: list[str]) -> int:
    """Run the check (and with ``--fix`` the repair) on the catalogues named, or all."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fix", action="store_true", help="repair the catalogues in place")
    parser.add_argument("files", nargs="*", type=Path, help="catalogues (default: all)")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    files = args.files or catalogues(root)
    left = 0
    for path in files:
        if args.fix:
            fixed, kept = fix_catalogue(path)
            if fixed or kept:
                print(f"{path}: fixed {dict(sorted(fixed.items()))}"
                      + (f"; left {len(kept)} entries: {[k[:40] for k in kept]}" if kept else ""))
        counts: Counter[str] = Counter()
        for _en, _zh, found in catalogue_problems(path):
            counts += found
        if counts:
            left += sum(counts.values())
            print(f"{path}: {sum(counts.values())} problem(s) {dict(sorted(counts.items()))}")
    print(f"{left} problem(s) in {len(files)} catalogue(s)")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
