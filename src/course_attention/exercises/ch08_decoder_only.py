"""Exercises of chapter 8 (a GPT you train yourself): references, test cases, hints, mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

A = np.ndarray


# --- 1. top-p (nucleus) filtering -------------------------------------------------------------


def _top_p_reference(probs: np.ndarray, p: float) -> np.ndarray:
    from ..sampling import top_p_filter

    return top_p_filter(probs, p)  # (vocab,)


def _top_p_cases() -> list[tuple]:
    gen = rng(81)
    return [
        (np.array([0.1, 0.5, 0.3, 0.1]), 0.7),
        (np.array([0.25, 0.5, 0.125, 0.0625, 0.0625]), 0.75),  # the mass reaches p exactly
        (gen.dirichlet(np.ones(10)), 0.9),
        (gen.dirichlet(np.ones(8) * 0.5), 0.5),
        (np.array([0.2, 0.05, 0.6, 0.15]), 1.0),  # p = 1 keeps every token
        (np.array([0.2, 0.05, 0.6, 0.15]), 0.3),  # the most likely token alone is enough
        (np.array([0.6, 0.3, 0.1]), 0.9),  # rounding: 0.6 + 0.3 is 0.8999999999999999 < 0.9
        (np.array([0.1, 0.3, 0.3, 0.3]), 0.5),  # a tie at the edge: the lower id, ids 1 and 2
    ]


def _keep(probs: np.ndarray, ids: np.ndarray, normalise: bool = True) -> np.ndarray:
    kept = np.zeros_like(probs)
    kept[ids] = probs[ids]
    return kept / kept.sum() if normalise else kept


def _sorted_cum(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-probs, kind="stable")
    return order, np.cumsum(probs[order])


def _cum_below(probs: np.ndarray, p: float) -> np.ndarray:
    order, cum = _sorted_cum(probs)
    return _keep(probs, order[cum <= p])


def _cum_above(probs: np.ndarray, p: float) -> np.ndarray:
    order, cum = _sorted_cum(probs)
    return _keep(probs, order[: int(np.searchsorted(cum, p, side="right")) + 1])


def _not_renormalised(probs: np.ndarray, p: float) -> np.ndarray:
    order, cum = _sorted_cum(probs)
    return _keep(probs, order[: int((cum - probs[order] < p).sum())], normalise=False)


def _ascending(probs: np.ndarray, p: float) -> np.ndarray:
    order = np.argsort(probs, kind="stable")
    cum = np.cumsum(probs[order])
    return _keep(probs, order[: int((cum - probs[order] < p).sum())])


def _left_sorted(probs: np.ndarray, p: float) -> np.ndarray:
    order, cum = _sorted_cum(probs)
    kept = np.where(cum - probs[order] < p, probs[order], 0.0)
    return kept / kept.sum()


def _no_tolerance(probs: np.ndarray, p: float) -> np.ndarray:
    order, cum = _sorted_cum(probs)
    return _keep(probs, order[cum - probs[order] < p])


def _ties_kept(probs: np.ndarray, p: float) -> np.ndarray:
    edge = probs[np.flatnonzero(_top_p_reference(probs, p))].min()  # the last token needed
    return _keep(probs, np.flatnonzero(probs >= edge))


TOP_P_MISTAKES = (
    Mistake(
        N_(
            "kept only the tokens whose cumulative mass is ≤ p: that drops the token that carries "
            "the mass past p, so the kept mass stays below p unless some prefix sums to p exactly "
            "(and nothing is kept when the first token alone is above p)"
        ),
        _cum_below,
    ),
    Mistake(
        N_(
            "kept tokens until the mass is *above* p: when it reaches p exactly, the set is "
            "already big enough (smallest set with mass ≥ p)"
        ),
        _cum_above,
    ),
    Mistake(
        N_("the kept probabilities were not renormalised: divide by their sum so they add up to 1"),
        _not_renormalised,
    ),
    Mistake(
        N_("sorted in increasing order: top-p keeps the *most* likely tokens (sort by -probs)"),
        _ascending,
    ),
    Mistake(
        N_("returned the probabilities in sorted order: put each back at its token's id"),
        _left_sorted,
    ),
    Mistake(
        N_(
            "the mass was compared with p exactly: in float64 0.6 + 0.3 is 0.8999999999999999, "
            "just below 0.9, so rounding keeps one token too many. Count a mass within 1e-12 of p "
            "as reaching it: keep while before < p - 1e-12"
        ),
        _no_tolerance,
    ),
    Mistake(
        N_(
            "every token as likely as the last one needed was kept: with a tie at the edge that "
            "keeps more than the smallest set. Take the tokens in sorted order (a stable sort puts "
            "the lower id first) and stop as soon as the mass reaches p"
        ),
        _ties_kept,
    ),
)


# --- 2. one decoding step with a cache ----------------------------------------------------------


def _cached_step_reference(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, K_cache: np.ndarray, V_cache: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .. import numpy_ref

    K = np.concatenate([K_cache, k[None]], axis=0)  # (t + 1, d_k)
    V = np.concatenate([V_cache, v[None]], axis=0)  # (t + 1, d_v)
    weights = numpy_ref.softmax(K @ q / np.sqrt(q.shape[-1]))  # (t + 1,)
    return weights @ V, K, V


def _cached_step_cases() -> list[tuple]:
    gen = rng(82)
    cases = []
    for t, d_k, d_v in ((3, 4, 4), (5, 8, 6), (1, 2, 3), (6, 4, 2)):
        cases.append(
            (
                gen.normal(size=d_k),
                gen.normal(size=d_k),
                gen.normal(size=d_v),
                gen.normal(size=(t, d_k)),
                gen.normal(size=(t, d_v)),
            )
        )
    return cases


def _attend(q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(K @ q * scale) @ V


def _appended(k: np.ndarray, v: np.ndarray, K_cache: np.ndarray, V_cache: np.ndarray) -> tuple:
    return np.concatenate([K_cache, k[None]]), np.concatenate([V_cache, v[None]])


def _before_append(q: A, k: A, v: A, K_cache: A, V_cache: A) -> tuple:
    K, V = _appended(k, v, K_cache, V_cache)
    return _attend(q, K_cache, V_cache, 1 / np.sqrt(q.shape[-1])), K, V


def _replaced(q: A, k: A, v: A, K_cache: A, V_cache: A) -> tuple:
    return _attend(q, k[None], v[None], 1 / np.sqrt(q.shape[-1])), k[None], v[None]


def _prepended(q: A, k: A, v: A, K_cache: A, V_cache: A) -> tuple:
    K, V = np.concatenate([k[None], K_cache]), np.concatenate([v[None], V_cache])
    return _attend(q, K, V, 1 / np.sqrt(q.shape[-1])), K, V


def _unscaled(q: A, k: A, v: A, K_cache: A, V_cache: A) -> tuple:
    K, V = _appended(k, v, K_cache, V_cache)
    return _attend(q, K, V, 1.0), K, V


def _keys_as_values(q: A, k: A, v: A, K_cache: A, V_cache: A) -> tuple:
    K, V = _appended(k, v, K_cache, V_cache)
    return _attend(q, K, K, 1 / np.sqrt(q.shape[-1])), K, V


CACHED_STEP_MISTAKES = (
    Mistake(
        N_(
            "attended before appending the new key and value: the new token must also see itself "
            "(the causal mask's diagonal)"
        ),
        _before_append,
    ),
    Mistake(
        N_(
            "the cache was replaced by the new key and value instead of extended: the new token "
            "then sees only itself, never the prefix"
        ),
        _replaced,
    ),
    Mistake(
        N_(
            "the new key and value were put in front of the cache: the output is the same "
            "(attention ignores order), but row i of the cache must stay position i"
        ),
        _prepended,
    ),
    Mistake(N_("the scores were not divided by √dₖ"), _unscaled),
    Mistake(
        N_("the weights were applied to the keys instead of the values"),
        _keys_as_values,
    ),
)


# --- 3. the bigram baseline -----------------------------------------------------------------


def _bigram_reference(train: np.ndarray, valid: np.ndarray, vocab_size: int, alpha: float) -> float:
    from ..corpus import unigram_bigram_loss

    return unigram_bigram_loss(train, valid, vocab_size, alpha)[1]


def _bigram_cases() -> list[tuple]:
    gen = rng(83)
    return [
        (np.array([0, 1, 2, 0, 1, 2, 0, 1]), np.array([0, 1, 2, 2, 0]), 3, 0.1),
        (gen.integers(0, 5, size=200), gen.integers(0, 5, size=50), 5, 0.1),
        (gen.integers(0, 4, size=100), gen.integers(0, 4, size=30), 6, 1.0),  # 2 ids never seen
        (gen.integers(0, 8, size=300), gen.integers(0, 8, size=80), 8, 0.5),
    ]


def _pair_counts(first: A, second: A, vocab_size: int, alpha: float) -> A:
    counts = np.zeros((vocab_size, vocab_size)) + alpha
    np.add.at(counts, (first, second), 1)
    return counts


def _conditional(train: np.ndarray, vocab_size: int, alpha: float) -> np.ndarray:
    counts = _pair_counts(train[:-1], train[1:], vocab_size, alpha)
    return counts / counts.sum(axis=1, keepdims=True)  # (prev, next)


def _bits(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    p = _conditional(train, vocab_size, alpha)
    return float(-np.log2(p[valid[:-1], valid[1:]]).mean())


def _joint(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    counts = _pair_counts(train[:-1], train[1:], vocab_size, alpha)
    p = counts / counts.sum()
    return float(-np.log(p[valid[:-1], valid[1:]]).mean())


def _backwards(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    counts = _pair_counts(train[1:], train[:-1], vocab_size, alpha)  # (next, prev)
    p = counts / counts.sum(axis=1, keepdims=True)
    return float(-np.log(p[valid[:-1], valid[1:]]).mean())


def _unsmoothed(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    counts = _pair_counts(train[:-1], train[1:], vocab_size, 0.0)
    with np.errstate(all="ignore"):
        p = counts / counts.sum(axis=1, keepdims=True)
        return float(-np.log(p[valid[:-1], valid[1:]]).mean())


def _unigram(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    counts = np.bincount(train, minlength=vocab_size) + alpha
    return float(-np.log(counts / counts.sum())[valid].mean())


def _no_minus(train: A, valid: A, vocab_size: int, alpha: float) -> float:
    return -_bigram_reference(train, valid, vocab_size, alpha)


BIGRAM_MISTAKES = (
    Mistake(N_("log base 2: that is bits per character; the course measures nats (np.log)"), _bits),
    Mistake(
        N_(
            "each count divided by the total of the whole table: that is P(previous, next), not "
            "P(next | previous) — divide each row by its own sum"
        ),
        _joint,
    ),
    Mistake(
        N_(
            "the pairs counted the wrong way round: row = the *previous* character, column = the "
            "next one"
        ),
        _backwards,
    ),
    Mistake(
        N_(
            "no smoothing (alpha ignored): a pair never seen in training gets probability 0 and an "
            "infinite loss"
        ),
        _unsmoothed,
    ),
    Mistake(N_("a unigram model: the previous character was not used"), _unigram),
    Mistake(N_("the minus sign is missing: a cross-entropy is −mean(log p) ≥ 0"), _no_minus),
)


register(
    Exercise(
        id="decoder-only-1",
        title=N_("top-p (nucleus) filtering"),
        reference=_top_p_reference,
        cases=_top_p_cases,
        difficulty=2,
        minutes=10,
        mistakes=TOP_P_MISTAKES,
        hint=N_(
            "sort the ids by decreasing probability (np.argsort(-probs, kind='stable'): of equal "
            "probabilities the lower id first); keep a token while the mass of the tokens "
            "*before* it is still below p - 1e-12 (so the token that reaches p is kept, and "
            "float rounding such as 0.6 + 0.3 = 0.8999999999999999 cannot add one); zero the "
            "others at their own ids and divide by the sum."
        ),
        nudge=N_(
            "take the tokens from the most likely down and keep them until their running total "
            "reaches p; every other token gets probability 0 before you renormalise."
        ),
    )
)

register(
    Exercise(
        id="decoder-only-2",
        title=N_("one decoding step with a KV cache"),
        reference=_cached_step_reference,
        cases=_cached_step_cases,
        difficulty=2,
        minutes=10,
        mistakes=CACHED_STEP_MISTAKES,
        hint=N_(
            "append first: K = concatenate([K_cache, k[None]]), the same for V (shapes (t + 1, "
            "d)); then weights = softmax(K @ q / sqrt(d_k)), shape (t + 1,); output = weights @ "
            "V. Return (output, K, V): the caches for the next step."
        ),
        nudge=N_(
            "one step with a KV cache: the new token's key and value join the cache first, then "
            "its query attends to everything in the cache."
        ),
    )
)

register(
    Exercise(
        id="decoder-only-3",
        title=N_("the bigram baseline"),
        reference=_bigram_reference,
        cases=_bigram_cases,
        difficulty=2,
        minutes=15,
        mistakes=BIGRAM_MISTAKES,
        hint=N_(
            "counts = zeros((vocab_size, vocab_size)) + alpha; np.add.at(counts, (train[:-1], "
            "train[1:]), 1); divide each row by its sum to get P(next | previous); the loss is "
            "-mean(log P[valid[:-1], valid[1:]]) in nats."
        ),
        nudge=N_(
            "a bigram model is a table of next-token probabilities for each previous token, "
            "estimated from counts of the training pairs (plus alpha each); the loss is measured "
            "on the validation pairs, in nats."
        ),
    )
)
