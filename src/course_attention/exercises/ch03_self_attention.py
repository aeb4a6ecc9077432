"""Exercises of chapter 3 (self-attention): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng


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
        # scores in the thousands: np.exp overflows unless each row's maximum is subtracted
        (
            10.0 * gen.normal(size=(4, 3)),
            3.0 * gen.normal(size=(3, 3)),
            3.0 * gen.normal(size=(3, 3)),
            gen.normal(size=(3, 2)),
        ),
    ]


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(x, axis=axis)


def _naive_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x)  # no maximum subtracted: overflows to inf / inf = NaN for large scores
    return e / e.sum(axis=-1, keepdims=True)


def _attend(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, scale: float, axis: int = -1
) -> np.ndarray:
    """Self-attention with a given score scale and softmax axis (the mistakes vary them)."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (seq, d_k), (seq, d_k), (seq, d_v)
    return _softmax(Q @ K.T * scale, axis=axis) @ V  # (seq, d_v)


SELF_ATTENTION_MISTAKES = (
    Mistake(
        N_(
            "the scores divided by √d_model (the width of X) instead of √dₖ (the width of the "
            "keys, W_k.shape[1])"
        ),
        lambda X, W_q, W_k, W_v: _attend(X, W_q, W_k, W_v, X.shape[-1] ** -0.5),
    ),
    Mistake(
        N_("the scores divided by d_k instead of √dₖ"),
        lambda X, W_q, W_k, W_v: _attend(X, W_q, W_k, W_v, 1.0 / W_k.shape[-1]),
    ),
    Mistake(
        N_("the scores not scaled at all (no division by √dₖ)"),
        lambda X, W_q, W_k, W_v: _attend(X, W_q, W_k, W_v, 1.0),
    ),
    Mistake(
        N_("softmax over the queries (axis 0) instead of the keys (axis -1): columns sum to 1"),
        lambda X, W_q, W_k, W_v: _attend(X, W_q, W_k, W_v, W_k.shape[-1] ** -0.5, axis=0),
    ),
    Mistake(
        N_("no projections: X used as queries, keys and values (softmax(X Xᵀ/√d_model) X)"),
        lambda X, W_q, W_k, W_v: _softmax(X @ X.T / np.sqrt(X.shape[-1])) @ X,
    ),
    Mistake(
        N_("the weights multiplied with X instead of the values V = X W_v"),
        lambda X, W_q, W_k, W_v: _softmax((X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[-1])) @ X,
    ),
    Mistake(
        N_(
            "no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
            "NaN — subtract each row's maximum first"
        ),
        lambda X, W_q, W_k, W_v: (
            _naive_softmax((X @ W_q) @ (X @ W_k).T / np.sqrt(W_k.shape[-1])) @ (X @ W_v)
        ),
    ),
)


def _weight_bytes_reference(seq: int, batch: int, n_heads: int, bytes_per_number: int) -> int:
    return batch * n_heads * seq * seq * bytes_per_number


WEIGHT_BYTES_MISTAKES = (
    Mistake(
        N_(
            "seq counted once: the weights are (batch, n_heads, seq, seq), one number per *pair* "
            "of tokens — seq appears twice"
        ),
        lambda seq, batch, n_heads, bytes_per_number: batch * n_heads * seq * bytes_per_number,
    ),
    Mistake(
        N_("the number of weights, not their bytes (bytes_per_number left out)"),
        lambda seq, batch, n_heads, bytes_per_number: batch * n_heads * seq * seq,
    ),
    Mistake(
        N_("the heads left out: every head has its own (seq, seq) weights"),
        lambda seq, batch, n_heads, bytes_per_number: batch * seq * seq * bytes_per_number,
    ),
    Mistake(
        N_("bits instead of bytes (multiplied by 8)"),
        lambda seq, batch, n_heads, bytes_per_number: (
            8 * batch * n_heads * seq * seq * bytes_per_number
        ),
    ),
)


UNPERMUTE_MISTAKES = (
    Mistake(
        N_(
            "Y[perm] instead of Y[np.argsort(perm)]: that applies the permutation a second time "
            "instead of undoing it"
        ),
        lambda Y, perm: Y[perm],
    ),
    Mistake(
        N_("Y returned unchanged: the rows are still in the shuffled order"),
        lambda Y, perm: Y,
    ),
)


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
        title=N_("self-attention from X and three weight matrices"),
        reference=_self_attention_reference,
        cases=_self_attention_cases,
        difficulty=2,
        minutes=10,
        mistakes=SELF_ATTENTION_MISTAKES,
        hint=N_(
            "project first: Q = X @ W_q, K = X @ W_k, V = X @ W_v (shapes (seq, d_k), (seq, d_k), "
            "(seq, d_v)); then softmax(Q Kᵀ / √dₖ) V with d_k = W_k.shape[1], the width of the "
            "keys — not d_model, the width of X."
        ),
        nudge=N_(
            "the queries, keys and values all come from the same X, each through its own matrix; "
            "after that it is chapter 2's attention, scaled by the width of the keys."
        ),
    )
)

register(
    Exercise(
        id="self-attention-2",
        title=N_("the memory of the attention weights"),
        reference=_weight_bytes_reference,
        cases=lambda: [(1024, 1, 1, 4), (4096, 8, 16, 2), (100, 3, 12, 4), (7, 2, 1, 8)],
        difficulty=1,
        minutes=5,
        mistakes=WEIGHT_BYTES_MISTAKES,
        hint=N_(
            "the weights have shape (batch, n_heads, seq, seq): multiply the four sizes, with seq "
            "twice, and the bytes per number."
        ),
        nudge=N_(
            "the weights hold one number per (query, key) pair, per head and per sequence of the "
            "batch: count them, then multiply by the bytes of one number."
        ),
    )
)

register(
    Exercise(
        id="self-attention-3",
        title=N_("undo a permutation of the outputs"),
        reference=_unpermute_reference,
        cases=_unpermute_cases,
        difficulty=2,
        minutes=10,
        mistakes=UNPERMUTE_MISTAKES,
        hint=N_(
            "row i of Y belongs to the original token perm[i]. You need the inverse "
            "permutation, np.argsort(perm): Y[np.argsort(perm)]. Y[perm] permutes a second time."
        ),
        nudge=N_(
            "row i of Y is the output of the token that the shuffle put at position i; perm says "
            "where each row came from, and you need the opposite map."
        ),
    )
)
