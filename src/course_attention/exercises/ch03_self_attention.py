"""Exercises of chapter 3 (self-attention): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _self_attention_reference(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray
) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]  # (seq, d_v)


def _self_attention_cases() -> list[tuple]:
    from .. import toy

    s = toy.it_sentence("wide")
    gen = rng(31)
    return [
        (s.X, s.W_q, s.W_k, s.W_v),
        (
            gen.normal(size=(5, 4)),
            gen.normal(size=(4, 3)),
            gen.normal(size=(4, 3)),
            gen.normal(size=(4, 2)),
        ),
        (
            gen.normal(size=(6, 8)),
            gen.normal(size=(8, 16)),
            gen.normal(size=(8, 16)),
            gen.normal(size=(8, 8)),
        ),
    ]


def _weight_bytes_reference(seq: int, batch: int, n_heads: int, bytes_per_number: int) -> int:
    return batch * n_heads * seq * seq * bytes_per_number


def _unpermute_reference(Y: np.ndarray, perm: np.ndarray) -> np.ndarray:
    return Y[np.argsort(perm)]  # (seq, d_v)


def _unpermute_cases() -> list[tuple]:
    gen = rng(33)
    return [
        (gen.normal(size=(3, 2)), np.array([1, 2, 0])),  # not its own inverse: Y[perm] fails
        (gen.normal(size=(5, 4)), np.array([4, 0, 3, 1, 2])),
        (gen.normal(size=(6, 3)), gen.permutation(6)),
    ]


register(
    Exercise(
        id="self-attention-1",
        title="self-attention from X and three weight matrices",
        reference=_self_attention_reference,
        cases=_self_attention_cases,
        hint=(
            "project first: Q = X @ W_q, K = X @ W_k, V = X @ W_v (shapes (seq, d_k), (seq, d_k), "
            "(seq, d_v)); then softmax(Q Kᵀ / √d_k) V with d_k = W_k.shape[1], the width of the "
            "keys — not d_model, the width of X."
        ),
    )
)

register(
    Exercise(
        id="self-attention-2",
        title="the memory of the attention weights",
        reference=_weight_bytes_reference,
        cases=lambda: [(1024, 1, 1, 4), (4096, 8, 16, 2), (100, 3, 12, 4), (7, 2, 1, 8)],
        hint=(
            "the weights have shape (batch, n_heads, seq, seq): multiply the four sizes, with seq "
            "twice, and the bytes per number."
        ),
    )
)

register(
    Exercise(
        id="self-attention-3",
        title="undo a permutation of the outputs",
        reference=_unpermute_reference,
        cases=_unpermute_cases,
        hint=(
            "row i of Y belongs to the original token perm[i]. You need the inverse "
            "permutation, np.argsort(perm): Y[np.argsort(perm)]. Y[perm] permutes a second time."
        ),
    )
)
