"""Chapter 12's checked exercises (``modern-attention-1`` … ``-5``): the references are the
package's modern layer, correct numpy answers pass, and each catalogued mistake is told apart on
every test case.

The generic checks (the reference passes, each mistake is named, the checker never raises, speaks
Chinese, copies its inputs) run for every registered exercise in ``test_exercises.py``,
``test_exercises_feedback.py``, ``test_checker_adversarial.py`` and ``test_i18n_exercises.py``.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from _checker import fresh_session  # noqa: F401 - autouse: every test starts a fresh session

from course_attention import exercises as ex
from course_attention import modern
from course_attention.exercises import ch12_modern_attention as ch12
from course_attention.exercises import core
from course_attention.rope_scaling import yarn_scaling

IDS = [f"modern-attention-{i}" for i in range(1, 6)]


# --- correct numpy answers, written as a learner would (the chapter's solutions) -------------


def rms_norm(x, weight, eps):
    return weight * x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)


def rope_halves(x, positions, theta):
    d = x.shape[-1]
    angle = positions[:, None] * theta ** (-np.arange(0, d, 2) / d)  # (seq, d/2)
    angle = np.concatenate([angle, angle], axis=-1)  # (seq, d): both halves
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * np.cos(angle) + rotated * np.sin(angle)


def swiglu(x, W_gate, W_up, W_down):
    gate = x @ W_gate
    return (gate / (1 + np.exp(-gate)) * (x @ W_up)) @ W_down


def scores(x, W_q, W_k, q_weight, k_weight, n_heads, n_kv_heads, positions, theta):
    batch, seq, _ = x.shape
    d_head = W_q.shape[1] // n_heads
    q = (x @ W_q).reshape(batch, seq, n_heads, d_head).transpose(0, 2, 1, 3)
    k = (x @ W_k).reshape(batch, seq, n_kv_heads, d_head).transpose(0, 2, 1, 3)
    q = rope_halves(rms_norm(q, q_weight, 1e-6), positions, theta)
    k = rope_halves(rms_norm(k, k_weight, 1e-6), positions, theta)
    k = np.repeat(k, n_heads // n_kv_heads, axis=1)
    return q @ k.swapaxes(-1, -2) / np.sqrt(d_head)


def yarn_frequencies(d, theta, factor, original_context, beta_fast=32, beta_slow=1):
    freq = theta ** (-np.arange(0, d, 2) / d)  # (d/2,)

    def pair(turns):
        return d * math.log(original_context / (2 * math.pi * turns)) / (2 * math.log(theta))

    low = max(math.floor(pair(beta_fast)), 0)
    high = min(math.ceil(pair(beta_slow)), d - 1)
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)  # 1: interpolated
    return freq / factor * ramp + freq * (1 - ramp)


SOLUTIONS = dict(zip(IDS, [rms_norm, rope_halves, swiglu, scores, yarn_frequencies], strict=True))


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_learners_float64_numpy_answer_passes(exercise_id):
    passed, message = ex.evaluate(exercise_id, SOLUTIONS[exercise_id])
    assert passed, message


def test_the_five_exercises_are_registered_with_difficulty_and_time():
    badges = [ex.EXERCISES[i].badge for i in IDS]
    assert badges == ["★☆☆ · ~5 min", "★★☆ · ~10 min", "★☆☆ · ~5 min", "★★★ · ~20 min",
                      "★★★ · ~15 min"]


# --- each catalogued mistake is telling on every case, and named alone ------------------------


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_mistake_is_wrong_on_every_case_and_named_alone(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    cases = exercise.cases()
    for mistake in exercise.mistakes:
        for n, args in enumerate(cases, start=1):
            want = exercise.reference(*copy.deepcopy(args))
            got = mistake.fn(*copy.deepcopy(args))
            assert core._compare(want, got, exercise) is not None, (mistake.name, n)
        passed, message = ex.evaluate(exercise_id, mistake.fn)
        assert not passed and f"Likely mistake: {mistake.name}." in message
        assert "Or, just as likely" not in message, message


# --- the references are the package's modern layer ------------------------------------------


def test_rms_norm_is_the_modules_and_not_layer_norm():
    from course_attention import numpy_ref

    for x, weight, eps in ex.EXERCISES["modern-attention-1"].cases():
        norm = modern.RMSNorm(x.shape[-1], eps).double()
        with torch.no_grad():
            norm.weight.copy_(torch.from_numpy(weight))
            module = norm(torch.from_numpy(x)).numpy()  # statistics in float32, as HF
        np.testing.assert_allclose(ch12._rms_norm_reference(x, weight, eps), module,
                                   rtol=1e-6, atol=1e-7)
        layer = numpy_ref.layer_norm(x, weight, np.zeros_like(weight), eps)
        assert np.abs(layer - module).max() > 0.01  # the control: LayerNorm differs here
    centred = np.array([[1.0, -1.0, 2.0, -2.0]])  # mean 0: the two norms agree
    np.testing.assert_allclose(ch12._rms_norm_reference(centred, np.ones(4), 1e-5),
                               numpy_ref.layer_norm(centred, eps=1e-5), atol=1e-12)


def test_eps_outside_the_root_is_only_telling_when_eps_is_not_tiny():
    """Why the cases use an eps close to mean(x²): at eps = 1e-6 on unit-size rows the two
    placements differ by ~5e-7, inside the checker's tolerance."""
    outside = ch12.RMS_NORM_MISTAKES[2]
    assert "outside the square root" in outside.name
    x, weight = np.random.default_rng(0).normal(size=(3, 8)), np.ones(8)
    exercise = ex.EXERCISES["modern-attention-1"]
    want = ch12._rms_norm_reference(x, weight, 1e-6)
    assert 0 < np.abs(outside.fn(x, weight, 1e-6) - want).max() < 1e-5
    assert core._compare(want, outside.fn(x, weight, 1e-6), exercise) is None  # not telling
    for x, weight, eps in ex.EXERCISES["modern-attention-1"].cases():
        assert np.abs(outside.fn(x, weight, eps) - ch12._rms_norm_reference(x, weight, eps)
                      ).max() > 1e-3


