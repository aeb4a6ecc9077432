"""Exercises of chapter 6 (the Transformer block): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

EPS = 1e-5  # torch.nn.LayerNorm's default


def _layer_norm_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.layer_norm(x, gamma, beta, eps=EPS)  # (..., d_model)


def _normalise(x: np.ndarray, axis: int | tuple[int, ...] | None = -1, ddof: int = 0) -> np.ndarray:
    mean = x.mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axis, ddof=ddof, keepdims=True) + EPS)


LAYER_NORM_MISTAKES = (
    Mistake(
        N_(
            "the unbiased variance (`ddof=1`, the default of `torch.var`): layer norm divides the "
            "squared deviations by d, not d - 1"
        ),
        lambda x, gamma, beta: _normalise(x, ddof=1) * gamma + beta,
    ),
    Mistake(
        N_(
            "ε added outside the square root, `sqrt(var) + eps`: layer norm computes "
            "`sqrt(var + eps)`, which matters for a token whose features are almost equal"
        ),
        lambda x, gamma, beta: (
            (x - x.mean(axis=-1, keepdims=True))
            / (np.sqrt(x.var(axis=-1, keepdims=True)) + EPS)
            * gamma
            + beta
        ),
    ),
    Mistake(
        N_(
            "the mean and variance taken over the whole array instead of each token's last axis "
            "(`axis=-1, keepdims=True`)"
        ),
        lambda x, gamma, beta: _normalise(x, axis=None) * gamma + beta,
    ),
    Mistake(
        N_("γ and β swapped: multiply by gamma (the scale), then add beta (the shift)"),
        lambda x, gamma, beta: _normalise(x) * beta + gamma,
    ),
    Mistake(
        N_("γ and β left out: the normalised x must still be scaled by gamma and shifted by beta"),
        lambda x, gamma, beta: _normalise(x),
    ),
)


def _layer_norm_cases() -> list[tuple]:
    gen = rng(61)
    cases = []
    for shape in [(4,), (3, 5), (2, 4, 8), (2, 3, 6)]:
        d = shape[-1]
        x = gen.normal(loc=3.0, scale=2.0, size=shape)  # not centred: the mean must go
        cases.append((x, gen.normal(size=d), gen.normal(size=d)))
    # tokens whose features are almost equal (variance ~1e-6 < eps): where eps matters
    x = 5.0 + 1e-3 * gen.normal(size=(3, 4))
    cases.append((x, gen.normal(size=4), gen.normal(size=4)))
    return cases


def _parameters_reference(d_model: int, d_ff: int) -> int:
    attention = 4 * d_model * d_model + 4 * d_model  # W_q, W_k, W_v, W_o and their biases
    feed_forward = 2 * d_model * d_ff + d_ff + d_model  # W_1 (d, d_ff), W_2 (d_ff, d), biases
    norms = 2 * 2 * d_model  # two layer norms, each gamma and beta of shape (d,)
    return attention + feed_forward + norms


PARAMETER_MISTAKES = (
    Mistake(
        N_("the two layer norms left out: each has γ and β of shape (d_model,), 4·d_model in all"),
        lambda d_model, d_ff: _parameters_reference(d_model, d_ff) - 4 * d_model,
    ),
    Mistake(  # the same count as the layer norms: the checker names both (issue 24)
        N_(
            "the biases of the four attention projections left out: W_q, W_k, W_v and W_o each "
            "have a bias of shape (d_model,), 4·d_model in all"
        ),
        lambda d_model, d_ff: _parameters_reference(d_model, d_ff) - 4 * d_model,
    ),
    Mistake(
        N_(
            "the output projection W_o left out: attention has four d_model × d_model matrices "
            "(W_q, W_k, W_v, W_o), each with a bias"
        ),
        lambda d_model, d_ff: _parameters_reference(d_model, d_ff) - d_model * d_model - d_model,
    ),
    Mistake(
        N_(
            "the biases of the linear layers left out (4·d_model in attention, d_ff + d_model in "
            "the feed-forward network)"
        ),
        lambda d_model, d_ff: _parameters_reference(d_model, d_ff) - 5 * d_model - d_ff,
    ),
    Mistake(
        N_("the hidden width taken as 4·d_model instead of the d_ff you were given"),
        lambda d_model, d_ff: _parameters_reference(d_model, 4 * d_model),
    ),
)


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


def _ln(x: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.layer_norm(x)


def _ff(
    x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.feed_forward(x, W1, b1, W2, b2)


RESIDUAL_FF_MISTAKES = (
    Mistake(
        N_("pre-norm and post-norm swapped: `norm_first=True` means x + ff(layer_norm(x))"),
        lambda x, W1, b1, W2, b2, norm_first: _residual_ff_reference(
            x, W1, b1, W2, b2, not norm_first
        ),
    ),
    Mistake(
        N_(
            "`norm_first` ignored: post-norm, layer_norm(x + ff(x)), on every call — with "
            "norm_first=True the norm comes first, x + ff(layer_norm(x))"
        ),
        lambda x, W1, b1, W2, b2, norm_first: _residual_ff_reference(x, W1, b1, W2, b2, False),
    ),
    Mistake(
        N_(
            "`norm_first` ignored: pre-norm, x + ff(layer_norm(x)), on every call — with "
            "norm_first=False the norm comes last, layer_norm(x + ff(x))"
        ),
        lambda x, W1, b1, W2, b2, norm_first: _residual_ff_reference(x, W1, b1, W2, b2, True),
    ),
    Mistake(
        N_("the residual left out: the sublayer must add its input x back"),
        lambda x, W1, b1, W2, b2, norm_first: (
            _ff(_ln(x), W1, b1, W2, b2) if norm_first else _ln(_ff(x, W1, b1, W2, b2))
        ),
    ),
    Mistake(
        N_(
            "the residual taken from the normalised input, layer_norm(x) + ff(layer_norm(x)): in "
            "pre-norm the residual path carries x itself and passes no norm"
        ),
        lambda x, W1, b1, W2, b2, norm_first: (
            _ln(x) + _ff(_ln(x), W1, b1, W2, b2)
            if norm_first
            else _residual_ff_reference(x, W1, b1, W2, b2, False)
        ),
    ),
    Mistake(
        N_(
            "post-norm that normalises only the sublayer's output, x + layer_norm(ff(x)): "
            "post-norm normalises the sum, layer_norm(x + ff(x))"
        ),
        lambda x, W1, b1, W2, b2, norm_first: (
            _residual_ff_reference(x, W1, b1, W2, b2, True)
            if norm_first
            else x + _ln(_ff(x, W1, b1, W2, b2))
        ),
    ),
)


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
        title=N_("layer norm over each token's features"),
        reference=_layer_norm_reference,
        cases=_layer_norm_cases,
        difficulty=1,
        minutes=10,
        mistakes=LAYER_NORM_MISTAKES,
        hint=N_(
            "take the mean and the variance over the last axis only, keeping it "
            "(axis=-1, keepdims=True); use the biased variance (np.var's default) plus eps = 1e-5 "
            "under the square root, then multiply by gamma and add beta."
        ),
        nudge=N_(
            "each token is normalised on its own, over its own features (the last axis); then "
            "gamma scales and beta shifts."
        ),
    )
)

register(
    Exercise(
        id="transformer-block-2",
        title=N_("the parameters of an encoder layer"),
        reference=_parameters_reference,
        cases=lambda: [(4, 10), (8, 32), (6, 6), (2, 16)],
        difficulty=1,
        minutes=5,
        mistakes=PARAMETER_MISTAKES,
        hint=N_(
            "add three parts: attention (four d_model × d_model matrices and four biases of "
            "d_model), the feed-forward network (W_1 d_model × d_ff, W_2 d_ff × d_model, biases "
            "d_ff and d_model) and two layer norms (gamma and beta of d_model each)."
        ),
        nudge=N_(
            "count the weights and the biases of each part of the layer separately: the four "
            "attention projections, the two layers of the feed-forward network and the two layer "
            "norms."
        ),
    )
)

register(
    Exercise(
        id="transformer-block-3",
        title=N_("a feed-forward sublayer, pre-norm or post-norm"),
        reference=_residual_ff_reference,
        cases=_residual_ff_cases,
        difficulty=2,
        minutes=10,
        mistakes=RESIDUAL_FF_MISTAKES,
        hint=N_(
            "pre-norm (norm_first=True) is x + ff(layer_norm(x)); post-norm is "
            "layer_norm(x + ff(x)). Use ref.layer_norm with its defaults (gamma 1, beta 0) and "
            "ref.feed_forward; keep the residual x outside the norm in pre-norm."
        ),
        nudge=N_(
            "the two placements differ only in where the layer norm sits relative to the residual "
            "addition: compare the section's two equations."
        ),
    )
)
