"""The spot-the-bug appendix: every checker flags the buggy version and passes the fixed one."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from course_attention import bugs
from course_attention import numpy_ref as ref

PAIRS = [
    (bugs.catches_undefined_name, bugs.causal_attention_buggy, bugs.causal_attention_renamed),
    (bugs.catches_softmax_overflow, bugs.causal_attention_renamed, bugs.causal_attention_fixed),
    (bugs.catches_unset_causal_flag, bugs.CausalAttentionBuggy, bugs.CausalAttentionFixed),
    (bugs.catches_config_field_mismatch, bugs.head_dim_buggy, bugs.head_dim_fixed),
    (bugs.catches_wrong_msa, bugs.msa_half_fixed, bugs.msa_fixed),
    (bugs.catches_wrong_concat_shape, bugs.concat_shape_buggy, bugs.concat_shape_fixed),
    (bugs.catches_max_shape, bugs.softmax_max_without_keepdims_buggy, bugs.softmax_fixed),
    (bugs.catches_typed_scores, bugs.worked_scores_buggy, bugs.worked_scores_fixed),
    (bugs.catches_values_not_outputs, bugs.concat_values_buggy, bugs.concat_values_fixed),
    (bugs.catches_ffn_reshape, bugs.ffn_buggy, bugs.ffn_fixed),
    (bugs.catches_swapped_referents, bugs.referents_buggy, bugs.referents_fixed),
    (
        bugs.catches_flipped_mask,
        bugs.flipped_mask_attention_buggy,
        bugs.flipped_mask_attention_fixed,
    ),
    (bugs.catches_merge_without_transpose, bugs.merge_heads_buggy, bugs.merge_heads_fixed),
]


@pytest.mark.parametrize(("catches", "buggy", "fixed"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_checker_flags_buggy_and_passes_fixed(catches, buggy, fixed):
    assert catches(buggy) is True
    assert catches(fixed) is False


def test_causal_attention_renamed_is_right_for_ordinary_scores_and_fixed_is_reference():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 5, 4))  # each (seq, d)
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=ref.causal_mask(5))
    np.testing.assert_allclose(bugs.causal_attention_renamed(Q, K, V), expected, atol=1e-12)
    np.testing.assert_allclose(
        bugs.causal_attention_fixed(100 * Q, K, V),
        bugs._causal_reference(100 * Q, K, V),
        atol=1e-12,
    )


def test_unset_flag_breaks_the_non_causal_layer_too():
    with pytest.raises(AttributeError, match="is_causal"):
        bugs.CausalAttentionBuggy(8, is_causal=False)(torch.randn(1, 3, 8))


def test_fixed_causal_attention_matches_reference():
    torch.manual_seed(0)
    layer = bugs.CausalAttentionFixed(8).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)  # (batch, seq, d_model)
    W, b = layer.qkv.weight.detach().numpy(), layer.qkv.bias.detach().numpy()
    Q, K, V = np.split(x.numpy() @ W.T + b, 3, axis=-1)
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=ref.causal_mask(5))
    with torch.no_grad():
        np.testing.assert_allclose(layer(x).numpy(), expected, atol=1e-12)


def test_published_head_check_passes_a_width_it_then_truncates():
    args = SimpleNamespace(dim=100, n_embd=64, n_heads=8)
    assert bugs.head_dim_buggy(args) * args.n_heads == 96 != args.dim
    with pytest.raises(ValueError, match="dim=100"):
        bugs.head_dim_fixed(args)


def test_published_msa_equals_torch_because_the_two_swaps_cancel():
    torch.manual_seed(0)
    N, T, d, heads = 2, 6, 8, 2
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True).double()
    X = torch.randn(N, T, d, dtype=torch.float64)
    M = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)
    with torch.no_grad():
        Y_torch, A_torch = mha(X, X, X, attn_mask=M)
    W_qkv, W_out = mha.in_proj_weight.detach().numpy().T, mha.out_proj.weight.detach().numpy().T
    for fn in (bugs.msa_buggy, bugs.msa_fixed):
        Y, A = fn(X.numpy(), M.numpy(), heads, W_qkv, W_out)
        np.testing.assert_allclose(Y, Y_torch.numpy(), atol=1e-12)
        np.testing.assert_allclose(A.mean(axis=1), A_torch.numpy(), atol=1e-12)
    Y_half, _ = bugs.msa_half_fixed(X.numpy(), M.numpy(), heads, W_qkv, W_out)
    assert not np.allclose(Y_half, Y_torch.numpy())


def test_claimed_concat_shape_holds_h_times_too_many_numbers():
    heads = np.zeros((2, 4, 5, 2))  # (N, h, T, d/h)
    with pytest.raises(ValueError):
        heads.reshape(bugs.concat_shape_buggy(2, 5, 8, 4))
    assert heads.reshape(bugs.concat_shape_fixed(2, 5, 8, 4)).shape == (2, 5, 8)


def test_row_maxima_keep_a_length_one_axis_not_the_shape_of_the_scores():
    Z = np.random.default_rng(0).normal(scale=50, size=(6, 7))
    assert Z.max(axis=-1, keepdims=True).shape == (6, 1)  # not (6, 7), as the note says
    shifted = Z - Z.max(axis=-1, keepdims=True)  # broadcast along the keys
    assert (shifted <= 0).all() and (shifted.max(axis=-1) == 0).all()  # so ≤ 1 holds too
    with pytest.raises(ValueError, match="broadcast"):
        bugs.softmax_max_without_keepdims_buggy(Z)  # (6, 7) - (6,): fails loudly
    square = Z[:, :6]  # (6, 6) - (6,): broadcasts against the wrong axis, silently
    assert not np.allclose(bugs.softmax_max_without_keepdims_buggy(square), ref.softmax(square))
    np.testing.assert_allclose(bugs.softmax_fixed(square), ref.softmax(square))


def test_swapped_referents_name_a_noun_without_the_wanted_feature():
    assert bugs.referents_buggy() == {"tired": "street", "wide": "animal"}
    assert not bugs.catches_swapped_referents(lambda: {"tired": "animal", "wide": "street"})
    assert bugs.catches_swapped_referents(lambda: {"tired": "animal"})  # one ending missing


def test_typed_banana_score_is_the_sum_with_one_sign_flipped():
    products = bugs.SEED_002_Q * bugs.SEED_002_K[1]  # (4,)
    assert np.isclose(products[:3].sum() - products[3], bugs.worked_scores_buggy()[1])
    assert np.isclose(bugs.worked_scores_fixed()[1], 0.65)
    weights_typed = ref.softmax(bugs.worked_scores_buggy() / 2)
    np.testing.assert_allclose(weights_typed, [0.454, 0.429, 0.117], atol=5e-4)


def test_equation_three_ignores_every_other_token():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((4, 8))  # (T, d)
    W = rng.standard_normal((4, 8, 8))
    X2 = X.copy()
    X2[3] += 1.0  # change the last token only
    first = [
        fn(X, *W, 2)[0] - fn(X2, *W, 2)[0]
        for fn in (bugs.concat_values_buggy, bugs.concat_values_fixed)
    ]
    assert np.abs(first[0]).max() == 0 and np.abs(first[1]).max() > 1e-3
    np.testing.assert_allclose(bugs.concat_values_buggy(X, *W, 2), X @ W[2] @ W[3])


def test_published_ffn_returns_the_wrong_shape_for_a_batch():
    rng = np.random.default_rng(0)
    W1, W2, b1, b2 = (
        rng.standard_normal((4, 16)),
        rng.standard_normal((16, 4)),
        np.zeros(16),
        np.zeros(4),
    )
    x = rng.standard_normal((2, 3, 4))  # (batch, seq, d)
    assert bugs.ffn_buggy(x, W1, b1, W2, b2).shape == (3, 8)
    assert bugs.ffn_fixed(x, W1, b1, W2, b2).shape == (2, 3, 4)


def test_fixed_mask_matches_torch_is_causal():
    g = torch.Generator().manual_seed(0)
    Q, K, V = torch.randn(3, 2, 4, 3, generator=g, dtype=torch.float64)  # each (batch, seq, d)
    expected = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
    torch.testing.assert_close(bugs.flipped_mask_attention_fixed(Q, K, V)[0], expected)


def test_buggy_mask_leaves_last_query_with_nothing():
    Q, K, V = torch.randn(3, 4, 3, dtype=torch.float64)
    _, weights = bugs.flipped_mask_attention_buggy(Q, K, V)
    assert weights[-1].sum() == 0 and weights[0, 0] == 0


def test_fixed_merge_heads_matches_reference():
    x = torch.randn(2, 3, 4, 5)  # (batch, heads, seq, d_head)
    np.testing.assert_allclose(bugs.merge_heads_fixed(x).numpy(), ref.merge_heads(x.numpy()))


def test_source_renders_a_python_code_block():
    text = bugs.source(bugs.softmax_fixed).data
    assert text.startswith("```python\ndef softmax_fixed") and text.endswith("```")