def test_rope_halves_is_apply_rope():
    for x, positions, theta in ex.EXERCISES["modern-attention-2"].cases():
        d = x.shape[-1]
        want = ch12._rope_halves_reference(x, positions, theta)
        angle = np.concatenate([np.outer(positions, theta ** (-np.arange(0, d, 2) / d))] * 2, -1)
        exact = modern.apply_rope(torch.from_numpy(x), torch.from_numpy(np.cos(angle)),
                                  torch.from_numpy(np.sin(angle))).numpy()
        np.testing.assert_allclose(want, exact, atol=1e-12)
        # rope_cos_sin computes the angles in float32, as Hugging Face does: rounding only
        cos, sin = modern.rope_cos_sin(torch.from_numpy(positions), d, theta, torch.float64)
        hf = modern.apply_rope(torch.from_numpy(x), cos, sin).numpy()
        np.testing.assert_allclose(want, hf, atol=1e-4 * np.abs(x).max())


def test_the_neighbour_mistake_is_chapter_10s_rotation_and_differs_only_by_a_permutation():
    """Chapter 10's pairs (2i, 2i + 1) rotated, then the features put in halves order, give
    Llama's rotation: the mistake is a convention, not a different rotation."""
    from course_attention import numpy_ref

    x, positions, theta = ex.EXERCISES["modern-attention-2"].cases()[1]
    order = modern.halves_order(x.shape[-1]).numpy()
    neighbours = numpy_ref.rotary(x, positions, theta)  # chapter 10
    np.testing.assert_allclose(neighbours[..., order],
                               ch12._rope_halves_reference(x[..., order], positions, theta),
                               atol=1e-12)
    assert np.abs(neighbours - ch12._rope_halves_reference(x, positions, theta)).max() > 0.1


def test_swiglu_reference_is_the_module_and_leaves_torchs_random_state_alone():
    state = torch.get_rng_state()
    for args in ex.EXERCISES["modern-attention-3"].cases():
        np.testing.assert_allclose(ch12._swiglu_reference(*args), swiglu(*args), atol=1e-12)
    assert ex.evaluate("modern-attention-3", swiglu)[0]
    assert torch.equal(torch.get_rng_state(), state)


