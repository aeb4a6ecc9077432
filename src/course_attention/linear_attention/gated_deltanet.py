"""Qwen3-Next's linear-attention layer, ``Qwen3NextGatedDeltaNet``, written with the course's
:func:`~course_attention.linear_attention.gated_delta_rule` (chapter 15, work in progress).

Introduced in chapter 15. Around the gated delta rule the layer has four pieces:

- one projection to queries, keys, values and an output gate ``z`` (``in_proj_qkvz``), one to each
  value head's write strength ``b`` and decay ``a`` (``in_proj_ba``), grouped by key head;
- a short causal depthwise convolution (width ``conv_kernel``) over queries, keys and values,
  then SiLU: each channel mixes its last few positions (a cheap local window);
- the gates: ``β = sigmoid(b)``, ``g = −exp(A_log) · softplus(a + dt_bias)`` (``g ≤ 0``: the state
  decays by ``exp(g)``), queries and keys L2-normalised;
- a gated RMSNorm of each value head's output, ``RMSNorm(o) · silu(z)``, then ``out_proj``.

Value heads may outnumber key heads (``n_v_heads = r · n_k_heads``): each query/key head serves
``r`` consecutive value heads. :class:`GatedDeltaNet` keeps Hugging Face's weight names, so a
``Qwen3NextGatedDeltaNet``'s state dict loads into it as it is.
"""

from __future__ import annotations

import torch

from . import gated_delta_rule

__all__ = ["GatedDeltaNet", "from_hf"]


class GatedDeltaNet(torch.nn.Module):
    """``(batch, seq, d_model) → (batch, seq, d_model)`` (chapter 15): Qwen3-Next's linear
    attention layer, without a cache (a whole text at once)."""

    def __init__(self, d_model: int, n_k_heads: int, n_v_heads: int, d_k: int, d_v: int,
                 conv_kernel: int = 4, eps: float = 1e-6, chunk_size: int = 64):
        super().__init__()
        if n_v_heads % n_k_heads:
            raise ValueError(f"n_k_heads={n_k_heads} must divide n_v_heads={n_v_heads}")
        self.n_k, self.n_v, self.d_k, self.d_v = n_k_heads, n_v_heads, d_k, d_v
        self.eps, self.chunk_size = eps, chunk_size
        key_dim, value_dim = n_k_heads * d_k, n_v_heads * d_v
        self.conv_dim = 2 * key_dim + value_dim
        self.conv1d = torch.nn.Conv1d(self.conv_dim, self.conv_dim, conv_kernel, bias=False,
                                      groups=self.conv_dim, padding=conv_kernel - 1)
        self.in_proj_qkvz = torch.nn.Linear(d_model, 2 * key_dim + 2 * value_dim, bias=False)
        self.in_proj_ba = torch.nn.Linear(d_model, 2 * n_v_heads, bias=False)
        self.dt_bias = torch.nn.Parameter(torch.ones(n_v_heads))
        self.A_log = torch.nn.Parameter(torch.log(torch.empty(n_v_heads).uniform_(0.01, 16)))
        self.norm = torch.nn.Module()
        self.norm.weight = torch.nn.Parameter(torch.ones(d_v))
        self.out_proj = torch.nn.Linear(value_dim, d_model, bias=False)

    def _split(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """q, k ``(b, n, n_k, d_k)``, v, z ``(b, n, n_v, d_v)``, b, a ``(b, n, n_v)``: Hugging
        Face's layout groups each key head with its value heads."""
        bsz, n, _ = x.shape
        r = self.n_v // self.n_k
        qkvz = self.in_proj_qkvz(x).view(bsz, n, self.n_k, 2 * self.d_k + 2 * r * self.d_v)
        q, k, v, z = torch.split(qkvz, [self.d_k, self.d_k, r * self.d_v, r * self.d_v], dim=3)
        ba = self.in_proj_ba(x).view(bsz, n, self.n_k, 2 * r)
        b, a = torch.split(ba, [r, r], dim=3)
        return (q, k, v.reshape(bsz, n, self.n_v, self.d_v), z.reshape(bsz, n, self.n_v, self.d_v),
                b.reshape(bsz, n, self.n_v), a.reshape(bsz, n, self.n_v))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3:
            raise ValueError(f"x must be (batch, seq, d_model); got {tuple(x.shape)}")
        bsz, n, _ = x.shape
        q, k, v, z, b, a = self._split(x)
        mixed = torch.cat([t.reshape(bsz, n, -1) for t in (q, k, v)], dim=-1).transpose(1, 2)
        mixed = torch.nn.functional.silu(self.conv1d(mixed)[..., :n]).transpose(1, 2)  # causal
        key_dim = self.n_k * self.d_k
        q, k, v = torch.split(mixed, [key_dim, key_dim, self.n_v * self.d_v], dim=-1)
        r = self.n_v // self.n_k
        q, k = (t.reshape(bsz, n, self.n_k, self.d_k).repeat_interleave(r, dim=2) for t in (q, k))
        v = v.reshape(bsz, n, self.n_v, self.d_v)
        q, k = (t * torch.rsqrt((t * t).sum(-1, keepdim=True) + 1e-6) for t in (q, k))  # L2
        beta = b.sigmoid()
        g = -self.A_log.exp() * torch.nn.functional.softplus(a + self.dt_bias)
        heads = lambda t: t.transpose(1, 2)  # noqa: E731 - (batch, heads, seq, ...)
        o, _ = gated_delta_rule(heads(q), heads(k), heads(v), heads(g), heads(beta), "chunk",
                                self.chunk_size)
        o = o.transpose(1, 2)  # (batch, seq, n_v, d_v)
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + self.eps) * self.norm.weight
        o = o * torch.nn.functional.silu(z)  # the gate: norm first, then silu(z)
        return self.out_proj(o.reshape(bsz, n, -1))


def from_hf(layer: torch.nn.Module) -> GatedDeltaNet:
    """A :class:`GatedDeltaNet` holding a ``Qwen3NextGatedDeltaNet``'s weights, in its dtype."""
    ours = GatedDeltaNet(layer.hidden_size, layer.num_k_heads, layer.num_v_heads, layer.head_k_dim,
                         layer.head_v_dim, layer.conv_kernel_size, layer.layer_norm_epsilon)
    ours = ours.to(layer.out_proj.weight.dtype)
    ours.load_state_dict(layer.state_dict())
    return ours
