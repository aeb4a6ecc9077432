"""PyTorch implementations, with the same semantics as :mod:`course_attention.numpy_ref`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from . import _validate

__all__ = [
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "PositionalEncoding",
    "FeedForward",
    "EncoderLayer",
    "DecoderLayer",
    "Decoding",
    "Seq2SeqTransformer",
]


def _check_finite(name: str, x: torch.Tensor) -> None:
    # Any NaN or ±inf makes the sum non-finite: one cheap reduction, the full check only then.
    if not torch.isfinite(x.detach().sum()) and not torch.isfinite(x).all():
        _validate.finite(name, x.detach().cpu().numpy())


def scaled_dot_product_attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ · scale) V in torch, returning the weights too.

    Introduced in chapter 2 (scaled dot-product attention). Same contract as
    :func:`course_attention.numpy_ref.scaled_dot_product_attention`, and differentiable.

    Args:
        Q: queries ``(..., seq_q, d_k)``.
        K: keys ``(..., seq_k, d_k)``.
        V: values ``(..., seq_k, d_v)``.
        mask: bool, True = may attend, broadcastable to ``(..., seq_q, seq_k)``.
        scale: multiplies the scores; default ``1 / sqrt(d_k)``.

    Returns:
        ``(output, weights)``: ``(..., seq_q, d_v)`` and ``(..., seq_q, seq_k)``. A query with
        nothing to attend to gets zero weights, a zero output and zero (not NaN) gradients.
    """
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(x).__name__}")
        if not x.is_floating_point():
            raise ValueError(f"{name} must be a floating-point tensor; got dtype {x.dtype}")
    scores_shape = _validate.attention_shapes(Q.shape, K.shape, V.shape)
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        _check_finite(name, x)
    if scale is None:
        scale = 1.0 / math.sqrt(Q.shape[-1])
    scores = (Q * scale) @ K.transpose(-2, -1)  # (..., seq_q, seq_k); scaling Q is cheaper
    if mask is None:
        if torch.is_grad_enabled():
            weights = torch.softmax(scores, dim=-1)
        else:  # no autograd graph to protect: normalise the scores in place, no new buffer
            weights = scores.sub_(scores.amax(dim=-1, keepdim=True)).exp_()
            weights.div_(weights.sum(dim=-1, keepdim=True))
        return weights @ V, weights
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(
            "mask must be a bool tensor (True = may attend); got "
            f"{getattr(mask, 'dtype', type(mask).__name__)}"
        )
    _validate.mask_shape(mask.shape, scores_shape)
    scores = scores.masked_fill(~mask, float("-inf"))
    peak = scores.amax(dim=-1, keepdim=True).detach()
    peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))
    e = torch.exp(scores - peak)  # exp(-inf) = 0 at masked keys
    total = e.sum(dim=-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return weights @ V, weights


def _check_mask(mask: torch.Tensor, scores_shape: tuple[int, ...]) -> None:
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(
            "mask must be a bool tensor (True = may attend); got "
            f"{getattr(mask, 'dtype', type(mask).__name__)}"
        )
    _validate.mask_shape(mask.shape, scores_shape)


class MultiHeadAttention(torch.nn.Module):
    """Multi-head attention for self- and cross-attention, returning the weights.

    Introduced in chapter 5 (multi-head attention). Tensors are batch-first:
    ``query`` ``(batch, seq_q, d_model)``, ``key``/``value`` ``(batch, seq_k, d_model)``.
    Each of the ``n_heads`` heads attends in a subspace of width ``d_head = d_model // n_heads``:
    ``(batch, seq, d_model) → (batch, seq, heads, d_head) → (batch, heads, seq, d_head)``.

    Args:
        d_model: model width; must be divisible by ``n_heads``.
        n_heads: number of heads.
        dropout: dropout on the attention weights (training only).
        bias: whether the four projections have biases.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if n_heads < 1:
            raise ValueError(f"n_heads must be at least 1; got n_heads={n_heads}")
        if d_model < 1:
            raise ValueError(f"d_model must be at least 1; got d_model={d_model}")
        if d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} must be a multiple of n_heads={n_heads} "
                f"(each head would get d_model / n_heads = {d_model / n_heads:g} features)"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1); got {dropout}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.W_q = torch.nn.Linear(d_model, d_model, bias=bias)
        self.W_k = torch.nn.Linear(d_model, d_model, bias=bias)
        self.W_v = torch.nn.Linear(d_model, d_model, bias=bias)
        self.W_o = torch.nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape  # (batch, seq, d_model) -> (batch, heads, seq, d_head)
        return x.view(batch, seq, self.n_heads, self.d_head).transpose(1, 2)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        causal: bool = False,
        need_weights: bool = True,
        average_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value`` (both default to ``query``: self-attention).

        Args:
            query: ``(batch, seq_q, d_model)``.
            key: ``(batch, seq_k, d_model)``; default ``query``.
            value: ``(batch, seq_k, d_model)``; default ``key``.
            mask: bool, True = may attend, broadcastable to ``(batch, heads, seq_q, seq_k)``,
                e.g. ``(seq_q, seq_k)`` or a key-padding mask ``(batch, 1, 1, seq_k)``.
            causal: also forbid attending to later positions (top-left aligned).
            need_weights: return the weights (otherwise ``None`` and PyTorch's fused kernel).
            average_weights: average the weights over heads, as ``nn.MultiheadAttention`` does.

        Returns:
            ``(output, weights)``: ``(batch, seq_q, d_model)`` and ``(batch, heads, seq_q,
            seq_k)`` (or ``(batch, seq_q, seq_k)`` when averaged). A query with nothing to
            attend to gets zero weights.
        """
        key = query if key is None else key
        value = key if value is None else value
        for name, x in (("query", query), ("key", key), ("value", value)):
            if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.shape[-1] != self.d_model:
                shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
                raise ValueError(
                    f"{name} must have shape (batch, seq, d_model={self.d_model}); got {shape}"
                )
            if x.dtype != self.W_q.weight.dtype:
                raise ValueError(
                    f"{name} has dtype {x.dtype} but the layer's weights are "
                    f"{self.W_q.weight.dtype}: token ids go through an embedding first; "
                    f"otherwise convert with `{name}.to({self.W_q.weight.dtype})` (or the "
                    "layer with `.to(dtype)`)"
                )
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(
                f"key {tuple(key.shape)} and value {tuple(value.shape)} must share batch and length"
            )
        if query.shape[0] != key.shape[0]:
            raise ValueError(
                f"query {tuple(query.shape)} and key {tuple(key.shape)} differ in batch"
            )
        seq_q, seq_k = query.shape[1], key.shape[1]
        scores_shape = (query.shape[0], self.n_heads, seq_q, seq_k)
        if mask is not None:
            _check_mask(mask, scores_shape)
        if causal:
            tri = torch.ones(seq_q, seq_k, dtype=torch.bool, device=query.device).tril()
            mask = tri if mask is None else mask & tri
        Q, K, V = (
            self._split(self.W_q(query)),
            self._split(self.W_k(key)),
            self._split(self.W_v(value)),
        )
        p = self.dropout if self.training else 0.0
        if need_weights or p:
            out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
            if p:
                weights = torch.nn.functional.dropout(weights, p)
                out = weights @ V
        else:
            out = torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
            if mask is not None:  # rows with nothing to attend to: zero, as in every other path
                out = out.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
            weights = None
        batch = query.shape[0]  # (batch, heads, seq_q, d_head) -> (batch, seq_q, d_model)
        out = self.W_o(out.transpose(1, 2).reshape(batch, seq_q, self.d_model))
        if weights is not None and average_weights:
            weights = weights.mean(dim=1)
        return out, weights

    def numpy_weights(self) -> dict[str, object]:
        """The projections as keyword arguments of ``numpy_ref.multi_head_attention``.

        Returns ``{"W_q", "W_k", "W_v", "W_o": (d_model, d_model), "biases": 4 × (d_model,) or
        None}`` with the matrices transposed to the "multiply on the right" convention.
        """
        layers = (self.W_q, self.W_k, self.W_v, self.W_o)
        out: dict[str, object] = {
            name: layer.weight.detach().cpu().numpy().T
            for name, layer in zip(("W_q", "W_k", "W_v", "W_o"), layers, strict=True)
        }
        has_bias = self.W_q.bias is not None
        out["biases"] = (
            tuple(layer.bias.detach().cpu().numpy() for layer in layers) if has_bias else None
        )
        return out

    @classmethod
    def from_torch(cls, mha: torch.nn.MultiheadAttention) -> MultiHeadAttention:
        """Copy the weights of a ``torch.nn.MultiheadAttention`` (same d for q, k, v)."""
        if not mha._qkv_same_embed_dim:
            raise ValueError("from_torch needs kdim == vdim == embed_dim")
        bias = mha.in_proj_bias is not None
        new = cls(mha.embed_dim, mha.num_heads, dropout=mha.dropout, bias=bias)
        new = new.to(dtype=mha.in_proj_weight.dtype, device=mha.in_proj_weight.device)
        with torch.no_grad():
            for i, layer in enumerate((new.W_q, new.W_k, new.W_v)):
                rows = slice(i * mha.embed_dim, (i + 1) * mha.embed_dim)
                layer.weight.copy_(mha.in_proj_weight[rows])
                if bias:
                    layer.bias.copy_(mha.in_proj_bias[rows])
            new.W_o.weight.copy_(mha.out_proj.weight)
            if bias:
                new.W_o.bias.copy_(mha.out_proj.bias)
        return new


class PositionalEncoding(torch.nn.Module):
    """Adds the sinusoidal positions of "Attention Is All You Need" to a batch of embeddings.

    Introduced in chapter 6 (the Transformer block). Input and output ``(batch, seq, d_model)``;
    the table is :func:`course_attention.numpy_ref.sinusoidal_positions` ``(max_len, d_model)``.
    """

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        from .numpy_ref import sinusoidal_positions

        table = torch.as_tensor(sinusoidal_positions(max_len, d_model), dtype=torch.float32)
        self.register_buffer("table", table, persistent=False)
        self.max_len = max_len

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.table.shape[-1]:
            raise ValueError(
                f"x must have shape (batch, seq, d_model={self.table.shape[-1]}); "
                f"got {tuple(x.shape)}"
            )
        if x.shape[1] > self.max_len:
            raise ValueError(f"sequence length {x.shape[1]} exceeds max_len={self.max_len}")
        return x + self.table[: x.shape[1]].to(x.dtype)


class FeedForward(torch.nn.Module):
    """Position-wise feed-forward network: ``linear2(act(linear1(x)))``, applied per token.

    Introduced in chapter 6. ``(batch, seq, d_model) → (batch, seq, d_ff) → (batch, seq,
    d_model)``; ``d_ff`` is usually ``4 * d_model``. ``activation``: ``"relu"`` (the original
    Transformer's, chapters 6 and 7), ``"gelu"`` (exact, with erf) or ``"gelu_tanh"``, GELU's
    tanh approximation ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))`` that GPT-2 uses (chapter 8;
    Hugging Face calls it ``"gelu_new"``).
    """

    ACTIVATIONS = ("relu", "gelu", "gelu_tanh")

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        if activation not in self.ACTIVATIONS:
            raise ValueError(f"activation must be one of {self.ACTIVATIONS}; got {activation!r}")
        self.activation = activation
        self.linear1 = torch.nn.Linear(d_model, d_ff)
        self.linear2 = torch.nn.Linear(d_ff, d_model)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.linear1(x)
        if self.activation == "relu":
            h = torch.relu(h)
        else:
            approximate = "tanh" if self.activation == "gelu_tanh" else "none"
            h = torch.nn.functional.gelu(h, approximate=approximate)
        return self.linear2(self.dropout(h))


def _copy_mha(ours: MultiHeadAttention, theirs: torch.nn.MultiheadAttention) -> None:
    ours.load_state_dict(MultiHeadAttention.from_torch(theirs).state_dict())


def _layer_from_torch(cls: type, layer: Any, attention: dict[str, str], norms: int) -> Any:
    """Build ``cls`` (EncoderLayer/DecoderLayer) with the weights of PyTorch's ``layer``.

    ``attention`` maps our attention attributes to PyTorch's; norms ``norm1 … norm{norms}``,
    ``linear1`` and ``linear2`` have the same names on both sides.
    """
    attn = layer.self_attn
    new = cls(
        attn.embed_dim,
        attn.num_heads,
        layer.linear1.out_features,
        layer.dropout.p,
        layer.norm_first,
    ).to(attn.in_proj_weight.dtype)
    for ours, theirs in attention.items():
        _copy_mha(getattr(new, ours), getattr(layer, theirs))
    new.ff.linear1.load_state_dict(layer.linear1.state_dict())
    new.ff.linear2.load_state_dict(layer.linear2.state_dict())
    for i in range(1, norms + 1):
        getattr(new, f"norm{i}").load_state_dict(getattr(layer, f"norm{i}").state_dict())
    return new


class _Sublayers(torch.nn.Module):
    """Residual wiring shared by the encoder and decoder layers: pre-norm or post-norm."""

    norm_first: bool

    def _residual(
        self, x: torch.Tensor, norm: torch.nn.LayerNorm, block: Any, drop: torch.nn.Dropout
    ) -> tuple[torch.Tensor, Any]:
        """Pre-norm: ``x + block(norm(x))``; post-norm: ``norm(x + block(x))``."""
        out, extra = block(norm(x) if self.norm_first else x)
        x = x + drop(out)
        return (x if self.norm_first else norm(x)), extra


class EncoderLayer(_Sublayers):
    """Self-attention and a feed-forward network, each wrapped in a residual and a layer norm.

    Introduced in chapter 6. ``norm_first=False`` is the original post-norm layer,
    ``x = norm(x + sublayer(x))``; ``True`` is pre-norm, ``x = x + sublayer(norm(x))``. Equal to
    ``torch.nn.TransformerEncoderLayer(batch_first=True, activation="relu")`` with the same
    weights (see :meth:`from_torch`). Input/output ``(batch, seq, d_model)``.
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d_model), torch.nn.LayerNorm(d_model)
        self.drop1, self.drop2 = torch.nn.Dropout(dropout), torch.nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, need_weights: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Returns ``(x, weights)``: ``(batch, seq, d_model)`` and ``(batch, heads, seq, seq)``.

        ``mask``: bool, True = may attend, broadcastable to ``(batch, heads, seq, seq)`` (e.g. a
        key-padding mask ``(batch, 1, 1, seq)``). Without ``need_weights`` the weights are
        ``None`` and attention runs in PyTorch's fused kernel.
        """
        x, weights = self._residual(
            x,
            self.norm1,
            lambda h: self.self_attn(h, mask=mask, need_weights=need_weights),
            self.drop1,
        )
        x, _ = self._residual(x, self.norm2, lambda h: (self.ff(h), None), self.drop2)
        return x, weights

    @classmethod
    def from_torch(cls, layer: torch.nn.TransformerEncoderLayer) -> EncoderLayer:
        """Copy a ``torch.nn.TransformerEncoderLayer`` (ReLU activation)."""
        return _layer_from_torch(cls, layer, {"self_attn": "self_attn"}, norms=2)


class DecoderLayer(_Sublayers):
    """Causal self-attention, cross-attention to the encoder, and a feed-forward network.

    Introduced in chapter 7 (encoder–decoder). Queries of the cross-attention come from the
    decoder ``(batch, seq_t, d_model)``, keys and values from the encoder output ``memory``
    ``(batch, seq_s, d_model)``. Equal to ``torch.nn.TransformerDecoderLayer(batch_first=True)``
    with the same weights, for both norm placements (see :meth:`from_torch`).
    """

    def __init__(
        self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.norm1, self.norm2, self.norm3 = (torch.nn.LayerNorm(d_model) for _ in range(3))
        self.drop1, self.drop2, self.drop3 = (torch.nn.Dropout(dropout) for _ in range(3))
        self.norm_first = norm_first

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        causal: bool = True,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Returns ``(x, self_weights, cross_weights)``.

        Shapes: ``x`` ``(batch, seq_t, d_model)``; ``self_weights`` ``(batch, heads, seq_t,
        seq_t)``; ``cross_weights`` ``(batch, heads, seq_t, seq_s)``. ``memory_mask``: bool,
        True = may attend, broadcastable to ``(batch, heads, seq_t, seq_s)`` (source padding).
        """
        x, self_w = self._residual(
            x,
            self.norm1,
            lambda h: self.self_attn(h, causal=causal, need_weights=need_weights),
            self.drop1,
        )
        x, cross_w = self._residual(
            x,
            self.norm2,
            lambda h: self.cross_attn(h, memory, mask=memory_mask, need_weights=need_weights),
            self.drop2,
        )
        x, _ = self._residual(x, self.norm3, lambda h: (self.ff(h), None), self.drop3)
        return x, self_w, cross_w

    @classmethod
    def from_torch(cls, layer: torch.nn.TransformerDecoderLayer) -> DecoderLayer:
        """Copy a ``torch.nn.TransformerDecoderLayer`` (ReLU activation)."""
        attention = {"self_attn": "self_attn", "cross_attn": "multihead_attn"}
        return _layer_from_torch(cls, layer, attention, norms=3)


@dataclass
class Decoding:
    """The result of :meth:`Seq2SeqTransformer.greedy_decode`.

    ``tokens`` ``(batch, steps)`` are the generated target ids (after BOS). ``cross_attention``
    holds one tensor per step, ``(layers, batch, heads, seq_s)``: where each layer's heads looked
    in the source when that token was chosen (empty unless asked for).
    """

    tokens: torch.Tensor
    cross_attention: list[torch.Tensor]


class Seq2SeqTransformer(torch.nn.Module):
    """A small encoder–decoder Transformer (chapter 7).

    Embeddings are multiplied by √d_model (so they are not drowned by the positions, which have
    entries in [-1, 1]), positions are added, then ``n_layers`` encoder and decoder layers and a
    linear output projection. With ``norm_first`` (pre-norm) each stack ends with a layer norm.
    Tokens are integer ids ``(batch, seq)``; ``pad_id`` marks padding in the source.
    """

    def __init__(
        self,
        src_vocab: int,
        tgt_vocab: int,
        d_model: int = 64,
        n_heads: int = 4,
        n_layers: int = 2,
        d_ff: int | None = None,
        max_len: int = 64,
        dropout: float = 0.0,
        norm_first: bool = True,
        pad_id: int = 0,
    ):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.src_vocab, self.tgt_vocab, self.d_model = src_vocab, tgt_vocab, d_model
        self.max_len, self.pad_id = max_len, pad_id
        self.src_embed = torch.nn.Embedding(src_vocab, d_model)
        self.tgt_embed = torch.nn.Embedding(tgt_vocab, d_model)
        for embed in (self.src_embed, self.tgt_embed):  # × √d_model below brings std back to 1
            torch.nn.init.normal_(embed.weight, std=d_model**-0.5)
        self.positions = PositionalEncoding(d_model, max_len)
        self.encoder = torch.nn.ModuleList(
            EncoderLayer(d_model, n_heads, d_ff, dropout, norm_first) for _ in range(n_layers)
        )
        self.decoder = torch.nn.ModuleList(
            DecoderLayer(d_model, n_heads, d_ff, dropout, norm_first) for _ in range(n_layers)
        )
        final = torch.nn.LayerNorm if norm_first else (lambda d: torch.nn.Identity())
        self.enc_norm, self.dec_norm = final(d_model), final(d_model)
        self.out = torch.nn.Linear(d_model, tgt_vocab)

    def _check(self, name: str, tokens: torch.Tensor, vocab: int) -> None:
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
            shape = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens)
            raise ValueError(f"{name} must be an integer tensor (batch, seq); got {shape}")
        if tokens.shape[1] > self.max_len:
            raise ValueError(f"{name} has length {tokens.shape[1]} > max_len={self.max_len}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab):
            raise ValueError(
                f"{name} ids must lie in 0 … {vocab - 1}; got {int(tokens.min())} … "
                f"{int(tokens.max())}"
            )

    def _embed(self, embed: torch.nn.Embedding, tokens: torch.Tensor) -> torch.Tensor:
        return self.positions(embed(tokens) * math.sqrt(self.d_model))

    def source_mask(self, src: torch.Tensor) -> torch.Tensor:
        """Key-padding mask of the source, True = real token: ``(batch, 1, 1, seq_s)``."""
        return (src != self.pad_id)[:, None, None, :]

    def encode(
        self, src: torch.Tensor, need_weights: bool = True
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """``src`` ``(batch, seq_s)`` → memory ``(batch, seq_s, d_model)`` and each layer's
        self-attention weights ``(batch, heads, seq_s, seq_s)``."""
        self._check("src", src, self.src_vocab)
        x, mask, weights = self._embed(self.src_embed, src), self.source_mask(src), []
        for layer in self.encoder:
            x, w = layer(x, mask=mask, need_weights=need_weights)
            weights.append(w)
        return self.enc_norm(x), weights

    def decode(
        self,
        tgt_in: torch.Tensor,
        memory: torch.Tensor,
        src: torch.Tensor,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        """Target prefix ``(batch, seq_t)`` → logits ``(batch, seq_t, tgt_vocab)`` and each
        layer's cross-attention weights ``(batch, heads, seq_t, seq_s)``."""
        self._check("tgt_in", tgt_in, self.tgt_vocab)
        x, mask, cross = self._embed(self.tgt_embed, tgt_in), self.source_mask(src), []
        for layer in self.decoder:
            x, _, c = layer(x, memory, memory_mask=mask, need_weights=need_weights)
            cross.append(c)
        return self.out(self.dec_norm(x)), cross

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: ``src`` ``(batch, seq_s)``, ``tgt_in`` ``(batch, seq_t)`` →
        logits ``(batch, seq_t, tgt_vocab)``; position ``t`` predicts token ``t + 1``."""
        memory, _ = self.encode(src, need_weights=False)
        return self.decode(tgt_in, memory, src, need_weights=False)[0]

    @torch.no_grad()
    def greedy_decode(
        self,
        src: torch.Tensor,
        bos_id: int,
        eos_id: int,
        max_steps: int | None = None,
        return_attention: bool = False,
    ) -> Decoding:
        """Generate one token at a time, always taking the most likely next token.

        Stops when every sequence has produced ``eos_id`` or after ``max_steps`` (default
        ``max_len - 1``). With ``return_attention`` each step's cross-attention is kept.
        """
        max_steps = self.max_len - 1 if max_steps is None else max_steps
        if not 1 <= max_steps < self.max_len:
            raise ValueError(f"max_steps must lie in 1 … {self.max_len - 1}; got {max_steps}")
        memory, _ = self.encode(src, need_weights=False)
        tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        steps: list[torch.Tensor] = []
        for _ in range(max_steps):
            logits, cross = self.decode(tokens, memory, src, need_weights=return_attention)
            nxt = logits[:, -1].argmax(dim=-1)
            nxt = torch.where(done, torch.full_like(nxt, self.pad_id), nxt)
            tokens = torch.cat([tokens, nxt[:, None]], dim=1)
            if return_attention:
                steps.append(torch.stack([c[:, :, -1] for c in cross]))
            done |= nxt == eos_id
            if done.all():
                break
        return Decoding(tokens[:, 1:], steps)
