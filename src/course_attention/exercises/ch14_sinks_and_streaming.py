"""Exercises of chapter 14 (sinks, windows and streaming): a softmax with a learned sink logit,
the positions a StreamingLLM cache keeps, soft-capping inside attention, and the cache bytes of a
stack of local and global layers.

Introduced in chapter 14. The learner writes numpy in float64 (or plain Python); each reference
is the package's own code (:func:`course_attention.sinks.softmax_with_sink`,
:func:`course_attention.sinks.streaming.kept_positions`, :func:`course_attention.sinks.soft_cap`
with :func:`course_attention.numpy_ref.softmax`, :func:`course_attention.sinks.cache_bytes` of
:func:`course_attention.sinks.layer_pattern`), and ``tests/test_exercises_sinks.py`` checks that
they equal what :class:`~course_attention.modern.ModernAttention`, the
:class:`~course_attention.sinks.streaming.StreamingCache` and Hugging Face's configs hold.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import ErrorHint, Exercise, Mistake, register, rng

# --- 1: a softmax with a sink logit -------------------------------------------------------------


def _sink_reference(scores: np.ndarray, sink_logits: np.ndarray) -> np.ndarray:
    """``(heads, seq_q, seq_k)``: :func:`~course_attention.sinks.softmax_with_sink` of
    ``scores`` ``(heads, seq_q, seq_k)`` and one sink logit per head ``(heads,)``."""
    from ..sinks import softmax_with_sink

    return softmax_with_sink(np.asarray(scores, dtype=float),
                             np.asarray(sink_logits, dtype=float))


def _softmax(x: np.ndarray) -> np.ndarray:
    """A learner's stable softmax over the last axis (a row that is all −inf gives NaN)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _column(scores: np.ndarray, sink: np.ndarray, per: str = "head") -> np.ndarray:
    """The sink logits as one more column of the scores, ``(heads, seq_q, 1)``."""
    shape = (*scores.shape[:-1], 1)
    if per == "head":
        return np.broadcast_to(sink[:, None, None], shape)
    if per == "query":  # sink_logits[:, None] against (heads, seq_q): runs when seq_q = heads
        return np.broadcast_to(sink[None, :, None], shape)
    return np.full(shape, sink[0] if per == "head 0" else 0.0)


def _with_sink(scores, sink_logits, *, per="head", first=False, keep=slice(None, -1)):
    """The sink softmax, one step done the way a catalogued mistake does it."""
    col = _column(scores, sink_logits, per)
    both = np.concatenate([col, scores] if first else [scores, col], axis=-1)
    return _softmax(both)[..., keep]


def _no_max(scores: np.ndarray, sink_logits: np.ndarray) -> np.ndarray:
    e = np.exp(np.concatenate([scores, _column(scores, sink_logits)], axis=-1))
    return (e / e.sum(axis=-1, keepdims=True))[..., :-1]


def _max_of_scores(scores: np.ndarray, sink_logits: np.ndarray) -> np.ndarray:
    peak = scores.max(axis=-1, keepdims=True)  # −inf for a row whose keys are all masked
    e = np.exp(scores - peak)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(_column(scores, sink_logits) - peak))


def _renormalised(scores: np.ndarray, sink_logits: np.ndarray) -> np.ndarray:
    weights = _with_sink(scores, sink_logits)
    return weights / weights.sum(axis=-1, keepdims=True)



_COLUMN_HINT = N_(
    "put the sink where you will find it again: append it as the last column, take the "
    "softmax over the seq_k + 1 columns, and return the first seq_k (`[..., :-1]`)."
)

