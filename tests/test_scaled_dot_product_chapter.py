"""Chapter 2's claims about the gradient at the query, the temperature √d_k and PyTorch's API."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course_attention import experiments as E
from course_attention import modules, viz
from course_attention import numpy_ref as ref


@pytest.mark.parametrize(("lead", "scale"), [((), None), ((3,), 1.0), ((2, 4), 0.25)])
def test_query_gradient_matches_torch_autograd(lead, scale):
    rng = np.random.default_rng(0)
    q = rng.normal(size=(*lead, 6))
    K, V = rng.normal(size=(*lead, 5, 6)), rng.normal(size=(*lead, 5, 3))
    qt = torch.tensor(q, requires_grad=True)
    s = 1 / np.sqrt(6) if scale is None else scale
    weights = torch.softmax((torch.tensor(K) @ qt[..., None])[..., 0] * s, dim=-1)
    (weights[..., None, :] @ torch.tensor(V)).sum().backward()
    np.testing.assert_allclose(E.query_gradient(q, K, V, scale=scale), qt.grad.numpy(), atol=1e-12)


def test_a_saturated_look_up_passes_almost_no_gradient_to_the_query():
    q = np.array([1.0, 0.0])
    K = np.array([[50.0, 0.0], [0.0, 1.0], [-50.0, 0.0]])
    V = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])  # only the first value counts
    assert np.abs(E.query_gradient(q, K, V, scale=1.0)).max() < 1e-18
    assert np.abs(E.query_gradient(q, K, V, scale=0.01)).max() > 1e-3


@pytest.mark.parametrize(
    ("q", "K", "V", "match"),
    [
        (np.ones(4), np.ones((3, 5)), np.ones((3, 2)), "shapes disagree"),
        (np.ones(4), np.ones((3, 4)), np.ones((2, 2)), "shapes disagree"),
        (np.ones((2, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 2)), "shapes disagree"),
        (np.ones(4), np.ones(4), np.ones(4), "need q"),
    ],
)
def test_query_gradient_names_the_shapes_at_fault(q, K, V, match):
    with pytest.raises(ValueError, match=match):
        E.query_gradient(q, K, V)


def test_query_gradient_rejects_an_infinite_scale():
    with pytest.raises(ValueError, match="scale"):
        E.query_gradient(np.ones(2), np.ones((3, 2)), np.ones((3, 2)), scale=float("inf"))


def test_without_the_scale_the_gradient_at_the_query_is_spiky_not_uniformly_smaller():
    d_ks = (1, 64, 1024)
    raw = E.scaling_statistics(d_ks, exponent=0.0, n_samples=256)
    scaled = E.scaling_statistics(d_ks, exponent=0.5, n_samples=256)
    assert raw.grad_median[-1] / raw.grad_mean[-1] < 0.01  # most queries get almost nothing
    assert raw.grad_mean[-1] > scaled.grad_mean[-1]  # … a few get a lot
    assert raw.grad_small[-1] > 0.5 and scaled.grad_small[-1] == 0
    assert np.all(scaled.grad_median / scaled.grad_mean > 0.75)  # scaled: every query alike
    np.testing.assert_allclose(scaled.grad_median, 0.27, rtol=0.5)
    assert raw.grad_median[0] == pytest.approx(scaled.grad_median[0])  # d_k = 1: √1 = 1


def test_gradient_statistics_agree_with_explicit_values():
    """The statistics draw the row sums V·1 directly; explicit V must give the same spread."""
    d, n = 16, 4000
    rng = np.random.default_rng(1)
    q, K, V = rng.normal(size=(n, d)), rng.normal(size=(n, 16, d)), rng.normal(size=(n, 16, d))
    size = np.sqrt((E.query_gradient(q, K, V) ** 2).mean(axis=-1))  # (n,)
    stats = E.scaling_statistics((d,), exponent=0.5, n_samples=n)
    assert stats.grad_median[0] == pytest.approx(np.median(size), rel=0.05)
    assert stats.grad_mean[0] == pytest.approx(size.mean(), rel=0.05)


def test_dividing_by_sqrt_d_k_is_a_softmax_at_temperature_sqrt_d_k():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 5, 16))
    _, weights = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(ref.softmax(Q @ K.T, temperature=4.0), weights)
    assert not np.allclose(ref.softmax(Q @ K.T), weights)


def _qkv():
    g = torch.Generator().manual_seed(0)
    return [
        torch.randn(2, 3, n, w, generator=g, dtype=torch.float64)
        for n, w in ((4, 8), (6, 8), (6, 5))
    ]


def test_is_causal_is_the_top_left_causal_mask_of_the_package():
    Q, K, V = _qkv()
    mask = ref.causal_mask(4, 6)
    expected, _ = ref.scaled_dot_product_attention(Q.numpy(), K.numpy(), V.numpy(), mask=mask)
    got = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)


def test_a_bool_attn_mask_keeps_true_and_a_float_one_is_added_to_the_scores():
    Q, K, V = _qkv()
    keep = ref.causal_mask(4, 6)[::-1].copy()  # every row keeps key 0
    expected, _ = ref.scaled_dot_product_attention(Q.numpy(), K.numpy(), V.numpy(), mask=keep)
    keep_t = torch.from_numpy(keep)
    additive = torch.zeros(4, 6, dtype=torch.float64).masked_fill(~keep_t, float("-inf"))
    for attn_mask in (keep_t, additive):
        got = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)
        np.testing.assert_allclose(got.numpy(), expected, atol=1e-12)
    bias = torch.linspace(-1, 1, 24, dtype=torch.float64).reshape(4, 6)
    scores = Q @ K.transpose(-2, -1) / np.sqrt(8) + bias
    got = F.scaled_dot_product_attention(Q, K, V, attn_mask=bias)
    torch.testing.assert_close(got, torch.softmax(scores, dim=-1) @ V)
    as_numbers = F.scaled_dot_product_attention(Q, K, V, attn_mask=keep_t.double())
    assert not np.allclose(as_numbers.numpy(), expected)  # 0/1 floats are a bias, not a mask


def test_dropout_p_drops_the_weights_after_the_softmax_whenever_it_is_positive():
    Q, K, V = _qkv()
    _, weights = modules.scaled_dot_product_attention(Q, K, V)
    torch.manual_seed(3)
    got = F.scaled_dot_product_attention(Q, K, V, dropout_p=0.2)
    torch.manual_seed(3)
    torch.testing.assert_close(got, F.dropout(weights, p=0.2) @ V)
    assert not torch.allclose(got, F.scaled_dot_product_attention(Q, K, V))


def test_gradient_spread_figure_draws_median_and_mean_per_run():
    runs = {
        "unscaled": E.scaling_statistics((1, 8, 64), exponent=0.0, n_samples=16),
        "÷√d_k": E.scaling_statistics((1, 8, 64), n_samples=16),
    }
    fig = viz.gradient_spread_figure(runs)
    assert [t.name for t in fig.data] == [
        "unscaled: median",
        "unscaled: mean",
        "÷√d_k: median",
        "÷√d_k: mean",
    ]
    assert [t.line.dash for t in fig.data] == ["solid", "dash"] * 2
    assert fig.layout.yaxis.type == "log" and len(fig.to_json()) < 30_000
    no_gradients = E.ScalingStats(*(np.ones(3),) * 5, seq_k=8)
    with pytest.raises(ValueError, match="no gradient"):
        viz.gradient_spread_figure({"old": no_gradients})
