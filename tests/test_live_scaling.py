"""Chapter 2's live explorer (``scaling.js``) draws the package's query and keys and computes
numpy_ref's weights, in Chromium; its generator is the twin of
``course_attention.explorers.scaling``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _explorers import (
    controls,
    message,
    open_page,
    plotted,
    set_control,
    standalone,
    thin,
    wait_live,
)
from course_attention import numpy_ref, widgets
from course_attention.explorers import scaling

# Every width 1 … 128 and every 5th above with the scale on; every 7th and a spread of others
# (non-powers of two included) with it off and for the other draws.
ALL_WIDTHS = sorted(set(range(1, 129)) | set(range(129, scaling.MAX_WIDTH + 1, 5)) | {1024})
SOME_WIDTHS = sorted({1, 2, 3, 5, 7, 12, 31, 64, 100, 255, 333, 511, 512, 777, 1000, 1023, 1024})
MANY_WIDTHS = sorted(set(range(1, scaling.MAX_WIDTH + 1, 7)) | set(SOME_WIDTHS))

# Set d_k to each width by input events, as a reader dragging the slider; read the plot each time.
_SWEEP = """([i, widths]) => {
  const ex = CourseAttention.explorers[i], input = ex.controls.d_k.input, out = [];
  for (const d of widths) {
    input.value = d;
    input.dispatchEvent(new Event('input'));
    out.push([ex.values().d_k, ex.figure.data[0].y, ex.figure.layout.title.text]);
  }
  return out;
}"""


# The time update() takes (computing the weights, no drawing), 100 times over, in ms.


def press(page, i: int, name: str) -> None:
    """Click the page-only button ``name`` of explorer ``i`` (the explorer redraws at once)."""
    page.evaluate("([i, n]) => CourseAttention.explorers[i].controls[n].input.click()", [i, name])


def expected(draw: int, scaled: bool, widths: list[int], seq_k: int) -> np.ndarray:
    """numpy_ref's weights ``(len(widths), seq_k)`` for the Python twin's query and keys."""
    q, K = scaling.query_and_keys(draw, seq_k)  # (1024,), (seq_k, 1024)
    rows = []
    for d in widths:
        scores = K[:, :d] @ q[:d]  # (seq_k,)
        rows.append(numpy_ref.softmax(scores / math.sqrt(d) if scaled else scores))
    return np.array(rows)


def sweep(page, i: int, draw: int, scaled: bool, widths: list[int]) -> int:
    seq_k = len(plotted(page, i)[0]["x"])
    got = page.evaluate(_SWEEP, [i, widths])
    assert [d for d, _, _ in got] == widths
    assert all(t == scaling.title(d, scaled, draw) for d, _, t in got)  # in the page's language
    np.testing.assert_allclose(
        np.array([y for _, y, _ in got]), expected(draw, scaled, widths, seq_k), rtol=0, atol=1e-12
    )
    return len(widths) * seq_k


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``scaling``): 308 widths of 1 … 1024 with the scale on, many off,
    the halve/double buttons, and three resamples over a spread of widths; assert the plotted
    weights equal numpy_ref's softmax of the Python twin's draws to 1e-12. Returns the count.
    With ``n``: ``n`` widths of each list and one resample, every control still used."""
    compared = 0
    start = controls(page, i)["draw"]
    for scaled, widths in ((True, ALL_WIDTHS), (False, MANY_WIDTHS)):
        set_control(page, i, "scaled", scaled)
        compared += sweep(page, i, start, scaled, thin(widths, n))
    set_control(page, i, "d_k", 3)
    for button, d_k in (("double", 6), ("double", 12), ("halve", 6), ("halve", 3), ("halve", 1)):
        press(page, i, button)
        assert controls(page, i)["d_k"] == d_k, button
        compared += sweep(page, i, start, False, [d_k])
    for k in range(1, 4 if n is None else 2):  # new query and keys: the next draw
        press(page, i, "resample")
        draw = controls(page, i)["draw"]
        assert draw == (start + k) % scaling.N_DRAWS
        for scaled in (True, False):
            set_control(page, i, "scaled", scaled)
            compared += sweep(page, i, draw, scaled, thin(SOME_WIDTHS, n))
    set_control(page, i, "draw", 917)  # the draw slider itself
    compared += sweep(page, i, 917, False, thin(SOME_WIDTHS, n))
    return compared


