"""The Chinese edition's machinery: units, catalogues (fuzzy on change), translated notebooks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest
from hypothesis import given
from hypothesis import strategies as st

import course_attention as ca
from course_attention.i18n import gettext, language, set_language, using
from course_book import book
from course_book.i18n import catalog, edition, package
from course_book.i18n.terms import glossary, package_term_misses, term_misses
from course_book.i18n.units import check_translation, join, split, units

ROOT = Path(__file__).resolve().parents[1]
DOCS = catalog.documents(ROOT)


def _texts(doc: str) -> list[str]:
    return [text for _, text in catalog._markdown_texts(catalog.source_path(ROOT, doc))]


@pytest.mark.parametrize("doc", DOCS)
def test_every_text_is_rebuilt_exactly_from_its_units(doc: str) -> None:
    for text in _texts(doc):
        assert join(split(text), lambda s: s) == text


@given(st.text(alphabet=st.sampled_from(list("ab $`|#-*:{}()=\n 1.>")), max_size=80))
def test_rebuilding_is_exact_for_any_text(text: str) -> None:
    assert join(split(text), lambda s: s) == text


def test_units_are_prose_and_structure_is_kept() -> None:
    text = (
        "(sec-x)=\n## A heading\n\nA paragraph that goes\non to a second line.\n\n"
        "1. first item\n   continued here;\n2. second item\n\n"
        "| English | 中文 |\n|---|---|\n| query | 查询 |\n\n"
        "$$\nQK^T \\text{ not prose}\n$$\n\n"
        ":::{exercise} ★☆☆ · ~5 min\n:label: ex-1\n\nWrite `f(x)`.\n:::\n\n"
        "```python\nprint('code is not prose')\n```\n"
    )
    assert units(text) == [
        "A heading", "A paragraph that goes\non to a second line.", "first item\ncontinued here;",
        "second item", "English", "query", "★☆☆ · ~5 min", "Write `f(x)`.",
    ]
    upper = join(split(text), str.upper)
    assert "(sec-x)=\n## A HEADING\n" in upper
    assert "1. FIRST ITEM\n   CONTINUED HERE;\n" in upper  # a continuation stays in its item
    assert ":label: ex-1" in upper and "print('code is not prose')" in upper
    assert "QK^T \\text{ not prose}" in upper and "| 查询 |" in upper


def test_a_translation_must_keep_roles_math_code_and_link_targets() -> None:
    english = "See {ref}`the toolbox <ch-toolbox>`: $x^2$ is `f(x)` ({glue:text}`n:.2f`)."
    good = "见{ref}`工具箱 <ch-toolbox>`：$x^2$ 即 `f(x)`（{glue:text}`n:.2f`）。"
    assert check_translation(english, good) == []
    broken = "见{ref}`工具箱 <ch-other>`：$x^3$ 即 `f(x)`（{glue:text}`n:.3f`）。"
    problems = check_translation(english, broken)
    assert any("ch-toolbox" in p for p in problems) and any("$x^2$" in p for p in problems)
    assert any("n:.2f" in p for p in problems)
    assert check_translation("[the site](https://x.org/a)", "[网站](https://x.org/b)")
    assert check_translation("Some words.", "") == ["empty translation"]
    # a closing ** after 。 and before a Chinese character is left as text by CommonMark
    assert check_translation("**Bold.** Then more", "**粗体。**然后")
    assert check_translation("**Bold.** Then more", "**粗体**。然后") == []


def _mini_book(tmp: Path, paragraph: str) -> None:
    (tmp / "chapters").mkdir(exist_ok=True)
    (tmp / "_toc.yml").write_text("format: jb-book\nroot: chapters/one\n", encoding="utf-8")
    (tmp / "_config.yml").write_text("title: A book\n", encoding="utf-8")
    nb = {
        "cells": [
            {"cell_type": "markdown", "id": "m1", "metadata": {},
             "source": ["# The title\n", "\n", paragraph + "\n", "\n", "Unchanged words."]},
            {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None,
             "outputs": [], "source": ["import course_attention as ca\n", "ca.setup(seed=0)"]},
            {"cell_type": "code", "id": "c2", "metadata": {}, "execution_count": None,
             "outputs": [], "source": ["x = 'The title'  # code is never translated"]},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }
    (tmp / "chapters" / "one.ipynb").write_text(json.dumps(nb), encoding="utf-8")


def _translate_all(tmp: Path, doc: str) -> None:
    path = catalog.catalog_path(tmp, doc)
    po = polib.pofile(str(path))
    for e in po:
        e.msgstr = "译：" + e.msgid
    po.save(str(path))


def test_an_english_change_marks_its_entry_fuzzy_and_the_check_fails(tmp_path: Path) -> None:
    _mini_book(tmp_path, "The weights sum to 1.")
    stats = catalog.update_catalog(tmp_path, "chapters/one")
    assert (stats.units, stats.new, stats.fuzzy) == (3, 3, 0)
    assert len(catalog.catalog_problems(tmp_path, "chapters/one")) == 3  # untranslated
    _translate_all(tmp_path, "chapters/one")
    assert catalog.catalog_problems(tmp_path, "chapters/one") == []
    _mini_book(tmp_path, "The weights sum to one.")
    assert catalog.catalog_problems(tmp_path, "chapters/one")  # stale before `update`
    stats = catalog.update_catalog(tmp_path, "chapters/one")
    assert (stats.units, stats.new, stats.fuzzy, stats.dropped) == (3, 0, 1, 1)
    entry = polib.pofile(str(catalog.catalog_path(tmp_path, "chapters/one"))).find(
        "The weights sum to one.")
    assert entry.fuzzy and entry.previous_msgid == "The weights sum to 1."
    assert entry.msgstr == "译：The weights sum to 1."  # the old translation, to be checked
    problems = catalog.catalog_problems(tmp_path, "chapters/one")
    assert len(problems) == 1 and problems[0].startswith("fuzzy")
    # the fuzzy entry is not used: the Chinese page shows the English until someone checks it
    assert "The weights sum to one." not in catalog.load_translations(tmp_path, "chapters/one")


def test_the_translated_notebook_changes_prose_and_the_setup_call_only(tmp_path: Path) -> None:
    _mini_book(tmp_path, "The weights sum to 1.")
    catalog.update_catalog(tmp_path, "chapters/one")
    _translate_all(tmp_path, "chapters/one")
    out = catalog.write_translation(tmp_path, "chapters/one", tmp_path / "zh")
    english = json.loads((tmp_path / "chapters" / "one.ipynb").read_text(encoding="utf-8"))
    chinese = json.loads(out.read_text(encoding="utf-8"))
    md = "".join(chinese["cells"][0]["source"])
    assert md == "# 译：The title\n\n译：The weights sum to 1.\n\n译：Unchanged words."
    assert "".join(chinese["cells"][1]["source"]).endswith('ca.setup(seed=0, lang="zh")')
    assert chinese["cells"][2]["source"] == english["cells"][2]["source"]


@pytest.mark.parametrize("doc", DOCS)
def test_chinese_code_cells_equal_the_english_but_for_the_language(doc: str) -> None:
    src = catalog.source_path(ROOT, doc)
    if src.suffix != ".ipynb":
        return
    cells = json.loads(src.read_text(encoding="utf-8"))["cells"]
    changed = 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        text = "".join(cell["source"])
        new, n = catalog.setup_with_language(text, "zh")
        changed += n
        assert new.replace(', lang="zh"', "").replace('lang="zh"', "") == text
    assert changed == 1, f"{doc}: {changed} setup calls (one expected)"


@pytest.mark.parametrize("doc", DOCS)
def test_every_catalogue_is_complete_in_step_and_sound(doc: str) -> None:
    """0 untranslated, fuzzy or stale entries; every role, math, code span and link kept."""
    problems = catalog.catalog_problems(ROOT, doc)
    assert not problems, f"{len(problems)} problem(s), e.g.\n" + "\n".join(problems[:10])


def test_the_book_title_and_captions_are_translated() -> None:
    assert edition.book_problems(ROOT) == []


def test_the_language_is_set_by_setup_and_checked() -> None:
    try:
        ca.setup(seed=0, lang="zh")
        assert language() == "zh"
        ca.setup(seed=0)
        assert language() == "en" and gettext("Attention weights") == "Attention weights"
        with pytest.raises(ValueError, match="lang must be one of"):
            set_language("fr")
    finally:
        set_language("en")


@pytest.mark.parametrize(("page", "lang", "href"), [
    ("chapters/01_soft_lookup", "en", "../zh/chapters/01_soft_lookup.html"),
    ("chapters/01_soft_lookup", "zh", "../../chapters/01_soft_lookup.html"),
    ("index", "en", "zh/index.html"),
    ("genindex", "zh", "../genindex.html"),
])
def test_each_page_links_to_its_counterpart(page: str, lang: str, href: str) -> None:
    assert book.counterpart_href(page, lang) == href


# Where an English glossary word is used in another sense, its Chinese term would be wrong.
_COMPUTER_MEMORY = "computer memory (内存), not the encoder output (记忆)"
TERM_EXCEPTIONS = {
    **{(f"chapters/{doc}", "memory"): _COMPUTER_MEMORY for doc in (
        "00_welcome", "00_toolbox", "03_self_attention", "05_multi_head", "08_decoder_only",
        "11_efficient_attention", "13_latent_and_sparse", "14_sinks_and_streaming",
        "15_linear_attention", "appendix_shapes",
        "appendix_spot_the_bug")},
    ("chapters/01_soft_lookup", "alignment"): "the alignment of two directions (一致), not "
    "the encoder–decoder alignment (对齐)",
    ("chapters/10_positions", "sampling"): "sampling noise of a mean (抽样), not decoding",
    ("chapters/appendix_spot_the_bug", "encoder–decoder"): "the seed's own title, quoted "
    "as it is written (编码器—解码器)",
    ("chapters/03_self_attention", "hidden"): "an RNN's hidden state (隐状态), not a masked key",
    ("chapters/06_transformer_block", "hidden"): "the feed-forward network's hidden layer "
    "(隐藏层), not a masked key",
    ("chapters/08_decoder_only", "hidden"): "a hidden code cell (隐藏的单元格) and a position's "
    "hidden state, not a masked key",
    ("chapters/12_modern_attention", "hidden"): "the MLP's hidden width and hidden units "
    "(隐藏层宽度, 隐藏单元), not a masked key",
    ("chapters/13_latent_and_sparse", "hidden"): "SwiGLU's hidden width (隐藏层宽度), not a "
    "masked key",
    ("chapters/appendix_shapes", "hidden"): "an RNN's hidden states and the feed-forward "
    "network's hidden activations (隐状态, 隐藏层激活), not masked keys",
}


def test_glossary_terms_are_read_from_its_table() -> None:
    terms = glossary(ROOT)
    assert terms["query"] == "查询" and terms["embedding"] == "嵌入"
    assert terms["word vector"] == "词向量" and terms["recurrent neural network"] == "循环神经网络"
    assert len(terms) > 80


@pytest.mark.parametrize("doc", DOCS)
def test_each_glossary_term_has_one_chinese_term(doc: str) -> None:
    """A unit whose English uses a glossary term holds that term's Chinese (or the term)."""
    misses = [(term, zh, en[:80]) for term, zh, en in term_misses(ROOT, doc)
              if (doc, term) not in TERM_EXCEPTIONS]
    assert not misses, f"{doc}: {len(misses)} unit(s) without the glossary's term: {misses[:5]}"


