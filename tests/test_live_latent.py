"""Chapter 13's latent explorer (``latent.js``) computes what the package computes.

The page gets one fixed layer's keys, latents, up-projection and scores (float64) and computes
the cache bytes, the rebuilt keys and their errors, the causal top-k choice and the mass it
keeps; every plotted number equals :func:`course_attention.viz.latent_explorer_numbers`, which
computes them with ``mla.MultiHeadLatentAttention.expand``, ``mla.cache_bytes_per_token``,
``sparse.topk_mask`` and ``sparse.topk_mass``.
"""

from __future__ import annotations

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
from course_attention import mla, sparse, viz, widgets
from course_attention.explorers import latent as lt

P = viz.LATENT_LAYER


# ---- without a browser ------------------------------------------------------------------------

def test_the_latent_is_the_best_factor_of_the_keys():
    """``down · up`` is ``W_K``; the width-16 latent (the model width, the rank of ``W_K``)
    rebuilds every key, and each narrower one loses more, no more than the rank-d_c SVD bound
    allows (refuted by a latent that is not the leading singular directions)."""
    layer = viz.latent_layer()
    np.testing.assert_allclose(layer["latents"] @ layer["up"], layer["keys"], atol=1e-12)
    errors = [viz.latent_explorer_numbers(d, 1)["error"] for d in viz.LATENT_WIDTHS]
    assert errors[-1].max() < 1e-12 and errors[0].min() > 0.5
    totals = [np.linalg.norm(viz.latent_explorer_numbers(d, 1)["rebuilt"] - layer["keys"])
              for d in viz.LATENT_WIDTHS]
    assert all(a > b for a, b in zip(totals, totals[1:], strict=False)), totals
    # the control: the *last* d_c directions rebuild the keys worse than the first d_c
    d = 4
    worst = layer["latents"][:, -d:] @ layer["up"][-d:]
    assert np.linalg.norm(worst - layer["keys"]) > totals[viz.LATENT_WIDTHS.index(d)]


def test_the_numbers_are_the_packages():
    n = viz.latent_explorer_numbers(4, 3)
    assert n["cache"] == {"MHA": 2 * 4 * 8 * 2, "GQA": 2 * 2 * 8 * 2, "MLA": (4 + 4) * 2}
    config = mla.MLAConfig(d_model=16, n_heads=4, d_c=4, d_nope=8, d_rope=4, d_v=8, n_layers=1)
    assert n["cache"]["MLA"] == config.cache_numbers_per_token * P["bytes"]
    scores = torch.as_tensor(viz.latent_layer()["scores"])
    read = torch.as_tensor(n["read"])
    assert torch.equal(read, sparse.topk_mask(scores, 3))
    assert read.sum(-1).tolist() == [min(3, t + 1) for t in range(P["tokens"])]  # causal
    assert not read.triu(1).any()
    assert n["mean_mass"] == pytest.approx(float(np.mean(n["mass"])), abs=1e-12)
    assert viz.latent_explorer_numbers(4, P["tokens"])["mass"] == pytest.approx(1.0)
    for bad in ({"d_c": 3}, {"k": 0}, {"k": 17}, {"k": True}):
        with pytest.raises(ValueError):
            viz.latent_explorer_numbers(**({"d_c": 4, "k": 2} | bad))
    with pytest.raises(ValueError, match="need d_c"):
        widgets.latent_explorer(d_c=5)


def test_the_widget_redraws_with_the_controls():
    e = widgets.latent_explorer()
    e.controls["d_c"].value, e.controls["k"].value = 16, 2
    want = viz.latent_explorer_numbers(16, 2)
    assert e.figure.data[0].x == tuple(want["cache"].values())
    assert f"{want['mean_mass']:.2f}" in e.figure.layout.title.text
    assert e.spec()["text"]["title"] == lt.TITLE  # the page fills the notebook's template


# ---- in Chromium --------------------------------------------------------------------------------

_DRAWN = """i => { const gd = CourseAttention.explorers[i].figure, L = gd.layout;
  return {names: gd.data.map(t => t.name), showlegend: L.showlegend,
          annotations: L.annotations || [], shapes: L.shapes || [],
          axes: ['xaxis', 'yaxis', 'xaxis2', 'yaxis2', 'xaxis3', 'yaxis3'].map(
            k => [L[k].title, L[k].range, L[k].domain])};
}"""


def _nulls(grid, where):
    return [[v is not None for v in row] for row in grid] == np.asarray(where).tolist()


