"""Chapter 7's live decoding explorer (kind ``"decoding"``, drawn by ``decoding.js``).

The page runs the chapter's trained :class:`~course_attention.modules.Seq2SeqTransformer` in the
reader's browser: it loads the model file written by :func:`payload`, encodes the typed digits
once and decodes greedily, keeping every decoder layer's and head's cross-attention. This module
writes that file, rebuilds the torch model from it (:func:`model_from_payload`, for the tests)
and decodes in torch exactly what the page shows (:func:`decode`, which the notebook's widgets
draw).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import tasks
from ..i18n import N_, _
from .core import Explorer, model_payload, register, seeded, tensors_from_payload

__all__ = ["KIND", "Decoded", "check_digits", "decode", "live_spec", "model_from_payload",
           "payload", "decoding_explorer"]

#: The explorer kind (its page code is ``_static/explorers/decoding.js``).
KIND = "decoding"
#: The page's positional table travels with the weights under this name (torch keeps it as a
#: buffer outside the state dict).
POSITIONS = "positions.table"

#: The messages for typed text the model cannot read (``decoding.js`` fills the same).
EMPTY = N_("The box is empty: type {lo} to {hi} digits 0-9.")
NOT_DIGIT = N_('Type digits 0-9 only: "{char}" is not a token this model knows (its vocabulary '
               "is [PAD], [BOS], [EOS] and the digits 0-9).")
WRONG_LENGTH = N_("This model learned strings of {lo} to {hi} digits and you typed {n}: type {lo} "
                  "to {hi} digits.")
#: The figure's title, one head or their average (short — fits 375 px).
TITLE_AVERAGE = N_("step {step} of {n} · layer {layer}, heads averaged")
TITLE_HEAD = N_("step {step} of {n} · layer {layer}, head {head}")
#: The menus' and the figure's rows' labels, whole (a template "layer {i}" would match any text
#: that starts with "layer "): layers and heads 1 … 8, steps 1 … 9 (the decoder's most).
LAYERS = (N_("layer 1"), N_("layer 2"), N_("layer 3"), N_("layer 4"), N_("layer 5"),
          N_("layer 6"), N_("layer 7"), N_("layer 8"))
HEADS = (N_("head 1"), N_("head 2"), N_("head 3"), N_("head 4"), N_("head 5"), N_("head 6"),
         N_("head 7"), N_("head 8"))
STEP_ROWS = (N_("step 1"), N_("step 2"), N_("step 3"), N_("step 4"), N_("step 5"),
             N_("step 6"), N_("step 7"), N_("step 8"), N_("step 9"), N_("step 10"),
             N_("step 11"))
#: The page's words — the messages and titles above, the figure's row labels and line of text
#: (as :func:`course_attention.viz.decoding_traces` writes them).
TEXT = {
    "empty": EMPTY, "not_digit": NOT_DIGIT, "wrong_length": WRONG_LENGTH,
    "title_average": TITLE_AVERAGE, "title_head": TITLE_HEAD,
    "picks": N_("decoder input: {so_far} → picks: <b>{token}</b>"),
    **{f"step_{i + 1}": row for i, row in enumerate(STEP_ROWS)},  # the rows' labels
}


def _check_lengths(lengths: Sequence[int]) -> tuple[int, int]:
    lo, hi = (int(min(lengths)), int(max(lengths))) if len(lengths) else (0, 0)
    if not 1 <= lo <= hi <= tasks.WIDTH:
        raise ValueError(f"lengths must lie in 1 … {tasks.WIDTH} digits; got {tuple(lengths)}")
    return lo, hi


def _check_model(model: Any) -> None:
    from ..modules import Seq2SeqTransformer

    if not isinstance(model, Seq2SeqTransformer):
        raise ValueError(f"model must be a Seq2SeqTransformer; got {type(model).__name__}")
    if model.src_vocab != tasks.VOCAB_SIZE or model.tgt_vocab != tasks.VOCAB_SIZE:
        raise ValueError(
            f"model must read and write the {tasks.VOCAB_SIZE} digit-task ids; got vocabularies "
            f"{model.src_vocab} and {model.tgt_vocab}"
        )
    if model.max_len < tasks.WIDTH + 2:
        raise ValueError(f"model.max_len={model.max_len} < {tasks.WIDTH + 2}: no room to decode")


def config(model: Any, lengths: Sequence[int]) -> dict[str, Any]:
    """What the page needs besides the weights to run ``model``'s forward pass."""
    _check_model(model)
    lo, hi = _check_lengths(lengths)
    first = model.encoder[0]
    return {
        "d_model": model.d_model,
        "n_heads": first.self_attn.n_heads,
        "n_layers": len(model.decoder),
        "d_ff": first.ff.linear1.out_features,
        "norm_first": bool(first.norm_first),
        "activation": "relu",
        "eps": first.norm1.eps,
        "embed_scale": math.sqrt(model.d_model),  # embeddings × √d_model, then + positions
        "src_vocab": model.src_vocab,
        "tgt_vocab": model.tgt_vocab,
        "max_len": model.max_len,
        "token_names": tasks.token_names(range(model.tgt_vocab)),  # id → "[BOS]", "7", …
        "pad_id": model.pad_id,
        "bos_id": tasks.BOS_ID,
        "eos_id": tasks.EOS_ID,
        "digit_offset": tasks.DIGIT_OFFSET,
        "lengths": [lo, hi],  # the typed strings the page accepts: the trained lengths
        "max_steps": tasks.WIDTH + 1,  # as inspection.decoding_steps: a source row's width
    }


