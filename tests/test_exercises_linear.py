"""Chapter 15's checked exercises (``linear-attention-1`` … ``-4``): the references are what the
package's linear attention, gated delta rule and byte counts compute, correct numpy answers pass,
each catalogued mistake is named alone, a hand-written wrong answer for each mistake gets its
name, and the checker never raises, never hangs and judges its own copy of the inputs.

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
from course_attention import grouped_query
from course_attention import linear_attention as la
from course_attention.exercises import ch15_linear_attention as ch15
from course_attention.exercises import core

IDS = [f"linear-attention-{i}" for i in range(1, 5)]


# --- correct answers, written as a learner would (the chapter's solutions) --------------------


def phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # elu(x) + 1


def linear_step(state, z, phi_q, phi_k, v):
    state = state + np.outer(phi_k, v)  # (d_k, d_v): write the token
    z = z + phi_k
    return state, z, state.T @ phi_q / (phi_q @ z)  # then read it, itself included


def delta_step(state, q, k, v, beta):
    error = v - state.T @ k  # what the memory gets wrong for k
    state = state + beta * np.outer(k, error)
    return state, state.T @ q / np.sqrt(len(q))


def linear_attention_chunked(q, k, v, chunk_size):
    fq, fk = phi(q), phi(k)
    n, c = len(q), chunk_size
    state, z = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1])
    out = np.zeros((n, v.shape[1]))
    for s in range(0, n, c):
        qc, kc, vc = fq[s:s + c], fk[s:s + c], v[s:s + c]
        inside = np.tril(qc @ kc.T)  # the chunk's own tokens, causally
        out[s:s + c] = (qc @ state + inside @ vc) / (qc @ z + inside.sum(-1))[:, None]
        state, z = state + kc.T @ vc, z + kc.sum(0)  # after the chunk
    return out


def state_and_cache_bytes(n_layers, heads, d_k, d_v, length, bytes_per_value):
    state = n_layers * heads * d_k * d_v * bytes_per_value
    kv = length * n_layers * heads * (d_k + d_v) * bytes_per_value
    return state, kv


SOLUTIONS = dict(zip(IDS, [linear_step, delta_step, linear_attention_chunked,
                           state_and_cache_bytes], strict=True))


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_learners_numpy_answer_passes(exercise_id):
    passed, message = ex.evaluate(exercise_id, SOLUTIONS[exercise_id])
    assert passed, message


def test_the_four_exercises_are_registered_with_difficulty_and_time():
    badges = [ex.EXERCISES[i].badge for i in IDS]
    assert badges == ["★☆☆ · ~10 min", "★★☆ · ~10 min", "★★★ · ~20 min", "★☆☆ · ~10 min"]


# --- each catalogued mistake is telling, and named alone --------------------------------------


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_mistake_is_telling_and_named_alone(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    for mistake in exercise.mistakes:
        telling = 0
        for args in exercise.cases():
            want = exercise.reference(*copy.deepcopy(args))
            try:
                with np.errstate(all="ignore"):
                    got = mistake.fn(*copy.deepcopy(args))
            except ValueError:  # a transposed product, where d_k ≠ d_v
                continue
            telling += core._compare(want, got, exercise) is not None
        assert telling >= 1, mistake.name
        passed, message = ex.evaluate(exercise_id, mistake.fn)
        assert not passed and f"Likely mistake: {mistake.name}." in message, message
        assert "Or, just as likely" not in message, message


@pytest.mark.parametrize("exercise_id", ["linear-attention-1", "linear-attention-2"])
def test_the_transposed_products_run_on_the_square_cases_first_and_fail_on_the_others(
        exercise_id):
    """A transposed write or read runs only where ``d_k = d_v``: the first cases are square, so
    its wrong numbers come before its error; the others are not, where it raises."""
    exercise = ex.EXERCISES[exercise_id]
    cases = exercise.cases()
    square = [args[0].shape[0] == args[0].shape[1] for args in cases]
    assert square[0] and not all(square)
    for mistake in exercise.mistakes:
        if "transposed" not in mistake.name and "instead of Sᵀ" not in mistake.name:
            continue
        for args, is_square in zip(cases, square, strict=True):
            if is_square:
                with np.errstate(all="ignore"):
                    mistake.fn(*copy.deepcopy(args))
            else:
                with pytest.raises(ValueError):
                    mistake.fn(*copy.deepcopy(args))


def test_the_cases_tell_the_chunk_boundaries_apart():
    """The cases hold a length that C does not divide, chunks of 1 (the recurrent form) and one
    chunk longer than the text (the parallel form)."""
    cases = ex.EXERCISES["linear-attention-3"].cases()
    sizes = [(len(q), c) for q, _, _, c in cases]
    assert any(n % c for n, c in sizes) and any(c == 1 for _, c in sizes)
    assert any(c > n for n, c in sizes) and any(n % c == 0 and 1 < c < n for n, c in sizes)


# --- one hand-written wrong answer per catalogued mistake --------------------------------------


def step_read_before(state, z, phi_q, phi_k, v):
    out = state.T @ phi_q / (phi_q @ z)
    return state + np.outer(phi_k, v), z + phi_k, out


def step_unnormalised(state, z, phi_q, phi_k, v):
    state = state + phi_k[:, None] * v[None, :]
    return state, z + phi_k, state.T @ phi_q


def step_sum_of_z(state, z, phi_q, phi_k, v):
    state, z = state + np.outer(phi_k, v), z + phi_k
    return state, z, state.T @ phi_q / np.sum(z)


def step_z_kept(state, z, phi_q, phi_k, v):
    state = state + np.outer(phi_k, v)
    return state, z, state.T @ phi_q / (phi_q @ z)


def step_outer_transposed(state, z, phi_q, phi_k, v):
    state, z = state + np.outer(v, phi_k), z + phi_k
    return state, z, state.T @ phi_q / (phi_q @ z)


def step_read_transposed(state, z, phi_q, phi_k, v):
    state, z = state + np.outer(phi_k, v), z + phi_k
    return state, z, state @ phi_q / (phi_q @ z)


def step_phi_again(state, z, phi_q, phi_k, v):
    fq, fk = phi(phi_q), phi(phi_k)
    state, z = state + np.outer(fk, v), z + fk
    return state, z, state.T @ fq / (fq @ z)


def delta_value_written(state, q, k, v, beta):
    state = state + beta * np.outer(k, v)
    return state, state.T @ q / np.sqrt(len(q))


def delta_no_beta(state, q, k, v, beta):
    state = state + np.outer(k, v - state.T @ k)
    return state, state.T @ q / np.sqrt(len(q))


def delta_sign(state, q, k, v, beta):
    state = state + beta * np.outer(k, state.T @ k - v)
    return state, state.T @ q / np.sqrt(len(q))


def delta_outer_transposed(state, q, k, v, beta):
    state = state + beta * np.outer(v - state.T @ k, k)
    return state, state.T @ q / np.sqrt(len(q))


def delta_memory_transposed(state, q, k, v, beta):
    state = state + beta * np.outer(k, v - state @ k)
    return state, state.T @ q / np.sqrt(len(q))


def delta_read_before(state, q, k, v, beta):
    out = state.T @ q / np.sqrt(len(q))
    return state + beta * np.outer(k, v - state.T @ k), out


def delta_key_scaled(state, q, k, v, beta):
    k = k / np.sqrt(len(k))
    state = state + beta * np.outer(k, v - state.T @ k)
    return state, state.T @ q


def delta_unscaled(state, q, k, v, beta):
    t = torch.from_numpy(state) + beta * torch.outer(torch.from_numpy(k),
                                                     torch.from_numpy(v - state.T @ k))
    return t.numpy(), (t.T @ torch.from_numpy(q)).numpy()


def _chunks(q, k, v, c, *, spans, mask=0, before=False, carry_z=True, features=phi):
    fq, fk = features(q), features(k)
    state, z = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1])
    out = np.zeros((len(q), v.shape[1]))
    for s, e in spans(len(q), c):
        qc, kc, vc = fq[s:e], fk[s:e], v[s:e]
        if before:
            state, z = state + kc.T @ vc, z + kc.sum(0)
        inside = qc @ kc.T if mask is None else np.tril(qc @ kc.T, mask)
        den = inside.sum(-1) + (qc @ z if carry_z else 0)
        out[s:e] = (qc @ state + inside @ vc) / den[:, None]
        if not before:
            state, z = state + kc.T @ vc, z + kc.sum(0)
    return out


def _spans(n, c):
    return [(s, min(s + c, n)) for s in range(0, n, c)]


def chunk_unmasked(q, k, v, c):
    return _chunks(q, k, v, c, spans=_spans, mask=None)


def chunk_state_first(q, k, v, c):
    return _chunks(q, k, v, c, spans=_spans, before=True)


def chunk_strict_mask(q, k, v, c):
    return _chunks(q, k, v, c, spans=_spans, mask=-1)


def chunk_overlap(q, k, v, c):
    return _chunks(q, k, v, c, spans=lambda n, c: [(s, min(s + c + 1, n))
                                                   for s in range(0, n, c)])


def chunk_gap(q, k, v, c):
    return _chunks(q, k, v, c, spans=lambda n, c: [(s, s + c - 1) for s in range(0, n, c)])


def chunk_last_dropped(q, k, v, c):
    return _chunks(q, k, v, c, spans=lambda n, c: [(i * c, i * c + c) for i in range(n // c)])


def chunk_z_local(q, k, v, c):
    return _chunks(q, k, v, c, spans=_spans, carry_z=False)


def chunk_no_phi(q, k, v, c):
    return _chunks(q, k, v, c, spans=_spans, features=lambda x: x)


def bytes_state_per_token(n_layers, heads, d_k, d_v, length, b):
    state, kv = state_and_cache_bytes(n_layers, heads, d_k, d_v, length, b)
    return length * state, kv


def bytes_no_keys(n_layers, heads, d_k, d_v, length, b):
    return n_layers * heads * d_k * d_v * b, length * n_layers * heads * d_v * b


def bytes_no_values(n_layers, heads, d_k, d_v, length, b):
    return n_layers * heads * d_k * d_v * b, length * n_layers * heads * d_k * b


def bytes_one_token(n_layers, heads, d_k, d_v, length, b):
    return state_and_cache_bytes(n_layers, heads, d_k, d_v, 1, b)


def bytes_state_as_vectors(n_layers, heads, d_k, d_v, length, b):
    kv = length * n_layers * heads * (d_k + d_v) * b
    return n_layers * heads * (d_k + d_v) * b, kv


def bytes_one_head(n_layers, heads, d_k, d_v, length, b):
    return n_layers * d_k * d_v * b, state_and_cache_bytes(n_layers, heads, d_k, d_v, length, b)[1]


def bytes_in_bits(*args):
    return tuple(8 * x for x in state_and_cache_bytes(*args))


WRONG = [  # (exercise, answer, words of the mistake's name)
    ("linear-attention-1", step_read_before, "read before the write"),
    ("linear-attention-1", step_unnormalised, "no normaliser"),
    ("linear-attention-1", step_sum_of_z, "Σ z"),
    ("linear-attention-1", step_z_kept, "z not updated"),
    ("linear-attention-1", step_outer_transposed, "outer product transposed"),
    ("linear-attention-1", step_read_transposed, "read as S φ(q)"),
    ("linear-attention-1", step_phi_again, "applied again"),
    ("linear-attention-2", delta_value_written, "v written instead of the error"),
    ("linear-attention-2", delta_no_beta, "β forgotten"),
    ("linear-attention-2", delta_sign, "sign flipped"),
    ("linear-attention-2", delta_outer_transposed, "outer product transposed"),
    ("linear-attention-2", delta_memory_transposed, "read as S k"),
    ("linear-attention-2", delta_read_before, "read before the write"),
    ("linear-attention-2", delta_key_scaled, "put on the key"),
    ("linear-attention-2", delta_unscaled, "not divided by √d_k"),
    ("linear-attention-3", chunk_unmasked, "no causal mask"),
    ("linear-attention-3", chunk_state_first, "updated before"),
    ("linear-attention-3", chunk_strict_mask, "without its diagonal"),
    ("linear-attention-3", chunk_overlap, "overlap by one"),
    ("linear-attention-3", chunk_gap, "one token short"),
    ("linear-attention-3", chunk_last_dropped, "shorter chunk dropped"),
    ("linear-attention-3", chunk_z_local, "z not carried"),
    ("linear-attention-3", chunk_no_phi, "no feature map"),
    ("linear-attention-4", bytes_state_per_token, "state counted per token"),
    ("linear-attention-4", bytes_no_keys, "keys forgotten"),
    ("linear-attention-4", bytes_no_values, "values forgotten"),
    ("linear-attention-4", bytes_one_token, "cache of one token"),
    ("linear-attention-4", bytes_state_as_vectors, "d_k + d_v numbers"),
    ("linear-attention-4", bytes_one_head, "one state per layer"),
    ("linear-attention-4", bytes_in_bits, "bits counted"),
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


def test_the_classic_delta_mistake_gets_its_aimed_hint(capsys):
    """Writing v instead of v − Sᵀ k: named at once, and the second failure's hint is the one
    aimed at it (read the memory before writing), not the exercise's."""
    (classic,) = [m for m in ch15.DELTA_MISTAKES if "v written instead" in m.name]
    ex.check("linear-attention-2", delta_value_written)
    first = capsys.readouterr().out
    assert f"Likely mistake: {classic.name}." in first and "Hint:" not in first
    ex.check("linear-attention-2", delta_value_written)
    assert f"Hint: {classic.hint}" in capsys.readouterr().out


