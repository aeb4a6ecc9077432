"""Mask conventions: conversions round-trip and agree with the installed PyTorch."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

from course_attention import masks, modules


def _allowed(seed: int = 0, shape=(2, 3, 4, 5)) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    allowed = torch.rand(shape, generator=g) < 0.6
    allowed[..., 0] = True  # every query may see something: PyTorch agrees on these rows
    return allowed


@pytest.mark.parametrize(("a", "b"), list(itertools.permutations(masks.CONVENTIONS, 2)))
def test_conversions_round_trip(a, b):
    allowed = _allowed()
    source = masks.convert(allowed, "allowed", a)
    back = masks.convert(masks.convert(source, a, b), b, "allowed")
    assert torch.equal(back, allowed)


def test_every_convention_gives_pytorch_the_same_attention():
    g = torch.Generator().manual_seed(1)
    Q = torch.randn(2, 3, 4, 8, generator=g, dtype=torch.float64)
    K, V = (torch.randn(2, 3, 5, 8, generator=g, dtype=torch.float64) for _ in range(2))
    allowed = _allowed()
    ours, _ = modules.scaled_dot_product_attention(Q, K, V, mask=allowed)
    as_bool = F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)
    additive = masks.convert(allowed, "allowed", "additive", dtype=torch.float64)
    as_float = F.scaled_dot_product_attention(Q, K, V, attn_mask=additive)
    blocked = masks.convert(allowed, "allowed", "blocked")
    scores = (Q @ K.transpose(-2, -1) / 8**0.5).masked_fill(blocked, float("-inf"))
    by_hand = scores.softmax(-1) @ V
    for other in (as_bool, as_float, by_hand):
        torch.testing.assert_close(other, ours)


def test_nn_multihead_masks_match_our_module():
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
    ours = modules.MultiHeadAttention.from_torch(mha)
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    for allowed in (
        torch.ones(5, 5, dtype=torch.bool).tril(),
        torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)[:, None, None],
        _allowed(2, (2, 2, 5, 5)),
    ):
        attn_mask, key_padding_mask = masks.to_nn_multihead(allowed, n_heads=2)
        expected, _ = mha(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
        got, _ = ours(x, mask=allowed)
        torch.testing.assert_close(got, expected)


def test_bad_conventions_and_dtypes_are_named():
    with pytest.raises(ValueError, match="source must be one of"):
        masks.convert(torch.ones(2, dtype=torch.bool), "keep", "allowed")
    with pytest.raises(ValueError, match="'blocked' mask must be bool; got dtype torch.float32"):
        masks.convert(torch.zeros(2), "blocked", "allowed")
    with pytest.raises(ValueError, match="additive mask must be floating point"):
        masks.convert(torch.ones(2, dtype=torch.bool), "additive", "allowed")
    with pytest.raises(ValueError, match="0 \\(attend\\) or negative values"):
        masks.convert(torch.tensor([0.0, 1.0]), "additive", "allowed")
    with pytest.raises(ValueError, match="cannot express a mask of shape \\(5,\\)"):
        masks.to_nn_multihead(torch.ones(5, dtype=torch.bool), n_heads=2)
