"""Chapter 7's live explorer (``decoding.js``) decodes what the torch model decodes, in Chromium."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from _explorers import (
    load_model,
    message,
    model_file,
    open_page,
    plotted,
    set_control,
    standalone,
    wait_live,
)
from course_attention import inspection, modules, tasks, training, viz, widgets
from course_attention.explorers import decoding as seq2seq
from course_attention.i18n import _, language

pytestmark = pytest.mark.browser

#: Typed text the page must refuse with a message, and a fragment of that message.
BAD_INPUT = {
    "12a": "digits 0-9 only",
    "": "empty",
    "   ": "empty",
    "3.14": "digits 0-9 only",
    "٣١٤": "digits 0-9 only",  # Arabic-Indic digits: not the model's tokens
    "12": "3 to 8 digits and you typed 2",
    "123456789": "3 to 8 digits and you typed 9",
}


def _held_out(lo: int, hi: int, n: int = 54) -> list[str]:
    """``n`` strings of ``lo … hi`` digits the chapter's model never trained on (its held-out
    set, spread evenly over the lengths)."""
    test_src = tasks.sequence_task("reverse", min_len=lo, max_len=hi).test_src
    rows = test_src[np.linspace(0, len(test_src) - 1, n).round().astype(int)]
    return ["".join(map(str, tasks.decode_digits(row))) for row in rows]


def _torch_decoding(model, exact, text: str) -> dict:
    """Greedy decoding by ``model.greedy_decode`` (float32) plus every step's logits and the
    cross-attention recomputed by ``exact`` (the same weights in float64, the page's arithmetic)
    from the same tokens."""
    src = torch.from_numpy(tasks.encode_source(text))  # (1, WIDTH + 1)
    n = len(text) + 1
    with torch.no_grad():
        out = model.greedy_decode(
            src, tasks.BOS_ID, tasks.EOS_ID, max_steps=src.shape[1], return_attention=True
        )
        tgt_in = torch.cat([torch.tensor([[tasks.BOS_ID]]), out.tokens[:, :-1]], dim=1)
        logits = model.decode(tgt_in, model.encode(src)[0], src)[0][0]  # (steps, vocab)
        exact_logits, exact_cross = exact.decode(tgt_in, exact.encode(src)[0], src)
    return {
        "ids": out.tokens[0].tolist(),
        "logits": logits.double().numpy(),
        "cross": torch.stack(out.cross_attention)[:, :, 0, :, :n].double().numpy(),
        "exact_logits": exact_logits[0].numpy(),  # (steps, vocab)
        # (layers, heads, steps, seq_s) -> (steps, layers, heads, seq_s)
        "exact_cross": torch.stack(exact_cross)[:, 0, :, :, :n].permute(2, 0, 1, 3).numpy(),
    }


def check(page, i, root, n: int = 54) -> int:
    """Drive explorer ``i`` (kind ``decoding``): on ``n`` held-out strings assert the page's greedy
    decodes equal ``greedy_decode``'s, every step's logits and cross-attention (every layer and
    head) equal torch's to 1e-4 (and the float64 model's to 1e-9), and the plotted heatmap, bars
    and text equal them for a layer and head that change from string to string; then bad input.
    Returns the number of values compared."""
    with training.torch_threads(1):  # tiny models: one thread is faster on shared cores
        return _check(page, i, root, n)


def _check(page, i, root, n: int) -> int:
    if page.evaluate("i => CourseAttention.explorers[i].update === null", i):
        load_model(page, i)
    payload = json.loads(model_file(page, i, root).read_text())
    model = seq2seq.model_from_payload(payload)  # float32, as in the chapter
    exact = seq2seq.model_from_payload(payload).double()
    cfg = payload["config"]
    lo, hi = cfg["lengths"]
    n_layers, n_heads = cfg["n_layers"], cfg["n_heads"]
    compared = 0
    for k, text in enumerate(_held_out(lo, hi, n)):
        set_control(page, i, "digits", text)
        assert message(page, i) == "", (text, message(page, i))
        page_run = page.evaluate("i => CourseAttention.explorers[i].decoded", i)
        ref = _torch_decoding(model, exact, text)
        assert page_run["ids"] == ref["ids"], f"{text}: the page decoded {page_run['tokens']}"
        for name, tol in (("logits", 1e-4), ("cross", 1e-4)):
            np.testing.assert_allclose(page_run[name], ref[name], rtol=0, atol=tol, err_msg=text)
            np.testing.assert_allclose(page_run[name], ref["exact_" + name], rtol=0, atol=1e-9)
            compared += 2 * ref[name].size
        # the figure: step to the end, with a layer and head that change from string to string
        layer, head = k % n_layers, k % (n_heads + 1) - 1  # head -1: the average of the heads
        n_steps = len(ref["ids"])
        step = max(1, n_steps - k % 3)  # mostly the last step, sometimes one or two earlier
        set_control(page, i, "layer", layer)
        set_control(page, i, "head", head)
        assert set_control(page, i, "step", step) == step
        heat, bars, line = plotted(page, i)
        rows = ref["cross"][:, layer]  # (steps, heads, seq_s)
        rows = rows.mean(axis=1) if head < 0 else rows[:, head]  # (steps, seq_s)
        z = np.array([[np.nan if v is None else v for v in r] for r in heat["z"]], dtype=float)
        np.testing.assert_allclose(z[:step], rows[:step], rtol=0, atol=1e-4, err_msg=text)
        assert np.isnan(z[step:]).all(), "the steps not taken yet stay blank"
        np.testing.assert_allclose(bars["y"], rows[step - 1], rtol=0, atol=1e-4)
        source = tasks.token_names(tasks.encode_source(text)[0, : len(text) + 1])
        assert heat["x"] == bars["x"] == viz.unique_labels(source)
        picked = tasks.token_names(ref["ids"])[step - 1]
        picks = _("decoder input: {so_far} → picks: <b>{token}</b>").split("{token}")[0]
        assert line["text"][0].endswith(picks.split("{so_far}")[-1] + f"{picked}</b>")
        title = page.evaluate("i => CourseAttention.explorers[i].figure.layout.title.text", i)
        template = seq2seq.TITLE_AVERAGE if head < 0 else seq2seq.TITLE_HEAD
        assert title == _(template).format(step=step, n=n_steps, layer=layer + 1,
                                           head=head + 1), title
        compared += step * rows.shape[1] + rows.shape[1]
        if layer == n_layers - 1 and head < 0:  # the chapter's own view: decoding_steps
            steps = inspection.decoding_steps(model, text, lengths=(lo, hi))
            np.testing.assert_allclose(z[:step], steps.weights[:step], rtol=0, atol=1e-4)
            compared += step * rows.shape[1]
    n_steps = len(ref["ids"])
    assert page.evaluate(f"i => CourseAttention.explorers[i].controls.step.input.max == "
                         f"{max(2, n_steps)}", i), "the step slider ends at the last step"
    for text, says in BAD_INPUT.items():
        set_control(page, i, "digits", text)
        # the English words; in any language, the notebook's own message (below)
        assert language() != "en" or says in message(page, i), (text, message(page, i))
        try:  # the notebook's explorer shows the very same message (explorers.decoding)
            seq2seq.check_digits(text, (lo, hi))
        except ValueError as error:
            assert str(error) == message(page, i), (text, str(error), message(page, i))
        else:
            raise AssertionError(f"{text!r}: the notebook accepts what the page refuses")
        assert page.evaluate("i => CourseAttention.explorers[i].decoded", i) is None
    set_control(page, i, "digits", _held_out(lo, hi)[0])
    assert message(page, i) == ""
    return compared


@pytest.fixture(scope="module")
def trained() -> modules.Seq2SeqTransformer:
    """The chapter's model and task, trained for 200 steps (about 3 s)."""
    torch.manual_seed(0)
    model = modules.Seq2SeqTransformer(
        tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
    )
    training.train(model, tasks.sequence_task("reverse"), steps=200, lr=1e-2, progress=False)
    return model.eval()


