"""The course in two languages: English (the source) and Chinese (中文), from one set of notebooks.

``ca.setup(seed=0, lang="zh")`` (the setup cell of a Chinese notebook) calls :func:`set_language`;
package text that a learner sees goes through :func:`gettext` (``_``), which looks it up in the
package catalogues ``course_attention/locales/zh_CN/LC_MESSAGES/package/<module>.po``
(kept in step with the source by the book's machinery, ``course_book.i18n.package``). The
book's prose has its own catalogues, one per document (``course_book.i18n.catalog``); the Chinese
book reuses the English execution and translates its outputs with the package catalogues
(``course_attention.i18n.outputs``). Introduced on the welcome page (中文版).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

__all__ = ["LANGUAGES", "set_language", "language", "gettext", "_", "N_", "using"]

LANGUAGES = {"en": "English", "zh": "中文"}
_LOCALES = {"zh": "zh_CN"}
_state = {"lang": "en"}


def set_language(lang: str) -> None:
    """Make ``lang`` (``"en"`` or ``"zh"``) the language of the package's figures and messages."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {sorted(LANGUAGES)}, got {lang!r}")
    _state["lang"] = lang


def language() -> str:
    """The language set by :func:`set_language` (``"en"`` until a setup cell says otherwise)."""
    return _state["lang"]


@cache
def _catalogue(lang: str) -> dict[str, str]:
    folder = Path(__file__).parent.parent / "locales" / _LOCALES[lang] / "LC_MESSAGES" / "package"
    import polib

    return {e.msgid: e.msgstr for path in sorted(folder.glob("*.po"))
            for e in polib.pofile(str(path)) if e.translated() and "fuzzy" not in e.flags}


@cache
def _output_catalogue(lang: str) -> dict[str, str]:
    """The English texts the package shows without marking them (tables' words, error messages
    of its checks), translated for the Chinese book's outputs only
    (``locales/<locale>/LC_MESSAGES/outputs.po``; :mod:`course_attention.i18n.outputs`)."""
    path = Path(__file__).parent.parent / "locales" / _LOCALES[lang] / "LC_MESSAGES" / "outputs.po"
    if not path.exists():
        return {}
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(str(path))
            if e.translated() and "fuzzy" not in e.flags}


def gettext(text: str) -> str:
    """``text`` in the current language (itself in English, or when it has no translation yet)."""
    lang = _state["lang"]
    if lang == "en":
        return text
    return _catalogue(lang).get(text, text)


_ = gettext


def N_(text: str) -> str:  # noqa: N802 - gettext's name for "mark for the catalogue only"
    """Mark ``text`` for the package catalogue where it is defined; translate it where it is
    shown, with :func:`gettext` (a table of titles, for example)."""
    return text


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Set the language for the ``with`` block, then put the previous one back."""
    before = language()
    set_language(lang)
    try:
        yield
    finally:
        set_language(before)
