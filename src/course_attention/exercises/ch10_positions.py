"""Exercises of chapter 10 (positions): references, test cases, hints, known mistakes."""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

BASE = 10000.0


def _table(seq_len: int, d_model: int, exponent: float = 2.0, start: int = 0) -> np.ndarray:
    pos = np.arange(start, start + seq_len)[:, None]  # (seq_len, 1)
    freq = BASE ** (-exponent * np.arange(d_model // 2) / d_model)  # (d_model / 2,)
    return pos * freq  # (seq_len, d_model / 2): the angles


def _interleave(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    out = np.empty((first.shape[0], 2 * first.shape[1]))
    out[:, 0::2], out[:, 1::2] = first, second
    return out


def _sinusoidal_reference(seq_len: int, d_model: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.sinusoidal_positions(seq_len, d_model)  # (seq_len, d_model)


SINUSOIDAL_MISTAKES = (
    Mistake(
        N_("sin and cos swapped: even features (2i) hold the sine, odd ones (2i + 1) the cosine"),
        lambda seq_len, d_model: _interleave(
            np.cos(_table(seq_len, d_model)), np.sin(_table(seq_len, d_model))
        ),
    ),
    Mistake(
        N_("the exponent i/d instead of 2i/d: pair i turns at 10000^(-2i/d_model)"),
        lambda seq_len, d_model: _interleave(
            np.sin(_table(seq_len, d_model, 1.0)), np.cos(_table(seq_len, d_model, 1.0))
        ),
    ),
    Mistake(
        N_(
            "all sines in the first half and all cosines in the second (`np.concatenate`): the "
            "table of the paper interleaves them, sine at 2i and cosine at 2i + 1"
        ),
        lambda seq_len, d_model: np.concatenate(
            [np.sin(_table(seq_len, d_model)), np.cos(_table(seq_len, d_model))], axis=1
        ),
    ),
    Mistake(
        N_("positions counted from 1: the first token is position 0 (its row is 0, 1, 0, 1, …)"),
        lambda seq_len, d_model: _interleave(
            np.sin(_table(seq_len, d_model, start=1)), np.cos(_table(seq_len, d_model, start=1))
        ),
    ),
)


def _rotate_reference(x: np.ndarray, position: int) -> np.ndarray:
    from .. import numpy_ref

    return numpy_ref.rotary(x[None, :], [position], BASE)[0]  # (d,)


def _rotate(x: np.ndarray, angle: np.ndarray, pairs: str = "interleaved") -> np.ndarray:
    d = len(x)
    a, b = (x[0::2], x[1::2]) if pairs == "interleaved" else (x[: d // 2], x[d // 2 :])
    ra, rb = a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)
    if pairs == "interleaved":
        return _interleave(ra[None], rb[None])[0]
    return np.concatenate([ra, rb])


def _angles(d: int, position: int, exponent: float = 2.0) -> np.ndarray:
    return position * BASE ** (-exponent * np.arange(d // 2) / d)  # (d/2,)


ROTATE_MISTAKES = (
    Mistake(
        N_(
            "rotated the wrong way (by −position · θ_i): the new first feature of a pair is a cos "
            "− b sin, the second a sin + b cos"
        ),
        lambda x, position: _rotate(x, -_angles(len(x), position)),
    ),
    Mistake(
        N_(
            "pairs made of the two halves, (i, i + d/2), as GPT-NeoX-style code does: this "
            "exercise pairs neighbours (2i, 2i + 1), as the RoFormer paper does"
        ),
        lambda x, position: _rotate(x, _angles(len(x), position), pairs="halves"),
    ),
    Mistake(
        N_("the exponent i/d instead of 2i/d: pair i turns at θ_i = 10000^(-2i/d)"),
        lambda x, position: _rotate(x, _angles(len(x), position, exponent=1.0)),
    ),
    Mistake(
        N_("each pair turned by θ_i alone: the angle is position · θ_i"),
        lambda x, position: _rotate(x, _angles(len(x), 1)),
    ),
    Mistake(
        N_(
            "each feature multiplied by cos(angle) only: a rotation mixes the two features of a "
            "pair"
        ),
        lambda x, position: x * np.repeat(np.cos(_angles(len(x), position)), 2),
    ),
)


def _rotate_cases() -> list[tuple]:
    gen = rng(102)
    return [
        (np.array([1.0, 0.0, 1.0, 0.0]), 1),
        (gen.normal(size=8), 3),
        (gen.normal(size=16), 7),
        (gen.normal(size=6), 50),
    ]


def _alibi_reference(seq_len: int, slope: float) -> np.ndarray:
    distance = np.subtract.outer(np.arange(seq_len), np.arange(seq_len))  # (seq, seq): m - n
    return np.where(distance >= 0, -slope * distance, -np.inf)


ALIBI_MISTAKES = (
    Mistake(
        N_("the bias has the wrong sign: farther keys must get a *lower* score, −slope · (m − n)"),
        lambda seq_len, slope: _alibi_reference(seq_len, -slope),
    ),
    Mistake(
        N_(
            "query and key axes swapped (n − m): rows are queries m, columns keys n, and a query "
            "may see the keys at or before it (the lower triangle)"
        ),
        lambda seq_len, slope: _alibi_reference(seq_len, slope).T,
    ),
    Mistake(
        N_("no causal mask: −slope · |m − n| everywhere; keys after the query must get −inf"),
        lambda seq_len, slope: (
            -slope * np.abs(np.subtract.outer(np.arange(seq_len), np.arange(seq_len)))
        ),
    ),
    Mistake(
        N_("future keys set to 0 instead of −inf: adding 0 leaves them visible"),
        lambda seq_len, slope: np.nan_to_num(_alibi_reference(seq_len, slope), neginf=0.0),
    ),
)


register(
    Exercise(
        id="positions-1",
        title=N_("the sinusoidal position table"),
        reference=_sinusoidal_reference,
        cases=lambda: [(4, 4), (6, 8), (10, 16), (3, 2)],
        difficulty=1,
        minutes=10,
        mistakes=SINUSOIDAL_MISTAKES,
        hint=N_(
            "pos = np.arange(seq_len)[:, None]; freq = 10000 ** (-np.arange(0, d_model, 2) / "
            "d_model); put np.sin(pos * freq) in the even columns (table[:, 0::2]) and np.cos(pos "
            "* freq) in the odd ones (table[:, 1::2])."
        ),
        nudge=N_(
            "columns 2i and 2i + 1 hold the sine and the cosine of pos · ω_i, with ω_i = "
            "10000^(−2i / d_model)."
        ),
    )
)

register(
    Exercise(
        id="positions-2",
        title=N_("rotate one vector to its position"),
        reference=_rotate_reference,
        cases=_rotate_cases,
        difficulty=2,
        minutes=10,
        mistakes=ROTATE_MISTAKES,
        hint=N_(
            "split x into pairs a = x[0::2], b = x[1::2]; angle = position * 10000 ** "
            "(-np.arange(0, d, 2) / d); the rotated pair is (a cos − b sin, a sin + b cos); write "
            "the results back to the even and odd features."
        ),
        nudge=N_(
            "RoPE rotates each pair of features (x[2i], x[2i + 1]) by the angle position · θ_i, "
            "with θ_i = 10000^(−2i / d)."
        ),
    )
)

register(
    Exercise(
        id="positions-3",
        title=N_("ALiBi's causal bias"),
        reference=_alibi_reference,
        cases=lambda: [(3, 0.5), (5, 0.25), (6, 1.0 / 16)],
        difficulty=1,
        minutes=5,
        mistakes=ALIBI_MISTAKES,
        hint=N_(
            "distance = m − n with m the row (query) and n the column (key), "
            "np.subtract.outer(np.arange(n), np.arange(n)); the bias is −slope · distance where "
            "distance ≥ 0 and −inf where the key comes after the query."
        ),
        nudge=N_(
            "ALiBi adds −slope × (how far the key lies behind the query) to each score, and hides "
            "every key after the query."
        ),
    )
)
