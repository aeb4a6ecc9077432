"""Plotly figures for the course, and displaying them in the book, JupyterLab and Colab.

One colour scheme everywhere: Viridis for weights (colour-blind safe, readable in greyscale) and
the Okabe–Ito palette for categories.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio  # plotly's renderers: imported with the chapter, not at its first figure
from numpy.typing import ArrayLike

__all__ = [
    "PALETTE",
    "WEIGHT_SCALE",
    "unique_labels",
    "attention_heatmap",
    "heatmap_trace",
    "weight_bars",
    "slider_figure",
    "show",
    "use_colab_renderer",
    "colab_html",
    "LOOKUP_KEYS",
    "word_plane",
    "soft_lookup_traces",
    "soft_lookup_figure",
    "query_direction",
    "query_direction_slider",
    "temperature_slider",
    "variance_figure",
    "saturation_figure",
    "jacobian_norm_figure",
    "scaling_slider",
    "scaling_bars_figure",
]

#: Okabe–Ito colours, distinguishable with every common colour-vision deficiency.
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
#: Sequential scale for attention weights.
WEIGHT_SCALE = "Viridis"
_DIGITS = 4  # frames are stored rounded: half the page size, no visible change


def _layout(fig: go.Figure, title: str | None, height: int = 380, **kwargs: Any) -> go.Figure:
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=height,
        margin=dict(l=60, r=20, t=60 if title else 30, b=50),
        font=dict(size=13),
        **kwargs,
    )
    return fig


def _rounded(x: ArrayLike) -> list:
    return np.round(np.asarray(x, dtype=float), _DIGITS).tolist()


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """Make token labels unique by prefixing positions when a token repeats.

    Plotly merges equal category labels (a 6×6 map with two "the" draws as 5×5), so
    ``["the", "cat", "the"]`` becomes ``["0:the", "1:cat", "2:the"]``.
    """
    tokens = [str(t) for t in tokens]
    if len(set(tokens)) == len(tokens):
        return tokens
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def heatmap_trace(
    weights: ArrayLike,
    queries: Sequence[str],
    keys: Sequence[str],
    zmax: float = 1.0,
    show_values: bool = True,
) -> go.Heatmap:
    """One heatmap trace of ``weights`` ``(seq_q, seq_k)``: query rows, key columns."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape != (len(queries), len(keys)):
        raise ValueError(
            f"weights of shape {w.shape} need {w.shape[0] if w.ndim == 2 else '?'} query labels "
            f"and {w.shape[-1]} key labels; got {len(queries)} and {len(keys)}"
        )
    return go.Heatmap(
        z=_rounded(w),
        x=unique_labels(keys),
        y=unique_labels(queries),
        zmin=0.0,
        zmax=zmax,
        colorscale=WEIGHT_SCALE,
        colorbar=dict(title="weight"),
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>",
    )


def attention_heatmap(
    weights: ArrayLike,
    queries: Sequence[str],
    keys: Sequence[str] | None = None,
    title: str | None = None,
    show_values: bool | None = None,
) -> go.Figure:
    """Heatmap of attention weights ``(seq_q, seq_k)``; hover shows query, key and weight.

    Introduced in chapter 1. Rows are queries (top to bottom in reading order), columns keys.
    """
    keys = queries if keys is None else keys
    if show_values is None:
        show_values = len(keys) <= 12
    fig = go.Figure(heatmap_trace(weights, queries, keys, show_values=show_values))
    fig.update_yaxes(autorange="reversed", title="query")
    fig.update_xaxes(title="key", side="bottom")
    return _layout(fig, title, height=max(300, 60 + 40 * len(queries)))


