"""The course's live explorers, one module per kind beside its page code.

Introduced with the explorers of chapter 1. ``<kind>.py`` holds a kind's ipywidgets factory
(JupyterLab, Colab), the spec the website runs and the Python twin of what the page computes;
``<kind>.js`` is the page code, on top of ``core.js`` (math, controls, the redraw loop), which
the book's ``course_book.book`` serves under ``_static/explorers/``. :mod:`.core` holds what every
kind shares: :class:`~.core.Explorer`, its output bundle and the spec helpers. Chapters call the
factories through :mod:`course_attention.widgets` (``widgets.scaling_explorer()``).

Kinds: ``lookup`` (chapter 1), ``scaling`` (2), ``self_attention`` (3), ``mask`` (4), ``heads``
(5), ``decoding`` (7), ``gpt`` (8), ``induction`` (9), ``positions`` and ``rope`` (10),
``tiling`` (11), ``long_context`` (12), ``latent`` (13), ``sinks`` (14), ``linear`` (15).
"""

from __future__ import annotations

from pathlib import Path

from .core import (
    EXPLORER_MIME,
    EXPLORERS,
    STATIC_MIME,
    WIDGET_MIME,
    Explorer,
    controls_spec,
    jsonable,
    model_payload,
    tensors_from_payload,
)

__all__ = [
    "EXPLORER_MIME",
    "EXPLORERS",
    "STATIC_MIME",
    "WIDGET_MIME",
    "Explorer",
    "controls_spec",
    "jsonable",
    "model_payload",
    "tensors_from_payload",
    "SCRIPTS",
]

#: The folder of the page code (``core.js`` and one ``<kind>.js`` per kind).
SCRIPTS = Path(__file__).parent
