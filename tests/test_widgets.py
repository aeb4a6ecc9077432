"""Every live explorer reacts to every control, has the website's controls and displays an
output that survives a reopened notebook."""

from __future__ import annotations

import json

import ipywidgets as w
import pytest

from course_attention import explorers, widgets
from course_attention.explorers import core
from course_book import book


def _other_value(control):
    if isinstance(control, (w.Dropdown, w.ToggleButtons, w.RadioButtons, w.SelectionSlider)):
        options = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return next(o for o in options if o != control.value)
    if isinstance(control, w.Checkbox | w.ToggleButton):
        return not control.value
    if isinstance(control, (w.Text, w.Textarea)):
        words = control.value.split()
        if len(words) > 2:  # token ids: one fewer
            return " ".join(words[:-1])
        return control.value[::-1] + control.value[:1]  # a different string of the same kind
    if control.value != control.max:
        return control.max
    return control.min


def _data(explorer) -> str:
    figure = explorer.figure.to_plotly_json()
    layout = figure["layout"]
    return json.dumps([figure["data"], layout.get("shapes"), layout.get("title")], sort_keys=True,
                      default=str)


#: Where each control matters: the mask's window and padding only with a sliding, padded preset,
#: the linear explorer's β and α only with the gated rule (their controls are then moved last to
#: first).
START = {"mask_explorer": {"kind": "sliding window + padding"},
         "linear_explorer": {"rule": "gated"}}


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_every_control_and_button_changes_the_figure(name):
    explorer = widgets.EXPLORERS[name](**START.get(name, {}))
    assert isinstance(explorer, widgets.Explorer)
    assert explorer.figure is not None, "the explorer draws on creation"
    assert explorer.controls, "an explorer needs at least one control"
    order = list(explorer.controls.items())
    for label, control in order[::-1] if name in START else order:
        before = _data(explorer)
        control.value = _other_value(control)
        assert _data(explorer) != before, f"{name}: changing {label!r} left the figure unchanged"
        assert explorer.message == "", (name, label, explorer.message)
    for label, button in explorer.buttons.items():
        if label == "reset":
            continue  # tested with the mask explorer: it undoes edits
        before = _data(explorer)
        button.click()
        assert _data(explorer) != before, f"{name}: pressing {label!r} left the figure unchanged"


def test_public_names_stay_in_widgets():
    for name in widgets.EXPLORERS:
        assert getattr(widgets, name) is widgets.EXPLORERS[name]
        assert name in widgets.__all__
    assert widgets.Explorer is explorers.Explorer


#: Controls that exist in one place only, and the words the notebook's explorer says about it.
ONLY_ONE_PLACE = {
    ("induction_explorer", "checkpoint"): "training-step slider exists only here",
}


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_the_notebook_has_the_website_controls(name):
    """Same controls in both places: the page's (the spec) are the widgets' and buttons; a
    control only one place has is named in the explorer's note."""
    explorer = widgets.EXPLORERS[name]()
    page = [c["name"] for c in explorer.spec()["controls"]]
    notebook = [*explorer.controls, *explorer.buttons]
    for only in set(page) ^ set(notebook):
        assert (name, only) in ONLY_ONE_PLACE, f"{name}: {only!r} exists in one place only"
        assert ONLY_ONE_PLACE[name, only] in explorer.note.value
    labels = {c["name"]: c["label"] for c in explorer.spec()["controls"] if c["type"] == "button"}
    for key, button in explorer.buttons.items():
        if key in labels and key != "toggle":  # the mask's toggle names its cell in both places
            assert button.description == labels[key], (name, key)


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_controls_wrap_keep_their_width_and_full_labels(name):
    """At a 1024 px JupyterLab window, four controls in one row shrank sliders to 12–17 px."""
    explorer = widgets.EXPLORERS[name]()
    row, note = explorer.widget.children[0], explorer.widget.children[-1]
    assert row.layout.flex_flow == "row wrap"
    for label, control in explorer.controls.items():
        assert int(control.layout.min_width.removesuffix("px")) >= 400, label
        assert control.style.description_width == "initial", f"{label}: label would be cut"
    assert "run this cell again" in note.value


