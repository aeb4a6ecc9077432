"""Figures of chapter 11 (efficient attention): memory against T; the tiled pass step by step."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .. import efficient
from .. import numpy_ref as ref
from ..i18n import N_, _
from .core import _PANEL_TITLE, PALETTE, _layout, _rounded, _shown, curve
from .multi_head import Table

__all__ = [
    "tiling_states",
    "tiling_traces",
    "tiling_figure",
    "memory_figure",
    "kv_cache_view",
]

#: The three states of a score in the tiled pass, as drawn (0, 1, 2).
TILE_STATES = (N_("not computed yet"), N_("computed, then dropped"), N_("held now"))
_STATE_SCALE = [
    [0.0, "#F2F2F2"],
    [0.333, "#F2F2F2"],
    [0.333, PALETTE[4]],
    [0.667, PALETTE[4]],
    [0.667, PALETTE[1]],
    [1.0, PALETTE[1]],
]


def tiling_states(
    seq_len: int = 16, block_size: int = 4, d: int = 4, seed: int = 0
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Run the tiled pass on random ``(seq_len, d)`` Q, K, V; record every step (chapter 11).

    Returns:
        ``(grids, gaps)``, one entry per tile: ``grids[s]`` ``(seq_len, seq_len)`` int, the state
        of each score after step ``s`` (0 not computed yet, 1 computed then dropped, 2 held
        now); ``gaps[s]`` ``(seq_len,)``, each query's largest distance between its running
        output ``acc / total`` and the final output (NaN before its first tile).
    """
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((seq_len, d)) for _ in range(3))
    final, _ = ref.scaled_dot_product_attention(Q, K, V)  # (seq_len, d)
    grid = np.zeros((seq_len, seq_len), dtype=np.int8)
    gap = np.full(seq_len, np.nan)
    grids, gaps = [], []
    for step in efficient.flash_attention_steps(Q, K, V, block_size=block_size):
        (i0, i1), (j0, j1) = step.rows, step.cols
        grid[grid == 2] = 1  # the previous tile is dropped
        grid[i0:i1, j0:j1] = 2
        running = step.acc / step.total  # (rows, d): the output so far
        gap[i0:i1] = np.abs(running - final[i0:i1]).max(axis=-1)
        grids.append(grid.copy())
        gaps.append(gap.copy())
    return grids, gaps


def tiling_traces(grid: ArrayLike, gap: ArrayLike) -> tuple[go.Heatmap, go.Bar]:
    """The score grid ``(T, T)`` (left) and each query's distance from its output ``(T,)``."""
    g = np.asarray(grid)
    labels = list(range(g.shape[0]))
    left = go.Heatmap(
        z=g.tolist(),
        x=labels,
        y=labels,
        zmin=0,
        zmax=2,
        colorscale=_STATE_SCALE,
        xgap=1,
        ygap=1,
        showscale=False,  # the states are named in the legend below the panels (see _two_panels)
        hovertemplate=_("query %{y}, key %{x}<br>state %{z} (0 not yet, 1 dropped, 2 held)"
                        "<extra></extra>"),
    )
    gaps = _rounded(np.nan_to_num(np.asarray(gap, dtype=float), nan=-1.0))  # -1: not started
    right = go.Bar(
        x=labels,
        y=[None if v < 0 else v for v in gaps],
        marker_color=PALETTE[0],
        xaxis="x2",
        yaxis="y2",
        showlegend=False,
        hovertemplate=_("query %{x}<br>max |running − final| %{y:.4f}<extra></extra>"),
    )
    return left, right


def _state_keys() -> list[go.Scatter]:
    """One legend entry per tile state (a coloured square, no data): a colour bar between the
    panels would cover the right panel's axis."""
    colours = ["#D0D0D0", PALETTE[4], PALETTE[1]]  # "not yet" darker than its fill, to be seen
    return [
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=_(name),
            marker=dict(symbol="square", size=12, color=colour),
            hoverinfo="skip",
        )
        for name, colour in zip(TILE_STATES, colours, strict=True)
    ]


def _two_panels(fig: go.Figure, seq_len: int, gap_max: float) -> go.Figure:
    fig.add_traces(_state_keys())
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.4], title=_("key"), dtick=max(1, seq_len // 8)),
        yaxis=dict(autorange="reversed", title=_("query"), dtick=max(1, seq_len // 8)),
        xaxis2=dict(domain=[0.6, 1.0], title=_("query"), anchor="y2", dtick=max(1, seq_len // 8)),
        yaxis2=dict(range=[0, gap_max * 1.05 + 1e-9], anchor="x2",
                    title=_("distance from output")),
        showlegend=True,
        legend=dict(orientation="h", x=0, xanchor="left", y=-0.2, yanchor="top"),
        annotations=[
            dict(text=_("scores of<br>one head"), x=0.2, y=1.0, **_PANEL_TITLE),
            dict(text=_("running output<br>vs final"), x=0.8, y=1.0, **_PANEL_TITLE),
        ],
    )
    return fig


def tiling_figure(
    seq_len: int = 16, block_size: int = 4, step: int = 1, title: str | None = None
) -> go.Figure:
    """One step (1-based) of the tiled pass: what it holds, and how close each output is."""
    grids, gaps = tiling_states(seq_len, block_size)
    s = min(max(int(step), 1), len(grids)) - 1
    gap_max = float(np.nanmax(np.stack(gaps)))
    fig = go.Figure(list(tiling_traces(grids[s], gaps[s])))
    fig = _two_panels(_layout(fig, title, height=480), seq_len, gap_max)
    # room for the two-line panel titles under the title, and for the legend, which wraps
    return fig.update_layout(margin=dict(t=100 if title else 60, b=130))


def memory_figure(
    seq_lens: Sequence[int],
    peaks: dict[str, Sequence[float]],
    title: str | None = None,
) -> go.Figure:
    """Peak memory (MB) against the sequence length, one line per method, log–log (chapter 11).

    ``seq_lens`` ``(n,)``; ``peaks`` maps a method's name to its peak megabytes ``(n,)``.
    """
    fig = go.Figure(
        [
            curve(
                seq_lens,
                mb,
                _shown(name),  # a chapter's method: translated when the catalogue has it
                PALETTE[k],
                _("{name}<br>T %{{x}}<br>%{{y:.3f}} MB<extra></extra>").format(name=_shown(name)),
            )
            for k, (name, mb) in enumerate(peaks.items())
        ]
    )
    fig.update_xaxes(type="log", title=_("sequence length T"))
    fig.update_yaxes(type="log", title=_("peak memory (MB)"))
    fig.update_layout(legend=dict(orientation="h", y=1.1, x=0))
    return _layout(fig, title, height=380)


def kv_cache_view(rows: Sequence[dict]) -> Table:
    """The rows of :func:`course_attention.grouped_query.kv_cache_table` as a table (chapter 11).

    Bytes with thousands separators, GiB to two decimals, the saving as ``8×``.
    """
    if not rows:
        raise ValueError("kv_cache_view needs at least one row")

    def cell(key: str, value: object) -> str:
        if key.startswith("GiB"):
            return f"{value:.2f}"
        if key == "saving":
            return f"{value:.0f}×"
        return f"{value:,}" if isinstance(value, int) else str(value)

    header = list(rows[0])
    return Table(header, [[cell(k, r[k]) for k in header] for r in rows])
