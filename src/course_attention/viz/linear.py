"""Figure and table of chapter 15's trained models: associative recall against the number of
pairs, and what each model keeps to read the next token.

Introduced in chapter 15: :func:`recall_figure` draws, for each trained model, the share of
queried keys whose value it recalls, as the number of key–value pairs in the context grows,
against the state's width and against the best a model can do without binding keys to values;
:func:`recall_table` puts the same recall beside each model's cache or state bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import _
from .core import PALETTE, _layout, axis_title, curve
from .multi_head import Table

__all__ = ["recall_figure", "recall_table"]


def recall_figure(recall: Mapping[str, ArrayLike], pairs: Sequence[int], baseline: ArrayLike,
                  state_width: int, title: str | None = None) -> go.Figure:
    """One line per model: ``recall[name]`` ``(len(pairs),)``, the recall accuracy at each
    number of pairs ``pairs``; a dashed grey line for ``baseline`` ``(len(pairs),)`` (the best
    answer that ignores which key was asked, chapter 15's context baseline); a dotted line at
    ``state_width`` pairs (a linear layer's head dimension ``d_k``: more keys than that cannot
    all be orthogonal). Introduced in chapter 15."""
    x = np.asarray(pairs, dtype=float)
    base = np.asarray(baseline, dtype=float)
    arrays = {k: np.asarray(v, dtype=float) for k, v in recall.items()}
    if not arrays or x.ndim != 1 or len(x) < 2 or base.shape != x.shape \
            or any(a.shape != x.shape for a in arrays.values()):
        raise ValueError(f"need pairs (n,), n ≥ 2, and a baseline and every recall of the same "
                         f"shape; got pairs {x.shape}, baseline {base.shape}, recall "
                         f"{ {k: a.shape for k, a in arrays.items()} }")
    if isinstance(state_width, bool) or not isinstance(state_width, int) or state_width < 1:
        raise ValueError(f"state_width must be a positive integer; got {state_width!r}")
    hover = _("%{x} pairs<br>recall %{y:.3f}")  # plotly adds the model's name beside it
    fig = go.Figure()
    for i, (name, values) in enumerate(arrays.items()):
        fig.add_trace(curve(x, values, name, PALETTE[i % len(PALETTE)], hover))
    fig.add_trace(curve(x, base, _("context baseline"), "grey", hover).update(
        line=dict(color="grey", dash="dash"), mode="lines"))
    fig.add_vline(x=state_width, line_dash="dot", line_color="grey",
                  annotation=dict(text=_("dₖ"), font=dict(size=11)),
                  annotation_position="bottom right")
    fig.update_xaxes(title=_("key–value pairs in the context"), tickvals=x.tolist())
    fig.update_yaxes(title=axis_title(_("recall accuracy")), range=[0, 1.05])
    return _layout(fig, title, height=440,
                   legend=dict(orientation="h", x=0, xanchor="left", y=-0.22, yanchor="top"))


def recall_table(recall: Mapping[str, ArrayLike], pairs: Sequence[int],
                 cache: Mapping[str, Sequence[int]], lengths: Sequence[int]) -> Table:
    """One row per model: its recall ``recall[name]`` ``(len(pairs),)`` at each number of pairs
    ``pairs`` (three decimals), then ``cache[name]`` ``(len(lengths),)``, the bytes it keeps to
    read the next token after each of ``lengths`` tokens. Introduced in chapter 15."""
    if set(recall) != set(cache) or not recall:
        raise ValueError(f"recall and cache must name the same models; got {sorted(recall)} "
                         f"and {sorted(cache)}")
    rows = []
    for name, values in recall.items():
        r, b = np.asarray(values, dtype=float), list(cache[name])
        if r.shape != (len(pairs),) or len(b) != len(lengths):
            raise ValueError(f"{name}: need {len(pairs)} recalls and {len(lengths)} byte counts; "
                             f"got {r.shape} and {len(b)}")
        rows.append([name, *(f"{x:.3f}" for x in r), *(f"{int(x):,}" for x in b)])
    header = [_("model"), *(_("{n} pairs").format(n=n) for n in pairs),
              *(_("bytes after {t} tokens").format(t=f"{t:,}") for t in lengths)]
    return Table(header, rows)
