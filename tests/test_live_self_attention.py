"""Chapter 3's live explorer (``self_attention.js``) computes what numpy_ref computes."""

from __future__ import annotations

import numpy as np
import pytest

from _explorers import (
    assert_fits_375,
    message,
    open_page,
    plotted,
    set_control,
    spec,
    standalone,
    wait_live,
)
from course_attention import numpy_ref, toy, viz, widgets
from course_attention.explorers import self_attention as live

CONTEXTS = (0.0, 0.3, 1.0, 1.7, 2.0)


def _reference(ending: str, context: float) -> tuple[toy.ItSentence, np.ndarray]:
    s = toy.it_sentence(ending, context=context)
    _, weights = numpy_ref.scaled_dot_product_attention(s.X @ s.W_q, s.X @ s.W_k, s.X @ s.W_v)
    return s, weights  # (seq, seq)



def check(page, i, root=None) -> int:
    """Drive explorer ``i`` (kind ``self_attention``) over both endings × several contexts ×
    every query position; assert the plotted row equals numpy_ref's to 1e-12, the bars' labels
    and colours follow the query. Returns the number of weights compared."""
    colors = spec(page, i)["data"]["colors"]
    compared = 0
    for ending in toy.IT_ENDINGS:
        set_control(page, i, "ending", ending)
        for context in CONTEXTS:
            context = set_control(page, i, "context", context)  # as the page reads it
            s, weights = _reference(ending, context)
            for query in range(len(s.tokens)):
                assert set_control(page, i, "query", query) == query
                bars = plotted(page, i)[0]
                np.testing.assert_allclose(bars["y"], weights[query], rtol=0, atol=1e-12)
                assert bars["x"] == viz.unique_labels(s.tokens)
                assert bars["marker"]["color"] == [
                    colors["query"] if j == query else colors["key"] for j in range(len(s.tokens))
                ]
                compared += len(s.tokens)
            assert message(page, i) == ""
    return compared


def _title(page, i=0) -> str:
    return page.evaluate("i => CourseAttention.explorers[i].figure.layout.title.text", i)


@pytest.mark.browser
def test_self_attention_explorer_equals_numpy_and_works_by_keyboard_at_375_px(tmp_path):
    from _site import browser, serve

    standalone(widgets.self_attention_explorer(), tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        s = toy.it_sentence("tired")
        assert _title(page) == live.title("tired", s.it_index, _reference("tired", 1.0)[1][7])
        assert check(page, 0) == 2 * len(CONTEXTS) * len(s.tokens) ** 2
        # the titles: a flat row says so; "it" at context 0 cannot tell the sentences apart
        set_control(page, 0, "query", s.tokens.index("animal"))
        assert _title(page).endswith("the same weight on every token")
        set_control(page, 0, "context", 0.0)
        set_control(page, 0, "query", s.it_index)
        rows = []
        for ending in toy.IT_ENDINGS:
            set_control(page, 0, "ending", ending)
            rows.append(plotted(page)[0]["y"])
        np.testing.assert_array_equal(rows[0], rows[1])
        # keyboard: an arrow key moves the query; the readout names the token
        page.focus("input[name=query]")
        page.keyboard.press("ArrowRight")
        assert page.evaluate("CourseAttention.explorers[0].values().query") == s.it_index + 1
        readout = page.locator(".ca-control-range output").nth(1).text_content()
        assert readout == f"{s.it_index + 1}: {s.tokens[s.it_index + 1]}"
        bad = "CourseAttention.explorers[0].update({ending: 'sleepy', query: 0, context: 1})"
        assert page.evaluate(bad)["message"].startswith("Pick an ending")  # a message, no throw
        assert not outside and not errors, errors

        assert_fits_375(chromium, base + "index.html")


def test_the_spec_gives_the_page_the_inputs_of_it_sentence():
    """The page adds ``context`` × the ending's vector to the row of "it": same bits as toy."""
    data = live.spec()["data"]
    for ending in toy.IT_ENDINGS:
        sentence = data["sentences"][ending]
        X0 = np.array(sentence["X"])
        for context in CONTEXTS:
            X = X0.copy()
            X[data["it"]] = X0[data["it"]] + context * X0[-1]
            np.testing.assert_array_equal(X, toy.it_sentence(ending, context).X)
    explorer = widgets.self_attention_explorer(ending="wide", query=3, context=0.5)
    assert [c["name"] for c in explorer.spec()["controls"]] == ["ending", "context", "query"]
    with pytest.raises(ValueError, match="query must be a position"):
        live.query_row("tired", 11, 1.0)
    with pytest.raises(ValueError, match="ending"):
        live.figure("sleepy", 0, 1.0)
