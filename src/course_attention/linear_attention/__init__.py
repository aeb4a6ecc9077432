"""Attention as a recurrence: linear attention, the delta rule and the gated delta rule
(chapter 15, work in progress).

Introduced in chapter 15. Replace the softmax's ``exp(q · k)`` by a product of feature maps
``φ(q) · φ(k)`` (Katharopoulos et al. 2020) and causal attention becomes a running sum: a state
``S_t = S_{t−1} + φ(k_t) v_tᵀ`` of ``d_k × d_v`` numbers, whatever the length, read by
``o_t = S_tᵀ φ(q_t)`` (divided by ``φ(q_t) · z_t``, ``z_t = Σ φ(k_s)``). The delta rule (Schlag et
al. 2021; Yang et al. 2024) writes the error instead of the value,
``S_t = S_{t−1} + β_t k_t (v_t − S_{t−1}ᵀ k_t)ᵀ``: one step of online regression of ``v`` on ``k``.
Gating (Gated DeltaNet, Yang et al. 2025) first decays the state by ``exp(g_t)``.

Each rule has a *recurrent* form (one token at a time, the state carried) and a *chunkwise* form
(blocks of ``chunk_size`` tokens: inside a block, a masked matrix product; between blocks, the
state); the linear one also a *parallel* form (one masked matrix product). They are proven equal
in float64 by the tests; :func:`gated_delta_rule` also equals Hugging Face's Qwen3-Next references
``torch_recurrent_gated_delta_rule`` and ``torch_chunk_gated_delta_rule`` (which compute in
float32) to float32 precision.

Shapes: ``q``, ``k`` ``(batch, heads, seq, d_k)``, ``v`` ``(batch, heads, seq, d_v)``, ``g`` and
``beta`` ``(batch, heads, seq)``, states ``(batch, heads, d_k, d_v)``.
"""

from __future__ import annotations

import torch

__all__ = [
    "elu_feature",
    "linear_attention",
    "delta_rule",
    "gated_delta_rule",
    "state_bytes",
]

_MODES = ("parallel", "recurrent", "chunk")


def elu_feature(x: torch.Tensor) -> torch.Tensor:
    """Katharopoulos et al.'s feature map ``elu(x) + 1`` (positive everywhere), elementwise."""
    return torch.nn.functional.elu(x) + 1


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mode: str, chunk_size: int,
           modes: tuple[str, ...] = _MODES) -> None:
    if mode not in modes:
        raise ValueError(f"mode must be one of {modes}; got {mode!r}")
    if q.dim() != 4 or k.shape != q.shape or v.dim() != 4 or v.shape[:3] != q.shape[:3]:
        raise ValueError(f"need q and k (batch, heads, seq, d_k) alike and v (batch, heads, seq, "
                         f"d_v); got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer; got {chunk_size!r}")


def _gates(name: str, x: torch.Tensor, q: torch.Tensor) -> None:
    if x.shape != q.shape[:3]:
        raise ValueError(f"{name} must be (batch, heads, seq) = {tuple(q.shape[:3])}; got "
                         f"{tuple(x.shape)}")


def linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mode: str = "parallel",
                     chunk_size: int = 16, eps: float = 1e-6) -> torch.Tensor:
    """Causal linear attention ``(batch, heads, seq, d_v)`` with :func:`elu_feature`, in one of
    three equal forms (chapter 15): ``"parallel"`` (``(φ(Q) φ(K)ᵀ ⊙ causal) V``, each row divided
    by its sum), ``"recurrent"`` (the state ``S`` and normaliser ``z`` carried token by token) or
    ``"chunk"`` (blocks of ``chunk_size``)."""
    _check(q, k, v, mode, chunk_size)
    fq, fk = elu_feature(q), elu_feature(k)
    n = q.shape[2]
    if mode == "parallel":
        scores = (fq @ fk.transpose(-1, -2)).tril()  # (batch, heads, seq, seq)
        return (scores @ v) / (scores.sum(-1, keepdim=True) + eps)
    state = fq.new_zeros(*q.shape[:2], q.shape[-1], v.shape[-1])  # (batch, heads, d_k, d_v)
    z = fq.new_zeros(*q.shape[:2], q.shape[-1])  # (batch, heads, d_k)
    out = []
    step = 1 if mode == "recurrent" else chunk_size
    for s in range(0, n, step):
        qc, kc, vc = fq[:, :, s:s + step], fk[:, :, s:s + step], v[:, :, s:s + step]
        inside = (qc @ kc.transpose(-1, -2)).tril()  # (batch, heads, c, c)
        num = qc @ state + inside @ vc
        den = (qc * z[:, :, None]).sum(-1, keepdim=True) + inside.sum(-1, keepdim=True)
        out.append(num / (den + eps))
        state = state + kc.transpose(-1, -2) @ vc
        z = z + kc.sum(2)
    return torch.cat(out, dim=2)