def weight_bars(weights: ArrayLike, keys: Sequence[str], title: str | None = None) -> go.Figure:
    """Bar chart of one query's weights ``(seq_k,)`` over the keys (chapter 1)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(keys),):
        raise ValueError(f"weights of shape {w.shape} need {w.shape} key labels; got {len(keys)}")
    fig = go.Figure(_bars(w, keys))
    fig.update_yaxes(range=[0, 1], title="weight")
    return _layout(fig, title, height=320)


def _bars(w: np.ndarray, keys: Sequence[str]) -> go.Bar:
    return go.Bar(
        x=unique_labels(keys),
        y=_rounded(w),
        marker_color=PALETTE[0],
        text=[f"{v:.2f}" for v in w],
        textposition="outside",
        hovertemplate="key %{x}<br>weight %{y:.3f}<extra></extra>",
    )


def slider_figure(
    make_traces: Callable[[Any], Sequence[Any]],
    values: Sequence[Any],
    label: str,
    active: int = 0,
    format_value: Callable[[Any], str] = str,
    title: str | None = None,
    height: int = 420,
) -> go.Figure:
    """A figure with a slider over precomputed frames: it works on the static website.

    Introduced in chapter 1. ``make_traces(value)`` returns the traces for one slider value
    (the same number and kinds of traces for every value); each value becomes one frame.
    """
    if not values:
        raise ValueError("slider_figure needs at least one value")
    if not 0 <= active < len(values):
        raise ValueError(f"active={active} is not an index into {len(values)} values")
    names = [format_value(v) for v in values]
    frames = [
        go.Frame(data=list(make_traces(v)), name=n) for v, n in zip(values, names, strict=True)
    ]
    steps = [
        dict(
            method="animate",
            label=n,
            args=[
                [n],
                dict(
                    mode="immediate",
                    frame=dict(duration=0, redraw=True),
                    transition=dict(duration=0),
                ),
            ],
        )
        for n in names
    ]
    fig = go.Figure(data=frames[active].data, frames=frames)
    fig.update_layout(
        sliders=[
            dict(
                active=active,
                steps=steps,
                currentvalue=dict(prefix=f"{label} = "),
                pad=dict(t=40),
            )
        ]
    )
    return _layout(fig, title, height=height)


def show(fig: go.Figure) -> None:
    """Display a figure with the active renderer (inside live widgets); no-op outside IPython."""
    from IPython import get_ipython
    from IPython.display import display

    if get_ipython() is not None:
        display(fig)


_COLAB_TEMPLATE = """<div id="{div_id}" style="width:100%;"></div>
<script>
(function() {{
  var fig = {fig_json};
  function draw() {{
    fig.config = {{responsive: true, displaylogo: false}};
    Plotly.newPlot("{div_id}", fig);
  }}
  if (window.Plotly) {{ draw(); return; }}
  var s = document.createElement("script");
  s.src = "https://cdn.plot.ly/plotly-{version}.min.js";
  s.onload = draw;
  document.head.appendChild(s);
}})();
</script>"""


def colab_html(fig: go.Figure | dict) -> str:
    """HTML that loads plotly.js if needed, then draws ``fig`` (the Colab renderer's output)."""
    import uuid

    from plotly.offline import get_plotlyjs_version

    return _COLAB_TEMPLATE.format(
        div_id="ca-" + uuid.uuid4().hex[:12],
        fig_json=pio.to_json(fig, validate=False),
        version=get_plotlyjs_version(),
    )


def use_colab_renderer() -> None:
    """Make plotly draw reliably in Colab, including inside ``interactive_output``.

    Colab renders each output in its own frame; plotly's own ``colab`` renderer can run
    ``Plotly.newPlot`` there before plotly.js has loaded ("Plotly is not defined"). This renderer
    waits for the library to load, then draws. :func:`course_attention.setup` calls it in Colab.
    """
    from plotly.io.base_renderers import MimetypeRenderer

    class ColabWaitRenderer(MimetypeRenderer):
        def to_mimebundle(self, fig_dict: dict) -> dict:
            return {"text/html": colab_html(fig_dict)}

    pio.renderers["course_colab"] = ColabWaitRenderer()
    pio.renderers.default = "course_colab"


# --- chapter 1: soft look-up ----------------------------------------------------------------

#: Keys of the chapter-1 soft look-up figures (the words of :data:`toy.FRUIT_DICT`).
LOOKUP_KEYS: tuple[str, ...] = ("apple", "banana", "chair")


def _arrow_trace(
    vectors: np.ndarray, words: Sequence[str], color: str, name: str, width: float = 2.0
) -> go.Scatter:
    """Arrows from the origin to each row of ``vectors`` ``(n, 2)``, labelled at the tip."""
    x: list[float | None] = []
    y: list[float | None] = []
    text: list[str] = []
    for (vx, vy), word in zip(vectors.tolist(), words, strict=True):
        x += [0.0, round(vx, _DIGITS), None]
        y += [0.0, round(vy, _DIGITS), None]
        text += ["", word, ""]
    return go.Scatter(
        x=x,
        y=y,
        text=text,
        mode="lines+markers+text",
        textposition="top center",
        line=dict(color=color, width=width),
        marker=dict(size=[0, 9, 0] * len(words), color=color),
        name=name,
        hoverinfo="skip",
    )


def word_plane(
    words: Sequence[str] | None = None,
    query: str | None = None,
    title: str | None = None,
) -> go.Figure:
    """The 2-D toy word vectors of :data:`toy.WORD_VECTORS` drawn as arrows on the plane.

    Introduced in chapter 1. ``words`` defaults to the whole vocabulary; ``query`` (one of the
    words) is drawn in a second colour, and hovering a word shows its dot product with it.
    """
    from . import toy

    words = list(toy.WORD_VECTORS) if words is None else list(words)
    others = [w for w in words if w != query]
    fig = go.Figure(_arrow_trace(toy.word_matrix(others), others, PALETTE[0], "word"))
    if query is not None:
        q = toy.word_matrix([query])
        fig.add_trace(_arrow_trace(q, [query], PALETTE[5], "query", width=4.0))
        dots = toy.word_matrix(others) @ q[0]  # (n_words,)
        fig.data[0].hovertext = [s for d in dots.tolist() for s in ("", f"q·k = {d:.2f}", "")]
        fig.data[0].hoverinfo = "text"
    fig.update_xaxes(title=toy.WORD_FEATURES[0], range=[-1.0, 1.3], zeroline=True)
    fig.update_yaxes(title=toy.WORD_FEATURES[1], range=[-0.6, 1.3], zeroline=True, scaleanchor="x")
    return _layout(fig, title, height=420, showlegend=False)


def soft_lookup_traces(
    query: ArrayLike,
    temperature: float = 1.0,
    keys: Sequence[str] = LOOKUP_KEYS,
    query_label: str = "query",
) -> list[go.Scatter | go.Bar]:
    """The traces of one soft look-up: key and query arrows, weights, the looked-up value.

    Introduced in chapter 1. ``query`` is a 2-D vector ``(2,)``; the keys are words of
    :data:`toy.WORD_VECTORS` and :data:`toy.FRUIT_DICT`. The weights are
    ``softmax(K q / temperature)`` ``(n_keys,)`` and the value is ``weights @ values``.
    Lay them out with :func:`soft_lookup_figure` (or :func:`slider_figure` + its layout).
    """
    from . import numpy_ref, toy

    q = np.asarray(query, dtype=float)
    if q.shape != (2,):
        raise ValueError(f"query must be a 2-D vector of shape (2,); got shape {q.shape}")
    K = toy.word_matrix(list(keys))  # (n_keys, 2)
    values = np.array([toy.FRUIT_DICT[k] for k in keys], dtype=float)  # (n_keys,)
    weights = numpy_ref.softmax(K @ q, temperature=temperature)  # (n_keys,)
    looked_up = float(weights @ values)
    bars = _bars(weights, keys)
    bars.update(xaxis="x2", yaxis="y2")
    result = go.Bar(
        x=["soft look-up"],
        y=[round(looked_up, _DIGITS)],
        text=[f"{looked_up:.2f}"],
        textposition="outside",
        marker_color=PALETTE[2],
        xaxis="x3",
        yaxis="y3",
        hovertemplate="Σ weight × value = %{y:.3f}<extra></extra>",
    )
    return [
        _arrow_trace(K, list(keys), PALETTE[0], "keys"),
        _arrow_trace(q[None, :], [query_label], PALETTE[5], "query", width=4.0),
        bars,
        result,
    ]


def _soft_lookup_layout(fig: go.Figure, title: str | None, keys: Sequence[str]) -> go.Figure:
    from . import toy

    top = 1.25 * max(toy.FRUIT_DICT[k] for k in keys)
    fig.update_layout(
        xaxis=dict(domain=[0.0, 0.36], range=[-1.3, 1.3], title=toy.WORD_FEATURES[0]),
        yaxis=dict(range=[-1.3, 1.3], title=toy.WORD_FEATURES[1], scaleanchor="x"),
        xaxis2=dict(domain=[0.46, 0.82], anchor="y2"),
        yaxis2=dict(range=[0, 1.15], title="weight", anchor="x2"),
        xaxis3=dict(domain=[0.9, 1.0], anchor="y3"),
        yaxis3=dict(range=[0, top], title="value", anchor="x3", side="right"),
        showlegend=False,
    )
    return _layout(fig, title, height=430)


def soft_lookup_figure(
    query: ArrayLike,
    temperature: float = 1.0,
    keys: Sequence[str] = LOOKUP_KEYS,
    title: str | None = None,
) -> go.Figure:
    """One soft look-up in three panels: the plane, the weights, the looked-up value.

    Introduced in chapter 1. ``query`` ``(2,)``; see :func:`soft_lookup_traces`.
    """
    fig = go.Figure(soft_lookup_traces(query, temperature, keys))
    return _soft_lookup_layout(fig, title, keys)


def query_direction(angle_deg: float, length: float = 1.0) -> np.ndarray:
    """The 2-D query ``(2,)`` pointing ``angle_deg`` degrees from the first feature axis."""
    angle = np.deg2rad(angle_deg)
    return length * np.array([np.cos(angle), np.sin(angle)])


def query_direction_slider(
    angles: Sequence[float] = tuple(range(-30, 181, 15)),
    temperature: float = 0.3,
    keys: Sequence[str] = LOOKUP_KEYS,
    title: str | None = None,
) -> go.Figure:
    """Slider over the direction of a unit query: how the weights and the value follow it.

    Introduced in chapter 1. One frame per angle in degrees (``len(angles)`` frames).
    """
    values = list(angles)
    fig = slider_figure(
        lambda a: soft_lookup_traces(query_direction(a), temperature, keys),
        values,
        label="query angle",
        active=min(range(len(values)), key=lambda i: abs(values[i])) if values else 0,
        format_value=lambda a: f"{a:g}°",
        title=title,
    )
    return _soft_lookup_layout(fig, title, keys)


def temperature_slider(
    query: str = "fruit",
    temperatures: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 20.0),
    keys: Sequence[str] = LOOKUP_KEYS,
    title: str | None = None,
) -> go.Figure:
    """Slider over the softmax temperature for the query word ``query`` (chapter 1).

    One frame per temperature; each shows the weights ``(n_keys,)`` and the looked-up value.
    """
    from . import toy

    q = toy.word_matrix([query])[0]  # (2,)
    values = list(temperatures)
    fig = slider_figure(
        lambda t: soft_lookup_traces(q, t, keys, query_label=query),
        values,
        label="temperature",
        active=min(range(len(values)), key=lambda i: abs(values[i] - 1.0)) if values else 0,
        format_value=lambda t: f"{t:g}",
        title=title,
    )
    return _soft_lookup_layout(fig, title, keys)


