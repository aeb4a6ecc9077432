"""Exercises of chapter 6 (the Transformer block): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _layer_norm_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.layer_norm(x, gamma, beta, eps=1e-5)  # (..., d_model)


def _layer_norm_cases() -> list[tuple]:
    gen = rng(61)
    cases = []
    for shape in [(4,), (3, 5), (2, 4, 8), (2, 3, 6)]:
        d = shape[-1]
        x = gen.normal(loc=3.0, scale=2.0, size=shape)  # not centred: the mean must go
        cases.append((x, gen.normal(size=d), gen.normal(size=d)))
    return cases


def _positions_reference(seq_len: int, d_model: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.sinusoidal_positions(seq_len, d_model)  # (seq_len, d_model)


def _residual_ff_reference(
    x: np.ndarray,
    W1: np.ndarray,
    b1: np.ndarray,
    W2: np.ndarray,
    b2: np.ndarray,
    norm_first: bool,
) -> np.ndarray:
    from .. import numpy_ref

    if norm_first:  # pre-norm: x + ff(norm(x))
        return x + numpy_ref.feed_forward(numpy_ref.layer_norm(x), W1, b1, W2, b2)
    return numpy_ref.layer_norm(x + numpy_ref.feed_forward(x, W1, b1, W2, b2))  # post-norm


def _residual_ff_cases() -> list[tuple]:
    gen = rng(63)
    cases = []
    for (seq, d), norm_first in [((3, 4), True), ((3, 4), False), ((5, 8), True), ((5, 8), False)]:
        x = gen.normal(loc=1.0, scale=3.0, size=(seq, d))
        W1, W2 = gen.normal(size=(d, 4 * d)) / np.sqrt(d), gen.normal(size=(4 * d, d)) / (2 * d)
        cases.append((x, W1, gen.normal(size=4 * d), W2, gen.normal(size=d), norm_first))
    return cases


register(
    Exercise(
        id="transformer-block-1",
        title="layer norm over each token's features",
        reference=_layer_norm_reference,
        cases=_layer_norm_cases,
        hint=(
            "take the mean and the variance over the last axis only, keeping it "
            "(axis=-1, keepdims=True); use the biased variance (np.var's default) plus eps = 1e-5 "
            "under the square root, then multiply by gamma and add beta."
        ),
    )
)

register(
    Exercise(
        id="transformer-block-2",
        title="sinusoidal positions",
        reference=_positions_reference,
        cases=lambda: [(1, 2), (4, 4), (10, 8), (50, 16), (7, 64)],
        hint=(
            "feature pair i turns at frequency 10000 ** (-2i / d_model): the even features "
            "(table[:, 0::2]) hold sin(pos · freq), the odd ones (table[:, 1::2]) cos(pos · freq)."
        ),
    )
)

register(
    Exercise(
        id="transformer-block-3",
        title="a feed-forward sublayer, pre-norm or post-norm",
        reference=_residual_ff_reference,
        cases=_residual_ff_cases,
        hint=(
            "pre-norm (norm_first=True) is x + ff(layer_norm(x)); post-norm is "
            "layer_norm(x + ff(x)). Use ref.layer_norm with its defaults (gamma 1, beta 0) and "
            "ref.feed_forward; keep the residual x outside the norm in pre-norm."
        ),
    )
)
