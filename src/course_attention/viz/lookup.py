"""Figures of chapter 1: word vectors on a plane, soft look-up, the temperature slider."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .core import (
    _DIGITS,
    PALETTE,
    _bars,
    _layout,
    slider_figure,
)

__all__ = [
    "word_plane",
    "soft_lookup_traces",
    "soft_lookup_figure",
    "query_direction",
    "temperature_slider",
    "LOOKUP_KEYS",
    "LOOKUP_ANGLES",
    "LOOKUP_TEMPERATURES",
    "LOOKUP_PLANE",
]


#: Keys of the chapter-1 soft look-up figures (the words of ``toy.FRUIT_DICT``).
LOOKUP_KEYS: tuple[str, ...] = ("apple", "banana", "chair")

#: The steps of :func:`temperature_slider` (chapter 1 reasons about them, so they are named).
LOOKUP_TEMPERATURES: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 20.0)

#: The soft look-up plane shows ``[-LOOKUP_PLANE, LOOKUP_PLANE]`` on both axes, exactly the
#: range the live explorer's query can reach (its sliders, or a drag on the website).
LOOKUP_PLANE = 1.3

#: The query angles in degrees that chapter 1 turns a unit query through.
LOOKUP_ANGLES: tuple[float, ...] = tuple(float(a) for a in range(-30, 181, 15))


def _arrow_traces(
    vectors: np.ndarray, words: Sequence[str], color: str, name: str, width: float = 2.0
) -> list[go.Scatter]:
    """Arrows from the origin to each row of ``vectors`` ``(n, 2)``: shafts, then labelled tips.

    The labels sit on a trace of their own (no gaps): plotly drops some text of a trace whose
    points are separated by ``None``.
    """
    tips = np.round(np.asarray(vectors, dtype=float), _DIGITS)  # (n, 2)
    x = [v for vx in tips[:, 0].tolist() for v in (0.0, vx, None)]
    y = [v for vy in tips[:, 1].tolist() for v in (0.0, vy, None)]
    shafts = go.Scatter(
        x=x, y=y, mode="lines", line=dict(color=color, width=width), name=name, hoverinfo="skip"
    )
    labels = go.Scatter(
        x=tips[:, 0].tolist(),
        y=tips[:, 1].tolist(),
        text=list(words),
        mode="markers+text",
        textposition=["top center" if vy >= 0 else "bottom center" for vy in tips[:, 1]],
        marker=dict(size=9, color=color),
        name=name,
        hoverinfo="skip",
    )
    return [shafts, labels]


def word_plane(
    words: Sequence[str] | None = None,
    query: str | None = None,
    title: str | None = None,
) -> go.Figure:
    """The 2-D toy word vectors of ``toy.WORD_VECTORS`` drawn as arrows on the plane.

    Introduced in chapter 1. ``words`` defaults to the whole vocabulary; ``query`` (one of the
    words) is drawn in a second colour, and hovering a word shows its dot product with it.
    """
    from .. import toy

    words = list(toy.WORD_VECTORS) if words is None else list(words)
    others = [w for w in words if w != query]
    fig = go.Figure(_arrow_traces(toy.word_matrix(others), others, PALETTE[0], "word"))
    if query is not None:
        q = toy.word_matrix([query])
        fig.add_traces(_arrow_traces(q, [query], PALETTE[5], "query", width=4.0))
        dots = toy.word_matrix(others) @ q[0]  # (n_words,)
        fig.data[1].hovertext = [f"{w}: q·k = {d:.2f}" for w, d in zip(others, dots, strict=True)]
        fig.data[1].hoverinfo = "text"
    fig.update_xaxes(title=toy.WORD_FEATURES[0], range=[-1.0, 1.3], zeroline=True)
    fig.update_yaxes(title=toy.WORD_FEATURES[1], range=[-0.6, 1.3], zeroline=True, scaleanchor="x")
    return _layout(fig, title, height=420, showlegend=False)


def soft_lookup_traces(
    query: ArrayLike,
    temperature: float = 1.0,
    keys: Sequence[str] = LOOKUP_KEYS,
    query_label: str = "query",
) -> list[go.Scatter | go.Bar]:
    """The traces of one soft look-up: key and query arrows, weights, the looked-up value.

    Introduced in chapter 1. ``query`` is a 2-D vector ``(2,)``; the keys are words of
    ``toy.WORD_VECTORS`` and ``toy.FRUIT_DICT``. The weights are
    ``softmax(K q / temperature)`` ``(n_keys,)`` and the value is ``weights @ values``.
    Lay them out with :func:`soft_lookup_figure` (or :func:`slider_figure` + its layout).
    """
    from .. import numpy_ref, toy

    q = np.asarray(query, dtype=float)
    if q.shape != (2,):
        raise ValueError(f"query must be a 2-D vector of shape (2,); got shape {q.shape}")
    K = toy.word_matrix(list(keys))  # (n_keys, 2)
    values = np.array([toy.FRUIT_DICT[k] for k in keys], dtype=float)  # (n_keys,)
    weights = numpy_ref.softmax(K @ q, temperature=temperature)  # (n_keys,)
    looked_up = float(weights @ values)
    bars = _bars(weights, keys)
    bars.update(xaxis="x2", yaxis="y2")
    result = go.Bar(
        x=["soft look-up"],
        y=[round(looked_up, _DIGITS)],
        text=[f"{looked_up:.2f}"],
        textposition="outside",
        marker_color=PALETTE[2],
        xaxis="x3",
        yaxis="y3",
        hovertemplate="Σ weight × value = %{y:.3f}<extra></extra>",
    )
    return [
        *_arrow_traces(K, list(keys), PALETTE[0], "keys"),
        *_arrow_traces(q[None, :], [query_label], PALETTE[5], "query", width=4.0),
        bars,
        result,
    ]


def _soft_lookup_layout(fig: go.Figure, title: str | None, keys: Sequence[str]) -> go.Figure:
    from .. import toy

    top = 1.25 * max(toy.FRUIT_DICT[k] for k in keys)
    lim = [-LOOKUP_PLANE, LOOKUP_PLANE]
    # constrain="domain": the square plane shrinks its box instead of showing more than the
    # query can reach; the weights start far enough right that word labels miss their axis
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.36], range=lim, title=toy.WORD_FEATURES[0], constrain="domain"),
        yaxis=dict(range=lim, title=toy.WORD_FEATURES[1], scaleanchor="x", constrain="domain"),
        xaxis2=dict(domain=[0.52, 0.84], anchor="y2"),
        yaxis2=dict(range=[0, 1.15], anchor="x2"),  # no axis title: the words' labels need the gap
        xaxis3=dict(domain=[0.9, 1.0], anchor="y3"),
        yaxis3=dict(range=[0, top], title="value", anchor="x3", side="right"),
        showlegend=False,
    )
    fig.add_annotation(text="weight", x=0.68, y=1.0, xref="paper", yref="paper",
                       xanchor="center", yanchor="bottom", showarrow=False)
    return _layout(fig, title, height=430)


def soft_lookup_figure(
    query: ArrayLike,
    temperature: float = 1.0,
    keys: Sequence[str] = LOOKUP_KEYS,
    title: str | None = None,
) -> go.Figure:
    """One soft look-up in three panels: the plane, the weights, the looked-up value.

    Introduced in chapter 1. ``query`` ``(2,)``; see :func:`soft_lookup_traces`.
    """
    fig = go.Figure(soft_lookup_traces(query, temperature, keys))
    return _soft_lookup_layout(fig, title, keys)


def query_direction(angle_deg: float, length: float = 1.0) -> np.ndarray:
    """The 2-D query ``(2,)`` pointing ``angle_deg`` degrees from the first feature axis."""
    angle = np.deg2rad(angle_deg)
    return length * np.array([np.cos(angle), np.sin(angle)])


def temperature_slider(
    query: str = "fruit",
    temperatures: Sequence[float] = LOOKUP_TEMPERATURES,
    keys: Sequence[str] = LOOKUP_KEYS,
    title: str | None = None,
) -> go.Figure:
    """Slider over the softmax temperature for the query word ``query`` (chapter 1).

    One frame per temperature; each shows the weights ``(n_keys,)`` and the looked-up value.
    """
    from .. import toy

    q = toy.word_matrix([query])[0]  # (2,)
    values = list(temperatures)
    fig = slider_figure(
        lambda t: soft_lookup_traces(q, t, keys, query_label=query),
        values,
        label="temperature",
        active=min(range(len(values)), key=lambda i: abs(values[i] - 1.0)) if values else 0,
        format_value=lambda t: f"{t:g}",
        title=title,
    )
    return _soft_lookup_layout(fig, title, keys)
