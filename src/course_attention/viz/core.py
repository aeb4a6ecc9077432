"""Core figure builders: heatmaps, bars, slider figures, one colour scheme, display.

One colour scheme everywhere: Viridis for weights (colour-blind safe, readable in greyscale) and
the Okabe–Ito palette for categories.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio  # plotly's renderers: imported with the chapter, not at its first figure
from numpy.typing import ArrayLike

from ..i18n import _, language
from ..i18n.outputs import _wrap  # one word wrap: the figures' and the translator's

__all__ = [
    "unique_labels",
    "heatmap_trace",
    "mask_trace",
    "curve",
    "MASK_SCALE",
    "attention_heatmap",
    "weight_bars",
    "slider_figure",
    "show",
    "colab_html",
    "use_colab_renderer",
    "wrap_title",
    "panel_title",
    "axis_title",
    "PALETTE",
    "WEIGHT_SCALE",
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


def _template() -> go.layout.Template:
    """plotly_white's layout without its per-trace-type defaults (8 KB less in every figure)."""
    global _TEMPLATE
    if _TEMPLATE is None:
        _TEMPLATE = go.layout.Template(layout=pio.templates["plotly_white"].layout)
    return _TEMPLATE


_TEMPLATE: go.layout.Template | None = None


#: A title's size (px) and the characters of one of its lines that fit a 375 px phone screen
#: (a 327 px figure); plotly does not wrap titles, so :func:`wrap_title` breaks longer ones. A
#: notebook cannot measure its figures, so this wrap is for the narrowest screen; the website
#: wraps every figure's titles again by the width each is drawn at
#: (``course_book/static/course_titles.js``, which joins the lines this wrap broke).
TITLE_SIZE = 16
TITLE_CHARS = 34


def wrap_title(title: str | None, width: int = TITLE_CHARS) -> str | None:
    """``title`` with ``<br>`` between words so that no line is longer than ``width`` characters.

    Each ``<br>``-separated line of plain text is wrapped on its own; a line with markup
    (``<sup>`` …) is left as it is (it is the explorers' words: the live pages compare them),
    and so is a line in Chinese (its breaks are the translation's own ``<br>``; the Chinese
    book re-joins the English lines this wrap broke and translates them as one,
    ``course_attention.i18n.outputs.Translator``).
    """
    if title is None:
        return None
    out: list[str] = []
    for line in re.split(r"<br\s*/?>", title):
        out.extend([line] if "<" in line or _wide(line) else _wrap(line, width))
    return "<br>".join(out)


def _wide(line: str) -> bool:
    """Whether ``line`` holds a wide (Chinese) character."""
    return any(unicodedata.east_asian_width(c) in "WF" for c in line)


#: Characters of one line of a panel's title and of an axis title that fit a 375 px phone screen.
PANEL_CHARS = 10
AXIS_CHARS = 36


#: The lines of the English of each panel title shown in another language — the figure keeps
#: the English layout (its margins), since the Chinese book translates the English figure.
_ENGLISH_LINES: dict[str, int] = {}


def panel_title(text: str) -> str:
    """A subplot's title broken into lines of at most ``PANEL_CHARS`` characters (a panel of
    a two-panel figure with a colour bar is about 80 px wide on a phone). ``text`` is English,
    shown in the reader's language."""
    english = wrap_title(text, PANEL_CHARS) or ""
    if language() == "en":
        return english
    shown = wrap_title(_shown(text), PANEL_CHARS) or ""
    _ENGLISH_LINES[shown] = english.count("<br>") + 1
    return shown


def axis_title(text: str) -> str:
    """An axis title broken into lines of at most ``AXIS_CHARS`` characters (``text``
    English, shown in the reader's language)."""
    return wrap_title(_shown(text), AXIS_CHARS) or ""


def _shown(text: str) -> str:
    """An English text made outside the figure (a chapter's title or legend name), in the
    reader's language: a catalogue entry, or one with its fields filled, translated as the
    Chinese book translates the English figure (``course_attention.i18n.outputs.Translator``);
    itself when no entry made it."""
    if language() == "en" or not isinstance(text, str):
        return text
    from ..i18n.outputs import translator

    return translator(language()).text(text)


def _layout(fig: go.Figure, title: str | None, height: int = 380, **kwargs: Any) -> go.Figure:
    """Title (English: a chapter's is in ``chapters.po``; shown in the reader's language, laid
    out as the English is), template, height, margins."""
    english = wrap_title(title)
    title = wrap_title(_shown(title)) if title and language() != "en" else english
    lines = english.count("<br>") + 1 if english else 0
    panels = [  # the panels' titles (make_subplots, _two_panels) sit just above the plot
        _ENGLISH_LINES.get(str(a.text), str(a.text).count("<br>") + 1)
        for a in fig.layout.annotations
        if a.yref == "paper" and a.yanchor == "bottom" and (a.y or 0) >= 1 and a.text
    ]
    # plotly puts a title's first line in the middle of the top margin, the others below it:
    # each line of the title or of the panels' titles widens the margin
    top = (40 + 20 * lines if title else 30) + 30 * max(panels, default=0)
    fig.update_layout(
        title=dict(text=title, font=dict(size=TITLE_SIZE)) if title else None,
        template=_template(),
        height=height,
        margin=dict(l=60, r=20, t=top, b=50),
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
        colorbar=dict(title=_("weight")),
        texttemplate="%{z:.2f}" if show_values else None,
        hovertemplate=_("query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>"),
    )


