"""Every live explorer speaks Chinese, in both places it runs (中文版).

In JupyterLab and Colab an explorer's words are the ipywidgets' labels and its figure; on the
website they are the spec's (``Explorer.spec()``): the controls' labels and ``spec["text"]``,
the templates the page code fills (``CourseAttention.format``). The Chinese book translates the
English spec (:mod:`course_attention.i18n.outputs`), so each check runs both languages.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from course_attention.explorers import SCRIPTS
from course_attention.i18n import using
from course_attention.widgets import EXPLORERS
from i18n_checks import ENGLISH_RUN, assert_speaks_both

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

#: English that stays in the Chinese explorers: data (the sentences' words, mask tokens) and
#: names of things (``d_model``, ``top-k``).
ALLOWED = ("The animal didn't cross the street because it was too", "too tired", "too wide")


@cache
def built(name: str, lang: str):  # noqa: ANN201 - an Explorer
    with using(lang):
        return EXPLORERS[name]()


def _spec(name: str, lang: str) -> dict:
    spec = dict(built(name, lang).spec())
    spec.pop("figure")
    spec.pop("model", None)  # weights and the model's config: numbers, no words
    return spec


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_spec_speaks_both(name: str) -> None:
    from course_attention.i18n import language

    assert_speaks_both(lambda: _spec(name, language()), allowed=ALLOWED)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_first_figure_title_speaks_both(name: str) -> None:
    """The title the explorer writes (and its page code fills from the same templates)."""
    from course_attention.i18n import language

    assert_speaks_both(lambda: built(name, language()).figure.layout.title.text, allowed=ALLOWED)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_first_figure_speaks_both(name: str) -> None:
    from course_attention.i18n import language

    assert_speaks_both(lambda: built(name, language()).figure, allowed=ALLOWED)


def _has_words(text: str) -> bool:
    return bool(ENGLISH_RUN.search(text)) or bool(re.search(r"\b[a-z]{4,}\b", text))


@cache
def _glossary_words() -> frozenset[str]:
    """The Latin-letter words the glossary's Chinese terms themselves hold (``delta 规则``,
    ``softmax 函数``): Chinese text, not English left untranslated."""
    from pathlib import Path

    from course_book.i18n.terms import glossary

    terms = glossary(Path(__file__).resolve().parents[1]).values()
    return frozenset(w for zh in terms for w in re.findall(r"[A-Za-z]+", zh))


def _without_glossary_words(text: str) -> str:
    return re.sub(r"[A-Za-z]+", lambda m: "" if m[0] in _glossary_words() else m[0], text)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_widget_labels_chinese(name: str) -> None:
    """Under ``using("zh")`` the ipywidgets' labels, options and buttons have no English word
    (names such as ``d_k``, ``top-k`` and the sentence's words stay)."""
    explorer = built(name, "zh")
    texts = []
    for control in explorer.controls.values():
        texts.append(control.description)
        texts += [str(label) for label in getattr(control, "_options_labels", ())]
    texts += [b.description for b in explorer.buttons.values()]
    keep = {"tired", "wide", "d_model", "d_k", "top-k", "top-p"}
    data = re.compile(r"^\d+:")  # the mask's token labels ("2:like"): the sentence's words
    left = [t for t in texts if _has_words(_without_glossary_words(t)) and t not in keep
            and "too" not in t and not data.match(t)]
    assert not left, left


def _js_keys(kind: str) -> set[str]:
    """The ``spec.text`` keys a kind's page code asks for: ``ui.text("key"``,
    ``this.text("key"`` / ``self.text("key"``, ``spec.text.key``, and both keys of a
    ``ui.text(cond ? "a" : "b"`` (with a ``+ "_narrow"`` suffix when the code adds one)."""
    code = (SCRIPTS / f"{kind}.js").read_text()
    keys = set(re.findall(r'(?:ui|this|self)\.text\(\s*"(\w+)"', code))
    keys |= set(re.findall(r"spec\.text\.(\w+)", code))
    for m in re.finditer(r'\.text\(\s*\(?[^"()]*\?\s*"(\w+)"\s*:\s*"(\w+)"\)?(\s*\+\s*\(narrow)?',
                         code):
        keys |= {m[1], m[2]}
        if m[3]:
            keys |= {m[1] + "_narrow", m[2] + "_narrow"}
    m = re.search(r'!n \? "(\w+)" : n === 1 \? "(\w+)" : "(\w+)"', code)
    if m:
        keys |= set(m.groups())
    return keys


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_js_text_keys_exist(name: str) -> None:
    """Every ``spec.text`` key the page code uses is in the spec (and core.js's in every one)."""
    spec = _spec(name, "en")
    used = _js_keys(spec["kind"]) | _js_keys("core")  # (scripts it loads first: their helpers)
    assert used, "no text key found: the pattern no longer matches the page code"
    missing = used - set(spec["text"])
    assert not missing, f"{spec['kind']}.js uses spec.text keys the spec lacks: {missing}"
