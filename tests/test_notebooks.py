"""The chapters are stored clean, start with their setup cell and are all in the table of contents.

That they execute in a fresh kernel, and give the same numbers on other CPU kernels but for the
values glued as the build's example, is checked by ``make colab-check`` (tests/colab_like.py,
tests/drift.py): it replaced the same-machine repeat, which passed on the machine that wrote the
numbers and said nothing of a reader's."""

from __future__ import annotations

import nbformat
import pytest

from _notebooks import ROOT, notebooks, toc_files

NOTEBOOKS = notebooks()
IDS = [p.stem for p in NOTEBOOKS]


def test_every_toc_entry_exists_and_every_chapter_is_in_the_toc():
    for f in toc_files():
        assert (ROOT / f"{f}.ipynb").exists() or (ROOT / f"{f}.md").exists(), f
    listed = {ROOT / f"{f}.ipynb" for f in toc_files()}
    for path in (ROOT / "chapters").glob("*.ipynb"):
        assert path in listed, f"{path.name} is not in _toc.yml"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_stored_clean(path):
    nb = nbformat.reads(path.read_text(), as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert "widgets" not in nb.metadata, "widget state is stored: clear it"
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {i} has stored outputs"
            assert cell.execution_count is None, f"cell {i} has an execution count"
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    lines = [line for line in first.source.splitlines() if line.strip()]
    assert any(line.startswith("# ") for line in lines[:2]), "first cell must hold the # Title"


def test_chapters_import_the_package_and_start_with_a_setup_cell():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "course_attention" in code[0].source, (
            f"{path.name}: first code cell is the setup cell"
        )
        assert any("import course_attention" in c.source for c in code), path.name
