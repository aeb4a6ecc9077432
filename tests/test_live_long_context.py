"""Chapter 12's long-context explorer (``long_context.js``) computes what the package computes.

The page computes every RoPE-scaling rule's frequencies itself, in float64: they equal
``rope_scaling``'s float64 path (whose float32 default equals Hugging Face's, test_rope_scaling),
and every number it plots equals :func:`course_attention.viz.long_context_numbers`.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

from _explorers import (
    STATIC,
    controls,
    open_page,
    plotted,
    set_control,
    spec,
    standalone,
    thin,
    wait_live,
)
from course_attention import numpy_ref, positions, rope_scaling, viz, widgets
from course_attention.explorers import long_context as lc

RULES = list(rope_scaling.RULES)


# ---- without a browser ------------------------------------------------------------------------

def test_the_explorer_speaks_about_chapter_10s_rotary_copy_model():
    """Head width, base and trained length are those of the model chapter 10 trains and
    chapter 12 stretches (refuted by a model or a training length of other sizes)."""
    model = positions.copy_model("rotary")
    widths = {m.d_head for m in model.modules() if isinstance(m, positions._CausalSelfAttention)}
    assert widths == {lc.HEAD_WIDTH}
    longest = inspect.signature(positions.length_generalisation).parameters["train_lengths"]
    assert 2 * longest.default[1] + 1 == lc.CONTEXT  # a copy row: string, separator, copy
    trained = inspect.signature(rope_scaling.copy_accuracy_scaled).parameters["trained_length"]
    assert 2 * trained.default + 1 == lc.CONTEXT
    assert inspect.signature(positions.rotary).parameters["base"].default == lc.THETA
    assert lc.MAX_POSITION + 1 == 4 * lc.CONTEXT


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("factor", [1.0, 2.0, 3.0, 8.0])
def test_the_float64_path_is_the_float32_rule_in_more_digits(rule, factor):
    """``dtype=torch.float64`` runs the same steps: the float32 default (Hugging Face's, bit for
    bit: test_rope_scaling) is it rounded, and the plain frequencies are chapter 10's."""
    for d, theta, context in ((8, 10000.0, 17), (16, 500.0, 64), (64, 10000.0, 4096)):
        for seq_len in (1, context, 3 * context + 1):
            f32, a32 = rope_scaling.scaled_frequencies(rule, d, theta, factor, context, seq_len)
            f64, a64 = rope_scaling.scaled_frequencies(rule, d, theta, factor, context, seq_len,
                                                       dtype=torch.float64)
            assert f32.dtype == torch.float32 and f64.dtype == torch.float64 and a32 == a64
            torch.testing.assert_close(f64.float(), f32, rtol=3e-7, atol=0)
    plain = rope_scaling.inverse_frequencies(16, 500.0, torch.float64).numpy()
    np.testing.assert_allclose(plain, numpy_ref.rotary_frequencies(16, 500.0), rtol=1e-15, atol=0)


def test_scaled_frequencies_names_each_rule():
    d, theta, ctx = 16, 500.0, 64
    same = [
        (("plain", d, theta, 2.0, ctx), (rope_scaling.inverse_frequencies(d, theta), 1.0)),
        (("linear", d, theta, 2.0, ctx), rope_scaling.linear_scaling(d, theta, 2.0)),
        (("dynamic", d, theta, 2.0, ctx, 200), rope_scaling.ntk_scaling(d, theta, 2.0, 200, ctx)),
        (("dynamic", d, theta, 2.0, ctx), rope_scaling.ntk_scaling(d, theta, 2.0)),
        (("yarn", d, theta, 2.0, ctx), rope_scaling.yarn_scaling(d, theta, 2.0, ctx)),
        (("llama3", d, theta, 2.0, ctx), rope_scaling.llama3_scaling(d, theta, 2.0, 1.0, 4.0, ctx)),
    ]
    for args, (theirs, scale) in same:
        ours = rope_scaling.scaled_frequencies(*args)
        assert torch.equal(ours[0], theirs) and ours[1] == scale, args
    assert not torch.equal(same[2][1][0], same[3][1][0]), "the dynamic rule reads the length"
    with pytest.raises(ValueError, match="rule must be one of"):
        rope_scaling.scaled_frequencies("ntk", d, theta, 2.0, ctx)


