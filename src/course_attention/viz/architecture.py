"""The architecture drawn from a forward pass: the course map and the models of chapters 6–8.

Introduced on the welcome page (:func:`course_map_figure`) and in chapters 6, 7 and 8
(:func:`architecture_figure`). Every box is one module call recorded by
:func:`course_attention.architecture.trace`, with the shape its output had; nothing is typed.
Layers that ran identically are drawn once, framed and marked ``× N``. The figure is plain
plotly (rectangles as layout shapes, text as annotations), so it draws on the static website,
in JupyterLab and in Colab alike, at a phone's 327 px as at 672 px.

Each box's name links to the chapter that builds it. The link is the website's absolute address
(:func:`course_attention.architecture.chapter_url`): a relative link would resolve against the
JupyterLab server or Colab's frame, not the book. The hover names the module's path, its
output and input shapes, its parameters and every chapter it relies on.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

from ..i18n import N_, _
from .core import PALETTE, _layout, _shown

if TYPE_CHECKING:  # the figures import torch only when they are drawn: viz stays light
    from ..architecture import Node, Trace


def _arch() -> Any:
    from .. import architecture

    return architecture

__all__ = ["architecture_figure", "course_map_figure", "CHAPTER_COLOURS"]

#: The colour of a box is the chapter that builds it (Okabe–Ito); grey for inputs, outputs, adds.
CHAPTER_COLOURS: dict[str, str] = {
    "ch-multi-head": PALETTE[0],
    "ch-transformer-block": PALETTE[2],
    "ch-encoder-decoder": PALETTE[1],
    "ch-decoder-only": PALETTE[3],
    "ch-positions": PALETTE[5],
    "ch-masking": PALETTE[4],
    "ch-scaled-dot-product": PALETTE[7],
    "ch-efficient-attention": PALETTE[4],
    "ch-modern-attention": PALETTE[6],
    "ch-latent-sparse": "#882255",
}
_GREY = "#777777"
_LINE = "#444444"
#: The narrowest figure the layout is made for, a 375 px phone screen less the page's margins.
PHONE_WIDTH = 327
_FONT = 11  # px, the boxes' text
_LINE_H = 13  # px per line of box text
_CHAR = 0.6  # width of one character in em (generous: Arial averages about 0.55)
_GAP = 16  # px between rows: room for an arrow
_ADD = 18  # px, diameter of an add's circle
_PAD = 4  # px between a frame and the boxes it holds, above them
_HEAD = 8  # px, length of an arrowhead
_MARGIN = 4  # px left and right of the plot
# x inside one column, as a fraction of its width: frame, boxes, the residual lane, the gap
_FRAME = (0.01, 0.95)
_BOX = (0.04, 0.80)
_LANE = 0.88
_CROSS = 0.975


def _colour(node: Node) -> str:
    return CHAPTER_COLOURS.get(node.chapter or "", _GREY)


def _tint(colour: str, alpha: float = 0.16) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _number(label: str) -> str:
    page = _arch().CHAPTERS[label][0].rsplit("/", 1)[-1]
    return str(int(page.split("_", 1)[0]))


def _chapter_name(label: str) -> str:
    return _("chapter {n}, {title}").format(n=_number(label), title=_(_arch().CHAPTERS[label][1]))


def _link(text: str, label: str | None) -> str:
    url = _arch().chapter_url(label) if label else None
    return f'<a href="{html.escape(url, quote=True)}">{text}</a>' if url else text


def _shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + (",)" if len(shape) == 1 else ")")


def _fits(text: str, px: float, font: int = _FONT) -> bool:
    return len(html.unescape(text)) * _CHAR * font <= px


@dataclass
class _Box:
    node: Node
    col: int
    row: int
    x0: float = 0.0
    x1: float = 0.0
    y0: float = 0.0
    y1: float = 0.0
    lines: list[str] = field(default_factory=list)

    @property
    def xc(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2


def _columns(tr: Trace) -> dict[int, int]:
    """Each input starts a column; a node joins the column of its first main input."""
    col: dict[int, int] = {}
    inputs = [n for n in tr.nodes if n.kind == "input"]
    for i, n in enumerate(inputs):
        col[n.id] = i
    for n in tr.nodes:
        if n.id in col:
            continue
        main = [e.src for e in tr.edges if e.dst == n.id and e.kind != "cross" and e.src in col]
        if main:
            col[n.id] = col[main[0]]
    for n in reversed(tr.nodes):  # a node with no input (the GPT's positions) joins its reader
        if n.id not in col:
            after = [col[e.dst] for e in tr.edges if e.src == n.id and e.dst in col]
            col[n.id] = after[0] if after else 0
    used = sorted(set(col.values()))  # an input read only by another column's box: no column
    return {k: used.index(v) for k, v in col.items()}


def _rows(tr: Trace) -> dict[int, int]:
    """Rows as late as possible: a node sits just above the first box that reads it."""
    height: dict[int, int] = {}
    for n in reversed(tr.nodes):  # nodes are in the order they ran: readers come later
        after = [height[e.dst] for e in tr.edges if e.src == n.id and e.dst in height]
        height[n.id] = 1 + max(after) if after else 0
    top = max(height.values())
    return {k: top - h for k, h in height.items()}


def _place(tr: Trace, n_cols: int, cols: dict[int, int], rows: dict[int, int],
           y_start: float) -> tuple[list[_Box], float, dict[str, tuple[int, int, int]]]:
    """Box positions: x as a fraction of the width, y in pixels from the top."""
    width = (PHONE_WIDTH - 2 * _MARGIN) / n_cols
    cells: dict[tuple[int, int], list[Node]] = {}
    for n in tr.nodes:
        cells.setdefault((rows[n.id], cols[n.id]), []).append(n)
    boxes: list[_Box] = []
    for (row, col), members in cells.items():
        k = len(members)
        span = (_BOX[1] - _BOX[0]) / k
        for i, n in enumerate(members):
            box = _Box(n, col, row)
            box.x0 = (col + _BOX[0] + i * span + (0.02 if i else 0)) / n_cols
            box.x1 = (col + _BOX[0] + (i + 1) * span - (0.02 if i < k - 1 else 0)) / n_cols
            box.lines = _text(n, (box.x1 - box.x0) * n_cols * width)
            boxes.append(box)
    frames = _frames(tr, cols, rows)
    starts = {first: 1 for first, _, _ in frames.values()}
    ends: dict[int, float] = {}  # a frame's foot holds its label, under its last box
    for group, (_first, last, _col) in frames.items():
        lines = len(_frame_label(tr, group, n_cols))
        ends[last] = max(ends.get(last, 0.0), lines * _LINE_H + 8)
    y = y_start
    for row in range(max(rows.values()) + 1):
        y += _PAD * starts.get(row, 0) + (_GAP if row else 4)
        in_row = [b for b in boxes if b.row == row]
        tall = max(_height(b.node, len(b.lines)) for b in in_row)
        for b in in_row:
            h = _height(b.node, len(b.lines))
            b.y0, b.y1 = y + (tall - h) / 2, y + (tall + h) / 2
            if b.node.kind == "add":  # a circle of _ADD px (drawn in pixels) at the centre
                b.x0 = b.x1 = (b.col + (_BOX[0] + _BOX[1]) / 2) / n_cols
        y += tall + ends.get(row, 0)
    return boxes, y, frames


def _height(node: Node, lines: int) -> float:
    return _ADD if node.kind == "add" else lines * _LINE_H + 6


def _text(n: Node, px: float) -> list[str]:
    """The lines of a box: ``name · Class`` (the name linked to its chapter), then the shape."""
    if n.kind == "add":
        return ["+"]
    if n.kind in ("input", "output"):
        return [f"<b>{n.name}</b>", _shape_text(n.shape)]
    name = _link(n.name, n.chapter) if n.path else _link(n.cls, n.chapter)
    first = [f"{name} · {n.cls}" if n.path else name]
    if n.path and not _fits(f"{n.name} · {n.cls}", px - 8):
        first = [name, n.cls]
    return [*first, _shape_text(n.shape)]


def _frame_label(tr: Trace, group: str, n_cols: int) -> list[str]:
    """The lines of a frame's label: ``Class × N`` (the class linked to its chapter) for layers
    drawn once, ``Class · path`` for one drawn in full; two lines where one does not fit
    between the arrow that leaves the frame and the frame's right side on a phone."""
    stack = {s.path: s for s in tr.stacks}.get(group.rsplit(".", 1)[0])
    name, cls = (_link(stack.cls, stack.chapter), stack.cls) if stack else (group, group)
    tail = f"× {stack.count}" if stack and stack.collapsed else f"· {group}"
    width = (PHONE_WIDTH - 2 * _MARGIN) / n_cols
    room = (_FRAME[1] - 0.015 - (_BOX[0] + _BOX[1]) / 2) * width - 2 * _HEAD
    return [f"{name} {tail}"] if _fits(f"{cls} {tail}", room) else [name, tail]


