"""Figures of chapter 6 (the Transformer block): gradient norms by depth, sinusoidal positions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _
from .core import PALETTE, _layout, _rounded, _shown, curve, slider_figure

__all__ = [
    "log_ticks",
    "gradient_depth_slider",
    "positions_heatmap",
    "position_traces",
    "position_figure",
    "position_slider",
]


def _check_norms(norms: Mapping[int, Mapping[str, ArrayLike]]) -> list[str]:
    if not norms:
        raise ValueError("gradient_depth_slider needs the norms of at least one depth")
    names = list(next(iter(norms.values())))
    for depth, by_name in norms.items():
        if list(by_name) != names:
            raise ValueError(f"every depth needs the curves {names}; got {list(by_name)}")
        for name, values in by_name.items():
            if np.shape(values) != (depth,):
                raise ValueError(
                    f"depth {depth}: {name!r} needs one norm per layer, shape ({depth},); "
                    f"got {np.shape(values)}"
                )
    return names


def log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values m × 10^k between ``10**lo`` and ``10**hi``, m in 1, 2, 3, 5 (chapter 6).

    Plotly labels the minor ticks of a short log axis with one digit ("100, 9, 8 … 2"); with
    these values and ``f"{v:g}"`` labels every tick reads as a number. Over more than 1.5
    decades only 1, 2, 5 are kept, over more than 3 only the powers of ten.
    """
    if not hi > lo:
        raise ValueError(f"need lo < hi (log10 of the axis ends); got {lo}, {hi}")
    decades = hi - lo
    mantissas = (1,) if decades > 3 else (1, 2, 5) if decades > 1.5 else (1, 2, 3, 5)
    ticks = [
        float(f"{m * 10.0**k:.1g}")
        for k in range(int(np.floor(lo)) - 1, int(np.ceil(hi)) + 1)
        for m in mantissas
        if lo <= np.log10(m * 10.0**k) <= hi
    ]
    return ticks or [float(f"{10 ** ((lo + hi) / 2):.1g}")]


def gradient_depth_slider(
    norms: Mapping[int, Mapping[str, ArrayLike]],
    title: str | None = None,
    y_title: str = N_("gradient norm"),
) -> go.Figure:
    """Gradient norm of every layer, one line per norm placement, with a slider over the depth.

    Introduced in chapter 6. ``norms`` maps a depth ``L`` to ``{curve name: (L,) norms}``, e.g.
    ``{12: {"post-norm": …, "pre-norm": …}}`` from
    :func:`course_attention.experiments.ffn_gradient_norms`. The axes stay fixed (log y, ticks
    labelled as plain numbers), so moving the slider compares depths.
    """
    names = _check_norms(norms)
    values = np.concatenate([np.ravel(v) for d in norms.values() for v in d.values()])
    if (values <= 0).any():
        raise ValueError("gradient norms must be positive to draw on a log axis")
    lo, hi = np.log10(values.min()) - 0.1, np.log10(values.max()) + 0.1

    def traces(depth: int) -> list[go.Scatter]:
        return [
            curve(
                range(1, depth + 1),
                norms[depth][name],
                _shown(name),  # a chapter's curve: translated when the catalogue has it
                PALETTE[i % len(PALETTE)],
                _("{name}<br>layer %{{x}}<br>gradient norm %{{y:.3g}}<extra></extra>").format(
                    name=_shown(name)),
            )
            for i, name in enumerate(names)
        ]

    depths = list(norms)
    fig = slider_figure(traces, depths, N_("layers"), active=len(depths) - 1, title=title)
    fig.update_xaxes(title=_("layer (1 = next to the input)"), range=[0.5, max(depths) + 0.5])
    ticks = log_ticks(lo, hi)
    fig.update_yaxes(
        title=_shown(y_title),
        type="log",
        range=[lo, hi],
        tickvals=ticks,
        ticktext=[f"{v:g}" for v in ticks],
    )
    return fig


