"""Looking inside a trained model: attention maps and step-by-step decoding (chapter 7).

Helpers for the chapters' heatmaps and decoding sliders; the models come from
:mod:`course_attention.modules`, the tasks from :mod:`course_attention.tasks`. Also
:func:`agreement`, the words in which the prose says how two computations of the same numbers
agree (chapter 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import (
    BOS_ID,
    DIGIT_OFFSET,
    EOS_ID,
    PAD_ID,
    TASKS,
    WIDTH,
    decode_digits,
    encode_source,
    token_names,
)

__all__ = [
    "AttentionMap",
    "cross_attention_map",
    "AttentionHeads",
    "cross_attention_heads",
    "Alignment",
    "alignment",
    "OrderShift",
    "order_shift",
    "DecodingSteps",
    "decoding_steps",
    "agreement",
]


@dataclass(frozen=True)
class AttentionMap:
    """Cross-attention weights ``(seq_t, seq_s)`` with their query and key names (chapter 7)."""

    weights: np.ndarray
    queries: list[str]
    keys: list[str]


def _layer_index(model: Any, layer: int) -> int:
    n = len(model.decoder)
    if not -n <= layer < n:
        raise ValueError(f"layer={layer} is not an index into {n} decoder layers")
    return layer % n


def _teacher_forced_cross(model: Any, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """Cross-attention of every decoder layer and head with the correct answer fed in.

    ``src`` ``(batch, seq_s)``, ``tgt`` ``(batch, seq_t + 1)`` as in
    :class:`~course_attention.tasks.SequenceTask` → ``(batch, layers, heads, seq_t, seq_s)``.
    """
    import torch

    with torch.no_grad():
        src_t = torch.from_numpy(np.ascontiguousarray(src))
        memory, _ = model.encode(src_t, need_weights=False)
        _, cross = model.decode(torch.from_numpy(np.ascontiguousarray(tgt[:, :-1])), memory, src_t)
    return torch.stack(cross, dim=1).double().numpy()


def _answer_rows(digits: str | Sequence[int], task: str) -> tuple[np.ndarray, np.ndarray, int]:
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {task!r}")
    src = encode_source(digits)  # (1, WIDTH + 1)
    n = int((src[0] != PAD_ID).sum())  # digits + EOS
    answer = np.asarray(TASKS[task](decode_digits(src[0])), dtype=np.int64) + DIGIT_OFFSET
    tgt = np.concatenate([[BOS_ID], answer, [EOS_ID]])[None, :]  # (1, n + 1)
    return src, tgt, n


@dataclass(frozen=True)
class AttentionHeads:
    """Cross-attention of every decoder layer and head ``(layers, heads, seq_t, seq_s)``, with
    the query and key names (chapter 7)."""

    weights: np.ndarray
    queries: list[str]
    keys: list[str]


def cross_attention_heads(
    model: Any, digits: str | Sequence[int], task: str = "reverse"
) -> AttentionHeads:
    """Teacher-forced cross-attention of every decoder layer and head for one digit string.

    Introduced in chapter 7. The decoder reads ``[BOS]`` and the correct answer of ``task`` (so
    an untrained and a trained model get the same rows); row ``t`` is where a head looked in the
    source when predicting answer token ``t`` (the last row predicts ``[EOS]``). Only the real
    source tokens (digits and ``[EOS]``) are kept: ``weights``
    ``(layers, heads, len(digits) + 1, len(digits) + 1)``.
    """
    src, tgt, n = _answer_rows(digits, task)
    weights = _teacher_forced_cross(model, src, tgt)[0, ..., :n]  # (layers, heads, n, n)
    return AttentionHeads(weights, token_names(tgt[0, :-1]), token_names(src[0, :n]))


def cross_attention_map(
    model: Any, digits: str | Sequence[int], task: str = "reverse", layer: int = -1
) -> AttentionMap:
    """Teacher-forced cross-attention of one decoder layer, averaged over heads (chapter 7).

    The rows and columns of :func:`cross_attention_heads`, for one ``layer``:
    ``weights`` ``(len(digits) + 1, len(digits) + 1)``.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {task!r}")
    layer = _layer_index(model, layer)
    heads = cross_attention_heads(model, digits, task)
    return AttentionMap(heads.weights[layer].mean(axis=0), heads.queries, heads.keys)


