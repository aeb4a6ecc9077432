"""Figures of chapter 2: score variance, softmax saturation, gradients, weights at one d_k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _
from .core import (
    _DIGITS,
    PALETTE,
    _layout,
    _shown,
    curve,
    panel_title,
    weight_bars,
)

__all__ = [
    "variance_figure",
    "saturation_figure",
    "jacobian_norm_figure",
    "gradient_spread_figure",
    "scaling_bars_figure",
]


_RUN_COLORS: tuple[str, ...] = (PALETTE[5], PALETTE[0], PALETTE[2], PALETTE[3])


def _dk_axis(fig: go.Figure, d_ks: Sequence[float]) -> None:
    """A logarithmic x axis with one tick per measured width ``d_k``, at most four labelled
    (eleven labels run together in a half-width panel on a 375 px phone screen)."""
    ticks = [float(d) for d in d_ks]
    step = -(-len(ticks) // 4)
    text = [f"{d:g}" if i % step == 0 else "" for i, d in enumerate(ticks)]
    fig.update_xaxes(type="log", title="d_k", tickvals=ticks, ticktext=text)


def _check_runs(runs: Mapping[str, Any]) -> list[tuple[str, Any]]:
    items = list(runs.items())
    if not items or len(items) > len(_RUN_COLORS):
        raise ValueError(f"need 1 to {len(_RUN_COLORS)} runs to compare; got {len(items)}")
    return items


def variance_figure(
    d_ks: Sequence[int],
    unscaled: ArrayLike,
    scaled: ArrayLike,
    title: str | None = None,
) -> go.Figure:
    """Measured variance of ``q · k`` against ``d_k`` on log–log axes, unscaled and scaled.

    Introduced in chapter 2. ``d_ks``, ``unscaled`` and ``scaled`` are ``(n_widths,)``; dashed
    guides show ``variance = d_k`` and ``variance = 1``.
    """
    x = np.asarray(d_ks, dtype=float)
    curves = {"q·k": unscaled, "q·k / √dₖ": scaled}  # formulas: the same in every language
    fig = go.Figure()
    for (name, y), color in zip(curves.items(), _RUN_COLORS, strict=False):
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"{name}: {y.shape} values for {x.shape} widths d_k")
        fig.add_trace(curve(x, y, name, color,
                            _("d_k %{x}<br>variance %{y:.3f}<extra></extra>")))
    for name, y in ((_("variance = d_k"), x), (_("variance = 1"), np.ones_like(x))):
        fig.add_trace(
            go.Scatter(
                x=x.tolist(),
                y=y.tolist(),
                name=name,
                mode="lines",
                line=dict(color="grey", dash="dash", width=1),
                hoverinfo="skip",
            )
        )
    _dk_axis(fig, x.tolist())
    fig.update_yaxes(type="log", title=_("variance of the score"))
    return _layout(fig, title)


def saturation_figure(runs: Mapping[str, Any], title: str | None = None) -> go.Figure:
    """Largest weight and entropy of the softmax against ``d_k``, one curve per run.

    Introduced in chapter 2. ``runs`` maps a legend name to a
    :class:`course_attention.experiments.ScalingStats` (fields ``(n_widths,)``); a dashed line
    marks the entropy of uniform weights, ``log(seq_k)``.
    """
    from plotly.subplots import make_subplots

    items = _check_runs(runs)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(panel_title(N_("largest weight")), panel_title(N_("entropy (nats)"))),
    )
    fig.update_annotations(font_size=13)  # the panels' titles: two short lines each
    for (group, stats), color in zip(items, _RUN_COLORS, strict=False):
        name = _shown(group)  # a chapter's run: translated when the catalogue has it
        x = np.asarray(stats.d_k, dtype=float).tolist()
        for col, y in ((1, stats.max_weight), (2, stats.entropy)):
            hover = _("d_k %{{x}}<br>%{{y:.3f}}<extra>{name}</extra>").format(name=name)
            trace = curve(x, y, name, color, hover, legendgroup=group, showlegend=col == 1)
            fig.add_trace(trace, row=1, col=col)
    stats = items[0][1]
    uniform = float(np.log(stats.seq_k))
    fig.add_trace(
        go.Scatter(
            x=[float(stats.d_k[0]), float(stats.d_k[-1])],
            y=[round(uniform, _DIGITS)] * 2,
            name=_("uniform over {n} keys").format(n=stats.seq_k),
            mode="lines",
            line=dict(color="grey", dash="dash", width=1),
            hoverinfo="skip",
        ),
        row=1,
        col=2,
    )
    _dk_axis(fig, stats.d_k.tolist())
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_yaxes(range=[0, uniform * 1.08], row=1, col=2)
    return _layout(fig, title, height=400)


def jacobian_norm_figure(runs: Mapping[str, Any], title: str | None = None) -> go.Figure:
    """Frobenius norm of the softmax Jacobian ``diag(p) − p pᵀ`` against ``d_k``, per run.

    Introduced in chapter 2. ``runs`` maps a legend name to a
    :class:`course_attention.experiments.ScalingStats`; the y axis is logarithmic.
    """
    fig = go.Figure()
    for (name, stats), color in zip(_check_runs(runs), _RUN_COLORS, strict=False):
        name = _shown(name)
        hover = _("d_k %{{x}}<br>‖J‖ %{{y:.4f}}<extra>{name}</extra>").format(name=name)
        fig.add_trace(curve(stats.d_k, stats.jacobian_norm, name, color, hover))
    _dk_axis(fig, stats.d_k.tolist())
    fig.update_yaxes(type="log", title="‖diag(p) − p pᵀ‖ (Frobenius)")
    return _layout(fig, title)


def gradient_spread_figure(runs: Mapping[str, Any], title: str | None = None) -> go.Figure:
    """Median and mean over queries of the gradient at the query, against ``d_k``, per run.

    Introduced in chapter 2. ``runs`` maps a legend name to a
    :class:`course_attention.experiments.ScalingStats` whose ``grad_median`` and ``grad_mean``
    are ``(n_widths,)``: a solid line for the median, a dashed one for the mean, the same colour
    per run, on a logarithmic y axis. Median far below mean means a spiky gradient: tiny for most
    queries, large for a few.
    """
    fig = go.Figure()
    for (name, stats), color in zip(_check_runs(runs), _RUN_COLORS, strict=False):
        if stats.grad_median is None or stats.grad_mean is None:
            raise ValueError(f"{name}: the run has no gradient measurements (grad_median is None)")
        name = _shown(name)
        lines = (  # (legend, hover, values, dash): the median solid, the mean dashed
            (_("{name}: median"), _("d_k %{{x}}<br>median %{{y:.2g}}<extra>{name}</extra>"),
             stats.grad_median, "solid"),
            (_("{name}: mean"), _("d_k %{{x}}<br>mean %{{y:.2g}}<extra>{name}</extra>"),
             stats.grad_mean, "dash"),
        )
        for legend, hover, y, dash in lines:
            trace = curve(stats.d_k, y, legend.format(name=name), color,
                          hover.format(name=name))
            trace.line.dash = dash
            fig.add_trace(trace)
    _dk_axis(fig, stats.d_k.tolist())
    fig.update_yaxes(type="log", title=_("‖∂L/∂q‖ / √dₖ over queries"))
    return _layout(fig, title)


def scaling_bars_figure(weights: ArrayLike, title: str | None = None) -> go.Figure:
    """Bar chart of one query's weights ``(seq_k,)`` over keys ``k0 … k{seq_k-1}`` (chapter 2)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1:
        raise ValueError(f"weights must be 1-D (seq_k,); got shape {w.shape}")
    fig = weight_bars(w, [f"k{j}" for j in range(len(w))], title=title)
    fig.update_yaxes(range=[0, 1.1])
    return fig