@pytest.mark.parametrize("name", sorted(widgets.EXPLORERS))
def test_the_output_bundle_survives_a_reopened_notebook(name, monkeypatch):
    """Three outputs: the saved first-state figure and a note (what a notebook reopened without
    its kernel shows: JupyterLab's widget renderer has no fallback, only "model not found"),
    then the widget view with the website's spec. The live widget's style hides the first two;
    the website draws them as nothing (one explorer per cell)."""
    from IPython import display as ipd

    shown = []
    monkeypatch.setattr(ipd, "display", lambda obj, raw=False: shown.append((obj, raw)))
    explorer = widgets.EXPLORERS[name]()
    explorer._ipython_display_()
    assert all(raw for _, raw in shown)
    (figure, _), (note, _), (live, _) = shown
    uid = explorer.uid
    # 1. the figure: plotly's JSON (JupyterLab), HTML (Colab, plain Jupyter), a marker, text
    assert figure[core.STATIC_MIME] == {"kind": explorer.live["kind"], "uid": uid,
                                        "part": "figure"}
    assert figure[core.PLOTLY_MIME] == json.loads(explorer.figure.to_json())
    assert figure[core.PLOTLY_MIME]["data"]
    assert f'class="ca-static-{uid}"' in figure["text/html"]
    assert "Plotly.newPlot" in figure["text/html"] and "text/plain" in figure
    # 2. the note: the "run this cell again" line, in every text format
    assert note[core.STATIC_MIME]["part"] == "note"
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "Run this cell again" in note[mime], mime
    assert f'class="ca-static-{uid}"' in note["text/html"]
    # 3. the live explorer: the widget view, the website's spec, a text fallback
    assert live[core.WIDGET_MIME]["model_id"] == explorer.widget.model_id
    assert core.STATIC_MIME not in live and "Run this cell again" in live["text/plain"]
    assert live["text/plain"] != note["text/plain"], "an untrusted notebook shows both"
    spec = json.loads(json.dumps(live[core.EXPLORER_MIME], allow_nan=False))
    assert spec["figure"] == figure[core.PLOTLY_MIME], "the same first state in both"
    names = [c["name"] for c in spec["controls"]]
    assert len(names) == len(set(names)) and names
    for _, path in book.explorer_scripts(spec)[1:]:
        assert (book.EXPLORER_SOURCE / path.removeprefix(f"{book.EXPLORER_DIR}/")).is_file()
    # the live widget hides 1 and 2 while it is drawn: the two outputs before it in JupyterLab,
    # their class elsewhere; the rule names this explorer only
    css = explorer.note.value
    assert f"ca-live-{uid}" in explorer.widget._dom_classes
    assert f".jp-OutputArea-child:has(+ .jp-OutputArea-child .ca-live-{uid})" in css
    assert (f".jp-OutputArea-child:has(+ .jp-OutputArea-child + .jp-OutputArea-child "
            f".ca-live-{uid})") in css
    assert f".ca-static-{uid}" in css and "display: none" in css


def test_the_website_renders_the_saved_outputs_as_nothing():
    from types import SimpleNamespace

    assert book.STATIC_MIME == core.STATIC_MIME and book.EXPLORER_MIME == core.EXPLORER_MIME
    ranks = {mime: rank for builder, mime, rank in book.ExplorerMimeRenderer.
             mime_priority_overrides if builder == "html"}
    plotly = {m: r for b, m, r in book.PlotlyMimeRenderer.mime_priority_overrides if b == "html"}
    assert ranks[book.STATIC_MIME] < min(plotly.values()), "outranks the plotly copy"
    from docutils import nodes

    data = SimpleNamespace(mime_type=book.STATIC_MIME, content={"part": "figure"})
    shown = book.ExplorerMimeRenderer.handle_mime(None, data, False)
    # one node that draws nothing, not []: myst-nb drops a mime type that renders no node, and
    # the page then showed the plotly and HTML copies (the explorer drawn twice, issue 23)
    assert len(shown) == 1 and isinstance(shown[0], nodes.comment)


def test_bad_input_shows_a_message_and_keeps_the_last_figure():
    explorer = widgets.induction_explorer()
    before = explorer.figure
    explorer.controls["tokens"].value = "5 x 7"
    assert explorer.message.startswith("\u201cx\u201d is not a token id")
    assert explorer.figure is before and explorer.message_line.layout.display != "none"
    assert "is not a token id" in explorer.message_line.value
    explorer.controls["tokens"].value = "5 6 7"
    assert explorer.message == "" and explorer.figure is not before
    assert explorer.message_line.layout.display == "none"


