"""conftest.py leaves unimported the test files a stage's ``-m`` expression cannot select."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import _marks_selected, pytest_ignore_collect, spread

from _site_explorers import FULL_ON_STANDALONE


@pytest.mark.parametrize(("expr", "marks"), [
    ("lab", ["lab"]), ("claims", ["claims"]), ("notebooks or browser", ["notebooks", "browser"]),
    ("not notebooks and not browser and not lab and not claims", None), ("", None),
    ("browser and notebooks", None), ("lab or", None), ("not lab", None),
])
def test_only_marks_joined_by_or_narrow_the_files(expr, marks):
    assert _marks_selected(expr) == marks


def test_a_file_is_skipped_only_when_it_names_none_of_the_marks(tmp_path):
    def config(expr):
        return SimpleNamespace(getoption=lambda name: expr)

    plain = tmp_path / "test_plain.py"
    plain.write_text("def test_x():\n    pass\n  # not a mark.labelled thing\n")
    marked = tmp_path / "test_marked.py"
    marked.write_text("import pytest\n\npytestmark = pytest.mark.browser\n")
    helper = tmp_path / "_helper.py"
    helper.write_text("")
    assert pytest_ignore_collect(plain, config("lab")) is True
    assert pytest_ignore_collect(marked, config("notebooks or browser")) is None
    assert pytest_ignore_collect(marked, config("claims")) is True
    assert pytest_ignore_collect(plain, config("not lab")) is None  # the unit stage: every file
    assert pytest_ignore_collect(helper, config("lab")) is None


def test_the_longest_items_go_to_different_workers_first():
    # xdist's load scheduling first hands each worker two consecutive items
    assert spread(list("abcdefg"), 3) == list("adbecfg")
    assert spread(list("abcd"), 2) == list("acbd")
    assert spread(list("abc"), 2) == list("abc")  # fewer than two each: sent one at a time
    assert spread(list("abcd"), 1) == list("abcd")


def test_the_kinds_sampled_on_the_site_run_in_full_on_their_standalone_page():
    """The site's pages take held-out inputs for these kinds: their standalone test must run
    the check's full grid (``check(page, 0)``, no ``n``) and assert its exact count."""
    for kind in FULL_ON_STANDALONE:
        text = (Path(__file__).parent / f"test_live_{kind}.py").read_text(encoding="utf-8")
        assert re.search(r"assert check\(page, 0\) == |n = check\(page, 0\)\n", text), kind
