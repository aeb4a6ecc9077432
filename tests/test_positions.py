"""Chapter 10: rotary positions, ALiBi, learned positions, copying and length generalisation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import exercises as ex
from course_attention import numpy_ref as ref
from course_attention import positions, viz, widgets

shapes = st.tuples(
    st.integers(1, 3), st.integers(1, 12), st.integers(1, 16).map(lambda h: 2 * h)
)  # (batch, seq, d) with an even d


@settings(max_examples=40, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16), shift=st.integers(0, 500))
def test_rotary_score_depends_only_on_the_offset(shape, seed, shift):
    seq, d = max(shape[1], 2), shape[2]
    q, k = np.random.default_rng(seed).normal(size=(2, d))
    pos = np.arange(seq) + shift  # any start: only m - n may matter
    scores = ref.rotary(np.tile(q, (seq, 1)), pos) @ ref.rotary(np.tile(k, (seq, 1)), pos).T
    assert positions.same_offset_spread(pos, pos, scores) < 1e-9 * max(1.0, np.abs(scores).max())
    at_zero = ref.rotary(q[None], [0]) @ ref.rotary(k[None], np.array([-1.0])).T  # offset 1
    np.testing.assert_allclose(scores[1, 0], at_zero[0, 0], atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16), base=st.sampled_from([100.0, 1e4, 5e5]))
def test_rotary_keeps_lengths_and_numpy_equals_torch(shape, seed, base):
    x = np.random.default_rng(seed).normal(size=shape)
    for pairs in ("interleaved", "halves"):
        rotated = ref.rotary(x, base=base, pairs=pairs)
        np.testing.assert_allclose(
            np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-12
        )
        theirs = positions.rotary(torch.from_numpy(x), base=base, pairs=pairs).numpy()
        np.testing.assert_allclose(rotated, theirs, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rotary_equals_the_complex_form_and_the_halves_convention_up_to_a_permutation(seed):
    rng = np.random.default_rng(seed)
    seq, d = 9, 12
    q, k = rng.normal(size=(2, seq, d))
    theta = ref.rotary_frequencies(d)
    z = (q[:, 0::2] + 1j * q[:, 1::2]) * np.exp(1j * np.arange(seq)[:, None] * theta)
    rotated = ref.rotary(q)
    np.testing.assert_allclose(rotated[:, 0::2], z.real, atol=1e-12)
    np.testing.assert_allclose(rotated[:, 1::2], z.imag, atol=1e-12)
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    np.testing.assert_allclose(ref.rotary(q[:, perm], pairs="halves"), rotated[:, perm], atol=1e-12)
    inter = ref.rotary(q) @ ref.rotary(k).T
    halves = ref.rotary(q[:, perm], pairs="halves") @ ref.rotary(k[:, perm], pairs="halves").T
    np.testing.assert_allclose(halves, inter, atol=1e-12)
    mixed = ref.rotary(q, pairs="halves") @ ref.rotary(k, pairs="halves").T
    assert np.abs(mixed - inter).max() > 0.1  # without the permutation they differ


def test_position_zero_is_unrotated_and_positions_default_to_0_to_seq():
    x = np.random.default_rng(0).normal(size=(2, 5, 8))
    np.testing.assert_array_equal(ref.rotary(x)[:, 0], x[:, 0])
    np.testing.assert_allclose(ref.rotary(x), ref.rotary(x, positions=np.arange(5)))


def test_added_positions_are_not_relative_once_projected():
    rng = np.random.default_rng(0)
    T, d = 12, 16
    x, pe, pos = np.tile(rng.normal(size=d), (T, 1)), ref.sinusoidal_positions(T, d), np.arange(T)
    W_q, W_k = rng.normal(size=(2, d, d)) / np.sqrt(d)
    assert positions.same_offset_spread(pos, pos, pe @ pe.T) < 1e-12
    added = ((x + pe) @ W_q) @ ((x + pe) @ W_k).T
    assert positions.same_offset_spread(pos, pos, added) > 0.5
    early = (ref.rotary(x) @ W_q) @ (ref.rotary(x) @ W_k).T  # rotating before projecting
    assert positions.same_offset_spread(pos, pos, early) > 0.5


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ref.rotary(np.ones((4, 5))), "d=5"),
        (lambda: ref.rotary(np.ones(4)), r"\(4,\)"),
        (lambda: ref.rotary(np.ones((3, 4)), positions=[0, 1]), r"\(3,\)"),
        (lambda: ref.rotary(np.ones((3, 4)), pairs="pairs"), "'pairs'"),
        (lambda: ref.rotary(np.ones((3, 4)), base=1.0), "base=1.0"),
        (lambda: positions.rotary(torch.ones(3, 7)), "d=7"),
        (lambda: positions.rotary(torch.ones(3, 4, dtype=torch.long)), "floating"),
        (lambda: ref.alibi_slopes(0), "n_heads=0"),
        (lambda: ref.alibi_bias(2, 0), "seq_q=0"),
        (lambda: positions.PositionLM("absolute", 10), "'absolute'"),
        (lambda: positions.PositionLM("rotary", 10, d_model=36, n_heads=4), "n_heads=4"),
        (lambda: positions.LearnedPositions(8, max_len=4)(torch.zeros(1, 5, 8)), "max_len=4"),
        (lambda: positions.length_generalisation("rotary", test_lengths=(1, 30)), "n_symbols=20"),
    ],
)
def test_bad_inputs_name_the_values(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_alibi_bias_is_relative_causal_and_matches_the_slopes():
    bias = ref.alibi_bias(8, 6)
    np.testing.assert_allclose(ref.alibi_slopes(8), 2.0 ** -np.arange(1, 9))
    offset = np.subtract.outer(np.arange(6), np.arange(6))
    assert np.isneginf(bias[:, offset < 0]).all()
    np.testing.assert_allclose(
        bias[:, offset >= 0], (-ref.alibi_slopes(8)[:, None] * offset[offset >= 0])
    )
    torch.testing.assert_close(positions.alibi_bias(8, 6, torch.float64), torch.from_numpy(bias))


def _press_slopes(n):
    """The slopes of Press et al.'s released code (get_slopes), recursion and all."""
    import math

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + _press_slopes(2 * closest)[0::2][: n - closest]


