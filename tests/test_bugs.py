"""The spot-the-bug appendix: every checker flags the buggy version and passes the fixed one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import bugs, modules, toy
from course_attention import numpy_ref as ref

PAIRS = [
    (bugs.catches_undefined_name, bugs.attention_buggy, bugs.attention_fixed),
    (bugs.catches_softmax_overflow, bugs.softmax_buggy, bugs.softmax_fixed),
    (bugs.catches_unset_causal_flag, bugs.CausalAttentionBuggy, bugs.CausalAttentionFixed),
    (bugs.catches_flipped_mask, bugs.causal_attention_buggy, bugs.causal_attention_fixed),
    (bugs.catches_positions_on_batch, bugs.add_positions_buggy, bugs.add_positions_fixed),
    (bugs.catches_decoder_skips_encoder, bugs.encoder_decoder_buggy, bugs.encoder_decoder_fixed),
    (bugs.catches_merge_without_transpose, bugs.merge_heads_buggy, bugs.merge_heads_fixed),
    (
        bugs.catches_arithmetic_slip,
        bugs.worked_example_weights_buggy,
        bugs.worked_example_weights_fixed,
    ),
]


@pytest.mark.parametrize(("catches", "buggy", "fixed"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_checker_flags_buggy_and_passes_fixed(catches, buggy, fixed):
    assert catches(buggy) is True
    assert catches(fixed) is False


def test_fixed_attention_matches_reference():
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 2, 4, 6))  # each (batch, seq, d)
    np.testing.assert_allclose(
        bugs.attention_fixed(Q, K, V), ref.scaled_dot_product_attention(Q, K, V)[0]
    )


def test_fixed_softmax_matches_reference_for_large_scores():
    x = np.array([[1000.0, 999.0, 0.0], [-5.0, 0.0, 5.0]])  # (2, 3)
    np.testing.assert_allclose(bugs.softmax_fixed(x), ref.softmax(x))


def test_fixed_causal_attention_matches_reference():
    torch.manual_seed(0)
    layer = bugs.CausalAttentionFixed(8).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)  # (batch, seq, d_model)
    W, b = layer.qkv.weight.detach().numpy(), layer.qkv.bias.detach().numpy()
    Q, K, V = np.split(x.numpy() @ W.T + b, 3, axis=-1)
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=ref.causal_mask(5))
    with torch.no_grad():
        np.testing.assert_allclose(layer(x).numpy(), expected, atol=1e-12)


def test_fixed_mask_matches_torch_is_causal():
    g = torch.Generator().manual_seed(0)
    Q, K, V = torch.randn(3, 2, 4, 3, generator=g, dtype=torch.float64)  # each (batch, seq, d)
    expected = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
    torch.testing.assert_close(bugs.causal_attention_fixed(Q, K, V)[0], expected)


def test_buggy_mask_leaves_last_query_with_nothing():
    Q, K, V = torch.randn(3, 4, 3, dtype=torch.float64)
    _, weights = bugs.causal_attention_buggy(Q, K, V)
    assert weights[-1].sum() == 0 and weights[0, 0] == 0


def test_fixed_positions_match_positional_encoding():
    x = torch.randn(3, 5, 8)  # (batch, seq, d_model)
    torch.testing.assert_close(bugs.add_positions_fixed(x), modules.PositionalEncoding(8)(x))


def test_fixed_encoder_decoder_matches_torch_layers():
    torch.manual_seed(0)
    enc_t = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    dec_t = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    enc_t.eval(), dec_t.eval()
    encoder, decoder = (
        modules.EncoderLayer.from_torch(enc_t),
        modules.DecoderLayer.from_torch(dec_t),
    )
    src = torch.randn(2, 5, 8, dtype=torch.float64)  # (batch, seq_s, d_model)
    tgt = torch.randn(2, 3, 8, dtype=torch.float64)  # (batch, seq_t, d_model)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    with torch.no_grad():
        expected = dec_t(tgt, enc_t(src), tgt_mask=causal)
        got = bugs.encoder_decoder_fixed(encoder, decoder, src, tgt)
    torch.testing.assert_close(got, expected)


def test_fixed_merge_heads_matches_reference_and_module_split():
    x = torch.randn(2, 3, 4, 5)  # (batch, heads, seq, d_head)
    np.testing.assert_allclose(bugs.merge_heads_fixed(x).numpy(), ref.merge_heads(x.numpy()))
    y = torch.randn(2, 4, 15)  # (batch, seq, d_model)
    split = modules.MultiHeadAttention(15, 3)._split(y)
    torch.testing.assert_close(bugs.merge_heads_fixed(split), y)


def test_fixed_worked_example_matches_attention():
    example = toy.worked_example()
    _, weights = ref.scaled_dot_product_attention(example.q[None], example.K, example.V)
    np.testing.assert_allclose(bugs.worked_example_weights_fixed(), weights[0])


def test_slip_changes_which_key_wins():
    assert np.argmax(bugs.worked_example_weights_buggy()) != np.argmax(
        bugs.worked_example_weights_fixed()
    )


def test_source_renders_a_python_code_block():
    text = bugs.source(bugs.softmax_buggy).data
    assert text.startswith("```python\ndef softmax_buggy") and text.endswith("```")
