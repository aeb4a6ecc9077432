"""Small measurements that explain the design of attention, vectorised and seeded.

Introduced in chapter 2 (scaled dot-product attention): why the scores are divided by √d_k.
Every function draws queries and keys with independent standard-normal entries, so the numbers
are reproducible from ``seed`` and fast enough to run while a chapter executes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    "SEQ_LENGTHS",
    "recurrence",
    "path_length",
    "RecurrenceTiming",
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


#: The sequence lengths of the chapter-3 recurrence-versus-attention measurement.
SEQ_LENGTHS: tuple[int, ...] = (8, 16, 32, 64, 128, 256)


def recurrence(X: np.ndarray, W_h: np.ndarray, W_x: np.ndarray) -> tuple[np.ndarray, int]:
    """A plain recurrent layer ``h_t = tanh(h_{t-1} W_h + x_t W_x)``, one token after another.

    Introduced in chapter 3. ``X`` ``(seq, d)``, ``W_h`` ``(d_h, d_h)``, ``W_x`` ``(d, d_h)``.

    Returns:
        ``(H, steps)``: hidden states ``(seq, d_h)`` and the number of dependent steps taken
        (each step needs the previous one's result, so ``steps = seq``).
    """
    if X.ndim != 2 or W_x.shape[0] != X.shape[1] or W_h.shape != (W_x.shape[1],) * 2:
        raise ValueError(
            f"need X (seq, d), W_x (d, d_h), W_h (d_h, d_h); got X {X.shape}, "
            f"W_x {W_x.shape}, W_h {W_h.shape}"
        )
    h = np.zeros(W_h.shape[0])  # (d_h,)
    H = np.empty((X.shape[0], W_h.shape[0]))  # (seq, d_h)
    steps = 0
    for t in range(X.shape[0]):
        h = np.tanh(h @ W_h + X[t] @ W_x)  # needs h from step t - 1
        H[t] = h
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


@dataclass(frozen=True)
class RecurrenceTiming:
    """Recurrence against self-attention as the sequence grows (chapter 3).

    All arrays have shape ``(n_lengths,)``; times are the best of ``repeats`` runs, in seconds.
    """

    seq: np.ndarray  #: sequence lengths
    recurrence_steps: np.ndarray  #: dependent steps of the recurrent layer (counted)
    attention_steps: np.ndarray  #: dependent steps of self-attention (one set of matrix products)
    recurrence_seconds: np.ndarray
    attention_seconds: np.ndarray


def time_recurrence_and_attention(
    seqs: Sequence[int] = SEQ_LENGTHS, d: int = 32, repeats: int = 3, seed: int = 0
) -> RecurrenceTiming:
    """Time a recurrent layer and one self-attention layer on the same ``(seq, d)`` inputs.

    Introduced in chapter 3. Both use square ``(d, d)`` weights; self-attention runs
    :func:`course_attention.numpy_ref.scaled_dot_product_attention` on ``X W_q, X W_k, X W_v``.
    The whole default measurement takes well under half a second.
    """
    import time

    widths = _check_widths(seqs)
    _check_count("d", d)
    _check_count("repeats", repeats)
    rng = np.random.default_rng(seed)
    W_h, W_x, W_q, W_k, W_v = rng.standard_normal((5, d, d)) / np.sqrt(d)  # (d, d) each
    fields: dict[str, list[float]] = {"rs": [], "as": [], "rt": [], "at": []}
    for seq in widths:
        X = rng.standard_normal((int(seq), d))  # (seq, d)
        best_r = best_a = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            _, steps = recurrence(X, W_h, W_x)
            best_r = min(best_r, time.perf_counter() - start)
            start = time.perf_counter()
            ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
            best_a = min(best_a, time.perf_counter() - start)
        fields["rs"].append(steps)
        fields["as"].append(1)
        fields["rt"].append(best_r)
        fields["at"].append(best_a)
    return RecurrenceTiming(
        seq=widths.copy(),
        recurrence_steps=np.array(fields["rs"]),
        attention_steps=np.array(fields["as"]),
        recurrence_seconds=np.array(fields["rt"]),
        attention_seconds=np.array(fields["at"]),
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


# --- chapter 6: the Transformer block ------------------------------------------------------

__all__ += ["StackSignal", "residual_stack_signal", "layer_gradient_norms"]


class StackSignal(NamedTuple):
    """What flows through a stack of blocks (chapter 6), one entry per block boundary.

    ``rms`` ``(depth + 1,)``: root-mean-square of the activations, the input first;
    ``grad`` ``(depth + 1,)``: norm of the loss gradient with respect to those activations.
    """

    rms: np.ndarray
    grad: np.ndarray


class _OneThread:
    """Run small torch work on one thread: faster than a pool for (8, 32) tensors."""

    def __enter__(self) -> None:
        import torch

        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc: object) -> None:
        import torch

        torch.set_num_threads(self.threads)


def residual_stack_signal(
    depth: int = 24, residual: bool = True, d_model: int = 32, seq: int = 8, seed: int = 0
) -> StackSignal:
    """Push random tokens through ``depth`` feed-forward blocks, with or without residuals.

    Introduced in chapter 6. Each block is :class:`course_attention.modules.FeedForward`
    ``(d_model → 4·d_model → d_model)`` with PyTorch's default initialisation; with
    ``residual`` a block computes ``x + ff(x)``, without it ``ff(x)``. The input is
    ``(seq, d_model)`` standard normal; the loss is the sum of the output times a fixed random
    ``(seq, d_model)`` array, so its gradient at the output has a known size.
    """
    import torch

    from .modules import FeedForward

    _check_count("depth", depth)
    gen = torch.Generator().manual_seed(seed)
    with _OneThread(), torch.random.fork_rng():
        torch.manual_seed(seed)
        blocks = [FeedForward(d_model, 4 * d_model).double() for _ in range(depth)]
        x = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)
        probe = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)
        xs = [x.requires_grad_()]
        for block in blocks:
            xs.append(xs[-1] + block(xs[-1]) if residual else block(xs[-1]))
        for h in xs:
            h.retain_grad()
        (xs[-1] * probe).sum().backward()
    rms = np.array([float(h.detach().pow(2).mean().sqrt()) for h in xs])
    grad = np.array([float(h.grad.norm()) for h in xs])
    return StackSignal(rms, grad)


def layer_gradient_norms(
    n_layers: int = 12,
    norm_first: bool = False,
    d_model: int = 32,
    n_heads: int = 4,
    seq: int = 8,
    batch: int = 4,
    seeds: Sequence[int] = (0, 1),
) -> np.ndarray:
    """Gradient norm of every encoder layer's parameters at initialisation, averaged over seeds.

    Introduced in chapter 6. A stack of ``n_layers``
    :class:`course_attention.modules.EncoderLayer` ``(d_model, n_heads, 4·d_model)``, linear
    weights Xavier-uniform and biases zero (the initialisation of Xiong et al. 2020); pre-norm
    (``norm_first=True``) ends with a final layer norm, as pre-norm models do. Input
    ``(batch, seq, d_model)`` standard normal; the loss is the output times a fixed random array,
    summed and divided by ``batch``.

    Returns:
        ``(n_layers,)``: for each layer, the norm of the gradient of all its parameters.
    """
    import torch

    from .modules import EncoderLayer

    _check_count("n_layers", n_layers)
    if not seeds:
        raise ValueError("layer_gradient_norms needs at least one seed")
    norms = np.zeros(n_layers)
    with _OneThread(), torch.random.fork_rng():
        for seed in seeds:
            torch.manual_seed(seed)
            layers = [
                EncoderLayer(d_model, n_heads, 4 * d_model, norm_first=norm_first)
                for _ in range(n_layers)
            ]
            for layer in layers:
                for module in layer.modules():
                    if isinstance(module, torch.nn.Linear):
                        torch.nn.init.xavier_uniform_(module.weight)
                        torch.nn.init.zeros_(module.bias)
            final = torch.nn.LayerNorm(d_model) if norm_first else torch.nn.Identity()
            x = torch.randn(batch, seq, d_model)  # (batch, seq, d_model)
            probe = torch.randn(batch, seq, d_model)
            for layer in layers:
                x, _ = layer(x, need_weights=False)
            ((final(x) * probe).sum() / batch).backward()
            for i, layer in enumerate(layers):
                norms[i] += float(torch.sqrt(sum((p.grad**2).sum() for p in layer.parameters())))
    return norms / len(seeds)


# --- chapter 7: encoder–decoder ---------------------------------------------------------
