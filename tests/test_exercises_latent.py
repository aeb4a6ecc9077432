"""Chapter 13's checked exercises (``latent-sparse-1`` … ``-4``): the references are the package's
MLA and sparse code, correct numpy answers pass, and each catalogued mistake is told apart on
every test case.

The generic checks (the reference passes, each mistake is named, the checker never raises, speaks
Chinese, copies its inputs) run for every registered exercise in ``test_exercises.py``,
``test_exercises_feedback.py``, ``test_checker_adversarial.py`` and ``test_i18n_exercises.py``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from _checker import fresh_session  # noqa: F401 - autouse: every test starts a fresh session

from course_attention import exercises as ex
from course_attention import mla, sparse
from course_attention.exercises import ch13_latent_and_sparse as ch13
from course_attention.exercises import core
from course_attention.grouped_query import kv_cache_bytes_per_token
from course_attention.modern import rope_cos_sin

IDS = [f"latent-sparse-{i}" for i in range(1, 5)]


# --- correct numpy answers, written as a learner would (the chapter's solutions) -------------


def mla_cache_bytes(n_layers, n_heads, d_head, d_c, d_rope, bytes_per_number):
    return n_layers * (d_c + d_rope) * bytes_per_number  # no head count: all heads share it


def absorbed_scores(q_nope, c_kv, kv_b_weight, d_rope):
    n_heads, d_nope = q_nope.shape[1], q_nope.shape[-1]
    d_c = c_kv.shape[-1]
    W_UK = kv_b_weight.reshape(n_heads, -1, d_c)[:, :d_nope]  # (heads, d_nope, d_c)
    q_c = np.einsum("bhqn,hnc->bhqc", q_nope, W_UK)  # (batch, heads, seq_q, d_c)
    return q_c @ c_kv[:, None].swapaxes(-1, -2) / np.sqrt(d_nope + d_rope)


def rope_halves(x, positions, theta):  # chapter 12's exercise
    d = x.shape[-1]
    angle = positions[:, None] * theta ** (-np.arange(0, d, 2) / d)
    angle = np.concatenate([angle, angle], axis=-1)
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * np.cos(angle) + rotated * np.sin(angle)


def mla_scores(q, k_nope, k_rope, positions, theta):
    d_nope, d_rope = k_nope.shape[-1], k_rope.shape[-1]
    q_nope, q_rope = q[..., :d_nope], q[..., d_nope:]
    q_rope = rope_halves(q_rope, positions, theta)
    k_rope = rope_halves(k_rope, positions, theta)[:, None]  # (batch, 1, seq, d_rope)
    nope = q_nope @ k_nope.swapaxes(-1, -2)
    rope = q_rope @ k_rope.swapaxes(-1, -2)
    return (nope + rope) / np.sqrt(d_nope + d_rope)


def topk_causal(scores, k):
    seq = scores.shape[-1]
    visible = np.tril(np.ones((seq, seq), dtype=bool))
    masked = np.where(visible, scores, -np.inf)
    top = np.argsort(-masked, axis=-1)[:, :k]
    mask = np.zeros((seq, seq), dtype=bool)
    np.put_along_axis(mask, top, True, axis=-1)
    return mask & visible


SOLUTIONS = dict(zip(IDS, [mla_cache_bytes, absorbed_scores, mla_scores, topk_causal],
                     strict=True))


@pytest.mark.parametrize("exercise_id", IDS)
def test_a_learners_float64_numpy_answer_passes(exercise_id):
    passed, message = ex.evaluate(exercise_id, SOLUTIONS[exercise_id])
    assert passed, message


def test_the_four_exercises_are_registered_with_difficulty_and_time():
    badges = [ex.EXERCISES[i].badge for i in IDS]
    assert badges == ["★☆☆ · ~5 min", "★★☆ · ~15 min", "★★★ · ~20 min", "★★☆ · ~10 min"]


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


# --- 1: the references are the package's cache ----------------------------------------------


def test_cache_bytes_is_the_published_formula_and_what_the_cache_holds():
    v3 = next(c for c in mla.PUBLISHED if c.name == "DeepSeek-V3")
    assert ch13._cache_bytes_reference(v3.n_layers, v3.n_heads, v3.d_head, v3.d_c, v3.d_rope,
                                       2) == mla.cache_bytes_per_token(v3) == 61 * 576 * 2
    # the course's scale in float64: what a real MLACache holds per token
    L, H, dh, dc, dr, b = ex.EXERCISES["latent-sparse-1"].cases()[2]
    config = mla.MLAConfig(n_layers=L, n_heads=H, d_nope=dh, d_c=dc, d_rope=dr, d_v=dh)
    torch.manual_seed(0)
    model = mla.MLAGPT(config).double()
    cache, tokens = model.new_cache(), 7
    with torch.no_grad():
        model.step(torch.randint(0, config.vocab_size, (1, tokens)), cache)
    assert b == 8 and cache.nbytes == tokens * ch13._cache_bytes_reference(L, H, dh, dc, dr, b)
    # the control: what MHA of the same heads would cache, chapter 11's formula, is far more
    mha = ch13.CACHE_MISTAKES[0]
    for args in ex.EXERCISES["latent-sparse-1"].cases():
        L, H, dh, dc, dr, b = args
        assert mha.fn(*args) == kv_cache_bytes_per_token(L, H, dh, b)
        assert mha.fn(*args) > 2 * ch13._cache_bytes_reference(*args)


# --- 2: absorption equals the package's absorbed attention ----------------------------------


def test_the_absorbed_scores_are_the_naive_ones_and_the_modules_absorbed_weights():
    for args in ex.EXERCISES["latent-sparse-2"].cases():
        q_nope, c_kv, kv_b_weight, d_rope = args
        want = ch13._absorbed_reference(*copy.deepcopy(args))
        heads, d_nope, d_c = q_nope.shape[1], q_nope.shape[-1], c_kv.shape[-1]
        w_uk = kv_b_weight.reshape(heads, -1, d_c)[:, :d_nope]
        keys = np.einsum("hnc,bkc->bhkn", w_uk, c_kv)  # the naive form: keys rebuilt
        naive = q_nope @ keys.swapaxes(-1, -2) / np.sqrt(d_nope + d_rope)
        np.testing.assert_allclose(want, naive, atol=1e-12)
        np.testing.assert_allclose(absorbed_scores(*args), want, atol=1e-12)


def test_the_exercise_is_the_non_rotary_share_of_the_modules_absorbed_scores():
    """A module with a full-rank query: its q_proj gives each head's q_nope, absorbed_weights'
    W_QC folds W_UK into it, and the exercise's answer on (q_nope, c_kv, kv_b_proj) is the
    module's non-rotary share of the scaled scores."""
    config = mla.MLAConfig(d_model=12, n_heads=3, d_c=10, d_nope=4, d_rope=4, d_v=4)
    torch.manual_seed(1)
    attn = mla.MultiHeadLatentAttention(config).double()
    x = torch.randn(2, 5, 12, dtype=torch.float64)
    cos, sin = rope_cos_sin(torch.arange(5), config.d_rope, config.rope_theta, torch.float64)
    with torch.no_grad():
        c_kv = attn.latent(x, cos, sin)[0]
        q = attn.q_proj(x).view(2, 5, 3, config.d_qk).transpose(1, 2)
        w_qc = mla.absorbed_weights(attn)[0]
        module = torch.einsum("bni,hci->bhnc", x, w_qc) @ c_kv[:, None].transpose(2, 3)
        module = (module * attn.scale).numpy()
    args = (q[..., :config.d_nope].numpy(), c_kv.numpy(), attn.kv_b_proj.weight.detach().numpy(),
            config.d_rope)
    np.testing.assert_allclose(ch13._absorbed_reference(*args), module, atol=1e-12)
    values = next(m for m in ch13.ABSORB_MISTAKES if "(W_UV)" in m.name)
    assert np.abs(values.fn(*args) - module).max() > 0.1  # the control: the value rows differ