def test_a_transposed_write_that_raises_first_gets_the_layout_explained():
    def broadcast_outer(state, z, phi_q, phi_k, v):  # raises on every case with d_k ≠ d_v
        if state.shape[0] == state.shape[1]:
            return linear_step(state, z, phi_q, phi_k, v)
        state = state + np.outer(v, phi_k)
        return state, z + phi_k, state.T @ phi_q / (phi_q @ (z + phi_k))

    passed, message = ex.evaluate("linear-attention-1", broadcast_outer)
    assert not passed and "ValueError" in message
    assert f"What it means: {ch15._OUTER_ERRORS[0].meaning}." in message


def test_a_single_number_for_the_bytes_is_told_a_pair_is_expected():
    passed, message = ex.evaluate("linear-attention-4", lambda *a: 1)
    assert not passed and "expected a tuple of 2 results, got int" in message


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
    ("a dict", lambda *a: {"state": 1}),
    ("text", lambda *a: "[0, 1]"),
    ("a generator", _generator),
    ("a set", lambda *a: {0, 1, 2}),
    ("an object", lambda *a: object()),
    ("ragged lists", lambda *a: [[0, 1], [2]]),
    ("strings in an array", lambda *a: np.array(["a", "b"])),
    ("NaN", lambda *a: np.nan),
    ("a boolean", lambda *a: True),
    ("a float32 tensor", lambda *a: torch.zeros(3, dtype=torch.float32)),
    ("a tuple of NaN", lambda *a: (np.nan, np.nan, np.nan)),
    ("a tuple too short", lambda *a: (np.zeros(3),)),
    ("a tuple of text", lambda *a: ("S", "z", "o")),
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
    """``answer``, after which every input array is overwritten (as ``x += …`` in place does)."""

    def scribble(*args):
        result = answer(*copy.deepcopy(args))
        for a in args:
            if isinstance(a, np.ndarray):
                a[...] = 0
        return result

    return scribble


