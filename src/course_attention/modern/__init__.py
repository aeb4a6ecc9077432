"""A modern decoder, as Llama and Qwen3 build it: RMSNorm, SwiGLU, ``rotate_half`` RoPE, GQA and
QK-norm, with a KV cache (chapter 12).

Introduced in chapter 12. Chapter 8's GPT is GPT-2 (2019); the open models of 2024–2026 keep its
shape (pre-norm blocks, a residual stream, causal attention) and change the parts:

- **RMSNorm** instead of LayerNorm: divide by the root mean square, subtract no mean, add no bias;
- **SwiGLU** instead of a GELU MLP: ``down(silu(gate(x)) · up(x))``, three matrices, no biases;
- **rotary positions** (chapter 10) instead of a learned table, paired by *halves*
  (``rotate_half``: feature ``i`` with ``i + d/2``) rather than neighbours;
- **grouped-query attention** (chapter 11): ``n_kv_heads`` key/value heads, each shared by a
  group of query heads;
- **QK-norm** (Qwen3): an RMSNorm over each head's query and key, before the rotation.

:class:`ModernGPT` computes exactly what Hugging Face's ``LlamaForCausalLM`` and
``Qwen3ForCausalLM`` compute with ``attn_implementation="eager"``, including where they leave the
model's precision: the norm's statistics, the rotation angles and the softmax in float32
(:mod:`course_attention.modern.hf` converts weights both ways and proves it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = [
    "ModernConfig",
    "rms_norm",
    "RMSNorm",
    "SwiGLU",
    "rotate_half",
    "rope_cos_sin",
    "apply_rope",
    "halves_order",
    "repeat_kv",
    "check_tokens",
    "greedy_with_cache",
    "ModernAttention",
    "ModernBlock",
    "ModernCache",
    "ModernGPT",
]


def _positive(**values: int) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={v!r}")


@dataclass(frozen=True)
class ModernConfig:
    """The shape of a :class:`ModernGPT` (chapter 12), in Hugging Face's terms where they differ.

    ``d_head`` defaults to ``d_model // n_heads`` (Qwen3 sets it on its own:
    ``n_heads · d_head`` need not be ``d_model``); ``d_ff`` is SwiGLU's hidden width
    (``intermediate_size``); ``context`` is ``max_position_embeddings`` (RoPE has no table: it
    only bounds generation); ``rope_theta`` the rotation base; ``qk_norm`` Qwen3's norms of
    queries and keys; ``tied``: the output layer is the embedding (``tie_word_embeddings``).
    """

    vocab_size: int = 96
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    d_head: int | None = None
    d_ff: int = 176
    context: int = 256
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6
    qk_norm: bool = False
    tied: bool = False
    attention_bias: bool = False
    #: Chapter 14's options (all off — Llama and Qwen3). ``sinks``: gpt-oss's learned sink logit,
    #: one per head; ``softcap``: Gemma 2's ``attn_logit_softcapping``, ``softcap · tanh(s /
    #: softcap)`` on every score; ``sliding_window``: how many keys (itself included) a query
    #: of a ``"sliding_attention"`` layer sees; ``layer_types``: one of ``"full_attention"``,
    #: ``"sliding_attention"`` per layer (``None``: all full), Hugging Face's names.
    sinks: bool = False
    softcap: float | None = None
    sliding_window: int | None = None
    layer_types: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _positive(vocab_size=self.vocab_size, d_model=self.d_model, n_layers=self.n_layers,
                  n_heads=self.n_heads, n_kv_heads=self.n_kv_heads, d_ff=self.d_ff,
                  context=self.context)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_kv_heads={self.n_kv_heads} must divide n_heads={self.n_heads}: each "
                "key/value head serves a group of n_heads / n_kv_heads query heads"
            )
        if self.d_head is None and self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not a multiple of n_heads="
                             f"{self.n_heads}: give d_head")
        if self.head_dim % 2:
            raise ValueError(f"d_head={self.head_dim} must be even: RoPE turns pairs")
        if self.softcap is not None and not self.softcap > 0:
            raise ValueError(f"softcap must be positive (or None); got {self.softcap}")
        if self.sliding_window is not None:
            _positive(sliding_window=self.sliding_window)
        if self.layer_types is not None:
            kinds = ("full_attention", "sliding_attention")
            if len(self.layer_types) != self.n_layers or set(self.layer_types) - set(kinds):
                raise ValueError(f"layer_types must name one of {kinds} for each of the "
                                 f"{self.n_layers} layers; got {self.layer_types}")
            if "sliding_attention" in self.layer_types and self.sliding_window is None:
                raise ValueError("a sliding_attention layer needs sliding_window")
        if not self.rope_theta > 1 or not self.norm_eps > 0:
            raise ValueError(f"need rope_theta > 1 and norm_eps > 0; got {self.rope_theta}, "
                             f"{self.norm_eps}")

    @property
    def head_dim(self) -> int:
        """The width of each head, ``d_head``, or ``d_model // n_heads`` when it is not given."""
        return self.d_model // self.n_heads if self.d_head is None else self.d_head

    def window_of(self, layer: int) -> int | None:
        """How many keys a query of ``layer`` sees (``sliding_window``), or ``None`` when the
        layer is full (chapter 14)."""
        kind = "full_attention" if self.layer_types is None else self.layer_types[layer]
        return self.sliding_window if kind == "sliding_attention" else None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
             float32: bool = True) -> torch.Tensor:
    """``weight · x / sqrt(mean(x²) + eps)`` over the last axis: ``(..., d) → (..., d)``.

    Introduced in chapter 12. Unlike LayerNorm it subtracts no mean and adds no bias: for a
    row whose mean is 0 the two agree. With ``float32`` (Hugging Face's Llama and Qwen3) the
    statistics and the division are computed in float32 and the result cast back to ``x``'s
    dtype before the weight: more precise than bfloat16, less than float64.
    """
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"weight {tuple(weight.shape)} must match x's last axis "
                         f"{tuple(x.shape[-1:])}")
    dtype = x.dtype
    h = x.to(torch.float32) if float32 else x
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(dtype)


