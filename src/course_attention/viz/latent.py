"""Figures of chapter 13's trained comparison (multi-head, grouped-query and multi-head latent
attention with the same KV cache per token).

Introduced in chapter 13: each model's validation loss on several seeds, this run's beside them,
and the n-gram ladder's levels.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import _
from .core import PALETTE, _layout, axis_title

__all__ = ["equal_cache_figure"]


def equal_cache_figure(
    record: Mapping[str, ArrayLike],
    levels: Mapping[str, float],
    current: Mapping[str, float] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Validation losses, one column per model, with horizontal lines at ``levels``.

    Introduced in chapter 13. ``record`` maps a model's name to its validation losses on
    recorded seeds ``(k,)`` (nats per character), drawn as small dots; ``current`` maps a model's
    name to this run's loss, drawn as a large diamond; ``levels`` maps a baseline's name (an
    ``n``-gram) to its loss, drawn as a dashed line across the models.
    """
    if not record:
        raise ValueError("need at least one model")
    rows = {}
    for name, values in record.items():
        v = np.asarray(values, dtype=float)
        if v.ndim != 1 or not len(v):
            raise ValueError(f"{name}: the losses of the seeds must have shape (k,), k ≥ 1; got "
                             f"{v.shape}")
        rows[name] = v
    if current is not None and not set(current) <= set(rows):
        raise ValueError(f"current names {sorted(set(current) - set(rows))} are not in record")
    names = list(rows)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[n for n in names for _v in rows[n]],
        y=[round(float(v), 4) for n in names for v in rows[n]],
        mode="markers", name=_("recorded seeds"),
        marker=dict(color=PALETTE[0], size=9, opacity=0.6),
        hovertemplate=_("%{x}<br>%{y:.3f} nats (a recorded seed)<extra></extra>")))
    if current:
        fig.add_trace(go.Scatter(
            x=list(current), y=[round(float(v), 4) for v in current.values()],
            mode="markers", name=_("this run"),
            marker=dict(color=PALETTE[1], size=15, symbol="diamond"),
            hovertemplate=_("%{x}<br>%{y:.3f} nats (this run)<extra></extra>")))
    for i, (name, value) in enumerate(levels.items()):
        fig.add_trace(go.Scatter(
            x=[names[0], names[-1]], y=[round(float(value), 4)] * 2, mode="lines",
            name=f"{name}: {value:.2f}",
            line=dict(color=PALETTE[(i + 2) % len(PALETTE)], dash="dash"),
            hovertemplate=_("{name}<br>%{{y:.3f}} nats<extra></extra>").format(name=name)))
    fig.update_xaxes(type="category")
    fig.update_yaxes(title=axis_title(_("validation loss (nats)")))
    return _layout(fig, title, height=380,
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.15, yanchor="top"))
