"""Chapter 11's tiled-pass explorer (``tiling.js``) runs the pass FlashAttention runs
(``efficient.flash_attention_steps``), in Chromium."""

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
from course_attention import viz, widgets

pytestmark = pytest.mark.browser


def _control(page, i, name):
    return next(c for c in spec(page, i)["controls"] if c.get("id", c["name"]) == name)


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``tiling``) over lengths, blocks and progress; assert the
    score states equal ``viz.tiling_states``' and each query's distance from its output equals
    the package's to 1e-12. Returns the values compared. With ``n``: every length and block at
    least once, three progress settings."""
    T_control = _control(page, i, "seq_len")
    lengths = range(T_control["min"], T_control["max"] + 1, T_control["step"])
    blocks = [o["value"] for o in _control(page, i, "block_size")["options"]]
    compared = 0
    for T, block in pairs(list(lengths), blocks, n):
        set_control(page, i, "seq_len", T)
        set_control(page, i, "block_size", block)
        grids, gaps = viz.tiling_states(T, block)  # one entry per tile, by the package's pass
        for progress in thin([0, 1, 25, 50, 77, 100], n and 3):
            set_control(page, i, "progress", progress)
            step = max(1, round(progress / 100 * len(grids)))  # as widgets.tiling_explorer
            scores, bars = plotted(page, i)[:2]
            assert np.array_equal(scores["z"], grids[step - 1])
            gap = gaps[step - 1]
            assert [v is None for v in bars["y"]] == np.isnan(gap).tolist()
            got = np.array([np.nan if v is None else v for v in bars["y"]])
            np.testing.assert_allclose(got, gap, rtol=0, atol=1e-12)
            compared += T * T + T
    return compared


def test_tiling_explorer_runs_the_package_pass_and_answers_the_keyboard(tmp_path):
    from _site import browser, serve

    explorer = widgets.tiling_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        first = plotted(page)
        assert first[0]["z"] == [list(row) for row in explorer.figure.data[0].z]
        np.testing.assert_allclose(  # the notebook's figure is rounded to 4 digits
            np.array(first[1]["y"], dtype=float), np.array(explorer.figure.data[1].y, dtype=float),
            atol=1e-4,
        )
        lengths = range(8, 33, 4)
        assert check(page, 0) == 4 * 6 * sum(T * T + T for T in lengths)
        title = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        assert title == "T = 32, block 8: tile 16 of 16"
        set_control(page, 0, "seq_len", 12)  # 9 tiles: 50 % is tile 4.5, Python rounds to 4
        set_control(page, 0, "block_size", 4)
        set_control(page, 0, "progress", 50)
        title = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        assert title == "T = 12, block 4: tile 4 of 9"
        page.focus("input[name=progress]")
        before = plotted(page)[0]["z"]
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert plotted(page)[0]["z"] != before
        set_control(page, 0, "seq_len", 32)  # the most tiles: 256
        set_control(page, 0, "block_size", 2)
        assert not outside and not errors, errors
