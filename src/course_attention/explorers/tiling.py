"""The live explorer of chapter 11: the tiled (FlashAttention-style) pass, run in the page
(``tiling.js``).

The page runs the whole pass itself: running maximum, running sum, rescaling. It only needs
the random queries, keys and values of :func:`course_attention.viz.tiling_states`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..i18n import N_, _
from .core import Explorer, register

__all__ = ["tiling_live", "tiling_explorer"]

#: The figure's title (``tiling.js`` fills it from ``spec["text"]``).
TITLE = N_("T = {seq_len}, block {block}: tile {step} of {n_tiles}")


def tiling_live(seq_lens: list[int], d: int = 4, seed: int = 0) -> dict[str, Any]:
    """``data.normals``: the standard normals ``default_rng(seed)`` draws first, enough for the
    longest sequence. ``tiling_states(T, …)`` draws Q, K and V ``(T, d)`` one after the other
    from that stream, so for any ``T`` they are its numbers ``[0, Td)``, ``[Td, 2Td)`` and
    ``[2Td, 3Td)``, row by row: the page slices them instead of storing each ``T`` apart."""
    if not seq_lens or min(seq_lens) < 1:
        raise ValueError(f"seq_lens must be positive; got {seq_lens!r}")
    longest = max(seq_lens)
    normals = np.random.default_rng(seed).standard_normal(3 * longest * d)
    for T in seq_lens:  # the slicing the page does gives exactly tiling_states' draws
        rng = np.random.default_rng(seed)
        drawn = np.concatenate([rng.standard_normal((T, d)).ravel() for _ in range(3)])
        if not np.array_equal(drawn, normals[: 3 * T * d]):
            raise ValueError(f"numpy's stream of normals changed: T={T} draws differ")
    return {"kind": "tiling", "data": {"d": d, "normals": normals},
            "text": {"title": TITLE,
                     "bad_length": N_("Pick a sequence length from 1 to {max}."),
                     "bad_block": N_("Pick a block size.")}}


@register
def tiling_explorer(seq_len: int = 16, block_size: int = 4, progress: float = 25.0) -> Explorer:
    """Step through the tiled (FlashAttention-style) pass of one head.

    Introduced in chapter 11. Controls: ``seq_len`` (queries = keys), ``block_size`` (the tile's
    rows and columns) and ``progress``, the share of the tiles done (%). The figure is
    :func:`course_attention.viz.tiling_figure`: the one tile of scores held now, and how far
    each query's running output still is from its final value.
    """
    import ipywidgets as w

    from .. import viz

    controls = {
        "seq_len": w.IntSlider(
            value=seq_len, min=8, max=32, step=4, description=_("sequence length T"),
            continuous_update=False, style={"description_width": "initial"},
        ),
        "block_size": w.Dropdown(options=[2, 3, 4, 8], value=block_size, description=_("block")),
        "progress": w.FloatSlider(
            value=progress, min=0.0, max=100.0, step=1.0, description=_("tiles done (%)"),
            continuous_update=True, readout_format=".0f", style={"description_width": "initial"},
        ),
    }

    def make_figure(seq_len: int, block_size: int, progress: float) -> Any:
        n_tiles = (-(-seq_len // block_size)) ** 2
        step = max(1, round(progress / 100 * n_tiles))
        return viz.tiling_figure(
            seq_len, block_size, step,
            title=_(TITLE).format(seq_len=seq_len, block=block_size, step=step, n_tiles=n_tiles),
        )

    T = controls["seq_len"]
    return Explorer(controls, make_figure, tiling_live(list(range(T.min, T.max + 1, T.step))))
