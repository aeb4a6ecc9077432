"""Figures of chapter 9 (induction heads).

Introduced in chapter 9: the phase change (loss on repeated and other tokens against training
steps), two heads side by side on one sequence, per-head scores, how far back layer 0's heads
look, the ablation, and a slider over training checkpoints (precomputed frames).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _, language
from .core import (
    PALETTE,
    PANEL_CHARS,
    _layout,
    _rounded,
    _shown,
    axis_title,
    curve,
    heatmap_trace,
    slider_figure,
    wrap_title,
)
from .core import _two_panels as _panels

__all__ = [
    "phase_change_figure",
    "distance_figure",
    "two_heads_figure",
    "head_scores_figure",
    "offset_profile_figure",
    "ablation_figure",
    "checkpoint_slider",
]


def phase_change_figure(
    steps: ArrayLike,
    repeated: ArrayLike,
    other: ArrayLike,
    chance: float,
    window: tuple[int, int] | None = None,
    title: str | None = None,
    control: tuple[ArrayLike, ArrayLike] | None = None,
    training: tuple[ArrayLike, ArrayLike] | None = None,
    switch: int | None = None,
) -> go.Figure:
    """Loss on the repeated tokens and on the others ``(n,)`` against training ``steps`` ``(n,)``.

    Introduced in chapter 9. A dashed line marks chance, ``ln(vocab)`` (named in the legend,
    the last entry); a shaded band the
    ``window`` ``(start, end)`` where the loss falls fastest (if given); a dotted vertical line
    the step ``switch`` after which the training data have even copy distances (if given).
    ``control`` ``(steps, repeated)`` adds a second model's loss on repeated tokens (the
    1-layer model), ``training`` ``(steps, loss)`` the training loss on all tokens. The y axis
    reaches a fifth above the highest curve, so that the labels at the top cross no curve.
    """
    s, r, o = (np.asarray(a, dtype=float) for a in (steps, repeated, other))
    if not (s.ndim == 1 and s.shape == r.shape == o.shape and len(s)):
        raise ValueError(
            f"steps, repeated, other must be (n,) alike; got {s.shape}, {r.shape}, {o.shape}"
        )
    hover = _("step %{x}<br>loss %{y:.3f} nats<extra></extra>")
    traces = [
        curve(s, r, _("repeated tokens (second copy)"), PALETTE[0], hover),
        curve(s, o, _("all other tokens"), PALETTE[1], hover),
    ]
    for extra, name, colour in (
        (control, _("repeated tokens, 1-layer model"), PALETTE[3]),
        (training, _("training loss (all tokens)"), PALETTE[7]),
    ):
        if extra is not None:
            x, y = (np.asarray(a, dtype=float) for a in extra)
            if x.shape != y.shape or x.ndim != 1:
                raise ValueError(f"{name}: steps and losses must be (n,) alike")
            traces.append(curve(x, y, name, colour, hover).update(line_dash="dot"))
    fig = go.Figure(traces)
    top = max(chance, *(float(np.nanmax(t.y)) for t in traces))
    fig.update_traces(mode="lines" if len(s) > 30 else "lines+markers")  # dense checkpoints
    # chance: a dashed line named in the legend (a label on the plot met a curve on a phone)
    fig.add_trace(go.Scatter(
        x=[float(s.min()), float(s.max())], y=[chance, chance], mode="lines",
        line=dict(color="grey", dash="dash", width=1.5), hoverinfo="skip",
        name=_("chance ln(vocab) = {chance:.2f}").format(chance=chance),
    ))
    if window is not None:
        fig.add_vrect(
            x0=window[0],
            x1=window[1],
            fillcolor=PALETTE[5],
            opacity=0.15,
            line_width=0,
            annotation_text=_("steps {start}–{end}").format(start=window[0], end=window[1]),
            # centred over the band: from its left edge it reached the switch's line on a phone
            annotation_position="top",
        )
    if switch is not None:
        fig.add_vline(
            x=switch,
            line_dash="dot",
            line_color="grey",
            annotation_text=_("even distances from step {step}").format(step=switch),
            annotation_position="bottom left",  # the bottom is clear: no loss gets near 0
        )
    fig.update_xaxes(title=_("training step"), range=[float(s.min()), float(s.max())])
    fig.update_yaxes(title=_("next-token loss (nats)"), range=[0, 1.2 * top])
    # the legend under the plot: inside it, it hid the plunge on a phone
    return _layout(fig, title, height=420 + 24 * len(fig.data),
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.3, yanchor="top"))


def distance_figure(
    distances: ArrayLike,
    curves: dict[str, ArrayLike],
    reference: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """Loss on the repeated tokens against the copy distance, one line per entry of ``curves``.

    Introduced in chapter 9. ``distances`` ``(k,)``; each curve ``(k,)`` nats. A dashed line
    at ``reference`` (e.g. what guessing among the tokens seen so far costs), if given, named in
    the legend.
    """
    d = np.asarray(distances, dtype=float)
    traces = []
    for i, (name, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        if v.shape != d.shape or d.ndim != 1:
            raise ValueError(f"curve {name!r} must have shape {d.shape}; got {v.shape}")
        hover = _("distance %{x}<br>loss %{y:.3f} nats<extra></extra>")
        traces.append(curve(d, v, _shown(name), PALETTE[i % 8], hover))
    if reference is not None:  # a line in the legend, not a label in the plot: curves cross it
        name = _("guessing among tokens seen: {reference:.2f}").format(reference=reference)
        traces.append(go.Scatter(x=[d.min(), d.max()], y=[reference] * 2, mode="lines",
                                 name=name, hoverinfo="skip",
                                 line=dict(dash="dash", color="grey")))
    fig = go.Figure(traces)
    fig.update_xaxes(title=axis_title(_("copy distance (second copy start − first copy start)")))
    fig.update_yaxes(title=_("loss on repeated tokens (nats)"), rangemode="tozero")
    # the legend under the plot, one entry a line: beside it, long names leave a phone no plot
    return _layout(fig, title, height=420 + 24 * len(fig.data),
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.3, yanchor="top"))


def _pair(
    left: np.ndarray, right: np.ndarray, labels: Sequence[str], names: tuple[str, str]
) -> tuple[go.Heatmap, go.Heatmap]:
    one = heatmap_trace(left, labels, labels, show_values=False)
    two = heatmap_trace(right, labels, labels, show_values=False)
    one.z, two.z = _compact(np.round(left, 2)), _compact(np.round(right, 2))  # small pages
    one.update(name=_shown(names[0]))
    two.update(name=_shown(names[1]), showscale=False, xaxis="x2", yaxis="y2")
    return one, two


#: The lines of the chapters' panel names as a panel wraps them, each translated on its own
#: (a name "layer 0 · head 1" + "previous token" gives "layer 0 ·", "head 1", "previous token").
PANEL_WORDS = (N_("layer {layer} ·"), N_("head {head}"), N_("previous token"), N_("induction"))


def _two_panels(fig: go.Figure, names: tuple[str, str], labels: Sequence[str]) -> go.Figure:
    """Side by side, each panel titled on two lines (``": "`` breaks the line, so the two
    titles do not run into each other), with position ticks every few rows and columns (the
    labels are ``"position:token"``; hover shows them whole). Each line of a name, as the
    panel wraps it, is translated on its own (a chapter's name: ``"layer 0 · head 1: previous
    token"``; :data:`PANEL_WORDS`)."""
    english = [wrap_title(n.replace(": ", "<br>"), PANEL_CHARS) or "" for n in names]
    # in another language: the English lines translated, as the Chinese book translates them
    short = tuple(english) if language() == "en" else tuple(_shown(e) for e in english)
    fig = _panels(fig, short, N_("key position"), N_("query position"), ticklabels=True)
    fig.update_annotations(font_size=11)  # a panel is about 80 px wide on a phone
    step = max(1, len(labels) // 3)  # 3 ticks a panel: 6 collide on a phone ("8 16243240")
    ticks = dict(
        tickmode="array",
        tickvals=list(labels[::step]),
        ticktext=[label.split(":")[0] for label in labels[::step]],
        tickangle=0,
    )
    lines = max(t.count("<br>") + 1 for t in english)  # the English layout in every language
    top = (70 if fig.layout.title.text else 20) + 16 * lines  # room for the panel titles
    fig.update_layout(xaxis=ticks, yaxis=ticks, xaxis2=ticks, yaxis2=ticks, margin=dict(t=top))
    return fig


def _check_maps(
    left: ArrayLike, right: ArrayLike, labels: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    n = len(labels)
    if a.shape[-2:] != (n, n) or b.shape != a.shape:
        raise ValueError(
            f"maps must be (..., {n}, {n}) for {n} labels and alike; got {a.shape}, {b.shape}"
        )
    return a, b


def two_heads_figure(
    left: ArrayLike,
    right: ArrayLike,
    labels: Sequence[str],
    names: tuple[str, str],
    title: str | None = None,
) -> go.Figure:
    """Two attention maps ``(seq, seq)`` of one sequence side by side (hover: token labels).

    Introduced in chapter 9, for the previous-token head and the induction head. ``labels``
    ``(seq,)`` name the positions, e.g. ``"17:t42"``.
    """
    a, b = _check_maps(left, right, labels)
    fig = go.Figure(_pair(a, b, labels, names))
    fig = _layout(fig, title, height=460)
    return _two_panels(fig, names, labels)


def _compact(weights: np.ndarray) -> list[list[float]]:
    """Rows of a causal map ``(seq, seq)`` for the page: row ``i`` keeps only keys ``0 … i``.

    The cells above the diagonal are 0 in every causal map; plotly draws the missing cells of
    the shorter rows blank. Exact zeros are written as ``0`` (three characters fewer than
    ``0.0``). Together this makes a slider's frames about 2.5 times smaller. A map that is not
    causal keeps its full rows.
    """
    causal = not np.triu(weights, 1).any()
    return [
        [0 if v == 0 else float(v) for v in row[: i + 1]]
        if causal
        else [0 if v == 0 else float(v) for v in row]
        for i, row in enumerate(weights)
    ]


def checkpoint_slider(
    left: ArrayLike,
    right: ArrayLike,
    steps: Sequence[int],
    labels: Sequence[str],
    names: tuple[str, str],
    title: str | None = None,
) -> go.Figure:
    """Two heads on one sequence, with a slider over training checkpoints.

    Introduced in chapter 9. ``left``, ``right`` ``(checkpoints, seq, seq)``; ``steps``
    ``(checkpoints,)`` the training step of each. Frames are precomputed (rounded to 2 decimals,
    causal rows only, to keep the page small), so the slider works on the static website; it
    starts at the last.
    """
    a, b = _check_maps(left, right, labels)
    if a.ndim != 3 or len(a) != len(steps):
        raise ValueError(
            f"maps must be (checkpoints, seq, seq) with {len(steps)} checkpoints; got {a.shape}"
        )
    fig = slider_figure(
        lambda i: _pair(a[i], b[i], labels, names),
        list(range(len(steps))),
        label=N_("training step"),
        active=len(steps) - 1,
        format_value=lambda i: str(int(steps[i])),
        title=title,
        height=500,
    )
    return _two_panels(fig, names, labels)


def head_scores_figure(
    previous: ArrayLike, induction: ArrayLike, title: str | None = None
) -> go.Figure:
    """Grouped bars: the previous-token and the induction score of every head.

    Introduced in chapter 9. ``previous``, ``induction`` ``(layers, heads)``; heads are named
    ``"L0 H2"`` (layer 0, head 2; counted from 0 as in the code).
    """
    p, s = np.asarray(previous, dtype=float), np.asarray(induction, dtype=float)
    if p.ndim != 2 or p.shape != s.shape:
        raise ValueError(f"scores must be (layers, heads) alike; got {p.shape}, {s.shape}")
    names = [f"L{layer} H{head}" for layer in range(p.shape[0]) for head in range(p.shape[1])]
    fig = go.Figure(
        [
            go.Bar(
                x=names,
                y=_rounded(v.ravel()),
                name=n,
                marker_color=c,
                hovertemplate=h,
            )
            for v, n, h, c in (
                (p, _("previous-token score"),
                 _("%{x}<br>previous-token score %{y:.3f}<extra></extra>"), PALETTE[2]),
                (s, _("induction score"), _("%{x}<br>induction score %{y:.3f}<extra></extra>"),
                 PALETTE[0]),
            )
        ]
    )
    fig.update_yaxes(title=_("mean attention weight"), range=[0, 1])
    fig.update_xaxes(title=_("head"))
    return _layout(fig, title, height=340, barmode="group")


def offset_profile_figure(profile: ArrayLike, title: str | None = None) -> go.Figure:
    """Bars of where layer 0's heads look: weight at offset 0 (itself), 1 (previous), 2, …

    Introduced in chapter 9. ``profile`` ``(heads, offsets)`` from
    :func:`course_attention.induction.offset_profile`; one colour per head.
    """
    prof = np.asarray(profile, dtype=float)
    if prof.ndim != 2:
        raise ValueError(f"profile must be (heads, offsets); got {prof.shape}")
    offsets = ["itself"] + [f"{k} back" for k in range(1, prof.shape[1])]  # x: categories
    fig = go.Figure(
        [
            go.Bar(
                x=offsets,
                y=_rounded(row),
                name=_("head {h}").format(h=h),
                marker_color=PALETTE[h % 8],
                hovertemplate=_("%{x}<br>weight %{y:.3f}<extra></extra>"),
            )
            for h, row in enumerate(prof)
        ]
    )
    fig.update_yaxes(title=_("mean attention weight"), range=[0, 1])
    return _layout(fig, title, height=320, barmode="group")


def ablation_figure(
    ablated: ArrayLike, intact: float, chance: float, title: str | None = None
) -> go.Figure:
    """Loss on the repeated tokens with each head switched off ``(layers, heads)``.

    Introduced in chapter 9. Dashed lines: the intact model's loss and chance.
    """
    a = np.asarray(ablated, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"ablated must be (layers, heads); got {a.shape}")
    names = [f"L{layer} H{head}" for layer in range(a.shape[0]) for head in range(a.shape[1])]
    colours = [PALETTE[2] if n.startswith("L0") else PALETTE[0] for n in names]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=_rounded(a.ravel()),
            marker_color=colours,
            text=[f"{v:.2f}" for v in a.ravel()],
            # at the foot of each bar: the two levels below cross the bars near their tops
            # (a head that matters little ends near "no head off"), never at their feet
            textposition="inside", insidetextanchor="start", textangle=0,
            textfont=dict(color="white"),
            hovertemplate=_("%{x} off<br>loss %{y:.3f} nats<extra></extra>"),
            showlegend=False,
        )
    )
    # the two levels run through the bars, so their labels go in the legend, not on the lines
    for level, dash, colour, label in (
        (intact, "dash", PALETTE[7], _("no head off: {intact:.2f}").format(intact=intact)),
        (chance, "dot", "grey", _("chance: {chance:.2f}").format(chance=chance)),
    ):
        fig.add_hline(y=level, line_dash=dash, line_color=colour)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=label, hoverinfo="skip",
                                 line=dict(dash=dash, color=colour)))
    fig.update_xaxes(title=axis_title(_("head switched off (green: layer 0, blue: layer 1)")))
    fig.update_yaxes(title=_("loss on repeated tokens (nats)"),
                     range=[0, 1.15 * max(chance, a.max())])
    _layout(fig, title, height=420)  # the legend sits below the axis title (two lines on a phone)
    return fig.update_layout(legend=dict(orientation="h", x=0, y=-0.5, yanchor="top"),
                             margin=dict(b=150))
