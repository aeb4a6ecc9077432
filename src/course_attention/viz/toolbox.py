"""Figure of the toolbox chapter: what a model pays, in nats and bits, for the true token."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from .core import PALETTE, _layout, _rounded, axis_title

__all__ = ["token_cost_figure"]


def token_cost_figure(vocab: int, title: str | None = None) -> go.Figure:
    """The cost −log p of the true token against its probability ``p``, in nats and in bits.

    Introduced in the toolbox chapter (cross-entropy). ``p`` runs over 1/(2·vocab) … 1 on a
    logarithmic axis; the markers sit at the uniform guess ``p = 1/vocab`` and at ``p = 1/2``.
    """
    if not isinstance(vocab, (int, np.integer)) or vocab < 2:
        raise ValueError(f"vocab must be an integer ≥ 2 (the number of tokens), got {vocab!r}")
    p = np.geomspace(0.5 / vocab, 1.0, 61)  # (61,)
    marks = np.array([1.0 / vocab, 0.5])  # (2,): the uniform guess, a coin flip
    fig = go.Figure()
    units = (
        (_("nats (ln)"), np.e, PALETTE[0], _("p %{x:.4f}<br>cost %{y:.3f} nats<extra></extra>")),
        (_("bits (log₂)"), 2.0, PALETTE[3], _("p %{x:.4f}<br>cost %{y:.3f} bits<extra></extra>")),
    )
    for name, base, color, hover in units:
        cost = -np.log(p) / np.log(base)
        fig.add_trace(go.Scatter(x=_rounded(p), y=_rounded(cost), name=name, mode="lines",
                                 line=dict(color=color), hovertemplate=hover))
        fig.add_trace(go.Scatter(
            x=marks.tolist(), y=(-np.log(marks) / np.log(base)).tolist(), mode="markers",
            marker=dict(color=color, size=9), showlegend=False, name=name,
            hovertemplate=hover,
        ))
    fig.update_xaxes(type="log", title=axis_title(_("probability of the true token, p")))
    fig.update_yaxes(title=axis_title(_("cost of the token, −log p")), rangemode="tozero")
    # the upper right is empty: both costs fall to 0 at p = 1
    return _layout(fig, title, legend=dict(x=0.98, xanchor="right", y=0.98, yanchor="top"))
