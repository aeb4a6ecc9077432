"""Figures of chapter 7 (encoder–decoder and cross-attention).

Introduced in chapter 7: the masks of the three Transformer families, cross-attention maps
before and after training, and greedy decoding step by step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .. import numpy_ref as ref
from ..i18n import N_, _
from .core import (
    PALETTE,
    WEIGHT_SCALE,
    _layout,
    _rounded,
    _shown,
    _two_panels,
    axis_title,
    heatmap_trace,
    mask_trace,
    slider_figure,
    unique_labels,
)

__all__ = [
    "architecture_masks",
    "architecture_mask_figure",
    "cross_attention_pair",
    "head_frames",
    "cross_attention_heads_slider",
    "accuracy_by_length_figure",
    "decoding_traces",
    "decoding_figure",
    "decoding_error_figure",
    "training_loss_figure",
]


def architecture_masks(n_src: int, n_tgt: int) -> dict[str, np.ndarray]:
    """The allowed-masks (bool, True = may attend) of the three Transformer families.

    Introduced in chapter 7. Returns, in order:
    ``"BERT: self (bidirectional)"`` ``(n_src, n_src)`` all True;
    ``"GPT: self (causal)"`` ``(n_tgt, n_tgt)`` lower triangle;
    ``"T5 encoder: self"`` ``(n_src, n_src)`` all True;
    ``"T5 decoder: self (causal)"`` ``(n_tgt, n_tgt)`` lower triangle;
    ``"T5 decoder: cross"`` ``(n_tgt, n_src)`` all True (every target query sees every source key).
    """
    if n_src < 1 or n_tgt < 1:
        raise ValueError(f"need n_src ≥ 1 and n_tgt ≥ 1; got {n_src}, {n_tgt}")
    full_src = np.ones((n_src, n_src), dtype=bool)
    causal_tgt = ref.causal_mask(n_tgt)
    return {
        "BERT: self (bidirectional)": full_src,
        "GPT: self (causal)": causal_tgt,
        "T5 encoder: self": full_src.copy(),
        "T5 decoder: self (causal)": causal_tgt.copy(),
        "T5 decoder: cross": np.ones((n_tgt, n_src), dtype=bool),
    }


#: Each mask's panel title (two short lines), by its name in :func:`architecture_masks`.
_MASK_TITLES = {
    "BERT: self (bidirectional)": N_("BERT<br>self (bidirectional)"),
    "GPT: self (causal)": N_("GPT<br>self (causal)"),
    "T5 encoder: self": N_("T5 encoder<br>self"),
    "T5 decoder: self (causal)": N_("T5 decoder<br>self (causal)"),
    "T5 decoder: cross": N_("T5 decoder<br>cross"),
}


def _mask_trace(mask: np.ndarray, queries: Sequence[str], keys: Sequence[str]) -> go.Heatmap:
    return mask_trace(mask, queries, keys)


def architecture_mask_figure(
    src_tokens: Sequence[str], tgt_tokens: Sequence[str], title: str | None = None
) -> go.Figure:
    """Five mask panels in two rows: BERT and GPT; T5's encoder, decoder and cross masks.

    Introduced in chapter 7. ``src_tokens`` ``(seq_s,)`` label the encoder's positions (BERT
    reads them too); ``tgt_tokens`` ``(seq_t,)`` the decoder's (GPT reads them too). Green = may
    attend, grey = hidden. The masks come from :func:`architecture_masks`.
    """
    from plotly.subplots import make_subplots

    masks = architecture_masks(len(src_tokens), len(tgt_tokens))
    labels = {  # (queries, keys) of each panel
        "BERT: self (bidirectional)": (src_tokens, src_tokens),
        "GPT: self (causal)": (tgt_tokens, tgt_tokens),
        "T5 encoder: self": (src_tokens, src_tokens),
        "T5 decoder: self (causal)": (tgt_tokens, tgt_tokens),
        "T5 decoder: cross": (tgt_tokens, src_tokens),
    }
    names = list(masks)
    titles = [_(_MASK_TITLES[name]) for name in names]  # two short lines per panel
    # two rows (decoder-only and encoder-only above, T5's three below): five side by side
    # leave a phone about 40 px a panel
    cells = [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3)]
    fig = make_subplots(rows=2, cols=3, specs=[[{}, {}, None], [{}, {}, {}]],
                        subplot_titles=titles, horizontal_spacing=0.1, vertical_spacing=0.3)
    for (row, col), name in zip(cells, names, strict=True):
        fig.add_trace(_mask_trace(masks[name], *labels[name]), row=row, col=col)
        fig.update_yaxes(autorange="reversed", row=row, col=col)
    fig.update_xaxes(tickangle=-45, tickfont_size=10)
    fig.update_yaxes(tickfont_size=10)
    fig.update_annotations(font_size=12)
    fig = _layout(fig, title, height=560)
    fig.update_layout(margin=dict(t=110 if title else 80))
    return fig


def cross_attention_pair(
    before: ArrayLike,
    after: ArrayLike,
    queries: Sequence[str],
    keys: Sequence[str],
    title: str | None = None,
) -> go.Figure:
    """Two cross-attention heatmaps ``(seq_t, seq_s)`` side by side: before and after training.

    Introduced in chapter 7. Rows are the decoder's queries, columns the encoder's positions.
    """
    from plotly.subplots import make_subplots

    b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if b.shape != a.shape:
        raise ValueError(f"before {b.shape} and after {a.shape} must have the same shape")
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=(_("before training"), _("after training")),
        shared_yaxes=True,
    )
    fig.add_trace(heatmap_trace(b, queries, keys), row=1, col=1)
    right = heatmap_trace(a, queries, keys)
    right.update(showscale=False)
    fig.add_trace(right, row=1, col=2)
    fig.update_yaxes(autorange="reversed")
    fig.update_yaxes(title=_("decoder query"), row=1, col=1)
    fig.update_xaxes(title=_("encoder position (key)"))
    return _layout(fig, title, height=max(320, 100 + 40 * len(queries)))


def head_frames(weights: ArrayLike) -> tuple[list[str], np.ndarray]:
    """Every head of every layer, then each layer's average: names and maps.

    Introduced in chapter 7. ``weights`` ``(layers, heads, seq_t, seq_s)`` → names like
    ``"layer 1 · head 2"`` and ``"layer 2 · average"`` (counted from 1) and the maps
    ``(layers * (heads + 1), seq_t, seq_s)``, layer by layer. The names are English in every
    language (a slider's frames are found by them); ``_frame_labels`` shows them.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 4 or 0 in w.shape:
        raise ValueError(f"weights must have shape (layers, heads, seq_t, seq_s); got {w.shape}")
    names, maps = [], []
    for layer, heads in enumerate(w, start=1):
        for head, m in enumerate(heads, start=1):
            names.append(f"layer {layer} · head {head}")
            maps.append(m)
        names.append(f"layer {layer} · average")
        maps.append(heads.mean(axis=0))
    return names, np.stack(maps)


def _frame_labels(layers: int, heads: int) -> list[str]:
    """The names of :func:`head_frames`, in the reader's language."""
    out = []
    for layer in range(1, layers + 1):
        out += [_("layer {layer} · head {head}").format(layer=layer, head=head)
                for head in range(1, heads + 1)]
        out.append(_("layer {layer} · average").format(layer=layer))
    return out


def cross_attention_heads_slider(
    left: ArrayLike,
    right: ArrayLike,
    queries: Sequence[str],
    keys: tuple[Sequence[str], Sequence[str]],
    panel_titles: tuple[str, str],
    title: str | None = None,
) -> go.Figure:
    """Two cross-attention maps side by side, with a slider over every layer and head.

    Introduced in chapter 7. ``left`` and ``right`` are ``(layers, heads, seq_t, seq_s)`` (e.g.
    before and after training, or one model on two sources); ``queries`` ``(seq_t,)`` name the
    rows of both, ``keys`` the columns of each panel. The slider's positions are
    :func:`head_frames` (precomputed: it works on the static website); it starts on the last
    layer's average. A cell shows its number only when it holds more than half of its row's
    weight (hover shows every weight), so the labels fit at 375 px as at 1280 px.
    """
    a, b = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"left {a.shape} and right {b.shape} must have the same shape")
    names, maps_a = head_frames(a)
    _names, maps_b = head_frames(b)
    shown = _frame_labels(a.shape[0], a.shape[1])

    def traces(i: int) -> tuple[go.Heatmap, go.Heatmap]:
        one = heatmap_trace(maps_a[i], queries, keys[0])
        two = heatmap_trace(maps_b[i], queries, keys[1])
        two.update(showscale=False, xaxis="x2", yaxis="y2")
        for trace, m in ((one, maps_a[i]), (two, maps_b[i])):
            trace.update(text=_majority_text(m), texttemplate="%{text}", textfont_size=11)
        one.update(colorbar=_NARROW_COLORBAR | dict(title=dict(text=_("weight"), side="top")))
        return one, two

    fig = slider_figure(
        traces,
        list(range(len(names))),
        label=N_("shown"),
        active=len(names) - 1,
        format_value=lambda i: names[i],
        format_label=lambda i: shown[i],
        title=title,
        height=max(420, 180 + 40 * len(queries)),
    )
    titles = tuple(_shown(t) for t in panel_titles)  # a chapter's: translated when catalogued
    _two_panels(fig, titles, N_("key (source)"), N_("decoder query"), (0.0, 0.48), (0.52, 1.0))
    # Both panels have the same rows: label them once, on the left, so that at 375 px the right
    # panel's labels do not cover the left panel. The slider sits below the axis titles.
    fig.update_yaxes(automargin=True)
    fig.update_layout(yaxis2=dict(showticklabels=False), margin=dict(l=10, r=10, t=90))
    fig.update_annotations(font_size=12, xanchor="center")  # "auto" pulls the titles together
    fig.layout.sliders[0].pad.t = 105  # below tick labels turned upright on a narrow screen
    fig.layout.sliders[0].len = 0.92  # the last step's label ends inside the figure
    fig.update_layout(height=fig.layout.height + 40)
    return fig


