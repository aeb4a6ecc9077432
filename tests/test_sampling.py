"""Greedy, temperature, top-k and top-p: each written once, checked on its invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from course_attention import numpy_ref as ref
from course_attention import sampling

LOGITS = arrays(np.float64, st.integers(2, 30), elements=st.floats(-20, 20))
PROBS = LOGITS.map(ref.softmax)


@settings(max_examples=60, deadline=None)
@given(LOGITS, st.floats(0.05, 5.0))
def test_temperature_is_chapter_ones_softmax(logits, temperature):
    probs = sampling.next_token_probabilities(logits, temperature)
    np.testing.assert_array_equal(probs, ref.softmax(logits, temperature=temperature))


def test_temperature_to_zero_is_greedy():
    gen = np.random.default_rng(0)
    for _ in range(20):
        logits = gen.normal(size=50) * 3
        probs = sampling.next_token_probabilities(logits, temperature=1e-3)
        assert probs.argmax() == sampling.greedy(logits) and probs.max() > 1 - 1e-9


def test_high_temperature_flattens():
    logits = np.array([3.0, 1.0, 0.0, -2.0])
    flat = sampling.next_token_probabilities(logits, temperature=1e3)
    np.testing.assert_allclose(flat, 0.25, atol=2e-3)


@settings(max_examples=60, deadline=None)
@given(PROBS, st.integers(1, 30))
def test_top_k_keeps_exactly_k_most_likely(probs, k):
    k = min(k, len(probs))
    kept = sampling.top_k_filter(probs, k)
    assert (kept > 0).sum() <= k and np.isclose(kept.sum(), 1.0)
    assert np.count_nonzero(kept) == min(k, np.count_nonzero(probs))
    order = np.argsort(-probs, kind="stable")
    assert set(np.flatnonzero(kept)) <= set(order[:k])
    np.testing.assert_allclose(kept[order[:k]], probs[order[:k]] / probs[order[:k]].sum())


@settings(max_examples=80, deadline=None)
@given(PROBS, st.floats(0.01, 1.0))
def test_top_p_keeps_the_smallest_set_with_mass_at_least_p(probs, p):
    kept = sampling.top_p_filter(probs, p)
    ids = np.flatnonzero(kept)
    assert np.isclose(kept.sum(), 1.0)
    assert probs[ids].sum() >= p * (1 - 1e-9)  # enough mass
    if p == 1:  # no cut: every token above 0 (rounding may make the sum 1 before the last)
        np.testing.assert_array_equal(ids, np.flatnonzero(probs > 0))
    else:  # smallest: without its least likely member the set falls below p
        assert probs[ids].sum() - probs[ids].min() < p
    # the most likely: nothing outside is more likely than something inside
    outside = np.setdiff1d(np.arange(len(probs)), ids)
    if len(outside):
        assert probs[outside].max() <= probs[ids].min()
    np.testing.assert_allclose(kept[ids], probs[ids] / probs[ids].sum())


def test_top_p_one_keeps_everything_and_tiny_p_is_greedy():
    probs = np.array([0.1, 0.6, 0.3])
    np.testing.assert_allclose(sampling.top_p_filter(probs, 1.0), probs)
    np.testing.assert_array_equal(sampling.top_p_filter(probs, 1e-6), [0.0, 1.0, 0.0])


def test_top_p_works_row_by_row():
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]])
    rows = sampling.top_p_filter(probs, 0.8)
    for row, p_row in zip(rows, probs, strict=True):
        np.testing.assert_array_equal(row, sampling.top_p_filter(p_row, 0.8))


def test_greedy_breaks_ties_on_the_lower_id():
    assert sampling.greedy(np.array([1.0, 3.0, 3.0])) == 1
    np.testing.assert_array_equal(sampling.greedy(np.array([[0.0, 1.0], [2.0, 1.0]])), [1, 0])


def test_sampler_is_reproducible_and_follows_the_distribution():
    logits = np.log(np.array([0.7, 0.2, 0.1]))
    draws = [sampling.sampler(seed=3)(logits) for _ in range(3)]
    assert len(set(draws)) == 1
    choose = sampling.sampler(seed=0)
    counts = np.bincount([choose(logits) for _ in range(3000)], minlength=3) / 3000
    np.testing.assert_allclose(counts, [0.7, 0.2, 0.1], atol=0.03)
    top1 = sampling.sampler(top_k=1, seed=0)
    assert {top1(logits) for _ in range(50)} == {0}


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_temperature_is_a_value_error(temperature):
    with pytest.raises(ValueError, match="temperature must be > 0"):
        sampling.next_token_probabilities(np.zeros(3), temperature)
    with pytest.raises(ValueError, match="temperature"):
        sampling.sampler(temperature)


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5, float("nan")])
def test_bad_top_p_is_a_value_error(p):
    with pytest.raises(ValueError, match=r"top_p must lie in \(0, 1\]"):
        sampling.top_p_filter(np.array([0.5, 0.5]), p)
    with pytest.raises(ValueError, match="top_p"):
        sampling.sampler(top_p=p)


def test_bad_top_k_and_shapes_are_value_errors():
    with pytest.raises(ValueError, match="top_k must lie in 1 … vocab=3; got 4"):
        sampling.top_k_filter(np.ones(3) / 3, 4)
    with pytest.raises(ValueError, match="top_k"):
        sampling.sampler(top_k=0)
    with pytest.raises(ValueError, match="shape"):
        sampling.greedy(np.float64(1.0))


def test_top_p_rounding_ties_and_p_one_follow_the_stated_rule():
    # 0.6 + 0.3 is 0.8999999999999999 in float64: within the tolerance, so it reaches 0.9
    assert 0.6 + 0.3 < 0.9
    np.testing.assert_allclose(sampling.top_p_filter(np.array([0.6, 0.3, 0.1]), 0.9),
                               [2 / 3, 1 / 3, 0.0])
    # a mass that reaches p exactly stops the set; a tie at the edge goes to the lower id
    np.testing.assert_array_equal(
        np.flatnonzero(sampling.top_p_filter(np.array([0.25, 0.5, 0.125, 0.0625, 0.0625]), 0.75)),
        [0, 1],
    )
    np.testing.assert_array_equal(
        np.flatnonzero(sampling.top_p_filter(np.array([0.1, 0.3, 0.3, 0.3]), 0.5)), [1, 2]
    )
    # a mass truly below p (by more than the tolerance) does not stop it
    probs = np.array([0.5, 0.5 - 1e-9, 1e-9])
    assert np.count_nonzero(sampling.top_p_filter(probs, 1.0 - 1e-10)) == 3


def test_top_p_one_keeps_every_token_above_zero_even_the_tiny_ones():
    logits = -np.linspace(0, 40, 96)  # at T = 0.25 the tail is ~e^-160 ≈ 1e-70, still > 0
    probs = sampling.next_token_probabilities(logits, 0.25)
    assert probs.min() > 0 and probs.min() < 1e-60
    assert np.count_nonzero(sampling.top_p_filter(probs, 1.0)) == 96
    probs[5] = 0.0
    assert np.count_nonzero(sampling.top_p_filter(probs / probs.sum(), 1.0)) == 95
    assert np.count_nonzero(sampling.next_token_probabilities(logits, 0.25, top_p=1.0)) == 96


def test_the_smallest_temperature_is_where_its_inverse_overflows():
    t = sampling.SMALLEST_TEMPERATURE
    with np.errstate(over="ignore"):
        assert np.isfinite(1 / np.float64(t)) and np.isinf(1 / np.nextafter(t, 0))
    assert 5.5e-309 < t < 5.6e-309 < np.finfo(np.float64).tiny  # subnormal, 1 / max: not 2.2e-308
    assert t == np.nextafter(1 / np.finfo(np.float64).max, 1)  # one step above 2^-1024
    sampling.check_temperature(t)  # accepted: 1 / T is finite
    sampling.check_temperature(2.2e-308)  # below the smallest normal, 1 / T still finite


@pytest.mark.parametrize("temperature", [1e-310, 5e-324, np.nextafter(5.56268464626801e-309, 0)])
def test_a_temperature_whose_inverse_overflows_is_refused_not_nan(temperature):
    with pytest.raises(ValueError, match=r"1 / T overflows \(it does below 5.56e-309\)"):
        sampling.check_temperature(temperature)
    with pytest.raises(ValueError, match="use greedy"):
        sampling.next_token_probabilities(np.array([1.0, 2.0]), temperature)
    with pytest.raises(ValueError, match="temperature"):
        sampling.sampler(temperature)


def test_logits_that_overflow_when_divided_are_refused():
    with pytest.raises(ValueError, match="not finite"):
        sampling.next_token_probabilities(np.array([1e300, 0.0]), 1e-10)
    with pytest.raises(ValueError, match="not finite"):
        sampling.next_token_probabilities(np.array([np.inf, 0.0]), 1.0)
    tiny = sampling.next_token_probabilities(np.array([1.0, 2.0]), np.finfo(np.float64).tiny)
    np.testing.assert_array_equal(tiny, [0.0, 1.0])  # the smallest normal T: greedy, no NaN