# --- chapter 2: scaled dot-product ----------------------------------------------------------

_RUN_COLORS: tuple[str, ...] = (PALETTE[5], PALETTE[0], PALETTE[2], PALETTE[3])


def _dk_axis(fig: go.Figure, d_ks: Sequence[float]) -> None:
    """A logarithmic x axis with one tick per measured width ``d_k``."""
    ticks = [float(d) for d in d_ks]
    fig.update_xaxes(type="log", title="d_k", tickvals=ticks, ticktext=[f"{d:g}" for d in ticks])


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
    curves = {"q·k": unscaled, "q·k / √d_k": scaled}
    fig = go.Figure()
    for (name, y), color in zip(curves.items(), _RUN_COLORS, strict=False):
        y = np.asarray(y, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"{name}: {y.shape} values for {x.shape} widths d_k")
        fig.add_trace(
            go.Scatter(
                x=x.tolist(),
                y=_rounded(y),
                name=name,
                mode="lines+markers",
                line=dict(color=color),
                hovertemplate="d_k %{x}<br>variance %{y:.3f}<extra></extra>",
            )
        )
    for name, y in (("variance = d_k", x), ("variance = 1", np.ones_like(x))):
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
    fig.update_yaxes(type="log", title="variance of the score")
    return _layout(fig, title)


