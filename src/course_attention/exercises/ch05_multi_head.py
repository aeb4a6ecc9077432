"""Exercises of chapter 5 (multi-head attention): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng


def _split_heads_reference(X: np.ndarray, n_heads: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.split_heads(X, n_heads)  # (batch, heads, seq, d_head)


def _split_heads_cases() -> list[tuple]:
    gen = rng(51)
    return [
        (gen.normal(size=(1, 3, 6)), 2),
        (gen.normal(size=(2, 5, 12)), 3),
        (gen.normal(size=(2, 4, 16)), 4),  # seq = heads = d_head: a plain reshape fits the shape
        (gen.normal(size=(3, 2, 6)), 1),
    ]


def _split_shapes(X: np.ndarray, n_heads: int) -> tuple[int, int, int, int]:
    N, T, d = X.shape
    return N, T, n_heads, d // n_heads


SPLIT_MISTAKES = (
    Mistake(
        N_(
            "a reshape straight to (N, h, T, d/h) without the transpose: the shape fits, but each "
            "'head' holds consecutive tokens' features — reshape to (N, T, h, d/h), then transpose"
        ),
        lambda X, n_heads: X.reshape(X.shape[0], n_heads, X.shape[1], -1),
    ),
    Mistake(
        N_(
            "the reshape to (N, T, h, d/h) without the transpose: the heads axis must move in "
            "front of the positions, `.transpose(0, 2, 1, 3)`"
        ),
        lambda X, n_heads: X.reshape(*_split_shapes(X, n_heads)),
    ),
    Mistake(
        N_(
            "the features cut the wrong way: reshaped to (N, T, d/h, h), so head i takes every "
            "h-th feature instead of the block i·d/h … (i+1)·d/h − 1"
        ),
        lambda X, n_heads: X.reshape(X.shape[0], X.shape[1], -1, n_heads).transpose(0, 3, 1, 2),
    ),
    Mistake(
        N_(
            "the wrong axes transposed: `.transpose(0, 3, 1, 2)` moves the width d/h in front, not "
            "the heads — the transpose must swap axes 1 and 2 only"
        ),
        lambda X, n_heads: X.reshape(*_split_shapes(X, n_heads)).transpose(0, 3, 1, 2),
    ),
)


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


MERGE_MISTAKES = (
    Mistake(
        N_(
            "a merge without transposing back: `H.reshape(N, T, d)` re-reads (N, h, T, d/h) in "
            "memory order and mixes heads with positions — `.transpose(0, 2, 1, 3)` first"
        ),
        lambda H: H.reshape(H.shape[0], H.shape[2], -1),
    ),
    Mistake(
        N_(
            "the wrong axes transposed before the reshape: the features of the heads come out "
            "interleaved (feature j of every head, then j + 1, …) instead of head after head"
        ),
        lambda H: H.transpose(0, 2, 3, 1).reshape(H.shape[0], H.shape[2], -1),
    ),
    Mistake(
        N_(
            "the heads averaged (like PyTorch's head-averaged *weights*) instead of concatenated: "
            "the output must keep all h · d/h features"
        ),
        lambda H: H.mean(axis=1),
    ),
    Mistake(
        N_("the heads stacked along the positions, (N, h·T, d/h), instead of along the features"),
        lambda H: H.reshape(H.shape[0], -1, H.shape[-1]),
    ),
)


def _multiply_adds_reference(seq: int, d_model: int, n_heads: int) -> int:
    from .. import experiments

    return sum(experiments.multi_head_multiply_adds(seq, d_model, n_heads).values())


MULTIPLY_ADD_MISTAKES = (
    Mistake(
        N_(
            "the projections counted once (one (T, d) @ (d, d)) instead of four times: W_q, W_k, "
            "W_v and W_o each cost T·d²"
        ),
        lambda seq, d_model, n_heads: seq * d_model**2 + 2 * seq**2 * d_model,
    ),
    Mistake(
        N_("the output projection W_o forgotten: three projections instead of four"),
        lambda seq, d_model, n_heads: 3 * seq * d_model**2 + 2 * seq**2 * d_model,
    ),
    Mistake(
        N_(
            "the projections counted per head at full width (h · 4·T·d²): head i uses only d/h "
            "columns of each projection, so together the heads cost 4·T·d²"
        ),
        lambda seq, d_model, n_heads: 4 * n_heads * seq * d_model**2 + 2 * seq**2 * d_model,
    ),
    Mistake(
        N_("each head's scores and weighted sum counted at full width d instead of d/h"),
        lambda seq, d_model, n_heads: 4 * seq * d_model**2 + 2 * n_heads * seq**2 * d_model,
    ),
    Mistake(
        N_("only one head's scores and weighted sum counted (the factor h is missing)"),
        lambda seq, d_model, n_heads: 4 * seq * d_model**2 + 2 * seq**2 * (d_model // n_heads),
    ),
    Mistake(
        N_("the weighted sum (weights @ V) left out: only the scores counted"),
        lambda seq, d_model, n_heads: 4 * seq * d_model**2 + seq**2 * d_model,
    ),
)


register(
    Exercise(
        id="multi-head-1",
        title=N_("split the features into heads"),
        reference=_split_heads_reference,
        cases=_split_heads_cases,
        difficulty=2,
        minutes=10,
        mistakes=SPLIT_MISTAKES,
        hint=N_(
            "reshape (batch, seq, d_model) to (batch, seq, n_heads, d_model // n_heads) first, "
            "then swap the seq and heads axes with .transpose(0, 2, 1, 3). Reshaping straight to "
            "(batch, n_heads, seq, d_head) gives the right shape but mixes positions into heads."
        ),
        nudge=N_(
            "each head owns a contiguous slice of the d_model features of every token: split the "
            "last axis into (n_heads, d_head) first, and only then move the heads axis in front of "
            "seq."
        ),
    )
)

register(
    Exercise(
        id="multi-head-2",
        title=N_("merge the heads back"),
        reference=_merge_heads_reference,
        cases=_merge_heads_cases,
        difficulty=1,
        minutes=5,
        mistakes=MERGE_MISTAKES,
        hint=N_(
            "swap the heads and seq axes back first, .transpose(0, 2, 1, 3), giving "
            "(batch, seq, heads, d_head), then reshape to (batch, seq, heads * d_head)."
        ),
        nudge=N_(
            "it undoes split_heads: undo its steps in the reverse order."
        ),
    )
)

register(
    Exercise(
        id="multi-head-3",
        title=N_("multiply-adds of multi-head self-attention"),
        reference=_multiply_adds_reference,
        cases=lambda: [(4, 8, 4), (10, 64, 8), (128, 512, 1), (128, 512, 16), (1, 6, 3)],
        difficulty=2,
        minutes=10,
        mistakes=MULTIPLY_ADD_MISTAKES,
        hint=N_(
            "(m, k) @ (k, n) costs m·k·n multiply-adds. Count the four projections "
            "(seq, d) @ (d, d), then per head the scores (seq, d/h) @ (d/h, seq) and the "
            "weighted sum (seq, seq) @ (seq, d/h), times n_heads heads."
        ),
        nudge=N_(
            "an (m, k) @ (k, n) product costs m·k·n multiply-adds: list every matrix product of "
            "one multi-head layer with its shapes, the per-head ones included."
        ),
    )
)