@pytest.mark.parametrize("exercise_id", IDS[:3])
def test_an_answer_that_overwrites_its_inputs_is_judged_on_the_cases(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    passed, message = ex.evaluate(exercise_id, _scribbling(SOLUTIONS[exercise_id]))
    assert passed, message
    first = exercise.mistakes[0]
    passed, message = ex.evaluate(exercise_id, _scribbling(first.fn))
    assert not passed and f"Likely mistake: {first.name}." in message
    shown = core._inputs_line(exercise, exercise.cases()[0])
    assert shown in message  # the case's own numbers, not the zeros written over them


def test_an_in_place_write_into_the_state_is_right():
    def in_place(state, z, phi_q, phi_k, v):
        state += np.outer(phi_k, v)  # the learner's `+=` changes the input
        z += phi_k
        return state, z, state.T @ phi_q / (phi_q @ z)

    assert ex.evaluate("linear-attention-1", in_place)[0]
    assert ex.evaluate("linear-attention-1", linear_step)[0]


# --- 1: the step, run token by token, is the package's recurrent linear attention -------------


def _run_steps(step, q, k, v):
    """``(seq, d_v)``: ``step`` from an empty state over one head's tokens."""
    fq, fk = phi(q), phi(k)
    state, z = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1])
    out = []
    for t in range(len(q)):
        state, z, o = step(state, z, fq[t], fk[t], v[t])
        out.append(o)
    return np.stack(out), state, z


