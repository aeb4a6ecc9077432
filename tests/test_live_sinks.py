"""Chapter 14's sinks explorer (``sinks.js``) draws what the package computes.

Every number is computed in Python (:func:`course_attention.explorers.sinks.explorer_data`: the
sink map by ``sinks.attention_weights``, the loss curves by ``sinks.streaming.position_losses``)
and shipped in the spec; the page picks the chosen model's, window's and sinks' numbers. Here:
the data equal the package's functions, the one-pass recomputation equals ``position_losses``'s,
and every state the page draws equals :func:`course_attention.viz.sinks_explorer_numbers`. The
tests run untrained models (``sinks.compare.build``): the numbers are the package's either way.
"""

from __future__ import annotations

import json

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
from course_attention import corpus, viz, widgets
from course_attention.explorers import sinks as sx
from course_attention.explorers.core import jsonable, seeded
from course_attention.sinks import attention_weights
from course_attention.sinks import compare as sc
from course_attention.sinks.streaming import position_losses


def _models() -> dict:
    return {name: seeded(lambda n=name: sc.build(n, 0), 0) for name in sx.MODELS}


#: Short texts (2 of 64 ids): the package's own recomputation of every state stays quick.
def _texts() -> torch.Tensor:
    return sc.stream_texts()[::8][:2, :64]


# ---- without a browser ------------------------------------------------------------------------

def test_one_pass_recomputes_every_window_as_the_package_does():
    """``recompute_losses`` equals ``position_losses(…, "recompute", w, s)`` for every window
    and sinks, up to float32 rounding (refuted by a row read at the wrong place: the windows'
    losses differ from each other by far more)."""
    texts = _texts()
    for name, model in _models().items():
        for s in sx.SINKS:
            mine = sx.recompute_losses(model, texts, s)
            assert sorted(mine) == list(sx.WINDOWS)
            for w in sx.WINDOWS:
                theirs = position_losses(model, texts, "recompute", w, s)
                assert mine[w].shape == theirs.shape == (texts.shape[1] - 1,)
                np.testing.assert_allclose(mine[w], theirs, rtol=0, atol=2e-5,
                                           err_msg=f"{name}, window {w}, {s} sinks")
            # the control: past the first eviction, another window's recomputation differs
            late = slice(s + max(sx.WINDOWS), None)
            assert np.abs(mine[8][late] - mine[40][late]).max() > 1e-3, (name, s)
    with pytest.raises(ValueError, match="exceeds the model's context"):
        sx.recompute_losses(_models()["sink"], texts, 9)
    with pytest.raises(ValueError, match="longer than"):
        sx.recompute_losses(_models()["sink"], texts[:, :40], 0)


@pytest.fixture(scope="module")
def short_data():
    models = _models()
    return models, sx.explorer_data(models, _texts())


def _binned(losses: np.ndarray) -> np.ndarray:
    bins = [losses[i: i + sx.BIN] for i in range(0, len(losses), sx.BIN)]
    return np.array([b.mean() for b in bins])


