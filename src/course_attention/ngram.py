"""Character n-gram baselines with interpolated Kneser–Ney smoothing (chapter 8).

Introduced in chapter 8 (a GPT you train yourself): the strongest *simple* bar a character-level
language model must clear. An ``n``-gram model predicts a character from the ``n − 1`` characters
before it, from counts on the training text. Counts alone give an unseen context or an unseen
character probability 0, so the counts are *smoothed*: here with interpolated Kneser–Ney in Chen
and Goodman's modified form (1999, "An empirical study of smoothing techniques for language
modeling", §3.5), the method their study found best:

- every count ``c(h w) > 0`` is lowered by a discount ``D₁``, ``D₂`` or ``D₃₊`` (for counts 1, 2,
  ≥ 3), and the mass taken off goes to the next-shorter context ``h'`` (``h`` without its first
  character): ``P(w | h) = (max(c(h w) − D, 0) + γ(h) · P(w | h')) / c(h)`` with
  ``γ(h) = D₁ N₁(h·) + D₂ N₂(h·) + D₃₊ N₃₊(h·)`` (``N_k(h·)``: characters seen exactly ``k``
  times after ``h``, ``≥ 3`` for the last). A context never seen uses ``P(w | h')`` alone.
- the shorter orders count not occurrences but *continuations*: ``c'(h w)`` is the number of
  distinct characters seen before ``h w``. A character that occurs often but after few contexts
  (``_`` after ``_``) gets a small share when the longer context is unknown.
- the discounts come from the training counts alone (Chen and Goodman's estimates from the
  number ``n_k`` of n-grams seen exactly ``k`` times): ``Y = n₁ / (n₁ + 2 n₂)``,
  ``D_k = k − (k + 1) Y n_{k+1} / n_k``. Nothing is tuned on the text that is scored.
- the shortest order interpolates with the uniform distribution over the vocabulary, so every
  character keeps a probability above 0.

Scores are the mean negative log-probability of every character of ``valid`` after the first,
each predicted from up to ``n − 1`` characters before it (fewer at the very start), the targets
:func:`course_attention.gpt.validation_loss` scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["KneserNey", "Term", "fit_kneser_ney", "ladder", "bits"]


def bits(nats: float) -> float:
    """Nats per character → bits per character (divide by ``ln 2``)."""
    return nats / math.log(2)


def _check_ids(name: str, ids: np.ndarray, vocab_size: int) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1 or ids.size < 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{name} must be ≥ 2 integer ids, shape (n,); got {ids.dtype} {ids.shape}")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(
            f"{name} ids must lie in 0 … {vocab_size - 1}; got {int(ids.min())} … {int(ids.max())}"
        )
    return ids.astype(np.int64)


def _codes(ids: np.ndarray, k: int, vocab_size: int) -> np.ndarray:
    """The ``k``-grams of ``ids`` as integers, ``Σ ids[t + i] · V^(k − 1 − i)`` ``(n − k + 1,)``."""
    n = len(ids) - k + 1
    code = np.zeros(max(n, 0), dtype=np.int64)
    for i in range(k):
        code = code * vocab_size + ids[i : i + n]
    return code


def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``values`` of ``query`` in the sorted ``keys`` (0 where absent)."""
    if len(keys) == 0:
        return np.zeros(len(query), dtype=values.dtype)
    at = np.clip(np.searchsorted(keys, query), 0, len(keys) - 1)
    return np.where(keys[at] == query, values[at], 0)


@dataclass(frozen=True)
class _Order:
    grams: np.ndarray  # sorted codes of the k-grams seen (h w)
    counts: np.ndarray  # their (continuation) counts
    contexts: np.ndarray  # sorted codes of the contexts h
    totals: np.ndarray  # c(h) = Σ_w c(h w)
    gammas: np.ndarray  # D₁ N₁(h·) + D₂ N₂(h·) + D₃₊ N₃₊(h·)
    discounts: tuple[float, float, float]