#: A short horizontal colour bar above the right panel's title — the two panels keep the whole
#: width, so that a cell is wide enough for its number on a 375 px screen.
_NARROW_COLORBAR = dict(
    orientation="h",
    title=dict(text="weight", side="top"),  # translated where it is used
    thickness=8,
    len=0.3,
    x=1.0,
    xanchor="right",
    y=1.12,
    yanchor="bottom",
    tickvals=[0, 0.5, 1],
    ticks="",
)


def _majority_text(weights: np.ndarray) -> list[list[str]]:
    """In-cell labels ``(seq_t, seq_s)`` for a map: only a weight above 0.5, the rest blank.

    At most one cell per row holds more than half the weight, so no two labels share a row and
    they cannot run together on a narrow (375 px) screen; every weight stays on hover.
    """
    return [[f"{v:.2f}" if v > 0.5 else "" for v in row] for row in np.asarray(weights)]


def accuracy_by_length_figure(
    accuracy: dict[int, float], trained: Sequence[int], title: str | None = None
) -> go.Figure:
    """Bars of exact-sequence accuracy per string length; trained lengths in one colour.

    Introduced in chapter 7. ``accuracy`` maps a length to a share in [0, 1] (from
    :func:`course_attention.training.accuracy_by_length`); ``trained`` lists the lengths the
    model was trained on.
    """
    if not accuracy:
        raise ValueError("accuracy must map at least one length to a share")
    lengths = sorted(accuracy)
    seen = [n in set(trained) for n in lengths]
    fig = go.Figure(
        go.Bar(
            x=[str(n) for n in lengths],
            y=_rounded([accuracy[n] for n in lengths]),
            marker_color=[PALETTE[0] if s else PALETTE[1] for s in seen],
            text=[f"{accuracy[n]:.2f}" for n in lengths],
            textposition="outside",
            hovertemplate=_("%{x} digits<br>accuracy %{y:.3f}<extra></extra>"),
        )
    )
    seen = _("digits in the string (blue: trained on; orange: never seen)")
    fig.update_xaxes(title=axis_title(seen))
    fig.update_yaxes(title=_("exact-sequence accuracy"), range=[0, 1.15])
    return _layout(fig, title, height=340)


