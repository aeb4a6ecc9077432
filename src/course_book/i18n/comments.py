"""The comments of the chapters' code cells, translated through catalogues as the prose is.

A reader of the Chinese notebooks meets English in the code cells' comments unless they are
translated too (d2l-zh translates its comments and leaves the code alone). Each comment that has
words to translate is a unit of ``locales/zh_CN/LC_MESSAGES/comments/<doc>.po``, one catalogue per
chapter beside the prose's, kept in step by the same merge (:func:`catalog.merge_catalog`).

* :func:`comments` finds them with :mod:`tokenize`, so a ``#`` inside a string is no comment;
* :func:`translate_code` puts the translations in place and touches nothing else: the cell's
  tokens other than comments are the same (:func:`code_tokens`, tested on every cell);
* :func:`check_comment` asks a translation to keep every code token of its comment (names,
  shapes such as ``(batch, seq, d_model)``, numbers, operators), each as often as the English.

The comments of cells tagged ``remove-cell`` (the book's bookkeeping, shown to no reader) and
pragma comments (``# noqa``, ``# type:``) are not catalogued; :func:`translate_code` replaces
only comments that have a catalogue entry.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from collections import Counter
from pathlib import Path

import polib

__all__ = [
    "comments", "needs_translation", "code_tokens", "translate_code", "comment_units",
    "comments_catalog_path", "update_comments", "load_comment_translations", "check_comment",
    "comment_problems",
]

_PRAGMA = re.compile(r"^(noqa\b|type:|pragma\b|fmt:|isort:)")
# What a comment's translation must keep. First the parenthesised groups that are code: a shape
# or call ("(batch, seq)", "(3,)", "(u | Q)": a comma, digit or operator inside, or one short
# name), not a parenthesis in prose ("(next to the input)", "(it uses a KV cache, see below)":
# two plain words in a row); then code in backticks, a bracketed token ("[PAD]"), a dotted or
# underscored name, a name with digits, a number, an operator run.
_GROUP = re.compile(r"\((?:[^()]|\([^()]*\))*\)")
_PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")
_CODE = re.compile(
    r"`[^`]+`"
    r"|\[[^\]]*\]"
    r"|(?!e\.g\b|i\.e\b)[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+(?:\(\))?"
    r"|\b[A-Za-z]*_[\w]*|\b[A-Za-z]+\d[\w]*"
    r"|\d+(?:[.,]\d+)*(?:e-?\d+)?"
    r"|[=<>!+\-*/@%^~|&:]{2,}|[=<>@]"
)
#: Where a code span was taken out of a comment's text (no name touches it).
_HOLE = "\x00"


def _is_code_group(group: str) -> bool:
    inner = group[1:-1]
    return not _PROSE.search(inner) and bool(
        re.search(r"[,\d_=.*/^@|\[]", inner) or re.fullmatch(r"[A-Za-z]{1,2}", inner))


def _split_code(text: str) -> tuple[list[str], str]:
    """The code spans of a comment, and its text with each replaced by :data:`_HOLE`."""
    spans: list[str] = []

    def take(m: re.Match[str]) -> str:
        spans.append(m.group())
        return _HOLE

    text = _GROUP.sub(lambda m: take(m) if _is_code_group(m.group()) else m.group(), text)
    return spans, _CODE.sub(take, text)


_WORD = re.compile(r"[A-Za-z]{3,}")
# short English words that are also one- or two-letter variable names: not code in a comment
_SHORT_WORDS = {"a", "I", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it",
                "me", "my", "no", "of", "on", "or", "so", "to", "up", "us", "we"}


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    # IPython's magics (%pip, !ls) are no Python: blank them, keeping every position
    lines = [(" " * len(line.rstrip("\n")) + "\n" * line.endswith("\n"))
             if line.lstrip().startswith(("%", "!")) else line
             for line in source.splitlines(keepends=True)]
    return list(tokenize.generate_tokens(io.StringIO("".join(lines)).readline))


def code_names(source: str) -> set[str]:
    """The names a cell's code uses (what a comment may mention bare, e.g. ``q`` or ``mask``)."""
    return {t.string for t in _tokens(source) if t.type == tokenize.NAME}


