"""Chapter 2's live explorer (kind ``scaling``): random numbers the page and Python share.

The explorer shows one query's weights over eight keys as the width ``d_k`` grows, with the √dₖ
scale on or off, for a *draw* of random query and keys. numpy's generator cannot run in the
browser, so the draws come from a small portable generator written twice, here and in
``scaling.js`` beside this module, with the same integer arithmetic:

* :func:`uniforms`: mulberry32, a 32-bit generator, written *counter-based*: the ``n``-th number
  of stream ``seed`` hashes the state ``seed + (n + 1) · 0x6D2B79F5`` (mod 2³²), so it is computed
  directly, without the ``n - 1`` before it. Integer operations give the same bits in both
  languages; the uniform is ``(x + 0.5) / 2³²``, exact in float64 and never 0 or 1.
* :func:`normals`: the Box–Muller transform of consecutive pairs of uniforms. ``log``, ``cos``
  and ``sin`` may differ from the browser's in the last bit, far below the 1e-12 the test asks.

Draw ``s`` is stream ``s``: the query is its first ``max_width`` normals, key ``j`` the next
``max_width`` ones, and width ``d`` uses the first ``d`` features of each: a wider ``d_k`` only
adds features to the same vectors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy_ref as ref
from ..i18n import N_, _
from .core import Explorer, english, register

__all__ = [
    "MAX_WIDTH",
    "N_DRAWS",
    "uniforms",
    "normals",
    "query_and_keys",
    "draw_weights",
    "title",
    "check_arguments",
    "spec",
    "scaling_explorer",
]

#: The width of the query and keys; the slider's ``d_k`` runs over every integer 1 … ``MAX_WIDTH``.
MAX_WIDTH = 1024
#: The number of draws (0 … ``N_DRAWS - 1``); "new query and keys" steps through them.
N_DRAWS = 1000

#: The label of the button that moves to the next draw, on the page and in JupyterLab.
RESAMPLE = N_("new query and keys")
#: The figure's title, scaled and not (``spec["text"]``: ``scaling.js`` fills them too).
TITLE_SCALED = N_("softmax(q·k / √dₖ), dₖ = {d_k}, draw {draw}")
TITLE_UNSCALED = N_("softmax(q·k), dₖ = {d_k}, draw {draw}")
#: The page's messages for a value out of range.
BAD_D_K = N_("d_k must be a whole number from 1 to {max}.")
BAD_DRAW = N_("The draw must be a whole number from 0 to {max}.")

_STEP = 0x6D2B79F5  # mulberry32's increment (odd: the states visit every 32-bit number)
_MASK = 0xFFFFFFFF


def _check_int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}; got {value!r}")
    return int(value)


def uniforms(seed: int, n: int) -> np.ndarray:
    """The first ``n`` uniform numbers in (0, 1) of stream ``seed``: ``(n,)`` float64.

    Introduced in chapter 2. mulberry32, counter-based; ``scaling.js`` computes the same bits.
    """
    seed = _check_int("seed", seed, 0, _MASK)
    n = _check_int("n", n, 0, 2**26)
    k = np.arange(1, n + 1, dtype=np.uint64)
    a = ((seed + k * _STEP) & _MASK).astype(np.uint32)  # the state after k steps
    t = (a ^ (a >> 15)) * (a | 1)  # uint32 products wrap mod 2³², as Math.imul does
    t = (t + (t ^ (t >> 7)) * (t | 61)) ^ t
    x = t ^ (t >> 14)  # (n,) uint32
    return (x.astype(np.float64) + 0.5) / 2.0**32


def normals(seed: int, n: int) -> np.ndarray:
    """The first ``n`` standard-normal numbers of stream ``seed``: ``(n,)`` float64.

    Introduced in chapter 2. Box–Muller: uniforms ``2i`` and ``2i + 1`` give normals ``2i``
    (the cosine) and ``2i + 1`` (the sine).
    """
    n = _check_int("n", n, 0, 2**25)
    u = uniforms(seed, 2 * math.ceil(n / 2))
    radius = np.sqrt(-2.0 * np.log(u[0::2]))  # (n/2,)
    angle = 2 * math.pi * u[1::2]  # (n/2,)
    out = np.empty(u.shape)
    out[0::2], out[1::2] = radius * np.cos(angle), radius * np.sin(angle)
    return out[:n]


def query_and_keys(
    draw: int = 0, seq_k: int = 8, max_width: int = MAX_WIDTH
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``draw``'s query ``(max_width,)`` and keys ``(seq_k, max_width)`` (chapter 2)."""
    draw = _check_int("draw", draw, 0, _MASK)
    seq_k = _check_int("seq_k", seq_k, 2, 64)
    max_width = _check_int("max_width", max_width, 1, 4096)
    z = normals(draw, (seq_k + 1) * max_width)
    return z[:max_width], z[max_width:].reshape(seq_k, max_width)


