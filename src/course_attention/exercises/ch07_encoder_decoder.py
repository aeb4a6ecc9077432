"""Exercises of chapter 7 (encoder–decoder): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng


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


def _bos_column(labels: np.ndarray, bos_id: int) -> np.ndarray:
    return np.full((labels.shape[0], 1), bos_id, dtype=labels.dtype)  # (batch, 1)


SHIFT_RIGHT_MISTAKES = (
    Mistake(
        N_(
            "shifted left (`labels[:, 1:]`, bos_id at the end): position t would read the very "
            "token it must predict"
        ),
        lambda labels, bos_id: np.concatenate([labels[:, 1:], _bos_column(labels, bos_id)], 1),
    ),
    Mistake(
        N_("bos_id appended at the end instead of put in front"),
        lambda labels, bos_id: np.concatenate([labels[:, :-1], _bos_column(labels, bos_id)], 1),
    ),
    Mistake(
        N_("the first label dropped instead of the last (`labels[:, 1:]` after bos_id)"),
        lambda labels, bos_id: np.concatenate([_bos_column(labels, bos_id), labels[:, 1:]], 1),
    ),
    Mistake(
        N_("bos_id put in front but the last label kept: one column too many"),
        lambda labels, bos_id: np.concatenate([_bos_column(labels, bos_id), labels], 1),
    ),
    Mistake(
        N_(
            "`np.roll(labels, 1, axis=1)`: the last label wraps around to the front where bos_id "
            "belongs"
        ),
        lambda labels, bos_id: np.roll(labels, 1, axis=1),
    ),
    Mistake(
        N_(
            "`np.roll(labels, 1)` without `axis`: numpy rolls the flattened array, so the last "
            "label of each row moves to the front of the next row (the batch's very last label to "
            "the front of the first) and no bos_id is put in — roll along `axis=1`, then set "
            "column 0 to bos_id"
        ),
        lambda labels, bos_id: np.roll(labels, 1),
    ),
    Mistake(
        N_("shifted along the batch axis (axis 0) instead of the sequence axis (axis 1)"),
        lambda labels, bos_id: np.concatenate(
            [np.full((1, labels.shape[1]), bos_id, dtype=labels.dtype), labels[:-1]], axis=0
        ),
    ),
)


def _t5_masks_reference(n_src: int, n_tgt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ..viz.encoder_decoder import architecture_masks

    masks = architecture_masks(n_src, n_tgt)
    return (
        masks["T5 encoder: self"],  # (n_src, n_src)
        masks["T5 decoder: self (causal)"],  # (n_tgt, n_tgt)
        masks["T5 decoder: cross"],  # (n_tgt, n_src)
    )


def _ones(rows: int, cols: int) -> np.ndarray:
    return np.ones((rows, cols), dtype=bool)


T5_MASKS_MISTAKES = (
    Mistake(
        N_(
            "a causal mask on cross-attention too (`np.tril` of the (n_tgt, n_src) rectangle): the "
            "source exists in full before decoding starts, so every target query may read every "
            "source key"
        ),
        lambda n_src, n_tgt: (
            _ones(n_src, n_src),
            np.tril(_ones(n_tgt, n_tgt)),
            np.tril(_ones(n_tgt, n_src)),
        ),
    ),
    Mistake(
        N_(
            "the cross-attention mask transposed, (n_src, n_tgt): its rows are the decoder's "
            "queries, its columns the encoder's keys"
        ),
        lambda n_src, n_tgt: (
            _ones(n_src, n_src),
            np.tril(_ones(n_tgt, n_tgt)),
            _ones(n_src, n_tgt),
        ),
    ),
    Mistake(
        N_(
            "the decoder's self-attention left bidirectional (all True): with teacher forcing, "
            "position t would read the token it must predict"
        ),
        lambda n_src, n_tgt: (_ones(n_src, n_src), _ones(n_tgt, n_tgt), _ones(n_tgt, n_src)),
    ),
    Mistake(
        N_("the encoder made causal (`np.tril`): the encoder reads the whole source, both ways"),
        lambda n_src, n_tgt: (
            np.tril(_ones(n_src, n_src)),
            np.tril(_ones(n_tgt, n_tgt)),
            _ones(n_tgt, n_src),
        ),
    ),
    Mistake(
        N_(
            "the upper triangle (`np.triu`) for the decoder: each position would see its future "
            "and not its past"
        ),
        lambda n_src, n_tgt: (
            _ones(n_src, n_src),
            np.triu(_ones(n_tgt, n_tgt)),
            _ones(n_tgt, n_src),
        ),
    ),
)


def _cross_attention_reference(
    decoder_states: np.ndarray, memory: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    from .. import numpy_ref

    return numpy_ref.scaled_dot_product_attention(decoder_states, memory, memory)


def _cross_attention_cases() -> list[tuple]:
    gen = rng(73)
    return [
        # equal lengths first: "keys from the decoder" only runs (and is named) when they match
        (gen.normal(size=(4, 4)), gen.normal(size=(4, 4))),
        (gen.normal(size=(2, 4)), gen.normal(size=(5, 4))),
        (gen.normal(size=(6, 8)), gen.normal(size=(3, 8))),
        (gen.normal(size=(1, 3)), gen.normal(size=(7, 3))),
        # scores in the thousands: np.exp overflows unless each row's maximum is subtracted
        (40.0 * gen.normal(size=(3, 4)), 40.0 * gen.normal(size=(5, 4))),
    ]


def _attend(Q: np.ndarray, K: np.ndarray, V: np.ndarray, scale: float, axis: int = -1) -> tuple:
    from .. import numpy_ref

    weights = numpy_ref.softmax(Q @ K.T * scale, axis=axis)  # (seq_q, seq_k)
    return weights @ V, weights


def _naive_attend(Q: np.ndarray, K: np.ndarray, scale: float) -> tuple:
    e = np.exp(Q @ K.T * scale)  # no maximum subtracted: large scores give inf / inf = NaN
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ K, weights


CROSS_ATTENTION_MISTAKES = (
    Mistake(
        N_(
            "self-attention on the decoder states: keys and values must come from the memory "
            "(the encoder's output)"
        ),
        lambda y, m: _attend(y, y, y, 1 / np.sqrt(y.shape[-1])),
    ),
    Mistake(
        N_("the keys taken from the decoder states (only the values from the memory)"),
        lambda y, m: _attend(y, y, m, 1 / np.sqrt(y.shape[-1])),
    ),
    Mistake(
        N_("the roles swapped: queries from the memory, keys and values from the decoder"),
        lambda y, m: _attend(m, y, y, 1 / np.sqrt(y.shape[-1])),
    ),
    Mistake(
        N_("the scores divided by d instead of √d"),
        lambda y, m: _attend(y, m, m, 1 / y.shape[-1]),
    ),
    Mistake(N_("the scores not scaled by 1/√d"), lambda y, m: _attend(y, m, m, 1.0)),
    Mistake(
        N_("softmax over the decoder positions (axis 0) instead of the source positions (axis -1)"),
        lambda y, m: _attend(y, m, m, 1 / np.sqrt(y.shape[-1]), axis=0),
    ),
    Mistake(
        N_(
            "no maximum subtracted before `np.exp`: large scores overflow to inf, and inf / inf is "
            "NaN — subtract each row's maximum first"
        ),
        lambda y, m: _naive_attend(y, m, 1 / np.sqrt(y.shape[-1])),
    ),
)


register(
    Exercise(
        id="encoder-decoder-1",
        title=N_("shift the targets right (teacher forcing)"),
        reference=_shift_right_reference,
        cases=_shift_right_cases,
        difficulty=1,
        minutes=5,
        mistakes=SHIFT_RIGHT_MISTAKES,
        hint=N_(
            "the decoder input at position t must be the target at t − 1: put a column of "
            "bos_id in front, (batch, 1), and drop the last column of labels, labels[:, :-1]. "
            "The result has the same shape as labels."
        ),
        nudge=N_(
            "with teacher forcing the decoder reads, at position t, the target of position t − 1; "
            "at position 0 there is no earlier target, so it reads bos_id."
        ),
    )
)

register(
    Exercise(
        id="encoder-decoder-2",
        title=N_("the three masks of an encoder–decoder"),
        reference=_t5_masks_reference,
        cases=lambda: [(4, 3), (1, 1), (6, 2), (2, 5)],
        difficulty=1,
        minutes=5,
        mistakes=T5_MASKS_MISTAKES,
        hint=N_(
            "encoder self-attention sees everything: np.ones((n_src, n_src), bool); decoder "
            "self-attention is causal: np.tril of ones (n_tgt, n_tgt); cross-attention lets every "
            "target query see every source key: np.ones((n_tgt, n_src), bool) — rows are queries."
        ),
        nudge=N_(
            "one mask per attention, rows are queries and columns keys: may the encoder see later "
            "source tokens? may the decoder see later target tokens? what may a target query see "
            "of the source?"
        ),
    )
)

register(
    Exercise(
        id="encoder-decoder-3",
        title=N_("cross-attention, one head"),
        reference=_cross_attention_reference,
        cases=_cross_attention_cases,
        difficulty=2,
        minutes=10,
        mistakes=CROSS_ATTENTION_MISTAKES,
        hint=N_(
            "queries come from the decoder, keys and values from the memory: "
            "scores = decoder_states @ memory.T / sqrt(d), shape (seq_t, seq_s); softmax over "
            "the last axis (the source positions); output = weights @ memory, shape (seq_t, d). "
            "Return (output, weights)."
        ),
        nudge=N_(
            "cross-attention is chapter 2's attention with the queries from the decoder and the "
            "keys and values from the memory."
        ),
    )
)
