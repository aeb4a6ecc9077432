"""Figures of chapter 4 (masking): the mask builder and bidirectional vs causal weights."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .. import numpy_ref as ref
from ..i18n import N_, _
from .core import (
    _PANEL_TITLE,
    PALETTE,
    _layout,
    _rounded,
    heatmap_trace,
    mask_trace,
    panel_title,
    slider_figure,
    unique_labels,
)

__all__ = [
    "MASK_KINDS",
    "MASK_TOKENS",
    "example_mask",
    "padded_tokens",
    "mask_traces",
    "mask_figure",
    "causal_query_slider",
]

#: The masks of the chapter-4 mask builder, in the order of its presets.
MASK_KINDS: tuple[str, ...] = ("bidirectional", "causal", "padding", "causal + padding")
#: The sentence of the mask builder, real tokens first and ``[PAD]`` after ``n_real`` of them.
MASK_TOKENS: tuple[str, ...] = ("[BOS]", "I", "like", "you", "a", "lot")


def example_mask(kind: str, seq_len: int, n_real: int) -> np.ndarray:
    """The allowed-mask ``(seq_len, seq_len)`` bool of one kind, for a sentence of ``n_real``
    real tokens padded to ``seq_len`` (introduced in chapter 4).

    ``"bidirectional"``: all True; ``"causal"``: lower triangle; ``"padding"``: only the real
    keys (columns); ``"causal + padding"``: both at once.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}; got {kind!r}")
    if not 1 <= n_real <= seq_len:
        raise ValueError(f"n_real must lie in 1 … seq_len={seq_len}; got {n_real}")
    mask = np.ones((seq_len, seq_len), dtype=bool)
    if "causal" in kind:
        mask &= ref.causal_mask(seq_len)
    if "padding" in kind:
        mask &= ref.padding_mask(np.array([n_real]), seq_len)[0, 0]  # (1, seq_k) broadcasts
    return mask


def padded_tokens(tokens: Sequence[str], n_real: int, pad: str = "[PAD]") -> list[str]:
    """``tokens[:n_real]`` followed by ``pad`` up to ``len(tokens)`` (chapter 4)."""
    return [str(t) for t in tokens[:n_real]] + [pad] * (len(tokens) - n_real)


def mask_traces(
    kind: str,
    tokens: Sequence[str],
    n_real: int,
    scores: ArrayLike,
    mask: ArrayLike | None = None,
) -> tuple[go.Heatmap, go.Heatmap]:
    """Two heatmaps: the mask (left) and the weights it gives (right), both ``(seq, seq)``.

    Introduced in chapter 4. ``scores`` ``(seq, seq)`` are made-up attention scores; the weights
    are their masked softmax, a row with nothing allowed is all zeros. ``mask`` ``(seq, seq)``
    bool, when given, replaces the ``kind``'s mask (the live mask builder's presets and edits).
    """
    s = np.asarray(scores, dtype=float)
    if s.shape != (len(tokens), len(tokens)):
        raise ValueError(f"scores of shape {s.shape} need {s.shape[0]} tokens; got {len(tokens)}")
    if mask is None:
        mask = example_mask(kind, len(tokens), n_real)  # (seq, seq)
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != s.shape:
        raise ValueError(f"mask must be bool of shape {s.shape}; got {mask.dtype} {mask.shape}")
    weights = ref.softmax(np.where(mask, s, -np.inf))  # (seq, seq)
    labels = unique_labels(padded_tokens(tokens, n_real))
    left = mask_trace(mask, labels, labels)  # colour only: one text layer per figure is cheaper
    right = heatmap_trace(weights, labels, labels)
    right.update(xaxis="x2", yaxis="y2", showscale=False)  # each cell prints its weight
    return left, right


def _two_panels(fig: go.Figure) -> go.Figure:
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.46], title=_("key")),
        yaxis=dict(autorange="reversed", title=_("query")),
        xaxis2=dict(domain=[0.54, 1.0], title=_("key"), anchor="y2"),
        yaxis2=dict(autorange="reversed", anchor="x2", showticklabels=False),
        annotations=[
            dict(text=panel_title(N_("mask (green = may attend)")), x=0.23, y=1.0,
                 **_PANEL_TITLE),
            dict(text=_("weights"), x=0.77, y=1.0, **_PANEL_TITLE),
        ],
    )
    return fig



def mask_figure(
    kind: str,
    n_real: int,
    tokens: Sequence[str] = MASK_TOKENS,
    scores: ArrayLike | None = None,
    title: str | None = None,
    mask: ArrayLike | None = None,
) -> go.Figure:
    """One mask beside its weights (chapter 4; the live explorer redraws this).

    ``tokens`` ``(seq,)``; ``scores`` ``(seq, seq)``, default the fixed toy scores; ``mask``
    ``(seq, seq)`` bool replaces the ``kind``'s mask when given.
    """
    from .. import toy

    scores = toy.mask_scores(len(tokens)) if scores is None else scores
    fig = go.Figure(list(mask_traces(kind, tokens, n_real, scores, mask=mask)))
    return _layout(_two_panels(fig), title, height=420)


def causal_query_slider(
    tokens: Sequence[str], scores: ArrayLike, title: str | None = None
) -> go.Figure:
    """One query's weights without a mask (bidirectional) and with a causal mask (chapter 4).

    ``tokens`` ``(seq,)``, ``scores`` ``(seq, seq)``; the slider picks the query position.
    """
    s = np.asarray(scores, dtype=float)
    if s.shape != (len(tokens), len(tokens)):
        raise ValueError(f"scores of shape {s.shape} need {s.shape[0]} tokens; got {len(tokens)}")
    labels = unique_labels(tokens)
    both = {
        _("bidirectional"): ref.softmax(s),  # (seq, seq)
        _("causal"): ref.softmax(np.where(ref.causal_mask(len(s)), s, -np.inf)),
    }

    def traces(i: int) -> list[go.Bar]:
        return [
            go.Bar(
                x=labels,
                y=_rounded(w[i]),
                name=name,
                marker_color=color,
                text=[f"{v:.2f}" for v in w[i]],
                textposition="outside",
                hovertemplate=_("{name}<br>key %{{x}}<br>weight %{{y:.3f}}<extra></extra>"
                                ).format(name=name),
            )
            for (name, w), color in zip(both.items(), (PALETTE[1], PALETTE[0]), strict=True)
        ]

    fig = slider_figure(
        traces,
        list(range(len(labels))),
        label=N_("query"),  # slider_figure translates it
        format_value=lambda i: labels[i],
        title=title,
        height=420,
    )
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=1.08, x=0))
    fig.update_yaxes(range=[0, 1.1], title=_("weight"))
    return fig