def test_the_step_run_token_by_token_is_the_packages_linear_attention():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 23, d, generator=gen, dtype=torch.float64) for d in (4, 4, 3))
    want = la.linear_attention(q, k, v, mode="recurrent")
    before = next(m for m in ch15.STEP_MISTAKES if "read before" in m.name)
    for h in range(2):
        args = (q[0, h].numpy(), k[0, h].numpy(), v[0, h].numpy())
        for step in (ch15._step_reference, linear_step):
            got, state, z = _run_steps(step, *args)
            np.testing.assert_allclose(got, want[0, h].numpy(), rtol=1e-5, atol=1e-9)
            fk = la.elu_feature(k[0, h]).numpy()
            np.testing.assert_allclose(state, fk.T @ args[2], atol=1e-12)
            np.testing.assert_allclose(z, fk.sum(0), atol=1e-12)
        with np.errstate(all="ignore"):
            wrong = _run_steps(before.fn, *args)[0]
        assert np.isnan(wrong[0]).all()  # the control: the first token reads nothing
        assert np.abs(wrong[1:] - want[0, h, 1:].numpy()).max() > 1e-3
    assert (la.elu_feature(q) > 0).all()  # the map the step's inputs come from
    x = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(phi(x), la.elu_feature(torch.from_numpy(x)).numpy(), atol=1e-15)
    np.testing.assert_allclose(ch15._elu1(x), phi(x), atol=0)