def _frames(
    tr: Trace, cols: dict[int, int], rows: dict[int, int]
) -> dict[str, tuple[int, int, int]]:
    """``layer path -> (first row, last row, column)`` of every framed layer."""
    frames: dict[str, tuple[int, int, int]] = {}
    for n in tr.nodes:
        if not n.group:
            continue
        first, last, col = frames.get(n.group, (rows[n.id], rows[n.id], cols[n.id]))
        frames[n.group] = (min(first, rows[n.id]), max(last, rows[n.id]), col)
    return frames


#: A box's note (:class:`course_attention.architecture.Node`), marked for the catalogue.
_NOTES = (N_("causal mask"),)


def _hover(n: Node) -> str:
    """A box's hover: one line each (the module's names, shapes and paths stay as they are)."""
    if n.kind == "add":
        head = (_("<b>+</b> in {path}").format(path=n.path.rsplit(".", 1)[0]) if "." in n.path
                else "<b>+</b>")
        lines = [head, _("sum {shape}").format(shape=_shape_text(n.shape)),
                 *[f"{name}: {_shape_text(s)}" for name, s in n.inputs]]
    elif n.kind in ("input", "output"):
        lines = [f"<b>{n.path}</b>" + (f" ({n.cls})" if n.kind == "input" else ""),
                 _("shape {shape}").format(shape=_shape_text(n.shape))]
    else:
        lines = [f"<b>{n.path or n.cls}</b>", n.cls,
                 _("output {shape}").format(shape=_shape_text(n.shape)),
                 *[f"{name} {_shape_text(s)}" for name, s in n.inputs]]
        if n.note:
            lines.append(_shown(n.note))
        lines.append(_("{count} parameters").format(count=f"{n.parameters:,}"))
    if n.repeat > 1:
        lines.append(_("× {n}, the same in {paths}").format(n=n.repeat, paths=", ".join(n.also)))
    if n.chapter:
        lines.append(_("built in {chapter}").format(chapter=_chapter_name(n.chapter)))
    lines += [_("uses {chapter}").format(chapter=_chapter_name(c)) for c in n.related]
    return "<br>".join(lines)


