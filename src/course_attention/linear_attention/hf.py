"""The course's gated delta rule and Qwen3-Next's layer against Hugging Face's own (chapter 15).

Introduced in chapter 15. :func:`rule_equality` runs
:func:`~course_attention.linear_attention.gated_delta_rule` and Hugging Face's two references,
``torch_recurrent_gated_delta_rule`` and ``torch_chunk_gated_delta_rule``
(``transformers.models.qwen3_next``), on the same random inputs. Those references compute in
float32 whatever their inputs' dtype, so they agree with the course's float64 rule to float32
precision, not to float64's; the course's own recurrent and chunkwise forms agree to float64's.
:func:`layer_equality` builds a small random ``Qwen3NextGatedDeltaNet`` in float64 and runs it and
:func:`~course_attention.linear_attention.gated_deltanet.from_hf`'s copy on the same input. Needs
``transformers`` with Qwen3-Next (4.57 or later).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from . import gated_delta_rule
from .gated_deltanet import from_hf

__all__ = ["SMALL", "RuleGaps", "rule_inputs", "rule_equality", "small_layer", "layer_equality"]

F64 = torch.float64
#: The small Qwen3-Next config of :func:`small_layer`: two key heads serving four value heads.
SMALL = dict(hidden_size=64, linear_num_key_heads=2, linear_num_value_heads=4,
             linear_key_head_dim=8, linear_value_head_dim=6, linear_conv_kernel_dim=4,
             num_hidden_layers=1, layer_types=["linear_attention"], num_attention_heads=4,
             num_key_value_heads=2, vocab_size=50, intermediate_size=32,
             moe_intermediate_size=16, num_experts=2, num_experts_per_tok=1)


@dataclass(frozen=True)
class RuleGaps:
    """Largest absolute differences of outputs and final states (chapter 15):
    ``hf_recurrent`` and ``hf_chunk`` between the course's float64 rule and Hugging Face's
    references; ``chunk_recurrent`` between the course's own two forms; ``scale`` the largest
    output, for a relative reading."""

    hf_recurrent: float
    hf_chunk: float
    chunk_recurrent: float
    scale: float


def rule_inputs(seq: int = 40, heads: int = 2, d_k: int = 8, d_v: int = 6, seed: int = 0
                ) -> tuple[torch.Tensor, ...]:
    """Random ``q, k, v, g, beta`` in float64 and the course's layout (chapter 15): ``q``, ``k``
    ``(1, heads, seq, d_k)`` L2-normalised, ``v`` ``(1, heads, seq, d_v)``, the decay
    ``g ≤ 0`` and the write strength ``beta`` in ``(0, 1)`` ``(1, heads, seq)``."""
    if min(seq, heads, d_k, d_v) < 1:
        raise ValueError(f"need seq, heads, d_k, d_v ≥ 1; got {seq}, {heads}, {d_k}, {d_v}")
    gen = torch.Generator().manual_seed(seed)
    q, k = (torch.nn.functional.normalize(torch.randn(1, heads, seq, d_k, generator=gen,
                                                      dtype=F64), dim=-1) for _ in range(2))
    v = torch.randn(1, heads, seq, d_v, generator=gen, dtype=F64)
    g = -torch.rand(1, heads, seq, generator=gen, dtype=F64) * 0.5
    beta = torch.rand(1, heads, seq, generator=gen, dtype=F64)
    return q, k, v, g, beta


@contextmanager
def _quiet() -> Iterator[None]:
    """Hugging Face's warnings that a faster kernel is not installed, silenced while it lasts
    (the references are what the chapter compares)."""
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()
    try:
        yield
    finally:
        logging.set_verbosity(level)


def _modeling() -> Any:
    """``transformers.models.qwen3_next.modeling_qwen3_next``."""
    from transformers.models.qwen3_next import modeling_qwen3_next

    return modeling_qwen3_next


def _gap(a: tuple[torch.Tensor, torch.Tensor], b: tuple[torch.Tensor, torch.Tensor]) -> float:
    return max(float((x.to(F64) - y.to(F64)).abs().max()) for x, y in zip(a, b, strict=True))


def rule_equality(seq: int = 40, chunk_size: int = 16, seed: int = 0) -> RuleGaps:
    """The gaps of :class:`RuleGaps` on :func:`rule_inputs` (chapter 15), both chunkwise forms
    in blocks of ``chunk_size``. Hugging Face's references take ``(batch, seq, heads, ...)``."""
    qn = _modeling()
    q, k, v, g, beta = rule_inputs(seq, seed=seed)
    recurrent = gated_delta_rule(q, k, v, g, beta, "recurrent")
    chunk = gated_delta_rule(q, k, v, g, beta, "chunk", chunk_size)
    theirs = [x.transpose(1, 2) for x in (q, k, v, g, beta)]
    with _quiet():
        hf = {"recurrent": qn.torch_recurrent_gated_delta_rule(
                  *theirs, initial_state=None, output_final_state=True),
              "chunk": qn.torch_chunk_gated_delta_rule(
                  *theirs, chunk_size=chunk_size, initial_state=None, output_final_state=True)}
    hf = {name: (out.transpose(1, 2), state) for name, (out, state) in hf.items()}
    return RuleGaps(_gap(recurrent, hf["recurrent"]), _gap(recurrent, hf["chunk"]),
                    _gap(recurrent, chunk), float(recurrent[0].abs().max()))


def small_layer(seed: int = 0) -> torch.nn.Module:
    """A ``Qwen3NextGatedDeltaNet`` of :data:`SMALL` in float64, every weight drawn at random
    (``std`` 0.3; the decays ``A`` in ``[0.1, 2.1)``) so that no gate sits at its start value."""
    import transformers

    qn = _modeling()
    torch.manual_seed(seed)
    with _quiet():  # transformers 4.57 notes that the fast kernels are not installed
        layer = qn.Qwen3NextGatedDeltaNet(transformers.Qwen3NextConfig(**SMALL), 0).to(F64)
    with torch.no_grad():
        for p in layer.parameters():
            p.normal_(0, 0.3)
        layer.A_log.copy_(torch.log(torch.rand(layer.num_v_heads, dtype=F64) * 2 + 0.1))
    return layer


def layer_equality(seq: int = 37, seed: int = 0) -> tuple[float, float, float]:
    """``(gap, scale, control)`` (chapter 15): the largest difference between
    :func:`small_layer`'s output and its
    :func:`~course_attention.linear_attention.gated_deltanet.from_hf` copy's on one random input
    ``(2, seq, 64)``, the largest output, and the gap once the copy's ``dt_bias`` is moved by 0.5
    (the control: a wrong gate is seen)."""
    layer = small_layer(seed)
    ours = from_hf(layer)
    x = torch.randn(2, seq, SMALL["hidden_size"], dtype=F64,
                    generator=torch.Generator().manual_seed(seed + 1))
    with torch.no_grad(), _quiet():
        theirs, mine = layer(x), ours(x)
        gap = float((theirs - mine).abs().max())
        ours.dt_bias.add_(0.5)
        control = float((ours(x) - theirs).abs().max())
    return gap, float(theirs.abs().max()), control
