"""Chapter 8's GPT to and from Hugging Face ``transformers``' ``GPT2LMHeadModel``, exactly.

Introduced in chapter 8 (from this course to GPT-2 and nanoGPT). The course's
:class:`~course_attention.gpt.GPT` has GPT-2's architecture, so the two are the same function with
the weights renamed:

========================  =======================================  ==============================
course                    Hugging Face GPT-2                       how the tensor is stored
========================  =======================================  ==============================
``tok_embed``             ``transformer.wte``                      the same
``pos_embed``             ``transformer.wpe``                      the same
``blocks[i].norm1``       ``transformer.h[i].ln_1``                the same
``blocks[i].attn.W_q``    ``transformer.h[i].attn.c_attn``         columns ``0 … d`` of the fused
``… W_k``, ``… W_v``      (one ``Conv1D``, ``d → 3d``)             ``[q | k | v]``, transposed
``blocks[i].attn.W_o``    ``transformer.h[i].attn.c_proj``         transposed
``blocks[i].norm2``       ``transformer.h[i].ln_2``                the same
``blocks[i].ff.linear1``  ``transformer.h[i].mlp.c_fc``            transposed
``blocks[i].ff.linear2``  ``transformer.h[i].mlp.c_proj``          transposed
``norm``                  ``transformer.ln_f``                     the same
``out`` (untied)          ``lm_head`` (no bias either)             the same
========================  =======================================  ==============================

"Transposed" because Hugging Face's ``Conv1D`` (kept from OpenAI's TensorFlow code) computes
``x @ W + b`` with ``W`` of shape ``(in, out)``, where ``torch.nn.Linear`` stores ``(out, in)``.
``transformers`` is imported only inside these functions: the rest of the course runs without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from . import GPT, NORM_EPS, GPTConfig

__all__ = [
    "ACTIVATIONS",
    "hf_config",
    "name_pairs",
    "to_hf_gpt2",
    "from_hf_gpt2",
    "hf_cache",
    "hf_greedy",
]

#: Hugging Face's names of GELU's tanh approximation, the only activation the course's GPT has.
ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh")


def _gpt2_classes() -> tuple[Any, Any]:
    try:
        from transformers import GPT2Config, GPT2LMHeadModel
    except ImportError as error:  # pragma: no cover - transformers is in the book extra
        raise ImportError(
            "converting to Hugging Face needs the transformers package: "
            "pip install transformers (it comes with course-attention[book] and [lab])"
        ) from error
    return GPT2Config, GPT2LMHeadModel


def hf_config(config: GPTConfig) -> Any:
    """The ``transformers.GPT2Config`` of a course :class:`~course_attention.gpt.GPTConfig`.

    ``n_positions`` = ``context``, ``n_embd`` = ``d_model``, ``n_head`` = ``n_heads``,
    ``n_layer`` = ``n_layers``, ``n_inner`` = ``d_ff``; no dropout (the course's GPT has none);
    ``tie_word_embeddings`` = ``tied``; no beginning/end-of-text token (GPT-2's 50256 is not a
    character here).
    """
    GPT2Config, _ = _gpt2_classes()
    return GPT2Config(
        vocab_size=config.vocab_size, n_positions=config.context, n_embd=config.d_model,
        n_layer=config.n_layers, n_head=config.n_heads, n_inner=config.d_ff,
        activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
        layer_norm_epsilon=NORM_EPS, tie_word_embeddings=config.tied,
        bos_token_id=None, eos_token_id=None,
    )


_Pair = tuple[str, torch.Tensor, str, torch.Tensor, bool]


def name_pairs(model: GPT, hf_model: Any) -> list[_Pair]:
    """Every weight of ``model`` beside its place in ``hf_model``.

    Returns ``(course name, course tensor, Hugging Face name, Hugging Face tensor, transposed)``
    rows. The Hugging Face tensor of ``W_q``, ``W_k``, ``W_v`` is a view of a third of
    ``c_attn``'s columns (the fused ``W_QKV``, ``(d_model, 3 · d_model)``); ``transposed``: the
    course tensor is the Hugging Face one transposed (``Conv1D`` stores ``(in, out)``).
    """
    ours, theirs = dict(model.named_parameters()), dict(hf_model.named_parameters())
    d = model.config.d_model
    rows: list[tuple[str, str, slice | None, bool]] = [
        ("tok_embed.weight", "transformer.wte.weight", None, False),
        ("pos_embed.weight", "transformer.wpe.weight", None, False),
    ]
    for i in range(model.config.n_layers):
        b, h = f"blocks.{i}.", f"transformer.h.{i}."
        for j, name in enumerate(("W_q", "W_k", "W_v")):  # c_attn = [q | k | v] columns
            cols = slice(j * d, (j + 1) * d)
            rows += [(f"{b}attn.{name}.weight", f"{h}attn.c_attn.weight", cols, True),
                     (f"{b}attn.{name}.bias", f"{h}attn.c_attn.bias", cols, False)]
        for course, hf in (("norm1", "ln_1"), ("norm2", "ln_2"), ("attn.W_o", "attn.c_proj"),
                           ("ff.linear1", "mlp.c_fc"), ("ff.linear2", "mlp.c_proj")):
            linear = not course.startswith("norm")
            rows += [(f"{b}{course}.weight", f"{h}{hf}.weight", None, linear),
                     (f"{b}{course}.bias", f"{h}{hf}.bias", None, False)]
    rows += [("norm.weight", "transformer.ln_f.weight", None, False),
             ("norm.bias", "transformer.ln_f.bias", None, False)]
    if not model.config.tied:
        rows.append(("out.weight", "lm_head.weight", None, False))
    out = []
    for course, hf, cols, transposed in rows:
        tensor = theirs[hf] if cols is None else theirs[hf][..., cols]
        out.append((course, ours[course], hf, tensor, transposed))
    return out


def _copy(pairs: list[_Pair], to_hf: bool) -> None:
    with torch.no_grad():
        for _, ours, _, theirs, transposed in pairs:
            if to_hf:
                theirs.copy_(ours.T if transposed else ours)
            else:
                ours.copy_(theirs.T if transposed else theirs)


def to_hf_gpt2(model: GPT) -> Any:
    """``model`` as a ``transformers.GPT2LMHeadModel`` with the same weights (chapter 8).

    Introduced in chapter 8. Built from :func:`hf_config` (nothing is downloaded), in
    ``model``'s dtype, in eval mode; its logits equal ``model``'s (float64: to 1e-10). The global
    torch random state is left as it was (building the model draws random initial weights).
    """
    if not isinstance(model, GPT):
        raise ValueError(f"model must be a course_attention.gpt.GPT; got {type(model).__name__}")
    _, GPT2LMHeadModel = _gpt2_classes()
    weight = model.tok_embed.weight
    with torch.random.fork_rng(devices=[]):
        hf_model = GPT2LMHeadModel(hf_config(model.config))
    hf_model = hf_model.to(dtype=weight.dtype, device=weight.device).eval()
    _copy(name_pairs(model, hf_model), to_hf=True)
    return hf_model


def _differences(config: Any) -> list[str]:
    """What in a ``GPT2Config`` the course's GPT cannot express (empty: nothing)."""
    out = []
    activation = getattr(config, "activation_function", None)
    if activation not in ACTIVATIONS:
        out.append(f"activation_function={activation!r} (the course's GPT uses GELU's tanh "
                   f"approximation: one of {ACTIVATIONS})")
    for name, want in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                       ("reorder_and_upcast_attn", False), ("add_cross_attention", False)):
        got = getattr(config, name, want)
        if bool(got) != want:
            out.append(f"{name}={got!r} (the course's GPT: {want})")
    eps = getattr(config, "layer_norm_epsilon", NORM_EPS)
    if eps != NORM_EPS:
        out.append(f"layer_norm_epsilon={eps!r} (the course's GPT: {NORM_EPS})")
    return out


