"""The small memory of chapter 15's explorer: four orthogonal keys written eight times, by
linear attention, the delta rule or the gated delta rule.

Introduced in chapter 15. The keys ``a`` … ``d`` are the unit vectors ``e_1 … e_4`` (``d_k = 4``),
so row ``a`` of the state is what key ``a`` reads and no interference blurs the comparison of the
rules; :data:`SEQUENCE` writes ``a`` three times and ``b`` and ``c`` twice, each time with a new
value of ``d_v = 4`` numbers. :func:`memory_states` runs a rule over it. The explorer
(``course_attention.explorers.linear``) and its figure (``course_attention.viz.linear_explorer``)
both read this module.
"""

from __future__ import annotations

import math

import torch

__all__ = ["RULES", "NAMES", "SEQUENCE", "BETAS", "ALPHAS", "SEED", "memory_keys",
           "memory_values", "memory_states", "state_range"]

#: The rules, in the explorer's menu order.
RULES = ("linear", "delta", "gated")
#: The keys, the rows of the state (key ``NAMES[i]`` is the unit vector ``e_i``).
NAMES = ("a", "b", "c", "d")
#: The order the keys are written in, one token each.
SEQUENCE = ("a", "b", "c", "a", "d", "b", "a", "c")
#: The write strengths β the explorer's slider offers.
BETAS = tuple(round(0.1 * i, 1) for i in range(11))
#: The decays α = exp(g) the explorer's slider offers.
ALPHAS = tuple(round(0.5 + 0.05 * i, 2) for i in range(11))
#: The seed of the values (normal, rounded to one decimal, so a reader can add them by eye).
SEED = 0


def memory_keys() -> torch.Tensor:
    """The keys of :data:`SEQUENCE` ``(seq, d_k)`` float64: unit vectors, ``e_i`` for
    ``NAMES[i]``."""
    eye = torch.eye(len(NAMES), dtype=torch.float64)
    return eye[[NAMES.index(name) for name in SEQUENCE]]


def memory_values() -> torch.Tensor:
    """The values ``(seq, d_v)`` float64, one per token: normal numbers rounded to one decimal
    (seeded by :data:`SEED`)."""
    g = torch.Generator().manual_seed(SEED)
    values = torch.randn(len(SEQUENCE), len(NAMES), generator=g, dtype=torch.float64)
    return torch.round(values * 10) / 10 + 0.0  # + 0.0: no −0.0


def _check_rule(rule: str, beta: float, alpha: float) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    for name, x, span in (("beta", beta, "[0, 1]"), ("alpha", alpha, "(0, 1]")):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x <= 1 or (
                name == "alpha" and x == 0):
            raise ValueError(f"{name} must be a number in {span}; got {x!r}")


def memory_states(rule: str, keys: torch.Tensor, values: torch.Tensor, beta: float = 1.0,
                  alpha: float = 1.0) -> torch.Tensor:
    """The state after each token, ``S_0 … S_seq`` ``(seq + 1, d_k, d_v)``, of ``keys``
    ``(seq, d_k)`` and ``values`` ``(seq, d_v)`` written by ``rule``. Introduced in chapter 15.

    ``"delta"`` and ``"gated"`` run :func:`course_attention.linear_attention.gated_delta_rule`
    in recurrent form, one token a call from the state the last call left (``g = log α``, 0
    for ``"delta"``; ``beta`` the write strength). ``"linear"`` adds ``k_t v_tᵀ`` (the state of
    :func:`~course_attention.linear_attention.linear_attention` before its feature map:
    written with ``φ(k)``, it is that function's state, ``tests/test_live_linear.py``).
    ``beta`` and ``alpha`` apply where the rule has them.
    """
    from . import gated_delta_rule

    _check_rule(rule, beta, alpha)
    if keys.dim() != 2 or values.dim() != 2 or keys.shape[0] != values.shape[0]:
        raise ValueError(f"need keys (seq, d_k) and values (seq, d_v) of the same seq; got "
                         f"{tuple(keys.shape)}, {tuple(values.shape)}")
    keys, values = keys.double(), values.double()
    state = keys.new_zeros(keys.shape[1], values.shape[1])  # (d_k, d_v)
    states = [state]
    g = math.log(alpha) if rule == "gated" else 0.0
    for k, v in zip(keys, values, strict=True):
        if rule == "linear":
            state = state + torch.outer(k, v)
        else:  # one token: (batch 1, heads 1, seq 1, d)
            k4, v4 = k.view(1, 1, 1, -1), v.view(1, 1, 1, -1)
            gate = torch.full((1, 1, 1), g, dtype=torch.float64)
            strength = torch.full((1, 1, 1), float(beta), dtype=torch.float64)
            _, state4 = gated_delta_rule(k4, k4, v4, gate, strength, mode="recurrent",
                                         initial_state=state.view(1, 1, *state.shape))
            state = state4[0, 0]
        states.append(state)
    return torch.stack(states)




def state_range() -> float:
    """The colour range of the explorer's state: the largest ``|S|`` of linear attention over
    every step, rounded up to a tenth (linear attention only adds: every rule's states lie
    within it)."""
    top = float(memory_states("linear", memory_keys(), memory_values()).abs().max())
    return math.ceil(top * 10) / 10
