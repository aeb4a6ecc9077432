"""Live explorers on the website: the spec a notebook writes, which the page's JavaScript runs.

Introduced with the explorers of chapter 1. An explorer cell (``widgets.soft_lookup_explorer()``)
displays one output with two representations:

* the ipywidgets view (JupyterLab, Colab), computed by the kernel;
* :data:`EXPLORER_MIME`, a JSON *spec*: the explorer's ``kind``, its controls (the same ones,
  read off the widgets), the numbers it needs (``data``) and, for a trained model, the model's
  weights. The book's mime renderer (:mod:`course_attention.book`) turns the spec into a live
  explorer drawn by ``_static/explorers/<kind>.js`` on top of ``core.js``, over a static figure
  of the first state (what a reader without JavaScript, or before the runtime starts, sees).

The modules of this package build the spec of each kind and compute, with the package's own
numpy/torch code, what the page must show for given control values — the browser test compares
the two.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

__all__ = [
    "EXPLORER_MIME",
    "WIDGET_MIME",
    "controls_spec",
    "model_payload",
    "tensors_from_payload",
    "jsonable",
]

#: The mime type of an explorer spec in a notebook output.
EXPLORER_MIME = "application/vnd.course-attention.explorer+json"
#: The mime type of an ipywidgets view (the same in ipywidgets 7.7 and 8).
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and Python numbers.

    Floats keep every bit: JSON writes the shortest text that reads back as the same float64.
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _digits(fmt: str | None) -> int | None:
    if fmt and fmt.startswith(".") and fmt.endswith("f"):
        return int(fmt[1:-1])
    return None


def controls_spec(controls: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's controls, read off the explorer's ipywidgets: one list, two front ends.

    ``controls`` maps a keyword name to a widget (sliders, dropdowns, selection sliders,
    checkboxes, text boxes). Each becomes ``{"name", "type", "label", "value", …}`` with
    ``type`` one of ``"range"``, ``"select"``, ``"checkbox"``, ``"text"``.
    """
    import ipywidgets as w

    out = []
    for name, widget in controls.items():
        label = widget.description or name
        base = {"name": name, "label": label, "value": jsonable(widget.value)}
        if isinstance(widget, (w.FloatSlider, w.IntSlider)):
            base |= {
                "type": "range",
                "min": jsonable(widget.min),
                "max": jsonable(widget.max),
                "step": jsonable(widget.step),
                "format": _digits(getattr(widget, "readout_format", None))
                if isinstance(widget, w.FloatSlider)
                else 0,
            }
        elif isinstance(widget, (w.Dropdown, w.SelectionSlider)):
            labels, values = widget._options_labels, widget._options_values  # 7.7 and 8 alike
            base |= {
                "type": "select",
                "options": [
                    {"label": str(lab), "value": jsonable(v)}
                    for lab, v in zip(labels, values, strict=True)
                ],
            }
        elif isinstance(widget, w.Checkbox):
            base |= {"type": "checkbox"}
        elif isinstance(widget, w.Text):
            base |= {"type": "text"}
        else:
            raise ValueError(f"control {name!r}: no page control for {type(widget).__name__}")
        out.append(base)
    return out


def model_payload(
    state_dict: dict[str, Any], config: dict[str, Any], extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A model as the page loads it: ``{"config", "tensors", "extra"}``.

    Each tensor of ``state_dict`` (a torch module's ``state_dict()``) becomes
    ``{"shape": [...], "data": base64 of its float32 numbers, little-endian}``; ``config`` holds
    what the page needs to rebuild the forward pass (widths, heads, layers, vocabulary).
    The book writes this to ``_static/explorers/models/`` and the page fetches it on demand.
    """
    tensors = {}
    for name, tensor in state_dict.items():
        array = np.asarray(tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else tensor)
        if not np.issubdtype(array.dtype, np.floating):
            continue  # counters and other buffers the forward pass does not read
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        tensors[name] = {"shape": list(array.shape), "data": base64.b64encode(data).decode()}
    return {"config": jsonable(config), "tensors": tensors, "extra": jsonable(extra or {})}


def tensors_from_payload(payload: dict[str, Any]) -> dict[str, np.ndarray]:
    """The float32 arrays of a :func:`model_payload`, by state-dict name (tests rebuild models)."""
    return {
        name: np.frombuffer(base64.b64decode(t["data"]), dtype="<f4").reshape(t["shape"]).copy()
        for name, t in payload["tensors"].items()
    }
