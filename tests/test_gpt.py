"""Chapter 8's decoder-only model: causal, its KV cache exact, generation checked, trainable."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, modules, ngram, sampling

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


def test_gpt2s_architecture_gelu_tanh_biases_and_no_output_bias():
    model = _model()
    block = model.blocks[0]
    assert block.ff.activation == "gelu_tanh" and block.attn.W_q.bias is not None
    assert all(norm.eps == 1e-5 for norm in (block.norm1, block.norm2, model.norm))
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    h = block.ff.linear1(x)
    gelu_tanh = 0.5 * h * (1 + torch.tanh((2 / torch.pi) ** 0.5 * (h + 0.044715 * h**3)))
    with torch.no_grad():
        torch.testing.assert_close(block.ff(x), block.ff.linear2(gelu_tanh), rtol=0, atol=1e-12)
        assert not torch.allclose(block.ff(x), block.ff.linear2(torch.relu(h)))


def test_tied_output_layer_is_the_embedding():
    tied = gpt.GPT(gpt.GPTConfig(context=8, d_model=16, n_heads=2, n_layers=1, tied=True))
    untied = gpt.GPT(gpt.GPTConfig(context=8, d_model=16, n_heads=2, n_layers=1))
    n_tied = sum(p.numel() for p in tied.parameters())
    n_untied = sum(p.numel() for p in untied.parameters())
    assert tied.out is None and n_untied - n_tied == 96 * 16  # the matrix: no bias (GPT-2)
    assert untied.out.bias is None
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


def _nanogpt_generate(model: gpt.GPT, prompt: np.ndarray, n_new: int) -> list[int]:
    """nanoGPT's loop: the model reads idx[:, -block_size:], no cache, greedy."""
    idx = torch.as_tensor(prompt)[None]
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(idx[:, -model.config.context :])[0, -1]
            idx = torch.cat([idx, logits.argmax().view(1, 1)], dim=1)
    return idx[0, len(prompt) :].tolist()


@pytest.mark.parametrize("prompt_len", [5, 24, 40])
def test_generation_past_the_context_crops_like_nanogpt(prompt_len):
    model = _model()  # context 24
    prompt = np.random.default_rng(prompt_len).integers(0, 96, prompt_len)
    expected = _nanogpt_generate(model, prompt, 30)
    runs = {c: gpt.generate(model, prompt, 30, use_cache=c) for c in (True, False)}
    for run in runs.values():
        assert run.tokens.tolist() == expected
    assert np.abs(runs[True].logits - runs[False].logits).max() < 1e-10
    cache = runs[True].cache  # after sliding it holds the last window, its positions 0 … 23
    window = np.concatenate([prompt, runs[True].tokens])[-25:-1]
    assert cache.length == 24 and cache.tokens[0].tolist() == window.tolist()


def test_a_loop_that_does_not_advance_the_position_changes_the_logits_silently():
    model = _model()
    tokens = torch.as_tensor(corpus.encode("def f(x): return"))[None]
    with torch.no_grad():
        full = model(tokens)[0, -1]
        cache = model.new_cache()
        model.step(tokens[:, :4], cache)
        for i in range(4, tokens.shape[1]):  # one token at a time, its position frozen at 4
            x = model.tok_embed(tokens[:, i : i + 1]) + model.pos_embed(torch.tensor([4]))
            for layer, block in enumerate(model.blocks):
                x = block.step(x, cache, layer)
            cache.length += 1
        frozen = model._logits(x)[0, -1]
    assert float((frozen - full).abs().max()) > 0.1  # nothing raised, the logits moved


@pytest.mark.parametrize("context", [None, 12, 24, 30])
@pytest.mark.parametrize("use_cache", [True, False])
def test_prefix_work_counts_positions_past_the_context(context, use_cache):
    model = _model()  # its context is 24
    seen = _count_positions(model)
    gpt.generate(model, corpus.encode("import os, sys"), 20, use_cache=use_cache)  # 14 + 20 > 24
    assert sum(seen) == gpt.prefix_work(14, 20, cached=use_cache, context=24)
    if context is not None:  # the closed form equals the step-by-step sum
        steps = [min(14 + i, context) for i in range(20)]
        assert gpt.prefix_work(14, 20, False, context) == sum(steps)
    assert gpt.prefix_work(9, 10, True, context=100) == gpt.prefix_work(9, 10, True)
    assert gpt.prefix_work(30, 3, True, context=24) == 24 * 3  # cropped prompt, then 2 rebuilds
    with pytest.raises(ValueError, match="context ≥ 1"):
        gpt.prefix_work(3, 3, True, context=0)


