"""The labels of the package's controls, and the prose that names them (both languages).

Prose that names a control — "press **new query and keys**", "the *query* and *key* menus",
"untick *sample (off: greedy)*" — must use the label the reader sees on the control: the
English label in the English chapter, the catalogue's Chinese label in the Chinese one.

:func:`control_labels` reads the labels off the package's source (``ast``): the ``description``
of every widget of the explorers (``course_attention/explorers/*.py``), the text of the
sliders' and menus' own helpers, and every short marked phrase those modules and the figure
modules show (a preset's name, a bar's name such as "all others"). :func:`label_mentions`
finds the bold, italic or quoted spans of a unit that name a control: those next to a
control's noun or verb ("… slider", "press …"; "…滑块", "点击…"), and those that are a label
word for word. ``tests/test_i18n_labels.py`` checks every unit of every chapter and of its
Chinese catalogue.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from .package import PACKAGE

__all__ = ["Label", "control_labels", "label_mentions", "spans", "SPANS"]

#: The bold, italic and quoted spans of prose (the Chinese edition quotes with “…” or 「…」);
#: one pattern each, since a quote may sit inside an italic sentence.
SPANS = (
    re.compile(r"\*\*([^*\n]+?)\*\*"),
    re.compile(r"(?<![*A-Za-z0-9_])\*([^*\s][^*\n]*?)\*(?![*A-Za-z0-9_])"),
    re.compile(r"\"([^\"\n]+?)\""),
    re.compile(r"“([^”\n]+?)”"),
    re.compile(r"「([^」\n]+?)」"),
)


def spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, inner text) of every bold, italic or quoted span of ``text``, in order."""
    found = {(m.start(), m.end(), m.group(1)) for p in SPANS for m in p.finditer(text)}
    return sorted(found)


#: Words that name a control right after its label (a run of labels joined by "and" counts).
_NOUN_AFTER = {
    "en": re.compile(r"^\s*(?:\([^)]*\)\s*)?(?:slider|button|menu|box|checkbox|bar|dropdown)s?\b",
                     re.I),
    "zh": re.compile(r"^\s*(?:（[^）]*）)?\s*(?:两个|这个|那个)?\s*"
                     r"(?:滑块|按钮|菜单|下拉菜单|复选框|勾选框|输入框|柱形?|选框)"),
}
#: Words that name a control right before its label.
_VERB_BEFORE = {
    "en": re.compile(r"\b(?:untick|tick|press|click|move|drag)\s+(?:the\s+)?$", re.I),
    "zh": re.compile(r"(?:取消勾选|勾选|点击|按下|拖动)\s*(?:“|「)?$"),
}
_JOIN = {"en": re.compile(r"^\s*(?:,|and|or)\s*$"), "zh": re.compile(r"^\s*(?:和|与|、|或)\s*$")}
#: The largest phrase counted as a label (a longer marked text is a message, not a label).
_MAX_WORDS = 7
_FIELD = re.compile(r"\{[A-Za-z_]\w*(?:![rsa])?(?::[^{}]*)?\}")


@dataclass(frozen=True)
class Label:
    """One label, English and Chinese (a template's ``{fields}`` match any text)."""

    en: str
    zh: str

    def matches(self, text: str, lang: str) -> bool:
        """True when ``text`` is this label in ``lang`` (its fields filled with anything)."""
        label = self.en if lang == "en" else self.zh
        parts = _FIELD.split(label)
        pattern = ".+?".join(re.escape(p) for p in parts)
        return re.fullmatch(pattern, text.strip()) is not None


def _resolve(node: ast.AST, names: dict[str, str]) -> str | None:
    """The English text of ``_("…")``, ``_(NAME)``, ``"…"``, ``_("…").format(…)``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in {"_", "N_", "gettext"} and node.args:
            return _resolve(node.args[0], names)
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return _resolve(func.value, names)
    return None


def _module_labels(path: Path, short: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:  # module-level ``NAME = N_("…")``, ``A, B = "…", "…"``
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs = list(zip(target.elts, value.elts, strict=False))
        for name, expr in pairs:
            text = _resolve(expr, {})
            if isinstance(name, ast.Name) and text is not None:
                names[name.id] = text
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg == "description":
                text = _resolve(kw.value, names)
                if text:
                    found.add(text)
        func = node.func
        if isinstance(func, ast.Name) and func.id in {"slider", "menu"} and node.args:
            text = _resolve(node.args[0], names)
            if text:
                found.add(text)
        if isinstance(func, ast.Name) and func.id == "_" and node.args \
                and isinstance(node.args[0], ast.IfExp):  # a button's two states
            for branch in (node.args[0].body, node.args[0].orelse):
                text = _resolve(branch, names)
                if text:
                    found.add(text)
        if short and isinstance(func, ast.Name) and func.id in {"_", "N_"} and node.args:
            text = _resolve(node.args[0], names)
            if text and len(text.split()) <= _MAX_WORDS and not re.search(r"[.:;!?<]", text):
                found.add(text)
    return found


def control_labels(package: Path = PACKAGE) -> list[Label]:
    """Every label the package's explorers and figures show, English and Chinese."""
    from course_attention.i18n import gettext, using

    english: set[str] = set()
    for path in sorted((package / "explorers").glob("*.py")):
        english |= _module_labels(path, short=True)
    for path in sorted((package / "viz").glob("*.py")):
        english |= _module_labels(path, short=True)
    with using("zh"):
        return [Label(en, gettext(en)) for en in sorted(english)]


def _is_label(text: str, labels: list[Label], lang: str) -> bool:
    return any(label.matches(text, lang) for label in labels)


def label_mentions(unit: str, labels: list[Label], lang: str) -> list[str]:
    """The spans of ``unit`` that name a control: next to a control's noun or verb, or a label
    word for word (in a unit that speaks of controls at all). Code spans and math are skipped."""
    text = re.sub(r"``[^`]+``|`[^`]+`|\$[^$]+\$", lambda m: "\0" * len(m.group(0)), unit)
    found_spans = [(a, b, s) for a, b, s in spans(text)
                   if "\0" not in s and len(s.split()) <= _MAX_WORDS and len(s) <= 60]
    found: list[str] = []
    # runs of spans joined by "and" / "和": the noun after the last names them all
    k = 0
    while k < len(found_spans):
        j = k
        while j + 1 < len(found_spans) \
                and _JOIN[lang].match(text[found_spans[j][1]:found_spans[j + 1][0]]):
            j += 1
        run = found_spans[k: j + 1]
        named = bool(_NOUN_AFTER[lang].match(text[run[-1][1]:])) \
            or bool(_VERB_BEFORE[lang].search(text[:run[0][0]]))
        for _a, _b, s in run:
            if named or (_is_label(s, labels, lang) and _speaks_of_controls(unit, lang)):
                found.append(s)
        k = j + 1
    return found


_CONTROL_WORDS = {
    "en": re.compile(r"(?i)\b(?:slider|button|menu|box|checkbox|tick|untick|press|click)s?\b"),
    "zh": re.compile(r"滑块|按钮|菜单|复选框|勾选|点击|输入框"),
}


def _speaks_of_controls(unit: str, lang: str) -> bool:
    return bool(_CONTROL_WORDS[lang].search(unit))
