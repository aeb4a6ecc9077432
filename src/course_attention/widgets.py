"""Live explorers for JupyterLab and Colab: controls that redraw a plotly figure.

Only widgets common to ipywidgets 7.7 (Colab) and 8 are used: sliders, dropdowns, toggle
buttons, boxes, ``interactive_output``. On the static website these cells are hidden
(``remove-output``); the slider figures of :mod:`course_attention.viz` take their place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w
import plotly.graph_objects as go

from . import viz

__all__ = ["Explorer", "EXPLORERS"]

#: Every explorer factory by name; each can be called with no arguments (tests drive them all).
EXPLORERS: dict[str, Callable[..., Explorer]] = {}


def _explorer(factory: Callable[..., Explorer]) -> Callable[..., Explorer]:
    EXPLORERS[factory.__name__] = factory
    return factory


class Explorer:
    """Controls plus a figure that is rebuilt on every change.

    Introduced in chapter 1. ``controls`` maps keyword names of ``make_figure`` to widgets;
    ``figure`` always holds the latest figure, so tests can drive an explorer without a browser.
    """

    def __init__(
        self, controls: dict[str, w.ValueWidget], make_figure: Callable[..., go.Figure]
    ) -> None:
        self.controls = controls
        self.make_figure = make_figure
        self.figure: go.Figure | None = None
        self.output = w.interactive_output(self._update, controls)
        self.widget = w.VBox([w.HBox(list(controls.values())), self.output])

    def _update(self, **values: Any) -> None:
        self.figure = self.make_figure(**values)
        viz.show(self.figure)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _slider(description: str, value: float, lo: float, hi: float, step: float) -> w.FloatSlider:
    return w.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        continuous_update=True,
        readout_format=".2f",
        style={"description_width": "initial"},
    )


# --- chapter 1: soft look-up ----------------------------------------------------------------


# --- chapter 2: scaled dot-product ----------------------------------------------------------
