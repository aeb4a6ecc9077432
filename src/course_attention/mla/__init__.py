"""Multi-head latent attention (MLA), as DeepSeek-V2 §2.1 builds it and DeepSeek-V3 keeps it
(chapter 13).

Introduced in chapter 13. Chapter 11 shrank the KV cache by sharing key/value heads (MQA, GQA).
MLA keeps one head per query head and caches a low-rank *latent* instead:

- a down-projection ``c_KV = RMSNorm(W_DKV x)`` of width ``d_c`` (``kv_lora_rank``), cached;
- up-projections ``k_nope = W_UK c_KV`` and ``v = W_UV c_KV``: every head's keys (without
  position) and values, rebuilt from the latent;
- the query's own low-rank path ``q = W_UQ RMSNorm(W_DQ x)`` of width ``d_cq``
  (``q_lora_rank``; ``None``: one full-rank ``q_proj``), which saves activations in training;
- a *decoupled* rotary key ``k_rope = RoPE(W_KR x)`` of width ``d_rope``, shared by all heads
  and cached, beside each head's rotary query part: RoPE between ``W_UK`` and ``c_KV`` would
  depend on the key's position, and ``W_UK`` could no longer be absorbed (:func:`rope_absorption`);
- a cache of ``(c_KV, k_rope)`` per token and layer: ``n_layers · (d_c + d_rope)`` numbers.

At decode time ``W_UK`` folds into the query side and ``W_UV`` into ``W_O``
(:func:`absorbed_weights`); attention then reads the latents directly and never rebuilds keys.
:class:`MLAGPT` is chapter 12's decoder (RMSNorm pre-norm, SwiGLU, final norm) with this
attention; :mod:`course_attention.mla.hf` proves it equal to Hugging Face's
``DeepseekV3ForCausalLM`` with dense MLPs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from ..modern import RMSNorm, SwiGLU, apply_rope, check_tokens, greedy_with_cache, rope_cos_sin
from ..rope_scaling import inverse_frequencies
from .published import PUBLISHED, PublishedConfig, cache_bytes_per_token, published_table

__all__ = [
    "LATENT_NORM_EPS",
    "MLAConfig",
    "MLACache",
    "MultiHeadLatentAttention",
    "MLABlock",
    "MLAGPT",
    "absorbed_weights",
    "absorption_error",
    "rope_absorption",
    "decode_cost",
    "PUBLISHED",
    "PublishedConfig",
    "cache_bytes_per_token",
    "published_table",
]

#: The ε of the two norms inside attention (``q_a_layernorm``, ``kv_a_layernorm``): DeepSeek's
#: code and Hugging Face's build them with the default ``1e-6``, not the config's ``rms_norm_eps``.
LATENT_NORM_EPS = 1e-6


def _positive(**values: int) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={v!r}")


@dataclass(frozen=True)
class MLAConfig:
    """The shape of an :class:`MLAGPT` (chapter 13), Hugging Face's names in brackets.

    ``d_c`` the latent width (``kv_lora_rank``); ``d_cq`` the query's latent width
    (``q_lora_rank``; ``None``: a full-rank ``q_proj``); ``d_nope`` each head's key/query width
    without position (``qk_nope_head_dim``); ``d_rope`` the rotary width, the shared key's and
    each query head's (``qk_rope_head_dim``); ``d_v`` each head's value width (``v_head_dim``);
    ``d_ff`` SwiGLU's hidden width; ``context`` bounds generation; ``norm_eps`` the blocks' norms.
    """

    vocab_size: int = 96
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_c: int = 16
    d_cq: int | None = None
    d_nope: int = 16
    d_rope: int = 8
    d_v: int = 16
    d_ff: int = 176
    context: int = 256
    rope_theta: float = 10000.0
    norm_eps: float = 1e-6

    def __post_init__(self) -> None:
        _positive(vocab_size=self.vocab_size, d_model=self.d_model, n_layers=self.n_layers,
                  n_heads=self.n_heads, d_c=self.d_c, d_nope=self.d_nope, d_rope=self.d_rope,
                  d_v=self.d_v, d_ff=self.d_ff, context=self.context)
        if self.d_cq is not None:
            _positive(d_cq=self.d_cq)
        if self.d_rope % 2:
            raise ValueError(f"d_rope={self.d_rope} must be even: RoPE turns pairs")
        if not self.rope_theta > 1 or not self.norm_eps > 0:
            raise ValueError(f"need rope_theta > 1 and norm_eps > 0; got rope_theta="
                             f"{self.rope_theta}, norm_eps={self.norm_eps}")

    @property
    def d_qk(self) -> int:
        """Each head's query/key width ``d_nope + d_rope`` (``qk_head_dim``)."""
        return self.d_nope + self.d_rope

    @property
    def cache_numbers_per_token(self) -> int:
        """The numbers cached per token, ``n_layers · (d_c + d_rope)`` (the latent and the rotary
        key of every layer)."""
        return self.n_layers * (self.d_c + self.d_rope)


