"""Sizes of the built site's pages and assets, time to the first figure, and the live explorers.

Run after ``make book``, on a quiet machine. Targets: each chapter page ≤ 250 KB of HTML; first
figure ≤ 1.0 s; a live math explorer redraws in ≤ 16 ms per input event (median); chapter 7's
model decodes 8 digits greedily in ≤ 50 ms (median); each model file ≤ 1 MB.

    .venv/bin/python benchmarks/site.py

The last line sums it up: ``explorers N: redraw median X ms (slowest explorer Y ms), compute
median Z ms; decode 8 digits D ms; largest model M KB; largest chapter page P KB; slowest first
figure F s``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _explorers import load_model, set_control, spec, wait_live  # noqa: E402
from _site import SITE, browser, pages, serve  # noqa: E402

#: Input events per control when timing an explorer; 8-digit strings for chapter 7's model.
EVENTS = 30
DIGITS = ["31415926", "27182818", "16180339", "14142135", "57721566", "12345678", "98765432",
          "11235813", "30102999", "69314718", "44721359", "22360679"]


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


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def time_explorers(chromium, url: str) -> list[dict]:
    """Drive every explorer of a page: each range and select control through its values, one
    input event at a time; chapter 7's digits box through 8-digit strings. Times in ms."""
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    page.goto(url, wait_until="load")
    n = page.evaluate("document.querySelectorAll('figure.ca-explorer').length")
    wait_live(page, n)
    out = []
    for i in range(n):
        s = spec(page, i)
        row = {"kind": s["kind"], "model_kb": None, "decode_ms": None}
        if s.get("model"):
            start = time.perf_counter()
            load_model(page, i)
            row["model_kb"] = s["model"]["bytes"] / 1024
            row["load_s"] = time.perf_counter() - start
        page.evaluate("i => { const e = CourseAttention.explorers[i];"
                      " e.redrawMs.length = 0; e.computeMs.length = 0; }", i)
        controls = page.evaluate("i => Object.values(CourseAttention.explorers[i].controls)"
                                 ".map(c => c.spec)", i)
        for c in controls:
            if c["type"] == "range":
                lo, hi, step = c["min"], c["max"], c["step"]
                n_steps = max(1, round((hi - lo) / step))
                values = [lo + step * round(n_steps * k / (EVENTS - 1)) for k in range(EVENTS)]
            elif c["type"] == "select":
                values = [o["value"] for o in c["options"]] * 3
            else:
                continue
            for v in values:
                set_control(page, i, c["name"], v)
        timings = page.evaluate("i => [CourseAttention.explorers[i].redrawMs,"
                                " CourseAttention.explorers[i].computeMs]", i)
        row["redraw_ms"], row["compute_ms"] = median(timings[0]), median(timings[1])
        row["events"] = len(timings[0])
        if s["kind"] == "decoding":
            page.evaluate("i => { CourseAttention.explorers[i].redrawMs.length = 0; }", i)
            for digits in DIGITS * 2:
                set_control(page, i, "digits", digits)
            row["decode_ms"] = median(page.evaluate(
                "i => CourseAttention.explorers[i].redrawMs", i))
        out.append(row)
    page.close()
    return out


def main() -> None:
    if not (SITE / "index.html").exists():
        sys.exit("build the book first: make book")
    firsts, chapter_sizes, explorers = [], [], []
    with serve() as base, browser() as chromium:
        print(f"{'page':40} {'HTML':>11} {'figures':>8} {'first figure':>13}")
        for path in pages():
            html = (SITE / path).read_text()
            seconds = first_figure_seconds(chromium, base + path)
            first = "-" if seconds is None else f"{seconds:.2f} s"
            n_figures = html.count('class="plotly-graph-div"')
            print(f"{path:40} {kb(len(html.encode()))} {n_figures:8d} {first:>13}")
            if seconds is not None:
                firsts.append(seconds)
            if Path(path).name[:2].isdigit():  # the numbered chapters (not the appendices)
                chapter_sizes.append(len(html.encode()))
            if 'class="plotly-figure ca-explorer"' in html:
                explorers += [(path, row) for row in time_explorers(chromium, base + path)]
        print(f"\n{'live explorer':40} {'events':>7} {'redraw':>10} {'compute':>10} "
              f"{'decode 8':>10} {'model':>10}")
        for path, row in explorers:
            name = f"{Path(path).stem[:24]} · {row['kind']}"
            decode = "-" if row["decode_ms"] is None else f"{row['decode_ms']:.1f} ms"
            model = "-" if row["model_kb"] is None else f"{row['model_kb']:.0f} KB"
            print(f"{name:40} {row['events']:7d} {row['redraw_ms']:7.1f} ms "
                  f"{row['compute_ms']:7.2f} ms {decode:>10} {model:>10}")
    print("\nshared assets")
    static = SITE / "_static"
    print(f"{'plotly.min.js':40} {kb((static / 'plotly.min.js').stat().st_size)}")
    mathjax = sum(p.stat().st_size for p in (static / "mathjax").rglob("*") if p.is_file())
    print(f"{'mathjax/ (bundle + fonts)':40} {kb(mathjax)}")
    runtime = sum(p.stat().st_size for p in (static / "explorers").glob("*.js"))
    print(f"{'explorers/*.js (the runtime)':40} {kb(runtime)}")
    everything = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    print(f"{'whole site':40} {kb(everything)}")
    math_rows = [r for _, r in explorers if r["model_kb"] is None]
    redraws = [r["redraw_ms"] for r in math_rows]
    decode = [r["decode_ms"] for _, r in explorers if r["decode_ms"] is not None]
    models = [r["model_kb"] for _, r in explorers if r["model_kb"] is not None]
    print(
        f"explorers {len(explorers)}: redraw median {median(redraws):.1f} ms (slowest explorer "
        f"{max(redraws, default=float('nan')):.1f} ms), compute median "
        f"{median([r['compute_ms'] for r in math_rows]):.2f} ms; decode 8 digits "
        f"{(decode or [float('nan')])[0]:.1f} ms; largest model {max(models, default=0):.0f} KB; "
        f"largest chapter page {max(chapter_sizes) / 1024:.1f} KB; slowest first figure "
        f"{max(firsts):.2f} s"
    )


if __name__ == "__main__":
    main()
