"""Multi-head attention: numpy ⇔ our torch module ⇔ F.scaled_dot_product_attention ⇔
nn.MultiheadAttention, causality, empty rows and bad input (chapter 5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from course_attention import masks, modules
from course_attention import numpy_ref as ref


@st.composite
def mha_case(draw):
    n_heads = draw(st.integers(1, 8))
    d_model = n_heads * draw(st.integers(1, 4))
    batch, seq_q, seq_k = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    mask_kind = draw(st.sampled_from(["none", "causal", "padding", "per-head"]))
    return n_heads, d_model, batch, seq_q, seq_k, mask_kind, draw(st.integers(0, 2**31 - 1))


def _mask(kind, batch, n_heads, seq_q, seq_k, g):
    if kind == "none":
        return None
    if kind == "causal":
        return torch.ones(seq_q, seq_k, dtype=torch.bool).tril()
    if kind == "padding":
        lengths = torch.randint(1, seq_k + 1, (batch,), generator=g)
        return (torch.arange(seq_k) < lengths[:, None])[:, None, None, :]
    allowed = torch.rand(batch, n_heads, seq_q, seq_k, generator=g) < 0.6
    allowed[..., 0] = True
    return allowed


@given(mha_case())
def test_numpy_torch_and_pytorch_agree_in_float64(case):
    n_heads, d_model, batch, seq_q, seq_k, kind, seed = case
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_bias.normal_(generator=g)
        mha.out_proj.bias.normal_(generator=g)
    ours = modules.MultiHeadAttention.from_torch(mha)
    x_q = torch.randn(batch, seq_q, d_model, generator=g, dtype=torch.float64)
    x_kv = torch.randn(batch, seq_k, d_model, generator=g, dtype=torch.float64)
    mask = _mask(kind, batch, n_heads, seq_q, seq_k, g)

    out, weights = ours(x_q, x_kv, x_kv, mask=mask)
    out_fused, _ = ours(x_q, x_kv, x_kv, mask=mask, need_weights=False)
    mask_np = None if mask is None else mask.numpy()
    out_np, weights_np = ref.multi_head_attention(
        x_q.numpy(), x_kv.numpy(), n_heads=n_heads, mask=mask_np, **ours.numpy_weights()
    )
    attn_mask, key_padding_mask = (
        (None, None) if mask is None else masks.to_nn_multihead(mask, n_heads)
    )
    expected, expected_w = mha(
        x_q, x_kv, x_kv, attn_mask=attn_mask, key_padding_mask=key_padding_mask
    )
    np.testing.assert_allclose(out.detach().numpy(), out_np, atol=1e-6)
    np.testing.assert_allclose(weights.detach().numpy(), weights_np, atol=1e-6)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(out_fused, expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(weights.mean(dim=1), expected_w, atol=1e-6, rtol=1e-6)


def test_module_heads_equal_pytorch_sdpa_per_head():
    torch.manual_seed(0)
    mha = modules.MultiHeadAttention(16, 4).double()
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    Q, K, V = (mha._split(layer(x)) for layer in (mha.W_q, mha.W_k, mha.W_v))
    heads = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
    expected = mha.W_o(heads.transpose(1, 2).reshape(2, 5, 16))
    got, _ = mha(x, causal=True)
    torch.testing.assert_close(got, expected)


def test_split_and_merge_heads_round_trip_and_slice_features():
    X = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    heads = ref.split_heads(X, 4)
    assert heads.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(heads[:, 1], X[:, :, 2:4])
    np.testing.assert_array_equal(ref.merge_heads(heads), X)


def test_changing_future_tokens_leaves_earlier_outputs_unchanged():
    torch.manual_seed(0)
    mha = modules.MultiHeadAttention(8, 2).double()
    x = torch.randn(1, 6, 8, dtype=torch.float64)
    changed = x.clone()
    changed[:, 4:] = torch.randn(1, 2, 8, dtype=torch.float64)
    before, _ = mha(x, causal=True)
    after, _ = mha(changed, causal=True)
    torch.testing.assert_close(before[:, :4], after[:, :4], rtol=0, atol=0)
    assert not torch.allclose(before[:, 4:], after[:, 4:])
    kw = mha.numpy_weights()
    causal = ref.causal_mask(6)
    np_before, _ = ref.multi_head_attention(x.numpy(), x.numpy(), n_heads=2, mask=causal, **kw)
    np_after, _ = ref.multi_head_attention(
        changed.numpy(), changed.numpy(), n_heads=2, mask=causal, **kw
    )
    np.testing.assert_array_equal(np_before[:, :4], np_after[:, :4])


def test_fully_masked_rows_give_zero_weights_in_every_path():
    torch.manual_seed(0)
    mha = modules.MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    allowed = torch.ones(2, 1, 3, 3, dtype=torch.bool)
    allowed[0, :, 1] = False  # query 1 of sample 0 may see nothing
    out, weights = mha(x, mask=allowed)
    fused, _ = mha(x, mask=allowed, need_weights=False)
    assert torch.equal(weights[0, :, 1], torch.zeros(2, 3, dtype=torch.float64))
    assert torch.isfinite(out).all() and torch.isfinite(fused).all()
    torch.testing.assert_close(out, fused)
    torch.testing.assert_close(out[0, 1], mha.W_o.bias)  # zero attention, then the bias
    _, w_np = ref.multi_head_attention(
        x.numpy(), x.numpy(), n_heads=2, mask=allowed.numpy(), **mha.numpy_weights()
    )
    assert (w_np[0, :, 1] == 0).all()


def test_cross_attention_with_different_lengths():
    mha = modules.MultiHeadAttention(12, 3)
    out, weights = mha(torch.randn(2, 4, 12), torch.randn(2, 7, 12))
    assert out.shape == (2, 4, 12) and weights.shape == (2, 3, 4, 7)
    _, averaged = mha(torch.randn(2, 4, 12), torch.randn(2, 7, 12), average_weights=True)
    assert averaged.shape == (2, 4, 7)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="d_model=10 must be a multiple of n_heads=3"):
        modules.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="d_model=10 must be divisible by n_heads=3"):
        ref.split_heads(np.ones((1, 2, 10)), 3)
    mha = modules.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"key must have shape \(batch, seq, d_model=8\)"):
        mha(torch.ones(1, 3, 8), torch.ones(1, 3, 6))
    with pytest.raises(ValueError, match="mask must be a bool tensor"):
        mha(torch.ones(1, 3, 8), mask=torch.ones(3, 3))
    with pytest.raises(ValueError, match=r"mask of shape \(4, 4\) does not broadcast"):
        mha(torch.ones(1, 3, 8), mask=torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="must share batch and length"):
        mha(torch.ones(1, 3, 8), torch.ones(1, 3, 8), torch.ones(1, 4, 8))
    W = np.eye(8)
    with pytest.raises(ValueError, match=r"W_k must have shape \(d_model, d_model\) = \(8, 8\)"):
        ref.multi_head_attention(np.ones((1, 2, 8)), np.ones((1, 2, 8)), W, W[:4], W, W, 2)
    with pytest.raises(ValueError, match="must share batch and d_model"):
        ref.multi_head_attention(np.ones((1, 2, 8)), np.ones((1, 2, 6)), W, W, W, W, 2)
    with pytest.raises(ValueError, match=r"X must have shape \(batch, heads, seq, d_head\)"):
        ref.merge_heads(np.ones((2, 3)))


def test_causal_attn_mask_and_key_padding_mask_equal_numpy_with_inverted_convention():
    """nn.MultiheadAttention's bool masks say True = NOT allowed; ours say True = may attend."""
    torch.manual_seed(0)
    N, T, d, h = 2, 5, 12, 3
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    x = torch.randn(N, T, d, dtype=torch.float64)
    causal, keep = ref.causal_mask(T), ref.padding_mask([5, 3], T)  # (T, T), (N, 1, 1, T)
    W_qkv = np.split(mha.in_proj_weight.detach().numpy().T, 3, axis=1)  # fused (d, 3d) split
    biases = (*np.split(mha.in_proj_bias.detach().numpy(), 3), mha.out_proj.bias.detach().numpy())
    W_o = mha.out_proj.weight.detach().numpy().T
    out_np, w_np = ref.multi_head_attention(
        x.numpy(), x.numpy(), *W_qkv, W_o, h, mask=causal & keep, biases=biases
    )
    out_t, w_t = mha(
        x, x, x,
        attn_mask=torch.from_numpy(~causal),
        key_padding_mask=torch.from_numpy(~keep[:, 0, 0]),
        average_attn_weights=False,
    )  # fmt: skip
    np.testing.assert_allclose(out_t.detach().numpy(), out_np, atol=1e-12)
    np.testing.assert_allclose(w_t.detach().numpy(), w_np, atol=1e-12)
    assert (w_np[1, :, :, 3:] == 0).all()  # padding keys of the short sequence get no weight
    _, w_flipped = mha(x, x, x, attn_mask=torch.from_numpy(causal))  # not inverted: wrong
    assert (w_flipped[:, 0, 0] == 0).all() and torch.isnan(w_flipped[:, -1]).all()
