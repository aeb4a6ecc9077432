"""The package's own text in Chinese: the catalogues :func:`course_attention.i18n.gettext` reads.

Every string literal the package passes to ``_()`` / ``gettext()`` where it is shown, or marks
with ``N_()`` where it is defined, is a unit of the catalogue of its module:
``src/course_attention/locales/zh_CN/LC_MESSAGES/package/<module>.po`` (``viz/lookup.py`` →
``viz.lookup.po``; shipped with the package, so Colab has it). So are the figure titles the
chapters' code passes (``title=``, ``x_title=``, ``y_title=``), and the texts it glues into the
prose with ``_()``, are in ``chapters.po``: the figure functions translate titles where they draw
them. :func:`update_package_catalog` finds the strings by
reading the source (``ast``) and merges them as the prose catalogues are merged (fuzzy on change);
:func:`package_problems` lists untranslated, fuzzy or stale entries, translations that drop or add
a ``{field}``, and one English text translated two ways in two modules.

A translated text keeps every ``{field}`` of the English, in any order; in a text that is
``.format()``-ted, ``{{`` and ``}}`` are braces. Fields have names (``{n}``, not ``{}``), so a
shown text can be translated back from its template (:mod:`course_attention.i18n.outputs`).
"""

from __future__ import annotations

import ast
import json
import re
import string
from collections import defaultdict
from pathlib import Path

import polib

import course_attention

from .catalog import LOCALE, Stats, merge_catalog

__all__ = ["PACKAGE", "CHAPTER_KEYWORDS", "catalog_folder", "package_catalog_path",
           "package_strings", "chapter_strings", "update_package_catalog", "package_problems",
           "output_catalog_path", "output_problems"]

#: The course package whose marked strings this module collects (not this package).
PACKAGE = Path(course_attention.__file__).resolve().parent
ROOT = PACKAGE.parents[1]
_MARKERS = {"_", "N_", "gettext"}
#: Keyword arguments of the chapters' code whose string literals are figure text to translate.
CHAPTER_KEYWORDS = {"title", "x_title", "y_title"}


def catalog_folder(locale: str = LOCALE) -> Path:
    """``src/course_attention/locales/<locale>/LC_MESSAGES/package``: one ``.po`` per module."""
    return PACKAGE / "locales" / locale / "LC_MESSAGES" / "package"


def package_catalog_path(module: str, locale: str = LOCALE) -> Path:
    """The catalogue of ``module`` (``"viz/lookup.py"`` → ``…/package/viz.lookup.po``)."""
    return catalog_folder(locale) / (module.removesuffix(".py").replace("/", ".") + ".po")


