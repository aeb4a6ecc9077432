"""The English execution's outputs, in Chinese: how the Chinese book reuses the English run.

The Chinese book executes nothing (:mod:`course_attention.i18n.edition`): each code cell takes the
outputs the English build computed. Their words come from the package's catalogues
(:mod:`course_attention.i18n.package`), so they can be put into Chinese afterwards: a shown text
is either an English catalogue entry (``"query"``) or one with its fields filled in
(``"weights of query {i}"`` → ``"weights of query 3"``). :class:`Translator` finds the entry a text
was made from — the fields' values translated in turn, since a field often holds another entry —
and writes the Chinese entry with the same values. A text made from no entry stays as it is.

The tests check the property that makes this sound: for the package's figures, explorers and
checker messages, translating what English produced gives what Chinese produces
(``tests/test_i18n_outputs.py`` and the tests of each module). Introduced on the welcome page
(中文版).
"""

from __future__ import annotations

import ast
import re
import string
from typing import Any

__all__ = ["TEXT_KEYS", "Translator", "translator", "translate_output"]

#: The keys of a plotly figure or an explorer spec whose string values are words to translate
#: (a key's whole value: a string, a list of strings, or a dict of strings, as ``"text"`` is in
#: an explorer spec). Other strings (trace types, colours, data) are left alone.
TEXT_KEYS = frozenset({"text", "title", "name", "hovertemplate", "texttemplate", "ticktext",
                       "label", "description", "placeholder", "legendgrouptitle"})
PLOTLY_MIME = "application/vnd.plotly.v1+json"
_EXPLORER_PREFIX = "application/vnd.course-attention"
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:![rsa])?(?::[^{}]*)?\}")
_WORDS = re.compile(r"[A-Za-z]")


class _Template:
    def __init__(self, english: str, chinese: str) -> None:
        self.chinese = chinese
        pattern, names, literal = [], [], []
        for text, name, _spec, _conv in string.Formatter().parse(english):
            pattern.append(re.escape(text))
            literal.append(text)
            if name is None:
                continue
            if name in names:
                pattern.append(f"(?P={name})")
            else:
                pattern.append(f"(?P<{name}>.+?)")
                names.append(name)
        self.regex = re.compile("".join(pattern), re.DOTALL)
        self.anchor = max(literal, key=len)  # a quick test before the regex
        self.weight = sum(map(len, literal))

    def fill(self, values: dict[str, str]) -> str:
        def one(m: re.Match[str]) -> str:
            if m.group(0) == "{{":
                return "{"
            if m.group(0) == "}}":
                return "}"
            return values[m.group(1)]

        return _FIELD.sub(one, self.chinese)


class Translator:
    """English text shown by the package → the Chinese the package shows for it.

    ``catalogue`` maps English entries to Chinese ones (the package's catalogues). A text is
    translated when it is an entry, or an entry with fields filled in (the fields' values
    translated in turn); failing both, line by line. Otherwise it is returned unchanged.
    """

    def __init__(self, catalogue: dict[str, str]) -> None:
        self.exact = {k: v for k, v in catalogue.items() if k and v}
        templates = []
        for english, chinese in self.exact.items():
            try:
                has_fields = any(name for _, name, _, _ in string.Formatter().parse(english))
            except ValueError:
                continue
            if has_fields:
                templates.append(_Template(english, chinese))
        # the most specific first: more literal text means fewer ways to match by accident
        self.templates = sorted(templates, key=lambda t: -t.weight)
        self._cache: dict[str, str] = {}

    def text(self, text: str, depth: int = 0) -> str:
        """``text`` in Chinese, or ``text`` itself when no entry made it."""
        if not isinstance(text, str) or not _WORDS.search(text) or depth > 6:
            return text
        if text in self._cache:
            return self._cache[text]
        done = self.exact.get(text)
        if done is None:
            done = self._template(text, depth)
        if done is None and "\n" in text:
            done = "\n".join(self.text(line, depth + 1) for line in text.split("\n"))
        if done is None and "<br>" in text:
            done = "<br>".join(self.text(part, depth + 1) for part in text.split("<br>"))
        if done is None:
            stripped = text.strip()
            if stripped and stripped != text:
                inner = self.text(stripped, depth + 1)
                if inner != stripped:
                    start = text.index(stripped)
                    done = text[:start] + inner + text[start + len(stripped):]
        self._cache[text] = text if done is None else done
        return self._cache[text]

    def _template(self, text: str, depth: int) -> str | None:
        for t in self.templates:
            if t.anchor not in text:
                continue
            m = t.regex.fullmatch(text)
            if m is not None:
                values = {k: self.text(v, depth + 1) for k, v in m.groupdict().items()}
                return t.fill(values)
        return None

    def words(self, value: Any) -> Any:
        """A string, or the strings of a list or dict, translated."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.words(v) for v in value]
        if isinstance(value, dict):
            return {k: self.words(v) for k, v in value.items()}
        return value

    def json(self, value: Any) -> Any:
        """A plotly figure or explorer spec with the values of its :data:`TEXT_KEYS` translated."""
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: (self.words(v) if k in TEXT_KEYS and not _is_figure_part(v)
                        else self.json(v)) for k, v in value.items()}
        return value


def _is_figure_part(value: Any) -> bool:
    """A dict under a text key that holds more than words (``title: {text, font, x}``)."""
    return isinstance(value, dict) and any(not isinstance(v, str) for v in value.values())


_TRANSLATORS: dict[str, Translator] = {}


def translator(lang: str = "zh") -> Translator:
    """The :class:`Translator` of the package catalogues of ``lang``."""
    from . import _catalogue

    if lang not in _TRANSLATORS:
        _TRANSLATORS[lang] = Translator(_catalogue(lang))
    return _TRANSLATORS[lang]


def translate_output(output: dict[str, Any], tr: Translator) -> dict[str, Any]:
    """A notebook output (stream, display data, execute result) with its words translated."""
    out = dict(output)
    if out.get("output_type") == "stream":
        out["text"] = _lines(out.get("text", ""), tr)
        return out
    data = out.get("data")
    if not isinstance(data, dict):
        return out
    new = {}
    for mime, value in data.items():
        if mime == PLOTLY_MIME or mime.startswith(_EXPLORER_PREFIX):
            new[mime] = tr.json(value)
        elif mime == "text/plain" or mime == "text/markdown":
            new[mime] = _lines(value, tr)
        else:
            new[mime] = value
    out["data"] = new
    return out


def _lines(value: str | list[str], tr: Translator) -> str | list[str]:
    joined = "".join(value) if isinstance(value, list) else value
    done = tr.text(joined)
    if done == joined and joined[:1] in "'\"" and len(joined) > 1 and joined[-1] == joined[0]:
        try:  # the repr of a str (a glued text): translate the text itself
            inner = ast.literal_eval(joined)
        except (ValueError, SyntaxError):
            inner = None
        if isinstance(inner, str) and tr.text(inner) != inner:
            done = repr(tr.text(inner))
    if isinstance(value, list):
        return done.splitlines(keepends=True)
    return done
