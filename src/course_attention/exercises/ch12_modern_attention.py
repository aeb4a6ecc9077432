"""Exercises of chapter 12 (a modern attention layer): RMSNorm, RoPE by halves, SwiGLU, the
scores of grouped-query attention with QK-norm, and YaRN's frequencies.

Introduced in chapter 12. The learner writes numpy in float64; each reference is the package's
own code (:mod:`course_attention.modern` in float64, :func:`course_attention.numpy_ref.rotary`,
:func:`course_attention.rope_scaling.yarn_scaling`), and ``tests/test_exercises_modern.py``
checks that they equal what :class:`~course_attention.modern.ModernAttention` computes.
"""

from __future__ import annotations

import math

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

EPS = 1e-6
"""The RMSNorm epsilon of exercise 4's QK-norm (Qwen3's ``rms_norm_eps``)."""

# --- 1: RMSNorm -------------------------------------------------------------------------------


def _rms_norm_reference(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    import torch

    from ..modern import rms_norm

    x, weight = np.asarray(x, dtype=float), np.asarray(weight, dtype=float)
    return rms_norm(torch.from_numpy(x), torch.from_numpy(weight), eps, float32=False).numpy()


def _rms(x: np.ndarray, eps: float = 0.0, axis: int | None = -1) -> np.ndarray:
    return np.sqrt((x**2).mean(axis=axis, keepdims=True) + eps)


def _centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean(axis=-1, keepdims=True)


RMS_NORM_MISTAKES = (
    Mistake(
        N_(
            "the mean subtracted first: that is LayerNorm (without its bias); RMSNorm divides x "
            "itself by its root mean square"
        ),
        lambda x, weight, eps: weight * _centred(x) / _rms(_centred(x), eps),
        hint=N_(
            "RMSNorm never centres: no mean is subtracted anywhere, neither from x nor inside the "
            "statistic (mean(x²), not the variance)."
        ),
    ),
    Mistake(
        N_(
            "divided by the standard deviation (np.std, which subtracts the mean inside) instead "
            "of the root mean square √(mean(x²) + eps)"
        ),
        lambda x, weight, eps: weight * x / _rms(_centred(x), eps),
        hint=N_(
            "np.std and np.var subtract the mean before squaring; the root mean square does not: "
            "np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)."
        ),
    ),
    Mistake(
        N_("eps added outside the square root: √(mean(x²)) + eps instead of √(mean(x²) + eps)"),
        lambda x, weight, eps: weight * x / (_rms(x) + eps),
    ),
    Mistake(
        N_("eps left out: it keeps the division finite for a row of zeros, and it matters here"),
        lambda x, weight, eps: weight * x / _rms(x),
    ),
    Mistake(
        N_("the weight forgotten: the normalised row is multiplied by weight, feature by feature"),
        lambda x, weight, eps: x / _rms(x, eps),
    ),
    Mistake(
        N_(
            "the mean of x² taken over axis 0 (the rows) instead of the last axis: each token is "
            "normalised over its own features"
        ),
        lambda x, weight, eps: weight * x / _rms(x, eps, axis=0),
    ),
    Mistake(
        N_(
            "one mean over the whole array (no axis): each token is normalised over its own "
            "features, axis=-1 with keepdims=True"
        ),
        lambda x, weight, eps: weight * x / _rms(x, eps, axis=None),
    ),
)


def _rms_norm_cases() -> list[tuple]:
    gen = rng(121)
    return [
        # two tokens of four features; eps 0.5 is large beside mean(x²) ≈ 1–8
        (np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]), np.array([1.0, 0.5, 2.0, -1.0]),
         0.5),
        # (batch, seq, d): small activations, eps of their size
        (0.1 * gen.normal(size=(2, 3, 8)) + 0.05, gen.uniform(0.5, 1.5, size=8), 1e-2),
        # (seq, d) with an offset (mean far from 0) and tiny values: eps = 1e-4 ≈ mean(x²)
        (1e-2 * (gen.normal(size=(5, 16)) + 1.0), gen.uniform(0.5, 2.0, size=16), 1e-4),
        # rows of very different scales
        (gen.normal(size=(3, 6)) * np.array([[0.1], [1.0], [3.0]]) + 0.2,
         gen.uniform(-1.0, 2.0, size=6), 0.05),
    ]