def _literals(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in _MARKERS and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return found


def package_strings(package: Path = PACKAGE) -> list[tuple[str, str]]:
    """(text, ``module.py:line``) of every literal passed to ``_``, ``N_`` or ``gettext``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [(text, f"{where}:{line}") for text, line in _literals(tree)]
    return sorted(found, key=lambda item: (item[1].rsplit(":", 1)[0],
                                           int(item[1].rsplit(":", 1)[1])))


def chapter_strings(root: Path = ROOT) -> list[tuple[str, str]]:
    """(text, ``chapters/<name>:<cell>``) of the figure titles the chapters' code passes, of the
    names of runs it passes to ``viz`` (strings with a space: ``"GPT, validation"``; the keys of
    a dict of runs in a cell that draws), and of the
    texts it glues into the prose through ``_()`` (``from course_attention.i18n import _``)."""
    found = []
    for path in sorted((root / "chapters").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for k, cell in enumerate(cells):
            if cell["cell_type"] != "code":
                continue
            try:
                tree = ast.parse("".join(cell["source"]))
            except SyntaxError:  # a cell of IPython magics
                continue
            texts = [text for text, _line in _literals(tree)]
            for node in ast.walk(tree):
                if (isinstance(node, ast.keyword) and node.arg in CHAPTER_KEYWORDS
                        and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, str) and node.value.value.strip()):
                    texts.append(node.value.value)
                elif _is_figure_call(node):  # names of runs and baselines: legend text
                    args = [*node.args, *(k.value for k in node.keywords
                                          if k.arg not in _DATA_KEYWORDS | CHAPTER_KEYWORDS)]
                    texts += [c.value for a in args for c in ast.walk(a)
                              if isinstance(c, ast.Constant) and isinstance(c.value, str)
                              and " " in c.value.strip()]
            if any(_is_figure_call(node) for node in ast.walk(tree)):  # the runs' names: legend
                texts += [key.value for node in ast.walk(tree) if isinstance(node, ast.Dict)
                          for key in node.keys if isinstance(key, ast.Constant)
                          and isinstance(key.value, str) and re.search("[A-Za-z]{2}", key.value)]
            found += [(text, f"chapters/{path.stem}:{k}") for text in texts]
    return found


#: Keyword arguments of the figure functions that hold data, not words.
_DATA_KEYWORDS = {"query", "reference", "kind", "key", "keys", "tokens", "text", "digits"}


def _is_figure_call(node: ast.AST) -> bool:
    """A call ``viz.<function>(…)`` in a chapter's code."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "viz")


def _by_catalogue(root: Path = ROOT) -> dict[str, list[tuple[str, str]]]:
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for text, place in package_strings():
        groups[place.rsplit(":", 1)[0]].append((text, place))
    if (root / "chapters").is_dir():
        groups["chapters.py"] = chapter_strings(root)
    return groups


def update_package_catalog(locale: str = LOCALE, modules: list[str] | None = None) -> Stats:
    """Bring the package catalogues in step with the source (new, fuzzy, dropped entries).

    ``modules`` (e.g. ``["viz/lookup.py"]``) limits the update to their catalogues; without it,
    every module's, and a catalogue whose module no longer marks any text is removed.
    """
    groups = _by_catalogue()
    # a text that moved from one module to another keeps its translation
    known = {e.msgid: e.msgstr for path in sorted(catalog_folder(locale).glob("*.po"))
             for e in polib.pofile(str(path)) if e.msgstr and "fuzzy" not in e.flags}
    total = [0, 0, 0, 0, 0]
    for module in modules if modules is not None else sorted(groups):
        if module not in groups:
            raise ValueError(f"{module!r} marks no text; modules that do: {sorted(groups)}")
        path = package_catalog_path(module, locale)
        s = merge_catalog(path, groups[module], f"course_attention/{module}")
        po = polib.pofile(str(path), wrapwidth=0)
        moved = [e for e in po if not e.msgstr and e.msgid in known]
        for e in moved:
            e.msgstr = known[e.msgid]
        if moved:
            po.save(str(path))
        counts = (s.units, s.new - len(moved), s.fuzzy, s.dropped, s.translated + len(moved))
        total = [a + b for a, b in zip(total, counts, strict=True)]
    if modules is None:
        wanted = {package_catalog_path(m, locale) for m in groups}
        for path in catalog_folder(locale).glob("*.po"):
            if path not in wanted:
                path.unlink()
    return Stats(*total)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def output_catalog_path(locale: str = LOCALE) -> Path:
    """``src/course_attention/locales/<locale>/LC_MESSAGES/outputs.po``: what the package and the
    chapters' code show without marking it (a table's words, an input check's message), for the
    Chinese book's outputs (:func:`course_attention.i18n.outputs.translator`)."""
    return PACKAGE / "locales" / locale / "LC_MESSAGES" / "outputs.po"


def _pieces(text: str) -> tuple[str, ...]:
    """The literal text of a template around its fields: ``"got {n}."`` → ``("got ", ".")``."""
    pieces = [""]
    for literal, name, _spec, _conv in string.Formatter().parse(text):
        pieces[-1] += literal
        if name is not None:
            pieces.append("")
    return tuple(pieces)


def _code_pieces(tree: ast.AST) -> set[tuple[str, ...]]:
    """The :func:`_pieces` of every string a piece of code writes: a constant, or an f-string
    (its formatted values are the fields; adjacent literals are one string, as Python reads)."""
    found: set[tuple[str, ...]] = set()
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = [""]
            for part in node.values:
                inner.add(id(part))
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    pieces[-1] += part.value
                else:
                    pieces.append("")
            found.add(tuple(pieces))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in inner:
            found.add((node.value,))
    return found


def _shown_pieces(root: Path = ROOT) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        found |= _code_pieces(ast.parse(path.read_text(encoding="utf-8")))
    for path in sorted((root / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                try:
                    found |= _code_pieces(ast.parse("".join(cell["source"])))
                except SyntaxError:  # a cell of IPython magics
                    continue
    return found


def output_problems(locale: str = LOCALE) -> list[str]:
    """Entries of :func:`output_catalog_path` that are untranslated or fuzzy, whose fields differ
    in the Chinese, that a package catalogue holds already (mark it there, not here), or that no
    code writes any more: each entry's text around its fields is a string (or an f-string's
    text around its values) of the package or of a chapter's code."""
    path = output_catalog_path(locale)
    if not path.exists():
        return []
    shown = _shown_pieces()
    marked = {e.msgid for p in catalog_folder(locale).glob("*.po") for e in polib.pofile(str(p))}
    problems = []
    for e in polib.pofile(str(path)):
        head = f"outputs.po: {e.msgid[:70]!r}"
        if "fuzzy" in e.flags or not e.msgstr:
            problems.append(f"{head}: untranslated or fuzzy")
        elif _fields(e.msgid) != _fields(e.msgstr):
            problems.append(f"{head}: fields {sorted(_fields(e.msgstr))} in the Chinese, "
                            f"{sorted(_fields(e.msgid))} in the English")
        if e.msgid in marked:
            problems.append(f"{head}: in a package catalogue too (marked in the source): drop it")
        if _pieces(e.msgid) not in shown:
            problems.append(f"{head}: no code of the package or the chapters writes it any more")
    return problems


def package_problems(locale: str = LOCALE) -> list[str]:
    """Untranslated, fuzzy, stale or broken entries of the package catalogues (empty when sound),
    and of the catalogue of the texts the package shows unmarked (:func:`output_problems`)."""
    problems: list[str] = output_problems(locale)
    seen: dict[str, tuple[str, str]] = {}
    for module, units in sorted(_by_catalogue().items()):
        path = package_catalog_path(module, locale)
        if not path.exists():
            problems.append(f"{module}: no catalogue (run `make catalogues`)")
            continue
        po = polib.pofile(str(path))
        wanted = {text for text, _ in units}
        have = {e.msgid for e in po}
        problems += [f"{module}: not in its catalogue (run `make catalogues`): {t!r}"
                     for t in sorted(wanted - have)]
        problems += [f"{module}: no longer in the source (run `make catalogues`): {t!r}"
                     for t in sorted(have - wanted)]
        for e in po:
            try:
                fields_en, fields_zh = _fields(e.msgid), _fields(e.msgstr)
            except ValueError:  # a lone brace: a text shown as it is, never .format()ted
                fields_en = fields_zh = set()
                if e.msgid.count("{") != e.msgstr.count("{"):
                    problems.append(f"{module}: {e.msgid!r}: the braces differ in the Chinese")
            if "fuzzy" in e.flags:
                problems.append(f"{module}: fuzzy (the English changed): {e.msgid!r}")
            elif not e.msgstr:
                problems.append(f"{module}: untranslated: {e.msgid!r}")
            elif "" in fields_en:
                problems.append(f"{module}: {e.msgid!r}: name every field ({{n}}, not {{}})")
            elif fields_en != fields_zh:
                problems.append(f"{module}: {e.msgid!r}: fields {sorted(fields_zh)} in the "
                                f"Chinese, {sorted(fields_en)} in the English")
            elif e.msgid in seen and seen[e.msgid][1] != e.msgstr:
                problems.append(f"{module}: {e.msgid!r} is translated differently in "
                                f"{seen[e.msgid][0]}: {seen[e.msgid][1]!r} vs {e.msgstr!r}")
            else:
                seen.setdefault(e.msgid, (module, e.msgstr))
    return problems
