"""The English execution's outputs, in Chinese: how the Chinese book reuses the English run.

The Chinese book executes nothing (``course_book.i18n.edition``): each code cell takes the
outputs the English build computed. Their words come from the package's catalogues
(``course_book.i18n.package``), so they can be put into Chinese afterwards: a shown text
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
import html
import re
import string
from typing import Any

__all__ = ["TEXT_KEYS", "Translator", "translator", "translate_output"]

#: The keys of a plotly figure or an explorer spec whose string values are words to translate
#: (a key's whole value: a string, a list of strings, or a dict of strings, as ``"text"`` is in
#: an explorer spec). Other strings (trace types, colours, data) are left alone, and so is the
#: ``name`` of an animation frame (its slider steps find it by that name).
TEXT_KEYS = frozenset({"text", "title", "name", "hovertemplate", "texttemplate", "ticktext",
                       "label", "description", "placeholder", "legendgrouptitle", "prefix"})
PLOTLY_MIME = "application/vnd.plotly.v1+json"
_EXPLORER_PREFIX = "application/vnd.course-attention"
_GLUE_PREFIX = "application/papermill.record/"
_CATEGORY_KEYS = frozenset({"x", "y"})
_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?:![rsa])?(?::[^{}]*)?\}")
_WORDS = re.compile(r"[A-Za-z]")
_ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")
_TAG = re.compile(r"(<[^>]*>)")
_NAMED = re.compile(r"(\b\w+ = )([^,=\n]+?)(?=, |\.?$)")
_MARKUP = re.compile(r"<[^>]*>|%\{[^}]*\}")  # tags and plotly's %{x}: not words


class _Template:
    def __init__(self, english: str, chinese: str) -> None:
        self.chinese = chinese
        pattern: list[str] = []
        names: list[str] = []
        # a field spans lines only where its template does ("{what}\n  Hint: {hint}"): a one-line
        # template's field must not swallow the next lines of a message
        field = ".+?" if "\n" in english else "[^\n]+?"
        if "<br>" not in english:  # nor a figure's line break (a wrapped title, a hover's lines)
            field = field.replace(".", "(?:(?!<br>).)").replace("[^\n]", "(?:(?!<br>)[^\n])")
        self.order: list[str] = []  # the fields in the order they appear (a name may repeat)
        self.literals: list[str] = [""]  # the text around them: len(order) + 1 pieces
        for text, name, _spec, _conv in string.Formatter().parse(english):
            pattern.append(re.escape(text))
            self.literals[-1] += text
            if name is None:
                continue
            self.order.append(name)
            self.literals.append("")
            if name in names:
                pattern.append(f"(?P={name})")
            else:
                pattern.append(f"(?P<{name}>{field})")
                names.append(name)
        self.field = re.compile(field, re.DOTALL)
        self.regex = re.compile("".join(pattern), re.DOTALL)
        self.anchor = max(self.literals, key=len)  # a quick test before the regex
        self.weight = sum(map(len, self.literals))

    def splits(self, text: str, limit: int = 64) -> list[dict[str, str]]:
        """The ways ``text`` is this template with its fields filled, the shortest first fields
        first (at most ``limit``): ``"Hint for {title}: {hint}"`` splits ``"Hint for GQA: repeat
        heads: …"`` after ``GQA`` and after ``heads``."""
        lits, order, found = self.literals, self.order, []
        end = len(text) - len(lits[-1])
        if not (text.startswith(lits[0]) and text.endswith(lits[-1]) and end >= len(lits[0])):
            return found

        def fits(name: str, value: str, values: dict[str, str]) -> bool:
            return (bool(value) and self.field.fullmatch(value) is not None
                    and values.get(name, value) == value)

        def walk(i: int, pos: int, values: dict[str, str]) -> None:
            if len(found) >= limit:
                return
            if i == len(order) - 1:
                if fits(order[i], text[pos:end], values):
                    found.append({**values, order[i]: text[pos:end]})
                return
            nxt = lits[i + 1]
            j = text.find(nxt, pos + 1) if nxt else pos + 1
            while 0 <= j <= end and len(found) < limit:
                if fits(order[i], text[pos:j], values):
                    walk(i + 1, j + len(nxt), {**values, order[i]: text[pos:j]})
                j = text.find(nxt, j + 1) if nxt else j + 1

        walk(0, len(lits[0]), {})
        return found

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
            done = self._br_parts(text.split("<br>"), depth)
        if done is None and "<" in text and _TAG.search(text):  # the words between tags
            parts = _TAG.split(text)
            done = "".join(part if k % 2 else self.text(part, depth + 1)
                           for k, part in enumerate(parts))
        if done is None:
            stripped = text.strip()
            if stripped and stripped != text:
                inner = self.text(stripped, depth + 1)
                if inner != stripped:
                    start = text.index(stripped)
                    done = text[:start] + inner + text[start + len(stripped):]
        if done is None and " = " in text:  # the checker's inputs: "attn = an attention sublayer"
            swapped = _NAMED.sub(lambda m: m[1] + self.exact.get(m[2], m[2]), text)
            done = swapped if swapped != text else None
        self._cache[text] = text if done is None else done
        return self._cache[text]

    def _template(self, text: str, depth: int) -> str | None:
        """The text filled into the Chinese of the entry it was made from. Of the entries and
        the ways to split the text into their fields, the one that leaves the fewest fields
        untranslated; on a tie, the most specific entry and the shortest first fields."""
        best: tuple[int, str] | None = None
        for t in self.templates:
            if t.anchor not in text or t.regex.fullmatch(text) is None:
                continue
            for values in t.splits(text):
                done = {k: self.text(v, depth + 1) for k, v in values.items()}
                left = sum(1 for k, v in values.items()
                           if done[k] == v and _ENGLISH_WORD.search(_MARKUP.sub(" ", v)))
                if best is None or left < best[0]:
                    best = (left, t.fill(done))
                if left == 0:
                    return best[1]
        return None if best is None else best[1]

    def _br_parts(self, parts: list[str], depth: int) -> str:
        """``<br>``-separated parts, each translated; consecutive parts that a figure's title
        wrap broke (:func:`course_attention.viz.wrap_title`: one line of words wrapped at one of
        its widths) are joined again and translated as one line, when the parts alone are not.
        Of the ways to group them: the fewest English words left, then the most groups."""
        def wrapped(group: list[str]) -> bool:
            line = " ".join(group)
            return "<" not in line and any(_wrap(line, w) == group for w in WRAP_WIDTHS)

        best: list[tuple[int, int, list[str]]] = [(0, 0, [])] * (len(parts) + 1)
        for i in range(len(parts) - 1, -1, -1):
            options = []
            for j in range(i + 1, len(parts) + 1):
                if j > i + 1 and not wrapped(parts[i:j]):
                    continue
                line = " ".join(parts[i:j])
                done = self.text(line, depth + 1)
                if j > i + 1 and done == line:
                    continue
                left = len(_ENGLISH_WORD.findall(_MARKUP.sub(" ", done)))
                rest = best[j]
                options.append((left + rest[0], rest[1] - 1, [done, *rest[2]]))
            best[i] = min(options, key=lambda o: (o[0], o[1]))
        return "<br>".join(best[0][2])

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
                        else self._frames(v) if k == "frames"
                        else self._categories(v) if k in _CATEGORY_KEYS else self.json(v))
                    for k, v in value.items()}
        return value

    def _categories(self, value: Any) -> Any:
        """A trace's ``x`` or ``y``: a category that is a catalogue entry as a whole ("all
        others", "step 3") is a word; any other value is data and stays."""
        if isinstance(value, list):
            return [self.exact.get(v, v) if isinstance(v, str) else self._categories(v)
                    for v in value]
        return value

    def _frames(self, frames: Any) -> Any:
        if not isinstance(frames, list):
            return self.json(frames)
        return [{k: v if k == "name" else self.json(v) for k, v in f.items()}
                if isinstance(f, dict) else self.json(f) for f in frames]