def check(page, i, root=None, n: int | None = None) -> int:
    """Drive explorer ``i`` (kind ``latent``) over every width and ``k``; assert every plotted
    number equals the package's to 1e-12 and every state keeps the first state's axes and
    annotations. Returns the numbers compared (``n``: that many ``k`` per width)."""
    s = spec(page, i)
    widths = [o["value"] for o in next(c for c in s["controls"] if c["id"] == "d_c")["options"]]
    assert widths == list(viz.LATENT_WIDTHS)
    first = page.evaluate(_DRAWN, i)
    compared = 0
    for d_c in widths:
        set_control(page, i, "d_c", d_c)
        for k in thin(range(1, P["tokens"] + 1), n):
            set_control(page, i, "k", k)
            want = viz.latent_explorer_numbers(d_c, k)
            bars, error, grey, chosen = plotted(page, i)
            assert bars["y"] == list(want["cache"]) and bars["x"] == list(want["cache"].values())
            np.testing.assert_allclose(error["y"], want["error"], rtol=0, atol=1e-12)
            assert _nulls(grey["z"], want["visible"] & ~want["read"])
            assert _nulls(chosen["z"], want["read"])
            got = np.array([[np.nan if v is None else v for v in row] for row in chosen["z"]])
            np.testing.assert_allclose(got[want["read"]], want["weights"][want["read"]],
                                       rtol=0, atol=1e-12)
            title = page.evaluate("i => CourseAttention.explorers[i].figure.layout.title.text", i)
            assert f"{want['mean_mass']:.2f}" in title and f"top-{k}" in title
            now = page.evaluate(_DRAWN, i)
            assert now == first, str([(key, now[key], first[key]) for key in now
                                      if now[key] != first[key]])
            compared += 3 + P["tokens"] + 2 * P["tokens"] ** 2
    return compared


_TWIN = """([widths, ks, p]) => widths.flatMap(dc => ks.map(k => {
  const r = CourseAttention.latent.rebuild(p, dc), c = CourseAttention.latent.choose(p, k);
  return {dc, k, rebuilt: r.rebuilt, mass: c.mass, mean: c.mean};
}))"""


@pytest.mark.browser
def test_latent_explorer_equals_the_package_and_answers_the_keyboard(tmp_path):
    from test_figure_text import TEXTS_JS, problems

    from _site import browser, serve

    explorer = widgets.latent_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        first = plotted(page)  # the page's first state is the notebook's figure (rounded)
        assert len(first) == len(explorer.figure.data) == 4
        np.testing.assert_allclose(first[1]["y"], explorer.figure.data[1].y, atol=1e-3)
        assert first[0]["x"] == list(explorer.figure.data[0].x)

        # the rebuilt keys themselves and each query's mass: the package's
        ks = list(range(1, P["tokens"] + 1))
        got = page.evaluate(_TWIN, [list(viz.LATENT_WIDTHS), ks, spec(page)["data"]])
        weights = None
        for g in got:
            want = viz.latent_explorer_numbers(g["dc"], g["k"])
            np.testing.assert_allclose(g["rebuilt"], want["rebuilt"], rtol=0, atol=1e-12)
            np.testing.assert_allclose(g["mass"], want["mass"], rtol=0, atol=1e-12)
            weights = torch.as_tensor(want["weights"])
            assert g["mean"] == pytest.approx(sparse.topk_mass(weights, g["k"]), abs=1e-12)

        assert check(page, 0) == 5 * 16 * (3 + 16 + 2 * 256)

        page.add_script_tag(path=str(STATIC / "course_titles.js"))
        for width in (375, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            for d_c in viz.LATENT_WIDTHS:
                for k in (1, P["tokens"]):
                    set_control(page, 0, "d_c", d_c)
                    set_control(page, 0, "k", k)
                    page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                                  "setTimeout(r, 50)))")
                    (figure,) = page.evaluate(TEXTS_JS)
                    assert not problems(figure), (width, d_c, k, problems(figure))
        page.set_viewport_size({"width": 375, "height": 900})

        set_control(page, 0, "k", 5)
        page.focus("input[name=k]")
        page.keyboard.press("ArrowLeft")
        assert controls(page)["k"] == 4
        assert "top-4" in page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        width = page.evaluate("document.querySelector('.ca-controls').scrollWidth")
        assert width <= 375, f"the controls need {width} px at 375 px"
        assert not outside and not errors, errors
