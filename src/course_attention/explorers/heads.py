"""Chapter 5's live explorer (kind ``heads``, drawn by ``heads.js``).

One input, "the cat sat on the mat" (:func:`course_attention.toy.two_head_example`), and one set
of projections ``W_q, W_k, W_v, W_o`` ``(8, 8)``, cut into 1, 2, 4 or 8 heads of width ``8 / h``.
The reader picks the projections (the chapter's, built by hand, or random ones), the number of
heads and a head; the page runs multi-head attention (``CourseAttention.math.multiHead``) in
float64 and draws that head's weights, as :func:`course_attention.numpy_ref.multi_head_attention`
computes them here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import numpy_ref, toy, viz
from ..i18n import N_, _
from .core import Explorer, register

__all__ = [
    "HEAD_COUNTS", "PROJECTIONS", "inputs", "head_weights", "title", "figure", "spec",
    "multi_head_explorer",
]

#: The numbers of heads the explorer offers (each divides ``d_model = 8``).
HEAD_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
#: The projections the explorer offers, as ``{value: label}``.
PROJECTIONS: dict[str, str] = {
    "built": N_("built by hand (the chapter's)"),
    "random": N_("random"),
}
#: The figure's title (``heads.js`` fills it from ``spec["text"]``).
TITLE = N_("head {head} of {n_heads}, each of width d/h = {width}")
#: The page's words — bad-input messages, the head slider's readout.
TEXT = {
    "title": TITLE,
    "bad_projections": N_("Pick the projections: {choices}."),
    "bad_heads": N_("The number of heads must be one of {counts}."),
    "valuetext": N_("head {head} of {n_heads}"),
}
#: Random projections act on twice the chapter's inputs (larger inputs give sharper maps).
RANDOM_INPUT_SCALE = 2.0


def inputs(projections: str = "built", seed: int = 0) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The explorer's input ``X`` ``(T, d_model)`` and projections ``(W_q, W_k, W_v, W_o)``,
    ``(d_model, d_model)`` each (chapter 5).

    ``"built"``: the chapter's hand-made example. ``"random"``: standard normals / √d_model
    drawn with ``numpy.random.default_rng(seed)``, on ``RANDOM_INPUT_SCALE`` times the inputs.
    """
    if projections not in PROJECTIONS:
        raise ValueError(f"projections must be one of {list(PROJECTIONS)}; got {projections!r}")
    example = toy.two_head_example()
    X = example.X[0]  # (T, d_model)
    if projections == "built":
        return X, (example.W_q, example.W_k, example.W_v, example.W_o)
    d_model = X.shape[-1]
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((4, d_model, d_model)) / np.sqrt(d_model)
    return X * RANDOM_INPUT_SCALE, tuple(W)


def _check(n_heads: int, head: int) -> None:
    if n_heads not in HEAD_COUNTS:
        raise ValueError(f"n_heads must be one of {list(HEAD_COUNTS)}; got {n_heads!r}")
    if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 0 <= head < n_heads:
        raise ValueError(f"head={head!r} is not an index into {n_heads} heads")


def head_weights(projections: str, n_heads: int, seed: int = 0) -> np.ndarray:
    """Every head's weights ``(n_heads, T, T)``: :func:`course_attention.numpy_ref.
    multi_head_attention` of :func:`inputs` cut into ``n_heads`` heads."""
    _check(n_heads, 0)
    X, W = inputs(projections, seed)
    return numpy_ref.multi_head_attention(X[None], X[None], *W, n_heads)[1][0]


def title(n_heads: int, head: int) -> str:
    """The figure's title (``heads.js`` writes the same)."""
    d_model = toy.two_head_example().X.shape[-1]
    return _(TITLE).format(head=head, n_heads=n_heads, width=d_model // n_heads)


def figure(weights: np.ndarray, n_heads: int, head: int) -> go.Figure:
    """The explorer's figure: :func:`course_attention.viz.head_heatmap` of head ``head`` of
    ``weights`` ``(n_heads, T, T)``."""
    _check(n_heads, head)
    tokens = toy.two_head_example().tokens
    return viz.head_heatmap(weights, tokens, head, title=title(n_heads, head))


def spec(seed: int = 0) -> dict[str, Any]:
    """The ``live`` part of :func:`multi_head_explorer`: the input and
    the projections of each choice, ``W`` as ``{"q", "k", "v", "o"}`` (multiplying on the right)."""
    choices = {}
    for name in PROJECTIONS:
        X, (W_q, W_k, W_v, W_o) = inputs(name, seed)
        choices[name] = {"X": X, "W": {"q": W_q, "k": W_k, "v": W_v, "o": W_o}}
    d_model = toy.two_head_example().X.shape[-1]
    return {
        "kind": "heads",
        "data": {"inputs": choices, "d_model": d_model, "head_counts": list(HEAD_COUNTS),
                 "seed": seed},
        "text": TEXT,
    }


@register
def multi_head_explorer(
    head: int = 0, n_heads: int = 2, projections: str = "built", seed: int = 0
) -> Explorer:
    """Cut one set of projections into 1, 2, 4 or 8 heads and see each head's weights.

    Introduced in chapter 5. Controls: ``projections`` ("built": the chapter's hand-made
    :func:`course_attention.toy.two_head_example`; "random": seeded, with no meaning),
    ``n_heads`` (1, 2, 4 or 8 heads of width ``8 / n_heads``) and ``head`` (which head to draw),
    all over "the cat sat on the mat". On the website ``heads.js`` runs the multi-head attention
    in the reader's browser.
    """
    import ipywidgets as w

    inputs(projections, seed)  # checks the projections
    _check(n_heads, head)
    controls = {  # head first: with one head the head slider has nowhere to go
        "head": w.IntSlider(
            value=head, min=0, max=n_heads - 1, description=_("head"), continuous_update=True
        ),
        "n_heads": w.Dropdown(options=list(HEAD_COUNTS), value=n_heads, description=_("heads")),
        "projections": w.Dropdown(
            options=[(_(label), v) for v, label in PROJECTIONS.items()], value=projections,
            description=_("projections"),
        ),
    }
    controls["n_heads"].observe(lambda c: setattr(controls["head"], "max", c["new"] - 1), "value")
    cache: dict[tuple[str, int], Any] = {}

    def make_figure(projections: str, n_heads: int, head: int) -> go.Figure:
        if (projections, n_heads) not in cache:  # (n_heads, T, T)
            cache[projections, n_heads] = head_weights(projections, n_heads, seed)
        return figure(cache[projections, n_heads], n_heads, min(head, n_heads - 1))

    return Explorer(controls, make_figure, spec(seed))