def payload(model: Any, lengths: Sequence[int] = (3, 8)) -> dict[str, Any]:
    """The model file the page loads: float32 weights, the positional table and
    :func:`config` (see :func:`course_attention.explorers.core.model_payload`)."""
    cfg = config(model, lengths)
    state = dict(model.state_dict())
    state[POSITIONS] = model.positions.table
    return model_payload(state, cfg)


def model_from_payload(data: dict[str, Any]) -> Any:
    """The torch model of a :func:`payload` (float32, eval mode): the weights the page ran."""
    from ..modules import Seq2SeqTransformer

    cfg = data["config"]
    model = Seq2SeqTransformer(
        cfg["src_vocab"], cfg["tgt_vocab"], d_model=cfg["d_model"], n_heads=cfg["n_heads"],
        n_layers=cfg["n_layers"], d_ff=cfg["d_ff"], max_len=cfg["max_len"],
        norm_first=cfg["norm_first"], pad_id=cfg["pad_id"],
    )
    import torch

    arrays = tensors_from_payload(data)
    table = arrays.pop(POSITIONS)
    if not np.array_equal(table, model.positions.table.numpy()):
        raise ValueError("the payload's positional table differs from the model's")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in arrays.items()})
    return model.eval()


def live_spec(model: Any, lengths: Sequence[int]) -> dict[str, Any]:
    """The ``live`` argument of the decoding explorer's :class:`~course_attention.explorers.core.
    Explorer`: the kind and the model, loaded by the page on demand."""
    return {"kind": KIND, "data": {}, "model": payload(model, lengths), "text": TEXT}


