"""The exercise checker shared by every chapter: ``check(exercise_id, fn)`` prints ✓ or a hint.

Introduced in chapter 1. A checker never raises, so a book that still holds the exercise stubs
executes cleanly. For every test case it gives the learner's function and the reference their own
copy of the inputs (an in-place answer cannot change what the reference sees), compares the
results within a tolerance, explains a shape or dtype mismatch before a value mismatch, and — the
point of checking — compares a wrong answer with a short catalogue of known mistakes
(:class:`Mistake`) and names the one it matches. When the learner's code raises, it shows the
error, what the common numpy errors mean for this case's input shapes, and the hint.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Mistake", "Exercise", "EXERCISES", "register", "evaluate", "check", "rng"]


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: what the learner probably did, and a function that does exactly that.

    ``name`` completes the sentence "Likely mistake: …", e.g. ``"softmax over the queries
    (axis 0) instead of the keys (axis -1)"``; ``fn`` takes the exercise's arguments.
    """

    name: str
    fn: Callable[..., Any]


@dataclass(frozen=True)
class Exercise:
    """One exercise: reference solution, input cases, hint and catalogue of known mistakes.

    ``difficulty`` is 1–3 stars and ``minutes`` a time estimate; the chapter shows both in the
    exercise's title (:attr:`badge`), and a test checks that they agree.
    """

    id: str
    title: str
    reference: Callable[..., Any]
    cases: Callable[[], Sequence[tuple]]
    hint: str
    difficulty: int = 1
    minutes: int = 5
    mistakes: tuple[Mistake, ...] = ()
    atol: float = 1e-6
    hints_by_shape: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.difficulty not in (1, 2, 3):
            raise ValueError(f"difficulty must be 1, 2 or 3 stars; got {self.difficulty}")
        if self.minutes < 1:
            raise ValueError(f"minutes must be ≥ 1; got {self.minutes}")

    @property
    def badge(self) -> str:
        """The difficulty (stars) and time the chapter shows, e.g. ``"★★☆ · ~10 min"``."""
        return "★" * self.difficulty + "☆" * (3 - self.difficulty) + f" · ~{self.minutes} min"

    @property
    def argument_names(self) -> list[str]:
        """The reference's parameter names, used to describe a case's inputs."""
        return list(inspect.signature(self.reference).parameters)


EXERCISES: dict[str, Exercise] = {}


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to :data:`EXERCISES` (each chapter module registers its own)."""
    if exercise.id in EXERCISES:
        raise ValueError(f"exercise {exercise.id!r} is registered twice")
    EXERCISES[exercise.id] = exercise
    return exercise


def rng(seed: int) -> np.random.Generator:
    """The random generator of an exercise's test cases (seeded: the same cases every run)."""
    return np.random.default_rng(seed)


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value)


def _compare(expected: Any, got: Any, ex: Exercise) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return f"expected a tuple of {len(expected)} results, got {type(got).__name__}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            message = _compare(e, g, ex)
            if message:
                return f"result {i}: {message}"
        return None
    if got is None:
        return "your function returned None — did you forget `return`?"
    try:
        got_raw = _as_array(got)
        got_array = got_raw.astype(float)
    except (TypeError, ValueError):
        return f"expected a number or an array, got {type(got).__name__}"
    expected_raw = np.asarray(expected)
    expected_array = expected_raw.astype(float)
    if got_array.shape != expected_array.shape:
        extra = ex.hints_by_shape.get(f"{got_array.shape}", "")
        if got_array.shape == expected_array.shape[::-1] and len(got_array.shape) > 1:
            extra = extra or "the axes look swapped: is a transpose missing or extra?"
        return f"expected shape {expected_array.shape}, got {got_array.shape}" + (
            f" — {extra}" if extra else ""
        )
    if expected_raw.dtype == bool and got_raw.dtype != bool:
        return (
            f"expected a boolean array (dtype bool, True/False), got dtype {got_raw.dtype}: "
            "numpy and PyTorch read an int or float 0/1 array as numbers, not as a mask "
            "(`x[mask]` picks rows 0 and 1, torch's attn_mask *adds* it) — compare with `<` or "
            "use `.astype(bool)`"
        )
    if np.isnan(got_array).any() and not np.isnan(expected_array).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(got_array))[0])
        return f"your result contains NaN (first at index {where}) where the reference has numbers"
    close = np.isclose(got_array, expected_array, atol=ex.atol, rtol=1e-5, equal_nan=True)
    if not close.all():
        with np.errstate(invalid="ignore"):  # inf - inf where both are -inf: those are close
            diff = np.where(close, 0.0, np.abs(got_array - expected_array))
        diff = np.where(np.isnan(diff), np.inf, diff)
        where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
        return (
            f"values differ: largest difference {diff.max():.3g} at index {where}: "
            f"expected {expected_array[where]:.6g}, got {got_array[where]:.6g}"
        )
    return None


