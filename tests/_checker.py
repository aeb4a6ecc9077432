"""What the checker's tests share: a fresh session per test, and what ``ex.check`` / ``ex.hint``
print (``tests/test_exercises.py``, ``tests/test_exercises_feedback.py``)."""

from __future__ import annotations

import pytest

from course_attention import exercises as ex


@pytest.fixture(autouse=True)
def fresh_session():
    """Every test starts, and leaves, with no stage of help remembered."""
    ex.reset()
    yield
    ex.reset()


def checked(capsys, exercise_id, fn) -> str:
    """What ``ex.check`` prints (without the final newline)."""
    ex.check(exercise_id, fn)
    return capsys.readouterr().out.rstrip("\n")


def asked(capsys, exercise_id) -> str:
    """What ``ex.hint`` prints (without the final newline)."""
    ex.hint(exercise_id)
    return capsys.readouterr().out.rstrip("\n")
