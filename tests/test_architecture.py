"""The architecture figures draw what a forward pass ran: the shapes, the wiring, the chapters."""

from __future__ import annotations

import ast
import copy
import html
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import nbformat
import pytest
import torch

from course_attention import architecture as arch
from course_attention import gpt, modules, viz
from course_book import reader

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("ch-transformer-block", "ch-encoder-decoder", "ch-decoder-only")
#: What the figure draws as one box, decided here on its own: these classes, outermost only.
BOXES = (modules.MultiHeadAttention, modules.FeedForward, modules.PositionalEncoding,
         torch.nn.LayerNorm, torch.nn.Embedding, torch.nn.Linear)


def _models() -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    """The chapters' models, and variants whose wiring or shapes differ."""
    out = {label: arch.chapter_example(label) for label in EXAMPLES}
    torch.manual_seed(1)
    out["pre-norm block"] = (modules.EncoderLayer(16, 2, 64, norm_first=True),
                             (torch.randn(2, 7, 16),))
    config = gpt.GPTConfig(vocab_size=20, context=12, d_model=24, n_heads=3, n_layers=3,
                           tied=True)
    out["tied GPT, 3 layers"] = (gpt.GPT(config), (torch.randint(0, 20, (2, 11)),))
    out["one attention layer"] = (modules.MultiHeadAttention(16, 4),
                                  (torch.randn(1, 3, 16), torch.randn(1, 5, 16)))
    return out


MODELS = _models()


def _independent_shapes(model: torch.nn.Module, inputs: tuple) -> Counter:
    """``(path, output shape)`` of every outermost box-class call: plain forward hooks."""
    seen: Counter = Counter()
    depth = [0]
    handles = []

    def pre(module, args):
        depth[0] += 1

    def post(path):
        def hook(module, args, out):
            depth[0] -= 1
            if depth[0] == 0:
                first = out[0] if isinstance(out, tuple) else out
                seen[(path, tuple(first.shape))] += 1
        return hook

    for path, module in model.named_modules():
        if isinstance(module, BOXES):
            handles.append(module.register_forward_pre_hook(pre))
            handles.append(module.register_forward_hook(post(path)))
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return seen


def _drawn_boxes(fig) -> Counter:
    """``(path, shape)`` read back from the figure's text: every path a box stands for."""
    drawn: Counter = Counter()
    for a in fig.layout.annotations:
        if a.name in (None, "add", "input", "output"):
            continue
        shape = ast.literal_eval(a.text.split("<br>")[-1])
        for path in a.name.split(","):
            drawn[(path, shape)] += 1
    return drawn


