"""Two packages, kept apart (issue 23): the course and the machinery that publishes it.

``course_attention`` is what the chapters import (and the runtime translation its figures,
explorers and checker need); ``course_book`` builds and publishes the book (the Sphinx extension
and renderers, the reader editions, the Time lines, the Chinese edition's catalogues). The course
must stand without the book's machinery: no module of ``course_attention`` and no code cell of a
chapter or of a reader edition imports ``course_book``.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "src" / "course_attention"
BOOK = ROOT / "src" / "course_book"


def imported_modules(source: str) -> set[str]:
    """The absolute names of the modules a piece of Python imports (``import a.b``, ``from a
    import b``; a relative import stays inside its own package and is left out)."""
    names: set[str] = set()
    python = TransformerManager().transform_cell(source)  # IPython's magics as Python
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def from_book(names: set[str]) -> list[str]:
    """The names among ``names`` that are ``course_book`` or one of its modules."""
    return sorted(n for n in names if n == "course_book" or n.startswith("course_book."))


def test_imported_modules_reads_every_kind_of_import():
    source = ("try:\n    import x\nexcept ImportError:\n    %pip install x\n"
              "import course_book.reader as r\nfrom course_book import book\n"
              "from . import core\ndef f():\n    import course_book.i18n.units\n")
    assert from_book(imported_modules(source)) == [
        "course_book", "course_book.i18n.units", "course_book.reader"]
    assert from_book(imported_modules("from course_attention import viz")) == []


def test_both_packages_exist_and_the_book_machinery_left_the_course():
    assert (COURSE / "__init__.py").is_file() and (BOOK / "__init__.py").is_file()
    for moved in ("book.py", "reader.py", "course_time.py", "static", "i18n/units.py",
                  "i18n/catalog.py", "i18n/edition.py", "i18n/package.py", "i18n/__main__.py"):
        assert not (COURSE / moved).exists(), f"{moved} belongs to course_book"
        assert (BOOK / moved).exists(), f"course_book/{moved} is missing"


@pytest.mark.parametrize("path", sorted(COURSE.rglob("*.py")),
                         ids=lambda p: p.relative_to(COURSE).as_posix())
def test_the_course_package_imports_nothing_from_the_book(path):
    names = imported_modules(path.read_text(encoding="utf-8"))
    assert from_book(names) == [], f"{path.relative_to(ROOT)} imports the book's machinery"


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


NOTEBOOKS = sorted([*(ROOT / "chapters").glob("*.ipynb"), *(ROOT / "notebooks").rglob("*.ipynb")])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chapters_and_reader_editions_import_nothing_from_the_book(path):
    for i, source in enumerate(_code_cells(path)):
        names = imported_modules(source)
        assert from_book(names) == [], f"{path.relative_to(ROOT)}, code cell {i}: {names}"


def test_the_chapters_use_the_course_package():
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    assert chapters, "no chapter notebooks found"
    for path in chapters:
        names = set().union(*(imported_modules(s) for s in _code_cells(path)))
        assert any(n.split(".")[0] == "course_attention" for n in names), path.name
