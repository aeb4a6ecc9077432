"""The digit tasks of chapter 7: strings of digits to reverse or sort, generated in code.

Token ids: ``PAD_ID``, ``BOS_ID``, ``EOS_ID``, then the digits 0–9 as ids 3–12. Every source
row has room for ``WIDTH`` digits, so one model can be asked about lengths it never trained on.
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
    "WIDTH",
    "TASKS",
    "SequenceTask",
    "encode_digits",
    "decode_digits",
    "sequence_task",
    "strings_of_lengths",
    "encode_source",
    "token_names",
]


#: Special token ids of the digit tasks; digits 0–9 are ids 3–12.
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
DIGIT_OFFSET = 3
VOCAB_SIZE = DIGIT_OFFSET + 10
#: Source rows are ``(WIDTH + 1,)`` and targets ``(WIDTH + 2,)``: the most digits a row holds.
WIDTH = 10


@dataclass(frozen=True)
class SequenceTask:
    """A toy sequence-to-sequence task on digit strings, generated in code (chapter 7).

    ``src`` ``(n, width + 1)``: digit ids, EOS, then PAD. ``tgt`` ``(n, width + 2)``: BOS,
    the answer's digit ids, EOS, then PAD. ``lengths`` are the string lengths trained on
    (``min_len … max_len``); every one of them is in the held-out set too, and no string is in
    both sets.
    """

    name: str
    train_src: np.ndarray
    train_tgt: np.ndarray
    test_src: np.ndarray
    test_tgt: np.ndarray
    lengths: tuple[int, ...] = ()


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


def _check_name(name: str) -> None:
    if name not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {name!r}")


def _encode_rows(
    name: str, rows: Sequence[Sequence[int]], width: int
) -> tuple[np.ndarray, np.ndarray]:
    """Digit strings → sources ``(n, width + 1)`` and targets ``(n, width + 2)``."""
    src = np.full((len(rows), width + 1), PAD_ID, dtype=np.int64)
    tgt = np.full((len(rows), width + 2), PAD_ID, dtype=np.int64)
    for i, s in enumerate(rows):
        src[i, : len(s) + 1] = [*(np.asarray(s, dtype=np.int64) + DIGIT_OFFSET), EOS_ID]
        answer = np.asarray(TASKS[name](list(s)), dtype=np.int64) + DIGIT_OFFSET
        tgt[i, : len(s) + 2] = [BOS_ID, *answer, EOS_ID]
    return src, tgt


def _distinct_strings(rng: np.random.Generator, length: int, n: int) -> list[list[int]]:
    """``n`` different digit strings of ``length`` digits (all of them, in random order, when
    there are at most ``n``)."""
    n = min(n, 10**length)
    numbers = rng.choice(10**length, size=n, replace=False)
    return [[int(c) for c in f"{x:0{length}d}"] for x in numbers.tolist()]


def _split_evenly(total: int, capacities: Sequence[int]) -> list[int]:
    """Share ``total`` between bins as evenly as their ``capacities`` allow (smallest first)."""
    shares = [0] * len(capacities)
    order = sorted(range(len(capacities)), key=lambda i: capacities[i])
    left = total
    for k, i in enumerate(order):
        fair = -(-left // (len(order) - k))  # ceil: the remainder goes to the first bins
        shares[i] = min(fair, capacities[i])
        left -= shares[i]
    return shares


def sequence_task(
    name: str = "reverse",
    n_train: int = 20000,
    n_test: int = 600,
    min_len: int = 3,
    max_len: int = 8,
    width: int = WIDTH,
    seed: int = 0,
) -> SequenceTask:
    """Random digit strings and their reversal (``"reverse"``) or sorted form (``"sort"``).

    Introduced in chapter 7. Each length ``min_len … max_len`` gets an equal share of the
    ``n_test`` held-out strings; the ``n_train`` training strings are shared between the lengths
    as evenly as the strings that are left allow (there are only 1000 strings of 3 digits). Within
    a length the strings are drawn without replacement, so train and held-out never overlap.
    Rows are padded to ``width`` digits (``width ≥ max_len``), so the same model can be asked about
    longer strings. Train rows are shuffled; held-out rows are sorted by length.
    """
    _check_name(name)
    if not 1 <= min_len <= max_len <= width:
        raise ValueError(f"need 1 ≤ min_len ≤ max_len ≤ width; got {min_len}, {max_len}, {width}")
    lengths = list(range(min_len, max_len + 1))
    if n_test < len(lengths) or n_train < 1:
        raise ValueError(
            f"need n_train ≥ 1 and n_test ≥ one string per length ({len(lengths)}); "
            f"got {n_train}, {n_test}"
        )
    tests = _split_evenly(n_test, [10**length // 2 for length in lengths])
    trains = _split_evenly(
        n_train, [10**length - t for length, t in zip(lengths, tests, strict=True)]
    )
    if sum(trains) < n_train or sum(tests) < n_test:
        raise ValueError(
            f"lengths {min_len} … {max_len} have too few distinct strings for {n_train} + {n_test}"
        )
    rng = np.random.default_rng(seed)
    train_rows: list[list[int]] = []
    test_rows: list[list[int]] = []
    for length, n_tr, n_te in zip(lengths, trains, tests, strict=True):
        strings = _distinct_strings(rng, length, n_tr + n_te)
        test_rows += strings[:n_te]
        train_rows += strings[n_te:]
    train_rows = [train_rows[i] for i in rng.permutation(len(train_rows))]
    train_src, train_tgt = _encode_rows(name, train_rows, width)
    test_src, test_tgt = _encode_rows(name, test_rows, width)
    return SequenceTask(name, train_src, train_tgt, test_src, test_tgt, tuple(lengths))


def strings_of_lengths(
    name: str,
    lengths: Sequence[int],
    n_per_length: int = 100,
    width: int = WIDTH,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Up to ``n_per_length`` different strings of each length (all of them when there are fewer:
    10 of 1 digit, 100 of 2) and their answers, to test a model on lengths it never trained on.

    Introduced in chapter 7. Returns sources ``(n, width + 1)`` and targets ``(n, width + 2)``,
    as in :class:`~course_attention.tasks.SequenceTask`, sorted by length.
    """
    _check_name(name)
    if not lengths or any(not 1 <= n <= width for n in lengths) or n_per_length < 1:
        raise ValueError(
            f"need lengths in 1 … width={width} and n_per_length ≥ 1; got {list(lengths)}, "
            f"{n_per_length}"
        )
    rng = np.random.default_rng(seed)
    rows = [s for n in lengths for s in _distinct_strings(rng, n, n_per_length)]
    return _encode_rows(name, rows, width)


