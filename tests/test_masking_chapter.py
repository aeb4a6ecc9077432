"""Chapter 4 (masking): toy data, the convention table, figures, explorer and exercises."""

from __future__ import annotations

import numpy as np
import plotly.io as pio
import pytest

from course_attention import exercises, masks, toy, viz, widgets
from course_attention import numpy_ref as ref


def test_next_token_pairs_shift_by_one():
    inputs, targets = toy.next_token_pairs(toy.NEXT_TOKEN_SENTENCE)
    assert inputs == ["[BOS]", "I", "like", "you"]
    assert targets == ["I", "like", "you", "[EOS]"]
    assert inputs[1:] == targets[:-1]
    with pytest.raises(ValueError, match="at least 2"):
        toy.next_token_pairs(["[BOS]"])


def test_pad_batch_pads_to_the_longest_sentence():
    padded, lengths = toy.pad_batch(toy.UNEQUAL_SENTENCES)
    assert lengths.tolist() == [len(s) for s in toy.UNEQUAL_SENTENCES]
    assert {len(p) for p in padded} == {max(lengths)}
    for tokens, n in zip(padded, lengths, strict=True):
        assert tokens[n:] == [toy.PAD] * (len(tokens) - n)
    assert ref.padding_mask(lengths, len(padded[0])).shape == (3, 1, 1, 5)
    with pytest.raises(ValueError):
        toy.pad_batch([])


def test_mask_scores_are_deterministic():
    np.testing.assert_array_equal(toy.mask_scores(5), toy.mask_scores(5))
    assert toy.mask_scores(3).shape == (3, 3)
    with pytest.raises(ValueError):
        toy.mask_scores(0)


def test_convention_table_is_computed_and_only_the_trap_differs():
    rows = masks.convention_table()
    assert [r["same weights"] for r in rows] == ["yes"] * (len(rows) - 1) + ["no"]
    assert set(rows[0]) == {"convention", "dtype", "attend", "hide", "passed to", "same weights"}
    assert rows == masks.convention_table()  # deterministic


@pytest.mark.parametrize("kind", viz.MASK_KINDS)
def test_example_mask_kinds(kind):
    mask = viz.example_mask(kind, 6, 4)
    assert mask.shape == (6, 6) and mask.dtype == bool
    assert mask[:, 0].all(), "every query may see the first token: no empty rows"
    assert np.array_equal(mask & ref.causal_mask(6), mask) == ("causal" in kind)
    assert (not mask[:, 4:].any()) == ("padding" in kind)


def test_example_mask_rejects_bad_input():
    with pytest.raises(ValueError, match="kind"):
        viz.example_mask("sideways", 4, 2)
    with pytest.raises(ValueError, match="n_real"):
        viz.example_mask("causal", 4, 5)


@pytest.mark.parametrize("kind", viz.MASK_KINDS)
def test_mask_figure_hides_weights_and_stays_small(kind):
    fig = viz.mask_figure(kind, 4)
    mask, weights = (np.array(t.z, dtype=float) for t in fig.data)
    assert np.all(weights[mask == 0] == 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-3)
    assert len(pio.to_json(fig)) < 60_000


def test_causal_query_slider_agrees_with_the_package():
    tokens = ["[BOS]", "I", "like", "you"]
    scores = toy.mask_scores(4)
    fig = viz.causal_query_slider(tokens, scores)
    assert len(fig.frames) == 4
    _, causal = ref.scaled_dot_product_attention(
        scores, np.eye(4), np.eye(4), mask=ref.causal_mask(4), scale=1.0
    )
    for i, frame in enumerate(fig.frames):
        bidirectional, masked = (np.array(t.y) for t in frame.data)
        np.testing.assert_allclose(masked, causal[i], atol=1e-4)
        assert np.all(masked[i + 1 :] == 0)
    np.testing.assert_allclose(*(np.array(t.y) for t in fig.frames[-1].data))
    with pytest.raises(ValueError):
        viz.causal_query_slider(tokens, np.zeros((3, 3)))


def test_mask_explorer_redraws_and_rejects_an_unknown_kind():
    explorer = widgets.mask_explorer()  # its speed: benchmarks/widgets.py, not a timed test
    before = explorer.figure.data[0].z
    explorer.controls["n_real"].value = 6 if explorer.controls["n_real"].value != 6 else 3
    assert explorer.figure.data[0].z != before
    with pytest.raises(ValueError):
        widgets.mask_explorer(kind="sideways")


@pytest.mark.parametrize("exercise_id", ["masking-1", "masking-2", "masking-3"])
def test_masking_references_pass_their_own_checks(exercise_id):
    passed, message = exercises.evaluate(exercise_id, exercises.EXERCISES[exercise_id].reference)
    assert passed, message


def test_masking_checkers_name_the_usual_mistakes():
    def named(exercise_id, fn, words):
        passed, message = exercises.evaluate(exercise_id, fn)
        assert not passed and f"Likely mistake: {words}" in message, message

    named("masking-1", lambda lengths, n: np.arange(n)[None, :] < lengths[:, None], "the mask")
    named(
        "masking-1",
        lambda lengths, n: (np.arange(n)[None, :] < lengths[:, None])[:, None, :],
        "the head axis is missing",
    )
    named("masking-2", lambda s, m: ref.softmax(np.where(m, s, -1e9)), "hidden scores set to −1e9")
    named("masking-2", lambda s, m: ref.softmax(s) * m, "the mask applied after the softmax")
    named("masking-3", lambda losses, lengths: losses.mean(), "the plain mean")


def test_a_key_mask_without_the_head_axis_is_silently_wrong_when_batch_equals_heads():
    """The pitfall the chapter computes: (batch, 1, seq_k) faces (heads, seq_q, seq_k)."""
    lengths = np.array([4, 2, 5])
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((3, 3, 3, 5, 4))  # (batch, heads = batch, seq, d_head) each
    good = ref.padding_mask(lengths, 5)  # (batch, 1, 1, seq_k)
    pad_key = ~np.broadcast_to(good, (3, 3, 5, 5))
    _, right = ref.scaled_dot_product_attention(Q, K, V, mask=good)
    _, wrong = ref.scaled_dot_product_attention(Q, K, V, mask=good[:, 0])  # no error
    assert (right[pad_key] == 0).all()
    assert wrong[pad_key].max() > 0.1
    with pytest.raises(ValueError, match=r"\(3, 1, 5\) does not broadcast"):
        ref.scaled_dot_product_attention(Q[:, :2], K[:, :2], V[:, :2], mask=good[:, 0])
