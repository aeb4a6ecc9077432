"""The book plumbing: plotly mime renderer, Sphinx extension, Colab renderer, setup, glue."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch

import course_attention as ca
from course_attention import viz
from course_book import book

ROOT = Path(__file__).resolve().parents[1]


def test_mime_renderer_is_registered_as_a_myst_nb_entry_point():
    names = {ep.name: ep.load() for ep in entry_points(group="myst_nb.mime_renderers")}
    assert names.get("plotly") is book.PlotlyMimeRenderer


def test_mime_renderer_prefers_plotly_json_for_html_builders():
    overrides = dict(((b, m), p) for b, m, p in book.PlotlyMimeRenderer.mime_priority_overrides)
    assert overrides[("html", book.PLOTLY_MIME)] == 1


class _FakeRenderer:
    """What a myst-nb mime renderer is handed: ``add_js_file`` and the site's configuration."""

    def __init__(self, language: str = "en"):
        self.js = {}
        config = SimpleNamespace(course_attention_language=language)
        self.renderer = SimpleNamespace(sphinx_env=SimpleNamespace(config=config))

    def add_js_file(self, key, uri, kwargs):
        self.js[key] = uri


def test_mime_renderer_emits_a_div_and_requests_plotly_js_once():
    fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    renderer = _FakeRenderer()
    data = SimpleNamespace(
        mime_type=book.PLOTLY_MIME,
        content=json.loads(fig.to_json()),
        cell_index=3,
        output_index=0,
    )
    (node,) = book.PlotlyMimeRenderer.handle_mime(renderer, data, inline=False)
    html = node.astext()
    assert 'id="fig-3-0"' in html and "Plotly.newPlot" in html
    assert "<script src=" not in html, "plotly.js must come from the page, not inlined"
    assert renderer.js == {"plotly": "plotly.min.js"}
    assert 'aria-label="Interactive bar"' in html
    (node,) = book.PlotlyMimeRenderer.handle_mime(_FakeRenderer("zh"), data, inline=False)
    assert 'aria-label="交互式柱状图"' in node.astext()  # the Chinese site's words


def test_mime_renderer_ignores_other_types():
    data = SimpleNamespace(mime_type="text/plain", content="x", cell_index=0, output_index=0)
    assert book.PlotlyMimeRenderer.handle_mime(_FakeRenderer(), data, inline=False) is None


def test_extension_copies_plotly_js_of_the_installed_version(tmp_path, monkeypatch):
    from plotly.offline import get_plotlyjs_version

    vendor = tmp_path / "src" / "_vendor" / "plotly"
    vendor.mkdir(parents=True)
    app = SimpleNamespace(
        outdir=str(tmp_path / "out"),
        srcdir=str(tmp_path / "src"),
        builder=SimpleNamespace(format="html"),
        config=SimpleNamespace(course_attention_plotly_dir="_vendor/plotly"),
    )
    full = book.plotly_js_path(None)
    book._copy_plotly_js(app, None)  # no cartesian bundle: the full one
    copied = tmp_path / "out" / "_static" / book.PLOTLY_JS
    assert copied.read_bytes() == full.read_bytes()
    small = vendor / f"plotly-cartesian-{get_plotlyjs_version()}.min.js"
    small.write_text("/* cartesian */")
    monkeypatch.setattr(book, "TRACE_TYPES", {"bar", "heatmap", "scatter"})
    book._copy_plotly_js(app, None)
    assert copied.read_text() == "/* cartesian */"
    monkeypatch.setattr(book, "TRACE_TYPES", {"bar", "scatter3d"})  # not in the small bundle
    book._copy_plotly_js(app, None)
    assert copied.read_bytes() == full.read_bytes()


def test_colab_renderer_waits_for_plotly_before_drawing(monkeypatch):
    default = pio.renderers.default
    try:
        viz.use_colab_renderer()
        assert pio.renderers.default == "course_colab"
        fig = go.Figure(go.Scatter(y=[1, 2]))
        html = pio.renderers["course_colab"].to_mimebundle(fig.to_dict())["text/html"]
        assert "if (window.Plotly)" in html and "s.onload = draw" in html
    finally:
        pio.renderers.default = default


def test_setup_switches_to_the_colab_renderer_only_in_colab(monkeypatch):
    default = pio.renderers.default
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    ca.setup(seed=0)
    assert pio.renderers.default == default
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-test")
    try:
        ca.setup(seed=0)
        assert pio.renderers.default == "course_colab"
    finally:
        pio.renderers.default = default


def _draw() -> tuple[float, float]:
    return np.random.rand(), torch.rand(1).item()  # noqa: NPY002 - the legacy global generator


