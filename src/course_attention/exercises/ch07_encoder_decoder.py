"""Exercises of chapter 7 (encoder–decoder): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from .core import Exercise, register, rng


def _shift_right_reference(labels: np.ndarray, bos_id: int) -> np.ndarray:
    bos = np.full((labels.shape[0], 1), bos_id, dtype=labels.dtype)  # (batch, 1)
    return np.concatenate([bos, labels[:, :-1]], axis=1)  # (batch, seq)


def _shift_right_cases() -> list[tuple]:
    gen = rng(71)
    return [
        (np.array([[8, 4, 7, 2]]), 1),
        (gen.integers(3, 13, size=(3, 6)), 1),
        (gen.integers(3, 13, size=(2, 1)), 1),
        (gen.integers(3, 13, size=(4, 5)), 0),
    ]


def _t5_masks_reference(n_src: int, n_tgt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ..viz.encoder_decoder import architecture_masks

    masks = architecture_masks(n_src, n_tgt)
    return (
        masks["T5 encoder: self"],  # (n_src, n_src)
        masks["T5 decoder: self (causal)"],  # (n_tgt, n_tgt)
        masks["T5 decoder: cross"],  # (n_tgt, n_src)
    )


def _cross_attention_reference(
    decoder_states: np.ndarray, memory: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    from .. import numpy_ref

    return numpy_ref.scaled_dot_product_attention(decoder_states, memory, memory)


def _cross_attention_cases() -> list[tuple]:
    gen = rng(73)
    return [
        (gen.normal(size=(2, 4)), gen.normal(size=(5, 4))),
        (gen.normal(size=(6, 8)), gen.normal(size=(3, 8))),
        (gen.normal(size=(1, 3)), gen.normal(size=(7, 3))),
    ]


register(
    Exercise(
        id="encoder-decoder-1",
        title="shift the targets right (teacher forcing)",
        reference=_shift_right_reference,
        cases=_shift_right_cases,
        hint=(
            "the decoder input at position t must be the target at t − 1: put a column of "
            "bos_id in front, (batch, 1), and drop the last column of labels, labels[:, :-1]. "
            "The result has the same shape as labels."
        ),
    )
)

register(
    Exercise(
        id="encoder-decoder-2",
        title="the three masks of an encoder–decoder",
        reference=_t5_masks_reference,
        cases=lambda: [(4, 3), (1, 1), (6, 2), (2, 5)],
        hint=(
            "encoder self-attention sees everything: np.ones((n_src, n_src), bool); decoder "
            "self-attention is causal: np.tril of ones (n_tgt, n_tgt); cross-attention lets every "
            "target query see every source key: np.ones((n_tgt, n_src), bool) — rows are queries."
        ),
    )
)

register(
    Exercise(
        id="encoder-decoder-3",
        title="cross-attention, one head",
        reference=_cross_attention_reference,
        cases=_cross_attention_cases,
        hint=(
            "queries come from the decoder, keys and values from the memory: "
            "scores = decoder_states @ memory.T / sqrt(d), shape (seq_t, seq_s); softmax over "
            "the last axis (the source positions); output = weights @ memory, shape (seq_t, d). "
            "Return (output, weights)."
        ),
    )
)
