"""Chapter 4's live mask builder: the spec ``mask.js`` runs, and the masks it must build.

Introduced in chapter 4. The page starts from a *preset* (one of :data:`PRESETS`) for a sentence
of ``n_real`` real tokens padded to six, then the reader clicks cells of the mask to allow or
block them; the weights are the masked softmax of the same made-up scores
(:func:`course_attention.toy.mask_scores`), a row with nothing allowed giving zeros. The presets
are built here from the package's masks (:func:`course_attention.viz.example_mask`,
:func:`course_attention.sliding_window.sliding_window_mask`,
:func:`course_attention.numpy_ref.padding_mask`), which the browser test compares the page with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import numpy_ref as ref
from .. import toy, viz

__all__ = ["PRESETS", "SLIDING", "preset_mask", "title", "figure", "spec"]

#: The presets of the mask builder (chapter 4's four kinds and two sliding windows).
SLIDING: tuple[str, ...] = ("sliding window", "sliding window + padding")
PRESETS: tuple[str, ...] = (*viz.MASK_KINDS, *SLIDING)


def check(kind: str, n_real: int, window: int, seq_len: int) -> None:
    """Raise a ValueError naming the first input outside what the mask builder offers."""
    if kind not in PRESETS:
        raise ValueError(f"kind must be one of {PRESETS}; got {kind!r}")
    for name, value in (("n_real", n_real), ("window", window)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer; got {name}={value!r}")
        if not 1 <= value <= seq_len:
            raise ValueError(f"{name} must lie in 1 … {seq_len}; got {name}={value}")


def preset_mask(kind: str, seq_len: int, n_real: int, window: int) -> np.ndarray:
    """The allowed-mask ``(seq_len, seq_len)`` bool of a preset (True = may attend).

    The four kinds of :data:`course_attention.viz.MASK_KINDS` ignore ``window``; a sliding
    window lets query ``i`` see keys ``i − window + 1 … i``, and ``+ padding`` also hides the
    keys after the ``n_real`` real tokens, so a pad query far enough right sees nothing at all.
    """
    check(kind, n_real, window, seq_len)
    if kind not in SLIDING:
        return viz.example_mask(kind, seq_len, n_real)
    mask = ref.sliding_window_mask(seq_len, int(window))  # (seq_q, seq_k)
    if "padding" in kind:
        mask = mask & ref.padding_mask(np.array([n_real]), seq_len)[0, 0]  # (1, seq_k)
    return mask


def title(kind: str, n_real: int, seq_len: int, window: int, edited: int = 0) -> str:
    """The figure's title; ``mask.js`` writes the same words."""
    name = f"{kind} ({window} keys)" if kind in SLIDING else kind
    text = f"{name} mask, {n_real} real tokens of {seq_len}"
    if edited:
        text += f", {edited} cell{'s' if edited > 1 else ''} edited"
    return text


def figure(
    kind: str, n_real: int, window: int, tokens: Sequence[str] = viz.MASK_TOKENS
) -> go.Figure:
    """The mask beside its weights (:func:`course_attention.viz.mask_figure`) for a preset."""
    mask = preset_mask(kind, len(tokens), n_real, window)
    return viz.mask_figure(
        kind, n_real, tokens, mask=mask, title=title(kind, n_real, len(tokens), window)
    )


def spec(window: int, tokens: Sequence[str] = viz.MASK_TOKENS) -> dict[str, Any]:
    """The ``live`` part of the explorer: the numbers the page needs and its page-only controls.

    ``data``: ``scores`` ``(seq, seq)`` (float64, every bit), ``labels[n - 1]`` the axis labels
    with ``n`` real tokens (as :func:`course_attention.viz.mask_figure` writes them), ``sliding``
    the presets that read the window. Page-only controls: the ``window`` slider, and a keyboard
    way to edit the mask (``query`` and ``key`` menus and a ``toggle`` button).
    """
    seq = len(tokens)
    labels = [viz.unique_labels(viz.padded_tokens(tokens, n)) for n in range(1, seq + 1)]
    first = labels[-1]  # the menus' first labels; mask.js renames them as n_real moves

    def menu(name: str) -> dict[str, Any]:
        return {
            "name": name, "type": "select", "label": name, "value": 0,
            "description": f"the {name} of the cell the button allows or blocks",
            "options": [{"label": lab, "value": i} for i, lab in enumerate(first)],
        }

    return {
        "kind": "mask",
        "data": {"scores": toy.mask_scores(seq), "labels": labels, "sliding": list(SLIDING)},
        "controls": [
            {"name": "window", "type": "range", "label": "window (sliding presets)",
             "min": 1, "max": seq, "step": 1, "value": int(window), "format": 0},
            menu("query"),
            menu("key"),
            {"name": "toggle", "type": "button", "label": "Allow or block this cell",
             "value": None},
        ],
    }
