"""Chapter 15's live explorer figure: a linear-attention state as tokens are written.

Introduced in chapter 15. The keys, values and rules are
``course_attention.explorers.linear``'s; :func:`linear_explorer_numbers` computes one state's
numbers with the package (``explorers.linear.memory_states``, which runs
``linear_attention.gated_delta_rule``), as the page (``linear.js``) computes them, and
:func:`linear_explorer_figure` draws them: the notebook's explorer and the page's first state.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from .core import PALETTE, _layout

__all__ = ["linear_explorer_numbers", "linear_explorer_traces", "linear_explorer_figure",
           "LINEAR_PHONE"]


@cache
def _states(rule: str, beta: float, alpha: float) -> np.ndarray:
    """``S_0 … S_seq`` ``(seq + 1, d_k, d_v)`` of the explorer's sequence under ``rule``."""
    from ..linear_attention import memory as lx

    states = lx.memory_states(rule, lx.memory_keys(), lx.memory_values(), beta, alpha)
    return states.numpy()


def linear_explorer_numbers(rule: str, t: int, beta: float, alpha: float, key: str
                            ) -> dict[str, Any]:
    """One state's numbers (float64), computed by the package. Introduced in chapter 15.

    ``state`` ``(d_k, d_v)``: ``S_t`` after ``t`` tokens of ``explorers.linear.SEQUENCE``
    written by ``rule`` (``explorers.linear.memory_states``); ``recall`` ``(d_v,)``:
    ``S_tᵀ q`` with ``q`` the unit key ``key``; ``last``: the token (1 … t) that wrote ``key``
    last, 0 if none; ``target`` ``(d_v,)``: the value it wrote (zeros if none); ``error``:
    ``‖recall − target‖``; ``written``: the keys of tokens 1 … t.
    """
    from ..linear_attention import memory as lx

    n = len(lx.SEQUENCE)
    if (rule not in lx.RULES or key not in lx.NAMES or isinstance(t, bool)
            or not isinstance(t, (int, np.integer)) or not 0 <= t <= n):
        raise ValueError(f"need rule in {lx.RULES}, t in 0 … {n} and key in {lx.NAMES}; got "
                         f"{rule!r}, {t!r}, {key!r}")
    state = _states(rule, float(beta), float(alpha))[t]
    query = np.eye(len(lx.NAMES))[lx.NAMES.index(key)]
    recall = state.T @ query
    writes = [i + 1 for i, name in enumerate(lx.SEQUENCE[:t]) if name == key]
    last = writes[-1] if writes else 0
    target = lx.memory_values().numpy()[last - 1] if last else np.zeros(state.shape[1])
    return {"state": state, "recall": recall, "target": target, "last": last,
            "error": float(np.linalg.norm(recall - target)), "written": list(lx.SEQUENCE[:t])}


def linear_explorer_traces(rule: str, t: int, beta: float, alpha: float, key: str,
                           zmax: float) -> list[go.Heatmap | go.Bar]:
    """Three traces (chapter 15): the state ``S_t`` (axes ``x``/``y``: a row per key, a column
    per value component, colours from ``−zmax`` to ``zmax``), then on ``x2``/``y2`` the bars of
    the recall ``S_tᵀ q`` and of the value written last under the key."""
    from ..linear_attention import memory as lx

    n = linear_explorer_numbers(rule, t, beta, alpha, key)
    columns = list(range(n["state"].shape[1]))
    bar = dict(x=columns, xaxis="x2", yaxis="y2",
               hovertemplate=_("component %{x}: %{y:.3f}<extra></extra>"))
    return [
        go.Heatmap(z=n["state"].tolist(), x=columns, y=list(lx.NAMES), zmin=-zmax, zmax=zmax,
                   zmid=0, colorscale="RdBu", texttemplate="%{z:.1f}", name=_("state"),
                   colorbar=dict(thickness=12, len=0.5, y=1, yanchor="top"),
                   hovertemplate=_("row %{y}, column %{x}: %{z:.3f}<extra></extra>")),
        go.Bar(y=n["recall"].tolist(), name=_("recall Sᵀq"), marker_color=PALETTE[0], **bar),
        go.Bar(y=n["target"].tolist(), name=_("value written last under the key"),
               marker_color=PALETTE[1], **bar),
    ]


#: The figure on a phone (the explorer's ``spec["phone"]``, under 480 px): taller, and room for
#: the legend's two rows.
LINEAR_PHONE: dict = {"height": 700, "margin": {"b": 110}}


def linear_explorer_figure(rule: str = "linear", t: int = 4, beta: float = 1.0,
                           alpha: float = 0.9, key: str = "a", title: str | None = None
                           ) -> go.Figure:
    """:func:`linear_explorer_traces` as one figure (chapter 15's live explorer): the state on
    top, the recall below (the same axes for every state)."""
    from ..linear_attention import memory as lx

    zmax = lx.state_range()
    fig = _layout(go.Figure(linear_explorer_traces(rule, t, beta, alpha, key, zmax)), title,
                  height=620)
    fig.update_layout(
        barmode="group",
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"),
        xaxis=dict(domain=[0, 1], anchor="y", title=_("value component"), dtick=1),
        yaxis=dict(domain=[0.56, 1], autorange="reversed", title=_("state row (key)")),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=_("value component"), dtick=1),
        yaxis2=dict(domain=[0, 0.4], range=[-zmax, zmax], title=_("recalled and stored")),
        margin=dict(b=100),
    )
    return fig
