"""The exercise checkers accept the reference, reject wrong answers with help in stages (what
failed, then a hint, then the recipe), never raise."""

from __future__ import annotations

import numpy as np
import pytest
from _checker import asked as _asked
from _checker import checked as _checked
from _checker import fresh_session  # noqa: F401 - autouse: every test starts a fresh session

from course_attention import exercises as ex
from course_attention.exercises import core

IDS = sorted(ex.EXERCISES)


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_solution_passes(exercise_id, capsys):
    passed, message = ex.evaluate(exercise_id, ex.EXERCISES[exercise_id].reference)
    assert passed, message
    ex.check(exercise_id, ex.EXERCISES[exercise_id].reference)
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize("exercise_id", IDS)
def test_stub_and_crashing_answers_get_a_message_not_an_exception(exercise_id, capsys):
    def stub(*args):
        raise NotImplementedError

    def crash(*args):
        raise KeyError("oops")

    not_yet = (
        f"✗ {ex.EXERCISES[exercise_id].title}: not implemented yet.\n"
        "  Replace the `raise` with your code, then run the cell again."
    )
    assert ex.evaluate(exercise_id, stub) == (False, not_yet)
    assert _checked(capsys, exercise_id, stub) == not_yet
    passed, message = ex.evaluate(exercise_id, crash)
    assert not passed and "KeyError" in message
    assert "Hint:" in message and "inputs:" in message  # the hint shows even when the code raises
    first = _checked(capsys, exercise_id, crash)  # the stub above was no failed attempt
    assert "KeyError" in first and "inputs:" in first and "Hint:" not in first
    assert f'Run ex.hint("{exercise_id}") for a hint.' in first
    _checked(capsys, exercise_id, crash)
    assert _checked(capsys, exercise_id, crash) == message  # the third: the complete message


@pytest.mark.parametrize("exercise_id", IDS)
def test_wrong_answer_gets_a_hint(exercise_id):
    reference = ex.EXERCISES[exercise_id].reference

    def off_by_a_bit(*args):
        result = reference(*args)
        if isinstance(result, tuple):
            return tuple(np.asarray(r, dtype=float) + 0.1 for r in result)
        return np.asarray(result, dtype=float) + 0.1

    passed, message = ex.evaluate(exercise_id, off_by_a_bit)
    assert not passed and "Hint:" in message


def test_shape_mismatch_is_explained():
    exercise_id = IDS[0]
    reference = ex.EXERCISES[exercise_id].reference

    def wrong_shape(*args):
        result = reference(*args)
        if isinstance(result, tuple):
            return (np.append(np.ravel(result[0]), 0.0), *result[1:])
        return np.append(np.ravel(result), 0.0)

    passed, message = ex.evaluate(exercise_id, wrong_shape)
    assert not passed and "expected" in message and "shape" in message


def test_unknown_exercise_is_reported():
    passed, message = ex.evaluate("no-such-exercise", lambda: None)
    assert not passed and "unknown exercise" in message


def test_exercises_exist_for_the_first_chapters():
    assert len(IDS) >= 4


