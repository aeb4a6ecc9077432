"""Chapter 14's checked exercises (``sinks-streaming-1`` … ``-4``): the references are what the
package's sink softmax, StreamingLLM cache, soft-capped attention and layer patterns compute,
correct numpy answers pass, each catalogued mistake is named alone, a hand-written wrong answer
for each mistake gets its name, and the checker never raises, never hangs and judges its own
copy of the inputs.

The generic checks (the reference passes, each mistake is named, the checker never raises, speaks
Chinese, copies its inputs) run for every registered exercise in ``test_exercises.py``,
``test_exercises_feedback.py``, ``test_checker_adversarial.py`` and ``test_i18n_exercises.py``.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import pytest
import torch
from _checker import fresh_session  # noqa: F401 - autouse: every test starts a fresh session
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import exercises as ex
from course_attention import sinks
from course_attention.exercises import ch14_sinks_and_streaming as ch14
from course_attention.exercises import core
from course_attention.modern import (
    ModernAttention,
    ModernConfig,
    ModernGPT,
    apply_rope,
    rope_cos_sin,
)
from course_attention.sinks import streaming

IDS = [f"sinks-streaming-{i}" for i in range(1, 5)]


# --- correct answers, written as a learner would (the chapter's solutions) --------------------


def softmax_with_sink(scores, sink_logits):
    sink = np.broadcast_to(sink_logits[:, None, None], (*scores.shape[:-1], 1))  # (heads, seq_q, 1)
    both = np.concatenate([scores, sink], axis=-1)
    e = np.exp(both - both.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True))[..., :-1]


def kept_positions(length, window, n_sinks):
    sinks_ = range(min(n_sinks, length))
    recent = range(max(0, length - window), length)
    return sorted(set(sinks_) | set(recent))


def capped_weights(scores, cap, mask):
    capped = cap * np.tanh(scores / cap)
    masked = np.where(mask, capped, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def alternating_cache_bytes(n_layers, local_per_global, length, window, n_kv_heads, d_head,
                            bytes_per_value):
    n_global = n_layers // (local_per_global + 1)
    n_local = n_layers - n_global
    kept = n_global * length + n_local * min(window, length)
    return 2 * n_kv_heads * d_head * bytes_per_value * kept


SOLUTIONS = dict(zip(IDS, [softmax_with_sink, kept_positions, capped_weights,
                           alternating_cache_bytes], strict=True))


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_learners_numpy_answer_passes(exercise_id):
    passed, message = ex.evaluate(exercise_id, SOLUTIONS[exercise_id])
    assert passed, message


def test_the_four_exercises_are_registered_with_difficulty_and_time():
    badges = [ex.EXERCISES[i].badge for i in IDS]
    assert badges == ["★★☆ · ~15 min", "★★☆ · ~10 min", "★☆☆ · ~5 min", "★☆☆ · ~10 min"]


# --- each catalogued mistake is telling, and named alone --------------------------------------


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_mistake_is_telling_and_named_alone(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    for mistake in exercise.mistakes:
        telling = 0
        for args in exercise.cases():
            want = exercise.reference(*copy.deepcopy(args))
            with np.errstate(all="ignore"):
                got = mistake.fn(*copy.deepcopy(args))
            telling += core._compare(want, got, exercise) is not None
        assert telling >= 1, mistake.name
        passed, message = ex.evaluate(exercise_id, mistake.fn)
        assert not passed and f"Likely mistake: {mistake.name}." in message, message
        assert "Or, just as likely" not in message, message


def test_the_stability_and_masked_row_cases_are_the_ones_that_catch_them():
    """The ±1e4 case (3) alone catches a softmax without its maximum, the fully masked row
    (case 4) alone a maximum over the scores without the sink: both give NaN there and are
    right elsewhere; the reference gives numbers, and zeros for the masked row."""
    exercise = ex.EXERCISES["sinks-streaming-1"]
    cases = exercise.cases()
    for mistake, where in ((ch14._no_max, 2), (ch14._max_of_scores, 3)):
        for n, args in enumerate(cases):
            with np.errstate(all="ignore"):
                got = mistake(*copy.deepcopy(args))
            want = exercise.reference(*copy.deepcopy(args))
            assert np.isnan(got).any() == (n == where), (mistake.__name__, n)
            if n != where:
                np.testing.assert_allclose(got, want, atol=1e-12)
    scores, sink_logits = cases[3]
    weights = exercise.reference(scores, sink_logits)
    assert np.isneginf(scores[0, 0]).all() and (weights[0, 0] == 0).all()
    assert np.isfinite(exercise.reference(*cases[2])).all()


def test_the_sink_per_query_only_runs_because_seq_q_equals_heads():
    for scores, sink_logits in ex.EXERCISES["sinks-streaming-1"].cases():
        assert scores.shape[0] == scores.shape[1] == sink_logits.shape[0] > 1
        assert len(set(sink_logits.tolist())) == len(sink_logits)  # a different sink per head
    per_query = lambda s, k: ch14._with_sink(s, k, per="query")  # noqa: E731
    with pytest.raises(ValueError):
        per_query(np.zeros((2, 3, 4)), np.zeros(2))


# --- one hand-written wrong answer per catalogued mistake --------------------------------------


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _sink_col(scores, sink_logits):
    return np.broadcast_to(sink_logits[:, None, None], (*scores.shape[:-1], 1))


def plain_softmax(scores, sink_logits):
    return _softmax(scores)


def renormalised(scores, sink_logits):
    w = _softmax(np.concatenate([scores, _sink_col(scores, sink_logits)], -1))[..., :-1]
    return w / w.sum(axis=-1, keepdims=True)


def sink_added_to_scores(scores, sink_logits):
    return _softmax(scores + sink_logits[:, None, None])


def sink_added_and_kept(scores, sink_logits):
    return softmax_with_sink(scores + sink_logits[:, None, None], sink_logits)


def column_kept(scores, sink_logits):
    return _softmax(np.concatenate([scores, _sink_col(scores, sink_logits)], -1))


def sink_first_last_dropped(scores, sink_logits):
    return _softmax(np.concatenate([_sink_col(scores, sink_logits), scores], -1))[..., :-1]


def sink_last_first_dropped(scores, sink_logits):
    return _softmax(np.concatenate([scores, _sink_col(scores, sink_logits)], -1))[..., 1:]


def sink_per_query(scores, sink_logits):
    peak = np.maximum(scores.max(axis=-1, keepdims=True), sink_logits[:, None])
    e = np.exp(scores - peak)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink_logits[:, None] - peak))


def head_0_sink(scores, sink_logits):
    sink = np.full((*scores.shape[:-1], 1), sink_logits[0])
    return _softmax(np.concatenate([scores, sink], -1))[..., :-1]


def softmax_one(scores, sink_logits):
    peak = np.maximum(scores.max(axis=-1, keepdims=True), 0.0)
    e = np.exp(scores - peak)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(-peak))


def no_max(scores, sink_logits):
    e = np.exp(scores)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink_logits)[:, None, None])


def max_of_scores(scores, sink_logits):
    peak = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - peak)
    return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink_logits[:, None, None] - peak))


def window_shifted(length, window, n_sinks):
    return sorted(set(range(min(n_sinks, length))) | set(range(max(0, length - window - 1),
                                                               length - 1)))


def window_minus_one(length, window, n_sinks):
    return sorted(set(range(min(n_sinks, length))) | set(range(max(0, length - window + 1),
                                                               length)))


def window_plus_one(length, window, n_sinks):
    return sorted(set(range(min(n_sinks, length))) | set(range(max(0, length - window - 1),
                                                               length)))


def duplicates(length, window, n_sinks):
    return list(range(min(n_sinks, length))) + list(range(max(0, length - window), length))


def sinks_uncapped(length, window, n_sinks):
    return sorted(set(range(n_sinks)) | set(range(max(0, length - window), length)))


def negative_start(length, window, n_sinks):
    return sorted(set(range(min(n_sinks, length))) | set(range(length - window, length)))


def cache_slots(length, window, n_sinks):
    return list(range(min(length, n_sinks + window)))


def no_sinks(length, window, n_sinks):
    return list(range(max(0, length - window), length))


def capped_after_mask(scores, cap, mask):
    return _softmax(cap * np.tanh(np.where(mask, scores, -np.inf) / cap))


def hard_clip(scores, cap, mask):
    return _softmax(np.where(mask, np.clip(scores, -cap, cap), -np.inf))


def tanh_undivided(scores, cap, mask):
    return _softmax(np.where(mask, cap * np.tanh(scores), -np.inf))


def tanh_unmultiplied(scores, cap, mask):
    return _softmax(np.where(mask, np.tanh(scores / cap), -np.inf))


def no_cap(scores, cap, mask):
    return torch.softmax(torch.from_numpy(scores).masked_fill(~torch.from_numpy(mask),
                                                              float("-inf")), -1)


def _layers(n_layers, local_per_global, global_when):
    return [global_when(i, local_per_global + 1) for i in range(n_layers)]


def _bytes(full, length, window, n_kv_heads, d_head, bytes_per_value, factor=2):
    kept = sum(length if f else min(window, length) for f in full)
    return factor * n_kv_heads * d_head * bytes_per_value * kept


def no_factor_2(n, r, length, window, h, d, b):
    return _bytes(_layers(n, r, lambda i, p: (i + 1) % p == 0), length, window, h, d, b, 1)


def window_always(n, r, length, window, h, d, b):
    n_global = n // (r + 1)
    return 2 * h * d * b * (n_global * length + (n - n_global) * window)


def all_full(n, r, length, window, h, d, b):
    return 2 * h * d * b * n * length


def all_sliding(n, r, length, window, h, d, b):
    return 2 * h * d * b * n * min(window, length)


def global_first(n, r, length, window, h, d, b):
    return _bytes(_layers(n, r, lambda i, p: i % p == 0), length, window, h, d, b)


def ratio_swapped(n, r, length, window, h, d, b):
    return _bytes(_layers(n, r, lambda i, p: (i + 1) % p != 0), length, window, h, d, b)


def in_bits(n, r, length, window, h, d, b):
    return 8 * alternating_cache_bytes(n, r, length, window, h, d, b)


WRONG = [  # (exercise, answer, words of the mistake's name)
    ("sinks-streaming-1", plain_softmax, "left out of the denominator"),
    ("sinks-streaming-1", renormalised, "divided again"),
    ("sinks-streaming-1", sink_added_to_scores, "left out of the denominator"),
    ("sinks-streaming-1", sink_added_and_kept, "taken as 0"),
    ("sinks-streaming-1", column_kept, "column returned too"),
    ("sinks-streaming-1", sink_first_last_dropped, "put first"),
    ("sinks-streaming-1", sink_last_first_dropped, "put last"),
    ("sinks-streaming-1", sink_per_query, "indexed by the query"),
    ("sinks-streaming-1", head_0_sink, "head 0's sink"),
    ("sinks-streaming-1", softmax_one, "taken as 0"),
    ("sinks-streaming-1", no_max, "no maximum subtracted"),
    ("sinks-streaming-1", max_of_scores, "over the scores only"),
    ("sinks-streaming-2", window_shifted, "shifted back by one"),
    ("sinks-streaming-2", window_minus_one, "only window − 1"),
    ("sinks-streaming-2", window_plus_one, "window + 1"),
    ("sinks-streaming-2", duplicates, "listed twice"),
    ("sinks-streaming-2", sinks_uncapped, "beyond the text"),
    ("sinks-streaming-2", negative_start, "negative positions"),
    ("sinks-streaming-2", cache_slots, "slots"),
    ("sinks-streaming-2", no_sinks, "sinks forgotten"),
    ("sinks-streaming-3", capped_after_mask, "capped after masking"),
    ("sinks-streaming-3", hard_clip, "hard clip"),
    ("sinks-streaming-3", tanh_undivided, "without dividing"),
    ("sinks-streaming-3", tanh_unmultiplied, "without multiplying"),
    ("sinks-streaming-3", no_cap, "no cap at all"),
    ("sinks-streaming-4", no_factor_2, "factor 2"),
    ("sinks-streaming-4", window_always, "even when the text is shorter"),
    ("sinks-streaming-4", all_full, "every layer counted as full"),
    ("sinks-streaming-4", all_sliding, "every layer counted as sliding"),
    ("sinks-streaming-4", global_first, "put first in each period"),
    ("sinks-streaming-4", ratio_swapped, "other way round"),
    ("sinks-streaming-4", in_bits, "bits counted"),
]


@pytest.mark.parametrize(("exercise_id", "answer", "words"), WRONG,
                         ids=[answer.__name__ for _, answer, _ in WRONG])
def test_a_hand_written_wrong_answer_gets_its_mistakes_name(exercise_id, answer, words):
    passed, message = ex.evaluate(exercise_id, answer)
    (mistake,) = [m for m in ex.EXERCISES[exercise_id].mistakes if words in m.name]
    assert not passed and f"Likely mistake: {mistake.name}." in message, message
    assert "Or, just as likely" not in message


def test_every_catalogued_mistake_has_a_hand_written_answer():
    for exercise_id in IDS:
        names = {m.name for m in ex.EXERCISES[exercise_id].mistakes}
        covered = {m.name for i, _, words in WRONG if i == exercise_id
                   for m in ex.EXERCISES[exercise_id].mistakes if words in m.name}
        assert covered == names, names - covered


def test_a_sink_column_of_the_wrong_shape_gets_the_concatenate_error_read(capsys):
    def flat_column(scores, sink_logits):
        return _softmax(np.concatenate([scores, sink_logits[:, None]], axis=-1))[..., :-1]

    passed, message = ex.evaluate("sinks-streaming-1", flat_column)
    own = ch14.SINK_ERRORS[0]
    assert not passed and "ValueError" in message
    assert f"What it means: {own.meaning}." in message
    ex.check("sinks-streaming-1", flat_column)
    capsys.readouterr()
    ex.check("sinks-streaming-1", flat_column)  # the second failure: the hint aimed at it
    assert f"Hint: {own.hint}" in capsys.readouterr().out


# --- the checker never raises, never hangs, judges its own copy ------------------------------


def _forever(*args):
    while True:
        pass


def _generator(*args):
    return (i for i in range(3))


ODD = [
    ("wrong shape", lambda *a: np.zeros(7)),
    ("a scalar", lambda *a: 1.0),
    ("raises", lambda *a: 1 / 0),
    ("a dict", lambda *a: {"weights": 1}),
    ("text", lambda *a: "[0, 1]"),
    ("a generator", _generator),
    ("a set", lambda *a: {0, 1, 2}),
    ("an object", lambda *a: object()),
    ("ragged lists", lambda *a: [[0, 1], [2]]),
    ("strings in an array", lambda *a: np.array(["a", "b"])),
    ("NaN", lambda *a: np.nan),
    ("a boolean", lambda *a: True),
    ("a float32 tensor", lambda *a: torch.zeros(3, dtype=torch.float32)),
    ("SystemExit", lambda *a: exec("raise SystemExit(1)")),
]


@pytest.mark.parametrize("exercise_id", IDS)
@pytest.mark.parametrize(("label", "answer"), ODD, ids=[label for label, _ in ODD])
def test_odd_answers_fail_with_a_message_and_never_raise(exercise_id, label, answer, capsys):
    passed, message = ex.evaluate(exercise_id, answer)
    assert not passed and message.startswith("✗") and "Hint:" in message, (label, message)
    ex.check(exercise_id, answer)
    assert capsys.readouterr().out.startswith("✗")


@pytest.mark.parametrize("exercise_id", IDS)
def test_an_endless_answer_is_stopped(exercise_id, monkeypatch):
    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.2)
    start = time.monotonic()
    passed, message = ex.evaluate(exercise_id, _forever)
    assert time.monotonic() - start < 3.0
    assert not passed and "still running after 0.2 s" in message


def _scribbling(answer):
    """``answer``, after which every input array is overwritten (as ``x -= …`` in place does)."""

    def scribble(*args):
        result = np.array(answer(*args), copy=True)
        for a in args:
            if isinstance(a, np.ndarray):
                a[...] = 0
        return result

    return scribble


@pytest.mark.parametrize("exercise_id", ["sinks-streaming-1", "sinks-streaming-3"])
def test_an_answer_that_overwrites_its_inputs_is_judged_on_the_cases(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    passed, message = ex.evaluate(exercise_id, _scribbling(SOLUTIONS[exercise_id]))
    assert passed, message
    first = exercise.mistakes[0]
    passed, message = ex.evaluate(exercise_id, _scribbling(first.fn))
    assert not passed and f"Likely mistake: {first.name}." in message
    shown = core._inputs_line(exercise, exercise.cases()[0])
    assert shown in message  # the case's own numbers, not the zeros written over them


def test_in_place_arithmetic_on_the_inputs_is_right():
    def in_place(scores, sink_logits):
        sink = np.broadcast_to(sink_logits[:, None, None], (*scores.shape[:-1], 1))
        both = np.concatenate([scores, sink], axis=-1)
        both -= both.max(axis=-1, keepdims=True)
        np.exp(both, out=both)
        both /= both.sum(axis=-1, keepdims=True)
        scores[...] = both[..., :-1]  # written back into the input
        sink_logits[...] = 0.0
        return scores

    assert ex.evaluate("sinks-streaming-1", in_place)[0]
    assert ex.evaluate("sinks-streaming-1", softmax_with_sink)[0]


# --- 1: the sink softmax is the package's and ModernAttention's -------------------------------


def test_the_sink_softmax_is_a_key_that_reads_a_zero_value():
    """The sink is one more key with score ``sink_h`` and value 0: attention with it equals the
    exercise's weights times the values, and its weight is what the rows lack of 1."""
    gen = np.random.default_rng(0)
    for scores, sink_logits in ex.EXERCISES["sinks-streaming-1"].cases():
        want = ch14._sink_reference(scores, sink_logits)
        heads, seq_q, seq_k = scores.shape
        values = gen.normal(size=(heads, seq_k, 3))
        both = np.concatenate([scores, _sink_col(scores, sink_logits)], -1)
        stable = np.where(np.isfinite(both), both, -1e300)  # a masked key: weight 0
        with_sink = _softmax(stable) @ np.concatenate([values, np.zeros((heads, 1, 3))], 1)
        np.testing.assert_allclose(want @ values, with_sink, atol=1e-12)
        assert (want.sum(-1) <= 1 + 1e-12).all() and (want >= 0).all()  # the rest is the sink's
        torch_weights = sinks.softmax_with_sink(torch.from_numpy(scores),
                                                torch.from_numpy(sink_logits))
        np.testing.assert_allclose(torch_weights.numpy(), want, atol=1e-12)
    scores = ex.EXERCISES["sinks-streaming-1"].cases()[1][0]
    np.testing.assert_allclose(ch14._sink_reference(scores, np.zeros(3)),
                               sinks.off_by_one_softmax(scores), atol=1e-15)