def test_in_colab_the_saved_outputs_are_html_and_hide_themselves_while_the_explorer_lives(
    monkeypatch,
):
    """Colab draws HTML (no plotly JSON: the Colab-like check counts them) and each output in a
    frame of its own, so a style rule in the widget cannot reach the saved outputs: they ask the
    kernel, through a callback registered for this explorer only, whether it is alive."""
    import sys
    import types

    registered = {}
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(register_callback=registered.__setitem__)
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "test")
    explorer = widgets.scaling_explorer()
    figure, note, live = explorer.outputs()
    assert core.PLOTLY_MIME not in figure and "s.onload = draw" in figure["text/html"]
    name = f"course_attention.explorer_{explorer.uid}"
    assert registered[name]() is True
    for bundle in (figure, note):
        assert f'invokeFunction("{name}"' in bundle["text/html"]
    assert core.WIDGET_MIME in live and core.EXPLORER_MIME in live
    monkeypatch.delitem(sys.modules, "google.colab")  # Colab's versions without its runtime
    figure, note, _ = widgets.scaling_explorer().outputs()
    assert core.PLOTLY_MIME not in figure and "invokeFunction" not in note["text/html"]


@pytest.mark.lab
def test_a_reopened_notebook_shows_the_saved_figure_in_jupyterlab(tmp_path):
    """In a real JupyterLab 4 (ipywidgets 8, ``.venv-lab``): a notebook saved with an explorer's
    output and no widget state (JupyterLab's default), reopened, shows the saved figure and the
    note above "model not found"; after Run All the live explorer shows and the saved outputs
    are hidden. Run by ``make lab-check`` (marker ``lab``)."""
    import os
    import socket
    import subprocess
    import time
    from pathlib import Path

    import nbformat
    from nbclient import NotebookClient

    from _notebooks import SlicedKernelManager

    lab = Path(__file__).resolve().parents[1] / ".venv-lab" / "bin" / "jupyter"
    if not lab.exists():
        pytest.fail("no JupyterLab in .venv-lab: run `make lab-check` (it installs it)")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language":
                                                           "python", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_code_cell("from course_attention import widgets\n"
                                          "widgets.scaling_explorer()")]
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   kernel_manager_class=SlicedKernelManager).execute()
    nb.metadata.pop("widgets", None)  # JupyterLab saves no widget state unless asked to
    (folder := tmp_path / "nb").mkdir()
    nbformat.write(nb, folder / "saved.ipynb")
    env = {**os.environ, **{f"JUPYTER_{k}_DIR": str(tmp_path / k) for k in ("CONFIG", "DATA",
                                                                              "RUNTIME")}}
    subprocess.run([str(lab), "trust", str(folder / "saved.ipynb")], env=env, check=True,
                   capture_output=True)  # the reader's own notebook: JupyterLab signed it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [str(lab), "lab", "--no-browser", "--allow-root", f"--port={port}", "--ServerApp.token=t",
         f"--ServerApp.root_dir={folder}", "--expose-app-in-browser"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)
    shown = """() => Array.from(document.querySelectorAll('.jp-Cell-outputArea > *')).map(o => ({
      visible: getComputedStyle(o).display !== 'none', plot: !!o.querySelector('.js-plotly-plot'),
      live: !!o.querySelector('.ca-explorer-live'), text: o.innerText}))"""
    try:
        for _ in range(180):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        from _site import browser as chromium

        with chromium() as browser:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/saved.ipynb?token=t")
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.jp-Cell-outputArea > *')).some("
                "o => o.innerText.startsWith('Error displaying widget'))", timeout=120_000)
            outputs = [o for o in page.evaluate(shown) if o["text"].strip() or o["plot"]]
            figure, note, widget = outputs[-3:]
            assert figure["visible"] and figure["plot"], "the saved first state is drawn"
            assert note["visible"] and "Run this cell again" in note["text"]
            assert widget["text"].strip() == "Error displaying widget: model not found"
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_selector(".ca-explorer-live", timeout=120_000)
            page.wait_for_timeout(1000)
            outputs = page.evaluate(shown)
            assert [o["visible"] for o in outputs if not o["live"]][:2] == [False, False]
            assert [o for o in outputs if o["live"]][0]["visible"]
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
