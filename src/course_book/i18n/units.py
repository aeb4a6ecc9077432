"""Translatable units of a MyST Markdown text, and the text rebuilt from their translations.

Used by the Chinese edition (:mod:`course_book.i18n`): each paragraph, heading, list item,
table cell, exercise badge and admonition title is one unit; everything else — directive fences and
options, ``(label)=`` lines, display math, code blocks, raw blocks, blank lines — is kept as it is.
``join(split(text), lambda s: s) == text`` for every text (tested), so a translation changes only
the units.

Inside a unit, the *protected* spans — roles such as ``{glue:text}`name:.2f``` and
``{cite:p}`key```, inline math ``$…$``, code spans, link targets — must come through a translation
unchanged (:func:`protected_spans`, checked by :func:`check_translation`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Piece", "split", "join", "units", "protected_spans", "check_translation"]

# Directives whose body is Markdown to translate, and those whose argument is text to translate.
_MARKDOWN_BODY = {
    "admonition", "note", "tip", "warning", "important", "caution", "hint", "seealso",
    "attention", "danger", "error", "margin", "epigraph", "exercise", "solution",
    "solution-start", "dropdown", "figure",
}
_TEXT_ARGUMENT = {"admonition", "dropdown", "exercise"}

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})(\{([\w:-]+)\})?(.*)$")
_HEADING = re.compile(r"^(\s*#{1,6}\s+)(.*?)(\s*)$")
_ITEM = re.compile(r"^(\s*(?:[-*+]|\d+[.)]|:)\s+)(.*?)(\s*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_VERBATIM_LINE = re.compile(
    r"^\s*(\([\w:-]+\)=|%|\+\+\+|<!--.*-->\s*$|</?(details|summary|div|span)\b[^>]*>\s*$)"
)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")

_ROLE = r"\{[\w:-]+\}`[^`]*`"
_CODE = r"``[^`]+``|`[^`]+`"
_MATH = r"\$\$[^$]+\$\$|(?<![\\$\w])\$[^$\s][^$]*?(?<![\\\s])\$(?!\w)"
_LINK_TARGET = r"\]\([^)\s]+\)"
_URL = r"https?://[^\s)>\]]+"
_HTML = r"<[^>\s][^>]*>"
_PROTECTED = re.compile("|".join([_ROLE, _CODE, _MATH, _LINK_TARGET, _URL, _HTML]))
_LETTERS = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True)
class Piece:
    """Verbatim text (``unit=False``) or one translatable unit (``unit=True``).

    A unit spanning several source lines holds them joined by ``"\\n"`` without their leading
    whitespace; ``indent`` is put back in front of every line but the first when rebuilding.
    """

    text: str
    unit: bool = False
    indent: str = ""


def _needs_translation(text: str) -> bool:
    """True when the text has words outside its protected spans (not only numbers or code)."""
    return bool(_LETTERS.search(_PROTECTED.sub(" ", text)))


def _unit(text: str, indent: str = "") -> Piece:
    return Piece(text, unit=_needs_translation(text), indent=indent)


def _table_row(line: str) -> list[Piece]:
    if _TABLE_RULE.match(line):
        return [Piece(line)]
    pieces: list[Piece] = []
    # Split on bars that are not inside code spans, roles or math.
    cells, start, i = [], 0, 0
    protected = [(m.start(), m.end()) for m in _PROTECTED.finditer(line)]
    for m in re.finditer(r"(?<!\\)\|", line):
        if any(a < m.start() < b for a, b in protected):
            continue
        cells.append((start, m.start()))
        start = m.end()
        i += 1
    cells.append((start, len(line)))
    for k, (a, b) in enumerate(cells):
        if k:
            pieces.append(Piece("|"))
        cell = line[a:b]
        stripped = cell.strip()
        if not stripped:
            pieces.append(Piece(cell))
            continue
        lead = cell[: len(cell) - len(cell.lstrip())]
        trail = cell[len(cell.rstrip()):]
        pieces += [Piece(lead), _unit(stripped), Piece(trail)]
    return pieces


def _starts_block(line: str) -> bool:
    return bool(
        not line.strip() or _FENCE.match(line) or _HEADING.match(line) or _ITEM.match(line)
        or _VERBATIM_LINE.match(line) or line.lstrip().startswith(("|", "$$"))
    )


def split(text: str) -> list[Piece]:
    """Cut a MyST Markdown text into verbatim pieces and translatable units (in order)."""
    lines = text.split("\n")
    out: list[Piece] = []
    fences: list[tuple[str, bool]] = []  # (closing marker, body is Markdown)
    i = 0

    def emit(piece: Piece) -> None:
        out.append(piece)

    while i < len(lines):
        line = lines[i]
        newline = "\n" if i < len(lines) - 1 else ""
        m = _FENCE.match(line)
        if m and fences and line.strip() == fences[-1][0]:
            fences.pop()
            emit(Piece(line + newline))
            i += 1
            continue
        if fences and not fences[-1][1]:
            emit(Piece(line + newline))
            i += 1
            continue
        if m and (m.group(3) or m.group(2)[0] != ":"):
            marker, name, rest = m.group(2), m.group(4), m.group(5)
            markdown = name in _MARKDOWN_BODY
            fences.append((marker, markdown))
            if name in _TEXT_ARGUMENT and rest.strip():
                head = line[: len(line) - len(rest)] + rest[: len(rest) - len(rest.lstrip())]
                emit(Piece(head))
                emit(_unit(rest.strip()))
                emit(Piece(rest[len(rest.rstrip()):] + newline))
            else:
                emit(Piece(line + newline))
            i += 1
            # Options right after the opening line stay as they are.
            while markdown and i < len(lines) and _OPTION.match(lines[i]):
                emit(Piece(lines[i] + ("\n" if i < len(lines) - 1 else "")))
                i += 1
            continue
        stripped = line.strip()
        if stripped.startswith("$$"):
            # Display math: up to the line that closes it.
            j = i
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                j = i + 1
                while j < len(lines) and not lines[j].rstrip().endswith("$$"):
                    j += 1
            block = "\n".join(lines[i: j + 1])
            emit(Piece(block + ("\n" if j < len(lines) - 1 else "")))
            i = j + 1
            continue
        if not stripped or _VERBATIM_LINE.match(line):
            emit(Piece(line + newline))
            i += 1
            continue
        if stripped.startswith("|"):
            out.extend(_table_row(line))
            emit(Piece(newline))
            i += 1
            continue
        h = _HEADING.match(line)
        if h:
            emit(Piece(h.group(1)))
            emit(_unit(h.group(2)))
            emit(Piece(h.group(3) + newline))
            i += 1
            continue
        item = _ITEM.match(line)
        prefix = item.group(1) if item else line[: len(line) - len(line.lstrip())]
        j = i + 1
        while j < len(lines) and not _starts_block(lines[j]):
            j += 1
        rest = lines[i + 1: j]
        indent = rest[0][: len(rest[0]) - len(rest[0].lstrip())] if rest else ""
        if not all(r.startswith(indent) and not r[len(indent):][:1].isspace() for r in rest):
            indent = ""
        body = "\n".join([line[len(prefix):], *(r[len(indent):] for r in rest)])
        text = body.rstrip()
        emit(Piece(prefix))
        emit(_unit(text, indent=indent))
        emit(Piece(body[len(text):] + ("\n" if j - 1 < len(lines) - 1 else "")))
        i = j
    return _merge(out)


def _merge(pieces: list[Piece]) -> list[Piece]:
    merged: list[Piece] = []
    for p in pieces:
        if not p.unit and not p.text:
            continue
        if merged and not p.unit and not merged[-1].unit:
            merged[-1] = Piece(merged[-1].text + p.text)
        else:
            merged.append(p)
    return merged


def join(pieces: list[Piece], translate: Callable[[str], str]) -> str:
    """Rebuild the text, each unit replaced by ``translate(unit_text)``."""
    parts = []
    for p in pieces:
        if not p.unit:
            parts.append(p.text)
            continue
        new = translate(p.text)
        # The English text's line breaks carry the original indentation back; a translation's own
        # line breaks get the same indentation (a list item's continuation stays in the item).
        parts.append(new.replace("\n", "\n" + p.indent))
    return "".join(parts)


def units(text: str) -> list[str]:
    """The translatable units of ``text``, in order (repeats kept)."""
    return [p.text for p in split(text) if p.unit]


def protected_spans(text: str) -> Counter[str]:
    """The spans a translation must keep: roles, code, math, link targets, URLs, HTML tags.

    A ``{ref}``/``{doc}``/``{numref}``/``{term}`` role with an explicit title keeps only its
    target: ``{ref}`the toolbox <ch-toolbox>``` may show translated text but must point to
    ``ch-toolbox``.
    """
    spans: Counter[str] = Counter()
    for m in _PROTECTED.finditer(text):
        s = m.group(0)
        titled = re.match(r"\{(ref|doc|numref|term)\}`[^`]*<([^`>]+)>`$", s)
        spans[f"{{{titled.group(1)}}}<{titled.group(2)}>" if titled else s] += 1
    return spans


def check_translation(english: str, translation: str) -> list[str]:
    """Problems of one unit's translation (empty when it keeps every protected span)."""
    problems = []
    want, got = protected_spans(english), protected_spans(translation)
    for span in sorted((want - got).keys()):
        problems.append(f"missing or changed: {span}")
    for span in sorted((got - want).keys()):
        problems.append(f"not in the English: {span}")
    if english.strip() and not translation.strip():
        problems.append("empty translation")
    if _stray_emphasis(translation) > _stray_emphasis(english):
        problems.append("a ** or * that Markdown does not render as emphasis (put the full-width "
                        "punctuation outside the closing **, or a space after it)")
    return problems


def _stray_emphasis(text: str) -> int:
    """How many ``*`` are left as text once CommonMark has rendered ``text`` (code, math and
    roles taken out first): a closing ``**`` after 。 and before a Chinese character is one."""
    from markdown_it import MarkdownIt

    plain = _PROTECTED.sub("x", text)
    html = MarkdownIt("commonmark").renderInline(plain)
    return html.count("*")