def gated_delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
                     beta: torch.Tensor, mode: str = "recurrent", chunk_size: int = 64,
                     initial_state: torch.Tensor | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """The gated delta rule (Gated DeltaNet), in Hugging Face's Qwen3-Next conventions: the
    output ``(batch, heads, seq, d_v)`` and the final state ``(batch, heads, d_k, d_v)``.

    Introduced in chapter 15. Queries are scaled by ``d_k^(−1/2)``; at each step the state decays
    by ``exp(g_t)`` (``g ≤ 0``), then ``S += k_t ⊗ β_t (v_t − Sᵀ k_t)`` and ``o_t = Sᵀ q_t``.
    ``mode="recurrent"`` runs it token by token; ``"chunk"`` by blocks of ``chunk_size`` (the
    WY/UT form: a unit lower-triangular solve per block), equal in exact arithmetic. Computed in
    the inputs' dtype (Hugging Face's references compute in float32).
    """
    _check(q, k, v, mode, chunk_size, ("recurrent", "chunk"))
    _gates("g", g, q)
    _gates("beta", beta, q)
    b, h, n, dk = k.shape
    dv = v.shape[-1]
    q = q * dk**-0.5
    state = (q.new_zeros(b, h, dk, dv) if initial_state is None
             else initial_state.to(q.dtype).clone())
    if state.shape != (b, h, dk, dv):
        raise ValueError(f"initial_state must be {(b, h, dk, dv)}; got {tuple(state.shape)}")
    out = torch.zeros_like(v)
    if mode == "recurrent":
        for t in range(n):
            state = state * g[:, :, t].exp()[..., None, None]
            error = v[:, :, t] - (state * k[:, :, t, :, None]).sum(-2)  # (b, h, d_v)
            state = state + k[:, :, t, :, None] * (beta[:, :, t, None] * error)[:, :, None]
            out[:, :, t] = (state * q[:, :, t, :, None]).sum(-2)
        return out, state
    for s in range(0, n, chunk_size):
        e = min(s + chunk_size, n)
        qc, kc, vc = q[:, :, s:e], k[:, :, s:e], v[:, :, s:e]
        bc, cum = beta[:, :, s:e], g[:, :, s:e].cumsum(-1)  # (b, h, c)
        c = e - s
        # decay between positions j ≤ i of the block, exp(cum_i − cum_j); 0 above the diagonal
        below = torch.ones(c, c, dtype=torch.bool).tril()
        decay = (cum[..., :, None] - cum[..., None, :]).masked_fill(~below, float("-inf")).exp()
        kb = kc * bc[..., None]
        # T = (I + strictly-lower(β K Kᵀ ⊙ decay))⁻¹ turns the block's delta updates into matmuls
        system = (kb @ kc.transpose(-1, -2)) * decay  # its diagonal counts as 1 (unitriangular)
        grow = cum.exp()[..., None]  # (b, h, c, 1): decay from the block's start
        # one solve for both right-hand sides: u (the values) and w (the keys)
        u, w = torch.linalg.solve_triangular(
            system, torch.cat((bc[..., None] * vc, kb * grow), -1), upper=False,
            unitriangular=True).split((dv, dk), -1)
        new = u - w @ state  # the block's errors, with the state it starts from
        attn = ((qc @ kc.transpose(-1, -2)) * decay)  # (b, h, c, c), lower triangle and diagonal
        out[:, :, s:e] = (qc * grow) @ state + attn @ new
        tail = (cum[..., -1:] - cum).exp()[..., None]  # decay from each position to the block's end
        state = state * cum[..., -1].exp()[..., None, None] + (kc * tail).transpose(-1, -2) @ new
    return out, state


def delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
               mode: str = "recurrent", chunk_size: int = 64) -> torch.Tensor:
    """DeltaNet (chapter 15): :func:`gated_delta_rule` with no decay (``g = 0``); the output
    ``(batch, heads, seq, d_v)``."""
    return gated_delta_rule(q, k, v, torch.zeros_like(beta), beta, mode, chunk_size)[0]


def state_bytes(n_layers: int, heads: int, d_k: int, d_v: int, bytes_per_value: int = 2) -> int:
    """The recurrent state of a stack of linear-attention layers, in bytes: ``n_layers · heads ·
    d_k · d_v`` numbers, whatever the text's length (chapter 15; a KV cache grows with it)."""
    for name, x in (("n_layers", n_layers), ("heads", heads), ("d_k", d_k), ("d_v", d_v),
                    ("bytes_per_value", bytes_per_value)):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={x!r}")
    return n_layers * heads * d_k * d_v * bytes_per_value
