"""Figures of chapter 14: where each head's weight lands, and a text read past the window.

Introduced in chapter 14: :func:`share_figure` (the weight each head puts on position 0, model by
model, against attention spread evenly) and :func:`streaming_figure` (the next-token loss by
position when a long text is read through a rolling cache, with sinks, or recomputed).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import _
from .core import PALETTE, WEIGHT_SCALE, _layout, _rounded, axis_title, curve

__all__ = ["share_figure", "streaming_figure", "binned"]


def share_figure(shares: Mapping[str, ArrayLike], uniform: float,
                 title: str | None = None) -> go.Figure:
    """A heatmap: one row per model, one column per head (``L0 H0`` …), the share of the
    head's weight on position 0 ``shares[name]`` ``(layers, heads)``, written in each cell.

    Introduced in chapter 14. ``uniform`` (the share attention spread evenly would give) sets
    the middle of the colour scale: darker cells are heads that favour position 0.
    """
    if not shares:
        raise ValueError("need at least one model's shares")
    arrays = {k: np.asarray(v, dtype=float) for k, v in shares.items()}
    layers = max(a.shape[0] for a in arrays.values())
    heads = max(a.shape[1] for a in arrays.values())
    if any(a.ndim != 2 for a in arrays.values()) or not 0 < uniform < 1:
        raise ValueError("each share must be (layers, heads), and 0 < uniform < 1")
    z = np.full((len(arrays), layers * heads), np.nan)
    for row, a in enumerate(arrays.values()):
        z[row, : a.size] = a.reshape(-1)
    columns = [f"L{layer} H{head}" for layer in range(layers) for head in range(heads)]
    fig = go.Figure(go.Heatmap(
        z=_rounded(z), x=columns, y=list(arrays), zmin=0.0, zmax=max(0.3, float(np.nanmax(z))),
        colorscale=WEIGHT_SCALE, texttemplate="%{z:.2f}",
        colorbar=dict(title=_("share")),
        hovertemplate=_("%{y}<br>%{x}<br>weight on position 0: %{z:.3f}<extra></extra>")))
    fig.update_xaxes(title=_("layer and head"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, title, height=120 + 45 * len(arrays))


def binned(values: ArrayLike, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(centres (k,), means (k,))``: ``values`` ``(n,)`` averaged over consecutive bins of
    ``size`` positions (the last bin may be shorter); centres are the bins' mean positions."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or not len(v) or isinstance(size, bool) or not isinstance(size, int) \
            or size < 1:
        raise ValueError(f"need values (n,), n ≥ 1, and a positive integer size; got "
                         f"{v.shape}, {size!r}")
    starts = np.arange(0, len(v), size)
    means = np.array([v[s: s + size].mean() for s in starts])
    centres = np.array([np.arange(s, min(s + size, len(v))).mean() for s in starts])
    return centres, means


def streaming_figure(curves: Mapping[str, ArrayLike], context: int, cache: int,
                     size: int = 8, title: str | None = None) -> go.Figure:
    """The next-token loss by position, one line per way of reading the text: ``curves[name]``
    ``(n,)``, entry ``t`` the loss of predicting token ``t + 1``, averaged over bins of ``size``
    positions. Dotted lines mark the trained ``context`` and the cache's size ``cache``, labelled
    in the empty band the y axis leaves above the curves.
    Introduced in chapter 14."""
    if not curves:
        raise ValueError("need at least one curve")
    hover = _("positions around %{x:.0f}<br>loss %{y:.3f} nats<extra></extra>")
    fig = go.Figure()
    lows, highs = [], []
    for i, (name, values) in enumerate(curves.items()):
        x, y = binned(values, size)
        lows.append(float(y.min()))
        highs.append(float(y.max()))
        fig.add_trace(curve(x, y, name, PALETTE[i % len(PALETTE)], hover).update(mode="lines"))
    lo, hi = min(lows), max(highs)
    span = max(hi - lo, 1e-3)  # the top third stays empty for the lines' labels
    fig.update_yaxes(range=[lo - 0.05 * span, hi + 0.6 * span])
    for where, text, side in ((context, _("trained context"), "top right"),
                              (cache, _("cache size"), "top left")):
        fig.add_vline(x=where, line_dash="dot", line_color="grey", annotation_position=side,
                      annotation=dict(text=text, textangle=-90, font=dict(size=11)))
    fig.update_xaxes(title=_("position in the text"))
    fig.update_yaxes(title=axis_title(_("loss (nats)")))
    return _layout(fig, title, height=420,
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.25, yanchor="top"))
