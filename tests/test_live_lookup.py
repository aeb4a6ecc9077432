"""Chapter 1's live explorer (``lookup.js``) computes what numpy_ref computes, in Chromium."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from _explorers import open_page, plotted, set_control, standalone, wait_live
from course_attention import numpy_ref, toy, viz, widgets

pytestmark = pytest.mark.browser


def check(page, i, root=None) -> int:
    """Drive explorer ``i`` (kind ``lookup``) over a grid of queries and temperatures; assert
    the plotted weights and value equal numpy_ref's to 1e-12, and the query's label sits where
    the Python figure puts it. Returns the values compared."""
    keys = list(viz.LOOKUP_KEYS)
    K = toy.word_matrix(keys)  # (3, 2)
    values = np.array([toy.FRUIT_DICT[k] for k in keys])
    compared = 0
    for qx, qy, T in itertools.product((-1.1, 0.0, 0.45), (-0.9, 0.3, 1.1), (0.05, 0.35, 5.0)):
        for name, value in (("qx", qx), ("qy", qy), ("temperature", T)):
            set_control(page, i, name, value)
        data = plotted(page, i)
        weights = numpy_ref.softmax(K @ np.array([qx, qy]), temperature=T)  # (3,)
        np.testing.assert_allclose(data[4]["y"], weights, rtol=0, atol=1e-12)
        np.testing.assert_allclose(data[5]["y"], [weights @ values], rtol=1e-12, atol=1e-12)
        assert data[3]["x"] == [qx] and data[3]["y"] == [qy]
        # the labels are placed as the Python figure places them: the keys' clear of the
        # query's arrow, the query's clear of the keys'
        assert data[1]["textposition"] == viz.lookup.key_label_positions(keys, [qx, qy])
        assert data[3]["textposition"] == [viz.lookup.query_label_position([qx, qy], keys)]
        compared += len(weights) + 1
    return compared


def test_lookup_explorer_equals_numpy_and_follows_a_drag(tmp_path):
    from _site import browser, serve

    standalone(widgets.soft_lookup_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        assert check(page, 0) == 27 * 4
        before = plotted(page)[4]["y"]
        box = page.locator(".plotly-graph-div").first.bounding_box()
        page.mouse.move(box["x"] + 100, box["y"] + 200)
        page.mouse.down()
        page.mouse.move(box["x"] + 130, box["y"] + 140)
        page.mouse.up()
        assert plotted(page)[4]["y"] != before, "dragging on the word plane moves the query"
        page.focus("input[name=temperature]")  # keyboard: an arrow key moves a slider
        before = plotted(page)[4]["y"]
        page.keyboard.press("ArrowLeft")
        assert plotted(page)[4]["y"] != before
        assert not outside and not errors, errors