@dataclass
class _Drawing:
    """Everything one figure holds, gathered before it is made."""

    shapes: list[dict] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)
    lines: dict[str, list] = field(default_factory=dict)
    hover: list[tuple[float, float, str]] = field(default_factory=list)

    def line(self, kind: str, points: list[tuple[float, float]]) -> None:
        xs, ys = self.lines.setdefault(kind, [[], []])
        xs.extend([p[0] for p in points] + [None])
        ys.extend([p[1] for p in points] + [None])

    def head(self, towards: str, x: float, y: float, colour: str, offset: float = 0) -> None:
        """An arrowhead with its tip at ``x`` (data) + ``offset`` px, ``y`` px, pointing
        ``"down"``, ``"left"`` or ``"right"``: drawn in pixels, the same at every width."""
        h, w, o = _HEAD, _HEAD / 2, offset
        path = {
            "down": f"M {o - w},{y - h} L {o + w},{y - h} L {o},{y} Z",
            "left": f"M {o},{y} L {o + h},{y - w} L {o + h},{y + w} Z",
            "right": f"M {o},{y} L {o - h},{y - w} L {o - h},{y + w} Z",
        }[towards]
        self.shapes.append(dict(type="path", path=path, xref="x", yref="y", xsizemode="pixel",
                                xanchor=x, fillcolor=colour, line=dict(width=0)))

    def text(self, text: str, x: float, y: float, **kwargs: Any) -> None:
        kwargs.setdefault("font", dict(size=_FONT, color="#222222"))
        self.notes.append(dict(text=text, x=x, y=y, xref="x", yref="y", showarrow=False,
                               **kwargs))