def test_payload_round_trips_and_checks_its_input(trained):
    data = seq2seq.payload(trained, (3, 8))
    rebuilt = seq2seq.model_from_payload(data)
    for name, tensor in trained.state_dict().items():
        assert torch.equal(rebuilt.state_dict()[name], tensor), name
    decoded = seq2seq.decode(trained, " 2718 ", (3, 8))
    steps = inspection.decoding_steps(trained, "2718", lengths=(3, 8))
    assert decoded.tokens == steps.tokens and decoded.source == steps.source
    np.testing.assert_allclose(decoded.steps().weights, steps.weights, atol=1e-6)
    assert decoded.logits.argmax(axis=-1).tolist() == [
        tasks.BOS_ID if t == "[BOS]" else tasks.EOS_ID if t == "[EOS]"
        else int(t) + tasks.DIGIT_OFFSET for t in decoded.tokens
    ]
    for bad, says in (("12a", "0-9 only"), ("", "empty"), ("12", "you typed 2"), ("²34", "0-9")):
        with pytest.raises(ValueError, match=says):
            seq2seq.decode(trained, bad, (3, 8))
    with pytest.raises(ValueError, match="lengths"):
        seq2seq.payload(trained, (3, 11))
    with pytest.raises(ValueError, match="Seq2SeqTransformer"):
        seq2seq.payload(torch.nn.Linear(2, 2), (3, 8))
    with pytest.raises(ValueError, match="head=4"):
        decoded.steps(1, 4)


def test_decoding_explorer_equals_torch_in_the_browser(trained, tmp_path):
    from _site import browser, serve

    standalone(widgets.decoding_explorer(digits="2718", model=trained, lengths=(3, 8)), tmp_path)
    size = next((tmp_path / "_static").rglob("models/decoding.json")).stat().st_size
    assert size <= 1_000_000, f"the model file has {size} bytes"
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        assert page.locator("input[name=digits]").is_disabled(), "no model yet: nothing to run"
        assert check(page, 0, tmp_path, n=12) > 12 * 100  # the built site's test runs 54
        page.focus("input[name=step]")  # keyboard: an arrow key moves the step slider
        before = plotted(page)[2]["text"]
        page.keyboard.press("ArrowLeft")
        assert plotted(page)[2]["text"] != before
        assert not outside and not errors, errors
        narrow, _, _ = open_page(chromium, base + "index.html", width=375)
        wait_live(narrow)
        load_model(narrow)
        wide = narrow.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 375, f"the page is {wide} px wide at a 375 px screen"