def from_hf_gpt2(hf_model: Any) -> GPT:
    """A ``transformers.GPT2LMHeadModel`` as a course :class:`~course_attention.gpt.GPT`.

    Introduced in chapter 8. Reads the shape from ``hf_model.config`` (``n_positions`` becomes
    the ``context``, ``tie_word_embeddings`` ``tied``) and copies every weight
    (:func:`name_pairs`); returns the model in ``hf_model``'s dtype, in eval mode. Dropout rates
    are ignored: they act only in training, and the course's GPT has none. GPT-2 small, for a
    reader with internet: ``from_hf_gpt2(GPT2LMHeadModel.from_pretrained("gpt2"))``.

    Raises ``ValueError`` for anything else than a ``GPT2LMHeadModel``, and for a configuration
    the course's GPT cannot express (another activation, attention scaled by the layer index or
    upcast to float32, cross-attention, another layer-norm epsilon, untied weights under a tied
    configuration), naming each difference.
    """
    _, GPT2LMHeadModel = _gpt2_classes()
    if not isinstance(hf_model, GPT2LMHeadModel):
        raise ValueError(
            f"hf_model must be a transformers GPT2LMHeadModel; got {type(hf_model).__name__}"
        )
    c = hf_model.config
    differences = _differences(c)
    wte, lm_head = hf_model.transformer.wte.weight, hf_model.lm_head.weight
    if c.tie_word_embeddings and not torch.equal(wte, lm_head):
        differences.append("tie_word_embeddings=True but lm_head.weight differs from wte.weight")
    if differences:
        raise ValueError("the course's GPT cannot express this GPT-2: " + "; ".join(differences))
    config = GPTConfig(vocab_size=c.vocab_size, context=c.n_positions, d_model=c.n_embd,
                       n_heads=c.n_head, n_layers=c.n_layer, d_ff=c.n_inner,
                       tied=bool(c.tie_word_embeddings))
    with torch.random.fork_rng(devices=[]):
        model = GPT(config)
    model = model.to(dtype=wte.dtype, device=wte.device).eval()
    _copy(name_pairs(model, hf_model), to_hf=False)
    return model