@dataclass(frozen=True)
class Alignment:
    """Where the largest cross-attention weight of each digit row lands (chapter 7).

    ``mirror``: share of rows whose largest weight is on the mirrored position (row ``t`` of an
    ``n``-digit string → source position ``n − 1 − t``: reversal by position). ``digit``: share
    whose largest weight is on a source position that holds the digit being written (look-up by
    content). ``chance``: the share a uniformly random position would get, ``mean(1 / (n + 1))``.
    ``ends``: the mean weight that the row writing ``[EOS]`` puts on the first source digit and
    the source's ``[EOS]`` together.
    """

    mirror: float
    digit: float
    chance: float
    ends: float


def alignment(model: Any, src: np.ndarray, tgt: np.ndarray, layer: int = -1) -> Alignment:
    """Score the cross-attention of one ``layer`` (averaged over heads) on many strings.

    Introduced in chapter 7. ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in
    :class:`~course_attention.tasks.SequenceTask`; the correct answer is fed in (teacher forcing)
    and only the rows that write a digit are scored.
    """
    src, tgt = np.asarray(src), np.asarray(tgt)
    if src.ndim != 2 or tgt.ndim != 2 or len(src) != len(tgt) or not len(src):
        raise ValueError(
            f"need src (n, seq_s) and tgt (n, seq_t), n ≥ 1; got {src.shape}, {tgt.shape}"
        )
    layer = _layer_index(model, layer)
    weights = _teacher_forced_cross(model, src, tgt)[:, layer].mean(axis=1)  # (n, seq_t, seq_s)
    mirror, digit, chance, ends = [], [], [], []
    for w, s, t in zip(weights, src, tgt, strict=True):
        n = len(decode_digits(s))
        top = w[:n].argmax(axis=-1)  # (n,): the rows that write the n digits
        mirror += list(top == np.arange(n)[::-1])
        digit += list(s[top] == t[1 : n + 1])
        chance.append(1 / (n + 1))
        ends.append(w[n, 0] + w[n, n])  # row n writes [EOS]; source position n holds [EOS]
    return Alignment(*(float(np.mean(x)) for x in (mirror, digit, chance, ends)))


@dataclass(frozen=True)
class OrderShift:
    """How much cross-attention moves when the source digits are shuffled (chapter 7).

    Both numbers are the share of a row's weight that sits elsewhere (half the L1 distance,
    averaged over rows and strings, between 0 and 1): ``by_position`` compares the two maps
    column by column, ``by_content`` after matching each column to the same digit.
    Attention that reads by position has a small ``by_position``; by content, a small
    ``by_content``.
    """

    by_position: float
    by_content: float


