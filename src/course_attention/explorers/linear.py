"""Chapter 15's live explorer of a linear-attention state (kind ``linear``, ``linear.js``).

Introduced in chapter 15. A short sequence of key–value pairs
(:data:`~course_attention.linear_attention.memory.SEQUENCE`: four unit keys ``a`` … ``d`` of
``d_k = 4``, the standard basis, so that row ``a`` of the state is what key ``a`` reads; one new
value of ``d_v = 4`` numbers per token, key ``a`` written three times, ``b`` and ``c`` twice) is
written into a ``d_k × d_v`` state by one of three rules
(:func:`~course_attention.linear_attention.memory.memory_states`):

- ``"linear"``: linear attention's fast-weight memory without feature map or normaliser,
  ``S_t = S_{t−1} + k_t v_tᵀ``: every write adds, nothing is ever removed;
- ``"delta"``: the delta rule, ``S_t = S_{t−1} + β k_t (v_t − S_{t−1}ᵀ k_t)ᵀ``
  (:func:`course_attention.linear_attention.gated_delta_rule` with ``g = 0``): a write corrects
  what the key already reads, so at ``β = 1`` it overwrites;
- ``"gated"``: the gated delta rule, the state first multiplied by ``α = exp(g)``
  (:func:`~course_attention.linear_attention.gated_delta_rule`).

Controls: the rule, the step ``t`` (tokens written, 0 … 8), ``β``, ``α`` and the key the reader
queries. The figure (:func:`course_attention.viz.linear_explorer_figure`) shows the state
``S_t`` and the recall ``S_tᵀ q`` of the queried key against the value written last under it.
The page (``linear.js``) runs the same recurrence itself; ``tests/test_live_linear.py`` proves
every plotted number equal to :func:`course_attention.viz.linear_explorer_numbers`, which calls
:func:`~course_attention.linear_attention.memory.memory_states`, and that function equal to the
package's rules. The memory itself (keys, values, rules) is
:mod:`course_attention.linear_attention.memory`; this module adds the controls and the words.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import viz
from ..i18n import N_, _
from ..linear_attention.memory import (
    ALPHAS,
    BETAS,
    NAMES,
    RULES,
    SEQUENCE,
    memory_keys,
    memory_states,
    memory_values,
    state_range,
)
from .core import Explorer, register

__all__ = ["RULES", "RULE_LABELS", "RULE_NAMES", "NAMES", "SEQUENCE", "BETAS", "ALPHAS", "TITLE",
           "READOUT", "NEVER", "memory_keys", "memory_values", "memory_states", "linear_data",
           "linear_live", "linear_explorer", "figure_title", "check_try_it"]

#: The rules' names in the menu (:data:`~course_attention.linear_attention.memory.RULES` is
#: their order).
RULE_LABELS = {"linear": N_("linear attention: S += k vᵀ"),
               "delta": N_("delta rule: writes v − Sᵀk"),
               "gated": N_("gated delta rule: decays by α")}
#: Their short names, in the figure's title.
RULE_NAMES = {"linear": N_("linear attention"), "delta": N_("delta rule"),
              "gated": N_("gated delta rule")}
#: The figure's title and the readout under it (``linear.js`` fills the same templates).
TITLE = N_("{rule}: {t} of {n} tokens written")
READOUT = N_("<sup>key {key}: recall error {error:.2f}, last written at token {last}</sup>")
#: The readout of a key not written yet (the memory should return zeros).
NEVER = N_("<sup>key {key}: not written yet, recall error {error:.2f}</sup>")


def linear_data() -> dict[str, Any]:
    """The page's data: the rules, the key names and vectors, the written sequence (key
    indices), the values ``(seq, d_v)``, the sliders' values and the colour range of the state
    (the largest ``|S|`` of linear attention, which only adds: every rule's states lie within
    it)."""
    values = memory_values()
    return {
        "rules": list(RULES), "names": list(NAMES),
        "keys": torch.eye(len(NAMES), dtype=torch.float64).numpy(),
        "sequence": [NAMES.index(n) for n in SEQUENCE], "values": values.numpy(),
        "betas": list(BETAS), "alphas": list(ALPHAS), "zmax": state_range(),
    }


def linear_live() -> dict[str, Any]:
    """The page's spec (kind ``linear``): :func:`linear_data` and the words."""
    return {
        "kind": "linear",
        "data": linear_data(),
        "text": {"title": TITLE, "readout": READOUT, "never": NEVER,
                 **{f"rule_{r}": RULE_NAMES[r] for r in RULES},
                 "bad_rule": N_("No rule named {rule}."),
                 "bad_t": N_("Pick a step from 0 to {n}."),
                 "bad_beta": N_("Pick β from 0 to 1."),
                 "bad_alpha": N_("Pick α from {low} to 1."),
                 "bad_key": N_("No key named {key}.")},
        "phone": viz.LINEAR_PHONE,
    }


