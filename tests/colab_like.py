"""Execute every chapter as on another computer: Colab's library versions and another CPU's kernels.

``make test`` executes the book three times: the strict build (this machine's kernels, the
book's library versions), this run, and the JupyterLab check of the reader editions. This run is
the "any computer" one, run by ``make colab-check`` inside ``.venv-colab``:

* **Colab's libraries**: plotly 5.24.1, ipywidgets 7.7.1 and transformers 4.57.6 (Colab's
  runtime), the oldest numpy that pyproject.toml admits, the course installed on top without
  upgrading any of them. ``COLAB_RELEASE_TAG`` (set by Colab) switches ``ca.setup`` to the Colab
  renderer; the check asserts that every figure went through it.
* **Another CPU's kernels**: torch's kernels for a CPU capability other than this machine's
  (``ATEN_CPU_CAPABILITY``: ``avx2`` on an AVX512 machine, ``default`` on an AVX2 one) and
  numpy's OpenBLAS for another core type (``OPENBLAS_CORETYPE``). Trained models come out
  differently there, as on a reader's computer; every chapter assertion must still hold.

It runs ``chapters/`` (the sources, glue included): the reader editions run the same code but
for the glue lines (``tests/test_reader_notebooks.py``), and the JupyterLab check runs them.
Each chapter's glued values go to ``_build/other_kernels/<name>.glue.json``, with the kernels
used in ``kernels.json``; ``tests/drift.py`` compares them with the strict build's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _notebooks import ROOT, execute, longest_wait, notebooks  # noqa: E402

COLAB_HTML = "s.onload = draw"  # the Colab renderer waits for plotly.js before drawing
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # what Colab draws of an explorer
EXPLORER_MIME = "application/vnd.course-attention.explorer+json"  # what the website draws
OUT = ROOT / "_build" / "other_kernels"

#: torch's CPU capability -> the one this run asks for (``ATEN_CPU_CAPABILITY``).
OTHER_CAPABILITY = {"AVX512": "avx2", "AVX2": "default"}
#: OpenBLAS's x86-64 core types by the widest vector kernels they use -> an older core type
#: with narrower ones (AVX512 -> AVX2 -> AVX -> SSE).
OTHER_CORE = {"SapphireRapids": "Haswell", "Cooperlake": "Haswell", "SkylakeX": "Haswell",
              "Zen": "Sandybridge", "Haswell": "Sandybridge", "Sandybridge": "Nehalem",
              "Nehalem": "Prescott"}

_PROBE = """
import ctypes, json, numpy, torch
def corename():
    libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'openblas' in l.lower()
                   and '.so' in l})
    for lib in libs:
        handle = ctypes.CDLL(lib)
        for fn in ('openblas_get_corename', 'openblas_get_corename64_',
                   'scipy_openblas_get_corename64_', 'scipy_openblas_get_corename'):
            f = getattr(handle, fn, None)
            if f is not None:
                f.restype = ctypes.c_char_p
                return f().decode()
    return None
print(json.dumps({'torch': torch.backends.cpu.get_cpu_capability(), 'openblas': corename()}))
"""


def kernels(env: dict[str, str] | None = None) -> dict[str, str | None]:
    """The kernels a Python started with ``env`` uses: torch's capability, OpenBLAS's core."""
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def other_kernel_env() -> dict[str, str]:
    """Environment variables that make torch and OpenBLAS pick kernels this machine does not.

    ``OTHER_KERNELS="ATEN_CPU_CAPABILITY=default OPENBLAS_CORETYPE=Sandybridge"`` chooses them
    instead (e.g. to try a third computer)."""
    chosen_here = os.environ.get("OTHER_KERNELS", "").split()
    if chosen_here:
        return dict(item.split("=", 1) for item in chosen_here)
    base = {k: v for k, v in os.environ.items()
            if k not in ("ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE")}
    native = kernels(base)
    chosen: dict[str, str] = {}
    capability = OTHER_CAPABILITY.get(str(native["torch"]).upper())
    if capability:
        chosen["ATEN_CPU_CAPABILITY"] = capability
    core = native["openblas"]
    if core in OTHER_CORE:
        chosen["OPENBLAS_CORETYPE"] = OTHER_CORE[core]
    elif core and core.upper().startswith(("NEOVERSE", "CORTEX", "ARMV8SVE", "A64FX")):
        chosen["OPENBLAS_CORETYPE"] = "ARMV8"
    return chosen


def glued(nb) -> dict[str, dict]:
    """A notebook's glued values as myst-nb's ``<name>.glue.json`` stores them."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                prefix = out["metadata"]["scrapbook"]["mime_prefix"]
                data = {k.removeprefix(prefix): v for k, v in out["data"].items()}
                found[name] = {"output_type": out["output_type"], "metadata": out["metadata"],
                               "data": data}
    return found


