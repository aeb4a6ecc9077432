"""Chapter 2's measurements: why the scores are divided by √dₖ (variance, saturation, gradients).

Every function draws queries and keys with independent standard-normal entries, so the numbers
are reproducible from ``seed`` and fast enough to run while a chapter executes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import numpy_ref as ref
from ._checks import _check_count, _check_widths

__all__ = [
    "DK_VALUES",
    "expected_dot_variance",
    "dot_product_variance",
    "ScalingStats",
    "scaling_statistics",
    "SMALL_GRADIENT",
    "query_gradient",
]

#: The widths ``d_k`` the chapter sweeps over: 1, 2, 4, …, 1024.
DK_VALUES: tuple[int, ...] = tuple(2**i for i in range(11))


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
            √dₖ (variance ≈ 1); 1 divides by ``d_k`` (variance ≈ ``1 / d_k``).
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
    #: median over queries of the per-entry size of ∂L/∂q (see :func:`query_gradient`)
    grad_median: np.ndarray | None = None
    grad_mean: np.ndarray | None = None  #: mean over queries of the same per-entry size
    #: share of queries whose per-entry gradient is below ``SMALL_GRADIENT``
    grad_small: np.ndarray | None = None


def scaling_statistics(
    d_ks: Sequence[int] = DK_VALUES,
    exponent: float = 0.5,
    seq_k: int = 16,
    n_samples: int = 128,
    seed: int = 0,
) -> ScalingStats:
    """Measure score spread, softmax saturation and the gradient at the query for each ``d_k``.

    Introduced in chapter 2. For every width, ``n_samples`` queries ``(n_samples, d_k)`` each
    score ``seq_k`` keys ``(n_samples, seq_k, d_k)``; the scores are multiplied by
    ``d_k ** -exponent`` (0 = unscaled, 0.5 = the Transformer's 1/√dₖ, 1 = divided by ``d_k``).
    The same seed draws the same queries and keys for every ``exponent``, so runs compare paired.

    The gradient fields measure ``∂L/∂q`` of ``L = sum(softmax(K q · scale) V)`` with values of
    width ``d_v = d_k`` (:func:`query_gradient`), summarised per query by its per-entry size
    ``‖∂L/∂q‖ / √dₖ``. ``L`` depends on ``V`` only through its row sums ``V·1``, each normal with
    variance ``d_v``: those are drawn directly, which saves drawing ``V`` itself.

    Returns:
        A :class:`ScalingStats` of ``(n_widths,)`` arrays.
    """
    widths = _check_widths(d_ks)
    _check_count("seq_k", seq_k, least=2)
    _check_count("n_samples", n_samples)
    if not np.isfinite(exponent):
        raise ValueError(f"exponent must be finite; got {exponent}")
    rng = np.random.default_rng(seed)
    names = ("std", "max", "ent", "jac", "med", "avg", "sml")
    fields: dict[str, list[float]] = {name: [] for name in names}
    for d in widths:
        scale = float(d) ** -exponent
        q = rng.standard_normal((n_samples, 1, int(d)))  # (n, 1, d_k)
        K = rng.standard_normal((n_samples, seq_k, int(d)))  # (n, seq_k, d_k)
        value_sums = rng.standard_normal((n_samples, seq_k)) * math.sqrt(d)  # (n, seq_k): V·1
        scores = (q @ K.swapaxes(-1, -2))[:, 0] * scale  # (n, seq_k)
        p = ref.softmax(scores)  # (n, seq_k)
        log_p = np.log(np.where(p > 0, p, 1.0))
        jac = ref.softmax_jacobian(p)  # (n, seq_k, seq_k)
        grad = _query_gradient(p, K, value_sums, scale)  # (n, d_k)
        size = np.sqrt((grad**2).mean(axis=-1))  # (n,): per-entry size of ∂L/∂q
        fields["std"].append(float(scores.std()))
        fields["max"].append(float(p.max(axis=-1).mean()))
        fields["ent"].append(float(-(p * log_p).sum(axis=-1).mean()))
        fields["jac"].append(float(np.linalg.norm(jac, axis=(-2, -1)).mean()))
        fields["med"].append(float(np.median(size)))
        fields["avg"].append(float(size.mean()))
        fields["sml"].append(float((size < SMALL_GRADIENT).mean()))
    return ScalingStats(
        d_k=widths.copy(),
        score_std=np.array(fields["std"]),
        max_weight=np.array(fields["max"]),
        entropy=np.array(fields["ent"]),
        jacobian_norm=np.array(fields["jac"]),
        seq_k=int(seq_k),
        grad_median=np.array(fields["med"]),
        grad_mean=np.array(fields["avg"]),
        grad_small=np.array(fields["sml"]),
    )


#: Below this per-entry size, chapter 2 counts a query's gradient as vanished.
SMALL_GRADIENT = 0.01


def _query_gradient(
    p: np.ndarray, K: np.ndarray, value_sums: np.ndarray, scale: float
) -> np.ndarray:
    """``∂L/∂q`` from the weights ``p`` ``(..., seq_k)`` and the value row sums ``(..., seq_k)``."""
    grad_scores = p * (value_sums - (p * value_sums).sum(axis=-1, keepdims=True))  # J (V·1)
    return scale * np.einsum("...k,...kd->...d", grad_scores, K)  # (..., d_k)


def query_gradient(
    q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float | None = None
) -> np.ndarray:
    """Gradient of ``L = sum(softmax(K q · scale) V)`` with respect to the query ``q``.

    Introduced in chapter 2. Backwards through the look-up: ``∂L/∂p = V·1`` (each value row
    summed), ``∂L/∂s = J (V·1)`` with the softmax Jacobian ``J = diag(p) − p pᵀ``, and
    ``∂L/∂q = scale · Kᵀ ∂L/∂s``. A saturated softmax (``J`` ≈ 0) passes almost nothing back.

    Args:
        q: queries ``(..., d_k)``.
        K: keys ``(..., seq_k, d_k)``, the same leading shape as ``q``.
        V: values ``(..., seq_k, d_v)``.
        scale: multiplies the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(..., d_k)``, the gradient for each query.
    """
    q, K, V = (np.asarray(x, dtype=float) for x in (q, K, V))
    if q.ndim < 1 or K.ndim != q.ndim + 1 or V.ndim != K.ndim:
        raise ValueError(
            f"need q (..., d_k), K (..., seq_k, d_k), V (..., seq_k, d_v); got shapes "
            f"q {q.shape}, K {K.shape}, V {V.shape}"
        )
    if K.shape[:-2] != q.shape[:-1] or K.shape[-1] != q.shape[-1] or V.shape[:-1] != K.shape[:-1]:
        raise ValueError(
            f"shapes disagree: q {q.shape} needs K (..., seq_k, {q.shape[-1]}) with leading "
            f"shape {q.shape[:-1]} and V with K's leading shape {K.shape[:-1]}; got K {K.shape}, "
            f"V {V.shape}"
        )
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite; got {scale}")
    p = ref.softmax(np.einsum("...kd,...d->...k", K, q) * scale)  # (..., seq_k)
    return _query_gradient(p, K, V.sum(axis=-1), scale)  # (..., d_k)
