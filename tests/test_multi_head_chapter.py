"""Chapter 5 helpers: the shape tracer, multiply-add counts, the two-head example, figures."""

from __future__ import annotations

import numpy as np
import pytest

from course_attention import exercises as ex
from course_attention import experiments, toy, viz, widgets
from course_attention import numpy_ref as ref


def _weights(d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((4, d, d)) / np.sqrt(d)


def test_shape_tracer_records_real_shapes_and_the_reference_output():
    X = np.random.default_rng(1).standard_normal((2, 5, 12))  # (N, T, d)
    steps, out = experiments.trace_multi_head_shapes(X, *_weights(12), n_heads=3)
    expected, _ = ref.multi_head_attention(X, X, *_weights(12), n_heads=3)
    np.testing.assert_allclose(out, expected, atol=1e-12)
    shapes = {s.dims: s.shape for s in steps}
    assert shapes == {
        "(N, T, d)": (2, 5, 12),
        "(N, T, h, d/h)": (2, 5, 3, 4),
        "(N, h, T, d/h)": (2, 3, 5, 4),
        "(N, h, T, T)": (2, 3, 5, 5),
    }
    assert [s.dims for s in steps][:4] == [
        "(N, T, d)",
        "(N, T, d)",
        "(N, T, h, d/h)",
        "(N, h, T, d/h)",
    ]
    assert steps[-1].shape == X.shape


def test_shape_tracer_rejects_bad_input():
    X = np.ones((1, 3, 10))
    with pytest.raises(ValueError, match="d_model=10.*n_heads=4"):
        experiments.trace_multi_head_shapes(X, *_weights(10), n_heads=4)
    with pytest.raises(ValueError, match=r"\(N, T, d\)"):
        experiments.trace_multi_head_shapes(np.ones((3, 10)), *_weights(10), n_heads=2)
    with pytest.raises(ValueError, match="W_q"):
        experiments.trace_multi_head_shapes(X, np.ones((10, 8)), *_weights(10)[1:], n_heads=2)


@pytest.mark.parametrize("seq, d_model", [(1, 6), (7, 12), (128, 512)])
def test_multiply_adds_do_not_depend_on_the_number_of_heads(seq, d_model):
    counts = [
        experiments.multi_head_multiply_adds(seq, d_model, h)
        for h in range(1, d_model + 1)
        if d_model % h == 0
    ]
    assert all(c == counts[0] for c in counts)
    assert sum(counts[0].values()) == 4 * seq * d_model**2 + 2 * seq**2 * d_model


def test_matmul_multiply_adds_counts_broadcast_batches_and_rejects_mismatch():
    assert experiments.matmul_multiply_adds((2, 3), (3, 4)) == 24
    assert experiments.matmul_multiply_adds((5, 1, 2, 3), (4, 3, 4)) == 5 * 4 * 24
    with pytest.raises(ValueError, match=r"\(2, 3\) @ \(2, 4\)"):
        experiments.matmul_multiply_adds((2, 3), (2, 4))
    with pytest.raises(ValueError, match="divisible"):
        experiments.multi_head_multiply_adds(4, 10, 3)


def test_two_head_example_heads_follow_their_relations():
    e = toy.two_head_example()
    _, w = ref.multi_head_attention(e.X, e.X, e.W_q, e.W_k, e.W_v, e.W_o, e.n_heads)
    previous, kind = w[0]  # (T, T) each
    T = len(e.tokens)
    assert (previous[1:].argmax(axis=-1) == np.arange(T - 1)).all()
    assert (previous[np.arange(1, T), np.arange(T - 1)] > 0.9).all()
    for i, word in enumerate(e.tokens):
        same = [j for j, other in enumerate(e.tokens) if toy._KINDS[other] == toy._KINDS[word]]
        assert kind[i, same].sum() > 0.9


def test_head_heatmap_shows_one_head_and_checks_its_input():
    e = toy.two_head_example()
    _, w = ref.multi_head_attention(e.X, e.X, e.W_q, e.W_k, e.W_v, e.W_o, e.n_heads)
    first, second = (viz.head_heatmap(w[0], e.tokens, h) for h in range(2))
    assert first.data[0].z != second.data[0].z
    assert len(set(first.data[0].x)) == len(e.tokens)  # "the" appears twice
    assert len(first.to_json()) < 30_000
    with pytest.raises(ValueError, match="head=2"):
        viz.head_heatmap(w[0], e.tokens, 2)
    with pytest.raises(ValueError, match=r"\(heads, seq, seq\)"):
        viz.head_heatmap(w[0, 0], e.tokens, 0)


def test_tables_show_as_html_and_text():
    steps, _ = experiments.trace_multi_head_shapes(np.ones((1, 2, 4)), *_weights(4), n_heads=2)
    table = viz.shape_table(steps)
    assert "<table>" in table._repr_html_() and "(N, h, T, T)" in table._repr_html_()
    assert "(1, 2, 2, 2)" in repr(table)
    costs = viz.cost_table({h: experiments.multi_head_multiply_adds(4, 8, h) for h in (1, 2)})
    assert "total" in repr(costs) and len(costs.rows) == 2
    with pytest.raises(ValueError, match="columns"):
        viz.Table(["a", "b"], [["1"]])


def test_wrong_split_gets_a_hint():
    def plain_reshape(X, n_heads):
        N, T, d = X.shape
        return X.reshape(N, n_heads, T, d // n_heads)

    passed, message = ex.evaluate("multi-head-1", plain_reshape)
    assert not passed and "transpose" in message


def test_multi_head_explorer_redraws_and_checks_n_heads():
    explorer = widgets.multi_head_explorer()  # its speed: benchmarks/widgets.py
    for n_heads in (4, 8, 1, 2):
        explorer.controls["n_heads"].value = n_heads
        assert str(n_heads) in str(explorer.figure.layout.title.text)
    with pytest.raises(ValueError, match="n_heads"):
        widgets.multi_head_explorer(n_heads=3)


def test_one_head_with_the_same_projections_follows_neither_relation():
    """The chapter's claim: one softmax row cannot do what the two heads do."""
    e = toy.two_head_example()
    W = (e.W_q, e.W_k, e.W_v, e.W_o)
    _, two = ref.multi_head_attention(e.X, e.X, *W, n_heads=2)
    _, one = ref.multi_head_attention(e.X, e.X, *W, n_heads=1)
    T, cat, mat = len(e.tokens), 1, 5
    previous = np.arange(1, T), np.arange(T - 1)
    assert (one[0, 0][previous] < 0.5 * two[0, 0][previous]).all()
    assert one[0, 0, cat, mat] < 0.01 < 0.4 < two[0, 1, cat, mat]
    assert two[0, 0, cat, cat - 1] + two[0, 1, cat, mat] > 1  # no single row sums past 1
    assert one[0, 0, cat].argmax() == cat


def _loop(X, W_q, W_k, W_v, W_o, n_heads):
    d_head = X.shape[-1] // n_heads
    heads = []
    for i in range(n_heads):
        cols = slice(i * d_head, (i + 1) * d_head)
        Q, K, V = X @ W_q[:, cols], X @ W_k[:, cols], X @ W_v[:, cols]
        heads.append(ref.scaled_dot_product_attention(Q, K, V)[0])
    return np.concatenate(heads, axis=-1) @ W_o


def test_loop_and_batched_timing_returns_positive_seconds_and_checks_the_loop():
    loop_s, batched_s = experiments.time_loop_and_batched_heads(_loop, 8, 16, 4, repeat=2)
    assert 0 < loop_s < 1 and 0 < batched_s < 1
    with pytest.raises(ValueError, match="disagrees"):
        experiments.time_loop_and_batched_heads(lambda X, *W, n_heads: X * 0, 8, 16, 4)
    with pytest.raises(ValueError, match="d_model=10.*n_heads=4"):
        experiments.time_loop_and_batched_heads(_loop, 8, 10, 4)
    with pytest.raises(ValueError, match="repeat"):
        experiments.time_loop_and_batched_heads(_loop, 8, 16, 4, repeat=0)


@pytest.mark.parametrize(
    "exercise_id, wrong, named",
    [
        ("multi-head-1", lambda X, h: X.reshape(X.shape[0], h, X.shape[1], -1), "without the"),
        ("multi-head-2", lambda H: H.reshape(H.shape[0], H.shape[2], -1), "transposing back"),
        ("multi-head-3", lambda T, d, h: 4 * h * T * d * d + 2 * T * T * d, "per head"),
    ],
)
def test_the_chapter_pitfalls_are_named_by_the_checker(exercise_id, wrong, named):
    passed, message = ex.evaluate(exercise_id, wrong)
    assert not passed and "Likely mistake" in message and named in message
