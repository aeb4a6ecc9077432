"""The Chinese site (中文版) under ``_build/html/zh/``, built by ``make strict-build``.

Every page is Chinese prose, draws its figures, stays on the site, and links to its English
counterpart (and back); search finds Chinese words. ``check_chinese_page`` runs on every page
where ``test_figure_text`` loads it at 1280 px.
"""

from __future__ import annotations

import json
import re

import pytest

from _site import (
    FIGURES_JS,
    KNOWN_CONSOLE_ERRORS,
    SITE,
    assert_shows_nothing_meant_for_a_notebook,
    pages,
)
from i18n_checks import english_runs

ZH = SITE / "zh"
pytestmark = pytest.mark.browser
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: Pages whose body is generated from English text: the API reference (autodoc reads the
#: package's docstrings, which are English); their title and introduction are checked.
ENGLISH_BODY = {"chapters/appendix_api.html": "article h1, article > section > p"}
#: The words every figure and live explorer of a page draws: titles, axis titles, legend names,
#: annotations, menu and slider labels, hover templates, and the explorers' control labels and
#: message lines (as drawn, after the page's own JavaScript ran).
WORDS_JS = """() => {
  const out = [];
  const add = (where, t) => { if (typeof t === 'string' && t.trim()) out.push([where, t]); };
  const title = t => (t && typeof t === 'object') ? t.text : t;
  document.querySelectorAll('.js-plotly-plot').forEach(gd => {
    const L = gd.layout || {};
    add('title', title(L.title));
    Object.keys(L).filter(k => /^[xy]axis/.test(k)).forEach(k => add(k, title(L[k].title)));
    (L.annotations || []).forEach(a => add('annotation', a.text));
    (L.updatemenus || []).forEach(m => (m.buttons || []).forEach(b => add('menu', b.label)));
    (L.sliders || []).forEach(s => { add('slider', (s.currentvalue || {}).prefix);
      (s.steps || []).forEach(st => add('slider step', st.label)); });
    (gd.data || []).forEach(tr => { add('trace name', tr.name);
      add('hovertemplate', tr.hovertemplate); });
  });
  document.querySelectorAll('.ca-control label, .ca-message, .ca-say, button').forEach(
    e => add('control', e.innerText));
  return out;
}"""


def _switch(html: str) -> str:
    m = re.search(r'<p class="language-switch"><a href="([^"]+)"', html)
    assert m, "no language switch on the page"
    return m.group(1)


@pytest.mark.parametrize("path", pages())
def test_each_page_links_to_its_counterpart_both_ways(path: str) -> None:
    english, chinese = SITE / path, ZH / path
    to_zh, to_en = _switch(english.read_text()), _switch(chinese.read_text())
    assert (english.parent / to_zh).resolve() == chinese.resolve()
    assert (chinese.parent / to_en).resolve() == english.resolve()


#: The course's own words for a screen reader and for a page without JavaScript: each figure's
#: and explorer's label, and the explorers' note (the theme's labels are course_attention.js's).
_LABELS = re.compile(
    r'<figure class="plotly-figure[^"]*" role="group" aria-label="([^"]*)"'
    r'|<p class="ca-noscript">(.*?)</p>', re.S)


@pytest.mark.parametrize("path", pages())
def test_what_a_screen_reader_or_a_page_without_javascript_gets_is_chinese(path: str) -> None:
    """Figures' and explorers' labels (``aria-label``) and the note shown without JavaScript,
    on every Chinese page: no run of three English words (code, quotes and tags aside)."""
    html = (ZH / path).read_text("utf-8")
    assert html.count('class="plotly-figure') == len(_LABELS.findall(html)) - html.count(
        'class="ca-noscript"'), f"zh/{path}: a figure without a label the pattern reads"
    from html import unescape

    texts = [unescape(a or b) for a, b in _LABELS.findall(html)]
    english = [t for t in texts if english_runs(re.sub(r"<[^>]+>", " ", t))]
    assert not english, f"zh/{path}: English for a screen reader or with no script: {english[:4]}"


def check_chinese_page(page, path: str, outside: list[str], errors: list[str]) -> None:
    """A loaded Chinese page ``zh/<path>`` (1280 px, figures drawn): its language is zh-CN, its
    figures drew, its prose and the words its figures and explorers draw are Chinese, nothing
    meant for a notebook shows, no request left the site (``data:`` URLs aside), no console
    error."""
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    for fig in page.evaluate(FIGURES_JS):
        assert fig["drawn"] and fig["traces"] > 0, f"{path}: figure {fig['id']} is empty"
    assert_shows_nothing_meant_for_a_notebook(page, path)
    # The prose (paragraphs and list items outside code, math and figures) is Chinese: most of
    # it carries Chinese characters; what does not is code names, numbers and formulas. The
    # API reference's docstrings (autodoc) and the bibliography's entries stay English.
    prose = page.evaluate("""(sel) => Array.from(document.querySelectorAll(
        sel)).filter(e => !e.closest('pre, .highlight, mjx-container, '
        + '.plotly-figure, .cell_output, .language-switch, table, dl.py, .citation'))
        .map(e => e.innerText.trim()).filter(t => t.length > 3)""",
        ENGLISH_BODY.get(path, "article p, article li"))
    assert prose, f"{path}: no prose found"
    chinese = [t for t in prose if _CJK.search(t)]
    assert len(chinese) >= 0.9 * len(prose), (
        f"{path}: {len(prose) - len(chinese)} of {len(prose)} paragraphs without Chinese, e.g. "
        + repr([t for t in prose if not _CJK.search(t)][:3]))
    # The figures and explorers speak Chinese too (their words translated from the English run)
    drawn = page.evaluate(WORDS_JS)
    english = [(where, t) for where, t in drawn if english_runs(t)]
    assert not english, f"{path}: English words drawn: {english[:6]}"
    outside = [u for u in outside if not u.startswith("data:")]
    assert not outside, f"{path}: requests left the site: {outside}"
    unexpected = [e for e in errors if not any(k in e for k in KNOWN_CONSOLE_ERRORS)]
    assert not unexpected, f"{path}: console errors: {unexpected}"
    if path == "chapters/00_welcome.html":
        page.screenshot(path=str(SITE.parent / "zh-welcome-1280px.png"))


@pytest.mark.parametrize("path", [p for p in pages() if p.startswith("chapters/0")
                                  or p.startswith("chapters/1")])
def test_colab_binder_and_download_open_the_chinese_reader_edition(path: str) -> None:
    html = (ZH / path).read_text(encoding="utf-8")
    name = path.removesuffix(".html").split("/")[-1]
    if not (ZH.parents[2] / "notebooks" / "zh" / f"{name}.ipynb").exists():
        assert name == "00_welcome", f"{name} has no Chinese reader edition"
        return
    assert f"/blob/main/notebooks/zh/{name}.ipynb" in html  # Colab
    assert f"urlpath=lab/tree/notebooks/zh/{name}.ipynb" in html  # Binder
    assert f'href="../_static/notebooks/{name}.ipynb"' in html
    assert (ZH / "_static" / "notebooks" / f"{name}.ipynb").is_file()


def test_the_chinese_search_finds_chinese_words() -> None:
    """Sphinx's Chinese search splits words with jieba: whole words are index terms."""
    text = (ZH / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1: text.rindex(")")])
    for word in ("注意力", "查询", "掩码", "梯度", "矩阵"):
        assert word in index["terms"], f"the Chinese search index lacks {word}"