def positions_heatmap(table: ArrayLike, title: str | None = None) -> go.Figure:
    """Heatmap of a position table ``(seq_len, d_model)``: positions down, features across.

    Introduced in chapter 10, for :func:`course_attention.numpy_ref.sinusoidal_positions`.
    Diverging colours from -1 to 1.
    """
    pe = np.asarray(table, dtype=float)
    if pe.ndim != 2:
        raise ValueError(f"table must have shape (seq_len, d_model); got {pe.shape}")
    fig = go.Figure(
        go.Heatmap(
            z=_rounded(pe),
            zmin=-1.0,
            zmax=1.0,
            colorscale="RdBu",
            colorbar=dict(title=_("value")),
            hovertemplate=_("position %{y}<br>feature %{x}<br>value %{z:.3f}<extra></extra>"),
        )
    )
    fig.update_yaxes(autorange="reversed", title=_("position"))
    fig.update_xaxes(title=_("feature (even: sin, odd: cos)"))
    return _layout(fig, title, height=420)


def _check_table(table: ArrayLike) -> np.ndarray:
    pe = np.asarray(table, dtype=float)
    if pe.ndim != 2:
        raise ValueError(f"table must have shape (seq_len, d_model); got {pe.shape}")
    return pe


def position_traces(table: ArrayLike, position: int) -> list[go.Bar | go.Scatter]:
    """Two traces for one position of ``table`` ``(seq_len, d_model)`` (chapter 6).

    A bar per feature of ``table[position]`` (top axes), and the dot products
    ``table[position] · table[j]`` for every position ``j`` (bottom axes, ``x2``/``y2``).
    """
    pe = _check_table(table)
    if not 0 <= position < len(pe):
        raise ValueError(f"position={position} is not an index into {len(pe)} positions")
    dots = pe @ pe[position]  # (seq_len,)
    return [
        go.Bar(
            x=list(range(pe.shape[1])),
            y=_rounded(pe[position]),
            marker_color=PALETTE[0],
            name=_("features"),
            hovertemplate=_("feature %{x}<br>value %{y:.3f}<extra></extra>"),
        ),
        curve(
            range(len(pe)),
            dots,
            _("dot products"),
            PALETTE[1],
            f"PE[{position}] · PE[%{{x}}] = %{{y:.3f}}<extra></extra>",
            xaxis="x2",
            yaxis="y2",
        ),
    ]


def _position_axes(fig: go.Figure, pe: np.ndarray) -> go.Figure:
    d_model = pe.shape[1]
    fig.update_layout(
        showlegend=False,
        xaxis=dict(domain=[0, 1], anchor="y", title=_("feature of the position vector")),
        yaxis=dict(domain=[0.6, 1], range=[-1.1, 1.1], title=_("value")),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=_("other position j")),
        yaxis2=dict(
            domain=[0, 0.4], range=[-d_model / 2 - 1, d_model / 2 + 1], title="PE[pos] · PE[j]"
        ),
    )
    return fig


def position_figure(table: ArrayLike, position: int, title: str | None = None) -> go.Figure:
    """One position of ``table`` ``(seq_len, d_model)``: its vector and its dot products.

    Introduced in chapter 10; the live explorer's figure (see :func:`position_traces`).
    """
    pe = _check_table(table)
    fig = go.Figure(position_traces(pe, position))
    return _position_axes(_layout(fig, title, height=520), pe)


def position_slider(
    table: ArrayLike, positions: Sequence[int] | None = None, title: str | None = None
) -> go.Figure:
    """:func:`position_figure` with a slider over ``positions`` (default: every position).

    Introduced in chapter 10. Works on the static website (precomputed frames).
    """
    pe = _check_table(table)
    positions = list(range(len(pe))) if positions is None else [int(p) for p in positions]
    fig = slider_figure(
        lambda p: position_traces(pe, p), positions, N_("position"), title=title, height=560
    )
    return _position_axes(fig, pe)
