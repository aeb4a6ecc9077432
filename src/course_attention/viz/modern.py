"""Figures of chapter 12 (a modern attention layer): stretching rotary positions past training."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..i18n import _
from .core import PALETTE, _layout, _rounded

__all__ = [
    "ANGLE_CLASSES",
    "long_context_numbers",
    "long_context_traces",
    "long_context_figure",
    "LONG_CONTEXT_PHONE",
]

#: A pair's angle at a position, against what training showed it (the figure's three bar colours):
#: within the largest angle it reached in training; past it; or the pair made a full turn in
#: training, so that every angle was seen.
ANGLE_CLASSES = ("inside", "past", "full turn")
#: How far (relative) past the largest trained angle an angle still counts as seen (the edge
#: itself was seen, and the page's float64 may differ from the package's in the last bit).
EDGE = 1e-9
#: Random vectors averaged in the score curves (as chapter 10's RoPE explorer).
SAMPLES = 500


def long_context_numbers(
    position: int,
    rule: str,
    factor: float,
    d: int = 8,
    theta: float = 10000.0,
    context: int = 17,
    max_position: int = 67,
) -> dict[str, np.ndarray | float]:
    """The numbers of chapter 12's long-context figure, in float64 (the page's twin).

    Introduced in chapter 12. A rotary model trained on ``context`` positions (``0 … context −
    1``) reads position ``position``, its frequencies stretched by ``rule``
    (:func:`course_attention.rope_scaling.scaled_frequencies`, ``"dynamic"`` at the current
    length ``position + 1``). Returns:

    - ``frequencies`` ``(d/2,)`` and ``attention_factor``: the rule's;
    - ``ratio`` ``(d/2,)``: each pair's angle ``position · θ'_i`` over the largest angle it
      reached in training, ``(context − 1) · θ_i`` (plain frequencies: what the model saw);
    - ``angle_class`` ``(d/2,)``: an index into ``ANGLE_CLASSES`` (``"full turn"`` where
      ``(context − 1) · θ_i ≥ 2π``: training showed that pair every angle);
    - ``offsets`` ``(max_position + 1,)``, ``plain`` and ``scaled`` of the same shape: the mean
      over ``SAMPLES`` standard-normal vectors ``q`` of the score ``R(o) q · q`` (chapter 10's
      curve) with the plain and with the rule's frequencies, the latter times
      the square of ``attention_factor`` (YaRN multiplies the rotated queries and keys by it).
    """
    import torch

    from .. import positions, rope_scaling

    if isinstance(context, bool) or not isinstance(context, int) or context < 2:
        raise ValueError(f"context (the trained length) must be an integer ≥ 2; got {context!r}")
    if not isinstance(max_position, int) or max_position < context - 1:
        raise ValueError(f"max_position={max_position!r} must reach the trained positions "
                         f"0 … {context - 1}")
    if not 0 <= position <= max_position:
        raise ValueError(f"position={position} must lie in 0 … max_position={max_position}")
    f64 = torch.float64
    plain = rope_scaling.inverse_frequencies(d, theta, f64)  # (d/2,)
    scaled, scale = rope_scaling.scaled_frequencies(rule, d, theta, factor, context,
                                                    seq_len=position + 1, dtype=f64)
    edge = (context - 1) * plain  # (d/2,): the largest angle each pair reached in training
    ratio = position * scaled / edge  # (d/2,)
    angle_class = torch.where(edge >= 2 * math.pi, 2, (ratio > 1 + EDGE).long())
    offsets = np.arange(max_position + 1)
    q = torch.as_tensor(np.random.default_rng(0).standard_normal((SAMPLES, d)))  # (samples, d)
    turned = positions.rotary(q[:, None, :].expand(SAMPLES, len(offsets), d),
                              torch.as_tensor(offsets), frequencies=scaled)  # (samples, L, d)
    score = (turned * q[:, None, :]).sum(-1) * scale**2  # (samples, L): R(o) q · q, times a²
    return {
        "frequencies": scaled.numpy(),
        "attention_factor": float(scale),
        "ratio": ratio.numpy(),
        "angle_class": angle_class.numpy(),
        "offsets": offsets,
        "plain": positions.rope_score_by_offset(d, offsets, SAMPLES, theta).mean(axis=0),
        "scaled": score.mean(dim=0).numpy(),
    }


def long_context_traces(
    position: int,
    rule: str,
    factor: float,
    d: int = 8,
    theta: float = 10000.0,
    context: int = 17,
    max_position: int = 67,
) -> list[go.Bar | go.Scatter]:
    """Seven traces for one position and rule (chapter 12), from :func:`long_context_numbers`.

    Top axes, a bar per pair ``i`` (fast pairs on the left), its ``ratio`` in one of three
    traces by ``angle_class`` (``None`` for the pairs of another class, so every trace and its
    legend entry stay in every state). Bottom axes (``x2``/``y2``): the offsets never trained on
    (shaded), the plain and the rule's mean score against the offset, and a marker at
    ``position`` on the rule's curve.
    """
    n = long_context_numbers(position, rule, factor, d, theta, context, max_position)
    ratio, cls = n["ratio"], n["angle_class"]
    pairs = list(range(d // 2))
    names = (_("inside what training showed"), _("past what training showed"),
             _("a full turn in training"))
    colours = (PALETTE[0], PALETTE[5], "#BBBBBB")
    bars = [
        go.Bar(
            x=pairs,
            y=[round(float(r), 4) if c == k else None for r, c in zip(ratio, cls, strict=True)],
            name=names[k],
            marker_color=colours[k],
            hovertemplate=_("pair %{x}<br>%{y:.2f} × its largest angle in training"
                            "<extra></extra>"),
        )
        for k in range(len(ANGLE_CLASSES))
    ]
    lo, hi = _score_range(d)
    edge = context - 0.5
    offsets = n["offsets"].tolist()
    return [
        *bars,
        go.Scatter(
            x=[edge, max_position + 1, max_position + 1, edge, edge], y=[lo, lo, hi, hi, lo],
            fill="toself", fillcolor="rgba(160, 160, 160, 0.25)", mode="lines",
            line=dict(width=0), name=_("never trained on"), hoverinfo="skip",
            xaxis="x2", yaxis="y2",
        ),
        go.Scatter(
            x=offsets, y=_rounded(n["plain"]), mode="lines", name=_("plain RoPE"),
            line=dict(color="#777777", dash="dash"), xaxis="x2", yaxis="y2",
            hovertemplate=_("offset %{x}<br>plain: mean score %{y:.2f}<extra></extra>"),
        ),
        go.Scatter(
            x=offsets, y=_rounded(n["scaled"]), mode="lines", name=_("with this rule"),
            line=dict(color=PALETTE[2], width=3), xaxis="x2", yaxis="y2",
            hovertemplate=_("offset %{x}<br>mean score %{y:.2f}<extra></extra>"),
        ),
        go.Scatter(
            x=[position], y=_rounded([n["scaled"][position]]), mode="markers",
            name=_("this position"), marker=dict(size=14, color=PALETTE[7], symbol="diamond"),
            xaxis="x2", yaxis="y2",
            hovertemplate=_("offset %{x}<br>mean score %{y:.2f}<extra></extra>"),
        ),
    ]


def _score_range(d: int, max_factor: float = 8.0) -> tuple[float, float]:
    """The score axis: room for YaRN's largest squared ``attention_factor`` on a score of at most
    ``d`` (the mean of ``|q|²``), fixed so that the curves can be compared state to state."""
    return -0.6 * d, 1.3 * d * (0.1 * math.log(max_factor) + 1) ** 2


#: The figure on a phone (the explorer's ``spec["phone"]``, applied under 480 px): the legend
#: under the figure wraps to seven rows there.
LONG_CONTEXT_PHONE: dict = {"height": 780, "margin": {"b": 250}}


def long_context_figure(
    position: int,
    rule: str,
    factor: float,
    d: int = 8,
    theta: float = 10000.0,
    context: int = 17,
    max_position: int = 67,
    title: str | None = None,
) -> go.Figure:
    """:func:`long_context_traces` as one figure (chapter 12's live explorer).

    Top: how far each pair has turned at ``position`` against the most training showed it (1:
    the edge, dashed). Bottom: the mean score against the offset, plain and with the rule.
    """
    fig = go.Figure(long_context_traces(position, rule, factor, d, theta, context, max_position))
    fig = _layout(fig, title, height=640)
    top = 1.05 * max_position / (context - 1)  # no rule turns a pair further than plain RoPE
    fig.update_layout(
        barmode="overlay",
        # the legend at the figure's foot (the container's, not the plot's: a phone turned
        # back to wide left it over the plot when it hung from the axes)
        legend=dict(orientation="h", x=0, y=0, yref="container", yanchor="bottom"),
        xaxis=dict(domain=[0, 1], anchor="y", title=_("pair i (left: fast, right: slow)"),
                   tickvals=list(range(d // 2)), range=[-0.5, d // 2 - 0.5]),
        yaxis=dict(domain=[0.64, 1], range=[0, top], title=_("angle ÷ most in training")),
        xaxis2=dict(domain=[0, 1], anchor="y2", title=_("offset m − n"),
                    range=[-1, max_position + 1]),
        yaxis2=dict(domain=[0, 0.42], range=list(_score_range(d)), title=_("mean score")),
        margin=dict(b=115),
        shapes=[dict(type="line", xref="x", yref="y", x0=-0.5, x1=d // 2 - 0.5, y0=1, y1=1,
                     line=dict(color="#333333", width=1.5, dash="dash"))],
    )
    return fig