#: The widths (characters) at which :func:`course_attention.viz.wrap_title` wraps a figure's
#: title, a panel's and an axis's (``TITLE_CHARS``, ``PANEL_CHARS``, ``AXIS_CHARS``; a test
#: checks they agree).
WRAP_WIDTHS = (34, 10, 36)


def _wrap(text: str, width: int) -> list[str]:
    """``text``'s words in lines of at most ``width`` characters, as ``viz.wrap_title`` does."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(html.unescape(lines[-1] + " " + word)) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _is_figure_part(value: Any) -> bool:
    """A dict under a text key that holds more than words (``title: {text, font, x}``)."""
    return isinstance(value, dict) and any(not isinstance(v, str) for v in value.values())


_TRANSLATORS: dict[str, Translator] = {}


def translator(lang: str = "zh") -> Translator:
    """The :class:`Translator` of the package catalogues of ``lang``, and of its catalogue of
    the texts the package shows without marking them (``outputs.po``: the words of its tables,
    the messages of its input checks), which only the Chinese book's outputs use."""
    from . import _catalogue, _output_catalogue

    if lang not in _TRANSLATORS:
        _TRANSLATORS[lang] = Translator({**_output_catalogue(lang), **_catalogue(lang)})
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
        kind = mime.removeprefix(_GLUE_PREFIX)  # a glued value's mime type carries a prefix
        if kind == PLOTLY_MIME or kind.startswith(_EXPLORER_PREFIX):
            new[mime] = tr.json(value)
        elif kind == "text/plain" or kind == "text/markdown":
            new[mime] = _lines(value, tr)
        elif kind == "text/html":
            new[mime] = _html(value, tr)
        else:
            new[mime] = value
    out["data"] = new
    return out


