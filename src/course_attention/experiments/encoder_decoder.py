"""Chapter 7's claims about what two small encoder–decoders learn, measured and asserted.

Introduced in chapter 7. The chapter trains one model to reverse digit strings and one to sort
them, then states what they learned. :func:`check_encoder_decoder_claims` asserts every such
statement; the chapter calls it on what its cells measured on the seed-0 models, and the tests
call it on :func:`measure_encoder_decoders` of models trained with seeds 0, 1 and 2
(:func:`train_seq2seq`), so a sentence that holds for one seed only fails a test.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "Seq2SeqRun",
    "train_seq2seq",
    "EncoderDecoderClaims",
    "measure_encoder_decoders",
    "check_encoder_decoder_claims",
]

#: The string the chapter decodes step by step.
DIGITS = "31415"
#: The same five digits in two orders, for the sorting model.
SORT_ORDERS = ("27183", "38172")
#: The lengths the chapter asks the reversal model about, outside the trained 3 … 8.
UNSEEN = (1, 2, 9, 10)


@dataclass(frozen=True)
class Seq2SeqRun:
    """One encoder–decoder trained on one task (chapter 7): the task, the model before and after."""

    task: Any  #: :class:`~course_attention.tasks.SequenceTask`
    untrained: Any  #: :class:`~course_attention.modules.Seq2SeqTransformer`, the initial weights
    model: Any  #: the same model after training
    losses: np.ndarray  #: ``(steps,)`` training loss after every step


def train_seq2seq(
    name: str = "reverse", seed: int = 0, steps: int = 200, lr: float = 1e-2, progress: bool = False
) -> Seq2SeqRun:
    """Train chapter 7's model on ``sequence_task(name)``: 2 + 2 layers, width 32, 4 heads.

    ``seed`` sets the initial weights (``torch.manual_seed``) and the order of the batches; the
    chapter's cells do the same with seed 0.
    """
    import torch

    from .. import modules, tasks, training

    task = tasks.sequence_task(name)
    torch.manual_seed(seed)
    model = modules.Seq2SeqTransformer(
        tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
    )
    untrained = copy.deepcopy(model)
    log = training.train(model, task, steps=steps, lr=lr, seed=seed, progress=progress)
    return Seq2SeqRun(task, untrained, model, log.losses)


@dataclass(frozen=True)
class EncoderDecoderClaims:
    """What chapter 7 measures on its two trained models, for :func:`check_encoder_decoder_claims`.

    Accuracies are exact-sequence shares of held-out strings, ``{length: share}``; alignments and
    shifts are :class:`~course_attention.inspection.Alignment` and
    :class:`~course_attention.inspection.OrderShift` of the last decoder layer unless named.
    """

    trained_lengths: tuple[int, ...]  #: the string lengths both models train on
    accuracy: dict[int, float]  #: reversal, trained lengths
    sort_accuracy: dict[int, float]  #: sorting, trained lengths
    unseen_accuracy: dict[int, float]  #: reversal, 1, 2, 9 and 10 digits
    typical_length: dict[int, int]  #: the reversal model's most common answer length
    losses: np.ndarray  #: ``(steps,)`` reversal training loss
    before: Any  #: alignment of the untrained reversal model
    after: Any  #: alignment of the trained reversal model
    first_layer: Any  #: the same, first decoder layer
    sort: Any  #: alignment of the sorting model
    shift_reverse: Any  #: order shift of the reversal model
    shift_sort: Any  #: order shift of the sorting model
    sort_looks_at: list[list[str]]  #: for 27183 and 38172, the source token each row reads most
    decode_top: list[int]  #: decoding 31415, the source position each step reads most


def measure_encoder_decoders(reverse: Seq2SeqRun, sort: Seq2SeqRun) -> EncoderDecoderClaims:
    """Measure, on a reversal and a sorting run, everything chapter 7 states about them."""
    import torch

    from .. import inspection, tasks, training

    rev, srt = reverse.task, sort.task
    probe_src, probe_tgt = tasks.strings_of_lengths("reverse", UNSEEN, n_per_length=100, seed=1)
    out = reverse.model.greedy_decode(
        torch.from_numpy(probe_src), tasks.BOS_ID, tasks.EOS_ID, max_steps=11
    )
    answer_len = np.array([len(tasks.decode_digits(row)) for row in out.tokens.tolist()])
    probe_len = (probe_src >= tasks.DIGIT_OFFSET).sum(axis=1)
    orders = [inspection.cross_attention_heads(sort.model, s, task="sort") for s in SORT_ORDERS]
    steps = inspection.decoding_steps(reverse.model, DIGITS)
    return EncoderDecoderClaims(
        trained_lengths=tuple(rev.lengths),
        accuracy=training.accuracy_by_length(reverse.model, rev.test_src, rev.test_tgt),
        sort_accuracy=training.accuracy_by_length(sort.model, srt.test_src, srt.test_tgt),
        unseen_accuracy=training.accuracy_by_length(reverse.model, probe_src, probe_tgt),
        typical_length={n: int(np.bincount(answer_len[probe_len == n]).argmax()) for n in UNSEEN},
        losses=np.asarray(reverse.losses),
        before=inspection.alignment(reverse.untrained, rev.test_src, rev.test_tgt),
        after=inspection.alignment(reverse.model, rev.test_src, rev.test_tgt),
        first_layer=inspection.alignment(reverse.model, rev.test_src, rev.test_tgt, layer=0),
        sort=inspection.alignment(sort.model, srt.test_src, srt.test_tgt),
        shift_reverse=inspection.order_shift(reverse.model, "reverse"),
        shift_sort=inspection.order_shift(sort.model, "sort"),
        sort_looks_at=[
            [o.keys[i] for i in o.weights[-1].mean(axis=0).argmax(axis=-1)] for o in orders
        ],
        decode_top=steps.weights.argmax(axis=-1).tolist(),
    )


def _check(condition: bool, claim: str, value: Any) -> None:
    if not condition:
        raise AssertionError(f"chapter 7 claims {claim}; measured {value}")


def check_encoder_decoder_claims(c: EncoderDecoderClaims) -> None:
    """Assert every statement chapter 7 makes about its trained models.

    Raises ``AssertionError`` naming the claim and the measured value when one does not hold.
    The chapter calls it on its seed-0 measurements; the tests on seeds 0, 1 and 2.
    """
    acc, srt = c.accuracy, c.sort_accuracy
    _check(
        min(acc.values()) >= 0.95 and np.mean(list(acc.values())) >= 0.99,
        "≥ 0.99 of held-out reversals right, no length below 0.95",
        acc,
    )
    ratio = float(c.losses[:10].mean() / c.losses[-10:].mean())
    _check(ratio > 20, "the loss of the last 10 steps is > 20 times below the first 10's", ratio)
    _check(
        c.after.mirror >= 0.7 and c.after.mirror > 4 * c.after.chance,
        "after training the largest weight lands on the mirrored position",
        c.after,
    )
    _check(
        abs(c.before.mirror - c.before.chance) < 0.1,
        "before training the mirrored position gets about what chance gives (±0.1)",
        c.before,
    )
    _check(
        c.first_layer.mirror < c.after.mirror / 1.5,
        "the second layer carries the alignment",
        (c.first_layer.mirror, c.after.mirror),
    )
    _check(
        c.after.ends > 0.75,
        "the [EOS] row puts most weight on the first digit and [EOS]",
        c.after.ends,
    )
    _check(
        min(srt.values()) >= 0.9 and np.mean(list(srt.values())) >= 0.98,
        "≥ 0.98 of held-out strings sorted right, no length below 0.9",
        srt,
    )
    answer = [*sorted(SORT_ORDERS[0]), "[EOS]"]
    on_digit = sum(a == b for a, b in zip(c.sort_looks_at[0], answer, strict=True))
    _check(
        c.sort_looks_at[0] == c.sort_looks_at[1] and on_digit >= len(answer) - 1,
        "in both orders each sorting row reads the same digit, the one it writes (≥ 5 of 6)",
        c.sort_looks_at,
    )
    _check(c.sort.digit >= 0.85, "the sorter reads a copy of the digit it writes", c.sort)
    _check(
        c.sort.mirror < 1.5 * c.sort.chance and c.sort.mirror < c.after.mirror / 3,
        "the sorter lands on the mirrored position < 1.5 × chance, far below the reverser",
        (c.sort, c.after.mirror),
    )
    _check(
        c.shift_reverse.by_position < c.shift_reverse.by_content / 3,
        "the reversal model reads by position",
        c.shift_reverse,
    )
    _check(
        c.shift_sort.by_content < c.shift_sort.by_position / 3,
        "the sorting model reads by content",
        c.shift_sort,
    )
    n = len(DIGITS)
    _check(
        c.decode_top[0] == n - 1 and bool((np.diff(c.decode_top[:n]) <= 0).all()),
        "decoding 31415 starts at the last digit and never moves right",
        c.decode_top,
    )
    # 1 digit: no claim. Only ten such strings exist, and how many come out right jumps between
    # runs (seed 2: none on one CPU's kernels, 4 of 10 on another's), so any claim about them
    # would have a margin smaller than what another computer moves it by.
    unseen = c.unseen_accuracy
    _check(
        max(unseen[k] for k in (9, 10)) < 0.5 <= unseen[2],
        "2 digits mostly right; 9 and 10 mostly wrong",
        unseen,
    )
    _check(
        c.typical_length[10] == max(c.trained_lengths),
        "most answers to 10 digits have the longest trained length",
        c.typical_length,
    )
