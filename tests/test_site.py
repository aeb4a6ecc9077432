"""Browser check of the built site: figures draw, sliders change data, nothing leaves 127.0.0.1.

``check_english_page`` runs on every page where ``test_figure_text`` loads it at 1280 px (one
load per page and width serves both). Needs ``_build/html`` (``make strict-build``) and Debian's
chromium; ``make test`` provides both.
"""

from __future__ import annotations

import pytest
import yaml

from _site import (
    FIGURES_JS,
    KNOWN_CONSOLE_ERRORS,
    SITE,
    assert_shows_nothing_meant_for_a_notebook,
    wait_for_figures,
)

pytestmark = pytest.mark.browser


def _slug() -> str:
    config = yaml.safe_load((SITE.parents[1] / "_config.yml").read_text())
    return config["repository"]["url"].removeprefix("https://github.com/")


def _move_slider(page, index):
    """Click the far end of figure ``index``'s slider rail (the end that is not active)."""
    rail = page.locator(".js-plotly-plot").nth(index).locator(".slider-rail-touch-rect").first
    rail.scroll_into_view_if_needed()
    box = rail.bounding_box()
    active = page.evaluate(
        "i => document.querySelectorAll('.js-plotly-plot')[i].layout.sliders[0].active || 0",
        index,
    )
    x = box["width"] * (0.03 if active else 0.97)
    rail.click(position={"x": x, "y": box["height"] / 2})


def check_english_page(page, path: str, outside: list[str], errors: list[str]) -> None:
    """A loaded English page (1280 px): every figure drew and has a text alternative, each
    figure's slider changes its data, nothing meant for a notebook shows, the reader editions
    are linked, MathJax typeset, no request left the site, no console error. Moves sliders:
    call it after any check that reads the page as loaded."""
    html = (SITE / path).read_text()
    expected = html.count('class="plotly-graph-div"')
    wait_for_figures(page, expected)
    labels = page.eval_on_selector_all(
        "figure.plotly-figure", "els => els.map(e => e.getAttribute('aria-label'))"
    )
    assert len(labels) == expected and all(labels), f"{path}: a figure lacks a text alternative"
    figures = page.evaluate(FIGURES_JS)
    assert len(figures) == expected, f"{path}: {len(figures)} of {expected} figures drew"
    for fig in figures:
        assert fig["drawn"] and fig["traces"] > 0, f"{path}: figure {fig['id']} is empty"
    assert_shows_nothing_meant_for_a_notebook(page, path)
    for i, fig in enumerate(figures):
        if not fig["sliders"]:
            continue
        _move_slider(page, i)
        page.wait_for_function(
            "([i, before]) => JSON.stringify("
            "document.querySelectorAll('.js-plotly-plot')[i].data) !== before",
            arg=[i, fig["data"]],
            timeout=5000,
        )
    if path.startswith("chapters/0") and not path.startswith("chapters/00"):
        live = html.count('class="plotly-figure ca-explorer"')
        assert live or any(f["sliders"] for f in figures), f"{path}: nothing to move"
        notebook = "notebooks/" + path.removesuffix(".html").split("/")[-1] + ".ipynb"  # reader
        assert f"colab.research.google.com/github/{_slug()}/blob/main/{notebook}" in html
        assert f"mybinder.org/v2/gh/{_slug()}/main?urlpath=lab/tree/{notebook}" in html
        download = f"_static/{notebook}"
        assert f'href="../{download}"' in html and (SITE / download).is_file(), path
    if 'class="math' in html:
        page.wait_for_selector("mjx-container", timeout=10000)
    assert "widget-state+json" not in html, f"{path}: embeds ipywidgets state it cannot use"
    assert not outside, f"{path}: requests left the site: {outside}"
    unexpected = [e for e in errors if not any(k in e for k in KNOWN_CONSOLE_ERRORS)]
    assert not unexpected, f"{path}: console errors: {unexpected}"


def test_plotly_js_is_served_once_from_the_site():
    assert (SITE / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    assert (SITE / "_static" / "mathjax" / "tex-mml-chtml.js").exists()


def test_the_colour_mode_icons_are_decoration_in_the_html():
    """The theme's colour-mode icons carry titles ("Light", "System Settings") that are not in the
    button's name "Color mode" (axe-core: label-content-name-mismatch); the build marks them as
    decoration in every page, so no reader and no check meets them before a script runs."""
    import re

    icon = re.compile(r'<i class="theme-switch[^>]*>')
    icons = [(p, i) for p in sorted(SITE.rglob("*.html")) for i in icon.findall(p.read_text())]
    assert len({p for p, _ in icons}) > 20, "the theme's colour-mode button is gone: check axe"
    bad = [(p.name, i) for p, i in icons if "title" in i or "aria-hidden" not in i]
    assert not bad, bad[:3]
