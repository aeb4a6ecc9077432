"""Chapter 4's live mask builder (``mask.js``) computes what numpy_ref computes, in Chromium."""

from __future__ import annotations

import numpy as np
import pytest

from _explorers import open_page, pairs, plotted, set_control, spec, standalone, thin, wait_live
from course_attention import numpy_ref, toy, viz, widgets
from course_attention.explorers import mask as live_mask

SEQ = len(viz.MASK_TOKENS)

# Where the centre of cell (query q, key k) of the mask panel lies on the screen, in pixels.
_CELL = """([i, q, k]) => {
  const gd = CourseAttention.explorers[i].figure, L = gd._fullLayout;
  gd.scrollIntoView({block: "center"});  // on a long chapter page the figure may lie below
  const box = gd.getBoundingClientRect(), x = L.xaxis, y = L.yaxis;
  return [box.left + x._offset + x.l2p(k), box.top + y._offset + y.l2p(q)];
}"""

# Mouse clicks on the mask, from the causal mask of six real tokens: (query, key) cells.
# Row 0 loses its only key; row 5 loses all six, one click at a time; two cells go back.
CLICKS = [(0, 0), (0, 3), (2, 1), (5, 5), (5, 0), (5, 1), (5, 2), (5, 3), (5, 4), (0, 3), (3, 4),
          (0, 0)]
# Keyboard toggles after them: block two past keys, allow one future key.
KEYS = [(1, 0), (4, 2), (2, 4)]


def _expect(page, i, mask: np.ndarray, n_real: int) -> int:
    """Assert the page plots ``mask`` and numpy_ref's weights for it; return the values compared."""
    data = plotted(page, i)
    scores = toy.mask_scores(SEQ)  # (seq, seq): K = V = I makes the output the weights
    eye = np.eye(SEQ)
    _, weights = numpy_ref.scaled_dot_product_attention(scores, eye, eye, mask=mask, scale=1.0)
    labels = viz.unique_labels(viz.padded_tokens(viz.MASK_TOKENS, n_real))
    assert np.array_equal(np.array(data[0]["z"]), mask.astype(int)), (data[0]["z"], mask)
    np.testing.assert_allclose(np.array(data[1]["z"], dtype=float), weights, rtol=0, atol=1e-12)
    for row in np.flatnonzero(~mask.any(axis=1)):  # a fully masked row: zeros, not NaN
        assert data[1]["z"][row] == [0] * SEQ
    assert data[0]["x"] == data[0]["y"] == data[1]["x"] == labels
    return 2 * mask.size