SINK_MISTAKES = (
    Mistake(
        N_(
            "the sink left out of the denominator: that is a plain softmax (adding the sink "
            "logit to every score gives the same numbers, it cancels); the sink keeps its share, "
            "so a row sums to less than 1"
        ),
        lambda scores, sink_logits: _softmax(scores),
        hint=N_(
            "each row's denominator is exp(sink_h) + Σ_k exp(s_k): the sink takes a share of the "
            "weight and reads no value, so the keys' weights sum to less than 1."
        ),
    ),
    Mistake(
        N_(
            "the keys' weights divided again by their sum after the sink's column was dropped: "
            "that gives the sink's share back to the keys, a plain softmax (and 0 / 0 where the "
            "sink took everything)"
        ),
        _renormalised,
        hint=N_(
            "the sink's share leaves with its column: return the keys' weights as the softmax "
            "gave them, without dividing by their sum again."
        ),
    ),
    Mistake(
        N_(
            "the sink's column returned too, (heads, seq_q, seq_k + 1): it reads no value, so "
            "drop it after the softmax"
        ),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, keep=slice(None)),
    ),
    Mistake(
        N_(
            "the sink put first and the last key's column dropped: its weight is column 0, so "
            "the keys' weights are columns 1 … seq_k"
        ),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, first=True),
        hint=_COLUMN_HINT,
    ),
    Mistake(
        N_(
            "the sink put last and the first key's column dropped: its weight is the last "
            "column, so the keys' weights are columns 0 … seq_k − 1"
        ),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, keep=slice(1, None)),
        hint=_COLUMN_HINT,
    ),
    Mistake(
        N_(
            "the sink indexed by the query, not the head: `sink_logits[:, None]` lines its axis "
            "up with seq_q (the cases have seq_q = heads); use `sink_logits[:, None, None]`"
        ),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, per="query"),
        hint=N_(
            "sink_logits (heads,) must meet scores (heads, seq_q, seq_k) on the heads axis: give "
            "it two axes of size 1 on the right, `sink_logits[:, None, None]`."
        ),
    ),
    Mistake(
        N_("head 0's sink logit used for every head: each head has its own"),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, per="head 0"),
    ),
    Mistake(
        N_(
            "every sink logit taken as 0 (softmax off by one, 1 in the denominator) — adding "
            "the sink logit to every score does the same, it cancels: each head's exp(sink_h) "
            "joins the denominator"
        ),
        lambda scores, sink_logits: _with_sink(scores, sink_logits, per="zero"),
    ),
    Mistake(
        N_(
            "no maximum subtracted before `np.exp`: scores of 1e4 overflow to inf, and inf / inf "
            "is NaN — subtract each row's maximum over the scores and the sink"
        ),
        _no_max,
    ),
    Mistake(
        N_(
            "the maximum taken over the scores only: in a row whose keys are all masked it is "
            "−inf, and −inf − (−inf) is NaN; take it over the scores and the sink together (the "
            "sink is finite), and the row's weights are all 0"
        ),
        _max_of_scores,
        hint=N_(
            "a masked row is all −inf: its maximum must come from the sink, so take the maximum "
            "after the sink's column has joined the row."
        ),
    ),
)

SINK_ERRORS = (
    ErrorHint(
        r"all the input array|input arrays must have same number|Tensors must have same number"
        r"|Sizes of tensors must match",
        N_(
            "`np.concatenate` joins arrays with the same number of axes and the same sizes on "
            "every axis but the one it joins: the sink column must be (heads, seq_q, 1), "
            "`np.broadcast_to(sink_logits[:, None, None], (*scores.shape[:-1], 1))`"
        ),
        N_(
            "build the sink column with the scores' shape but one column: sink_logits[:, None, "
            "None] is (heads, 1, 1), and np.broadcast_to stretches it to (heads, seq_q, 1)."
        ),
    ),
)