@pytest.mark.browser
def test_scaling_explorer_equals_numpy_for_every_width_scale_and_draw(tmp_path):
    from _site import browser, serve

    standalone(widgets.scaling_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        first = plotted(page)[0]["y"]  # the first state the page drew equals the notebook's
        np.testing.assert_allclose(first, scaling.draw_weights(64, True, 0), atol=1e-12)
        n = check(page, 0)
        assert n == 8 * (len(ALL_WIDTHS) + len(MANY_WIDTHS) + 5 + 7 * len(SOME_WIDTHS))
        set_control(page, 0, "draw", scaling.N_DRAWS - 1)
        press(page, 0, "resample")  # past the last draw: back to the first
        assert controls(page, 0)["draw"] == 0 and message(page) == ""
        set_control(page, 0, "d_k", 500)
        page.focus("input[name=d_k]")  # keyboard: an arrow key moves d_k by one
        before = controls(page, 0)["d_k"]
        page.keyboard.press("ArrowRight")
        assert controls(page, 0)["d_k"] == before + 1
        page.focus("button[name=double]")
        page.keyboard.press("Enter")
        assert controls(page, 0)["d_k"] == min(2 * (before + 1), scaling.MAX_WIDTH)
        labels = page.evaluate(
            "() => [...document.querySelectorAll('.ca-controls input')].map(i => i.labels.length)"
        )
        assert labels and all(labels), "every input has a label"
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page scrolls sideways by {overflow} px at 375 px"
        assert not outside and not errors, errors


@pytest.mark.browser
def test_the_pages_generator_gives_the_python_twins_numbers(tmp_path):
    from _site import browser, serve

    standalone(widgets.scaling_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        for seed in (0, 1, 999, 2**32 - 1):
            u = page.evaluate(
                "s => Array.from({length: 4001}, (_, n) => CourseAttention.scaling.uniform(s, n))",
                seed,
            )
            assert u == scaling.uniforms(seed, 4001).tolist()  # integer math: every bit
            z = page.evaluate("s => CourseAttention.scaling.normals(s, 4001)", seed)
            np.testing.assert_allclose(z, scaling.normals(seed, 4001), rtol=0, atol=1e-14)
        assert not outside and not errors, errors


# --- the Python generator, without a browser ------------------------------------------------


def _mulberry32(seed: int, n: int) -> list[int]:
    """mulberry32 as usually written: one state, stepped n times (32-bit integers)."""
    out, a = [], seed
    for _ in range(n):
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
        t = ((t + ((t ^ (t >> 7)) * (t | 61) & 0xFFFFFFFF)) & 0xFFFFFFFF) ^ t
        out.append(t ^ (t >> 14))
    return out


def test_the_counter_based_generator_is_mulberry32_stepped_one_state_at_a_time():
    for seed in (0, 7, 2**32 - 1):
        x = np.array(_mulberry32(seed, 500), dtype=np.float64)
        np.testing.assert_array_equal(scaling.uniforms(seed, 500), (x + 0.5) / 2**32)


def test_the_draws_are_deterministic_and_standard_normal():
    np.testing.assert_array_equal(scaling.normals(3, 1001), scaling.normals(3, 1001))
    np.testing.assert_array_equal(scaling.normals(3, 1001)[:1000], scaling.normals(3, 1000))
    assert not np.array_equal(scaling.normals(3, 1000), scaling.normals(4, 1000))
    u = scaling.uniforms(0, 200_000)
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005
    assert abs(u.var() * 12 - 1) < 0.01  # uniform on (0, 1): variance 1/12
    z = scaling.normals(0, 200_000)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1) < 0.01
    assert abs((z**4).mean() - 3) < 0.1  # the tails of a normal, not of a uniform
    q, K = scaling.query_and_keys(5)
    assert q.shape == (1024,) and K.shape == (8, 1024)
    assert abs(np.corrcoef(q, K[0])[0, 1]) < 0.1  # the query and a key: independent
    z0, z1 = scaling.normals(0, 9 * 1024), scaling.normals(1, 9 * 1024)
    assert abs(np.corrcoef(z0, z1)[0, 1]) < 0.05  # neighbouring draws: independent


def test_the_explorer_and_its_weights_follow_the_twin():
    explorer = widgets.scaling_explorer(d_k=100, scaled=False, draw=2)
    q, K = scaling.query_and_keys(2)
    np.testing.assert_allclose(
        explorer.figure.data[0].y, numpy_ref.softmax(K[:, :100] @ q[:100]), atol=1e-4
    )  # the figure stores weights rounded to 4 digits
    at_1 = [scaling.draw_weights(1, scaled, 2) for scaled in (True, False)]
    np.testing.assert_array_equal(*at_1)  # d_k = 1: √1 = 1
    before = explorer.controls["draw"].value
    explorer.buttons["resample"].click()  # the "new query and keys" button
    assert explorer.controls["draw"].value == before + 1
    d_k = explorer.controls["d_k"]  # ÷ 2 and × 2, as scaling.js: rounded down, within 1 … 1024
    for button, want in (("double", 200), ("double", 400), ("double", 800), ("double", 1024),
                         ("halve", 512), ("halve", 256)):
        explorer.buttons[button].click()
        assert d_k.value == want and explorer.figure.layout.title.text == scaling.title(
            want, False, before + 1)
    d_k.value = 3
    for want in (1, 1):
        explorer.buttons["halve"].click()
        assert d_k.value == want


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"d_k": 0}, "d_k"),
        ({"d_k": 1025}, "d_k"),
        ({"d_k": 2.5}, "d_k"),
        ({"draw": -1}, "draw"),
        ({"draw": scaling.N_DRAWS}, "draw"),
        ({"scaled": "yes"}, "scaled"),
        ({"seq_k": 1}, "seq_k"),
    ],
)
def test_the_explorer_names_the_argument_at_fault(kwargs, match):
    with pytest.raises(ValueError, match=match):
        widgets.scaling_explorer(**kwargs)
