"""Every figure of ``course_attention.viz`` speaks Chinese, and the English figure, translated
from the catalogues, is the Chinese figure (what the Chinese book shows: it reuses the English
execution). Introduced with the package's Chinese text (中文版)."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import numpy as np
import pytest

from course_attention import viz
from course_attention.explorers import sinks as sinks_ex
from course_attention.i18n import using
from course_attention.i18n.outputs import translator
from i18n_checks import assert_speaks_both, english_runs, words_of

TOKENS = ["x1", "x2", "x3"]  # data: no catalogue entry


def _random(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).random(shape)  # the same in both languages' runs


def _rows(n: int, m: int) -> np.ndarray:
    w = _random(n, m)
    return w / w.sum(-1, keepdims=True)


def _causal(n: int) -> np.ndarray:
    w = np.tril(_random(n, n) + 0.1)
    return w / w.sum(-1, keepdims=True)


def _stats(d_k: tuple[int, ...] = (1, 8, 64)) -> SimpleNamespace:
    x = np.array(d_k, dtype=float)
    return SimpleNamespace(d_k=x, max_weight=1 / x, entropy=np.log(x + 1), seq_k=16,
                           jacobian_norm=1 / (x + 1), grad_median=1 / (x + 2),
                           grad_mean=1 / (x + 1))


_TIMING = SimpleNamespace(seq=np.array([4.0, 8.0]), recurrence_steps=np.array([4.0, 8.0]),
                          recurrence_seconds=np.array([1e-3, 2e-3]),
                          attention_loop_seconds=np.array([1e-3, 3e-3]),
                          attention_steps=np.array([1.0, 1.0]),
                          attention_seconds=np.array([1e-4, 2e-4]))
_STEPS = SimpleNamespace(source=["1", "2", "3"], tokens=["3", "2", "1"], weights=_rows(3, 3))
_TABLE = np.sin(np.arange(8)[:, None] * np.arange(6)[None, :] / 3.0)  # (seq, d_model)

#: Every public figure function of viz with small inputs (and the English that stays: data).
FIGURES = {
    "attention_heatmap": lambda: viz.attention_heatmap(_rows(3, 3), TOKENS),
    "weight_bars": lambda: viz.weight_bars([0.2, 0.3, 0.5], TOKENS),
    "slider_figure": lambda: viz.slider_figure(
        lambda t: [viz.heatmap_trace(_rows(2, 2) * 0 + t, TOKENS[:2], TOKENS[:2])],
        [0.1, 0.5], label="temperature"),
    "word_plane": lambda: viz.word_plane(["apple", "banana", "chair"], query="fruit"),
    "soft_lookup_figure": lambda: viz.soft_lookup_figure(viz.query_direction(30.0)),
    "temperature_slider": lambda: viz.temperature_slider(temperatures=(0.5, 1.0)),
    "variance_figure": lambda: viz.variance_figure((1, 8), [1.0, 8.0], [1.0, 1.0]),
    "saturation_figure": lambda: viz.saturation_figure({"run one": _stats()}),
    "jacobian_norm_figure": lambda: viz.jacobian_norm_figure({"run one": _stats()}),
    "gradient_spread_figure": lambda: viz.gradient_spread_figure({"run one": _stats()}),
    "scaling_bars_figure": lambda: viz.scaling_bars_figure([0.1, 0.9]),
    "query_row_figure": lambda: viz.query_row_figure(_rows(3, 3), TOKENS, 1),
    "it_weights_figure": lambda: viz.it_weights_figure({"s1": [0.2, 0.3, 0.5]}, TOKENS),
    "recurrence_figure": lambda: viz.recurrence_figure(_TIMING),
    "mask_figure": lambda: viz.mask_figure("causal + padding", 4),
    "causal_query_slider": lambda: viz.causal_query_slider(TOKENS, _random(3, 3)),
    "head_heatmap": lambda: viz.head_heatmap(np.stack([_rows(3, 3)] * 2), TOKENS, 1),
    "gradient_depth_slider": lambda: viz.gradient_depth_slider(
        {2: {"post-norm": [1.0, 2.0], "pre-norm": [1.0, 1.5]}}),
    "positions_heatmap": lambda: viz.positions_heatmap(_TABLE),
    "position_figure": lambda: viz.position_figure(_TABLE, 2),
    "position_slider": lambda: viz.position_slider(_TABLE, positions=[0, 3]),
    "architecture_mask_figure": lambda: viz.architecture_mask_figure(TOKENS, TOKENS[:2]),
    "cross_attention_pair": lambda: viz.cross_attention_pair(_rows(2, 3), _rows(2, 3),
                                                             TOKENS[:2], TOKENS),
    "cross_attention_heads_slider": lambda: viz.cross_attention_heads_slider(
        _rows(2, 3).reshape(1, 1, 2, 3).repeat(2, 1), _rows(2, 3).reshape(1, 1, 2, 3).repeat(2, 1),
        TOKENS[:2], (TOKENS, TOKENS), ("p1", "p2")),
    "accuracy_by_length_figure": lambda: viz.accuracy_by_length_figure({1: 0.5, 3: 1.0}, [3]),
    "decoding_figure": lambda: viz.decoding_figure(_STEPS, 1),
    "decoding_error_figure": lambda: viz.decoding_error_figure("bad digit 9"),
    "training_loss_figure": lambda: viz.training_loss_figure([3.0, 2.0, 1.0]),
    "loss_baselines_figure": lambda: viz.loss_baselines_figure([3.0, 2.0, 1.5], {"b1": 2.3}),
    "next_char_figure": lambda: _next_char(),
    "message_figure": lambda: viz.message_figure("the character § is not in the vocabulary"),
    "cache_work_figure": lambda: viz.cache_work_figure([1, 2], [9, 19], [9, 10]),
    "tiling_figure": lambda: viz.tiling_figure(8, 4, step=2),
    "memory_figure": lambda: viz.memory_figure([64, 128], {"m1": [1.0, 4.0]}),
    "phase_change_figure": lambda: viz.phase_change_figure(
        [0, 10, 20], [3.0, 2.0, 0.5], [3.0, 2.8, 2.7], 3.4, window=(5, 15),
        control=([0, 20], [3.0, 2.9]), training=([0, 20], [3.0, 2.0])),
    "distance_figure": lambda: viz.distance_figure([2, 4], {"c1": [1.0, 2.0]}, reference=3.0),
    "two_heads_figure": lambda: viz.two_heads_figure(
        _causal(3), _causal(3), ["0:t1", "1:t2", "2:t3"],
        ("layer 0 · head 1: previous token", "layer 1 · head 0: induction")),
    "checkpoint_slider": lambda: viz.checkpoint_slider(
        np.stack([_causal(3)] * 2), np.stack([_causal(3)] * 2), [100, 200],
        ["0:t1", "1:t2", "2:t3"], ("n1", "n2")),
    "head_scores_figure": lambda: viz.head_scores_figure(_random(2, 2), _random(2, 2)),
    "offset_profile_figure": lambda: viz.offset_profile_figure(_rows(2, 3)),
    "ablation_figure": lambda: viz.ablation_figure(_random(2, 2), 0.5, 3.4),
    "rope_offset_figure": lambda: viz.rope_offset_figure(3, d=8, max_offset=8),
    "length_figure": lambda: viz.length_figure({"s1": {1: 1.0, 2: 0.5}}, trained_max=1),
    "token_cost_figure": lambda: viz.token_cost_figure(96),
    "long_context_figure": lambda: viz.long_context_figure(20, "yarn", 2.0, title="t1"),
    "latent_explorer_figure": lambda: viz.latent_explorer_figure(2, 3, title="t1"),
    "sinks_explorer_figure": lambda: viz.sinks_explorer_figure(sinks_ex.default_data(), title="t1"),
    "linear_explorer_figure": lambda: viz.linear_explorer_figure(title="t1"),
    "recall_figure": lambda: viz.recall_figure({"m1": [1.0, 0.5], "m2": [0.9, 0.4]}, [4, 8],
                                               [0.3, 0.2], 16, title="t1"),
    "max_logit_figure": lambda: viz.max_logit_figure(
        {"a": ([0, 10, 20], [0.1, 1.0, 5.0]), "b": ([0, 10, 20], [3.0, 3.5, 4.0])},
        bound=([0, 10, 20], [4.0, 4.2, 4.5]), title="t1"),
    "equal_cache_figure": lambda: viz.equal_cache_figure(
        {"s1": [2.0, 2.1], "s2": [2.2]}, {"b1": 2.3}, current={"s1": 2.05}, title="t1"),
    "share_figure": lambda: viz.share_figure({"m1": [[0.2, 0.01], [0.03, 0.04]]}, 0.044,
                                             title="t1"),
    "streaming_figure": lambda: viz.streaming_figure({"c1": np.linspace(2, 3, 40)}, 16, 20,
                                                     title="t1"),
}
#: Not figures: the live look-up's label placement, the frames of a slider, tables, traces
#: (drawn by the figures above), the course map and architecture (their links differ by
#: language, checked below).
NOT_HERE = {"binned", "unique_labels", "heatmap_trace", "mask_trace", "curve", "show", "colab_html",
            "use_colab_renderer", "wrap_title", "panel_title", "axis_title", "label_positions",
            "key_label_positions", "query_label_position", "label_spec", "query_direction",
            "soft_lookup_traces", "example_mask", "padded_tokens", "mask_traces", "shape_table",
            "cost_table", "Table", "log_ticks", "position_traces", "architecture_masks",
            "head_frames", "decoding_traces", "char_label", "sample_html", "title_lines",
            "next_char_traces", "tiling_states", "tiling_traces", "kv_cache_view",
            "rope_offset_traces", "architecture_figure", "course_map_figure",
            "long_context_traces", "long_context_numbers", "latent_layer",
            "latent_explorer_numbers", "latent_explorer_traces", "sinks_explorer_numbers",
            "sinks_explorer_traces", "linear_explorer_numbers", "linear_explorer_traces",
            "recall_table"}
ALLOWED = ("the character", "is not in the vocabulary", "post-norm",
           "pre-norm", "run one")


def _next_char():
    from course_attention import corpus

    p = np.full(len(corpus.VOCAB), 1 / len(corpus.VOCAB))
    return viz.next_char_figure(p, [0, 1], corpus.VOCAB, "ab", "cd")


def test_every_public_figure_function_is_checked():
    public = {n for n in viz.__all__ if callable(getattr(viz, n))
              and not n.isupper() and n not in NOT_HERE}
    assert public == set(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_the_figure_speaks_chinese(name):
    assert_speaks_both(FIGURES[name], allowed=ALLOWED)


def test_a_chapter_title_and_axis_title_come_out_chinese():
    fig = lambda: viz.word_plane(["apple", "banana"], title="Toy word vectors")  # noqa: E731
    assert_speaks_both(fig)
    with using("zh"):
        assert fig().layout.title.text == "玩具词向量"
        # a long title: English wrapped on two lines, Chinese as the translation has it
        long = viz.length_figure({"s1": {1: 1.0}}, 1, title="Exact copies, by length",
                                 y_title="per-symbol accuracy")
        assert long.layout.yaxis.title.text == "逐符号准确率"
    # a chapter's title that the English wraps on two lines comes out whole in Chinese
    english = viz.variance_figure((1, 8), [1.0, 8.0], [1.0, 1.0],
                                  title="Causal weights: each row sees itself and the past")
    assert "<br>" in english.layout.title.text
    with using("zh"):
        chinese = viz.variance_figure((1, 8), [1.0, 8.0], [1.0, 1.0],
                                      title="Causal weights: each row sees itself and the past")
    assert chinese.layout.title.text == "因果权重：每一行只看到自己和过去"
    assert chinese.layout.margin.t == english.layout.margin.t  # laid out as the English
    assert_speaks_both(lambda: viz.causal_query_slider(
        TOKENS, np.eye(3), title="Causal weights: each row sees itself and the past"))


def test_the_translator_wraps_as_the_figures_do():
    from course_attention.i18n import outputs
    from course_attention.viz import core

    assert set(outputs.WRAP_WIDTHS) == {core.TITLE_CHARS, core.PANEL_CHARS, core.AXIS_CHARS}
    assert core._wrap is outputs._wrap  # one wrap, so a title re-joins as the figure broke it
    title = "a long title &amp; more words than one line of a phone holds, and then some"
    assert core.wrap_title(title, core.PANEL_CHARS).split("<br>") == outputs._wrap(title, 10)


def test_english_is_unchanged_by_the_translation_machinery():
    fig = viz.attention_heatmap(_rows(2, 2), TOKENS[:2], title="Toy word vectors")
    assert fig.layout.title.text == "Toy word vectors"
    assert fig.data[0].hovertemplate == "query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>"
    slider = FIGURES["cross_attention_heads_slider"]()
    assert slider.layout.sliders[0].currentvalue.prefix == "shown = "
    with using("zh"):
        zh = FIGURES["cross_attention_heads_slider"]()
    # the frames keep their (English) names in every language: the steps find them by name
    assert [f.name for f in zh.frames] == [f.name for f in slider.frames]
    assert [s.label for s in zh.layout.sliders[0].steps] == ["第 1 层 · 头 1", "第 1 层 · 头 2",
                                                              "第 1 层 · 平均"]


def _no_links(value):
    return json.loads(re.sub(r'href=\\"[^"\\]*\\"', 'href=\\"\\"', json.dumps(value)))


@pytest.mark.parametrize("which", ["course_map", "architecture"])
def test_the_architecture_speaks_chinese_links_aside(which):
    """The course map and the models' architectures: every word Chinese, and the translated
    English figure is the Chinese one but for its links (the Chinese site's chapters)."""
    from course_attention import architecture as arch

    def build():
        if which == "course_map":
            return viz.course_map_figure()
        model, inputs = arch.chapter_example("ch-decoder-only")
        return viz.architecture_figure(arch.trace(model, *inputs),
                                       title="Positions run through the model")

    english = json.loads(build().to_json())
    with using("zh"):
        chinese = json.loads(build().to_json())
    assert _no_links(translator("zh").json(english)) == _no_links(chinese)
    left = [t for t in words_of(chinese) if english_runs(t)]
    assert not left, left[:5]
    hover = " ".join(t for d in chinese["data"] for t in d.get("text", []) or [])
    assert "构建于第" in hover and "个参数" in hover
