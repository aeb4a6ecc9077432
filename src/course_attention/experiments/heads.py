"""Chapter 5's measurements: the shapes and the cost of multi-head attention."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .. import numpy_ref as ref
from ._checks import _check_count

__all__ = [
    "ShapeStep",
    "trace_multi_head_shapes",
    "matmul_multiply_adds",
    "multi_head_multiply_adds",
    "time_loop_and_batched_heads",
]


class ShapeStep(NamedTuple):
    """One recorded step of :func:`trace_multi_head_shapes` (chapter 5).

    ``step`` says what was done, ``dims`` names the axes, e.g. ``"(N, h, T, d/h)"``, and
    ``shape`` is the actual shape of the array that step produced.
    """

    step: str
    dims: str
    shape: tuple[int, ...]


def trace_multi_head_shapes(
    X: np.ndarray,
    W_q: np.ndarray,
    W_k: np.ndarray,
    W_v: np.ndarray,
    W_o: np.ndarray,
    n_heads: int,
) -> tuple[list[ShapeStep], np.ndarray]:
    """Run multi-head self-attention step by step, recording every array's shape.

    Introduced in chapter 5. ``X`` is ``(N, T, d)``; the projections are ``(d, d)`` and multiply
    on the right, as in :func:`course_attention.numpy_ref.multi_head_attention` (no biases). The
    recorded shapes are read from the arrays the computation really produced.

    Returns:
        ``(steps, output)``: the steps of the queries' path (keys and values follow the same
        path), and the output ``(N, T, d)``.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (N, T, d); got {X.shape}")
    N, T, d = X.shape
    if not isinstance(n_heads, (int, np.integer)) or n_heads < 1 or d % n_heads:
        raise ValueError(f"d_model={d} must be divisible by n_heads={n_heads}")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)):
        if np.shape(W) != (d, d):
            raise ValueError(f"{name} must have shape ({d}, {d}); got {np.shape(W)}")
    h, d_head = int(n_heads), d // n_heads
    steps: list[ShapeStep] = []

    def record(step: str, dims: str, x: np.ndarray) -> np.ndarray:
        steps.append(ShapeStep(step, dims, tuple(int(n) for n in x.shape)))
        return x

    def split(Y: np.ndarray, log: bool) -> np.ndarray:
        Y4 = Y.reshape(N, T, h, d_head)  # (N, T, h, d/h)
        if log:
            record("reshape: cut d into h heads", "(N, T, h, d/h)", Y4)
        Yh = Y4.transpose(0, 2, 1, 3)  # (N, h, T, d/h)
        return record("transpose: heads before positions", "(N, h, T, d/h)", Yh) if log else Yh

    record("input X", "(N, T, d)", X)
    Q = split(record("project: Q = X W_q", "(N, T, d)", X @ W_q), log=True)
    K, V = split(X @ W_k, log=False), split(X @ W_v, log=False)
    scores = record(
        "scores: Q Kᵀ / √(d/h)", "(N, h, T, T)", Q @ K.swapaxes(-1, -2) / np.sqrt(d_head)
    )
    weights = record("softmax over the keys", "(N, h, T, T)", ref.softmax(scores))
    heads = record("weights V: one output per head", "(N, h, T, d/h)", weights @ V)
    back = record("transpose back", "(N, T, h, d/h)", heads.transpose(0, 2, 1, 3))
    merged = record("reshape: concatenate the heads", "(N, T, d)", back.reshape(N, T, d))
    output = record("output projection: merged W_o", "(N, T, d)", merged @ W_o)
    return steps, output


def matmul_multiply_adds(a_shape: Sequence[int], b_shape: Sequence[int]) -> int:
    """Multiply-adds of ``a @ b`` for shapes ``(..., m, k) @ (..., k, n)``.

    Introduced in chapter 5. Each of the ``m · n`` outputs of every (broadcast) batch entry
    needs ``k`` multiply-adds.
    """
    a, b = tuple(int(n) for n in a_shape), tuple(int(n) for n in b_shape)
    if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
        raise ValueError(f"cannot multiply shapes {a} @ {b}: need (..., m, k) @ (..., k, n)")
    batch = np.broadcast_shapes(a[:-2], b[:-2])
    return math.prod(batch) * a[-2] * a[-1] * b[-1]


def multi_head_multiply_adds(
    seq: int, d_model: int, n_heads: int, batch: int = 1
) -> dict[str, int]:
    """Multiply-adds of one multi-head self-attention layer, per matrix product.

    Introduced in chapter 5. Counts the products on the shapes the computation uses:
    projections ``(batch, seq, d_model) @ (d_model, d_model)``, scores ``(batch, h, seq, d/h) @
    (batch, h, d/h, seq)`` and the weighted sum ``(batch, h, seq, seq) @ (batch, h, seq, d/h)``.

    Returns:
        ``{"Q, K, V projections", "scores Q Kᵀ", "weights V", "output projection"}`` → count.
    """
    for name, value in (("seq", seq), ("d_model", d_model), ("n_heads", n_heads), ("batch", batch)):
        _check_count(name, value)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    h, d_head = n_heads, d_model // n_heads
    projection = matmul_multiply_adds((batch, seq, d_model), (d_model, d_model))
    return {
        "Q, K, V projections": 3 * projection,
        "scores Q Kᵀ": matmul_multiply_adds((batch, h, seq, d_head), (batch, h, d_head, seq)),
        "weights V": matmul_multiply_adds((batch, h, seq, seq), (batch, h, seq, d_head)),
        "output projection": projection,
    }


def time_loop_and_batched_heads(
    loop_fn: Callable[..., np.ndarray],
    seq: int,
    d_model: int,
    n_heads: int,
    batch: int = 1,
    repeat: int = 20,
    seed: int = 0,
) -> tuple[float, float]:
    """Best-of-``repeat`` seconds of a loop over heads and of the batched reshape, same inputs.

    Introduced in chapter 5. ``loop_fn(X, W_q, W_k, W_v, W_o, n_heads)`` is the chapter's
    teaching copy (one head at a time); the batched version is
    :func:`course_attention.numpy_ref.multi_head_attention`. Inputs are seeded random
    ``X`` ``(batch, seq, d_model)`` and projections ``(d_model, d_model)``; the two outputs
    ``(batch, seq, d_model)`` must agree (to 1e-9) before anything is timed. Time is this
    process's CPU time (``time.process_time``), so other programs sharing the cores do not
    stretch one call more than the other.

    Returns:
        ``(loop_seconds, batched_seconds)``: the fastest of ``repeat`` calls of each.
    """
    for name, value in (("seq", seq), ("d_model", d_model), ("n_heads", n_heads)):
        _check_count(name, value)
    _check_count("batch", batch)
    _check_count("repeat", repeat)
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((batch, seq, d_model))  # (batch, seq, d_model)
    W = rng.standard_normal((4, d_model, d_model)) / np.sqrt(d_model)  # W_q, W_k, W_v, W_o

    def loop() -> np.ndarray:
        return np.asarray(loop_fn(X, *W, n_heads=n_heads))

    def batched() -> np.ndarray:
        return ref.multi_head_attention(X, X, *W, n_heads=n_heads)[0]

    import time

    got, expected = loop(), batched()
    if got.shape != expected.shape or not np.allclose(got, expected, atol=1e-9):
        raise ValueError(
            f"loop_fn disagrees with the batched version: shape {got.shape} vs {expected.shape}"
        )
    best = [math.inf, math.inf]
    for _ in range(repeat):
        for i, fn in enumerate((loop, batched)):
            start = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - start)
    return best[0], best[1]
