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


def _softmax_cases() -> list[tuple]:
    rng = _rng(1)
    return [
        (np.array([2.0, 1.0, 0.1]),),
        (rng.normal(size=5),),
        (np.array([1000.0, 999.0, 0.0]),),  # a naive np.exp overflows here
        (rng.normal(size=(3, 4)),),  # softmax along the last axis
    ]


def _soft_lookup_reference(q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(K @ q) @ V  # (d_v,)


def _soft_lookup_cases() -> list[tuple]:
    from . import toy

    example = toy.worked_example()
    rng = _rng(2)
    return [
        (example.q, example.K, example.V),
        (rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))),
        (rng.normal(size=2), rng.normal(size=(4, 2)), rng.normal(size=(4, 6))),
    ]


def _temperature_reference(scores: np.ndarray, temperature: float) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(scores, temperature=temperature)


def _temperature_cases() -> list[tuple]:
    rng = _rng(3)
    return [
        (np.array([0.89, 0.83, -0.29]), 0.1),
        (rng.normal(size=4), 2.0),
        (rng.normal(size=6), 0.5),
        (np.array([3.0, 1.0, 0.0]), 1.0),
    ]


def _softmax_reference(x: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(x, axis=-1)


_register(
    Exercise(
        id="soft-lookup-1",
        title="a stable softmax",
        reference=_softmax_reference,
        cases=_softmax_cases,
        hint=(
            "exponentiate, then divide by the sum along the last axis (keepdims=True). If a case "
            "with scores near 1000 gives NaN, subtract the largest score of each row first: "
            "softmax(x) equals softmax(x - max(x))."
        ),
    )
)

_register(
    Exercise(
        id="soft-lookup-2",
        title="a soft look-up",
        reference=_soft_lookup_reference,
        cases=_soft_lookup_cases,
        hint=(
            "three steps: scores = K @ q, shape (n_keys,); weights = softmax(scores); "
            "output = weights @ V, shape (d_v,). Chapter 1 does not divide by sqrt(d_k)."
        ),
        hints_by_shape={"()": "you returned a number: multiply the weights with V, not with q."},
    )
)

_register(
    Exercise(
        id="soft-lookup-3",
        title="softmax with a temperature",
        reference=_temperature_reference,
        cases=_temperature_cases,
        hint=(
            "divide the scores by the temperature before the softmax (not the weights after it); "
            "a temperature below 1 should make the largest weight larger."
        ),
    )
)


# --- chapter 2: scaled dot-product ----------------------------------------------------------


def _attention_output(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.scaled_dot_product_attention(Q, K, V)[0]  # (..., seq_q, d_v)


def _attention_cases() -> list[tuple]:
    rng = _rng(21)
    return [
        (rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))),
        (rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 6, 8)), rng.normal(size=(2, 6, 5))),
        # batch = seq = d_k: K.T has the right shape here but the wrong values
        (rng.normal(size=(4, 4, 4)), rng.normal(size=(4, 4, 4)), rng.normal(size=(4, 4, 3))),
        (rng.normal(size=(2, 3, 2, 64)), rng.normal(size=(2, 3, 5, 64)), rng.normal(size=(5, 4))),
    ]


def _jacobian_reference(p: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax_jacobian(p)  # (..., n, n)


def _jacobian_cases() -> list[tuple]:
    from . import numpy_ref

    rng = _rng(22)
    return [
        (numpy_ref.softmax(rng.normal(size=4)),),
        (np.full(5, 0.2),),  # uniform weights
        (np.array([0.0, 1.0, 0.0]),),  # saturated: the Jacobian is all zeros
        (numpy_ref.softmax(rng.normal(size=(3, 6))),),  # a batch of weight vectors
    ]


def _variance_reference(d_k: int, std_q: float, std_k: float) -> float:
    from . import experiments

    return experiments.expected_dot_variance(d_k, std_q, std_k)


_register(
    Exercise(
        id="scaled-dot-product-1",
        title="scaled dot-product attention in matrix form",
        reference=_attention_output,
        cases=_attention_cases,
        hint=(
            "compute scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_k) with d_k = Q.shape[-1], "
            "softmax along the last axis (subtract the row maximum first), then weights @ V. "
            "`K.T` reverses every axis of a batched array: swap only the last two."
        ),
    )
)

_register(
    Exercise(
        id="scaled-dot-product-2",
        title="the softmax Jacobian diag(p) − p pᵀ",
        reference=_jacobian_reference,
        cases=_jacobian_cases,
        hint=(
            "entry [i, j] is p_i (δ_ij − p_j). For p of shape (..., n) build p[..., :, None] * "
            "np.eye(n) for the diagonal and subtract the outer product "
            "p[..., :, None] * p[..., None, :] (np.outer only handles 1-D p)."
        ),
    )
)

_register(
    Exercise(
        id="scaled-dot-product-3",
        title="the variance of q · k",
        reference=_variance_reference,
        cases=lambda: [(64, 1.0, 1.0), (16, 2.0, 0.5), (100, 0.1, 3.0), (1, 1.0, 1.0)],
        hint=(
            "q · k is a sum of d_k independent products q_i k_i. Each product has mean 0 and "
            "variance std_q² · std_k², and variances of independent terms add."
        ),
    )
)


# --- chapter 3: self-attention ------------------------------------------------------------


# --- chapter 4: masking -------------------------------------------------------------------


# --- chapter 5: multi-head attention --------------------------------------------------------
