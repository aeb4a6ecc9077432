"""Chapter 8's decoder-only model: causal, its KV cache exact, generation checked, trainable."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, modules, sampling

SMALL = gpt.GPTConfig(vocab_size=96, context=24, d_model=32, n_heads=4, n_layers=2)


def _model(config: gpt.GPTConfig = SMALL, seed: int = 0, scale: float = 0.3) -> gpt.GPT:
    """A float64 model with weights large enough that every position matters."""
    torch.manual_seed(seed)
    model = gpt.GPT(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, scale)
    return model


def test_built_from_the_course_pieces_and_shapes():
    model = gpt.GPT(SMALL)
    block = model.blocks[0]
    assert isinstance(block.attn, modules.MultiHeadAttention)
    assert isinstance(block.ff, modules.FeedForward)
    tokens = torch.randint(0, 96, (3, 10))
    assert model(tokens).shape == (3, 10, 96)
    assert model.attention(tokens).shape == (2, 3, 4, 10, 10)


def test_tied_output_layer_is_the_embedding():
    tied = gpt.GPT(gpt.GPTConfig(context=8, d_model=16, n_heads=2, n_layers=1, tied=True))
    untied = gpt.GPT(gpt.GPTConfig(context=8, d_model=16, n_heads=2, n_layers=1))
    n_tied = sum(p.numel() for p in tied.parameters())
    n_untied = sum(p.numel() for p in untied.parameters())
    assert tied.out is None and n_untied - n_tied == 96 * 16 + 96  # matrix + bias
    tokens = torch.randint(0, 96, (1, 5))
    with torch.no_grad():
        x = tied.tok_embed(tokens) + tied.pos_embed(torch.arange(5))
        for block in tied.blocks:
            x, _ = block(x)
        expected = tied.norm(x) @ tied.tok_embed.weight.T
        torch.testing.assert_close(tied(tokens), expected)


def test_future_tokens_never_change_earlier_logits():
    model = _model()
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 96, (2, 20), generator=gen)
    for t in (0, 7, 19):
        changed = tokens.clone()
        changed[:, t:] = torch.randint(0, 96, changed[:, t:].shape, generator=gen)
        with torch.no_grad():
            a, b = model(tokens), model(changed)
        assert torch.equal(a[:, :t], b[:, :t])
        if t < 19:
            assert not torch.allclose(a[:, t:], b[:, t:])  # the changed positions do move


def test_cached_steps_equal_the_full_forward_float64():
    model = _model()
    tokens = torch.randint(0, 96, (2, 24), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        full = model(tokens)
        cache = model.new_cache(batch=2)
        parts = [model.step(tokens[:, :5], cache), model.step(tokens[:, 5:13], cache)]
        parts += [model.step(tokens[:, i : i + 1], cache) for i in range(13, 24)]
    assert cache.length == 24 and torch.equal(cache.tokens, tokens)
    assert float((torch.cat(parts, dim=1) - full).abs().max()) < 1e-10


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cached_and_uncached_generation_agree(seed):
    model = _model(seed=seed)
    prompt = corpus.encode("def f(x):")
    for choose in (None, "sample"):
        runs = []
        for use_cache in (True, False):
            pick = None if choose is None else sampling.sampler(0.9, top_p=0.95, seed=seed)
            runs.append(gpt.generate(model, prompt, 16, choose=pick, use_cache=use_cache))
        assert np.array_equal(runs[0].tokens, runs[1].tokens)
        assert np.abs(runs[0].logits - runs[1].logits).max() < 1e-10
        assert runs[0].tokens.shape == (16,) and runs[0].logits.shape == (16, 96)


def test_greedy_generation_is_the_argmax_of_the_full_forward():
    model = _model()
    prompt = torch.as_tensor(corpus.encode("class A:"))
    run = gpt.generate(model, prompt, 5)
    seq = prompt[None]
    with torch.no_grad():
        for token in run.tokens:
            assert int(model(seq)[0, -1].argmax()) == token
            seq = torch.cat([seq, torch.tensor([[token]])], dim=1)


def _count_positions(model: gpt.GPT) -> list[int]:
    seen: list[int] = []
    model.blocks[0].norm1.register_forward_hook(lambda m, i, o: seen.append(o.shape[1]))
    return seen


@pytest.mark.parametrize("use_cache", [True, False])
def test_prefix_work_counts_the_positions_really_computed(use_cache):
    model = _model()
    seen = _count_positions(model)
    gpt.generate(model, corpus.encode("import os"), 10, use_cache=use_cache)
    assert sum(seen) == gpt.prefix_work(9, 10, cached=use_cache)
    assert gpt.prefix_work(9, 10, cached=False) == sum(9 + i for i in range(10))


def test_cache_memory_formula():
    model = _model()
    cache = model.new_cache()
    model.step(torch.randint(0, 96, (1, 11)), cache)
    assert cache.nbytes == gpt.cache_bytes(2, 11, 32, bytes_per_number=8)
    assert gpt.cache_bytes(12, 1024, 768, 4) == 2 * 12 * 1024 * 768 * 4
    with pytest.raises(ValueError, match="n_layers must be ≥ 1"):
        gpt.cache_bytes(0, 1, 1)


def test_a_cache_reused_for_another_prompt_is_refused_a_shared_prefix_is_not():
    model = _model()
    first = gpt.generate(model, corpus.encode("def f"), 3)
    with pytest.raises(ValueError, match="holds 7 tokens of another prompt"):
        gpt.generate(model, corpus.encode("class B"), 3, cache=first.cache)
    prefix = model.new_cache()
    model.step(torch.as_tensor(corpus.encode("def "))[None], prefix)
    reused = gpt.generate(model, corpus.encode("def g(x)"), 4, cache=prefix)
    fresh = gpt.generate(model, corpus.encode("def g(x)"), 4)
    assert np.abs(reused.logits - fresh.logits).max() < 1e-10
    first.cache.reset()
    assert first.cache.length == 0 and first.cache.tokens.shape == (1, 0)


def test_positions_not_advanced_is_refused():
    model = _model()
    cache = model.new_cache()
    model.step(torch.tensor([[1, 2, 3]]), cache)
    with pytest.raises(ValueError, match="position 0 given, but the cache already holds 3"):
        model.step(torch.tensor([[4]]), cache, position=0)
    model.step(torch.tensor([[4]]), cache, position=3)  # the right one is accepted


def test_bad_inputs_are_value_errors():
    model = _model()
    with pytest.raises(ValueError, match="exceed the context of 24"):
        model(torch.zeros(1, 25, dtype=torch.long))
    with pytest.raises(ValueError, match="more than the context of 24: shorten the prompt"):
        gpt.generate(model, np.zeros(20, dtype=np.int64), 10)
    with pytest.raises(ValueError, match="token ids must lie in 0 … 95"):
        model(torch.tensor([[3, 96]]))
    with pytest.raises(ValueError, match="integer tensor"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="batch 2, the cache 1"):
        model.step(torch.zeros(2, 1, dtype=torch.long), model.new_cache())
    with pytest.raises(ValueError, match="another model"):
        model.step(torch.zeros(1, 1, dtype=torch.long), gpt.GPT(SMALL).new_cache())
    with pytest.raises(ValueError, match="cache full|exceed the context"):
        cache = model.new_cache()
        model.step(torch.zeros(1, 24, dtype=torch.long), cache)
        model.step(torch.zeros(1, 1, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="multiple of n_heads"):
        gpt.GPTConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="n_new"):
        gpt.generate(model, [1, 2], 0)


def test_window_batches_and_validation_loss():
    ids = np.arange(200) % 96
    draw = gpt.window_batches(ids, context=10, batch_size=4)
    batch = draw(torch.Generator().manual_seed(0))
    assert batch.shape == (4, 11)
    assert torch.equal(batch[:, 1:] - batch[:, :-1], torch.ones(4, 10, dtype=torch.long))
    model = _model()
    text = torch.as_tensor(ids[:24])
    with torch.no_grad():
        direct = gpt.next_token_loss(model, text[None]).item()
    assert gpt.validation_loss(model, ids[:24]) == pytest.approx(direct, rel=1e-12)
    # windows of 23 predictions each + a remainder: still a mean over every character but the first
    v = gpt.validation_loss(model, ids[:60], context=23)
    with torch.no_grad():
        logits = [model(torch.as_tensor(ids[s : s + 23])[None])[0] for s in (0, 23, 46)]
        lp = torch.log_softmax(torch.cat(logits)[:59], dim=-1)
        manual = -lp[torch.arange(59), torch.as_tensor(ids[1:60])].mean().item()
    assert v == pytest.approx(manual, rel=1e-12)
    with pytest.raises(ValueError, match="more than context"):
        gpt.window_batches(ids[:5], context=10, batch_size=4)


def test_time_generation_reports_a_speedup_and_equal_logits():
    model = gpt.GPT(SMALL).eval()
    result = gpt.time_generation(model, corpus.encode("x = 1"), 16, repeat=1)
    assert set(result) == {"cached", "uncached", "speedup", "max_diff"}
    assert result["cached"] > 0 and result["max_diff"] < 1e-4


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_chapter_model_beats_the_bigram_by_a_quarter(seed):
    """Accuracy test, not a timed test: the chapter's seed 0 and two others."""
    text = corpus.load()
    _, bigram = corpus.unigram_bigram_loss(text.train, text.valid)
    model, log = gpt.train_gpt(
        gpt.CHAPTER_CONFIG, text.train, seed=seed, progress=False, **gpt.CHAPTER_TRAINING
    )
    valid = gpt.validation_loss(model, text.valid)
    assert valid <= 0.75 * bigram, (valid, bigram)
    assert log.losses[-20:].mean() < log.losses[:20].mean() / 2
