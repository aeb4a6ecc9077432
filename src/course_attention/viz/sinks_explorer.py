"""Chapter 14's live explorer figure: a model's sink map and a streaming cache's loss curve.

Introduced in chapter 14. The numbers come from
``course_attention.explorers.sinks.explorer_data`` (the chapter's trained models, computed
once); :func:`sinks_explorer_numbers` picks one state's, as the page (``sinks.js``) does, and
:func:`sinks_explorer_figure` draws them: the notebook's explorer and the page's first state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from .core import PALETTE, WEIGHT_SCALE, _layout

__all__ = ["sinks_explorer_numbers", "sinks_explorer_traces", "sinks_explorer_figure",
           "SINKS_PHONE"]


def sinks_explorer_numbers(data: dict[str, Any], model: str, window: int, sinks: int
                           ) -> dict[str, Any]:
    """One state's numbers of ``data`` (``explorers.sinks.explorer_data``):
    ``share`` ``(layers · heads, context − 1)`` of ``model``; ``cache``, ``recompute``, ``full``
    ``(bins,)``: the loss curves of ``window`` and ``sinks``; ``past``: ``{"cache",
    "recompute", "full"}``, their mean loss past the trained context; ``size``: the cache's
    keys, ``sinks + window``. Introduced in chapter 14."""
    if model not in data["models"] or window not in data["windows"] or sinks not in data["sinks"]:
        raise ValueError(f"need model in {data['models']}, window in {data['windows']} and "
                         f"sinks in {data['sinks']}; got {model!r}, {window!r}, {sinks!r}")
    w, s = data["windows"].index(window), data["sinks"].index(sinks)
    past = data["past"][model]
    return {
        "share": np.asarray(data["share"][model]),
        "cache": np.asarray(data["cache"][model][w][s]),
        "recompute": np.asarray(data["recompute"][model][w][s]),
        "full": np.asarray(data["full"][model]),
        "past": {"cache": float(past["cache"][w][s]), "recompute": float(past["recompute"][w][s]),
                 "full": float(past["full"])},
        "size": sinks + window,
    }


def _rows(layers: int, heads: int) -> list[str]:
    """The map's row labels, ``L0 · H0`` … (data: the same in every language; the axis title
    says what they mean)."""
    return [f"L{layer} · H{head}" for layer in range(layers) for head in range(heads)]


def sinks_explorer_traces(data: dict[str, Any], model: str, window: int, sinks: int
                          ) -> list[go.Heatmap | go.Scatter]:
    """Six traces (chapter 14): the sink map (axes ``x``/``y``: a row per layer and head, a
    column per query position, the colour its mean weight on position 0, the hover the weight
    evenly spread attention would give, ``1/(t + 1)``), then on ``x2``/``y2`` the loss curves
    of the rolling cache, of the recomputation and of full attention, and two vertical lines:
    the end of the trained context and the cache's size."""
    n = sinks_explorer_numbers(data, model, window, sinks)
    x = np.asarray(data["x"], dtype=float).tolist()
    low, high = data["loss_range"]
    uniform = np.asarray(data["uniform"], dtype=float)
    rows = _rows(data["layers"], data["heads"])
    curve = dict(xaxis="x2", yaxis="y2", mode="lines+markers", marker=dict(size=4),
                 hovertemplate=_("positions around %{x}: loss %{y:.3f} nats"))
    line = dict(xaxis="x2", yaxis="y2", mode="lines", y=[low, high])
    return [
        go.Heatmap(z=n["share"].tolist(), x=np.asarray(data["queries"]).tolist(), y=rows,
                   customdata=np.broadcast_to(uniform, n["share"].shape).tolist(),
                   coloraxis="coloraxis", name=_("sink map"),
                   hovertemplate=_("%{y}, query %{x}<br>weight on position 0: %{z:.3f}<br>"
                                   "spread evenly: %{customdata:.3f}<extra></extra>")),
        go.Scatter(x=x, y=n["cache"].tolist(), name=_("rolling cache"),
                   line=dict(color=PALETTE[5], width=2.5), **curve),
        go.Scatter(x=x, y=n["recompute"].tolist(), name=_("recompute the kept tokens"),
                   line=dict(color=PALETTE[0], dash="dash"), **curve),
        go.Scatter(x=x, y=n["full"].tolist(), name=_("full attention"),
                   line=dict(color=PALETTE[2], dash="dot"), **curve),
        go.Scatter(x=[data["context"]] * 2, name=_("end of the trained context"),
                   line=dict(color="#777777", width=1.5),
                   hovertemplate=_("trained context: %{x} positions<extra></extra>"), **line),
        go.Scatter(x=[n["size"]] * 2, name=_("cache size (sinks + window)"),
                   line=dict(color=PALETTE[1], width=1.5, dash="dash"),
                   hovertemplate=_("cache size: %{x} keys<extra></extra>"), **line),
    ]


#: The figure on a phone (the explorer's ``spec["phone"]``, under 480 px): taller, and room for
#: the legend, which wraps to more rows.
SINKS_PHONE: dict = {"height": 900, "margin": {"b": 190},
                     "coloraxis": {"colorbar": {"thickness": 10}}}


def sinks_explorer_figure(data: dict[str, Any], model: str = "sink", window: int = 16,
                          sinks: int = 4, title: str | None = None) -> go.Figure:
    """:func:`sinks_explorer_traces` as one figure (chapter 14's live explorer): the sink map
    on top, the loss by position below (the same axes for every state)."""
    fig = _layout(go.Figure(sinks_explorer_traces(data, model, window, sinks)), title,
                  height=780)
    context = data["context"]
    fig.update_layout(
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"),
        xaxis=dict(domain=[0, 1], anchor="y", range=[0.5, context - 0.5],
                   title=_("query position")),
        yaxis=dict(domain=[0.6, 1], autorange="reversed", title=_("layer L · head H")),
        xaxis2=dict(domain=[0, 1], anchor="y2", range=[0, data["length"]],
                    title=_("position in the text")),
        yaxis2=dict(domain=[0, 0.42], range=list(data["loss_range"]),
                    title=_("next-token loss (nats)")),
        coloraxis=dict(cmin=0, cmax=1, colorscale=WEIGHT_SCALE, colorbar=dict(
            title=dict(text=_("weight on position 0"), side="right"), len=0.42, y=1,
            yanchor="top", thickness=16)),
        margin=dict(l=85, b=125),
    )
    return fig
