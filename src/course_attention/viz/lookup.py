"""Figures of chapter 1: word vectors on a plane, soft look-up, the temperature slider."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _
from .core import (
    _DIGITS,
    PALETTE,
    _bars,
    _layout,
    _shown,
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
    "label_positions",
    "key_label_positions",
    "query_label_position",
    "label_spec",
]


#: Keys of the chapter-1 soft look-up figures (the words of ``toy.FRUIT_DICT``).
LOOKUP_KEYS: tuple[str, ...] = ("apple", "banana", "chair")

#: The steps of :func:`temperature_slider` (chapter 1 reasons about them, so they are named).
LOOKUP_TEMPERATURES: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 20.0)

#: The soft look-up plane shows ``[-LOOKUP_PLANE, LOOKUP_PLANE]`` on both axes: the range the
#: live explorer's query can reach (``explorers.lookup.QUERY_RANGE``, 1.1) and a margin, so that
#: the query's label has room on the plane wherever the query is.
LOOKUP_PLANE = 1.3

#: The axis titles of the word planes (``toy.WORD_FEATURES``), marked for the catalogue.
_FEATURE_NAMES = (N_("edible"), N_("man-made"))

#: The query angles in degrees that chapter 1 turns a unit query through.
LOOKUP_ANGLES: tuple[float, ...] = tuple(float(a) for a in range(-30, 181, 15))


#: Where plotly can put a point's text, as the direction (right, up) it moves the text.
_TEXT_POSITIONS: dict[str, tuple[int, int]] = {
    "middle right": (1, 0), "top right": (1, 1), "top center": (0, 1), "top left": (-1, 1),
    "middle left": (-1, 0), "bottom left": (-1, -1), "bottom center": (0, -1),
    "bottom right": (1, -1),
}
_FONT_PX = 13  # the layout's font size (core._layout), which point texts inherit
_GAP_PX = 6  # how far plotly sets a text off its marker (about half the marker)
_CHAR_EM = 0.62  # a character's width in em, an over-estimate for the site's sans-serif
#: The narrowest and the widest the website draws a figure (a 375 px phone, a desktop), px.
_FIGURE_WIDTHS_PX = (327, 672)


def _plane_scales(x_span: float, y_span: float, domain: float, height: int) -> list[float]:
    """Pixels per data unit of a square plane (``scaleanchor``) at each of the site's widths.

    ``domain`` is the fraction of the plotting width the plane gets; margins as ``_layout``'s.
    """
    return [min((w - 80) * domain / x_span, (height - 110) / y_span) for w in _FIGURE_WIDTHS_PX]


def _lookup_scales(span: float) -> list[float]:
    """The soft look-up plane's scales: beside the bars at the site's two widths (its domain
    0.36 of 430 px high), and above them on a phone (:data:`SOFT_LOOKUP_PHONE`, 375 px)."""
    p = SOFT_LOOKUP_PHONE
    band = (p["height"] - 160) * (p["yaxis"]["domain"][1] - p["yaxis"]["domain"][0])
    return [*_plane_scales(span, span, 0.36, 430), min(_FIGURE_WIDTHS_PX[0] - 80, band) / span]


#: A Chinese character's width in em (a full em, about twice a Latin letter's).
_WIDE_EM = 1.0
#: The wide characters (CJK and full-width forms); ``lookup.js`` uses the same ranges.
_WIDE = re.compile("[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]")


def _text_em(word: str) -> float:
    """The over-estimated width of ``word`` in em: ``_CHAR_EM`` a letter, ``_WIDE_EM`` a
    Chinese character (the query's label is 查询 on the Chinese site)."""
    wide = len(_WIDE.findall(word))
    return _WIDE_EM * wide + _CHAR_EM * (len(word) - wide)


def _label_box(tip: np.ndarray, word: str, position: str, scale: float) -> np.ndarray:
    """The screen box ``(left, bottom, right, top)`` in px (y up) of ``word`` at ``position``.

    The width is an over-estimate (``_CHAR_EM`` a character), so boxes that miss here miss
    drawn.
    """
    w, h = _text_em(word) * _FONT_PX, _FONT_PX
    dx, dy = _TEXT_POSITIONS[position]
    cx = tip[0] * scale + dx * (_GAP_PX + w / 2)
    cy = tip[1] * scale + dy * (_GAP_PX + h / 2)
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def _overlap_px(a: np.ndarray, b: np.ndarray) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _segment_in_box(end: np.ndarray, box: np.ndarray) -> float:
    """Length in px of the arrow from the origin to ``end`` (px) inside ``box`` ``(left, bottom,
    right, top)``: Liang–Barsky clipping. ``lookup.js`` computes the same."""
    t0, t1 = 0.0, 1.0
    for d, lo, hi in ((end[0], box[0], box[2]), (end[1], box[1], box[3])):
        if d == 0:
            if not lo <= 0 <= hi:
                return 0.0
            continue
        a, b = sorted((lo / d, hi / d))
        t0, t1 = max(t0, a), min(t1, b)
        if t0 >= t1:
            return 0.0
    return (t1 - t0) * float(np.hypot(end[0], end[1]))


def label_positions(
    tips: ArrayLike,
    words: Sequence[str],
    scales: Sequence[float],
    bounds: tuple[float, float, float, float],
    fixed: ArrayLike = (),
    taken: Sequence[tuple[ArrayLike, str, str]] = (),
) -> list[str]:
    """Where each word's label goes beside its arrow's tip, so that no two labels touch.

    Introduced in chapter 1 (its word planes). ``tips`` ``(n, 2)`` in data units; ``scales``
    are the pixels per data unit of the narrowest and widest drawing (the plane is square, so
    one number each); ``bounds`` ``(x_min, x_max, y_min, y_max)`` is the plane shown, in data
    units; ``fixed`` ``(m, 2)`` are other tips whose markers labels must miss, ``taken`` labels
    already placed ``(tip, word, position)``. Greedy, in
    order: each label takes the first of plotly's eight text positions, tried from the one
    pointing away from the origin, whose box (an over-estimate of the text) stays on the
    plane and misses every label already placed, every marker and every marker's arrow from the
    origin, at every scale; if none does, the one that overlaps, is crossed or sticks out least.
    """
    tips = np.asarray(tips, dtype=float).reshape(-1, 2)
    markers = np.concatenate([tips, np.asarray(fixed, dtype=float).reshape(-1, 2)])
    names = list(_TEXT_POSITIONS)
    placed = [(np.asarray(t, dtype=float), w) for t, w, _ in taken]
    out = [p for _, _, p in taken]
    for tip, word in zip(tips, words, strict=True):
        angle = np.degrees(np.arctan2(tip[1], tip[0])) if np.any(tip) else 90.0
        start = int(np.floor(angle / 45.0 + 0.5)) % 8  # halves round up, as in lookup.js
        order = sorted(range(8), key=lambda i: min((i - start) % 8, (start - i) % 8))
        best, best_cost = names[start], np.inf
        for i in order:
            cost = 0.0
            for scale in scales:
                box = _label_box(tip, word, names[i], scale)
                cost += sum(_overlap_px(box, _label_box(t, w, p, scale))
                            for (t, w), p in zip(placed, out, strict=True))
                cost += sum(_overlap_px(box, np.r_[m * scale - 5, m * scale + 5]) for m in markers)
                # every marker is the tip of an arrow from the origin: a label it crosses is
                # hard to read (a crossing costs its length times the text's height)
                cost += sum(_segment_in_box(m * scale, box) for m in markers) * _FONT_PX
                plane = np.array(bounds)[[0, 2, 1, 3]] * scale  # (left, bottom, right, top)
                area = (box[2] - box[0]) * (box[3] - box[1])
                cost += area - _overlap_px(box, plane)  # what sticks out of the plane
            if cost < best_cost:
                best, best_cost = names[i], cost
            if cost == 0:
                break
        placed.append((tip, word))
        out.append(best)
    return out[len(taken):]


def label_spec(keys: Sequence[str] = LOOKUP_KEYS, label: str | None = None) -> dict:
    """What ``lookup.js`` needs to place the labels as :func:`key_label_positions` and
    :func:`query_label_position` do (``label``: the query's, by default "query" in the
    reader's language)."""
    label = _("query") if label is None else label
    span = 2 * LOOKUP_PLANE
    return {"positions": [[n, *d] for n, d in _TEXT_POSITIONS.items()], "label": label,
            "scales": _lookup_scales(span),
            "font": _FONT_PX, "gap": _GAP_PX,
            "char": _CHAR_EM, "wide": _WIDE_EM}


def key_label_positions(
    keys: Sequence[str] = LOOKUP_KEYS, query: ArrayLike | None = None
) -> list[str]:
    """The keys' label positions on the soft look-up plane (:func:`label_positions`), clear of
    the query's arrow ``query`` ``(2,)`` when one is drawn: ``lookup.js`` places them again
    each time the reader moves the query."""
    from .. import toy

    span, lim = 2 * LOOKUP_PLANE, LOOKUP_PLANE
    fixed = () if query is None else np.asarray(query, dtype=float).reshape(1, 2)
    return label_positions(toy.word_matrix(list(keys)), list(keys),
                           _lookup_scales(span), (-lim, lim, -lim, lim), fixed=fixed)


def query_label_position(
    query: ArrayLike, keys: Sequence[str] = LOOKUP_KEYS, label: str | None = None
) -> str:
    """Where the query's label goes on the soft look-up plane, the keys' labels placed.

    Introduced in chapter 1; ``lookup.js`` places it the same way as the reader drags the
    query (:func:`label_positions` with the keys' labels and markers taken). ``query`` ``(2,)``.
    """
    from .. import toy

    label = _("query") if label is None else label  # the label the figure draws
    span, lim = 2 * LOOKUP_PLANE, LOOKUP_PLANE
    K = toy.word_matrix(list(keys))  # (n_keys, 2)
    taken = list(zip(K, keys, key_label_positions(keys, query), strict=True))
    return label_positions(np.asarray(query, dtype=float)[None, :], [label],
                           _lookup_scales(span), (-lim, lim, -lim, lim),
                           fixed=K, taken=taken)[0]


def _arrow_traces(
    vectors: np.ndarray,
    words: Sequence[str],
    color: str,
    name: str,
    width: float = 2.0,
    positions: Sequence[str] | None = None,
) -> list[go.Scatter]:
    """Arrows from the origin to each row of ``vectors`` ``(n, 2)``: shafts, then labelled tips.

    The labels sit on a trace of their own (no gaps): plotly drops some text of a trace whose
    points are separated by ``None``. ``positions``: each label's plotly text position
    (default: above a tip that points up, below one that points down).
    """
    tips = np.round(np.asarray(vectors, dtype=float), _DIGITS)  # (n, 2)
    x = [v for vx in tips[:, 0].tolist() for v in (0.0, vx, None)]
    y = [v for vy in tips[:, 1].tolist() for v in (0.0, vy, None)]
    shafts = go.Scatter(
        x=x, y=y, mode="lines", line=dict(color=color, width=width), name=name, hoverinfo="skip"
    )
    if positions is None:
        positions = ["top center" if vy >= 0 else "bottom center" for vy in tips[:, 1]]
    labels = go.Scatter(
        x=tips[:, 0].tolist(),
        y=tips[:, 1].tolist(),
        text=list(words),
        mode="markers+text",
        textposition=list(positions),
        marker=dict(size=9, color=color),
        name=name,
        hoverinfo="skip",
        cliponaxis=False,  # a label beside a tip near the plane's edge is drawn whole
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
    first = [query] if query is not None else []  # the query's label is placed first
    scales = _plane_scales(2.3, 1.9, 1.0, 420)
    placed = label_positions(toy.word_matrix(first + others), first + others, scales,
                             (-1.0, 1.3, -0.6, 1.3))
    fig = go.Figure(_arrow_traces(toy.word_matrix(others), others, PALETTE[0], _("word"),
                                  positions=placed[len(first):]))
    if query is not None:
        q = toy.word_matrix([query])
        fig.add_traces(_arrow_traces(q, [query], PALETTE[5], _("query"), width=4.0,
                                     positions=placed[:1]))
        dots = toy.word_matrix(others) @ q[0]  # (n_words,)
        fig.data[1].hovertext = [f"{w}: q·k = {d:.2f}" for w, d in zip(others, dots, strict=True)]
        fig.data[1].hoverinfo = "text"
    fig.update_xaxes(title=_(toy.WORD_FEATURES[0]), range=[-1.0, 1.3], zeroline=True)  # 2.3
    fig.update_yaxes(title=_(toy.WORD_FEATURES[1]), range=[-0.6, 1.3], zeroline=True,
                     scaleanchor="x")
    return _layout(fig, title, height=420, showlegend=False)


def soft_lookup_traces(
    query: ArrayLike,
    temperature: float = 1.0,
    keys: Sequence[str] = LOOKUP_KEYS,
    query_label: str = "query",
    positions: Sequence[str] | None = None,
) -> list[go.Scatter | go.Bar]:
    """The traces of one soft look-up: key and query arrows, weights, the looked-up value.

    Introduced in chapter 1. ``query`` is a 2-D vector ``(2,)``; the keys are words of
    ``toy.WORD_VECTORS`` and ``toy.FRUIT_DICT``. The weights are
    ``softmax(K q / temperature)`` ``(n_keys,)`` and the value is ``weights @ values``.
    Lay them out with :func:`soft_lookup_figure` (or :func:`slider_figure` + its layout).
    ``positions``: the labels' text positions, the keys' then the query's (default: the keys'
    from :func:`key_label_positions`, clear of the query's arrow, the query's from
    :func:`query_label_position`, placed by the English ``query_label`` in every language,
    which is drawn translated).
    """
    from .. import numpy_ref, toy

    q = np.asarray(query, dtype=float)
    if q.shape != (2,):
        raise ValueError(f"query must be a 2-D vector of shape (2,); got shape {q.shape}")
    K = toy.word_matrix(list(keys))  # (n_keys, 2)
    values = np.array([toy.FRUIT_DICT[k] for k in keys], dtype=float)  # (n_keys,)
    weights = numpy_ref.softmax(K @ q, temperature=temperature)  # (n_keys,)
    looked_up = float(weights @ values)
    if positions is None:
        positions = [*key_label_positions(keys, q), query_label_position(q, keys, query_label)]
    bars = _bars(weights, keys)
    bars.update(xaxis="x2", yaxis="y2")
    result = go.Bar(
        x=[_("soft<br>look-up")],  # two lines: one is wider than its panel on a phone
        y=[round(looked_up, _DIGITS)],
        text=[f"{looked_up:.2f}"],
        textposition="outside",
        marker_color=PALETTE[2],
        xaxis="x3",
        yaxis="y3",
        hovertemplate=_("Σ weight × value = %{y:.3f}<extra></extra>"),
    )
    return [
        *_arrow_traces(K, list(keys), PALETTE[0], _("keys"), positions=positions[:-1]),
        *_arrow_traces(q[None, :], [_shown(query_label)], PALETTE[5], _("query"), width=4.0,
                       positions=positions[-1:]),
        bars,
        result,
    ]


#: The soft look-up figure on a phone (``lookup.js`` applies it where the figure is narrower
#: than 480 px, via the explorer's ``spec["phone"]``): the word plane above, the width of the
#: figure, so that its labels and the query's tip stay apart; the weights and the value below.
SOFT_LOOKUP_PHONE: dict = {
    "height": 720,
    "xaxis": {"domain": [0.0, 1.0]}, "yaxis": {"domain": [0.52, 1.0]},
    "xaxis2": {"domain": [0.0, 0.74]}, "yaxis2": {"domain": [0.0, 0.36]},
    "xaxis3": {"domain": [0.86, 1.0]}, "yaxis3": {"domain": [0.0, 0.36]},
    "annotations": [{"x": 0.37, "y": 0.36}],  # "weight", over its bars
}


def _soft_lookup_layout(fig: go.Figure, title: str | None, keys: Sequence[str]) -> go.Figure:
    from .. import toy

    top = 1.25 * max(toy.FRUIT_DICT[k] for k in keys)
    lim = [-LOOKUP_PLANE, LOOKUP_PLANE]
    # constrain="domain": the square plane shrinks its box instead of showing more than
    # ±LOOKUP_PLANE; the weights start far enough right that word labels miss their axis
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.36], range=lim, title=_(toy.WORD_FEATURES[0]),
                   constrain="domain"),
        yaxis=dict(range=lim, title=_(toy.WORD_FEATURES[1]), scaleanchor="x", constrain="domain"),
        xaxis2=dict(domain=[0.52, 0.84], anchor="y2"),
        yaxis2=dict(range=[0, 1.15], anchor="x2"),  # no axis title: the words' labels need the gap
        # the value's name a little lower: on a phone it is as wide as its panel, and its
        # right end would touch the value axis's 0
        xaxis3=dict(domain=[0.9, 1.0], anchor="y3", ticklabelstandoff=4),
        yaxis3=dict(range=[0, top], title=_("value"), anchor="x3", side="right"),
        showlegend=False,
    )
    fig.add_annotation(text=_("weight"), x=0.68, y=1.0, xref="paper", yref="paper",
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
    span, lim = 2 * LOOKUP_PLANE, LOOKUP_PLANE  # a fixed query: placed with the keys' labels
    words = [query, *keys]
    placed = label_positions(toy.word_matrix(words), words,
                             _plane_scales(span, span, 0.36, 430), (-lim, lim, -lim, lim))
    fig = slider_figure(
        lambda t: soft_lookup_traces(q, t, keys, query_label=query,
                                     positions=placed[1:] + placed[:1]),
        values,
        label=N_("temperature"),
        active=min(range(len(values)), key=lambda i: abs(values[i] - 1.0)) if values else 0,
        format_value=lambda t: f"{t:g}",
        title=title,
    )
    return _soft_lookup_layout(fig, title, keys)