def _describe_inputs(ex: Exercise, args: tuple) -> str:
    parts = []
    for name, value in zip(ex.argument_names, args, strict=False):
        if hasattr(value, "shape") and np.ndim(value) > 0:
            parts.append(f"{name} {tuple(value.shape)}")
        else:
            parts.append(f"{name} = {value!r}")
    return ", ".join(parts)


_ERROR_MEANINGS = (
    (
        ("mismatch in its core dimension", "not aligned", "cannot be multiplied"),
        "a matrix product `A @ B` needs A's last axis to equal B's second-to-last axis "
        "((m, k) @ (k, n) → (m, n)); print both shapes — a transpose may be missing, extra, or "
        "on the wrong axes (`.swapaxes(-1, -2)` swaps only the last two)",
    ),
    (
        ("could not be broadcast", "must match the size of tensor"),
        "an element-wise operation needs shapes that broadcast: compared from the right, each "
        "axis must be equal or 1. After a reduction (`sum`, `max`, `mean`) keep the reduced axis "
        "with `keepdims=True` so it broadcasts back",
    ),
    (
        ("cannot reshape", "is invalid for input of size"),
        "a reshape must keep the number of elements: the product of the new shape must equal the "
        "product of the old one",
    ),
    (
        ("out of bounds for", "index out of range", "out of range (expected to be in range"),
        "an axis or index does not exist: the input may have fewer axes than you assumed "
        "(a vector (n,) has only axis 0 / -1)",
    ),
)


def _explain_error(error: Exception, ex: Exercise, args: tuple) -> str:
    text = str(error)
    lines = []
    for needles, meaning in _ERROR_MEANINGS:
        if any(needle in text for needle in needles):
            lines.append(f"  What it means: {meaning}.")
            break
    lines.append(f"  This test case's inputs: {_describe_inputs(ex, args)}.")
    return "\n" + "\n".join(lines)


def _likely_mistake(ex: Exercise, args: tuple, got: Any, expected: Any) -> str | None:
    """The name of the first catalogued mistake whose output equals the learner's, or None."""
    for mistake in ex.mistakes:
        try:
            with np.errstate(all="ignore"):
                theirs = mistake.fn(*copy.deepcopy(args))
        except Exception:  # noqa: BLE001, S112 - a mistake may crash on some inputs: not this one
            continue
        if _compare(expected, theirs, ex) is None:
            continue  # this mistake happens to be right on this case: it tells us nothing
        if _compare(theirs, got, ex) is None:
            return mistake.name
    return None


def evaluate(exercise_id: str, fn: Callable[..., Any]) -> tuple[bool, str]:
    """Run ``fn`` on the exercise's cases; return ``(passed, message)``. Never raises."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        return False, f"unknown exercise {exercise_id!r}; known: {sorted(EXERCISES)}"
    cases = list(ex.cases())
    for n, args in enumerate(cases, start=1):
        label = f"test case {n} of {len(cases)}"
        try:
            with np.errstate(all="ignore"):
                got = fn(*copy.deepcopy(args))
        except NotImplementedError:
            return False, f"✗ {ex.title}: not implemented yet — replace the `raise` with your code."
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            return False, (
                f"✗ {ex.title}: on {label} your function raised {type(error).__name__}: {error}"
                + _explain_error(error, ex, args)
                + f"\n  Hint: {ex.hint}"
            )
        expected = ex.reference(*copy.deepcopy(args))
        message = _compare(expected, got, ex)
        if message:
            mistake = _likely_mistake(ex, args, got, expected)
            return False, (
                f"✗ {ex.title}: {label}: {message}"
                + (f"\n  Likely mistake: {mistake}." if mistake else "")
                + f"\n  Hint: {ex.hint}"
            )
    return True, f"✓ {ex.title}: correct on all {len(cases)} test cases."


def check(exercise_id: str, fn: Callable[..., Any]) -> None:
    """Print ✓ when ``fn`` solves the exercise, else what is wrong and a hint. Never raises.

    Introduced in chapter 1. Example: ``ex.check("soft-lookup-1", my_softmax)``.
    """
    print(evaluate(exercise_id, fn)[1])
