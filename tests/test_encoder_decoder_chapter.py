"""Chapter 7 helpers: the three families' masks, cross-attention maps, decoding step by step."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch

from course_attention import exercises as ex
from course_attention import inspection, modules, tasks, viz, widgets
from course_attention import numpy_ref as ref


@pytest.fixture(scope="module")
def model() -> modules.Seq2SeqTransformer:
    torch.manual_seed(0)
    return modules.Seq2SeqTransformer(
        tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
    ).eval()


def test_architecture_masks_are_full_causal_and_rectangular():
    masks = viz.architecture_masks(n_src=5, n_tgt=3)
    assert masks["BERT: self (bidirectional)"].shape == (5, 5)
    assert masks["BERT: self (bidirectional)"].all()
    np.testing.assert_array_equal(masks["GPT: self (causal)"], ref.causal_mask(3))
    np.testing.assert_array_equal(masks["T5 decoder: self (causal)"], ref.causal_mask(3))
    assert masks["T5 encoder: self"].shape == (5, 5) and masks["T5 encoder: self"].all()
    assert masks["T5 decoder: cross"].shape == (3, 5) and masks["T5 decoder: cross"].all()
    with pytest.raises(ValueError, match="n_src"):
        viz.architecture_masks(0, 3)


def test_architecture_mask_figure_has_five_panels_with_the_right_sizes():
    fig = viz.architecture_mask_figure(["3", "1", "[EOS]"], ["[BOS]", "1"])
    assert [np.shape(t.z) for t in fig.data] == [(3, 3), (2, 2), (3, 3), (2, 2), (2, 3)]


def test_token_names_read_special_ids_and_digits():
    ids = [tasks.BOS_ID, tasks.DIGIT_OFFSET + 7, tasks.DIGIT_OFFSET, tasks.EOS_ID, tasks.PAD_ID]
    assert tasks.token_names(ids) == ["[BOS]", "7", "0", "[EOS]", "[PAD]"]


def test_cross_attention_map_rows_are_answer_queries_over_real_source_tokens(model):
    amap = inspection.cross_attention_map(model, "3141")
    assert amap.weights.shape == (5, 5)  # ([BOS] + 4 digits, 4 digits + [EOS])
    assert amap.queries == ["[BOS]", "1", "4", "1", "3"]
    assert amap.keys == ["3", "1", "4", "1", "[EOS]"]
    np.testing.assert_allclose(amap.weights.sum(axis=-1), 1.0, atol=1e-5)  # no weight on pads
    first = inspection.cross_attention_map(model, "3141", layer=0)
    assert not np.allclose(first.weights, amap.weights)
    with pytest.raises(ValueError, match="layer"):
        inspection.cross_attention_map(model, "3141", layer=2)
    with pytest.raises(ValueError, match="task"):
        inspection.cross_attention_map(model, "3141", task="rotate")
    with pytest.raises(ValueError, match="digits"):
        inspection.cross_attention_map(model, "31x")


def test_decoding_steps_match_greedy_decode(model):
    steps = inspection.decoding_steps(model, "2718")
    src = torch.from_numpy(tasks.encode_source("2718"))
    out = model.greedy_decode(src, tasks.BOS_ID, tasks.EOS_ID, max_steps=src.shape[1])
    assert steps.tokens == tasks.token_names(out.tokens[0].tolist())
    assert steps.source == ["2", "7", "1", "8", "[EOS]"]
    assert steps.weights.shape == (len(steps.tokens), 5)
    np.testing.assert_allclose(steps.weights.sum(axis=-1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="1 … 8 digits"):
        inspection.decoding_steps(model, "123456789")


def test_decoding_slider_has_one_frame_per_step_and_the_frames_differ(model):
    steps = inspection.decoding_steps(model, "31415")
    fig = viz.decoding_slider(steps)
    assert len(fig.frames) == len(steps.tokens) == len(fig.layout.sliders[0].steps)
    datas = [json.dumps(f.to_plotly_json()["data"], default=str) for f in fig.frames]
    assert len(set(datas)) == len(datas)
    assert len(fig.to_json()) < 60_000
    with pytest.raises(ValueError, match="step"):
        viz.decoding_traces(steps, len(steps.tokens))


def test_decoding_traces_blank_the_future_rows():
    uniform = np.full((3, 3), 1 / 3)
    steps = inspection.DecodingSteps(["1", "2", "[EOS]"], ["2", "1", "[EOS]"], uniform)
    heat, bars, text = viz.decoding_traces(steps, 1)
    assert heat.z[2] == [None, None, None] and heat.z[1][0] == pytest.approx(1 / 3, abs=1e-4)
    assert "[BOS] 2" in text.text[0] and "1" in text.text[0]
    bad = inspection.DecodingSteps(["1"], ["2", "1"], np.ones((1, 1)))
    with pytest.raises(ValueError, match="one row per generated token"):
        viz.decoding_traces(bad, 0)


def test_cross_attention_pair_and_loss_figure_check_their_input():
    w = np.full((2, 3), 1 / 3)
    fig = viz.cross_attention_pair(w, w, ["[BOS]", "1"], ["1", "2", "[EOS]"])
    assert len(fig.data) == 2
    with pytest.raises(ValueError, match="same shape"):
        viz.cross_attention_pair(w, w[:1], ["[BOS]", "1"], ["1", "2", "[EOS]"])
    assert len(viz.training_loss_figure([2.0, 1.0, 0.5]).data[0].y) == 3
    with pytest.raises(ValueError, match="steps"):
        viz.training_loss_figure(np.ones((2, 2)))


def test_decoding_explorer_shows_bad_input_as_a_message_and_redraws_fast(model):
    explorer = widgets.decoding_explorer(model=model)
    explorer.controls["digits"].value = "12a"
    assert "type digits 0-9 only" in explorer.figure.layout.title.text
    explorer.controls["digits"].value = "987654321"
    assert "1 … 8 digits" in explorer.figure.layout.title.text
    explorer.controls["digits"].value = "907"
    n_steps = len(inspection.decoding_steps(model, "907").tokens)
    assert explorer.controls["step"].max == max(1, n_steps - 1)
    before = json.dumps(explorer.figure.to_plotly_json()["data"], default=str)
    start = time.perf_counter()
    explorer.controls["step"].value = explorer.controls["step"].max
    assert time.perf_counter() - start < 0.5  # < 50 ms on an idle machine
    assert json.dumps(explorer.figure.to_plotly_json()["data"], default=str) != before


def test_default_explorer_model_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    widgets.decoding_explorer()
    assert torch.equal(torch.rand(1), expected)


@pytest.mark.parametrize(
    "exercise_id", ["encoder-decoder-1", "encoder-decoder-2", "encoder-decoder-3"]
)
def test_chapter_7_references_pass_their_own_checks(exercise_id):
    exercise = ex.EXERCISES[exercise_id]
    assert ex.evaluate(exercise_id, exercise.reference)[0]


def test_chapter_7_checkers_catch_common_mistakes():
    ok, message = ex.evaluate("encoder-decoder-1", lambda labels, bos_id: labels)
    assert not ok and "bos_id" in message

    def all_ones(n_src, n_tgt):
        return np.ones((n_src, n_src), bool), np.ones((n_tgt, n_tgt), bool), np.ones((n_tgt, n_src))

    ok, message = ex.evaluate("encoder-decoder-2", all_ones)
    assert not ok and "causal" in message

    def self_attention(decoder_states, memory):
        return ref.scaled_dot_product_attention(decoder_states, decoder_states, decoder_states)

    ok, message = ex.evaluate("encoder-decoder-3", self_attention)
    assert not ok and "memory" in message
