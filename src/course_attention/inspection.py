"""Looking inside a trained model: attention maps and step-by-step decoding (chapter 7).

Helpers for the chapters' heatmaps and decoding sliders; the models come from
:mod:`course_attention.modules`, the tasks from :mod:`course_attention.tasks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import (
    BOS_ID,
    DIGIT_OFFSET,
    EOS_ID,
    PAD_ID,
    TASKS,
    decode_digits,
    encode_source,
    token_names,
)

__all__ = ["AttentionMap", "cross_attention_map", "DecodingSteps", "decoding_steps"]



@dataclass(frozen=True)
class AttentionMap:
    """Cross-attention weights ``(seq_t, seq_s)`` with their query and key names (chapter 7)."""

    weights: np.ndarray
    queries: list[str]
    keys: list[str]


def _layer_index(model: Any, layer: int) -> int:
    n = len(model.decoder)
    if not -n <= layer < n:
        raise ValueError(f"layer={layer} is not an index into {n} decoder layers")
    return layer % n


def cross_attention_map(
    model: Any, digits: str | Sequence[int], task: str = "reverse", layer: int = -1
) -> AttentionMap:
    """Teacher-forced cross-attention of one decoder layer, averaged over heads (chapter 7).

    The decoder reads ``[BOS]`` and the correct answer (so an untrained and a trained model get
    the same rows); row ``t`` is where the decoder looked in the source when predicting answer
    token ``t``. Only the real source tokens (digits and ``[EOS]``) are kept:
    ``weights`` ``(len(digits) + 1, len(digits) + 1)``.
    """
    import torch

    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}; got {task!r}")
    layer = _layer_index(model, layer)
    src = encode_source(digits)  # (1, max_len + 1)
    n = int((src[0] != PAD_ID).sum())  # digits + EOS
    answer = np.asarray(TASKS[task](decode_digits(src[0])), dtype=np.int64) + DIGIT_OFFSET
    tgt_in = np.concatenate([[BOS_ID], answer])[None, :]  # (1, n): [BOS] + answer
    with torch.no_grad():
        src_t = torch.from_numpy(src)
        memory, _ = model.encode(src_t, need_weights=False)
        _, cross = model.decode(torch.from_numpy(tgt_in), memory, src_t)
    weights = cross[layer][0].mean(dim=0)[:, :n].double().numpy()  # (seq_t, seq_s)
    return AttentionMap(weights, token_names(tgt_in[0]), token_names(src[0, :n]))


@dataclass(frozen=True)
class DecodingSteps:
    """Greedy decoding, one step at a time (chapter 7).

    ``source`` names the real source tokens ``(seq_s,)``; ``tokens`` names the generated tokens
    ``(steps,)``; ``weights`` ``(steps, seq_s)`` is the cross-attention row (one decoder layer,
    averaged over heads) of the query that chose each token.
    """

    source: list[str]
    tokens: list[str]
    weights: np.ndarray


def decoding_steps(model: Any, digits: str | Sequence[int], layer: int = -1) -> DecodingSteps:
    """Greedy-decode the typed ``digits`` and keep each step's cross-attention (chapter 7).

    Raises ``ValueError`` (from :func:`encode_source`) for input that is not 1 … 8 digits.
    """
    import torch

    layer = _layer_index(model, layer)
    src = encode_source(digits)  # (1, max_len + 1)
    n = int((src[0] != PAD_ID).sum())
    out = model.greedy_decode(
        torch.from_numpy(src), BOS_ID, EOS_ID, max_steps=src.shape[1], return_attention=True
    )
    rows = [step[layer, 0].mean(dim=0)[:n] for step in out.cross_attention]  # (seq_s,) each
    weights = torch.stack(rows).double().numpy()  # (steps, seq_s)
    return DecodingSteps(token_names(src[0, :n]), token_names(out.tokens[0].tolist()), weights)