def test_the_exercise_is_what_modern_attention_with_sinks_reads():
    for scores, sink_logits in ex.EXERCISES["sinks-streaming-1"].cases():
        heads, seq_q, seq_k = scores.shape
        config = ModernConfig(d_model=4 * heads, n_heads=heads, n_kv_heads=1, sinks=True)
        torch.manual_seed(3)
        attn = ModernAttention(config).double()
        v = torch.randn(1, 1, seq_k, config.head_dim, dtype=torch.float64)
        with torch.no_grad():
            attn.sinks.copy_(torch.from_numpy(sink_logits))
            s = torch.from_numpy(scores)[None]
            module = attn.attend(s, torch.isfinite(s), v)
            weights = torch.from_numpy(ch14._sink_reference(scores, sink_logits))[None]
            mine = attn.o_proj((weights @ v).transpose(1, 2).reshape(1, seq_q, -1))
            with np.errstate(invalid="ignore"):  # a masked row: 0 / 0, read as 0
                plain_weights = np.nan_to_num(_softmax(scores))
            plain = attn.o_proj((torch.from_numpy(plain_weights)[None] @ v)
                                .transpose(1, 2).reshape(1, seq_q, -1))
        np.testing.assert_allclose(module.numpy(), mine.numpy(), atol=1e-12)
        assert (module - plain).abs().max() > 1e-3  # the control: without the sink it differs


