"""Generating past the window: a rolling cache, the same with sinks kept, and recomputation
(chapter 14, after StreamingLLM, Xiao et al. 2023).

Introduced in chapter 14. A rotary model (chapter 12's
:class:`~course_attention.modern.ModernGPT`) reads a text longer than anything it was trained on
in one of three ways, each giving every position's logits:

- ``"window"``: a rolling cache of the last ``window`` tokens' keys and values (Mistral's, and
  StreamingLLM's "window attention"); each token was computed, layer by layer, when it arrived;
- ``"sinks"``: the same cache plus the first ``n_sinks`` tokens, never evicted (StreamingLLM);
- ``"recompute"``: every step runs the model afresh on the tokens the cache with sinks keeps
  (with no sinks: the last ``window``, chapter 8's rule past the context, nanoGPT's): the exact
  function of those tokens, at ``window`` times the work.

As StreamingLLM does, positions are those *in the cache*: the kept keys are rotated by their
slot, not by their place in the text, so no distance ever exceeds the cache's size.
:class:`StreamingCache` does that token by token; :func:`streaming_logits` computes the same
logits for a whole text in one pass (a sink key's score uses the query rotated at its slot), and
tests prove them equal.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ..modern import ModernGPT, apply_rope, rope_cos_sin

__all__ = [
    "METHODS",
    "kept_positions",
    "streaming_visible",
    "StreamingCache",
    "stepwise_logits",
    "streaming_logits",
    "recompute_logits",
    "method_logits",
    "position_losses",
]

#: The ways :func:`method_logits` reads a long text.
METHODS = ("window", "sinks", "recompute")


def _check(window: Any, n_sinks: Any) -> None:
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive integer; got {window!r}")
    if isinstance(n_sinks, bool) or not isinstance(n_sinks, int) or n_sinks < 0:
        raise ValueError(f"n_sinks must be an integer ≥ 0; got {n_sinks!r}")


def kept_positions(length: int, window: int, n_sinks: int) -> list[int]:
    """The text positions a StreamingLLM cache holds once ``length`` tokens have been read: the
    first ``n_sinks`` and the last ``window``, in order, each once (chapter 14). Slot ``i`` of the
    cache is position ``kept_positions(...)[i]``."""
    _check(window, n_sinks)
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise ValueError(f"length must be an integer ≥ 0; got {length!r}")
    return sorted(set(range(min(n_sinks, length))) | set(range(max(0, length - window), length)))


def streaming_visible(seq: int, window: int, n_sinks: int) -> torch.Tensor:
    """``(seq, seq)`` bool, True = query ``t`` reads key ``j``: the keys
    ``kept_positions(t + 1, window, n_sinks)`` (chapter 14)."""
    _check(window, n_sinks)
    t = torch.arange(seq)[:, None]
    j = torch.arange(seq)[None, :]
    return (j <= t) & ((j > t - window) | (j < n_sinks))


def _check_model(model: Any, tokens: Any) -> None:
    if not isinstance(model, ModernGPT):
        raise ValueError(f"streaming needs a rotary ModernGPT; got {type(model).__name__}")
    if any(b.attn.window is not None for b in model.blocks):
        raise ValueError("streaming runs a model whose layers are all full (no sliding layer)")
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
        raise ValueError(f"tokens must be an integer tensor (batch, seq); got "
                         f"{getattr(tokens, 'shape', type(tokens))}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= model.config.vocab_size):
        raise ValueError(f"token ids must lie in 0 … {model.config.vocab_size - 1}")


class StreamingCache:
    """A StreamingLLM cache for :class:`~course_attention.modern.ModernGPT`, token by token
    (chapter 14): per layer the keys *before* rotation and the values, ``(batch, n_kv_heads,
    kept, d_head)``, of :func:`kept_positions`; each step rotates them by their slot."""

    def __init__(self, model: ModernGPT, window: int, n_sinks: int):
        _check(window, n_sinks)
        self.model, self.window, self.n_sinks = model, window, n_sinks
        self.keys: list[torch.Tensor | None] = [None] * model.config.n_layers
        self.values: list[torch.Tensor | None] = [None] * model.config.n_layers
        self.positions: list[int] = []  # the text positions held, slot by slot
        self.read = 0

    def _add(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.keys[layer] is not None:
            k, v = torch.cat((self.keys[layer], k), 2), torch.cat((self.values[layer], v), 2)
        if k.shape[2] > self.n_sinks + self.window:  # evict the oldest token after the sinks
            keep = [i for i in range(k.shape[2]) if i != self.n_sinks]
            k, v = k[:, :, keep], v[:, :, keep]
        self.keys[layer], self.values[layer] = k, v
        return k, v

    @torch.no_grad()
    def step(self, token: torch.Tensor) -> torch.Tensor:
        """Read one token per sequence, ``(batch,)``; return its logits ``(batch, vocab)``."""
        m = self.model
        x = m.embed(token.reshape(-1, 1))
        for layer, block in enumerate(m.blocks):
            attn = block.attn
            q, k, v = attn.project(block.norm1(x))
            k, v = self._add(layer, k, v)
            slots = torch.arange(k.shape[2])
            cos, sin = rope_cos_sin(slots, m.config.head_dim, m.config.rope_theta, x.dtype)
            q = apply_rope(q, cos[-1:], sin[-1:])  # the query sits in the last slot
            scores = attn.raw_scores(q, apply_rope(k, cos, sin))
            x = x + attn.attend(scores, torch.ones(1, k.shape[2], dtype=torch.bool), v)
            x = x + block.mlp(block.norm2(x))
        self.read += 1
        self.positions = kept_positions(self.read, self.window, self.n_sinks)
        x = m.norm(x)
        return (x @ m.embed.weight.T if m.out is None else m.out(x))[:, 0]


def stepwise_logits(model: ModernGPT, tokens: torch.Tensor, window: int, n_sinks: int
                    ) -> torch.Tensor:
    """Logits ``(batch, seq, vocab)`` of ``tokens`` ``(batch, seq)`` read one by one through a
    :class:`StreamingCache` (chapter 14; ``n_sinks=0``: the plain rolling window)."""
    _check_model(model, tokens)
    cache = StreamingCache(model, window, n_sinks)
    return torch.stack([cache.step(tokens[:, t]) for t in range(tokens.shape[1])], dim=1)


@torch.no_grad()
def streaming_logits(model: ModernGPT, tokens: torch.Tensor, window: int, n_sinks: int,
                     positions: str = "cache") -> torch.Tensor:
    """The logits of :func:`stepwise_logits`, ``(batch, seq, vocab)``, in one pass (chapter 14).

    Query ``t`` reads :func:`streaming_visible`'s keys. A kept key's score depends only on the
    distance between its slot and the query's: for the window keys that is their distance in
    the text; a sink key ``i`` sits at slot ``i`` while the query sits at slot
    ``min(t, n_sinks + window − 1)``, so its score uses the query rotated there.
    ``positions="text"`` is the mistake of numbering every kept key by its place in the text:
    the sinks then drift ever further from the query.
    """
    _check(window, n_sinks)
    if positions not in ("cache", "text"):
        raise ValueError(f"positions must be 'cache' or 'text'; got {positions!r}")
    _check_model(model, tokens)
    c = model.config
    x = model.embed(tokens)
    seq = tokens.shape[1]
    by_cache = positions == "cache"
    positions_ = torch.arange(seq)
    cos, sin = rope_cos_sin(positions_, c.head_dim, c.rope_theta, x.dtype)
    slot = positions_.clamp(max=n_sinks + window - 1)
    cos_q, sin_q = rope_cos_sin(slot, c.head_dim, c.rope_theta, x.dtype)
    visible = streaming_visible(seq, window, n_sinks)
    sink_only = visible & (positions_[None, :] <= positions_[:, None] - window)  # kept as sinks
    for block in model.blocks:
        attn = block.attn
        q, k, v = attn.project(block.norm1(x))
        k = apply_rope(k, cos, sin)
        scores = attn.raw_scores(apply_rope(q, cos, sin), k)
        if n_sinks and by_cache:
            scores = torch.where(sink_only, attn.raw_scores(apply_rope(q, cos_q, sin_q), k),
                                 scores)
        x = x + attn.attend(scores, visible, v)
        x = x + block.mlp(block.norm2(x))
    x = model.norm(x)
    return x @ model.embed.weight.T if model.out is None else model.out(x)


@torch.no_grad()
def recompute_logits(model: ModernGPT, tokens: torch.Tensor, window: int, n_sinks: int = 0
                     ) -> torch.Tensor:
    """Logits ``(batch, seq, vocab)``: position ``t`` as the model computes it afresh on the
    tokens a StreamingLLM cache keeps, ``kept_positions(t + 1, window, n_sinks)``, read as one
    text from position 0 (chapter 14). With ``n_sinks=0``: the last ``window`` tokens alone,
    chapter 8's rule past the context."""
    _check(window, n_sinks)
    _check_model(model, tokens)
    b, seq = tokens.shape
    size = n_sinks + window
    first = model(tokens[:, : min(size, seq)])  # nothing evicted yet: the whole prefix
    if seq <= size:
        return first
    later = tokens.unfold(1, window, 1)[:, n_sinks + 1:]  # (batch, seq − size, window)
    if n_sinks:
        head = tokens[:, None, :n_sinks].expand(b, later.shape[1], n_sinks)
        later = torch.cat((head, later), dim=2)
    last = model(later.reshape(-1, size))[:, -1]  # each kept set's last position
    return torch.cat((first, last.view(b, seq - size, -1)), dim=1)


