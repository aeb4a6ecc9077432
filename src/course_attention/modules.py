"""PyTorch implementations, with the same semantics as :mod:`course_attention.numpy_ref`."""

from __future__ import annotations

import math

import torch

from . import _validate

__all__ = ["scaled_dot_product_attention"]


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
