"""The exercise checkers accept the reference, reject wrong answers with a hint, never raise."""

from __future__ import annotations

import numpy as np
import pytest

from course_attention import exercises as ex

IDS = sorted(ex.EXERCISES)


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_solution_passes(exercise_id, capsys):
    passed, message = ex.evaluate(exercise_id, ex.EXERCISES[exercise_id].reference)
    assert passed, message
    ex.check(exercise_id, ex.EXERCISES[exercise_id].reference)
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize("exercise_id", IDS)
def test_stub_and_crashing_answers_get_a_message_not_an_exception(exercise_id):
    def stub(*args):
        raise NotImplementedError

    def crash(*args):
        raise KeyError("oops")

    assert ex.evaluate(exercise_id, stub) == (
        False,
        f"✗ {ex.EXERCISES[exercise_id].title}: not implemented yet — replace the `raise` "
        "with your code.",
    )
    passed, message = ex.evaluate(exercise_id, crash)
    assert not passed and "KeyError" in message
    assert "Hint:" in message and "inputs:" in message  # the hint shows even when the code raises


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
        assert f"Likely mistake: {mistake.name}" in message, message


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
