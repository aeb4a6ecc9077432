"""The code cells' comments in Chinese: translated through catalogues, the code untouched."""

from __future__ import annotations

import json
from pathlib import Path

import polib
import pytest

from course_book.i18n import catalog
from course_book.i18n import comments as cm
from course_book.i18n.terms import package_term_misses

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [d for d in catalog.documents(ROOT) if catalog.source_path(ROOT, d).suffix == ".ipynb"]
WITH_COMMENTS = [d for d in NOTEBOOKS if cm.comment_units(catalog.source_path(ROOT, d))]

CELL = '''import numpy as np
%matplotlib inline
w = np.ones(3) / 3  # (3,) weights: each 1/3
s = "# not a comment"  # the string's hash is no comment
x = w @ w  # noqa: F841
# a whole line, with q.grad and w
'''


def test_comments_are_found_by_the_tokenizer_not_by_hashes():
    found = [text for _, _, text in cm.comments(CELL)]
    assert found == ["(3,) weights: each 1/3", "the string's hash is no comment", "noqa: F841",
                     "a whole line, with q.grad and w"]
    names = cm.code_names(CELL)
    assert [t for t in found if cm.needs_translation(t, names)] == [
        "(3,) weights: each 1/3", "the string's hash is no comment",
        "a whole line, with q.grad and w"]
    assert not cm.needs_translation("(batch, seq, d_model)")  # a shape only
    assert not cm.needs_translation("data.tokens: (4, 48)")  # code only


def test_translating_changes_the_comments_and_nothing_else():
    tr = {"(3,) weights: each 1/3": "(3,) 权重：每个 1/3",
          "a whole line, with q.grad and w": "整行注释，含 q.grad 与 w"}
    new = cm.translate_code(CELL, tr)
    assert "w = np.ones(3) / 3  # (3,) 权重：每个 1/3\n" in new
    assert new.endswith("# 整行注释，含 q.grad 与 w\n")
    assert '"# not a comment"' in new and "# noqa: F841" in new and "%matplotlib inline" in new
    assert cm.code_tokens(new) == cm.code_tokens(CELL)
    assert cm.translate_code(CELL, {}) == CELL


def test_a_translation_must_keep_the_code_tokens_of_its_comment():
    names = cm.code_names(CELL)
    assert cm.check_comment("(3,) weights: each 1/3", "(3,) 权重：每个 1/3", names) == []
    assert cm.check_comment("(3,) weights: each 1/3", "权重：每个三分之一", names) == [
        "missing or changed: (3,)", "missing or changed: 1", "missing or changed: 3"]
    assert cm.check_comment("a whole line, with q.grad and w", "含 q.grad", names) == [
        "missing or changed: w"]
    assert cm.check_comment("a coin flip", "抛硬币", {"a"}) == []  # "a" is English, not code
    assert cm.check_comment("by hand", "手算\n", names) == ["a comment is one line"]


@pytest.mark.parametrize("doc", WITH_COMMENTS)
def test_every_comment_catalogue_is_complete_in_step_and_sound(doc: str) -> None:
    """0 untranslated, fuzzy or stale comments; every name, shape and number of a comment kept."""
    problems = cm.comment_problems(ROOT, doc)
    assert not problems, f"{len(problems)} problem(s), e.g.\n" + "\n".join(problems[:10])


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_the_chinese_code_is_the_english_code(doc: str, tmp_path: Path) -> None:
    """Written as the Chinese edition writes it, every code cell has the English cell's tokens
    (but for the setup call's language) and no comment left in English that has a translation."""
    out = catalog.write_translation(ROOT, doc, tmp_path)
    english = json.loads(catalog.source_path(ROOT, doc).read_text(encoding="utf-8"))["cells"]
    chinese = json.loads(out.read_text(encoding="utf-8"))["cells"]
    wanted = cm.load_comment_translations(ROOT, doc)
    for en, zh in zip(english, chinese, strict=True):
        if en["cell_type"] != "code":
            continue
        en_text, zh_text = "".join(en["source"]), "".join(zh["source"])
        en_text, _ = catalog.setup_with_language(en_text, "zh")
        assert cm.code_tokens(zh_text) == cm.code_tokens(en_text), en["id"]
        left = [t for _, _, t in cm.comments(zh_text) if t in wanted and wanted[t] != t]
        assert not left, f"{doc} {en['id']}: comments left in English: {left}"


#: Terms a code comment means otherwise than the glossary, with the Chinese that says so:
#: "memory" in a comment is the computer's (内存), not the encoder's output (记忆).
COMMENT_SENSES = {"memory": "内存"}


@pytest.mark.parametrize("doc", WITH_COMMENTS)
def test_the_comments_use_the_glossary_terms(doc: str) -> None:
    path = cm.comments_catalog_path(ROOT, doc)
    chinese = {e.msgid: e.msgstr for e in polib.pofile(str(path))}
    misses = [(term, zh, en[:80]) for term, zh, en in package_term_misses(ROOT, path)
              if COMMENT_SENSES.get(term, "\0") not in chinese[en]]
    assert not misses, f"{doc}: {len(misses)} comment(s) without the glossary's term: {misses[:5]}"
