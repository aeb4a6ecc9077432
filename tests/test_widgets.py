"""Every live explorer reacts to every control: set a value, the figure's data changes."""

from __future__ import annotations

import json
from pathlib import Path

import ipywidgets as w
import pytest

from course_attention import widgets


def _other_value(control):
    if isinstance(control, (w.Dropdown, w.ToggleButtons, w.RadioButtons, w.SelectionSlider)):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return next(o for o in options if o != control.value)
    if isinstance(control, w.Checkbox | w.ToggleButton):
        return not control.value
    if isinstance(control, w.Text):
        return control.value[::-1] + control.value[:1]  # a different string of the same kind
    if control.value != control.max:
        return control.max
    return control.min


def _data(explorer) -> str:
    return json.dumps(explorer.figure.to_plotly_json()["data"], sort_keys=True, default=str)


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_every_control_changes_the_figure(name):
    explorer = widgets.EXPLORERS[name]()
    assert isinstance(explorer, widgets.Explorer)
    assert explorer.figure is not None, "the explorer draws on creation"
    assert explorer.controls, "an explorer needs at least one control"
    for label, control in explorer.controls.items():
        before = _data(explorer)
        control.value = _other_value(control)
        assert _data(explorer) != before, f"{name}: changing {label!r} left the figure unchanged"


def test_explorers_exist_for_the_first_chapters():
    assert len(widgets.EXPLORERS) >= 2


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_controls_wrap_keep_their_width_and_full_labels(name):
    """At a 1024 px JupyterLab window, four controls in one row shrank sliders to 12–17 px."""
    explorer = widgets.EXPLORERS[name]()
    row, _, note = explorer.widget.children
    assert row.layout.flex_flow == "row wrap"
    for label, control in explorer.controls.items():
        assert int(control.layout.min_width.removesuffix("px")) >= 400, label
        assert control.style.description_width == "initial", f"{label}: label would be cut"
    assert "run this cell again" in note.value


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_every_explorer_displays_the_widget_and_the_page_spec_in_one_output(name, monkeypatch):
    """One call, every place: the widget view for JupyterLab and Colab, the spec for the site."""
    from IPython import display as ipd

    from course_attention import book, live

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, raw=False: shown.append((obj, raw)))
    explorer = widgets.EXPLORERS[name]()
    explorer._ipython_display_()
    (bundle, raw), = shown
    assert raw and bundle[live.WIDGET_MIME]["model_id"] == explorer.widget.model_id
    spec = json.loads(json.dumps(bundle[live.EXPLORER_MIME], allow_nan=False))
    assert spec["figure"]["data"], "the first state, drawn before (and without) the runtime"
    names = [c["name"] for c in spec["controls"]]
    assert len(names) == len(set(names)) and names
    static = Path(book.__file__).parent / "static"
    for _, path in book.explorer_scripts(spec)[1:]:
        assert (static / path).is_file(), f"{name}: {path} is missing"
