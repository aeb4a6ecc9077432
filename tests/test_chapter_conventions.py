"""House rules every chapter keeps: quiet bookkeeping, exercises that show difficulty and time."""

from __future__ import annotations

import re

import nbformat
import pytest

from _notebooks import notebooks
from course_attention import exercises as ex

CHAPTERS = notebooks()
HIDDEN = {"remove-cell", "remove-input"}
BOOKKEEPING = re.compile(r"\bglue\(")


def _visible_code_lines(nb) -> list[str]:
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code" and not HIDDEN & set(cell.metadata.get("tags", [])):
            lines += [line for line in cell.source.splitlines() if line.strip()]
    return lines


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_bookkeeping_is_at_most_five_percent_of_the_visible_code(path):
    """Glue calls store numbers for the prose; the learner should see the teaching code."""
    lines = _visible_code_lines(nbformat.read(path, as_version=4))
    bookkeeping = [line for line in lines if BOOKKEEPING.search(line)]
    assert len(bookkeeping) <= 0.05 * len(lines), (
        f"{path.name}: {len(bookkeeping)} of {len(lines)} visible code lines are glue calls; "
        "glue many values in one call or move them to a cell tagged remove-cell"
    )


EXERCISE = re.compile(r":::\{exercise\}(?P<title>[^\n]*)\n:label: ex-(?P<id>[\w-]+)")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_exercise_shows_the_difficulty_and_time_of_its_checker(path):
    text = "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"
    )
    for match in EXERCISE.finditer(text):
        exercise_id = match["id"]
        if exercise_id not in ex.EXERCISES:  # e.g. the spot-the-bug appendix's questions
            continue
        badge = ex.EXERCISES[exercise_id].badge
        assert badge in match["title"], f"{path.name}: ex-{exercise_id} should show {badge!r}"
