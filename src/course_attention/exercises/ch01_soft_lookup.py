"""Exercises of chapter 1 (soft look-up): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng


def _softmax_cases() -> list[tuple]:
    gen = rng(1)
    return [
        (np.array([2.0, 1.0, 0.1]),),
        (gen.normal(size=5),),
        (np.array([1000.0, 999.0, 0.0]),),  # a naive np.exp overflows here
        (gen.normal(size=(3, 4)),),  # softmax along the last axis
        # one row far below the other: subtracting one global max underflows it to 0 / 0 = NaN
        (np.array([[1000.0, 999.0, 998.0], [0.0, 1.0, -1.0]]),),
        # the row mean is 0: subtracting the mean instead of the maximum still overflows
        (np.array([[1000.0, -1000.0, 0.0], [2.0, -3.0, 1.0]]),),
    ]


def _exp(x: np.ndarray) -> np.ndarray:
    return np.exp(np.asarray(x, dtype=float))


SOFTMAX_MISTAKES = (
    Mistake(
        N_("one global maximum subtracted from every row (`x - x.max()`): a row far below it "
           "underflows to 0 / 0 = NaN — subtract each row's own maximum, `x.max(axis=-1, "
           "keepdims=True)`"),
        lambda x: _exp(x - x.max()) / _exp(x - x.max()).sum(axis=-1, keepdims=True),
    ),
    Mistake(
        N_("the sum is taken over the whole array instead of each row (no `axis=-1, "
           "keepdims=True`)"),
        lambda x: (
            _exp(x - x.max(axis=-1, keepdims=True)) / _exp(x - x.max(axis=-1, keepdims=True)).sum()
        ),
    ),
    Mistake(
        N_("softmax along axis 0 (down the columns) instead of the last axis"),
        lambda x: (
            _exp(x - x.max(axis=0, keepdims=True))
            / _exp(x - x.max(axis=0, keepdims=True)).sum(axis=0, keepdims=True)
        ),
    ),
    Mistake(
        N_("no maximum subtracted: `np.exp(1000.0)` overflows to inf, and inf / inf is NaN"),
        lambda x: _exp(x) / _exp(x).sum(axis=-1, keepdims=True),
    ),
    Mistake(
        N_("each row's mean subtracted instead of its maximum: softmax(x - c) equals softmax(x) "
           "for any c, but only c = the maximum keeps every exponent ≤ 0 — scores 1000 and "
           "-1000 have mean 0, and np.exp(1000) overflows"),
        lambda x: (
            _exp(x - x.mean(axis=-1, keepdims=True))
            / _exp(x - x.mean(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)
        ),
    ),
    Mistake(
        N_("the scores divided by their sum, without `np.exp`"),
        lambda x: x / x.sum(axis=-1, keepdims=True),
    ),
)


def _soft_lookup_reference(q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(K @ q) @ V  # (d_v,)


def _ref_softmax(x: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(x)


SOFT_LOOKUP_MISTAKES = (
    Mistake(
        N_("the scores divided by √dₖ — chapter 2's scaled attention; this chapter's look-up is "
           "unscaled"),
        lambda q, K, V: _ref_softmax(K @ q / np.sqrt(q.shape[-1])) @ V,
    ),
    Mistake(
        N_("the weights multiplied with the keys instead of the values"),
        lambda q, K, V: _ref_softmax(K @ q) @ K,
    ),
    Mistake(N_("the scores used as weights without a softmax"), lambda q, K, V: (K @ q) @ V),
    Mistake(
        N_("the output averages the values with equal weights (the weights were not used)"),
        lambda q, K, V: V.mean(axis=0),
    ),
    Mistake(
        N_("no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
           "NaN — softmax(s) equals softmax(s - s.max())"),
        lambda q, K, V: (_exp(K @ q) / _exp(K @ q).sum()) @ V,
    ),
)


def _soft_lookup_cases() -> list[tuple]:
    from .. import toy

    example = toy.worked_example()
    gen = rng(2)
    return [
        (example.q, example.K, example.V),
        (gen.normal(size=3), gen.normal(size=(5, 3)), gen.normal(size=(5, 2))),
        (gen.normal(size=2), gen.normal(size=(4, 2)), gen.normal(size=(4, 6))),
        # scores 800 and 790 (a naive np.exp overflows), then scores in the thousands (minus
        # the mean overflows too): the two tell a missing maximum from a mean subtracted
        (
            np.array([1.0, 0.0]),
            np.array([[800.0, 0.0], [790.0, 0.0], [0.0, 1.0], [-10.0, 0.0]]),
            gen.normal(size=(4, 3)),
        ),
        (np.array([30.0, -20.0, 10.0]), 40.0 * gen.normal(size=(5, 3)), gen.normal(size=(5, 2))),
    ]


def _temperature_reference(scores: np.ndarray, temperature: float) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(scores, temperature=temperature)


TEMPERATURE_MISTAKES = (
    Mistake(
        N_("the scores multiplied by the temperature instead of divided by it"),
        lambda scores, temperature: _ref_softmax(scores * temperature),
    ),
    Mistake(
        N_("the weights divided by the temperature after the softmax (they no longer sum to 1)"),
        lambda scores, temperature: _ref_softmax(scores) / temperature,
    ),
    Mistake(N_("the temperature ignored"), lambda scores, temperature: _ref_softmax(scores)),
    Mistake(
        N_("`np.exp(scores / temperature)` not divided by its sum (the weights must sum to 1)"),
        lambda scores, temperature: _exp(scores / temperature),
    ),
    Mistake(
        N_("no maximum subtracted: at a low temperature scores / T reach the hundreds and "
           "`np.exp` overflows to inf (inf / inf is NaN) — subtract the maximum of scores / T"),
        lambda scores, temperature: (
            _exp(scores / temperature) / _exp(scores / temperature).sum(axis=-1, keepdims=True)
        ),
    ),
)


def _temperature_cases() -> list[tuple]:
    gen = rng(3)
    return [
        (np.array([0.89, 0.83, -0.29]), 0.1),
        (gen.normal(size=4), 2.0),
        (gen.normal(size=6), 0.5),
        (np.array([3.0, 1.0, 0.0]), 1.0),
        # scores / T in the hundreds: np.exp overflows without the maximum (then even minus
        # the mean): the two cases tell a missing maximum from a mean subtracted
        (np.array([8.0, 7.9, 0.0, -0.1]), 0.01),
        (np.array([8.0, -9.0, -9.0, 7.9]), 0.01),
    ]


def _softmax_reference(x: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(x, axis=-1)


register(
    Exercise(
        id="soft-lookup-1",
        title=N_("a stable softmax"),
        reference=_softmax_reference,
        cases=_softmax_cases,
        difficulty=1,
        minutes=5,
        mistakes=SOFTMAX_MISTAKES,
        hint=N_(
            "exponentiate, then divide by the sum along the last axis (keepdims=True). If a case "
            "with scores near 1000 gives NaN, subtract the largest score of each row first: "
            "softmax(x) equals softmax(x - max(x))."
        ),
        nudge=N_(
            "softmax(x) is exp(x) divided by the sum of exp(x) along the last axis, and it does "
            "not change when the same number is subtracted from every score of a row: choose that "
            "number so that np.exp cannot overflow."
        ),
    )
)

register(
    Exercise(
        id="soft-lookup-2",
        title=N_("a soft look-up"),
        reference=_soft_lookup_reference,
        cases=_soft_lookup_cases,
        difficulty=1,
        minutes=5,
        mistakes=SOFT_LOOKUP_MISTAKES,
        hint=N_(
            "three steps: scores = K @ q, shape (n_keys,); weights = softmax(scores); output = "
            "weights @ V, shape (d_v,). Chapter 1 does not divide by sqrt(d_k)."
        ),
        nudge=N_(
            "it is the chapter's computation for one query: a score for every key, weights from "
            "the scores, then the values mixed by the weights."
        ),
        hints_by_shape={
            "()": N_("you returned a number: multiply the weights with V, not with q.")
        },
    )
)

register(
    Exercise(
        id="soft-lookup-3",
        title=N_("softmax with a temperature"),
        reference=_temperature_reference,
        cases=_temperature_cases,
        difficulty=2,
        minutes=15,
        mistakes=TEMPERATURE_MISTAKES,
        hint=N_(
            "divide the scores by the temperature before the softmax (not the weights after it); "
            "a temperature below 1 should make the largest weight larger."
        ),
        nudge=N_(
            "the temperature acts on the scores, not on the weights: look at where T sits in e^(s "
            "/ T)."
        ),
    )
)