def _click(page, i, q, k) -> None:
    x, y = page.evaluate(_CELL, [i, q, k])
    page.mouse.click(x, y)


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``mask``) over every preset × real tokens × window, then edit
    cells by mouse clicks and by keyboard; assert the plotted mask and weights equal numpy_ref's
    ``scaled_dot_product_attention`` with that bool mask to 1e-12. Returns the values compared.
    With ``n``: every preset, every real-token count and window at least once, ``n`` clicks and
    one keyboard toggle."""
    page_data = spec(page, i)["data"]
    np.testing.assert_array_equal(page_data["scores"], toy.mask_scores(SEQ))  # every bit
    compared = 0
    for kind in live_mask.PRESETS:
        set_control(page, i, "kind", kind)
        windows = [1, 2, 3, SEQ] if kind in live_mask.SLIDING else [2]
        for n_real, window in pairs([1, 2, 4, SEQ], windows, n and 1):
            set_control(page, i, "n_real", n_real)
            set_control(page, i, "window", window)
            mask = live_mask.preset_mask(kind, SEQ, n_real, window)
            compared += _expect(page, i, mask, n_real)

    # Mouse: click cells of the mask panel; each click flips one cell.
    set_control(page, i, "kind", "causal")
    set_control(page, i, "n_real", SEQ)
    mask = live_mask.preset_mask("causal", SEQ, SEQ, 2)
    for q, k in thin(CLICKS, n):
        _click(page, i, q, k)
        mask[q, k] = ~mask[q, k]
        compared += _expect(page, i, mask, SEQ)
    assert n is not None or not mask[5].any(), "the clicks leave row 5 fully masked"

    # Keyboard: the query and key menus and the button, one after the other with Tab.
    root_el = page.locator("figure.ca-explorer").nth(i)
    for q, k in KEYS[: 1 if n else None]:
        root_el.locator("select[name=query]").focus()
        page.keyboard.press("Home")
        for _ in range(q):
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Tab")  # to the key menu
        page.keyboard.press("Home")
        for _ in range(k):
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Tab")  # to the button
        page.keyboard.press("Space")
        mask[q, k] = ~mask[q, k]
        compared += _expect(page, i, mask, SEQ)
    return compared


@pytest.mark.browser
def test_mask_builder_equals_numpy_for_presets_clicks_and_keys(tmp_path):
    from _site import browser, serve

    standalone(widgets.mask_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        n_states = 4 * 4 + 2 * 4 * 4 + len(CLICKS) + len(KEYS)
        assert check(page, 0) == n_states * 2 * SEQ * SEQ
        title = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        edited = len(CLICKS) - 4 + len(KEYS)  # two cells were clicked twice
        assert title == live_mask.title("causal", SEQ, SEQ, 2, edited=edited)
        assert not outside and not errors, errors


@pytest.mark.browser
def test_mask_builder_fits_375_px_and_labels_every_control(tmp_path):
    from _site import browser, serve

    standalone(widgets.mask_explorer(kind="sliding window + padding", n_real=2, window=2), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        # the first state: pad queries 3, 4, 5 see only pad keys, so their rows are zeros
        compared = _expect(page, 0, live_mask.preset_mask("sliding window + padding", SEQ, 2, 2), 2)
        assert compared == 2 * SEQ * SEQ
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        cell = page.evaluate(
            "() => { const x = CourseAttention.explorers[0].figure._fullLayout.xaxis;"
            " return x.l2p(1) - x.l2p(0); }"
        )
        assert cell >= 36, f"a mask cell is {cell:.0f} px wide: too small to tap"
        boxes = page.locator(".ca-controls > *")
        for n in range(boxes.count()):
            box = boxes.nth(n).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 375, box
        unlabelled = page.evaluate(
            """() => Array.from(document.querySelectorAll('.ca-controls .ca-input')).filter(
                el => !(el.labels && el.labels.length) && !el.textContent.trim()).length"""
        )
        assert unlabelled == 0
        button = page.locator("button[name=toggle]").text_content()
        assert button == "Block: query '0:[BOS]' sees key '0:[BOS]'"
        assert check(page, 0, n=6) > 0  # presets, taps and keys work on a phone's width too
        assert not outside and not errors, errors


def test_mask_explorer_rejects_bad_input_by_name():
    with pytest.raises(ValueError, match="kind"):
        widgets.mask_explorer(kind="sideways")
    with pytest.raises(ValueError, match="window"):
        widgets.mask_explorer(window=0)
    with pytest.raises(ValueError, match="n_real"):
        widgets.mask_explorer(n_real=7)


def _cells(explorer) -> np.ndarray:
    return np.array(explorer.figure.data[0].z).astype(bool)


def test_the_notebook_grid_edits_cells_as_clicks_do_and_keeps_them():
    """The notebook's grid of toggle buttons is the page's clickable mask: the same clicks give
    the same mask; a slider or preset change keeps the edits; reset drops them."""
    explorer = widgets.mask_explorer(kind="causal", n_real=SEQ)
    grid = explorer.widget.children[1]
    cells = [[b for b in row.children[1:]] for row in grid.children[2:]]  # (seq, seq) buttons
    mask = live_mask.preset_mask("causal", SEQ, SEQ, 2)
    edits = {}
    for q, k in CLICKS:
        cells[q][k].value = not cells[q][k].value  # a press
        mask[q, k] = ~mask[q, k]
        edits[q, k] = bool(mask[q, k])
        assert np.array_equal(_cells(explorer), mask)
        assert (explorer.controls["query"].value, explorer.controls["key"].value) == (q, k)
        assert [[b.value for b in row] for row in cells] == mask.tolist()
    edited = len(CLICKS) - 4
    assert explorer.figure.layout.title.text == live_mask.title("causal", SEQ, SEQ, 2, edited)
    # the toggle button and menus: the keyboard's way, as on the page
    explorer.controls["query"].value, explorer.controls["key"].value = 2, 4
    names = viz.unique_labels(viz.padded_tokens(viz.MASK_TOKENS, SEQ))
    want = f"Allow: query '{names[2]}' sees key '{names[4]}'"
    assert explorer.buttons["toggle"].description == want
    explorer.buttons["toggle"].click()
    mask[2, 4] = True
    assert np.array_equal(_cells(explorer), mask)
    # the sliders and the preset no longer discard the clicked cells (issue 16)
    explorer.controls["n_real"].value = 3
    preset = live_mask.preset_mask("causal + padding", SEQ, 3, 2)
    explorer.controls["kind"].value = "causal + padding"
    kept = preset.copy()
    for (q, k), v in {**edits, (2, 4): True}.items():
        kept[q, k] = v
    assert np.array_equal(_cells(explorer), kept)
    labels = viz.unique_labels(viz.padded_tokens(viz.MASK_TOKENS, 3))
    assert [lab for lab, _ in explorer.controls["query"].options] == labels
    assert [b.value for b in cells[5]] == kept[5].tolist()
    explorer.buttons["reset"].click()
    assert np.array_equal(_cells(explorer), preset)
    assert "edited" not in explorer.figure.layout.title.text


@pytest.mark.browser
def test_the_page_keeps_clicked_cells_when_a_slider_moves(tmp_path):
    """Issue 16: the sliders silently discarded clicked cells. Now both places keep them, and
    the page equals the Python twin (explorers.mask.figure with the same edits)."""
    from _site import browser, serve

    standalone(widgets.mask_explorer(kind="causal", n_real=SEQ), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        for q, k in [(0, 0), (2, 4), (5, 1)]:
            _click(page, 0, q, k)
        edits = {(0, 0): False, (2, 4): True, (5, 1): False}
        for name, value in (("n_real", 3), ("kind", "sliding window + padding"), ("window", 2)):
            set_control(page, 0, name, value)
        twin = live_mask.figure("sliding window + padding", 3, 2, edits=edits)
        mask = np.array(twin.data[0].z).astype(bool)
        _expect(page, 0, mask, 3)  # the mask and numpy_ref's weights for it, to 1e-12
        assert mask[2, 4] and not mask[0, 0] and not mask[5].any()
        title = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        assert title == twin.layout.title.text
        page.locator("button[name=reset]").click()
        assert plotted(page)[0]["z"] == live_mask.preset_mask(
            "sliding window + padding", SEQ, 3, 2).astype(int).tolist()
        assert not outside and not errors, errors
