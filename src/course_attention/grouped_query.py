"""Fewer key/value heads: multi-query and grouped-query attention, and the KV cache they shrink.

Introduced in chapter 11 (efficient attention). Multi-head attention gives every query head its
own key and value head. **Multi-query attention** (MQA, Shazeer 2019) shares one key/value head
among all query heads; **grouped-query attention** (GQA, Ainslie et al. 2023) shares each of
``n_kv_heads`` key/value heads among a group of ``n_heads / n_kv_heads`` query heads. The
outputs keep their shape; what shrinks is what a decoder must cache per token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _validate
from .numpy_ref import merge_heads, scaled_dot_product_attention, split_heads

__all__ = [
    "repeat_kv",
    "grouped_query_attention",
    "kv_cache_bytes_per_token",
    "ModelConfig",
    "MODEL_CONFIGS",
    "kv_cache_table",
]


def _check_groups(n_heads: int, n_kv_heads: int) -> None:
    for name, value in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={value!r}")
    if n_heads % n_kv_heads:
        raise ValueError(
            f"n_kv_heads={n_kv_heads} must divide n_heads={n_heads}: each key/value head "
            "serves a group of n_heads / n_kv_heads query heads"
        )


def repeat_kv(X: ArrayLike, n_heads: int) -> np.ndarray:
    """Repeat key/value heads for their query heads: ``(batch, n_kv_heads, seq, d_head)`` →
    ``(batch, n_heads, seq, d_head)``.

    Introduced in chapter 11. Query head ``i`` reads key/value head ``i // (n_heads /
    n_kv_heads)``: each head is repeated next to itself (``np.repeat``, which copies), not the
    whole stack tiled.
    """
    X = np.asarray(X)
    if X.ndim != 4:
        raise ValueError(f"X must have shape (batch, n_kv_heads, seq, d_head); got {X.shape}")
    _check_groups(n_heads, X.shape[1])
    return np.repeat(X, n_heads // X.shape[1], axis=1)


def grouped_query_attention(
    X_q: ArrayLike,
    X_kv: ArrayLike,
    W_q: ArrayLike,
    W_k: ArrayLike,
    W_v: ArrayLike,
    W_o: ArrayLike,
    n_heads: int,
    n_kv_heads: int,
    mask: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Grouped-query attention in numpy, in the style of ``numpy_ref.multi_head_attention``.

    Introduced in chapter 11. ``n_kv_heads == n_heads`` is multi-head attention,
    ``n_kv_heads == 1`` is multi-query attention. Query head ``i`` reads key/value head
    ``i // (n_heads / n_kv_heads)``.

    Args:
        X_q: queries' inputs ``(batch, seq_q, d_model)``.
        X_kv: keys' and values' inputs ``(batch, seq_k, d_model)``.
        W_q, W_o: ``(d_model, d_model)``.
        W_k, W_v: ``(d_model, n_kv_heads · d_head)`` with ``d_head = d_model / n_heads``.
        n_heads: query heads; ``d_model`` must be divisible by it.
        n_kv_heads: key/value heads; must divide ``n_heads``.
        mask: bool, True = may attend, broadcastable to ``(batch, n_heads, seq_q, seq_k)``.

    Returns:
        ``(output, weights)``: ``(batch, seq_q, d_model)`` and ``(batch, n_heads, seq_q, seq_k)``.
    """
    X_q, X_kv, d_model = _validate.head_inputs(X_q, X_kv, n_heads)
    _check_groups(n_heads, n_kv_heads)
    d_kv = n_kv_heads * (d_model // n_heads)
    names = ("W_q", "W_k", "W_v", "W_o")
    expected = ((d_model, d_model), (d_model, d_kv), (d_model, d_kv), (d_model, d_model))
    W = [_validate.as_float(n, w) for n, w in zip(names, (W_q, W_k, W_v, W_o), strict=True)]
    for name, w, shape in zip(names, W, expected, strict=True):
        if w.shape != shape:
            raise ValueError(
                f"{name} must have shape {shape} (d_model={d_model}, n_heads={n_heads}, "
                f"n_kv_heads={n_kv_heads}); got {w.shape}"
            )
    Q = split_heads(X_q @ W[0], n_heads)  # (batch, n_heads, seq_q, d_head)
    K = repeat_kv(split_heads(X_kv @ W[1], n_kv_heads), n_heads)  # (batch, n_heads, seq_k, d_head)
    V = repeat_kv(split_heads(X_kv @ W[2], n_kv_heads), n_heads)  # (batch, n_heads, seq_k, d_head)
    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    return merge_heads(heads) @ W[3], weights


def kv_cache_bytes_per_token(
    n_layers: int, n_kv_heads: int, d_head: int, bytes_per_value: int = 2
) -> int:
    """Bytes a decoder caches per token: a key and a value per layer and KV head (chapter 11).

    ``2 · n_layers · n_kv_heads · d_head · bytes_per_value`` (2 bytes for float16/bfloat16).
    """
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("d_head", d_head)):
        if value < 1:
            raise ValueError(f"{name} must be ≥ 1; got {name}={value}")
    return 2 * int(n_layers) * int(n_kv_heads) * int(d_head) * int(bytes_per_value)


