"""Figure builders: slider frames, unique labels, bad inputs, and the chapter-1 figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from course_attention import numpy_ref as ref
from course_attention import toy, viz


def _bar_traces(n: float) -> list[go.Bar]:
    return [go.Bar(x=["a", "b"], y=[n, 1 - n])]


def test_unique_labels_keeps_distinct_tokens_and_prefixes_repeats():
    assert viz.unique_labels(["the", "cat"]) == ["the", "cat"]
    assert viz.unique_labels(["the", "cat", "the"]) == ["0:the", "1:cat", "2:the"]
    labels = viz.unique_labels(["a", "a", "a", "b"])
    assert len(set(labels)) == len(labels)


def test_slider_figure_has_one_frame_and_one_step_per_value():
    values = [0.1, 0.5, 0.9]
    fig = viz.slider_figure(_bar_traces, values, label="p", active=1, format_value=str)
    assert len(fig.frames) == len(values)
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == ["0.1", "0.5", "0.9"]
    assert [f.name for f in fig.frames] == ["0.1", "0.5", "0.9"]
    assert all(s.method == "animate" for s in steps)
    assert fig.layout.sliders[0].active == 1
    assert fig.data[0].y == fig.frames[1].data[0].y
    assert fig.frames[0].data[0].y != fig.frames[2].data[0].y


def test_slider_figure_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one value"):
        viz.slider_figure(_bar_traces, [], label="p")
    with pytest.raises(ValueError, match="active=3"):
        viz.slider_figure(_bar_traces, [0.1, 0.2], label="p", active=3)


def test_heatmap_labels_are_unique_and_shapes_are_checked():
    fig = viz.attention_heatmap(np.full((3, 3), 1 / 3), ["the", "cat", "the"])
    assert len(set(fig.data[0].x)) == 3 and len(set(fig.data[0].y)) == 3
    with pytest.raises(ValueError, match="shape"):
        viz.attention_heatmap(np.ones((2, 3)), ["a", "b", "c"])
    with pytest.raises(ValueError, match="shape"):
        viz.weight_bars(np.ones(3), ["a", "b"])


def test_word_plane_draws_every_word_and_the_query():
    fig = viz.word_plane(query="fruit")
    labels = [t for trace in fig.data for t in (trace.text or ()) if t]
    assert sorted(labels) == sorted(toy.WORD_VECTORS)
    with pytest.raises(ValueError, match="unknown words"):
        viz.word_plane(words=["apple", "spaceship"])


def test_word_labels_are_placed_apart_on_the_plane():
    """The placement rule's boxes (over-estimates of the drawn text) never overlap each other
    at the narrowest and widest width; the browser test checks the drawn text."""
    from course_attention.viz import lookup

    words = ["fruit"] + [w for w in toy.WORD_VECTORS if w != "fruit"]
    tips = toy.word_matrix(words)
    bounds = (-1.0, 1.3, -0.6, 1.3)
    scales = lookup._plane_scales(2.3, 1.9, 1.0, 420)
    positions = lookup.label_positions(tips, words, scales, bounds)
    fig = viz.word_plane(query="fruit")
    drawn = dict(zip(fig.data[3].text, fig.data[3].textposition, strict=True))
    drawn.update(zip(fig.data[1].text, fig.data[1].textposition, strict=True))
    assert [drawn[w] for w in words] == positions
    for scale in scales:
        boxes = [lookup._label_box(t, w, p, scale)
                 for t, w, p in zip(tips, words, positions, strict=True)]
        for i, a in enumerate(boxes):
            assert all(lookup._overlap_px(a, b) == 0 for b in boxes[i + 1:]), words[i]
    # a crowded case where the radial position cannot do: the rule moves the second label
    assert lookup.label_positions([[0.5, 0.0], [0.5, 0.02]], ["ab", "cd"], [100.0],
                                  (-1, 1, -1, 1)) == ["middle right", "top right"]


def test_soft_lookup_traces_match_the_reference_softmax():
    q = toy.WORD_VECTORS["fruit"]
    *_arrows, bars, value = viz.soft_lookup_traces(q, temperature=0.5)
    K = toy.word_matrix(list(viz.LOOKUP_KEYS))
    weights = ref.softmax(K @ q / 0.5)
    np.testing.assert_allclose(bars.y, weights, atol=1e-4)
    expected = weights @ np.array([toy.FRUIT_DICT[k] for k in viz.LOOKUP_KEYS])
    assert value.y[0] == pytest.approx(expected, abs=1e-4)
    with pytest.raises(ValueError, match=r"\(2,\)"):
        viz.soft_lookup_traces(np.ones(3))


def test_query_direction_is_a_unit_vector_at_the_angle():
    np.testing.assert_allclose(viz.query_direction(0), [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(viz.query_direction(90, length=2), [0.0, 2.0], atol=1e-12)


def test_temperature_slider_changes_the_weights_and_stays_small():
    fig = viz.temperature_slider()
    weights = [tuple(frame.data[4].y) for frame in fig.frames]
    assert len(set(weights)) == len(weights), "every frame shows different weights"
    assert len(fig.layout.sliders[0].steps) == len(fig.frames)
    assert len(fig.to_json()) < 50_000


def test_low_temperature_approaches_an_arg_max_look_up():
    fig = viz.temperature_slider(temperatures=(0.01, 100.0))
    sharp, flat = (frame.data[4].y for frame in fig.frames)
    assert max(sharp) > 0.99
    assert max(flat) - min(flat) < 0.02


def test_toy_word_matrix_and_worked_example_shapes():
    assert toy.word_matrix(["apple", "chair"]).shape == (2, 2)
    example = toy.worked_example()
    assert example.q.shape == (4,)
    assert example.K.shape == (3, 4) and example.V.shape == (3, 4)
    assert len(example.key_words) == 3
    assert set(viz.LOOKUP_KEYS) == set(toy.FRUIT_DICT)


def test_no_two_figure_modules_export_the_same_name():
    """viz star-imports every chapter's module: a repeated name would silently replace another."""
    import importlib
    import pkgutil

    from course_attention import viz as package

    owners: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"course_attention.viz.{info.name}")
        for name in getattr(module, "__all__", []):
            owners.setdefault(name, []).append(info.name)
    clashes = {name: mods for name, mods in owners.items() if len(mods) > 1}
    assert not clashes, clashes
    assert len(package.__all__) == len(set(package.__all__))


def test_an_arrow_from_the_origin_is_clipped_to_a_label_box():
    from course_attention.viz.lookup import _segment_in_box

    box = np.array([10.0, -5.0, 30.0, 5.0])  # (left, bottom, right, top), px
    assert np.isclose(_segment_in_box(np.array([40.0, 0.0]), box), 20.0)  # crosses it whole
    assert np.isclose(_segment_in_box(np.array([20.0, 0.0]), box), 10.0)  # ends inside
    assert _segment_in_box(np.array([0.0, 40.0]), box) == 0.0  # passes beside it
    assert _segment_in_box(np.array([5.0, 0.0]), box) == 0.0  # stops short
