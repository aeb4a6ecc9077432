"""Input checks shared by the numpy and torch implementations.

The bottom of the package's imports: it imports nothing from the package, so every module
(``numpy_ref``, ``efficient``, ``grouped_query`` …) can use it without an import cycle.

Every check raises ``ValueError`` with the shapes or values at fault, so a learner never meets a
silent NaN or a stack trace from deep inside numpy or torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


def broadcast_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """Return the broadcast of two shapes, or ``None`` when they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        return None


def attention_shapes(
    q_shape: Sequence[int], k_shape: Sequence[int], v_shape: Sequence[int]
) -> tuple[int, ...]:
    """Check Q, K, V shapes for attention and return the shape of the scores.

    Q: ``(..., seq_q, d_k)``, K: ``(..., seq_k, d_k)``, V: ``(..., seq_k, d_v)``.
    Returns ``(..., seq_q, seq_k)`` with the leading dimensions broadcast.
    """
    q_shape, k_shape, v_shape = tuple(q_shape), tuple(k_shape), tuple(v_shape)
    for name, shape in (("Q", q_shape), ("K", k_shape), ("V", v_shape)):
        if len(shape) < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., seq, d); got shape {shape}"
            )
    if k_shape[-2] == 0:
        raise ValueError(
            f"K has 0 keys (shape {k_shape}): every query needs at least one key to attend to"
        )
    if q_shape[-1] == 0:
        raise ValueError(f"Q and K have width d_k=0 (Q shape {q_shape}); need d_k ≥ 1")
    if q_shape[-1] != k_shape[-1]:
        raise ValueError(
            f"query width d_k={q_shape[-1]} (Q shape {q_shape}) does not match key width "
            f"d_k={k_shape[-1]} (K shape {k_shape}); Q and K must share their last dimension"
        )
    if k_shape[-2] != v_shape[-2]:
        raise ValueError(
            f"K has {k_shape[-2]} keys (shape {k_shape}) but V has {v_shape[-2]} values "
            f"(shape {v_shape}); every key needs exactly one value"
        )
    lead = broadcast_shape(q_shape[:-2], k_shape[:-2])
    lead = None if lead is None else broadcast_shape(lead, v_shape[:-2])
    if lead is None:
        raise ValueError(
            f"the batch/head dimensions of Q {q_shape}, K {k_shape} and V {v_shape} "
            "do not broadcast"
        )
    return (*lead, q_shape[-2], k_shape[-2])


def mask_shape(mask_shape: Sequence[int], scores_shape: Sequence[int]) -> None:
    """Check that a mask broadcasts to the scores ``(..., seq_q, seq_k)`` without growing them."""
    if broadcast_shape(mask_shape, scores_shape) != tuple(scores_shape):
        raise ValueError(
            f"mask of shape {tuple(mask_shape)} does not broadcast to the scores of shape "
            f"{tuple(scores_shape)} (..., seq_q, seq_k)"
        )


def temperature(value: float) -> None:
    """Check that a softmax temperature is a positive finite number."""
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"temperature must be a positive finite number; got {value}")


def finite(name: str, array: np.ndarray) -> None:
    """Raise if ``array`` holds NaN or ±inf, saying where the first one is."""
    bad = ~np.isfinite(array)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must be finite; found {array[index]} at index {index} (shape {array.shape})"
        )


def as_float(name: str, x: ArrayLike) -> np.ndarray:
    """``x`` as a float array (float32 or wider, never a copy when it already is one); raise for
    booleans and non-numbers."""
    array = np.asarray(x)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise ValueError(f"{name} must be numeric; got dtype {array.dtype}")
    return array.astype(np.result_type(array.dtype, np.float32), copy=False)


def attention_inputs(
    Q: ArrayLike, K: ArrayLike, V: ArrayLike, mask: ArrayLike | None, scale: float | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, float, tuple[int, ...]]:
    """Check the inputs of an attention function; return them as arrays with the scale and the
    shape of the scores ``(..., seq_q, seq_k)``. Shared by every numpy attention of the course."""
    Q, K, V = as_float("Q", Q), as_float("K", K), as_float("V", V)
    scores_shape = attention_shapes(Q.shape, K.shape, V.shape)
    for name, array in (("Q", Q), ("K", K), ("V", V)):
        finite(name, array)
    if scale is None:
        scale = 1.0 / np.sqrt(Q.shape[-1])
    elif not np.isfinite(scale):
        raise ValueError(f"scale must be finite; got {scale}")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise ValueError(
                f"mask must be boolean (True = may attend); got dtype {mask.dtype}. "
                "Convert an additive float mask with `mask == 0`."
            )
        mask_shape(mask.shape, scores_shape)
    return Q, K, V, mask, float(scale), scores_shape


def head_inputs(
    X_q: ArrayLike, X_kv: ArrayLike, n_heads: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Check the inputs of a multi-head attention ``(batch, seq, d_model)``; return them and
    ``d_model`` (shared by multi-head and grouped-query attention)."""
    X_q, X_kv = as_float("X_q", X_q), as_float("X_kv", X_kv)
    for name, X in (("X_q", X_q), ("X_kv", X_kv)):
        if X.ndim != 3:
            raise ValueError(f"{name} must have shape (batch, seq, d_model); got {X.shape}")
    if X_q.shape[0] != X_kv.shape[0] or X_q.shape[2] != X_kv.shape[2]:
        raise ValueError(f"X_q {X_q.shape} and X_kv {X_kv.shape} must share batch and d_model")
    heads(X_q.shape[-1], n_heads)
    return X_q, X_kv, X_q.shape[-1]


def heads(d_model: int, n_heads: int) -> None:
    """Check that ``n_heads`` is a positive integer that divides ``d_model``."""
    if not isinstance(n_heads, (int, np.integer)) or n_heads < 1 or d_model % n_heads:
        raise ValueError(
            f"d_model={d_model} must be divisible by n_heads={n_heads} (each head gets "
            f"d_model / n_heads features)"
        )
