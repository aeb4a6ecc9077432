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
