"""The three mask conventions a learner meets, and conversions between them.

Introduced in chapter 4 (masking). This package uses **allowed** masks (bool, True = may attend),
the same as ``torch.nn.functional.scaled_dot_product_attention``'s boolean ``attn_mask``. Others:

============  ===================  ==========================================================
convention    values               used by
============  ===================  ==========================================================
allowed       bool, True = attend  this package; ``F.scaled_dot_product_attention`` (bool)
blocked       bool, True = hide    ``scores.masked_fill(mask, -inf)``; ``nn.MultiheadAttention``
                                   ``attn_mask`` and ``key_padding_mask`` (bool)
additive      float, 0 or -inf     added to the scores: ``F.scaled_dot_product_attention`` and
                                   ``nn.MultiheadAttention`` with a float mask
============  ===================  ==========================================================
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch

__all__ = ["CONVENTIONS", "convert", "to_nn_multihead"]

Convention = Literal["allowed", "blocked", "additive"]
CONVENTIONS: tuple[str, ...] = ("allowed", "blocked", "additive")


def _allowed(mask: torch.Tensor, convention: str) -> torch.Tensor:
    if convention == "additive":
        if not mask.is_floating_point():
            raise ValueError(f"an additive mask must be floating point; got dtype {mask.dtype}")
        bad = torch.isnan(mask) | (mask > 0)
        if bad.any():
            raise ValueError("an additive mask holds 0 (attend) or negative values (hide) only")
        return mask == 0
    if mask.dtype != torch.bool:
        raise ValueError(f"a {convention!r} mask must be bool; got dtype {mask.dtype}")
    return mask if convention == "allowed" else ~mask


def convert(
    mask: torch.Tensor | np.ndarray,
    source: Convention,
    target: Convention,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Convert a mask between conventions; the shape is kept.

    Args:
        mask: any shape, e.g. ``(seq_q, seq_k)`` or ``(batch, heads, seq_q, seq_k)``.
        source, target: one of ``"allowed"``, ``"blocked"``, ``"additive"``.
        dtype: float dtype of an additive result (hidden entries are ``-inf``).

    Returns:
        The mask in the ``target`` convention, as a torch tensor.
    """
    for name, value in (("source", source), ("target", target)):
        if value not in CONVENTIONS:
            raise ValueError(f"{name} must be one of {CONVENTIONS}; got {value!r}")
    allowed = _allowed(torch.as_tensor(mask), source)
    if target == "allowed":
        return allowed
    if target == "blocked":
        return ~allowed
    zero = torch.zeros((), dtype=dtype)
    return torch.where(allowed, zero, torch.tensor(float("-inf"), dtype=dtype))


