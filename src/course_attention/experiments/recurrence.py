"""Chapter 3's measurements: recurrence versus self-attention (cost, path length, timing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import numpy_ref as ref
from ._checks import _check_count, _check_widths
from .heads import matmul_multiply_adds

__all__ = [
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
    - ``"self-attention"``: projections ``X W_q, X W_k, X W_v``, scores ``Q Kᵀ``,
      ``weights V`` and the output projection ``W_o`` that a Transformer's attention layer ends
      with (chapter 5 counts the same four projections); the softmax is not counted.

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
            "output projection W_o": per_token,
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