@settings(max_examples=30, deadline=None)
@given(heads=st.integers(1, 4), seq_k=st.integers(1, 6), seed=st.integers(0, 2**16),
       scale=st.sampled_from([1.0, 30.0, 1e4]))
def test_the_learners_sink_softmax_equals_the_package_on_random_rows(heads, seq_k, seed, scale):
    gen = np.random.default_rng(seed)
    scores = gen.normal(size=(heads, heads, seq_k)) * scale
    scores[gen.random(scores.shape) < 0.3] = -np.inf  # some keys masked, some rows entirely
    sink_logits = gen.normal(size=heads) * 3.0
    want = ch14._sink_reference(scores, sink_logits)
    np.testing.assert_allclose(softmax_with_sink(scores, sink_logits), want, atol=1e-12)
    assert np.isfinite(want).all() and (want.sum(-1) <= 1 + 1e-12).all()


# --- 2: the kept positions are what the StreamingLLM cache holds ------------------------------


def test_the_kept_positions_are_the_keys_a_streaming_cache_holds():
    """After ``length`` tokens, layer 0 of a :class:`StreamingCache` holds (unrotated) keys that
    depend on their token alone: with every token distinct, they name the positions held."""
    config = ModernConfig(vocab_size=24, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=16)
    torch.manual_seed(0)
    model = ModernGPT(config).double()
    tokens = torch.randperm(24)[None]
    with torch.no_grad():
        block = model.blocks[0]
        every_key = block.attn.project(block.norm1(model.embed(tokens)))[1]  # (1, 1, 24, d)
    slots = next(m for m in ch14.KEPT_MISTAKES if "slots" in m.name)
    for length, window, n_sinks in ex.EXERCISES["sinks-streaming-2"].cases():
        cache = streaming.StreamingCache(model, window, n_sinks)
        for t in range(length):
            cache.step(tokens[:, t])
        want = ch14._kept_reference(length, window, n_sinks)
        np.testing.assert_allclose(cache.keys[0].numpy(), every_key[:, :, want].numpy(),
                                   atol=1e-12)
        visible = streaming.streaming_visible(length, window, n_sinks)[-1]
        assert torch.nonzero(visible).flatten().tolist() == want
        if length > n_sinks + window:  # the control: slot numbers are other keys
            held = every_key[:, :, slots.fn(length, window, n_sinks)]
            assert (held - cache.keys[0]).abs().max() > 1e-3


