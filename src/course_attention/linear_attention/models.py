"""A small causal stack whose token mixer, layer by layer, is softmax attention, linear
attention, DeltaNet or Gated DeltaNet (chapter 15's trained models and hybrids).

Introduced in chapter 15. ``embedding → L pre-norm blocks (mixer, then chapter 12's SwiGLU, each
after an RMSNorm, each added to the residual stream) → RMSNorm → head``. Every mixer projects to
``heads`` queries, keys and values of ``d_model / heads`` numbers (the same width for every
kind) and back; what differs is how the queries read the keys and values:

- ``"softmax"``: causal scaled dot-product attention, positions by chapter 12's rotary
  embedding (RoPE); its cache grows with the text;
- ``"linear"``: :func:`~course_attention.linear_attention.linear_attention` (Katharopoulos et
  al.: ``elu + 1`` features, each output divided by its normaliser), chunk form;
- ``"delta"``: :func:`~course_attention.linear_attention.delta_rule` (DeltaNet: queries and keys
  L2-normalised, ``β = sigmoid`` of a projection of the token), chunk form;
- ``"gated_delta"``: :func:`~course_attention.linear_attention.gated_delta_rule`, with the decay
  gate as Qwen3-Next computes it, ``g = −exp(A_log) · softplus(a + dt_bias)``.

Every mixer first runs its queries, keys and values through a short causal depthwise
convolution, as Qwen3-Next's and Kimi Linear's linear layers do (``conv`` taps; 0: none): each
channel mixes its last few positions, so a key can be written together with the value after it.
With a first recipe (300 steps at a rate of 3e-2) no kind learned recall without it, softmax
included; and unlike those models no SiLU follows it (linear attention learned recall faster
without). Layers are named one by one, ``layers=("linear", "linear", "linear", "softmax")``
being a 3:1 hybrid.

Every mixer's output projection starts small (:data:`OUT_SCALE` of PyTorch's default): the delta
rules normalise each head's output to unit size (Qwen3-Next's per-head RMSNorm), so at
initialisation they write noise of full size into the residual stream; with the default
initialisation the two-layer DeltaNet and Gated DeltaNet stayed on the plateau of the loss
``ln 16`` (recall below the context baseline) on most seeds, and four-layer stacks holding Gated
DeltaNet layers, the 3:1 hybrid included, fitted on no seed tried (recall 0.13–0.41 at 32 pairs
after chapter 15's 500 steps, against 0.73–0.89 with the small start).

Shapes: tokens ``(batch, seq)``, logits ``(batch, seq, vocab)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..modern import RMSNorm, SwiGLU, apply_rope, rms_norm, rope_cos_sin
from . import delta_rule, gated_delta_rule, linear_attention

__all__ = ["KINDS", "OUT_SCALE", "StackConfig", "Mixer", "Block", "MixerStack"]

#: The token mixers a layer may be.
KINDS: tuple[str, ...] = ("softmax", "linear", "delta", "gated_delta")
#: Every mixer's output projection starts at this fraction of PyTorch's default initialisation.
OUT_SCALE = 0.1


@dataclass(frozen=True)
class StackConfig:
    """A :class:`MixerStack`: ``vocab`` ids, width ``d_model`` in ``heads`` heads, one mixer of
    :data:`KINDS` per layer (``layers``), SwiGLU of ``d_ff`` hidden units, a causal convolution
    of ``conv`` taps before each linear-family mixer (0: none) and chunks of ``chunk_size``."""

    vocab: int
    layers: tuple[str, ...] = ("softmax", "softmax")
    d_model: int = 32
    heads: int = 2
    d_ff: int = 64
    conv: int = 4
    chunk_size: int = 64

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "heads", "d_ff", "chunk_size"):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, int) or x < 1:
                raise ValueError(f"{name} must be a positive integer; got {name}={x!r}")
        if isinstance(self.conv, bool) or not isinstance(self.conv, int) or self.conv < 0:
            raise ValueError(f"conv must be an integer ≥ 0; got conv={self.conv!r}")
        if self.d_model % self.heads or (self.d_model // self.heads) % 2:
            raise ValueError(f"heads={self.heads} must divide d_model={self.d_model} into an even "
                             f"head width")
        if not self.layers or any(k not in KINDS for k in self.layers):
            raise ValueError(f"layers must name at least one of {KINDS}; got {self.layers!r}")

    @property
    def head_dim(self) -> int:
        """``d_k = d_v = d_model / heads``."""
        return self.d_model // self.heads


def _causal_depthwise(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The causal depthwise convolution of ``x`` ``(batch, seq, channels)`` by ``weight``
    ``(channels, 1, taps)`` (a ``Conv1d(groups=channels)``'s): output ``t`` of channel ``c`` is
    ``Σ_i weight[c, 0, i] · x[t − taps + 1 + i, c]``, zero before the start. The same numbers as
    the padded ``Conv1d`` cut to ``seq`` outputs, as a few shifted products: PyTorch's depthwise
    kernel is slow to train on a CPU at the course's sizes (``benchmarks/linear_training.py``)."""
    taps, n = weight.shape[-1], x.shape[1]
    padded = torch.nn.functional.pad(x, (0, 0, taps - 1, 0))  # (batch, taps − 1 + seq, channels)
    return sum(padded[:, i:i + n] * weight[:, 0, i] for i in range(taps))


