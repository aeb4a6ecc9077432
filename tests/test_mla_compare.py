"""Chapter 13's trained comparison (``course_attention.mla.compare``): the three models' caches
and parameters, the cache formula against the caches the models fill, the training (chapter
12's, kept with the trained model), and the chapter's claims on seeds 1 and 2 (the chapter runs
seed 0)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, mla, modern, ngram, viz
from course_attention.mla import compare
from course_attention.modern import compare as modern_compare
from i18n_checks import assert_speaks_both


@functools.cache
def _ladder() -> dict[int, float]:
    text = corpus.load()
    return ngram.ladder(text.train, text.valid)


def _count(config) -> int:
    torch.manual_seed(0)
    model = mla.MLAGPT(config) if isinstance(config, mla.MLAConfig) else modern.ModernGPT(config)
    return compare.n_parameters(model)


def test_the_three_models_cache_the_same_and_match_chapter_8s_parameters():
    reference = compare.n_parameters(gpt.GPT(gpt.CHAPTER_CONFIG))
    counts = {name: compare.n_parameters(compare.build(name)) for name in compare.MODELS}
    assert counts == {"mha": 115_392, "gqa": 115_520, "mla": 115_344}
    assert all(abs(n - reference) <= 0.002 * reference for n in counts.values())
    caches = {name: compare.cache_numbers_per_token(c) for name, c in compare.CONFIGS.items()}
    assert caches == {name: compare.CACHE_NUMBERS for name in compare.MODELS}
    # half of chapter 8's GPT, which caches a key and a value d_model wide in every layer
    g = gpt.CHAPTER_CONFIG
    assert 2 * compare.CACHE_NUMBERS == gpt.cache_bytes(g.n_layers, 1, g.d_model, 1)
    for c in compare.CONFIGS.values():  # chapter 8's width, depth, query heads, vocabulary, context
        assert (c.vocab_size, c.d_model, c.n_layers, c.n_heads, c.context) == (
            g.vocab_size, g.d_model, g.n_layers, g.n_heads, g.context)
    # SwiGLU's width is each model's closest match: one unit more or less is further away
    for c in compare.CONFIGS.values():
        gap = {d_ff: abs(_count(dataclasses.replace(c, d_ff=d_ff)) - reference)
               for d_ff in (c.d_ff - 1, c.d_ff, c.d_ff + 1)}
        assert min(gap, key=gap.get) == c.d_ff, c


def test_the_configurations_differ_only_in_their_attention():
    gqa, mha, latent = compare.GQA_CONFIG, compare.MHA_CONFIG, compare.MLA_CONFIG
    assert gqa == modern_compare.LLAMA_CONFIG and not gqa.qk_norm  # chapter 12's control
    assert dataclasses.replace(mha, n_kv_heads=2, d_head=None, d_ff=gqa.d_ff) == gqa
    assert mha.n_kv_heads == mha.n_heads and mha.head_dim == 8  # MHA: a key/value head per head
    assert (latent.rope_theta, latent.norm_eps) == (gqa.rope_theta, gqa.norm_eps)
    assert latent.d_rope == latent.d_nope // 2 and latent.d_v == gqa.head_dim  # DeepSeek's ratio
    # without matching the cache, MHA with chapter 8's heads would cache twice as much
    assert compare.cache_numbers_per_token(dataclasses.replace(mha, d_head=None)) == 256


def test_the_formula_counts_what_the_models_cache():
    """The cache numbers per token are what a model's cache holds after a prompt, divided by
    the prompt's length: the formula is no mere definition."""
    tokens = torch.randint(0, 96, (1, 7))
    for name in compare.MODELS:
        model = compare.build(name)
        cache = model.new_cache()
        with torch.no_grad():
            model.step(tokens, cache)
        held = [t for t in vars(cache).values() if isinstance(t, list)]
        numbers = sum(x.numel() for layers in held for x in layers if x is not None)
        assert numbers == 7 * compare.CACHE_NUMBERS, name
    with pytest.raises(ValueError, match="ModernConfig or an MLAConfig"):
        compare.cache_numbers_per_token(gpt.CHAPTER_CONFIG)


def test_build_is_seeded():
    for name in compare.MODELS:
        a, b = compare.build(name, seed=3), compare.build(name, seed=3)
        assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
        assert not torch.equal(a.embed.weight, compare.build(name, seed=4).embed.weight)