def _discounts(counts: np.ndarray) -> tuple[float, float, float]:
    n = [int(np.count_nonzero(counts == k)) for k in (1, 2, 3, 4)]
    if min(n) == 0:  # too little text for the estimate: one discount of 0.75 (a common default)
        return 0.75, 0.75, 0.75
    y = n[0] / (n[0] + 2 * n[1])
    d = [k - (k + 1) * y * n[k] / n[k - 1] for k in (1, 2, 3)]
    return tuple(float(np.clip(x, 0.0, k)) for x, k in zip(d, (1, 2, 3), strict=True))


def _order(grams: np.ndarray, counts: np.ndarray, vocab_size: int) -> _Order:
    d = _discounts(counts)
    ctx = grams // vocab_size
    contexts, start = np.unique(ctx, return_index=True)  # grams are sorted, so contexts are too
    totals = np.add.reduceat(counts, start).astype(np.float64)
    per_gram = np.where(counts == 1, d[0], np.where(counts == 2, d[1], d[2]))
    gammas = np.add.reduceat(per_gram, start)
    return _Order(grams, counts, contexts, totals, gammas, d)


@dataclass(frozen=True)
class Term:
    """One order's share of a Kneser–Ney probability, ``P(w | h)`` for a context ``h`` of
    ``order − 1`` characters (:meth:`KneserNey.terms`).

    ``prob = (max(count − discount, 0) + gamma · lower) / total`` when ``total > 0``, else
    ``lower``. ``count`` is ``c(h w)``: how often ``w`` followed ``h`` in the training text at the
    highest order, and at the lower orders the *continuation count*, the number of distinct
    characters seen before ``h w``. ``discount`` is the one subtracted from that count (0 when it
    is 0), ``total`` is ``c(h)`` (the counts of every character after ``h``), ``gamma`` the mass
    the discounts took off after ``h``, ``lower`` the next-shorter order's ``prob`` (for order 1,
    the uniform ``1 / vocab``).
    """

    order: int
    count: int
    discount: float
    total: float
    gamma: float
    lower: float
    prob: float