@register
def linear_explorer(rule: str = "linear", t: int = 4, beta: float = 1.0, alpha: float = 0.9,
                    key: str = "a") -> Explorer:
    """Write key–value pairs into a linear-attention state; read a key back.

    Introduced in chapter 15. Controls: ``rule`` (``"linear"``: ``S += k vᵀ``; ``"delta"``: the
    delta rule; ``"gated"``: the gated delta rule), ``t`` (0 … 8 tokens written), ``beta`` (the
    delta rules' write strength, 0 … 1), ``alpha`` (the gated rule's decay ``exp(g)``, 0.5 … 1)
    and ``key`` (``"a"`` … ``"d"``, the key the reader queries). The figure is
    :func:`course_attention.viz.linear_explorer_figure`: the state ``S_t`` and the key's recall
    against the value written last under it.
    """
    import ipywidgets as w

    n = len(SEQUENCE)
    if (rule not in RULES or key not in NAMES or isinstance(t, bool) or not isinstance(t, int)
            or not 0 <= t <= n or beta not in BETAS or alpha not in ALPHAS):
        raise ValueError(f"need rule in {RULES}, t in 0 … {n}, beta in {BETAS}, alpha in "
                         f"{ALPHAS} and key in {NAMES}; got {rule!r}, {t!r}, {beta!r}, "
                         f"{alpha!r}, {key!r}")
    controls = {
        "rule": w.Dropdown(options=[(_(RULE_LABELS[r]), r) for r in RULES], value=rule,
                           description=_("rule")),
        "t": w.IntSlider(value=t, min=0, max=n, continuous_update=True,
                         description=_("tokens written t")),
        "beta": w.FloatSlider(value=beta, min=BETAS[0], max=BETAS[-1], step=0.1,
                              readout_format=".1f", continuous_update=True,
                              description=_("write strength β (delta rules)")),
        "alpha": w.FloatSlider(value=alpha, min=ALPHAS[0], max=ALPHAS[-1], step=0.05,
                               readout_format=".2f", continuous_update=True,
                               description=_("decay α (gated rule)")),
        "key": w.Dropdown(options=[(name, name) for name in NAMES], value=key,
                          description=_("key to read")),
    }

    def make_figure(rule: str, t: int, beta: float, alpha: float, key: str) -> Any:
        return viz.linear_explorer_figure(rule, t, beta, alpha, key,
                                          title=figure_title(rule, t, beta, alpha, key))

    return Explorer(controls, make_figure, linear_live())


def figure_title(rule: str, t: int, beta: float, alpha: float, key: str) -> str:
    """The figure's title in English (the figure shows it in the reader's language): the rule
    and step, and the queried key's recall error."""
    n = viz.linear_explorer_numbers(rule, t, beta, alpha, key)
    readout = READOUT if n["last"] else NEVER
    return (TITLE.format(rule=RULE_NAMES[rule], t=t, n=len(SEQUENCE)) + "<br>"
            + readout.format(key=key, error=n["error"], last=n["last"]))


def check_try_it() -> None:
    """Assert the answers to chapter 15's Try it (the explorer's numbers, by the package):
    after all 8 tokens, linear attention recalls key ``a`` with an error of the two earlier
    values written under it (``‖v_1 + v_4‖``), the delta rule at ``β = 1`` with none, at
    ``β = 0.5`` with some but less than linear attention; at ``β = 1`` the gated rule recalls
    the key written last (``c``) exactly, and ``d``, written at token 5, with an error that
    grows as ``α`` falls. Raises ``AssertionError`` naming what fails."""
    from ..viz.linear_explorer import linear_explorer_numbers as numbers

    n, values = len(SEQUENCE), memory_values().numpy()
    writes = [i for i, name in enumerate(SEQUENCE) if name == "a"]
    failed = []
    linear = numbers("linear", n, 1.0, 1.0, "a")["error"]
    earlier = float(np.linalg.norm(values[writes[:-1]].sum(0)))
    if not abs(linear - earlier) < 1e-12:
        failed.append(f"linear attention's error {linear:.4f}, not ‖v_1 + v_4‖ = {earlier:.4f}")
    exact = numbers("delta", n, 1.0, 1.0, "a")["error"]
    half = numbers("delta", n, 0.5, 1.0, "a")["error"]
    if not (exact < 1e-12 and 0.1 < half < linear - 0.1):
        failed.append(f"delta rule's errors: β = 1 {exact:.4f}, β = 0.5 {half:.4f}, linear "
                      f"{linear:.4f}")
    last = numbers("gated", n, 1.0, 0.5, SEQUENCE[-1])["error"]
    faded = [numbers("gated", n, 1.0, a, "d")["error"] for a in ALPHAS]
    if not (last < 1e-12 and faded[-1] < 1e-12 and all(
            x > y + 1e-3 for x, y in zip(faded, faded[1:], strict=False))):
        failed.append(f"gated rule: last key's error {last:.4f}, d's by α {np.round(faded, 3)}")
    if failed:
        raise AssertionError(f"chapter 15's Try it fails: {failed}")
