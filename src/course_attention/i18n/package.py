"""The package's own text in Chinese: the catalogue :func:`course_attention.i18n.gettext` reads.

Every string literal the package passes to ``_()`` / ``gettext()`` where it is shown, or marks
with ``N_()`` where it is defined, is a unit of
``src/course_attention/locales/zh_CN/LC_MESSAGES/course_attention.po`` (shipped with the package,
so Colab has it). :func:`update_package_catalog` finds them by reading the source (``ast``) and
merges them as the prose catalogues are merged (fuzzy on change); :func:`package_problems` lists
untranslated, fuzzy or stale entries and translations that drop or add a ``{field}``.
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import polib

from .catalog import LOCALE, Stats, merge_catalog

__all__ = ["PACKAGE", "package_catalog_path", "package_strings", "update_package_catalog",
           "package_problems"]

PACKAGE = Path(__file__).resolve().parents[1]
_MARKERS = {"_", "N_", "gettext"}


def package_catalog_path(locale: str = LOCALE) -> Path:
    """``src/course_attention/locales/<locale>/LC_MESSAGES/course_attention.po``."""
    return PACKAGE / "locales" / locale / "LC_MESSAGES" / "course_attention.po"


def package_strings(package: Path = PACKAGE) -> list[tuple[str, str]]:
    """(text, ``module.py:line``) of every literal passed to ``_``, ``N_`` or ``gettext``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in _MARKERS and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                where = path.relative_to(package).as_posix()
                found.append((node.args[0].value, f"{where}:{node.lineno}"))
    return sorted(found, key=lambda item: (item[1].rsplit(":", 1)[0],
                                           int(item[1].rsplit(":", 1)[1])))


def update_package_catalog(locale: str = LOCALE) -> Stats:
    """Bring the package catalogue in step with the source (new, fuzzy, dropped entries)."""
    return merge_catalog(package_catalog_path(locale), package_strings(), "course_attention")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def package_problems(locale: str = LOCALE) -> list[str]:
    """Untranslated, fuzzy, stale or broken entries of the package catalogue (empty when sound)."""
    path = package_catalog_path(locale)
    if not path.exists():
        return ["no package catalogue (run `make catalogues`)"]
    po = polib.pofile(str(path))
    wanted = {text for text, _ in package_strings()}
    have = {e.msgid for e in po}
    problems = [f"not in the catalogue (run `make catalogues`): {t!r}"
                for t in sorted(wanted - have)]
    problems += [f"no longer in the source (run `make catalogues`): {t!r}"
                 for t in sorted(have - wanted)]
    for e in po:
        if "fuzzy" in e.flags:
            problems.append(f"fuzzy (the English changed): {e.msgid!r}")
        elif not e.msgstr:
            problems.append(f"untranslated: {e.msgid!r}")
        elif _fields(e.msgid) != _fields(e.msgstr):
            problems.append(f"{e.msgid!r}: fields {sorted(_fields(e.msgstr))} in the Chinese, "
                            f"{sorted(_fields(e.msgid))} in the English")
    return problems
