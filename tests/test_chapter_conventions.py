"""House rules every chapter keeps: quiet bookkeeping, exercises that show difficulty and time."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from _notebooks import CHAPTERS as CHAPTERS_DIR
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


# --- Claims about trained models hold on seeds 0, 1 and 2 (issue 16, README "Adding a chapter") ---

SRC = Path(__file__).resolve().parents[1] / "src" / "course_attention"

#: Chapters that train a model, with the package function that asserts every claim the chapter
#: makes about what its models learned, and the test that calls that function on models trained
#: with seeds 0, 1 and 2. The chapter calls the function on its own (seed-0) numbers. When your
#: chapter trains a model, add it here (and remove it from ``CLAIMS_PENDING``).
TRAINED_MODEL_CLAIMS: dict[str, tuple[str, str]] = {
    "07_encoder_decoder": (
        "check_encoder_decoder_claims",
        "test_encoder_decoder_chapter.py::test_chapter_7_claims_hold_for_seeds_0_1_2",
    ),
    "08_decoder_only": (
        "check_chapter_claims",
        "test_gpt.py::test_the_chapters_claims_hold_on_seeds_0_1_2",
    ),
    "09_induction_heads": (
        "check_claims",
        "test_induction.py::test_the_chapters_claims_hold_on_seeds_0_1_and_2",
    ),
    "10_positions": (
        "length_claims",
        "test_positions.py::test_length_generalisation_claims_hold_for_every_seed",
    ),
}
#: Chapters that train a model whose claims function is still being written (issue 16's Part II
#: items, owned by other engineers). An entry here is a known gap, listed so the check below
#: stays real for every other chapter; it fails once the chapter no longer trains or is registered.
CLAIMS_PENDING: set[str] = set()


def _training_functions() -> set[str]:
    """``fit`` (the one training loop) and every module-level package function that reaches it."""
    called: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                called.setdefault(node.name, set()).update(
                    getattr(call.func, "id", getattr(call.func, "attr", ""))
                    for call in ast.walk(node)
                    if isinstance(call, ast.Call)
                )
    names, grown = {"fit"}, True
    while grown:
        more = {name for name, calls in called.items() if calls & names} - names
        names, grown = names | more, bool(more)
    return names


def _code(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_the_training_functions_are_found():
    found = _training_functions()
    assert {"fit", "train", "train_gpt", "train_induction", "train_seq2seq"} <= found


def test_every_chapter_that_trains_a_model_registers_a_claims_function():
    calls = re.compile(r"\b(?:" + "|".join(sorted(_training_functions())) + r")\(")
    trains = {p.stem for p in CHAPTERS if calls.search(_code(p))}
    assert "07_encoder_decoder" in trains  # the detector finds a chapter that trains
    missing = trains - set(TRAINED_MODEL_CLAIMS) - CLAIMS_PENDING
    assert not missing, (
        f"{sorted(missing)} train a model: add a claims function, called by the chapter and by "
        "a test on seeds 0, 1 and 2, to TRAINED_MODEL_CLAIMS"
    )
    assert not CLAIMS_PENDING & set(TRAINED_MODEL_CLAIMS), "registered: remove it from pending"
    stale = {c for c in CLAIMS_PENDING if (CHAPTERS_DIR / f"{c}.ipynb").exists()} - trains
    assert not stale, f"{sorted(stale)} no longer train a model: remove them from CLAIMS_PENDING"


@pytest.mark.parametrize("chapter", sorted(TRAINED_MODEL_CLAIMS))
def test_registered_claims_are_called_by_the_chapter_and_tested_on_three_seeds(chapter):
    function, test_id = TRAINED_MODEL_CLAIMS[chapter]
    assert re.search(rf"\b{function}\(", _code(CHAPTERS_DIR / f"{chapter}.ipynb")), (
        f"{chapter} must call {function} on its own numbers"
    )
    assert any(hasattr(m, function) for m in _package_modules()), f"no package function {function}"
    test_file, test_name = test_id.split("::")
    tree = ast.parse((Path(__file__).parent / test_file).read_text(encoding="utf-8"))
    test = next((n for n in tree.body if getattr(n, "name", None) == test_name), None)
    assert test is not None, f"{test_id} does not exist"
    assert function in ast.unparse(test), f"{test_id} must call {function}"
    seeds = [
        ast.literal_eval(d.args[1])
        for d in test.decorator_list
        if isinstance(d, ast.Call)
        and ast.unparse(d.func).endswith("parametrize")
        and ast.literal_eval(d.args[0]) == "seed"
    ]
    assert seeds and set(seeds[0]) >= {0, 1, 2}, f"{test_id} must run on seeds 0, 1 and 2"


def _package_modules() -> list:
    import importlib
    import pkgutil

    import course_attention

    found = []
    for info in pkgutil.walk_packages(course_attention.__path__, "course_attention."):
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:  # an optional extra that is not installed
            continue
    return found
