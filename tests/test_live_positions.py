"""Chapter 10's sinusoidal-positions explorer (``positions.js``) computes what numpy_ref
computes, in Chromium."""

from __future__ import annotations

import numpy as np
import pytest

from _explorers import (
    open_page,
    pairs,
    plotted,
    set_control,
    spec,
    standalone,
    thin,
    wait_live,
)
from course_attention import numpy_ref, widgets

pytestmark = pytest.mark.browser


def _options(page, i, name):
    control = next(c for c in spec(page, i)["controls"] if c.get("id", c["name"]) == name)
    return [o["value"] for o in control["options"]]


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``positions``) over positions, widths and bases; assert the
    plotted vector and dot products equal numpy_ref's to 1e-12. Returns the values compared.
    With ``n``: every width and base at least once, the first and last position."""
    seq_len = spec(page, i)["data"]["seq_len"]
    compared = 0
    for d_model, base in pairs(_options(page, i, "d_model"), _options(page, i, "base"), n):
        set_control(page, i, "d_model", d_model)
        set_control(page, i, "base", base)
        table = numpy_ref.sinusoidal_positions(seq_len, d_model, base)  # (seq_len, d_model)
        for position in thin(sorted({0, 1, 5, seq_len // 2, seq_len - 1}), n and 2):
            set_control(page, i, "position", position)
            bars, dots = plotted(page, i)[:2]
            assert bars["x"] == list(range(d_model)) and dots["x"] == list(range(seq_len))
            np.testing.assert_allclose(bars["y"], table[position], rtol=0, atol=1e-12)
            np.testing.assert_allclose(dots["y"], table @ table[position], rtol=0, atol=1e-12)
            compared += d_model + seq_len
    return compared


def test_positions_explorer_equals_numpy_and_answers_the_keyboard(tmp_path):
    from _site import browser, serve

    explorer = widgets.positions_explorer(position=5, d_model=32)
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        first = plotted(page)  # the page's first state is the notebook's figure (rounded)
        for mine, theirs in zip(first, explorer.figure.data, strict=True):
            np.testing.assert_allclose(mine["y"], theirs.y, atol=1e-4)
        assert check(page, 0) == 12 * 5 * 48 + 5 * 3 * (16 + 32 + 64 + 128)
        set_control(page, 0, "position", 20)
        page.focus("input[name=position]")  # keyboard: an arrow key moves the slider
        before = plotted(page)[0]["y"]
        page.keyboard.press("ArrowRight")
        assert plotted(page)[0]["y"] != before
        assert not outside and not errors, errors