class RMSNorm(torch.nn.Module):
    """:func:`rms_norm` with a learned weight (ones at first): ``(..., d) → (..., d)``.
    Introduced in chapter 12."""

    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


class SwiGLU(torch.nn.Module):
    """The gated feed-forward network of Llama and Qwen3: ``down(silu(gate(x)) · up(x))``,
    ``(..., d_model) → (..., d_model)`` through ``d_ff`` hidden units, no biases. Introduced in
    chapter 12."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.gate_proj = torch.nn.Linear(d_model, d_ff, bias=False)
        self.up_proj = torch.nn.Linear(d_model, d_ff, bias=False)
        self.down_proj = torch.nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``[x₁, x₂] → [−x₂, x₁]`` on the last axis ``(..., d)``, halves of ``d/2``: the partner of
    feature ``i`` is ``i + d/2`` (chapter 12; chapter 10 paired neighbours ``2i, 2i + 1``)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_cos_sin(positions: torch.Tensor, d_head: int, theta: float = 10000.0,
                 dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """The cosines and sines of rotary positions, ``(seq, d_head)`` each, halves layout.

    Introduced in chapter 12. Pair ``i`` (features ``i`` and ``i + d/2``) turns by
    ``position · theta^(−2i/d)``; both halves hold the same angle. As Hugging Face computes
    them: frequencies and angles in float32, then cast to ``dtype``.
    """
    from ..rope_scaling import inverse_frequencies

    if positions.dim() != 1:
        raise ValueError(f"positions must have shape (seq,); got {tuple(positions.shape)}")
    freqs = positions.float()[:, None] * inverse_frequencies(d_head, theta)  # (seq, d/2)
    angles = torch.cat((freqs, freqs), dim=-1)  # (seq, d)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(batch, heads, seq, d_head)`` by :func:`rope_cos_sin`'s ``(seq, d_head)``:
    ``x · cos + rotate_half(x) · sin``. Introduced in chapter 12."""
    return x * cos + rotate_half(x) * sin