def _check_steps(steps: Any) -> np.ndarray:
    w = np.asarray(steps.weights, dtype=float)
    if w.ndim != 2 or w.shape != (len(steps.tokens), len(steps.source)):
        raise ValueError(
            f"weights of shape {w.shape} need ({len(steps.tokens)}, {len(steps.source)}): "
            "one row per generated token, one column per source token"
        )
    return w


def decoding_traces(steps: Any, step: int) -> tuple[go.Heatmap, go.Bar, go.Scatter]:
    """The traces of greedy decoding at ``step`` (0-based), for the live explorer.

    Introduced in chapter 7. ``steps`` is a :class:`course_attention.inspection.DecodingSteps`
    (``weights`` ``(steps, seq_s)``). Above: the cross-attention rows of the steps so far (later
    rows blank); below: the row used to pick token ``step``; on top: the tokens so far.
    """
    w = _check_steps(steps)
    if not 0 <= step < len(w):
        raise ValueError(f"step={step} is not an index into {len(w)} decoding steps")
    rows = [_(f"step {i + 1}") for i in range(len(w))]  # explorers.decoding.STEP_ROWS
    shown = np.where(np.arange(len(w))[:, None] <= step, w, np.nan)  # (steps, seq_s)
    heat = go.Heatmap(
        z=[[None if np.isnan(v) else v for v in row] for row in _rounded(shown)],
        x=unique_labels(steps.source),
        y=rows,
        zmin=0.0,
        zmax=1.0,
        colorscale=WEIGHT_SCALE,
        showscale=False,  # every cell shows its value; a colour bar would crowd the bars
        texttemplate="%{z:.2f}",
        hovertemplate=_("%{y}<br>source %{x}<br>weight %{z:.3f}<extra></extra>"),
    )
    bars = go.Bar(
        x=unique_labels(steps.source),
        y=_rounded(w[step]),
        marker_color=PALETTE[0],
        text=[f"{v:.2f}" for v in w[step]],
        textposition="outside",
        xaxis="x2",
        yaxis="y2",
        hovertemplate=_("source %{x}<br>weight %{y:.3f}<extra></extra>"),
    )
    so_far = " ".join(["[BOS]", *steps.tokens[:step]])
    text = go.Scatter(
        x=[0.5],
        y=[0.5],
        mode="text",
        text=[_("decoder input: {so_far} → picks: <b>{token}</b>").format(
            so_far=so_far, token=steps.tokens[step])],
        textfont=dict(size=14),
        xaxis="x3",
        yaxis="y3",
        hoverinfo="skip",
        showlegend=False,
    )
    return heat, bars, text