def _rolling(length: int, window: int, n_sinks: int) -> list[int]:
    """A StreamingLLM cache simulated token by token: evict the oldest after the sinks."""
    held: list[int] = []
    for t in range(length):
        held.append(t)
        if len(held) > n_sinks + window:
            del held[n_sinks]
    return held


@settings(max_examples=200, deadline=None)
@given(length=st.integers(0, 60), window=st.integers(1, 12), n_sinks=st.integers(0, 6))
def test_the_learners_kept_positions_equal_a_simulated_rolling_cache(length, window, n_sinks):
    want = _rolling(length, window, n_sinks)
    assert ch14._kept_reference(length, window, n_sinks) == want
    assert kept_positions(length, window, n_sinks) == want


# --- 3: the capped weights are what ModernAttention with softcap computes ---------------------


def test_the_capped_weights_are_what_modern_attention_with_softcap_computes():
    cap, seq = 2.0, 6
    config = ModernConfig(d_model=16, n_heads=2, n_kv_heads=1, softcap=cap)
    torch.manual_seed(1)
    attn = ModernAttention(config).double()
    x = 4.0 * torch.randn(1, seq, 16, dtype=torch.float64)
    cos, sin = rope_cos_sin(torch.arange(seq), config.head_dim, config.rope_theta, torch.float64)
    no_cap_mistake = next(m for m in ch14.CAP_MISTAKES if "no cap" in m.name)
    after = next(m for m in ch14.CAP_MISTAKES if "after masking" in m.name)
    with torch.no_grad():
        q, k, _ = attn.project(x)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        capped = attn.raw_scores(q, k)
        attn.softcap = None
        plain = attn.raw_scores(q, k)
        visible = attn.visible(seq, seq)
        module = torch.softmax(capped.masked_fill(~visible, float("-inf")), dim=-1)
    assert plain.abs().max() > 2 * cap  # the scores reach past the cap
    for h in range(2):
        args = (plain[0, h].numpy(), cap, visible.numpy())
        np.testing.assert_allclose(ch14._capped_reference(*args), module[0, h].numpy(),
                                   atol=1e-12)
        np.testing.assert_allclose(capped_weights(*args), module[0, h].numpy(), atol=1e-12)
        assert np.abs(no_cap_mistake.fn(*args) - module[0, h].numpy()).max() > 0.01  # control
        assert after.fn(*args)[~visible.numpy()].min() > 0  # capped after: the future is read


