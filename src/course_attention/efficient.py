"""Attention that fits in memory: the online softmax and a FlashAttention-style tiled pass.

Introduced in chapter 11 (efficient attention). Plain attention builds the scores
``(..., seq_q, seq_k)`` in full before the softmax (:func:`lean_attention` does it with a single
such array). The tiled pass of Milakov & Gimelshein (2018) and Dao et al. (2022) visits them one
``(block, block)`` tile at a time, keeping for each query only a running maximum ``m``, a running
sum ``total`` and a running output ``acc``; it never holds more than one tile of scores. The
result is the same attention, exactly (up to rounding). The loop order is FlashAttention-2's
(Dao 2023): query tiles outside, key/value tiles inside, one division by ``total`` at the end;
FlashAttention-1 loops over key/value tiles outside and rescales each output every step
(:func:`hbm_traffic` counts the bytes of both).

``flash_attention`` here is a readable numpy reference of the *forward* pass, not a fast kernel:
on a CPU it shows the memory saving, not the speed (chapter 11 measures both).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import _validate

__all__ = [
    "online_softmax",
    "lean_attention",
    "flash_attention",
    "tiles_computed",
    "TileStep",
    "flash_attention_steps",
    "Measurement",
    "measure",
    "scores_bytes",
    "machine_memory_bytes",
    "hbm_traffic",
    "A100",
    "FLASH_BACKWARD",
]

#: The A100 figures Dao et al. (2022, section 2.1) use to explain why FlashAttention is fast:
#: a large, slow off-chip memory (HBM) and a small, fast on-chip one (SRAM).
A100: dict[str, float] = {
    "hbm_gb_low": 40.0,  # HBM capacity, GB (40 or 80)
    "hbm_gb_high": 80.0,
    "hbm_tb_s_low": 1.5,  # HBM bandwidth, TB/s (1.5 to 2.0)
    "hbm_tb_s_high": 2.0,
    "sram_kb_per_sm": 192.0,  # on-chip SRAM per streaming multiprocessor, KB
    "n_sm": 108.0,  # streaming multiprocessors
    "sram_tb_s": 19.0,  # SRAM bandwidth of the whole chip (all 108 together), TB/s, their estimate
}

#: Dao et al. (2022), Figure 2 (left) — forward + backward of one attention of GPT-2 medium
#: (sequence 1024, head dimension 64, 16 heads, batch 64) on an A100. FlashAttention's backward
#: recomputes the scores instead of reading them: more FLOPs, far fewer bytes, less time.
FLASH_BACKWARD: dict[str, dict[str, float]] = {
    "standard": {"gflops": 66.6, "hbm_gb": 40.3, "ms": 41.7},
    "flash": {"gflops": 75.2, "hbm_gb": 4.4, "ms": 7.3},
}


def _block(block_size: int) -> int:
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)):
        raise ValueError(f"block_size must be a positive integer; got {block_size!r}")
    if block_size <= 0:
        raise ValueError(f"block_size must be a positive integer; got block_size={block_size}")
    return int(block_size)


def online_softmax(x: ArrayLike, block_size: int = 1) -> np.ndarray:
    """Softmax over the last axis from statistics gathered in one pass, block by block.

    Introduced in chapter 11. One pass over ``x`` keeps a running maximum ``m`` and a running sum
    ``total = Σ exp(x_j − m)``; when a block raises the maximum from ``m_old`` to ``m_new``, the sum
    so far is rescaled by ``exp(m_old − m_new)``. A final step gives ``exp(x − m) / total``.

    Args:
        x: scores ``(..., n)``; ``-inf`` entries get weight 0, an all ``-inf`` row gets zeros.
        block_size: entries read per step (1 = one at a time).

    Returns:
        Weights ``(..., n)``, equal to :func:`course_attention.numpy_ref.softmax` up to rounding.
    """
    block_size = _block(block_size)
    x = _validate.as_float("x", x)
    if x.ndim < 1:
        raise ValueError(f"x must have at least 1 dimension (..., n); got shape {x.shape}")
    if np.isnan(x).any() or np.isposinf(x).any():
        _validate.finite("x", np.where(np.isneginf(x), 0.0, x))
    m = np.full(x.shape[:-1] + (1,), -np.inf)  # (..., 1) running maximum
    total = np.zeros(x.shape[:-1] + (1,))  # (..., 1) running sum of exp(x - m)
    for j in range(0, x.shape[-1], block_size):
        block = x[..., j : j + block_size]  # (..., block)
        m_new = np.maximum(m, block.max(axis=-1, keepdims=True))
        safe = np.where(np.isfinite(m_new), m_new, 0.0)  # an all -inf row so far stays at 0
        total = total * np.exp(m - safe) + np.exp(block - safe).sum(axis=-1, keepdims=True)
        m = m_new
    safe = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - safe)  # (..., n)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def lean_attention(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Plain attention with a single scores array, updated in place: the leanest plain pass.

    Introduced in chapter 11, as the fair baseline for the tiled pass's memory. The scores
    ``(..., seq_q, seq_k)`` are computed once; the maximum is subtracted, the exponential taken
    and the rows divided *in that same array*, which ends as the weights. Returns
    ``(output, weights)`` like ``numpy_ref.scaled_dot_product_attention`` without a mask:
    ``(..., seq_q, d_v)`` and ``(..., seq_q, seq_k)``.
    """
    Q, K, V, _, scale, _ = _validate.attention_inputs(Q, K, V, None, scale)
    s = Q @ np.swapaxes(K, -1, -2)  # (..., seq_q, seq_k): the one big array
    s *= scale
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)  # now the weights
    return s @ V, s


