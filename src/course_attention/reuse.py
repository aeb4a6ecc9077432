"""Reuse a training's result across the course's own test runs; a reader's run always trains.

`make test` executes every chapter three times: the strict build (whose pages are published),
the run on another CPU's kernels, and the JupyterLab check of the reader editions. Chapters 9–14
train models in their cells, so the JupyterLab check would train, on the same machine and
kernels, the same models the build has just trained. The functions marked :func:`reusable` save
what they return when the build runs them, and the JupyterLab check reuses it.

Two environment variables switch this on; a reader's computer sets neither:

- ``COURSE_ATTENTION_SAVE_TRAINED=DIR``: run the function and save its result under ``DIR``
  (the build: every time it prints is its own training's);
- ``COURSE_ATTENTION_REUSE_TRAINED=DIR``: return the result saved under the same key, or run the
  function and save it.

The key holds everything the result depends on: the function, its arguments (defaults filled in,
``progress`` left out: it only draws a bar), the package's source (every ``.py`` file), the
Python, numpy and torch versions, torch's CPU capability, ``OPENBLAS_CORETYPE`` and torch's
thread count. With the same key, the function returns the same numbers bit for bit (the tests
check it on chapter 9's training), so reusing is the same as running. torch's global random state
after the call is saved and restored with the result, so later cells draw what they would have.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

SAVE = "COURSE_ATTENTION_SAVE_TRAINED"
REUSE = "COURSE_ATTENTION_REUSE_TRAINED"
#: Arguments that change what a function shows while it runs, not what it returns.
IGNORED = frozenset({"progress"})

F = TypeVar("F", bound=Callable[..., Any])


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 of every ``.py`` file of the package (paths and contents), in path order."""
    root = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def key(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> str | None:
    """The file name a call's result is saved under, or ``None`` when an argument's ``repr``
    does not determine its value (an object shown by its address)."""
    import numpy as np
    import torch

    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    shown = repr(sorted((k, v) for k, v in bound.arguments.items() if k not in IGNORED))
    if " at 0x" in shown:
        return None
    parts = (fn.__module__, fn.__qualname__, shown, source_digest(), sys.version, np.__version__,
             torch.__version__, torch.backends.cpu.get_cpu_capability(),
             os.environ.get("OPENBLAS_CORETYPE", ""), str(torch.get_num_threads()))
    name = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return f"{fn.__qualname__}-{name}.pt"


def reusable(fn: F) -> F:
    """Mark ``fn`` (a training function of the package that trains on one torch thread and
    returns a picklable result) as reusable by the course's own test runs: see the module's
    docstring. Without ``COURSE_ATTENTION_SAVE_TRAINED`` or ``COURSE_ATTENTION_REUSE_TRAINED``
    in the environment it is ``fn`` itself, as a reader runs it.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        folder = os.environ.get(REUSE) or os.environ.get(SAVE)
        name = key(fn, args, kwargs) if folder else None
        if name is None:
            return fn(*args, **kwargs)
        import torch

        path = Path(folder) / name
        if os.environ.get(REUSE) and path.exists():
            saved = torch.load(path, weights_only=False)
            torch.set_rng_state(saved["rng"])
            return saved["result"]
        result = fn(*args, **kwargs)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        torch.save({"result": result, "rng": torch.get_rng_state()}, part)
        part.replace(path)  # whole or absent: a reader of the folder never sees half a file
        return result

    return wrapper  # type: ignore[return-value]
