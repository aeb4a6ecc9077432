"""Helpers to find and execute the chapter notebooks (used by tests and benchmarks)."""

from __future__ import annotations

import time
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


def execute(path: Path, timeout: int = 120) -> tuple[nbformat.NotebookNode, float]:
    """Execute a notebook in a fresh kernel; return it with the wall time in seconds."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start