@settings(max_examples=30, deadline=None)
@given(seq=st.integers(2, 6), cap=st.sampled_from([1.0, 5.0, 50.0]), seed=st.integers(0, 2**16))
def test_the_learners_capped_weights_equal_the_package_and_stay_causal(seq, cap, seed):
    gen = np.random.default_rng(seed)
    scores = gen.normal(size=(seq, seq)) * 3 * cap
    mask = np.tril(np.ones((seq, seq), dtype=bool))
    want = ch14._capped_reference(scores, cap, mask)
    np.testing.assert_allclose(capped_weights(scores, cap, mask), want, atol=1e-12)
    assert (want[~mask] == 0).all()
    np.testing.assert_allclose(want.sum(-1), 1.0)


# --- 4: the layer pattern is Hugging Face's, the bytes those of a simulated cache ------------


def test_the_layer_pattern_is_gemma_3s_and_gpt_oss():
    transformers = pytest.importorskip("transformers")
    first = next(m for m in ch14.STACK_MISTAKES if "put first" in m.name)
    for n_layers, local_per_global, hf in (
        (26, 5, transformers.Gemma3TextConfig(num_hidden_layers=26)),
        (62, 5, transformers.Gemma3TextConfig(num_hidden_layers=62)),
        (24, 1, transformers.GptOssConfig(num_hidden_layers=24)),
        (5, 1, transformers.GptOssConfig(num_hidden_layers=5)),
    ):
        assert sinks.layer_pattern(n_layers, local_per_global) == tuple(hf.layer_types)
    args = ex.EXERCISES["sinks-streaming-4"].cases()[1]  # Gemma 3 1B: 26 layers
    assert first.fn(*args) != ch14._stack_bytes_reference(*args)  # the control


