"""The HTML of the tables code prints (chapters 5 and 11): the site's table style, numbers
right-aligned, every cell the text of the plain-text table."""

from __future__ import annotations

import html
import re

import pytest

from course_attention import viz
from course_attention.viz.efficient import kv_cache_view
from course_attention.viz.multi_head import Table


def _cells(markup: str, tag: str) -> list[tuple[str, str]]:
    """``(class attribute, text)`` of every ``<tag>`` cell, in order."""
    found = re.findall(rf'<{tag}(?: class="([^"]*)")?>(.*?)</{tag}>', markup)
    return [(cls, html.unescape(re.sub(r"</?code>", "", text))) for cls, text in found]


def test_table_sits_in_a_scrolling_box_with_the_site_class():
    markup = Table(["a", "b"], [["x", "1"]])._repr_html_()
    assert markup.startswith('<div class="ca-table"><table>') and markup.endswith("</table></div>")


def test_numeric_columns_are_right_aligned_and_text_columns_are_code():
    rows = [{"model": "GPT-3 175B", "layers": 96, "KV bytes / token": 4_718_592,
             "GiB at 4096 tokens": 18.0, "saving": 1.0},
            {"model": "Llama 2 70B", "layers": 80, "KV bytes / token": 327_680,
             "GiB at 4096 tokens": 1.25, "saving": 8.0}]
    table = kv_cache_view(rows)
    markup = table._repr_html_()
    head, body = _cells(markup, "th"), _cells(markup, "td")
    assert [c for c, _ in head] == ["", "ca-num", "ca-num", "ca-num", "ca-num"]
    assert body[:5] == [("", "GPT-3 175B"), ("ca-num", "96"), ("ca-num", "4,718,592"),
                        ("ca-num", "18.00"), ("ca-num", "1×")]
    assert "<td><code>GPT-3 175B</code></td>" in markup  # names stay code
    # the numbers themselves are the plain-text table's, cell for cell
    assert [t for _, t in body] == [c for row in table.rows for c in row]


def test_adjacent_numbers_are_separate_cells_never_one_string():
    """The bug the site showed ("4,718,59218.00"): two numbers in one cell. Each is its own
    right-aligned cell, which the stylesheet pads."""
    rows = [{"bytes": 4_718_592, "GiB": 18.0}]
    body = _cells(kv_cache_view(rows)._repr_html_(), "td")
    assert body == [("ca-num", "4,718,592"), ("ca-num", "18.00")]


def test_a_column_with_one_word_is_not_numeric():
    markup = Table(["n", "mixed"], [["1", "2"], ["3", "(N, h, T, T)"]])._repr_html_()
    assert [c for c, _ in _cells(markup, "th")] == ["ca-num", ""]
    assert _cells(markup, "td")[3] == ("", "(N, h, T, T)")


@pytest.mark.parametrize("text", ["1", "-3", "−0.5", "4,718,592", "18.00", "8×", "12 %", "1024"])
def test_numbers_are_recognised(text):
    markup = Table(["x"], [[text]])._repr_html_()
    assert _cells(markup, "td") == [("ca-num", text)]


@pytest.mark.parametrize("text", ["GQA", "1,2,3,", "(2, 3)", "1e-3 ok", "", "12,34"])
def test_non_numbers_are_not(text):
    markup = Table(["x"], [[text]])._repr_html_()
    assert _cells(markup, "td")[0][0] == ""


def test_cost_table_keeps_its_numbers_and_escapes_text():
    costs = {1: {"Q K^T": 4_718_592, "<P V>": 2_621_440}, 8: {"Q K^T": 4_718_592, "<P V>": 12}}
    table = viz.cost_table(costs)
    markup = table._repr_html_()
    assert "&lt;P V&gt;" in markup and "<P V>" not in markup
    assert [t for _, t in _cells(markup, "td")] == [c for row in table.rows for c in row]
    assert all(c == "ca-num" for c, _ in _cells(markup, "td"))
    assert repr(table).splitlines()[2].split() == ["1", "4,718,592", "2,621,440", "7,340,032"]


def test_shape_table_shapes_are_code():
    from types import SimpleNamespace

    steps = [SimpleNamespace(step="scores", dims="(N, h, T, T)", shape=(2, 4, 5, 5))]
    markup = viz.shape_table(steps)._repr_html_()
    assert "<td><code>(2, 4, 5, 5)</code></td>" in markup


def test_a_table_needs_as_many_cells_as_columns():
    with pytest.raises(ValueError, match="2 columns"):
        Table(["a", "b"], [["1"]])


# ---- the references page (issue 25, item 10): no build needed ------------------------------

#: Sources whose address the course does not know (blog posts cited by the spot-the-bug
#: appendix, read as copies): each still needs its URL. A new entry without a link fails.
_ADDRESS_UNKNOWN = {"happyllm_summary_ch2", "happyllm03notes2025", "hanbingtao2025transformer2",
                    "transformerseries3"}


def _bibliography():
    from pybtex.database import parse_file

    from _notebooks import ROOT

    return parse_file(str(ROOT / "references.bib"))


def test_every_reference_carries_a_doi_arxiv_id_or_url():
    entries = _bibliography().entries
    unlinked = {k for k, e in entries.items() if not {"doi", "eprint", "url"} & set(e.fields)}
    assert unlinked == _ADDRESS_UNKNOWN
    for key, entry in entries.items():
        if "eprint" in entry.fields:
            assert re.fullmatch(r"\d{4}\.\d{4,5}", entry.fields["eprint"]), key
            assert entry.fields.get("archiveprefix") == "arXiv", key
        if "url" in entry.fields:
            assert entry.fields["url"].startswith(("https://", "http://")), key


def test_references_are_sorted_by_author_with_the_sites_style():
    """The style ``_config.yml`` names formats the entries in author order: "Datawhale" among
    the Ds (pybtex's own key put it last, after a brace), an entry without an author by its
    ``key``, never all first."""
    import yaml
    from pybtex.plugin import find_plugin

    from _notebooks import ROOT
    from course_book import book

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["config"]["bibtex_default_style"] == book.BIB_STYLE
    book._register_bibliography_style()
    style = find_plugin("pybtex.style.formatting", book.BIB_STYLE)()
    entries = _bibliography().entries
    formatted = list(style.format_entries(entries.values()))
    keys = [book.bibliography_sort_key(entries[e.key]) for e in formatted]
    assert keys == sorted(keys) and len(formatted) == len(_bibliography().entries)
    first = [k[0].split()[0] for k in keys]
    assert first == sorted(first)  # by the first author's last name (or the key)
    order = [e.key for e in formatted]
    assert order.index("datawhale2025happyllm") < order.index("devlin2019bert")
    assert order[0] == "ainslie2023gqa" and order[-1] == "zhang2019root"
    assert order.index("happyllm_summary_ch2") > order.index("hanbingtao2025transformer2")
    # the links are in the formatted text
    text = {e.key: e.text.render_as("html") for e in formatted}
    assert 'href="https://arxiv.org/abs/1706.03762"' in text["vaswani2017attention"]
    assert 'href="https://doi.org/10.1162/neco.1997.9.8.1735"' in text["hochreiter1997long"]
