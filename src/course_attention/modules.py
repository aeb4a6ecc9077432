"""PyTorch implementations, with the same semantics as :mod:`course_attention.numpy_ref`."""

from __future__ import annotations

import math

import torch

from . import _validate

__all__ = ["scaled_dot_product_attention", "MultiHeadAttention"]


def _check_finite(name: str, x: torch.Tensor) -> None:
    if not torch.isfinite(x).all():
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
    scores = (Q @ K.transpose(-2, -1)) * scale  # (..., seq_q, seq_k)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
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
        if n_heads < 1 or d_model < 1 or d_model % n_heads:
            raise ValueError(
                f"d_model={d_model} must be a positive multiple of n_heads={n_heads} "
                f"(each head gets d_model / n_heads = {d_model / max(n_heads, 1):g} features)"
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
