"""Checks shared by the tests of the package's Chinese text (figures, explorers, the checker).

``assert_speaks_both(build)`` runs ``build()`` in English and in Chinese and checks the two
properties the Chinese book rests on: the Chinese output has no English prose left in its words,
and translating the English output (what the Chinese book does with the English execution,
:mod:`course_attention.i18n.outputs`) gives exactly the Chinese output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from course_attention.i18n import using
from course_attention.i18n.outputs import TEXT_KEYS, translator

#: Three or more English words in a row (after code spans, quotes and error text are removed).
ENGLISH_RUN = re.compile(r"\b[A-Za-z]{2,}(?:[ ,'’-]+[A-Za-z]{2,}\b){2,}")
_CODE = re.compile(r"`[^`]*`|'[^'\n]*'|\"[^\"\n]*\"|<[^>]*>|%\{[^}]*\}|https?://\S+")
#: Python's own text after "raised ValueError: …" stays English (it is the learner's error).
_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Interrupt)\b: [^\n]*")


def english_runs(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """The runs of English words left in ``text`` (code spans, quotes, tags, errors removed)."""
    for a in allowed:
        text = text.replace(a, " ")
    text = _ERROR.sub(" ", _CODE.sub(" ", text))
    return ENGLISH_RUN.findall(text)


def words_of(value: Any) -> Iterator[str]:
    """Every string under a :data:`TEXT_KEYS` key of a plotly figure's or spec's JSON."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in TEXT_KEYS:
                yield from _strings(v)
            else:
                yield from words_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from words_of(v)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _as_json(value: Any) -> Any:
    if hasattr(value, "to_json"):  # a plotly figure: its JSON, numpy arrays as lists
        return json.loads(value.to_json())
    return value


def assert_speaks_both(build: Callable[[], Any], allowed: tuple[str, ...] = ()) -> None:
    """``build()`` (a figure, a spec dict or a message) in Chinese has no English run, and the
    English result, translated, equals the Chinese result. ``allowed``: English that stays
    (names of things, data)."""
    english = _as_json(build())
    with using("zh"):
        chinese = _as_json(build())
    tr = translator("zh")
    if isinstance(english, str):
        assert tr.text(english) == chinese, f"translated English:\n{tr.text(english)}\n" \
                                            f"Chinese run:\n{chinese}"
        texts = [chinese]
    else:
        translated = tr.json(english)
        assert translated == chinese, "the translated English output differs from the Chinese " \
            "run: " + "; ".join(_differences(translated, chinese)[:4])
        texts = list(words_of(chinese))
    left = [(t, english_runs(t, allowed)) for t in texts if english_runs(t, allowed)]
    assert not left, f"English left in the Chinese output: {left[:5]}"


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ: ``path: a | b`` for each differing leaf."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in _differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:160]!r} | {str(b)[:160]!r}"]