def _sink_cases() -> list[tuple]:
    gen = rng(141)
    inf = np.inf
    causal = np.tril(np.ones((4, 4), dtype=bool))
    # seq_q = heads in every case: a sink indexed by the query then runs, wrongly
    return [
        (np.array([[[1.0, 0.5, -0.5], [0.2, 2.0, 0.0]],
                   [[-1.0, 0.0, 1.0], [3.0, 1.0, -2.0]]]), np.array([0.5, -1.0])),
        (gen.normal(size=(3, 3, 5)), np.array([-2.0, 0.0, 1.5])),  # a sink per head
        # scores of ±1e4: np.exp overflows unless the maximum is subtracted
        (np.array([[[1e4, 1e4 - 1.0, -1e4, 0.0], [-1e4, -1e4, -1e4, -1e4]],
                   [[1e4 - 2.0, 1e4, 1e4 - 0.5, -1e4], [5e3, -1e4, 0.0, 5e3 + 1.0]]]),
         np.array([0.0, 2.0])),
        # a row with every key masked (head 0, query 0): its weights are all 0, no NaN
        (np.array([[[-inf, -inf, -inf], [0.3, -inf, 1.2]],
                   [[0.5, -inf, -inf], [-0.4, 0.8, 2.0]]]), np.array([1.0, -0.5])),
        (gen.normal(size=(2, 2, 4)), np.array([10.0, 4.0])),  # a large sink takes nearly all
        (np.where(causal, gen.normal(size=(4, 4, 4)) * 2.0, -inf), gen.normal(size=4) * 2.0),
    ]


# --- 2: the positions a StreamingLLM cache keeps ------------------------------------------------


def _kept_reference(length: int, window: int, n_sinks: int) -> list[int]:
    """The text positions :func:`~course_attention.sinks.streaming.kept_positions` holds after
    ``length`` tokens: the first ``n_sinks`` and the last ``window``, in order, each once."""
    from ..sinks.streaming import kept_positions

    return kept_positions(int(length), int(window), int(n_sinks))


def _kept(length, window, n_sinks, *, recent=0, extra=0, cap=True, clip=True, dedupe=True):
    """The kept positions, one step done the way a catalogued mistake does it: ``recent``
    shifts the window back, ``extra`` widens it."""
    start = length - window - recent - extra
    sinks = list(range(min(n_sinks, length) if cap else n_sinks))
    window_positions = list(range(max(0, start) if clip else start, length - recent))
    if not dedupe:
        return sinks + window_positions
    return sorted(set(sinks) | set(window_positions))


KEPT_MISTAKES = (
    Mistake(
        N_(
            "the window shifted back by one, positions length − window − 1 … length − 2: the "
            "newest token (length − 1) is in the cache too, it is the query's own key"
        ),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, recent=1),
        hint=N_(
            "after `length` tokens the positions run 0 … length − 1, and the last `window` of "
            "them are range(length − window, length): the newest one included."
        ),
    ),
    Mistake(
        N_("only window − 1 recent positions: the window counts the newest token too"),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, extra=-1),
    ),
    Mistake(
        N_("window + 1 recent positions: the window already counts the newest token"),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, extra=1),
    ),
    Mistake(
        N_(
            "a position listed twice: in a short text the sinks are also among the last window "
            "tokens, and the cache holds each token once"
        ),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, dedupe=False),
        hint=N_(
            "the two ranges overlap while the text is shorter than n_sinks + window: join them "
            "as sets, `sorted(set(a) | set(b))`."
        ),
    ),
    Mistake(
        N_(
            "sinks beyond the text: a text of `length` tokens has only min(n_sinks, length) "
            "first tokens to keep"
        ),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, cap=False),
    ),
    Mistake(
        N_(
            "negative positions: in a text shorter than the window, length − window is below "
            "0; the window starts at max(0, length − window)"
        ),
        lambda length, window, n_sinks: _kept(length, window, n_sinks, clip=False),
    ),
    Mistake(
        N_(
            "the cache's slots 0 … n − 1 instead of the text positions they hold: once tokens "
            "are evicted, slot n_sinks holds position length − window"
        ),
        lambda length, window, n_sinks: list(range(len(_kept(length, window, n_sinks)))),
        hint=N_(
            "return which tokens of the text are kept (their positions 0 … length − 1), not how "
            "many: after eviction there is a gap between the sinks and the window."
        ),
    ),
    Mistake(
        N_(
            "the sinks forgotten: that is the plain rolling window; StreamingLLM keeps the first "
            "n_sinks tokens as well"
        ),
        lambda length, window, n_sinks: _kept(length, window, 0),
    ),
)


