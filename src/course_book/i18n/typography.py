"""The Chinese edition's typography: what :func:`problems` flags and :func:`fix` repairs.

Four rules, for every translation in the Chinese catalogues (the chapters' and the package's):

* ``code-space``: a code span is set off from a Chinese character by a space, as in d2l-zh
  ("用 `fit` 训练", not "用`fit`训练"); next to full-width punctuation it needs none;
* ``bold-punct``: a bold label keeps its full-width punctuation outside the closing ``**``
  ("**试一试**。", not "**试一试。**"; Markdown renders both, the book uses one);
* ``ascii-quote``: Chinese text quotes with “…” (and ‘…’), not with ASCII quotes, in the
  package's own strings as in the prose; quotes inside code, roles, math and tags are code;
* ``space-after``: no space after full-width punctuation (``。``, ``，``, ``：`` …): the
  punctuation already carries its own space.

:func:`fix` never changes a protected span (:func:`course_book.i18n.units.protected_spans`), and
:func:`fix_catalogue` keeps a repaired entry only when it renders as the old one did (no new stray
``*``). ``python scripts/typography.py [--fix] [file.po …]`` runs both on catalogues;
``tests/test_i18n_typography.py`` fails on any problem (``make test``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import polib

from .units import _PROTECTED, check_translation

__all__ = ["RULES", "problems", "fix", "fix_catalogue", "catalogue_problems", "catalogues"]

RULES = ("code-space", "bold-punct", "ascii-quote", "space-after")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_FULL_PUNCT = "。，、；：！？"
_CODE = re.compile(r"``[^`]+``|`[^`]+`")
_BOLD = re.compile(r"\*\*([^*\n]+?)\*\*( ?)")
_SPACE_AFTER = re.compile(rf"([{_FULL_PUNCT}]) +(?=\S)")
_QUOTES = (re.compile(r'"([^"\n]*)"'), re.compile(r"(?<![A-Za-z])'([^'\n]*)'(?![A-Za-z])"))
_CURLY = ("“”", "‘’")
_CJK = re.compile(rf"[{_HAN}{_FULL_PUNCT}（）“”]")


def _masked(text: str) -> str:
    """``text`` with every protected span (code, roles, math, link targets, URLs, tags) turned
    into ``\\0`` of the same length: what the rules read, positions kept."""
    return _PROTECTED.sub(lambda m: "\0" * len(m.group(0)), text)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the code spans that are not part of a role (``{glue:text}`x```)."""
    return [(m.start(), m.end()) for m in _PROTECTED.finditer(text) if _CODE.fullmatch(m.group(0))]


def _code_gaps(text: str) -> list[int]:
    """Positions where a space is missing between a code span and a Chinese character."""
    gaps = []
    for a, b in _code_spans(text):
        if a and re.match(f"[{_HAN}]", text[a - 1]):
            gaps.append(a)
        if b < len(text) and re.match(f"[{_HAN}]", text[b]):
            gaps.append(b)
    return gaps


def _quote_spans(text: str) -> list[tuple[int, int, int]]:
    """(start, end, kind) of ASCII-quoted text in Chinese: quotes outside protected spans whose
    text, or whose neighbour outside, is Chinese (``kind`` 0: double, 1: single)."""
    masked = _masked(text)
    found = []
    for kind, pattern in enumerate(_QUOTES):
        for m in pattern.finditer(masked):
            inner = m.group(1)
            # the nearest characters outside the quotes, past spaces, on the same line
            before = masked[:m.start()].rstrip(" ")[-1:]
            after = masked[m.end():].lstrip(" ")[:1]
            if "\0" in inner and not inner.strip("\0"):
                continue  # a quoted code span: code
            if _CJK.search(inner) or _CJK.match(before or "x") or _CJK.match(after or "x"):
                found.append((m.start(), m.end(), kind))
    return found


def _bold_punct(masked: str) -> list[re.Match[str]]:
    """The bold spans (paired from the left) whose text ends in full-width punctuation."""
    return [m for m in _BOLD.finditer(masked) if len(m[1]) > 1 and m[1][-1] in _FULL_PUNCT]


def problems(text: str) -> Counter[str]:
    """How many times ``text`` (one translation) breaks each rule of :data:`RULES`."""
    masked = _masked(text)
    return Counter({
        "code-space": len(_code_gaps(text)),
        "bold-punct": len(_bold_punct(masked)),
        "ascii-quote": len(_quote_spans(text)),
        "space-after": len(_SPACE_AFTER.findall(masked)),
    }) + Counter()  # (drops the zeros)


def fix(text: str) -> str:
    """``text`` with every problem of :func:`problems` repaired (protected spans unchanged)."""
    for m in reversed(_bold_punct(_masked(text))):
        inner = text[m.start(1):m.end(1)]
        text = text[:m.start()] + f"**{inner[:-1]}**{inner[-1]}" + text[m.end():]
    for m in reversed(list(_SPACE_AFTER.finditer(_masked(text)))):
        text = text[:m.start()] + m[1] + text[m.end():]
    for a, b, kind in sorted(_quote_spans(text), reverse=True):
        left, right = _CURLY[kind]
        text = text[:a] + left + text[a + 1: b - 1] + right + text[b:]
    for pos in sorted(_code_gaps(text), reverse=True):
        text = text[:pos] + " " + text[pos:]
    return text


def catalogues(root: Path) -> list[Path]:
    """Every Chinese catalogue: the chapters' prose and code comments (``locales/zh_CN``), the
    package's, and the one of the texts the package shows unmarked (``outputs.po``)."""
    from .package import catalog_folder, output_catalog_path

    folder = root / "locales" / "zh_CN" / "LC_MESSAGES"
    return [*sorted(folder.glob("*.po")), *sorted(folder.glob("comments/*.po")),
            *sorted(catalog_folder().glob("*.po")), output_catalog_path()]


def catalogue_problems(path: Path) -> list[tuple[str, str, Counter[str]]]:
    """(English, translation, problems) of every entry of ``path`` that breaks a rule."""
    return [(e.msgid, e.msgstr, p) for e in polib.pofile(str(path))
            if e.msgstr and not e.obsolete and (p := problems(e.msgstr))]


def fix_catalogue(path: Path) -> tuple[Counter[str], list[str]]:
    """Repair ``path`` in place: (problems fixed by rule, English of entries left as they were
    because the repair would break their Markdown or a protected span)."""
    po = polib.pofile(str(path), wrapwidth=0)
    fixed: Counter[str] = Counter()
    kept = []
    for e in po:
        if not e.msgstr or e.obsolete:
            continue
        before = problems(e.msgstr)
        if not before:
            continue
        new = fix(e.msgstr)
        if len(check_translation(e.msgid, new)) > len(check_translation(e.msgid, e.msgstr)):
            kept.append(e.msgid)
            continue
        fixed += before - problems(new)
        e.msgstr = new
    po.save(str(path))
    return fixed, kept
