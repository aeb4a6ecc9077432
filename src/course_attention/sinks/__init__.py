"""Attention sinks, learned sink logits, soft-capping and local/global stacks (chapter 14).

Introduced in chapter 14. A softmax gives each query's weights a sum of 1, so a head that has
nothing useful to read must still put its weight somewhere. Trained models put it on the first
position, the *attention sink* (Xiao et al. 2023). This module measures that and holds the
remedies today's models use:

- :func:`first_position_share`, over :func:`attention_weights` of chapter 8's GPT, chapter 9's
  attention-only model or chapter 12's :class:`~course_attention.modern.ModernGPT`, against
  :func:`uniform_share`, the share attention spread evenly would give;
- :func:`softmax_with_sink`: gpt-oss's learned sink logit per head, one more entry in each
  softmax's denominator that reads no value (with logit 0: :func:`off_by_one_softmax`, Evan
  Miller's "softmax₁");
- :func:`soft_cap`: Gemma 2's ``cap · tanh(s / cap)``;
- :func:`layer_pattern`, :func:`cache_bytes` and :func:`receptive_field`: stacks of sliding-window
  (local) and full (global) layers, as Gemma 3 (5:1) and gpt-oss (1:1) alternate them.

:mod:`course_attention.sinks.streaming` keeps the first tokens in a rolling cache (StreamingLLM),
:mod:`course_attention.sinks.hf` proves :class:`~course_attention.modern.ModernAttention` with a
sink logit and a window equal to Hugging Face's ``GptOssAttention``, and
:mod:`course_attention.sinks.compare` trains the chapter's models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

__all__ = [
    "softmax_with_sink",
    "off_by_one_softmax",
    "soft_cap",
    "attention_weights",
    "value_norms",
    "first_position_share",
    "uniform_share",
    "LAYER_KINDS",
    "layer_pattern",
    "cache_bytes",
    "receptive_field",
]


def _array(x: Any, name: str) -> tuple[Any, bool]:
    if isinstance(x, torch.Tensor):
        return x, True
    try:
        return np.asarray(x, dtype=np.float64), False
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of numbers; got {type(x).__name__}") from error


def softmax_with_sink(scores: Any, sink_logits: Any, mask: Any = None) -> Any:
    """Each head's softmax over its keys *and* a sink logit that reads no value.

    Introduced in chapter 14 (gpt-oss's ``sinks``). ``scores`` ``(..., heads, seq_q, seq_k)``,
    ``sink_logits`` ``(heads,)``, ``mask`` broadcastable to ``scores``, True = may attend (``None``:
    all). Returns weights of ``scores``' shape: ``exp(s_j) / (exp(sink) + Σ_k exp(s_k))`` over
    the visible keys, 0 elsewhere. A row sums to less than 1; the rest is the sink's, and a row
    with every key masked is all zeros (no NaN). With every sink logit 0 this is
    :func:`off_by_one_softmax`. Works on numpy arrays (float64) and torch tensors (their dtype).
    """
    s, is_torch = _array(scores, "scores")
    sink, _ = _array(sink_logits, "sink_logits")
    if s.ndim < 3:
        raise ValueError(f"scores must be (..., heads, seq_q, seq_k); got shape {tuple(s.shape)}")
    if tuple(sink.shape) != (s.shape[-3],):
        raise ValueError(f"sink_logits must be (heads,) = ({s.shape[-3]},), one per head of "
                         f"scores {tuple(s.shape)}; got {tuple(sink.shape)}")
    if is_torch:
        sink = torch.as_tensor(sink, dtype=s.dtype, device=s.device)
        col = sink.reshape(-1, 1, 1).expand(*s.shape[:-1], 1)
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.bool, device=s.device)
            _broadcastable(tuple(mask.shape), tuple(s.shape))
            s = s.masked_fill(~mask, float("-inf"))
        both = torch.cat((s, col), dim=-1)
        both = both - both.amax(dim=-1, keepdim=True)  # the sink is finite: no row is all -inf
        e = both.exp()
        return (e / e.sum(-1, keepdim=True))[..., :-1]
    sink = np.asarray(sink, dtype=np.float64)
    col = np.broadcast_to(sink.reshape(-1, 1, 1), (*s.shape[:-1], 1))
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        _broadcastable(mask.shape, s.shape)
        s = np.where(mask, s, -np.inf)
    both = np.concatenate((s, col), axis=-1)
    both = both - both.max(axis=-1, keepdims=True)
    e = np.exp(both)
    return (e / e.sum(-1, keepdims=True))[..., :-1]


def _broadcastable(mask: tuple[int, ...], scores: tuple[int, ...]) -> None:
    try:
        np.broadcast_shapes(mask, scores)
    except ValueError as error:
        raise ValueError(f"mask {mask} does not broadcast to scores {scores}") from error


def off_by_one_softmax(scores: Any) -> Any:
    """``exp(s_j) / (1 + Σ_k exp(s_k))`` over the last axis of ``scores`` ``(..., heads, seq_q,
    seq_k)``: :func:`softmax_with_sink` with every sink logit 0 (Miller's "softmax₁", chapter
    14). The weights may sum to nearly 0 when every score is low."""
    s, is_torch = _array(scores, "scores")
    if s.ndim < 3:
        raise ValueError(f"scores must be (..., heads, seq_q, seq_k); got shape {tuple(s.shape)}")
    zeros = torch.zeros(s.shape[-3], dtype=s.dtype) if is_torch else np.zeros(s.shape[-3])
    return softmax_with_sink(s, zeros)


def soft_cap(scores: Any, cap: float) -> Any:
    """Gemma 2's logit soft-capping ``cap · tanh(scores / cap)``, elementwise (chapter 14).

    Near 0 it changes little (slope 1); it bends every score into ``(−cap, cap)``. Applied
    before the mask: ``soft_cap(−inf)`` is ``−cap``, not ``−inf``."""
    s, is_torch = _array(scores, "scores")
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not cap > 0:
        raise ValueError(f"cap must be a positive number; got {cap!r}")
    return cap * (torch.tanh(s / cap) if is_torch else np.tanh(s / cap))


@torch.no_grad()
def attention_weights(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Every layer's attention weights ``(layers, batch, heads, seq, seq)`` for ``tokens``
    ``(batch, seq)``, of chapter 8's :class:`~course_attention.gpt.GPT`, chapter 9's
    :class:`~course_attention.induction.AttentionOnlyTransformer` or chapter 12's
    :class:`~course_attention.modern.ModernGPT` (its sink logits, windows and caps included; a
    row with a sink sums to less than 1). Introduced in chapter 14."""
    from .. import gpt, induction
    from ..modern import ModernGPT

    if isinstance(model, gpt.GPT):
        return model.attention(tokens)
    if isinstance(model, induction.AttentionOnlyTransformer):
        return model(tokens)[1]
    if not isinstance(model, ModernGPT):
        raise ValueError(f"model must be a gpt.GPT, an induction.AttentionOnlyTransformer or a "
                         f"ModernGPT; got {type(model).__name__}")
    return _per_layer(model, tokens, _modern_weights)


def _per_layer(model: Any, tokens: torch.Tensor,
               measure: Callable[[Any, tuple[Any, ...]], torch.Tensor]) -> torch.Tensor:
    """``measure(attention layer, its forward's arguments)`` for each block's attention layer
    during one forward pass of ``model`` on ``tokens``, stacked: ``(layers, …)``."""
    seen: list[torch.Tensor] = []
    hooks = [b.attn.register_forward_hook(lambda m, args, out: seen.append(measure(m, args)))
             for b in model.blocks]
    try:
        model(tokens)
    finally:
        for h in hooks:
            h.remove()
    return torch.stack(seen)


def _modern_weights(attn: Any, args: tuple[Any, ...]) -> torch.Tensor:
    from ..modern import apply_rope

    x, cos, sin = args[:3]
    q, k, _ = attn.project(x)
    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    scores = attn.raw_scores(q, k).masked_fill(~attn.visible(x.shape[1], x.shape[1]),
                                               float("-inf"))
    if attn.sinks is not None:
        return softmax_with_sink(scores, attn.sinks.to(scores.dtype))
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)


