"""Rewrite every chapter's **Time** line from the computation in ``course_book.course_time``.

The minutes come from the chapter's words, its code, its exercises' badges and its explorers
(see that module's docstring for the rates); ``tests/test_course_time.py`` fails when a line is
stale. This script changes only the Time line of each notebook in ``_toc.yml`` (the first
Markdown line that starts with ``**Time**``; outputs and every other cell stay as they are), and
the welcome page's ``**Time for the whole course**`` line when it has one.

    python scripts/update_times.py            # rewrite the stale lines (the Chinese ones too)
    python scripts/update_times.py --check    # print what is stale; exit 1 if anything is
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from course_book import course_time as ct

ROOT = Path(__file__).resolve().parents[1]
TIME_RE = ct.ANY_TIME_LINE_RE


def _replace_first(text: str, pattern: re.Pattern[str], line: str) -> str:
    return pattern.sub(lambda _: line, text, count=1)


def update(root: Path = ROOT, check: bool = False) -> list[str]:
    """Rewrite (or with ``check``, only report) the stale Time lines; return what was stale."""
    times = ct.course_time(root / "_toc.yml")
    stale = []
    for path in ct.toc_documents(root / "_toc.yml"):
        if path.suffix != ".ipynb" or path.stem not in times:
            continue
        line = times[path.stem].line
        nb = nbformat.read(path, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "markdown" and TIME_RE.search(c.source))
        old = TIME_RE.search(cell.source).group(0)
        print(f"{path.relative_to(root)}: {line}")
        if old == line:
            continue
        stale.append(f"{path.relative_to(root)}: {old!r} -> {line!r}")
        if not check:
            cell.source = _replace_first(cell.source, TIME_RE, line)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    total = ct.course_line(times["total"])
    welcome = ct.toc_documents(root / "_toc.yml")[0]
    text = welcome.read_text(encoding="utf-8")
    found = ct.COURSE_LINE_RE.search(text)
    print(f"{welcome.relative_to(root)}: {total}")
    if found and found.group(0) != total:
        stale.append(f"{welcome.relative_to(root)}: {found.group(0)!r} -> {total!r}")
        if not check:
            welcome.write_text(_replace_first(text, ct.COURSE_LINE_RE, total), encoding="utf-8")
    elif not found:
        print(f"  ({welcome.relative_to(root)} has no such line yet: add the one above)")
    return stale


def translate(root: Path = ROOT) -> list[str]:
    """Bring the Chinese catalogues in step with the English (``course_book.i18n update``) and
    write each Time line's and the course line's Chinese form (``course_time.chinese_line``);
    return the catalogues changed."""
    import polib

    from course_book.i18n import catalog

    changed = []
    for doc in catalog.documents(root):
        catalog.update_catalog(root, doc)
        path = catalog.catalog_path(root, doc)
        if not path.exists():
            continue
        po = polib.pofile(str(path), wrapwidth=0)
        touched = False
        for entry in po:
            chinese = ct.chinese_line(entry.msgid)
            if chinese and (entry.msgstr != chinese or "fuzzy" in entry.flags):
                entry.msgstr, entry.previous_msgid = chinese, None
                if "fuzzy" in entry.flags:
                    entry.flags.remove("fuzzy")
                touched = True
        if touched:
            po.save(str(path))
            changed.append(str(path.relative_to(root)))
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale lines, change nothing")
    args = parser.parse_args(argv)
    stale = update(check=args.check)
    for change in stale:
        print(("stale " if args.check else "updated ") + change)
    if stale and not args.check:
        for path in translate():
            print(f"updated {path}: the Chinese Time lines")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