# --- 3: the decoupled scores are the module's -----------------------------------------------


def _module_scores(args, monkeypatch) -> tuple[np.ndarray, tuple]:
    """The scores ``MultiHeadLatentAttention`` hands to its softmax (lower triangle), and the
    exercise's inputs taken from the same module."""
    q_case, k_nope_case, k_rope_case, positions, theta = args
    batch, heads, seq, d_qk = q_case.shape
    d_nope, d_rope = k_nope_case.shape[-1], k_rope_case.shape[-1]
    config = mla.MLAConfig(d_model=10, n_heads=heads, d_c=6, d_nope=d_nope, d_rope=d_rope,
                           d_v=3, rope_theta=theta)
    torch.manual_seed(2)
    attn = mla.MultiHeadLatentAttention(config).double()
    x = torch.randn(batch, seq, 10, dtype=torch.float64)
    cos, sin = rope_cos_sin(torch.from_numpy(positions), d_rope, theta, torch.float64)
    seen, softmax = [], torch.softmax

    def spy(scores, *a, **k):
        seen.append(scores.detach().clone())
        return softmax(scores, *a, **k)

    monkeypatch.setattr(torch, "softmax", spy)
    with torch.no_grad():
        attn(x, cos, sin)
        monkeypatch.setattr(torch, "softmax", softmax)
        q = attn.query_last()(attn.query_input(x)).view(batch, seq, heads, d_qk).transpose(1, 2)
        k_nope = attn.expand(attn.latent(x, cos, sin)[0])[0]
        k_rope = attn.kv_a_proj_with_mqa(x)[..., config.d_c:]  # before RoPE
    (captured,) = seen
    below = np.tril(np.ones((seq, seq), dtype=bool))
    assert np.isneginf(captured.numpy()[..., ~below]).all()
    inputs = (q.numpy(), k_nope.numpy(), k_rope.numpy(), positions, theta)
    return np.where(below, captured.numpy(), 0.0), inputs