class Mixer(torch.nn.Module):
    """One token mixer of kind ``kind``: ``(batch, seq, d_model) → (batch, seq, d_model)``.
    Introduced in chapter 15."""

    def __init__(self, config: StackConfig, kind: str):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        self.kind, self.config = kind, config
        d, h = config.d_model, config.heads
        self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
        self.out = torch.nn.Linear(d, d, bias=False)
        with torch.no_grad():  # a small write to the residual stream at first (OUT_SCALE)
            self.out.weight.mul_(OUT_SCALE)
        self.conv = None
        if config.conv:  # holds the taps (PyTorch's initialisation); forward convolves with
            # _causal_depthwise, not by calling it
            self.conv = torch.nn.Conv1d(3 * d, 3 * d, config.conv, groups=3 * d, bias=False)
        if kind in ("delta", "gated_delta"):
            self.beta = torch.nn.Linear(d, h, bias=False)  # β = sigmoid(b)
            self.head_norm = torch.nn.Parameter(torch.ones(config.head_dim))
        if kind == "gated_delta":  # Qwen3-Next's decay gate
            self.decay = torch.nn.Linear(d, h, bias=False)  # a
            # FLA's initialisation (Qwen3-Next's reference kernels): A ~ U(0, 16), and
            # softplus(dt_bias) = dt, log-uniform in [0.001, 0.1]
            dt = torch.exp(torch.empty(h).uniform_(math.log(1e-3), math.log(0.1))).clamp(min=1e-4)
            self.dt_bias = torch.nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
            self.A_log = torch.nn.Parameter(torch.log(torch.empty(h).uniform_(1e-4, 16)))

    def log_decay(self, x: torch.Tensor) -> torch.Tensor:
        """A Gated DeltaNet mixer's gate ``g = −exp(A_log) · softplus(a + dt_bias)`` for its input
        ``x`` ``(batch, seq, d_model)``: ``(batch, seq, heads)``, each head's state multiplied by
        ``exp(g)`` before the token is written."""
        if self.kind != "gated_delta":
            raise ValueError(f"only a gated_delta mixer has a decay gate; this is {self.kind!r}")
        return -self.A_log.exp() * torch.nn.functional.softplus(self.decay(x) + self.dt_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        h, dh = self.config.heads, self.config.head_dim
        mixed = self.qkv(x)  # (b, n, 3d)
        if self.conv is not None:
            mixed = _causal_depthwise(mixed, self.conv.weight)
        q, k, v = (t.reshape(b, n, h, dh).transpose(1, 2) for t in mixed.split(d, dim=-1))
        size = self.config.chunk_size
        if self.kind == "softmax":
            cos, sin = rope_cos_sin(torch.arange(n), dh, dtype=x.dtype)
            o = torch.nn.functional.scaled_dot_product_attention(
                apply_rope(q, cos, sin), apply_rope(k, cos, sin), v, is_causal=True)
        elif self.kind == "linear":
            o = linear_attention(q, k, v, "chunk", size)
        else:
            q, k = (t * torch.rsqrt((t * t).sum(-1, keepdim=True) + 1e-6) for t in (q, k))
            beta = self.beta(x).sigmoid().transpose(1, 2)  # (b, h, n)
            if self.kind == "delta":
                o = delta_rule(q, k, v, beta, "chunk", size)
            else:
                g = self.log_decay(x)  # (b, n, h)
                o = gated_delta_rule(q, k, v, g.transpose(1, 2), beta, "chunk", size)[0]
            o = rms_norm(o, self.head_norm)  # each head's output, as Qwen3-Next normalises it
        return self.out(o.transpose(1, 2).reshape(b, n, d))


class Block(torch.nn.Module):
    """``x + mixer(norm(x))``, then ``x + SwiGLU(norm(x))`` (chapter 15)."""

    def __init__(self, config: StackConfig, kind: str):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(config.d_model), RMSNorm(config.d_model)
        self.mixer = Mixer(config, kind)
        self.mlp = SwiGLU(config.d_model, config.d_ff)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class MixerStack(torch.nn.Module):
    """``tokens (batch, seq) → logits (batch, seq, vocab)``: :class:`Block` after
    :class:`Block`, one per entry of ``config.layers``. Introduced in chapter 15."""

    def __init__(self, config: StackConfig):
        super().__init__()
        self.config = config
        self.embed = torch.nn.Embedding(config.vocab, config.d_model)
        self.blocks = torch.nn.ModuleList(Block(config, kind) for kind in config.layers)
        self.norm = RMSNorm(config.d_model)
        self.head = torch.nn.Linear(config.d_model, config.vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if (not isinstance(tokens, torch.Tensor) or tokens.dim() != 2
                or tokens.is_floating_point()):
            shape = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens)
            raise ValueError(f"tokens must be an integer tensor (batch, seq); got {shape}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.vocab):
            raise ValueError(f"token ids must lie in 0 … {self.config.vocab - 1}; got "
                             f"{int(tokens.min())} … {int(tokens.max())}")
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
