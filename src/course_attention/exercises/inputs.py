"""What a failed check shows of its test case: the inputs, and what an error means.

Introduced with the exercises of chapter 1 (issue 24: a learner should not have to guess that
case 7 was ``[0.6, 0.3, 0.1]``). Every failure shows the failing case's inputs: their shapes,
small arrays in full and of a larger one its first numbers, written as ``np.array(…)`` to paste
into a cell. An error is read first by the exercise's own :class:`~.core.ErrorHint`, else by what
the common numpy and torch errors mean.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..i18n import N_, _

# An exercise (``ex``) is a :class:`~.core.Exercise` and its error reading an
# :class:`~.core.ErrorHint`; typed ``Any`` here, since core imports this module.
__all__: list[str] = []  # the checker's own machinery: exercises.core imports it by name


def _as_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # numpy has no bfloat16
            value = value.float()
        value = value.numpy()
    return np.asarray(value)


def _describe_inputs(ex: Any, args: tuple) -> str:
    parts = []
    for name, value in zip(ex.argument_names, args, strict=False):
        if hasattr(value, "shape") and np.ndim(value) > 0:
            parts.append(f"{name} {tuple(value.shape)}")
        else:
            parts.append(f"{name} = {value!r}")
    return ", ".join(parts)


SMALL_INPUT = 20
"""An input array of at most this many numbers is shown in full; of a larger one, the checker
shows the first ``SLICE_WIDTH`` numbers of its first row."""
SLICE_WIDTH = 6


def _number(value: Any) -> str:
    """One number as Python reads it back: ``0.6``, ``1000.0``, ``-np.inf``, ``np.nan``, ``3``."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if np.isnan(value):
        return "np.nan"
    if np.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    text = f"{value:.4g}"
    return text if any(c in text for c in ".e") else text + ".0"


def _array_text(head: str, array: np.ndarray) -> str:
    """``head`` followed by ``np.array([...])``: the rows of a matrix on lines of their own,
    aligned; a boolean array as 0/1 with ``dtype=bool`` (words such as True would be prose to
    the Chinese checks, and the line still pastes into a cell)."""
    numbers = array.astype(int) if array.dtype == bool else array
    body = np.array2string(
        numbers,
        separator=", ",
        prefix=head + "np.array(",
        formatter={"all": _number},
        max_line_width=10**6,
        threshold=10**6,
    )
    body = "\n".join(line for line in body.split("\n") if line.strip())
    return f"{head}np.array({body}{', dtype=bool' if array.dtype == bool else ''})"


def _input_values(ex: Any, args: tuple) -> list[str]:
    """Lines that show the case's input arrays (issue 24): a small array in full, of a larger one
    the first numbers of its first row, each as code that rebuilds it (``x = np.array([0.6, 0.3,
    0.1])``, ``K[0, 0, :6] = np.array([…])``). Numbers and other inputs are on the line above."""
    lines = []
    for name, value in zip(ex.argument_names, args, strict=False):
        if not hasattr(value, "shape") or np.ndim(value) == 0:
            continue
        try:
            array = _as_array(value)
            if array.dtype.kind not in "biuf":
                continue
            if array.size <= SMALL_INPUT:
                text = _array_text(f"{name} = ", array)
            else:
                first = (0,) * (array.ndim - 1)
                row = array[first]
                index = [str(i) for i in first]
                if row.size > SLICE_WIDTH:
                    row, index = row[:SLICE_WIDTH], [*index, f":{SLICE_WIDTH}"]
                text = _array_text(f"{name}[{', '.join(index)}] = ", row)
        except Exception:  # noqa: BLE001, S112 - an input we cannot show: its shape is shown
            continue
        lines += ["    " + line for line in text.split("\n")]
    return lines


_ERROR_MEANINGS = (
    (
        ("mismatch in its core dimension", "not aligned", "cannot be multiplied"),
        N_("a matrix product `A @ B` needs A's last axis to equal B's second-to-last axis "
           "((m, k) @ (k, n) → (m, n)); print both shapes — a transpose may be missing, extra, or "
           "on the wrong axes (`.swapaxes(-1, -2)` swaps only the last two)"),
    ),
    (
        ("axes don't match array",),
        N_("numpy's `transpose` takes the new order of *every* axis, `x.transpose(0, 2, 1, 3)`, "
           "while torch's `x.transpose(1, 2)` swaps two axes: the same call means different "
           "things in the two libraries. To swap two axes of a numpy array use "
           "`np.swapaxes(x, 1, 2)` (or `x.swapaxes(1, 2)`), or give `transpose` the full order"),
    ),
    (
        ("could not be broadcast", "must match the size of tensor"),
        N_("an element-wise operation needs shapes that broadcast: compared from the right, "
           "each axis must be equal or 1. After a reduction (`sum`, `max`, `mean`) keep the "
           "reduced axis with `keepdims=True` so it broadcasts back"),
    ),
    (
        ("cannot reshape", "is invalid for input of size"),
        N_("a reshape must keep the number of elements: the product of the new shape must equal "
           "the product of the old one"),
    ),
    (
        ("out of bounds for", "index out of range", "out of range (expected to be in range"),
        N_("an axis or index does not exist: the input may have fewer axes than you assumed "
           "(a vector (n,) has only axis 0 / -1)"),
    ),
    (
        ("expected scalar type", "mixed dtype", "same dtype", "expected m1 and m2", "but expected"),
        N_("a torch module holds float32 parameters by default, while these inputs are float64 "
           "numpy arrays: make the module float64 with `.double()` (or build tensors with "
           "`dtype=torch.float64`) rather than turning the inputs into float32, which costs "
           "accuracy"),
    ),
)


def _error_hint(error: BaseException, ex: Any) -> Any:
    """The exercise's own reading of the error (:attr:`Exercise.error_hints`), if one fits."""
    text = f"{type(error).__name__}: {error}"
    for error_hint in ex.error_hints:
        try:
            if re.search(error_hint.pattern, text):
                return error_hint
        except re.error:
            continue
    return None


def _explain_error(error: BaseException, ex: Any, args: tuple) -> str:
    text = str(error)
    lines = []
    own = _error_hint(error, ex)
    meanings = [own.meaning] if own else []
    meanings += [meaning for needles, meaning in _ERROR_MEANINGS
                 if any(needle in text for needle in needles)]
    if meanings:
        lines.append("  " + _("What it means: {meaning}.").format(meaning=_(meanings[0])))
    lines.append(_inputs_line(ex, args))
    return "\n" + "\n".join(lines)


def _inputs_line(ex: Any, args: tuple) -> str:
    """The case's inputs: their shapes on one line, then the arrays' values
    (:func:`_input_values`)."""
    return "\n".join([
        "  " + _("This test case's inputs: {inputs}.").format(inputs=_describe_inputs(ex, args)),
        *_input_values(ex, args),
    ])
