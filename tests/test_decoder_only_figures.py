"""Chapter 8's figures and live explorer: bars that add up, messages instead of errors."""

from __future__ import annotations

import html

import numpy as np
import pytest

from course_attention import corpus, viz, widgets
from course_attention import numpy_ref as ref


def _probs(T: float) -> np.ndarray:
    logits = np.random.default_rng(0).normal(size=corpus.VOCAB_SIZE) * 2
    return ref.softmax(logits, temperature=T)


def test_next_char_bars_add_up_at_every_temperature():
    temps = (0.5, 1.0, 2.0)
    probs = np.stack([_probs(T) for T in temps])
    shown = list(np.argsort(-probs[1])[:10])
    bars_by_t = []
    for p, sample in zip(probs, ["a", "b", "c"], strict=True):
        bars, text = viz.next_char_traces(p, shown, corpus.VOCAB, "def ", sample)
        assert len(bars.y) == 11 and abs(sum(bars.y) - 1) < 1e-3  # 10 shown + "all others"
        assert np.allclose(bars.y[:10], p[shown], atol=1e-4)
        bars_by_t.append(bars.y)
    assert bars_by_t[0] != bars_by_t[2]


def test_sample_text_is_escaped_keeps_spaces_and_bolds_the_prompt():
    html = viz.sample_html("if a < b:", "\n    x = 1")
    assert "&lt;" in html and "<br>" in html and "\u00a0" * 4 in html
    assert html.startswith("<b>if\u00a0a\u00a0&lt;\u00a0b:</b>")
    assert viz.char_label("\n") == "⏎" and viz.char_label(" ") == "␣"


def test_sample_text_keeps_quotes_plotly_would_draw_an_entity_literally():
    # plotly decodes &amp; &lt; &gt; (and &nbsp; &mu; &times; &plusmn; &deg;) but not &quot;
    text = viz.sample_html("x = ", "\"a\" + 'b' & c")
    assert "&quot;" not in text and "&#x27;" not in text
    assert '"a"' in text and "'b'" in text and "&amp;" in text
    assert "&quot;" not in viz.message_figure('a "quoted" word').data[0].text[0]


def test_sample_text_is_cut_into_lines_that_fit_a_phone():
    sample = "    return " + "x" * 70 + "\n"
    text = viz.sample_html("def f(x):\n", sample, width=34)
    drawn = [line.replace("<b>", "").replace("</b>", "") for line in text.split("<br>")]
    assert max(len(html.unescape(line)) for line in drawn) <= 34
    assert "".join(html.unescape(line) for line in drawn).replace("\u00a0", " ") == (
        "def f(x):" + sample.replace("\n", "")
    )
    many = viz.sample_html("", "y" * 34 * 10, max_lines=6)
    assert many.count("<br>") == 5 and many.endswith("y" * 34)


def test_a_cropped_prompt_bolds_only_what_the_model_read_and_says_so():
    prompt, sample = "abcdefgh", "XY"
    text = viz.sample_html(prompt, sample, read=3)
    note, line = text.split("<br>")
    assert note == "<i>" + viz.CROPPED.format(n=3).replace(" ", "\u00a0") + "</i>"
    assert line == '<span style="color:#8a8a8a">abcde</span><b>fgh</b>XY'
    assert viz.sample_html(prompt, sample, read=8) == viz.sample_html(prompt, sample) == (
        "<b>abcdefgh</b>XY")  # all read: no note, nothing grey
    long = viz.sample_html("p" * 300, "s" * 40, read=64)  # the note is one of the six lines
    assert long.count("<br>") == 5 and long.startswith("<i>")
    with pytest.raises(ValueError, match="read"):
        viz.sample_html(prompt, sample, read=0)


def test_a_long_title_is_broken_into_two_lines():
    title = "T = 1.00, top-k 96, top-p 1.00: the next character, and 40 sampled"
    fig = viz.next_char_figure(_probs(1.0), [0, 1], corpus.VOCAB, "x", "y", title=title)
    assert fig.layout.title.text == title.replace(": ", ":<br>", 1)
    assert all(len(part) <= 40 for part in fig.layout.title.text.split("<br>"))
    assert viz.title_lines("short: one") == "short: one" and viz.title_lines(None) is None


def test_loss_and_work_figures():
    fig = viz.loss_baselines_figure(np.linspace(4, 2, 50), {"bigram": 2.3})
    assert len(fig.data) == 2 and fig.data[1].y == (2.3, 2.3)
    fig = viz.cache_work_figure([1, 2, 3], [9, 19, 30], [9, 10, 11])
    assert [t.name for t in fig.data] == ["no cache", "KV cache"]
    with pytest.raises(ValueError, match="losses"):
        viz.loss_baselines_figure(np.zeros((2, 2)), {})
    with pytest.raises(ValueError, match="shown ids"):
        viz.next_char_figure(_probs(1.0), [96], corpus.VOCAB, "x", "y")


@pytest.mark.parametrize(
    "prompt, message", [("café", "outside the vocabulary"), ("", "at least one character")]
)
def test_explorer_shows_a_message_for_a_prompt_it_cannot_read(prompt, message):
    explorer = widgets.gpt_explorer()
    explorer.controls["prompt"].value = prompt
    assert message in explorer.message


def test_explorer_reads_a_prompt_longer_than_the_context():
    explorer = widgets.gpt_explorer()
    explorer.controls["prompt"].value = "x" * 60  # the model reads the last 48, as nanoGPT
    text = explorer.figure.data[1].text[0]
    assert explorer.message == "" and text.startswith("<i>")  # it says what it read
    grey = '<span style="color:#8a8a8a">' + "x" * 12 + "</span>"  # 60 − 48 not read
    assert text.split("<br>")[1:3] == [grey + "<b>" + "x" * 22 + "</b>",  # 34 a line
                                       "<b>" + "x" * 26 + "</b>" + text.split("<br>")[2][33:]]


def test_explorer_samples_after_the_prompt():
    explorer = widgets.gpt_explorer(prompt="x" * 40)
    text = explorer.figure.data[1].text[0]
    assert text.startswith("<b>" + "x" * 34 + "</b><br><b>" + "x" * 6 + "</b>")  # 34 a line