def test_the_split_scores_are_what_the_mla_module_computes(monkeypatch):
    whole = next(m for m in ch13.SPLIT_MISTAKES if "whole head" in m.name)
    for case in ex.EXERCISES["latent-sparse-3"].cases():
        module, args = _module_scores(case, monkeypatch)
        below = np.tril(np.ones(module.shape[-2:], dtype=bool))
        want = np.where(below, ch13._split_reference(*args), 0.0)
        # the module computes its angles in float32, as Hugging Face does: rounding only
        np.testing.assert_allclose(module, want, atol=1e-5)
        np.testing.assert_allclose(mla_scores(*args), ch13._split_reference(*args), atol=1e-12)
        assert np.abs(np.where(below, whole.fn(*args), 0.0) - module).max() > 0.01  # control


def test_a_shift_of_all_positions_changes_no_score():
    """Why no mistake "positions from 0" is catalogued: the query and key of this exercise sit at
    the same positions, and RoPE's scores depend on the offset only."""
    q, k_nope, k_rope, positions, theta = ex.EXERCISES["latent-sparse-3"].cases()[1]
    assert positions[0] > 0
    np.testing.assert_allclose(
        ch13._split_reference(q, k_nope, k_rope, positions, theta),
        ch13._split_reference(q, k_nope, k_rope, positions - positions[0], theta), atol=1e-12)


def test_the_missing_heads_axis_only_runs_when_batch_equals_heads():
    """The cases have batch = heads, so the rotary key without ``[:, None]`` gives numbers (and
    is named); with batch ≠ heads numpy refuses to broadcast."""
    no_axis = next(m for m in ch13.SPLIT_MISTAKES if "heads axis" in m.name)
    for q, *_ in ex.EXERCISES["latent-sparse-3"].cases():
        assert q.shape[0] == q.shape[1] > 1
    q, k_nope, k_rope, positions, theta = ex.EXERCISES["latent-sparse-3"].cases()[2]
    with pytest.raises(ValueError):
        no_axis.fn(q[:2], k_nope[:2], k_rope[:2], positions, theta)


# --- 4: top-k selection is the package's ----------------------------------------------------


def test_topk_reference_is_the_packages_selection():
    for scores, k in ex.EXERCISES["latent-sparse-4"].cases():
        want = ch13._topk_reference(scores, k)
        t = torch.from_numpy(scores)
        np.testing.assert_array_equal(
            want, sparse.mask_from_indices(sparse.topk_indices(t, k), scores.shape[-1]).numpy())
        seq = scores.shape[-1]
        assert want.sum(-1).tolist() == [min(k, i + 1) for i in range(seq)]  # early rows: all
        assert not (want & ~np.tril(np.ones((seq, seq), dtype=bool))).any()  # never the future
        future = ch13.TOPK_MISTAKES[0].fn(scores, k)  # the control: unmasked, it reads ahead
        assert (future & ~np.tril(np.ones((seq, seq), dtype=bool))).any()
        # k ≥ seq: every visible key, the causal mask itself
        np.testing.assert_array_equal(ch13._topk_reference(scores, seq),
                                      np.tril(np.ones((seq, seq), dtype=bool)))
        np.testing.assert_array_equal(topk_causal(scores, seq), ch13._topk_reference(scores, seq))


def test_the_topk_cases_have_no_ties():
    """A learner's argsort breaks ties its own way: the cases must have none."""
    for scores, _ in ex.EXERCISES["latent-sparse-4"].cases():
        for row in scores:
            assert len(set(row.tolist())) == len(row)