def _simulated_bytes(n_layers, local_per_global, length, window, n_kv_heads, d_head,
                     bytes_per_value) -> int:
    """Read ``length`` tokens into each layer's cache, a sliding layer evicting past its window,
    as ``ModernConfig.window_of`` says which layers slide; count the numbers held."""
    config = ModernConfig(n_layers=n_layers, sliding_window=window,
                          layer_types=sinks.layer_pattern(n_layers, local_per_global))
    held = 0
    for layer in range(n_layers):
        cache: list[int] = []
        for t in range(length):
            cache.append(t)
            if config.window_of(layer) is not None and len(cache) > window:
                cache.pop(0)
        held += len(cache) * 2 * n_kv_heads * d_head  # a key and a value per token
    return held * bytes_per_value


@pytest.mark.parametrize("case", range(8))
def test_the_cache_bytes_are_those_of_a_simulated_cache(case):
    args = ex.EXERCISES["sinks-streaming-4"].cases()[case]
    if args[2] > 10_000:  # the long texts: simulate them shorter, with the same stack
        args = (*args[:2], 3 * args[3] + 7, *args[3:])
    want = ch14._stack_bytes_reference(*args)
    assert want == _simulated_bytes(*args) == alternating_cache_bytes(*args)


@settings(max_examples=100, deadline=None)
@given(n_layers=st.integers(1, 14), local_per_global=st.integers(0, 6),
       length=st.integers(1, 40), window=st.integers(1, 20))
def test_the_learners_cache_bytes_equal_the_package_on_random_stacks(n_layers, local_per_global,
                                                                     length, window):
    args = (n_layers, local_per_global, length, window, 2, 4, 2)
    assert alternating_cache_bytes(*args) == ch14._stack_bytes_reference(*args)
    assert alternating_cache_bytes(*args) == _simulated_bytes(*args)