def comments(source: str) -> list[tuple[int, int, str]]:
    """``(line index, column of the text, text)`` of every comment of ``source``, the text
    without its ``#`` and the spaces after it."""
    found = []
    for t in _tokens(source):
        if t.type == tokenize.COMMENT:
            body = t.string[1:]
            text = body.lstrip()
            found.append((t.start[0] - 1, t.start[1] + 1 + len(body) - len(text), text.rstrip()))
    return found


def _protected(text: str, names: set[str]) -> list[str]:
    spans, rest = _split_code(text)
    spans += [w for w in re.findall(rf"(?<![\w'’{_HOLE}])[A-Za-z_]\w*(?![\w{_HOLE}])", rest)
              if w in names and len(w) <= 2 and w not in _SHORT_WORDS]
    return spans


def needs_translation(text: str, names: set[str] = frozenset()) -> bool:
    """True when a comment has English words outside its code tokens and is no pragma."""
    if _PRAGMA.match(text):
        return False
    return any(w not in names for w in _WORD.findall(_split_code(text)[1]))


def code_tokens(source: str) -> list[tuple[int, str]]:
    """Every token of ``source`` but its comments, as ``(type, string)``."""
    return [(t.type, t.string) for t in _tokens(source) if t.type != tokenize.COMMENT]


def translate_code(source: str, translations: dict[str, str]) -> str:
    """``source`` with each comment that has a translation replaced by it; nothing else changes.
    Comments are replaced from the last, so that earlier columns stay right."""
    lines = source.splitlines(keepends=True)
    for row, col, text in reversed(comments(source)):
        new = translations.get(text)
        if new is not None and text:
            line = lines[row]
            lines[row] = line[:col] + new + line[col + len(text):]
    return "".join(lines)


def _cells(path: Path) -> list[tuple[str, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c["id"], "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "code"
            and "remove-cell" not in c.get("metadata", {}).get("tags", [])]


def comment_units(path: Path) -> list[tuple[str, str]]:
    """(English comment, occurrence ``cell-id:k``) for every comment to translate, in order."""
    if path.suffix != ".ipynb":
        return []
    found = []
    for cell_id, source in _cells(path):
        names = code_names(source)
        texts = [text for _, _, text in comments(source) if needs_translation(text, names)]
        found += [(text, f"{cell_id}:{k}") for k, text in enumerate(texts)]
    return found


def comments_catalog_path(root: Path, doc: str, locale: str = "zh_CN") -> Path:
    """``locales/<locale>/LC_MESSAGES/comments/<name>.po`` for document ``chapters/<name>``."""
    return root / "locales" / locale / "LC_MESSAGES" / "comments" / f"{Path(doc).name}.po"


def update_comments(root: Path, doc: str):
    """Bring ``doc``'s comment catalogue in step with its code cells (as
    :func:`catalog.update_catalog` does for the prose); ``None`` for a Markdown document."""
    from .catalog import merge_catalog, source_path

    units = comment_units(source_path(root, doc))
    if not units:
        return None
    return merge_catalog(comments_catalog_path(root, doc), units, doc)


def load_comment_translations(root: Path, doc: str) -> dict[str, str]:
    """English comment → translation, for the entries translated and not fuzzy."""
    path = comments_catalog_path(root, doc)
    if not path.exists():
        return {}
    return {e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.translated()}


def check_comment(english: str, translation: str, names: set[str] = frozenset()) -> list[str]:
    """Problems of one comment's translation: a code token lost or changed, or a line break."""
    problems = []
    want, got = Counter(_protected(english, names)), Counter(_protected(translation, names))
    for span in sorted((want - got).keys()):
        problems.append(f"missing or changed: {span}")
    if "\n" in translation:
        problems.append("a comment is one line")
    if english.strip() and not translation.strip():
        problems.append("empty translation")
    return problems


def comment_problems(root: Path, doc: str) -> list[str]:
    """Untranslated, fuzzy, stale or broken entries of ``doc``'s comment catalogue."""
    from .catalog import entry_problems, source_path

    src = source_path(root, doc)
    units = comment_units(src)
    path = comments_catalog_path(root, doc)
    if not units:
        return [f"{path.relative_to(root)}: no comments to translate any more"] * path.exists()
    if not path.exists():
        return [f"{path.relative_to(root)}: no catalogue (run `python -m course_book.i18n "
                "update`)"]
    names = set().union(*(code_names(s) for _, s in _cells(src)))
    return entry_problems(polib.pofile(str(path)), {t for t, _ in units},
                          lambda en, zh: check_comment(en, zh, names), "comment ")
