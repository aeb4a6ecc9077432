"""Figures of chapter 7 (encoder–decoder and cross-attention)."""

from __future__ import annotations

__all__: list[str] = []
