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


@_explorer
def soft_lookup_explorer(
    angle: float = 0.0,
    temperature: float = 1.0,
    keys: tuple[str, ...] = viz.LOOKUP_KEYS,
) -> Explorer:
    """Turn a 2-D query and change the temperature; watch the weights and the value follow.

    Introduced in chapter 1. Controls: ``angle`` of the unit query in degrees, ``temperature``
    of the softmax. The figure is :func:`course_attention.viz.soft_lookup_figure`.
    """
    controls = {
        "angle": w.FloatSlider(
            value=angle,
            min=-180.0,
            max=180.0,
            step=5.0,
            description="query angle (°)",
            continuous_update=True,
            readout_format=".0f",
            style={"description_width": "initial"},
        ),
        "temperature": _slider("temperature", temperature, 0.05, 5.0, 0.05),
    }

    def make_figure(angle: float, temperature: float) -> go.Figure:
        return viz.soft_lookup_figure(viz.query_direction(angle), temperature, keys)

    return Explorer(controls, make_figure)


# --- chapter 2: scaled dot-product ----------------------------------------------------------


@_explorer
def scaling_explorer(d_k: int = 64, scaled: bool = True, seq_k: int = 8, seed: int = 0) -> Explorer:
    """Live explorer of one query's weights as ``d_k`` grows, with the √d_k scale on or off.

    Introduced in chapter 2. Controls: ``d_k`` (1 … 1024, powers of two) and ``scaled``
    (divide the scores by √d_k). The query and keys stay the same: widening ``d_k`` uses more of
    their features (see :func:`course_attention.experiments.weights_by_width`).
    """
    from . import experiments

    widths = list(experiments.DK_VALUES)
    if d_k not in widths:
        raise ValueError(f"d_k must be one of {widths}; got {d_k}")
    controls = {  # the checkbox first: at d_k = 1 scaling changes nothing (√1 = 1)
        "scaled": w.Checkbox(value=scaled, description="divide the scores by √d_k"),
        "d_k": w.SelectionSlider(
            options=widths, value=d_k, description="d_k", continuous_update=True
        ),
    }

    def make_figure(d_k: int, scaled: bool) -> go.Figure:
        weights = experiments.weights_by_width(
            [d_k], exponent=0.5 if scaled else 0.0, seq_k=seq_k, seed=seed
        )[0]  # (seq_k,)
        how = "softmax(q·k / √d_k)" if scaled else "softmax(q·k)"
        return viz.scaling_bars_figure(
            weights, title=f"{how}, d_k = {d_k}: largest weight {weights.max():.2f}"
        )

    return Explorer(controls, make_figure)


# --- chapter 3: self-attention ------------------------------------------------------------


# --- chapter 4: masking -------------------------------------------------------------------


# --- chapter 5: multi-head attention --------------------------------------------------------