@pytest.mark.parametrize("exercise_id", IDS)
def test_an_in_place_answer_is_judged_on_its_own_copy_of_the_inputs(exercise_id):
    """A correct answer that scribbles over its inputs (``x -= mean``) must still pass."""
    reference = ex.EXERCISES[exercise_id].reference

    def correct_then_scribble(*args):
        result = reference(*args)
        result = tuple(np.copy(r) for r in result) if isinstance(result, tuple) else np.copy(result)
        for a in args:
            if isinstance(a, np.ndarray) and a.size:
                a[...] = np.zeros((), dtype=a.dtype)
        return result

    passed, message = ex.evaluate(exercise_id, correct_then_scribble)
    assert passed, message


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_exercise_has_a_catalogue_of_known_mistakes_and_names_each(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    assert len(exercise.mistakes) >= 2, f"{exercise_id}: catalogue at least two known mistakes"
    for mistake in exercise.mistakes:
        passed, message = ex.evaluate(exercise_id, mistake.fn)
        assert not passed, f"{exercise_id}: the mistake {mistake.name!r} passes the checker"
        named = (f"Likely mistake: {mistake.name}.", f"every test case): {mistake.name}.")
        assert any(n in message for n in named), message  # alone, or with its twin (issue 24)


@pytest.mark.parametrize("exercise_id", IDS)
def test_difficulty_and_time_are_shown(exercise_id):
    badge = ex.EXERCISES[exercise_id].badge
    assert badge.count("★") + badge.count("☆") == 3 and "min" in badge


def test_test_cases_are_counted_one_way():
    n = len(ex.EXERCISES["soft-lookup-1"].cases())
    passed, message = ex.evaluate("soft-lookup-1", lambda x: np.zeros_like(x))
    assert not passed and f"test case 1 of {n}" in message
    passed, message = ex.evaluate("soft-lookup-1", ex.EXERCISES["soft-lookup-1"].reference)
    assert message.endswith(f"correct on all {n} test cases.")


def test_common_numpy_errors_are_explained_with_the_case_shapes():
    passed, message = ex.evaluate("soft-lookup-2", lambda q, K, V: ref_softmax(q @ K) @ V)
    assert "What it means: a matrix product" in message and "q (4,), K (3, 4)" in message
    no_keepdims = lambda x: np.exp(x - x.max(axis=-1)) / np.exp(x - x.max(axis=-1)).sum(axis=-1)  # noqa: E731
    passed, message = ex.evaluate("soft-lookup-1", no_keepdims)
    assert not passed and "What it means: an element-wise operation" in message
    assert "x (3, 4)" in message


def test_a_softmax_with_one_global_max_is_caught():
    def global_max(x):
        e = np.exp(x - x.max())
        return e / e.sum(axis=-1, keepdims=True)

    passed, message = ex.evaluate("soft-lookup-1", global_max)
    assert not passed and "one global maximum" in message


def ref_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_difference_is_reported_where_the_values_differ_not_where_both_are_infinite():
    from course_attention.exercises.core import Exercise, _compare

    exercise = Exercise("t", "t", lambda x: x, lambda: [], "hint")
    expected = np.array([-np.inf, 1.0, 2.0])
    message = _compare(expected, np.array([-np.inf, 1.0, 5.0]), exercise)
    assert message is not None and "index (2,)" in message and "expected 2" in message


def test_the_reference_runs_before_the_time_limit_so_a_slow_first_import_is_not_cut_off(
        monkeypatch):
    """What an answer imports on first use (torch takes seconds) is imported by the reference,
    outside the alarm: the learner's function, run after it, finishes in time. Run the other way
    round (the learner's function first, under the alarm), this check times out."""
    import time

    first: list[bool] = []

    def first_use_is_slow() -> None:  # a lazy import: slow once, then free
        if not first:
            time.sleep(0.6)
        first.append(True)

    def answer(x: float) -> float:
        first_use_is_slow()
        return x + 1

    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.3)
    exercise = core.Exercise("t", "t", answer, lambda: [(1.0,), (2.0,)], "hint")
    verdict = core._judge(exercise, answer)
    assert verdict.passed, verdict.what
    first.clear()  # the control: the learner's function pays the first use, under the alarm
    assert not core._judge(core.Exercise("t", "t", lambda x: x + 1, lambda: [(1.0,)], "hint"),
                           answer).passed


# --- help in stages (issue 17) ----------------------------------------------------------------


def _no_maximum(x):
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def test_help_comes_in_stages_what_failed_then_the_hint_then_the_recipe(capsys):
    exercise = ex.EXERCISES["soft-lookup-1"]
    complete = ex.evaluate("soft-lookup-1", _no_maximum)[1]
    first, second, third = (_checked(capsys, "soft-lookup-1", _no_maximum) for _ in range(3))
    what_failed = complete.split("\n  Hint:")[0]  # the case and the likely mistake
    assert "test case 3 of" in what_failed and "Likely mistake: no maximum" in what_failed
    assert first == what_failed + '\n  Stuck? Run ex.hint("soft-lookup-1") for a hint.'
    assert second == (
        what_failed + f"\n  Hint: {exercise.nudge}"
        '\n  Still stuck? Run ex.hint("soft-lookup-1") for the recipe.'
    )
    assert third == complete and third.endswith(f"\n  Hint: {exercise.hint}")
    assert exercise.hint not in first + second and exercise.nudge not in first
    assert _checked(capsys, "soft-lookup-1", _no_maximum) == complete  # the last stage stays


def test_a_hint_on_request_comes_before_the_recipe(capsys):
    exercise = ex.EXERCISES["masking-2"]
    assert _asked(capsys, "masking-2") == (
        f"Hint for {exercise.title}: {exercise.nudge}"
        '\n  Still stuck? Run ex.hint("masking-2") again for the recipe.'
    )
    wrong = lambda scores, mask: np.zeros_like(scores)  # noqa: E731
    first = _checked(capsys, "masking-2", wrong)  # asked once: the hint comes with it
    assert f"Hint: {exercise.nudge}" in first and exercise.hint not in first
    assert _checked(capsys, "masking-2", wrong).endswith(f"Hint: {exercise.hint}")
    assert _asked(capsys, "masking-2") == f"Recipe for {exercise.title}: {exercise.hint}"
    ex.reset("masking-2")
    _asked(capsys, "masking-2")
    assert _asked(capsys, "masking-2") == f"Recipe for {exercise.title}: {exercise.hint}"


