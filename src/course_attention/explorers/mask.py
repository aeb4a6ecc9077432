"""Chapter 4's live mask builder (kind ``mask``, drawn by ``mask.js``).

Introduced in chapter 4. Both places start from a *preset* (one of :data:`PRESETS`) for a
sentence of ``n_real`` real tokens padded to six, with a ``window`` for the sliding presets; the
reader then allows or blocks single cells: on the website by clicking a cell of the mask, in
JupyterLab and Colab by a grid of toggle buttons, one per cell; in both by the ``query`` and
``key`` menus and the toggle button. Edited cells are *kept* when a preset, ``n_real`` or the
window changes (the title counts the cells that differ from the preset); a reset button drops
them. The weights are the masked softmax of the same made-up scores
(:func:`course_attention.toy.mask_scores`), a row with nothing allowed giving zeros. The presets
are built here from the package's masks (:func:`course_attention.viz.example_mask`,
:func:`course_attention.sliding_window.sliding_window_mask`,
:func:`course_attention.numpy_ref.padding_mask`), which the browser test compares the page with.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .. import numpy_ref as ref
from .. import toy, viz
from ..i18n import N_, _
from .core import Explorer, english, register

#: The cells the reader set, whatever the preset says, as ``{(query, key): allowed}``.
Edits = dict[tuple[int, int], bool]

__all__ = ["PRESETS", "SLIDING", "preset_mask", "edited_mask", "toggle_label", "title", "figure",
           "spec", "mask_explorer"]

#: The labels of the reset button (both places) and the toggle button's verbs.
RESET = N_("Reset the cells to the preset")
#: The label of the page's toggle button before it names a cell.
TOGGLE = N_("Allow or block this cell")
#: The presets' names, marked for the catalogue (the menu shows them translated).
PRESET_WORDS = (N_("bidirectional"), N_("causal"), N_("padding"), N_("causal + padding"),
                N_("sliding window"), N_("sliding window + padding"))
#: The figure's title (``mask.js`` fills the same templates from ``spec["text"]``).
NAME_SLIDING = N_("{kind} ({window} keys)")
TITLE = N_("{name} mask, {n_real} real tokens of {seq_len}")
TITLE_EDITED_ONE = N_("{name} mask, {n_real} real tokens of {seq_len}, {edited} cell edited")
TITLE_EDITED = N_("{name} mask, {n_real} real tokens of {seq_len}, {edited} cells edited")
#: The toggle button — what a press does to the chosen cell.
BLOCK = N_("Block: query '{query}' sees key '{key}'")
ALLOW = N_("Allow: query '{query}' sees key '{key}'")

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
    name = _(NAME_SLIDING).format(kind=_(kind), window=window) if kind in SLIDING else _(kind)
    template = TITLE if not edited else TITLE_EDITED_ONE if edited == 1 else TITLE_EDITED
    return _(template).format(name=name, n_real=n_real, seq_len=seq_len, edited=edited)


def edited_mask(preset: np.ndarray, edits: Edits) -> np.ndarray:
    """``preset`` ``(seq, seq)`` bool with the reader's ``edits`` applied (``mask.js`` too)."""
    mask = np.array(preset, dtype=bool)
    for (q, k), allowed in edits.items():
        mask[q, k] = allowed
    return mask


def toggle_label(mask: np.ndarray, labels: Sequence[str], query: int, key: int) -> str:
    """The toggle button's text: what a press does to the chosen cell (``mask.js`` writes it)."""
    return _(BLOCK if mask[query, key] else ALLOW).format(query=labels[query], key=labels[key])


def _frame(q: int, k: int, axis: str) -> dict[str, Any]:
    return dict(type="rect", xref=f"x{axis}", yref=f"y{axis}", x0=k - 0.5, x1=k + 0.5,
                y0=q - 0.5, y1=q + 0.5, line=dict(color="#D55E00", width=3))


def figure(
    kind: str,
    n_real: int,
    window: int,
    tokens: Sequence[str] = viz.MASK_TOKENS,
    edits: Edits | None = None,
    cell: tuple[int, int] | None = None,
) -> go.Figure:
    """The mask beside its weights (:func:`course_attention.viz.mask_figure`) for a preset with
    the reader's ``edits``; ``cell`` ``(query, key)`` is framed on both panels, as the page
    frames the cell its menus pick."""
    preset = preset_mask(kind, len(tokens), n_real, window)
    mask = edited_mask(preset, edits or {})
    edited = int((mask != preset).sum())
    fig = viz.mask_figure(kind, n_real, tokens, mask=mask,
                          title=english(title, kind, n_real, len(tokens), window, edited))
    # the words mask.js writes, on one line (viz wraps long titles; the page compares them)
    fig.layout.title.text = title(kind, n_real, len(tokens), window, edited)
    if cell is not None:
        fig.update_layout(shapes=[_frame(*cell, ""), _frame(*cell, "2")])
    return fig


def spec(window: int, tokens: Sequence[str] = viz.MASK_TOKENS) -> dict[str, Any]:
    """The ``live`` part of the explorer: the numbers the page needs.

    ``data``: ``scores`` ``(seq, seq)`` (float64, every bit), ``labels[n - 1]`` the axis labels
    with ``n`` real tokens (as :func:`course_attention.viz.mask_figure` writes them), ``sliding``
    the presets that read the window. The widgets' ``window``, ``query`` and ``key`` controls are
    read off them; the page adds its ``toggle`` and ``reset`` buttons (the notebook's are
    ipywidgets buttons), and the reader can click the cells of the mask (the notebook: a grid).
    """
    seq = len(tokens)
    labels = [viz.unique_labels(viz.padded_tokens(tokens, n)) for n in range(1, seq + 1)]
    return {
        "kind": "mask",
        "data": {"scores": toy.mask_scores(seq), "labels": labels, "sliding": list(SLIDING)},
        "controls": [
            {"name": "toggle", "type": "button", "label": TOGGLE, "value": None},
            {"name": "reset", "type": "button", "label": RESET, "value": None},
        ],
        "text": {"name_sliding": NAME_SLIDING, "title": TITLE, "title_edited_one": TITLE_EDITED_ONE,
                 "title_edited": TITLE_EDITED, "block": BLOCK, "allow": ALLOW,
                 "bad_sizes": N_("Real tokens and window must each be between 1 and {seq}.")},
    }


