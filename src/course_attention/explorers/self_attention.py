"""Chapter 3's live explorer (kind ``self_attention``, drawn by ``self_attention.js``).

The reader picks the ending of "The animal didn't cross the street because it was too tired /
wide", how much of the adjective the vector of "it" carries (``context``) and a query position;
the page recomputes ``X``, then ``Q = X W_q``, ``K = X W_k``, ``V = X W_v`` and the query's row
of ``softmax(Q Kᵀ / √dₖ)``, in float64, as :func:`course_attention.numpy_ref.
scaled_dot_product_attention` does here.

The page gets the token vectors *without* context (``context = 0``) and adds ``context`` times
the ending's vector to the row of "it" itself, the same two float64 operations as
:func:`course_attention.toy.it_sentence`, so both sides start from the same bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import numpy_ref, toy, viz
from ..i18n import N_, _
from .core import Explorer, english, register, slider

__all__ = ["CONTEXT_RANGE", "query_row", "title", "figure", "spec", "self_attention_explorer"]

#: The context slider's (min, max, step).
CONTEXT_RANGE: tuple[float, float, float] = (0.0, 2.0, 0.1)
#: A row whose weights differ by less than this is drawn as flat (every token the same weight).
FLAT = 1e-12
#: The figure's title, its two halves a line each on a phone (``spec["text"]``:
#: ``self_attention.js`` fills them too): where the weight goes, flat or not.
TITLE_FLAT = N_("query '{token}' (too {ending}): the same weight on every token")
TITLE_FLAT_NARROW = N_("query '{token}' (too {ending}):<br>the same weight on every token")
TITLE = N_("query '{token}' (too {ending}): largest weight on '{best}'")
TITLE_NARROW = N_("query '{token}' (too {ending}):<br>largest weight on '{best}'")
#: The page's words — its messages for bad input, the query slider's readout.
TEXT = {
    "title_flat": TITLE_FLAT, "title_flat_narrow": TITLE_FLAT_NARROW,
    "title": TITLE, "title_narrow": TITLE_NARROW,
    "bad_ending": N_("Pick an ending: {endings}."),
    "bad_query": N_("The query position must be a whole number from 0 to {max}."),
    "bad_context": N_("The context must be a number."),
    "valuetext": N_("position {position}, '{token}'"),
}


def _check(ending: str, query: int, context: float) -> toy.ItSentence:
    sentence = toy.it_sentence(ending, context=context)  # checks the ending
    seq = len(sentence.tokens)
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < seq:
        raise ValueError(f"query must be a position in 0 … {seq - 1}; got {query!r}")
    if not np.isfinite(context):
        raise ValueError(f"context must be a finite number; got {context!r}")
    return sentence


def query_row(ending: str, query: int, context: float) -> np.ndarray:
    """The weights ``(seq,)`` of the query at position ``query`` over every token (chapter 3):
    row ``query`` of :func:`course_attention.numpy_ref.scaled_dot_product_attention` applied to
    the projections of ``toy.it_sentence(ending, context).X``."""
    s = _check(ending, query, context)
    _, weights = numpy_ref.scaled_dot_product_attention(s.X @ s.W_q, s.X @ s.W_k, s.X @ s.W_v)
    return weights[query]  # (seq,)


def title(ending: str, query: int, row: np.ndarray) -> str:
    """The figure's title: the query token and where its weight goes (``self_attention.js``
    writes the same)."""
    tokens = toy.it_sentence(ending).tokens
    if row.max() - row.min() < FLAT:
        return _(TITLE_FLAT).format(token=tokens[query], ending=ending)
    return _(TITLE).format(token=tokens[query], ending=ending,
                           best=tokens[int(row.argmax())])


def figure(ending: str, query: int, context: float) -> go.Figure:
    """The explorer's figure: :func:`course_attention.viz.query_row_figure` of the query's row."""
    s = _check(ending, query, context)
    _, weights = numpy_ref.scaled_dot_product_attention(s.X @ s.W_q, s.X @ s.W_k, s.X @ s.W_v)
    return viz.query_row_figure(weights, s.tokens, query,
                                  english(title, ending, query, weights[query]))


def spec() -> dict[str, Any]:
    """The ``live`` part of :func:`self_attention_explorer`: the
    sentences' token vectors without context, the projections and the colours of the bars."""
    sentences = {}
    for ending in toy.IT_ENDINGS:
        s = toy.it_sentence(ending, context=0.0)
        sentences[ending] = {"tokens": list(s.tokens), "labels": viz.unique_labels(s.tokens),
                             "X": s.X}  # (seq, d_model)
    s = toy.it_sentence(toy.IT_ENDINGS[0])
    return {
        "kind": "self_attention",
        "data": {
            "sentences": sentences,
            "it": s.it_index,
            "W_q": s.W_q, "W_k": s.W_k, "W_v": s.W_v,  # (d_model, d_k), …, (d_model, d_v)
            "colors": {"key": viz.PALETTE[0], "query": viz.PALETTE[1]},
            "flat": FLAT,
        },
        "text": TEXT,
    }


@register
def self_attention_explorer(
    ending: str = "tired", query: int = 7, context: float = 1.0
) -> Explorer:
    """Pick the sentence ending and a query token; see where that token attends.

    Introduced in chapter 3. Controls: ``ending`` ("tired" or "wide"), ``query`` (the position
    of the query token, 0 … 10) and ``context`` (how much of the adjective the vector of "it"
    carries, :func:`course_attention.toy.it_sentence`). The figure is
    :func:`course_attention.viz.query_row_figure`; on the website ``self_attention.js`` computes
    the same row in the reader's browser.
    """
    import ipywidgets as w

    seq = len(toy.it_sentence(ending).tokens)
    if not 0 <= query < seq:
        raise ValueError(f"query must be a position in 0 … {seq - 1}; got {query}")
    controls = {
        # the endings are words of the (English) sentence: they stay as they are
        "ending": w.Dropdown(options=list(toy.IT_ENDINGS), value=ending,
                             description=_("too …")),
        "context": slider(_("context in 'it'"), context, *CONTEXT_RANGE),
        "query": w.IntSlider(
            value=query, min=0, max=seq - 1, description=_("query position"),
            continuous_update=True,
        ),
    }
    return Explorer(controls, figure, spec())
