"""Chapter 3: the "it" sentences, recurrence vs attention, figures, explorer and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import experiments as E
from course_attention import numpy_ref as ref
from course_attention import toy, viz, widgets
from course_attention.self_attention import SelfAttention


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


def test_timing_counts_steps():
    # how fast it is is benchmarks/execution.py's business: a wall-clock assert flakes under load
    timing = E.time_recurrence_and_attention()
    np.testing.assert_array_equal(timing.recurrence_steps, timing.seq)
    np.testing.assert_array_equal(timing.attention_steps, 1)
    for seconds in (timing.recurrence_seconds, timing.attention_loop_seconds):
        assert seconds.shape == timing.seq.shape and (seconds > 0).all()
    assert (timing.attention_seconds > 0).all()
    with pytest.raises(ValueError, match="repeats"):
        E.time_recurrence_and_attention(repeats=0)
    with pytest.raises(ValueError, match="batch"):
        E.time_recurrence_and_attention(batch=0)


def test_recurrence_of_a_batch_equals_each_sequence_alone():
    rng = np.random.default_rng(1)
    X, W_h, W_x = rng.normal(size=(3, 5, 4)), rng.normal(size=(2, 2)), rng.normal(size=(4, 2))
    H, steps = E.recurrence(X, W_h, W_x)
    assert H.shape == (3, 5, 2) and steps == 5
    for b in range(3):
        np.testing.assert_allclose(H[b], E.recurrence(X[b], W_h, W_x)[0])
    # step t really depends on step t - 1: changing token 0 changes the last state
    X2 = X.copy()
    X2[:, 0] += 1.0
    assert not np.allclose(E.recurrence(X2, W_h, W_x)[0][:, -1], H[:, -1])


def test_attention_one_query_at_a_time_equals_the_batched_call():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 6, 5))
    out = E.attention_one_query_at_a_time(Q, K, V)
    np.testing.assert_allclose(out, ref.scaled_dot_product_attention(Q, K, V)[0], atol=1e-12)
    with pytest.raises(ValueError, match=r"K \(2, 5, 3\)"):
        E.attention_one_query_at_a_time(Q, K[:, :5], V)


def test_layer_multiply_adds_reproduce_table_one_of_vaswani():
    d = 512
    counts = E.layer_multiply_adds(64, d)
    # self-attention agrees with chapter 5's count of one head, output projection included
    mha = E.multi_head_multiply_adds(64, d, n_heads=1)
    assert sum(counts["self-attention"].values()) == sum(mha.values())
    assert counts["self-attention"]["output projection W_o"] == mha["output projection"]
    assert counts["self-attention"]["projections X W"] == mha["Q, K, V projections"]
    assert counts["self-attention"]["scores Q Kᵀ"] == mha["scores Q Kᵀ"]
    assert counts["self-attention"]["weights V"] == mha["weights V"]
    assert counts["recurrent"]["state h W_h"] == 64 * d * d
    assert counts["LSTM"]["state h W_h"] == 4 * counts["recurrent"]["state h W_h"]

    def mixing(T: int) -> tuple[int, int]:
        c = E.layer_multiply_adds(T, d)
        return c["self-attention"]["scores Q Kᵀ"] + c["self-attention"]["weights V"], c[
            "recurrent"
        ]["state h W_h"]

    def totals(T: int) -> dict[str, int]:
        return {k: sum(v.values()) for k, v in E.layer_multiply_adds(T, d).items()}

    attention, recurrent = mixing(d // 2)
    assert attention == recurrent  # O(n²·d) = O(n·d²) where T = d / 2
    assert mixing(d // 4)[0] < mixing(d // 4)[1] and mixing(d)[0] > mixing(d)[1]
    assert totals(2 * d)["self-attention"] == totals(2 * d)["LSTM"]
    assert totals(d)["self-attention"] < totals(d)["LSTM"] < totals(4 * d)["self-attention"]
    for T in (1, 8, d, 8 * d):  # four projections against two: never cheaper than tanh
        t = totals(T)
        assert t["self-attention"] / t["recurrent"] == pytest.approx(2 + T / d)
    with pytest.raises(ValueError, match="d"):
        E.layer_multiply_adds(4, 0)


def test_layer_cost_totals_sum_all_products_or_only_those_that_mix_tokens():
    T, d = 100, 64
    totals = E.layer_cost_totals(T, d)
    assert totals == {
        "recurrent": 2 * T * d * d,
        "LSTM": 8 * T * d * d,
        "self-attention": 4 * T * d * d + 2 * T * T * d,
    }
    mixing = E.layer_cost_totals(T, d, mixing_only=True)
    assert mixing == {
        "recurrent": T * d * d,
        "LSTM": 4 * T * d * d,
        "self-attention": 2 * T * T * d,
    }


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


def test_query_row_figure_shows_the_row_of_its_query():
    s = toy.it_sentence("tired")
    _, weights = _self_attention(s)
    for i in range(len(s.tokens)):
        fig = viz.query_row_figure(weights, s.tokens, i)
        np.testing.assert_allclose(fig.data[0].y, weights[i], atol=1e-4)
    assert len(fig.to_json()) < 40_000


def test_chapter_three_figures_check_their_inputs():
    s = toy.it_sentence("tired")
    _, weights = _self_attention(s)
    with pytest.raises(ValueError, match=r"\(seq, seq\) = \(11, 11\).*\(10, 11\)"):
        viz.query_row_figure(weights[:-1], s.tokens, 0)
    with pytest.raises(ValueError, match="query=11"):
        viz.query_row_figure(weights, s.tokens, 11)
    with pytest.raises(ValueError, match=r"shape \(10,\) for 11 tokens"):
        viz.it_weights_figure({"a": weights[7, :-1]}, s.tokens)
    fig = viz.it_weights_figure({"tired": weights[7], "wide": weights[8]}, s.tokens)
    assert len(fig.data) == 2
    fig = viz.recurrence_figure(E.time_recurrence_and_attention((4, 8), repeats=1))
    assert len(fig.data) == 5  # steps: 2 curves; wall time: 3 curves
    assert {t.name for t in fig.data} == {
        "recurrent layer",
        "self-attention, loop over queries",
        "self-attention, one batched call",
    }


def test_self_attention_explorer_redraws_and_rejects_bad_queries():
    explorer = widgets.self_attention_explorer()  # its speed: benchmarks/widgets.py
    fig = explorer.make_figure(ending="wide", query=3, context=0.5)
    assert "wide" in str(fig.layout.title.text)
    with pytest.raises(ValueError, match="query must be a position"):
        widgets.self_attention_explorer(query=11)


def test_only_the_nouns_ask_for_nothing():
    """The query slider: 9 of the 11 queries differ from uniform; the two nouns are flat."""
    for ending in toy.IT_ENDINGS:
        s = toy.it_sentence(ending)
        _, weights = _self_attention(s)
        flat = np.isclose(weights, 1 / len(s.tokens)).all(axis=-1)
        assert [t for t, f in zip(s.tokens, flat, strict=True) if f] == ["animal", "street"]
        np.testing.assert_array_equal((s.X @ s.W_q)[flat], 0.0)


def test_attention_is_not_symmetric_but_raw_dot_products_are():
    s = toy.it_sentence("tired")
    _, weights = _self_attention(s)
    animal = s.tokens.index("animal")
    assert weights[s.it_index, animal] > 5 * weights[animal, s.it_index]
    assert not np.allclose(weights, weights.T)
    _, raw = ref.scaled_dot_product_attention(s.X, s.X, s.X)
    scores = s.X @ s.X.T
    np.testing.assert_allclose(scores, scores.T)
    # without projections "it" cannot pick its referent: animal and street weigh the same
    assert raw[s.it_index, animal] == pytest.approx(raw[s.it_index, s.tokens.index("street")])


def _random_layer(d_model: int, d_k: int, d_v: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    W = [rng.normal(size=(d_model, n)) for n in (d_k, d_k, d_v)]
    return W, SelfAttention.from_matrices(*W)


@pytest.mark.parametrize(("d_model", "d_k", "d_v"), [(7, 3, 2), (8, 16, 8), (5, 5, 5)])
def test_self_attention_module_equals_numpy_in_float64(d_model, d_k, d_v):
    (W_q, W_k, W_v), layer = _random_layer(d_model, d_k, d_v, seed=d_model)
    X = np.random.default_rng(3).normal(size=(2, 6, d_model))  # (batch, seq, d_model)
    out, weights = layer(torch.from_numpy(X))
    expected, expected_w = ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)
    assert out.dtype == torch.float64 and out.shape == (2, 6, d_v)
    np.testing.assert_allclose(out.detach().numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(weights.detach().numpy(), expected_w, atol=1e-12)
    mask = torch.from_numpy(ref.causal_mask(6))
    out_m, _ = layer(torch.from_numpy(X), mask=mask)
    expected_m, _ = ref.scaled_dot_product_attention(
        X @ W_q, X @ W_k, X @ W_v, mask=ref.causal_mask(6)
    )
    np.testing.assert_allclose(out_m.detach().numpy(), expected_m, atol=1e-12)


def test_self_attention_module_learns_and_rejects_bad_input():
    layer = SelfAttention(4, 3, 2)
    assert layer.W_q.weight.shape == (3, 4) and layer.W_v.weight.shape == (2, 4)
    assert SelfAttention(4, 3).d_v == 3 and layer.W_q.bias is None
    out, _ = layer(torch.randn(5, 4))
    out.sum().backward()
    assert layer.W_q.weight.grad is not None and layer.W_q.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match=r"d_model=4.*\(5, 3\)"):
        layer(torch.randn(5, 3))
    with pytest.raises(ValueError, match="d_k must be a positive int"):
        SelfAttention(4, 0)
    with pytest.raises(ValueError, match=r"W_k \(4, 2\)"):
        SelfAttention.from_matrices(np.ones((4, 3)), np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="as many rows"):
        SelfAttention.from_matrices(np.ones((4, 3)), np.ones((4, 3)), np.ones((5, 2)))
