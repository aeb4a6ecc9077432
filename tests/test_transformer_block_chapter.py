"""Chapter 6 helpers: residual and norm-placement measurements, position figures, explorer."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from course_attention import exercises as ex
from course_attention import experiments, viz, widgets
from course_attention import numpy_ref as ref


def test_residual_keeps_the_signal_and_the_gradient():
    with_res = experiments.residual_stack_signal(depth=12, residual=True)
    without = experiments.residual_stack_signal(depth=12, residual=False)
    assert with_res.rms.shape == with_res.grad.shape == (13,)
    assert with_res.grad[-1] == pytest.approx(without.grad[-1])  # the same loss at the output
    assert with_res.grad[0] > 0.5 * with_res.grad[-1]
    assert without.grad[0] < 1e-6 * without.grad[-1]
    assert without.rms[-1] < 0.2 < 0.5 < with_res.rms[-1]


def test_residual_stack_signal_is_deterministic_and_checks_depth():
    a = experiments.residual_stack_signal(depth=4, seed=3)
    b = experiments.residual_stack_signal(depth=4, seed=3)
    np.testing.assert_array_equal(a.grad, b.grad)
    with pytest.raises(ValueError, match="depth"):
        experiments.residual_stack_signal(depth=0)


def test_pre_norm_last_layer_gradient_shrinks_with_depth_post_norm_does_not():
    last = {
        (n, nf): experiments.layer_gradient_norms(n, norm_first=nf)[-1]
        for n in (3, 12)
        for nf in (False, True)
    }
    pre_ratio = last[3, True] / last[12, True]
    post_ratio = last[3, False] / last[12, False]
    assert 1.5 < pre_ratio < 2.5  # about sqrt(12 / 3) = 2
    assert 0.7 < post_ratio < 1.3


def test_layer_gradient_norms_shape_seed_and_threads():
    threads = torch.get_num_threads()
    norms = experiments.layer_gradient_norms(4, norm_first=True, seeds=(5,))
    assert norms.shape == (4,) and (norms > 0).all()
    assert torch.get_num_threads() == threads  # restored after the measurement
    np.testing.assert_array_equal(
        norms, experiments.layer_gradient_norms(4, norm_first=True, seeds=(5,))
    )
    with pytest.raises(ValueError, match="seed"):
        experiments.layer_gradient_norms(2, seeds=())
    with pytest.raises(ValueError, match="n_layers"):
        experiments.layer_gradient_norms(0)


def _norms(depths=(2, 4)):
    rng = np.random.default_rng(0)
    return {
        d: {"post-norm": rng.uniform(1, 2, d), "pre-norm": rng.uniform(1, 2, d)} for d in depths
    }


def test_gradient_depth_slider_has_a_frame_per_depth_and_fixed_axes():
    fig = viz.gradient_depth_slider(_norms())
    assert [f.name for f in fig.frames] == ["2", "4"]
    assert len(fig.frames[0].data) == 2 and len(fig.frames[1].data[0].y) == 4
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.range is not None
    assert len(fig.to_json()) < 20_000
    with pytest.raises(ValueError, match="one norm per layer"):
        viz.gradient_depth_slider({3: {"post-norm": np.ones(2)}})
    with pytest.raises(ValueError, match="curves"):
        viz.gradient_depth_slider({2: {"a": np.ones(2)}, 3: {"b": np.ones(3)}})
    with pytest.raises(ValueError, match="positive"):
        viz.gradient_depth_slider({2: {"a": np.zeros(2)}})


def test_position_figures_peak_at_the_position_and_stay_small():
    pe = ref.sinusoidal_positions(48, 32)
    bars, dots = viz.position_traces(pe, 10)
    assert int(np.argmax(dots.y)) == 10 and dots.y[10] == pytest.approx(16.0)
    np.testing.assert_allclose(bars.y, pe[10], atol=1e-4)
    fig = viz.position_slider(pe, positions=range(0, 48, 2))
    assert len(fig.frames) == 24 and fig.frames[0].data[0].y != fig.frames[1].data[0].y
    assert len(fig.to_json()) < 60_000
    assert len(viz.positions_heatmap(pe).to_json()) < 30_000
    with pytest.raises(ValueError, match="position=48"):
        viz.position_figure(pe, 48)
    with pytest.raises(ValueError, match=r"\(seq_len, d_model\)"):
        viz.positions_heatmap(pe[0])


def test_positions_explorer_redraws_fast_and_checks_its_arguments():
    explorer = widgets.positions_explorer()
    start = time.perf_counter()
    for position in (0, 47, 12):
        explorer.controls["position"].value = position
    explorer.controls["d_model"].value = 128
    explorer.controls["base"].value = 100.0
    assert (time.perf_counter() - start) / 5 < 0.05
    assert "d_model = 128" in explorer.figure.layout.title.text
    with pytest.raises(ValueError, match="d_model"):
        widgets.positions_explorer(d_model=33)


def test_wrong_answers_get_hints():
    def norm_over_all(x, gamma, beta):
        return (x - x.mean()) / np.sqrt(x.var() + 1e-5) * gamma + beta

    passed, message = ex.evaluate("transformer-block-1", norm_over_all)
    assert not passed and "last axis" in message

    def swapped(seq_len, d_model):
        return ref.sinusoidal_positions(seq_len, d_model)[:, ::-1]

    assert not ex.evaluate("transformer-block-2", swapped)[0]

    def always_post_norm(x, W1, b1, W2, b2, norm_first):
        return ref.layer_norm(x + ref.feed_forward(x, W1, b1, W2, b2))

    passed, message = ex.evaluate("transformer-block-3", always_post_norm)
    assert not passed and "pre-norm" in message