def check(path: Path) -> tuple[bool, str]:
    """Run one chapter; (passed, the line to print). Its glued values go to :data:`OUT`."""
    start, timeline = time.perf_counter(), []
    try:
        nb, _ = execute(path, timeout=300, timeline=timeline)
    except Exception as error:  # noqa: BLE001 - report every chapter, then fail
        return False, f"FAIL {path.stem}: {type(error).__name__}: {str(error)[-600:]}"
    (OUT / f"{path.stem}.glue.json").write_text(json.dumps(glued(nb), indent=1),
                                                encoding="utf-8")
    (OUT / f"{path.stem}.timeline.json").write_text(json.dumps(timeline), encoding="utf-8")
    outputs = [o for c in nb.cells for o in c.get("outputs", []) if "data" in o]
    colab = sum(COLAB_HTML in o["data"].get("text/html", "") for o in outputs)
    plotly_json = sum("application/vnd.plotly.v1+json" in o["data"] for o in outputs)
    live = [o["data"] for o in outputs if EXPLORER_MIME in o["data"]]
    no_widget = sum(WIDGET_MIME not in d for d in live)
    # every chapter draws: figures through the Colab renderer, or explorers (their widget)
    if plotly_json or no_widget or (not colab and not live and path.stem[:2].isdigit()):
        return False, (f"FAIL {path.stem}: {colab} Colab figures, {plotly_json} plotly JSON "
                       f"outputs, {no_widget} explorers without their widget view")
    wait, where = longest_wait(timeline)
    return True, (f"ok   {path.stem}: {colab} figures via the Colab renderer, {len(live)} "
                  f"explorers (widget + page spec), {time.perf_counter() - start:.1f} s"
                  f"{_cell_times(nb)}; longest wait {wait:.1f} s, {where}")


def _cell_times(nb) -> str:
    """The time the kernel spent in the cells (request to reply, from nbclient's record): set
    against the chapter's wall time, it shows a wait outside the cells (once a chapter took 323 s
    where 25 were usual, its kernel idle); the timeline's longest wait says where."""
    from datetime import datetime

    spans = []
    for cell in nb.cells:
        stamps = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in stamps and "shell.execute_reply" in stamps:
            a, b = (datetime.fromisoformat(stamps[k].replace("Z", "+00:00"))
                    for k in ("iopub.execute_input", "shell.execute_reply"))
            spans.append((b - a).total_seconds())
    return f" (cells {sum(spans):.1f} s)" if spans else ""


#: The chapters that train models, longest first (seconds in this run on 2 cores, 2026-11-28:
#: 187, 146, 75, 47, 42, 40, 40, 18); every other chapter takes under 11 s.
LONGEST = ("15", "14", "09", "08", "12", "13", "10", "07")


def _longest_first(path: Path) -> int:
    prefix = path.stem[:2]
    return LONGEST.index(prefix) if prefix in LONGEST else len(LONGEST)


def main(names: list[str]) -> int:
    os.environ.setdefault("COLAB_RELEASE_TAG", "colab-like-check")
    other = other_kernel_env()
    native = kernels({k: v for k, v in os.environ.items() if k not in other})
    os.environ.update(other)  # the kernels inherit them
    used = kernels(dict(os.environ))
    libs = ("numpy", "plotly", "ipywidgets", "torch", "ipykernel", "transformers")
    print("versions:", ", ".join(f"{name} {version(name)}" for name in libs))
    print(f"kernels: this machine's torch {native['torch']}, OpenBLAS {native['openblas']}; "
          f"this run's torch {used['torch']}, OpenBLAS {used['openblas']} "
          f"({' '.join(f'{k}={v}' for k, v in other.items()) or 'no other kernels here'})")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "kernels.json").write_text(json.dumps({"native": native, "other": used, "env": other},
                                                 indent=1), encoding="utf-8")
    paths = [p for p in notebooks() if not names or any(p.stem.startswith(n) for n in names)]
    for path in paths:
        (OUT / f"{path.stem}.glue.json").unlink(missing_ok=True)
    # two kernels at a time, one per core (the chapters' timings interleave what they compare),
    # the longest first: in the book's order chapters 14 and 15 came last, and the run ended
    # with one of them alone on the machine
    order = sorted(paths, key=_longest_first)
    with ProcessPoolExecutor(max_workers=2) as pool:
        done = dict(zip(order, pool.map(check, order), strict=True))
    results = [done[p] for p in paths]
    for _, line in results:
        print(line)
    passed = sum(ok for ok, _ in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":  # python tests/colab_like.py [--env | CHAPTER ...]  (e.g. 08)
    if sys.argv[1:] == ["--env"]:  # the variables, for `env` in the Makefile
        print(" ".join(f"{k}={v}" for k, v in other_kernel_env().items()))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
