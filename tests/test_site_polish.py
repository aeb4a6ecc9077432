"""What a reader sees on the website beyond the numbers: legends that stay, tables, references,
buttons in the reader's language, and an accessibility audit (axe-core) of the built pages."""

from __future__ import annotations

import pytest

from _explorers import open_page, set_control, spec, standalone, wait_live

pytestmark = pytest.mark.browser

#: Each figure's legend (the names of its traces that show one) and its annotations' texts.
_KEYS_JS = """i => { const gd = CourseAttention.explorers[i].figure;
  return {legend: (gd._fullData || []).filter(t => t.showlegend !== false && t.name)
                                      .map(t => t.name),
          annotations: ((gd._fullLayout || {}).annotations || []).map(a => a.text)}; }"""


#: The same, of the first state as the notebook saved it, drawn by plotly in a div of its own.
_FIRST_KEYS_JS = """fig => { const div = document.createElement('div');
  document.body.appendChild(div);
  return Plotly.newPlot(div, fig.data, fig.layout).then(gd => {
    const keys = {legend: gd._fullData.filter(t => t.showlegend !== false && t.name)
                                     .map(t => t.name),
                  annotations: (gd._fullLayout.annotations || []).map(a => a.text)};
    Plotly.purge(div); div.remove(); return keys; }); }"""


def _first_state(page, explorer) -> dict:
    """The legend and annotations of ``explorer``'s first state (its saved figure)."""
    return page.evaluate(_FIRST_KEYS_JS, explorer.figure.to_plotly_json())


def _other_value(control: dict) -> object:
    """A value of ``control`` (from the page's spec) other than its current one."""
    if control.get("options"):
        values = [o["value"] for o in control["options"]]
        return next(v for v in values if v != control["value"])
    low, high = control["min"], control["max"]
    return high if control["value"] != high else low


def test_tiling_explorer_keeps_its_colour_key_and_panel_titles(tmp_path):
    """Chapter 11's live figure names its three colours as its first state does, after every
    control moves (it lost them on the first redraw)."""
    from _site import browser, serve
    from course_attention import widgets
    from course_attention.i18n import _
    from course_attention.viz.efficient import TILE_STATES

    explorer = widgets.tiling_explorer()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        first = _first_state(page, explorer)
        assert page.evaluate(_KEYS_JS, 0) == first  # the live figure as it opens
        assert first["legend"] == [_(s) for s in TILE_STATES]  # the key the notebook shows
        assert len(first["annotations"]) == 2  # the two panel titles
        for name, value in (("progress", 60), ("block_size", 8), ("seq_len", 20),
                            ("progress", 0), ("progress", 100)):
            set_control(page, 0, name, value)
            assert page.evaluate(_KEYS_JS, 0) == first, (name, value)
        assert not outside and not errors, errors


#: The explorers that draw from their spec alone (gpt, decoding and induction load a model).
_LIVE_KINDS = ["soft_lookup_explorer", "scaling_explorer", "self_attention_explorer",
               "mask_explorer", "multi_head_explorer", "positions_explorer", "rope_explorer",
               "tiling_explorer"]


@pytest.mark.parametrize("name", _LIVE_KINDS)
def test_every_live_figure_keeps_the_legend_and_annotations_of_its_first_state(name, tmp_path):
    """Move each control of an explorer once: its legend entries and the number of its
    annotations stay those of its first state (the figure the notebook draws)."""
    from _site import browser, serve
    from course_attention import widgets  # noqa: F401  (registers every explorer)
    from course_attention.explorers import EXPLORERS

    explorer = EXPLORERS[name]()
    standalone(explorer, tmp_path)
    with serve(tmp_path) as base, browser() as chromium:
        page, outside, errors = open_page(chromium, base + "index.html")
        wait_live(page)
        first = _first_state(page, explorer)
        moved = 0
        for control in spec(page, 0)["controls"]:
            if control.get("type") in {"text", "button", "preset"} or (
                "options" not in control and "min" not in control
            ):
                continue
            set_control(page, 0, control.get("id", control["name"]), _other_value(control))
            now = page.evaluate(_KEYS_JS, 0)
            assert now["legend"] == first["legend"], control["name"]
            assert len(now["annotations"]) == len(first["annotations"]), control["name"]
            moved += 1
        assert moved >= 1
        assert not outside and not errors, errors


# ---- the built site (``COURSE_SITE`` points at another copy of ``_build/html``) ------------


def _site():
    import os
    from pathlib import Path

    from _site import SITE

    return Path(os.environ.get("COURSE_SITE") or SITE)


