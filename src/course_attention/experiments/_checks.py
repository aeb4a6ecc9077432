"""Argument checks shared by the measurements: a clear ValueError naming the value."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _check_widths(d_ks: Sequence[int]) -> np.ndarray:
    widths = np.asarray(d_ks)
    if widths.ndim != 1 or widths.size == 0 or not np.issubdtype(widths.dtype, np.integer):
        raise ValueError(f"d_ks must be a non-empty 1-D sequence of integers; got {d_ks!r}")
    if (widths < 1).any():
        raise ValueError(f"every d_k must be at least 1; got {widths.tolist()}")
    return widths


def _check_count(name: str, value: int, least: int = 1) -> None:
    if int(value) != value or value < least:
        raise ValueError(f"{name} must be an integer ≥ {least}; got {value!r}")
