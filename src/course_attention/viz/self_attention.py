"""Figures of chapter 3 (self-attention)."""

from __future__ import annotations

__all__: list[str] = []
