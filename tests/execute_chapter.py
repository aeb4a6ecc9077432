"""Execute chapters as the book's build does and store what the build stores of them.

``python tests/execute_chapter.py 08 [09 ...]`` (a chapter's file-name prefix) runs each in a
fresh kernel with this machine's kernels and writes ``_build/jupyter_execute/chapters/<name>.ipynb``
and ``<name>.glue.json``, as ``jupyter-book build`` does: the native run that
``tests/drift.py`` compares with ``tests/colab_like.py``'s run on other kernels. For a chapter
author's loop (``make chapter``), not a replacement for the book's build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from colab_like import glued  # noqa: E402

from _notebooks import ROOT, execute, notebooks  # noqa: E402

BUILD = ROOT / "_build" / "jupyter_execute" / "chapters"


def main(names: list[str]) -> int:
    paths = [p for p in notebooks() if any(p.stem.startswith(n) for n in names)]
    if not paths:
        print(f"no chapter starts with {names}")
        return 1
    BUILD.mkdir(parents=True, exist_ok=True)
    for path in paths:
        nb, seconds = execute(path, timeout=300)
        nbformat.write(nb, BUILD / path.name)
        (BUILD / f"{path.stem}.glue.json").write_text(json.dumps(glued(nb), indent=1),
                                                      encoding="utf-8")
        print(f"executed {path.stem} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
