"""Exercises of chapter 4 (masking): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _padding_mask_reference(lengths: np.ndarray, seq_len: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.padding_mask(lengths, seq_len)  # (batch, 1, seq_len) bool


def _padding_mask_cases() -> list[tuple]:
    return [
        (np.array([3, 1, 4]), 4),
        (np.array([2]), 5),
        (np.array([0, 6, 2, 5]), 6),  # an empty sentence: a row of False
    ]


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
    ]


def _masked_mean_reference(losses: np.ndarray, lengths: np.ndarray) -> float:
    real = np.arange(losses.shape[1])[None, :] < lengths[:, None]  # (batch, seq)
    return float(losses[real].mean())


def _masked_mean_cases() -> list[tuple]:
    gen = rng(42)
    return [
        (gen.uniform(0, 3, size=(3, 5)), np.array([5, 2, 3])),
        (gen.uniform(0, 3, size=(2, 4)), np.array([4, 4])),  # no padding at all
        (gen.uniform(0, 3, size=(4, 6)), np.array([1, 6, 3, 2])),
    ]


register(
    Exercise(
        id="masking-1",
        title="a key-padding mask from lengths",
        reference=_padding_mask_reference,
        cases=_padding_mask_cases,
        hint=(
            "compare positions with lengths: np.arange(seq_len)[None, :] < lengths[:, None] is "
            "(batch, seq_len), True at real tokens; add an axis in the middle with [:, None, :] "
            "so the mask broadcasts over the queries."
        ),
    )
)

register(
    Exercise(
        id="masking-2",
        title="masked softmax without NaN",
        reference=_masked_weights_reference,
        cases=_masked_weights_cases,
        hint=(
            "hidden entries must get weight exactly 0, and a row in which every key is hidden "
            "must be all zeros, not NaN and not uniform. Replace hidden scores by the row "
            "maximum of the allowed ones before np.exp, then multiply by the mask and divide "
            "only where the row sum is positive (np.divide(..., where=total > 0))."
        ),
    )
)

register(
    Exercise(
        id="masking-3",
        title="a loss that ignores padded positions",
        reference=_masked_mean_reference,
        cases=_masked_mean_cases,
        hint=(
            "outputs at padded query positions are garbage: leave them out. Build the "
            "(batch, seq) mask of real positions from lengths and average losses[mask] only, "
            "not losses.mean() over every position."
        ),
    )
)