_EDGE_COLOUR = {"flow": _LINE, "residual": _LINE, "cross": PALETTE[1]}


def _draw(d: _Drawing, tr: Trace, y_start: float) -> float:
    """Draw one model from ``y_start`` (px); return where it ends."""
    tr = _arch().collapse_repeats(tr)
    cols, rows = _columns(tr), _rows(tr)
    n_cols = max(cols.values()) + 1
    boxes, y_end, frames = _place(tr, n_cols, cols, rows, y_start)
    at = {b.node.id: b for b in boxes}
    for group, (_first, _last, col) in frames.items():
        members = [b for b in boxes if b.node.group == group]
        lines = _frame_label(tr, group, n_cols)
        top = min(b.y0 for b in members) - _PAD
        bottom = max(b.y1 for b in members) + len(lines) * _LINE_H + 8
        x0, x1 = (col + _FRAME[0]) / n_cols, (col + _FRAME[1]) / n_cols
        d.shapes.append(dict(type="rect", xref="x", yref="y", x0=x0, x1=x1, y0=top, y1=bottom,
                             line=dict(color="#999999", width=1, dash="dot"), layer="below"))
        # in the frame's foot, right of the arrow that leaves it: nothing else is drawn there
        d.text("<br>".join(lines), x1 - 0.015 / n_cols, bottom - 3, xanchor="right",
               yanchor="bottom", align="right")
    for e in tr.edges:
        _edge(d, at[e.src], at[e.dst], e.kind, n_cols)
    for b in boxes:  # after the edges: a box hides the end of a line under it
        n, colour = b.node, _colour(b.node)
        style = dict(xref="x", yref="y", y0=b.y0, y1=b.y1,
                     line=dict(color=colour, width=1.5 if n.kind == "module" else 1),
                     fillcolor=_tint(colour) if n.kind == "module" else "white")
        if n.kind == "add":
            d.shapes.insert(0, dict(type="circle", xsizemode="pixel", xanchor=b.xc,
                                    x0=-_ADD / 2, x1=_ADD / 2, **style))
        else:
            d.shapes.insert(0, dict(type="rect", x0=b.x0, x1=b.x1, **style))
        d.text("<br>".join(b.lines), b.xc, b.yc, yanchor="middle", xanchor="center",
               name=",".join(n.paths) if n.kind == "module" else n.kind)
        text = _hover(n)
        for f in (0.2, 0.5, 0.8):
            d.hover.append((b.x0 + f * (b.x1 - b.x0), b.yc, text))
    return y_end


def _edge(d: _Drawing, a: _Box, b: _Box, kind: str, n_cols: int) -> None:
    colour = _EDGE_COLOUR[kind]
    if kind == "residual":  # branch off below the source, down the lane, into the add's side
        lane = (b.col + _LANE) / n_cols
        y = a.y1 + _GAP * 0.45
        d.line(kind, [(a.xc, y), (lane, y), (lane, b.yc), (b.xc, b.yc)])
        d.head("left", b.xc, b.yc, colour, offset=_ADD / 2 if b.node.kind == "add" else 0)
    elif kind == "cross":  # out of the side, down the gap between columns, into the side
        right = b.col > a.col
        gap = (b.col - 1 + _CROSS) / n_cols if right else (b.col + _CROSS) / n_cols
        start = a.x1 if right else a.x0
        end = b.x0 if right else b.x1
        d.line(kind, [(start, a.yc), (gap, a.yc), (gap, b.yc), (end, b.yc)])
        d.head("right" if right else "left", end, b.yc, colour)
    else:  # down from the source into the top of the reader
        mid = b.y0 - _GAP / 2
        if b.row - a.row > 1:  # around the boxes in between, on the column's left
            left = (b.col + 0.015) / n_cols
            top = a.y1 + _GAP / 2
            points = [(a.xc, a.y1), (a.xc, top), (left, top), (left, mid), (b.xc, mid)]
        else:
            points = [(a.xc, a.y1), (a.xc, mid), (b.xc, mid)]
        d.line(kind, [*points, (b.xc, b.y0 - _HEAD / 2)])
        d.head("down", b.xc, b.y0, colour)


