"""Figures of chapter 12's trained comparison (the GPT-2 block against the modern block).

Introduced in chapter 12: the largest attention logit during training, with and without QK-norm,
and the bound QK-norm puts on it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import _
from .core import PALETTE, _layout, axis_title, curve

__all__ = ["max_logit_figure"]


def _pair(name: str, steps: ArrayLike, values: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(steps, dtype=float), np.asarray(values, dtype=float)
    if x.ndim != 1 or x.shape != y.shape or not len(x):
        raise ValueError(f"{name}: steps and values must be (n,) alike, n ≥ 1; got {x.shape}, "
                         f"{y.shape}")
    if not np.all(y[np.isfinite(y)] > 0):
        raise ValueError(f"{name}: the logits must be > 0 (the axis is logarithmic)")
    return x, y


def max_logit_figure(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    bound: tuple[ArrayLike, ArrayLike] | None = None,
    title: str | None = None,
) -> go.Figure:
    """The largest attention logit against the training step, one line per model.

    Introduced in chapter 12. ``curves`` maps a model's name to ``(steps (n,), largest logit
    (n,))``; ``bound`` ``(steps, bound)`` adds QK-norm's bound
    (:func:`course_attention.modern.compare.qk_norm_bound`) as a dashed line. The y axis is
    logarithmic: the logits run from about 0.1 to tens.
    """
    if not curves:
        raise ValueError("need at least one curve")
    hover = _("step %{x}<br>largest logit %{y:.2f}<extra></extra>")
    fig = go.Figure()
    for i, (name, (steps, values)) in enumerate(curves.items()):
        x, y = _pair(name, steps, values)
        fig.add_trace(curve(x, y, name, PALETTE[i % len(PALETTE)], hover).update(mode="lines"))
    if bound is not None:
        x, y = _pair("bound", *bound)
        fig.add_trace(curve(x, y, _("QK-norm's bound √d · max|γ_q| · max|γ_k|"), "grey",
                            _("step %{x}<br>bound %{y:.2f}<extra></extra>")).update(
                                mode="lines", line_dash="dash"))
    fig.update_xaxes(title=_("training step"))
    fig.update_yaxes(title=axis_title(_("largest logit q·k/√d (log scale)")),
                     type="log")
    return _layout(fig, title, height=420,
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.25, yanchor="top"))
