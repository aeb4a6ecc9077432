"""Chapter 12's RoPE-scaling rules (``course_attention.rope_scaling``) equal Hugging Face's
``ROPE_INIT_FUNCTIONS``: the inverse frequencies bit for bit and the attention factor."""

from __future__ import annotations

import math

import pytest
import torch

from course_attention import numpy_ref, rope_scaling

transformers = pytest.importorskip("transformers")
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

D, THETA, CONTEXT = 16, 500.0, 64


def hf_rule(rope_type: str, seq_len: int | None = None, **params):
    return rope_scaling.hugging_face(rope_type, D, THETA, CONTEXT, seq_len, **params)


def same(ours, theirs) -> None:
    assert torch.equal(ours[0], theirs[0]) and ours[1] == theirs[1]


def test_the_plain_frequencies_are_chapter_10s():
    theirs = torch.as_tensor(numpy_ref.rotary_frequencies(D, THETA), dtype=torch.float32)
    torch.testing.assert_close(rope_scaling.inverse_frequencies(D, THETA), theirs)


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
def test_linear_interpolation_is_hugging_faces(factor):
    same(rope_scaling.linear_scaling(D, THETA, factor), hf_rule("linear", factor=factor))


@pytest.mark.parametrize("seq_len", [10, CONTEXT, 2 * CONTEXT, 5 * CONTEXT])
def test_dynamic_ntk_is_hugging_faces_and_plain_up_to_the_trained_length(seq_len):
    ours = rope_scaling.ntk_scaling(D, THETA, 4.0, seq_len=seq_len, context=CONTEXT)
    same(ours, hf_rule("dynamic", seq_len=seq_len, factor=4.0))
    if seq_len <= CONTEXT:
        assert torch.equal(ours[0], rope_scaling.inverse_frequencies(D, THETA))


def test_static_ntk_keeps_the_fastest_pair_and_divides_the_slowest_by_the_factor():
    plain = rope_scaling.inverse_frequencies(D, THETA)
    scaled, _ = rope_scaling.ntk_scaling(D, THETA, 4.0)
    assert scaled[0] == plain[0] == 1.0
    torch.testing.assert_close(scaled[-1], plain[-1] / 4.0, rtol=1e-5, atol=0)
    assert ((scaled <= plain) & (scaled >= plain / 4.0 - 1e-9)).all()


@pytest.mark.parametrize(("factor", "beta_fast", "beta_slow", "truncate"),
                         [(4.0, 32, 1, True), (8.0, 16, 2, False), (2.0, 32, 1, True)])
def test_yarn_is_hugging_faces(factor, beta_fast, beta_slow, truncate):
    ours = rope_scaling.yarn_scaling(D, THETA, factor, CONTEXT, beta_fast, beta_slow, truncate)
    same(ours, hf_rule("yarn", factor=factor, original_max_position_embeddings=CONTEXT,
                       beta_fast=beta_fast, beta_slow=beta_slow, truncate=truncate))
    assert ours[1] == pytest.approx(0.1 * math.log(factor) + 1)


def test_llama3_is_hugging_faces():
    params = dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                  original_max_position_embeddings=CONTEXT)
    ours = rope_scaling.llama3_scaling(D, THETA, 8.0, 1.0, 4.0, CONTEXT)
    same(ours, hf_rule("llama3", **params))
    plain = rope_scaling.inverse_frequencies(D, THETA)
    assert ours[0][0] == plain[0]  # the fastest pair: kept
    assert ours[0][-1] == plain[-1] / 8.0  # the slowest: divided by the factor
    assert set(rope_scaling.SCALINGS) <= set(ROPE_INIT_FUNCTIONS)


def test_bad_arguments_raise_value_errors():
    with pytest.raises(ValueError, match="even"):
        rope_scaling.inverse_frequencies(7)
    with pytest.raises(ValueError, match="factor"):
        rope_scaling.linear_scaling(D, THETA, 0.5)
    with pytest.raises(ValueError, match="context"):
        rope_scaling.ntk_scaling(D, THETA, 2.0, seq_len=100)
    with pytest.raises(ValueError, match="≥ 4"):  # its exponent d / (d − 2)
        rope_scaling.ntk_scaling(2, THETA, 2.0)
    assert rope_scaling.inverse_frequencies(2).shape == (1,)
    with pytest.raises(ValueError, match="high_freq_factor"):
        rope_scaling.llama3_scaling(D, THETA, 8.0, 4.0, 1.0, CONTEXT)


# --- measured on chapter 10's copy task, without retraining --------------------------------------

def test_rotary_takes_other_frequencies():
    from course_attention import positions

    x = torch.randn(2, 5, D)
    plain = torch.as_tensor(numpy_ref.rotary_frequencies(D, 10000.0))
    assert torch.equal(positions.rotary(x, frequencies=plain), positions.rotary(x))
    slower = positions.rotary(x, frequencies=plain / 2)
    assert torch.equal(slower[:, :1], x[:, :1])  # position 0 never turns
    assert not torch.allclose(slower[:, 1:], positions.rotary(x)[:, 1:])
    with pytest.raises(ValueError, match=r"\(d/2,\)"):
        positions.rotary(x, frequencies=plain[:3])


def test_the_plain_rule_scores_as_chapter_10_and_the_model_is_left_as_it_was():
    from course_attention import positions

    run = positions.length_generalisation("rotary", seed=1, steps=60, fit_to=None,
                                          n_per_length=40)
    layers = [m for m in run.model.modules() if hasattr(m, "rope_factor")]
    assert rope_scaling.copy_accuracy_scaled(run.model, "plain", seed=1,
                                             n_per_length=40) == run.exact
    stretched = rope_scaling.copy_accuracy_scaled(run.model, "yarn", 2.0, seed=1, n_per_length=40)
    assert set(stretched) == set(run.exact)
    assert all(m.frequencies is None and m.rope_factor == 1.0 for m in layers)
    with pytest.raises(ValueError, match="rule"):
        rope_scaling.copy_accuracy_scaled(run.model, "ntk")
    with pytest.raises(ValueError, match="rotary"):
        rope_scaling.copy_accuracy_scaled(positions.copy_model("alibi"), "yarn")


def test_hugging_face_refuses_an_unknown_rule():
    with pytest.raises(ValueError, match="rope_type"):
        rope_scaling.hugging_face("stretchy", D, THETA, CONTEXT)
    assert torch.equal(rope_scaling.hugging_face("default", D, THETA, CONTEXT)[0],
                       rope_scaling.inverse_frequencies(D, THETA))


def test_scaling_claims_name_what_fails():
    good = {rule: {n: 1.0 for n in range(1, 17)} for rule in rope_scaling.RULES}
    with pytest.raises(AssertionError, match="plain fails at the last length"):
        rope_scaling.scaling_claims(good)
    with pytest.raises(ValueError, match="missing"):
        rope_scaling.scaling_claims({"plain": good["plain"]})


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_scaling_claims_hold_for_seeds_1_and_2(seed):
    from course_attention import positions

    run = positions.length_generalisation("rotary", seed=seed)
    exact = {rule: rope_scaling.copy_accuracy_scaled(run.model, rule, 2.0, seed=seed)
             for rule in rope_scaling.RULES}
    rope_scaling.scaling_claims(exact)
