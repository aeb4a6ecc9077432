"""The chapters are stored clean and execute deterministically in a fresh kernel."""

from __future__ import annotations

import json

import nbformat
import pytest

from _notebooks import ROOT, execute, notebooks, toc_files

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


EXPLORER_MIME = "application/vnd.course-attention.explorer+json"


def _text_outputs(nb) -> list[str]:
    texts = []
    for cell in nb.cells:
        if "timing" in cell.metadata.get("tags", []):
            continue  # wall-clock measurements differ from run to run by nature
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                texts.append(out.text)
            elif "data" in out:
                data = out["data"]
                if EXPLORER_MIME in data:  # the page's explorer, model weights included
                    texts.append(json.dumps(data[EXPLORER_MIME], sort_keys=True))
                    continue
                if "application/vnd.jupyter.widget-view+json" in data:
                    continue  # a widget's id differs from run to run
                for mime in ("text/plain", "application/vnd.plotly.v1+json"):
                    if mime in data:
                        texts.append(json.dumps(data[mime], sort_keys=True))
    return texts


def _fresh_build_copy(path):
    """The copy the strict book build executed, if it is newer than the notebook and the package.

    `make test` builds the book before this test: reusing that execution as the first of the two
    runs saves one execution of the whole book. A stale copy (an edit since) is never used.
    """
    built = ROOT / "_build" / "jupyter_execute" / path.relative_to(ROOT)
    if not built.exists():
        return None
    sources = [path, *(ROOT / "src").rglob("*.py")]
    if built.stat().st_mtime <= max(f.stat().st_mtime for f in sources):
        return None
    return nbformat.read(built, as_version=4)


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_executes_in_a_fresh_kernel_deterministically(path):
    first = _fresh_build_copy(path)
    if first is None:
        first, _ = execute(path)
    second, _ = execute(path)
    errors = [o for c in first.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert _text_outputs(first) == _text_outputs(second), "outputs differ between two runs"
