"""Chapter 12's :class:`~course_attention.modern.ModernGPT` to and from Hugging Face's Llama and
Qwen3, exactly.

Introduced in chapter 12. The course's model has the same architecture as ``LlamaForCausalLM``
(``qk_norm=False``) and ``Qwen3ForCausalLM`` (``qk_norm=True``), so converting is renaming:

=========================  =======================================================
course                     Hugging Face (``model.`` prefix inside the language model)
=========================  =======================================================
``embed``                  ``model.embed_tokens``
``blocks[i].norm1``        ``model.layers[i].input_layernorm``
``blocks[i].attn.q_proj``  ``model.layers[i].self_attn.q_proj`` (``k_proj``, ``v_proj``,
                           ``o_proj``, and Qwen3's ``q_norm``, ``k_norm`` alike)
``blocks[i].norm2``        ``model.layers[i].post_attention_layernorm``
``blocks[i].mlp.*``        ``model.layers[i].mlp.gate_proj``, ``up_proj``, ``down_proj``
``norm``                   ``model.norm``
``out`` (untied)           ``lm_head``
=========================  =======================================================

Both store ``torch.nn.Linear`` weights ``(out, in)``: nothing is transposed (GPT-2's ``Conv1D``
was). ``transformers`` is imported only inside these functions. A Hugging Face model must use the
eager attention (``attn_implementation="eager"``, which :func:`to_hf` sets) to compute exactly
what the course's model computes: SDPA keeps the softmax in the model's dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ..gpt import hf as gpt_hf
from . import ModernConfig, ModernGPT

__all__ = ["FAMILIES", "hf_config", "name_pairs", "to_hf", "from_hf", "hf_cache", "hf_greedy",
           "eager_calls", "SPY"]

#: The model families the course converts, by the name ``to_hf`` takes (Hugging Face's
#: ``model_type``), with whether the family normalises queries and keys (QK-norm).
FAMILIES = {"llama": False, "qwen3": True}


def _classes(family: str) -> tuple[Any, Any]:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {sorted(FAMILIES)}; got {family!r}")
    try:
        if family == "llama":
            from transformers import LlamaConfig as Config
            from transformers import LlamaForCausalLM as Model
        else:
            from transformers import Qwen3Config as Config
            from transformers import Qwen3ForCausalLM as Model
    except ImportError as error:  # pragma: no cover - transformers is in the book extra
        raise ImportError("converting to Hugging Face needs the transformers package: "
                          "pip install transformers") from error
    return Config, Model


def hf_config(config: ModernConfig, family: str) -> Any:
    """The ``LlamaConfig`` or ``Qwen3Config`` of ``config`` (``family``: ``"llama"`` or
    ``"qwen3"``), with eager attention, no dropout, no special tokens.

    Qwen3 always has QK-norm and Llama never does: ``config.qk_norm`` must match the family.
    """
    Config, _ = _classes(family)
    if config.qk_norm != FAMILIES[family]:
        raise ValueError(f"{family} {'has' if FAMILIES[family] else 'has no'} QK-norm: "
                         f"build the course's model with qk_norm={FAMILIES[family]}")
    hf = Config(
        vocab_size=config.vocab_size, hidden_size=config.d_model,
        intermediate_size=config.d_ff, num_hidden_layers=config.n_layers,
        num_attention_heads=config.n_heads, num_key_value_heads=config.n_kv_heads,
        head_dim=config.head_dim, max_position_embeddings=config.context,
        rms_norm_eps=config.norm_eps, rope_theta=config.rope_theta,
        tie_word_embeddings=config.tied, attention_bias=config.attention_bias,
        attention_dropout=0.0, hidden_act="silu", bos_token_id=None, eos_token_id=None,
        pad_token_id=None, attn_implementation="eager",
    )
    return hf


def _theta_and_scaling(hf: Any) -> tuple[float, str]:
    """The rotation base and the RoPE scaling type of a Hugging Face config (transformers 5:
    ``rope_parameters``; 4: ``rope_theta`` and ``rope_scaling``)."""
    params = getattr(hf, "rope_parameters", None)
    if isinstance(params, dict):
        return float(params["rope_theta"]), str(params.get("rope_type", "default"))
    scaling = getattr(hf, "rope_scaling", None) or {}
    return float(hf.rope_theta), str(scaling.get("rope_type", scaling.get("type", "default")))


def _config_of(hf: Any) -> tuple[ModernConfig, str]:
    family = getattr(hf, "model_type", None)
    if family not in FAMILIES:
        raise ValueError(f"only Llama and Qwen3 models convert; got model_type={family!r}")
    theta, scaling = _theta_and_scaling(hf)
    differences = []
    if scaling != "default":
        differences.append(f"RoPE scaling {scaling!r} (the course's model rotates plainly)")
    if getattr(hf, "hidden_act", "silu") != "silu":
        differences.append(f"hidden_act={hf.hidden_act!r} (SwiGLU uses silu)")
    if getattr(hf, "mlp_bias", False):
        differences.append("mlp_bias=True (SwiGLU has no biases)")
    if getattr(hf, "use_sliding_window", False):
        differences.append("sliding-window layers (chapter 11's sliding windows)")
    if differences:
        what = "; no ".join(differences)
        raise ValueError(f"the course's ModernGPT has no {what}")
    d_head = getattr(hf, "head_dim", None)
    if d_head == hf.hidden_size // hf.num_attention_heads:
        d_head = None  # the default width, as the course's config writes it
    config = ModernConfig(
        vocab_size=hf.vocab_size, d_model=hf.hidden_size, n_layers=hf.num_hidden_layers,
        n_heads=hf.num_attention_heads, n_kv_heads=hf.num_key_value_heads, d_head=d_head,
        d_ff=hf.intermediate_size, context=hf.max_position_embeddings, rope_theta=theta,
        norm_eps=hf.rms_norm_eps, qk_norm=FAMILIES[family], tied=bool(hf.tie_word_embeddings),
        attention_bias=bool(getattr(hf, "attention_bias", False)),
    )
    return config, family


_Pair = tuple[str, torch.Tensor, str, torch.Tensor]


def name_pairs(model: ModernGPT, hf_model: Any) -> list[_Pair]:
    """Every weight of ``model`` beside the Hugging Face weight it equals:
    ``(course name, course tensor, Hugging Face name, Hugging Face tensor)`` rows."""
    ours, theirs = dict(model.named_parameters()), dict(hf_model.named_parameters())
    rows = [("embed.weight", "model.embed_tokens.weight"), ("norm.weight", "model.norm.weight")]
    for i in range(model.config.n_layers):
        b, h = f"blocks.{i}.", f"model.layers.{i}."
        rows += [(f"{b}norm1.weight", f"{h}input_layernorm.weight"),
                 (f"{b}norm2.weight", f"{h}post_attention_layernorm.weight")]
        for p in ("q_proj", "k_proj", "v_proj", "o_proj"):
            rows.append((f"{b}attn.{p}.weight", f"{h}self_attn.{p}.weight"))
            if model.config.attention_bias:
                rows.append((f"{b}attn.{p}.bias", f"{h}self_attn.{p}.bias"))
        if model.config.qk_norm:
            rows += [(f"{b}attn.{p}.weight", f"{h}self_attn.{p}.weight")
                     for p in ("q_norm", "k_norm")]
        rows += [(f"{b}mlp.{p}.weight", f"{h}mlp.{p}.weight")
                 for p in ("gate_proj", "up_proj", "down_proj")]
    if not model.config.tied:
        rows.append(("out.weight", "lm_head.weight"))
    return [(c, ours[c], h, theirs[h]) for c, h in rows]


def _copy(model: ModernGPT, hf_model: Any, to_hf: bool) -> None:
    with torch.no_grad():
        for _, ours, _, theirs in name_pairs(model, hf_model):
            (theirs if to_hf else ours).copy_(ours if to_hf else theirs)


def to_hf(model: ModernGPT, family: str) -> Any:
    """``model`` as a ``LlamaForCausalLM`` (``family="llama"``) or ``Qwen3ForCausalLM``
    (``"qwen3"``) with the same weights, dtype and eager attention (chapter 12)."""
    if not isinstance(model, ModernGPT):
        raise ValueError(f"model must be a ModernGPT; got {type(model).__name__}")
    _, Model = _classes(family)
    dtype = model.embed.weight.dtype
    hf_model = Model(hf_config(model.config, family)).to(dtype).eval()
    _copy(model, hf_model, to_hf=True)
    return hf_model


def from_hf(hf_model: Any) -> ModernGPT:
    """The course's :class:`~course_attention.modern.ModernGPT` with the weights and dtype of a
    ``LlamaForCausalLM`` or ``Qwen3ForCausalLM`` (chapter 12). Raises ``ValueError`` naming what
    the course's model lacks (RoPE scaling, sliding windows, biases in the MLP, …)."""
    config, _ = _config_of(hf_model.config)
    dtype = hf_model.get_input_embeddings().weight.dtype
    model = ModernGPT(config).to(dtype).eval()
    _copy(model, hf_model, to_hf=False)
    return model