@pytest.mark.parametrize("name", list(MODELS))
def test_drawn_shapes_equal_an_independent_forward_pass(name):
    model, inputs = MODELS[name]
    fig = viz.architecture_figure(arch.trace(model, *inputs))
    assert _drawn_boxes(fig) == _independent_shapes(model, inputs)
    with torch.no_grad():
        out = model(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    ends = [a.text.split("<br>") for a in fig.layout.annotations if a.name in ("input", "output")]
    assert [e[-1] for e in ends] == [str(tuple(x.shape)) for x in (*inputs, out)]


def test_the_gpt_trace_matches_chapter_8s_own_forward_pass():
    """Chapter 8 writes the GPT's forward pass out by hand: every intermediate shape agrees."""
    model, (tokens,) = MODELS["ch-decoder-only"]
    tr = arch.trace(model, tokens)
    with torch.no_grad():
        h = model.tok_embed(tokens) + model.pos_embed(torch.arange(tokens.shape[1]))
        assert tr.find("add1")[0].shape == tuple(h.shape) == (1, 9, 64)
        for i, block in enumerate(model.blocks):
            a = block.attn(block.norm1(h), causal=True)[0]
            assert tr.find(f"blocks.{i}.attn")[0].shape == tuple(a.shape)
            h = h + a
            assert tr.find(f"blocks.{i}.add1")[0].shape == tuple(h.shape)
            h = h + block.ff(block.norm2(h))
        logits = model.out(model.norm(h))
    assert tr.find("out")[0].shape == tr.find("output")[0].shape == tuple(logits.shape)
    assert tr.find("pos_embed")[0].shape == (9, 64)  # one vector per position, broadcast


def test_every_course_module_maps_to_its_chapter():
    for name, (model, inputs) in MODELS.items():
        tr = arch.trace(model, *inputs)
        for node in tr.nodes:
            if node.kind != "module":
                continue
            cls = type(model.get_submodule(node.path))
            assert node.chapter in arch.CHAPTERS, (name, node.path)
            if cls.__module__.startswith("course_attention"):
                assert arch.CHAPTER_OF[cls][0] == node.chapter, (name, node.path)
            assert all(c in arch.CHAPTERS for c in node.related)
        for stack in tr.stacks:
            assert stack.chapter in arch.CHAPTERS, (name, stack.path)
        assert tr.chapter in arch.CHAPTERS
    for key, (label, related) in arch.CHAPTER_OF.items():
        cls = key[0] if isinstance(key, tuple) else key
        assert label in arch.CHAPTERS and set(related) <= set(arch.CHAPTERS), cls


def test_the_chapter_table_names_each_chapters_page_label_and_title():
    for label, (page, title) in arch.CHAPTERS.items():
        first = nbformat.read(ROOT / f"{page}.ipynb", as_version=4).cells[0].source.splitlines()
        assert first[0] == f"({label})=" and first[1] == f"# {title}", page


def test_each_box_links_to_its_chapter_on_the_website():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    repository = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert arch.site_url() == reader.site_url(repository["Repository"])  # as the notebooks
    model, inputs = MODELS["ch-encoder-decoder"]
    tr = arch.trace(model, *inputs)
    fig = viz.architecture_figure(tr)
    links = {a.name: re.findall(r'<a href="([^"]+)">', a.text) for a in fig.layout.annotations}
    for node in tr.nodes:
        if node.kind == "module":
            url = arch.chapter_url(node.chapter)
            assert url.startswith(arch.site_url() + "/chapters/") and url.endswith(".html")
            assert any(links.get(",".join(n.paths)) == [url]
                       for n in arch.collapse_repeats(tr).find(node.path))


def test_hover_names_the_module_path_and_its_shape():
    model, inputs = MODELS["ch-decoder-only"]
    fig = viz.architecture_figure(arch.trace(model, *inputs))
    hover = next(t for t in fig.data if t.hovertemplate)
    texts = set(hover.text)
    out = next(t for t in texts if t.startswith("<b>out</b>"))
    assert "output (1, 9, 96)" in out and "input (1, 9, 64)" in out
    attn = next(t for t in texts if t.startswith("<b>blocks.0.attn</b>"))
    for words in ("output (1, 9, 64)", "causal mask", "blocks.1.attn", "chapter 5",
                  "chapter 4"):
        assert words in html.unescape(attn), words


def test_the_wiring_is_measured_not_assumed():
    """Post-norm and pre-norm run the same modules in a different order; the trace sees it."""
    def edges(tr):
        return {(tr.node(e.src).path, tr.node(e.dst).path, e.kind) for e in tr.edges}

    post = edges(arch.trace(*MODELS["ch-transformer-block"][:1],
                            *MODELS["ch-transformer-block"][1]))
    pre = edges(arch.trace(*MODELS["pre-norm block"][:1], *MODELS["pre-norm block"][1]))
    assert {("x", "self_attn", "flow"), ("add1", "norm1", "flow"),
            ("x", "add1", "residual"), ("norm1", "add2", "residual")} <= post
    assert {("x", "norm1", "flow"), ("norm1", "self_attn", "flow"),
            ("x", "add1", "residual"), ("add1", "add2", "residual")} <= pre
    assert ("x", "self_attn", "flow") not in pre and ("x", "norm1", "flow") not in post

    seq = arch.trace(*MODELS["ch-encoder-decoder"][:1], *MODELS["ch-encoder-decoder"][1])
    cross = [(seq.node(e.src).path, seq.node(e.dst).path) for e in seq.edges
             if e.kind == "cross"]
    assert cross == [("enc_norm", "decoder.0.cross_attn"), ("enc_norm", "decoder.1.cross_attn")]
    gpt_tr = arch.trace(*MODELS["ch-decoder-only"][:1], *MODELS["ch-decoder-only"][1])
    kinds = Counter(e.kind for e in gpt_tr.edges)
    assert kinds["residual"] == 2 * gpt.CHAPTER_CONFIG.n_layers and kinds["cross"] == 0
    assert {(gpt_tr.node(e.src).path, e.kind) for e in gpt_tr.edges
            if gpt_tr.node(e.dst).path == "add1"} == {("tok_embed", "flow"),
                                                       ("pos_embed", "flow")}


def test_identical_layers_are_drawn_once_and_different_ones_in_full():
    model, inputs = MODELS["tied GPT, 3 layers"]
    short = arch.collapse_repeats(arch.trace(model, *inputs))
    attn = short.find("blocks.0.attn")[0]
    assert attn.repeat == 3 and attn.also == ("blocks.1.attn", "blocks.2.attn")
    assert not [n for n in short.nodes if n.path.startswith(("blocks.1", "blocks.2"))]
    assert short.stacks[0].collapsed and short.stacks[0].count == 3
    fig = viz.architecture_figure(arch.trace(model, *inputs))
    assert any(a.text.endswith("</a> × 3") for a in fig.layout.annotations)

    odd = copy.deepcopy(model)
    odd.blocks[1].norm2 = torch.nn.Identity()  # block 1 now runs one box fewer
    full = arch.collapse_repeats(arch.trace(odd, *inputs))
    assert not full.stacks[0].collapsed
    assert [n.path for n in full.nodes if n.path.endswith("norm2")] == [
        "blocks.0.norm2", "blocks.2.norm2"]
    assert _drawn_boxes(viz.architecture_figure(arch.trace(odd, *inputs))) == \
        _independent_shapes(odd, inputs)


def test_bad_input_gets_a_value_error_naming_the_problem():
    layer, (x,) = MODELS["ch-transformer-block"]
    cases = [
        (lambda: arch.trace([layer], x), "torch.nn.Module; got list"),
        (lambda: arch.trace(layer), "inputs of EncoderLayer.forward"),
        (lambda: arch.trace(layer, x.tolist()), "torch.Tensor; got list"),
        (lambda: arch.trace(layer, torch.randn(1, 5, 16)), r"d_model=32\); got \(1, 5, 16\)"),
        (lambda: arch.trace(MODELS["ch-decoder-only"][0], torch.randn(1, 9)), "integer tensor"),
        (lambda: arch.trace(torch.nn.Linear(4, 3), torch.randn(2, 5)), r"shapes \(2, 5\)"),
        (lambda: viz.architecture_figure(layer), "needs a Trace"),
        (lambda: arch.collapse_repeats("trace"), "needs a Trace"),
        (lambda: arch.chapter_url("ch-nowhere"), "unknown chapter label"),
        (lambda: arch.chapter_example("ch-masking"), "no example model"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    linear = torch.nn.Linear(4, 3).train()
    with pytest.raises(ValueError):
        arch.trace(linear, torch.randn(2, 5))
    assert linear.training and not linear._forward_hooks and not linear._forward_pre_hooks


def test_tracing_leaves_the_model_and_the_random_state_as_they_were():
    model, inputs = copy.deepcopy(MODELS["tied GPT, 3 layers"])
    model.train()
    model.blocks[0].eval()
    before = torch.random.get_rng_state()
    arch.trace(model, *inputs)
    arch.course_map_traces()
    assert torch.equal(before, torch.random.get_rng_state())
    assert model.training and not model.blocks[0].training and model.blocks[1].training
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())


def test_the_course_map_is_deterministic_and_holds_the_three_models():
    first, second = viz.course_map_figure(), viz.course_map_figure()
    assert first.to_json() == second.to_json()
    headings = [a.text for a in first.layout.annotations if a.text.startswith("<b><a")]
    assert [re.sub(r"<[^>]+>", "", h) for h in headings] == [
        "Chapter 6 · a Transformer block", "Chapter 7 · the encoder–decoder",
        "Chapter 8 · the GPT (decoder-only)"]
    drawn = _drawn_boxes(first)
    for label in EXAMPLES:
        assert _independent_shapes(*arch.chapter_example(label)) <= drawn


def test_importing_viz_does_not_import_torch():
    code = "import sys, course_attention.viz; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.browser
def test_figure_text_is_apart_and_inside_at_phone_and_desktop_widths():
    """Each figure alone on a page, 327 px wide on a 375 px phone and 672 px at 1280 px (the
    book's widths), measured with ``test_figure_text``'s browser code: no overlap, nothing cut,
    every text drawn as held, and the links open the chapter in a new tab."""
    from plotly.offline import get_plotlyjs, get_plotlyjs_version
    from test_figure_text import TEXTS_JS, problems

    from _site import browser, serve

    small = ROOT / "_vendor" / "plotly" / f"plotly-cartesian-{get_plotlyjs_version()}.min.js"
    figures = {"map": viz.course_map_figure()}
    for label in EXAMPLES:
        model, inputs = arch.chapter_example(label)
        figures[label] = viz.architecture_figure(arch.trace(model, *inputs), title=label)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script = small.read_text() if small.exists() else get_plotlyjs()  # the site's bundle
        (folder / "plotly.js").write_text(script, encoding="utf-8")
        found = {}
        with serve(folder) as base, browser() as chromium:
            for name, fig in figures.items():
                div = fig.to_html(include_plotlyjs=False, full_html=False, default_width="100%")
                for viewport, width in ((375, 327), (1280, 672)):
                    page_file = folder / f"{name}-{viewport}.html"
                    page_file.write_text(
                        "<html><head><meta charset='utf-8'><script src='plotly.js'></script>"
                        f"</head><body style='margin:0'><div style='width:{width}px'>{div}"
                        "</div></body></html>", encoding="utf-8")
                    page = chromium.new_page(viewport={"width": viewport, "height": 900})
                    page.goto(base + page_file.name)
                    page.wait_for_function("() => document.querySelector('.main-svg')")
                    page.evaluate("() => document.fonts.ready")
                    measured = page.evaluate(TEXTS_JS)
                    targets = page.evaluate(
                        "() => Array.from(document.querySelectorAll('svg a'))"
                        ".filter(a => a.textContent).map(a => a.getAttribute('target'))")
                    page.close()
                    assert len(measured) == 1 and measured[0]["box"][2] == width
                    found[name, viewport] = problems(measured[0])
                    assert targets and set(targets) == {"_blank"}, (name, viewport)
    assert all(not p for p in found.values()), {k: p for k, p in found.items() if p}