def test_every_term_exception_is_still_needed() -> None:
    found = {(doc, term) for doc in DOCS for term, _, _ in term_misses(ROOT, doc)}
    assert set(TERM_EXCEPTIONS) <= found, set(TERM_EXCEPTIONS) - found


PACKAGE_CATALOGUES = sorted(p.stem for p in package.catalog_folder().glob("*.po"))
# The same, for the catalogues of the package's own text (figures, explorers, checkers).
PACKAGE_TERM_EXCEPTIONS = {
    **{(name, "memory"): _COMPUTER_MEMORY for name in (
        "architecture", "chapters", "exercises.ch03_self_attention",
        "exercises.ch05_multi_head", "viz.efficient")},
    ("exercises.ch06_transformer_block", "hidden"): "the feed-forward network's hidden width "
    "(隐藏层宽度), not a masked key",
}


@pytest.mark.parametrize("name", PACKAGE_CATALOGUES)
def test_the_package_text_uses_the_glossary_terms(name: str) -> None:
    """Figures, explorers and checkers say what the prose says: 交互图, 检查器, 键值缓存 …"""
    path = package.catalog_folder() / f"{name}.po"
    misses = [(term, zh, en[:80]) for term, zh, en in package_term_misses(ROOT, path)
              if (name, term) not in PACKAGE_TERM_EXCEPTIONS]
    assert not misses, f"{name}: {len(misses)} text(s) without the glossary's term: {misses[:5]}"


