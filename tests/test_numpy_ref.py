"""Properties of the numpy reference implementations (chapters 1–2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from course_attention import numpy_ref as ref

finite = st.floats(-50, 50, allow_nan=False, width=64)


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=finite)
)
def test_softmax_rows_are_probabilities(x):
    p = ref.softmax(x)
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=finite),
    st.floats(-1e3, 1e3, allow_nan=False),
)
def test_softmax_is_invariant_to_shifting_logits(x, shift):
    np.testing.assert_allclose(ref.softmax(x + shift), ref.softmax(x), atol=1e-9)


def test_softmax_is_exact_for_huge_logits():
    p = ref.softmax(np.array([1e4, 0.0, -1e4]))
    assert np.array_equal(p, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(ref.softmax(np.array([1e4, 1e4])), [0.5, 0.5])


def test_softmax_temperature_sharpens_and_flattens():
    x = np.array([2.0, 1.0, 0.0])
    assert (
        ref.softmax(x, temperature=0.1)[0] > ref.softmax(x)[0] > ref.softmax(x, temperature=10)[0]
    )


def test_softmax_treats_minus_inf_as_weight_zero_and_all_minus_inf_as_zero_row():
    p = ref.softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    np.testing.assert_array_equal(p, [[1.0, 0.0], [0.0, 0.0]])


def test_softmax_axis():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(ref.softmax(x, axis=0).sum(axis=0), 1.0)


@st.composite
def attention_inputs(draw):
    lead = draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=3))
    seq_q, seq_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    Q = rng.normal(size=(*lead, seq_q, d_k))
    K = rng.normal(size=(*lead, seq_k, d_k))
    V = rng.normal(size=(*lead, seq_k, d_v))
    mask = rng.random((*lead, seq_q, seq_k)) < draw(st.floats(0.0, 1.0))
    return Q, K, V, mask


@given(attention_inputs())
def test_weights_are_nonnegative_rows_sum_to_one_or_zero(inputs):
    Q, K, V, mask = inputs
    out, weights = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert out.shape == (*Q.shape[:-1], V.shape[-1])
    assert weights.shape == (*Q.shape[:-1], K.shape[-2])
    assert (weights >= 0).all() and np.isfinite(out).all()
    assert (weights[~mask] == 0).all()
    expected_rows = mask.any(axis=-1).astype(float)
    np.testing.assert_allclose(weights.sum(axis=-1), expected_rows, atol=1e-12)


def test_fully_masked_row_is_zero_not_nan():
    Q = K = V = np.ones((3, 2))
    mask = np.array([[True, False, False], [False, False, False], [True, True, True]])
    out, weights = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_array_equal(weights[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)


def test_attention_matches_a_hand_loop():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, _ = ref.scaled_dot_product_attention(Q, K, V)
    for i, q in enumerate(Q):
        s = np.array([q @ k for k in K]) / np.sqrt(3)
        w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        np.testing.assert_allclose(out[i], w @ V)


def test_huge_logits_give_exact_one_hot_attention():
    Q = np.array([[1e2, 0.0]])
    K = np.array([[1e2, 0.0], [-1e2, 0.0]])  # scores ±1e4
    V = np.array([[1.0], [2.0]])
    out, weights = ref.scaled_dot_product_attention(Q, K, V, scale=1.0)
    np.testing.assert_array_equal(weights, [[1.0, 0.0]])
    np.testing.assert_array_equal(out, [[1.0]])


def test_causal_mask():
    np.testing.assert_array_equal(
        ref.causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]]
    )
    assert ref.causal_mask(2, 4).shape == (2, 4)


def test_padding_mask_broadcasts_over_heads_and_queries():
    mask = ref.padding_mask(np.array([2, 3]), 4)
    assert mask.shape == (2, 1, 1, 4)  # (batch, heads, seq_q, seq_k)
    np.testing.assert_array_equal(mask[:, 0, 0], [[1, 1, 0, 0], [1, 1, 1, 0]])
    Q = np.ones((2, 2, 4, 3))  # batch == heads: a 3-d mask would broadcast silently wrong
    _, weights = ref.scaled_dot_product_attention(Q, Q, Q, mask=mask)
    np.testing.assert_allclose(weights[0, :, :, :2], 0.5)
    assert (weights[0, :, :, 2:] == 0).all()
    np.testing.assert_allclose(weights[1, :, :, :3], 1 / 3)


@pytest.mark.parametrize(
    ("q", "k", "v", "message"),
    [
        ((2, 3), (2, 4), (2, 4), r"query width d_k=3 .* key width d_k=4"),
        ((2, 3), (4, 3), (5, 3), r"K has 4 keys .* V has 5 values"),
        ((3,), (2, 3), (2, 3), r"Q must have at least 2 dimensions"),
        ((2, 2, 3), (3, 2, 3), (3, 2, 3), r"do not broadcast"),
    ],
)
def test_bad_shapes_name_the_shapes(q, k, v, message):
    with pytest.raises(ValueError, match=message):
        ref.scaled_dot_product_attention(np.ones(q), np.ones(k), np.ones(v))


def test_mask_that_does_not_broadcast_is_rejected():
    x = np.ones((2, 3, 4))
    with pytest.raises(
        ValueError, match=r"mask of shape \(2, 2\) does not broadcast .* \(2, 3, 3\)"
    ):
        ref.scaled_dot_product_attention(x, x, x, mask=np.ones((2, 2), dtype=bool))


def test_mask_must_be_boolean():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="mask must be boolean"):
        ref.scaled_dot_product_attention(x, x, x, mask=np.zeros((3, 3)))


@pytest.mark.parametrize("t", [0.0, -1.0, np.inf, np.nan])
def test_bad_temperature_is_rejected(t):
    with pytest.raises(ValueError, match="temperature must be a positive finite number"):
        ref.softmax(np.ones(3), temperature=t)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_attention_input_is_rejected(bad):
    Q = np.ones((2, 3))
    Q[1, 2] = bad
    with pytest.raises(ValueError, match=r"Q must be finite; found .* at index \(1, 2\)"):
        ref.scaled_dot_product_attention(Q, np.ones((2, 3)), np.ones((2, 3)))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_softmax_rejects_nan_and_plus_inf(bad):
    with pytest.raises(ValueError, match="x must be finite"):
        ref.softmax(np.array([0.0, bad]))


def test_padding_mask_rejects_lengths_out_of_range():
    with pytest.raises(ValueError, match=r"lengths must lie in 0 … seq_len=3; got \[4\]"):
        ref.padding_mask(np.array([4]), 3)


def test_zero_keys_or_zero_width_is_a_clear_error():
    with pytest.raises(ValueError, match=r"K has 0 keys \(shape \(0, 3\)\)"):
        ref.scaled_dot_product_attention(np.ones((2, 3)), np.ones((0, 3)), np.ones((0, 2)))
    with pytest.raises(ValueError, match="d_k=0"):
        ref.scaled_dot_product_attention(np.ones((2, 0)), np.ones((4, 0)), np.ones((4, 2)))