def _kept_cases() -> list[tuple]:
    return [
        (10, 4, 2),  # evicted: sinks, a gap, the window
        (3, 4, 4),  # shorter than the window and than the sinks: every token, once
        (20, 5, 4),  # StreamingLLM's four sinks
        (6, 3, 4),  # sinks and window overlap
        (2, 3, 4),  # two tokens, both of them sinks
        (12, 8, 0),  # no sinks: the rolling window
    ]


# --- 3: soft-capping inside attention -----------------------------------------------------------


def _capped_reference(scores: np.ndarray, cap: float, mask: np.ndarray) -> np.ndarray:
    """``(seq_q, seq_k)``: the softmax of Gemma 2's capped scores,
    :func:`~course_attention.sinks.soft_cap` first, then the mask (True = may attend)."""
    from .. import numpy_ref
    from ..sinks import soft_cap

    capped = soft_cap(np.asarray(scores, dtype=float), float(cap))
    return numpy_ref.softmax(np.where(np.asarray(mask, dtype=bool), capped, -np.inf))


def _masked_softmax(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _softmax(np.where(mask, scores, -np.inf))


CAP_MISTAKES = (
    Mistake(
        N_(
            "capped after masking: cap · tanh(−inf / cap) is −cap, not −inf, so the hidden keys "
            "get weight; cap the scores first, then mask"
        ),
        lambda scores, cap, mask: _softmax(cap * np.tanh(np.where(mask, scores, -np.inf) / cap)),
        hint=N_(
            "the order matters: the cap is finite everywhere, so it must come before the −inf "
            "of the mask, as Gemma 2 and ModernAttention.raw_scores do."
        ),
    ),
    Mistake(
        N_(
            "a hard clip (np.clip to ±cap) instead of cap · tanh(s / cap): the soft cap bends "
            "every score, not only those beyond ±cap"
        ),
        lambda scores, cap, mask: _masked_softmax(np.clip(scores, -cap, cap), mask),
    ),
    Mistake(
        N_(
            "cap · tanh(s) without dividing by cap inside: every score beyond ±3 saturates at "
            "±cap"
        ),
        lambda scores, cap, mask: _masked_softmax(cap * np.tanh(scores), mask),
    ),
    Mistake(
        N_(
            "tanh(s / cap) without multiplying by cap: every score ends up in (−1, 1), and the "
            "weights come out nearly uniform"
        ),
        lambda scores, cap, mask: _masked_softmax(np.tanh(scores / cap), mask),
    ),
    Mistake(
        N_("no cap at all: a plain masked softmax; Gemma 2 caps the scores at ±cap first"),
        lambda scores, cap, mask: _masked_softmax(scores, mask),
    ),
)


def _cap_cases() -> list[tuple]:
    gen = rng(143)
    window = np.tril(np.ones((6, 6), dtype=bool)) & ~np.tril(np.ones((6, 6), dtype=bool), -3)
    return [
        (np.array([[8.0, 1.0, -2.0], [-7.0, 2.0, 0.5], [3.0, 12.0, -9.0]]), 5.0,
         np.tril(np.ones((3, 3), dtype=bool))),
        # Gemma 2's cap, a head whose scores are low: −cap would take most of the weight
        (gen.normal(size=(5, 5)) * 30.0 - 45.0, 50.0, np.tril(np.ones((5, 5), dtype=bool))),
        (gen.normal(size=(6, 6)) * 6.0, 4.0, window),  # a sliding window of 3
        (gen.normal(size=(3, 5)) * 8.0 - 4.0, 10.0, np.tri(3, 5, 2, dtype=bool)),  # 3 new queries
    ]


# --- 4: the cache bytes of an alternating stack -------------------------------------------------


def _stack_bytes_reference(n_layers: int, local_per_global: int, length: int, window: int,
                           n_kv_heads: int, d_head: int, bytes_per_value: int) -> int:
    """Bytes of the KV cache of one ``length``-token text in a stack of ``local_per_global``
    sliding layers then one full one, repeated: :func:`~course_attention.sinks.cache_bytes` of
    :func:`~course_attention.sinks.layer_pattern`."""
    from ..sinks import cache_bytes, layer_pattern

    kinds = layer_pattern(int(n_layers), int(local_per_global))
    return cache_bytes(kinds, int(length), int(window), int(n_kv_heads), int(d_head),
                       int(bytes_per_value))


def _stack_bytes(n_layers, local_per_global, length, window, n_kv_heads, d_head,
                 bytes_per_value, *, n_global=None, kept_window=None, per_value=2, unit=1):
    """The cache bytes, one step done the way a catalogued mistake does it."""
    if n_global is None:
        n_global = n_layers // (local_per_global + 1)
    kept_window = min(window, length) if kept_window is None else kept_window
    kept = n_global * length + (n_layers - n_global) * kept_window
    return per_value * n_kv_heads * d_head * bytes_per_value * kept * unit


def _stack_mistake(**how: object):
    return lambda *args: _stack_bytes(*args, **how)


def _global_first(n_layers: int, local_per_global: int, *rest: int) -> int:
    """A global layer first in each period: layers 0, p, 2p … (p = local_per_global + 1)."""
    period = local_per_global + 1
    return _stack_bytes(n_layers, local_per_global, *rest, n_global=-(-n_layers // period))


def _swapped(n_layers: int, local_per_global: int, *rest: int) -> int:
    """``local_per_global`` global layers, then one local, repeated."""
    n_local = n_layers // (local_per_global + 1)
    return _stack_bytes(n_layers, local_per_global, *rest, n_global=n_layers - n_local)


STACK_MISTAKES = (
    Mistake(
        N_(
            "the factor 2 forgotten: every layer caches a key and a value for each token it "
            "keeps"
        ),
        _stack_mistake(per_value=1),
    ),
    Mistake(
        N_(
            "window tokens counted for a sliding layer even when the text is shorter: it keeps "
            "min(window, length)"
        ),
        lambda *args: _stack_bytes(*args, kept_window=args[3]),
        hint=N_(
            "a sliding layer can only keep tokens that exist: with fewer than `window` of them "
            "it keeps them all, like a full layer."
        ),
    ),
    Mistake(
        N_("every layer counted as full (global): the sliding layers keep only the last window"),
        lambda *args: _stack_bytes(*args, n_global=args[0]),
    ),
    Mistake(
        N_(
            "every layer counted as sliding (local): one layer in each local_per_global + 1 is "
            "global and keeps the whole text"
        ),
        lambda *args: _stack_bytes(*args, n_global=0),
    ),
    Mistake(
        N_(
            "the global layer put first in each period: as in Gemma 3 and gpt-oss it comes "
            "last (layers local_per_global, 2 · local_per_global + 1, …), so a stack that ends "
            "mid-period has n_layers // (local_per_global + 1) global layers"
        ),
        _global_first,
        hint=N_(
            "count the global layers: layer i (from 0) is global when (i + 1) % "
            "(local_per_global + 1) == 0, which gives n_layers // (local_per_global + 1)."
        ),
    ),
    Mistake(
        N_(
            "the ratio read the other way round: local_per_global sliding (local) layers come "
            "before each global one"
        ),
        _swapped,
    ),
    Mistake(
        N_("bits counted, not bytes: bytes_per_value is already in bytes"),
        _stack_mistake(unit=8),
    ),
)


def _stack_cases() -> list[tuple]:
    return [
        (3, 1, 10, 4, 1, 2, 1),  # a toy stack to count by hand: 72 bytes
        (26, 5, 32768, 512, 1, 256, 2),  # Gemma 3 1B at 32k tokens, bfloat16
        (24, 1, 8192, 128, 8, 64, 2),  # gpt-oss-20b
        (62, 5, 131072, 1024, 16, 128, 2),  # Gemma 3 27B at 128k tokens
        (7, 2, 100, 256, 2, 16, 4),  # a text shorter than the window, float32
        (24, 1, 100, 128, 8, 64, 2),  # gpt-oss-20b, a prompt shorter than its window
        (5, 1, 64, 16, 2, 16, 8),  # the course's scale, float64
        (4, 0, 1000, 128, 4, 32, 2),  # all global
    ]


# --- the exercises ------------------------------------------------------------------------------

register(
    Exercise(
        id="sinks-streaming-1",
        title=N_("A softmax with a sink logit"),
        reference=_sink_reference,
        cases=_sink_cases,
        difficulty=2,
        minutes=15,
        mistakes=SINK_MISTAKES,
        error_hints=SINK_ERRORS,
        hint=N_(
            "sink = np.broadcast_to(sink_logits[:, None, None], (*scores.shape[:-1], 1)) (heads, "
            "seq_q, 1); both = np.concatenate([scores, sink], axis=-1); e = np.exp(both - "
            "both.max(axis=-1, keepdims=True)); return (e / e.sum(axis=-1, keepdims=True))[..., "
            ":-1]."
        ),
        nudge=N_(
            "give each row one more logit, its head's sink, take a stable softmax over the "
            "seq_k + 1 entries, and keep only the keys' weights: the sink's share is thrown "
            "away, not spread over the keys."
        ),
    )
)

register(
    Exercise(
        id="sinks-streaming-2",
        title=N_("The positions a StreamingLLM cache keeps"),
        reference=_kept_reference,
        cases=_kept_cases,
        difficulty=2,
        minutes=10,
        mistakes=KEPT_MISTAKES,
        hint=N_(
            "sinks = range(min(n_sinks, length)); recent = range(max(0, length - window), "
            "length); return sorted(set(sinks) | set(recent))."
        ),
        nudge=N_(
            "two ranges of text positions: the first n_sinks tokens and the last window ones, "
            "the newest included; in a short text they overlap, and a position is kept once."
        ),
    )
)

register(
    Exercise(
        id="sinks-streaming-3",
        title=N_("Soft-capping inside attention"),
        reference=_capped_reference,
        cases=_cap_cases,
        difficulty=1,
        minutes=5,
        mistakes=CAP_MISTAKES,
        hint=N_(
            "capped = cap * np.tanh(scores / cap); `masked = np.where(mask, capped, -np.inf)`; "
            "e = np.exp(masked - masked.max(axis=-1, keepdims=True)); return e / e.sum(axis=-1, "
            "keepdims=True)."
        ),
        nudge=N_(
            "Gemma 2 bends every score with cap · tanh(s / cap) before anything else; only then "
            "do the hidden keys get −inf and the softmax run."
        ),
    )
)

register(
    Exercise(
        id="sinks-streaming-4",
        title=N_("The cache bytes of an alternating stack"),
        reference=_stack_bytes_reference,
        cases=_stack_cases,
        difficulty=1,
        minutes=10,
        mistakes=STACK_MISTAKES,
        hint=N_(
            "n_global = n_layers // (local_per_global + 1); n_local = n_layers - n_global; kept "
            "= n_global * length + n_local * min(window, length); return 2 * n_kv_heads * d_head "
            "* bytes_per_value * kept."
        ),
        nudge=N_(
            "count the tokens each layer keeps: a global layer the whole text, a local one at "
            "most the last window; each kept token costs a key and a value of n_kv_heads · "
            "d_head numbers."
        ),
    )
)
