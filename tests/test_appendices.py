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
    for term in ("query", "key", "value", "mask", "causal", "padding", "head"):
        assert any(row.startswith(f"| {term} |") for row in rows), term


def test_shapes_cheat_sheet_has_a_section_for_every_chapter():
    text = (CHAPTERS / "appendix_shapes.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \{ref\}`(ch-[\w-]+)`", text, flags=re.M)
    assert sections and set(sections) == _labels() - {"ch-welcome"}
