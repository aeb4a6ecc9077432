"""Chapter 12's live explorer of RoPE scaling (kind ``long_context``, ``long_context.js``).

Introduced in chapter 12. The reader moves a position past the length chapter 10's rotary copy
model was trained on and picks a rule that stretches the rotation (``rope_scaling.RULES``) and
its factor; the page computes every rule's frequencies, each pair's angle and the score curves
itself, from the model's sizes and the random vectors' pair sizes (:func:`long_context_live`).
"""

from __future__ import annotations

from typing import Any

from .. import rope_scaling, viz
from ..i18n import N_, _
from .core import Explorer, number_options, register
from .rope import rope_live

__all__ = ["HEAD_WIDTH", "THETA", "CONTEXT", "MAX_POSITION", "FACTORS", "RULE_NAMES",
           "long_context_live", "long_context_explorer"]

#: Chapter 10's rotary copy model (``positions.copy_model("rotary")``, trained by
#: ``positions.length_generalisation``): heads of width 32 / 4 = 8, base 10000, inputs of at
#: most 2 · 8 + 1 = 17 tokens (positions 0 … 16) in training: the context the rules stretch, as
#: ``rope_scaling.copy_accuracy_scaled`` stretches it. The tests read them off the model.
HEAD_WIDTH, THETA, CONTEXT = 8, 10000.0, 17
#: The slider's last position — a sequence four times the trained length.
MAX_POSITION = 4 * CONTEXT - 1
#: The factors the menu offers.
FACTORS: list[float] = [1.0, 2.0, 4.0, 8.0]
#: The rules' names in the menu, by ``rope_scaling.RULES`` name.
RULE_NAMES = {"plain": N_("none (plain RoPE)"), "linear": N_("linear (interpolation)"),
              "dynamic": N_("dynamic NTK"), "yarn": N_("YaRN"), "llama3": N_("Llama 3")}
#: The figure's title for each rule (``long_context.js`` fills it from ``spec["text"]``).
TITLES = {"plain": N_("position {position}, no scaling"),
          "linear": N_("position {position}, linear × {factor:g}"),
          "dynamic": N_("position {position}, dynamic NTK × {factor:g}"),
          "yarn": N_("position {position}, YaRN × {factor:g}"),
          "llama3": N_("position {position}, Llama 3 × {factor:g}")}


def long_context_live() -> dict[str, Any]:
    """The page's data: the model's sizes, the rules' parameters and the random vectors' mean
    pair sizes ``mean|q_i|²`` ``(d/2,)`` (the mean score at an offset ``o`` is
    ``a² Σ_i mean|q_i|² cos(o · θ'_i)``, by linearity; chapter 10's :func:`rope_live`)."""
    mean_size = rope_live([HEAD_WIDTH], 0)["data"]["vectors"][str(HEAD_WIDTH)]["mean_size"]
    low, high = rope_scaling.LLAMA3_FREQ_FACTORS
    return {
        "kind": "long_context",
        "data": {"d": HEAD_WIDTH, "theta": THETA, "context": CONTEXT,
                 "max_position": MAX_POSITION, "mean_size": mean_size,
                 "edge": viz.modern.EDGE, "max_factor": max(FACTORS),
                 "yarn": {"beta_fast": 32.0, "beta_slow": 1.0},
                 "llama3": {"low_freq_factor": low, "high_freq_factor": high}},
        "text": {**{f"title_{rule}": title for rule, title in TITLES.items()},
                 "bad_position": N_("Pick a position from 0 to {max}."),
                 "bad_rule": N_("No rule named {rule}.")},
        "phone": viz.modern.LONG_CONTEXT_PHONE,
    }


@register
def long_context_explorer(position: int = 3 * CONTEXT, rule: str = "plain",
                          factor: float = 4.0) -> Explorer:
    """Move a position past the trained length; stretch the rotation by a rule and a factor.

    Introduced in chapter 12. Controls: ``position`` (0 … 67; chapter 10's rotary copy model was
    trained on positions 0 … 16), ``rule`` (one of ``rope_scaling.RULES``) and ``factor`` (1, 2,
    4 or 8; ``"plain"`` ignores it). The figure is
    :func:`course_attention.viz.long_context_figure`: each pair's angle against the largest it
    reached in training, and the mean score against the offset, plain and with the rule.
    """
    import ipywidgets as w

    if (rule not in rope_scaling.RULES or factor not in FACTORS
            or not 0 <= position <= MAX_POSITION):
        raise ValueError(
            f"need position in 0 … {MAX_POSITION}, rule in {rope_scaling.RULES}, factor in "
            f"{[f'{f:g}' for f in FACTORS]}; got {position}, {rule!r}, {factor:g}"
        )
    controls = {
        "position": w.IntSlider(
            value=position, min=0, max=MAX_POSITION, continuous_update=True,
            description=_("position (trained: 0 … {last})").format(last=CONTEXT - 1),
        ),
        "rule": w.Dropdown(options=[(_(RULE_NAMES[r]), r) for r in rope_scaling.RULES],
                           value=rule, description=_("scaling")),
        "factor": w.Dropdown(options=number_options(FACTORS), value=factor,
                             description=_("factor")),
    }

    def make_figure(position: int, rule: str, factor: float) -> Any:
        title = TITLES[rule].format(position=position, factor=factor)  # viz translates
        return viz.long_context_figure(position, rule, factor, HEAD_WIDTH, THETA, CONTEXT,
                                       MAX_POSITION, title=title)

    return Explorer(controls, make_figure, long_context_live())
