"""Attention that fits in memory: the online softmax and a FlashAttention-style tiled pass.

Introduced in chapter 11 (efficient attention). Plain attention builds the scores
``(..., seq_q, seq_k)`` in full before the softmax. The tiled pass of Milakov & Gimelshein (2018)
and Dao et al. (2022) visits them one ``(block, block)`` tile at a time, keeping for each query
only a running maximum ``m``, a running sum ``total`` and a running output ``acc``; it never holds
more than one tile of scores. The result is the same attention, exactly (up to rounding).

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
    "flash_attention",
    "TileStep",
    "flash_attention_steps",
    "Measurement",
    "measure",
    "scores_bytes",
    "machine_memory_bytes",
    "hbm_traffic",
    "A100",
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
    "sram_tb_s": 19.0,  # SRAM bandwidth, TB/s (their estimate)
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
    from .numpy_ref import _as_float

    block_size = _block(block_size)
    x = _as_float("x", x)
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
    from .numpy_ref import _attention_inputs

    Q, K, V, mask, scale, scores_shape = _attention_inputs(Q, K, V, mask, scale)
    if mask is not None:
        mask = np.broadcast_to(mask, scores_shape)  # a view: no (seq_q, seq_k) copy per batch
    lead = scores_shape[:-2]
    Q = np.broadcast_to(Q, lead + Q.shape[-2:])
    K = np.broadcast_to(K, lead + K.shape[-2:])
    V = np.broadcast_to(V, lead + V.shape[-2:])
    return Q, K, V, mask, float(scale), scores_shape


def _tiles(
    Q: np.ndarray,
    K: np.ndarray,
    V: np.ndarray,
    mask: np.ndarray | None,
    scale: float,
    block: int,
) -> Iterator[TileStep]:
    seq_q, seq_k = Q.shape[-2], K.shape[-2]
    lead = Q.shape[:-2]
    for i0 in range(0, seq_q, block):
        i1 = min(i0 + block, seq_q)
        q = Q[..., i0:i1, :]  # (..., rows, d_k): one query tile
        m = np.full(lead + (i1 - i0, 1), -np.inf)  # running maximum of each row
        total = np.zeros(lead + (i1 - i0, 1))  # running sum of exp(score - m)
        acc = np.zeros(lead + (i1 - i0, V.shape[-1]))  # running sum of exp(score - m) · v
        for j0 in range(0, seq_k, block):
            j1 = min(j0 + block, seq_k)
            s = (q @ np.swapaxes(K[..., j0:j1, :], -1, -2)) * scale  # (..., rows, cols): one tile
            if mask is not None:
                s = np.where(mask[..., i0:i1, j0:j1], s, -np.inf)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            safe = np.where(np.isfinite(m_new), m_new, 0.0)  # rows with nothing allowed yet
            p = np.exp(s - safe)  # (..., rows, cols)
            alpha = np.exp(m - safe)  # rescales what was summed against the old maximum
            total = alpha * total + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ V[..., j0:j1, :]
            m = m_new
            yield TileStep((i0, i1), (j0, j1), m, total, acc, last=j1 == seq_k)


def flash_attention_steps(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
    block_size: int = 64,
) -> Iterator[TileStep]:
    """The tiled pass of :func:`flash_attention`, one :class:`TileStep` per tile (chapter 11).

    Query tiles in order; within each, key tiles in order. Arguments as for
    :func:`flash_attention`.
    """
    block = _block(block_size)
    Q, K, V, mask, scale, _ = _prepare(Q, K, V, mask, scale)
    return _tiles(Q, K, V, mask, scale, block)


def flash_attention(
    Q: ArrayLike,
    K: ArrayLike,
    V: ArrayLike,
    mask: ArrayLike | None = None,
    scale: float | None = None,
    block_size: int = 64,
) -> np.ndarray:
    """softmax(Q Kᵀ · scale) V, computed tile by tile without ever holding the full scores.

    Introduced in chapter 11 (efficient attention), after Milakov & Gimelshein (2018) and
    Dao et al. (2022): the forward pass of FlashAttention, in readable numpy. It has the semantics
    of :func:`course_attention.numpy_ref.scaled_dot_product_attention` and returns its output.

    Args:
        Q: queries ``(..., seq_q, d_k)``.
        K: keys ``(..., seq_k, d_k)``.
        V: values ``(..., seq_k, d_v)``.
        mask: boolean, True = may attend, broadcastable to the scores ``(..., seq_q, seq_k)``.
        scale: multiplies the scores; default ``1 / sqrt(d_k)``.
        block_size: rows and columns of one tile of scores; need not divide the lengths.

    Returns:
        Output ``(..., seq_q, d_v)``. A query whose mask row is all False gets a zero output.
        Besides the output, it holds at most one ``(..., block, block)`` tile of scores and the
        running statistics of one query tile.
    """
    block = _block(block_size)
    Q, K, V, mask, scale, scores_shape = _prepare(Q, K, V, mask, scale)
    out = np.zeros(scores_shape[:-2] + (Q.shape[-2], V.shape[-1]))  # (..., seq_q, d_v)
    for step in _tiles(Q, K, V, mask, scale, block):
        if step.last:  # every key tile seen: normalise the query tile once
            i0, i1 = step.rows
            np.divide(step.acc, step.total, out=out[..., i0:i1, :], where=step.total > 0)
    return out


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
    """Bytes moved between HBM and the chip by one head's forward pass, plain vs tiled.

    Introduced in chapter 11. A simple count in the spirit of Dao et al. (2022, section 3.2).
    Plain attention reads Q and K, writes the scores ``(T, T)``, reads them for the softmax,
    writes the weights, reads them and V, and writes the output. The tiled pass reads each query
    tile once, reads K and V once per query tile, and writes the output once.

    Returns:
        ``{"plain": bytes, "tiled": bytes}``.
    """
    T, d, B = int(seq_len), int(d_head), _block(block_size)
    plain = (2 * T * d + 4 * T * T + T * d + T * d) * bytes_per_value
    n_query_tiles = -(-T // B)
    tiled = (T * d + n_query_tiles * 2 * T * d + T * d) * bytes_per_value
    return {"plain": plain, "tiled": tiled}