def check_digits(text: str, lengths: Sequence[int]) -> str:
    """``text`` stripped, or a ``ValueError`` that says what to type instead (``decoding.js``
    shows the same messages)."""
    lo, hi = _check_lengths(lengths)
    if not isinstance(text, str):
        raise ValueError(f"digits must be a string such as '2718'; got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ValueError(_(EMPTY).format(lo=lo, hi=hi))
    bad = [c for c in text if c not in "0123456789"]
    if bad:
        raise ValueError(_(NOT_DIGIT).format(char=bad[0]))
    if not lo <= len(text) <= hi:
        raise ValueError(_(WRONG_LENGTH).format(lo=lo, hi=hi, n=len(text)))
    return text


@dataclass(frozen=True)
class Decoded:
    """Greedy decoding of typed digits, with every layer's and head's cross-attention.

    ``source`` names the real source tokens ``(seq_s,)`` (digits and ``[EOS]``); ``tokens`` the
    generated ones ``(steps,)``; ``logits`` ``(steps, vocab)`` are the scores each token was
    chosen from; ``cross`` ``(steps, layers, heads, seq_s)`` is the cross-attention row of the
    query that chose each token.
    """

    source: list[str]
    tokens: list[str]
    logits: np.ndarray
    cross: np.ndarray

    def steps(self, layer: int = -1, head: int = -1) -> Any:
        """One layer's rows as :class:`~course_attention.inspection.DecodingSteps`: head
        ``head``, or (``-1``) the average of the heads, as ``inspection.decoding_steps``."""
        from ..inspection import DecodingSteps

        layers, heads = self.cross.shape[1:3]
        if not -layers <= layer < layers:
            raise ValueError(f"layer={layer} is not an index into {layers} decoder layers")
        if not -1 <= head < heads:
            raise ValueError(f"head={head} is not -1 (the average) or an index into {heads} heads")
        rows = self.cross[:, layer]  # (steps, heads, seq_s)
        return DecodingSteps(self.source, self.tokens, rows.mean(axis=1) if head < 0 else
                             rows[:, head])


def decode(model: Any, digits: str, lengths: Sequence[int] = (3, 8)) -> Decoded:
    """Greedy-decode typed ``digits`` with ``model.greedy_decode``, as the page does.

    Raises ``ValueError`` (:func:`check_digits`) for anything but ``lengths`` digits 0-9.
    """
    import torch

    text = check_digits(digits, lengths)
    src = torch.from_numpy(tasks.encode_source(text))  # (1, WIDTH + 1): digits, [EOS], [PAD]…
    n = len(text) + 1
    with torch.no_grad():
        out = model.greedy_decode(
            src, tasks.BOS_ID, tasks.EOS_ID, max_steps=src.shape[1], return_attention=True
        )
        tgt_in = torch.cat([torch.tensor([[tasks.BOS_ID]]), out.tokens[:, :-1]], dim=1)
        memory, _ = model.encode(src, need_weights=False)
        logits, _ = model.decode(tgt_in, memory, src, need_weights=False)  # (1, steps, vocab)
    cross = torch.stack(out.cross_attention)[:, :, 0, :, :n]  # (steps, layers, heads, seq_s)
    return Decoded(
        tasks.token_names(src[0, :n].tolist()),
        tasks.token_names(out.tokens[0].tolist()),
        logits[0].double().numpy(),
        cross.double().numpy(),
    )


def _digit_model(seed: int = 0) -> Any:
    """The chapter-7 model, untrained and seeded without touching the global torch RNG."""
    from .. import modules

    return seeded(
        lambda: modules.Seq2SeqTransformer(
            tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
        ),
        seed,
    )


@register
def decoding_explorer(
    digits: str = "31415",
    step: int = 1,
    model: Any = None,
    lengths: tuple[int, int] = (3, 8),
) -> Explorer:
    """Type digits; step through the greedy decoding of a (trained) encoder–decoder.

    Introduced in chapter 7. Controls: ``digits`` (a text box), ``step`` (which generated
    token to show, counted from 1 as in the figure's rows), the decoder ``layer`` and the
    ``head`` (-1: their average) whose cross-attention is drawn. ``model`` is a
    :class:`course_attention.modules.Seq2SeqTransformer` on the digit vocabulary; the default
    is the chapter's model *untrained* (seeded), so pass the trained one. ``lengths`` are the
    shortest and longest strings the model was trained on: other lengths, letters or an empty
    box show the message the website shows (``check_digits``), instead of a traceback or a
    meaningless answer. On the website (``decoding.js``) the model runs in the reader's browser.
    """
    import ipywidgets as w

    from .. import viz

    model = _digit_model() if model is None else model
    lo, hi = min(lengths), max(lengths)
    cache: dict[str, Any] = {}

    def steps_for(text: str) -> Any:  # greedy decoding once per typed string
        if text.strip() not in cache:
            cache[text.strip()] = decode(model, text, lengths=(lo, hi))
        return cache[text.strip()]

    controls = {
        "digits": w.Text(value=digits, description=_("digits"), continuous_update=False),
        "step": w.IntSlider(
            value=step, min=1, max=hi + 1, description=_("step"), continuous_update=True
        ),
        "layer": w.Dropdown(
            options=[(_(LAYERS[i]) if i < len(LAYERS) else str(i + 1), i)
                     for i in range(len(model.decoder))],
            value=len(model.decoder) - 1, description=_("decoder layer"),
        ),
        "head": w.Dropdown(options=[(_("average of the heads"), -1)] + [
            (_(HEADS[h]) if h < len(HEADS) else str(h + 1), h)
            for h in range(model.decoder[0].cross_attn.n_heads)
        ], value=-1, description=_("cross-attention head")),
    }

    def limit_step(change: dict) -> None:
        try:
            controls["step"].max = max(2, len(steps_for(change["new"]).tokens))
        except ValueError:
            pass

    controls["digits"].observe(limit_step, names="value")
    limit_step({"new": digits})

    def make_figure(digits: str, step: int, layer: int, head: int) -> Any:
        steps = steps_for(digits).steps(layer, head)  # ValueError: the explorer's message
        step = min(step, len(steps.tokens))
        title = (TITLE_AVERAGE if head < 0 else TITLE_HEAD).format(  # English: viz shows it
            step=step, n=len(steps.tokens), layer=layer + 1, head=head + 1)
        return viz.decoding_figure(steps, step - 1, title=title)

    return Explorer(controls, make_figure, live_spec(model, (lo, hi)))
