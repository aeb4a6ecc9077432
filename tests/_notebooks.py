"""Helpers to find and execute the chapter notebooks (used by tests and benchmarks)."""

from __future__ import annotations

import time
from itertools import pairwise
from pathlib import Path

import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def toc_files() -> list[str]:
    """Every file named in _toc.yml, in reading order, without suffix (e.g. chapters/01_x)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            files.append(chapter["file"])
            files.extend(s["file"] for s in chapter.get("sections", []))
    return files


def notebooks() -> list[Path]:
    """The chapter notebooks in reading order."""
    paths = [ROOT / f"{f}.ipynb" for f in toc_files()]
    return [p for p in paths if p.exists()]


def execute(path: Path, timeout: int = 120, timeline: list | None = None
            ) -> tuple[nbformat.NotebookNode, float]:
    """Execute a notebook in a fresh kernel; return it with the wall time in seconds.

    With ``timeline`` (a list), append ``(seconds since the start, event, cell index)`` for the
    kernel's start, each cell's request, reply and completion, and the kernel's shutdown: where a
    run waited outside its cells."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()

    def mark(event):
        def hook(cell=None, cell_index=None, **_):
            if timeline is not None:
                timeline.append((time.perf_counter() - start, event, cell_index))
        return hook

    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        on_notebook_start=mark("kernel ready"), on_cell_start=mark("cell start"),
        on_cell_complete=mark("request sent"), on_cell_executed=mark("cell done"),
        on_notebook_complete=mark("kernel shut down"),
    )
    client.execute()
    return nb, time.perf_counter() - start


def longest_wait(timeline: list) -> tuple[float, str]:
    """The longest interval between two consecutive events of :func:`execute`'s timeline."""
    def name(event):
        return event[1] if event[2] is None else f"{event[1]} {event[2]}"

    gaps = [(b[0] - a[0], f"{name(a)} -> {name(b)}")
            for a, b in pairwise([(0.0, "start", None), *timeline])]
    return max(gaps) if gaps else (0.0, "")
