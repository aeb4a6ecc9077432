"""Chapter 12's modern decoder (``course_attention.modern``) against Hugging Face's Llama and Qwen3:
the parts one by one, then whole models both ways, their caches and their greedy text."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import grouped_query, modern, positions
from course_attention.modern import hf

transformers = pytest.importorskip("transformers")
from transformers.models.llama import modeling_llama  # noqa: E402
from transformers.models.qwen3 import modeling_qwen3  # noqa: E402

F64 = torch.float64


def small(family: str, **kw) -> modern.ModernConfig:
    base = dict(vocab_size=50, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=48,
                context=64, qk_norm=family == "qwen3")
    return modern.ModernConfig(**{**base, **kw})


def trained_looking(config: modern.ModernConfig, seed: int = 0) -> modern.ModernGPT:
    """A float64 model whose weights are not at their start: norms away from 1, weights of
    standard deviation 0.3 (so greedy decoding picks varied tokens, not one token again and
    again)."""
    torch.manual_seed(seed)
    model = modern.ModernGPT(config).to(F64).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.add_(0.2 * torch.randn_like(p)) if "norm" in name else p.normal_(0, 0.3)
    return model


# --- the parts ---------------------------------------------------------------------------------

def test_rms_norm_is_hugging_faces_and_layer_norm_without_the_mean():
    x = torch.randn(3, 5, 16, dtype=F64) * 4 + 2
    weight = torch.randn(16, dtype=F64)
    for cls in (modeling_qwen3.Qwen3RMSNorm, modeling_llama.LlamaRMSNorm):
        theirs = cls(16, eps=1e-6).to(F64)
        with torch.no_grad():
            theirs.weight.copy_(weight)
            assert torch.equal(modern.rms_norm(x, weight, 1e-6), theirs(x))
    # what it drops: the mean (and the bias). Centred first, it is LayerNorm, to float64 rounding
    centred = x - x.mean(-1, keepdim=True)
    layer = torch.nn.functional.layer_norm(x, (16,), weight, None, eps=1e-6)
    torch.testing.assert_close(modern.rms_norm(centred, weight, 1e-6, float32=False), layer,
                               rtol=0, atol=1e-12)
    # and HF's float32 statistics are float32-precise, not float64
    exact = modern.rms_norm(x, weight, 1e-6, float32=False)
    gap = (modern.rms_norm(x, weight, 1e-6) - exact).abs().max()
    assert 1e-10 < gap < 1e-5
    with pytest.raises(ValueError, match="weight"):
        modern.rms_norm(x, torch.ones(8, dtype=F64))


def test_swiglu_is_hugging_faces_mlp():
    ours = modern.SwiGLU(16, 40).to(F64)
    theirs = modeling_qwen3.Qwen3MLP(transformers.Qwen3Config(hidden_size=16, intermediate_size=40)
                                     ).to(F64)
    with torch.no_grad():
        for p in ("gate_proj", "up_proj", "down_proj"):
            getattr(theirs, p).weight.copy_(getattr(ours, p).weight)
    x = torch.randn(2, 7, 16, dtype=F64)
    assert torch.equal(ours(x), theirs(x))


def test_rope_is_hugging_faces_rotation_by_halves():
    config = transformers.Qwen3Config(hidden_size=32, num_attention_heads=2, head_dim=16,
                                      rope_theta=500.0)
    rotary = modeling_qwen3.Qwen3RotaryEmbedding(config)
    pos = torch.arange(11)
    cos_hf, sin_hf = rotary(torch.zeros(1, dtype=F64), pos[None])
    cos, sin = modern.rope_cos_sin(pos, 16, 500.0, F64)
    assert torch.equal(cos, cos_hf[0]) and torch.equal(sin, sin_hf[0])
    q, k = torch.randn(2, 3, 11, 16, dtype=F64), torch.randn(2, 3, 11, 16, dtype=F64)
    q_hf, k_hf = modeling_qwen3.apply_rotary_pos_emb(q, k, cos_hf, sin_hf)
    assert torch.equal(modern.apply_rope(q, cos, sin), q_hf)
    assert torch.equal(modern.apply_rope(k, cos, sin), k_hf)
    x = torch.randn(4, 16)
    assert torch.equal(modern.rotate_half(x), modeling_qwen3.rotate_half(x))


@settings(max_examples=25, deadline=None)
@given(half=st.integers(1, 16), seq=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_halves_order_turns_neighbour_pairs_into_halves_and_keeps_every_score(half, seq, seed):
    d = 2 * half
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(seq, 3, generator=gen, dtype=F64)
    W_q, W_k = torch.randn(d, 3, generator=gen, dtype=F64), torch.randn(d, 3, generator=gen,
                                                                          dtype=F64)
    order = modern.halves_order(d)
    assert sorted(order.tolist()) == list(range(d))
    q_int = positions.rotary(x @ W_q.T, pairs="interleaved")  # chapter 10's neighbours
    q_half = positions.rotary(x @ W_q[order].T, pairs="halves")  # rows reordered, Llama's pairs
    torch.testing.assert_close(q_half, q_int[:, order], rtol=0, atol=1e-12)
    k_int = positions.rotary(x @ W_k.T, pairs="interleaved")
    k_half = positions.rotary(x @ W_k[order].T, pairs="halves")
    torch.testing.assert_close(q_half @ k_half.T, q_int @ k_int.T, rtol=0, atol=1e-10)


def test_repeat_kv_is_hugging_faces_and_chapter_11s():
    x = torch.randn(2, 3, 5, 4, dtype=F64)
    assert torch.equal(modern.repeat_kv(x, 2), modeling_qwen3.repeat_kv(x, 2))
    np.testing.assert_array_equal(modern.repeat_kv(x, 2).numpy(),
                                  grouped_query.repeat_kv(x.numpy(), 6))


# --- whole models ------------------------------------------------------------------------------

@pytest.mark.parametrize("family", ["llama", "qwen3"])
def test_logits_equal_hugging_faces_both_ways_in_float64(family):
    model = trained_looking(small(family))
    theirs = hf.to_hf(model, family)
    assert type(theirs).__name__ == {"llama": "LlamaForCausalLM", "qwen3": "Qwen3ForCausalLM"}[
        family]
    tokens = torch.randint(0, 50, (3, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ours = model(tokens)
        assert (ours - theirs(tokens).logits).abs().max() <= 1e-10
        back = hf.from_hf(theirs)
        assert back.config == model.config
        assert (back(tokens) - ours).abs().max() <= 1e-10


@pytest.mark.parametrize("family", ["llama", "qwen3"])
def test_a_model_hugging_face_built_converts_and_agrees(family):
    Config, Model = hf._classes(family)
    torch.manual_seed(2)
    config = Config(vocab_size=40, hidden_size=24, intermediate_size=40, num_hidden_layers=2,
                    num_attention_heads=6, num_key_value_heads=3, head_dim=8,
                    max_position_embeddings=32, rope_theta=1000.0, tie_word_embeddings=True,
                    attn_implementation="eager")
    theirs = Model(config).to(F64).eval()
    ours = hf.from_hf(theirs)
    assert ours.config.tied and ours.config.n_kv_heads == 3 and ours.config.head_dim == 8
    tokens = torch.randint(0, 40, (2, 16))
    with torch.no_grad():
        assert (ours(tokens) - theirs(tokens).logits).abs().max() <= 1e-10


@pytest.mark.parametrize("family", ["llama", "qwen3"])
def test_the_cache_and_greedy_text_equal_hugging_faces(family):
    model = trained_looking(small(family), seed=3)
    theirs = hf.to_hf(model, family)
    tokens = torch.randint(0, 50, (2, 12), generator=torch.Generator().manual_seed(4))
    logits, layers = hf.hf_cache(theirs, tokens)
    cache = model.new_cache()
    with torch.no_grad():
        ours = model.step(tokens[:, :9], cache)  # the prompt, then one token at a time
        ours = torch.cat([ours, *(model.step(tokens[:, t:t + 1], cache) for t in range(9, 12))],
                         dim=1)
    assert (ours - logits).abs().max() <= 1e-10
    assert cache.length == 12 and len(layers) == model.config.n_layers
    for (k, v), ck, cv in zip(layers, cache.keys, cache.values, strict=True):
        assert k.shape == (2, model.config.n_kv_heads, 12, model.config.head_dim)  # GQA: 2 heads
        assert (k - ck).abs().max() <= 1e-10 and (v - cv).abs().max() <= 1e-10
    for prompt in ([3, 7, 1], [10, 11, 12, 13, 14], [0]):
        picked = model.generate(torch.tensor(prompt), 20)
        assert picked.tolist() == hf.hf_greedy(theirs, prompt, 20).tolist()
        assert len(set(picked.tolist())) > 3  # a text, not one token repeated


# --- bad input ---------------------------------------------------------------------------------

def test_bad_configs_and_inputs_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="n_kv_heads=3 must divide n_heads=4"):
        modern.ModernConfig(n_kv_heads=3)
    with pytest.raises(ValueError, match="even"):
        modern.ModernConfig(d_head=7)
    with pytest.raises(ValueError, match="d_model"):
        modern.ModernConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="n_layers"):
        modern.ModernConfig(n_layers=0)
    model = modern.ModernGPT(small("llama"))
    with pytest.raises(ValueError, match="token ids"):
        model(torch.tensor([[0, 50]]))
    with pytest.raises(ValueError, match="context"):
        model(torch.zeros(1, 65, dtype=torch.long))
    with pytest.raises(ValueError, match="integer tensor"):
        model(torch.zeros(1, 4))
    with pytest.raises(ValueError, match="QK-norm"):
        hf.to_hf(model, "qwen3")
    with pytest.raises(ValueError, match="family"):
        hf.to_hf(model, "gpt2")
    with pytest.raises(ValueError, match="even"):
        modern.halves_order(5)


def test_what_the_course_model_lacks_is_named():
    Config, Model = hf._classes("llama")
    config = Config(vocab_size=20, hidden_size=16, intermediate_size=24, num_hidden_layers=1,
                    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                    rope_scaling={"rope_type": "linear", "factor": 2.0}, mlp_bias=True)
    with pytest.raises(ValueError, match="RoPE scaling 'linear'.*mlp_bias"):
        hf.from_hf(Model(config))
    theirs = hf.to_hf(modern.ModernGPT(small("llama")), "llama")
    with pytest.raises(ValueError, match="max_position_embeddings=64"):
        hf.hf_greedy(theirs, [1, 2], 63)


def test_eager_calls_show_what_hugging_faces_eager_attention_receives():
    for family in hf.FAMILIES:
        model = trained_looking(small(family))
        theirs = hf.to_hf(model, family)
        tokens = torch.arange(6)[None]
        calls = hf.eager_calls(theirs, tokens)
        assert theirs.config._attn_implementation == "eager" and len(calls) == 2
        mask = calls[0]["mask"]
        assert mask.shape == (1, 1, 6, 6)
        future = torch.ones(6, 6, dtype=torch.bool).triu(1)
        assert (mask[0, 0][~future] == 0).all()
        assert (mask[0, 0][future] == torch.finfo(F64).min).all()
        assert calls[0]["key"].shape == (1, 2, 6, 8) and calls[0]["query"].shape == (1, 4, 6, 8)
        assert torch.allclose(calls[0]["weights"].sum(-1), torch.ones(1, 4, 6, dtype=F64))
        with torch.no_grad():  # the spy changes nothing: eager attention again, the same logits
            assert float((theirs(tokens).logits - model(tokens)).abs().max()) < 1e-10
    with pytest.raises(ValueError, match="tokens"):
        hf.eager_calls(theirs, torch.arange(6))
