"""Gettext catalogues of the book's prose, and the Chinese notebooks written from them.

The Chinese edition has no second copy of any chapter. ``locales/zh_CN/LC_MESSAGES/<doc>.po``
holds one entry per distinct unit (:mod:`course_book.i18n.units`) of ``chapters/<doc>``;
:func:`update_catalog` adds new English units, marks an entry whose English changed *fuzzy*
(keeping the old translation and the old English as ``previous_msgid``), and drops units that
left the text. :func:`write_translation` rebuilds the document with every unit translated; code
cells are copied with their comments translated (:mod:`.comments`) and the setup call, which gains
``lang="zh"``; their code is untouched.

MyST-NB's own gettext path does not read notebooks (MyST-NB issue #587), hence this module.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polib
import yaml

from course_attention.i18n import outputs

from .comments import load_comment_translations, translate_code
from .units import check_translation, join, split

__all__ = [
    "LOCALE", "Stats", "documents", "doc_units", "catalog_path", "update_catalog", "merge_catalog",
    "load_translations", "translate_source", "write_translation", "catalog_problems",
    "setup_with_language", "entry_problems",
]

LOCALE = "zh_CN"
_SETUP = re.compile(r"\bca\.setup\(([^()]*)\)")


@dataclass(frozen=True)
class Stats:
    """What :func:`update_catalog` did to one catalogue (counts of entries)."""

    units: int
    new: int
    fuzzy: int
    dropped: int
    translated: int


def documents(root: Path) -> list[str]:
    """The book's documents in table-of-contents order, as paths without suffix (``chapters/…``)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        docs += [c["file"] for c in part.get("chapters", [])]
    return docs


def source_path(root: Path, doc: str) -> Path:
    """``chapters/<doc>.ipynb`` or ``.md``, whichever exists."""
    for suffix in (".ipynb", ".md"):
        path = root / f"{doc}{suffix}"
        if path.exists():
            return path
    raise ValueError(f"no notebook or Markdown file for document {doc!r} under {root}")


def catalog_path(root: Path, doc: str, locale: str = LOCALE) -> Path:
    """``locales/<locale>/LC_MESSAGES/<name>.po`` for document ``chapters/<name>``."""
    return root / "locales" / locale / "LC_MESSAGES" / f"{Path(doc).name}.po"


def _markdown_texts(path: Path) -> list[tuple[str, str]]:
    """(where, Markdown text) of a document: one per Markdown cell, or the whole ``.md`` file."""
    if path.suffix == ".md":
        return [("md", path.read_text(encoding="utf-8"))]
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [(c["id"], "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"]


def doc_units(path: Path) -> list[tuple[str, str]]:
    """(English unit, occurrence ``cell-id:k``) for every unit of a document, in order."""
    found = []
    for where, text in _markdown_texts(path):
        k = 0
        for piece in split(text):
            if piece.unit:
                found.append((piece.text, f"{where}:{k}"))
                k += 1
    return found


def _new_catalog(doc: str) -> polib.POFile:
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": "attention-step-by-step",
        "Language": LOCALE,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=utf-8",
        "Content-Transfer-Encoding": "8bit",
        "X-Source": doc,
    }
    return po


def update_catalog(root: Path, doc: str, locale: str = LOCALE) -> Stats:
    """Bring ``doc``'s catalogue in step with its English text; see the module docstring."""
    units = doc_units(source_path(root, doc))
    return merge_catalog(catalog_path(root, doc, locale), units, doc)


def merge_catalog(path: Path, units: list[tuple[str, str]], source: str) -> Stats:
    """Write ``path`` holding ``units`` ((English, ``where:k``) in order), keeping the old
    translations: an unchanged unit keeps its entry; a changed one borrows the translation of
    the old entry at the same place (or the most similar unused one), marked fuzzy."""
    old = polib.pofile(str(path), wrapwidth=0) if path.exists() else _new_catalog(source)
    by_id = {e.msgid: e for e in old if not e.obsolete}
    by_place: dict[str, polib.POEntry] = {}
    for e in by_id.values():
        for file, line in e.occurrences:
            by_place[f"{file}:{line}"] = e
    po = _new_catalog(source)
    entries: dict[str, polib.POEntry] = {}
    used: set[str] = set()
    new = fuzzy = 0
    pending: list[polib.POEntry] = []
    for text, place in units:
        where, k = place.rsplit(":", 1)
        if text in entries:
            entries[text].occurrences.append((where, k))
            continue
        entry = polib.POEntry(msgid=text, msgstr="", occurrences=[(where, k)])
        prior = by_id.get(text)
        if prior is not None:
            entry.msgstr = prior.msgstr
            entry.flags = list(prior.flags)
            entry.previous_msgid = prior.previous_msgid
            entry.tcomment = prior.tcomment
            used.add(text)
        else:
            pending.append(entry)
        entries[text] = entry
    for entry in pending:
        where, k = entry.occurrences[0]
        candidates = [e for e in by_id.values() if e.msgid not in used and e.msgid not in entries]
        match = by_place.get(f"{where}:{k}")
        if match is None or match not in candidates:
            close = difflib.get_close_matches(entry.msgid, [e.msgid for e in candidates], 1, 0.6)
            match = by_id[close[0]] if close else None
        if match is not None and match.msgstr:
            entry.msgstr = match.msgstr
            entry.flags = ["fuzzy"]
            entry.previous_msgid = match.msgid
            used.add(match.msgid)
            fuzzy += 1
        else:
            new += 1
    for entry in entries.values():
        po.append(entry)
    dropped = len([m for m in by_id if m not in entries])
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    translated = sum(1 for e in po if e.msgstr and "fuzzy" not in e.flags)
    return Stats(len(po), new, fuzzy, dropped, translated)


