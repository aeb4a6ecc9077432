"""Chapter 5's live explorer (``heads.js``) computes what numpy_ref computes, in Chromium."""

from __future__ import annotations

import numpy as np
import pytest

from _explorers import (
    assert_fits_375,
    controls,
    message,
    open_page,
    plotted,
    set_control,
    spec,
    standalone,
    wait_live,
)
from course_attention import numpy_ref, toy, widgets
from course_attention.explorers import heads as live


def _reference(projections: str, n_heads: int, seed: int) -> np.ndarray:
    X, W = live.inputs(projections, seed)  # (T, d), 4 × (d, d)
    return numpy_ref.multi_head_attention(X[None], X[None], *W, n_heads)[1][0]  # (h, T, T)



def check(page, i, root=None) -> int:
    """Drive explorer ``i`` (kind ``heads``) over both projections × every number of heads ×
    every head; assert the plotted weights equal numpy_ref's to 1e-12. Returns the number of
    weights compared."""
    seed = spec(page, i)["data"]["seed"]
    compared = 0
    for projections in live.PROJECTIONS:
        set_control(page, i, "projections", projections)
        for n_heads in live.HEAD_COUNTS:
            set_control(page, i, "n_heads", n_heads)
            weights = _reference(projections, n_heads, seed)
            for head in range(n_heads):
                assert set_control(page, i, "head", head) == head
                z = np.array(plotted(page, i)[0]["z"])
                np.testing.assert_allclose(z, weights[head], rtol=0, atol=1e-12)
                compared += z.size
            assert message(page, i) == ""
    return compared


@pytest.mark.browser
def test_heads_explorer_equals_numpy_and_keeps_the_head_in_range(tmp_path):
    from _site import browser, serve

    standalone(widgets.multi_head_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        T = len(toy.two_head_example().tokens)
        assert check(page, 0) == len(live.PROJECTIONS) * sum(live.HEAD_COUNTS) * T * T
        # fewer heads: the head slider shrinks with them and the map is the last head's
        set_control(page, 0, "projections", "built")
        set_control(page, 0, "n_heads", 8)
        set_control(page, 0, "head", 7)
        set_control(page, 0, "n_heads", 2)
        assert controls(page)["head"] == 1
        np.testing.assert_allclose(plotted(page)[0]["z"], _reference("built", 2, 0)[1], atol=1e-12)
        assert page.evaluate("CourseAttention.explorers[0].figure.layout.title.text") == (
            live.title(2, 1)
        )
        # keyboard: an arrow key moves the head
        page.focus("input[name=head]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["head"] == 0
        np.testing.assert_allclose(plotted(page)[0]["z"], _reference("built", 2, 0)[0], atol=1e-12)
        bad = "CourseAttention.explorers[0].update({projections: 'trained', n_heads: 2, head: 0})"
        assert page.evaluate(bad)["message"].startswith("Pick the projections")
        bad = "CourseAttention.explorers[0].update({projections: 'built', n_heads: 3, head: 0})"
        assert "one of 1, 2, 4, 8" in page.evaluate(bad)["message"]
        assert not outside and not errors, errors

        assert_fits_375(chromium, base + "index.html")


def test_the_explorer_offers_the_chapters_heads_and_checks_its_arguments():
    """With the built projections and 2 heads the explorer shows the chapter's two heads."""
    e = toy.two_head_example()
    _, two = numpy_ref.multi_head_attention(e.X, e.X, e.W_q, e.W_k, e.W_v, e.W_o, e.n_heads)
    np.testing.assert_array_equal(live.head_weights("built", 2), two[0])
    explorer = widgets.multi_head_explorer()
    names = [c["name"] for c in explorer.spec()["controls"]]
    assert names == ["head", "n_heads", "projections"]
    explorer.controls["n_heads"].value = 8
    explorer.controls["head"].value = 7
    explorer.controls["n_heads"].value = 4
    assert explorer.controls["head"].value == 3
    with pytest.raises(ValueError, match="projections"):
        widgets.multi_head_explorer(projections="trained")
    with pytest.raises(ValueError, match="n_heads"):
        live.head_weights("built", 3)
    with pytest.raises(ValueError, match="head=2"):
        widgets.multi_head_explorer(head=2, n_heads=2)


#: Each menu's right edge and its control's, and the room its chosen option needs, in px.
_MENUS = """() => Array.from(document.querySelectorAll('.ca-control select')).map(s => {
  const c = document.createElement('canvas').getContext('2d'), box = s.getBoundingClientRect();
  c.font = getComputedStyle(s).font;
  return {right: box.right, control: s.closest('.ca-control').getBoundingClientRect().right,
          width: box.width, need: c.measureText(s.options[s.selectedIndex].text).width};
})"""
#: The site's column at 375 px (measured on the built chapter 5: 335 px, 16 px system-ui).
_SITE_COLUMN = ("main {max-width: 335px; margin: 0 24px; font: 16px/1.65 system-ui, sans-serif;}"
                " select {font: 16px system-ui, sans-serif;}")


@pytest.mark.browser
def test_the_menus_fit_a_phone_column(tmp_path):
    """Issue 16: at 375 px chapter 5's menu ran 18 px past its control and was cut. In the site's
    column every menu stays inside its control, its label above it where both do not fit."""
    from _site import browser, serve

    standalone(widgets.multi_head_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        page.add_style_tag(content=_SITE_COLUMN)
        page.wait_for_timeout(100)
        right = page.evaluate("() => document.querySelector('main').getBoundingClientRect().right")
        for menu in page.evaluate(_MENUS):
            assert menu["right"] <= min(right, menu["control"]) + 0.5, menu
            assert menu["width"] >= menu["need"], menu  # the chosen option is not cut
        assert not outside and not errors, errors
