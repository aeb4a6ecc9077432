"""Execute every reader notebook the way Colab would: Colab's library versions and renderer.

Colab opens the reader editions (``notebooks/``, written from ``chapters/`` by ``make
notebooks``), so those are what this runs.

Run by ``make colab-check`` inside ``.venv-colab``: plotly 5.24.1, ipywidgets 7.7.1 and
transformers 4.57.6 (Colab's runtime; chapter 8 converts its GPT to Hugging Face's), the oldest
numpy that pyproject.toml admits, and the course installed on top without upgrading any of them.
``COLAB_RELEASE_TAG`` (set by Colab) switches ``ca.setup`` to the Colab renderer; the check
asserts that every figure went through it.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _notebooks import ROOT, execute, notebooks  # noqa: E402

COLAB_HTML = "s.onload = draw"  # the Colab renderer waits for plotly.js before drawing
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # what Colab draws of an explorer
EXPLORER_MIME = "application/vnd.course-attention.explorer+json"  # what the website draws


def check(path: Path) -> tuple[bool, str]:
    """Run one reader notebook; (passed, the line to print)."""
    start = time.perf_counter()
    try:
        nb, _ = execute(path)
    except Exception as error:  # noqa: BLE001 - report every chapter, then fail
        return False, f"FAIL {path.stem}: {type(error).__name__}: {str(error)[-400:]}"
    outputs = [o for c in nb.cells for o in c.get("outputs", []) if "data" in o]
    colab = sum(COLAB_HTML in o["data"].get("text/html", "") for o in outputs)
    plotly_json = sum("application/vnd.plotly.v1+json" in o["data"] for o in outputs)
    live = [o["data"] for o in outputs if EXPLORER_MIME in o["data"]]
    no_widget = sum(WIDGET_MIME not in d for d in live)
    # every chapter draws: figures through the Colab renderer, or explorers (their widget)
    if plotly_json or no_widget or (not colab and not live and path.stem[:2].isdigit()):
        return False, (f"FAIL {path.stem}: {colab} Colab figures, {plotly_json} plotly JSON "
                       f"outputs, {no_widget} explorers without their widget view")
    return True, (f"ok   {path.stem}: {colab} figures via the Colab renderer, {len(live)} "
                  f"explorers (widget + page spec), {time.perf_counter() - start:.1f} s")


def main() -> int:
    os.environ.setdefault("COLAB_RELEASE_TAG", "colab-like-check")
    libs = ("numpy", "plotly", "ipywidgets", "torch", "ipykernel", "transformers")
    print("versions:", ", ".join(f"{name} {version(name)}" for name in libs))
    paths = [ROOT / "notebooks" / chapter.name for chapter in notebooks()]
    # two kernels at a time, one per core (the chapters' timings interleave what they compare)
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(check, paths))
    for _, line in results:
        print(line)
    passed = sum(ok for ok, _ in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
