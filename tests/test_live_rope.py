"""Chapter 10's RoPE explorer (``rope.js``) computes what the package computes, in Chromium."""

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
from course_attention import numpy_ref, positions, widgets
from course_attention.explorers.rope import ROPE_SAMPLES

pytestmark = pytest.mark.browser


def _options(page, i, name):
    control = next(c for c in spec(page, i)["controls"] if c.get("id", c["name"]) == name)
    return [o["value"] for o in control["options"]]


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``rope``) over offsets, widths and bases; assert each pair's
    cos(offset · θ_i) and the score curves equal the package's to 1e-12. Returns the values
    compared. With ``n``: every width and base at least once, three offsets."""
    max_offset = spec(page, i)["data"]["max_offset"]
    offsets = np.arange(max_offset + 1)
    compared = 0
    for d, base in pairs(_options(page, i, "d"), _options(page, i, "base"), n):
        set_control(page, i, "d", d)
        set_control(page, i, "base", base)
        theta = numpy_ref.rotary_frequencies(d, base)  # (d/2,)
        scores = positions.rope_score_by_offset(d, offsets, ROPE_SAMPLES, base)  # (n, offsets)
        mean, one = scores.mean(axis=0), scores[0]
        for offset in thin(sorted({0, 1, 3, 6, 17, 44, max_offset}), n and 3):
            set_control(page, i, "offset", offset)
            bars, mean_curve, one_curve, marker = plotted(page, i)[:4]
            np.testing.assert_allclose(bars["y"], np.cos(offset * theta), rtol=0, atol=1e-12)
            np.testing.assert_allclose(mean_curve["y"], mean, rtol=0, atol=1e-12)
            np.testing.assert_allclose(one_curve["y"], one, rtol=0, atol=1e-12)
            assert marker["x"] == [offset]
            np.testing.assert_allclose(marker["y"], [mean[offset]], rtol=0, atol=1e-12)
            compared += d // 2 + 2 * len(offsets) + 1
    return compared


def test_rope_explorer_equals_the_package_and_answers_the_keyboard(tmp_path):
    from _site import browser, serve

    explorer = widgets.rope_explorer(offset=8, d=64)
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        first = plotted(page)  # the page's first state is the notebook's figure (rounded)
        for mine, theirs in zip(first, explorer.figure.data, strict=True):
            np.testing.assert_allclose(mine["y"], theirs.y, atol=1e-3)
        assert check(page, 0) == 7 * (3 * (8 + 16 + 32 + 64) + 12 * (2 * 65 + 1))
        page.focus("input[name=offset]")
        before = plotted(page)[0]["y"]
        page.keyboard.press("ArrowLeft")
        assert plotted(page)[0]["y"] != before
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors
