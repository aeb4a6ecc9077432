"""Figures of chapter 5 (multi-head attention): tables of shapes and costs, per-head heatmaps."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from .core import _layout, attention_heatmap

__all__ = ["Table", "shape_table", "cost_table", "head_heatmap"]

#: A cell that holds one number (thousands commas, a decimal part, a sign, a unit sign).
_NUMBER = re.compile(r"[−+-]?\d{1,3}(,\d{3})*(\.\d+)?\s?[×%]?|[−+-]?\d+(\.\d+)?\s?[×%]?")


class Table:
    """A small table that shows as HTML in the book and JupyterLab, as text elsewhere.

    Introduced in chapter 5. ``header`` has one name per column; every row as many cells.
    """

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.header = [str(h) for h in header]
        self.rows = [[str(c) for c in row] for row in rows]
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"a row has {len(row)} cells for {len(self.header)} columns")

    def _repr_html_(self) -> str:
        """The table as the website shows it: inside a ``<div class="ca-table">`` that scrolls
        sideways when the table is wider than the page (the site's stylesheet pads the cells
        and draws the scroll cue). A column whose every cell is a number (``4,718,592``,
        ``18.00``, ``8×``) is right-aligned in plain digits (``class="ca-num"``); other cells
        are code. Every cell holds the same text as :meth:`__repr__`."""
        numeric = [
            all(_NUMBER.fullmatch(row[i]) for row in self.rows) and bool(self.rows)
            for i in range(len(self.header))
        ]

        def cell(tag: str, text: str, i: int, code: bool) -> str:
            body = html.escape(text)
            if numeric[i]:
                return f'<{tag} class="ca-num">{body}</{tag}>'
            return f"<{tag}><code>{body}</code></{tag}>" if code else f"<{tag}>{body}</{tag}>"

        head = "".join(cell("th", h, i, False) for i, h in enumerate(self.header))
        body = "".join(
            "<tr>" + "".join(cell("td", c, i, True) for i, c in enumerate(row)) + "</tr>"
            for row in self.rows
        )
        return (
            f'<div class="ca-table"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>"
        )

    def __repr__(self) -> str:
        widths = [
            max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))
        ]
        lines = [[c.ljust(n) for c, n in zip(r, widths, strict=True)] for r in self.rows]
        head = "  ".join(h.ljust(n) for h, n in zip(self.header, widths, strict=True))
        rule = "  ".join("-" * n for n in widths)
        return "\n".join(line.rstrip() for line in [head, rule, *("  ".join(r) for r in lines)])


def shape_table(steps: Sequence[Any]) -> Table:
    """Table of the steps recorded by :func:`course_attention.experiments.trace_multi_head_shapes`.

    Introduced in chapter 5. Columns: step, named dimensions, actual shape.
    """
    return Table(
        ["step", "named dimensions", "actual shape"],
        [[s.step, s.dims, str(tuple(s.shape))] for s in steps],
    )


def cost_table(costs: Mapping[int, Mapping[str, int]]) -> Table:
    """Table of multiply-adds, one row per number of heads, one column per matrix product.

    Introduced in chapter 5. ``costs`` maps ``n_heads`` to the dict of
    :func:`course_attention.experiments.multi_head_multiply_adds`; a last column adds them up.
    """
    if not costs:
        raise ValueError("cost_table needs the costs of at least one number of heads")
    names = list(next(iter(costs.values())))
    rows = []
    for n_heads, cost in costs.items():
        if list(cost) != names:
            raise ValueError(f"every entry needs the products {names}; got {list(cost)}")
        rows.append([str(n_heads), *(f"{cost[k]:,}" for k in names), f"{sum(cost.values()):,}"])
    return Table(["heads", *names, "total"], rows)


def _check_heads(weights: ArrayLike, tokens: Sequence[str]) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.ndim != 3 or w.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(
            f"weights must have shape (heads, seq, seq) with seq = {len(tokens)} tokens; "
            f"got {w.shape}"
        )
    return w


def head_heatmap(
    weights: ArrayLike, tokens: Sequence[str], head: int, title: str | None = None
) -> go.Figure:
    """Heatmap of one head's weights, ``weights`` ``(heads, seq, seq)``, for head ``head``.

    Introduced in chapter 5 (used by the live multi-head explorer).
    """
    w = _check_heads(weights, tokens)
    if not 0 <= head < len(w):
        raise ValueError(f"head={head} is not an index into {len(w)} heads")
    return _layout(
        attention_heatmap(w[head], list(tokens)), title, height=max(300, 80 + 40 * len(tokens))
    )
