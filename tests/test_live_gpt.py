"""Chapter 8's live GPT explorer (``gpt.js``) computes what torch and ``sampling`` compute."""

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
    plotted,
    set_control,
    set_controls,
    spec,
    standalone,
    wait_live,
)
from course_attention import corpus, gpt, sampling, viz, widgets
from course_attention.explorers import gpt as live_gpt
from course_attention.training import torch_threads

pytestmark = pytest.mark.browser

#: (temperature, top_k, top_p) settings; the sampled continuation rotates through them.
SETTINGS = [(1.0, 96, 1.0), (0.5, 5, 1.0), (1.5, 96, 0.9), (0.8, 20, 0.6), (2.0, 40, 0.95)]


def held_out_prompts(n: int = 50) -> list[str]:
    """``n`` prompts from the validation text (``pprint.py``, never trained on): pieces of its
    lines, 1 to 48 characters long (a text box holds no newline)."""
    lines = [line for line in corpus.load().valid_text.split("\n") if line.strip()]
    step = len(lines) // n
    out = []
    for j in range(n):
        line = lines[j * step]
        length = 1 + (j * 7) % 48
        out.append(line[:length])
    return out


def _js(page, i: int, name: str):
    return page.evaluate(f"i => CourseAttention.explorers[i].{name}", i)


def _check_sampled(model, ids, n, setting, seed, js_tokens, js_uniforms) -> int:
    """The page's sampled continuation equals gpt.generate with seeded_sampler's draws; a first
    difference is allowed only where the draw lies within 1e-4 of a boundary of the cumulative
    probabilities (float32 torch against float64 JavaScript). Returns the tokens compared."""
    T, k, p = setting
    assert np.allclose(js_uniforms, live_gpt.uniforms(seed, n), rtol=0, atol=0)
    run = gpt.generate(model, ids, n, choose=live_gpt.seeded_sampler(T, k, p, seed))
    ours = [int(t) for t in run.tokens]
    if ours == js_tokens:
        return n
    s = next(t for t in range(n) if ours[t] != js_tokens[t])
    cum = np.cumsum(sampling.next_token_probabilities(run.logits[s], T, k, p))
    assert np.abs(cum - js_uniforms[s]).min() < 1e-4, (s, ours, js_tokens)
    return s


def check(page, i, root=None, n: int = 50) -> int:
    """Load explorer ``i``'s model (kind ``gpt``), rebuild it in torch from the file the page
    loaded, and for 50 held-out prompts assert: the logits equal torch's to 1e-4; the page's
    probabilities equal ``sampling.next_token_probabilities`` of those logits to 1e-12 for
    several (temperature, top-k, top-p); the bars plot them; the greedy continuation equals
    ``gpt.generate``'s and the sampled one ``gpt.generate`` with ``live.gpt.seeded_sampler``.
    Then bad input gives the notebook's messages. Returns the values compared."""
    if not page.evaluate("i => CourseAttention.explorers[i].update !== null", i):
        load_model(page, i)
    model = live_gpt.model_from_payload(json.loads(model_file(page, i, root).read_text()))
    with torch_threads(1):  # small model, shared cores: one thread is the fastest
        return _check(page, i, model, n)


def _compare(page, i, model, prompt, setting, sample, seed, n) -> int:
    """One state of the page against torch and ``sampling``; returns the values compared."""
    T, k, p = setting
    ids = corpus.encode(prompt, strict=True)
    assert message(page, i) == "", (prompt, message(page, i))
    with torch.no_grad():  # the model reads the last `context` characters (nanoGPT's crop)
        window = torch.as_tensor(ids[-model.config.context:])[None]
        want = model(window)[0, -1].double().numpy()  # (vocab,)
    logits = np.array(_js(page, i, "lastLogits"))
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-4, err_msg=prompt)
    probs = sampling.next_token_probabilities(logits, T, k, p)
    np.testing.assert_allclose(_js(page, i, "lastProbs"), probs, rtol=0, atol=1e-12)
    bars, text = plotted(page, i)[:2]
    shown = [corpus.VOCAB.index({"⏎": "\n", "␣": " "}.get(x, x)) for x in bars["x"][:-1]]
    # the 12 most likely, less those top-k / top-p left at 0 (issue 16: no zero bars)
    assert shown == [int(t) for t in np.argsort(-probs, kind="stable")[:12] if probs[t] > 0]
    assert shown == live_gpt.shown_ids(probs)
    np.testing.assert_allclose(bars["y"][:-1], probs[shown], rtol=0, atol=1e-12)
    assert abs(bars["y"][-1] - max(0.0, 1 - probs[shown].sum())) < 1e-12
    tokens = _js(page, i, "lastTokens")
    if sample:
        compared = _check_sampled(model, ids, n, setting, seed, tokens,
                                  _js(page, i, "lastUniforms"))
    else:
        assert tokens == gpt.generate(model, ids, n).tokens.tolist(), prompt
        compared = n
    # a prompt longer than the context: only its last `context` characters bold, and a note
    assert text["text"][0] == viz.sample_html(prompt, corpus.decode(tokens),
                                              read=model.config.context)
    return compared + len(logits) + len(probs) + len(bars["y"])