def test_the_numbers_mean_what_the_figure_says():
    """Linear interpolation turns every pair by position / factor of plain RoPE's angle; the
    rule's score curve is chapter 10's for the plain rule and grows by YaRN's factor² at 0."""
    n = viz.long_context_numbers(51, "linear", 4.0)
    np.testing.assert_allclose(n["ratio"], 51 / (16 * 4.0), rtol=1e-15)
    assert n["angle_class"].tolist() == [2, 0, 0, 0]  # pair 0 turned 16 rad > 2π in training
    plain = viz.long_context_numbers(51, "plain", 4.0)
    assert plain["angle_class"].tolist() == [2, 1, 1, 1]
    np.testing.assert_allclose(plain["scaled"], plain["plain"], rtol=0, atol=1e-12)
    yarn = viz.long_context_numbers(51, "yarn", 8.0)
    assert yarn["scaled"][0] == pytest.approx(plain["plain"][0] * (0.1 * math.log(8) + 1) ** 2)
    # dynamic NTK is plain RoPE up to the trained length
    dyn = viz.long_context_numbers(16, "dynamic", 8.0)
    np.testing.assert_array_equal(dyn["frequencies"], viz.long_context_numbers(16, "plain",
                                                                              8.0)["frequencies"])
    for bad in ({"position": 68}, {"position": -1}, {"rule": "ntk"}, {"factor": 0.5}):
        args = {"position": 3, "rule": "linear", "factor": 2.0} | bad
        with pytest.raises(ValueError):
            viz.long_context_numbers(**args)
    with pytest.raises(ValueError, match="need position"):
        widgets.long_context_explorer(position=68)


# ---- in Chromium --------------------------------------------------------------------------------

