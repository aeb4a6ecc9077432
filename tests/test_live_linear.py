"""Chapter 15's linear-attention explorer (``linear.js``) computes what the package computes.

The page gets the keys, the order they are written in and the values, and runs the recurrence
itself (linear attention, the delta rule, the gated delta rule). Here: the explorer's states
(:func:`course_attention.explorers.linear.memory_states`) are the package's rules
(``linear_attention.gated_delta_rule``, ``linear_attention.linear_attention``), and every number
the page draws, for every rule, step, β, α and key, equals
:func:`course_attention.viz.linear_explorer_numbers`.
"""

from __future__ import annotations

import json
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
    set_controls,
    spec,
    standalone,
    thin,
    wait_live,
)
from course_attention import linear_attention as la
from course_attention import viz, widgets
from course_attention.explorers import linear as lx
from course_attention.explorers.core import jsonable
from course_attention.i18n import using

N = len(lx.SEQUENCE)


def _random(seq: int = 11, d_k: int = 5, d_v: int = 3, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(seq, d_k, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(seq, d_v, generator=g, dtype=torch.float64)
    return q, torch.nn.functional.normalize(k, dim=-1), v


# ---- without a browser ------------------------------------------------------------------------

def test_the_delta_rules_states_are_the_packages():
    """Token by token, the explorer's states are ``gated_delta_rule``'s final state of every
    prefix, in one call (random unit keys, not the explorer's basis: overlapping keys); the
    control: the rules' states differ from each other."""
    q, k, v = _random()
    seq = len(k)
    for rule, beta, alpha in (("delta", 0.7, 1.0), ("gated", 0.7, 0.8), ("gated", 1.0, 0.55)):
        states = lx.memory_states(rule, k, v, beta, alpha)
        assert states.shape == (seq + 1, 5, 3) and not states[0].any()
        for t in range(1, seq + 1):
            g = torch.full((1, 1, t), math.log(alpha) if rule == "gated" else 0.0,
                           dtype=torch.float64)
            b = torch.full((1, 1, t), beta, dtype=torch.float64)
            _, want = la.gated_delta_rule(q[None, None, :t], k[None, None, :t],
                                          v[None, None, :t], g, b, mode="recurrent")
            torch.testing.assert_close(states[t], want[0, 0], rtol=0, atol=1e-13)
    every = {r: lx.memory_states(r, k, v, 0.7, 0.8) for r in lx.RULES}
    for a in lx.RULES:
        for b in lx.RULES:
            assert a == b or (every[a] - every[b]).abs().max() > 0.1, (a, b)


def test_the_linear_states_are_linear_attentions():
    """Written with ``φ(k)`` and read with ``φ(q)`` over ``φ(q) · z``, the linear rule's states
    give ``linear_attention``'s outputs: they are its state (refuted by the delta rule's)."""
    q, k, v = _random(seq=9, d_k=4, d_v=6, seed=1)
    fq, fk = la.elu_feature(q), la.elu_feature(k)
    want = la.linear_attention(q[None, None], k[None, None], v[None, None], mode="recurrent")[0, 0]
    z = fk.cumsum(0)  # (seq, d_k)

    def outputs(states: torch.Tensor) -> torch.Tensor:
        return torch.stack([states[t + 1].T @ fq[t] / (fq[t] @ z[t] + 1e-6)
                            for t in range(len(q))])

    torch.testing.assert_close(outputs(lx.memory_states("linear", fk, v)), want, rtol=0,
                               atol=1e-13)
    assert (outputs(lx.memory_states("delta", fk, v)) - want).abs().max() > 0.1
    # β and α do not touch linear attention
    torch.testing.assert_close(lx.memory_states("linear", fk, v, 0.3, 0.6),
                               lx.memory_states("linear", fk, v), rtol=0, atol=0)


def test_bad_input_is_refused():
    q, k, v = _random()
    for bad, match in ((("softmax", k, v), "rule must be"), (("delta", k, v, 1.5), "beta must"),
                       (("gated", k, v, 1.0, 0.0), "alpha must"),
                       (("gated", k, v, True), "beta must"), (("delta", k[:3], v), "need keys"),
                       (("delta", k[None], v), "need keys")):
        with pytest.raises(ValueError, match=match):
            lx.memory_states(*bad)
    for bad in ({"rule": "softmax"}, {"t": N + 1}, {"t": -1}, {"t": True}, {"key": "e"}):
        with pytest.raises(ValueError, match="need rule"):
            viz.linear_explorer_numbers(**({"rule": "delta", "t": 3, "beta": 1.0,
                                            "alpha": 1.0, "key": "a"} | bad))
    for bad in ({"rule": "softmax"}, {"t": N + 1}, {"beta": 0.35}, {"alpha": 0.3},
                {"key": "e"}):
        with pytest.raises(ValueError, match="need rule"):
            widgets.linear_explorer(**bad)


def test_the_numbers_accumulate_and_overwrite():
    """With the explorer's unit keys: linear attention's row of ``a`` is the sum of every value
    written under ``a``, the delta rule's at ``β = 1`` the last one, at every step; a key not
    written yet reads zeros against zeros."""
    values = lx.memory_values().numpy()
    np.testing.assert_allclose(values * 10, np.round(values * 10), rtol=0, atol=1e-12)
    assert not any(str(x) == "-0.0" for x in values.ravel().tolist())  # one decimal, no −0.0
    for t in range(N + 1):
        for key in lx.NAMES:
            writes = [i for i, name in enumerate(lx.SEQUENCE[:t]) if name == key]
            lin = viz.linear_explorer_numbers("linear", t, 1.0, 1.0, key)
            delta = viz.linear_explorer_numbers("delta", t, 1.0, 1.0, key)
            np.testing.assert_allclose(lin["recall"], values[writes].sum(0), atol=1e-12)
            assert delta["last"] == lin["last"] == (writes[-1] + 1 if writes else 0)
            np.testing.assert_allclose(delta["recall"], lin["target"], atol=1e-12)
            assert delta["error"] < 1e-12
            np.testing.assert_allclose(lin["recall"], lin["state"][lx.NAMES.index(key)])
            assert lin["written"] == list(lx.SEQUENCE[:t])
            if not writes:
                assert not lin["target"].any() and lin["error"] < 1e-12
    assert viz.linear_explorer_numbers("linear", N, 1.0, 1.0, "a")["error"] > 1
    # the colour range holds every state of every rule (linear attention's reaches its top)
    zmax = lx.linear_data()["zmax"]
    keys, values = lx.memory_keys(), lx.memory_values()
    tops = {(r, b, a): float(lx.memory_states(r, keys, values, b, a).abs().max())
            for r in lx.RULES for b in lx.BETAS for a in lx.ALPHAS}
    assert max(tops.values()) == tops["linear", 1.0, 1.0] > zmax - 0.1 and zmax >= tops[
        "linear", 1.0, 1.0]
    assert not viz.linear_explorer_numbers("gated", 0, 0.5, 0.5, "c")["state"].any()


def test_the_try_it_holds_and_can_fail(monkeypatch):
    lx.check_try_it()
    # the control: a delta rule that adds as linear attention does fails it
    from course_attention.viz import linear_explorer as vl

    real = vl._states
    monkeypatch.setattr(vl, "_states", lambda rule, beta, alpha: real(
        "linear" if rule == "delta" else rule, beta, alpha))
    with pytest.raises(AssertionError, match="delta rule"):
        lx.check_try_it()


def test_the_widget_redraws_with_the_controls():
    e = widgets.linear_explorer()
    c = e.controls
    c["rule"].value, c["t"].value, c["beta"].value, c["alpha"].value, c["key"].value = \
        "gated", 8, 0.5, 0.75, "d"
    want = viz.linear_explorer_numbers("gated", 8, 0.5, 0.75, "d")
    assert np.array_equal(np.array(e.figure.data[0].z), want["state"])
    assert list(e.figure.data[1].y) == want["recall"].tolist()
    assert list(e.figure.data[2].y) == want["target"].tolist()
    assert f"{want['error']:.2f}" in e.figure.layout.title.text
    assert e.spec()["text"]["title"] == lx.TITLE  # the page fills the notebook's templates
    assert c["beta"].step == 0.1 and c["alpha"].step == 0.05 and c["t"].max == N


def test_the_page_stays_small():
    size = len(json.dumps(widgets.linear_explorer().spec(), separators=(",", ":")))
    assert size < 20_000, size


# ---- in Chromium --------------------------------------------------------------------------------

#: The page's legend and axes: what every state keeps.
_DRAWN = """i => { const gd = CourseAttention.explorers[i].figure, L = gd.layout;
  return {names: gd.data.map(t => t.name), annotations: L.annotations || [],
          shapes: L.shapes || [], legend: L.legend, rows: gd.data[0].y, columns: gd.data[0].x,
          colours: [gd.data[0].zmin, gd.data[0].zmax],
          axes: ['xaxis', 'yaxis', 'xaxis2', 'yaxis2'].map(
            k => [L[k].title, L[k].range, L[k].domain])};
}"""


def _states(n: int | None = None) -> list[tuple]:
    """Every rule, step and key, with β and α going through all their values."""
    every = []
    for rule in lx.RULES:
        for t in range(N + 1):
            for key in lx.NAMES:
                i = len(every)
                every.append((rule, t, lx.BETAS[i % len(lx.BETAS)],
                              lx.ALPHAS[(7 * i) % len(lx.ALPHAS)], key))
    return thin(every, n)


def _close(got, want) -> None:
    gap = np.abs(np.asarray(got, dtype=float) - want).max()
    assert gap <= 1e-12, gap


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``linear``) over every rule, step and key, β and α through
    all their values (``n``: that many states, both ends included); assert every plotted number
    equals :func:`viz.linear_explorer_numbers` to 1e-12, the title carries the state and its
    error, and every state keeps the first state's axes and legend. Returns the numbers
    compared."""
    s = spec(page, i)
    ids = {c["id"]: c for c in s["controls"]}
    assert [o["value"] for o in ids["rule"]["options"]] == s["data"]["rules"] == list(lx.RULES)
    assert [o["value"] for o in ids["key"]["options"]] == s["data"]["names"] == list(lx.NAMES)
    assert (ids["t"]["min"], ids["t"]["max"]) == (0, N)
    first = page.evaluate(_DRAWN, i)
    compared = 0
    for rule, t, beta, alpha, key in _states(n):
        # one redraw (the last control as a reader sets it; the others written before it)
        assert set_controls(page, i, {"rule": rule, "beta": beta, "alpha": alpha, "key": key,
                                      "t": t}) == {"rule": rule, "t": t, "beta": beta,
                                                   "alpha": alpha, "key": key}
        want = viz.linear_explorer_numbers(rule, t, beta, alpha, key)
        heat, recall, target = plotted(page, i)
        _close(heat["z"], want["state"])
        _close(recall["y"], want["recall"])
        _close(target["y"], want["target"])
        title = page.evaluate("i => CourseAttention.explorers[i].figure.layout.title.text", i)
        words = s["text"]
        assert title == words["title"].format(rule=words[f"rule_{rule}"], t=t, n=N) + "<br>" + \
            words["readout" if want["last"] else "never"].format(key=key, error=want["error"],
                                                                  last=want["last"]), title
        now = page.evaluate(_DRAWN, i)
        assert now == first, str([(k, now[k], first[k]) for k in now if now[k] != first[k]])
        compared += want["state"].size + 2 * len(want["recall"]) + 1
    return compared


_TWIN = """([p, states]) => states.map(([rule, t, beta, alpha, key]) => {
  const r = CourseAttention.linear.read(p, rule, t, beta, alpha, key);
  return r && [r.state, r.recall, r.target, r.last, r.error];
})"""


def _grid() -> list[list]:
    return [[r, t, b, a, k] for r in lx.RULES for t in range(N + 1) for b in lx.BETAS
            for a in lx.ALPHAS for k in lx.NAMES]


def _fits(page, label) -> None:
    from test_figure_text import TEXTS_JS, problems

    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
    (figure,) = page.evaluate(TEXTS_JS)
    assert not problems(figure), (label, problems(figure))


@pytest.mark.browser
def test_linear_explorer_equals_the_package_and_answers_the_keyboard(tmp_path):
    from _site import browser, serve

    explorer = widgets.linear_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        data = spec(page)["data"]
        assert data == jsonable(lx.linear_data())  # the package's inputs, every bit
        first = plotted(page)  # the page's first state is the notebook's figure
        assert len(first) == len(explorer.figure.data) == 3
        assert first[0]["z"] == [list(r) for r in explorer.figure.data[0].z]
        assert first[1]["y"] == list(explorer.figure.data[1].y)

        # the page's recurrence, every state of the grid (13,068), and a rule or key it lacks
        grid = _grid()
        got = page.evaluate(_TWIN, [data, grid + [["softmax", 3, 1, 1, "a"],
                                                  ["delta", 3, 1, 1, "e"]]])
        assert got[-2:] == [None, None]
        wants = [viz.linear_explorer_numbers(*state) for state in grid]
        for i, key in enumerate(("state", "recall", "target", "last", "error")):
            mine = np.array([g[i] for g in got[:-2]], dtype=float)
            theirs = np.array([w[key] for w in wants], dtype=float)
            assert mine.shape == theirs.shape == (len(grid), *np.shape(wants[0][key]))
            gap = np.abs(mine - theirs).max()
            assert gap <= (1e-12 if key in ("state", "recall", "error") else 0), (key, gap)

        # every control changes the figure
        for name, value in (("rule", "delta"), ("t", 8), ("beta", 0.5), ("rule", "gated"),
                            ("alpha", 0.6), ("key", "b")):
            before = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text"), \
                plotted(page)
            set_control(page, 0, name, value)
            after = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text"), \
                plotted(page)
            assert after != before, name

        assert check(page, 0) == 3 * 9 * 4 * (16 + 8 + 1)

        page.add_script_tag(path=str(STATIC / "course_titles.js"))
        for width in (375, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            for rule in lx.RULES:
                for t, key in ((0, "d"), (N, "a")):
                    for name, value in (("rule", rule), ("t", t), ("key", key)):
                        set_control(page, 0, name, value)
                    _fits(page, (width, rule, t, key))
        page.set_viewport_size({"width": 375, "height": 900})

        set_control(page, 0, "rule", "linear")
        set_control(page, 0, "t", 4)
        page.focus("input[name=t]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["t"] == 3 and " 3 " in page.evaluate(
            "CourseAttention.explorers[0].figure.layout.title.text")
        page.focus("select[name=rule]")
        page.keyboard.press("ArrowDown")  # a select answers the arrows
        assert controls(page)["rule"] == "delta"
        set_control(page, 0, "beta", 0.6)
        page.focus("input[name=beta]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["beta"] == 0.5
        set_control(page, 0, "alpha", 0.6)
        page.focus("input[name=alpha]")
        page.keyboard.press("ArrowRight")
        assert controls(page)["alpha"] == 0.65
        page.focus("select[name=key]")
        page.keyboard.press("ArrowDown")
        assert controls(page)["key"] != "a"
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors


@pytest.mark.browser
def test_the_chinese_explorer_fits_a_phone(tmp_path):
    """The Chinese spec (titles, labels, legend) fits 375 px in every rule, at both ends."""
    from _site import browser, serve

    with using("zh"):
        explorer = widgets.linear_explorer()
        standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        assert spec(page)["text"]["title"] != lx.TITLE  # translated
        page.add_script_tag(path=str(STATIC / "course_titles.js"))
        for rule in lx.RULES:
            for t, key in ((0, "d"), (N, "a")):
                for name, value in (("rule", rule), ("t", t), ("key", key)):
                    set_control(page, 0, name, value)
                _fits(page, ("zh", rule, t, key))
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors
