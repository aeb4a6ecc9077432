"""Figures of chapter 10 (positions): RoPE's clocks and scores by offset, length generalisation."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from ..i18n import N_, _
from .core import PALETTE, _layout, _rounded, _shown, curve

__all__ = ["rope_offset_traces", "rope_offset_figure", "length_figure"]


def _curves(d: int, base: float, max_offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .. import positions

    offsets = np.arange(max_offset + 1)
    scores = positions.rope_score_by_offset(d, offsets, n_samples=500, base=base)  # (500, n)
    return offsets, scores.mean(axis=0), scores[0]


def rope_offset_traces(
    offset: int, d: int = 64, base: float = 10000.0, max_offset: int = 64
) -> list[go.Bar | go.Scatter]:
    """Four traces for one offset ``m − n`` of rotary positions (chapter 10).

    Top axes: a bar per pair ``i`` (fast pairs on the left), ``cos(offset · θ_i)``, the share of
    that pair's ``|q_i|²`` that survives in the score of a vector with itself. Bottom axes
    (``x2``/``y2``): that score for every offset ``0 … max_offset``, averaged over 500 random
    vectors and for one of them, with a marker at ``offset``.
    """
    from .. import numpy_ref

    if not 0 <= offset <= max_offset:
        raise ValueError(f"offset={offset} must lie in 0 … max_offset={max_offset}")
    theta = numpy_ref.rotary_frequencies(d, base)  # (d/2,)
    offsets, mean, one = _curves(d, base, max_offset)
    return [
        go.Bar(
            x=list(range(d // 2)),
            y=_rounded(np.cos(offset * theta)),
            marker_color=PALETTE[0],
            name="cos(offset · θ_i)",
            hovertemplate=_("pair %{x}<br>cos(offset · θ_i) = %{y:.3f}<extra></extra>"),
        ),
        curve(
            offsets,
            mean,
            _("mean of 500 vectors"),
            PALETTE[1],
            _("offset %{x}<br>mean score %{y:.2f}<extra></extra>"),
            xaxis="x2",
            yaxis="y2",
        ),
        curve(
            offsets,
            one,
            _("one vector"),
            PALETTE[2],
            _("offset %{x}<br>score %{y:.2f}<extra></extra>"),
            xaxis="x2",
            yaxis="y2",
        ),
        go.Scatter(
            x=[offset],
            y=_rounded([mean[offset]]),
            mode="markers",
            name=_("this offset"),
            marker=dict(size=14, color=PALETTE[5], symbol="diamond"),
            xaxis="x2",
            yaxis="y2",
            hovertemplate=_("offset %{x}<br>mean score %{y:.2f}<extra></extra>"),
        ),
    ]


#: The RoPE figure on a phone (the explorer's ``spec["phone"]``, applied under 480 px): the
#: legend, between the panels on a wide screen, wraps to four rows there and lay on the lower
#: panel's curves; it goes under the figure instead.
ROPE_PHONE: dict = {"height": 700, "margin": {"b": 170},
                    "legend": {"y": -0.13, "yanchor": "top", "x": 0}}


def _rope_axes(fig: go.Figure, d: int, max_offset: int) -> go.Figure:
    fig.update_layout(
        legend=dict(orientation="h", y=0.47, x=0),
        xaxis=dict(domain=[0, 1], anchor="y", title=_("pair i (left: fast, right: slow)")),
        yaxis=dict(domain=[0.62, 1], range=[-1.1, 1.1], title="cos(offset · θ_i)"),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=_("offset m − n"),
                    range=[-1, max_offset + 1]),
        yaxis2=dict(domain=[0, 0.38], title=_("score q_m · q_n"), range=[-0.6 * d, 1.1 * d]),
    )
    return fig


def rope_offset_figure(
    offset: int, d: int = 64, base: float = 10000.0, max_offset: int = 64, title: str | None = None
) -> go.Figure:
    """:func:`rope_offset_traces` as one figure (the live explorer's figure, chapter 10)."""
    fig = go.Figure(rope_offset_traces(offset, d, base, max_offset))
    return _rope_axes(_layout(fig, title, height=560), d, max_offset)


def length_figure(
    accuracy: Mapping[str, Mapping[int, float]],
    trained_max: int,
    title: str | None = None,
    y_title: str = N_("exact-copy accuracy"),
) -> go.Figure:
    """Accuracy by string length, one line per position scheme (chapter 10).

    ``accuracy`` maps a scheme's name to ``{length: share}``; lengths above ``trained_max`` were
    never seen in training (shaded).
    """
    if not accuracy:
        raise ValueError("length_figure needs at least one curve")
    fig = go.Figure()
    for i, (name, by_length) in enumerate(accuracy.items()):
        lengths = sorted(by_length)
        fig.add_trace(
            curve(
                lengths,
                [by_length[n] for n in lengths],
                _shown(name),  # a chapter's scheme: translated when the catalogue has it
                PALETTE[i % len(PALETTE)],
                _("{name}<br>length %{{x}}<br>accuracy %{{y:.2f}}<extra></extra>").format(
                    name=_shown(name)),
            )
        )
    fig.add_vrect(
        x0=trained_max + 0.5,
        x1=max(max(a) for a in accuracy.values()) + 0.5,
        fillcolor="#E5E5E5",
        opacity=0.5,
        line_width=0,
        annotation_text=_("never trained on"),
        annotation_position="top left",
    )
    fig.update_xaxes(title=_("symbols in the string"), dtick=1)
    fig.update_yaxes(title=_shown(y_title), range=[-0.05, 1.1])
    fig = _layout(fig, title, height=440)
    # The legend goes under the axes (it wraps on a narrow screen) so that the plot keeps the
    # width; keep titles short, a phone shows about 40 characters.
    fig.update_layout(legend=dict(orientation="h", x=0, y=-0.22, yanchor="top"))
    return fig.update_layout(margin=dict(b=110))