def _check(page, i, model, n: int) -> int:
    data = spec(page, i)["data"]
    context, compared = model.config.context, 0
    for j, prompt in enumerate(held_out_prompts(n)):
        n = data["n_new"]  # never cut: past the context the window slides (gpt.generate)
        # greedy at the current settings, then a sampled continuation at the next setting
        values = set_controls(page, i, {"sample": False, "prompt": prompt})  # one redraw
        setting = (values["temperature"], int(values["top_k"]), values["top_p"])
        compared += _compare(page, i, model, prompt, setting, False, data["seed"], n)
        setting = SETTINGS[j % len(SETTINGS)]
        set_controls(page, i, {**dict(zip(("temperature", "top_k", "top_p"), setting,
                                          strict=True)), "sample": True})
        compared += _compare(page, i, model, prompt, setting, True, data["seed"], n)
    bad = ["", "café\tau lait"]
    for prompt in bad:  # the notebook's own messages, from the widget with the same model
        set_control(page, i, "prompt", prompt)
        notebook = widgets.gpt_explorer(prompt=prompt, model=model).message
        assert notebook and message(page, i) == notebook, (message(page, i), notebook)
    long = held_out_prompts(1)[0] * (context // 4)  # longer than the context: cropped, no message
    set_control(page, i, "sample", False)
    set_control(page, i, "prompt", long)
    values = controls(page, i)
    setting = (values["temperature"], int(values["top_k"]), values["top_p"])
    compared += _compare(page, i, model, long, setting, False, data["seed"], data["n_new"])
    set_control(page, i, "prompt", "café\t")
    assert message(page, i).endswith("'\\t', 'é'"), message(page, i)
    set_control(page, i, "prompt", "def ")
    assert message(page, i) == ""
    return compared + len(bad) + 1


def _briefly_trained() -> gpt.GPT:
    with torch_threads(1):
        model, _ = gpt.train_gpt(gpt.CHAPTER_CONFIG, corpus.load().train, steps=60, lr=6e-3,
                                 progress=False)
    return model.eval()


def test_gpt_explorer_equals_torch_and_sampling(tmp_path):
    from _site import browser, serve

    model = _briefly_trained()
    explorer = widgets.gpt_explorer(prompt="for i in ", model=model)
    page_spec = explorer.spec()
    assert page_spec["kind"] == "gpt" and len(page_spec["controls"]) == 5
    standalone(explorer, tmp_path)
    size = (tmp_path / "_static/explorers/models/gpt.json").stat().st_size
    assert size <= 1_000_000, size
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        load_model(page, 0)
        # the first state equals the notebook's figure (same seeded sample in both front ends)
        assert plotted(page)[1]["text"] == list(explorer.figure.data[1].text)
        compared = check(page, 0, tmp_path, n=12)  # the built site's test runs 50
        assert compared > 12 * 2 * (96 + 96 + 13)
        page.focus("input[name=top_k]")  # keyboard: an arrow key moves a slider
        before = plotted(page)[0]["y"]
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("Home")
        assert plotted(page)[0]["y"] != before
        assert not outside and not errors, (outside, errors)


def test_gpt_explorer_fits_a_phone(tmp_path):
    from _site import browser, serve

    standalone(widgets.gpt_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html", width=375)
        wait_live(page)
        load_model(page, 0)
        set_control(page, 0, "prompt", "éa")
        assert "'é'" in message(page, 0)
        labels = page.evaluate(
            "() => Array.from(document.querySelectorAll('.ca-controls label'))"
            ".map(l => [l.textContent, document.getElementById(l.htmlFor) !== null])"
        )
        assert [lab for lab, ok in labels if ok] == ["prompt", "sample (off: greedy)",
                                                     "temperature", "top-p", "top-k"]
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 375, width
        assert not outside and not errors, (outside, errors)
