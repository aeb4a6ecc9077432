"""Chapter 13's multi-head latent attention (``course_attention.mla``): the parts, absorption
(and why RoPE forbids it on the latent keys), the decode cost, the published caches, and the
whole model against Hugging Face's DeepSeek-V3 both ways, its cache and its greedy text."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from course_attention import grouped_query, mla, training
from course_attention.gpt import next_token_loss
from course_attention.mla import hf

transformers = pytest.importorskip("transformers")
TRANSFORMERS_5 = int(transformers.__version__.split(".")[0]) >= 5

F64 = torch.float64


def small(**kw) -> mla.MLAConfig:
    base = dict(vocab_size=50, d_model=32, n_layers=2, n_heads=4, d_c=12, d_cq=None, d_nope=8,
                d_rope=6, d_v=10, d_ff=48, context=64)
    return mla.MLAConfig(**{**base, **kw})


def trained_looking(config: mla.MLAConfig, seed: int = 0) -> mla.MLAGPT:
    """A float64 model whose weights are not at their start: norms away from 1, weights of
    standard deviation 0.3 (greedy decoding then picks varied tokens)."""
    torch.manual_seed(seed)
    model = mla.MLAGPT(config).to(F64).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.add_(0.2 * torch.randn_like(p)) if "norm" in name else p.normal_(0, 0.3)
    return model


def cos_sin(config: mla.MLAConfig, n: int, start: int = 0):
    from course_attention.modern import rope_cos_sin
    return rope_cos_sin(torch.arange(start, start + n), config.d_rope, config.rope_theta, F64)


# --- the configuration and the parts -----------------------------------------------------------

def test_config_counts_the_cache_and_refuses_bad_shapes():
    c = small(n_layers=3, d_c=20, d_rope=4)
    assert c.cache_numbers_per_token == 3 * (20 + 4) and c.d_qk == c.d_nope + c.d_rope
    for bad, word in ((dict(d_rope=5), "d_rope=5"), (dict(d_c=0), "d_c=0"),
                      (dict(d_cq=0), "d_cq=0"), (dict(n_heads=2.5), "n_heads=2.5"),
                      (dict(norm_eps=0.0), "norm_eps"), (dict(rope_theta=1.0), "rope_theta")):
        with pytest.raises(ValueError, match=word):
            small(**bad)
    with pytest.raises(ValueError, match="MLAConfig"):
        mla.MLAGPT(object())


@pytest.mark.parametrize("d_cq", [None, 16])
def test_the_parts_are_the_papers(d_cq):
    """c_KV = RMSNorm(W_DKV x); k = W_UK c_KV, v = W_UV c_KV per head; the rotary key is one
    vector shared by the heads; the query goes through its own latent when d_cq is set."""
    c = small(d_cq=d_cq)
    attn = trained_looking(c).blocks[0].attn
    x = torch.randn(2, 20, c.d_model, dtype=F64)  # more positions than d_c
    names = {n.split(".")[0] for n, _ in attn.named_parameters()}
    query = {"q_proj"} if d_cq is None else {"q_a_proj", "q_a_layernorm", "q_b_proj"}
    assert names == query | {"kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj"}
    c_kv, k_rope = attn.latent(x, *cos_sin(c, 20))
    assert c_kv.shape == (2, 20, c.d_c) and k_rope.shape == (2, 20, c.d_rope)
    down = x @ attn.kv_a_proj_with_mqa.weight.T
    rms = down[..., :c.d_c].pow(2).mean(-1, keepdim=True).add(mla.LATENT_NORM_EPS).rsqrt()
    torch.testing.assert_close(c_kv, down[..., :c.d_c] * rms * attn.kv_a_layernorm.weight,
                               rtol=0, atol=1e-6)  # RMSNorm's statistics in float32
    k_nope, v = attn.expand(c_kv)
    w = attn.kv_b_proj.weight.view(c.n_heads, c.d_nope + c.d_v, c.d_c)
    for h in range(c.n_heads):
        torch.testing.assert_close(k_nope[:, h], c_kv @ w[h, :c.d_nope].T, rtol=0, atol=1e-12)
        torch.testing.assert_close(v[:, h], c_kv @ w[h, c.d_nope:].T, rtol=0, atol=1e-12)
    # all heads' keys of 20 positions, 32 numbers each, span at most d_c = 12 dimensions
    assert torch.linalg.matrix_rank(k_nope[0].transpose(0, 1).reshape(20, -1)) == c.d_c
    assert torch.linalg.matrix_rank(torch.randn(20, c.n_heads * c.d_nope, dtype=F64)) == 20
    # position 0 is not turned; later positions are, by their own angles
    torch.testing.assert_close(k_rope[:, 0], down[:, 0, c.d_c:], rtol=0, atol=1e-12)
    assert (k_rope[:, 1:] - down[:, 1:, c.d_c:]).abs().max() > 1e-3


@pytest.mark.parametrize("d_cq", [None, 16])
def test_the_cache_holds_only_the_latent_and_the_rotary_key(d_cq):
    c = small(d_cq=d_cq)
    model = trained_looking(c)
    tokens = torch.randint(0, c.vocab_size, (3, 11))
    with torch.no_grad():
        logits = model(tokens)
        cache = model.new_cache()
        steps = [model.step(tokens[:, :6], cache)]
        steps += [model.step(tokens[:, t:t + 1], cache) for t in range(6, 11)]
    # float32 softmax sums over rows of other lengths: equal to float32 precision, not float64
    assert (torch.cat(steps, 1) - logits).abs().max() <= 1e-6
    assert cache.length == 11 and cache.nbytes == 3 * 11 * c.cache_numbers_per_token * 8
    with torch.no_grad():
        x = model.embed(tokens)
        c_kv, k_rope = model.blocks[0].attn.latent(model.blocks[0].norm1(x), *cos_sin(c, 11))
    torch.testing.assert_close(cache.c_kv[0], c_kv, rtol=0, atol=1e-12)
    torch.testing.assert_close(cache.k_rope[0], k_rope, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="MLACache of 2 layers"):
        model.step(tokens, mla.MLACache(3))


def test_bad_inputs_are_named():
    c = small()
    model = mla.MLAGPT(c)
    with pytest.raises(ValueError, match="integer tensor"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="0 … 49"):
        model(torch.tensor([[1, 50]]))
    with pytest.raises(ValueError, match="exceed the context of 64"):
        model(torch.zeros(1, 65, dtype=torch.long))
    with pytest.raises(ValueError, match="n_new"):
        model.generate(torch.tensor([1, 2]), 0)
    attn = model.blocks[0].attn
    with pytest.raises(ValueError, match=r"\(batch, seq, 32\)"):
        attn(torch.zeros(1, 3, 16), *cos_sin(c, 3))
    with pytest.raises(ValueError, match="d_rope"):
        attn(torch.zeros(1, 3, 32), *cos_sin(small(d_rope=4), 3))
    with pytest.raises(ValueError, match="length"):
        mla.decode_cost(c, 0)


def test_it_trains_with_the_course_loop():
    c = small()
    model = mla.MLAGPT(c)
    data = torch.arange(40) % 7  # a cycle of 7 tokens: learnable from the context

    def batch(gen: torch.Generator) -> torch.Tensor:
        starts = torch.randint(0, 23, (8,), generator=gen).tolist()
        return torch.stack([data[i:i + 17] for i in starts])

    log = training.fit(model, batch, next_token_loss, steps=60, lr=1e-2, warmup=5,
                       progress=False)
    assert log.losses[-5:].mean() < 0.5 * log.losses[:5].mean()


# --- absorption --------------------------------------------------------------------------------

@pytest.mark.parametrize("d_cq", [None, 16])
def test_absorbed_attention_equals_the_naive_expansion(d_cq, monkeypatch):
    c = small(d_cq=d_cq)
    model = trained_looking(c)
    x = torch.randn(2, 9, c.d_model, dtype=F64)
    error = mla.absorption_error(model.blocks[1].attn, x)
    assert error < 1e-12
    w_qc, w_oc = mla.absorbed_weights(model.blocks[1].attn)
    assert w_qc.shape == (c.n_heads, c.d_c, c.d_model if d_cq is None else d_cq)
    assert w_oc.shape == (c.d_model, c.n_heads, c.d_c)
    tokens = torch.randint(0, c.vocab_size, (1, 5))
    expected = model.generate(tokens[0], 12)
    # the absorbed path never rebuilds a key or a value from the latent
    monkeypatch.setattr(mla.MultiHeadLatentAttention, "expand", lambda *a: 1 / 0)
    assert torch.equal(model.generate(tokens[0], 12, absorbed=True), expected)
    # control: fold W_UV with another head's W_O and the outputs part
    with torch.no_grad():
        w = model.blocks[1].attn.o_proj.weight.view(c.d_model, c.n_heads, c.d_v)
        w.copy_(w.roll(1, dims=1))
    monkeypatch.undo()
    monkeypatch.setattr(mla, "absorbed_weights",
                        lambda a, f=mla.absorbed_weights: (f(a)[0], f(a)[1].roll(-1, dims=1)))
    assert mla.absorption_error(model.blocks[1].attn, x) > 1e-3


def test_rope_on_the_latent_keys_forbids_absorption():
    """Rotate the rebuilt keys and the queries by their positions and one folded matrix gives
    the right score only where query and key share a position; without rotation, everywhere."""
    c = small(d_cq=16)
    attn = trained_looking(c).blocks[0].attn
    x = torch.randn(2, 10, c.d_model, dtype=F64)
    true, absorbed = mla.rope_absorption(attn, x)
    gap = (true - absorbed).abs()
    diagonal = torch.eye(10, dtype=torch.bool)
    assert gap[..., diagonal].max() < 1e-10
    assert gap[..., ~diagonal].max() > 0.1 * true.abs().max()
    true, absorbed = mla.rope_absorption(attn, x, rotate=False)
    assert (true - absorbed).abs().max() < 1e-10


def test_decode_cost_counts_what_runs():
    """The multiply-adds of one decode step, counted by PyTorch's FLOP counter on the course's
    attention (naive and absorbed, norms and softmax aside), equal :func:`decode_cost`."""
    for d_cq in (None, 16):
        c = small(d_cq=d_cq, n_layers=1)
        attn = mla.MLAGPT(c).to(F64).blocks[0].attn
        rows = {r["form"]: r for r in mla.decode_cost(c, 9, bytes_per_number=8)}
        x = torch.randn(1, 9, c.d_model, dtype=F64)
        with FlopCounterMode(display=False) as folding:
            mla.absorbed_weights(attn)
        for form, absorbed in (("naive", False), ("absorbed", True)):
            cache = mla.MLACache(1)
            with torch.no_grad():
                attn(x[:, :8], *cos_sin(c, 8), cache)
                with FlopCounterMode(display=False) as counter:
                    attn(x[:, 8:], *cos_sin(c, 1, 8), cache, absorbed=absorbed)
            flops = counter.get_total_flops() - (folding.get_total_flops() if absorbed else 0)
            assert flops == 2 * rows[form]["multiply_adds"], form
            assert cache.nbytes == rows[form]["cache_bytes"]
    big = mla.MLAConfig(d_model=512, n_heads=16, d_c=64, d_cq=96, d_nope=32, d_rope=16, d_v=32)
    rows = {r["form"]: r for r in mla.decode_cost(big, 1024)}
    assert rows["naive"]["multiply_adds"] > 10 * rows["absorbed, factored"]["multiply_adds"]
    assert rows["expanded cache"]["cache_bytes"] > 5 * rows["absorbed"]["cache_bytes"]


# --- published caches --------------------------------------------------------------------------

def test_published_caches_are_recomputed_from_their_shapes():
    table = {r["model"]: r for r in mla.published_table()}
    assert set(table) == {c.name for c in mla.PUBLISHED}
    for c in mla.PUBLISHED:
        row = table[c.name]
        if c.attention == "MLA":  # the course's config of the same shape caches the same
            same = mla.MLAConfig(n_layers=c.n_layers, n_heads=c.n_heads, d_c=c.d_c,
                                 d_rope=c.d_rope, d_nope=c.d_head)
            assert row["KV bytes / token"] == 2 * same.cache_numbers_per_token
        else:
            assert row["KV bytes / token"] == grouped_query.kv_cache_bytes_per_token(
                c.n_layers, c.n_kv_heads, c.d_head)
        assert row["saving"] == row["as MHA: bytes / token"] / row["KV bytes / token"]
    ours = {r["model"]: r for r in grouped_query.kv_cache_table()}
    assert table["Mistral 7B"]["KV bytes / token"] == ours["Mistral 7B"]["KV bytes / token"]
    by_size = sorted(table.values(), key=lambda r: r["KV bytes / token"])
    assert {r["attention"] for r in by_size[:2]} == {"MLA"}
    assert by_size[-1]["attention"] == "MHA" and by_size[-1]["saving"] == 1
    with pytest.raises(ValueError, match="MLA and only for MLA"):
        mla.PublishedConfig("x", "GQA", 2, 4, 2, 8, "k", "w", d_c=4, d_rope=2)
    with pytest.raises(ValueError, match="bytes_per_number"):
        mla.cache_bytes_per_token(mla.PUBLISHED[0], 0)


# --- Hugging Face ------------------------------------------------------------------------------

@pytest.mark.parametrize("d_cq", [None, 16])
@pytest.mark.parametrize("interleave", [True, False])
def test_logits_equal_hugging_faces_both_ways(d_cq, interleave):
    model = trained_looking(small(d_cq=d_cq))
    tokens = torch.randint(0, 50, (2, 13))
    theirs = hf.to_hf(model, rope_interleave=interleave)
    assert theirs.config.rope_interleave is interleave
    with torch.no_grad():
        ours = model(tokens)
        assert (ours - theirs(tokens).logits).abs().max() <= 1e-10
        back = hf.from_hf(theirs)
        assert (back(tokens) - ours).abs().max() <= 1e-10
    if interleave:  # control: the same weights without the rotary rows' permutation differ
        with torch.no_grad():
            for _, ours_w, _, theirs_w in hf.name_pairs(model, theirs):
                theirs_w.copy_(ours_w)
            assert (model(tokens) - theirs(tokens).logits).abs().max() > 1e-3


def test_float32_models_agree_to_float32_precision():
    model = trained_looking(small(d_cq=16)).float()
    theirs = hf.to_hf(model)
    tokens = torch.randint(0, 50, (2, 13))
    with torch.no_grad():
        assert (model(tokens) - theirs(tokens).logits).abs().max() <= 1e-4


@pytest.mark.parametrize("d_cq", [None, 16])
def test_greedy_text_with_the_cache_is_hugging_faces(d_cq):
    model = trained_looking(small(d_cq=d_cq), seed=1)
    theirs = hf.to_hf(model)
    prompt = torch.tensor([3, 14, 15, 9, 2])
    expected = hf.hf_greedy(theirs, prompt, 30).tolist()
    assert len(set(expected)) > 3  # a varied text, not one token repeated
    assert model.generate(prompt, 30).tolist() == expected
    assert model.generate(prompt, 30, absorbed=True).tolist() == expected


def test_the_cache_is_hugging_faces_and_its_bytes_the_formula():
    c = small(d_cq=16)
    model = trained_looking(c)
    theirs = hf.to_hf(model)
    tokens = torch.randint(0, 50, (2, 13))
    cache = model.new_cache()
    with torch.no_grad():
        model.step(tokens, cache)
    assert cache.nbytes == 2 * 13 * c.cache_numbers_per_token * 8
    if not TRANSFORMERS_5:  # 4.57 caches the expanded keys and values
        assert hf.hf_cache_bytes(theirs, tokens) == (2 * 13 * c.n_layers * c.n_heads
                                                     * (c.d_qk + c.d_v) * 8)
        with pytest.raises(ValueError, match="transformers ≥ 5"):
            hf.hf_latent_cache(theirs, tokens)
        return
    assert hf.hf_cache_bytes(theirs, tokens) == cache.nbytes
    logits, layers = hf.hf_latent_cache(theirs, tokens)
    for layer, (c_kv, k_rope) in enumerate(layers):
        assert (c_kv - cache.c_kv[layer]).abs().max() <= 1e-10
        assert (k_rope - cache.k_rope[layer]).abs().max() <= 1e-10


def test_from_hf_refuses_what_the_course_lacks():
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM, LlamaConfig

    base = dict(hf.hf_config(small()).to_dict())
    for change, word in ((dict(first_k_dense_replace=1, n_routed_experts=4,
                               num_experts_per_tok=2, n_group=1, topk_group=1), "experts"),
                         (dict(attention_bias=True), "attention_bias"),
                         (dict(tie_word_embeddings=True), "tie_word_embeddings"),
                         (dict(num_key_value_heads=2), "num_key_value_heads=2"),
                         (dict(rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                             "original_max_position_embeddings": 16}),
                          "RoPE scaling 'yarn'")):
        config = DeepseekV3Config(**{**base, **change})
        with pytest.raises(ValueError, match=word):
            hf.from_hf(DeepseekV3ForCausalLM(config))
    with pytest.raises(ValueError, match="only DeepSeek-V3"):
        hf._config_of(LlamaConfig())
    with pytest.raises(ValueError, match="MLAGPT"):
        hf.to_hf(torch.nn.Linear(2, 2))
