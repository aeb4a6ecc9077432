"""Stretching rotary positions past the training length: linear interpolation, NTK-aware
scaling, YaRN and Llama 3's rule (chapter 12).

Introduced in chapter 12. A rotary model trained on ``original_context`` positions has seen its
slow pairs turn through only part of a circle; past that length they reach angles it never saw.
Each rule changes the pairs' frequencies ``θ^(−2i/d)`` (the *inverse frequencies*, ``(d/2,)``):

- **linear** (position interpolation, Chen et al. 2023): every frequency divided by ``factor``,
  so ``factor`` times as many positions fit in the angles seen;
- **NTK-aware** (bloc97, 2023): a larger base, ``θ · α^(d/(d−2))``: the fast pairs barely change,
  the slowest is divided by ``α``; Hugging Face's ``"dynamic"`` picks ``α`` from the current
  length, ``factor · seq/context − (factor − 1)`` (1 up to the trained length);
- **YaRN** (Peng et al. 2023): pairs that turn many times in the trained length keep their
  frequency, pairs that turn less than once are interpolated, a linear ramp between; and the
  attention's scores grow by ``attention_factor``² (``0.1 ln(factor) + 1`` on cos and sin);
- **Llama 3**: by wavelength: shorter than ``original_context / high_freq_factor`` kept,
  longer than ``original_context / low_freq_factor`` divided by ``factor``, a smooth blend between.

Each function returns ``(inverse frequencies (d/2,) float32, attention factor)`` exactly as
``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` computes them (the tests check it).
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "inverse_frequencies",
    "linear_scaling",
    "ntk_scaling",
    "yarn_scaling",
    "llama3_scaling",
    "SCALINGS",
    "RULES",
    "copy_accuracy_scaled",
]


def _check(d: int, theta: float, factor: float = 1.0, least: int = 2) -> None:
    if isinstance(d, bool) or not isinstance(d, int) or d < least or d % 2:
        raise ValueError(f"d (the head width) must be an even integer ≥ {least}; got {d!r}")
    if not theta > 1 or not factor >= 1:
        raise ValueError(f"need theta > 1 and factor ≥ 1; got theta={theta}, factor={factor}")


def inverse_frequencies(d: int, theta: float = 10000.0) -> torch.Tensor:
    """``(d/2,)`` float32: pair ``i`` turns by ``θ^(−2i/d)`` radians per position (chapters 10
    and 12), computed as Hugging Face does."""
    _check(d, theta)
    return 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))


def linear_scaling(d: int, theta: float, factor: float) -> tuple[torch.Tensor, float]:
    """Position interpolation: every frequency divided by ``factor`` (``"linear"``)."""
    _check(d, theta, factor)
    return inverse_frequencies(d, theta) / factor, 1.0


def ntk_scaling(d: int, theta: float, factor: float, seq_len: int | None = None,
                context: int | None = None) -> tuple[torch.Tensor, float]:
    """NTK-aware scaling: the base becomes ``θ · α^(d/(d−2))``.

    Without ``seq_len``, ``α = factor`` (the static rule). With ``seq_len`` and ``context`` (the
    trained length), ``α = factor · max(seq_len, context) / context − (factor − 1)``: Hugging
    Face's ``"dynamic"`` rule, the plain rotation up to ``context``.
    """
    _check(d, theta, factor, least=4)  # the exponent d / (d − 2)
    alpha = factor
    if seq_len is not None:
        if context is None or context < 1:
            raise ValueError("the dynamic rule needs context, the trained length")
        alpha = factor * max(seq_len, context) / context - (factor - 1)
    base = theta * alpha ** (d / (d - 2))
    return inverse_frequencies(d, base), 1.0


def yarn_scaling(d: int, theta: float, factor: float, original_context: int,
                 beta_fast: float = 32, beta_slow: float = 1, truncate: bool = True,
                 attention_factor: float | None = None) -> tuple[torch.Tensor, float]:
    """YaRN: keep the pairs that turn more than ``beta_fast`` times in ``original_context``,
    interpolate (divide by ``factor``) those that turn less than ``beta_slow`` times, a linear
    ramp between; ``attention_factor`` (default ``0.1 ln(factor) + 1``) multiplies cos and sin."""
    _check(d, theta, factor)
    if attention_factor is None:
        attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0

    def pair_of(turns: float) -> float:  # the (fractional) pair that turns `turns` times
        return d * math.log(original_context / (turns * 2 * math.pi)) / (2 * math.log(theta))

    low, high = pair_of(beta_fast), pair_of(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # no ramp of zero width
    ramp = torch.clamp((torch.arange(d // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    spins = theta ** (torch.arange(0, d, 2).float() / d)  # 1 / the plain frequencies
    kept = 1 - ramp  # 1: the pair keeps its frequency (extrapolates), 0: interpolated
    inv_freq = 1.0 / (factor * spins) * (1 - kept) + 1.0 / spins * kept
    return inv_freq, float(attention_factor)


def llama3_scaling(d: int, theta: float, factor: float, low_freq_factor: float,
                   high_freq_factor: float, original_context: int
                   ) -> tuple[torch.Tensor, float]:
    """Llama 3.1's rule, by wavelength ``2π / frequency``: shorter than ``original_context /
    high_freq_factor`` kept, longer than ``original_context / low_freq_factor`` divided by
    ``factor``, blended smoothly between."""
    _check(d, theta, factor)
    if not high_freq_factor > low_freq_factor > 0:
        raise ValueError(f"need high_freq_factor > low_freq_factor > 0; got "
                         f"{high_freq_factor}, {low_freq_factor}")
    inv_freq = inverse_frequencies(d, theta)
    long_wave, short_wave = original_context / low_freq_factor, original_context / high_freq_factor
    wavelength = 2 * math.pi / inv_freq
    scaled = torch.where(wavelength > long_wave, inv_freq / factor, inv_freq)
    smooth = ((original_context / wavelength - low_freq_factor)
              / (high_freq_factor - low_freq_factor))
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < short_wave) * ~(wavelength > long_wave)
    return torch.where(medium, blended, scaled), 1.0


#: The rules by Hugging Face's ``rope_type`` name.
SCALINGS = {"linear": linear_scaling, "dynamic": ntk_scaling, "yarn": yarn_scaling,
            "llama3": llama3_scaling}


#: The rules :func:`copy_accuracy_scaled` knows: ``"plain"`` (no scaling) and :data:`SCALINGS`'.
RULES = ("plain", *SCALINGS)


def copy_accuracy_scaled(
    model: torch.nn.Module,
    rule: str,
    factor: float = 2.0,
    seed: int = 0,
    trained_length: int = 8,
    last: int = 16,
    n_symbols: int = 20,
    n_per_length: int = 200,
    theta: float = 10000.0,
) -> dict[int, float]:
    """Exact-copy accuracy ``{length: share}`` for lengths ``1 … last`` of chapter 10's rotary
    copy model with its rotation stretched by ``rule``, without retraining (chapter 12).

    ``model``: a trained ``positions.PositionLM("rotary", …)`` (``LengthResult.model`` of
    ``positions.length_generalisation("rotary", seed)``), scored on the same test strings as
    chapter 10 scores it (so ``rule="plain"`` gives back ``LengthResult.exact``). Its training
    inputs held at most ``2 · trained_length + 1`` tokens: the original context the rules
    stretch by ``factor`` (``"dynamic"`` from each length's own, ``2n + 1``; Llama 3's with
    ``low_freq_factor`` 1 and ``high_freq_factor`` 4). The model is left as it was.
    """
    from .positions import _CausalSelfAttention, _copy_scores

    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    layers = [m for m in model.modules() if isinstance(m, _CausalSelfAttention)]
    if not layers or any(m.kind != "rotary" for m in layers):
        raise ValueError("the model must be chapter 10's rotary PositionLM")
    d, context = layers[0].d_head, 2 * trained_length + 1

    def stretch(n: int) -> None:
        frequencies, scale = None, 1.0
        if rule == "linear":
            frequencies, scale = linear_scaling(d, theta, factor)
        elif rule == "dynamic":
            frequencies, scale = ntk_scaling(d, theta, factor, 2 * n + 1, context)
        elif rule == "yarn":
            frequencies, scale = yarn_scaling(d, theta, factor, context)
        elif rule == "llama3":
            frequencies, scale = llama3_scaling(d, theta, factor, 1.0, 4.0, context)
        for m in layers:
            m.frequencies, m.rope_factor = frequencies, scale

    try:
        exact, _ = _copy_scores(model, range(1, last + 1), n_symbols, n_per_length, 1000 + seed,
                                before=stretch)
    finally:
        for m in layers:
            m.frequencies, m.rope_factor = None, 1.0
    return exact