def test_every_package_term_exception_is_still_needed() -> None:
    found = {(name, term) for name in PACKAGE_CATALOGUES
             for term, _, _ in package_term_misses(ROOT, package.catalog_folder() / f"{name}.po")}
    assert set(PACKAGE_TERM_EXCEPTIONS) <= found, set(PACKAGE_TERM_EXCEPTIONS) - found


def test_a_package_text_without_the_term_is_found_and_code_is_not_the_term(tmp_path: Path) -> None:
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "appendix_glossary.md").write_text(
        "| English | 中文 | where |\n|---|---|---|\n"
        "| logit (logits) | logit（未归一化的对数概率） | here |\n| axis | 轴 | here |\n",
        encoding="utf-8")
    po = polib.POFile()
    for english, chinese in [
        ("large logits overflow to inf", "很大的对数几率会上溢为 inf"),  # the drifting form
        ("the logits move", "logits 会变化"),
        ("cross_entropy takes `logits`", "cross_entropy 接收的是 `logits`"),  # code both sides
        ("softmax of the logits", "`logits` 的 softmax"),  # the term only as code: a miss
        ("take the maximum, x.max(axis=-1)", "取最大值，即 `x.max(axis=-1)`"),  # a call: code
    ]:
        po.append(polib.POEntry(msgid=english, msgstr=chinese))
    path = tmp_path / "viz.example.po"
    po.save(str(path))
    assert [en for _, _, en in package_term_misses(tmp_path, path)] == [
        "large logits overflow to inf", "softmax of the logits"]