def hf_cache(hf_model: Any, tokens: torch.Tensor
             ) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Logits ``(batch, seq, vocab)`` of ``hf_model`` on ``tokens`` ``(batch, seq)``, and per
    layer the keys and values its cache holds, ``(batch, n_kv_heads, seq, d_head)`` each: the
    layout of :class:`~course_attention.modern.ModernCache` (chapter 12; chapter 8's
    ``gpt.hf.hf_cache``, which reads any Hugging Face cache)."""
    return gpt_hf.hf_cache(hf_model, tokens)


@torch.no_grad()
def hf_greedy(hf_model: Any, prompt: Sequence[int] | np.ndarray, n_new: int) -> np.ndarray:
    """The ``n_new`` ids ``(n_new,)`` Hugging Face's ``generate(do_sample=False)`` picks after
    ``prompt`` ``(prompt_len,)``: greedy decoding with its own cache (chapter 12)."""
    ids = torch.as_tensor(np.asarray(prompt), dtype=torch.long).reshape(1, -1)
    limit = hf_model.config.max_position_embeddings
    if ids.shape[1] < 1 or n_new < 1 or ids.shape[1] + n_new > limit:
        raise ValueError(f"need a prompt of ≥ 1 token, n_new ≥ 1 and prompt + n_new ≤ "
                         f"max_position_embeddings={limit}; got {ids.shape[1]} and {n_new}")
    hf_model.eval()
    out = hf_model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n_new,
                            min_new_tokens=n_new, do_sample=False, pad_token_id=0)
    return out[0, ids.shape[1]:].numpy()


#: The attention implementation :func:`eager_calls` registers with ``transformers``: Hugging
#: Face's eager attention and eager mask, which also write down what they receive.
SPY = "course_eager_spy"
_CALLS: list[dict[str, torch.Tensor]] = []


def _register_spy() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask
    from transformers.models.llama.modeling_llama import eager_attention_forward

    def spy(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
            attention_mask: torch.Tensor | None, **kwargs: Any) -> Any:
        out, weights = eager_attention_forward(module, query, key, value, attention_mask,
                                               **kwargs)
        _CALLS.append({"query": query, "key": key, "value": value, "mask": attention_mask,
                       "weights": weights, "output": out})
        return out, weights

    AttentionInterface.register(SPY, spy)
    AttentionMaskInterface.register(SPY, eager_mask)


@torch.no_grad()
def eager_calls(hf_model: Any, tokens: torch.Tensor) -> list[dict[str, torch.Tensor]]:
    """What Hugging Face's eager attention function receives and returns, one dict per layer,
    when ``hf_model`` (a Llama or Qwen3 model) reads ``tokens`` ``(batch, seq)`` (chapter 12).

    ``query`` ``(batch, heads, seq, d_head)`` (normalised and rotated); ``key`` and ``value``
    ``(batch, n_kv_heads, seq, d_head)`` (what the cache returned, before ``repeat_kv``);
    ``mask`` ``(batch, 1, seq, seq)``, the additive mask (0 where a key may be read, the dtype's
    lowest number where not); ``weights`` ``(batch, heads, seq, seq)``; ``output`` ``(batch,
    seq, heads, d_head)``. The model runs once through Hugging Face's own eager attention and
    mask (registered under :data:`SPY`) and is left with the attention it had.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
        shape = getattr(tokens, "shape", type(tokens).__name__)
        raise ValueError(f"tokens must be a tensor (batch, seq); got {shape}")
    _register_spy()
    config, before = hf_model.config, hf_model.config._attn_implementation
    _CALLS.clear()
    try:
        config._attn_implementation = SPY
        hf_model(tokens)
    finally:
        config._attn_implementation = before
    calls = list(_CALLS)
    _CALLS.clear()
    return calls
