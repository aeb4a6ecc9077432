"""Chapter 10's live explorer of sinusoidal positions (kind ``positions``, ``positions.js``).

Introduced in chapter 10. The reader picks a position, the width ``d_model`` and the base; the
page computes the whole table (:func:`course_attention.numpy_ref.sinusoidal_positions`) from
those numbers alone, so the spec carries only the sequence length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..i18n import N_, _
from .core import Explorer, number_options, register

__all__ = ["WIDTHS", "BASES", "positions_live", "positions_explorer"]

#: The widths and bases both explorers of chapter 10 offer.
WIDTHS: list[int] = [16, 32, 64, 128]
BASES: list[float] = [100.0, 1000.0, 10000.0]
#: The figure's title (``positions.js`` fills it from ``spec["text"]``).
TITLE = N_("position {position}, d_model = {d_model}, base = {base:g}")


def positions_live(seq_len: int) -> dict[str, Any]:
    """The page computes the whole table from ``seq_len``, the width and the base."""
    if not isinstance(seq_len, (int, np.integer)) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive integer; got {seq_len!r}")
    return {"kind": "positions", "data": {"seq_len": int(seq_len)},
            "text": {"title": TITLE, "bad_position": N_("Pick a position from 0 to {max}.")}}


@register
def positions_explorer(position: int = 5, d_model: int = 32, base: float = 10000.0) -> Explorer:
    """Pick a position, the width and the base of the sinusoidal positions; see the vector.

    Introduced in chapter 10. Controls: ``position`` (0 … 47), ``d_model`` (16, 32, 64 or 128)
    and ``base`` (100, 1000 or 10000: how slowly the slowest clock turns). The figure is
    :func:`course_attention.viz.position_figure`: the position's features, and its dot products
    with every position of a 48-token sequence.
    """
    import ipywidgets as w

    from .. import numpy_ref, viz

    seq_len = 48
    if d_model not in WIDTHS or base not in BASES or not 0 <= position < seq_len:
        raise ValueError(
            f"need position in 0 … {seq_len - 1}, d_model in {WIDTHS}, base in "
            f"{[f'{b:g}' for b in BASES]}; got {position}, {d_model}, {base:g}"
        )
    controls = {
        "position": w.IntSlider(
            value=position, min=0, max=seq_len - 1, description=_("position"),
            continuous_update=True,
        ),
        "d_model": w.Dropdown(options=WIDTHS, value=d_model, description="d_model"),
        "base": w.Dropdown(options=number_options(BASES), value=base, description=_("base")),
    }

    def make_figure(position: int, d_model: int, base: float) -> Any:
        table = numpy_ref.sinusoidal_positions(seq_len, d_model, base)  # (seq_len, d_model)
        title = TITLE.format(position=position, d_model=d_model, base=base)  # viz translates
        return viz.position_figure(table, position, title=title)

    return Explorer(controls, make_figure, positions_live(seq_len))