def test_the_step_cases_hold_what_earlier_tokens_wrote():
    """Each case's S and z are sums over earlier tokens of φ(k) vᵀ and φ(k): positive z, a
    normaliser that a real prefix gives (the empty prefix too)."""
    for state, z, phi_q, phi_k, v in ex.EXERCISES["linear-attention-1"].cases():
        assert (z >= 0).all() and (phi_q > 0).all() and (phi_k > 0).all()
        assert state.shape == (len(z), len(v))
    assert not ex.EXERCISES["linear-attention-1"].cases()[-1][1].any()  # the first token


# --- 2: the delta step, run token by token, is the package's DeltaNet -------------------------


def test_the_delta_step_run_token_by_token_is_the_packages_delta_rule():
    gen = torch.Generator().manual_seed(1)
    n, d_k, d_v = 17, 4, 3
    q, k = (torch.nn.functional.normalize(torch.randn(1, 2, n, d_k, generator=gen,
                                                      dtype=torch.float64), dim=-1)
            for _ in range(2))
    v = torch.randn(1, 2, n, d_v, generator=gen, dtype=torch.float64)
    beta = torch.rand(1, 2, n, generator=gen, dtype=torch.float64)
    want = la.delta_rule(q, k, v, beta)
    _, final = la.gated_delta_rule(q, k, v, torch.zeros_like(beta), beta)
    classic = next(m for m in ch15.DELTA_MISTAKES if "v written instead" in m.name)
    for h in range(2):
        for step in (ch15._delta_reference, delta_step, classic.fn):
            state, out = np.zeros((d_k, d_v)), []
            for t in range(n):
                state, o = step(state, q[0, h, t].numpy(), k[0, h, t].numpy(),
                                v[0, h, t].numpy(), float(beta[0, h, t]))
                out.append(o)
            gap = np.abs(np.stack(out) - want[0, h].numpy()).max()
            if step is classic.fn:  # the control: linear attention's write, unnormalised
                assert gap > 1e-2
                continue
            assert gap < 1e-12
            np.testing.assert_allclose(state, final[0, h].numpy(), atol=1e-12)