# --- 2: RoPE by halves ------------------------------------------------------------------------


def _rotary(x: np.ndarray, positions: np.ndarray | None, theta: float, pairs: str) -> np.ndarray:
    from ..numpy_ref import rotary

    return rotary(x, positions, theta, pairs=pairs)  # (..., seq, d)


def _rope_halves_reference(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    return _rotary(x, positions, theta, "halves")


def _rope_neighbour_angles(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Halves rotated, but the angle table laid out for neighbours: [θ₀, θ₀, θ₁, θ₁, …]."""
    d = x.shape[-1]
    angle = np.repeat(np.asarray(positions, dtype=float)[:, None]
                      * theta ** (-np.arange(0, d, 2) / d), 2, axis=-1)  # (seq, d)
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return x * np.cos(angle) + rotated * np.sin(angle)


ROPE_MISTAKES = (
    Mistake(
        N_(
            "neighbours paired, (2i, 2i + 1), as in chapter 10: Llama's rotate_half pairs feature "
            "i with feature i + d/2"
        ),
        lambda x, positions, theta: _rotary(x, positions, theta, "interleaved"),
        hint=N_(
            "with rotate_half the partner of feature i is feature i + d/2: the first half holds "
            "every pair's first feature, the second half every pair's second feature."
        ),
    ),
    Mistake(
        N_(
            "rotate_half with the wrong sign, [x₂, −x₁] instead of [−x₂, x₁]: every pair turns "
            "backwards"
        ),
        lambda x, positions, theta: _rotary(x, -np.asarray(positions), theta, "halves"),
    ),
    Mistake(
        N_("the exponent i/d instead of 2i/d: pair i turns at θ^(−2i/d) radians per position"),
        lambda x, positions, theta: _rotary(x, positions, math.sqrt(theta), "halves"),
    ),
    Mistake(
        N_("the angles not multiplied by the positions: pair i turns by position · θ^(−2i/d)"),
        lambda x, positions, theta: _rotary(x, np.ones(len(positions)), theta, "halves"),
    ),
    Mistake(
        N_(
            "the positions taken as 0, 1, 2, … instead of the given ones (after a cache, the first "
            "new token is not at position 0)"
        ),
        lambda x, positions, theta: _rotary(x, None, theta, "halves"),
    ),
    Mistake(
        N_(
            "the angles laid out for neighbours (np.repeat: θ₀, θ₀, θ₁, θ₁, …) while the halves "
            "are rotated: both halves need the same angles, np.concatenate([angle, angle])"
        ),
        _rope_neighbour_angles,
    ),
)


def _rope_cases() -> list[tuple]:
    gen = rng(122)
    return [
        (np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]]),
         np.array([2, 3, 4]), 10000.0),
        (gen.normal(size=(2, 2, 5, 8)), np.arange(3, 8), 10000.0),  # a chunk after 3 cached
        (gen.normal(size=(6, 16)), np.array([0, 1, 5, 9, 20, 100]), 500000.0),
        (gen.normal(size=(1, 3, 4, 6)), np.arange(10, 14), 100.0),  # d/2 = 3 pairs
    ]


# --- 3: SwiGLU --------------------------------------------------------------------------------


def _swiglu_reference(x: np.ndarray, W_gate: np.ndarray, W_up: np.ndarray,
                      W_down: np.ndarray) -> np.ndarray:
    import torch

    from ..modern import SwiGLU

    d_model, d_ff = W_gate.shape
    with torch.random.fork_rng(devices=[]):  # building the module draws weights: keep the seed
        mlp = SwiGLU(d_model, d_ff).double()
    with torch.no_grad():  # nn.Linear keeps (out, in): the transposes of x @ W's matrices
        for layer, W in ((mlp.gate_proj, W_gate), (mlp.up_proj, W_up), (mlp.down_proj, W_down)):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(W.T, dtype=float)))
        return mlp(torch.from_numpy(np.asarray(x, dtype=float))).numpy()


def _silu(z: np.ndarray) -> np.ndarray:
    return z / (1.0 + np.exp(-z))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _gelu(z: np.ndarray) -> np.ndarray:
    import torch

    return torch.nn.functional.gelu(torch.from_numpy(z)).numpy()  # exact, with erf


def _gelu_tanh(z: np.ndarray) -> np.ndarray:
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))


SWIGLU_MISTAKES = (
    Mistake(
        N_(
            "SiLU on the up branch instead of the gate (W_gate and W_up swapped): "
            "silu(x W_gate) · (x W_up), the gate goes through the SiLU"
        ),
        lambda x, Wg, Wu, Wd: ((x @ Wg) * _silu(x @ Wu)) @ Wd,
    ),
    Mistake(
        N_("sigmoid instead of SiLU: silu(z) = z · sigmoid(z)"),
        lambda x, Wg, Wu, Wd: (_sigmoid(x @ Wg) * (x @ Wu)) @ Wd,
    ),
    Mistake(
        N_("ReLU instead of SiLU: the gate of SwiGLU is silu(z) = z · sigmoid(z)"),
        lambda x, Wg, Wu, Wd: (np.maximum(x @ Wg, 0.0) * (x @ Wu)) @ Wd,
    ),
    Mistake(
        N_("GELU instead of SiLU: the gate of SwiGLU is silu(z) = z · sigmoid(z)"),
        lambda x, Wg, Wu, Wd: (_gelu(x @ Wg) * (x @ Wu)) @ Wd,
    ),
    Mistake(
        N_("GELU (tanh approximation) instead of SiLU: the gate is silu(z) = z · sigmoid(z)"),
        lambda x, Wg, Wu, Wd: (_gelu_tanh(x @ Wg) * (x @ Wu)) @ Wd,
    ),
    Mistake(
        N_(
            "no gate: silu(x W_up) W_down is chapter 6's feed-forward network; SwiGLU multiplies "
            "silu(x W_gate) by x W_up, feature by feature"
        ),
        lambda x, Wg, Wu, Wd: _silu(x @ Wu) @ Wd,
    ),
    Mistake(
        N_(
            "the up branch left out: silu(x W_gate) W_down; SwiGLU multiplies silu(x W_gate) by "
            "x W_up, feature by feature"
        ),
        lambda x, Wg, Wu, Wd: _silu(x @ Wg) @ Wd,
    ),
)


def _swiglu_cases() -> list[tuple]:
    gen = rng(123)

    def case(shape: tuple[int, ...], d_ff: int) -> tuple:
        d = shape[-1]
        return (gen.normal(size=shape), gen.normal(size=(d, d_ff)) / math.sqrt(d) * 2,
                gen.normal(size=(d, d_ff)) / math.sqrt(d), gen.normal(size=(d_ff, d)) / 2)

    return [
        (np.array([[1.0, -1.0], [0.5, 2.0]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.5]]),
         np.array([[1.0, 0.0, 2.0], [-1.0, 1.0, 0.5]]),
         np.array([[1.0, 0.0], [0.5, -1.0], [2.0, 1.0]])),
        case((5, 4), 8),
        case((2, 3, 6), 10),
        case((1, 4, 8), 12),
    ]


# --- 4: grouped-query scores with QK-norm -----------------------------------------------------


def _heads(x: np.ndarray, W: np.ndarray, n: int, reshape_only: bool = False) -> np.ndarray:
    """``x @ W`` ``(batch, seq, n · d_head)`` → ``(batch, n, seq, d_head)`` (``reshape_only``:
    chapter 5's mistake, a reshape without the swap of the seq and head axes)."""
    from ..numpy_ref import split_heads

    h = x @ W
    if reshape_only:
        return h.reshape(h.shape[0], n, h.shape[1], h.shape[2] // n)
    return split_heads(h, n)


def _gqa_scores(x, W_q, W_k, q_weight, k_weight, n_heads, n_kv_heads, positions, theta, *,
                norm_first=True, per_head=True, order="repeat", scale="d_head", norm=True,
                reshape_only=False):
    """The scores, with one step done the way a catalogued mistake does it."""
    from ..grouped_query import repeat_kv

    d_head = W_q.shape[1] // n_heads
    q = _heads(x, W_q, n_heads, reshape_only)
    k = _heads(x, W_k, n_kv_heads, reshape_only)

    def qk_norm(h: np.ndarray, weight: np.ndarray) -> np.ndarray:
        if not norm:
            return h
        if per_head:
            return _rms_norm_reference(h, weight, EPS)
        b, n, s, dh = h.shape  # one norm over all heads together, the weight tiled per head
        flat = h.transpose(0, 2, 1, 3).reshape(b, s, n * dh)
        normed = _rms_norm_reference(flat, np.tile(weight, n), EPS)
        return normed.reshape(b, s, n, dh).transpose(0, 2, 1, 3)

    def rope(h: np.ndarray) -> np.ndarray:
        return _rotary(h, positions, theta, "halves")

    if norm_first:
        q, k = rope(qk_norm(q, q_weight)), rope(qk_norm(k, k_weight))
    else:
        q, k = qk_norm(rope(q), q_weight), qk_norm(rope(k), k_weight)
    if order == "repeat":
        k = repeat_kv(k, n_heads)
    else:
        k = np.tile(k, (1, n_heads // n_kv_heads, 1, 1))
    width = {"d_head": d_head, "d_model": x.shape[-1], "none": 1}[scale]
    return q @ k.swapaxes(-1, -2) / np.sqrt(width)  # (batch, n_heads, seq, seq)


def _gqa_scores_reference(x: np.ndarray, W_q: np.ndarray, W_k: np.ndarray,
                          q_weight: np.ndarray, k_weight: np.ndarray, n_heads: int,
                          n_kv_heads: int, positions: np.ndarray, theta: float) -> np.ndarray:
    """``(batch, n_heads, seq, seq)``: the scores ``ModernAttention`` (``qk_norm=True``) hands to
    its softmax, before the causal mask."""
    return _gqa_scores(x, W_q, W_k, q_weight, k_weight, n_heads, n_kv_heads, positions, theta)


def _gqa_mistake(**how: object):
    return lambda *args: _gqa_scores(*args, **how)


GQA_MISTAKES = (
    Mistake(
        N_(
            "QK-norm after the rotation instead of before: a rotation keeps each vector's RMS, "
            "but the norm's weight scales features that the rotation has already mixed"
        ),
        _gqa_mistake(norm_first=False),
        hint=N_(
            "the order is project, split into heads, RMSNorm each head (its weight times the "
            "normalised vector), and only then rotate: the weight must scale the features "
            "before RoPE mixes each pair."
        ),
    ),
    Mistake(
        N_(
            "one RMSNorm over all heads together: QK-norm normalises each head's d_head features "
            "on their own (the weight has shape (d_head,))"
        ),
        _gqa_mistake(per_head=False),
        hint=N_(
            "split into heads first: the norm's statistic is the mean of the squares of one "
            "head's d_head features, so each head is normalised on its own."
        ),
    ),
    Mistake(
        N_(
            "the key heads tiled (np.tile: heads 0 1 0 1) instead of repeated (np.repeat: 0 0 1 "
            "1): query head h reads key head h // (n_heads / n_kv_heads)"
        ),
        _gqa_mistake(order="tile"),
    ),
    Mistake(
        N_("the scores not divided by √d_head"),
        _gqa_mistake(scale="none"),
    ),
    Mistake(
        N_("the scores divided by √d_model instead of √d_head, the width of one head"),
        _gqa_mistake(scale="d_model"),
    ),
    Mistake(
        N_("no QK-norm: each head's query and key go through RMSNorm (with q_weight, k_weight)"),
        _gqa_mistake(norm=False),
    ),
    Mistake(
        N_(
            "the heads split by a reshape alone, to `(batch, heads, seq, d_head)`: reshape to "
            "`(batch, seq, heads, d_head)` first, then swap the seq and head axes (chapter 5)"
        ),
        _gqa_mistake(reshape_only=True),
    ),
)


def _gqa_cases() -> list[tuple]:
    gen = rng(124)

    def case(batch: int, seq: int, d_model: int, n_heads: int, n_kv: int, d_head: int,
             start: int, theta: float) -> tuple:
        return (
            gen.normal(size=(batch, seq, d_model)),
            gen.normal(size=(d_model, n_heads * d_head)) / math.sqrt(d_model),
            gen.normal(size=(d_model, n_kv * d_head)) / math.sqrt(d_model),
            gen.uniform(0.3, 2.0, size=d_head),  # not all equal: RMSNorm's weight is learned
            gen.uniform(0.3, 2.0, size=d_head),
            n_heads,
            n_kv,
            np.arange(start, start + seq),
            theta,
        )

    return [
        case(1, 3, 8, 4, 2, 4, 0, 10000.0),
        case(2, 4, 10, 4, 2, 6, 5, 10000.0),  # d_head · n_heads ≠ d_model, as in Qwen3
        case(1, 5, 16, 8, 2, 4, 2, 1000000.0),  # four query heads per key head
    ]


# --- 5: YaRN's frequencies --------------------------------------------------------------------


def _yarn_reference(d: int, theta: float, factor: float, original_context: int,
                    beta_fast: float = 32, beta_slow: float = 1) -> np.ndarray:
    """Hugging Face's (and :func:`~course_attention.rope_scaling.yarn_scaling`'s) frequencies,
    computed in float32 (``(d/2,)``, cast to float64): a float64 answer differs from them by
    float32 rounding, about 1e-7 relative, far inside the checker's ``rtol`` of 1e-5; the
    exercise's ``atol`` is tiny, since the slowest frequencies are ~1e-7 and must be judged too."""
    from ..rope_scaling import yarn_scaling

    inv_freq, _ = yarn_scaling(d, theta, factor, original_context, beta_fast, beta_slow)
    return inv_freq.double().numpy()  # (d/2,)


def _yarn(d, theta, factor, original_context, beta_fast=32, beta_slow=1, *, truncate=True,
          reverse=False, two_pi=True, wavelength=False, ramp=True):
    """YaRN's frequencies in float64, with one step done the way a catalogued mistake does it."""
    plain = theta ** (-np.arange(0, d, 2) / d)  # (d/2,)
    if not ramp:
        return plain / factor

    def pair_of(turns: float) -> float:
        if wavelength:  # the pair whose wavelength 2π θ^(2i/d) is `turns` tokens
            return d * math.log(turns / (2 * math.pi)) / (2 * math.log(theta))
        circle = 2 * math.pi if two_pi else 1.0
        return d * math.log(original_context / (turns * circle)) / (2 * math.log(theta))

    low, high = pair_of(beta_fast), pair_of(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    interpolated = np.clip((np.arange(d // 2) - low) / (high - low), 0.0, 1.0)
    if reverse:
        interpolated = 1.0 - interpolated
    return plain / factor * interpolated + plain * (1.0 - interpolated)


def _yarn_mistake(**how: object):
    return lambda *args: _yarn(*args, **how)


_TURNS_HINT = N_(
    "beta_fast and beta_slow count whole turns (rotations) in original_context positions; one "
    "turn is 2π radians."
)

YARN_MISTAKES = (
    Mistake(
        N_(
            "the ramp reversed: the fast pairs interpolated and the slow ones kept; the pairs "
            "that turn many times in the trained context keep their frequency"
        ),
        _yarn_mistake(reverse=True),
        hint=N_(
            "pair 0 turns fastest (θ⁰ = 1 radian per position): it has seen every angle many "
            "times and keeps its frequency; the slowest pairs, which never finished a turn, are "
            "divided by factor."
        ),
    ),
    Mistake(
        N_(
            "the ramp's bounds not rounded: YaRN (and Hugging Face) take floor(low) and "
            "ceil(high) of the fractional pair indices"
        ),
        _yarn_mistake(truncate=False),
    ),
    Mistake(
        N_(
            "every frequency divided by factor: that is linear interpolation; YaRN keeps the fast "
            "pairs and ramps between"
        ),
        _yarn_mistake(ramp=False),
    ),
    Mistake(
        N_(
            "radians counted instead of turns (2π missing): a pair turns original_context · "
            "θ^(−2i/d) / (2π) times in the trained context"
        ),
        _yarn_mistake(two_pi=False),
        hint=_TURNS_HINT,
    ),
    Mistake(
        N_(
            "beta_fast and beta_slow read as wavelengths in tokens: they count the turns a pair "
            "makes in original_context positions, original_context / wavelength"
        ),
        _yarn_mistake(wavelength=True),
        hint=_TURNS_HINT,
    ),
)


def _yarn_cases() -> list[tuple]:
    return [
        (32, 10000.0, 2.0, 512),
        (64, 10000.0, 4.0, 2048),
        (128, 1000000.0, 4.0, 32768),  # Qwen3's YaRN setting
        (128, 500000.0, 8.0, 8192, 16, 2),
    ]


# --- the exercises ----------------------------------------------------------------------------

register(
    Exercise(
        id="modern-attention-1",
        title=N_("RMSNorm"),
        reference=_rms_norm_reference,
        cases=_rms_norm_cases,
        difficulty=1,
        minutes=5,
        mistakes=RMS_NORM_MISTAKES,
        hint=N_(
            "over the last axis: rms = np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps); "
            "return weight * x / rms. No mean is subtracted and there is no bias."
        ),
        nudge=N_(
            "RMSNorm divides each token's features by their root mean square √(mean(x²) + eps), "
            "then multiplies by the weight; unlike LayerNorm it subtracts no mean."
        ),
    )
)

register(
    Exercise(
        id="modern-attention-2",
        title=N_("RoPE by halves (rotate_half)"),
        reference=_rope_halves_reference,
        cases=_rope_cases,
        difficulty=2,
        minutes=10,
        mistakes=ROPE_MISTAKES,
        hint=N_(
            "freq = theta ** (-np.arange(0, d, 2) / d) (d/2,); angle = positions[:, None] * freq "
            "(seq, d/2); cos = np.cos(np.concatenate([angle, angle], axis=-1)), the same for sin; "
            "rotate_half(x) = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1); "
            "return x * cos + rotate_half(x) * sin."
        ),
        nudge=N_(
            "feature i pairs with feature i + d/2; pair i turns by position · theta^(−2i/d), and "
            "x · cos + rotate_half(x) · sin turns every pair at once."
        ),
    )
)

register(
    Exercise(
        id="modern-attention-3",
        title=N_("SwiGLU"),
        reference=_swiglu_reference,
        cases=_swiglu_cases,
        difficulty=1,
        minutes=5,
        mistakes=SWIGLU_MISTAKES,
        hint=N_(
            "gate = x @ W_gate, up = x @ W_up (both (..., d_ff)); silu(z) = z / (1 + np.exp(-z)); "
            "return (silu(gate) * up) @ W_down."
        ),
        nudge=N_(
            "two projections of x: the gate goes through SiLU, z · sigmoid(z), and multiplies the "
            "other feature by feature; W_down brings the product back to d_model."
        ),
    )
)

register(
    Exercise(
        id="modern-attention-4",
        title=N_("GQA scores with QK-norm"),
        reference=_gqa_scores_reference,
        cases=_gqa_cases,
        difficulty=3,
        minutes=20,
        mistakes=GQA_MISTAKES,
        hint=N_(
            "d_head = W_q.shape[1] // n_heads; q = (x @ W_q).reshape(batch, seq, n_heads, "
            "d_head).transpose(0, 2, 1, 3), k the same with n_kv_heads; q = rope_halves(rms_norm("
            "q, q_weight, 1e-6), positions, theta), k likewise with k_weight; k = np.repeat(k, "
            "n_heads // n_kv_heads, axis=1); return q @ k.swapaxes(-1, -2) / np.sqrt(d_head)."
        ),
        nudge=N_(
            "the order matters: project, split into heads, RMSNorm each head over its d_head "
            "features, rotate, repeat each key head for its group of query heads, then q · k / "
            "√d_head."
        ),
    )
)

register(
    Exercise(
        id="modern-attention-5",
        title=N_("YaRN's frequency ramp"),
        reference=_yarn_reference,
        cases=_yarn_cases,
        difficulty=3,
        minutes=15,
        mistakes=YARN_MISTAKES,
        atol=1e-12,  # the slowest frequencies are ~1e-7: judged by rtol (1e-5) alone
        hint=N_(
            "freq = theta ** (-np.arange(0, d, 2) / d); the pair that turns r times in "
            "original_context positions is i(r) = d · ln(original_context / (2π r)) / (2 ln "
            "theta); low = max(floor(i(beta_fast)), 0), high = min(ceil(i(beta_slow)), d - 1); "
            "ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1); return freq / factor "
            "* ramp + freq * (1 - ramp)."
        ),
        nudge=N_(
            "count how many turns each pair makes in original_context positions: pairs with more "
            "than beta_fast turns keep their frequency, pairs with fewer than beta_slow are "
            "divided by factor, and a linear ramp over the pair index joins the two."
        ),
    )
)
