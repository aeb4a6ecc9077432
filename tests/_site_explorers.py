"""On the built site, every live explorer runs in Chromium and equals the package's numbers.

Each kind's ``check(page, i, root)`` lives in ``tests/test_live_<kind>.py`` (where a standalone
page runs it in seconds); :func:`check_explorers` runs the same checks on a page of
``_build/html`` with the chapter's own explorers, the trained models included. It runs inside
``test_figure_text``'s 1280-px load of every page (one load per page and width serves the text
measures, the accessibility audit, these checks and the page checks of ``test_site``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

from _explorers import load_model, wait_live
from _site import SITE, pages
from course_attention.i18n import using
from course_attention.i18n.outputs import TEXT_KEYS

HERE = Path(__file__).parent
#: The chapters whose main explorer the issue names; each must be live on its page.
LIVE_CHAPTERS = ("01_", "02_", "04_", "05_", "07_", "08_", "09_")
#: Held-out inputs a check takes on a Chinese page (where it has a size ``n``): the page carries the
#: English page's numbers (asserted first), so its check asks that each path run in Chinese.
ZH_INPUTS = 6
#: The kinds whose standalone test (``tests/test_live_<kind>.py``) runs the check's full grid on
#: the same page code, untrained: on the English page too they take ``ZH_INPUTS`` held-out inputs.
#: The kinds with a trained model (``gpt``, ``induction``, ``decoding``) run in full on the page,
#: with the chapter's model, and sampled on their standalone page.
FULL_ON_STANDALONE = ("mask", "positions", "rope", "scaling", "tiling", "long_context",
                      "latent", "linear")
#: What the checks compared, by page (written for the closing note and benchmarks/site.py).
REPORT = SITE.parent / "explorer-checks.json"


def _checks() -> dict:
    return {
        p.stem.removeprefix("test_live_"): importlib.import_module(p.stem).check
        for p in sorted(HERE.glob("test_live_*.py"))
    }


def write_report(report: dict) -> None:
    """Add what the checks compared to :data:`REPORT` (each xdist worker adds its pages)."""
    if report:
        old = json.loads(REPORT.read_text()) if REPORT.exists() else {}
        REPORT.write_text(json.dumps(old | report, indent=1))


LABELLED_JS = """root => Array.from(root.querySelectorAll(
  '.ca-controls input, .ca-controls select, .ca-controls button')).filter(el => {
    if (el.tagName === 'BUTTON') return !(el.textContent.trim() || el.getAttribute('aria-label'));
    return !(el.labels && el.labels.length) && !el.getAttribute('aria-label');
  }).map(el => el.outerHTML.slice(0, 80))"""


def explorer_pages() -> list[str]:
    """The chapters' pages, and their Chinese counterparts where they hold an explorer."""
    chapters = [p for p in pages() if p.startswith("chapters/")]
    return chapters + [f"zh/{p}" for p in chapters if (SITE / "zh" / p).exists()
                       and 'class="plotly-figure ca-explorer"' in (SITE / p).read_text()]


SPEC = re.compile(r'<script type="application/json" class="ca-spec">(.*?)</script>', re.S)


def _specs(path: Path) -> list[dict]:
    """The explorer specs a built page holds, in order, each model file's URL replaced by what
    the file holds (the two books write the same weights, under names of their own)."""
    specs = [json.loads(m.replace("<\\/", "</")) for m in SPEC.findall(path.read_text())]
    for spec in specs:
        if spec.get("model"):
            spec["model"]["url"] = json.loads((path.parent / spec["model"]["url"]).read_text())
    return specs


def _numbers(value):
    """A spec less its words (the values of ``TEXT_KEYS``, the category labels ``x``/``y``):
    what the Chinese page must share with the English one."""
    if isinstance(value, dict):
        return {k: "…" if k in TEXT_KEYS or (k in ("x", "y") and _words(v)) else _numbers(v)
                for k, v in value.items()}
    return [_numbers(v) for v in value] if isinstance(value, list) else value


def _words(value) -> bool:
    return isinstance(value, list) and any(isinstance(v, str) for v in value)


def check_explorers(page, path: str, report: dict) -> None:
    """Every explorer on the loaded ``page`` (the site's ``path``) is live, labels its controls
    and equals the package; what it compared goes to ``report``. Moves the explorers' controls:
    call it after any check that reads the page as loaded.

    On the Chinese pages the same checks run with the package speaking Chinese: the page's
    words come from the English run's spec, translated (``course_attention.i18n.outputs``).
    A Chinese page's explorers hold the English page's numbers (data, controls, model, first
    figure), asserted here; so there each check takes ``ZH_INPUTS`` held-out inputs, enough to
    run every path in Chinese, and the English page's check carries the full count (or, for
    :data:`FULL_ON_STANDALONE`, the kind's standalone test)."""
    zh = path.startswith("zh/")
    if zh:
        english = [_numbers(s) for s in _specs(SITE / path.removeprefix("zh/"))]
        assert [_numbers(s) for s in _specs(SITE / path)] == english, (
            f"{path}: its explorers' numbers differ from the English page's")
    with using("zh" if zh else "en"):
        _check_page(page, report, path, ZH_INPUTS if zh else None)


def _check_page(page, report, path, inputs=None):
    html = (SITE / path).read_text()
    n = html.count('class="plotly-figure ca-explorer"')
    name = Path(path).name
    if name.startswith(LIVE_CHAPTERS):
        assert n >= 1, f"{path}: the chapter's main explorer is not live"
    if n == 0:
        return
    checks = _checks()
    wait_live(page, n)
    found = []
    for i in range(n):
        spec = page.evaluate("i => CourseAttention.explorers[i].spec", i)
        kind = spec["kind"]
        assert kind in checks, f"{path}: explorer {i} ({kind}) has no check in tests/"
        root = page.locator("figure.ca-explorer").nth(i)
        unlabelled = root.evaluate(LABELLED_JS)
        assert not unlabelled, f"{path}: controls without a label: {unlabelled}"
        if spec.get("model"):
            assert spec["model"]["bytes"] <= 1_000_000, f"{path}: model file over 1 MB"
            load_model(page, i)
        held_out = ZH_INPUTS if kind in FULL_ON_STANDALONE else inputs
        sized = held_out is not None and "n" in inspect.signature(checks[kind]).parameters
        compared = checks[kind](page, i, SITE, **({"n": held_out} if sized else {}))
        assert compared > 0
        controls = page.evaluate("i => Object.keys(CourseAttention.explorers[i].controls)", i)
        redraws = page.evaluate("i => CourseAttention.explorers[i].redrawMs", i)
        model_bytes = (spec.get("model") or {}).get("bytes")
        found.append({"kind": kind, "controls": len(controls), "compared": compared,
                      "redraws": len(redraws), "model_bytes": model_bytes})
    report[path] = found
