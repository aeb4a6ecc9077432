"""Chapter 13's :class:`~course_attention.mla.MLAGPT` to and from Hugging Face's DeepSeek-V3,
exactly.

Introduced in chapter 13. ``DeepseekV3ForCausalLM`` with dense MLPs
(``first_k_dense_replace = num_hidden_layers``: no experts) is the course's model; converting is
renaming, plus one permutation:

==============================  =====================================================
course                          Hugging Face (``model.`` prefix inside the language model)
==============================  =====================================================
``embed``                       ``model.embed_tokens``
``blocks[i].norm1``, ``norm2``  ``model.layers[i].input_layernorm``,
                                ``post_attention_layernorm``
``blocks[i].attn.*``            ``model.layers[i].self_attn.*`` (same names: ``q_proj`` or
                                ``q_a_proj``, ``q_a_layernorm``, ``q_b_proj``;
                                ``kv_a_proj_with_mqa``, ``kv_a_layernorm``, ``kv_b_proj``,
                                ``o_proj``)
``blocks[i].mlp.*``             ``model.layers[i].mlp.gate_proj``, ``up_proj``, ``down_proj``
``norm``, ``out``               ``model.norm``, ``lm_head``
==============================  =====================================================

**The permutation.** DeepSeek's rotary features come in neighbour pairs ``(2i, 2i + 1)``
(``rope_interleave=True``, the default; ``apply_rotary_pos_emb_interleave`` rotates the pairs and
returns them in *halves* order: all first members, then all second members). The course rotates
halves (``rotate_half``, chapter 12). Taking the rotary output rows of the query and of
``kv_a_proj_with_mqa`` in :func:`~course_attention.modern.halves_order` makes the course's rotated
vectors *equal* to Hugging Face's, cache included. With ``rope_interleave=False`` nothing moves.

Hugging Face's scale is ``qk_head_dim^(-1/2)`` = ``(d_nope + d_rope)^(-1/2)`` (times YaRN's
``mscale²`` under rope scaling, which the course's model lacks and refuses); its eager attention
computes the softmax in float32, its RMSNorm's statistics too, as the course's model does.
transformers 5 caches the latent (``(batch, 1, seq, d_c)`` as the "keys", the rotated shared key
``(batch, 1, seq, d_rope)`` as the "values"); transformers 4.57 caches the expanded per-head keys
and values (:func:`hf_latent_cache` needs 5).
"""

from __future__ import annotations

from typing import Any

import torch

from ..gpt import hf as gpt_hf
from ..modern import halves_order
from ..modern.hf import _theta_and_scaling, hf_greedy
from . import LATENT_NORM_EPS, MLAGPT, MLAConfig

__all__ = ["hf_config", "name_pairs", "to_hf", "from_hf", "hf_latent_cache", "hf_greedy",
           "hf_cache_bytes"]


def _classes() -> tuple[Any, Any]:
    try:
        from transformers import DeepseekV3Config, DeepseekV3ForCausalLM
    except ImportError as error:  # pragma: no cover - transformers is in the book extra
        raise ImportError("converting to Hugging Face needs transformers ≥ 4.57 with "
                          "DeepseekV3: pip install -U transformers") from error
    return DeepseekV3Config, DeepseekV3ForCausalLM


def hf_config(config: MLAConfig, rope_interleave: bool = True) -> Any:
    """The ``DeepseekV3Config`` of ``config``: dense MLPs in every layer, one key/value "head"
    per query head, no biases, untied, eager attention, no special tokens."""
    if not isinstance(config, MLAConfig):
        raise ValueError(f"config must be an MLAConfig; got {type(config).__name__}")
    Config, _ = _classes()
    return Config(
        vocab_size=config.vocab_size, hidden_size=config.d_model,
        intermediate_size=config.d_ff, moe_intermediate_size=config.d_ff,
        num_hidden_layers=config.n_layers, num_attention_heads=config.n_heads,
        num_key_value_heads=config.n_heads, kv_lora_rank=config.d_c, q_lora_rank=config.d_cq,
        qk_nope_head_dim=config.d_nope, qk_rope_head_dim=config.d_rope, v_head_dim=config.d_v,
        first_k_dense_replace=config.n_layers, max_position_embeddings=config.context,
        rms_norm_eps=config.norm_eps, rope_theta=config.rope_theta, rope_interleave=rope_interleave,
        tie_word_embeddings=False, attention_bias=False, attention_dropout=0.0, hidden_act="silu",
        bos_token_id=None, eos_token_id=None, pad_token_id=None, attn_implementation="eager",
    )


