"""One English term, one Chinese term: the glossary is the Chinese edition's terminology source.

:func:`glossary` reads the table of ``chapters/appendix_glossary.md`` (English | 中文 | chapter);
:func:`term_misses` lists the translated units of a chapter's catalogue whose English uses a
glossary term while the Chinese lacks that term's Chinese, and :func:`package_term_misses` does the
same for a catalogue of the package's own text (figure titles, explorer labels, checker messages).
Code spans, math, roles and written-out calls count in neither language: `` `logits` `` in the
Chinese is code, not the term. ``tests/test_i18n.py`` asserts there are none beyond an explicit
list of exceptions (a word used in another sense: "the key idea", "head of the list" …).
"""

from __future__ import annotations

import re
from pathlib import Path

import polib

from . import catalog
from .units import _PROTECTED

__all__ = ["glossary", "term_misses", "package_term_misses"]


def _first_form(chinese: str) -> str:
    return re.split(r"，|（| \(", chinese, maxsplit=1)[0].strip()


def glossary(root: Path) -> dict[str, str]:
    """English term → its Chinese term (the first form of the 中文 column), in table order.

    ``word vector, embedding`` | ``词向量，嵌入`` gives two terms, pairwise; a parenthesis
    (``RNN``, ``before the softmax``) is dropped from the English; rows whose English joins two
    terms with `` / `` are skipped.
    """
    text = (root / "chapters" / "appendix_glossary.md").read_text(encoding="utf-8")
    terms: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or cells[0] in {"English", ""}:
            continue
        if set(cells[0]) <= set("-: "):
            continue
        english = re.sub(r"\s*\([^)]*\)", "", cells[0])
        if " / " in english:
            continue
        names, forms = english.split(", "), [_first_form(c) for c in cells[1].split("，")]
        for i, term in enumerate(names):  # "word vector, embedding | 词向量，嵌入": pairwise
            terms[term.strip()] = forms[i] if len(forms) == len(names) else forms[0]
    return terms


#: Matches a call written out without backticks (the package's messages write ``x.max(axis=-1)``).
_CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\((?:[^()]|\([^()]*\))*\)")


def _plain(text: str) -> str:
    """``text`` without code spans, math, roles, link targets and written-out calls."""
    return _CALL.sub(" ", _PROTECTED.sub(" ", text))


def _uses(term: str, english: str) -> bool:
    plain = _plain(english)
    return re.search(rf"(?<![\w-]){re.escape(term)}s?(?![\w-])", plain, re.IGNORECASE) is not None


def term_misses(root: Path, doc: str) -> list[tuple[str, str, str]]:
    """(English term, its Chinese, English unit) for each translated unit of ``doc`` that uses
    the term in English but not its Chinese. Longer terms win: a unit that says "multi-head
    attention" is checked for 多头注意力, not also for "head" and "attention"."""
    return _misses(glossary(root), catalog.catalog_path(root, doc))


def package_term_misses(root: Path, path: Path) -> list[tuple[str, str, str]]:
    """:func:`term_misses` for the package catalogue at ``path`` (``…/package/viz.lookup.po``):
    the figures, explorers and checkers use the glossary's terms as the prose does."""
    return _misses(glossary(root), path)


def _misses(terms: dict[str, str], path: Path) -> list[tuple[str, str, str]]:
    ordered = sorted(terms, key=len, reverse=True)
    misses = []
    for entry in polib.pofile(str(path)):
        if not entry.translated():
            continue
        english = entry.msgid
        # a line break (<br>, now a space) inside a Chinese term is layout, not a word break
        chinese = re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "", _plain(entry.msgstr))
        for term in ordered:
            if not _uses(term, english):
                continue
            if terms[term] not in chinese and term.lower() not in chinese.lower():
                misses.append((term, terms[term], entry.msgid))
            english = re.sub(rf"(?i)(?<![\w-]){re.escape(term)}s?(?![\w-])", " ", english)
    return misses
