"""Chapter 3: the "it" sentences, recurrence vs attention, figures, explorer and bad inputs."""

from __future__ import annotations

import time

import numpy as np
import pytest

from course_attention import experiments as E
from course_attention import numpy_ref as ref
from course_attention import toy, viz, widgets


def _self_attention(s: toy.ItSentence) -> tuple[np.ndarray, np.ndarray]:
    return ref.scaled_dot_product_attention(s.X @ s.W_q, s.X @ s.W_k, s.X @ s.W_v)


@pytest.mark.parametrize("ending", toy.IT_ENDINGS)
def test_it_attends_mostly_to_its_referent(ending):
    s = toy.it_sentence(ending)
    out, weights = _self_attention(s)
    assert s.X.shape == (11, len(toy.IT_FEATURES))
    assert s.W_q.shape == s.W_k.shape == (7, 3) and s.W_v.shape == (7, 2)
    assert out.shape == (11, 2) and weights.shape == (11, 11)
    row = weights[s.it_index]
    assert s.tokens[s.it_index] == "it" and s.tokens[-1] == ending
    assert s.tokens[int(row.argmax())] == s.referent
    assert row.max() > 0.5
    other = "street" if s.referent == "animal" else "animal"
    assert row[s.tokens.index(s.referent)] > 5 * row[s.tokens.index(other)]


def test_without_context_it_cannot_tell_the_sentences_apart():
    rows = [_self_attention(toy.it_sentence(e, context=0.0))[1][7] for e in toy.IT_ENDINGS]
    np.testing.assert_allclose(rows[0], rows[1])


def test_toy_rejects_bad_input():
    with pytest.raises(ValueError, match="ending must be one of"):
        toy.it_sentence("sleepy")
    with pytest.raises(ValueError, match="strength"):
        toy.it_projections(-1.0)


def test_self_attention_is_permutation_equivariant():
    s = toy.it_sentence("wide")
    out, _ = _self_attention(s)
    perm = np.random.default_rng(0).permutation(len(s.tokens))
    shuffled = toy.ItSentence(s.ending, s.tokens, s.X[perm], s.W_q, s.W_k, s.W_v, 0, s.referent)
    np.testing.assert_allclose(_self_attention(shuffled)[0], out[perm], atol=1e-12)


def test_recurrence_takes_one_step_per_token_and_rejects_bad_shapes():
    rng = np.random.default_rng(0)
    X, W_h, W_x = rng.normal(size=(9, 4)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    H, steps = E.recurrence(X, W_h, W_x)
    assert H.shape == (9, 3) and steps == 9
    # the first state sees only the first token
    np.testing.assert_allclose(H[0], np.tanh(X[0] @ W_x))
    with pytest.raises(ValueError, match=r"W_x \(4, 3\), W_h \(2, 2\)"):
        E.recurrence(X, np.zeros((2, 2)), W_x)


def test_timing_counts_steps_and_is_fast():
    start = time.perf_counter()
    timing = E.time_recurrence_and_attention()
    assert time.perf_counter() - start < 0.5
    np.testing.assert_array_equal(timing.recurrence_steps, timing.seq)
    np.testing.assert_array_equal(timing.attention_steps, 1)
    assert (timing.recurrence_seconds > 0).all() and (timing.attention_seconds > 0).all()
    with pytest.raises(ValueError, match="repeats"):
        E.time_recurrence_and_attention(repeats=0)


def test_path_length_and_memory():
    assert E.path_length(10, "recurrence") == 9 and E.path_length(10, "attention") == 1
    with pytest.raises(ValueError, match="kind"):
        E.path_length(10, "convolution")
    _, w = ref.scaled_dot_product_attention(*np.zeros((3, 64, 4)))
    assert E.attention_weight_bytes(64, dtype=w.dtype) == w.nbytes
    assert E.attention_weight_bytes(2048) == 4 * E.attention_weight_bytes(1024)
    assert E.attention_weight_bytes(10, batch=2, n_heads=3, dtype=np.float16) == 1200
    with pytest.raises(ValueError, match="seq"):
        E.attention_weight_bytes(0)


def test_query_token_slider_has_one_frame_per_token_and_each_frame_is_a_row():
    s = toy.it_sentence("tired")
    _, weights = _self_attention(s)
    fig = viz.query_token_slider(weights, s.tokens, active=s.it_index)
    assert len(fig.frames) == len(s.tokens)
    assert fig.layout.sliders[0].active == s.it_index
    for i, frame in enumerate(fig.frames):
        np.testing.assert_allclose(frame.data[0].y, weights[i], atol=1e-4)
    assert len(fig.to_json()) < 40_000


def test_chapter_three_figures_check_their_inputs():
    s = toy.it_sentence("tired")
    _, weights = _self_attention(s)
    with pytest.raises(ValueError, match=r"\(seq, seq\) = \(11, 11\).*\(10, 11\)"):
        viz.query_token_slider(weights[:-1], s.tokens)
    with pytest.raises(ValueError, match="query=11"):
        viz.query_row_figure(weights, s.tokens, 11)
    with pytest.raises(ValueError, match=r"shape \(10,\) for 11 tokens"):
        viz.it_weights_figure({"a": weights[7, :-1]}, s.tokens)
    fig = viz.it_weights_figure({"tired": weights[7], "wide": weights[8]}, s.tokens)
    assert len(fig.data) == 2
    fig = viz.recurrence_figure(E.time_recurrence_and_attention((4, 8), repeats=1))
    assert len(fig.data) == 4


def test_self_attention_explorer_redraws_quickly_and_rejects_bad_queries():
    explorer = widgets.self_attention_explorer()
    start = time.perf_counter()
    explorer.make_figure(ending="wide", query=3, context=0.5)
    assert time.perf_counter() - start < 0.05
    with pytest.raises(ValueError, match="query must be a position"):
        widgets.self_attention_explorer(query=11)
