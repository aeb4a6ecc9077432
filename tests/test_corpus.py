"""The character tokenizer, the pinned standard-library corpus and the n-gram baselines."""

from __future__ import annotations

import numpy as np
import pytest

from course_attention import corpus


def test_vocabulary_is_newline_and_printable_ascii():
    assert corpus.VOCAB_SIZE == 96 and corpus.VOCAB[0] == "\n" and corpus.VOCAB[1] == " "
    assert corpus.VOCAB[-1] == "~" and len(set(corpus.VOCAB)) == corpus.VOCAB_SIZE


def test_encode_decode_round_trip_and_unknown_characters():
    text = "def f(x):\n    return x ** 2  # ~"
    ids = corpus.encode(text)
    assert ids.dtype == np.int64 and ids.shape == (len(text),)
    assert corpus.decode(ids) == text
    assert corpus.decode(corpus.encode("naïve\tcafé")) == "na?ve?caf?"
    with pytest.raises(ValueError, match=r"outside the vocabulary.*'ï'"):
        corpus.encode("naïve", strict=True)
    with pytest.raises(ValueError, match="token ids must lie in 0 … 95; got 0 … 96"):
        corpus.decode([0, 96])
    with pytest.raises(ValueError, match="needs a str"):
        corpus.encode(b"bytes")


def test_corpus_is_deterministic_disjoint_and_clean():
    a, b = corpus.load(), corpus.load()
    assert a.train_text == b.train_text and a.valid_text == b.valid_text
    assert np.array_equal(a.train, b.train) and np.array_equal(a.valid, b.valid)
    assert len(a.train) > 300_000 and len(a.valid) > 10_000
    assert not set(corpus.TRAIN_MODULES) & set(corpus.VALID_MODULES)
    assert corpus.decode(a.valid) == a.valid_text
    assert "Python Software Foundation License" in a.licence
    assert a.python.count(".") == 2


def test_a_module_in_both_sets_or_missing_is_refused(tmp_path):
    with pytest.raises(ValueError, match="both the training and validation"):
        corpus.load(("copy.py",), ("copy.py",))
    with pytest.raises(ValueError, match="not found"):
        corpus.load(("nope.py",), ("copy.py",), root=tmp_path)


def test_baselines_on_a_text_with_a_known_answer():
    # "abab…": the next character is certain given the previous one, not without it
    train = np.array([0, 1] * 500)
    uni, bi = corpus.unigram_bigram_loss(train, train, vocab_size=2, alpha=1e-9)
    assert uni == pytest.approx(np.log(2)) and bi == pytest.approx(0.0, abs=1e-6)


def test_baselines_on_the_corpus_order_as_expected():
    c = corpus.load()
    uni, bi = corpus.unigram_bigram_loss(c.train, c.valid)
    assert 0 < bi < uni < np.log(corpus.VOCAB_SIZE)


def test_baseline_bad_inputs():
    with pytest.raises(ValueError, match="valid must be"):
        corpus.unigram_bigram_loss(np.array([0, 1, 2]), np.array([5]), vocab_size=3)
    with pytest.raises(ValueError, match="alpha"):
        corpus.unigram_bigram_loss(np.array([0, 1]), np.array([0, 1]), 2, alpha=0)
