"""Serve the built site on 127.0.0.1 and drive it in headless Chromium (tests and benchmarks)."""

from __future__ import annotations

import atexit
import contextlib
import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from _notebooks import ROOT, toc_files

SITE = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: The two harmless console errors every Jupyter Book 1 page logs (DESIGN.md).
KNOWN_CONSOLE_ERRORS = ("THEBE_JS_URL", "invalid theme mode")


def pages() -> list[str]:
    """Site-relative URLs of every page in the table of contents."""
    return [f"{f}.html" for f in toc_files()]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a page closed while it was still loading (benchmarks do this): not an error


@contextlib.contextmanager
def serve(root: Path = SITE) -> Iterator[str]:
    """Serve ``root`` on a free port of 127.0.0.1; yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


_PLAYWRIGHT: list = []


def _playwright() -> object:
    """This process's one playwright driver: its sync API cannot be started twice at once, and
    one pytest worker runs the site's, the explorers' and JupyterLab's checks side by side."""
    if not _PLAYWRIGHT:
        from playwright.sync_api import sync_playwright

        _PLAYWRIGHT.append(sync_playwright().start())
        atexit.register(_PLAYWRIGHT[0].stop)
    return _PLAYWRIGHT[0]


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """A headless Debian Chromium driven by playwright (never a downloaded browser)."""
    chromium = _playwright().chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        yield chromium
    finally:
        chromium.close()


# JavaScript run in the page: the plotted data of every figure, and where its slider rail is.
FIGURES_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => ({
    id: gd.id,
    traces: (gd._fullData || []).length,
    drawn: !!gd.querySelector('.main-svg'),
    sliders: ((gd.layout || {}).sliders || []).length,
    data: JSON.stringify(gd.data),
}))"""


#: Every figure's titles settled: the site wraps them again after each draw, by the width they
#: are drawn at (``course_book/static/course_titles.js``), and marks a figure "done" once its
#: layout holds them (true where the page has no such script: a standalone explorer).
TITLES_SETTLED_JS = (
    "() => !window.CourseTitles || Array.from(document.querySelectorAll('.js-plotly-plot'))"
    ".every(gd => gd.getAttribute('data-ca-titles') === 'done')"
)
#: Every plotly figure of the page is drawn (plotly has laid it out and made its SVG).
FIGURES_DRAWN_JS = (
    "n => { const g = Array.from(document.querySelectorAll('.plotly-graph-div'));"
    " return g.length >= n"
    " && g.every(gd => gd._fullLayout && gd.querySelector('.main-svg'))"
    " && (" + TITLES_SETTLED_JS + ")(); }"
)


def wait_for_figures(page: object, expected: int, timeout: int = 10000) -> None:
    """Wait until ``expected`` plotly figures are drawn on ``page`` (a playwright page), their
    titles wrapped for the width they are drawn at."""
    page.wait_for_function(FIGURES_DRAWN_JS, arg=expected, timeout=timeout)


def wait_for_titles(page: object, timeout: int = 5000) -> None:
    """Wait until every figure's titles are wrapped for its width (after a redraw)."""
    page.wait_for_function(TITLES_SETTLED_JS, timeout=timeout)


#: What a page shows of notebook-only outputs: an element of an explorer's saved first state
#: (``ca-static-<id>``), the notes that say "run this cell", and every figure's data, to find
#: one drawn twice (an explorer's saved figure beside the live one).
NOTEBOOK_ONLY_JS = """() => ({
  static: document.querySelectorAll('[class*="ca-static-"]').length,
  text: document.querySelector('article') ? document.querySelector('article').innerText : '',
  figures: Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd =>
    JSON.stringify([gd.data, (gd.layout.title || {}).text || null])),
})"""


def notebook_only_texts() -> list[str]:
    """The explorer notes meant for a notebook (English and Chinese): never on a web page."""
    from course_attention.explorers import core
    from course_attention.i18n import _, using

    texts = []
    for lang in ("en", "zh"):
        with using(lang):
            texts += [_(core.SAVED_NOTE), _(core.REOPEN_NOTE)]
    return texts


def assert_shows_nothing_meant_for_a_notebook(page: object, path: str) -> None:
    """A web page draws each explorer once and shows no note or element meant for a notebook."""
    seen = page.evaluate(NOTEBOOK_ONLY_JS)
    assert not seen["static"], f"{path}: {seen['static']} elements of a saved first state"
    notes = [t[:40] for t in notebook_only_texts() if t in seen["text"]]
    assert not notes, f"{path}: notes meant for a notebook: {notes}"
    twice = {f for f in seen["figures"] if seen["figures"].count(f) > 1}
    assert not twice, f"{path}: {len(twice)} figure(s) drawn twice"


#: axe-core (from npm: ``make _vendor/axe.min.js``), injected into a page by :func:`axe_violations`.
AXE = ROOT / "_vendor" / "axe.min.js"
_AXE_RUN = """() => axe.run(document, {runOnly: {type: 'tag',
    values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']}, resultTypes: ['violations']})
  .then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))"""


def axe_violations(page: object) -> list[dict]:
    """axe-core's violations of WCAG 2.x A/AA on a loaded playwright ``page`` (its scripts ran):
    each ``{id, impact, help, nodes}`` (the first five nodes' selectors)."""
    assert AXE.exists(), f"{AXE} is missing: `make _vendor/axe.min.js` (npm pack axe-core)"
    page.add_script_tag(path=str(AXE))
    return page.evaluate(_AXE_RUN)
