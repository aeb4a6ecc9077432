"""Readable numpy reference implementations of attention.

Every function here is the one the chapters teach; the torch versions in
:mod:`course_attention.modules` are tested against them in float64.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import _validate

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "softmax_jacobian",
    "split_heads",
    "merge_heads",
    "multi_head_attention",
    "layer_norm",
    "feed_forward",
    "sinusoidal_positions",
    "rotary_frequencies",
    "rotary",
    "alibi_slopes",
    "alibi_bias",
]


def softmax(x: ArrayLike, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """Numerically stable softmax along ``axis``.

    Introduced in chapter 1 (soft dictionary look-up).

    Args:
        x: scores of any shape, e.g. ``(..., seq_k)``. ``-inf`` marks an entry that gets weight 0;
            NaN and ``+inf`` are rejected.
        axis: the axis that sums to 1.
        temperature: divides the scores first; small values sharpen, large values flatten.

    Returns:
        Weights with the shape of ``x``: non-negative, summing to 1 along ``axis`` (a slice that is
        all ``-inf`` gets all zeros, never NaN).
    """
    _validate.temperature(temperature)
    x = _validate.as_float("x", x)
    if np.isnan(x).any() or np.isposinf(x).any():
        _validate.finite("x", np.where(np.isneginf(x), 0.0, x))
    z = x / temperature
    peak = np.max(z, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)  # an all -inf slice stays all -inf
    e = np.exp(z - peak)  # largest entry becomes exp(0) = 1: no overflow
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def scaled_dot_product_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """softmax(Q Kᵀ · scale) V, the attention of "Attention Is All You Need".

    Introduced in chapter 2 (scaled dot-product attention).

    Args:
        Q: queries ``(..., seq_q, d_k)``.
        K: keys ``(..., seq_k, d_k)``.
        V: values ``(..., seq_k, d_v)``; ``d_v`` may differ from ``d_k``.
        mask: boolean, True = may attend, broadcastable to the scores ``(..., seq_q, seq_k)``,
            e.g. ``(seq_q, seq_k)`` or ``(batch, 1, 1, seq_k)``.
        scale: multiplies the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(output, weights)``: output ``(..., seq_q, d_v)`` and weights ``(..., seq_q, seq_k)``.
        A query whose mask row is all False gets zero weights and a zero output.
    """
    Q, K, V, mask, scale, _ = _validate.attention_inputs(Q, K, V, mask, scale)
    scores = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., seq_q, seq_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def causal_mask(seq_len: int, seq_k: int | None = None) -> np.ndarray:
    """Boolean causal mask: query ``i`` may attend to keys ``0 … i``.

    Introduced in chapter 2 (scaled dot-product attention); used in depth in chapter 4.

    Args:
        seq_len: number of queries ``seq_q``.
        seq_k: number of keys; default ``seq_len``. Aligned at the top-left, like
            ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``.

    Returns:
        ``(seq_q, seq_k)`` bool, True on and below the diagonal.
    """
    seq_k = seq_len if seq_k is None else seq_k
    if seq_len < 1 or seq_k < 1:
        raise ValueError(f"sequence lengths must be positive; got seq_q={seq_len}, seq_k={seq_k}")
    return np.tril(np.ones((seq_len, seq_k), dtype=bool))


def padding_mask(lengths: ArrayLike, seq_len: int) -> np.ndarray:
    """Key-padding mask for a batch of sequences padded to ``seq_len``.

    Introduced in chapter 2 (scaled dot-product attention); used in depth in chapter 4.

    Args:
        lengths: ``(batch,)`` real lengths, each in ``0 … seq_len``.
        seq_len: padded length ``seq_k``.

    Returns:
        ``(batch, 1, 1, seq_k)`` bool, True at real tokens: the two 1s face the heads and the
        queries, so it broadcasts to scores ``(batch, heads, seq_q, seq_k)``. (A 3-d
        ``(batch, 1, seq_k)`` would face ``(heads, seq_q, seq_k)`` and silently give sentence
        ``b``'s mask to head ``b`` whenever ``batch == heads``.) For scores without a head
        axis, ``(batch, seq_q, seq_k)``, use ``mask[:, 0]``.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer):
        raise ValueError(
            f"lengths must be a 1-D array of integers; got shape {lengths.shape}, "
            f"dtype {lengths.dtype}"
        )
    if ((lengths < 0) | (lengths > seq_len)).any():
        raise ValueError(f"lengths must lie in 0 … seq_len={seq_len}; got {lengths.tolist()}")
    return (np.arange(seq_len)[None, :] < lengths[:, None])[:, None, None, :]