def _config_of(hf: Any) -> MLAConfig:
    if getattr(hf, "model_type", None) != "deepseek_v3":
        raise ValueError(f"only DeepSeek-V3 models convert; got model_type="
                         f"{getattr(hf, 'model_type', None)!r}")
    theta, scaling = _theta_and_scaling(hf)
    differences = []
    if scaling != "default":
        differences.append(f"RoPE scaling {scaling!r} (nor YaRN's mscale on the softmax scale)")
    if hf.first_k_dense_replace < hf.num_hidden_layers:
        differences.append(f"experts (first_k_dense_replace={hf.first_k_dense_replace} < "
                           f"num_hidden_layers={hf.num_hidden_layers}: layers "
                           f"{hf.first_k_dense_replace} … {hf.num_hidden_layers - 1} are MoE)")
    if hf.num_key_value_heads != hf.num_attention_heads:
        differences.append(f"num_key_value_heads={hf.num_key_value_heads} ≠ "
                           f"num_attention_heads={hf.num_attention_heads}")
    if getattr(hf, "attention_bias", False):
        differences.append("attention_bias=True (no biases)")
    if getattr(hf, "hidden_act", "silu") != "silu":
        differences.append(f"hidden_act={hf.hidden_act!r} (SwiGLU uses silu)")
    if getattr(hf, "tie_word_embeddings", False):
        differences.append("tie_word_embeddings=True (an untied output layer)")
    if differences:
        what = "; no ".join(differences)
        raise ValueError(f"the course's MLAGPT has no {what}")
    return MLAConfig(
        vocab_size=hf.vocab_size, d_model=hf.hidden_size, n_layers=hf.num_hidden_layers,
        n_heads=hf.num_attention_heads, d_c=hf.kv_lora_rank, d_cq=hf.q_lora_rank,
        d_nope=hf.qk_nope_head_dim, d_rope=hf.qk_rope_head_dim, d_v=hf.v_head_dim,
        d_ff=hf.intermediate_size, context=hf.max_position_embeddings, rope_theta=theta,
        norm_eps=hf.rms_norm_eps,
    )


def _rope_rows(config: MLAConfig, name: str) -> torch.Tensor | None:
    """The rows of weight ``name`` in the course's order: ``course[j] = hf[rows[j]]`` (``None``
    where no row moves)."""
    c = config
    order = halves_order(c.d_rope)
    if name.endswith(("q_proj.weight", "q_b_proj.weight")):
        heads = torch.arange(c.n_heads)[:, None] * c.d_qk
        within = torch.cat((torch.arange(c.d_nope), c.d_nope + order))
        return (heads + within).reshape(-1)
    if name.endswith("kv_a_proj_with_mqa.weight"):
        return torch.cat((torch.arange(c.d_c), c.d_c + order))
    return None


_Pair = tuple[str, torch.Tensor, str, torch.Tensor]


def name_pairs(model: MLAGPT, hf_model: Any) -> list[_Pair]:
    """Every weight of ``model`` beside the Hugging Face weight it holds (up to the rotary rows'
    order): ``(course name, course tensor, Hugging Face name, Hugging Face tensor)`` rows."""
    ours, theirs = dict(model.named_parameters()), dict(hf_model.named_parameters())
    rows = [("embed.weight", "model.embed_tokens.weight"), ("norm.weight", "model.norm.weight"),
            ("out.weight", "lm_head.weight")]
    query = (["q_proj"] if model.config.d_cq is None
             else ["q_a_proj", "q_a_layernorm", "q_b_proj"])
    for i in range(model.config.n_layers):
        b, h = f"blocks.{i}.", f"model.layers.{i}."
        rows += [(f"{b}norm1.weight", f"{h}input_layernorm.weight"),
                 (f"{b}norm2.weight", f"{h}post_attention_layernorm.weight")]
        rows += [(f"{b}attn.{p}.weight", f"{h}self_attn.{p}.weight")
                 for p in query + ["kv_a_proj_with_mqa", "kv_a_layernorm", "kv_b_proj", "o_proj"]]
        rows += [(f"{b}mlp.{p}.weight", f"{h}mlp.{p}.weight")
                 for p in ("gate_proj", "up_proj", "down_proj")]
    return [(c, ours[c], h, theirs[h]) for c, h in rows]