def saturation_figure(runs: Mapping[str, Any], title: str | None = None) -> go.Figure:
    """Largest weight and entropy of the softmax against ``d_k``, one curve per run.

    Introduced in chapter 2. ``runs`` maps a legend name to a
    :class:`course_attention.experiments.ScalingStats` (fields ``(n_widths,)``); a dashed line
    marks the entropy of uniform weights, ``log(seq_k)``.
    """
    from plotly.subplots import make_subplots

    items = _check_runs(runs)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("largest weight", "entropy (nats)"))
    for (name, stats), color in zip(items, _RUN_COLORS, strict=False):
        x = np.asarray(stats.d_k, dtype=float).tolist()
        for col, y in ((1, stats.max_weight), (2, stats.entropy)):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=_rounded(y),
                    name=name,
                    legendgroup=name,
                    showlegend=col == 1,
                    mode="lines+markers",
                    line=dict(color=color),
                    hovertemplate="d_k %{x}<br>%{y:.3f}<extra>" + name + "</extra>",
                ),
                row=1,
                col=col,
            )
    stats = items[0][1]
    uniform = float(np.log(stats.seq_k))
    fig.add_trace(
        go.Scatter(
            x=[float(stats.d_k[0]), float(stats.d_k[-1])],
            y=[round(uniform, _DIGITS)] * 2,
            name=f"uniform over {stats.seq_k} keys",
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
        fig.add_trace(
            go.Scatter(
                x=np.asarray(stats.d_k, dtype=float).tolist(),
                y=_rounded(stats.jacobian_norm),
                name=name,
                mode="lines+markers",
                line=dict(color=color),
                hovertemplate="d_k %{x}<br>‖J‖ %{y:.4f}<extra>" + name + "</extra>",
            )
        )
    _dk_axis(fig, stats.d_k.tolist())
    fig.update_yaxes(type="log", title="‖diag(p) − p pᵀ‖ (Frobenius)")
    return _layout(fig, title)


def _scaling_bars(weights: np.ndarray, keys: Sequence[str], name: str, color: str) -> go.Bar:
    return go.Bar(
        x=list(keys),
        y=_rounded(weights),
        name=name,
        marker_color=color,
        hovertemplate="key %{x}<br>weight %{y:.3f}<extra>" + name + "</extra>",
    )


def scaling_slider(
    d_ks: Sequence[int] | None = None,
    seq_k: int = 8,
    seed: int = 0,
    title: str | None = None,
) -> go.Figure:
    """Slider over ``d_k``: one query's weights over ``seq_k`` keys, unscaled beside scaled.

    Introduced in chapter 2. Every frame holds two bar traces ``(seq_k,)``: the weights of
    softmax(q·k) and of softmax(q·k / √d_k), computed by
    :func:`course_attention.experiments.weights_by_width` (the same query and keys throughout).
    """
    from . import experiments

    values = list(experiments.DK_VALUES if d_ks is None else d_ks)
    unscaled = experiments.weights_by_width(values, exponent=0.0, seq_k=seq_k, seed=seed)
    scaled = experiments.weights_by_width(values, exponent=0.5, seq_k=seq_k, seed=seed)
    keys = [f"k{j}" for j in range(seq_k)]
    index = {d: i for i, d in enumerate(values)}

    def traces(d: int) -> list[go.Bar]:
        i = index[d]
        return [
            _scaling_bars(unscaled[i], keys, "softmax(q·k)", _RUN_COLORS[0]),
            _scaling_bars(scaled[i], keys, "softmax(q·k / √d_k)", _RUN_COLORS[1]),
        ]

    fig = slider_figure(traces, values, label="d_k", format_value=str, title=title)
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=1.08, x=0))
    fig.update_yaxes(range=[0, 1.05], title="weight")
    fig.update_xaxes(title="key")
    return fig


def scaling_bars_figure(weights: ArrayLike, title: str | None = None) -> go.Figure:
    """Bar chart of one query's weights ``(seq_k,)`` over keys ``k0 … k{seq_k-1}`` (chapter 2)."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1:
        raise ValueError(f"weights must be 1-D (seq_k,); got shape {w.shape}")
    fig = weight_bars(w, [f"k{j}" for j in range(len(w))], title=title)
    fig.update_yaxes(range=[0, 1.1])
    return fig
