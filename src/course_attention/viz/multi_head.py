"""Figures of chapter 5 (multi-head attention)."""

from __future__ import annotations

__all__: list[str] = []