@dataclass(frozen=True)
class TileStep:
    """The state of the tiled pass after one tile (chapter 11's slider draws these).

    ``rows`` and ``cols`` are the query and key ranges of the tile; ``m``, ``total``
    ``(..., rows, 1)`` and ``acc`` ``(..., rows, d_v)`` are the running maximum, sum and
    unnormalised output of the tile's query rows; ``last`` is True at the last key block of
    those rows, when ``acc / total`` is their final output.
    """

    rows: tuple[int, int]
    cols: tuple[int, int]
    m: np.ndarray
    total: np.ndarray
    acc: np.ndarray
    last: bool


def _prepare(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None, scale: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, float, tuple[int, ...]]:
    """Validate like ``numpy_ref.scaled_dot_product_attention``; broadcast views, no copies."""
    Q, K, V, mask, scale, scores_shape = _validate.attention_inputs(Q, K, V, mask, scale)
    if mask is not None:
        mask = np.broadcast_to(mask, scores_shape)  # a view: no (seq_q, seq_k) copy per batch
    lead = scores_shape[:-2]
    Q = np.broadcast_to(Q, lead + Q.shape[-2:])
    K = np.broadcast_to(K, lead + K.shape[-2:])
    V = np.broadcast_to(V, lead + V.shape[-2:])
    return Q, K, V, mask, float(scale), scores_shape


def _key_tiles(
    mask: np.ndarray | None, causal: bool, rows: tuple[int, int], seq_k: int, block: int
) -> list[tuple[int, int]]:
    """The key tiles a query tile must compute: those with at least one allowed score."""
    i0, i1 = rows
    end = min(seq_k, i1) if causal else seq_k  # causal: key j ≤ query i < i1
    tiles = [(j0, min(j0 + block, end)) for j0 in range(0, end, block)]
    if mask is None:
        return tiles
    return [(j0, j1) for j0, j1 in tiles if mask[..., i0:i1, j0:j1].any()]