def softmax_jacobian(p: ArrayLike) -> np.ndarray:
    """Jacobian of the softmax at its output ``p``: ``diag(p) − p pᵀ``.

    Introduced in chapter 2 (scaled dot-product attention): entry ``[i, j]`` is
    ``∂p_i / ∂s_j`` for ``p = softmax(s)``. It vanishes when ``p`` is one-hot (a saturated softmax),
    so no gradient flows back to the scores.

    Args:
        p: softmax weights ``(..., n)``, non-negative and summing to 1 along the last axis.

    Returns:
        ``(..., n, n)`` symmetric matrices whose rows and columns sum to 0.
    """
    p = _validate.as_float("p", p)
    if p.ndim < 1:
        raise ValueError(f"p must have at least 1 dimension (..., n); got shape {p.shape}")
    _validate.finite("p", p)
    eye = np.eye(p.shape[-1], dtype=p.dtype)
    return p[..., :, None] * eye - p[..., :, None] * p[..., None, :]  # (..., n, n)


def split_heads(X: ArrayLike, n_heads: int) -> np.ndarray:
    """Split features into heads: ``(batch, seq, d_model)`` → ``(batch, heads, seq, d_head)``.

    Introduced in chapter 5 (multi-head attention). ``d_head = d_model // n_heads``; head ``h``
    takes features ``h * d_head … (h + 1) * d_head - 1``. Reshape to ``(batch, seq, heads,
    d_head)`` first, *then* swap the ``seq`` and ``heads`` axes.
    """
    X = _validate.as_float("X", X)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (batch, seq, d_model); got {X.shape}")
    batch, seq, d_model = X.shape
    _validate.heads(d_model, n_heads)
    return X.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def merge_heads(X: ArrayLike) -> np.ndarray:
    """Undo :func:`split_heads`: ``(batch, heads, seq, d_head)`` → ``(batch, seq, heads * d_head)``.

    Introduced in chapter 5 (multi-head attention). Swap the axes back *before* reshaping; a
    reshape alone would interleave positions and heads.
    """
    X = _validate.as_float("X", X)
    if X.ndim != 4:
        raise ValueError(f"X must have shape (batch, heads, seq, d_head); got {X.shape}")
    batch, heads, seq, d_head = X.shape
    return X.transpose(0, 2, 1, 3).reshape(batch, seq, heads * d_head)


