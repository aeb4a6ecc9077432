"""Choosing the next token: greedy, temperature, top-k and top-p (chapter 8).

Introduced in chapter 8. Every function works on one row of logits ``(vocab,)`` or a batch of
rows ``(..., vocab)`` in float64 numpy. Temperature is chapter 1's: the probabilities are
``numpy_ref.softmax(logits, temperature=T)``, the very function that turned scores into
attention weights. Top-k keeps the ``k`` most likely tokens; top-p (nucleus sampling, Holtzman
et al., 2020) keeps the smallest set of most likely tokens whose probabilities add up to at least
``p`` (the rule, with its rounding tolerance and ties, is :func:`top_p_filter`'s). Both
renormalise what they keep.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from . import numpy_ref

__all__ = [
    "TOP_P_TOLERANCE",
    "SMALLEST_TEMPERATURE",
    "greedy",
    "check_temperature",
    "top_k_filter",
    "top_p_filter",
    "next_token_probabilities",
    "sampler",
]


#: A mass within this of ``p`` counts as reaching ``p`` in :func:`top_p_filter`: float sums are
#: rounded (``0.6 + 0.3`` is ``0.8999999999999999``), by far less than this for any vocabulary
#: below a million tokens.
TOP_P_TOLERANCE = 1e-12


def _smallest_invertible() -> float:
    """The smallest positive float64 ``t`` whose inverse ``1 / t`` is finite."""
    t = np.float64(1.0) / np.finfo(np.float64).max  # about 5.6e-309, far below the normal floats
    with np.errstate(over="ignore", divide="ignore"):
        while not np.isfinite(1.0 / t):  # 1 / max rounds to 2^-1024, whose inverse overflows
            t = np.nextafter(t, np.inf)
        while np.isfinite(1.0 / np.nextafter(t, 0.0)):
            t = np.nextafter(t, 0.0)
    return float(t)


#: The smallest temperature :func:`check_temperature` accepts: the smallest positive float64 whose
#: inverse ``1 / T`` is finite, one step above ``2^-1024`` ≈ ``5.6e-309`` (``1 /
#: np.finfo(float).max`` rounds to ``2^-1024``, whose inverse overflows). It is *subnormal*, far
#: below the smallest normal float64 (``2.2e-308``): between the two, ``1 / T`` is finite.
SMALLEST_TEMPERATURE = _smallest_invertible()


def _rows(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim < 1 or a.shape[-1] < 1:
        raise ValueError(f"{name} must have shape (..., vocab) with vocab ≥ 1; got {a.shape}")
    return a


def greedy(logits: ArrayLike) -> np.ndarray | int:
    """The most likely token: ``argmax`` over the last axis (the lowest id on a tie).

    ``(vocab,)`` → an ``int``; ``(..., vocab)`` → ids ``(...)``.
    """
    z = _rows(logits, "logits")
    ids = np.argmax(z, axis=-1)
    return int(ids) if z.ndim == 1 else ids


def check_temperature(temperature: float) -> None:
    """Raise a ``ValueError`` unless ``temperature`` is a positive finite number whose inverse is
    finite too.

    A temperature below :data:`SMALLEST_TEMPERATURE` (about ``5.6e-309``, e.g. ``1e-310``) is
    rejected: ``1 / T`` overflows to infinity and every logit divided by it becomes ``±inf`` or
    NaN. Such a temperature is greedy decoding in all but name: use :func:`greedy`. (Above it,
    logits divided by a tiny ``T`` can still overflow; :func:`next_token_probabilities` checks
    that for the logits it is given.)
    """
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(
            f"temperature must be > 0 (the logits are divided by it); got {temperature}. "
            "As the temperature goes to 0 sampling becomes greedy: use greedy() for T = 0"
        )
    if temperature < SMALLEST_TEMPERATURE:
        raise ValueError(
            f"temperature {temperature} is so small that 1 / T overflows (it does below "
            f"{SMALLEST_TEMPERATURE:.2e}): the logits divided by it become ±inf and the softmax "
            "gives NaN. At such a temperature sampling is greedy: use greedy()"
        )


def _keep_and_renormalise(probs: np.ndarray, keep: np.ndarray) -> np.ndarray:
    kept = np.where(keep, probs, 0.0)
    return kept / kept.sum(axis=-1, keepdims=True)


def _descending(probs: np.ndarray) -> np.ndarray:
    """Indices that sort each row by decreasing probability (lower id first on a tie)."""
    return np.argsort(-probs, axis=-1, kind="stable")


def top_k_filter(probs: ArrayLike, k: int) -> np.ndarray:
    """Keep the ``k`` most likely tokens of each row ``(..., vocab)``, renormalised.

    Introduced in chapter 8. Exactly ``k`` tokens keep a probability (ties: the lower ids).
    """
    p = _rows(probs, "probs")
    if not 1 <= k <= p.shape[-1]:
        raise ValueError(f"top_k must lie in 1 … vocab={p.shape[-1]}; got {k}")
    order = _descending(p)
    keep = np.zeros(p.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :k], True, axis=-1)
    return _keep_and_renormalise(p, keep)


def top_p_filter(probs: ArrayLike, p: float) -> np.ndarray:
    """Keep the smallest set of most likely tokens whose mass is ≥ ``p``, renormalised.

    Introduced in chapter 8 (nucleus sampling). ``probs`` ``(..., vocab)`` sum to 1 along the
    last axis; ``p`` lies in (0, 1]. The rule, exactly:

    - sort by decreasing probability; of equal probabilities the lower id comes first (as in
      :func:`top_k_filter`), so at the edge of the set a tie goes to the lower id, and the set
      stays the smallest;
    - keep each token while the mass of the tokens before it is below ``p``: the token that
      carries the mass to ``p`` or past it is kept, the ones after it are not. A mass within
      :data:`TOP_P_TOLERANCE` (1e-12) below ``p`` counts as reaching it, so rounding cannot add a
      token: ``[0.6, 0.3, 0.1]`` at ``p = 0.9`` keeps 2;
    - the most likely token is always kept, and ``p = 1`` keeps every token whose probability is
      above 0 (no cut at all; the tolerance does not apply).
    """
    if not (np.isfinite(p) and 0 < p <= 1):
        raise ValueError(f"top_p must lie in (0, 1]; got {p}")
    probs = _rows(probs, "probs")
    if p == 1:
        return _keep_and_renormalise(probs, probs > 0)
    order = _descending(probs)
    sorted_p = np.take_along_axis(probs, order, axis=-1)
    before = np.cumsum(sorted_p, axis=-1) - sorted_p  # mass of the more likely tokens
    keep_sorted = before < p - TOP_P_TOLERANCE
    keep_sorted[..., 0] = True  # the most likely token, whatever p
    keep = np.zeros(probs.shape, dtype=bool)
    np.put_along_axis(keep, order, keep_sorted, axis=-1)
    return _keep_and_renormalise(probs, keep)


def next_token_probabilities(
    logits: ArrayLike,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
) -> np.ndarray:
    """The distribution the next token is sampled from ``(..., vocab)``.

    Introduced in chapter 8. ``softmax(logits / temperature)`` with chapter 1's
    :func:`~course_attention.numpy_ref.softmax`, then top-k, then top-p (each only if given).
    """
    check_temperature(temperature)
    z = _rows(logits, "logits")
    with np.errstate(over="ignore"):
        scaled = z / temperature
    if not np.isfinite(scaled).all():
        raise ValueError(
            f"logits / temperature is not finite (largest |logit| {np.abs(z).max():.3g}, T = "
            f"{temperature:.3g}): the logits hold inf or NaN, or T is too small for them; for "
            "T → 0 use greedy()"
        )
    probs = numpy_ref.softmax(z, temperature=temperature)
    if top_k is not None:
        probs = top_k_filter(probs, top_k)
    if top_p is not None:
        probs = top_p_filter(probs, top_p)
    return probs


def sampler(
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
) -> Callable[[np.ndarray], int]:
    """A ``choose(logits (vocab,)) → id`` for :func:`course_attention.gpt.generate`.

    Introduced in chapter 8. Draws from :func:`next_token_probabilities` with its own seeded
    generator, so the same seed gives the same text. The settings are checked here, before the
    first token.
    """
    check_temperature(temperature)
    if top_p is not None and not (np.isfinite(top_p) and 0 < top_p <= 1):
        raise ValueError(f"top_p must lie in (0, 1]; got {top_p}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be ≥ 1; got {top_k}")
    rng = np.random.default_rng(seed)

    def choose(logits: np.ndarray) -> int:
        probs = next_token_probabilities(logits, temperature, top_k, top_p)
        return int(rng.choice(probs.shape[-1], p=probs))

    return choose