def encode_source(
    digits: str | Sequence[int], max_len: int = WIDTH, min_len: int = 1
) -> np.ndarray:
    """A typed digit string (``"31415"``) → a source row ``(1, max_len + 1)``: digits, EOS, PAD.

    Raises ``ValueError`` for characters that are not digits or a length outside
    ``min_len … max_len``.
    """
    if isinstance(digits, str):
        if not digits.isdigit():
            raise ValueError(f"type digits 0-9 only; got {digits!r}")
        digits = [int(c) for c in digits]
    digits = list(digits)
    if not min_len <= len(digits) <= max_len:
        raise ValueError(f"the model reads {min_len} … {max_len} digits; got {len(digits)}")
    row = encode_digits(digits, max_len + 1)
    row[len(digits)] = EOS_ID
    return row[None, :]


_SPECIAL_NAMES = {PAD_ID: "[PAD]", BOS_ID: "[BOS]", EOS_ID: "[EOS]"}


def token_names(ids: Sequence[int]) -> list[str]:
    """Ids of the digit tasks → readable names ``(seq,)``: ``"[BOS]"``, ``"7"``, ``"[EOS]"``…"""
    return [_SPECIAL_NAMES.get(int(i), str(int(i) - DIGIT_OFFSET)) for i in ids]
