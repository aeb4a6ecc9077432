"""Sizes of the built site's pages and shared assets, and time to the first figure.

Run after ``make book``. Targets: each chapter page ≤ 250 KB of HTML; first figure ≤ 1.5 s.

    .venv/bin/python benchmarks/site.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _site import SITE, browser, pages, serve  # noqa: E402


def kb(n: int) -> str:
    return f"{n / 1024:8.1f} KB"


def first_figure_seconds(chromium, url: str) -> float | None:
    page = chromium.new_page()
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    try:
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=10000)
    except Exception:  # noqa: BLE001 - a page without figures
        page.close()
        return None
    seconds = time.perf_counter() - start
    page.close()
    return seconds


def main() -> None:
    if not (SITE / "index.html").exists():
        sys.exit("build the book first: make book")
    with serve() as base, browser() as chromium:
        print(f"{'page':40} {'HTML':>11} {'figures':>8} {'first figure':>13}")
        for path in pages():
            html = (SITE / path).read_text()
            seconds = first_figure_seconds(chromium, base + path)
            first = "-" if seconds is None else f"{seconds:.2f} s"
            n_figures = html.count('class="plotly-graph-div"')
            print(f"{path:40} {kb(len(html.encode()))} {n_figures:8d} {first:>13}")
    print("\nshared assets")
    static = SITE / "_static"
    print(f"{'plotly.min.js':40} {kb((static / 'plotly.min.js').stat().st_size)}")
    mathjax = sum(p.stat().st_size for p in (static / "mathjax").rglob("*") if p.is_file())
    print(f"{'mathjax/ (bundle + fonts)':40} {kb(mathjax)}")
    everything = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    print(f"{'whole site':40} {kb(everything)}")


if __name__ == "__main__":
    main()
