"""Chapter 14's attention against Hugging Face's gpt-oss: ``GptOssAttention``, sliding and full.

Introduced in chapter 14. gpt-oss's attention is chapter 12's (grouped-query, ``rotate_half``
RoPE, biases on the projections) with two changes: a learned sink logit per head (``sinks``)
that joins each softmax's denominator, and every other layer a sliding window of
``sliding_window`` keys. :func:`gpt_oss_model` builds a small ``GptOssModel`` (random weights,
float64, eager attention, no download); :func:`attention_equality` runs it, records what each
``GptOssAttention`` layer receives (its input, HF's cos/sin and HF's own 4-D mask) and returns,
and runs :class:`~course_attention.modern.ModernAttention` with the same weights
(:func:`attention_from_hf`) on the same input. The experts (gpt-oss's mixture-of-experts MLP)
are not the subject: the comparison is layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..modern import ModernAttention, ModernConfig

__all__ = ["SMALL", "gpt_oss_model", "attention_from_hf", "LayerCheck", "attention_equality"]

#: The small gpt-oss of the chapter — width 64, 4 query heads sharing 2 key/value heads of 16,
#: 2 layers (sliding, then full: gpt-oss's 1:1 pattern), a window of 4 keys, 2 experts, and
#: gpt-oss's YaRN RoPE (chapter 12), whose cosines and sines the layers receive from HF.
SMALL: dict[str, Any] = {
    "vocab_size": 96, "hidden_size": 64, "intermediate_size": 32, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 4,
    "layer_types": ["sliding_attention", "full_attention"], "num_local_experts": 2,
    "num_experts_per_tok": 1, "max_position_embeddings": 131072,  # gpt-oss's: YaRN 32 × 4096
}


def gpt_oss_model(seed: int = 0, **overrides: Any) -> torch.nn.Module:
    """A random ``transformers.GptOssModel`` of :data:`SMALL` (``overrides`` replace entries),
    float64, eager attention, its sink logits drawn from ``N(0, 1)`` so that they matter
    (chapter 14; gpt-oss starts them near 0)."""
    import transformers

    torch.manual_seed(seed)
    config = transformers.GptOssConfig(**{**SMALL, **overrides})
    config._attn_implementation = "eager"
    if hasattr(config, "_experts_implementation"):  # transformers 5: plain loops, any dtype
        config._experts_implementation = "eager"
    model = transformers.GptOssModel(config).double().eval()
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.sinks.normal_()
    return model


def attention_from_hf(hf_attention: torch.nn.Module) -> ModernAttention:
    """A :class:`~course_attention.modern.ModernAttention` (sink logits, biases, the same window)
    holding the weights of one ``GptOssAttention`` layer, in its dtype (chapter 14)."""
    c = hf_attention.config
    window = hf_attention.sliding_window
    config = ModernConfig(
        vocab_size=c.vocab_size, d_model=c.hidden_size, n_layers=1,
        n_heads=c.num_attention_heads, n_kv_heads=c.num_key_value_heads, d_head=c.head_dim,
        attention_bias=c.attention_bias, sinks=True, sliding_window=window,
        layer_types=("sliding_attention" if window else "full_attention",))
    ours = ModernAttention(config).to(hf_attention.q_proj.weight.dtype)
    ours.load_state_dict(hf_attention.state_dict())
    return ours


@dataclass(frozen=True)
class LayerCheck:
    """One gpt-oss layer compared (chapter 14): its ``kind`` (Hugging Face's layer type), the
    window, the largest difference of the outputs ``(batch, seq, d_model)``, and whether HF's
    additive mask hides exactly the keys
    :meth:`~course_attention.modern.ModernAttention.visible` hides."""

    layer: int
    kind: str
    window: int | None
    max_difference: float
    same_mask: bool


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    return kwargs[name] if name in kwargs else args[index]


@torch.no_grad()
def attention_equality(seq: int = 12, batch: int = 2, seed: int = 0) -> list[LayerCheck]:
    """Run :func:`gpt_oss_model` on random tokens ``(batch, seq)`` and each of its attention
    layers' copies (:func:`attention_from_hf`) on what that layer received; one
    :class:`LayerCheck` per layer (chapter 14). ``seq`` longer than the window, so that the
    sliding layer's window matters."""
    from ..modern import rotate_half  # noqa: F401  (the same halves as gpt-oss's chunks)

    model = gpt_oss_model(seed)
    seen: list[tuple[int, Any, Any, Any, torch.Tensor]] = []

    def hook(index: int):
        def record(module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any],
                   out: Any) -> None:
            x = _argument(args, kwargs, 0, "hidden_states")
            cos_sin = _argument(args, kwargs, 1, "position_embeddings")
            mask = _argument(args, kwargs, 2, "attention_mask")
            seen.append((index, x, cos_sin, mask, out[0]))
        return record

    hooks = [layer.self_attn.register_forward_hook(hook(i), with_kwargs=True)
             for i, layer in enumerate(model.layers)]
    try:
        tokens = torch.randint(0, model.config.vocab_size, (batch, seq),
                               generator=torch.Generator().manual_seed(seed))
        model(input_ids=tokens)
    finally:
        for h in hooks:
            h.remove()
    checks = []
    for index, x, (cos, sin), mask, out in seen:
        hf = model.layers[index].self_attn
        ours = attention_from_hf(hf)
        cos = torch.cat((cos[0], cos[0]), dim=-1)  # gpt-oss keeps one angle per pair: (seq, d/2)
        sin = torch.cat((sin[0], sin[0]), dim=-1)
        mine = ours(x, cos, sin)
        hidden = ~ours.visible(seq, seq)
        hf_hidden = (mask[0, 0] != 0) if mask.dtype != torch.bool else ~mask[0, 0]
        checks.append(LayerCheck(index, model.config.layer_types[index], hf.sliding_window,
                                 float((mine - out).abs().max()),
                                 bool(torch.equal(hidden, hf_hidden))))
    return checks