def _forward_with_cache(hf_model: Any, tokens: torch.Tensor, past: Any = None) -> Any:
    # transformers 5 renamed the argument and the output `past_key_values` to `cache`
    import inspect

    name = "cache" if "cache" in inspect.signature(hf_model.forward).parameters else (
        "past_key_values")
    return hf_model(tokens, use_cache=True, **{name: past})


def _layers(past: Any) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if hasattr(past, "layers"):  # transformers ≥ 4.56: DynamicCache.layers[i].keys
        return [(layer.keys, layer.values) for layer in past.layers]
    if hasattr(past, "key_cache"):  # 4.36 … 4.55: DynamicCache.key_cache[i]
        return list(zip(past.key_cache, past.value_cache, strict=True))
    return [(k, v) for k, v in past]  # older: a tuple of (keys, values) per layer


@torch.no_grad()
def hf_cache(
    hf_model: Any, tokens: torch.Tensor
) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Run ``hf_model`` on ``tokens`` ``(batch, seq)`` with its cache on.

    Introduced in chapter 8. Returns the logits ``(batch, seq, vocab)`` and, per layer, the keys
    and values Hugging Face caches (``past_key_values``; ``cache`` from transformers 5 on), each
    ``(batch, heads, seq, d_head)``: the same layout as the course's
    :class:`~course_attention.gpt.KVCache`.
    """
    hf_model.eval()
    out = _forward_with_cache(hf_model, tokens)
    past = out.get("cache", None)
    past = out.get("past_key_values", None) if past is None else past
    return out.logits, _layers(past)


@torch.no_grad()
def hf_greedy(hf_model: Any, prompt: Sequence[int] | np.ndarray, n_new: int) -> np.ndarray:
    """``n_new`` token ids ``(n_new,)`` that Hugging Face's ``generate(do_sample=False)`` picks
    after ``prompt`` ``(prompt_len,)``: greedy decoding, with its own cache.

    Introduced in chapter 8. ``prompt_len + n_new − 1`` must fit in ``n_positions``: Hugging
    Face's GPT-2 does not crop to the context as :func:`course_attention.gpt.generate` does.
    """
    ids = torch.as_tensor(np.asarray(prompt), dtype=torch.long).reshape(1, -1)
    limit = hf_model.config.n_positions
    if ids.shape[1] < 1 or n_new < 1 or ids.shape[1] + n_new - 1 > limit:
        raise ValueError(
            f"need a prompt of ≥ 1 token, n_new ≥ 1 and prompt + n_new − 1 ≤ n_positions={limit}; "
            f"got {ids.shape[1]} and {n_new}"
        )
    hf_model.eval()
    out = hf_model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n_new,
                            min_new_tokens=n_new, do_sample=False, pad_token_id=0)
    return out[0, ids.shape[1]:].numpy()