def _decoding_layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    fig.update_layout(
        # one above the other, each as wide as the figure: side by side, a phone leaves a
        # heatmap cell too narrow for its number
        xaxis=dict(domain=[0.0, 1.0], title=_("source token (key)")),
        yaxis=dict(domain=[0.52, 0.88], autorange="reversed"),
        xaxis2=dict(domain=[0.0, 1.0], title=_("source token (key)"), anchor="y2"),
        yaxis2=dict(domain=[0.0, 0.34], range=[0, 1.15], title=_("weight"), anchor="x2"),
        xaxis3=dict(domain=[0.0, 1.0], range=[0, 1], visible=False, anchor="y3"),
        yaxis3=dict(domain=[0.92, 1.0], range=[0, 1], visible=False, anchor="x3"),
        showlegend=False,
    )
    return _layout(fig, title, height=height)


def decoding_figure(steps: Any, step: int, title: str | None = None) -> go.Figure:
    """Greedy decoding at one ``step`` (chapter 7; the live explorer redraws this)."""
    fig = go.Figure(list(decoding_traces(steps, step)))
    return _decoding_layout(fig, title, height=640)


def decoding_error_figure(message: str) -> go.Figure:
    """An empty decoding figure that shows ``message`` (chapter 7: wrong typed input)."""
    text = go.Scatter(
        x=[0.5],
        y=[0.5],
        mode="text",
        text=[message],
        textfont=dict(size=14, color=PALETTE[5]),
        hoverinfo="skip",
    )
    fig = go.Figure(text)
    fig.update_xaxes(visible=False, range=[0, 1])
    fig.update_yaxes(visible=False, range=[0, 1])
    return _layout(fig, N_("cannot decode: {message}").format(message=message), height=440)


def training_loss_figure(losses: ArrayLike, title: str | None = None) -> go.Figure:
    """The training loss after every step ``(steps,)``, on a log scale (chapter 7)."""
    loss = np.asarray(losses, dtype=float)
    if loss.ndim != 1 or not len(loss):
        raise ValueError(f"losses must have shape (steps,); got {loss.shape}")
    fig = go.Figure(
        go.Scatter(
            x=list(range(1, len(loss) + 1)),
            y=_rounded(loss),
            mode="lines",
            line=dict(color=PALETTE[0]),
            hovertemplate=_("step %{x}<br>loss %{y:.4f}<extra></extra>"),
        )
    )
    fig.update_xaxes(title=_("training step"))
    fig.update_yaxes(title=_("cross-entropy (log scale)"), type="log")
    return _layout(fig, title, height=320)
