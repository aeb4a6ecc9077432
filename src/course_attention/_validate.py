"""Input checks shared by the numpy and torch implementations.

Every check raises ``ValueError`` with the shapes or values at fault, so a learner never meets a
silent NaN or a stack trace from deep inside numpy or torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