class MLACache:
    """Per layer the latents ``c_kv`` ``(batch, length, d_c)`` and the rotated shared keys
    ``k_rope`` ``(batch, length, d_rope)``: all MLA caches. Introduced in chapter 13."""

    def __init__(self, n_layers: int):
        _positive(n_layers=n_layers)
        self.c_kv: list[torch.Tensor | None] = [None] * n_layers
        self.k_rope: list[torch.Tensor | None] = [None] * n_layers

    @property
    def length(self) -> int:
        """Positions cached (those of layer 0)."""
        return 0 if self.c_kv[0] is None else int(self.c_kv[0].shape[1])

    @property
    def nbytes(self) -> int:
        """The bytes held in all layers, ``batch · length · n_layers · (d_c + d_rope) · bytes``."""
        return sum(t.numel() * t.element_size() for t in self.c_kv + self.k_rope
                   if t is not None)

    def update(self, layer: int, c_kv: torch.Tensor, k_rope: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``n`` new latents ``(batch, n, d_c)`` and rotary keys ``(batch, n, d_rope)``
        to ``layer``'s; return all of them."""
        if self.c_kv[layer] is not None:
            c_kv = torch.cat((self.c_kv[layer], c_kv), dim=1)
            k_rope = torch.cat((self.k_rope[layer], k_rope), dim=1)
        self.c_kv[layer], self.k_rope[layer] = c_kv, k_rope
        return c_kv, k_rope


def _softmax(scores: torch.Tensor, past: int,
             score_filter: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
    """Causal softmax of ``(batch, heads, n, past + n)`` scores: float32 inside, as Hugging
    Face's eager attention, then back to the scores' dtype. ``score_filter`` (chapter 13's
    :func:`course_attention.sparse.only_top_k`) edits the masked scores first."""
    n, t = scores.shape[-2:]
    future = torch.ones(n, t, dtype=torch.bool, device=scores.device).triu(past + 1)
    scores = scores.masked_fill(future, float("-inf"))
    if score_filter is not None:
        scores = score_filter(scores)
    return torch.softmax(scores, dim=-1, dtype=torch.float32).to(scores.dtype)


class MultiHeadLatentAttention(torch.nn.Module):
    """Causal multi-head latent attention, ``(batch, seq, d_model) → (batch, seq, d_model)``.

    Introduced in chapter 13. Weights under Hugging Face's names: ``q_proj`` (``d_cq=None``) or
    ``q_a_proj``, ``q_a_layernorm``, ``q_b_proj``; ``kv_a_proj_with_mqa`` (``W_DKV`` and
    ``W_KR`` stacked: ``d_c + d_rope`` rows), ``kv_a_layernorm``, ``kv_b_proj`` (``W_UK`` and
    ``W_UV``, per head ``d_nope`` key rows then ``d_v`` value rows), ``o_proj``. Each head's
    query is ``d_nope`` features then ``d_rope`` rotary ones; scores scaled by
    ``(d_nope + d_rope)^(-1/2)``. ``cos``, ``sin``: :func:`~course_attention.modern.rope_cos_sin`
    of width ``d_rope`` (``rotate_half`` layout; :mod:`~course_attention.mla.hf` permutes
    DeepSeek's interleaved rows into it).

    ``absorbed=False`` rebuilds every cached position's keys and values from its latent;
    ``absorbed=True`` uses :func:`absorbed_weights` and attends over the latents themselves.
    """

    def __init__(self, config: MLAConfig):
        super().__init__()
        c = self.config = config
        q_out = c.n_heads * c.d_qk
        if c.d_cq is None:
            self.q_proj = torch.nn.Linear(c.d_model, q_out, bias=False)
        else:
            self.q_a_proj = torch.nn.Linear(c.d_model, c.d_cq, bias=False)
            self.q_a_layernorm = RMSNorm(c.d_cq, LATENT_NORM_EPS)
            self.q_b_proj = torch.nn.Linear(c.d_cq, q_out, bias=False)
        self.kv_a_proj_with_mqa = torch.nn.Linear(c.d_model, c.d_c + c.d_rope, bias=False)
        self.kv_a_layernorm = RMSNorm(c.d_c, LATENT_NORM_EPS)
        self.kv_b_proj = torch.nn.Linear(c.d_c, c.n_heads * (c.d_nope + c.d_v), bias=False)
        self.o_proj = torch.nn.Linear(c.n_heads * c.d_v, c.d_model, bias=False)
        self.scale = c.d_qk ** -0.5
        #: Nothing changes while it is None (the default); otherwise a function of the masked
        #: scores ``(batch, heads, n, past + n)``, applied before the softmax
        #: (:func:`course_attention.sparse.only_top_k`).
        self.score_filter: Callable[[torch.Tensor], torch.Tensor] | None = None

    def query_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the query's last projection reads: ``RMSNorm(W_DQ x)`` ``(..., d_cq)``, or ``x``
        itself when the query is full-rank."""
        return x if self.config.d_cq is None else self.q_a_layernorm(self.q_a_proj(x))

    def query_last(self) -> torch.nn.Linear:
        """The query's last projection, ``W_UQ`` (``q_b_proj``) or ``q_proj``."""
        return self.q_proj if self.config.d_cq is None else self.q_b_proj

    def latent(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """What a token caches: ``c_kv`` ``(batch, seq, d_c)`` (normalised) and the rotated
        shared key ``k_rope`` ``(batch, seq, d_rope)``."""
        c = self.config
        compressed = self.kv_a_proj_with_mqa(x)
        c_kv = self.kv_a_layernorm(compressed[..., :c.d_c])
        return c_kv, apply_rope(compressed[..., c.d_c:], cos, sin)

    def expand(self, c_kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every head's keys without position ``(batch, heads, length, d_nope)`` and values
        ``(batch, heads, length, d_v)``, rebuilt from latents ``(batch, length, d_c)``."""
        c = self.config
        b, t, _ = c_kv.shape
        kv = self.kv_b_proj(c_kv).view(b, t, c.n_heads, c.d_nope + c.d_v).transpose(1, 2)
        return kv[..., :c.d_nope], kv[..., c.d_nope:]

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: MLACache | None = None, layer: int = 0,
                absorbed: bool = False) -> torch.Tensor:
        c = self.config
        if x.dim() != 3 or x.shape[-1] != c.d_model:
            raise ValueError(f"x must have shape (batch, seq, {c.d_model}); got {tuple(x.shape)}")
        if cos.shape != (x.shape[1], c.d_rope) or sin.shape != cos.shape:
            raise ValueError(f"cos and sin must have shape (seq, d_rope) = ({x.shape[1]}, "
                             f"{c.d_rope}); got {tuple(cos.shape)}, {tuple(sin.shape)}")
        b, n, _ = x.shape
        q_in = self.query_input(x)
        c_kv, k_rope = self.latent(x, cos, sin)
        if cache is not None:
            c_kv, k_rope = cache.update(layer, c_kv, k_rope)  # (batch, past + n, ·)
        past = c_kv.shape[1] - n
        w_qr = self.query_last().weight.view(c.n_heads, c.d_qk, -1)[:, c.d_nope:]
        if not absorbed:
            q = self.query_last()(q_in).view(b, n, c.n_heads, c.d_qk).transpose(1, 2)
            q = torch.cat((q[..., :c.d_nope], apply_rope(q[..., c.d_nope:], cos, sin)), -1)
            k_nope, v = self.expand(c_kv)
            k = torch.cat((k_nope, k_rope[:, None].expand(-1, c.n_heads, -1, -1)), dim=-1)
            weights = _softmax((q @ k.transpose(2, 3)) * self.scale, past, self.score_filter)
            out = (weights @ v).transpose(1, 2).reshape(b, n, c.n_heads * c.d_v)
            return self.o_proj(out)
        w_qc, w_oc = absorbed_weights(self)
        q_c = torch.einsum("bni,hci->bhnc", q_in, w_qc)  # (batch, heads, n, d_c)
        q_r = apply_rope(torch.einsum("bni,hri->bhnr", q_in, w_qr), cos, sin)
        scores = q_c @ c_kv[:, None].transpose(2, 3) + q_r @ k_rope[:, None].transpose(2, 3)
        weights = _softmax(scores * self.scale, past, self.score_filter)  # (batch, heads, n, ·)
        o_c = weights @ c_kv[:, None]  # (batch, heads, n, d_c): latents, weighted
        return torch.einsum("bhnc,mhc->bnm", o_c, w_oc)


def absorbed_weights(attn: MultiHeadLatentAttention) -> tuple[torch.Tensor, torch.Tensor]:
    """``W_UK`` folded into the query side and ``W_UV`` into ``W_O`` (DeepSeek-V2 §2.1.2).

    Introduced in chapter 13. Returns ``W_QC`` ``(heads, d_c, d_in)`` = ``W_UK[h]ᵀ · W_UQ[h]``
    (``d_in``: ``d_cq``, or ``d_model`` for a full-rank query), so a head's non-rotary score is
    ``(W_QC[h] q_in) · c_KV``; and ``W_OC`` ``(d_model, heads, d_c)`` = ``W_O[:, h] · W_UV[h]``,
    so the output is ``Σ_h W_OC[:, h] (Σ_j a_hj c_KV,j)``. Neither depends on a position.
    """
    c = attn.config
    w_uq = attn.query_last().weight.view(c.n_heads, c.d_qk, -1)[:, :c.d_nope]  # (h, nope, in)
    w_ukv = attn.kv_b_proj.weight.view(c.n_heads, c.d_nope + c.d_v, c.d_c)
    w_uk, w_uv = w_ukv[:, :c.d_nope], w_ukv[:, c.d_nope:]  # (h, nope, d_c), (h, d_v, d_c)
    w_o = attn.o_proj.weight.view(c.d_model, c.n_heads, c.d_v)
    return (torch.einsum("hkc,hki->hci", w_uk, w_uq),
            torch.einsum("mhv,hvc->mhc", w_o, w_uv))


@torch.no_grad()
def absorption_error(attn: MultiHeadLatentAttention, x: torch.Tensor) -> float:
    """``max |naive − absorbed|`` of ``attn``'s outputs on ``x`` ``(batch, seq, d_model)``,
    causal, positions ``0 … seq − 1`` (chapter 13): near ``1e-16`` in float64."""
    cos, sin = rope_cos_sin(torch.arange(x.shape[1]), attn.config.d_rope,
                            attn.config.rope_theta, x.dtype)
    return float((attn(x, cos, sin) - attn(x, cos, sin, absorbed=True)).abs().max())


@torch.no_grad()
def rope_absorption(attn: MultiHeadLatentAttention, x: torch.Tensor, rotate: bool = True
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Why the rotary key is decoupled: the non-rotary scores of ``attn`` on ``x``
    ``(batch, seq, d_model)`` *if RoPE turned them too*, computed two ways (chapter 13).

    Returns ``(true, absorbed)``, ``(batch, heads, seq, seq)`` each. ``true``:
    ``(R_i W_UQ q_in,i) · (R_j W_UK c_j)``, the query and the rebuilt key each rotated by its own
    position (``R_i``: RoPE of width ``d_nope``). ``absorbed``: ``(W_QC q_in,i) · c_j`` with
    :func:`absorbed_weights`' one matrix. ``R_iᵀ R_j = R_{j−i}`` sits between ``W_UQ`` and
    ``W_UK`` and changes with ``j − i``: the two agree only where ``i = j``. ``rotate=False``
    (the control) leaves positions out, and they agree everywhere.
    """
    c = attn.config
    n = x.shape[1]
    q_in = attn.query_input(x)
    c_kv = attn.latent(x, *rope_cos_sin(torch.arange(n), c.d_rope, c.rope_theta, x.dtype))[0]
    q = attn.query_last()(q_in).view(x.shape[0], n, c.n_heads, c.d_qk).transpose(1, 2)
    q_nope, k_nope = q[..., :c.d_nope], attn.expand(c_kv)[0]
    if rotate:  # angles in float64, so that R_iᵀ R_i = I to rounding
        freqs = torch.arange(n, dtype=torch.float64)[:, None] * inverse_frequencies(
            c.d_nope, c.rope_theta, torch.float64)
        angles = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
        q_nope = apply_rope(q_nope, angles.cos(), angles.sin())
        k_nope = apply_rope(k_nope, angles.cos(), angles.sin())
    true = q_nope @ k_nope.transpose(2, 3)
    w_qc = absorbed_weights(attn)[0]
    absorbed = torch.einsum("bni,hci->bhnc", q_in, w_qc) @ c_kv[:, None].transpose(2, 3)
    return true, absorbed


def decode_cost(config: MLAConfig, length: int, bytes_per_number: int = 2) -> list[dict]:
    """Multiply-adds and cache of one decode step at ``length`` cached tokens, all layers, for
    each way to run MLA (chapter 13); the norms, RoPE, softmax and the MLP are left out.

    Rows: ``"expanded cache"`` (keys and values rebuilt once and cached per head, as
    transformers 4.57 does), ``"naive"`` (the latents cached, every key and value rebuilt at
    every step), ``"absorbed"`` (:func:`absorbed_weights`' folded matrices) and ``"absorbed,
    factored"`` (``W_UK`` and ``W_UV`` applied as their own products, as DeepSeek's inference
    code does: fewer multiply-adds when ``d_nope · (d_in + d_c) < d_in · d_c``). Each row:
    ``"form"``, ``"multiply_adds"``, ``"cache_numbers"``, ``"cache_bytes"``.
    """
    _positive(length=length, bytes_per_number=bytes_per_number)
    c, t = config, length
    h, d_in = c.n_heads, c.d_model if c.d_cq is None else c.d_cq
    q_down = 0 if c.d_cq is None else c.d_model * c.d_cq
    kv_down = c.d_model * (c.d_c + c.d_rope)
    q_rope = h * c.d_rope * d_in
    mha_attention = h * t * (c.d_qk + c.d_v)  # scores and weighted values, per head
    latent_attention = h * t * (c.d_c + c.d_rope) + h * t * c.d_c
    forms = {
        "expanded cache": (q_down + h * c.d_qk * d_in + kv_down + c.d_c * h * (c.d_nope + c.d_v)
                           + mha_attention + h * c.d_v * c.d_model,
                           h * (c.d_qk + c.d_v)),
        "naive": (q_down + h * c.d_qk * d_in + kv_down + t * c.d_c * h * (c.d_nope + c.d_v)
                  + mha_attention + h * c.d_v * c.d_model, c.d_c + c.d_rope),
        "absorbed": (q_down + h * c.d_c * d_in + q_rope + kv_down + latent_attention
                     + c.d_model * h * c.d_c, c.d_c + c.d_rope),
        "absorbed, factored": (q_down + h * c.d_nope * (d_in + c.d_c) + q_rope + kv_down
                               + latent_attention + h * c.d_c * c.d_v + h * c.d_v * c.d_model,
                               c.d_c + c.d_rope),
    }
    return [{"form": form, "multiply_adds": c.n_layers * work,
             "cache_numbers": c.n_layers * t * per, "cache_bytes":
             c.n_layers * t * per * bytes_per_number} for form, (work, per) in forms.items()]


class MLABlock(torch.nn.Module):
    """Chapter 12's pre-norm block with MLA: ``x + attn(norm1(x))``, then ``+ mlp(norm2(·))``.
    Introduced in chapter 13."""

    def __init__(self, config: MLAConfig):
        super().__init__()
        self.norm1 = RMSNorm(config.d_model, config.norm_eps)
        self.attn = MultiHeadLatentAttention(config)
        self.norm2 = RMSNorm(config.d_model, config.norm_eps)
        self.mlp = SwiGLU(config.d_model, config.d_ff)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                cache: MLACache | None = None, layer: int = 0,
                absorbed: bool = False) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), cos, sin, cache, layer, absorbed)
        return x + self.mlp(self.norm2(x))


class MLAGPT(torch.nn.Module):
    """A DeepSeek-V2/V3-style language model with dense MLPs (chapter 13).

    Introduced in chapter 13. Token embedding, ``n_layers`` :class:`MLABlock` layers, a final
    RMSNorm, an untied output layer. ``forward(tokens (batch, seq)) → logits (batch, seq,
    vocab)``; :meth:`step` runs new tokens against an :class:`MLACache` (``absorbed=True``: the
    absorbed attention). Trains like chapter 12's ``ModernGPT`` (``training.fit``).
    """

    def __init__(self, config: MLAConfig):
        super().__init__()
        if not isinstance(config, MLAConfig):
            raise ValueError(f"config must be an MLAConfig; got {type(config).__name__}")
        self.config = config
        self.embed = torch.nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = torch.nn.ModuleList(MLABlock(config) for _ in range(config.n_layers))
        self.norm = RMSNorm(config.d_model, config.norm_eps)
        self.out = torch.nn.Linear(config.d_model, config.vocab_size, bias=False)
        for m in self.modules():  # Hugging Face's initialisation: normal(0, 0.02)
            if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(m.weight, std=0.02)

    def _run(self, tokens: torch.Tensor, cache: MLACache | None, start: int,
             absorbed: bool = False) -> torch.Tensor:
        check_tokens(tokens, start, self.config.vocab_size, self.config.context)
        x = self.embed(tokens)
        positions = torch.arange(start, start + tokens.shape[1])
        cos, sin = rope_cos_sin(positions, self.config.d_rope, self.config.rope_theta, x.dtype)
        for layer, block in enumerate(self.blocks):
            x = block(x, cos.to(x.device), sin.to(x.device), cache, layer, absorbed)
        return self.out(self.norm(x))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``(batch, seq)`` → logits ``(batch, seq, vocab)``, all positions at once."""
        return self._run(tokens, None, 0)

    def new_cache(self) -> MLACache:
        """An empty :class:`MLACache` for this model."""
        return MLACache(self.config.n_layers)

    def step(self, tokens: torch.Tensor, cache: MLACache, absorbed: bool = False
             ) -> torch.Tensor:
        """Logits ``(batch, n, vocab)`` of ``n`` new tokens ``(batch, n)`` at positions
        ``cache.length …``, equal to ``forward(all tokens)[:, -n:]``; the cache grows by ``n``."""
        if not isinstance(cache, MLACache) or len(cache.c_kv) != self.config.n_layers:
            raise ValueError(f"cache must be an MLACache of {self.config.n_layers} layers; got "
                             f"{type(cache).__name__}")
        return self._run(tokens, cache, cache.length, absorbed)

    @torch.no_grad()
    def generate(self, prompt: torch.Tensor, n_new: int, absorbed: bool = False
                 ) -> torch.Tensor:
        """Greedy decoding with the cache: ``n_new`` ids ``(n_new,)`` after ``prompt``
        ``(prompt_len,)`` (the prompt once, then one token a step)."""
        return greedy_with_cache(self, prompt, n_new, absorbed=absorbed)
