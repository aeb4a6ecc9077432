"""Exercises of chapter 4 (masking): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import ErrorHint, Exercise, Mistake, register, rng


def _real(lengths: np.ndarray, seq_len: int) -> np.ndarray:
    return np.arange(seq_len)[None, :] < np.asarray(lengths)[:, None]  # (batch, seq_len)


def _padding_mask_reference(lengths: np.ndarray, seq_len: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.padding_mask(lengths, seq_len)  # (batch, 1, 1, seq_len) bool


def _padding_mask_cases() -> list[tuple]:
    return [
        (np.array([3, 1, 4]), 4),  # batch = 3: a (batch, 1, seq_len) mask would face 3 heads
        (np.array([2]), 5),
        (np.array([0, 6, 2, 5]), 6),  # an empty sentence: a row of False
    ]


PADDING_MASK_MISTAKES = (
    Mistake(
        N_(
            "the mask has no head and query axes: `(batch, seq_len)` lines the batch up with the "
            "queries — add them with `[:, None, None, :]`"
        ),
        lambda lengths, seq_len: _real(lengths, seq_len),
    ),
    Mistake(
        N_(
            "the head axis is missing: `(batch, 1, seq_len)` faces the scores "
            "`(batch, heads, seq_q, seq_k)` as `(heads, seq_q, seq_k)` and gives sentence b's mask "
            "to head b — use `[:, None, None, :]`"
        ),
        lambda lengths, seq_len: _real(lengths, seq_len)[:, None, :],
    ),
    Mistake(
        N_("an int 0/1 array instead of bool: compare with `<`, which gives True/False"),
        lambda lengths, seq_len: _real(lengths, seq_len)[:, None, None, :].astype(int),
    ),
    Mistake(
        N_("`<=` instead of `<`: position `length` is the first pad, not a real token"),
        lambda lengths, seq_len: (np.arange(seq_len)[None, :] <= lengths[:, None])[
            :, None, None, :
        ],
    ),
    Mistake(
        N_(
            "True at the pads: that is a *blocked* mask (True = hide); this course's masks say "
            "True = may attend"
        ),
        lambda lengths, seq_len: ~_real(lengths, seq_len)[:, None, None, :],
    ),
)


def _masked_weights_reference(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(np.where(mask, scores, -np.inf))  # all-hidden rows: zeros


def _masked_weights_cases() -> list[tuple]:
    gen = rng(41)
    causal = np.tril(np.ones((4, 4), dtype=bool))
    empty_row = np.array([[True, False, True], [False, False, False]])
    return [
        (gen.normal(size=(4, 4)), causal),
        (gen.normal(size=(2, 3)) * 100, empty_row),  # large scores and a fully hidden row
        (gen.normal(size=(2, 3, 5)), gen.normal(size=(2, 1, 5)) > -0.3),  # broadcast mask
        # a hidden key far above the visible ones: the maximum must come from visible keys
        (
            np.array([[0.0, 1.0, 1000.0], [3.0, -1.0, 2.0]]),
            np.array([[True, True, False], [True, True, True]]),
        ),
        # rows a thousand apart: one global maximum underflows the lower row
        (
            np.array([[1000.0, 999.0, 998.0], [0.0, 1.0, -1.0]]),
            np.array([[True, True, False], [True, False, True]]),
        ),
    ]


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.softmax(x, axis=axis)


def _naive_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))  # an all -inf row: -inf - (-inf) = NaN
    return e / e.sum(axis=-1, keepdims=True)


def _hint_softmax(scores: np.ndarray, mask: np.ndarray, top: np.ndarray) -> np.ndarray:
    """The hint's recipe (hidden scores replaced by ``top``, exp, times mask, safe divide),
    with the maximum ``top`` the learner chose."""
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(np.where(mask, scores, top) - top) * mask
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


NAN_HINT = N_(
    "0 · (−∞) is NaN, not 0: no product with −∞ leaves a kept score unchanged. Choose between "
    "the score and −∞ by the mask (`np.where`) instead of multiplying by it."
)

MASKED_WEIGHTS_MISTAKES = (
    Mistake(
        N_(
            "hidden scores set to −1e9: a row with every key hidden becomes uniform instead of zero"
        ),
        lambda scores, mask: _softmax(np.where(mask, scores, -1e9)),
    ),
    Mistake(
        N_(
            "hidden scores set to −∞ and a plain softmax: a row with every key hidden gives "
            "NaN (−∞ − (−∞)); give empty rows zeros"
        ),
        lambda scores, mask: _naive_softmax(np.where(mask, scores, -np.inf)),
    ),
    Mistake(
        N_(
            "the mask applied after the softmax (weights × mask): the hidden keys' share is lost "
            "and the rows no longer sum to 1 — hide the scores before the softmax"
        ),
        lambda scores, mask: _softmax(scores) * mask,
    ),
    Mistake(
        N_(
            "the scores multiplied by the mask: a hidden score becomes 0, not −∞, and still gets "
            "weight"
        ),
        lambda scores, mask: _softmax(scores * mask),
    ),
    Mistake(
        N_("the mask read as blocked (True = hide); here True = may attend"),
        lambda scores, mask: _softmax(np.where(mask, -np.inf, scores)),
    ),
    Mistake(
        N_("softmax over the queries (axis -2) instead of the keys (axis -1)"),
        lambda scores, mask: _softmax(np.where(mask, scores, -np.inf), axis=-2),
    ),
    Mistake(
        N_(
            "the maximum taken over every key, hidden ones included: a hidden score far above the "
            "visible ones makes every visible exp underflow to 0 — take each row's maximum over "
            "the allowed keys, np.where(mask, scores, -np.inf).max(axis=-1, keepdims=True)"
        ),
        lambda scores, mask: _hint_softmax(scores, mask, scores.max(axis=-1, keepdims=True)),
    ),
    Mistake(
        N_(
            "one maximum for the whole array instead of one per row: a row far below it underflows "
            "to 0 — take each row's own maximum (`axis=-1, keepdims=True`)"
        ),
        lambda scores, mask: _hint_softmax(
            scores, mask, np.broadcast_to(np.where(mask, scores, -np.inf).max(), scores.shape)
        ),
    ),
    Mistake(
        N_(
            "the hidden scores set by multiplying, `scores + (~mask) * -np.inf` (or `scores * mask "
            "+ …`): at a kept key that is 0 · (−∞), which is NaN, not 0, and one NaN score makes "
            "its whole row NaN — choose with np.where(mask, scores, -np.inf)"
        ),
        lambda scores, mask: _naive_softmax(scores + (~mask) * -np.inf),
        hint=NAN_HINT,
    ),
)

MASKED_WEIGHTS_ERRORS = (
    # ref.softmax refuses the NaN that (~mask) * -np.inf makes
    ErrorHint(
        r"must be finite; found nan",
        N_(
            "NaN reached the softmax. A common source here is a product with −∞: 0 · (−∞) is NaN, "
            "not 0, so `(~mask) * -np.inf` puts NaN at every kept key — choose with "
            "np.where(mask, scores, -np.inf) instead of multiplying"
        ),
        NAN_HINT,
    ),
)


def _masked_mean_reference(losses: np.ndarray, lengths: np.ndarray) -> float:
    real = _real(lengths, losses.shape[1])  # (batch, seq)
    return float(losses[real].mean())


def _masked_mean_cases() -> list[tuple]:
    gen = rng(42)
    return [
        (gen.uniform(0, 3, size=(3, 5)), np.array([5, 2, 3])),
        (gen.uniform(0, 3, size=(2, 4)), np.array([4, 4])),  # no padding at all
        (gen.uniform(0, 3, size=(4, 6)), np.array([1, 6, 3, 2])),
    ]


MASKED_MEAN_MISTAKES = (
    Mistake(
        N_("the plain mean over every position, `losses.mean()`: the pad positions' losses count"),
        lambda losses, lengths: float(losses.mean()),
    ),
    Mistake(
        N_(
            "the losses multiplied by the mask, then `.mean()` over every position: the pads add "
            "0 to the sum but still count in the denominator — divide by the number of real tokens"
        ),
        lambda losses, lengths: float((losses * _real(lengths, losses.shape[1])).mean()),
    ),
    Mistake(
        N_("`<=` instead of `<`: the first pad of each sentence counts as a real token"),
        lambda losses, lengths: float(
            losses[np.arange(losses.shape[1])[None, :] <= lengths[:, None]].mean()
        ),
    ),
    Mistake(
        N_(
            "the mean of each sentence's mean: every sentence gets the same total weight, so a "
            "short sentence's tokens weigh more — average over all real tokens together"
        ),
        lambda losses, lengths: float(
            np.mean([row[:n].mean() for row, n in zip(losses, lengths, strict=True)])
        ),
    ),
)


register(
    Exercise(
        id="masking-1",
        title=N_("a key-padding mask from lengths"),
        reference=_padding_mask_reference,
        cases=_padding_mask_cases,
        difficulty=1,
        minutes=5,
        mistakes=PADDING_MASK_MISTAKES,
        hint=N_(
            "compare positions with lengths: np.arange(seq_len)[None, :] < lengths[:, None] is "
            "(batch, seq_len), True at real tokens; add the head and query axes with "
            "[:, None, None, :] so the mask broadcasts to the scores (batch, heads, seq_q, seq_k)."
        ),
        nudge=N_(
            "a position holds a real token when its index is smaller than its sequence's length; "
            "then give the mask the axes it needs to broadcast against scores (batch, heads, "
            "seq_q, seq_k)."
        ),
    )
)

register(
    Exercise(
        id="masking-2",
        title=N_("masked softmax without NaN"),
        reference=_masked_weights_reference,
        cases=_masked_weights_cases,
        difficulty=2,
        minutes=15,
        mistakes=MASKED_WEIGHTS_MISTAKES,
        error_hints=MASKED_WEIGHTS_ERRORS,
        hint=N_(
            "hidden entries must get weight exactly 0, and a row in which every key is hidden "
            "must be all zeros, not NaN and not uniform. Replace hidden scores by the row "
            "maximum of the allowed ones before np.exp, then multiply by the mask and divide "
            "only where the row sum is positive (np.divide(..., where=total > 0))."
        ),
        nudge=N_(
            "think about two rows before you code: one with some hidden keys (their weights must "
            "be exactly 0) and one in which every key is hidden (all zeros, not NaN)."
        ),
    )
)

register(
    Exercise(
        id="masking-3",
        title=N_("a loss that ignores padded positions"),
        reference=_masked_mean_reference,
        cases=_masked_mean_cases,
        difficulty=1,
        minutes=5,
        mistakes=MASKED_MEAN_MISTAKES,
        hint=N_(
            "outputs at padded query positions are garbage: leave them out. Build the "
            "(batch, seq) mask of real positions from lengths and average losses[mask] only, "
            "not losses.mean() over every position."
        ),
        nudge=N_(
            "average over the real positions only: a padded position must count neither in the sum "
            "nor in the number you divide by."
        ),
    )
)
