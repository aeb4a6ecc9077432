"""Chapter 9's live explorer (``induction.js``) runs the trained model as torch does."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from _explorers import (
    controls,
    load_model,
    message,
    model_file,
    open_page,
    set_control,
    spec,
    standalone,
    wait_live,
)
from course_attention import induction as ind
from course_attention import widgets
from course_attention.explorers import induction as live
from course_attention.i18n import _

pytestmark = pytest.mark.browser

#: Held-out sequences: a generator seed the chapter never uses for training or evaluation.
HELD_OUT_SEED = 424_242
N_SEQUENCES = 50

_PLOTTED = """i => { const t = CourseAttention.explorers[i].figure.data[0];
  return {z: t.z, x: t.x, y: t.y}; }"""
_LAST = """i => { const ex = CourseAttention.explorers[i];
  return {logits: ex.lastLogits, predictions: ex.lastPredictions}; }"""
#: On this many of the held-out sequences the reader's path is walked: choose every layer and
#: head in turn (an input or change event per control) and read what is plotted each time. On
#: every sequence the page's forward pass itself is read: its logits and every layer's and head's
#: weights (``lastWeights``, what the figure plots from), with one redraw per sequence.
PLOTTED_SEQUENCES = 3
_EVERY_HEAD = """([i, text, layers, heads, walk]) => {
  const ex = CourseAttention.explorers[i], c = ex.controls;
  c.tokens.input.value = text; c.tokens.input.dispatchEvent(new Event('input'));
  const out = {message: ex.message.hidden ? '' : ex.message.textContent,
               logits: ex.lastLogits, predictions: ex.lastPredictions,
               weights: ex.lastWeights.flat(), z: [], y: ex.figure.data[0].y};
  for (let l = 0; walk && l < layers; l++) {
    c.layer.input.selectedIndex = c.layer.spec.options.findIndex(o => o.value === l);
    c.layer.input.dispatchEvent(new Event('change'));
    for (let h = 0; h < heads; h++) {
      c.head.input.value = h; c.head.input.dispatchEvent(new Event('input'));
      const t = ex.figure.data[0];
      out.z.push(t.z); out.y = t.y;
    }
  }
  return out;
}"""


def _model(page, i, root) -> torch.nn.Module:
    """The torch model rebuilt from the very file the page loaded."""
    if root is None:  # a standalone page: the model travels in the spec's file next to the page
        raise ValueError("check needs root, the folder the page is served from")
    return live.model_from_payload(json.loads(model_file(page, i, root).read_text()))


def check(page, i, root=None, n: int = N_SEQUENCES) -> int:
    """On ``n`` (≥ 50 on the site) held-out sequences with a repeat: the page's logits and its
    weights for every layer and head equal torch's (float32) to 1e-4, and the next-token arg-max
    is the same at every position; on the first ``PLOTTED_SEQUENCES`` the reader's path too:
    each layer and head chosen in turn plots torch's weights. Bad input gets a message.
    Returns the number of values compared."""
    model = _model(page, i, root)
    config = model.config
    wide = _model(page, i, root).double()
    data = ind.repeat_batch(config, n, torch.Generator().manual_seed(HELD_OUT_SEED))
    with torch.no_grad():
        logits, weights = model(data.tokens)  # (batch, seq, vocab), (layers, batch, heads, s, s)
        logits64, weights64 = wide(data.tokens)
    compared = 0
    for b, row in enumerate(data.tokens):
        text = live.tokens_text(row)
        walk = b < PLOTTED_SEQUENCES
        shown = page.evaluate(_EVERY_HEAD, [i, text, config.n_layers, config.n_heads, walk])
        assert shown["message"] == "" and controls(page, i)["tokens"] == text
        np.testing.assert_allclose(shown["logits"], logits[b].numpy(), rtol=0, atol=1e-4)
        np.testing.assert_allclose(shown["logits"], logits64[b].numpy(), rtol=0, atol=1e-9)
        assert shown["predictions"] == logits[b].argmax(-1).tolist()  # the same greedy guesses
        expected = weights[:, b].reshape(-1, *weights.shape[-2:])  # (layers · heads, seq, seq)
        for seen in [shown["weights"]] + ([shown["z"]] if walk else []):
            np.testing.assert_allclose(seen, expected.numpy(), rtol=0, atol=1e-4)
            np.testing.assert_allclose(
                seen, weights64[:, b].reshape(expected.shape).numpy(), rtol=0, atol=1e-9
            )  # float64 torch, the same float32 weights
        assert shown["y"] == ind.position_labels(row)
        compared += logits[b].numel() + expected.numel()
    short = data.tokens[0, :7]  # a shorter sequence than the model's context
    set_control(page, i, "tokens", live.tokens_text(short))
    with torch.no_grad():
        short_logits, short_weights = model(short[None])
    np.testing.assert_allclose(
        page.evaluate(_LAST, i)["logits"], short_logits[0].numpy(), atol=1e-4
    )
    np.testing.assert_allclose(
        page.evaluate(_PLOTTED, i)["z"], short_weights[-1, 0, -1], atol=1e-4
    )  # the last layer and head are still selected
    compared += short_logits.numel() + short_weights[-1, 0, -1].numel()
    for text, culprit in (
        ("3 x 5", "x"),
        (f"1 {config.vocab}", str(config.vocab)),
        ("   ", _(live.NO_TOKENS).format(max=config.vocab - 1)),
        (" ".join(["1"] * (config.seq_len + 1)), str(config.seq_len)),
        ("2 -1", "-1"),
        ("1.5", "1.5"),
    ):
        set_control(page, i, "tokens", text)
        assert culprit in message(page, i), (text, message(page, i))
    set_control(page, i, "tokens", live.tokens_text(data.tokens[1]))
    assert message(page, i) == ""
    return compared


def test_induction_explorer_runs_the_model_as_torch_does(tmp_path):
    from _site import browser, serve

    run = ind.train_induction(steps=20, every=10, eval_size=2, progress=False)
    explorer = widgets.induction_explorer(run=run)
    standalone(explorer, tmp_path)
    size = (tmp_path / "_static/explorers/models/induction.json").stat().st_size
    assert size <= 1_000_000, f"model file {size} bytes: over 1 MB"
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        assert spec(page)["model"]["bytes"] == size
        assert set(controls(page)) == {"layer", "head", "tokens", "draw"}  # no checkpoint
        load_model(page)
        assert controls(page)["tokens"] == live.tokens_text(run.eval_batch.tokens[0])
        first = page.evaluate(_PLOTTED, 0)  # the first state: the chapter's evaluation sequence
        with torch.no_grad():
            _, w = run.model(run.eval_batch.tokens[:1])
        np.testing.assert_allclose(first["z"], w[1, 0, 0].numpy(), atol=1e-4)
        compared = check(page, 0, tmp_path, n=10)  # the built site's test runs all 50
        c = run.model.config
        per_sequence = c.seq_len * c.vocab + c.n_layers * c.n_heads * c.seq_len**2
        assert compared == 10 * per_sequence + 7 * c.vocab + 7 * 7
        page.click("button[name=draw]")  # a fresh random sequence with a repeat, typed for you
        drawn = [int(t) for t in controls(page)["tokens"].split()]
        assert len(drawn) == run.model.config.seq_len and message(page) == ""
        box = page.evaluate("""() => { var a = document.querySelector('textarea.ca-tokens');
            return {value: a.value, width: a.clientWidth,
                    fits: a.scrollHeight <= a.clientHeight + 1,
                    labelled: document.querySelector('label[for="' + a.id + '"]') !== null}; }""")
        # at 375 px every one of the 48 ids is in sight, in the box the reader types in
        assert box["value"] == controls(page)["tokens"] and box["labelled"], box
        assert box["width"] >= 300 and box["fits"], f"the token box at 375 px: {box}"
        with torch.no_grad():
            logits, _ = run.model(torch.tensor([drawn]))
        np.testing.assert_allclose(page.evaluate(_LAST, 0)["logits"], logits[0], atol=1e-4)
        title = page.evaluate("CourseAttention.explorers[0].figure.layout.title.text")
        right, n = live.predicted_right(run.model, drawn)  # the notebook's line, same words
        assert title.endswith(f"next token predicted right at {right} of {n} positions</sup>")
        assert n == len(drawn) - 1
        page.fill("textarea.ca-tokens", "1 2 3 1 2")  # typing in the box runs the model
        assert controls(page)["tokens"] == "1 2 3 1 2" and message(page) == ""
        set_control(page, 0, "tokens", "5 99")  # bad text: the notebook's message, word for word
        notebook = widgets.induction_explorer(run=run)
        notebook.controls["tokens"].value = "5 99"
        assert message(page) == notebook.message != ""
        set_control(page, 0, "tokens", " ".join(map(str, drawn)))
        page.focus("input[name=head]")  # keyboard: an arrow key moves the head slider
        page.keyboard.press("ArrowLeft")
        assert controls(page)["head"] == 2
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 375 + 1, f"the page scrolls sideways at 375 px: {wide}"
        times = {}
        for name, event in (
            ("head", lambda k: set_control(page, 0, "head", k % 4)),
            ("sequence", lambda k: page.click("button[name=draw]")),
        ):
            start = len(page.evaluate("() => CourseAttention.explorers[0].redrawMs"))
            for k in range(30):
                event(k)
            times[name] = np.median(
                page.evaluate("n => CourseAttention.explorers[0].redrawMs.slice(n)", start)
            )
        print(
            f"\nmedian redraw: new head {times['head']:.1f} ms, new sequence of 48 tokens "
            f"(forward pass) {times['sequence']:.1f} ms; model file {size} bytes"
        )
        assert not outside and not errors, errors