#: The page's legend, annotations, shapes and axes (titles, ranges; plotly adds an axis's type
#: once it has drawn it): what every state keeps.
_DRAWN = """i => { const gd = CourseAttention.explorers[i].figure, L = gd.layout;
  return {legend: Array.from(gd.querySelectorAll('.legendtext')).map(e => e.textContent),
          names: gd.data.map(t => t.name), showlegend: gd.data.map(t => t.showlegend),
          annotations: L.annotations || [], shapes: L.shapes || [], legendLayout: L.legend,
          axes: ['xaxis', 'yaxis', 'xaxis2', 'yaxis2'].map(
            k => [L[k].title, L[k].range, L[k].domain])};
}"""


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``long_context``) over every rule and factor and over
    positions; assert every plotted number equals the package's to 1e-12 and every state keeps
    the first state's legend and annotations. Returns the numbers compared. With ``n``: ``n``
    positions per rule and factor (always the ends)."""
    s = spec(page, i)
    rules = [o["value"] for o in next(c for c in s["controls"] if c["id"] == "rule")["options"]]
    factors = [o["value"] for o in next(c for c in s["controls"] if c["id"] == "factor")["options"]]
    assert rules == RULES
    last = s["data"]["max_position"]
    first = page.evaluate(_DRAWN, i)
    compared = 0
    for rule in rules:
        set_control(page, i, "rule", rule)
        for factor in factors:
            set_control(page, i, "factor", factor)
            for position in thin(sorted({0, 1, 16, 17, 18, 33, 34, 51, 52, 67, last}), n):
                set_control(page, i, "position", position)
                want = viz.long_context_numbers(position, rule, factor)
                traces = plotted(page, i)
                for k in range(3):  # the bars, by class; None where a pair is in another
                    y = traces[k]["y"]
                    mine = want["angle_class"] == k
                    assert [v is not None for v in y] == mine.tolist(), (rule, factor, position)
                    np.testing.assert_allclose([v for v in y if v is not None],
                                               want["ratio"][mine], rtol=0, atol=1e-12)
                np.testing.assert_allclose(traces[4]["y"], want["plain"], rtol=0, atol=1e-12)
                np.testing.assert_allclose(traces[5]["y"], want["scaled"], rtol=0, atol=1e-12)
                assert traces[6]["x"] == [position]
                np.testing.assert_allclose(traces[6]["y"], [want["scaled"][position]], rtol=0,
                                           atol=1e-12)
                now = page.evaluate(_DRAWN, i)
                assert now == first, str([(k, now[k], first[k]) for k in now if now[k] != first[k]])
                compared += 3 * len(want["ratio"]) + 2 * len(want["offsets"]) + 1
    return compared


_FREQUENCIES = """([rules, factors, last, p]) => {
  const out = [];
  for (const rule of rules) for (const factor of factors) for (let n = 1; n <= last + 1; n++) {
    const f = CourseAttention.longContext.frequencies(rule, p, factor, n);
    out.push({rule, factor, n, inv: f.inv, scale: f.scale});
  }
  return out; }"""


@pytest.mark.browser
def test_long_context_explorer_equals_the_package_and_answers_the_keyboard(tmp_path):
    from test_figure_text import TEXTS_JS, problems

    from _site import browser, serve

    explorer = widgets.long_context_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        first = plotted(page)  # the page's first state is the notebook's figure (rounded)
        assert len(first) == len(explorer.figure.data) == 7
        for mine, theirs in zip(first, explorer.figure.data, strict=True):
            assert (mine["y"] is None) == (theirs.y is None)
            ys = [(a, b) for a, b in zip(mine["y"], theirs.y, strict=True) if b is not None]
            assert [a is None for a in mine["y"]] == [b is None for b in theirs.y]
            np.testing.assert_allclose([a for a, _ in ys], [b for _, b in ys], atol=1e-3)
        drawn = page.evaluate(_DRAWN, 0)  # the saved state's legend, every trace's entry (an
        names = [t.name for t in explorer.figure.data]  # empty class keeps its own)
        assert drawn["legend"] == drawn["names"] == names and len(set(names)) == 7, drawn
        saved = explorer.figure.to_plotly_json()["layout"]
        assert drawn["shapes"] == saved["shapes"] and not drawn["annotations"]
        assert not saved.get("annotations")

        # every rule's frequencies, at every length the slider reaches, are the package's
        data = spec(page)["data"]
        got = page.evaluate(_FREQUENCIES, [RULES, lc.FACTORS, lc.MAX_POSITION, data])
        assert len(got) == len(RULES) * len(lc.FACTORS) * (lc.MAX_POSITION + 1)
        for g in got:
            want, scale = rope_scaling.scaled_frequencies(
                g["rule"], lc.HEAD_WIDTH, lc.THETA, g["factor"], lc.CONTEXT, g["n"],
                dtype=torch.float64)
            np.testing.assert_allclose(g["inv"], want.numpy(), rtol=1e-14, atol=0)
            assert g["scale"] == pytest.approx(scale, rel=1e-15, abs=0)

        assert check(page, 0) == 5 * 4 * 10 * (3 * 4 + 2 * 68 + 1)

        # test_figure_text's checks (every text apart, inside the figure, drawn as held) at 375
        # and 1280 px in every rule and factor at both ends of the slider, with the site's
        # title wrap as the book loads it; the 1280 px states come after a phone turned wide
        page.add_script_tag(path=str(STATIC / "course_titles.js"))
        for width in (375, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            for state in ({"rule": r, "factor": f, "position": p} for r in RULES
                          for f in lc.FACTORS for p in (0, lc.MAX_POSITION)):
                for name, value in state.items():
                    set_control(page, 0, name, value)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                              "setTimeout(r, 50)))")
                (figure,) = page.evaluate(TEXTS_JS)
                assert not problems(figure), (width, state, problems(figure))
        page.set_viewport_size({"width": 375, "height": 900})

        set_control(page, 0, "position", 67)
        page.focus("input[name=position]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["position"] == 66 and plotted(page)[6]["x"] == [66]
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors

