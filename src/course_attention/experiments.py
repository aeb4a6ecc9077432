"""Small measurements that explain the design of attention, vectorised and seeded.

Introduced in chapter 2 (scaled dot-product attention): why the scores are divided by √d_k.
Every function draws queries and keys with independent standard-normal entries, so the numbers
are reproducible from ``seed`` and fast enough to run while a chapter executes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import numpy_ref as ref

__all__ = [
    "DK_VALUES",
    "expected_dot_variance",
    "dot_product_variance",
    "ScalingStats",
    "scaling_statistics",
    "weights_by_width",
    "SMALL_GRADIENT",
    "query_gradient",
    "SEQ_LENGTHS",
    "recurrence",
    "path_length",
    "layer_multiply_adds",
    "layer_cost_totals",
    "RecurrenceTiming",
    "attention_one_query_at_a_time",
    "time_recurrence_and_attention",
    "attention_weight_bytes",
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
    #: median over queries of the per-entry size of ∂L/∂q (see :func:`query_gradient`)
    grad_median: np.ndarray | None = None
    grad_mean: np.ndarray | None = None  #: mean over queries of the same per-entry size
    #: share of queries whose per-entry gradient is below :data:`SMALL_GRADIENT`
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
    ``d_k ** -exponent`` (0 = unscaled, 0.5 = the Transformer's 1/√d_k, 1 = divided by ``d_k``).
    The same seed draws the same queries and keys for every ``exponent``, so runs compare paired.

    The gradient fields measure ``∂L/∂q`` of ``L = sum(softmax(K q · scale) V)`` with values of
    width ``d_v = d_k`` (:func:`query_gradient`), summarised per query by its per-entry size
    ``‖∂L/∂q‖ / √d_k``. ``L`` depends on ``V`` only through its row sums ``V·1``, each normal with
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


#: The sequence lengths of the chapter-3 recurrence-versus-attention measurement.
SEQ_LENGTHS: tuple[int, ...] = (8, 16, 32, 64, 128)


def recurrence(X: np.ndarray, W_h: np.ndarray, W_x: np.ndarray) -> tuple[np.ndarray, int]:
    """A plain recurrent layer ``h_t = tanh(h_{t-1} W_h + x_t W_x)``, one token after another.

    Introduced in chapter 3. ``X`` ``(seq, d)`` or a batch ``(batch, seq, d)``, ``W_h``
    ``(d_h, d_h)``, ``W_x`` ``(d, d_h)``. The input projections ``x_t W_x`` of all tokens (and all
    sequences of a batch) do not depend on each other and run as one product; only the chain
    ``h_1 → h_2 → …`` must wait, one step per token.

    Returns:
        ``(H, steps)``: hidden states ``(..., seq, d_h)`` and the number of dependent steps taken
        (each step needs the previous one's result, so ``steps = seq``).
    """
    if X.ndim not in (2, 3) or W_x.shape[0] != X.shape[-1] or W_h.shape != (W_x.shape[1],) * 2:
        raise ValueError(
            f"need X (seq, d) or (batch, seq, d), W_x (d, d_h), W_h (d_h, d_h); got X {X.shape}, "
            f"W_x {W_x.shape}, W_h {W_h.shape}"
        )
    XW = X @ W_x  # (..., seq, d_h): every token at once
    h = np.zeros((*X.shape[:-2], W_h.shape[0]))  # (..., d_h)
    H = np.empty_like(XW)  # (..., seq, d_h)
    steps = 0
    for t in range(X.shape[-2]):
        h = np.tanh(h @ W_h + XW[..., t, :])  # needs h from step t - 1
        H[..., t, :] = h
        steps += 1
    return H, steps


def path_length(seq: int, kind: str) -> int:
    """Largest number of layer operations between two of ``seq`` tokens (chapter 3).

    A recurrent layer carries token 0 to token ``seq - 1`` through ``seq - 1`` hidden states;
    self-attention connects every pair of tokens directly, in 1 step.
    """
    _check_count("seq", seq)
    if kind not in ("recurrence", "attention"):
        raise ValueError(f"kind must be 'recurrence' or 'attention'; got {kind!r}")
    return seq - 1 if kind == "recurrence" else 1


def layer_multiply_adds(seq: int, d: int) -> dict[str, dict[str, int]]:
    """Multiply-adds of one layer over ``seq`` tokens of width ``d``, per matrix product.

    Introduced in chapter 3, to redo Table 1 of Vaswani et al. (2017) with exact counts instead
    of O-notation. Three layers, all of width ``d`` (hidden state, ``d_k`` and ``d_v``):

    - ``"recurrent"``: the chapter's ``h_t = tanh(h_{t-1} W_h + x_t W_x)``;
    - ``"LSTM"``: four gates, each with its own ``W_x`` and ``W_h`` (biases and element-wise
      products not counted);
    - ``"self-attention"``: projections ``X W_q, X W_k, X W_v``, scores ``Q Kᵀ`` and
      ``weights V`` (the softmax not counted).

    The parts that mix tokens are ``"state h W_h"`` (``seq · d²`` per gate) and ``"scores Q Kᵀ"``
    + ``"weights V"`` (``2 · seq² · d``); Table 1 compares these, ``O(n · d²)`` against
    ``O(n² · d)``.

    Returns:
        ``{layer: {product: multiply-adds}}``.
    """
    _check_count("seq", seq)
    _check_count("d", d)
    per_token = matmul_multiply_adds((seq, d), (d, d))  # (seq, d) @ (d, d)
    return {
        "recurrent": {"input x W_x": per_token, "state h W_h": per_token},
        "LSTM": {"input x W_x": 4 * per_token, "state h W_h": 4 * per_token},
        "self-attention": {
            "projections X W": 3 * per_token,
            "scores Q Kᵀ": matmul_multiply_adds((seq, d), (d, seq)),
            "weights V": matmul_multiply_adds((seq, seq), (seq, d)),
        },
    }


#: The products of :func:`layer_multiply_adds` that mix information between tokens.
_MIXING = {"recurrent": ("state h W_h",), "LSTM": ("state h W_h",)}
_MIXING["self-attention"] = ("scores Q Kᵀ", "weights V")


def layer_cost_totals(seq: int, d: int, mixing_only: bool = False) -> dict[str, int]:
    """Multiply-adds of each layer of :func:`layer_multiply_adds`, summed (chapter 3).

    With ``mixing_only`` only the products that mix tokens count: the state update ``h W_h``
    of the recurrent layers (``seq · d²`` per gate), and the scores and weighted sum of
    self-attention (``2 · seq² · d``) — the terms Table 1 of Vaswani et al. (2017) compares.

    Returns:
        ``{"recurrent": …, "LSTM": …, "self-attention": …}``.
    """
    counts = layer_multiply_adds(seq, d)
    return {
        layer: sum(n for name, n in parts.items() if not mixing_only or name in _MIXING[layer])
        for layer, parts in counts.items()
    }


@dataclass(frozen=True)
class RecurrenceTiming:
    """Recurrence against self-attention as the sequence grows (chapter 3).

    All arrays have shape ``(n_lengths,)``; times are the best of ``repeats`` runs, in seconds.
    ``attention_loop_seconds`` is self-attention written like the recurrence, one query per
    step of a Python loop; ``attention_seconds`` the same numbers from one batched call.
    """

    seq: np.ndarray  #: sequence lengths
    recurrence_steps: np.ndarray  #: dependent steps of the recurrent layer (counted)
    attention_steps: np.ndarray  #: steps of batched self-attention (one call, whatever T)
    recurrence_seconds: np.ndarray
    attention_loop_seconds: np.ndarray
    attention_seconds: np.ndarray


def attention_one_query_at_a_time(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Self-attention computed like a recurrence: a Python loop over the query positions.

    Introduced in chapter 3. ``Q``, ``K`` ``(batch, seq, d_k)``, ``V`` ``(batch, seq, d_v)`` →
    ``(batch, seq, d_v)``. Step ``t`` reads only ``Q[:, t]``, ``K`` and ``V``, never the result
    of step ``t - 1``: the steps are independent, so one batched call can do them all.
    """
    if Q.ndim != 3 or K.shape != Q.shape or V.shape[:2] != Q.shape[:2]:
        raise ValueError(
            f"need Q, K (batch, seq, d_k) and V (batch, seq, d_v); got Q {Q.shape}, K {K.shape}, "
            f"V {V.shape}"
        )
    out = np.empty((*Q.shape[:2], V.shape[-1]))  # (batch, seq, d_v)
    for t in range(Q.shape[1]):
        scores = np.einsum("bd,bsd->bs", Q[:, t], K) / np.sqrt(Q.shape[-1])  # (batch, seq)
        out[:, t] = np.einsum("bs,bsd->bd", ref.softmax(scores), V)  # (batch, d_v)
    return out


def time_recurrence_and_attention(
    seqs: Sequence[int] = SEQ_LENGTHS,
    d: int = 32,
    batch: int = 8,
    repeats: int = 3,
    seed: int = 0,
) -> RecurrenceTiming:
    """Time a recurrent layer and self-attention written the same way, on the same inputs.

    Introduced in chapter 3. Inputs ``(batch, seq, d)``, square ``(d, d)`` weights. Three
    timings, each including its projections: the recurrence (:func:`recurrence`: one product for
    the inputs, then ``seq`` dependent steps), self-attention as a loop over queries
    (:func:`attention_one_query_at_a_time`: ``seq`` independent steps of the same vectorised kind)
    and self-attention in one batched call. The default measurement takes about 0.1 s (idle CPU).
    """
    import time

    widths = _check_widths(seqs)
    for name, value in (("d", d), ("batch", batch), ("repeats", repeats)):
        _check_count(name, value)
    rng = np.random.default_rng(seed)
    W_h, W_x, W_q, W_k, W_v = rng.standard_normal((5, d, d)) / np.sqrt(d)  # (d, d) each

    def loop_attention(X: np.ndarray) -> np.ndarray:
        return attention_one_query_at_a_time(X @ W_q, X @ W_k, X @ W_v)

    def batched_attention(X: np.ndarray) -> np.ndarray:
        return ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]

    runs = {
        "recurrence": lambda X: recurrence(X, W_h, W_x)[0],
        "loop": loop_attention,
        "batched": batched_attention,
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    steps = []
    for seq in widths:
        X = rng.standard_normal((batch, int(seq), d))  # (batch, seq, d)
        for name, run in runs.items():
            best = np.inf
            for _ in range(repeats):
                start = time.perf_counter()
                run(X)
                best = min(best, time.perf_counter() - start)
            seconds[name].append(best)
        steps.append(recurrence(X[0], W_h, W_x)[1])  # counted: one step per token
    return RecurrenceTiming(
        seq=widths.copy(),
        recurrence_steps=np.array(steps),
        attention_steps=np.ones(len(widths), dtype=int),
        recurrence_seconds=np.array(seconds["recurrence"]),
        attention_loop_seconds=np.array(seconds["loop"]),
        attention_seconds=np.array(seconds["batched"]),
    )


def attention_weight_bytes(
    seq: int, batch: int = 1, n_heads: int = 1, dtype: np.dtype | type = np.float32
) -> int:
    """Bytes of the attention weights ``(batch, n_heads, seq, seq)`` (chapter 3).

    They grow with ``seq²``: double the sequence, four times the memory.
    """
    for name, value in (("seq", seq), ("batch", batch), ("n_heads", n_heads)):
        _check_count(name, value)
    return int(batch * n_heads * seq * seq * np.dtype(dtype).itemsize)


# --- chapter 4: masking -------------------------------------------------------------------


# --- chapter 5: multi-head attention --------------------------------------------------------

__all__ += [
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
    ``(batch, seq, d_model)`` must agree (to 1e-9) before anything is timed.

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
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0], best[1]


# --- chapter 6: the Transformer block ------------------------------------------------------
# The measurements of deep stacks at initialisation live in their own module, .deep_stacks.

from .deep_stacks import (  # noqa: E402
    FfnGradients,
    StackSignal,
    ffn_gradient_norms,
    residual_stack_signal,
)

__all__ += ["StackSignal", "residual_stack_signal", "FfnGradients", "ffn_gradient_norms"]


# --- chapter 7: encoder–decoder ---------------------------------------------------------