def test_clicking_a_solutions_title_link_opens_it():
    """A solution's title is a link to its exercise; clicking it opens the solution (only the
    chevron did), and clicking the open solution's link goes to the exercise."""
    from _site import browser, serve

    with serve(_site()) as base, browser() as chromium:
        page, _, errors = open_page(chromium, base + "chapters/01_soft_lookup.html")
        page.wait_for_selector(".solution .toggle-button")
        box = page.locator(".solution.dropdown").first
        assert "toggle-hidden" in box.get_attribute("class")
        url = page.url
        box.locator(".admonition-title a").click()
        assert "toggle-hidden" not in box.get_attribute("class")
        assert page.url == url  # it opened instead of jumping away
        box.locator(".admonition-title a").click()
        assert page.url.endswith("#ex-soft-lookup-1")


def test_spot_the_bug_exercises_carry_a_difficulty_and_time():
    from course_book.course_time import QUESTION_MIN

    html = (_site() / "chapters" / "appendix_spot_the_bug.html").read_text()
    import re

    titles = re.findall(r'<p class="admonition-title">\s*<span class="caption-number">'
                        r"[^<]*</span>\s*\(([^)]*)\)", html)
    assert len(titles) == 13, titles
    assert all(re.fullmatch(rf"[★☆]{{3}} · ~{QUESTION_MIN} min", t) for t in titles), titles


def test_chinese_dropdowns_say_show_and_hide_in_chinese():
    site = _site()
    for page in ("chapters/01_soft_lookup.html", "chapters/appendix_spot_the_bug.html"):
        zh = (site / "zh" / page).read_text()
        assert "let toggleHintShow = '点击显示';" in zh and "Click to show" not in zh, page
        assert "let toggleHintHide = '点击隐藏';" in zh and "Click to hide" not in zh, page
        assert "let toggleHintShow = 'Click to show';" in (site / page).read_text()


def test_references_are_linked_and_sorted_by_author():
    """The references page lists its entries by author (the labels' order is the authors'),
    and every entry but the sources whose address is unknown carries a link."""
    import re

    from test_tables import _ADDRESS_UNKNOWN, _bibliography

    from course_book import book

    html = (_site() / "chapters" / "references.html").read_text()
    items = re.findall(r'<div class="citation" id="id\d+" role="[^"]+">(.*?)</div>', html, re.S)
    labels = [re.sub(r"<[^>]+>", "", re.search(r'<span class="label">(.*?)</span></span>',
                                               i, re.S).group(1)).strip("[]") for i in items]
    entries = _bibliography().entries
    assert len(items) == len(entries), labels
    keys = sorted(entries.values(), key=book.bibliography_sort_key)
    assert labels.index("Datawhale25") < labels.index("DCLT19") < labels.index("Elm90"), labels
    first = [book.bibliography_sort_key(e)[0][:1] for e in keys]
    assert [label[0].lower() for label in labels] == first, labels
    # (the theme marks a GitHub address "github reference external")
    linked = [bool(re.search(r'<a class="[^"]*\breference external" href="https?://', i))
              for i in items]
    assert sum(linked) == len(entries) - len(_ADDRESS_UNKNOWN), labels


# ---- accessibility: axe-core (WCAG 2.x A and AA) -----------------------------------------
# Every page of both books is audited where test_figure_text loads it at 1280 px (one load per
# page and width); here, that the audit finds what it must.

def test_the_accessibility_audit_finds_a_serious_violation(tmp_path):
    from _site import axe_violations, browser, serve

    (tmp_path / "index.html").write_text(
        '<!doctype html><html lang="en"><head><title>t</title></head><body><main>'
        '<p style="color:#999;background:#aaa">grey on grey</p><button></button>'
        '<img src="x.png"></main></body></html>')
    with serve(tmp_path) as base, browser() as chromium:
        page = chromium.new_page()
        page.goto(base + "index.html", wait_until="load")
        found = {v["id"]: v["impact"] for v in axe_violations(page)}
        page.close()
    assert found == {"color-contrast": "serious", "button-name": "critical",
                     "image-alt": "critical"}, found


#: The Contents entry the reader is at (the last heading above 30 % of the window; the last
#: entry at the page's end) and the one the page lights.
_CONTENTS_JS = """() => { const links=[...document.querySelectorAll('#pst-page-toc-nav a')];
  const line = document.querySelector('#pst-header').getBoundingClientRect().height
               + 0.3 * innerHeight;
  let at = null;
  for (const a of links) { const t = document.getElementById(a.hash.slice(1));
    const h = t.querySelector('h1,h2,h3,h4,h5,h6') || t;
    if (h.getBoundingClientRect().top <= line) at = a.hash; }
  if (innerHeight + scrollY >= document.documentElement.scrollHeight - 2)
    at = links[links.length - 1].hash;
  const lit = document.querySelectorAll('#pst-page-toc-nav a.active');
  return {at, lit: Array.from(lit).map(a => a.hash), all: links.map(a => a.hash),
          end: innerHeight + scrollY >= document.documentElement.scrollHeight - 2}; }"""


