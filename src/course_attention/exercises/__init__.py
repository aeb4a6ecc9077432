"""Checkers for the chapter exercises: ``check(exercise_id, fn)`` prints ✓ or what failed.

Introduced in chapter 1. Help comes in stages: the first failure shows what failed, the second
adds a hint, the third the recipe; ``hint(exercise_id)`` asks for the next stage sooner and
``reset()`` starts over. The checker lives in ``exercises/core.py``; each chapter's exercises —
reference, test cases, hint, difficulty, time, catalogue of known mistakes and readings of the
errors its wrong answers raise — live in one module per chapter, which registers them in
``EXERCISES`` when imported here.
"""

from __future__ import annotations

from . import (  # noqa: F401 - importing a chapter module registers its exercises
    ch00_toolbox,
    ch01_soft_lookup,
    ch02_scaled_dot_product,
    ch03_self_attention,
    ch04_masking,
    ch05_multi_head,
    ch06_transformer_block,
    ch07_encoder_decoder,
    ch08_decoder_only,
    ch09_induction_heads,
    ch10_positions,
    ch11_efficient_attention,
    ch12_modern_attention,
    ch13_latent_and_sparse,
    ch14_sinks_and_streaming,
    ch15_linear_attention,
)
from .core import EXERCISES, ErrorHint, Exercise, Mistake, check, evaluate, hint, reset

__all__ = [
    "Exercise", "Mistake", "ErrorHint", "check", "evaluate", "hint", "reset", "EXERCISES"
]
