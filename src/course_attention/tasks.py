"""The digit tasks of chapter 7: strings of digits to reverse or sort, generated in code.

Token ids: ``PAD_ID``, ``BOS_ID``, ``EOS_ID``, then the digits 0–9 as ids 3–12.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PAD_ID",
    "BOS_ID",
    "EOS_ID",
    "DIGIT_OFFSET",
    "VOCAB_SIZE",
    "TASKS",
    "SequenceTask",
    "encode_digits",
    "decode_digits",
    "sequence_task",
    "encode_source",
    "token_names",
]


#: Special token ids of the digit tasks; digits 0–9 are ids 3–12.
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
DIGIT_OFFSET = 3
VOCAB_SIZE = DIGIT_OFFSET + 10


@dataclass(frozen=True)
class SequenceTask:
    """A toy sequence-to-sequence task on digit strings, generated in code (chapter 7).

    ``src`` ``(n, max_len + 1)``: digit ids, EOS, then PAD. ``tgt`` ``(n, max_len + 2)``: BOS,
    the answer's digit ids, EOS, then PAD. Train and held-out sequences never overlap.
    """

    name: str
    train_src: np.ndarray
    train_tgt: np.ndarray
    test_src: np.ndarray
    test_tgt: np.ndarray


def encode_digits(digits: Sequence[int], length: int) -> np.ndarray:
    """Digit list → ids padded to ``length`` ``(length,)``."""
    if any(not 0 <= d <= 9 for d in digits):
        raise ValueError(f"digits must lie in 0 … 9; got {list(digits)}")
    if len(digits) > length:
        raise ValueError(f"{len(digits)} digits do not fit in length {length}")
    ids = np.full(length, PAD_ID, dtype=np.int64)
    ids[: len(digits)] = np.asarray(digits, dtype=np.int64) + DIGIT_OFFSET
    return ids


def decode_digits(ids: Sequence[int]) -> list[int]:
    """Ids → digits, stopping at the first EOS_ID or PAD_ID (BOS_ID is skipped)."""
    digits = []
    for i in map(int, ids):
        if i in (EOS_ID, PAD_ID):
            break
        if i >= DIGIT_OFFSET:
            digits.append(i - DIGIT_OFFSET)
    return digits


TASKS = {"reverse": lambda d: d[::-1], "sort": sorted}


def sequence_task(
    name: str = "reverse",
    n_train: int = 20000,
    n_test: int = 500,
    min_len: int = 3,
    max_len: int = 8,
    seed: int = 0,
) -> SequenceTask:
    """Random digit strings and their reversal (``"reverse"``) or sorted form (``"sort"``)."""
    if name not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {name!r}")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 ≤ min_len ≤ max_len; got {min_len}, {max_len}")
    rng = np.random.default_rng(seed)
    seen: set[tuple[int, ...]] = set()
    rows: list[tuple[int, ...]] = []
    while len(rows) < n_train + n_test:
        seq = tuple(rng.integers(0, 10, size=rng.integers(min_len, max_len + 1)).tolist())
        if seq not in seen:
            seen.add(seq)
            rows.append(seq)
    width = max_len + 1
    src = np.full((len(rows), width), PAD_ID, dtype=np.int64)
    tgt = np.full((len(rows), width + 1), PAD_ID, dtype=np.int64)
    for i, s in enumerate(rows):
        src[i, : len(s) + 1] = [*(np.asarray(s) + DIGIT_OFFSET), EOS_ID]
        answer = np.asarray(TASKS[name](list(s))) + DIGIT_OFFSET
        tgt[i, : len(s) + 2] = [BOS_ID, *answer, EOS_ID]
    return SequenceTask(name, src[:n_train], tgt[:n_train], src[n_train:], tgt[n_train:])


def encode_source(digits: str | Sequence[int], max_len: int = 8) -> np.ndarray:
    """A typed digit string (``"31415"``) → a source row ``(1, max_len + 1)``: digits, EOS, PAD.

    Raises ``ValueError`` for characters that are not digits or a length outside 1 … max_len.
    """
    if isinstance(digits, str):
        if not digits.isdigit():
            raise ValueError(f"type digits 0-9 only; got {digits!r}")
        digits = [int(c) for c in digits]
    digits = list(digits)
    if not 1 <= len(digits) <= max_len:
        raise ValueError(f"the model reads 1 … {max_len} digits; got {len(digits)}")
    row = encode_digits(digits, max_len + 1)
    row[len(digits)] = EOS_ID
    return row[None, :]


_SPECIAL_NAMES = {PAD_ID: "[PAD]", BOS_ID: "[BOS]", EOS_ID: "[EOS]"}


def token_names(ids: Sequence[int]) -> list[str]:
    """Ids of the digit tasks → readable names ``(seq,)``: ``"[BOS]"``, ``"7"``, ``"[EOS]"``…"""
    return [_SPECIAL_NAMES.get(int(i), str(int(i) - DIGIT_OFFSET)) for i in ids]
