"""Exercises of chapter 5 (multi-head attention): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _split_heads_reference(X: np.ndarray, n_heads: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.split_heads(X, n_heads)  # (batch, heads, seq, d_head)


def _split_heads_cases() -> list[tuple]:
    gen = rng(51)
    return [
        (gen.normal(size=(1, 3, 4)), 2),
        (gen.normal(size=(2, 5, 12)), 3),
        (gen.normal(size=(2, 4, 16)), 4),  # seq = heads = d_head: a plain reshape fits the shape
        (gen.normal(size=(3, 2, 6)), 1),
    ]


def _merge_heads_reference(H: np.ndarray) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.merge_heads(H)  # (batch, seq, heads * d_head)


def _merge_heads_cases() -> list[tuple]:
    gen = rng(52)
    return [
        (gen.normal(size=(1, 2, 3, 2)),),
        (gen.normal(size=(2, 3, 5, 4)),),
        (gen.normal(size=(2, 4, 4, 4)),),  # seq = heads = d_head: a plain reshape fits the shape
    ]


def _multiply_adds_reference(seq: int, d_model: int, n_heads: int) -> int:
    from .. import experiments

    return sum(experiments.multi_head_multiply_adds(seq, d_model, n_heads).values())


register(
    Exercise(
        id="multi-head-1",
        title="split the features into heads",
        reference=_split_heads_reference,
        cases=_split_heads_cases,
        hint=(
            "reshape (batch, seq, d_model) to (batch, seq, n_heads, d_model // n_heads) first, "
            "then swap the seq and heads axes with .transpose(0, 2, 1, 3). Reshaping straight to "
            "(batch, n_heads, seq, d_head) gives the right shape but mixes positions into heads."
        ),
    )
)

register(
    Exercise(
        id="multi-head-2",
        title="merge the heads back",
        reference=_merge_heads_reference,
        cases=_merge_heads_cases,
        hint=(
            "swap the heads and seq axes back first, .transpose(0, 2, 1, 3), giving "
            "(batch, seq, heads, d_head), then reshape to (batch, seq, heads * d_head)."
        ),
    )
)

register(
    Exercise(
        id="multi-head-3",
        title="multiply-adds of multi-head self-attention",
        reference=_multiply_adds_reference,
        cases=lambda: [(4, 8, 2), (10, 64, 8), (128, 512, 1), (128, 512, 16), (1, 6, 3)],
        hint=(
            "(m, k) @ (k, n) costs m·k·n multiply-adds. Count the four projections "
            "(seq, d) @ (d, d), then per head the scores (seq, d/h) @ (d/h, seq) and the "
            "weighted sum (seq, seq) @ (seq, d/h), times n_heads heads."
        ),
    )
)
