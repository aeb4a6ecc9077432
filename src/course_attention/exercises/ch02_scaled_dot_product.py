"""Exercises of chapter 2 (scaled dot-product): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import ErrorHint, Exercise, Mistake, register, rng


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _naive_softmax(x: np.ndarray) -> np.ndarray:
    """A softmax without the maximum subtracted: large scores overflow to inf / inf = NaN."""
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _attend(Q: np.ndarray, K_t: np.ndarray, V: np.ndarray, divisor: float, axis: int = -1):
    """softmax(Q K_t / divisor) V, with ``K_t`` already transposed (rightly or wrongly)."""
    return _softmax(Q @ K_t / divisor, axis=axis) @ V


def _attention_output(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.scaled_dot_product_attention(Q, K, V)[0]  # (..., seq_q, d_v)


def _attention_cases() -> list[tuple]:
    gen = rng(21)
    return [
        (gen.normal(size=(3, 4)), gen.normal(size=(5, 4)), gen.normal(size=(5, 2))),
        # batch = seq = d_k: K.T has the right shape here but the wrong values
        (gen.normal(size=(4, 4, 4)), gen.normal(size=(4, 4, 4)), gen.normal(size=(4, 4, 3))),
        (gen.normal(size=(2, 3, 8)), gen.normal(size=(2, 6, 8)), gen.normal(size=(2, 6, 5))),
        (gen.normal(size=(2, 3, 2, 64)), gen.normal(size=(2, 3, 5, 64)), gen.normal(size=(5, 4))),
        # scores in the thousands: np.exp overflows unless each row's maximum is subtracted
        (30.0 * gen.normal(size=(3, 4)), 30.0 * gen.normal(size=(5, 4)), gen.normal(size=(5, 2))),
    ]


def _swap(K: np.ndarray) -> np.ndarray:
    return np.swapaxes(K, -1, -2)


ATTENTION_MISTAKES = (
    Mistake(
        N_("no scaling: the scores Q Kᵀ were not divided by √dₖ"),
        lambda Q, K, V: _attend(Q, _swap(K), V, 1.0),
    ),
    Mistake(
        N_("the scores divided by d_k instead of √dₖ (the softmax comes out too flat)"),
        lambda Q, K, V: _attend(Q, _swap(K), V, Q.shape[-1]),
    ),
    Mistake(
        N_("the scores divided by √d_v, the width of V (`V.shape[-1]`), instead of √dₖ "
           "(`Q.shape[-1]`)"),
        lambda Q, K, V: _attend(Q, _swap(K), V, np.sqrt(V.shape[-1])),
    ),
    Mistake(
        N_("`K.T` on a batched array: it reverses every axis, (batch, seq_k, d_k) → (d_k, seq_k, "
           "batch); swap only the last two with `np.swapaxes(K, -1, -2)`"),
        lambda Q, K, V: _attend(Q, K.T, V, np.sqrt(Q.shape[-1])),
    ),
    Mistake(
        N_("softmax over the queries (axis -2, axis 0 of a matrix) instead of over the keys (axis "
           "-1)"),
        lambda Q, K, V: _attend(Q, _swap(K), V, np.sqrt(Q.shape[-1]), axis=-2),
    ),
    Mistake(
        N_("no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
           "NaN — subtract each row's maximum, `s.max(axis=-1, keepdims=True)`"),
        lambda Q, K, V: _naive_softmax(Q @ _swap(K) / np.sqrt(Q.shape[-1])) @ V,
    ),
)


def _jacobian_reference(p: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax_jacobian(p)  # (..., n, n)


def _jacobian_cases() -> list[tuple]:
    from .. import numpy_ref

    gen = rng(22)
    return [
        (numpy_ref.softmax(gen.normal(size=4)),),
        (np.full(5, 0.2),),  # uniform weights
        (np.array([0.0, 1.0, 0.0]),),  # saturated: the Jacobian is all zeros
        (numpy_ref.softmax(gen.normal(size=(3, 6))),),  # a batch of weight vectors
    ]


def _outer(p: np.ndarray) -> np.ndarray:
    return p[..., :, None] * p[..., None, :]  # (..., n, n)


def _diag(p: np.ndarray) -> np.ndarray:
    return p[..., :, None] * np.eye(p.shape[-1])  # (..., n, n)


BATCH_HINT = N_(
    "diag(p) − p pᵀ is right for one weight vector; what breaks is the batch: `np.outer` and "
    "`np.diag` handle one 1-D vector only. An outer product is a column times a row: write it "
    "with broadcasting (axes added with `None`), which keeps the leading batch axes, and build the "
    "diagonal matrix the same way."
)

JACOBIAN_MISTAKES = (
    Mistake(
        N_("the sign flipped: p pᵀ − diag(p) instead of diag(p) − p pᵀ"),
        lambda p: _outer(p) - _diag(p),
    ),
    Mistake(N_("only diag(p): the outer product p pᵀ was not subtracted"), _diag),
    Mistake(N_("only −p pᵀ: the diagonal diag(p) is missing"), lambda p: -_outer(p)),
    Mistake(
        N_("`np.outer` on a batch of weight vectors: it flattens its inputs, (3, 6) → an (18, 18) "
           "matrix; use p[..., :, None] * p[..., None, :]"),
        lambda p: np.diag(p.ravel()) - np.outer(p, p) if p.ndim > 1 else _diag(p) - _outer(p),
        hint=BATCH_HINT,
    ),
)

JACOBIAN_ERRORS = (
    # np.diag(p) - np.outer(p, p) on the batch (3, 6): shapes (3,) and (18, 18); torch.outer
    ErrorHint(
        r"\(18, ?18\)|outer: Expected 1-D",
        N_(
            "`np.outer` flattens its inputs: on this case's batch p (3, 6) it builds the (18, 18) "
            "matrix of every pair of the 18 numbers (`torch.outer` refuses a 2-D input), and "
            "`np.diag` of a 2-D array reads its diagonal instead of building a matrix — both "
            "handle one vector only, so a formula right for one vector fails on a batch"
        ),
        BATCH_HINT,
    ),
)


def _variance_reference(d_k: int, std_q: float, std_k: float) -> float:
    from .. import experiments

    return experiments.expected_dot_variance(d_k, std_q, std_k)


VARIANCE_MISTAKES = (
    Mistake(
        N_("the variance of one product q_i k_i: the d_k terms were not added up"),
        lambda d_k, std_q, std_k: std_q**2 * std_k**2,
    ),
    Mistake(
        N_("the standard deviation √dₖ · std_q · std_k instead of the variance (its square)"),
        lambda d_k, std_q, std_k: np.sqrt(d_k) * std_q * std_k,
    ),
    Mistake(
        N_("standard deviations instead of variances: d_k · std_q · std_k (square them)"),
        lambda d_k, std_q, std_k: d_k * std_q * std_k,
    ),
    Mistake(
        N_("the variances of q_i and k_i added, d_k (std_q² + std_k²): for a product they "
           "multiply"),
        lambda d_k, std_q, std_k: d_k * (std_q**2 + std_k**2),
    ),
)


def _masked_softmax_reference(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(scores + np.where(mask, 0.0, -np.inf))  # (..., seq_q, seq_k)


def _masked_softmax_cases() -> list[tuple]:
    from .. import numpy_ref

    gen = rng(24)
    keep = gen.random((2, 3, 5)) > 0.4
    keep[..., 0] = True  # every query keeps at least one key
    return [
        (gen.normal(size=(4, 4)), numpy_ref.causal_mask(4)),
        (gen.normal(size=(2, 3, 5)) * 3.0, keep),
        (gen.normal(size=(2, 3, 5)), numpy_ref.causal_mask(3, 5)),  # mask broadcasts
        # scores in the thousands: np.exp overflows unless the maximum is subtracted
        (1000.0 * gen.normal(size=(4, 4)), numpy_ref.causal_mask(4)),
        # a hidden key far above the visible ones: the maximum must be taken over visible keys
        (
            np.array([[0.0, 1.0, 1000.0], [2.0, -1.0, 3.0]]),
            np.array([[True, True, False], [True, False, True]]),
        ),
    ]


NAN_HINT = N_(
    "0 · (−∞) is NaN, not 0: no product with −∞ leaves a kept score unchanged. Choose between "
    "two values by the mask (`np.where`) instead of multiplying by it."
)

MASKED_SOFTMAX_MISTAKES = (
    Mistake(
        N_("the boolean mask added as 0/1 numbers (`scores + mask`): 1 only nudges the kept keys "
           "up by one, hidden keys still get weight; hidden keys need −inf"),
        lambda scores, mask: _softmax(scores + mask),
    ),
    Mistake(
        N_("the mask inverted: −inf where the mask is True (True means *may attend*)"),
        lambda scores, mask: _softmax(scores + np.where(mask, -np.inf, 0.0)),
    ),
    Mistake(
        N_("masked after the softmax (`softmax(scores) * mask`): hidden keys get 0, but the row "
           "no longer sums to 1"),
        lambda scores, mask: _softmax(scores) * mask,
    ),
    Mistake(
        N_("softmax over the queries (axis -2) instead of over the keys (axis -1)"),
        lambda scores, mask: _softmax(scores + np.where(mask, 0.0, -1e9), axis=-2),
    ),
    Mistake(
        N_("no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
           "NaN"),
        lambda scores, mask: _naive_softmax(scores + np.where(mask, 0.0, -np.inf)),
    ),
    Mistake(
        N_("the maximum taken over every key, hidden ones included (`scores.max(...)` before "
           "masking): a hidden score far above the visible ones makes every visible exp "
           "underflow to 0, and 0 / 0 is NaN — take the maximum after adding the mask"),
        lambda scores, mask: _naive_softmax(
            scores + np.where(mask, 0.0, -np.inf) - scores.max(axis=-1, keepdims=True)
        ),
    ),
    Mistake(
        N_("the mask turned into numbers by multiplying, `(~mask) * -np.inf`: at a kept key that "
           "is 0 · (−∞), which is NaN, not 0, and one NaN score makes its whole row of weights "
           "NaN — choose the numbers with np.where(mask, 0.0, -np.inf)"),
        lambda scores, mask: _softmax(scores + (~mask) * -np.inf),
        hint=NAN_HINT,
    ),
)

MASKED_SOFTMAX_ERRORS = (
    # ref.softmax refuses the NaN that (~mask) * -np.inf makes
    ErrorHint(
        r"must be finite; found nan",
        N_(
            "NaN reached the softmax. A common source here is a product with −∞: 0 · (−∞) is NaN, "
            "not 0, so `(~mask) * -np.inf` puts NaN at every kept key — choose the numbers with "
            "np.where(mask, 0.0, -np.inf) instead of multiplying"
        ),
        NAN_HINT,
    ),
)


register(
    Exercise(
        id="scaled-dot-product-1",
        title=N_("scaled dot-product attention in matrix form"),
        reference=_attention_output,
        cases=_attention_cases,
        difficulty=2,
        minutes=10,
        mistakes=ATTENTION_MISTAKES,
        hint=N_(
            "compute scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_k) with d_k = Q.shape[-1], "
            "softmax along the last axis (subtract the row maximum first), then weights @ V. "
            "`K.T` reverses every axis of a batched array: swap only the last two."
        ),
        nudge=N_(
            "it is chapter 1's look-up for many queries at once, with the scores divided by √dₖ, "
            "and it must work with any leading batch axes: which axes of K does the product need "
            "swapped?"
        ),
    )
)

register(
    Exercise(
        id="scaled-dot-product-2",
        title=N_("the softmax Jacobian diag(p) − p pᵀ"),
        reference=_jacobian_reference,
        cases=_jacobian_cases,
        difficulty=2,
        minutes=10,
        mistakes=JACOBIAN_MISTAKES,
        error_hints=JACOBIAN_ERRORS,
        hint=N_(
            "entry [i, j] is p_i (δ_ij − p_j). For p of shape (..., n) build p[..., :, None] * "
            "np.eye(n) for the diagonal and subtract the outer product p[..., :, None] * p[..., "
            "None, :] (np.outer only handles 1-D p)."
        ),
        nudge=N_(
            "differentiate p_i = e^(s_i) / Σ_k e^(s_k) with respect to s_j twice: once for j = i, "
            "once for j ≠ i."
        ),
    )
)

register(
    Exercise(
        id="scaled-dot-product-3",
        title=N_("the variance of q · k"),
        reference=_variance_reference,
        cases=lambda: [
            (64, 1.0, 1.0),
            (8, 2.0, 3.0),
            (16, 2.0, 0.5),
            (100, 0.1, 3.0),
            (1, 1.0, 1.0),
        ],
        difficulty=1,
        minutes=5,
        mistakes=VARIANCE_MISTAKES,
        hint=N_(
            "q · k is a sum of d_k independent products q_i k_i. Each product has mean 0 and "
            "variance std_q² · std_k², and variances of independent terms add."
        ),
        nudge=N_(
            "q · k is a sum of d_k products: what is the variance of one product of two "
            "independent zero-mean numbers, and of a sum of independent terms?"
        ),
    )
)

register(
    Exercise(
        id="scaled-dot-product-4",
        title=N_("a boolean mask applied the way PyTorch adds a float attn_mask"),
        reference=_masked_softmax_reference,
        cases=_masked_softmax_cases,
        difficulty=1,
        minutes=5,
        mistakes=MASKED_SOFTMAX_MISTAKES,
        error_hints=MASKED_SOFTMAX_ERRORS,
        hint=N_(
            "turn the mask into numbers to add, np.where(mask, 0.0, -np.inf): 0 leaves a score "
            "unchanged and −inf gives weight 0. Add them to the scores, then take the softmax "
            "over the last axis."
        ),
        nudge=N_(
            "a hidden key must end with weight exactly 0: before the softmax, give its score a "
            "value whose exponential is 0."
        ),
    )
)