def test_the_data_are_the_packages(short_data):
    models, data = short_data
    texts = _texts()
    n_bins = -(-(texts.shape[1] - 1) // sx.BIN)  # 63 positions: the last bin holds fewer
    starts = range(0, texts.shape[1] - 1, sx.BIN)
    np.testing.assert_allclose(data["x"], [np.mean(range(a, min(a + sx.BIN, 63))) for a in starts])
    assert len(data["x"]) == n_bins and data["x"][-1] < data["x"][-2] + sx.BIN
    assert data["queries"].tolist() == list(range(1, sc.CONTEXT))
    np.testing.assert_allclose(data["uniform"], np.round(1 / np.arange(2, sc.CONTEXT + 1), 4))
    probe = sc.start_windows(corpus.load().valid, sc.CONTEXT, 16)
    eps = 0.5 * 10 ** -sx.DIGITS + 1e-9  # the spec's rounding
    for name, model in models.items():
        assert data["share"][name].shape == (2 * 4, sc.CONTEXT - 1)
        weights = attention_weights(model, probe)  # (layers, batch, heads, seq, seq)
        want = weights[:, :, :, 1:, 0].double().mean(1).reshape(8, -1).numpy()
        np.testing.assert_allclose(data["share"][name], want, rtol=0, atol=eps)
        full = position_losses(model, texts, "window", texts.shape[1], 0)
        np.testing.assert_allclose(data["full"][name], _binned(full), rtol=0, atol=eps)
        assert data["past"][name]["full"] == pytest.approx(full[sc.CONTEXT:].mean(), abs=eps)
        assert data["cache"][name].shape == data["recompute"][name].shape == (5, 5, n_bins)
        for i, w in enumerate(sx.WINDOWS):
            for j, s in enumerate(sx.SINKS):
                cache = position_losses(model, texts, "sinks" if s else "window", w, s)
                again = position_losses(model, texts, "recompute", w, s)
                np.testing.assert_allclose(data["cache"][name][i, j], _binned(cache), rtol=0,
                                           atol=eps)
                np.testing.assert_allclose(data["recompute"][name][i, j], _binned(again),
                                           rtol=0, atol=eps + 2e-5)
                past = data["past"][name]
                assert past["cache"][i, j] == pytest.approx(cache[sc.CONTEXT:].mean(), abs=eps)
                assert past["recompute"][i, j] == pytest.approx(again[sc.CONTEXT:].mean(),
                                                                abs=eps + 2e-5)
    # the two models' numbers are their own (refuted by one model drawn twice)
    assert np.abs(data["share"]["modern"] - data["share"]["sink"]).max() > 1e-3
    # the loss axis holds every curve
    top = max(np.max(data[k][n]) for k in ("full", "cache", "recompute") for n in sx.MODELS)
    assert data["loss_range"][0] == 0 and top <= data["loss_range"][1] <= 1.05 * top + 0.5


def test_bad_input_is_refused(short_data):
    models, _ = short_data
    texts = _texts()
    for bad in ({"modern": models["modern"]}, {**models, "gpt2": sc.build("gpt2", 0)},
                [models["modern"], models["sink"]]):
        with pytest.raises(ValueError, match="models must be a dict"):
            sx.explorer_data(bad, texts)
    with pytest.raises(ValueError, match="must be a ModernGPT"):
        sx.explorer_data({"modern": models["modern"], "sink": sc.build("gpt2", 0)}, texts)
    for short in (texts[:, :48], texts[0]):
        with pytest.raises(ValueError, match="texts must be"):
            sx.explorer_data(models, short)
    data = sx.default_data()
    for bad in ({"model": "gpt2"}, {"window": 12}, {"sinks": 3}):
        with pytest.raises(ValueError, match="need model"):
            viz.sinks_explorer_numbers(data, **({"model": "sink", "window": 16, "sinks": 4}
                                                | bad))
        with pytest.raises(ValueError, match="need model"):
            widgets.sinks_explorer(**bad)


def test_the_widget_redraws_with_the_controls():
    e = widgets.sinks_explorer()
    assert e.live["data"] is sx.default_data()
    e.controls["model"].value, e.controls["window"].value, e.controls["sinks"].value = \
        "modern", 40, 0
    want = viz.sinks_explorer_numbers(sx.default_data(), "modern", 40, 0)
    assert np.array_equal(np.array(e.figure.data[0].z), want["share"])
    assert list(e.figure.data[1].y) == want["cache"].tolist()
    assert list(e.figure.data[5].x) == [40, 40]
    assert f"{want['past']['recompute']:.2f}" in e.figure.layout.title.text
    assert e.spec()["text"]["title"] == sx.TITLE  # the page fills the notebook's templates
    assert e.controls["window"].step == 8 and e.controls["sinks"].options[-1] == ("8", 8)


def test_the_page_stays_small():
    size = len(json.dumps(widgets.sinks_explorer().spec(), separators=(",", ":")))
    assert size < 60_000, size


# ---- in Chromium --------------------------------------------------------------------------------

#: The page's legend, shapes and axes: what every state keeps.
_DRAWN = """i => { const gd = CourseAttention.explorers[i].figure, L = gd.layout;
  return {names: gd.data.map(t => t.name), showlegend: gd.data.map(t => t.showlegend),
          annotations: L.annotations || [], shapes: L.shapes || [], legend: L.legend,
          rows: gd.data[0].y, queries: gd.data[0].x, uniform: gd.data[0].customdata,
          context: [gd.data[4].x, gd.data[4].y],
          axes: ['xaxis', 'yaxis', 'xaxis2', 'yaxis2'].map(
            k => [L[k].title, L[k].range, L[k].domain])};
}"""


def _states(data: dict, n: int | None) -> list[tuple]:
    every = [(m, w, s) for m in data["models"] for w in data["windows"] for s in data["sinks"]]
    return thin(every, n)


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``sinks``) over every model, window and sinks (``n``: that
    many states, both ends included); assert every plotted number equals
    :func:`viz.sinks_explorer_numbers` of the spec's data, that the title carries the state and
    its readout, and that every state keeps the first state's axes, legend and shapes. Returns
    the numbers compared."""
    s = spec(page, i)
    data = s["data"]
    ids = {c["id"]: c for c in s["controls"]}
    assert [o["value"] for o in ids["model"]["options"]] == data["models"] == list(sx.MODELS)
    assert [o["value"] for o in ids["sinks"]["options"]] == data["sinks"] == list(sx.SINKS)
    window = ids["window"]
    assert list(range(window["min"], window["max"] + 1, window["step"])) == data["windows"]
    labels = {o["value"]: o["label"] for o in ids["model"]["options"]}
    first = page.evaluate(_DRAWN, i)
    compared = 0
    for model, w, k in _states(data, n):
        set_control(page, i, "model", model)
        set_control(page, i, "window", w)
        set_control(page, i, "sinks", k)
        assert controls(page, i) == {"model": model, "window": w, "sinks": k}
        want = viz.sinks_explorer_numbers(data, model, w, k)
        heat, cache, again, full, _context, size = plotted(page, i)
        assert heat["z"] == want["share"].tolist()
        for trace, key in ((cache, "cache"), (again, "recompute"), (full, "full")):
            assert trace["x"] == data["x"] and trace["y"] == want[key].tolist(), (model, w, k)
        assert size["x"] == [w + k, w + k] and size["y"] == data["loss_range"]
        title = page.evaluate("i => CourseAttention.explorers[i].figure.layout.title.text", i)
        assert labels[model] in title and f" {w}" in title, title
        for value in want["past"].values():
            assert f"{value:.2f}" in title, (title, want["past"])
        now = page.evaluate(_DRAWN, i)
        assert now == first, str([(key, now[key], first[key]) for key in now
                                  if now[key] != first[key]])
        compared += want["share"].size + 3 * len(data["x"]) + 2 + 3
    return compared


_SELECT = """([p, states]) => states.map(([m, w, s]) => CourseAttention.sinks.select(p, m, w, s))"""


@pytest.mark.browser
def test_sinks_explorer_equals_the_package_and_answers_the_keyboard(tmp_path):
    from test_figure_text import TEXTS_JS, problems

    from _site import browser, serve

    explorer = widgets.sinks_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        data = spec(page)["data"]
        assert data == jsonable(sx.default_data())  # the package's numbers, every bit
        first = plotted(page)  # the page's first state is the notebook's figure
        assert len(first) == len(explorer.figure.data) == 6
        assert first[1]["y"] == list(explorer.figure.data[1].y)
        assert first[0]["z"] == [list(r) for r in explorer.figure.data[0].z]
        assert first[0]["customdata"][3] == data["uniform"]  # the hover's 1/(t + 1)

        # the page's selection, state by state, and a state the data do not hold
        states = _states(data, None)
        got = page.evaluate(_SELECT, [data, states + [["sink", 12, 4], ["gpt2", 16, 4]]])
        assert got[-2:] == [None, None]
        for (m, w, s), g in zip(states, got, strict=False):
            want = viz.sinks_explorer_numbers(data, m, w, s)
            assert g["cache"] == want["cache"].tolist() and g["past"] == want["past"]
            assert g["recompute"] == want["recompute"].tolist() and g["size"] == want["size"]

        # every control changes the figure
        for name, value in (("model", "modern"), ("window", 40), ("sinks", 0)):
            before = plotted(page)
            set_control(page, 0, name, value)
            assert plotted(page) != before, name

        assert check(page, 0) == 50 * (8 * 47 + 3 * len(data["x"]) + 5)

        page.add_script_tag(path=str(STATIC / "course_titles.js"))
        for width in (375, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            for model in sx.MODELS:
                for w, s in ((8, 0), (40, 8)):
                    for name, value in (("model", model), ("window", w), ("sinks", s)):
                        set_control(page, 0, name, value)
                    page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                                  "setTimeout(r, 50)))")
                    (figure,) = page.evaluate(TEXTS_JS)
                    assert not problems(figure), (width, model, w, s, problems(figure))
        page.set_viewport_size({"width": 375, "height": 900})

        set_control(page, 0, "window", 24)
        set_control(page, 0, "sinks", 4)
        page.focus("input[name=window]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["window"] == 16 and plotted(page)[5]["x"] == [20, 20]
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert controls(page)["window"] == 32 and plotted(page)[5]["x"] == [36, 36]
        page.focus("select[name=sinks]")
        page.keyboard.press("ArrowDown")  # a select answers the arrows
        assert controls(page)["sinks"] == 8 and plotted(page)[5]["x"] == [40, 40]
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors
