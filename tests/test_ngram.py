"""Chapter 8's n-gram ladder: interpolated modified Kneser–Ney, checked against a plain loop."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from course_attention import corpus, ngram


def _discounts(counts: Counter) -> tuple[float, ...]:
    n = [sum(1 for c in counts.values() if c == k) for k in (1, 2, 3, 4)]
    if min(n) == 0:
        return 0.75, 0.75, 0.75
    y = n[0] / (n[0] + 2 * n[1])
    return tuple(min(max(k - (k + 1) * y * n[k] / n[k - 1], 0.0), k) for k in (1, 2, 3))


def _reference_kn(train: list[int], n: int, vocab: int):
    """Chen and Goodman's interpolated modified Kneser–Ney, written with dicts and a recursion."""
    grams = {}
    for k in range(1, n + 1):
        if k == n:
            grams[k] = Counter(tuple(train[i : i + k]) for i in range(len(train) - k + 1))
        else:
            longer = {tuple(train[i : i + k + 1]) for i in range(len(train) - k)}
            grams[k] = Counter(g[1:] for g in longer)
    disc = {k: _discounts(grams[k]) for k in grams}
    totals, kinds = defaultdict(float), defaultdict(lambda: [0, 0, 0])
    for k, counter in grams.items():
        for g, c in counter.items():
            totals[k, g[:-1]] += c
            kinds[k, g[:-1]][min(c, 3) - 1] += 1

    def prob(history: tuple[int, ...], w: int) -> float:
        k = len(history) + 1
        if k == 0 or k > n:
            raise AssertionError
        lower = 1 / vocab if k == 1 else prob(history[1:], w)
        total = totals.get((k, history), 0.0)
        if total == 0:
            return lower
        c = grams[k].get((*history, w), 0)
        d = 0.0 if c == 0 else disc[k][min(c, 3) - 1]
        gamma = sum(dk * nk for dk, nk in zip(disc[k], kinds[k, history], strict=True))
        return (max(c - d, 0.0) + gamma * lower) / total

    return prob


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_equals_a_plain_loop_implementation(n):
    gen = np.random.default_rng(n)
    train = gen.choice(5, size=400, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    train[::7] = 2  # some structure, so that counts of 1, 2, 3 and 4 all occur
    valid = gen.choice(6, size=60)  # id 5 never occurs in train
    prob = _reference_kn(train.tolist(), n, vocab=6)
    expected = [
        np.log(prob(tuple(valid[max(0, t - n + 1) : t].tolist()), int(valid[t])))
        for t in range(1, len(valid))
    ]
    got = ngram.fit_kneser_ney(train, n, vocab_size=6).log_probs(valid)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_probabilities_sum_to_one_after_seen_and_unseen_contexts(n):
    text = corpus.load()
    model = ngram.fit_kneser_ney(text.train[:50_000], n)
    for history in (text.valid[100 : 100 + n - 1], np.array([95, 94, 93, 92])[: n - 1]):
        rows = np.stack([np.r_[history, w] for w in range(96)])
        total = sum(np.exp(model.log_probs(row)[-1]) for row in rows)
        assert total == pytest.approx(1.0, abs=1e-12)


def test_a_certain_text_costs_almost_nothing_and_bits_are_nats_over_ln2():
    train = np.array([0, 1, 2] * 300)
    model = ngram.fit_kneser_ney(train, 3, vocab_size=3)
    assert model.loss(np.array([0, 1, 2] * 20)) < 0.02  # after two characters it is certain
    assert ngram.bits(np.log(2)) == pytest.approx(1.0)


def test_the_ladder_on_the_corpus_falls_and_beats_the_add_alpha_bigram():
    text = corpus.load()
    ladder = ngram.ladder(text.train, text.valid, orders=(1, 2, 3, 4, 5))
    losses = list(ladder.values())
    assert all(a > b for a, b in zip(losses, losses[1:], strict=False))
    _, bigram = corpus.unigram_bigram_loss(text.train, text.valid)
    assert ladder[2] < bigram and ladder[5] < 0.7 * bigram


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_terms_rebuild_each_probability_order_by_order(n):
    gen = np.random.default_rng(n)
    train = gen.choice(5, size=400, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    train[::7] = 2
    model = ngram.fit_kneser_ney(train, n, vocab_size=6)
    valid = gen.choice(6, size=30)
    for t in range(1, len(valid)):
        history = valid[:t]
        terms = model.terms(history, int(valid[t]))
        assert [term.order for term in terms] == list(range(1, min(t, n - 1) + 2))
        assert terms[-1].prob == pytest.approx(np.exp(model.log_probs(valid[: t + 1])[-1]),
                                               rel=1e-12)
        lower = 1 / 6
        for term in terms:
            assert term.lower == lower
            if term.total > 0:
                share = max(term.count - term.discount, 0) + term.gamma * lower
                assert term.prob == pytest.approx(share / term.total, rel=1e-12)
            lower = term.prob


def test_terms_count_pairs_at_the_top_and_continuations_below():
    train = np.array([0, 1, 0, 1, 0, 1, 2, 1, 2, 2, 1, 0])  # pairs: 01 ×3, 10 ×3, 12 ×2, …
    model = ngram.fit_kneser_ney(train, 2, vocab_size=3)
    unigram, pair = model.terms([0], 1)
    assert pair.count == 3 and pair.total == 3  # "1" followed "0" 3 times; "0" occurs 3 times
    assert unigram.count == 2  # "1" follows 2 distinct characters, 0 and 2 (6 times in all)
    assert unigram.total == 5  # the distinct pairs: 01, 10, 12, 21, 22
    assert pair.discount == model.orders[1].discounts[2]  # the discount of a count ≥ 3
    with pytest.raises(ValueError, match=r"ids must lie in 0 … 2"):
        model.terms([0], 3)
    with pytest.raises(ValueError, match="history must be integer ids"):
        model.terms(np.array([0.5]), 1)


def test_bad_inputs_are_value_errors():
    with pytest.raises(ValueError, match="n must be an integer in 1 … 8"):
        ngram.fit_kneser_ney(np.arange(10), 0)
    with pytest.raises(ValueError, match=r"train ids must lie in 0 … 95; got 0 … 96"):
        ngram.fit_kneser_ney(np.arange(97), 2)
    with pytest.raises(ValueError, match="integer ids"):
        ngram.fit_kneser_ney(np.zeros(5), 2)
    with pytest.raises(ValueError, match="fewer than n"):
        ngram.fit_kneser_ney(np.arange(3), 5)
    with pytest.raises(ValueError, match="valid must be"):
        ngram.ladder(np.arange(10), np.array([1]))
