"""Figures of chapter 8 (a GPT you train yourself).

Introduced in chapter 8: the training loss against the unigram and bigram baselines, the
next-character distribution with a sample of text at one temperature, and the work a KV cache
saves.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from ..i18n import N_, _
from .core import PALETTE, _layout, _rounded, curve

__all__ = [
    "CROPPED",
    "char_label",
    "sample_html",
    "title_lines",
    "loss_baselines_figure",
    "next_char_traces",
    "next_char_figure",
    "message_figure",
    "cache_work_figure",
]

_SHOWN_LINES = 6  # lines of sampled text a figure shows
_WRAP = 34  # characters per drawn line: 12 px monospace fits a 375 px wide phone screen


def char_label(ch: str) -> str:
    """A visible label for one character: ``"⏎"`` for a newline, ``"␣"`` for a space."""
    return {"\n": "⏎", " ": "␣"}.get(ch, ch)


def _plotly_text(text: str) -> str:
    """``text`` for a plotly label: ``&``, ``<`` and ``>`` escaped (plotly decodes those three),
    quotes kept as they are (plotly does not decode ``&quot;`` and would draw it), spaces
    non-breaking so indentation survives."""
    return html.escape(text, quote=False).replace(" ", "\u00a0")


#: The first drawn line when the model read only the end of a long prompt (``read`` below).
CROPPED = N_("the model read only the last {n} characters (bold)")
_UNREAD = "#8a8a8a"  # the prompt characters the model did not read: grey, not bold


def sample_html(
    prompt: str, sample: str, max_lines: int = _SHOWN_LINES, width: int = _WRAP,
    read: int | None = None,
) -> str:
    """Prompt (bold) and sample as plotly text: the last ``max_lines`` drawn lines.

    Each line of text longer than ``width`` characters is cut into lines of ``width`` (plotly
    does not wrap text), so the block fits a phone screen; ``&``, ``<``, ``>`` are escaped,
    quotes are not (plotly draws ``&quot;`` literally), spaces are kept. ``read``: how many of
    the prompt's characters the model read (its last ones: a prompt longer than the context is
    cropped, chapter 8); when that is fewer than the prompt holds, only those are bold, the
    others grey, and the first drawn line says so (``CROPPED``).
    """
    if width < 1 or max_lines < 1:
        raise ValueError(f"need width ≥ 1 and max_lines ≥ 1; got {width}, {max_lines}")
    if read is not None and read < 1:
        raise ValueError(f"read must be ≥ 1 characters (or None); got {read}")
    full = prompt + sample
    unread = max(len(prompt) - read, 0) if read is not None else 0
    rows: list[tuple[int, int]] = []  # (start, end) of every drawn line in `full`
    start = 0
    for line in full.split("\n"):
        for a in range(0, max(len(line), 1), width):
            rows.append((start + a, start + min(a + width, len(line))))
        start += len(line) + 1
    drawn = []
    if unread:  # one line of the block says what the model read
        drawn.append(f'<i>{_plotly_text(_(CROPPED).format(n=read))}</i>')
    for a, b in rows[-(max_lines - len(drawn)) or len(rows):]:
        cut = [a, min(max(unread, a), b), min(max(len(prompt), a), b), b]  # grey, bold, plain
        parts = [full[cut[k]:cut[k + 1]] for k in range(3)]
        grey = f'<span style="color:{_UNREAD}">{_plotly_text(parts[0])}</span>' if parts[0] else ""
        bold = f"<b>{_plotly_text(parts[1])}</b>" if parts[1] else ""
        drawn.append(grey + bold + _plotly_text(parts[2]))
    return "<br>".join(drawn)


def title_lines(title: str | None) -> str | None:
    """A long title broken after its first ``": "`` (plotly does not wrap titles, and a phone
    screen holds about 35 characters of one)."""
    if title is None or len(title) <= 40 or ": " not in title:
        return title
    return title.replace(": ", ":<br>", 1)


def loss_baselines_figure(
    losses: ArrayLike, baselines: dict[str, float], title: str | None = None
) -> go.Figure:
    """Training loss per step ``(steps,)`` with horizontal lines at ``baselines`` (nats)."""
    loss = np.asarray(losses, dtype=float)
    if loss.ndim != 1 or not len(loss):
        raise ValueError(f"losses must have shape (steps,); got {loss.shape}")
    steps = np.arange(1, len(loss) + 1)
    fig = go.Figure(
        curve(steps, loss, _("training loss (one batch)"), PALETTE[0],
              _("step %{x}<br>%{y:.3f} nats"))
    )
    fig.data[0].mode = "lines"
    for i, (name, value) in enumerate(baselines.items()):
        fig.add_trace(
            go.Scatter(
                x=[1, len(loss)],
                y=[round(value, 4)] * 2,
                mode="lines",
                name=f"{name}: {value:.2f}",
                line=dict(color=PALETTE[(i + 1) % len(PALETTE)], dash="dash"),
                hovertemplate=_("{name}<br>%{{y:.3f}} nats<extra></extra>").format(name=name),
            )
        )
    fig.update_xaxes(title=_("training step"))
    fig.update_yaxes(title=_("cross-entropy (nats per character)"))
    return _layout(fig, title, height=360)


def _check_probs(probs: ArrayLike, shown: Sequence[int], vocab: str) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.shape != (len(vocab),):
        raise ValueError(f"probs must have shape (vocab={len(vocab)},); got {p.shape}")
    if not len(shown) or min(shown) < 0 or max(shown) >= len(vocab):
        raise ValueError(f"shown ids must be in 0 … {len(vocab) - 1}; got {list(shown)}")
    return p


def next_char_traces(
    probs: ArrayLike, shown: Sequence[int], vocab: str, prompt: str, sample: str,
    read: int | None = None,
) -> tuple[go.Bar, go.Scatter]:
    """Bars of P(next character) for the ``shown`` ids plus one bar for all the others, and the
    prompt with a sampled continuation as text.

    Introduced in chapter 8. ``probs`` ``(vocab,)``; ``vocab`` is the string of characters;
    ``read``: the prompt characters the model read (:func:`sample_html`).
    """
    p = _check_probs(probs, shown, vocab)
    values = [*p[list(shown)], max(0.0, 1.0 - p[list(shown)].sum())]
    labels = [char_label(vocab[i]) for i in shown] + [_("all others")]
    bars = go.Bar(
        x=labels,
        y=_rounded(values),
        marker_color=[PALETTE[0]] * len(shown) + [PALETTE[1]],
        text=[f"{v:.2f}" for v in values],
        textposition="outside",
        hovertemplate=_("next %{x}<br>probability %{y:.3f}<extra></extra>"),
    )
    text = go.Scatter(
        x=[0.0],
        y=[1.0],
        mode="text",
        text=[sample_html(prompt, sample, read=read)],
        textposition="bottom right",
        textfont=dict(family="monospace", size=12),
        cliponaxis=False,
        xaxis="x2",
        yaxis="y2",
        hoverinfo="skip",
        showlegend=False,
    )
    return bars, text


def _next_char_layout(fig: go.Figure, title: str | None, height: int) -> go.Figure:
    title = title_lines(title)  # English: _layout translates it
    fig.update_layout(
        xaxis=dict(domain=[0.0, 1.0], title=_("next character"), type="category"),
        yaxis=dict(domain=[0.56, 1.0], range=[0, 1.15], title=_("probability")),
        xaxis2=dict(domain=[0.0, 1.0], range=[0, 1], visible=False, anchor="y2"),
        # below the bars' labels, which a phone screen turns upright
        yaxis2=dict(domain=[0.0, 0.28], range=[0, 1], visible=False, anchor="x2"),
        showlegend=False,
    )
    fig = _layout(fig, title, height=height)
    if title is not None and "<br>" in title:
        fig.update_layout(margin=dict(t=80))  # room for the title's two lines
    return fig


def next_char_figure(
    probs: ArrayLike,
    shown: Sequence[int],
    vocab: str,
    prompt: str,
    sample: str,
    title: str | None = None,
    read: int | None = None,
) -> go.Figure:
    """The next-character distribution and a sample at one temperature (the live explorer);
    ``read``: the prompt characters the model read (:func:`sample_html`)."""
    fig = go.Figure(list(next_char_traces(probs, shown, vocab, prompt, sample, read)))
    return _next_char_layout(fig, title, height=520)


def message_figure(message: str, title: str = N_("cannot run this prompt")) -> go.Figure:
    """An empty figure that shows ``message`` (chapter 8: a prompt the model cannot read)."""
    text = go.Scatter(
        x=[0.5],
        y=[0.5],
        mode="text",
        text=[html.escape(message, quote=False)],  # plotly draws &quot; as it is
        textfont=dict(size=14, color=PALETTE[5]),
        hoverinfo="skip",
    )
    fig = go.Figure(text)
    fig.update_xaxes(visible=False, range=[0, 1])
    fig.update_yaxes(visible=False, range=[0, 1])
    return _layout(fig, title, height=520)


def cache_work_figure(
    n_new: ArrayLike, uncached: ArrayLike, cached: ArrayLike, title: str | None = None
) -> go.Figure:
    """Positions run through the model to generate ``n_new`` tokens, with and without a cache."""
    x = np.asarray(n_new, dtype=float)
    fig = go.Figure(
        [
            curve(x, uncached, _("no cache"), PALETTE[5], _("%{x} new tokens<br>%{y} positions")),
            curve(x, cached, _("KV cache"), PALETTE[2], _("%{x} new tokens<br>%{y} positions")),
        ]
    )
    fig.update_xaxes(title=_("new tokens generated"))
    fig.update_yaxes(title=_("positions computed"))
    return _layout(fig, title, height=340)