#: Resolves once the page has stopped scrolling (the same scrollY for 90 ms) and three frames
#: have been drawn since: a busy computer draws the wheel's smooth scroll late.
_SCROLL_ENDED = """() => new Promise(done => { let y = -1, same = 0;
  const frames = n => n ? requestAnimationFrame(() => frames(n - 1)) : done();
  (function tick() { if (scrollY === y) { if (++same >= 3) return frames(3); }
                     else { same = 0; y = scrollY; }
                     setTimeout(tick, 30); })(); })"""


@pytest.mark.parametrize("path", ["chapters/00_toolbox.html",
                                  "chapters/11_efficient_attention.html"])
def test_contents_highlight_follows_the_reading(path):
    """Scroll down a page with the mouse wheel: after each step the one lit Contents entry is
    the section being read, and every entry lights up on the way (Exercises and Summary too)."""
    from _site import browser, serve

    with serve(_site()) as base, browser() as chromium:
        page, _, errors = open_page(chromium, base + path, width=1280)
        page.wait_for_timeout(500)
        page.mouse.move(640, 450)
        lit = set()
        for _ in range(300):
            page.mouse.wheel(0, 400)
            page.evaluate(_SCROLL_ENDED)  # the page lights the entry two frames after it
            state = page.evaluate(_CONTENTS_JS)
            if state["at"] is not None:
                assert state["lit"] == [state["at"]], state
                lit.add(state["at"])
            if state["end"]:
                break
        assert state["end"] and lit == set(state["all"]), sorted(set(state["all"]) - lit)


@pytest.mark.parametrize("width", [1280, 375])
def test_wide_equations_and_tables_show_that_they_scroll(width):
    """A display equation or table wider than the column scrolls inside its box, can be reached
    by keyboard, and shows a shadow on its side (the background the stylesheet draws)."""
    from _site import browser, serve

    probe = """sel => Array.from(document.querySelectorAll(sel))
      .filter(e => e.scrollWidth > e.clientWidth + 1)
      .map(e => ({overflow: getComputedStyle(e).overflowX, tab: e.getAttribute('tabindex'),
                  shadow: getComputedStyle(e).backgroundImage.includes('radial-gradient')}))"""
    with serve(_site()) as base, browser() as chromium:
        page, _, _ = open_page(chromium, base + "chapters/11_efficient_attention.html", width)
        page.wait_for_function("() => window.MathJax && MathJax.startup && "
                               "document.querySelectorAll('mjx-container').length > 0",
                               timeout=20000)
        page.evaluate("() => MathJax.startup.promise")
        page.wait_for_timeout(300)
        page.evaluate("() => window.dispatchEvent(new Event('load'))")
        wide = page.evaluate(probe, 'mjx-container[display="true"]')
        wide += page.evaluate(probe, "div.ca-table")
        assert len(wide) >= (2 if width == 1280 else 3), wide  # the online softmax; the KV table
        assert all(w == {"overflow": "auto", "tab": "0", "shadow": True} for w in wide), wide


def test_code_in_a_table_is_never_broken_mid_word_on_a_phone():
    """Chapter 8's "One model, five sets of names" at 375 px: every code name sits on one line
    ("nn.Linear", not "nn.Linea" + "r"); the table scrolls instead, and shows that it does."""
    from _site import browser, serve

    with serve(_site()) as base, browser() as chromium:
        page, _, _ = open_page(chromium, base + "chapters/08_decoder_only.html", width=375)
        broken = page.evaluate("""() => Array.from(document.querySelectorAll('table code'))
            .filter(c => Math.round(c.getBoundingClientRect().height)
                         > 1.6 * parseFloat(getComputedStyle(c).lineHeight || 16))
            .map(c => c.textContent)""")
        lines = page.evaluate("""() => Array.from(document.querySelectorAll('table code'))
            .filter(c => new Set(Array.from(c.getClientRects()).map(r => Math.round(r.top)))
                         .size > 1).map(c => c.textContent)""")
        assert not broken and not lines, (broken, lines)
        box = page.evaluate("""() => { const b = document.querySelector(
              '.pst-scrollable-table-container');
            return [b.scrollWidth > b.clientWidth, getComputedStyle(b).overflowX,
                    getComputedStyle(b).backgroundImage.includes('radial-gradient')]; }""")
        assert box == [True, "auto", True], box
