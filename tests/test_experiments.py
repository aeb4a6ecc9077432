"""Chapter 2 measurements, the softmax Jacobian and the chapter's figure builders."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import experiments as E
from course_attention import numpy_ref as ref
from course_attention import viz


def test_unscaled_variance_grows_like_d_k_and_scaled_variance_stays_near_one():
    d_ks = (1, 16, 256, 1024)
    unscaled = E.dot_product_variance(d_ks, n_samples=4000)
    scaled = E.dot_product_variance(d_ks, n_samples=4000, exponent=0.5)
    np.testing.assert_allclose(unscaled / np.array(d_ks), 1.0, rtol=0.1)
    np.testing.assert_allclose(scaled, 1.0, rtol=0.1)
    # the same seed draws the same pairs: scaling divides the variance by d_k exactly
    np.testing.assert_allclose(scaled, unscaled / np.array(d_ks), rtol=1e-12)


def test_expected_dot_variance_matches_a_measurement():
    measured = E.dot_product_variance([64], n_samples=20000, seed=3)[0]
    assert E.expected_dot_variance(64) == 64.0
    assert E.expected_dot_variance(16, 2.0, 0.5) == 16.0
    assert abs(measured - 64.0) < 0.05 * 64


def test_without_scaling_the_softmax_saturates_and_its_jacobian_vanishes():
    d_ks = (1, 64, 1024)
    unscaled = E.scaling_statistics(d_ks, exponent=0.0, seq_k=8)
    scaled = E.scaling_statistics(d_ks, exponent=0.5, seq_k=8)
    assert unscaled.max_weight[-1] > 0.9 > scaled.max_weight[-1]
    assert unscaled.entropy[-1] < 0.5 * scaled.entropy[-1]
    assert unscaled.jacobian_norm[-1] < 0.3 * scaled.jacobian_norm[-1]
    assert np.all(np.diff(unscaled.max_weight) > 0)
    # d_k = 1: scaling changes nothing
    assert unscaled.max_weight[0] == pytest.approx(scaled.max_weight[0])
    np.testing.assert_allclose(scaled.score_std, 1.0, rtol=0.15)
    assert np.all(scaled.entropy <= np.log(8) + 1e-12)


def test_dividing_by_d_k_flattens_the_weights_towards_uniform():
    stats = E.scaling_statistics((1024,), exponent=1.0, seq_k=8)
    assert stats.entropy[0] == pytest.approx(np.log(8), rel=0.01)
    assert stats.max_weight[0] == pytest.approx(1 / 8, rel=0.1)


def test_statistics_are_deterministic_given_the_seed():
    a = E.scaling_statistics((4, 32), seed=5)
    b = E.scaling_statistics((4, 32), seed=5)
    np.testing.assert_array_equal(a.jacobian_norm, b.jacobian_norm)
    np.testing.assert_array_equal(E.dot_product_variance(seed=1), E.dot_product_variance(seed=1))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: E.dot_product_variance([]), "d_ks"),
        (lambda: E.dot_product_variance([0, 4]), "at least 1"),
        (lambda: E.dot_product_variance([4.5]), "integers"),
        (lambda: E.dot_product_variance([4], n_samples=1), "n_samples"),
        (lambda: E.scaling_statistics([4], seq_k=1), "seq_k"),
        (lambda: E.scaling_statistics([4], exponent=float("nan")), "exponent"),
        (lambda: E.expected_dot_variance(0), "d_k"),
        (lambda: E.expected_dot_variance(4, std_q=-1.0), "non-negative"),
        (lambda: ref.softmax_jacobian(np.float64(0.5)), "at least 1 dimension"),
        (lambda: ref.softmax_jacobian([0.5, np.nan]), "finite"),
    ],
)
def test_bad_inputs_raise_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("shape", [(4,), (2, 5), (2, 3, 6)])
def test_softmax_jacobian_matches_torch_autograd(shape):
    rng = np.random.default_rng(0)
    scores = rng.normal(size=shape) * 2.0
    p = ref.softmax(scores)
    ours = ref.softmax_jacobian(p)  # (..., n, n)
    flat = torch.tensor(scores.reshape(-1, shape[-1]), dtype=torch.float64)
    for row, s in enumerate(flat):
        expected = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s)
        np.testing.assert_allclose(
            ours.reshape(-1, shape[-1], shape[-1])[row], expected.numpy(), atol=1e-12
        )
    np.testing.assert_allclose(ours.sum(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(ours, np.swapaxes(ours, -1, -2))


def test_softmax_jacobian_of_one_hot_weights_is_zero():
    np.testing.assert_array_equal(ref.softmax_jacobian([0.0, 1.0, 0.0]), np.zeros((3, 3)))


def _stats_runs():
    return {
        "unscaled": E.scaling_statistics((1, 8, 64), exponent=0.0, n_samples=16),
        "÷√d_k": E.scaling_statistics((1, 8, 64), n_samples=16),
    }


def test_chapter_2_figures_have_one_curve_per_run_and_stay_small():
    d_ks = (1, 8, 64)
    fig = viz.variance_figure(d_ks, [1.0, 8.0, 64.0], [1.0, 1.0, 1.0])
    assert len(fig.data) == 4 and fig.layout.xaxis.type == "log"
    sat = viz.saturation_figure(_stats_runs())
    assert len(sat.data) == 2 * 2 + 1
    jac = viz.jacobian_norm_figure(_stats_runs())
    assert [t.name for t in jac.data] == ["unscaled", "÷√d_k"]
    for figure in (fig, sat, jac):
        assert len(figure.to_json()) < 30_000


def test_chapter_2_figure_builders_reject_bad_input():
    with pytest.raises(ValueError, match="widths"):
        viz.variance_figure((1, 2), [1.0, 2.0, 3.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="runs"):
        viz.saturation_figure({})
    with pytest.raises(ValueError, match="1-D"):
        viz.scaling_bars_figure(np.ones((2, 2)) / 2)