@pytest.mark.parametrize("n_heads", range(1, 33))
def test_alibi_slopes_follow_press_et_al_for_every_head_count(n_heads):
    np.testing.assert_allclose(ref.alibi_slopes(n_heads), _press_slopes(n_heads), rtol=1e-12)


def test_alibi_slopes_for_six_heads():
    np.testing.assert_allclose(ref.alibi_slopes(6), [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3])
    assert not np.allclose(ref.alibi_slopes(6), 2.0 ** (-8 * np.arange(1, 7) / 6))  # the old rule


def test_alibi_model_adds_the_bias_to_the_scores():
    torch.manual_seed(0)
    model = positions.PositionLM("alibi", 12, n_layers=1)
    attn = model.attn[0]
    x = torch.randn(2, 5, 32)
    q, k, v = attn.qkv(x).view(2, 5, 3, 4, 8).permute(2, 0, 3, 1, 4)
    scores = q @ k.transpose(-1, -2) / np.sqrt(8) + positions.alibi_bias(4, 5)
    expected = attn.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(2, 5, 32))
    torch.testing.assert_close(attn(x), expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", positions.POSITION_KINDS)
def test_position_models_are_causal(kind):
    torch.manual_seed(0)
    model = positions.PositionLM(kind, 12).eval()
    tokens = torch.randint(3, 12, (2, 7))
    changed = tokens.clone()
    changed[:, -1] = 3 + (changed[:, -1] - 2) % 9  # only the last token changes
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    torch.testing.assert_close(a[:, :-1], b[:, :-1])
    assert (a[:, -1] - b[:, -1]).abs().max() > 0


def test_copy_batch_rows_labels_and_distinct_symbols():
    gen = torch.Generator().manual_seed(0)
    inputs, labels = positions.copy_batch(torch.tensor([3, 1]), 5, gen)
    assert inputs.shape == labels.shape == (2, 7)
    row = inputs[0].tolist()
    assert row[3] == positions.SEP_ID and row[4:7] == row[:3]
    assert len(set(row[:3])) == 3
    assert labels[0].tolist() == [-100, -100, -100, *row[4:7], positions.EOS_ID]
    short = inputs[1].tolist()
    assert short[1] == positions.SEP_ID and short[2] == short[0]
    assert short[3:] == [positions.EOS_ID, 0, 0, 0]
    assert labels[1].tolist() == [-100, short[0], positions.EOS_ID, -100, -100, -100, -100]
    with pytest.raises(ValueError, match="n_symbols ≥ 6"):
        positions.copy_batch(torch.tensor([6]), 5, gen)


def test_rope_decay_is_a_trend_of_the_average_not_a_bound():
    offsets = np.arange(49)
    scores = positions.rope_score_by_offset(64, offsets, n_samples=2000)
    mean = scores.mean(axis=0)
    assert abs(mean[0] / 64 - 1) < 0.05 and mean[48] < 0.75 * mean[0]
    assert (np.diff(mean) > 0).any() and (np.diff(scores[0]) > 0).any()
    bound = positions.rope_bound(64, offsets)
    assert bound[0] == pytest.approx(16.5) and bound[48] < 0.5 * bound[0]
    other = positions.rope_score_by_offset(64, offsets, n_samples=2000, key="independent")
    se = other.std(axis=0) / np.sqrt(2000)
    assert (np.abs(other.mean(axis=0)) < 4 * se).all()  # no decay: mean 0 at every offset
    assert other.std(axis=0).min() > 4  # yet each score is far from 0


@pytest.mark.parametrize("key", ["same", "independent"])
def test_rope_score_by_offset_equals_rotating_and_dotting(key):
    offsets = np.array([0, 1, 5, 17])
    scores = positions.rope_score_by_offset(8, offsets, n_samples=6, seed=3, key=key)
    rng = np.random.default_rng(3)
    q = rng.standard_normal((6, 8))
    k = q if key == "same" else rng.standard_normal((6, 8))
    for j, o in enumerate(offsets):
        direct = (ref.rotary(q[:, None], [o + 2]) * ref.rotary(k[:, None], [2])).sum(-1)[:, 0]
        np.testing.assert_allclose(scores[:, j], direct, atol=1e-12)
    with pytest.raises(ValueError, match="'other'"):
        positions.rope_score_by_offset(8, offsets, key="other")


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_length_generalisation_claims_hold_for_seeds_1_and_2(seed):
    """Chapter 10 asserts positions.length_claims on seed 0 in each of its executions; the same
    checks on seeds 1 and 2."""
    assert positions.shared_weights_equal(
        [positions.copy_model(k, seed) for k in positions.POSITION_KINDS]
    )
    runs = {k: positions.length_generalisation(k, seed) for k in positions.POSITION_KINDS}
    positions.length_claims(runs)  # raises AssertionError naming the failing statement
    for run in runs.values():
        assert len(run.losses) == run.steps_trained <= 700
        assert run.losses[-10:].mean() < run.losses[:10].mean() / 3


def test_only_the_positions_differ_between_kinds_at_the_start():
    models = [positions.copy_model(k, seed=3) for k in positions.POSITION_KINDS]
    assert positions.shared_weights_equal(models)
    learned = models[positions.POSITION_KINDS.index("learned")]
    assert any(n.startswith("positions.") for n, _ in learned.named_parameters())
    other_seed = positions.copy_model("rotary", seed=4)
    assert not positions.shared_weights_equal([models[0], other_seed])  # the check can fail


def test_length_generalisation_stops_once_it_fits_or_trains_every_step():
    fitted = positions.length_generalisation("rotary", 0, test_lengths=(1, 9))
    assert fitted.fitted and fitted.steps_trained % 100 == 0 and fitted.steps_trained < 700
    assert min(fitted.exact[n] for n in range(1, 9)) >= 0.95
    budget = positions.length_generalisation("none", 0, steps=30, fit_to=None, test_lengths=(1, 2))
    assert not budget.fitted and budget.steps_trained == len(budget.losses) == 30


def test_length_claims_needs_every_kind():
    with pytest.raises(ValueError, match="one run per kind"):
        positions.length_claims({})


def test_rope_figure_and_length_figure_stay_small():
    first, second = (viz.rope_offset_figure(o, max_offset=48) for o in (0, 3))
    assert len(first.to_json()) < 60_000
    assert first.data[0].y != second.data[0].y
    lengths = viz.length_figure({"a": {1: 1.0, 2: 0.5}, "b": {1: 0.0, 2: 1.0}}, trained_max=1)
    assert len(lengths.data) == 2
    with pytest.raises(ValueError, match="offset=70"):
        viz.rope_offset_figure(70)


def test_rope_explorer_checks_its_arguments():
    assert "offset 8" in widgets.rope_explorer().figure.layout.title.text
    with pytest.raises(ValueError, match="d in"):
        widgets.rope_explorer(d=10)


def test_exercise_mistakes_are_named():
    def swapped(seq_len, d_model):
        pos = np.arange(seq_len)[:, None]
        freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
        out = np.empty((seq_len, d_model))
        out[:, 0::2], out[:, 1::2] = np.cos(pos * freq), np.sin(pos * freq)
        return out

    passed, message = ex.evaluate("positions-1", swapped)
    assert not passed and "sin and cos swapped" in message

    def halves(x, position):
        return ref.rotary(x[None], [position], pairs="halves")[0]

    assert "two halves" in ex.evaluate("positions-2", halves)[1]
    alibi = ex.EXERCISES["positions-3"].reference
    assert "wrong sign" in ex.evaluate("positions-3", lambda n, s: alibi(n, -s))[1]


def test_learned_rows_never_seen_in_training_keep_their_initial_values():
    from course_attention import training

    torch.manual_seed(0)
    model = positions.PositionLM("learned", 23, max_len=34, feed_forward=False)
    before = model.positions.table.weight.detach().clone()

    def draw(gen):
        return positions.copy_batch(torch.randint(1, 9, (16,), generator=gen), 20, gen)

    training.fit(model, draw, positions.copy_loss, steps=5, progress=False)
    after = model.positions.table.weight.detach()
    assert not torch.equal(after[:17], before[:17])  # positions 0 … 16 were trained
    torch.testing.assert_close(after[17:], before[17:], rtol=0, atol=0)  # 17 … 33 never seen