@dataclass(frozen=True)
class KneserNey:
    """An interpolated, modified Kneser–Ney character ``n``-gram model (chapter 8).

    Made by :func:`fit_kneser_ney`. ``orders[k − 1]`` holds the counts of the ``k``-grams
    (continuation counts below ``n``). :meth:`log_probs` scores a text.
    """

    n: int
    vocab_size: int
    orders: tuple[_Order, ...]

    def log_probs(self, ids: np.ndarray) -> np.ndarray:
        """``ln P(ids[t] | up to n − 1 characters before)``, ``t = 1 … len − 1``: ``(len − 1,)``."""
        ids = _check_ids("ids", ids, self.vocab_size)
        V, T = self.vocab_size, len(ids)
        targets = np.arange(1, T)
        prob = np.full(T - 1, 1.0 / V)  # order 0: uniform
        for k in range(1, self.n + 1):
            o = self.orders[k - 1]
            has = targets >= k - 1  # enough characters before the target for this order
            t = targets[has]
            ctx = np.zeros(len(t), dtype=np.int64)
            for i in range(k - 1, 0, -1):  # the k − 1 characters before t, oldest first
                ctx = ctx * V + ids[t - i]
            gram = ctx * V + ids[t]
            total = _lookup(o.contexts, o.totals, ctx)
            gamma = _lookup(o.contexts, o.gammas, ctx)
            c = _lookup(o.grams, o.counts, gram).astype(np.float64)
            disc = np.where(c == 0, 0.0, np.where(c == 1, o.discounts[0], np.where(
                c == 2, o.discounts[1], o.discounts[2])))
            seen = total > 0
            lower = prob[has]
            safe = np.where(seen, total, 1.0)
            prob[has] = np.where(seen, (np.maximum(c - disc, 0) + gamma * lower) / safe, lower)
        return np.log(prob)

    def terms(self, history: np.ndarray, w: int) -> tuple[Term, ...]:
        """How ``P(w | history)`` is built, one :class:`Term` per order, shortest first.

        Introduced in chapter 8 (a worked example of Kneser–Ney). ``history`` ``(≤ n − 1,)`` are
        the ids before ``w`` (only the last ``n − 1`` count). The last term's ``prob`` equals
        ``exp(log_probs([*history, w])[-1])``.
        """
        history = np.asarray(history)
        if history.ndim != 1 or not (history.size == 0 or np.issubdtype(history.dtype, np.integer)):
            raise ValueError(f"history must be integer ids, shape (m,); got {history.dtype} "
                             f"{history.shape}")
        if not isinstance(w, int | np.integer):
            raise ValueError(f"w must be an integer id; got {w!r}")
        ids = np.r_[history.astype(np.int64), int(w)]
        if ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"ids must lie in 0 … {self.vocab_size - 1}; got {ids.tolist()}")
        history, w = ids[:-1][max(len(ids) - self.n, 0) :], int(w)  # the last n − 1 ids
        V, prob, out = self.vocab_size, 1.0 / self.vocab_size, []
        for k in range(1, len(history) + 2):
            o, ctx = self.orders[k - 1], 0
            for h in history[len(history) - (k - 1) :]:
                ctx = ctx * V + int(h)
            gram = np.array([ctx * V + w])
            total = float(_lookup(o.contexts, o.totals, np.array([ctx]))[0])
            gamma = float(_lookup(o.contexts, o.gammas, np.array([ctx]))[0])
            count = int(_lookup(o.grams, o.counts, gram)[0])
            disc = 0.0 if count == 0 else o.discounts[min(count, 3) - 1]
            lower = prob
            prob = (max(count - disc, 0.0) + gamma * lower) / total if total > 0 else lower
            out.append(Term(k, count, disc, total, gamma, lower, prob))
        return tuple(out)

    def loss(self, ids: np.ndarray) -> float:
        """Cross-entropy on ``ids`` ``(m,)`` in nats per character (every character but the
        first)."""
        return float(-self.log_probs(ids).mean())


def fit_kneser_ney(train: np.ndarray, n: int, vocab_size: int = 96) -> KneserNey:
    """Count the 1- to ``n``-grams of ``train`` ``(len,)`` for a :class:`KneserNey` model.

    Introduced in chapter 8. The ``n``-grams keep their counts; every shorter ``k``-gram gets its
    continuation count, the number of distinct characters seen before it.
    """
    if not isinstance(n, int | np.integer) or not 1 <= n <= 8:
        raise ValueError(f"n must be an integer in 1 … 8 (codes are int64); got {n}")
    if vocab_size < 2 or vocab_size**n >= 2**62:
        raise ValueError(f"vocab_size={vocab_size} ** n={n} does not fit an int64 code")
    train = _check_ids("train", train, vocab_size)
    if len(train) < n:
        raise ValueError(f"train has {len(train)} ids, fewer than n={n}")
    orders = []
    for k in range(1, n + 1):
        grams, counts = np.unique(_codes(train, k, vocab_size), return_counts=True)
        if k < n:  # continuation counts: distinct characters before each k-gram
            longer = np.unique(_codes(train, k + 1, vocab_size))
            grams, counts = np.unique(longer % vocab_size**k, return_counts=True)
        orders.append(_order(grams, counts.astype(np.int64), vocab_size))
    return KneserNey(n, vocab_size, tuple(orders))


def ladder(
    train: np.ndarray, valid: np.ndarray, orders: tuple[int, ...] = (1, 2, 3, 4, 5),
    vocab_size: int = 96,
) -> dict[int, float]:
    """``{n: cross-entropy on valid}`` (nats per character) of a Kneser–Ney ``n``-gram counted on
    ``train`` for every ``n`` in ``orders`` (chapter 8)."""
    valid = _check_ids("valid", valid, vocab_size)
    return {n: fit_kneser_ney(train, n, vocab_size).loss(valid) for n in orders}
