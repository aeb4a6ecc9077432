"""Exercises of chapter 11 (efficient attention): KV-cache size, one online-softmax update, and
GQA's repeat of the key/value heads."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

# --- 1: the KV cache of one token -----------------------------------------------------------


def _kv_bytes_reference(
    n_layers: int, n_heads: int, n_kv_heads: int, d_head: int, bytes_per_value: int
) -> int:
    from ..grouped_query import kv_cache_bytes_per_token

    return kv_cache_bytes_per_token(n_layers, n_kv_heads, d_head, bytes_per_value)


KV_BYTES_MISTAKES = (
    Mistake(
        N_(
            "only the keys counted: the cache holds a key *and* a value per layer and KV head (the "
            "factor 2 is missing)"
        ),
        lambda n_layers, n_heads, n_kv_heads, d_head, b: n_layers * n_kv_heads * d_head * b,
    ),
    Mistake(
        N_(
            "the query heads counted instead of the key/value heads: queries are never cached, and "
            "with GQA only n_kv_heads keys and values are stored"
        ),
        lambda n_layers, n_heads, n_kv_heads, d_head, b: 2 * n_layers * n_heads * d_head * b,
    ),
    Mistake(
        N_("one layer only: every layer keeps its own keys and values"),
        lambda n_layers, n_heads, n_kv_heads, d_head, b: 2 * n_kv_heads * d_head * b,
    ),
    Mistake(
        N_("values counted, not bytes (bytes_per_value ignored)"),
        lambda n_layers, n_heads, n_kv_heads, d_head, b: 2 * n_layers * n_kv_heads * d_head,
    ),
)


def _kv_bytes_cases() -> list[tuple]:
    return [
        (3, 4, 2, 8, 4),  # a toy model in float32: every mistake gives a different number
        (80, 64, 8, 128, 2),  # Llama 2 70B in float16
        (32, 32, 8, 128, 4),  # Mistral 7B in float32
        (118, 48, 1, 256, 2),  # PaLM 540B, multi-query
        (12, 12, 12, 64, 2),  # a GPT-2-sized model with multi-head attention
    ]


# --- 2: one online-softmax update -----------------------------------------------------------


def _online_update_reference(
    m: np.ndarray, total: np.ndarray, x_block: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    m_new = np.maximum(m, x_block.max(axis=-1))  # (rows,)
    total_new = total * np.exp(m - m_new) + np.exp(x_block - m_new[:, None]).sum(axis=-1)
    return m_new, total_new


def _no_rescale(m, total, x):
    m_new = np.maximum(m, x.max(axis=-1))
    return m_new, total + np.exp(x - m_new[:, None]).sum(axis=-1)


def _wrong_sign(m, total, x):
    m_new = np.maximum(m, x.max(axis=-1))
    return m_new, total * np.exp(m_new - m) + np.exp(x - m_new[:, None]).sum(axis=-1)


def _block_max_only(m, total, x):
    m_new = x.max(axis=-1)
    return m_new, total * np.exp(m - m_new) + np.exp(x - m_new[:, None]).sum(axis=-1)


def _no_max_subtracted(m, total, x):
    m_new = np.maximum(m, x.max(axis=-1))
    return m_new, total * np.exp(m - m_new) + np.exp(x).sum(axis=-1)


ONLINE_UPDATE_MISTAKES = (
    Mistake(
        N_(
            "the old sum was not rescaled: it was summed against the old maximum, so multiply it "
            "by exp(m − m_new) before adding the new block"
        ),
        _no_rescale,
    ),
    Mistake(
        N_(
            "the rescaling factor is upside down: exp(m_new − m) instead of exp(m − m_new) (it "
            "must be ≤ 1, since the maximum only grows)"
        ),
        _wrong_sign,
    ),
    Mistake(
        N_(
            "the new maximum is the block's maximum alone: it must be the larger of the old "
            "maximum and the block's (np.maximum(m, x_block.max(axis=-1)))"
        ),
        _block_max_only,
    ),
    Mistake(
        N_(
            "the new block was exponentiated without subtracting the new maximum: np.exp(x_block) "
            "instead of np.exp(x_block − m_new)"
        ),
        _no_max_subtracted,
    ),
)


def _online_update_cases() -> list[tuple]:
    gen = rng(11)
    return [
        # row 0: the block raises the maximum; row 1: it does not
        (np.array([0.5, 2.0]), np.array([1.3, 2.0]), np.array([[1.0, -0.5, 2.5], [0.1, 0.2, -1]])),
        # the very first block: nothing seen yet
        (np.array([-np.inf, -np.inf]), np.zeros(2), gen.normal(size=(2, 4))),
        (gen.normal(size=3) * 3, gen.uniform(1, 4, size=3), gen.normal(size=(3, 5)) * 3),
        # large scores: np.exp(x) overflows without the maximum
        (np.array([800.0]), np.array([1.5]), np.array([[799.0, 801.0, 790.0]])),
    ]


# --- 3: GQA's repeat of the key/value heads -------------------------------------------------


def _repeat_kv_reference(K: np.ndarray, n_heads: int) -> np.ndarray:
    from ..grouped_query import repeat_kv

    return repeat_kv(K, n_heads)


REPEAT_KV_MISTAKES = (
    Mistake(
        N_(
            "the whole stack of KV heads tiled (np.tile): query head i then reads KV head i % "
            "n_kv_heads, but in GQA it reads head i // (n_heads / n_kv_heads) — use np.repeat"
        ),
        lambda K, n_heads: np.tile(K, (1, n_heads // K.shape[1], 1, 1)),
    ),
    Mistake(
        N_("repeated along the sequence axis (axis 2) instead of the head axis (axis 1)"),
        lambda K, n_heads: np.repeat(K, n_heads // K.shape[1], axis=2),
    ),
    Mistake(
        N_("each KV head repeated n_heads times instead of n_heads / n_kv_heads times"),
        lambda K, n_heads: np.repeat(K, n_heads, axis=1),
    ),
)


def _repeat_kv_cases() -> list[tuple]:
    gen = rng(12)
    return [
        (gen.normal(size=(1, 2, 3, 4)), 4),
        (gen.normal(size=(2, 3, 5, 2)), 6),
        (gen.normal(size=(1, 1, 2, 2)), 3),  # multi-query: one KV head for all
        (gen.normal(size=(2, 4, 3, 2)), 4),  # multi-head: nothing to repeat
    ]


register(
    Exercise(
        id="efficient-attention-1",
        title=N_("the KV cache of one token"),
        reference=_kv_bytes_reference,
        cases=_kv_bytes_cases,
        difficulty=1,
        minutes=5,
        mistakes=KV_BYTES_MISTAKES,
        hint=N_(
            "for every layer and every *key/value* head the cache keeps one key and one value, "
            "each d_head numbers of bytes_per_value bytes: 2 · n_layers · n_kv_heads · d_head · "
            "bytes_per_value. n_heads (the query heads) does not appear."
        ),
        nudge=N_(
            "the cache keeps a key and a value for every layer and every key/value head, each "
            "d_head numbers long; the query heads share them."
        ),
    )
)

register(
    Exercise(
        id="efficient-attention-2",
        title=N_("one online-softmax update"),
        reference=_online_update_reference,
        cases=_online_update_cases,
        difficulty=2,
        minutes=10,
        mistakes=ONLINE_UPDATE_MISTAKES,
        hint=N_(
            "m_new = np.maximum(m, x_block.max(axis=-1)); the old sum was measured against m, so "
            "rescale it by np.exp(m - m_new); add np.exp(x_block - m_new[:, None]).sum(axis=-1)."
        ),
        nudge=N_(
            "the running sum was measured against the old maximum: when a block raises the "
            "maximum, rescale the old sum to the new one before adding the block's terms."
        ),
    )
)

register(
    Exercise(
        id="efficient-attention-3",
        title=N_("GQA: repeat the key/value heads"),
        reference=_repeat_kv_reference,
        cases=_repeat_kv_cases,
        difficulty=2,
        minutes=10,
        mistakes=REPEAT_KV_MISTAKES,
        hint=N_(
            "each KV head serves a group of g = n_heads // n_kv_heads neighbouring query heads: "
            "repeat every head g times, each copy next to its head, along axis 1: "
            "np.repeat(K, g, axis=1)."
        ),
        nudge=N_(
            "query heads come in groups of g = n_heads // n_kv_heads neighbours that share one "
            "key/value head: each key/value head must appear g times in a row."
        ),
    )
)