@dataclass(frozen=True)
class ModelConfig:
    """Attention shape of a published model, with where each number comes from (chapter 11)."""

    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    source: str  # the citation key in references.bib
    where: str  # where in the source the numbers are given
    d_model: int  # the model's width (n_heads · d_head, except for PaLM)
    context: int  # tokens per training sequence

    @property
    def kind(self) -> str:
        """``"MHA"``, ``"MQA"`` or ``"GQA"``."""
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"


#: Published configurations, numbers as their papers (or released configurations) give them.
MODEL_CONFIGS: tuple[ModelConfig, ...] = (
    ModelConfig(
        "GPT-3 175B", 96, 96, 96, 128, "brown2020language",
        "Table 2.1: n_layers 96, d_model 12288, n_heads 96, d_head 128; section 2.1: a context "
        "window of 2048 tokens",
        d_model=12288, context=2048,
    ),
    ModelConfig(
        "Llama 2 70B", 80, 64, 8, 128, "touvron2023llama2",
        "Table 1: GQA, context length 4k; appendix A.2.1: GQA with 8 KV projections; 80 layers, "
        "64 heads, width 8192 (d_head 128) in Meta's released configuration",
        d_model=8192, context=4096,
    ),
    ModelConfig(
        "Mistral 7B", 32, 32, 8, 128, "jiang2023mistral",
        "Table 1: dim 4096, n_layers 32, head_dim 128, n_heads 32, n_kv_heads 8, "
        "window_size 4096, context_len 8192",
        d_model=4096, context=8192,
    ),
    ModelConfig(
        "PaLM 540B", 118, 48, 1, 256, "chowdhery2022palm",
        "Table 1: 118 layers, 48 heads, d_model 18432, head size always 256; section 2: "
        "multi-query attention (one KV head); section 5: sequence length 2048",
        d_model=18432, context=2048,
    ),
)


def kv_cache_table(
    configs: tuple[ModelConfig, ...] = MODEL_CONFIGS,
    context: int = 4096,
    bytes_per_value: int = 2,
) -> list[dict]:
    """One row per model: its KV cache per token and for ``context`` tokens, and as MHA.

    Introduced in chapter 11. Values in bytes per token are exact; the per-context column is in
    GiB. ``saving`` is the MHA cache divided by the model's own.
    """
    rows = []
    for c in configs:
        own = kv_cache_bytes_per_token(c.n_layers, c.n_kv_heads, c.d_head, bytes_per_value)
        mha = kv_cache_bytes_per_token(c.n_layers, c.n_heads, c.d_head, bytes_per_value)
        rows.append(
            {
                "model": c.name,
                "attention": c.kind,
                "layers": c.n_layers,
                "heads": c.n_heads,
                "KV heads": c.n_kv_heads,
                "d_head": c.d_head,
                "KV bytes / token": own,
                f"GiB at {context} tokens": own * context / 2**30,
                "as MHA: bytes / token": mha,
                "saving": mha / own,
            }
        )
    return rows