def order_shift(
    model: Any,
    task: str,
    n_strings: int = 100,
    n_digits: int = 5,
    layer: int = -1,
    seed: int = 0,
) -> OrderShift:
    """Feed strings of ``n_digits`` different digits, then the same digits shuffled.

    Introduced in chapter 7. Teacher-forced cross-attention of one ``layer``, averaged over
    heads, for ``n_strings`` random strings ``(n_digits,)`` and a random reordering of each.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {task!r}")
    if not 2 <= n_digits <= 10 or n_strings < 1:
        raise ValueError(f"need 2 ≤ n_digits ≤ 10 and n_strings ≥ 1; got {n_digits}, {n_strings}")
    layer = _layer_index(model, layer)
    rng = np.random.default_rng(seed)
    first = [rng.permutation(10)[:n_digits] for _ in range(n_strings)]
    orders = [rng.permutation(n_digits) for _ in range(n_strings)]
    second = [s[o] for s, o in zip(first, orders, strict=True)]
    maps = []
    for strings in (first, second):
        rows = [_answer_rows(list(s), task) for s in strings]
        src = np.concatenate([r[0] for r in rows])
        tgt = np.concatenate([r[1] for r in rows])
        maps.append(_teacher_forced_cross(model, src, tgt)[:, layer].mean(axis=1))
    a, b = (m[..., : n_digits + 1] for m in maps)  # (n_strings, n_digits + 1, n_digits + 1)
    matched = np.empty_like(b)  # column j of b holds the digit of column orders[j] of a
    for i, o in enumerate(orders):
        matched[i][:, [*o, n_digits]] = b[i]
    return OrderShift(
        float(np.abs(a - b).sum(axis=-1).mean() / 2),
        float(np.abs(a - matched).sum(axis=-1).mean() / 2),
    )


@dataclass(frozen=True)
class DecodingSteps:
    """Greedy decoding, one step at a time (chapter 7).

    ``source`` names the real source tokens ``(seq_s,)``; ``tokens`` names the generated tokens
    ``(steps,)``; ``weights`` ``(steps, seq_s)`` is the cross-attention row (one decoder layer,
    averaged over heads) of the query that chose each token.
    """

    source: list[str]
    tokens: list[str]
    weights: np.ndarray


def decoding_steps(
    model: Any,
    digits: str | Sequence[int],
    layer: int = -1,
    lengths: Sequence[int] = (1, WIDTH),
) -> DecodingSteps:
    """Greedy-decode the typed ``digits`` and keep each step's cross-attention (chapter 7).

    Raises ``ValueError`` (from :func:`~course_attention.tasks.encode_source`) for input that is
    not ``lengths[0] … lengths[-1]`` digits (default: every length a source row can hold).
    """
    import torch

    layer = _layer_index(model, layer)
    src = encode_source(digits, min_len=min(lengths), max_len=WIDTH)  # (1, WIDTH + 1)
    n_digits = len(decode_digits(src[0]))
    if n_digits > max(lengths):
        raise ValueError(f"the model reads {min(lengths)} … {max(lengths)} digits; got {n_digits}")
    n = int((src[0] != PAD_ID).sum())
    out = model.greedy_decode(
        torch.from_numpy(src), BOS_ID, EOS_ID, max_steps=src.shape[1], return_attention=True
    )
    rows = [step[layer, 0].mean(dim=0)[:n] for step in out.cross_attention]  # (seq_s,) each
    weights = torch.stack(rows).double().numpy()  # (steps, seq_s)
    return DecodingSteps(token_names(src[0, :n]), token_names(out.tokens[0].tolist()), weights)


def agreement(gap: float, tol: float = 1e-12) -> str:
    """How two computations of the same numbers agree, in the words the prose glues (chapter 5).

    ``gap`` is their largest absolute difference. An exact 0 gives ``"exactly the same
    numbers"``; a gap above 0 and below ``tol`` (far above float64 rounding for numbers of order
    1, far below any real mistake) gives ``"the same numbers up to 4.4e-16, rounding error"``,
    with the gap in place of 4.4e-16. Whether two correct computations round alike depends on the
    CPU and the libraries, so a chapter glues the phrase its own run chose (``ca.glue_varies``).
    Raises ``ValueError`` for a gap that is negative, not finite, or not below ``tol``: that is
    no rounding error. The words are in the book's language (中文版).
    """
    from .i18n import _

    gap = float(gap)
    if not (np.isfinite(gap) and 0 <= gap < tol):
        raise ValueError(f"need 0 ≤ gap < tol = {tol:g}, a rounding error at most; got {gap!r}")
    if gap == 0:
        return _("exactly the same numbers")
    return _("the same numbers up to {gap:.1e}, rounding error").format(gap=gap)