def test_stages_are_kept_per_exercise_through_a_pass_until_reset(capsys):
    for _ in range(2):
        _checked(capsys, "soft-lookup-1", _no_maximum)
    other = _checked(capsys, "soft-lookup-2", lambda q, K, V: V.mean(axis=0))
    assert "Stuck? Run" in other  # another exercise starts at its own first stage
    def stub(scores, temperature):
        raise NotImplementedError

    assert "not implemented yet" in _checked(capsys, "soft-lookup-3", stub)
    assert "Stuck? Run" in _checked(capsys, "soft-lookup-3", lambda s, t: s)  # no stage moved
    assert _checked(capsys, "soft-lookup-1", core.EXERCISES["soft-lookup-1"].reference)[0] == "✓"
    after_pass = _checked(capsys, "soft-lookup-1", _no_maximum)
    assert after_pass == ex.evaluate("soft-lookup-1", _no_maximum)[1]  # a pass took nothing back
    ex.reset("soft-lookup-1")
    assert "Stuck? Run" in _checked(capsys, "soft-lookup-1", _no_maximum)
    assert "Hint:" in _checked(capsys, "soft-lookup-2", lambda q, K, V: V.mean(axis=0))
    ex.reset()
    assert "Stuck? Run" in _checked(capsys, "soft-lookup-2", lambda q, K, V: V.mean(axis=0))


def test_an_unknown_exercise_gets_a_message_from_hint_too(capsys):
    assert _asked(capsys, "no-such-exercise").startswith("unknown exercise 'no-such-exercise'")
    assert _checked(capsys, "no-such-exercise", lambda: None).startswith("unknown exercise")


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_exercise_has_a_hint_that_is_not_its_recipe(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    assert exercise.nudge, f"{exercise_id}: add nudge=…, the hint shown before the recipe"
    assert exercise.first_hint == exercise.nudge
    assert exercise.nudge not in exercise.hint and exercise.hint not in exercise.nudge


def _wrong_answers(exercise_id: str) -> list[tuple[str, object, str]]:
    """Answers that fail in every way the checker words differently, with the hint stage 2 shows
    for each (a catalogued mistake's own hint, when it has one: issue 24)."""
    exercise = ex.EXERCISES[exercise_id]

    def off_by_a_bit(*args):
        result = exercise.reference(*args)
        if isinstance(result, tuple):
            return tuple(np.asarray(r, dtype=float) + 0.1 for r in result)
        return np.asarray(result, dtype=float) + 0.1

    def crash(*args):
        raise KeyError("oops")

    nudge = exercise.nudge
    answers = [
        ("off by 0.1", off_by_a_bit, nudge), ("raises", crash, nudge),
        ("None", lambda *a: None, nudge),
    ]
    return answers + [(f"mistake: {m.name}", m.fn, m.hint or nudge) for m in exercise.mistakes]


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_message_of_the_checker_is_reachable_through_the_stages(exercise_id, capsys):
    """The complete message (``evaluate``'s, the one the checker gave at once before issue 17)
    is the third stage, line for line; the first two stages hold its lines but the recipe."""
    exercise = ex.EXERCISES[exercise_id]
    for label, answer, first_hint in _wrong_answers(exercise_id):
        ex.reset(exercise_id)
        passed, complete = ex.evaluate(exercise_id, answer)
        stages = [_checked(capsys, exercise_id, answer) for _ in range(3)]
        assert not passed and stages[2] == complete, label
        assert complete.endswith(f"\n  Hint: {exercise.hint}"), label
        before_recipe = complete.removesuffix(f"\n  Hint: {exercise.hint}")
        for stage in stages[:2]:
            assert stage.startswith(before_recipe + "\n  "), (label, stage)
            assert exercise.hint not in stage, (label, stage)
        assert f"Hint: {first_hint}" in stages[1], label
        assert [_asked(capsys, exercise_id) for _ in range(2)][-1].endswith(exercise.hint)
        for stage_number in (core.WHAT_FAILED, core.HINT, core.RECIPE):
            staged = ex.evaluate(exercise_id, answer, stage=stage_number)[1]
            assert staged == stages[stage_number - 1], (label, stage_number)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_not_implemented_message_fits_a_notebooks_output_width(lang):
    """Issue 25 item 7: one long line ran past the output area's right edge and was cut off.
    Every line of an unsolved exercise's message is at most 88 columns (a CJK character: 2)."""
    import unicodedata

    from course_attention.i18n import using

    def stub(*args):
        raise NotImplementedError

    def columns(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)

    with using(lang):
        lines = [line for i in IDS for line in ex.evaluate(i, stub)[1].splitlines()]
    assert len(lines) == 2 * len(IDS)
    assert max(map(columns, lines)) <= 88, max(lines, key=columns)