def _lines(value: str | list[str], tr: Translator) -> str | list[str]:
    joined = "".join(value) if isinstance(value, list) else value
    if joined[:1] in "[{(" and ("'" in joined or '"' in joined):
        # the repr of a dict, list or tuple: its strings one by one (a template's field would
        # otherwise swallow the brackets and the other strings)
        done = _literals(joined, tr)
        return done.splitlines(keepends=True) if isinstance(value, list) else done
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


#: A Python string literal in a repr (``{'BERT: self (bidirectional)': (6, 6)}``).
_LITERAL = re.compile(r"'(?:[^'\\\n]|\\.)*'" + r'|"(?:[^"\\\n]|\\.)*"')
#: The parts of an HTML output that are not its words (its tags, and the bodies of its scripts
#: and styles).
_HTML_SKIP = re.compile(r"(<script\b.*?</script>|<style\b.*?</style>|<[^>]*>)",
                        re.DOTALL | re.IGNORECASE)


def _literals(text: str, tr: Translator) -> str:
    """``text`` (the repr of a dict, list or tuple) with each string literal in it translated
    and written back as a literal: a table's keys, an error message caught into a list."""
    def one(m: re.Match[str]) -> str:
        try:
            inner = ast.literal_eval(m.group(0))
        except (ValueError, SyntaxError):
            return m.group(0)
        if not isinstance(inner, str):
            return m.group(0)
        done = tr.text(inner)
        return m.group(0) if done == inner else repr(done)

    return _LITERAL.sub(one, text)


def _html(value: str | list[str], tr: Translator) -> str | list[str]:
    """An HTML output (a table) with the words between its tags translated; tags, scripts and
    styles as they are."""
    joined = "".join(value) if isinstance(value, list) else value
    parts = _HTML_SKIP.split(joined)
    done = "".join(part if k % 2 else _html_text(part, tr) for k, part in enumerate(parts))
    if isinstance(value, list):
        return done.splitlines(keepends=True)
    return done


def _html_text(text: str, tr: Translator) -> str:
    """One text node of an HTML output, translated as the text it shows (entities unescaped,
    then escaped again)."""
    if not _WORDS.search(text):
        return text
    shown = html.unescape(text)
    done = tr.text(shown)
    return text if done == shown else html.escape(done, quote=False)