def _tiles(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None,
    scale: float,
    block: int,
    causal: bool = False,
) -> Iterator[TileStep]:
    seq_q, seq_k = Q.shape[-2], K.shape[-2]
    lead = Q.shape[:-2]
    for i0 in range(0, seq_q, block):
        i1 = min(i0 + block, seq_q)
        q = Q[..., i0:i1, :]  # (..., rows, d_k): one query tile
        m = np.full(lead + (i1 - i0, 1), -np.inf)  # running maximum of each row
        total = np.zeros(lead + (i1 - i0, 1))  # running sum of exp(score - m)
        acc = np.zeros(lead + (i1 - i0, V.shape[-1]))  # running sum of exp(score - m) · v
        key_tiles = _key_tiles(mask, causal, (i0, i1), seq_k, block)  # fully masked: skipped
        for j0, j1 in key_tiles:
            s = (q @ np.swapaxes(K[..., j0:j1, :], -1, -2)) * scale  # (..., rows, cols): one tile
            if causal and j1 > i0:  # the tile crosses the diagonal: mask it from indices
                s = np.where(np.arange(j0, j1) <= np.arange(i0, i1)[:, None], s, -np.inf)
            if mask is not None:
                s = np.where(mask[..., i0:i1, j0:j1], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            safe = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with nothing allowed yet
            p = np.exp(s - safe)  # (..., rows, cols)
            alpha = np.exp(m - safe)  # rescales what was summed against the old maximum
            total = alpha * total + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ V[..., j0:j1, :]
            m = m_new
            yield TileStep((i0, i1), (j0, j1), m, total, acc, last=j0 == key_tiles[-1][0])


def flash_attention_steps(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
    block_size: int = 64,
    causal: bool = False,
) -> Iterator[TileStep]:
    """The tiled pass of :func:`flash_attention`, one :class:`TileStep` per tile (chapter 11).

    Query tiles in order; within each, the key tiles it computes, in order (tiles in which every
    score is masked are skipped). Arguments as for :func:`flash_attention`.
    """
    block = _block(block_size)
    Q, K, V, mask, scale, _ = _prepare(Q, K, V, mask, scale)
    return _tiles(Q, K, V, mask, scale, block, bool(causal))


def flash_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
    block_size: int = 64,
    causal: bool = False,
    return_lse: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """softmax(Q Kᵀ · scale) V, computed tile by tile without ever holding the full scores.

    Introduced in chapter 11 (efficient attention), after Milakov & Gimelshein (2018) and
    Dao et al. (2022), in the loop order of FlashAttention-2 (Dao 2023): for each query tile, the
    key/value tiles in turn, and one division at the end. The forward pass, in readable numpy. It
    has the semantics of :func:`course_attention.numpy_ref.scaled_dot_product_attention` and
    returns its output.

    Args:
        Q: queries ``(..., seq_q, d_k)``.
        K: keys ``(..., seq_k, d_k)``.
        V: values ``(..., seq_k, d_v)``.
        mask: boolean, True = may attend, broadcastable to the scores ``(..., seq_q, seq_k)``.
            Tiles in which it allows nothing are skipped, not computed.
        scale: multiplies the scores; default ``1 / sqrt(d_k)``.
        block_size: rows and columns of one tile of scores; need not divide the lengths.
        causal: query ``i`` may attend to keys ``0 … i`` (as ``numpy_ref.causal_mask``), built
            from the indices of each tile: no ``(seq_q, seq_k)`` mask is needed, and the tiles
            above the diagonal are skipped. Combined with ``mask`` when both are given.
        return_lse: also return each row's log-sum-exp ``m + log total`` ``(..., seq_q)``, what
            FlashAttention keeps for the backward pass (``-inf`` for a row with no key).

    Returns:
        Output ``(..., seq_q, d_v)`` (with ``return_lse``: ``(output, lse)``). A query whose
        mask row is all False gets a zero output. Besides the output, it holds at most one
        ``(..., block, block)`` tile of scores and the running statistics of one query tile.
    """
    block = _block(block_size)
    Q, K, V, mask, scale, scores_shape = _prepare(Q, K, V, mask, scale)
    out = np.zeros(scores_shape[:-2] + (Q.shape[-2], V.shape[-1]))  # (..., seq_q, d_v)
    lse = np.full(scores_shape[:-1], -np.inf)  # (..., seq_q)
    for step in _tiles(Q, K, V, mask, scale, block, bool(causal)):
        if step.last:  # every key tile seen: normalise the query tile once
            i0, i1 = step.rows
            np.divide(step.acc, step.total, out=out[..., i0:i1, :], where=step.total > 0)
            with np.errstate(divide="ignore"):
                lse[..., i0:i1] = (step.m + np.log(step.total))[..., 0]
    return (out, lse) if return_lse else out


def tiles_computed(
    seq_q: int, seq_k: int, block_size: int, causal: bool = False, mask: ArrayLike | None = None
) -> dict[str, int]:
    """How many tiles and scores the tiled pass computes, against all of them (chapter 11).

    Returns ``{"tiles": computed, "all tiles": …, "scores": computed, "all scores": …}``: with
    ``causal`` or a ``mask`` ``(seq_q, seq_k)``, the tiles in which nothing is allowed are
    skipped.
    """
    block = _block(block_size)
    for name, value in (("seq_q", seq_q), ("seq_k", seq_k)):
        if value < 1:
            raise ValueError(f"{name} must be ≥ 1; got {name}={value}")
    m = None if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), (seq_q, seq_k))
    tiles = [
        (i1 - i0) * (j1 - j0)
        for i0 in range(0, seq_q, block)
        for i1 in [min(i0 + block, seq_q)]
        for j0, j1 in _key_tiles(m, causal, (i0, i1), seq_k, block)
    ]
    n_all = -(-seq_q // block) * -(-seq_k // block)
    return {
        "tiles": len(tiles),
        "all tiles": n_all,
        "scores": sum(tiles),
        "all scores": seq_q * seq_k,
    }


@dataclass(frozen=True)
class Measurement:
    """Seconds and peak bytes newly allocated (``tracemalloc``) while a function ran."""

    seconds: float
    peak_bytes: int
    result: Any


def measure(fn: Callable[[], Any]) -> Measurement:
    """Run ``fn()`` once under ``tracemalloc``; return its time, peak new memory and result.

    Introduced in chapter 11. Only memory allocated *during* the call counts (numpy reports its
    array buffers to ``tracemalloc``), so inputs built beforehand are not included. Tracing slows
    Python down a little; compare times measured the same way.
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    start_current, _ = tracemalloc.get_traced_memory()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    if not was_tracing:
        tracemalloc.stop()
    return Measurement(seconds, peak - start_current, result)


def scores_bytes(batch: int, heads: int, seq_q: int, seq_k: int, bytes_per_value: int = 4) -> int:
    """Bytes of one scores tensor ``(batch, heads, seq_q, seq_k)`` (chapter 11)."""
    for name, value in (("batch", batch), ("heads", heads), ("seq_q", seq_q), ("seq_k", seq_k)):
        if value < 1:
            raise ValueError(f"{name} must be ≥ 1; got {name}={value}")
    return int(batch) * int(heads) * int(seq_q) * int(seq_k) * int(bytes_per_value)


def machine_memory_bytes() -> int | None:
    """Physical memory of this machine in bytes, or None where the OS does not say (chapter 11)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # e.g. Windows has no sysconf
        return None


def hbm_traffic(seq_len: int, d_head: int, block_size: int, bytes_per_value: int = 2) -> dict:
    """Bytes moved between HBM and the chip by one head's forward pass: plain, FA-1, FA-2.

    Introduced in chapter 11. A simple count in the spirit of Dao et al. (2022, section 3.2),
    ``T = seq_len``, ``d = d_head``, ``n = ⌈T / block_size⌉`` tiles, every number
    ``bytes_per_value`` bytes:

    - ``"plain"``: read Q and K, write the scores ``(T, T)``, read them for the softmax, write the
      weights, read them and V, write the output: ``4Td + 4T²``.
    - ``"fa1"``, FlashAttention-1 (Dao et al. 2022, Algorithm 1): key/value tiles outside, query
      tiles inside. Each K and V tile is read once, but for every one of them each query tile,
      its output ``O`` and its statistics ``m``, ``ℓ`` are read and written back (``O`` is
      rescaled every step): ``Td + 2T`` to initialise ``O, m, ℓ``, ``2Td`` for K and V, and
      ``n (3Td + 4T)``.
    - ``"fa2"``, FlashAttention-2 (Dao 2023): query tiles outside, each read once; K and V read
      once per query tile; the output and each row's log-sum-exp written once at the end:
      ``2Td + 2nTd + T``.

    Returns:
        ``{"plain": bytes, "fa1": bytes, "fa2": bytes}``.
    """
    T, d, B = int(seq_len), int(d_head), _block(block_size)
    for name, value in (("seq_len", T), ("d_head", d)):
        if value < 1:
            raise ValueError(f"{name} must be ≥ 1; got {name}={value}")
    n = -(-T // B)  # tiles along the sequence
    plain = 2 * T * d + 4 * T * T + T * d + T * d
    fa1 = (T * d + 2 * T) + 2 * T * d + n * (3 * T * d + 4 * T)
    fa2 = T * d + n * 2 * T * d + T * d + T
    return {k: v * bytes_per_value for k, v in (("plain", plain), ("fa1", fa1), ("fa2", fa2))}