def curve(
    x: ArrayLike, y: ArrayLike, name: str, color: str, hovertemplate: str, **kwargs: Any
) -> go.Scatter:
    """A line with markers ``y`` ``(n,)`` over ``x`` ``(n,)``, values rounded for small pages."""
    return go.Scatter(
        x=np.asarray(x, dtype=float).tolist(),
        y=_rounded(y),
        name=name,
        mode="lines+markers",
        line=dict(color=color),
        hovertemplate=hovertemplate,
        **kwargs,
    )


#: The colours of a boolean mask (hidden is light grey, may attend is green).
MASK_SCALE = [[0.0, "#E5E5E5"], [1.0, PALETTE[2]]]


def mask_trace(
    mask: ArrayLike, queries: Sequence[str], keys: Sequence[str], show_values: bool = False
) -> go.Heatmap:
    """Heatmap trace of a boolean mask ``(seq_q, seq_k)``, True = may attend (chapters 4, 7)."""
    m = np.asarray(mask, dtype=bool)
    if m.shape != (len(queries), len(keys)):
        raise ValueError(
            f"mask of shape {m.shape} needs {m.shape} labels; got ({len(queries)}, {len(keys)})"
        )
    return go.Heatmap(
        z=m.astype(int).tolist(),
        x=unique_labels(keys),
        y=unique_labels(queries),
        zmin=0,
        zmax=1,
        colorscale=MASK_SCALE,
        showscale=False,
        xgap=1,
        ygap=1,
        texttemplate="%{z}" if show_values else None,
        hovertemplate=_("query %{y}<br>key %{x}<br>may attend: %{z}<extra></extra>"),
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
    fig.update_yaxes(autorange="reversed", title=_("query"))
    fig.update_xaxes(title=_("key"), side="bottom")
    return _layout(fig, title, height=max(300, 60 + 40 * len(queries)))


def weight_bars(weights: ArrayLike, keys: Sequence[str], title: str | None = None) -> go.Figure:
    """Bar chart of one query's weights ``(seq_k,)`` over the keys (chapter 1)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(keys),):
        raise ValueError(f"weights of shape {w.shape} need {w.shape} key labels; got {len(keys)}")
    fig = go.Figure(_bars(w, keys))
    fig.update_yaxes(range=[0, 1], title=_("weight"))
    return _layout(fig, title, height=320)


def _bars(w: np.ndarray, keys: Sequence[str]) -> go.Bar:
    return go.Bar(
        x=unique_labels(keys),
        y=_rounded(w),
        marker_color=PALETTE[0],
        text=[f"{v:.2f}" for v in w],
        textposition="outside",
        hovertemplate=_("key %{x}<br>weight %{y:.3f}<extra></extra>"),
    )


#: The style of a panel's title above a subplot (paper coordinates, no arrow).
#: Centred over its panel: the site wraps it to the panel's width (course_titles.js).
_PANEL_TITLE = dict(xref="paper", yref="paper", showarrow=False, xanchor="center",
                    yanchor="bottom")


def _two_panels(
    fig: go.Figure,
    titles: Sequence[str],
    x_title: str,
    y_title: str,
    left: tuple[float, float] = (0.0, 0.45),
    right: tuple[float, float] = (0.52, 0.97),
    ticklabels: bool = True,
) -> go.Figure:
    """Lay out two heatmaps side by side (the second on axes ``x2``/``y2``), each titled.

    Queries run down (reversed y axes), keys across; used by chapters 7 and 9. The titles are
    English and translated here (``_``).
    """
    axis = dict(showticklabels=ticklabels)
    x_title, y_title = _shown(x_title), _shown(y_title)
    fig.update_layout(
        xaxis=dict(domain=list(left), title=x_title, **axis),
        yaxis=dict(autorange="reversed", title=y_title, **axis),
        xaxis2=dict(domain=list(right), title=x_title, anchor="y2", **axis),
        yaxis2=dict(autorange="reversed", anchor="x2", **axis),
        annotations=[
            dict(text=t, x=(lo + hi) / 2, y=1.0, font=dict(size=13), **_PANEL_TITLE)
            for t, (lo, hi) in zip(titles, (left, right), strict=True)
        ],
    )
    return fig


def slider_figure(
    make_traces: Callable[[Any], Sequence[Any]],
    values: Sequence[Any],
    label: str,
    active: int = 0,
    format_value: Callable[[Any], str] = str,
    title: str | None = None,
    height: int = 420,
    format_label: Callable[[Any], str] | None = None,
) -> go.Figure:
    """A figure with a slider over precomputed frames: it works on the static website.

    Introduced in chapter 1. ``make_traces(value)`` returns the traces for one slider value
    (the same number and kinds of traces for every value); each value becomes one frame, named
    ``format_value(value)`` in every language (the steps find their frames by it), its step
    labelled ``format_label(value)`` (default: its name). ``label`` is English, shown
    translated.
    """
    if not values:
        raise ValueError("slider_figure needs at least one value")
    if not 0 <= active < len(values):
        raise ValueError(f"active={active} is not an index into {len(values)} values")
    names = [format_value(v) for v in values]
    labels = names if format_label is None else [format_label(v) for v in values]
    frames = [
        go.Frame(data=list(make_traces(v)), name=n) for v, n in zip(values, names, strict=True)
    ]
    steps = [
        dict(
            method="animate",
            label=shown,
            args=[
                [n],
                dict(
                    mode="immediate",
                    frame=dict(duration=0, redraw=True),
                    transition=dict(duration=0),
                ),
            ],
        )
        for n, shown in zip(names, labels, strict=True)
    ]
    fig = go.Figure(data=frames[active].data, frames=frames)
    fig.update_layout(
        sliders=[
            dict(
                active=active,
                steps=steps,
                currentvalue=dict(prefix=_("{label} = ").format(label=_shown(label))),
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
