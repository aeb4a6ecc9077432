"""Checkers for the chapter exercises: ``check(exercise_id, fn)`` prints ✓ or a hint.

A checker never raises, so a book that still holds the exercise stubs executes cleanly. Each
exercise compares the learner's function with the package's reference on a few inputs, within a
tolerance, and explains a shape mismatch before a value mismatch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Exercise", "check", "evaluate", "EXERCISES"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: a reference solution, input cases and a hint for a wrong answer."""

    id: str
    title: str
    reference: Callable[..., Any]
    cases: Callable[[], Sequence[tuple]]
    hint: str
    atol: float = 1e-6
    hints_by_shape: dict[str, str] = field(default_factory=dict)


EXERCISES: dict[str, Exercise] = {}


def _register(exercise: Exercise) -> Exercise:
    EXERCISES[exercise.id] = exercise
    return exercise


def _compare(expected: Any, got: Any, ex: Exercise, case: int) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return f"expected a tuple of {len(expected)} results, got {type(got).__name__}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            message = _compare(e, g, ex, case)
            if message:
                return f"result {i}: {message}"
        return None
    if got is None:
        return "your function returned None — did you forget `return`?"
    try:
        got_array = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got, dtype=float)
    except (TypeError, ValueError):
        return f"expected a number or an array, got {type(got).__name__}"
    expected_array = np.asarray(expected, dtype=float)
    if got_array.shape != expected_array.shape:
        key = f"{got_array.shape}"
        extra = ex.hints_by_shape.get(key, "")
        if got_array.shape == expected_array.shape[::-1] and len(got_array.shape) > 1:
            extra = extra or "the axes look swapped: is a transpose missing or extra?"
        return f"expected shape {expected_array.shape}, got {got_array.shape}" + (
            f" — {extra}" if extra else ""
        )
    if np.isnan(got_array).any() and not np.isnan(expected_array).any():
        return "your result contains NaN where the reference has numbers"
    diff = np.abs(got_array - expected_array)
    if not np.allclose(got_array, expected_array, atol=ex.atol, rtol=1e-5):
        where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
        return (
            f"values differ (test case {case}): largest difference {diff.max():.3g} at index "
            f"{where}: expected {expected_array[where]:.6g}, got {got_array[where]:.6g}"
        )
    return None


def evaluate(exercise_id: str, fn: Callable[..., Any]) -> tuple[bool, str]:
    """Run ``fn`` on the exercise's cases; return ``(passed, message)``. Never raises."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        return False, f"unknown exercise {exercise_id!r}; known: {sorted(EXERCISES)}"
    for n, args in enumerate(ex.cases()):
        try:
            got = fn(*args)
        except NotImplementedError:
            return False, f"✗ {ex.title}: not implemented yet — replace the `raise` with your code."
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"✗ {ex.title}: your function raised {type(error).__name__}: {error}"
        message = _compare(ex.reference(*args), got, ex, n)
        if message:
            return False, f"✗ {ex.title}: {message}\n  Hint: {ex.hint}"
    return True, f"✓ {ex.title}: correct on all {n + 1} test cases."


def check(exercise_id: str, fn: Callable[..., Any]) -> None:
    """Print ✓ when ``fn`` solves the exercise, else what is wrong and a hint. Never raises.

    Introduced in chapter 1. Example: ``ex.check("soft-lookup-1", my_softmax)``.
    """
    print(evaluate(exercise_id, fn)[1])


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- chapter 1: soft look-up ----------------------------------------------------------------


# --- chapter 2: scaled dot-product ----------------------------------------------------------