def test_setup_seeds_numpy_and_torch():
    ca.setup(seed=3)
    first = _draw()
    ca.setup(seed=3)
    assert _draw() == first
    ca.setup(seed=4)
    assert _draw() != first


def test_setup_freezes_the_objects_made_so_far_once():
    """The first call freezes (gc.freeze) what the imports made; a later call freezes nothing
    more, so what a chapter builds after it can still be collected."""
    import gc
    import weakref

    ca.setup(seed=0)
    assert ca._FROZEN and gc.get_freeze_count() > 0
    frozen = gc.get_freeze_count()

    class Node:
        pass

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: only the cycle collector frees it
    gone = weakref.ref(a)
    ca.setup(seed=0)
    assert gc.get_freeze_count() == frozen
    del a, b
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("value", [0.5, np.float64(2.0)])
def test_glue_returns_its_value_outside_a_kernel(value):
    assert ca.glue("x", value) == value


@pytest.mark.parametrize("x, text", [(1e-10, "10⁻¹⁰"), (1e-5, "10⁻⁵"), (1.0, "10⁰"), (1e3, "10³")])
def test_power_of_ten_writes_a_tolerance_as_the_prose_does(x, text):
    assert ca.power_of_ten(x) == text


@pytest.mark.parametrize("x", [2e-10, 1.1e-5, 0.0, -1e-5, float("nan"), float("inf")])
def test_power_of_ten_refuses_what_it_would_round(x):
    with pytest.raises(ValueError, match="not a power of ten"):
        ca.power_of_ten(x)


def test_every_figure_gets_a_text_alternative():
    titled = go.Figure(go.Bar(y=[1]), layout=dict(title=dict(text="Weights <b>now</b>")))
    assert book.figure_label(titled.to_dict()) == "Weights  now . Interactive bar"
    untitled = viz.attention_heatmap([[1.0, 0.0], [0.5, 0.5]], ["a", "b"])
    assert book.figure_label(untitled.to_dict()) == "Interactive heatmap of query against key"
    slider = viz.slider_figure(lambda v: [go.Bar(y=[v])], [1, 2], "v")
    assert book.figure_label(slider.to_dict()).endswith("with a slider")


def test_the_chinese_site_describes_figures_and_explorers_in_chinese():
    """The words the site adds around a (translated) title and axes follow the page's language:
    the screen reader's label and the note for readers without JavaScript."""
    titled = go.Figure(go.Bar(y=[1]), layout=dict(title=dict(text="权重")))
    assert book.figure_label(titled.to_dict(), "zh") == "权重。交互式柱状图"
    both = go.Figure([go.Scatter(y=[1]), go.Heatmap(z=[[1]])],
                     layout=dict(xaxis_title_text="键", yaxis_title_text="查询"))
    assert book.figure_label(both.to_dict(), "zh") == "交互式热力图和散点图，纵轴为查询，横轴为键"
    one = go.Figure(go.Bar(y=[1]), layout=dict(xaxis_title_text="步数"))
    assert book.figure_label(one.to_dict(), "zh") == "交互式柱状图，横轴为步数"
    assert book.figure_label(one.to_dict()) == "Interactive bar of 步数"
    slider = viz.slider_figure(lambda v: [go.Bar(y=[v])], [1, 2], "v")
    assert book.figure_label(slider.to_dict(), "zh").endswith("，带滑块")
    spec = {"kind": "lookup"}
    zh, en = (book.explorer_html(spec, titled.to_dict(), "f", language=x) for x in ("zh", "en"))
    assert 'aria-label="交互图。权重。交互式柱状图"' in zh and "需要 JavaScript" in zh
    assert 'aria-label="Live explorer. 权重. Interactive bar"' in en and "needs JavaScript" in en
    with pytest.raises(ValueError, match="language must be one of"):
        book.figure_label(titled.to_dict(), "fr")


def test_make_lab_needs_no_npm():
    """Only the book needs MathJax and plotly.js; JupyterLab draws with the kernel's plotly."""
    import subprocess

    out = subprocess.run(
        ["make", "-n", "-B", "lab"], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert "npm" not in out and "jupyter lab" in out


def test_doc_comments_do_not_read_as_a_type():
    """Sphinx's napoleon reads a doc comment ``#: Name: text`` as a type, which fails ``-n``."""
    import re

    bad = []
    for path in (ROOT / "src").rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            first = line.lstrip().startswith("#:") and not lines[i - 1].lstrip().startswith("#:")
            if first and re.match(r"\s*#: [^`:]+: ", line):
                bad.append(f"{path.name}:{i + 1}: {line.strip()}")
    assert not bad, bad
