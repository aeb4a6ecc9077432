"""Exercises of chapter 9 (induction heads): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng


def _causal_weights(gen: np.random.Generator, seq: int) -> np.ndarray:
    """Random causal attention weights ``(seq, seq)``: rows sum to 1 over keys ``≤ query``."""
    w = np.tril(gen.random((seq, seq)) ** 3)
    return w / w.sum(axis=-1, keepdims=True)


def _previous_token_reference(weights: np.ndarray) -> float:
    q = np.arange(1, weights.shape[-1])
    return float(weights[q, q - 1].mean())


def _previous_token_cases() -> list[tuple]:
    gen = rng(91)
    shifted = np.eye(5, k=-1)
    shifted[0, 0] = 1.0  # a perfect previous-token head; query 0 can only see itself
    return [(shifted,), (_causal_weights(gen, 6),), (_causal_weights(gen, 9),)]


PREVIOUS_TOKEN_MISTAKES = (
    Mistake(
        N_(
            "the diagonal (`w[q, q]`, the token itself) instead of the one below it (`w[q, q - 1]`)"
        ),
        lambda w: float(np.diagonal(w).mean()),
    ),
    Mistake(
        N_(
            "the diagonal above (`w[q, q + 1]`, the next token): under a causal mask it is always 0"
        ),
        lambda w: float(np.diagonal(w, offset=1).mean()),
    ),
    Mistake(
        N_(
            "query 0 counted too (with `np.roll` or index −1 it reads the last key, which it "
            "cannot see): average over queries 1 … seq − 1 only"
        ),
        lambda w: float(w[np.arange(w.shape[0]), np.arange(w.shape[0]) - 1].mean()),
    ),
    Mistake(
        N_("summed instead of averaged over the queries"),
        lambda w: float(np.diagonal(w, offset=-1).sum()),
    ),
)


def _induction_reference(weights: np.ndarray, tokens: np.ndarray) -> float:
    picked = []
    for q in range(1, len(tokens)):
        earlier = np.nonzero(tokens[:q] == tokens[q])[0]
        if len(earlier):  # the token after its most recent earlier occurrence
            picked.append(weights[q, earlier[-1] + 1])
    return float(np.mean(picked)) if picked else 0.0


def _induction_cases() -> list[tuple]:
    gen = rng(92)
    seg = np.array([5, 2, 7, 1])
    tokens_a = np.concatenate([[9], seg, [3], seg])  # (10,): a copy at 1, another at 6
    perfect = np.zeros((10, 10))
    perfect[np.arange(10), np.maximum(np.arange(10) - 1, 0)] = 1.0  # previous token elsewhere
    perfect[6:, 2:6] = np.eye(4)  # query 6 + i attends to 2 + i: after the previous occurrence
    tokens_b = np.array([4, 8, 4, 6, 4, 8, 0, 6])  # 4 three times: the most recent one counts
    return [
        (perfect, tokens_a),
        (_causal_weights(gen, 10), tokens_a),
        (_causal_weights(gen, 8), tokens_b),
    ]


def _induction_variant(weights: np.ndarray, tokens: np.ndarray, key: str) -> float:
    picked = []
    for q in range(1, len(tokens)):
        earlier = np.nonzero(tokens[:q] == tokens[q])[0]
        if key == "all" and not len(earlier):
            picked.append(0.0)
        elif len(earlier):
            j = earlier[0] if key == "first" else earlier[-1]
            picked.append(weights[q, j + (0 if key == "same" else 1)])
    return float(np.mean(picked)) if picked else 0.0


INDUCTION_MISTAKES = (
    Mistake(
        N_(
            "the weight on the previous occurrence itself (`w[q, j]`), not on the token after it "
            "(`w[q, j + 1]`), which holds the answer to copy"
        ),
        lambda w, t: _induction_variant(w, t, "same"),
    ),
    Mistake(
        N_("the first earlier occurrence instead of the most recent one"),
        lambda w, t: _induction_variant(w, t, "first"),
    ),
    Mistake(
        N_("averaged over every query, counting 0 for queries whose token never occurred before"),
        lambda w, t: _induction_variant(w, t, "all"),
    ),
)


def _ablate_reference(heads: np.ndarray, W_o: np.ndarray, head: int) -> np.ndarray:
    kept = heads.copy()
    kept[head] = 0.0  # (heads, seq, d_head)
    n_heads, seq, d_head = heads.shape
    return kept.transpose(1, 0, 2).reshape(seq, n_heads * d_head) @ W_o  # (seq, d_model)


def _merge(heads: np.ndarray) -> np.ndarray:
    n_heads, seq, d_head = heads.shape
    return heads.transpose(1, 0, 2).reshape(seq, n_heads * d_head)


def _ablate_cases() -> list[tuple]:
    gen = rng(93)
    return [
        (gen.normal(size=(4, 5, 2)), gen.normal(size=(8, 8)), 1),
        (gen.normal(size=(2, 3, 4)), gen.normal(size=(8, 6)), 0),
        (gen.normal(size=(4, 6, 3)), gen.normal(size=(12, 12)), 3),
    ]


def _rescaled(heads: np.ndarray, W_o: np.ndarray, head: int) -> np.ndarray:
    return _ablate_reference(heads, W_o, head) * heads.shape[0] / (heads.shape[0] - 1)


def _zero_output_slice(heads: np.ndarray, W_o: np.ndarray, head: int) -> np.ndarray:
    out = _merge(heads) @ W_o
    d = heads.shape[2]
    out[:, head * d : (head + 1) * d] = 0.0
    return out


ABLATE_MISTAKES = (
    Mistake(
        N_(
            "the output features of the head's width zeroed after `W_o` (columns `h·d … (h+1)·d` "
            "of the result): `W_o` mixes every head into every feature, so zero the head *before* "
            "it"
        ),
        _zero_output_slice,
    ),
    Mistake(
        N_("nothing switched off: the full layer output"),
        lambda heads, W_o, head: _merge(heads) @ W_o,
    ),
    Mistake(
        N_(
            "the other heads scaled up by heads / (heads − 1): a zero ablation just removes the "
            "head"
        ),
        _rescaled,
    ),
    Mistake(
        N_("the next head zeroed (off by one: heads are counted from 0)"),
        lambda heads, W_o, head: _ablate_reference(heads, W_o, (head + 1) % heads.shape[0]),
    ),
    Mistake(
        N_(
            "the heads merged in the wrong order (`heads.reshape(seq, -1)` without moving the head "
            "axis next to d_head first)"
        ),
        lambda heads, W_o, head: (
            np.where(np.arange(heads.shape[0])[:, None, None] == head, 0.0, heads).reshape(
                heads.shape[1], -1
            )
            @ W_o
        ),
    ),
)


register(
    Exercise(
        id="induction-heads-1",
        title=N_("the previous-token score"),
        reference=_previous_token_reference,
        cases=_previous_token_cases,
        difficulty=1,
        minutes=5,
        mistakes=PREVIOUS_TOKEN_MISTAKES,
        hint=N_(
            "for each query q = 1 … seq − 1 take weights[q, q − 1] (the diagonal just below the "
            "main one: np.diagonal(weights, offset=-1)) and average them."
        ),
        nudge=N_(
            "a previous-token head puts the weight of query q on key q − 1: which diagonal of the "
            "weight matrix holds those entries?"
        ),
    )
)

register(
    Exercise(
        id="induction-heads-2",
        title=N_("an induction score from the tokens"),
        reference=_induction_reference,
        cases=_induction_cases,
        difficulty=2,
        minutes=15,
        mistakes=INDUCTION_MISTAKES,
        hint=N_(
            "for each query q, find the earlier positions j < q with tokens[j] == tokens[q]; if "
            "there are any, take the most recent j and the weight weights[q, j + 1]. Average over "
            "those queries only (return 0.0 when there are none)."
        ),
        nudge=N_(
            "an induction head at query q looks at the token right after the most recent earlier "
            "occurrence of tokens[q]; queries whose token did not occur before do not count."
        ),
    )
)

register(
    Exercise(
        id="induction-heads-3",
        title=N_("switch one head off"),
        reference=_ablate_reference,
        cases=_ablate_cases,
        difficulty=2,
        minutes=10,
        mistakes=ABLATE_MISTAKES,
        hint=N_(
            "copy heads, set heads[head] = 0, then merge: (heads, seq, d_head) → (seq, heads, "
            "d_head) → (seq, heads · d_head), and multiply by W_o."
        ),
        nudge=N_(
            "switching a head off sets its output to zero before the heads are merged and "
            "projected, without changing the caller's array."
        ),
    )
)
