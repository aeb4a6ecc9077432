"""Chapter 1's live explorer (kind ``lookup``, drawn by ``lookup.js``): a soft dictionary look-up.

Introduced in chapter 1. A 2-D query over the keys "apple", "banana", "chair": the weights are
``softmax(K q / T)`` and the looked-up value is ``weights · values``. Both places have the
query's x and y sliders and the temperature; on the website the reader can also drag the query
on the plane (a notebook's figure cannot be dragged: the sliders do it there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import toy, viz
from ..i18n import N_, _
from .core import Explorer, english, register, slider

__all__ = ["QUERY_RANGE", "title", "figure", "spec", "soft_lookup_explorer"]

#: The query's x and y run over ``[-QUERY_RANGE, QUERY_RANGE]``, inside the plane the figure
#: shows (``viz.LOOKUP_PLANE``).
QUERY_RANGE = 1.1
#: Said under the notebook's explorer, of the one control the page has and the notebook cannot.
NOTE = N_("On the website you can also drag the query on the plane.")
#: The query's sliders, by feature (``toy.WORD_FEATURES``): whole labels, not a template, since
#: a template "query {feature}" would match any text that starts with "query ".
SLIDER_LABELS = {"edible": N_("query edible"), "man-made": N_("query man-made")}
#: The figure's title (``spec["text"]["title"]``: ``lookup.js`` fills it too).
TITLE = N_("query ({qx:.2f}, {qy:.2f}), T = {temperature:.2f}: value {value:.2f}")


def title(qx: float, qy: float, temperature: float, keys: Sequence[str] = viz.LOOKUP_KEYS) -> str:
    """The figure's title: the query, the temperature and the value (``lookup.js`` writes it)."""
    from .. import numpy_ref

    K = toy.word_matrix(list(keys))  # (n_keys, 2)
    weights = numpy_ref.softmax(K @ np.array([qx, qy]), temperature=temperature)
    value = float(weights @ np.array([toy.FRUIT_DICT[k] for k in keys]))
    return _(TITLE).format(qx=qx, qy=qy, temperature=temperature, value=value)


def figure(qx: float, qy: float, temperature: float, keys: Sequence[str] = viz.LOOKUP_KEYS) -> Any:
    """:func:`course_attention.viz.soft_lookup_figure` of the query ``(qx, qy)``."""
    for name, v in (("qx", qx), ("qy", qy)):
        if not (np.isfinite(v) and abs(v) <= QUERY_RANGE + 1e-9):
            raise ValueError(f"{name} must lie in −{QUERY_RANGE} … {QUERY_RANGE}; got {v!r}")
    return viz.soft_lookup_figure(np.array([qx, qy]), temperature, keys,
                                  title=english(title, qx, qy, temperature, keys))


def spec(keys: Sequence[str] = viz.LOOKUP_KEYS) -> dict[str, Any]:
    """The ``live`` part: the keys, their words and values, the query's reach and the plane's
    half-width."""
    return {
        "kind": "lookup",
        "data": {"keys": toy.word_matrix(list(keys)), "words": list(keys),
                 "values": [toy.FRUIT_DICT[k] for k in keys], "range": QUERY_RANGE,
                 "plane": viz.LOOKUP_PLANE,
                 "labels": viz.lookup.label_spec(keys, label=_("query"))},
        "text": {"title": TITLE},
        "phone": viz.lookup.SOFT_LOOKUP_PHONE,
    }


@register
def soft_lookup_explorer(
    angle: float = 0.0,
    temperature: float = 1.0,
    keys: tuple[str, ...] = viz.LOOKUP_KEYS,
) -> Explorer:
    """Move a 2-D query and change the temperature; watch the weights and the value follow.

    Introduced in chapter 1. Controls: the query's ``x`` and ``y`` (its two features; it starts
    as the unit vector ``angle`` degrees from the first axis) and the softmax's
    ``temperature``. The figure is :func:`course_attention.viz.soft_lookup_figure`. On the
    website (``lookup.js``) the reader can also drag the query on the plane.
    """
    q = viz.query_direction(angle)
    lim = QUERY_RANGE
    controls = {
        "qx": slider(_(SLIDER_LABELS.get(toy.WORD_FEATURES[0], "query x")),
                     round(float(q[0]), 2), -lim, lim, 0.01),
        "qy": slider(_(SLIDER_LABELS.get(toy.WORD_FEATURES[1], "query y")),
                     round(float(q[1]), 2), -lim, lim, 0.01),
        "temperature": slider(_("temperature"), temperature, 0.05, 5.0, 0.05),
    }

    def make_figure(qx: float, qy: float, temperature: float) -> Any:
        return figure(qx, qy, temperature, keys)

    return Explorer(controls, make_figure, spec(keys), note=NOTE)
