"""Chapter 14's trained models (``course_attention.sinks.compare``): the start token, the models'
configurations, the chapter's claims on seeds 1 and 2 (the chapter runs seed 0; chapter 9's
model's claims ride on ``tests/test_induction.py``'s own training), and claims that fail on
untrained models."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, modern
from course_attention.modern import compare as modern_compare
from course_attention.sinks import compare


def test_every_window_starts_with_the_start_token_no_character_has():
    text = corpus.load()
    assert compare.START == gpt.CHAPTER_CONFIG.vocab_size and compare.VOCAB == compare.START + 1
    assert int(np.max(text.train)) < compare.START
    batch = compare.start_batches(text.train, 5)(torch.Generator().manual_seed(0))
    assert batch.shape == (5, compare.CONTEXT + 1) and (batch[:, 0] == compare.START).all()
    assert (batch[:, 1:] < compare.START).all()
    rows = compare.start_windows(text.valid, 10, 3)
    assert rows.shape == (3, 10) and (rows[:, 0] == compare.START).all()
    assert compare.stream_texts().shape == (compare.STREAM_TEXTS, compare.STREAM_LENGTH)
    with pytest.raises(ValueError, match="need ids"):
        compare.start_windows(text.valid[:20], 10, 3)
    with pytest.raises(ValueError, match="at least"):
        compare.start_validation_loss(compare.build("modern"), text.valid[:10])


def test_the_models_differ_only_where_the_chapter_says():
    base = compare.build("qknorm").config
    assert dataclasses.replace(base, vocab_size=96) == modern_compare.MODERN_CONFIG
    assert compare.build("modern").config == base
    assert compare.build("sink").config == dataclasses.replace(base, sinks=True)
    assert compare.build("llama").config == dataclasses.replace(base, qk_norm=False)
    assert compare.build("softcap").config == dataclasses.replace(base, qk_norm=False,
                                                                 softcap=compare.CAP)
    assert compare.build("local").config == dataclasses.replace(
        base, sliding_window=compare.LOCAL_WINDOW,
        layer_types=("sliding_attention", "full_attention"))
    assert compare.build("plain").config == modern_compare.MODERN_CONFIG
    assert compare.build("gpt2").config.vocab_size == compare.VOCAB
    assert set(compare.GROUPS[0]) | set(compare.GROUPS[1]) == set(compare.MODELS)
    with pytest.raises(ValueError, match="model must be"):
        compare.build("mistral")
    with pytest.raises(ValueError, match="names must be"):
        compare.start_training(0, ("mistral",))


def _untrained(seed: int) -> dict[str, compare.Run]:
    runs = {}
    for name in compare.MODELS:
        model = compare.build(name, seed)
        logits = np.array([0.1, 0.1])
        runs[name] = compare.Run(name, seed, np.zeros(1), 4.5, np.array([0, 10]), logits, 0.0,
                                 model)
    return runs


def test_the_claims_fail_on_untrained_models():
    results = compare.chapter_results(_untrained(0))
    assert set(results.shares) == set(compare.SHARE_MODELS)
    assert results.streaming["modern"]["sinks"].shape == (compare.STREAM_LENGTH - 1,)
    with pytest.raises(AssertionError, match="a start token gives a layer-0 sink"):
        compare.check_chapter_claims(results)
    with pytest.raises(AssertionError, match="chapter 9's layer"):
        compare.check_induction_sink(compare.build("induction", 0), 0)


def test_results_need_one_seed_and_every_model():
    runs = _untrained(0)
    runs["gpt2"] = dataclasses.replace(runs["gpt2"], seed=1)
    with pytest.raises(ValueError, match="one seed"):
        compare.chapter_results(runs)
    del runs["gpt2"]
    with pytest.raises(ValueError, match="need one run of each"):
        compare.chapter_results(runs)


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Not one lucky seed: the chapter's own claim checks, on every model but chapter 9's (whose
    claims ``tests/test_induction.py`` checks on the models it trains for these seeds)."""
    names = tuple(n for n in compare.MODELS if n != "induction")
    results = compare.chapter_results(compare.train_all(seed, names))
    compare.check_chapter_claims(results)
    assert isinstance(results.runs["modern"].model, modern.ModernGPT)
    # the explorer's Try it, answered on this seed's models as the chapter answers it on seed 0
    from course_attention.explorers import sinks as sink_explorer

    sink_explorer.check_try_it(sink_explorer.explorer_data(
        {name: results.runs[name].model for name in sink_explorer.MODELS}))
