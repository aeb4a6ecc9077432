"""Width of every explorer's controls in a real JupyterLab window (default 1024 px wide).

Needs JupyterLab (`make lab` installs it into .venv, or pass --jupyter from another venv that
has jupyterlab and the course installed) and Debian's chromium. Writes a notebook showing every
explorer, runs it in JupyterLab through the Run menu, then measures each slider's track and
whether its label is cut. A screenshot goes to _build/lab-layout.png.

    .venv/bin/python benchmarks/lab_layout.py [--width 1024] [--jupyter PATH]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
from playwright.sync_api import sync_playwright

from course_attention import widgets

ROOT = Path(__file__).resolve().parents[1]
MEASURE = """() => Array.from(
  document.querySelectorAll('.widget-slider, .widget-hslider')).map(el => {
  const label = el.querySelector('.widget-label');
  const track = el.querySelector('.slider-container, .noUi-target, .ui-slider');
  return {label: label ? label.textContent : '?',
          cut: label ? label.scrollWidth > label.clientWidth + 1 : false,
          track: track ? Math.round(track.getBoundingClientRect().width) : 0};
})"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--port", type=int, default=8890)
    parser.add_argument("--jupyter", default=str(Path(sys.executable).parent / "jupyter"))
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    nb = nbformat.v4.new_notebook()
    cells = ["import course_attention as ca\nfrom course_attention import widgets\nca.setup(0)"]
    cells += [f"widgets.{name}()" for name in sorted(widgets.EXPLORERS)]
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(nb, folder / "explorers.ipynb")
    server = subprocess.Popen(
        [args.jupyter, "lab", "--no-browser", f"--port={args.port}", "--ip=127.0.0.1",
         "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={folder}",
         "--allow-root"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api", timeout=2)
                break
            except OSError:
                time.sleep(1)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(viewport={"width": args.width, "height": 900})
            page.goto(f"{url}/lab/tree/explorers.ipynb", timeout=120_000)
            page.wait_for_selector(".jp-Notebook", timeout=120_000)
            time.sleep(5)
            page.get_by_role("menuitem", name="Run").click()
            page.get_by_text("Run All Cells", exact=True).click()
            expected = len(cells) - 1
            for _ in range(120):
                if len(page.query_selector_all(".widget-html")) >= expected:
                    break
                time.sleep(1)
            time.sleep(3)
            rows = page.evaluate(MEASURE)
            (ROOT / "_build").mkdir(exist_ok=True)
            page.screenshot(path=str(ROOT / "_build" / "lab-layout.png"))
            browser.close()
    finally:
        server.terminate()
    for row in rows:
        state = "CUT" if row["cut"] else "ok"
        print(f"{row['label']:24} track {row['track']:4d} px  label {state}")
    narrowest = min(row["track"] for row in rows)
    cut = sum(row["cut"] for row in rows)
    print(
        f"window {args.width} px: {len(rows)} sliders, narrowest slider track: {narrowest} px "
        f"(target ≥ 200), labels cut: {cut}"
    )


if __name__ == "__main__":
    main()
