"""Figures of chapter 3 (self-attention): the "it" weights, one query's row, recurrence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _
from .core import PALETTE, _bars, _layout, _rounded, _shown, curve, panel_title, unique_labels

__all__ = [
    "query_row_figure",
    "it_weights_figure",
    "recurrence_figure",
]


def _check_square(weights: ArrayLike, tokens: Sequence[str]) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(tokens), len(tokens)):
        raise ValueError(
            f"self-attention weights must be (seq, seq) = ({len(tokens)}, {len(tokens)}) for "
            f"{len(tokens)} tokens; got shape {w.shape}"
        )
    return w


def _row_traces(w: np.ndarray, tokens: Sequence[str], query: int) -> list[Any]:
    bars = _bars(w[query], tokens)  # (seq,) weights of one query over every key
    bars.marker.color = [PALETTE[1] if j == query else PALETTE[0] for j in range(len(tokens))]
    return [bars]


def query_row_figure(
    weights: ArrayLike, tokens: Sequence[str], query: int, title: str | None = None
) -> go.Figure:
    """Bars of one query token's weights over every token of the sentence.

    Introduced in chapter 3. ``weights`` ``(seq, seq)``; the query's own bar is orange.
    """
    w = _check_square(weights, tokens)
    if not 0 <= query < len(tokens):
        raise ValueError(f"query={query} is not a position in {len(tokens)} tokens")
    fig = go.Figure(_row_traces(w, tokens, query))
    fig.update_yaxes(range=[0, 1.1], title=_("weight"))
    fig.update_xaxes(title=_("key token"))
    return _layout(fig, title, height=340)


def it_weights_figure(
    rows: Mapping[str, ArrayLike], tokens: Sequence[str], title: str | None = None
) -> go.Figure:
    """Grouped bars: the weights of "it" in each sentence, one colour per sentence.

    Introduced in chapter 3. ``rows`` maps a sentence name to the weights ``(seq,)`` of its "it"
    query; ``tokens`` labels the keys (sentences of equal length, e.g. with the last word
    written ``tired/wide``).
    """
    if not rows or len(rows) > len(PALETTE):
        raise ValueError(f"need 1 to {len(PALETTE)} sentences; got {len(rows)}")
    fig = go.Figure()
    for (name, row), color in zip(rows.items(), (PALETTE[0], PALETTE[5], *PALETTE), strict=False):
        r = np.asarray(row, dtype=float)
        if r.shape != (len(tokens),):
            raise ValueError(f"{name}: weights of shape {r.shape} for {len(tokens)} tokens")
        name = _shown(name)  # a chapter's sentence: translated when the catalogue has it
        fig.add_trace(
            go.Bar(
                x=unique_labels(tokens),
                y=_rounded(r),
                name=name,
                marker_color=color,
                hovertemplate=_("key %{{x}}<br>weight %{{y:.3f}}<extra>{name}</extra>").format(
                    name=name),
            )
        )
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=1.1, x=0))
    fig.update_yaxes(range=[0, 1.05], title=_("weight of the query 'it'"))
    return _layout(fig, title, height=360)


def recurrence_figure(timing: Any, title: str | None = None) -> go.Figure:
    """Dependent steps and wall time against the sequence length, recurrence vs attention.

    Introduced in chapter 3. ``timing`` is a
    :class:`course_attention.experiments.RecurrenceTiming` (fields ``(n_lengths,)``). Left: the
    dependent steps of each layer; right: the wall time of the recurrence, of self-attention as a
    loop over queries and of self-attention in one batched call. Logarithmic axes.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(panel_title(N_("dependent steps")),
                        panel_title(N_("wall time (milliseconds)"))),
    )
    fig.update_annotations(font_size=13)  # the panels' titles: two short lines each
    seq = np.asarray(timing.seq, dtype=float).tolist()
    curves = {  # name (the legend group: the same in every language): (steps, seconds, colour)
        N_("recurrent layer"): (timing.recurrence_steps, timing.recurrence_seconds, PALETTE[5]),
        N_("self-attention, loop over queries"): (None, timing.attention_loop_seconds,
                                                  PALETTE[2]),
        N_("self-attention, one batched call"): (
            timing.attention_steps,
            timing.attention_seconds,
            PALETTE[0],
        ),
    }
    for name, (steps, seconds, color) in curves.items():
        panels = [(2, 1e3 * np.asarray(seconds, float))]
        if steps is not None:
            panels.insert(0, (1, np.asarray(steps, float)))
        for col, y in panels:
            hover = _("T %{{x}}<br>%{{y:.3g}}<extra>{name}</extra>").format(name=_(name))
            show = col == panels[0][0]
            trace = curve(seq, y, _(name), color, hover, legendgroup=name, showlegend=show)
            fig.add_trace(trace, row=1, col=col)
    fig.update_xaxes(
        type="log", title=_("sequence length T"), tickvals=seq, ticktext=[f"{x:g}" for x in seq]
    )
    fig.update_yaxes(type="log")
    _layout(fig, title, height=460)
    return fig.update_layout(legend=dict(orientation="h", y=-0.3, x=0), margin_b=120)