def test_gqa_trains_exactly_as_chapter_12s_control():
    """The same configuration and chapter 12's training: the same numbers, bit for bit."""
    ours = compare.train_model("gqa", seed=5, steps=3, batch_size=2)
    theirs = modern_compare.train_model("llama", seed=5, steps=3, batch_size=2)
    assert np.array_equal(ours.losses, theirs.losses) and ours.valid == theirs.valid
    # the record agrees with chapter 12's record of the same runs
    for key in compare.RECORDED:
        assert compare.RECORDED[key]["gqa"] == pytest.approx(
            modern_compare.RECORDED[key]["valid"]["llama"], abs=1e-4)


def test_train_model_keeps_the_trained_model():
    run = compare.train_model("mla", seed=5, steps=4, batch_size=2)
    assert run.losses.shape == (4,) and run.cache_numbers == compare.CACHE_NUMBERS
    assert isinstance(run.model, mla.MLAGPT) and not run.model.training
    assert run.n_params == compare.n_parameters(run.model)
    assert run.valid == gpt.validation_loss(run.model, corpus.load().valid)
    fresh = compare.build("mla", seed=5)  # the control: training moved the weights
    assert not torch.equal(fresh.blocks[0].attn.kv_b_proj.weight,
                           run.model.blocks[0].attn.kv_b_proj.weight)


@pytest.mark.parametrize("call, message", [
    (lambda: compare.build("mqa"), "model must be one of"),
    (lambda: compare.train_model("mha", steps=0), "steps must be a positive integer"),
    (lambda: compare.train_model("mla", batch_size=2.0), "batch_size must be"),
    (lambda: compare.chapter_results({}), "one run of each"),
    (lambda: viz.equal_cache_figure({}, {}), "at least one model"),
    (lambda: viz.equal_cache_figure({"a": [[1.0, 2.0]]}, {}), "seeds"),
])
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _fake(name: str, valid: float, n_params: int = 115_456, cache: int = 128) -> compare.Run:
    return compare.Run(name, 0, n_params, cache, np.linspace(4.5, 2.2, 50), valid, 1.0,
                       torch.nn.Linear(1, 1))


MAKES_THEM = {"mha": 2.01, "gqa": 2.17, "mla": 2.30}


def test_the_claims_hold_on_runs_that_make_them():
    runs = {name: _fake(name, v) for name, v in MAKES_THEM.items()}
    compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
    # not claimed of one run: MLA above GQA, or above the 2-gram
    runs["mla"] = _fake("mla", 2.15)
    compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))


def test_the_claims_check_can_fail():
    """A cache or a parameter count off, a blow-up, and losses that tie: each claim that says
    otherwise fails, by name."""
    runs = {name: _fake(name, v) for name, v in MAKES_THEM.items()}
    runs["mla"] = _fake("mla", 2.30, cache=144)
    runs["mha"].losses[20] = 10.0  # one batch 7.5 nats up: the 10-batch mean rises by 0.75
    with pytest.raises(AssertionError, match=r"caches 128.*blows up"):
        compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
    runs = {"mha": _fake("mha", 2.15, n_params=130_000), "gqa": _fake("gqa", 2.16),
            "mla": _fake("mla", 2.17)}  # MLA 0.02 above MHA: less than MLA_LAG
    with pytest.raises(AssertionError, match=r"parameter count.*MHA ends.*MLA ends"):
        compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
    runs = {"mha": _fake("mha", 1.70), "gqa": _fake("gqa", 2.40), "mla": _fake("mla", 2.60)}
    with pytest.raises(AssertionError, match=r"beat the 2-gram.*reaches the 3-gram"):
        compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))


def test_the_figure_speaks_chinese():
    assert_speaks_both(lambda: viz.equal_cache_figure(
        {"MHA": [2.01, 2.00, 2.04], "GQA": [2.17, 2.18, 2.16], "MLA": [2.34, 2.25, 2.33]},
        {"KN 2": 2.285, "KN 3": 1.763}, current={"MHA": 2.01, "GQA": 2.17, "MLA": 2.34}),
        allowed=("MHA", "GQA", "MLA", "KN"))


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Accuracy test, not a timed test: chapter 13 runs ``check_chapter_claims`` on seed 0 in
    each of its executions, on this machine's kernels and on the other kernels this test uses."""
    runs = {name: compare.train_model(name, seed) for name in compare.MODELS}
    compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
