"""Chapter 6 helpers: residual and norm-placement measurements, position figures, explorer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import exercises as ex
from course_attention import experiments, modules, viz, widgets
from course_attention import numpy_ref as ref


def test_residual_keeps_the_signal_and_the_gradient():
    with_res = experiments.residual_stack_signal(depth=12, residual=True)
    without = experiments.residual_stack_signal(depth=12, residual=False)
    assert with_res.rms.shape == with_res.spread.shape == with_res.grad.shape == (13,)
    assert with_res.grad[-1] == pytest.approx(without.grad[-1])  # the same loss at the output
    assert with_res.spread[0] == pytest.approx(without.spread[0])  # the same two inputs
    assert with_res.grad[0] > 0.5 * with_res.grad[-1]
    assert without.grad[0] < 1e-6 * without.grad[-1]
    assert without.rms[-1] < 0.2 < 0.5 < with_res.rms[-1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_init_plain_stack_forgets_its_input_he_init_does_not(seed):
    """PyTorch's default Linear shrinks each block's input part by about sqrt(1/18)."""
    plain = experiments.residual_stack_signal(depth=24, residual=False, seed=seed)
    gain = (plain.spread[-1] / plain.spread[0]) ** (1 / 24)
    assert plain.spread[-1] < 1e-12 * plain.spread[0]  # two inputs, one output: the biases
    assert abs(gain - np.sqrt(1 / 18)) < 0.03
    he = experiments.residual_stack_signal(depth=24, residual=False, init="he", seed=seed)
    assert he.spread[-1] > 0.1 * he.spread[0] and he.grad[0] > 0.2 * he.grad[-1]
    he_res = experiments.residual_stack_signal(depth=24, residual=True, init="he", seed=seed)
    assert he_res.rms[-1] > 1000 * he_res.rms[0]  # each block about doubles the variance


def test_residual_stack_signal_is_deterministic_and_checks_its_arguments():
    a = experiments.residual_stack_signal(depth=4, seed=3)
    b = experiments.residual_stack_signal(depth=4, seed=3)
    np.testing.assert_array_equal(a.grad, b.grad)
    np.testing.assert_array_equal(a.spread, b.spread)
    with pytest.raises(ValueError, match="depth"):
        experiments.residual_stack_signal(depth=0)
    with pytest.raises(ValueError, match="init"):
        experiments.residual_stack_signal(init="xavier")


@pytest.mark.parametrize("seeds", [(0, 1, 2), (3, 4, 5)])
def test_last_layer_w2_gradient_follows_xiong_theorem(seeds):
    """Post-norm: independent of the depth; pre-norm: like 1 / sqrt(L) (Xiong et al. 2020)."""
    last = {
        (n, nf): experiments.ffn_gradient_norms(n, norm_first=nf, seeds=seeds).w2[-1]
        for n in (3, 24)
        for nf in (False, True)
    }
    assert 0.75 < last[3, False] / last[24, False] < 1.33
    assert abs(last[3, True] / last[24, True] / np.sqrt(8) - 1) < 0.25
    assert last[24, False] > 3 * last[24, True]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pre_norm_w2_gradient_is_largest_next_to_the_input(seed):
    pre = experiments.ffn_gradient_norms(6, norm_first=True, seeds=(seed,))
    assert pre.w2[0] > 1.5 * pre.w2[-1]
    assert pre.arriving[0] > 1.5 * pre.arriving[-1]  # the gradient on the residual stream
    assert pre.hidden.max() < 1.5 * pre.hidden.min()  # W^2's input: the same size everywhere
    assert (np.diff(pre.stream) > 0).sum() >= 4  # the residual stream grows
    post = experiments.ffn_gradient_norms(6, norm_first=False, seeds=(seed,))
    np.testing.assert_allclose(post.stream, 1.0, atol=0.01)  # post-norm: the stream is normed


def test_ffn_gradient_norms_shape_seed_and_threads():
    threads = torch.get_num_threads()
    grads = experiments.ffn_gradient_norms(4, norm_first=True, seeds=(5,))
    for field in grads:
        assert field.shape == (4,) and (field > 0).all()
    assert torch.get_num_threads() == threads  # restored after the measurement
    np.testing.assert_array_equal(
        grads.w2, experiments.ffn_gradient_norms(4, norm_first=True, seeds=(5,)).w2
    )
    with pytest.raises(ValueError, match="seed"):
        experiments.ffn_gradient_norms(2, seeds=())
    with pytest.raises(ValueError, match="n_layers"):
        experiments.ffn_gradient_norms(0)


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
    assert list(fig.layout.yaxis.ticktext) == ["1", "2"]  # numbers, not plotly's lone digits
    assert len(fig.to_json()) < 20_000
    with pytest.raises(ValueError, match="one norm per layer"):
        viz.gradient_depth_slider({3: {"post-norm": np.ones(2)}})
    with pytest.raises(ValueError, match="curves"):
        viz.gradient_depth_slider({2: {"a": np.ones(2)}, 3: {"b": np.ones(3)}})
    with pytest.raises(ValueError, match="positive"):
        viz.gradient_depth_slider({2: {"a": np.zeros(2)}})


def test_log_ticks_read_as_numbers_inside_the_range():
    assert viz.log_ticks(np.log10(8), np.log10(54)) == [10.0, 20.0, 30.0, 50.0]
    assert viz.log_ticks(-15.2, 1.5) == [10.0**k for k in range(-15, 2)]
    assert viz.log_ticks(0.0, 2.0) == [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    with pytest.raises(ValueError, match="lo < hi"):
        viz.log_ticks(1.0, 1.0)


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


def test_positions_explorer_redraws_and_checks_its_arguments():
    explorer = widgets.positions_explorer()  # its speed: benchmarks/widgets.py
    for position in (0, 47, 12):
        explorer.controls["position"].value = position
    explorer.controls["d_model"].value = 128
    explorer.controls["base"].value = 100.0
    assert "d_model = 128" in explorer.figure.layout.title.text
    with pytest.raises(ValueError, match="d_model"):
        widgets.positions_explorer(d_model=33)


def test_wrong_answers_get_hints():
    def norm_over_all(x, gamma, beta):
        return (x - x.mean()) / np.sqrt(x.var() + 1e-5) * gamma + beta

    passed, message = ex.evaluate("transformer-block-1", norm_over_all)
    assert not passed and "whole array" in message and "last axis" in message

    def unbiased(x, gamma, beta):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, ddof=1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta

    assert "ddof=1" in ex.evaluate("transformer-block-1", unbiased)[1]

    def eps_outside(x, gamma, beta):
        mean, std = x.mean(-1, keepdims=True), x.std(-1, keepdims=True)
        return (x - mean) / (std + 1e-5) * gamma + beta

    assert "outside the square root" in ex.evaluate("transformer-block-1", eps_outside)[1]

    def always_post_norm(x, W1, b1, W2, b2, norm_first):
        return ref.layer_norm(x + ref.feed_forward(x, W1, b1, W2, b2))

    passed, message = ex.evaluate("transformer-block-3", always_post_norm)
    assert not passed and "`norm_first` ignored: post-norm" in message  # right on half the cases


def test_parameter_count_exercise_matches_torch_layers():
    count = ex.EXERCISES["transformer-block-2"].reference
    for d_model, n_heads, d_ff in [(16, 4, 64), (12, 3, 20), (8, 1, 8)]:
        ours = modules.EncoderLayer(d_model, n_heads, d_ff)
        theirs = torch.nn.TransformerEncoderLayer(d_model, n_heads, d_ff)
        assert count(d_model, d_ff) == sum(p.numel() for p in ours.parameters())
        assert count(d_model, d_ff) == sum(p.numel() for p in theirs.parameters())
    passed, message = ex.evaluate("transformer-block-2", lambda d_model, d_ff: 12 * d_model**2)
    assert not passed and "Hint" in message
