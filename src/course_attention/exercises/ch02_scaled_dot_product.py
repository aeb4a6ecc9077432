"""Exercises of chapter 2 (scaled dot-product): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _attention_output(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.scaled_dot_product_attention(Q, K, V)[0]  # (..., seq_q, d_v)


def _attention_cases() -> list[tuple]:
    gen = rng(21)
    return [
        (gen.normal(size=(3, 4)), gen.normal(size=(5, 4)), gen.normal(size=(5, 2))),
        (gen.normal(size=(2, 3, 8)), gen.normal(size=(2, 6, 8)), gen.normal(size=(2, 6, 5))),
        # batch = seq = d_k: K.T has the right shape here but the wrong values
        (gen.normal(size=(4, 4, 4)), gen.normal(size=(4, 4, 4)), gen.normal(size=(4, 4, 3))),
        (gen.normal(size=(2, 3, 2, 64)), gen.normal(size=(2, 3, 5, 64)), gen.normal(size=(5, 4))),
    ]


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


def _variance_reference(d_k: int, std_q: float, std_k: float) -> float:
    from .. import experiments

    return experiments.expected_dot_variance(d_k, std_q, std_k)


register(
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

register(
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

register(
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
