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


@pytest.mark.parametrize("seq, chunk", [(37, 8), (64, 16), (5, 64)])
def test_the_gated_delta_rule_equals_hugging_faces_qwen3_next_references(seq, chunk):
    pytest.importorskip("transformers.models.qwen3_next.modeling_qwen3_next")
    from course_attention.linear_attention import hf

    gaps = hf.rule_equality(seq, chunk, seed=seq)
    assert gaps.chunk_recurrent < 1e-12  # the course's two forms, float64
    for gap in (gaps.hf_recurrent, gaps.hf_chunk):  # Hugging Face's float32 arithmetic inside
        assert 1e-12 < gap < 1e-5 * gaps.scale


def test_rule_inputs_are_what_the_rule_needs():
    from course_attention.linear_attention import hf

    q, k, v, g, beta = hf.rule_inputs(seq=9, heads=3, d_k=4, d_v=5, seed=2)
    assert q.shape == k.shape == (1, 3, 9, 4) and v.shape == (1, 3, 9, 5)
    assert g.shape == beta.shape == (1, 3, 9) and bool((g <= 0).all())
    assert bool(((beta > 0) & (beta < 1)).all())
    assert torch.allclose(k.norm(dim=-1), torch.ones(1, 3, 9, dtype=F64))
    with pytest.raises(ValueError, match="d_k"):
        hf.rule_inputs(d_k=0)


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
    pytest.importorskip("transformers.models.qwen3_next.modeling_qwen3_next")
    from course_attention.linear_attention import hf

    gap, scale, control = hf.layer_equality(seq=37)
    assert 1e-12 < gap < 1e-5 * scale  # HF's rule runs in float32
    assert control > 1e3 * gap  # the control: one gate's bias changed, the layer differs
