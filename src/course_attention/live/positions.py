"""The live explorers of chapter 10: sinusoidal positions (``positions.js``) and RoPE
offsets (``rope.js``).

Each ``*_live`` function returns the ``live`` dict of its explorer (see
:class:`course_attention.widgets.Explorer`): the page computes every plotted number itself, from
the few numbers it cannot compute (RoPE's random vectors), with the package's formulas.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ROPE_SAMPLES", "positions_live", "rope_live"]

#: Random vectors averaged in the RoPE figure's mean curve (as :func:`viz.rope_offset_traces`).
ROPE_SAMPLES = 500


def positions_live(seq_len: int) -> dict[str, Any]:
    """The page computes the whole table from ``seq_len``, the width and the base."""
    if not isinstance(seq_len, (int, np.integer)) or seq_len < 1:
        raise ValueError(f"seq_len must be a positive integer; got {seq_len!r}")
    return {"kind": "positions", "data": {"seq_len": int(seq_len)}}


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
            "data": {"max_offset": int(max_offset), "vectors": vectors}}
