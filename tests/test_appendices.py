"""The glossary and the shapes cheat sheet cover the course and link to existing chapters."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def _labels() -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in CHAPTERS.glob("*.*"))
    return set(re.findall(r"\((ch-[\w-]+)\)=", text))


def test_glossary_has_forty_terms_in_english_and_chinese_linked_to_chapters():
    rows = [
        line
        for line in (CHAPTERS / "appendix_glossary.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and "{ref}" in line
    ]
    assert len(rows) >= 40
    labels = _labels()
    for row in rows:
        english, chinese, chapter = (cell.strip() for cell in row.strip("|").split("|"))
        assert re.search(r"[a-zA-Z]", english) and re.search(r"[\u4e00-\u9fff]", chinese), row
        assert re.fullmatch(r"\{ref\}`(ch-[\w-]+)`", chapter).group(1) in labels, row
    for term in ("query", "key", "value", "mask", "causal mask", "padding", "head"):
        assert any(row.startswith(f"| {term} |") for row in rows), term


def _chapters_in_reading_order() -> list[tuple[str, str]]:
    """(label, prose) of every chapter in the book's order (``_toc.yml``), appendices left out:
    the prose of a notebook is its markdown cells."""
    import nbformat
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]
    out = []
    for name in files:
        if "appendix" in name or "references" in name:
            continue
        md, nb = ROOT / f"{name}.md", ROOT / f"{name}.ipynb"
        text = md.read_text(encoding="utf-8") if md.exists() else "\n\n".join(
            c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "markdown")
        out.append((re.search(r"\((ch-[\w-]+)\)=", text).group(1), text))
    return out


def _defines(text: str, english: str, chinese: str) -> bool:
    """A chapter defines a term where it sets one of its English forms in bold (``**heads**``,
    plurals too) or gives its Chinese term in parentheses, as the style guide asks."""
    bare = re.sub(r"\s*\([^)]*\)", "", english)  # "tiling (tile)" -> "tiling"
    forms = [f.strip() for f in re.split(r",| / ", bare) if f.strip()]
    if any(re.search(rf"\*\*{re.escape(f)}(s|es)?\*\*", text, re.I) for f in forms):
        return True
    main = re.split(r"[（(]", chinese)[0].strip()
    for term in [main] + [t.strip() for t in re.split(r"[，,/]", main) if t.strip()]:
        if re.search(rf"[(（]\s*{re.escape(term)}\s*[)）,，;；]", text):
            return True
    return False


def test_each_glossary_term_is_credited_to_the_chapter_that_first_defines_it():
    """Issue 25, item 9: "introduced in" is where a reader first meets the term defined, reading in
    the book's order (the toolbox before chapter 1), derived here rather than typed by hand."""
    chapters = _chapters_in_reading_order()
    wrong = []
    for row in (CHAPTERS / "appendix_glossary.md").read_text(encoding="utf-8").splitlines():
        if not (row.startswith("| ") and "{ref}" in row):
            continue
        english, chinese, chapter = (cell.strip() for cell in row.strip("|").split("|"))
        given = re.search(r"`(ch-[\w-]+)`", chapter).group(1)
        first = next((label for label, text in chapters if _defines(text, english, chinese)), None)
        if first != given:
            wrong.append(f"{english}: the table says {given}, first defined in {first}")
    assert not wrong, wrong


def test_the_glossary_holds_the_terms_the_toolbox_defines():
    rows = (CHAPTERS / "appendix_glossary.md").read_text(encoding="utf-8")
    for term in ("residual stream", "linear probe", "AdamW", "perplexity"):
        assert re.search(rf"^\| {term}\b", rows, re.M), term


def test_shapes_cheat_sheet_has_a_section_for_every_chapter():
    text = (CHAPTERS / "appendix_shapes.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \{ref\}`(ch-[\w-]+)`", text, flags=re.M)
    assert sections and set(sections) == _labels() - {"ch-welcome"}