def _copy(model: MLAGPT, hf_model: Any, to_hf: bool) -> None:
    interleave = bool(getattr(hf_model.config, "rope_interleave", True))
    with torch.no_grad():
        for name, ours, _, theirs in name_pairs(model, hf_model):
            rows = _rope_rows(model.config, name) if interleave else None
            if rows is None:
                (theirs if to_hf else ours).copy_(ours if to_hf else theirs)
            elif to_hf:
                theirs[rows] = ours
            else:
                ours.copy_(theirs[rows])


def _eps_check(hf_model: Any) -> None:
    for name, module in hf_model.named_modules():
        if name.endswith(("q_a_layernorm", "kv_a_layernorm")):
            if module.variance_epsilon != LATENT_NORM_EPS:
                raise ValueError(f"{name} has eps={module.variance_epsilon}; the course's "
                                 f"latent norms use {LATENT_NORM_EPS}")


def to_hf(model: MLAGPT, rope_interleave: bool = True) -> Any:
    """``model`` as a ``DeepseekV3ForCausalLM`` with the same weights and dtype, eager attention
    (chapter 13); ``rope_interleave``: DeepSeek's neighbour-pair rotary layout (rows permuted)."""
    if not isinstance(model, MLAGPT):
        raise ValueError(f"model must be an MLAGPT; got {type(model).__name__}")
    _, Model = _classes()
    dtype = model.embed.weight.dtype
    hf_model = Model(hf_config(model.config, rope_interleave)).to(dtype).eval()
    _eps_check(hf_model)
    _copy(model, hf_model, to_hf=True)
    return hf_model


def from_hf(hf_model: Any) -> MLAGPT:
    """The course's :class:`~course_attention.mla.MLAGPT` with the weights and dtype of a
    ``DeepseekV3ForCausalLM`` (chapter 13). Raises ``ValueError`` naming what the course's model
    lacks (experts, RoPE scaling, biases, shared key/value heads, tied embeddings, …)."""
    config = _config_of(hf_model.config)
    _eps_check(hf_model)
    dtype = hf_model.get_input_embeddings().weight.dtype
    model = MLAGPT(config).to(dtype).eval()
    _copy(model, hf_model, to_hf=False)
    return model


def hf_latent_cache(hf_model: Any, tokens: torch.Tensor
                    ) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Logits ``(batch, seq, vocab)`` of a ``DeepseekV3ForCausalLM`` on ``tokens`` ``(batch,
    seq)``, and per layer what its cache holds: the latent ``(batch, seq, d_c)`` and the rotated
    shared key ``(batch, seq, d_rope)``, :class:`~course_attention.mla.MLACache`'s layout.

    Needs transformers ≥ 5 (4.57 caches the expanded keys and values: ``ValueError``)."""
    logits, layers = gpt_hf.hf_cache(hf_model, tokens)
    c = hf_model.config
    out = []
    for keys, values in layers:
        if keys.shape[1] != 1 or keys.shape[-1] != c.kv_lora_rank:
            raise ValueError(f"this transformers caches keys {tuple(keys.shape)}, not the "
                             f"latent (batch, 1, seq, {c.kv_lora_rank}): it needs transformers "
                             "≥ 5, which caches what MLA caches")
        out.append((keys[:, 0], values[:, 0]))
    return logits, out


def hf_cache_bytes(hf_model: Any, tokens: torch.Tensor) -> int:
    """Bytes Hugging Face's cache holds after reading ``tokens`` ``(batch, seq)``, all layers:
    ``batch · seq · n_layers · (d_c + d_rope) · bytes`` under transformers 5, the expanded
    ``batch · seq · n_layers · heads · (d_nope + d_rope + d_v) · bytes`` under 4.57."""
    layers = gpt_hf.hf_cache(hf_model, tokens)[1]
    return sum(t.numel() * t.element_size() for kv in layers for t in kv)
