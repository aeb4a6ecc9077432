"""The torch implementation agrees with the numpy reference and with PyTorch's own attention."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from course_attention import modules
from course_attention import numpy_ref as ref


@st.composite
def shapes_and_mask(draw):
    batch, heads = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    seq_q, seq_k = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    d_k, d_v = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    mask_kind = draw(st.sampled_from(["none", "full", "key", "causal"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return batch, heads, seq_q, seq_k, d_k, d_v, mask_kind, seed


def _make(batch, heads, seq_q, seq_k, d_k, d_v, mask_kind, seed):
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(batch, heads, seq_q, d_k))
    K = rng.normal(size=(batch, heads, seq_k, d_k))
    V = rng.normal(size=(batch, heads, seq_k, d_v))
    if mask_kind == "none":
        mask = None
    elif mask_kind == "full":
        mask = rng.random((batch, heads, seq_q, seq_k)) < 0.7
    elif mask_kind == "key":
        lengths = rng.integers(1, seq_k + 1, size=batch)
        mask = ref.padding_mask(lengths, seq_k)  # (batch, 1, 1, seq_k)
    else:
        mask = ref.causal_mask(seq_q, seq_k)
    return Q, K, V, mask


@given(shapes_and_mask())
def test_torch_matches_numpy_and_pytorch_sdpa_in_float64(params):
    Q, K, V, mask = _make(*params)
    t = [torch.from_numpy(a) for a in (Q, K, V)]
    t_mask = None if mask is None else torch.from_numpy(mask)
    out_np, w_np = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    out_t, w_t = modules.scaled_dot_product_attention(*t, mask=t_mask)
    np.testing.assert_allclose(out_t.numpy(), out_np, atol=1e-10)
    np.testing.assert_allclose(w_t.numpy(), w_np, atol=1e-10)
    expected = F.scaled_dot_product_attention(*t, attn_mask=t_mask)
    if mask is None:
        live = np.ones(out_np.shape[:-1], dtype=bool)
    else:  # PyTorch's answer for a query with nothing to attend to differs between versions
        live = np.broadcast_to(mask, w_np.shape).any(axis=-1)
    np.testing.assert_allclose(out_t.numpy()[live], expected.numpy()[live], atol=1e-6)


def test_custom_scale_matches_pytorch():
    g = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 4, generator=g, dtype=torch.float64) for _ in range(3))
    out, _ = modules.scaled_dot_product_attention(Q, K, V, scale=0.3)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(Q, K, V, scale=0.3))


def test_fully_masked_row_has_zero_output_and_finite_gradients():
    Q = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    K = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    V = torch.randn(1, 3, 2, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, True]])
    out, weights = modules.scaled_dot_product_attention(Q, K, V, mask=mask)
    assert torch.equal(weights[0, 1], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(out[0, 1], torch.zeros(2, dtype=torch.float64))
    out.sum().backward()
    for x in (Q, K, V):
        assert torch.isfinite(x.grad).all()


def test_huge_logits_are_exact_in_torch():
    Q = torch.tensor([[1e2, 0.0]], dtype=torch.float64)
    K = torch.tensor([[1e2, 0.0], [-1e2, 0.0]], dtype=torch.float64)
    V = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
    out, weights = modules.scaled_dot_product_attention(Q, K, V, scale=1.0)
    assert weights.tolist() == [[1.0, 0.0]] and out.tolist() == [[1.0]]


@pytest.mark.parametrize(
    ("q", "k", "v", "message"),
    [
        ((2, 3), (2, 4), (2, 4), r"query width d_k=3 .* key width d_k=4"),
        ((2, 3), (4, 3), (5, 3), r"K has 4 keys .* V has 5 values"),
    ],
)
def test_torch_bad_shapes_name_the_shapes(q, k, v, message):
    with pytest.raises(ValueError, match=message):
        modules.scaled_dot_product_attention(torch.ones(q), torch.ones(k), torch.ones(v))


def test_torch_rejects_bad_masks_and_inputs():
    x = torch.ones(3, 4)
    with pytest.raises(ValueError, match="mask must be a bool tensor"):
        modules.scaled_dot_product_attention(x, x, x, mask=torch.zeros(3, 3))
    with pytest.raises(ValueError, match=r"mask of shape \(2, 3\) does not broadcast"):
        modules.scaled_dot_product_attention(x, x, x, mask=torch.ones(2, 3, dtype=torch.bool))
    bad = x.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match=r"K must be finite; found nan at index \(0, 0\)"):
        modules.scaled_dot_product_attention(x, bad, x)
    with pytest.raises(ValueError, match="must be a floating-point tensor"):
        modules.scaled_dot_product_attention(x.long(), x, x)


def test_bad_inputs_name_the_value_at_fault():
    with pytest.raises(ValueError, match="n_heads must be at least 1; got n_heads=0"):
        modules.MultiHeadAttention(8, 0)
    with pytest.raises(ValueError, match="d_model=8 must be a multiple of n_heads=3"):
        modules.MultiHeadAttention(8, 3)
    with pytest.raises(ValueError, match="query has dtype torch.int64"):
        modules.MultiHeadAttention(8, 2)(torch.ones(1, 3, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="K has 0 keys"):
        modules.scaled_dot_product_attention(torch.ones(2, 3), torch.ones(0, 3), torch.ones(0, 2))
