"""Chapter 8's GPT and Hugging Face's GPT2LMHeadModel: the same function, both ways (float64)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import corpus, gpt

transformers = pytest.importorskip("transformers")
GPT2Config, GPT2LMHeadModel = transformers.GPT2Config, transformers.GPT2LMHeadModel

TOL = 1e-10


def _course(config: gpt.GPTConfig, seed: int = 0, scale: float = 0.3) -> gpt.GPT:
    """A float64 course GPT with weights large enough that every position and head matters."""
    gen = torch.Generator().manual_seed(seed)
    model = gpt.GPT(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale)
    return model


def _hf(seed: int = 0, scale: float = 0.3, **config: object) -> object:
    """A float64 GPT2LMHeadModel with random weights (every parameter redrawn with ``seed``)."""
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(**config)).double().eval()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale)
    return model


def _gap(a: torch.Tensor, b: torch.Tensor) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float((a - b).abs().max())


shapes = st.fixed_dictionaries({
    "vocab_size": st.integers(5, 40),
    "context": st.integers(3, 16),
    "n_heads": st.sampled_from([1, 2, 4]),
    "d_head": st.sampled_from([2, 8]),
    "n_layers": st.integers(1, 3),
    "d_ff": st.sampled_from([None, 12]),
    "tied": st.booleans(),
})


def _config(shape: dict) -> gpt.GPTConfig:
    shape = dict(shape)
    d_model = shape.pop("d_head") * shape["n_heads"]
    return gpt.GPTConfig(d_model=d_model, **shape)


@settings(max_examples=10, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_to_hf_gives_the_same_logits(shape, seed):
    model = _course(_config(shape), seed)
    hf = gpt.to_hf_gpt2(model)
    c = hf.config
    assert (c.n_positions, c.n_embd, c.n_head, c.n_layer) == (
        model.config.context, model.config.d_model, model.config.n_heads, model.config.n_layers)
    assert c.tie_word_embeddings == model.config.tied
    assert (hf.lm_head.weight is hf.transformer.wte.weight) == model.config.tied
    tokens = torch.randint(0, c.vocab_size, (2, c.n_positions),
                           generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        assert _gap(model(tokens), hf(tokens).logits) < TOL


@settings(max_examples=6, deadline=None)
@given(n_heads=st.sampled_from([1, 3]), n_layers=st.integers(1, 2), tied=st.booleans(),
       activation=st.sampled_from(gpt.hf.ACTIVATIONS), seed=st.integers(0, 2**16))
def test_from_hf_gives_the_same_logits(n_heads, n_layers, tied, activation, seed):
    hf = _hf(seed, vocab_size=23, n_positions=11, n_embd=6 * n_heads, n_head=n_heads,
             n_layer=n_layers, activation_function=activation, tie_word_embeddings=tied)
    model = gpt.from_hf_gpt2(hf)
    assert model.config == gpt.GPTConfig(vocab_size=23, context=11, d_model=6 * n_heads,
                                         n_heads=n_heads, n_layers=n_layers, tied=tied)
    assert model.tok_embed.weight.dtype == torch.float64 and not model.training
    tokens = torch.randint(0, 23, (3, 11), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        assert _gap(model(tokens), hf(tokens).logits) < TOL


@pytest.mark.parametrize("tied", [False, True])
def test_round_trips_give_identical_weights(tied):
    config = gpt.GPTConfig(vocab_size=30, context=9, d_model=8, n_heads=2, n_layers=2, tied=tied)
    model = _course(config, seed=3)
    back = gpt.from_hf_gpt2(gpt.to_hf_gpt2(model))
    ours, theirs = model.state_dict(), back.state_dict()
    assert back.config == config and ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    hf = _hf(4, vocab_size=30, n_positions=9, n_embd=8, n_head=2, n_layer=2,
             tie_word_embeddings=tied)
    again = gpt.to_hf_gpt2(gpt.from_hf_gpt2(hf))
    params = dict(hf.named_parameters())
    assert params.keys() == dict(again.named_parameters()).keys()
    assert all(torch.equal(p, params[k]) for k, p in again.named_parameters())


def test_every_weight_is_mapped_once_and_the_fused_qkv_is_three_column_blocks():
    model = _course(gpt.GPTConfig(vocab_size=20, context=6, d_model=12, n_heads=3, n_layers=2))
    hf = gpt.to_hf_gpt2(model)
    pairs = gpt.hf.name_pairs(model, hf)
    assert sorted(p[0] for p in pairs) == sorted(n for n, _ in model.named_parameters())
    assert {p[2] for p in pairs} == {n for n, _ in hf.named_parameters()}
    W_qkv = hf.transformer.h[1].attn.c_attn.weight  # (d_model, 3 · d_model): x @ W_qkv
    attn = model.blocks[1].attn
    expected = torch.cat([attn.W_q.weight, attn.W_k.weight, attn.W_v.weight]).T
    assert W_qkv.shape == (12, 36) and torch.equal(W_qkv, expected)
    assert torch.equal(hf.transformer.h[0].mlp.c_fc.weight, model.blocks[0].ff.linear1.weight.T)


@pytest.mark.parametrize("n_heads", [1, 4])
def test_greedy_generations_are_equal(n_heads):
    model = _course(gpt.GPTConfig(vocab_size=96, context=24, d_model=16, n_heads=n_heads,
                                  n_layers=2), seed=n_heads)
    hf = gpt.to_hf_gpt2(model)
    prompt = corpus.encode("def f(x):")
    ours = gpt.generate(model, prompt, 16).tokens  # 9 + 16 − 1 = 24: the whole context
    assert np.array_equal(gpt.hf.hf_greedy(hf, prompt, 16), ours)
    seq = torch.as_tensor(prompt)[None]  # HF's own forward, argmax by hand, no cache
    with torch.no_grad():
        for _ in range(16):
            seq = torch.cat([seq, hf(seq).logits[:, -1:].argmax(-1)], dim=1)
    assert np.array_equal(seq[0, 9:].numpy(), ours)
    with pytest.raises(ValueError, match="n_positions=24"):
        gpt.hf.hf_greedy(hf, prompt, 17)


@pytest.mark.parametrize("n_heads", [1, 2])
def test_hf_cache_holds_the_keys_and_values_of_the_course_cache(n_heads):
    model = _course(gpt.GPTConfig(vocab_size=40, context=12, d_model=8, n_heads=n_heads,
                                  n_layers=3), seed=7)
    hf = gpt.to_hf_gpt2(model)
    tokens = torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(7))
    cache = model.new_cache(batch=2)
    with torch.no_grad():
        ours = model.step(tokens, cache)
    logits, layers = gpt.hf.hf_cache(hf, tokens)
    assert len(layers) == 3 and _gap(ours, logits) < TOL
    for layer, (K, V) in enumerate(layers):
        assert K.shape == (2, n_heads, 10, 8 // n_heads)
        assert _gap(cache.keys[layer][:, :, :10], K) < TOL
        assert _gap(cache.values[layer][:, :, :10], V) < TOL


def test_gpt2_smalls_configuration_is_accepted():
    """``GPT2Config()``'s defaults are GPT-2 small's (``from_pretrained("gpt2")``): GELU
    ``gelu_new``, eps 1e-5, tied, context 1024, 50257 tokens, dropout 0.1 (ignored in eval);
    one layer here instead of 12, to stay fast."""
    hf = GPT2LMHeadModel(GPT2Config(n_layer=1)).eval()
    model = gpt.from_hf_gpt2(hf)
    assert model.config == gpt.GPTConfig(vocab_size=50257, context=1024, d_model=768,
                                         n_heads=12, n_layers=1, tied=True)
    tokens = torch.tensor([[464, 3290, 318, 257]])
    with torch.no_grad():
        assert _gap(model(tokens), hf(tokens).logits) < 1e-3  # float32


@pytest.mark.parametrize(("change", "named"), [
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx=True"),
    ({"reorder_and_upcast_attn": True}, "reorder_and_upcast_attn=True"),
    ({"activation_function": "relu"}, "activation_function='relu'"),
    ({"activation_function": "gelu"}, "activation_function='gelu'"),
    ({"add_cross_attention": True}, "add_cross_attention=True"),
    ({"scale_attn_weights": False}, "scale_attn_weights=False"),
    ({"layer_norm_epsilon": 1e-6}, "layer_norm_epsilon=1e-06"),
])
def test_a_gpt2_the_course_cannot_express_is_a_value_error_naming_it(change, named):
    hf = GPT2LMHeadModel(GPT2Config(vocab_size=10, n_positions=4, n_embd=4, n_head=1, n_layer=1,
                                    **change))
    with pytest.raises(ValueError, match="cannot express") as error:
        gpt.from_hf_gpt2(hf)
    assert named in str(error.value)


def test_other_bad_inputs_are_value_errors():
    small = dict(vocab_size=10, n_positions=4, n_embd=4, n_head=1, n_layer=1)
    two = GPT2LMHeadModel(GPT2Config(activation_function="relu", reorder_and_upcast_attn=True,
                                     **small))
    with pytest.raises(ValueError, match="'relu'.*; reorder_and_upcast_attn=True"):
        gpt.from_hf_gpt2(two)  # every difference, in one message
    untied = GPT2LMHeadModel(GPT2Config(**small))
    untied.lm_head.weight = torch.nn.Parameter(untied.lm_head.weight.detach() + 1)
    with pytest.raises(ValueError, match="lm_head.weight differs from wte.weight"):
        gpt.from_hf_gpt2(untied)
    with pytest.raises(ValueError, match="must be a transformers GPT2LMHeadModel; got GPT2Model"):
        gpt.from_hf_gpt2(transformers.GPT2Model(GPT2Config(**small)))
    with pytest.raises(ValueError, match="must be a transformers GPT2LMHeadModel; got GPT"):
        gpt.from_hf_gpt2(gpt.GPT(gpt.GPTConfig(context=4, d_model=4, n_heads=1, n_layers=1)))
    with pytest.raises(ValueError, match="must be a course_attention.gpt.GPT; got GPT2LMHeadModel"):
        gpt.to_hf_gpt2(untied)


def test_conversions_leave_the_global_random_state_alone():
    model = _course(gpt.GPTConfig(vocab_size=10, context=4, d_model=4, n_heads=1, n_layers=1))
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    gpt.from_hf_gpt2(gpt.to_hf_gpt2(model))
    assert torch.equal(torch.rand(3), expected)