def test_bad_inputs_are_value_errors():
    model = _model()
    with pytest.raises(ValueError, match="exceed the context of 24"):
        model(torch.zeros(1, 25, dtype=torch.long))
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


@functools.cache
def _ladder() -> dict[int, float]:
    text = corpus.load()
    return ngram.ladder(text.train, text.valid)


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Accuracy test, not a timed test: chapter 8 runs ``check_chapter_claims`` on seed 0 in each
    of its executions, on this machine's kernels and on the other kernels this test uses."""
    text = corpus.load()
    model, log = gpt.train_gpt(
        gpt.CHAPTER_CONFIG, text.train, seed=seed, progress=False, **gpt.CHAPTER_TRAINING
    )
    gpt.claims.check_chapter_claims(
        gpt.claims.chapter_results(model, log.losses, text.train, text.valid, _ladder())
    )


def test_the_claims_check_can_fail():
    text = corpus.load()
    model = gpt.GPT(gpt.CHAPTER_CONFIG)  # untrained: above the bigram, no loop to speak of
    results = gpt.claims.chapter_results(model, np.linspace(4.6, 4.5, 50), text.train,
                                         text.valid, _ladder())
    with pytest.raises(AssertionError, match="the training loss halves.*25 % below"):
        gpt.claims.check_chapter_claims(results)


def test_repeat_losses_score_the_first_and_the_second_copy():
    model = _model(gpt.GPTConfig(vocab_size=96, context=48, d_model=32, n_heads=4, n_layers=2))
    first, second = gpt.repeat_losses(model, length=24, trials=8, seed=5)
    half = torch.as_tensor(np.random.default_rng(5).integers(1, 96, (8, 24)))
    rows = torch.cat([half, half], dim=1)
    with torch.no_grad():
        logp = torch.log_softmax(model(rows[:, :-1]), dim=-1)
    nll = -logp.gather(-1, rows[:, 1:, None])[..., 0]  # nll[:, t] predicts rows[:, t + 1]
    assert first == pytest.approx(nll[:, :23].mean().item(), rel=1e-9)  # characters 1 … 23
    assert second == pytest.approx(nll[:, 24:].mean().item(), rel=1e-9)  # characters 25 … 47
    with pytest.raises(ValueError, match="length ≤ context / 2 = 24"):
        gpt.repeat_losses(model, length=25)


def test_greedy_loop_finds_the_earliest_loop():
    assert gpt.greedy_loop("ab" + "xyz" * 5) == (2, 3)
    assert gpt.greedy_loop("and a selse:\n" + " " * 10) == (13, 1)
    assert gpt.greedy_loop("the a self." + "_" * 109) == (11, 1)  # the build's seed-0 loop
    assert gpt.greedy_loop("abcabcabcabc") == (0, 3)
    assert gpt.greedy_loop("abcdef") is None


@pytest.mark.parametrize("text", ["ab  ", "ab\n\n", "xyzxy" + "ab" * 2, "q" * 100 + "abc   "])
def test_two_equal_characters_or_a_short_repeat_at_the_end_are_no_loop(text):
    """The old rule (a piece repeated twice, however short) called each of these a loop."""
    assert gpt.greedy_loop(text) is None
    assert gpt.greedy_loop(text, min_repeats=2, min_share=1e-9) is not None  # the old rule


def test_greedy_loop_needs_three_copies_and_a_quarter_of_the_text():
    assert gpt.greedy_loop("abcd" + "xy" * 2) is None  # 2 copies
    assert gpt.greedy_loop("abcd" + "xy" * 3) == (4, 2)  # 3 copies, 6 of 10 characters
    assert gpt.greedy_loop("xy" * 3 + "x") == (0, 2)  # the last copy may be cut short
    assert gpt.greedy_loop("a" * 91 + "bbbbbbbbb") is None  # 9 of 100 characters: too short
    with pytest.raises(ValueError, match="min_repeats ≥ 2"):
        gpt.greedy_loop("abc", min_repeats=1)
    with pytest.raises(ValueError, match="0 < min_share ≤ 1"):
        gpt.greedy_loop("abc", min_share=0)
    with pytest.raises(ValueError, match="text must be a str"):
        gpt.greedy_loop(list("abcabcabc"))


def test_time_generation_runs_each_way_timing_repeats_times(monkeypatch):
    calls = []
    real = gpt.generate
    monkeypatch.setattr(gpt, "generate", lambda *a, **k: calls.append(k) or real(*a, **k))
    speed = gpt.time_generation(_model(), np.arange(1, 5), 3)
    assert len(calls) == 2 * gpt.TIMING_REPEATS and speed["max_diff"] < 1e-12
