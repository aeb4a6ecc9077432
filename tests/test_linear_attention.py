"""Chapter 15's package (``course_attention.linear_attention``, work in progress): linear
attention's parallel, recurrent and chunkwise forms equal; the delta rule and the gated delta
rule recurrent = chunkwise in float64, and equal to Hugging Face's Qwen3-Next references
(float32) to float32 precision."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import linear_attention as la

F64 = torch.float64


def _inputs(seed: int, n: int = 23, dk: int = 8, dv: int = 6):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(2, 3, n, dk, generator=gen, dtype=F64)
    k = torch.nn.functional.normalize(torch.randn(2, 3, n, dk, generator=gen, dtype=F64), dim=-1)
    v = torch.randn(2, 3, n, dv, generator=gen, dtype=F64)
    g = -torch.rand(2, 3, n, generator=gen, dtype=F64) * 0.5
    beta = torch.rand(2, 3, n, generator=gen, dtype=F64)
    return q, k, v, g, beta


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 30), st.integers(1, 9))
def test_linear_attentions_three_forms_are_equal(n, chunk):
    q, k, v, _, _ = _inputs(n, n)
    parallel = la.linear_attention(q, k, v, "parallel")
    for mode in ("recurrent", "chunk"):
        assert float((la.linear_attention(q, k, v, mode, chunk) - parallel).abs().max()) < 1e-12


def test_linear_attention_is_softmax_free_and_causal():
    q, k, v, _, _ = _inputs(0)
    out = la.linear_attention(q, k, v)
    v2 = v.clone()
    v2[:, :, 10:] += 5.0  # the future changes: the past's outputs may not
    assert torch.equal(la.linear_attention(q, k, v2)[:, :, :10], out[:, :, :10])
    # each output is a convex mixture of the values so far (the feature map is positive)
    assert (out[:, :, 0] - v[:, :, 0]).abs().max() < 1e-5


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 40), st.integers(1, 16))
def test_the_gated_delta_rule_recurrent_equals_chunkwise(n, chunk):
    q, k, v, g, beta = _inputs(n, n)
    r, sr = la.gated_delta_rule(q, k, v, g, beta, "recurrent")
    c, sc = la.gated_delta_rule(q, k, v, g, beta, "chunk", chunk)
    assert float((r - c).abs().max()) < 1e-12 and float((sr - sc).abs().max()) < 1e-12
    d = la.delta_rule(q, k, v, beta)
    assert float((d - la.delta_rule(q, k, v, beta, "chunk", chunk)).abs().max()) < 1e-12


def test_the_delta_rule_writes_the_error_one_step_of_regression():
    # one key, written with beta = 1: the state then reads back exactly the value
    k = torch.nn.functional.normalize(torch.randn(1, 1, 2, 4, dtype=F64), dim=-1)
    k[:, :, 1] = k[:, :, 0]
    v = torch.randn(1, 1, 2, 3, dtype=F64)
    out, state = la.gated_delta_rule(k * 2.0, k, v, torch.zeros(1, 1, 2, dtype=F64),
                                     torch.ones(1, 1, 2, dtype=F64))
    assert torch.allclose(state.transpose(-1, -2) @ k[0, 0, 1], v[0, 0, 1], atol=1e-12)
    # the second write of the same key replaced the first value instead of adding to it
    assert torch.allclose(out[:, :, 1], v[:, :, 1], atol=1e-12)


def test_the_gated_delta_rule_equals_hugging_faces_qwen3_next_references():
    hf = pytest.importorskip("transformers.models.qwen3_next.modeling_qwen3_next")
    q, k, v, g, beta = _inputs(3, 37)
    ours, state = la.gated_delta_rule(q, k, v, g, beta)
    t = lambda x: x.transpose(1, 2)  # noqa: E731 - HF: (batch, seq, heads, d)
    rec, rec_state = hf.torch_recurrent_gated_delta_rule(t(q), t(k), t(v), t(g), t(beta),
                                                         output_final_state=True)
    chunk, chunk_state = hf.torch_chunk_gated_delta_rule(t(q), t(k), t(v), t(g), t(beta),
                                                         chunk_size=8, output_final_state=True)
    for theirs, s in ((rec, rec_state), (chunk, chunk_state)):
        assert theirs.dtype == F64  # cast back to the input's dtype ...
        assert float((t(theirs) - ours).abs().max()) < 1e-5  # ... after float32 arithmetic
        assert float((s.double() - state).abs().max()) < 1e-5
        assert float((t(theirs) - ours).abs().max()) > 1e-12  # float32 inside, not float64


def test_state_bytes_and_bad_input():
    assert la.state_bytes(48, 32, 128, 128) == 48 * 32 * 128 * 128 * 2
    q, k, v, g, beta = _inputs(0)
    with pytest.raises(ValueError, match="mode"):
        la.gated_delta_rule(q, k, v, g, beta, "parallel")
    with pytest.raises(ValueError, match="beta must be"):
        la.gated_delta_rule(q, k, v, g, beta[:, :, :-1])
    with pytest.raises(ValueError, match="d_k"):
        la.linear_attention(q, k[..., :-1], v)
    with pytest.raises(ValueError, match="chunk_size"):
        la.linear_attention(q, k, v, "chunk", 0)
    with pytest.raises(ValueError, match="initial_state"):
        la.gated_delta_rule(q, k, v, g, beta, initial_state=torch.zeros(1))
    with pytest.raises(ValueError, match="heads"):
        la.state_bytes(1, 0, 1, 1)


def test_the_layer_equals_hugging_faces_qwen3_next_gated_deltanet():
    transformers = pytest.importorskip("transformers")
    hf = pytest.importorskip("transformers.models.qwen3_next.modeling_qwen3_next")
    from course_attention.linear_attention import gated_deltanet

    torch.manual_seed(0)
    config = transformers.Qwen3NextConfig(
        hidden_size=64, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
        linear_value_head_dim=6, linear_conv_kernel_dim=4, num_hidden_layers=1,
        layer_types=["linear_attention"], num_attention_heads=4, num_key_value_heads=2,
        vocab_size=50, intermediate_size=32, moe_intermediate_size=16, num_experts=2,
        num_experts_per_tok=1)
    layer = hf.Qwen3NextGatedDeltaNet(config, 0).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 0.3)
        layer.A_log.copy_(torch.log(torch.rand(4, dtype=F64) * 2 + 0.1))
    ours = gated_deltanet.from_hf(layer)
    x = torch.randn(2, 37, 64, dtype=F64)
    with torch.no_grad():
        theirs, mine = layer(x), ours(x)
        gap = float((theirs - mine).abs().max())
        assert 1e-12 < gap < 1e-5 * float(theirs.abs().max())  # HF's rule runs in float32
        ours.dt_bias.add_(0.5)  # the control: one gate's bias changed, the layer differs
        assert float((ours(x) - theirs).abs().max()) > 1e-3