@torch.no_grad()
def value_norms(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """The length of each head's value vector at each position, ``(layers, heads, seq)``,
    averaged over the batch of ``tokens`` ``(batch, seq)`` (chapter 14). For grouped-query
    attention a key/value head's norm stands for each query head it serves; the values are
    what each layer's attention reads (after chapter 8's or 12's norm)."""
    from .. import gpt, induction
    from ..modern import ModernGPT, repeat_kv

    if isinstance(model, ModernGPT):
        def values(attn: Any, args: tuple[Any, ...]) -> torch.Tensor:
            return repeat_kv(attn.project(args[0])[2], attn.n_heads // attn.n_kv_heads)
    elif isinstance(model, gpt.GPT):
        def values(attn: Any, args: tuple[Any, ...]) -> torch.Tensor:
            return attn._split(attn.W_v(args[0]))
    elif isinstance(model, induction.AttentionOnlyTransformer):
        return _attention_only_value_norms(model, tokens)
    else:
        raise ValueError(f"model must be a gpt.GPT, an induction.AttentionOnlyTransformer or a "
                         f"ModernGPT; got {type(model).__name__}")
    return _per_layer(model, tokens, lambda attn, args: values(attn, args).norm(dim=-1).mean(0))


def _attention_only_value_norms(model: Any, tokens: torch.Tensor) -> torch.Tensor:
    x = model.embed(tokens) + model.pos[: tokens.shape[1]]
    norms = []
    for layer, mha in enumerate(model.layers):
        norms.append(mha._split(mha.W_v(x)).norm(dim=-1).mean(0))
        x = x + model.attend(layer, x, need_weights=False)[0]
    return torch.stack(norms)


def first_position_share(weights: Any, from_query: int = 1) -> np.ndarray:
    """The mean weight on position 0, ``(layers, heads)``, of ``weights`` ``(layers, batch,
    heads, seq, seq)``, over the batch and the queries ``from_query … seq − 1`` (chapter 14).

    Query 0 can only read position 0, and early queries have few keys: attention spread evenly
    gives query ``t`` a share ``1/(t + 1)`` anyway. Compare with :func:`uniform_share`.
    """
    w, _ = _array(weights, "weights")
    w = w.detach().cpu().double().numpy() if isinstance(w, torch.Tensor) else w
    if w.ndim != 5 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"weights must be (layers, batch, heads, seq, seq); got {w.shape}")
    if not 0 <= from_query < w.shape[-1]:
        raise ValueError(f"from_query must lie in 0 … {w.shape[-1] - 1}; got {from_query}")
    return w[:, :, :, from_query:, 0].mean(axis=(1, 3))


def uniform_share(seq: int, from_query: int = 1) -> float:
    """The share of :func:`first_position_share` if every query spread its weight evenly over
    the keys it sees: the mean of ``1/(t + 1)`` for ``t = from_query … seq − 1`` (chapter 14)."""
    if not 0 <= from_query < seq:
        raise ValueError(f"need 0 ≤ from_query < seq; got {from_query}, {seq}")
    return float(np.mean(1.0 / np.arange(from_query + 1, seq + 1)))


#: Hugging Face's names for the two kinds of layer (``config.layer_types``).
LAYER_KINDS = ("full_attention", "sliding_attention")


def layer_pattern(n_layers: int, local_per_global: int) -> tuple[str, ...]:
    """Layer kinds ``(n_layers,)``: ``local_per_global`` sliding layers, then one full one,
    repeated (chapter 14). Gemma 3 uses 5 (its 6th, 12th … layers are global); gpt-oss 1
    (sliding, full, sliding, …); 0 gives an all-global stack."""
    for name, v in (("n_layers", n_layers), ("local_per_global", local_per_global)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name == "n_layers" else 0):
            raise ValueError(f"{name} must be an integer ≥ {1 if name == 'n_layers' else 0}; "
                             f"got {v!r}")
    period = local_per_global + 1
    return tuple("full_attention" if (i + 1) % period == 0 else "sliding_attention"
                 for i in range(n_layers))


def _kinds(layer_types: Any) -> tuple[str, ...]:
    kinds = tuple(layer_types)
    if not kinds or set(kinds) - set(LAYER_KINDS):
        raise ValueError(f"layer_types must be a non-empty sequence of {LAYER_KINDS}; got "
                         f"{layer_types!r}")
    return kinds


def cache_bytes(layer_types: Any, length: int, window: int, n_kv_heads: int, d_head: int,
                bytes_per_value: int = 2) -> int:
    """The KV cache of one sequence of ``length`` tokens, in bytes (chapter 14).

    A full layer keeps every token's key and value; a sliding layer only its last ``window``
    (older ones can never be read again): ``Σ_layers 2 · n_kv_heads · d_head · kept ·
    bytes_per_value`` (2 bytes: bfloat16)."""
    kinds = _kinds(layer_types)
    for name, v in (("length", length), ("window", window), ("n_kv_heads", n_kv_heads),
                    ("d_head", d_head), ("bytes_per_value", bytes_per_value)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={v!r}")
    kept = sum(length if k == "full_attention" else min(window, length) for k in kinds)
    return 2 * n_kv_heads * d_head * bytes_per_value * kept


def receptive_field(layer_types: Any, window: int, length: int) -> int:
    """How many input positions the last token of a ``length``-token text can depend on after
    the stack ``layer_types`` (chapter 14): computed from the product of the layers' masks,
    as chapter 11's ``sliding_window.reach_after_layers``. One full layer reaches everything;
    ``L`` sliding ones ``L · (window − 1) + 1`` positions."""
    from ..sliding_window import sliding_window_mask

    kinds = _kinds(layer_types)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive integer; got {length!r}")
    reach = np.zeros(length, dtype=bool)
    reach[-1] = True  # the last position, seen from the top: which inputs reach it?
    for kind in reversed(kinds):
        mask = (sliding_window_mask(length, window) if kind == "sliding_attention"
                else np.tri(length, dtype=bool))
        reach = (reach[:, None] & mask).any(axis=0) | reach
    return int(reach.sum())
