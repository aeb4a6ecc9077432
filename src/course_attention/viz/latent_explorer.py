"""Chapter 13's live explorer figure: a latent width and a top-k, on one small fixed layer.

Introduced in chapter 13. One fixed attention layer (seeded, float64): ``T`` tokens ``x``
``(T, d_model)``, key projection ``W_K`` ``(d_model, heads · d_head)``, the full keys
``K = x W_K``. A latent of width ``d_c`` keeps the best rank-``d_c`` factor of ``W_K``
(Eckart–Young: ``W_K = P Σ Qᵀ``, down-projection ``W_DKV = (P Σ)[:, :d_c]``, up-projection
``W_UK = Qᵀ[:d_c]``): the latent ``c = x W_DKV`` ``(T, d_c)`` is what a token caches, and
``MultiHeadLatentAttention.expand(c)`` rebuilds every head's keys from it. The latent's RMSNorm
(a scale per token, which ``W_UK`` cannot undo in a plain factorisation) and the rotary key are
left out of the rebuilt keys; the rotary key's ``d_rope`` numbers are counted in the cache.
Head 0's causal scores ``q · k / √d_head`` of the full keys choose each query's top-k keys
(:func:`course_attention.sparse.topk_mask`).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from .core import PALETTE, _layout, _rounded

__all__ = [
    "LATENT_LAYER",
    "LATENT_WIDTHS",
    "latent_layer",
    "latent_explorer_numbers",
    "latent_explorer_traces",
    "latent_explorer_figure",
    "LATENT_PHONE",
]

#: The fixed layer — tokens, model width, heads, head width (keys without position), the rotary
#: key's width (cached, not drawn), GQA's key/value heads (the cache bars), bytes a number
#: (bfloat16) and the seed of its weights and tokens.
LATENT_LAYER = {"tokens": 16, "d_model": 16, "heads": 4, "d_head": 8, "d_rope": 4,
                "kv_heads": 2, "bytes": 2, "seed": 0}
#: The latent widths the explorer offers — up to ``d_model``, the rank of ``W_K``.
LATENT_WIDTHS = (1, 2, 4, 8, 16)


def latent_layer(seed: int | None = None) -> dict[str, np.ndarray]:
    """The fixed layer's float64 arrays (chapter 13's explorer; the page's data).

    ``x`` ``(T, d_model)``; ``keys`` ``(T, heads · d_head)`` = ``x W_K``; ``down`` ``(d_model,
    d_model)`` = ``P Σ`` and ``up`` ``(d_model, heads · d_head)`` = ``Qᵀ`` (``W_K = down ·
    up``, singular values in decreasing order); ``latents`` ``(T, d_model)`` = ``x · down`` (a
    width-``d_c`` latent is its first ``d_c`` columns); ``scores`` ``(T, T)``: head 0's
    ``q · k / √d_head`` with ``q = x W_Q`` (no mask: the page and :mod:`~course_attention.sparse`
    apply the causal one).
    """
    import torch

    p = LATENT_LAYER
    g = torch.Generator().manual_seed(p["seed"] if seed is None else seed)
    f64 = torch.float64
    width = p["heads"] * p["d_head"]
    x = torch.randn(p["tokens"], p["d_model"], generator=g, dtype=f64)
    w_k = torch.randn(p["d_model"], width, generator=g, dtype=f64) / p["d_model"] ** 0.5
    w_q = torch.randn(p["d_model"], p["d_head"], generator=g, dtype=f64) / p["d_model"] ** 0.5
    u, s, vh = torch.linalg.svd(w_k, full_matrices=False)  # (d, d), (d,), (d, width)
    keys = x @ w_k
    return {
        "x": x.numpy(), "keys": keys.numpy(), "down": (u * s).numpy(), "up": vh.numpy(),
        "latents": (x @ (u * s)).numpy(),
        "scores": ((x @ w_q) @ keys[:, : p["d_head"]].T / p["d_head"] ** 0.5).numpy(),
    }


def latent_explorer_numbers(d_c: int, k: int) -> dict[str, np.ndarray | float | dict]:
    """Every number of the explorer's figure at latent width ``d_c`` and ``top-k`` (float64).

    Introduced in chapter 13, computed by the package: ``rebuilt`` ``(T, heads · d_head)`` by
    :meth:`course_attention.mla.MultiHeadLatentAttention.expand` of the width-``d_c`` latent
    (its ``kv_b_proj`` key rows set to ``W_UK``); ``error`` ``(T,)`` = ``‖k̂_t − k_t‖ / ‖k_t‖``;
    ``cache`` bytes per token of this layer as MHA, GQA and MLA
    (:func:`course_attention.mla.cache_bytes_per_token`); ``read`` ``(T, T)`` the causal top-k
    choice (:func:`course_attention.sparse.topk_mask`), ``weights`` ``(T, T)`` the causal
    softmax of the scores, ``mass`` ``(T,)`` the weight each query's chosen keys hold and
    ``mean_mass`` their mean (:func:`course_attention.sparse.topk_mass`).
    """
    import torch

    from .. import mla, sparse

    p = LATENT_LAYER
    if d_c not in LATENT_WIDTHS:
        raise ValueError(f"d_c must be one of {LATENT_WIDTHS}; got {d_c!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= p["tokens"]:
        raise ValueError(f"k must be an integer in 1 … {p['tokens']}; got {k!r}")
    layer = latent_layer()
    h, d = p["heads"], p["d_head"]
    config = mla.MLAConfig(d_model=p["d_model"], n_heads=h, d_c=d_c, d_nope=d, d_rope=p["d_rope"],
                           d_v=d)
    attn = mla.MultiHeadLatentAttention(config).double()
    with torch.no_grad():
        w = attn.kv_b_proj.weight.view(h, 2 * d, d_c)  # per head: d_nope key rows, d_v value rows
        w[:, :d] = torch.as_tensor(layer["up"][:d_c]).view(d_c, h, d).permute(1, 2, 0)
        c = torch.as_tensor(layer["latents"][:, :d_c])[None]  # (1, T, d_c)
        k_nope = attn.expand(c)[0][0]  # (heads, T, d_head)
    rebuilt = k_nope.transpose(0, 1).reshape(p["tokens"], h * d).numpy()
    keys = layer["keys"]
    error = np.linalg.norm(rebuilt - keys, axis=1) / np.linalg.norm(keys, axis=1)
    shapes = {"MHA": ("MHA", h), "GQA": ("GQA", p["kv_heads"]), "MLA": ("MLA", h)}
    cache = {
        name: mla.cache_bytes_per_token(mla.PublishedConfig(
            name, kind, 1, h, kv, d, "", "", d_c=d_c if kind == "MLA" else 0,
            d_rope=p["d_rope"] if kind == "MLA" else 0), p["bytes"])
        for name, (kind, kv) in shapes.items()
    }
    scores = torch.as_tensor(layer["scores"])
    read = sparse.topk_mask(scores, k)
    future = torch.ones_like(read).triu(1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return {
        "rebuilt": rebuilt, "keys": keys, "error": error, "cache": cache,
        "read": read.numpy(), "visible": (~future).numpy(), "weights": weights.numpy(),
        "mass": (weights * read).sum(-1).numpy(), "mean_mass": sparse.topk_mass(weights, k),
    }


def latent_explorer_traces(d_c: int, k: int) -> list[go.Bar | go.Heatmap]:
    """Four traces (chapter 13): the cache bytes per token (a bar each for MHA, GQA, MLA;
    axes ``x``/``y``), the rebuilt keys' error per key (``x2``/``y2``), and the query × key
    grid (``x3``/``y3``): the visible keys a query does not read (grey), those it reads
    (their attention weight), ``None`` elsewhere."""
    n = latent_explorer_numbers(d_c, k)
    t = LATENT_LAYER["tokens"]
    names = list(n["cache"])
    read, visible, weights = n["read"], n["visible"], n["weights"]
    return [
        go.Bar(x=[n["cache"][m] for m in names], y=names, orientation="h", showlegend=False,
               marker_color=[PALETTE[5], PALETTE[1], PALETTE[0]], name=_("cache"),
               hovertemplate=_("%{y}: %{x} bytes a token<extra></extra>")),
        go.Bar(x=list(range(t)), y=_rounded(n["error"]), xaxis="x2", yaxis="y2",
               showlegend=False, marker_color=PALETTE[2], name=_("error"),
               hovertemplate=_("key %{x}: error %{y:.3f}<extra></extra>")),
        go.Heatmap(z=[[1.0 if v and not r else None for v, r in zip(vr, rr, strict=True)]
                      for vr, rr in zip(visible, read, strict=True)],
                   xaxis="x3", yaxis="y3", colorscale=[[0, "#D9D9D9"], [1, "#D9D9D9"]],
                   zmin=0, zmax=1, showscale=False, name=_("not read"),
                   hovertemplate=_("query %{y}, key %{x}: not read<extra></extra>")),
        go.Heatmap(z=[[round(float(w), 4) if r else None for w, r in zip(wr, rr, strict=True)]
                      for wr, rr in zip(weights, read, strict=True)],
                   xaxis="x3", yaxis="y3", colorscale=[[0, "#9ECAE1"], [1, "#08306B"]],
                   zmin=0, zmax=1, showscale=False, name=_("read"),
                   hovertemplate=_("query %{y}, key %{x}: weight %{z:.3f}<extra></extra>")),
    ]


#: The figure on a phone (the explorer's ``spec["phone"]``, under 480 px): taller.
LATENT_PHONE: dict = {"height": 1050}


def latent_explorer_figure(d_c: int = 4, k: int = 4, title: str | None = None) -> go.Figure:
    """:func:`latent_explorer_traces` as one figure (chapter 13's live explorer): the cache
    bars on top, the error per rebuilt key in the middle, which keys each query reads below."""
    p = LATENT_LAYER
    t = p["tokens"]
    most = 2 * p["heads"] * p["d_head"] * p["bytes"]
    fig = _layout(go.Figure(latent_explorer_traces(d_c, k)), title, height=760)
    fig.update_layout(
        showlegend=False,
        xaxis=dict(domain=[0, 1], anchor="y", range=[0, 1.05 * most],
                   title=_("cache bytes a token, one layer")),
        yaxis=dict(domain=[0.86, 1], autorange="reversed"),
        xaxis2=dict(domain=[0, 1], anchor="y2", range=[-0.5, t - 0.5],
                    title=_("key (token position)")),
        yaxis2=dict(domain=[0.5, 0.7], range=[0, 1.05], title=_("rebuilt key error")),
        xaxis3=dict(domain=[0, 1], anchor="y3", range=[-0.5, t - 0.5], title=_("key")),
        yaxis3=dict(domain=[0, 0.36], range=[t - 0.5, -0.5], title=_("query")),
        margin=dict(l=60, r=20, b=50),
    )
    return fig