def draw_weights(d_k: int, scaled: bool = True, draw: int = 0, seq_k: int = 8) -> np.ndarray:
    """The explorer's weights ``(seq_k,)``: softmax of ``q·k`` (divided by √dₖ when ``scaled``)
    over the first ``d_k`` features of draw ``draw`` (chapter 2)."""
    d_k = _check_int("d_k", d_k, 1, MAX_WIDTH)
    q, K = query_and_keys(draw, seq_k)
    scores = K[:, :d_k] @ q[:d_k]  # (seq_k,)
    return ref.softmax(scores / math.sqrt(d_k) if scaled else scores)


def title(d_k: int, scaled: bool, draw: int) -> str:
    """The figure's title (short enough for a phone); ``scaling.js`` writes the same one."""
    return _(TITLE_SCALED if scaled else TITLE_UNSCALED).format(d_k=d_k, draw=draw)


def check_arguments(d_k: int, scaled: bool, draw: int, seq_k: int) -> None:
    """Raise a ValueError naming the first argument of the explorer that is out of range."""
    _check_int("d_k", d_k, 1, MAX_WIDTH)
    _check_int("draw", draw, 0, N_DRAWS - 1)
    _check_int("seq_k", seq_k, 2, 64)
    if not isinstance(scaled, (bool, np.bool_)):
        raise ValueError(f"scaled must be True or False; got {scaled!r}")


def spec(controls: dict[str, Any], seq_k: int) -> dict[str, Any]:
    """The ``live`` part of :func:`scaling_explorer`.

    The page draws its own query and keys (``scaling.js``), so it needs only the sizes. Its
    controls, as the notebook's: ``scaled`` and ``d_k``, buttons that halve or double ``d_k``
    (the chapter's powers of two), the ``draw`` slider and a button that moves to the next
    draw: a new random query and keys.
    """
    from .core import controls_spec

    page = [
        {"name": "halve", "type": "button", "label": HALVE},
        {"name": "double", "type": "button", "label": DOUBLE},
        *controls_spec({"draw": controls["draw"]}),
        {"name": "resample", "type": "button", "label": RESAMPLE},
    ]
    return {"kind": "scaling", "data": {"seq_k": seq_k, "max_width": MAX_WIDTH},
            "omit": ["draw"], "controls": page,
            "text": {"title_scaled": TITLE_SCALED, "title_unscaled": TITLE_UNSCALED,
                     "bad_d_k": BAD_D_K, "bad_draw": BAD_DRAW}}


#: The labels of the buttons that halve and double ``d_k``, on the page and in JupyterLab.
HALVE, DOUBLE = "d_k ÷ 2", "d_k × 2"


def buttons(controls: dict[str, Any]) -> dict[str, Any]:
    """The notebook's buttons, doing what ``scaling.js`` does: ``d_k`` halved (at least 1) or
    doubled (at most :data:`MAX_WIDTH`), and the next draw (after the last, the first)."""
    import ipywidgets as w

    d_k, draw = controls["d_k"], controls["draw"]
    out = {
        "halve": w.Button(description=HALVE,
                          tooltip=_("d_k halved (rounded down, at least 1)")),
        "double": w.Button(description=DOUBLE,
                           tooltip=_("d_k doubled (at most {max})").format(max=MAX_WIDTH)),
        "resample": w.Button(description=_(RESAMPLE),
                             tooltip=_("the next draw of query and keys")),
    }
    out["halve"].on_click(lambda _: setattr(d_k, "value", max(1, d_k.value // 2)))
    out["double"].on_click(lambda _: setattr(d_k, "value", min(MAX_WIDTH, d_k.value * 2)))
    out["resample"].on_click(
        lambda _: setattr(draw, "value", 0 if draw.value >= draw.max else draw.value + 1)
    )
    return out


@register
def scaling_explorer(
    d_k: int = 64, scaled: bool = True, draw: int = 0, seq_k: int = 8
) -> Explorer:
    """Live explorer of one query's weights as ``d_k`` grows, with the √dₖ scale on or off.

    Introduced in chapter 2. Controls: ``scaled`` (divide the scores by √dₖ), ``d_k`` (every
    integer 1 … 1024) with buttons that halve and double it, and ``draw`` (which random query
    and keys; a button moves to the next). Width ``d_k`` uses the first ``d_k`` features of the
    draw's query and keys, drawn by the portable generator the website's page runs too.
    """
    import ipywidgets as w

    from .. import viz

    check_arguments(d_k, scaled, draw, seq_k)
    controls = {  # the checkbox first: at d_k = 1 scaling changes nothing (√1 = 1)
        "scaled": w.Checkbox(value=scaled, description=_("divide the scores by √dₖ")),
        "d_k": w.IntSlider(value=d_k, min=1, max=MAX_WIDTH, description="d_k"),
        "draw": w.IntSlider(value=draw, min=0, max=N_DRAWS - 1,
                            description=_("draw (random query and keys)")),
    }

    def make_figure(d_k: int, scaled: bool, draw: int) -> Any:
        weights = draw_weights(d_k, scaled, draw, seq_k)  # (seq_k,)
        return viz.scaling_bars_figure(weights, english(title, d_k, scaled, draw))

    return Explorer(controls, make_figure, spec(controls, seq_k), buttons=buttons(controls))
