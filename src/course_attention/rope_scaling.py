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
``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` computes them (the tests check it);
with ``dtype=torch.float64`` the same steps in float64 (the live explorer's twin, which the page
computes in JavaScript's float64). :func:`scaled_frequencies` picks a rule by name.
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
    "scaled_frequencies",
    "SCALINGS",
    "RULES",
    "copy_accuracy_scaled",
    "LLAMA3_FREQ_FACTORS",
    "hugging_face",
    "SCALING_BOUNDS",
    "scaling_claims",
]


def _check(d: int, theta: float, factor: float = 1.0, least: int = 2) -> None:
    if isinstance(d, bool) or not isinstance(d, int) or d < least or d % 2:
        raise ValueError(f"d (the head width) must be an even integer ≥ {least}; got {d!r}")
    if not theta > 1 or not factor >= 1:
        raise ValueError(f"need theta > 1 and factor ≥ 1; got theta={theta}, factor={factor}")


def inverse_frequencies(d: int, theta: float = 10000.0, dtype: torch.dtype = torch.float32
                        ) -> torch.Tensor:
    """``(d/2,)`` float32 (or ``dtype``): pair ``i`` turns by ``θ^(−2i/d)`` radians per position
    (chapters 10 and 12), computed as Hugging Face does."""
    _check(d, theta)
    return 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d))


def linear_scaling(d: int, theta: float, factor: float, dtype: torch.dtype = torch.float32
                   ) -> tuple[torch.Tensor, float]:
    """Position interpolation: every frequency divided by ``factor`` (``"linear"``)."""
    _check(d, theta, factor)
    return inverse_frequencies(d, theta, dtype) / factor, 1.0


def ntk_scaling(d: int, theta: float, factor: float, seq_len: int | None = None,
                context: int | None = None, dtype: torch.dtype = torch.float32
                ) -> tuple[torch.Tensor, float]:
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
    return inverse_frequencies(d, base, dtype), 1.0


def yarn_scaling(d: int, theta: float, factor: float, original_context: int,
                 beta_fast: float = 32, beta_slow: float = 1, truncate: bool = True,
                 attention_factor: float | None = None, dtype: torch.dtype = torch.float32
                 ) -> tuple[torch.Tensor, float]:
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
    ramp = torch.clamp((torch.arange(d // 2, dtype=dtype) - low) / (high - low), 0, 1)
    spins = theta ** (torch.arange(0, d, 2).to(dtype) / d)  # 1 / the plain frequencies
    kept = 1 - ramp  # 1: the pair keeps its frequency (extrapolates), 0: interpolated
    inv_freq = 1.0 / (factor * spins) * (1 - kept) + 1.0 / spins * kept
    return inv_freq, float(attention_factor)


def llama3_scaling(d: int, theta: float, factor: float, low_freq_factor: float,
                   high_freq_factor: float, original_context: int,
                   dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, float]:
    """Llama 3.1's rule, by wavelength ``2π / frequency``: shorter than ``original_context /
    high_freq_factor`` kept, longer than ``original_context / low_freq_factor`` divided by
    ``factor``, blended smoothly between."""
    _check(d, theta, factor)
    if not high_freq_factor > low_freq_factor > 0:
        raise ValueError(f"need high_freq_factor > low_freq_factor > 0; got "
                         f"{high_freq_factor}, {low_freq_factor}")
    inv_freq = inverse_frequencies(d, theta, dtype)
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
#: Llama 3's ``low_freq_factor`` and ``high_freq_factor`` in chapter 12 (Llama 3.1's own values).
LLAMA3_FREQ_FACTORS = (1.0, 4.0)


def scaled_frequencies(rule: str, d: int, theta: float, factor: float, context: int,
                       seq_len: int | None = None, dtype: torch.dtype = torch.float32
                       ) -> tuple[torch.Tensor, float]:
    """``(inverse frequencies (d/2,), attention factor)`` of the rule named ``rule`` (one of
    :data:`RULES`) for a model trained on ``context`` positions, stretched by ``factor``.

    Introduced in chapter 12. ``"plain"``: :func:`inverse_frequencies` (``factor`` unused);
    ``"dynamic"`` reads ``seq_len``, the current length (Hugging Face: the largest position + 1;
    ``None``: the static NTK rule); YaRN keeps its default ramp; Llama 3 takes
    :data:`LLAMA3_FREQ_FACTORS`. As :func:`copy_accuracy_scaled` and the chapter's live
    explorer stretch chapter 10's copy model.
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}; got {rule!r}")
    if rule == "plain":
        return inverse_frequencies(d, theta, dtype), 1.0
    if rule == "linear":
        return linear_scaling(d, theta, factor, dtype)
    if rule == "dynamic":
        return ntk_scaling(d, theta, factor, seq_len, context if seq_len is not None else None,
                           dtype)
    if rule == "yarn":
        return yarn_scaling(d, theta, factor, context, dtype=dtype)
    return llama3_scaling(d, theta, factor, *LLAMA3_FREQ_FACTORS, context, dtype)


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
        frequencies, scale = None, 1.0  # plain: the layers' own (chapter 10's) frequencies
        if rule != "plain":
            frequencies, scale = scaled_frequencies(rule, d, theta, factor, context, 2 * n + 1)
        for m in layers:
            m.frequencies, m.rope_factor = frequencies, scale

    try:
        exact, _ = _copy_scores(model, range(1, last + 1), n_symbols, n_per_length, 1000 + seed,
                                before=stretch)
    finally:
        for m in layers:
            m.frequencies, m.rope_factor = None, 1.0
    return exact


def hugging_face(rope_type: str, d: int, theta: float, context: int, seq_len: int | None = None,
                 **params: float) -> tuple[torch.Tensor, float]:
    """Hugging Face's own ``(inverse frequencies (d/2,), attention factor)`` for ``rope_type``
    (``"default"`` or a key of ``ROPE_INIT_FUNCTIONS``: ``"linear"``, ``"dynamic"``, ``"yarn"``,
    ``"llama3"``, …) with its ``params`` (``factor``, ``original_max_position_embeddings`` …),
    computed by ``transformers`` on a small ``LlamaConfig`` (chapter 12). Works with
    transformers 4 (``rope_theta`` and ``rope_scaling``) and 5 (``rope_parameters``)."""
    import transformers
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    _check(d, theta)
    if rope_type != "default" and rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"rope_type must be 'default' or one of {sorted(ROPE_INIT_FUNCTIONS)}; "
                         f"got {rope_type!r}")
    stretched = "original_max_position_embeddings" in params  # YaRN, Llama 3: the new length
    length = int(context * params.get("factor", 1.0)) if stretched else context
    shape = dict(hidden_size=4 * d, num_attention_heads=4, head_dim=d,
                 max_position_embeddings=length)
    if int(transformers.__version__.split(".")[0]) >= 5:
        config = transformers.LlamaConfig(
            **shape, rope_parameters={"rope_type": rope_type, "rope_theta": theta, **params})
    else:  # pragma: no cover - Colab's transformers 4
        scaling = None if rope_type == "default" else {"rope_type": rope_type, **params}
        config = transformers.LlamaConfig(**shape, rope_theta=theta, rope_scaling=scaling)
    if rope_type == "default":
        return inverse_frequencies(d, theta), 1.0
    frequencies, factor = ROPE_INIT_FUNCTIONS[rope_type](config, None, seq_len=seq_len)
    return frequencies, float(factor)


#: The bounds :func:`scaling_claims` asserts, on chapter 10's rotary copy model stretched by a
#: factor of 2 (exact copies of 1 … 16 symbols, trained on 1 … 8). Lowest and highest seen on
#: seeds 0-2 with torch's AVX512, AVX2 and default kernels (nine runs): plain at the trained
#: lengths at least 0.96, at 16 symbols 0.00-0.06; linear at 3 symbols 0.04-0.28; the mean over
#: 9 … 16 symbols, dynamic minus plain 0.22-0.39 and YaRN minus plain 0.19-0.43; Llama 3's rule
#: at 8 symbols 0.06-0.73 and at 16 symbols 0.00-0.23. At 16 symbols alone dynamic NTK ranged
#: from 0.07 to 0.83 and YaRN from 0.26 to 0.90: too wide to state, so the claims use the mean.
SCALING_BOUNDS = {"plain_inside_min": 0.93, "plain_16_max": 0.15, "linear_3_max": 0.4,
                  "dynamic_lead_min": 0.15, "yarn_lead_min": 0.12, "llama3_8_max": 0.85,
                  "llama3_16_max": 0.4}


def scaling_claims(exact: dict[str, dict[int, float]], trained_length: int = 8,
                   last: int = 16) -> dict[str, float]:
    """Assert chapter 12's statements about the copy model under each rule, for one seed.

    ``exact``: ``{rule: {length: share}}`` from :func:`copy_accuracy_scaled` for every rule of
    :data:`RULES`. The claims (bounds in :data:`SCALING_BOUNDS`): the plain model copies every
    trained length and fails at ``last``; linear interpolation breaks it *inside* the trained
    lengths (at 3 symbols); dynamic NTK changes nothing up to the trained length (equal to
    plain); over the lengths past training (``trained_length + 1 … last``) dynamic NTK and YaRN
    copy more than plain on average; Llama 3's rule loses copies at the trained length and fails
    at ``last``. Raises ``AssertionError`` naming the claims that fail; returns the values the
    chapter prints (``*_past``: the mean share over the lengths past training). Chapter 12 calls
    it on seed 0, ``tests/test_rope_scaling.py`` on seeds 1 and 2.
    """
    missing = set(RULES) - set(exact)
    if missing:
        raise ValueError(f"exact needs every rule of {RULES}; missing {sorted(missing)}")
    b, inside = SCALING_BOUNDS, range(1, trained_length + 1)
    past = range(trained_length + 1, last + 1)
    plain, dynamic = exact["plain"], exact["dynamic"]
    values = {
        "plain_inside": min(plain[n] for n in inside), "plain_16": plain[last],
        "linear_3": exact["linear"][3], "llama3_8": exact["llama3"][trained_length],
        "llama3_16": exact["llama3"][last],
        **{f"{rule}_past": sum(exact[rule][n] for n in past) / len(past) for rule in RULES},
    }
    checks = {
        "plain copies every trained length": values["plain_inside"] >= b["plain_inside_min"],
        "plain fails at the last length": values["plain_16"] <= b["plain_16_max"],
        "linear breaks a trained length": values["linear_3"] <= b["linear_3_max"],
        "dynamic is plain up to the trained length": all(dynamic[n] == plain[n] for n in inside),
        "dynamic leads plain past training":
            values["dynamic_past"] >= values["plain_past"] + b["dynamic_lead_min"],
        "YaRN leads plain past training":
            values["yarn_past"] >= values["plain_past"] + b["yarn_lead_min"],
        "Llama 3 loses copies at the trained length": values["llama3_8"] <= b["llama3_8_max"],
        "Llama 3 fails at the last length": values["llama3_16"] <= b["llama3_16_max"],
    }
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise AssertionError(f"chapter 12's RoPE-scaling claims fail: {failed} "
                             f"({ {k: round(v, 3) for k, v in values.items()} })")
    return values
