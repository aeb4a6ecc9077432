"""Figure titles wrapped by the width they are drawn at (issue 25, item 5).

A notebook cannot measure its figures, so Python wraps a title for a phone
(``viz.core.wrap_title``, 34 characters a line; a panel's 10). The site wraps every figure's
titles again after each draw by the width it is drawn at (``course_book/static/
course_titles.js``): it joins the lines Python's wrap broke, and only those, then breaks them
where the drawn text meets the room. ``test_figure_text`` checks every figure of the site with it
(a line that fits is drawn whole; nothing overlaps or is cut, at 375 and 1280 px); here, the
wrap itself, and an explorer's title before and after the reader moves a control.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _explorers import set_control, wait_live
from _site import SITE, browser, serve, wait_for_figures, wait_for_titles
from course_attention.i18n.outputs import WRAP_WIDTHS
from course_attention.viz.core import PANEL_CHARS, TITLE_CHARS, wrap_title

pytestmark = pytest.mark.browser

SCRIPT = Path(__file__).resolve().parents[1] / "src" / "course_book" / "static" / "course_titles.js"
FONT = "16px sans-serif"
#: Titles of the book (and one with an entity), each longer than a phone's line.
TITLES = [
    "Softmax saturation against d_k (16 keys)",
    "Gradient at the query, per entry, against d_k",
    "Loss on the repeated tokens falls within 100 steps",
    "mask (green = may attend)",
    "Scores &amp; weights of one query, before and after the softmax",
]


@pytest.fixture(scope="module")
def blank():
    with browser() as chromium:
        page = chromium.new_page()
        page.set_content("<!doctype html><html><body></body></html>")
        page.add_script_tag(path=str(SCRIPT))
        yield page


def wrap(page, text: str, chars: int, room: float, font: str = FONT) -> list[str]:
    return page.evaluate("([t, n, r, f]) => CourseTitles.wrap(t, n, r, f)",
                         [text, chars, room, font])


def width(page, text: str, font: str = FONT) -> float:
    return page.evaluate("([t, f]) => CourseTitles.width(t, f)", [text, font])


def test_the_script_wraps_at_pythons_widths():
    script = SCRIPT.read_text()
    assert f"TITLE_CHARS = {TITLE_CHARS}, PANEL_CHARS = {PANEL_CHARS};" in script
    assert {TITLE_CHARS, PANEL_CHARS} <= set(WRAP_WIDTHS)


def test_the_site_joins_exactly_the_lines_pythons_wrap_broke(blank):
    for title in TITLES:
        for chars in (TITLE_CHARS, PANEL_CHARS):
            wrapped = wrap_title(title, chars)
            assert "<br>" in wrapped or len(title) <= chars
            assert blank.evaluate("([t, n]) => CourseTitles.unwrapped(t, n)",
                                  [wrapped, chars]) == [title]
    # an author's break is no wrap (the first line had room for the next word), nor is a line
    # with markup or a Chinese one: they stay
    for kept in ("Causal mask<br>4 queries", "Layer 1<br><sup>head 2</sup>",
                 "注意力权重<br>随温度变化"):
        assert blank.evaluate("t => CourseTitles.unwrapped(t, 34)", kept) == kept.split("<br>")


def test_a_line_breaks_where_its_drawn_text_meets_its_room(blank):
    title = TITLES[0]
    assert wrap(blank, wrap_title(title), TITLE_CHARS, 1000) == [title]  # 1280 px: one line
    for room in (100, 180, 240):
        lines = wrap(blank, wrap_title(title), TITLE_CHARS, room)
        assert " ".join(lines) == title and len(lines) >= 2
        assert all(width(blank, line) <= room for line in lines)
        if room > 100:  # even lines: no word left alone where two fit
            assert all(" " in line for line in lines), lines
    # as few lines as the room allows: one line fewer would not fit
    lines = wrap(blank, title, TITLE_CHARS, 160)
    assert width(blank, title) > 160 * (len(lines) - 1)


def test_a_chinese_line_breaks_between_characters_never_before_a_comma(blank):
    line = "注意力权重随温度变化，温度越低，权重越集中于最相似的键"
    lines = wrap(blank, line, TITLE_CHARS, 90)
    assert "".join(lines) == line and len(lines) >= 3
    assert all(width(blank, x) <= 90 for x in lines)
    assert not any(x.startswith("，") for x in lines)


TITLE_LINES_JS = "i => CourseAttention.explorers[i].figure.layout.title.text"


@pytest.mark.parametrize("width_px", [375, 1280])
def test_an_explorers_title_wraps_alike_before_and_after_a_redraw(width_px):
    """Chapter 1's explorer, whose title (41 characters) Python's wrap for a phone breaks: on the
    site it is wrapped by the drawn width, the same before and after the reader moves a
    control and back, and on one line at 1280 px."""
    page_path = "chapters/01_soft_lookup.html"
    expected = (SITE / page_path).read_text().count('class="plotly-graph-div"')
    with serve() as base, browser() as chromium:
        page = chromium.new_page(viewport={"width": width_px, "height": 900})
        page.goto(base + page_path)
        wait_live(page)
        wait_for_figures(page, expected)
        first = page.evaluate(TITLE_LINES_JS, 0)
        name, value, low, high = page.evaluate(
            "i => { const [n, c] = Object.entries(CourseAttention.explorers[i].controls)"
            ".find(([, c]) => c.spec.type === 'range');"
            " return [n, c.read(), c.spec.min, c.spec.max]; }", 0)
        set_control(page, 0, name, high if value != high else low)
        wait_for_titles(page)
        assert page.evaluate(TITLE_LINES_JS, 0) != first  # another state, another title
        set_control(page, 0, name, value)
        wait_for_titles(page)
        assert page.evaluate(TITLE_LINES_JS, 0) == first
        source = page.evaluate("i => CourseAttention.explorers[i].figure._caTitles.source.title",
                               0)
        assert "<br>" in wrap_title(source)  # Python's wrap, for a phone, breaks it
        if width_px == 1280:
            assert first == source  # one line