def halves_order(d: int) -> torch.Tensor:
    """``(d,)``: the order of features that turns neighbour pairs into halves pairs.

    Introduced in chapter 12. Feature ``2i`` goes to place ``i``, feature ``2i + 1`` to place
    ``i + d/2``: with ``W_q`` and ``W_k``'s output rows taken in this order, chapter 10's
    rotation (pairs ``2i, 2i + 1``) becomes Llama's (pairs ``i, i + d/2``), and every score
    ``q · k`` stays the same (the same permutation of both vectors).
    """
    _positive(d=d)
    if d % 2:
        raise ValueError(f"d must be even; got {d}")
    return torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """``(batch, n_kv_heads, seq, d_head) → (batch, n_kv_heads · n_rep, seq, d_head)``: each
    key/value head repeated next to itself, as chapter 11's ``grouped_query.repeat_kv``."""
    if x.dim() != 4 or n_rep < 1:
        raise ValueError(f"need x (batch, n_kv_heads, seq, d_head) and n_rep ≥ 1; got "
                         f"{tuple(x.shape)}, {n_rep}")
    b, h, s, d = x.shape
    return x[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


def check_tokens(tokens: torch.Tensor, start: int, vocab_size: int, context: int) -> None:
    """Refuse, naming the fault, token ids ``(batch, seq)`` that a decoder of ``vocab_size``
    ids and ``context`` positions cannot read after ``start`` cached ones (chapters 12-13)."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
        shape = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens)
        raise ValueError(f"tokens must be an integer tensor (batch, seq); got {shape}")
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(f"token ids must lie in 0 … {vocab_size - 1}; got "
                         f"{int(tokens.min())} … {int(tokens.max())}")
    if start + tokens.shape[1] > context:
        raise ValueError(f"{start} cached + {tokens.shape[1]} new positions exceed the "
                         f"context of {context}")


@torch.no_grad()
def greedy_with_cache(model: torch.nn.Module, prompt: torch.Tensor, n_new: int,
                      **step_options: bool) -> torch.Tensor:
    """``n_new`` greedy ids ``(n_new,)`` after ``prompt`` ``(prompt_len,)`` from a decoder with
    ``new_cache()`` and ``step(tokens, cache, **step_options)``: the prompt once, then one token
    a step (chapters 12-13)."""
    _positive(n_new=n_new)
    device = next(model.parameters()).device
    ids = torch.as_tensor(prompt, dtype=torch.long).reshape(1, -1).to(device)
    if ids.shape[1] < 1:
        raise ValueError("the prompt needs at least one token")
    cache, new = model.new_cache(), []
    logits = model.step(ids, cache, **step_options)
    for _ in range(n_new):
        new.append(int(logits[0, -1].argmax()))
        if len(new) < n_new:
            logits = model.step(torch.tensor([[new[-1]]], device=device), cache, **step_options)
    return torch.tensor(new)


class ModernCache:
    """Every layer's keys (rotated) and values, ``(batch, n_kv_heads, length, d_head)``, as
    Hugging Face's ``DynamicCache`` keeps them: before :func:`repeat_kv`, so GQA caches
    ``n_kv_heads`` heads, not ``n_heads``. Introduced in chapter 12."""

    def __init__(self, n_layers: int):
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    @property
    def length(self) -> int:
        """Positions cached (those of layer 0)."""
        return 0 if self.keys[0] is None else int(self.keys[0].shape[2])

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``n`` new keys and values ``(batch, n_kv_heads, n, d_head)`` to ``layer``'s;
        return all of them (``Cache.update``)."""
        if self.keys[layer] is not None:
            k = torch.cat((self.keys[layer], k), dim=2)
            v = torch.cat((self.values[layer], v), dim=2)
        self.keys[layer], self.values[layer] = k, v
        return k, v


class ModernAttention(torch.nn.Module):
    """Causal grouped-query attention with QK-norm (optional) and ``rotate_half`` RoPE.

    Introduced in chapter 12. ``(batch, seq, d_model) → (batch, seq, d_model)``; the names of
    the weights are Hugging Face's (``q_proj`` …, ``q_norm``, ``k_norm``). Scores in the
    model's dtype, softmax in float32 (Hugging Face's eager attention), then back.

    Chapter 14's options, off unless the config sets them: a learned sink logit per head
    (``sinks``, gpt-oss: it joins each softmax's denominator and reads no value; the softmax is
    then computed in the model's dtype, as gpt-oss's), soft-capped scores (``softcap``, Gemma 2)
    and a sliding window (``window``: how many keys, itself included, each query sees).
    """

    def __init__(self, config: ModernConfig, layer: int = 0):
        super().__init__()
        c, dh = config, config.head_dim
        self.n_heads, self.n_kv_heads, self.d_head = c.n_heads, c.n_kv_heads, dh
        self.q_proj = torch.nn.Linear(c.d_model, c.n_heads * dh, bias=c.attention_bias)
        self.k_proj = torch.nn.Linear(c.d_model, c.n_kv_heads * dh, bias=c.attention_bias)
        self.v_proj = torch.nn.Linear(c.d_model, c.n_kv_heads * dh, bias=c.attention_bias)
        self.o_proj = torch.nn.Linear(c.n_heads * dh, c.d_model, bias=c.attention_bias)
        self.q_norm = RMSNorm(dh, c.norm_eps) if c.qk_norm else None
        self.k_norm = RMSNorm(dh, c.norm_eps) if c.qk_norm else None
        self.sinks = torch.nn.Parameter(torch.zeros(c.n_heads)) if c.sinks else None
        self.softcap = c.softcap
        self.window = c.window_of(layer)
        #: ``None`` (the default): the layer is unchanged. Otherwise a function of the masked
        #: scores ``(batch, heads, n, past + n)`` applied before the softmax (chapter 13's
        #: ``sparse.only_top_k`` keeps each query's top-k keys with it).
        self.score_filter: Callable[[torch.Tensor], torch.Tensor] | None = None

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries ``(batch, heads, n, d_head)``, keys and values ``(batch, n_kv_heads, n,
        d_head)`` of ``x`` ``(batch, n, d_model)``, after QK-norm, before the rotation."""
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.n_heads, self.d_head)  # (batch, seq, heads, d_head)
        k = self.k_proj(x).view(b, n, self.n_kv_heads, self.d_head)
        v = self.v_proj(x).view(b, n, self.n_kv_heads, self.d_head).transpose(1, 2)
        if self.q_norm is not None:  # QK-norm: each head's vector, before the rotation
            q, k = self.q_norm(q), self.k_norm(k)
        return q.transpose(1, 2), k.transpose(1, 2), v

    def raw_scores(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """``q · k / √d_head`` ``(batch, heads, n, m)``, soft-capped when the layer caps, of
        rotated queries ``(batch, heads, n, d_head)`` and keys ``(batch, n_kv_heads, m,
        d_head)``; no mask yet."""
        k = repeat_kv(k, self.n_heads // self.n_kv_heads)
        scores = (q @ k.transpose(2, 3)) * self.d_head**-0.5
        if self.softcap is not None:  # Gemma 2: before the mask (tanh(-inf) would be -1)
            scores = self.softcap * torch.tanh(scores / self.softcap)
        return scores

    def visible(self, n: int, m: int) -> torch.Tensor:
        """``(n, m)`` bool, True = may attend: the last ``n`` of ``m`` positions as queries,
        causal, and inside the window when the layer slides."""
        past = m - n
        t = torch.arange(past, m)[:, None]
        j = torch.arange(m)[None, :]
        keep = j <= t
        return keep & (j > t - self.window) if self.window is not None else keep

    def attend(self, scores: torch.Tensor, visible: torch.Tensor, v: torch.Tensor
               ) -> torch.Tensor:
        """Mask ``scores`` ``(batch, heads, n, m)`` where ``visible`` ``(n, m)`` (or
        broadcastable) is False, take the softmax (with the sink logit, if any) and read values
        ``(batch, n_kv_heads, m, d_head)``: the output ``(batch, n, d_model)``, after ``o_proj``."""
        scores = scores.masked_fill(~visible, float("-inf"))
        if self.score_filter is not None:
            scores = self.score_filter(scores)
        if self.sinks is not None:  # gpt-oss: one more column per row, dropped after the softmax
            sink = self.sinks.to(scores.dtype).reshape(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
            weights = torch.softmax(torch.cat((scores, sink), dim=-1), dim=-1)[..., :-1]
        else:
            weights = torch.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        v = repeat_kv(v, self.n_heads // self.n_kv_heads)
        b, _, n, _ = weights.shape
        out = (weights @ v).transpose(1, 2).reshape(b, n, self.n_heads * self.d_head)
        return self.o_proj(out)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: ModernCache | None = None, layer: int = 0) -> torch.Tensor:
        q, k, v = self.project(x)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.update(layer, k, v)  # (batch, n_kv_heads, past + n, d_head)
        return self.attend(self.raw_scores(q, k), self.visible(x.shape[1], k.shape[2]), v)


class ModernBlock(torch.nn.Module):
    """Pre-norm: ``x + attn(norm1(x))``, then ``+ mlp(norm2(·))``, RMSNorm and SwiGLU.
    Introduced in chapter 12 (Hugging Face: ``input_layernorm``, ``post_attention_layernorm``)."""

    def __init__(self, config: ModernConfig, layer: int = 0):
        super().__init__()
        self.norm1 = RMSNorm(config.d_model, config.norm_eps)
        self.attn = ModernAttention(config, layer)
        self.norm2 = RMSNorm(config.d_model, config.norm_eps)
        self.mlp = SwiGLU(config.d_model, config.d_ff)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: ModernCache | None = None, layer: int = 0) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), cos, sin, cache, layer)
        return x + self.mlp(self.norm2(x))


class ModernGPT(torch.nn.Module):
    """A Llama/Qwen3-style language model (chapter 12).

    Introduced in chapter 12. Token embedding (no position table: RoPE turns queries and keys
    inside attention), ``n_layers`` :class:`ModernBlock` layers, a final RMSNorm and the output
    layer (no bias; the embedding itself when ``config.tied``). ``forward(tokens (batch, seq))
    → logits (batch, seq, vocab)``; :meth:`step` runs new tokens against a :class:`ModernCache`.
    """

    def __init__(self, config: ModernConfig):
        super().__init__()
        self.config = config
        self.embed = torch.nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = torch.nn.ModuleList(ModernBlock(config, i) for i in range(config.n_layers))
        self.norm = RMSNorm(config.d_model, config.norm_eps)
        self.out = (None if config.tied
                    else torch.nn.Linear(config.d_model, config.vocab_size, bias=False))
        for m in self.modules():  # Hugging Face's initialisation: normal(0, 0.02), zero biases
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, torch.nn.Linear) and m.bias is not None:
                torch.nn.init.zeros_(m.bias)

    def _run(self, tokens: torch.Tensor, cache: ModernCache | None, start: int) -> torch.Tensor:
        check_tokens(tokens, start, self.config.vocab_size, self.config.context)
        x = self.embed(tokens)
        positions = torch.arange(start, start + tokens.shape[1])
        cos, sin = rope_cos_sin(positions, self.config.head_dim, self.config.rope_theta, x.dtype)
        for layer, block in enumerate(self.blocks):
            x = block(x, cos, sin, cache, layer)
        x = self.norm(x)
        return x @ self.embed.weight.T if self.out is None else self.out(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``(batch, seq)`` → logits ``(batch, seq, vocab)``, all positions at once."""
        return self._run(tokens, None, 0)

    def new_cache(self) -> ModernCache:
        """An empty :class:`ModernCache` for this model."""
        return ModernCache(self.config.n_layers)

    def step(self, tokens: torch.Tensor, cache: ModernCache) -> torch.Tensor:
        """Logits ``(batch, n, vocab)`` of ``n`` new tokens ``(batch, n)`` at positions
        ``cache.length …``, equal to ``forward(all tokens)[:, -n:]``; the cache grows by ``n``."""
        if len(cache.keys) != self.config.n_layers:
            raise ValueError(f"the cache has {len(cache.keys)} layers, the model "
                             f"{self.config.n_layers}")
        return self._run(tokens, cache, cache.length)

    @torch.no_grad()
    def generate(self, prompt: torch.Tensor, n_new: int) -> torch.Tensor:
        """Greedy decoding with the cache: ``n_new`` ids ``(n_new,)`` after ``prompt``
        ``(prompt_len,)`` (the prompt once, then one token a step)."""
        return greedy_with_cache(self, prompt, n_new)