def test_a_term_missing_from_the_chinese_is_found(tmp_path: Path) -> None:
    _mini_book(tmp_path, "Each query scores every key.")
    (tmp_path / "chapters" / "appendix_glossary.md").write_text(
        "| English | 中文 | where |\n|---|---|---|\n| query | 查询 | here |\n| key | 键 | here |\n",
        encoding="utf-8")
    catalog.update_catalog(tmp_path, "chapters/one")
    path = catalog.catalog_path(tmp_path, "chapters/one")
    po = polib.pofile(str(path))
    for e in po:
        e.msgstr = "每个提问给每个键打分。" if e.msgid.startswith("Each") else "译"
    po.save(str(path))
    assert term_misses(tmp_path, "chapters/one") == [
        ("query", "查询", "Each query scores every key.")]


def test_the_package_catalogue_is_complete_in_step_and_keeps_its_fields() -> None:
    assert package.package_problems() == []
    assert package._fields("Chapter {n} · {title}") == {"n", "title"}
    assert package.package_strings(), "no package string found: the extraction broke"


def test_chapter_titles_in_figures_are_the_chapters_own_chinese_titles() -> None:
    from course_attention import architecture

    for path, title in architecture.CHAPTERS.values():
        heading = polib.pofile(str(catalog.catalog_path(ROOT, path))).find(title)
        assert heading is not None, f"{title!r} is not a heading of {path}"
        with using("zh"):
            assert gettext(title) == heading.msgstr


def test_the_course_map_speaks_the_language_it_is_drawn_in() -> None:
    from course_attention import viz

    english = viz.course_map_figure()
    with using("zh"):
        chinese = viz.course_map_figure()
    assert language() == "en"  # put back after the block
    assert english.layout.title.text.startswith("The course")
    assert chinese.layout.title.text == "课程中的模型，由它们的前向传播画出"
    notes = [a.text for a in chinese.layout.annotations]
    assert any("第 6 章 · Transformer 块" in t for t in notes)
    links = re.findall(r'href="([^"]+)"', " ".join(notes))
    assert links and all("/zh/chapters/" in u for u in links)
    english_notes = " ".join(a.text for a in english.layout.annotations)
    english_links = re.findall(r'href="([^"]+)"', english_notes)
    assert english_links and not any("/zh/" in u for u in english_links)