def to_nn_multihead(
    allowed: torch.Tensor, n_heads: int
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """Turn an allowed-mask into ``(attn_mask, key_padding_mask)`` for ``nn.MultiheadAttention``.

    Args:
        allowed: bool, True = may attend: ``(seq_q, seq_k)``, a key-padding mask
            ``(batch, 1, 1, seq_k)`` or ``(batch, 1, seq_k)``, or ``(batch, heads, seq_q, seq_k)``.
        n_heads: heads of the target module (a per-head mask becomes
            ``(batch * heads, seq_q, seq_k)``).

    Returns:
        ``(attn_mask, key_padding_mask)``, both True = blocked, either may be ``None``.
    """
    if allowed.dtype != torch.bool:
        raise ValueError(f"allowed must be a bool tensor; got dtype {allowed.dtype}")
    blocked = ~allowed
    if allowed.dim() == 2:
        return blocked, None
    if allowed.dim() in (3, 4) and all(s == 1 for s in allowed.shape[1:-1]):
        return None, blocked.reshape(allowed.shape[0], allowed.shape[-1])
    if allowed.dim() == 4:
        batch, heads, seq_q, seq_k = allowed.shape
        full = blocked.expand(batch, n_heads, seq_q, seq_k) if heads == 1 else blocked
        if full.shape[1] != n_heads:
            raise ValueError(f"mask has {heads} heads but the module has n_heads={n_heads}")
        return full.reshape(batch * n_heads, seq_q, seq_k), None
    raise ValueError(
        f"cannot express a mask of shape {tuple(allowed.shape)} for nn.MultiheadAttention: use "
        "(seq_q, seq_k), (batch, 1, 1, seq_k) or (batch, heads, seq_q, seq_k)"
    )


def _mha_weights(
    mha: torch.nn.MultiheadAttention,
    x: torch.Tensor,
    attn_mask: torch.Tensor | None,
    key_padding_mask: torch.Tensor | None,
) -> torch.Tensor:
    _, weights = mha(
        x,
        x,
        x,
        attn_mask=attn_mask,
        key_padding_mask=key_padding_mask,
        need_weights=True,
        average_attn_weights=False,
    )
    return weights  # (batch, heads, seq_q, seq_k)


def convention_table(seed: int = 0) -> list[dict[str, str]]:
    """The three mask conventions, passed six ways, as rows checked with the installed PyTorch.

    Introduced in chapter 4. For one causal + padding mask of a batch ``(2, 1, 4, 4)``, every row
    passes the mask to PyTorch in that row's convention and compares the attention weights
    ``(batch, heads, seq_q, seq_k)`` with this package's (allowed mask, ``modules``). The last
    row is a trap: an allowed mask handed to ``nn.MultiheadAttention``, which reads True as hide.

    Returns:
        One dict per row with keys ``"convention"``, ``"dtype"``, ``"attend"``, ``"hide"``,
        ``"passed to"`` and ``"same weights"`` (``"yes"`` or ``"no"``, computed).
    """
    from . import modules

    g = torch.Generator().manual_seed(seed)
    batch, n_heads, seq, d_model = 2, 2, 4, 8
    lengths = torch.tensor([4, 3])
    pad = torch.arange(seq)[None, :] < lengths[:, None]  # (batch, seq_k)
    causal = torch.ones(seq, seq, dtype=torch.bool).tril()  # (seq_q, seq_k)
    allowed = causal & pad[:, None, None, :]  # (batch, 1, seq_q, seq_k)
    x = torch.randn(batch, seq, d_model, generator=g, dtype=torch.float64)
    mha = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) * 0.3)
    mha.eval()
    ours = modules.MultiHeadAttention.from_torch(mha).eval()
    q, k = (torch.randn(batch, n_heads, seq, 3, generator=g, dtype=torch.float64) for _ in "qk")
    eye = torch.eye(seq, dtype=torch.float64)  # V = I: the output of attention is its weights
    F = torch.nn.functional

    def same(a: torch.Tensor, b: torch.Tensor) -> str:
        return "yes" if torch.allclose(a, b, atol=1e-9) else "no"

    with torch.no_grad():
        ref_sdpa, _ = modules.scaled_dot_product_attention(q, k, eye, mask=allowed)
        ref_mha = ours(x, mask=allowed)[1]
        ref_pad = ours(x, mask=pad[:, None, None, :])[1]
        blocked = convert(allowed, "allowed", "blocked")
        additive = convert(allowed, "allowed", "additive", dtype=torch.float64)
        scores = q @ k.transpose(-2, -1) / 3**0.5  # (batch, heads, seq_q, seq_k)
        attn_mask, _ = to_nn_multihead(allowed, n_heads)
        _, key_padding = to_nn_multihead(pad[:, None, None, :], n_heads)
        checks = [
            (
                "allowed",
                "bool",
                "True",
                "False",
                "F.scaled_dot_product_attention(attn_mask=…)",
                same(F.scaled_dot_product_attention(q, k, eye, attn_mask=allowed), ref_sdpa),
            ),
            (
                "blocked",
                "bool",
                "False",
                "True",
                "scores.masked_fill(mask, -inf)",
                same(scores.masked_fill(blocked, float("-inf")).softmax(-1), ref_sdpa),
            ),
            (
                "additive",
                "float",
                "0",
                "-inf",
                "F.scaled_dot_product_attention(attn_mask=…)",
                same(F.scaled_dot_product_attention(q, k, eye, attn_mask=additive), ref_sdpa),
            ),
            (
                "blocked",
                "bool",
                "False",
                "True",
                "nn.MultiheadAttention(attn_mask=…)",
                same(_mha_weights(mha, x, attn_mask, None), ref_mha),
            ),
            (
                "blocked (keys only)",
                "bool",
                "False",
                "True",
                "nn.MultiheadAttention(key_padding_mask=…)",
                same(_mha_weights(mha, x, None, key_padding), ref_pad),
            ),
            (
                "allowed (the trap)",
                "bool",
                "True",
                "False",
                "nn.MultiheadAttention(attn_mask=…)",
                same(_mha_weights(mha, x, ~attn_mask, None).nan_to_num(), ref_mha),
            ),
        ]
    names = ("convention", "dtype", "attend", "hide", "passed to", "same weights")
    return [dict(zip(names, row, strict=True)) for row in checks]