def test_beta_1_overwrites_what_a_unit_key_reads():
    """The case with β = 1: afterwards the key reads exactly v, whatever was stored under it;
    linear attention's write (the classic mistake) reads the old value plus v."""
    state, q, k, v, beta = ex.EXERCISES["linear-attention-2"].cases()[2]
    assert beta == 1.0 and abs(np.linalg.norm(k) - 1) < 1e-12
    assert np.abs(state.T @ k).max() > 0.5  # something was stored under k
    new_state, _ = ch15._delta_reference(state, q, k, v, beta)
    np.testing.assert_allclose(new_state.T @ k, v, atol=1e-12)
    classic = next(m for m in ch15.DELTA_MISTAKES if "v written instead" in m.name)
    np.testing.assert_allclose(classic.fn(state, q, k, v, beta)[0].T @ k, state.T @ k + v,
                               atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(d_k=st.integers(1, 5), d_v=st.integers(1, 5), beta=st.floats(0.0, 1.0),
       seed=st.integers(0, 2**16))
def test_the_learners_delta_step_equals_the_package_from_any_state(d_k, d_v, beta, seed):
    gen = np.random.default_rng(seed)
    state = gen.normal(size=(d_k, d_v))
    q, k = (x / np.linalg.norm(x) for x in gen.normal(size=(2, d_k)) + 1e-3)
    v = gen.normal(size=d_v)
    want = ch15._delta_reference(state, q, k, v, beta)
    for got, expected in zip(delta_step(state, q, k, v, beta), want, strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-12)


# --- 3: the chunkwise form equals the recurrent and parallel ones -----------------------------


@settings(max_examples=40, deadline=None)
@given(seq=st.integers(1, 20), chunk=st.integers(1, 24), d_k=st.integers(1, 4),
       d_v=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_the_learners_chunked_form_equals_every_form_of_the_package(seq, chunk, d_k, d_v, seed):
    gen = np.random.default_rng(seed)
    q, k = gen.normal(size=(2, seq, d_k))
    v = gen.normal(size=(seq, d_v))
    want = ch15._chunk_reference(q, k, v, chunk)
    tensors = [torch.from_numpy(x)[None, None] for x in (q, k, v)]
    exact = la.linear_attention(*tensors, mode="recurrent", eps=0.0)[0, 0].numpy()
    np.testing.assert_allclose(linear_attention_chunked(q, k, v, chunk), exact, atol=1e-12)
    for mode in ("parallel", "chunk"):
        other = la.linear_attention(*tensors, mode=mode, chunk_size=chunk)[0, 0].numpy()
        np.testing.assert_allclose(other, want, atol=1e-12)


def test_the_package_eps_does_not_decide_on_the_cases():
    """The package adds eps = 1e-6 to each denominator, the learner may or may not: every
    denominator of the cases is above 1, so both pass (the chapter's teaching copy has it)."""
    for q, k, _, _ in ex.EXERCISES["linear-attention-3"].cases():
        fq, fk = phi(q), phi(k)
        assert np.tril(fq @ fk.T).sum(-1).min() > 1.0
    for _, z, phi_q, phi_k, _ in ex.EXERCISES["linear-attention-1"].cases():
        assert phi_q @ (z + phi_k) > 1.0

    def with_eps(state, z, phi_q, phi_k, v):
        state, z = state + np.outer(phi_k, v), z + phi_k
        return state, z, state.T @ phi_q / (phi_q @ z + 1e-6)

    def chunked_with_eps(q, k, v, chunk_size):
        tensors = [torch.from_numpy(x)[None, None] for x in (q, k, v)]
        return la.linear_attention(*tensors, mode="chunk", chunk_size=chunk_size)[0, 0]

    assert ex.evaluate("linear-attention-1", with_eps)[0]
    assert ex.evaluate("linear-attention-3", chunked_with_eps)[0]


def test_an_unmasked_chunk_reads_the_future():
    """The control: without the mask inside a chunk, changing the last value of a chunk changes
    the outputs of the earlier tokens of that chunk; with it, none of theirs."""
    q, k, v, c = ex.EXERCISES["linear-attention-3"].cases()[1]
    unmasked = next(m for m in ch15.CHUNK_MISTAKES if "no causal mask" in m.name).fn
    later = v.copy()
    later[c - 1] += 1.0
    for fn, reads_ahead in ((linear_attention_chunked, False), (unmasked, True)):
        gap = np.abs(fn(q, k, later, c)[: c - 1] - fn(q, k, v, c)[: c - 1]).max()
        assert (gap > 1e-3) == reads_ahead


# --- 4: the bytes are the package's, and the crossover at d_head / 2 tokens -------------------


@pytest.mark.parametrize("case", range(6))
def test_the_bytes_are_the_packages(case):
    L, H, dk, dv, T, b = ex.EXERCISES["linear-attention-4"].cases()[case]
    state, kv = ch15._bytes_reference(L, H, dk, dv, T, b)
    assert (state, kv) == state_and_cache_bytes(L, H, dk, dv, T, b)
    assert state == la.state_bytes(L, H, dk, dv, b)
    if dk == dv:
        assert kv == T * grouped_query.kv_cache_bytes_per_token(L, H, dk, b)


def test_the_state_weighs_the_cache_of_d_head_over_2_tokens():
    """With d_k = d_v = d, the state of d² numbers per head equals the cache of d / 2 tokens:
    cheaper from there on, and the KV cache at 4k tokens of Llama 2 7B's shape is 64 × the
    state."""
    for d in (16, 64, 128, 256):
        state, kv = ch15._bytes_reference(32, 32, d, d, d // 2, 2)
        assert state == kv
        assert ch15._bytes_reference(32, 32, d, d, d // 2 + 1, 2)[1] > state  # the control
    state, kv = ch15._bytes_reference(32, 32, 128, 128, 4096, 2)
    assert kv == 64 * state