def method_logits(model: ModernGPT, tokens: torch.Tensor, method: str, window: int,
                  n_sinks: int = 4) -> torch.Tensor:
    """Logits ``(batch, seq, vocab)`` of ``tokens`` by one of :data:`METHODS` (chapter 14):
    ``"window"`` (:func:`streaming_logits` without sinks), ``"sinks"`` (with ``n_sinks``) or
    ``"recompute"`` (:func:`recompute_logits` of the same kept tokens, ``n_sinks`` and
    ``window``: what the rolling cache with sinks approximates)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}")
    if method == "recompute":
        return recompute_logits(model, tokens, window, n_sinks)
    return streaming_logits(model, tokens, window, n_sinks if method == "sinks" else 0)


def position_losses(model: ModernGPT, tokens: torch.Tensor, method: str, window: int,
                    n_sinks: int = 4) -> np.ndarray:
    """The next-token loss at each position, nats, averaged over the batch: ``(seq − 1,)``,
    entry ``t`` the loss of predicting token ``t + 1`` from :func:`method_logits` (chapter 14)."""
    logits = method_logits(model, tokens, method, window, n_sinks)
    loss = torch.nn.functional.cross_entropy(
        logits[:, :-1].transpose(1, 2).double(), tokens[:, 1:], reduction="none")
    return loss.mean(0).numpy()
