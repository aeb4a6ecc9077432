"""Figures of chapter 4 (masking)."""

from __future__ import annotations

__all__: list[str] = []