def multi_head_attention(
    X_q: ArrayLike,
    X_kv: ArrayLike,
    W_q: ArrayLike,
    W_k: ArrayLike,
    W_v: ArrayLike,
    W_o: ArrayLike,
    n_heads: int,
    mask: ArrayLike | None = None,
    biases: tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention in numpy (self-attention when ``X_kv is X_q``).

    Introduced in chapter 5 (multi-head attention). Projections multiply on the right,
    ``Q = X_q @ W_q`` (PyTorch's ``nn.Linear`` stores the transpose: ``W_q = linear.weight.T``).

    Args:
        X_q: queries' inputs ``(batch, seq_q, d_model)``.
        X_kv: keys' and values' inputs ``(batch, seq_k, d_model)``.
        W_q, W_k, W_v, W_o: ``(d_model, d_model)`` each.
        n_heads: heads; ``d_model`` must be divisible by it.
        mask: bool, True = may attend, broadcastable to ``(batch, heads, seq_q, seq_k)``.
        biases: optional ``(b_q, b_k, b_v, b_o)``, each ``(d_model,)``.

    Returns:
        ``(output, weights)``: ``(batch, seq_q, d_model)`` and per-head weights
        ``(batch, heads, seq_q, seq_k)``.
    """
    X_q, X_kv, d_model = _validate.head_inputs(X_q, X_kv, n_heads)
    weights_in = [
        _validate.as_float(n, W)
        for n, W in zip("W_q W_k W_v W_o".split(), (W_q, W_k, W_v, W_o), strict=True)
    ]
    for name, W in zip("W_q W_k W_v W_o".split(), weights_in, strict=True):
        if W.shape != (d_model, d_model):
            raise ValueError(
                f"{name} must have shape (d_model, d_model) = ({d_model}, {d_model}); got {W.shape}"
            )
    b_q, b_k, b_v, b_o = (np.zeros(d_model),) * 4 if biases is None else map(np.asarray, biases)
    W_q, W_k, W_v, W_o = weights_in
    Q = split_heads(X_q @ W_q + b_q, n_heads)  # (batch, heads, seq_q, d_head)
    K = split_heads(X_kv @ W_k + b_k, n_heads)  # (batch, heads, seq_k, d_head)
    V = split_heads(X_kv @ W_v + b_v, n_heads)  # (batch, heads, seq_k, d_head)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return merge_heads(heads) @ W_o + b_o, weights


def layer_norm(
    x: ArrayLike, gamma: ArrayLike | None = None, beta: ArrayLike | None = None, eps: float = 1e-5
) -> np.ndarray:
    """Normalise each token's features to mean 0 and variance 1, then scale and shift.

    Introduced in chapter 6 (the Transformer block). Statistics are taken over the last axis
    only — per token, never across the batch or the sequence — like ``torch.nn.LayerNorm``.

    Args:
        x: ``(..., d_model)``.
        gamma, beta: ``(d_model,)`` scale and shift; default 1 and 0.
        eps: added to the variance (biased, as in PyTorch) before the square root.

    Returns:
        ``(..., d_model)``.
    """
    x = _validate.as_float("x", x)
    _validate.finite("x", x)
    d = x.shape[-1]
    gamma = np.ones(d) if gamma is None else np.asarray(gamma, dtype=float)
    beta = np.zeros(d) if beta is None else np.asarray(beta, dtype=float)
    if gamma.shape != (d,) or beta.shape != (d,):
        raise ValueError(
            f"gamma {gamma.shape} and beta {beta.shape} must have shape (d_model,) = ({d},)"
        )
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def feed_forward(
    x: ArrayLike, W1: ArrayLike, b1: ArrayLike, W2: ArrayLike, b2: ArrayLike
) -> np.ndarray:
    """Position-wise feed-forward network ``relu(x W1 + b1) W2 + b2``, the same for every token.

    Introduced in chapter 6. ``x`` ``(..., d_model)``, ``W1`` ``(d_model, d_ff)``, ``b1``
    ``(d_ff,)``, ``W2`` ``(d_ff, d_model)``, ``b2`` ``(d_model,)``; returns ``(..., d_model)``.
    """
    x, W1, W2 = (
        _validate.as_float("x", x),
        _validate.as_float("W1", W1),
        _validate.as_float("W2", W2),
    )
    b1, b2 = _validate.as_float("b1", b1), _validate.as_float("b2", b2)
    d_model = x.shape[-1]
    if W1.ndim != 2 or W1.shape[0] != d_model or W2.shape != (W1.shape[1], d_model):
        raise ValueError(
            f"for x (..., {d_model}) need W1 ({d_model}, d_ff) and W2 (d_ff, {d_model}); "
            f"got W1 {W1.shape}, W2 {W2.shape}"
        )
    if b1.shape != (W1.shape[1],) or b2.shape != (d_model,):
        raise ValueError(f"b1 {b1.shape} and b2 {b2.shape} must be ({W1.shape[1]},), ({d_model},)")
    return np.maximum(x @ W1 + b1, 0.0) @ W2 + b2


def sinusoidal_positions(seq_len: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The sinusoidal position table of "Attention Is All You Need".

    Introduced in chapter 6. ``PE[pos, 2i] = sin(pos / base^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / base^(2i/d_model))``: each pair of features is a clock turning
    at its own speed, from one turn every 2π positions down to one every 2π·base positions.

    Returns:
        ``(seq_len, d_model)``, every entry in [-1, 1].
    """
    if seq_len < 1 or d_model < 2 or d_model % 2:
        raise ValueError(
            f"need seq_len ≥ 1 and an even d_model ≥ 2; got seq_len={seq_len}, d_model={d_model}"
        )
    pos = np.arange(seq_len)[:, None]  # (seq_len, 1)
    freq = base ** (-np.arange(0, d_model, 2) / d_model)  # (d_model / 2,)
    table = np.empty((seq_len, d_model))
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table


def rotary_frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """The rotation speeds of rotary positions: ``θ_i = base^(-2i/d)`` for ``i = 0 … d/2 - 1``.

    Introduced in chapter 10 (positions). The same speeds as :func:`sinusoidal_positions`: pair
    ``i`` turns by ``θ_i`` radians per position. Returns ``(d / 2,)``.
    """
    if not isinstance(d, (int, np.integer)) or d < 2 or d % 2:
        raise ValueError(
            f"rotary positions rotate pairs of features: need an even d ≥ 2; got d={d}"
        )
    if not base > 1:
        raise ValueError(f"base must be > 1; got base={base}")
    return base ** (-np.arange(0, d, 2) / d)


def rotary(
    x: ArrayLike,
    positions: ArrayLike | None = None,
    base: float = 10000.0,
    pairs: str = "interleaved",
) -> np.ndarray:
    """Rotary positions (RoPE): rotate each pair of features by ``position · θ_i``.

    Introduced in chapter 10 (positions). Applied to queries and keys *after* their projections,
    so that ``rotary(q, m) · rotary(k, n)`` depends on ``m - n`` only (and on q and k).

    Args:
        x: ``(..., seq, d)`` with an even ``d``, e.g. queries ``(batch, heads, seq, d_head)``.
        positions: ``(seq,)`` the position of each row; default ``0 … seq - 1``.
        base: the slowest pair turns once every ``2π · base`` positions.
        pairs: which features form a pair. ``"interleaved"`` (the default, as in the RoFormer
            paper): features ``(2i, 2i + 1)``. ``"halves"`` (GPT-NeoX-style code, e.g. Hugging
            Face's ``rotate_half``): features ``(i, i + d/2)``. Both give the same scores up to a
            fixed permutation of the features.

    Returns:
        ``(..., seq, d)``: every pair ``(a, b)`` at position ``p`` becomes
        ``(a cos pθ_i − b sin pθ_i, a sin pθ_i + b cos pθ_i)``; lengths are unchanged.
    """
    x = _validate.as_float("x", x)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, d); got shape {x.shape}")
    seq, d = x.shape[-2:]
    theta = rotary_frequencies(d, base)  # (d/2,)
    pos = np.arange(seq) if positions is None else np.asarray(positions, dtype=float)
    if pos.shape != (seq,):
        raise ValueError(f"positions must have shape (seq,) = ({seq},); got {pos.shape}")
    angle = pos[:, None] * theta  # (seq, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    if pairs == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]  # (..., seq, d/2) each
    elif pairs == "halves":
        a, b = x[..., : d // 2], x[..., d // 2 :]
    else:
        raise ValueError(f"pairs must be 'interleaved' or 'halves'; got {pairs!r}")
    ra, rb = a * cos - b * sin, a * sin + b * cos
    out = np.empty_like(x)
    if pairs == "interleaved":
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., : d // 2], out[..., d // 2 :] = ra, rb
    return out


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's head slopes, by the rule of Press et al. (2022), ``(n_heads,)``.

    Introduced in chapter 10 (positions). For a power of two ``n``, the geometric sequence
    ``2^(-8h/n)``, ``h = 1 … n`` (1/2, 1/4, … 1/256 for 8 heads). For any other ``n``, as in the
    paper's code: the ``n'`` slopes of the largest power of two ``n' < n``, then every other
    slope of ``2n'`` heads (``2^(-8h/2n')`` for odd ``h``) until there are ``n``. Six heads:
    1/4, 1/16, 1/64, 1/256 (four heads), then 1/2, 1/8.
    """
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer; got n_heads={n_heads}")
    n = 1 << (int(n_heads).bit_length() - 1)  # the largest power of two ≤ n_heads
    slopes = 2.0 ** (-8.0 * np.arange(1, n + 1) / n)  # (n,)
    between = 2.0 ** (-8.0 * np.arange(1, 2 * n, 2) / (2 * n))  # (n,): odd h of 2n heads
    return np.concatenate([slopes, between[: n_heads - n]])


def alibi_bias(n_heads: int, seq_q: int, seq_k: int | None = None) -> np.ndarray:
    """ALiBi's linear bias ``-slope_h · (m - n)`` added to the scores of query ``m``, key ``n``.

    Introduced in chapter 10 (positions). No position vectors at all: a head penalises each key
    in proportion to its distance behind the query. Keys after the query (``n > m``) get
    ``-inf``: ALiBi is used with a causal mask. Returns ``(n_heads, seq_q, seq_k)``; add it to
    scores ``(batch, heads, seq_q, seq_k)`` before the softmax.
    """
    seq_k = seq_q if seq_k is None else seq_k
    if seq_q < 1 or seq_k < 1:
        raise ValueError(f"sequence lengths must be positive; got seq_q={seq_q}, seq_k={seq_k}")
    distance = np.arange(seq_q)[:, None] - np.arange(seq_k)[None, :]  # (seq_q, seq_k): m - n
    bias = alibi_slopes(n_heads)[:, None, None] * -distance  # (heads, seq_q, seq_k); 0, not -0
    return np.where(distance >= 0, bias, -np.inf)


# Chapter 11 (efficient attention) lives in its own modules, which need only ``_validate``;
# re-exported here by name. (Grouped-query attention builds on this module: import it from
# ``course_attention.grouped_query``.)
from .efficient import flash_attention, online_softmax  # noqa: E402
from .sliding_window import sliding_window_mask  # noqa: E402

__all__ += ["online_softmax", "flash_attention", "sliding_window_mask"]
