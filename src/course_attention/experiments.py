"""Small measurements that explain the design of attention, vectorised and seeded.

Introduced in chapter 2 (scaled dot-product attention): why the scores are divided by √d_k.
Every function draws queries and keys with independent standard-normal entries, so the numbers
are reproducible from ``seed`` and fast enough to run while a chapter executes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import numpy_ref as ref

__all__ = [
    "DK_VALUES",
    "expected_dot_variance",
    "dot_product_variance",
    "ScalingStats",
    "scaling_statistics",
    "weights_by_width",
]

#: The widths ``d_k`` the chapter sweeps over: 1, 2, 4, …, 1024.
DK_VALUES: tuple[int, ...] = tuple(2**i for i in range(11))


def _check_widths(d_ks: Sequence[int]) -> np.ndarray:
    widths = np.asarray(d_ks)
    if widths.ndim != 1 or widths.size == 0 or not np.issubdtype(widths.dtype, np.integer):
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of integers; got {d_ks!r}")
    if (widths < 1).any():
        raise ValueError(f"every d_k must be at least 1; got {widths.tolist()}")
    return widths


def _check_count(name: str, value: int, least: int = 1) -> None:
    if int(value) != value or value < least:
        raise ValueError(f"{name} must be an integer ≥ {least}; got {value!r}")


def expected_dot_variance(d_k: int, std_q: float = 1.0, std_k: float = 1.0) -> float:
    """Variance of ``q · k`` for independent zero-mean entries: ``d_k · std_q² · std_k²``.

    Introduced in chapter 2. Each of the ``d_k`` products ``q_i k_i`` has variance
    ``std_q² std_k²``, and the variances of independent terms add up.
    """
    _check_count("d_k", d_k)
    if std_q < 0 or std_k < 0:
        raise ValueError(f"standard deviations must be non-negative; got {std_q}, {std_k}")
    return float(d_k * std_q**2 * std_k**2)


def dot_product_variance(
    d_ks: Sequence[int] = DK_VALUES,
    n_samples: int = 1000,
    exponent: float = 0.0,
    seed: int = 0,
) -> np.ndarray:
    """Measured variance of the score ``q · k · d_k^(-exponent)`` for each width ``d_k``.

    Introduced in chapter 2. ``q`` and ``k`` have independent standard-normal entries.

    Args:
        d_ks: widths ``(n_widths,)``.
        n_samples: pairs ``(q, k)`` drawn per width.
        exponent: 0 leaves the dot product unscaled (variance ≈ ``d_k``); 0.5 divides it by
            √d_k (variance ≈ 1); 1 divides by ``d_k`` (variance ≈ ``1 / d_k``).
        seed: seeds the draws; the same seed gives the same pairs for every ``exponent``.

    Returns:
        ``(n_widths,)`` sample variances.
    """
    widths = _check_widths(d_ks)
    _check_count("n_samples", n_samples, least=2)
    rng = np.random.default_rng(seed)
    out = np.empty(len(widths))
    for i, d in enumerate(widths):
        q, k = rng.standard_normal((2, n_samples, int(d)))  # (n_samples, d_k) each
        scores = np.einsum("nd,nd->n", q, k) * float(d) ** -exponent  # (n_samples,)
        out[i] = scores.var(ddof=1)
    return out


@dataclass(frozen=True)
class ScalingStats:
    """What scaling does to the scores, the weights and the gradient, per width ``d_k``.

    Introduced in chapter 2. Every field except ``d_k`` is an average over random queries, each
    attending to ``seq_k`` random keys; all arrays have shape ``(n_widths,)``.
    """

    d_k: np.ndarray  #: the widths
    score_std: np.ndarray  #: standard deviation of the (scaled) scores
    max_weight: np.ndarray  #: largest softmax weight; 1 means the softmax is saturated
    entropy: np.ndarray  #: entropy of the weights in nats; ``log(seq_k)`` when uniform
    jacobian_norm: np.ndarray  #: Frobenius norm of the softmax Jacobian diag(p) − p pᵀ
    seq_k: int  #: keys per query


def scaling_statistics(
    d_ks: Sequence[int] = DK_VALUES,
    exponent: float = 0.5,
    seq_k: int = 16,
    n_samples: int = 128,
    seed: int = 0,
) -> ScalingStats:
    """Measure score spread, softmax saturation and the softmax gradient for each ``d_k``.

    Introduced in chapter 2. For every width, ``n_samples`` queries ``(n_samples, d_k)`` each
    score ``seq_k`` keys ``(n_samples, seq_k, d_k)``; the scores are multiplied by
    ``d_k ** -exponent`` (0 = unscaled, 0.5 = the Transformer's 1/√d_k, 1 = divided by ``d_k``).
    The same seed draws the same queries and keys for every ``exponent``, so runs compare paired.

    Returns:
        A :class:`ScalingStats` of ``(n_widths,)`` arrays.
    """
    widths = _check_widths(d_ks)
    _check_count("seq_k", seq_k, least=2)
    _check_count("n_samples", n_samples)
    if not np.isfinite(exponent):
        raise ValueError(f"exponent must be finite; got {exponent}")
    rng = np.random.default_rng(seed)
    fields: dict[str, list[float]] = {"std": [], "max": [], "ent": [], "jac": []}
    for d in widths:
        q = rng.standard_normal((n_samples, 1, int(d)))  # (n, 1, d_k)
        K = rng.standard_normal((n_samples, seq_k, int(d)))  # (n, seq_k, d_k)
        scores = (q @ K.swapaxes(-1, -2))[:, 0] * float(d) ** -exponent  # (n, seq_k)
        p = ref.softmax(scores)  # (n, seq_k)
        log_p = np.log(np.where(p > 0, p, 1.0))
        jac = ref.softmax_jacobian(p)  # (n, seq_k, seq_k)
        fields["std"].append(float(scores.std()))
        fields["max"].append(float(p.max(axis=-1).mean()))
        fields["ent"].append(float(-(p * log_p).sum(axis=-1).mean()))
        fields["jac"].append(float(np.linalg.norm(jac, axis=(-2, -1)).mean()))
    return ScalingStats(
        d_k=widths.copy(),
        score_std=np.array(fields["std"]),
        max_weight=np.array(fields["max"]),
        entropy=np.array(fields["ent"]),
        jacobian_norm=np.array(fields["jac"]),
        seq_k=int(seq_k),
    )


def weights_by_width(
    d_ks: Sequence[int] = DK_VALUES,
    exponent: float = 0.5,
    seq_k: int = 8,
    seed: int = 0,
    max_width: int = 1024,
) -> np.ndarray:
    """One query's weights over ``seq_k`` keys as the width ``d_k`` grows.

    Introduced in chapter 2. One query ``(max_width,)`` and keys ``(seq_k, max_width)`` are drawn
    once; width ``d`` uses their first ``d`` features, so neighbouring widths look alike and only
    the growth of the scores changes the picture. The scores are multiplied by
    ``d ** -exponent`` (0 = unscaled, 0.5 = divided by √d_k).

    Returns:
        ``(n_widths, seq_k)`` weights, each row summing to 1.
    """
    widths = _check_widths(d_ks)
    _check_count("seq_k", seq_k, least=2)
    if widths.max() > max_width:
        raise ValueError(f"every d_k must be at most max_width={max_width}; got {widths.max()}")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(max_width)  # (max_width,)
    K = rng.standard_normal((seq_k, max_width))  # (seq_k, max_width)
    scores = np.stack([K[:, :d] @ q[:d] * float(d) ** -exponent for d in widths])
    return ref.softmax(scores)  # (n_widths, seq_k)


# --- chapter 3: self-attention ------------------------------------------------------------


# --- chapter 4: masking -------------------------------------------------------------------


# --- chapter 5: multi-head attention --------------------------------------------------------
