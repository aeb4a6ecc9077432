"""Every reader notebook, opened and run in a real JupyterLab, driven in headless Chromium.

`make lab-check` runs this (marker ``lab``, three xdist workers): JupyterLab comes from
``.venv-lab`` (as for ``make lab``), serves a copy of ``notebooks/`` and runs each notebook with
*Run All Cells*. On the rendered page the test asserts: no raw MyST; every glued value the reader
edition writes in, shown in the text; every cell ran without an error; every explorer shows the
website's controls and redraws when they move. Each worker's JupyterLab, when it stops, asserts
that every training reused the build's result (``course_attention.reuse``): no new result was
saved. It writes what it saw to ``_build/lab-checks.json`` (one file per xdist worker:
``lab-checks-gw0.json`` …).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from _notebooks import ROOT, notebooks
from _site import browser
from course_attention import reuse
from course_book import reader

pytestmark = pytest.mark.lab
LAB = ROOT / ".venv-lab" / "bin" / "jupyter"
EXPLORER_MIME = "application/vnd.course-attention.explorer+json"
CHAPTERS = notebooks()
RESULTS: dict[str, dict] = {}
RAW = [r"\{glue", r"\{ref\}", r"\{cite", r"\{numref\}", r"\{doc\}", r"\{term\}", ":::", r"```\{",
       r"(?m)^\([^)\s]+\)=\s*$"]
#: What every explorer control is in JupyterLab (ipywidgets 8's classes).
CONTROLS = (".widget-slider, .widget-dropdown, .widget-checkbox, .widget-toggle-button, "
            ".widget-button, .widget-text, .widget-toggle-buttons, .widget-textarea")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    if not LAB.exists():
        pytest.fail("no JupyterLab in .venv-lab: run `make lab-check` (it installs it)")
    base = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", base / "notebooks")
    settings = base / "settings" / "@jupyterlab"
    (settings / "notebook-extension").mkdir(parents=True)
    (settings / "apputils-extension").mkdir(parents=True)
    # every cell in the page (no virtual scrolling), no news pop-up
    (settings / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    port, token = _free_port(), "course-attention-lab-check"
    # Kernels talk to the server over Unix sockets in a short folder of their own, not TCP: a
    # TCP port picked for a kernel could be taken by one of the many connections the workers
    # open before the kernel bound it, and the kernel then died on every restart ("Address
    # already in use"; it happened once, to chapter 8, in a fresh-clone run of `make test`)
    runtime = Path(tempfile.mkdtemp(prefix="lab-"))  # a socket's path must stay < 108 bytes
    # The workers share the cores: each kernel computes on one thread (torch, OpenBLAS), as the
    # strict build did, and reuses the models the build trained (course_attention.reuse).
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(base / "config"),
           "JUPYTER_RUNTIME_DIR": str(runtime), "JUPYTER_DATA_DIR": str(base / "data"),
           "OMP_NUM_THREADS": "1", reuse.REUSE: str(ROOT / "_build" / "trained")}
    log = (base / "lab.log").open("w")
    trained = ROOT / "_build" / "trained"
    saved_before = {f.name for f in trained.iterdir()} if trained.is_dir() else set()
    server = subprocess.Popen(
        [str(LAB), "lab", "--no-browser", "--allow-root", f"--port={port}",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={base / 'notebooks'}",
         f"--LabApp.user_settings_dir={base / 'settings'}",
         f"--LabApp.workspaces_dir={base / 'workspaces'}", "--expose-app-in-browser",
         "--KernelManager.transport=ipc"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail(f"JupyterLab did not start: {(base / 'lab.log').read_text()[-2000:]}")
    yield f"http://127.0.0.1:{port}", token
    server.terminate()
    server.wait(timeout=30)
    log.close()
    shutil.rmtree(runtime, ignore_errors=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # make lab-check runs two workers
    out = ROOT / "_build" / f"lab-checks{'-' + worker if worker else ''}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(RESULTS, indent=1, ensure_ascii=False))
    # every training the build saved was reused: a miss trains again here and saves a new file
    # (a result whose key changed: another package source, kernel or thread count)
    saved_now = {f.name for f in trained.iterdir()} if trained.is_dir() else set()
    assert saved_now == saved_before, (
        f"the JupyterLab check trained again instead of reusing the build's trainings: "
        f"{len(saved_now - saved_before)} new result(s) in {trained}")


@pytest.fixture(scope="session")
def chromium():
    with browser() as chromium:
        yield chromium


def expected_glued_texts(path) -> list[str]:
    """The glued values the reader edition writes into its text, in order (the build's digits,
    whichever computer built it: the staleness check compares them by presence)."""
    edition = nbformat.read(ROOT / "notebooks" / path.name, as_version=4)
    return [text for cell in edition.cells if cell.cell_type == "markdown"
            for text in reader.glued_texts(cell.source)]


def _explorer_specs(doc: str) -> list[dict]:
    built = nbformat.read(ROOT / "_build" / "jupyter_execute" / f"{doc}.ipynb", as_version=4)
    return [o["data"][EXPLORER_MIME] for c in built.cells for o in c.get("outputs", [])
            if EXPLORER_MIME in o.get("data", {})]


RUN_ALL = """async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  const ok = await app.commands.execute('notebook:run-all-cells');  // resolves when all ran
  const cells = [...panel.content.model.cells];
  const code = cells.filter(c => c.type === 'code');
  return {
    ok,
    not_run: code.filter(c => c.executionCount === null).length,
    errors: code.flatMap(c => c.outputs.toJSON())
      .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
  };
}"""

PLOT_STATE = """(root) => [...root.querySelectorAll('.js-plotly-plot')].map(gd =>
  JSON.stringify((gd.data || []).map(t => [t.x, t.y, t.z, t.text, t.visible]))
    + JSON.stringify(((gd.layout || {}).annotations || []).map(a => a.text))
    + JSON.stringify((gd.layout || {}).title)).join('|') + '#' +
  [...root.querySelectorAll('.widget-html, .widget-label, .widget-output pre, .widget-button')]
    .map(e => e.textContent).join('|')"""


def _drive(page, root, control) -> str:
    """Move one control the way a reader would; return what kind of control it was."""
    classes = control.get_attribute("class") or ""
    if "widget-slider" in classes:
        handle = control.query_selector(".noUi-handle, .ui-slider-handle")
        handle.focus()
        now, top = (handle.get_attribute(a) for a in ("aria-valuenow", "aria-valuemax"))
        key = "ArrowLeft" if now is not None and top is not None and float(now) >= float(top) \
            else "ArrowRight"  # a slider at its end moves back
        page.keyboard.press(key)
        page.keyboard.press(key)
        return "slider"
    if "widget-dropdown" in classes:
        select = control.query_selector("select")
        options = select.eval_on_selector_all("option", "os => os.map(o => o.value)")
        current = select.input_value()
        select.select_option(next(o for o in options if o != current))
        return "dropdown"
    if "widget-checkbox" in classes:
        control.query_selector("input").click()
        return "checkbox"
    if "widget-toggle-buttons" in classes:
        buttons = control.query_selector_all("button")
        buttons[-1 if "mod-active" in (buttons[0].get_attribute("class") or "") else 0].click()
        return "toggle-buttons"
    if "widget-text" in classes or "widget-textarea" in classes:
        box = control.query_selector("input, textarea")
        value = box.input_value()
        box.fill(value[:-1] if len(value) > 1 else value + "1")
        if "widget-textarea" in classes:  # Enter is a new line: the reader clicks away
            box.evaluate("e => e.blur()")
        else:
            box.press("Enter")
        return "text"
    control.click()
    return "button"


def _changed(page, root, before: str, timeout: int) -> bool:
    try:
        page.wait_for_function(f"([root, before]) => ({PLOT_STATE})(root) !== before",
                               arg=[root, before], timeout=timeout, polling=200)
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: no redraw
        return False
    return True


def _settled(page, root, polls: int = 20) -> None:
    """Wait until the figure stops changing (a redraw can land in parts), so that the next
    control starts from the finished figure: otherwise "÷ 2" then "× 2", which lands back on
    the first figure, reads as "no redraw"."""
    state = root.evaluate(PLOT_STATE)
    for _ in range(polls):
        page.wait_for_timeout(250)
        now = root.evaluate(PLOT_STATE)
        if now == state:
            return
        state = now


def _redraws(page, root, control, controls) -> str:
    """Drive ``control``; if the figure stays, try again under each option of the explorer's
    first menu (a control may act only under some presets, e.g. a sliding window's width), the
    options that name the control's label first; then once more, waiting longer."""
    _settled(page, root)
    before = root.evaluate(PLOT_STATE)
    kind = _drive(page, root, control)
    if _changed(page, root, before, 5_000):
        _settled(page, root)
        return kind
    menu = next((c for c in controls if "widget-dropdown" in (c.get_attribute("class") or "")
                 and c != control), None)
    if menu is not None:
        label = control.query_selector(".widget-label")
        words = [w for w in re.findall(r"\w+", label.text_content().lower() if label else "")
                 if len(w) > 2]
        select = menu.query_selector("select")
        options = select.eval_on_selector_all("option", "os => os.map(o => o.value)")
        for option in sorted(options, key=lambda o: not any(w in o.lower() for w in words)):
            select.select_option(option)
            _settled(page, root)
            before = root.evaluate(PLOT_STATE)
            _drive(page, root, control)
            if _changed(page, root, before, 5_000):
                return f"{kind} (under {option!r})"
    before = root.evaluate(PLOT_STATE)  # a slow kernel: one more try, waiting 15 s
    _drive(page, root, control)
    if _changed(page, root, before, 15_000):
        _settled(page, root)
        return f"{kind} (slow)"
    return f"{kind}: no redraw"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_reader_notebook_runs_and_reads_like_the_website(path, lab, chromium):
    url, token = lab
    doc = f"chapters/{path.stem}"
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    started = time.perf_counter()
    page.goto(f"{url}/lab/tree/{path.name}?reset&token={token}")  # a fresh workspace
    page.wait_for_function(
        "window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')", timeout=120_000)
    ran = page.evaluate(RUN_ALL)
    panel = page.query_selector(".jp-NotebookPanel:not(.lm-mod-hidden)")  # this notebook
    assert not ran["errors"], f"{path.name}: {ran['errors'][:3]}"
    assert ran["ok"] and ran["not_run"] == 0, f"{path.name}: {ran}"
    page.wait_for_timeout(1000)  # the last outputs render
    seen = {"seconds": round(time.perf_counter() - started, 1)}
    outputs = panel.eval_on_selector_all(".jp-OutputArea-output",
                                         "es => es.map(e => e.textContent)")
    errors = [o for o in outputs if "Traceback (most recent call last)" in o
              or "Error displaying widget" in o]
    assert not errors, f"{path.name}: {errors[0][-1500:]}"

    markdown = "\n".join(panel.eval_on_selector_all(
        ".jp-MarkdownCell .jp-RenderedMarkdown", "es => es.map(e => e.textContent)"))
    raw = [m.group(0) for pattern in RAW for m in re.finditer(pattern, markdown)]
    assert not raw, f"{path.name}: raw MyST on the page: {raw[:5]}"
    expected = expected_glued_texts(path)
    normalised = markdown.replace("\u2212", "-")
    missing = [t for t in expected if t not in markdown and t not in normalised]
    assert not missing, f"{path.name}: glued values missing from the page: {missing[:5]}"
    seen.update(raw_myst=len(raw), glued_values=len(expected))

    specs = _explorer_specs(doc)
    roots = panel.query_selector_all(".ca-explorer-live")  # every live explorer of the notebook
    assert len(roots) >= len(specs), f"{path.name}: {len(specs)} explorers, {len(roots)} drawn"
    seen["explorers"] = []
    for spec, root in zip(specs, roots, strict=False):
        controls = [c for c in root.query_selector_all(CONTROLS) if c.is_visible()]
        website = [c for c in spec["controls"] if c.get("type") != "hidden"]
        assert len(controls) >= len(website), (
            f"{path.name} {spec['kind']}: {len(website)} controls on the website "
            f"({[c.get('label') for c in website]}), {len(controls)} in JupyterLab")
        redrew = [_redraws(page, root, control, controls) for control in controls[:8]]
        seen["explorers"].append({"kind": spec["kind"], "controls": len(controls),
                                  "website_controls": len(website), "driven": redrew})
        assert all("no redraw" not in r for r in redrew), (
            f"{path.name} {spec['kind']}: controls that did not redraw: {redrew}")
    RESULTS[path.stem] = seen
    page.close()
