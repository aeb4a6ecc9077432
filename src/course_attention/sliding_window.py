"""Sliding-window attention: a banded causal mask, its cost, and how far a token reaches.

Introduced in chapter 11 (efficient attention). With a window of ``w`` keys, query ``i`` may see
keys ``i − w + 1 … i`` (itself and the ``w − 1`` before it), so one layer costs about ``T · w``
scores instead of ``T²/2``. Stacking layers widens the reach: information moves back ``w − 1``
positions per layer, ``L · (w − 1)`` after ``L`` layers (as in Mistral 7B, Jiang et al. 2023).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sliding_window_mask", "window_cost", "reach_after_layers"]


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {name}={value!r}")
    return int(value)


def sliding_window_mask(seq_len: int, window: int) -> np.ndarray:
    """Banded causal mask: query ``i`` may attend to keys ``i − window + 1 … i``.

    Introduced in chapter 11, built like chapter 4's causal mask (``np.tri``: key ``j ≤ i``):
    the causal mask minus the keys that are ``window`` or more positions old (``j ≤ i − window``,
    the same triangle shifted by ``window``).

    Returns:
        ``(seq_len, seq_len)`` bool, True = may attend; ``window ≥ seq_len`` gives the causal mask.
    """
    seq_len, window = _positive("seq_len", seq_len), _positive("window", window)
    causal = np.tri(seq_len, dtype=bool)  # key j ≤ i
    too_old = np.tri(seq_len, k=-window, dtype=bool)  # key j ≤ i − window
    return causal & ~too_old


def window_cost(seq_len: int, window: int) -> dict[str, int]:
    """Scores computed by one causal layer and by one sliding-window layer (chapter 11).

    Returns:
        ``{"causal": T(T + 1)/2, "window": the True entries of the banded mask}``.
    """
    seq_len, window = _positive("seq_len", seq_len), _positive("window", window)
    w = min(window, seq_len)
    return {"causal": seq_len * (seq_len + 1) // 2, "window": seq_len * w - w * (w - 1) // 2}


def reach_after_layers(seq_len: int, window: int, n_layers: int) -> np.ndarray:
    """How far back each position's output can depend on the input, after ``n_layers`` layers.

    Introduced in chapter 11. Computed, not assumed: the dependency pattern of ``L`` layers is the
    ``L``-fold boolean product of the mask; position ``i`` reaches back to its oldest True key.

    Returns:
        ``(n_layers, seq_len)`` int: entry ``[L - 1, i]`` is how many positions before ``i`` the
        oldest input that position ``i`` sees after ``L`` layers is.
    """
    n_layers = _positive("n_layers", n_layers)
    mask = sliding_window_mask(seq_len, window).astype(np.int64)  # (seq, seq)
    seen = np.eye(seq_len, dtype=np.int64)
    reach = np.zeros((n_layers, seq_len), dtype=np.int64)
    positions = np.arange(seq_len)
    for layer in range(n_layers):
        seen = np.minimum(mask @ seen, 1)  # (seq, seq): output i depends on input j
        reach[layer] = positions - seen.argmax(axis=1)  # the first True column is the oldest
    return reach
