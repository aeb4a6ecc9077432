"""``python -m course_book.i18n update|check|write [doc …]``: the Chinese catalogues.

``python -m course_book.i18n package [module …]`` updates the package catalogues of those
modules (``viz/lookup.py``; default: all of them).

``update`` brings each catalogue (prose and code comments) in step with the English (new units,
fuzzy changes); ``check`` prints every untranslated, fuzzy or broken entry and exits 1 when
there is one; ``write`` writes the Chinese book's sources to ``zh/``
(:mod:`course_book.i18n.edition`).
Documents are ``chapters/<name>`` (default: all).
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import catalog, comments, edition, package


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"update", "check", "write", "package"}:
        print(__doc__)
        return 2
    if argv[0] == "package":
        print("package", package.update_package_catalog(modules=argv[1:] or None))
        return 0
    root = Path.cwd()
    docs = [d if d.startswith("chapters/") else f"chapters/{d}" for d in argv[1:]]
    docs = [d.removesuffix(".ipynb").removesuffix(".md").removesuffix(".po") for d in docs]
    docs = docs or catalog.documents(root)
    failed = 0
    if argv[0] == "write":
        print("wrote", edition.write_book(root))
        return 0
    if argv[0] == "update" and not argv[1:]:
        edition.update_book_catalog(root)
        print("package", package.update_package_catalog())
    if argv[0] == "check" and not argv[1:]:
        for p in [*edition.book_problems(root), *package.package_problems()]:
            failed += 1
            print(p)
    for doc in docs:
        if argv[0] == "update":
            print(doc, catalog.update_catalog(root, doc))
            print(doc, "comments", comments.update_comments(root, doc))
        elif argv[0] == "check":
            problems = [*catalog.catalog_problems(root, doc), *comments.comment_problems(root, doc)]
            failed += len(problems)
            for p in problems:
                print(f"{doc}: {p}")
    if argv[0] == "check":
        print(f"{failed} problem(s) in {len(docs)} catalogue(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