def load_translations(root: Path, doc: str, locale: str = LOCALE) -> dict[str, str]:
    """English unit → translation, for the entries that are translated and not fuzzy."""
    path = catalog_path(root, doc, locale)
    if not path.exists():
        return {}
    return {e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.translated()}


def catalog_problems(root: Path, doc: str, locale: str = LOCALE) -> list[str]:
    """Untranslated, fuzzy, stale or broken entries of ``doc``'s catalogue (empty when sound)."""
    path = catalog_path(root, doc, locale)
    if not path.exists():
        return [f"{path.relative_to(root)}: no catalogue (run `make catalogues`)"]
    wanted = {text for text, _ in doc_units(source_path(root, doc))}
    return entry_problems(polib.pofile(str(path)), wanted, check_translation)


def entry_problems(po: polib.POFile, wanted: set[str], check: Callable[[str, str], list[str]],
                   what: str = "") -> list[str]:
    """A catalogue's problems against the units ``wanted``: units missing or stale, entries
    fuzzy or untranslated, and what ``check(English, translation)`` finds; each named
    ``what`` (e.g. "comment ") and its English."""
    have = {e.msgid for e in po if not e.obsolete}
    problems = [f"{what}not in the catalogue (run `make catalogues`): {t[:70]!r}"
                for t in sorted(wanted - have)]
    problems += [f"{what}no longer in the English (run `make catalogues`): {t[:70]!r}"
                 for t in sorted(have - wanted)]
    for e in po:
        if e.obsolete:
            continue
        head = f"{what}{e.msgid[:70]!r}"
        if "fuzzy" in e.flags:
            problems.append(f"fuzzy (the English changed; check and clear the flag): {head}")
        elif not e.msgstr:
            problems.append(f"untranslated: {head}")
        else:
            problems += [f"{head}: {p}" for p in check(e.msgid, e.msgstr)]
    return problems


def setup_with_language(source: str, lang: str) -> tuple[str, int]:
    """``source`` with ``lang=…`` added to each ``ca.setup(...)`` call; and how many it changed."""

    def add(m: re.Match[str]) -> str:
        args = m.group(1).strip()
        return f"ca.setup({args + ', ' if args else ''}lang={lang!r})".replace("'", '"')

    return _SETUP.subn(add, source)


def translate_source(text: str, translations: dict[str, str]) -> str:
    """A Markdown text with each unit that has a translation replaced by it."""
    return join(split(text), lambda unit: translations.get(unit, unit))


def write_translation(root: Path, doc: str, out_root: Path, lang: str = "zh",
                      executed: Path | None = None) -> Path:
    """Write ``doc`` translated to ``out_root/<doc>.ipynb|.md``; return the path written.

    With ``executed`` (the English build's ``_build/jupyter_execute``), each code cell takes the
    outputs of the same cell (by id) there, so the Chinese book reuses the English execution;
    their words are translated with the package catalogues (:mod:`course_attention.i18n.outputs`).
    """
    src = source_path(root, doc)
    translations = load_translations(root, doc)
    code_comments = load_comment_translations(root, doc)
    out = out_root / src.relative_to(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    if src.suffix == ".md":
        out.write_text(translate_source(src.read_text(encoding="utf-8"), translations),
                       encoding="utf-8")
        return out
    nb = json.loads(src.read_text(encoding="utf-8"))
    ran: dict[str, dict] = {}
    glued: list[dict] = []
    if executed is not None:
        done = json.loads((executed / f"{doc}.ipynb").read_text(encoding="utf-8"))
        ran = {c["id"]: c for c in done["cells"] if c["cell_type"] == "code"}
        # myst-nb moves the glued values out of the cells into <doc>.glue.json: put them back
        # (into the first code cell; a glued value is looked up by name, not by cell)
        glue = executed / f"{doc}.glue.json"
        if glue.exists():
            for value in json.loads(glue.read_text(encoding="utf-8")).values():
                prefix = value["metadata"]["scrapbook"]["mime_prefix"]  # myst-nb stripped it
                glued.append({**value, "data": {prefix + k: v for k, v in value["data"].items()}})
    tr = outputs.translator(lang)
    glued = [outputs.translate_output(g, tr) for g in glued]
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and cell["id"] in ran:
            cell["outputs"] = [outputs.translate_output(o, tr)
                               for o in ran[cell["id"]].get("outputs", [])]
            cell["execution_count"] = ran[cell["id"]].get("execution_count")
        if cell["cell_type"] == "code" and glued:
            cell["outputs"] = [*cell.get("outputs", []), *glued]
            glued = []
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            text = translate_source(text, translations)
        elif cell["cell_type"] == "code":
            text, _ = setup_with_language(translate_code(text, code_comments), lang)
        cell["source"] = text.splitlines(keepends=True)
    out.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out
