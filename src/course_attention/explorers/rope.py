"""Chapter 10's live RoPE explorer (kind ``rope``, ``rope.js`` on top of ``positions.js``).

Introduced in chapter 10. The reader moves the offset ``m − n`` between a rotated query and key
and changes the width and the base; the page computes both curves itself from the few numbers
it cannot compute (the random vectors' pair sizes, :func:`rope_live`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import viz
from ..i18n import N_, _
from .core import Explorer, number_options, register
from .positions import BASES, WIDTHS

__all__ = ["ROPE_SAMPLES", "rope_live", "rope_explorer"]

#: Random vectors averaged in the RoPE figure's mean curve (as :func:`viz.rope_offset_traces`).
ROPE_SAMPLES = 500
#: The figure's title (``rope.js`` fills it from ``spec["text"]``).
TITLE = N_("offset {offset}, d = {d}, base = {base:g}")


def rope_live(widths: list[int], max_offset: int) -> dict[str, Any]:
    """RoPE's explorer: for each width ``d``, the random vectors' pair sizes the curves need.

    ``data.vectors[d]``: ``{"one": q (d,), "mean_size": (d/2,)}``, the first of the
    :data:`ROPE_SAMPLES` standard-normal vectors of
    :func:`course_attention.positions.rope_score_by_offset` and the mean over all of them of
    each pair's squared length ``|q_i|² = q_2i² + q_2i+1²`` (the mean score at an offset is
    ``Σ_i mean|q_i|² cos(offset · θ_i)``, by linearity). The base does not change them.
    """
    if not widths or any(d < 2 or d % 2 for d in widths):
        raise ValueError(f"widths must be even numbers ≥ 2; got {widths!r}")
    vectors = {}
    for d in widths:
        q = np.random.default_rng(0).standard_normal((ROPE_SAMPLES, d))  # as rope_score_by_offset
        size = q[:, 0::2] ** 2 + q[:, 1::2] ** 2  # (samples, d/2)
        vectors[str(d)] = {"one": q[0], "mean_size": size.mean(axis=0)}
    return {"kind": "rope", "scripts": ["positions"],
            "data": {"max_offset": int(max_offset), "vectors": vectors},
            "text": {"title": TITLE, "no_vectors": N_("No random vectors for d = {d}."),
                     "bad_offset": N_("Pick an offset from 0 to {max}.")},
            "phone": viz.positions.ROPE_PHONE}


@register
def rope_explorer(offset: int = 8, d: int = 64, base: float = 10000.0) -> Explorer:
    """Move the offset ``m − n`` between a rotated query and key; change the width and the base.

    Introduced in chapter 10. Controls: ``offset`` (0 … 64), ``d`` (16, 32, 64 or 128 features)
    and ``base`` (100, 1000 or 10000). The figure is
    :func:`course_attention.viz.rope_offset_figure`: how much of each pair survives at this
    offset, and the score of a vector with itself at every offset.
    """
    import ipywidgets as w

    from .. import viz

    max_offset = 64
    if d not in WIDTHS or base not in BASES or not 0 <= offset <= max_offset:
        raise ValueError(
            f"need offset in 0 … {max_offset}, d in {WIDTHS}, base in "
            f"{[f'{b:g}' for b in BASES]}; got {offset}, {d}, {base:g}"
        )
    controls = {
        "offset": w.IntSlider(
            value=offset, min=0, max=max_offset, description=_("offset m − n"),
            continuous_update=True,
        ),
        "d": w.Dropdown(options=WIDTHS, value=d, description=_("d (features)")),
        "base": w.Dropdown(options=number_options(BASES), value=base, description=_("base")),
    }

    def make_figure(offset: int, d: int, base: float) -> Any:
        title = _(TITLE).format(offset=offset, d=d, base=base)
        return viz.rope_offset_figure(offset, d, base, max_offset, title=title)

    return Explorer(controls, make_figure, rope_live(WIDTHS, max_offset))
