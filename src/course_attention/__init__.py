"""course_attention: the tested package behind *Attention, Step by Step*.

Import it as ``ca``; submodules by short names::

    import course_attention as ca
    from course_attention import numpy_ref as ref, viz, widgets, exercises as ex
    ca.setup(seed=0)
"""

from __future__ import annotations

import gc
import os
import random
import sys

import numpy as np

__version__ = "0.1.0"
__all__ = ["setup", "in_colab", "glue", "glue_varies", "power_of_ten", "VARIES", "__version__"]


#: Whether :func:`setup` has frozen this process's objects (it does so once).
_FROZEN = False


def in_colab() -> bool:
    """True inside Google Colab (detected from the environment variables Colab sets)."""
    return "COLAB_RELEASE_TAG" in os.environ or "google.colab" in sys.modules


def setup(seed: int = 0, lang: str = "en") -> None:
    """Seed Python, numpy and torch, set the language, and pick the plotly renderer.

    Call once at the top of every chapter; a Chinese notebook passes ``lang="zh"``, which makes
    the package's figures, explorers and checker speak Chinese (:mod:`course_attention.i18n`).
    In Colab it switches plotly to a renderer that also draws inside
    ``ipywidgets.interactive_output``; elsewhere plotly's default is kept (the book build renders
    plotly's JSON output with ``course_book.book``, the book's own machinery).

    The first call in a process also **freezes** every object made so far (``gc.freeze``): the
    modules the chapter's import cell loaded, torch's among them, are never freed anyway, and
    frozen, Python's cycle collector no longer walks them at each full collection and once more
    when the kernel exits. That took 0.5 to 0.9 s off the run of each chapter of Parts I–II but
    chapters 9 and 10, whose time goes to training (101.7 → 93.7 s in total with the spot-the-bug
    appendix, the medians of two runs on a 2-core machine, measured as
    ``benchmarks/execution.py`` measures). Later calls do not freeze again: what the
    chapter has built by then may still become garbage.
    """
    global _FROZEN
    from .i18n import set_language

    set_language(lang)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - seeds code that uses the legacy global generator
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency, but numpy chapters work alone
        pass
    else:
        torch.manual_seed(seed)
    if in_colab():
        from .viz import use_colab_renderer

        use_colab_renderer()
    if not _FROZEN:
        gc.freeze()
        _FROZEN = True


def glue(name: str | None = None, value: object = None, /, **values: object) -> object:
    """Store values for the book's prose, without showing them; return the value (or None).

    Chapters quote computed numbers with ``{glue:text}`name:.2f``` in markdown, so no number in
    the prose is typed by hand. Two forms: ``glue("w_apple", w)`` stores one value and returns
    it; ``glue(w_apple=w0, w_banana=w1, ...)`` stores many in one call (keep bookkeeping out of
    the teaching code: one line, or a cell the site hides). Writes the same output as
    ``myst_nb.glue(..., display=False)`` (myst-nb is only installed for the book, not in Colab).
    """
    return _glue(name, value, values, varies=False)


#: The mark :func:`glue_varies` leaves in a glued value's output metadata (read by the reader
#: editions and by the drift check of ``make test``).
VARIES = "course_attention"


def glue_varies(name: str | None = None, value: object = None, /, **values: object) -> object:
    """:func:`glue` for a value that is the build's own example, not every reader's number.

    Floats differ between CPUs (torch and BLAS pick kernels by CPU), and a model trained in the
    notebook differs visibly: its accuracies, losses and generated text are the build's. Glue
    such values with this function; the prose around them says how they vary (their spread
    across computers and seeds, or "in the build, …"). The reader editions mark them, and
    ``make test`` records how far they move on other kernels instead of requiring them equal.
    Everything else glued with :func:`glue` must print the same on any computer.
    """
    return _glue(name, value, values, varies=True)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(x: float) -> str:
    """``1e-10`` as the prose writes it, ``"10⁻¹⁰"``: a tolerance a cell asserts, glued.

    Introduced in chapter 8. Raises ``ValueError`` unless ``x`` is an exact power of ten
    (as ``float(f"1e{n}")`` is), since anything else would print a rounded number.
    """
    n = round(float(np.log10(x))) if x > 0 and np.isfinite(x) else None
    if n is None or float(f"1e{n}") != x:
        raise ValueError(f"power_of_ten: {x!r} is not a power of ten (1e-10, 1e-05, 100.0 …)")
    return "10" + str(n).translate(_SUPERSCRIPT)


def _glue(name: str | None, value: object, values: dict[str, object], varies: bool) -> object:
    if name is not None:
        if values:
            raise ValueError("glue: give either one name and value, or keyword values, not both")
        values = {name: value}
    elif not values:
        raise ValueError("glue: nothing to store; call glue(name, value) or glue(name=value, ...)")
    for key, item in values.items():
        _glue_one(key, item, varies)
    return value if name is not None else None


def _glue_one(name: str, value: object, varies: bool = False) -> None:
    from IPython import get_ipython
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if isinstance(value, np.generic):
        value = value.item()  # numpy 2 shows np.float64(0.5), which the book cannot format
    if get_ipython() is not None:
        bundle, metadata = format_display_data(value)
        prefix = "application/papermill.record/"
        metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
        if varies:
            metadata[VARIES] = {"varies": True}
        display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
