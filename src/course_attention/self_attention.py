"""A single-head self-attention layer as a PyTorch module, the layer later chapters build on.

Introduced in chapter 3 (self-attention). Same semantics as
``numpy_ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)``.
"""

from __future__ import annotations

import numpy as np
import torch

from .modules import scaled_dot_product_attention

__all__ = ["SelfAttention"]


class SelfAttention(torch.nn.Module):
    """Self-attention: ``softmax(Q Kᵀ / √dₖ) V`` with ``Q, K, V = X W_q, X W_k, X W_v``.

    Introduced in chapter 3. ``X`` is ``(..., seq, d_model)``; the projections map it to queries
    and keys of width ``d_k`` and values of width ``d_v`` (default ``d_k``).
    ``torch.nn.Linear`` stores each matrix transposed: ``W_q.weight`` is ``(d_k, d_model)`` and
    ``Q = X @ W_q.weight.T``. ``forward`` also takes a bool ``mask``, the subject of chapter 4.

    Args:
        d_model: width of the token vectors.
        d_k: width of queries and keys.
        d_v: width of the values and the output; default ``d_k``.
        bias: whether the three projections have biases (default False, as in the chapter).
    """

    def __init__(self, d_model: int, d_k: int, d_v: int | None = None, bias: bool = False):
        super().__init__()
        d_v = d_k if d_v is None else d_v
        for name, value in (("d_model", d_model), ("d_k", d_k), ("d_v", d_v)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {name}={value!r}")
        self.d_model, self.d_k, self.d_v = d_model, d_k, d_v
        self.W_q = torch.nn.Linear(d_model, d_k, bias=bias)
        self.W_k = torch.nn.Linear(d_model, d_k, bias=bias)
        self.W_v = torch.nn.Linear(d_model, d_v, bias=bias)

    @classmethod
    def from_matrices(
        cls, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, dtype: torch.dtype = torch.float64
    ) -> SelfAttention:
        """A layer (without biases) whose projections are the given numpy matrices.

        ``W_q``, ``W_k`` ``(d_model, d_k)`` and ``W_v`` ``(d_model, d_v)``, as in the chapter's
        ``X @ W_q``; they are copied transposed into the ``nn.Linear`` weights.
        """
        W_q, W_k, W_v = (np.asarray(W, dtype=float) for W in (W_q, W_k, W_v))
        if not (W_q.ndim == W_k.ndim == W_v.ndim == 2) or W_q.shape != W_k.shape:
            raise ValueError(
                "need W_q, W_k (d_model, d_k) of equal shape and W_v (d_model, d_v); got "
                f"W_q {W_q.shape}, W_k {W_k.shape}, W_v {W_v.shape}"
            )
        if W_v.shape[0] != W_q.shape[0]:
            raise ValueError(f"W_v {W_v.shape} must have as many rows (d_model) as W_q {W_q.shape}")
        layer = cls(W_q.shape[0], W_q.shape[1], W_v.shape[1]).to(dtype)
        with torch.no_grad():
            for linear, W in ((layer.W_q, W_q), (layer.W_k, W_k), (layer.W_v, W_v)):
                linear.weight.copy_(torch.from_numpy(W.T.copy()))
        return layer

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(output, weights)``: ``(..., seq, d_v)`` and ``(..., seq, seq)``.

        ``mask`` (bool, True = may attend) broadcasts to ``(..., seq, seq)``; see
        :func:`course_attention.modules.scaled_dot_product_attention`.
        """
        if not isinstance(X, torch.Tensor) or X.ndim < 2 or X.shape[-1] != self.d_model:
            shape = tuple(X.shape) if hasattr(X, "shape") else type(X).__name__
            raise ValueError(f"X must be a tensor (..., seq, d_model={self.d_model}); got {shape}")
        return scaled_dot_product_attention(self.W_q(X), self.W_k(X), self.W_v(X), mask=mask)