def _module_scores(args, qk_norm: bool, monkeypatch) -> np.ndarray:
    """The scores ``ModernAttention`` hands to its softmax, on the lower triangle (the causal
    mask puts −∞ above it), for one case of modern-attention-4."""
    x, W_q, W_k, q_weight, k_weight, n_heads, n_kv_heads, positions, theta = args
    d_model, d_head = x.shape[-1], W_q.shape[1] // n_heads
    config = modern.ModernConfig(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads,
                                 d_head=d_head, qk_norm=qk_norm, norm_eps=ch12.EPS,
                                 rope_theta=theta)
    torch.manual_seed(0)
    attention = modern.ModernAttention(config).double()
    with torch.no_grad():
        attention.q_proj.weight.copy_(torch.from_numpy(W_q.T))
        attention.k_proj.weight.copy_(torch.from_numpy(W_k.T))
        if qk_norm:
            attention.q_norm.weight.copy_(torch.from_numpy(q_weight))
            attention.k_norm.weight.copy_(torch.from_numpy(k_weight))
    angle = np.outer(positions, theta ** (-np.arange(0, d_head, 2) / d_head))
    angle = torch.from_numpy(np.concatenate([angle, angle], axis=-1))
    seen = []
    softmax = torch.softmax

    def spy(scores, *a, **k):
        seen.append(scores.detach().clone())
        return softmax(scores, *a, **k)

    monkeypatch.setattr(torch, "softmax", spy)
    with torch.no_grad():
        attention(torch.from_numpy(x), angle.cos(), angle.sin())
    monkeypatch.setattr(torch, "softmax", softmax)
    (captured,) = seen
    captured = captured.numpy()
    below = np.tril(np.ones(captured.shape[-2:], dtype=bool))
    assert np.isneginf(captured[..., ~below]).all()
    return np.where(below, captured, 0.0)


def test_gqa_scores_are_what_modern_attention_computes_with_qk_norm(monkeypatch):
    no_norm = next(m for m in ch12.GQA_MISTAKES if m.name.startswith("no QK-norm"))
    for args in ex.EXERCISES["modern-attention-4"].cases():
        below = np.tril(np.ones((args[0].shape[1],) * 2, dtype=bool))
        want = np.where(below, ch12._gqa_scores_reference(*copy.deepcopy(args)), 0.0)
        # the module's RMSNorm takes its statistics in float32 (as Hugging Face): rounding only
        np.testing.assert_allclose(_module_scores(args, True, monkeypatch), want, atol=1e-5)
        plain = _module_scores(args, False, monkeypatch)  # the control: without QK-norm
        np.testing.assert_allclose(plain, np.where(below, no_norm.fn(*args), 0.0), atol=1e-12)
        assert np.abs(plain - want).max() > 0.1


def test_norm_after_rope_is_only_telling_with_a_non_uniform_weight():
    """A rotation keeps the RMS of each head's vector: with a uniform weight, norm and rotation
    commute, which is why every case draws its weights at random."""
    after = ch12.GQA_MISTAKES[0]
    assert "after the rotation" in after.name
    x, W_q, W_k, q_weight, k_weight, *rest = ex.EXERCISES["modern-attention-4"].cases()[0]
    uniform = (x, W_q, W_k, np.full_like(q_weight, 1.3), np.full_like(k_weight, 0.7), *rest)
    np.testing.assert_allclose(after.fn(*uniform), ch12._gqa_scores_reference(*uniform),
                               atol=1e-12)
    assert not ex.evaluate("modern-attention-4", after.fn)[0]


def test_yarn_reference_is_the_packages_float32_rule_and_a_float64_answer_is_within_rounding():
    for args in ex.EXERCISES["modern-attention-5"].cases():
        want = ch12._yarn_reference(*args)
        assert want.shape == (args[0] // 2,)
        np.testing.assert_array_equal(want, yarn_scaling(*args[:4], *args[4:])[0].double().numpy())
        relative = np.abs(yarn_frequencies(*args) - want) / want
        assert relative.max() < 1e-6  # float32 rounding, far inside the checker's rtol of 1e-5
        for mistake in ch12.YARN_MISTAKES:  # every mistake moves some frequency by ≥ 4 %
            assert (np.abs(mistake.fn(*args) - want) / want).max() > 0.04, mistake.name


def test_a_yarn_answer_in_float32_passes_and_the_slowest_frequencies_are_judged():
    passed, _ = ex.evaluate("modern-attention-5",
                            lambda *a: yarn_frequencies(*a).astype(np.float32))
    assert passed  # float32 rounding is relative ~1e-7: no false reject

    def slow_pairs_wrong(*args):
        out = yarn_frequencies(*args)
        out[-1] *= 1.01  # the slowest frequency, ~3e-7 in the Qwen3 case, 1 % off
        return out

    passed, message = ex.evaluate("modern-attention-5", slow_pairs_wrong)
    assert not passed and "No known mistake fits" in message