def _key(d: _Drawing, chapters: list[str], y: float) -> float:
    """One line per chapter: its colour, its number and title, linked."""
    y += 10
    d.text(_("Colour: the chapter that builds the box"), 0.0, y, xanchor="left", yanchor="top")
    y += _LINE_H + 4
    for label in chapters:
        square = f'<span style="color:{CHAPTER_COLOURS[label]}">■</span>'
        name = _("Chapter {n} · {title}").format(n=_number(label),
                                                title=_(_arch().CHAPTERS[label][1]))
        title = _link(name, label)
        d.text(f"{square} {title}", 0.0, y, xanchor="left", yanchor="top")
        y += _LINE_H + 4
    return y


def _figure(d: _Drawing, height: float, title: str | None) -> go.Figure:
    fig = go.Figure()
    for kind, (xs, ys) in d.lines.items():
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False, name=kind,
            line=dict(color=_EDGE_COLOUR[kind], width=2 if kind == "cross" else 1.2)))
    xs, ys, texts = zip(*d.hover, strict=True) if d.hover else ((), (), ())
    fig.add_trace(go.Scatter(
        x=list(xs), y=list(ys), mode="markers", text=list(texts), showlegend=False,
        hovertemplate="%{text}<extra></extra>", marker=dict(size=12, opacity=0)))
    _layout(fig, title, height=400)
    top = fig.layout.margin.t
    fig.update_layout(
        height=int(top + height + 8), shapes=d.shapes, annotations=d.notes, showlegend=False,
        margin=dict(l=_MARGIN, r=_MARGIN, t=top, b=8, autoexpand=False),
        hovermode="closest", hoverdistance=-1, dragmode=False,
        hoverlabel=dict(font_size=12, align="left"),
    )
    fig.update_xaxes(range=[0, 1], visible=False, fixedrange=True)
    fig.update_yaxes(range=[height, 0], visible=False, fixedrange=True)
    return fig


def _chapters(traces: list[Trace]) -> list[str]:
    found = {c for tr in traces for n in tr.nodes for c in (n.chapter,) if c}
    found |= {s.chapter for tr in traces for s in tr.stacks if s.chapter}
    return sorted(found, key=_number)


def architecture_figure(trace: Trace, title: str | None = None) -> go.Figure:
    """A model's architecture as its forward pass ran: boxes, arrows, residual adds, shapes.

    Introduced in chapter 6 (drawn again in chapters 7 and 8). ``trace`` comes from
    :func:`course_attention.architecture.trace`. Each box reads ``name · Class`` and the
    shape of its output as measured, e.g. ``(1, 9, 64)``; the name links to the chapter that
    builds it (colour: that chapter). Arrows run down the page; a residual connection leaves
    below its source and runs down the right-hand lane into a ``+``; the encoder's output
    reaches the decoder's cross-attention from the side. Identical layers are drawn once,
    framed, ``× N``. Hover a box for its path, shapes and parameters.
    """
    if not isinstance(trace, _arch().Trace):
        raise ValueError(
            "architecture_figure needs a Trace from architecture.trace(model, *inputs); got "
            f"{type(trace).__name__}"
        )
    d = _Drawing()
    y = _draw(d, trace, 0.0)
    y = _key(d, _chapters([trace]), y)
    return _figure(d, y, title)  # _layout translates it


def course_map_figure(
    title: str | None = N_("The course's models, drawn from their forward passes"),
) -> go.Figure:
    """The course map: chapter 6's block, chapter 7's encoder–decoder and chapter 8's GPT.

    Introduced on the welcome page. Each model is built untrained (seeded) with its chapter's
    configuration by :func:`course_attention.architecture.chapter_example`, run once on a short
    input, and drawn as :func:`architecture_figure` draws it, one under the other (a phone
    reads them in order), each titled with a link to its chapter.
    """
    d = _Drawing()
    y = 0.0
    traces = _arch().course_map_traces()
    for i, (heading, tr) in enumerate(traces):
        y += 14 if i else 4
        d.text(f"<b>{_link(_(heading), tr.chapter)}</b>", 0.0, y, xanchor="left", yanchor="top",
               font=dict(size=13, color="#222222"))
        y = _draw(d, tr, y + 2 * _LINE_H)
    y = _key(d, _chapters([tr for _, tr in traces]), y)
    return _figure(d, y, title)  # _layout translates it