@register
def mask_explorer(kind: str = "causal + padding", n_real: int = 4, window: int = 3) -> Explorer:
    """Build a mask and see the weights it gives, side by side.

    Introduced in chapter 4. Controls, the same as the website's: ``kind`` of mask (a preset of
    ``PRESETS``: the four of ``viz.MASK_KINDS`` and a sliding window of
    ``window`` keys, with or without padding), ``n_real`` (the real tokens of the six-token
    sentence; the rest is padding), ``window``, a grid of toggle buttons, one per cell of the
    mask (green: may attend; the website: click the cell), the ``query`` and ``key`` menus with
    a button that allows or blocks that cell, and a reset button. Edits are kept when a preset
    or slider changes. The figure is ``explorers.mask.figure``.
    """
    import ipywidgets as w

    seq = len(viz.MASK_TOKENS)
    check(kind, n_real, window, seq)
    data = spec(window)["data"]
    labels = data["labels"]

    def menu(name: str) -> w.Dropdown:
        return w.Dropdown(options=[(lab, i) for i, lab in enumerate(labels[n_real - 1])], value=0,
                          description=name)

    controls = {
        "kind": w.Dropdown(options=[(_(p), p) for p in PRESETS], value=kind,
                           description=_("mask")),
        "n_real": w.IntSlider(value=n_real, min=1, max=seq, description=_("real tokens"),
                              continuous_update=True),
        "window": w.IntSlider(value=window, min=1, max=seq,
                              description=_("window (sliding presets)"), continuous_update=True),
        "query": menu(_("query")),
        "key": menu(_("key")),
    }
    edits: Edits = {}
    toggle = w.Button(description=_(TOGGLE), layout=w.Layout(width="auto"))
    reset = w.Button(description=_(RESET), layout=w.Layout(width="auto"))
    cells = [[w.ToggleButton(value=False, tooltip=_("query {q}, key {k}").format(q=q, k=k),
                             layout=w.Layout(width="64px", height="28px"))
              for k in range(seq)] for q in range(seq)]
    heads = [w.Label(layout=w.Layout(width="64px")) for _ in range(seq)]
    sides = [w.Label(layout=w.Layout(width="90px")) for _ in range(seq)]
    grid = w.VBox(
        [w.HTML("<small>" + escape(_("The mask's cells: press one to allow or block it (rows: "
                                     "queries, columns: keys).")) + "</small>"),
         w.HBox([w.Label(layout=w.Layout(width="90px")), *heads])]
        + [w.HBox([sides[q], *cells[q]]) for q in range(seq)]
    )
    state = {"syncing": False, "labels": labels[n_real - 1]}

    def current() -> tuple[np.ndarray, np.ndarray]:
        v = {k: c.value for k, c in controls.items()}
        preset = preset_mask(v["kind"], seq, v["n_real"], v["window"])
        return preset, edited_mask(preset, edits)

    def set_cell(q: int, k: int, allowed: bool) -> None:
        preset, _ = current()
        if allowed == bool(preset[q, k]):
            edits.pop((q, k), None)  # back to the preset's own value: no longer an edit
        else:
            edits[q, k] = allowed

    def sync(mask: np.ndarray, names: list[str]) -> None:
        """Grid, menus and toggle button show the mask and the labels of ``n_real``."""
        state["syncing"] = True
        try:
            if names != state["labels"]:
                for name in ("query", "key"):
                    value = controls[name].value
                    controls[name].options = [(lab, i) for i, lab in enumerate(names)]
                    controls[name].value = value
                state["labels"] = names
            for q in range(seq):
                sides[q].value = names[q]
                heads[q].value = names[q]
                for k in range(seq):
                    cell = cells[q][k]
                    cell.value = bool(mask[q, k])
                    cell.description = "✓" if mask[q, k] else "·"
                    cell.button_style = "success" if mask[q, k] else ""
            toggle.description = toggle_label(mask, names, controls["query"].value,
                                              controls["key"].value)
        finally:
            state["syncing"] = False

    def make_figure(kind: str, n_real: int, window: int, query: int, key: int) -> go.Figure:
        check(kind, n_real, window, seq)
        fig = figure(kind, n_real, window, edits=edits, cell=(query, key))
        sync(current()[1], labels[n_real - 1])
        return fig

    def on_cell(q: int, k: int) -> Any:
        def changed(change: dict) -> None:
            if state["syncing"]:
                return
            with explorer.hold():
                set_cell(q, k, bool(change["new"]))
                controls["query"].value, controls["key"].value = q, k
        return changed

    for q in range(seq):
        for k in range(seq):
            cells[q][k].observe(on_cell(q, k), names="value")

    def on_toggle(_: Any) -> None:
        q, k = controls["query"].value, controls["key"].value
        set_cell(q, k, not bool(current()[1][q, k]))
        explorer.redraw()

    def on_reset(_: Any) -> None:
        edits.clear()
        explorer.redraw()

    toggle.on_click(on_toggle)
    reset.on_click(on_reset)
    explorer = Explorer(controls, make_figure, spec(window),
                        buttons={"toggle": toggle, "reset": reset}, extra=[grid])
    return explorer
