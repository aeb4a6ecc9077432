"""The live explorer of chapter 11: the tiled (FlashAttention-style) pass, run in the page
(``tiling.js``).

The page runs the whole pass itself: running maximum, running sum, rescaling. It only needs
the random queries, keys and values of :func:`course_attention.viz.tiling_states`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["tiling_live"]


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
    return {"kind": "tiling", "data": {"d": d, "normals": normals}}
