"""Chapter 1 reasons about its slider's steps and angles: the figures must show exactly those."""

from __future__ import annotations

import numpy as np

from course_attention import numpy_ref as ref
from course_attention import toy, viz


def _labels(fig) -> list[str]:
    return [step.label for step in fig.layout.sliders[0].steps]


def test_the_slider_shows_the_steps_the_chapter_names():
    assert _labels(viz.temperature_slider()) == [f"{t:g}" for t in viz.LOOKUP_TEMPERATURES]


def test_each_temperature_frame_shows_the_softmax_at_its_temperature():
    """The chapter picks the slider step closest to 0.6 / 0.4 / 0 from these weights."""
    fig = viz.temperature_slider(query="fruit")
    scores = toy.word_matrix(list(viz.LOOKUP_KEYS)) @ toy.WORD_VECTORS["fruit"]  # (3,)
    assert len(fig.frames) == len(viz.LOOKUP_TEMPERATURES)
    for temperature, frame in zip(viz.LOOKUP_TEMPERATURES, fig.frames, strict=True):
        np.testing.assert_allclose(frame.data[4].y, ref.softmax(scores / temperature), atol=1e-4)


def test_each_chapter_angle_gives_the_softmax_of_a_unit_query_at_that_angle():
    K = toy.word_matrix(list(viz.LOOKUP_KEYS))  # (3, 2)
    for angle in viz.LOOKUP_ANGLES:
        q = viz.query_direction(angle)  # (2,)
        assert np.isclose(np.linalg.norm(q), 1.0)
        bars = viz.soft_lookup_traces(q, 0.3)[4]
        np.testing.assert_allclose(bars.y, ref.softmax(K @ q / 0.3), atol=1e-4)
