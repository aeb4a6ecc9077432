"""Chapter 9's live explorer (``induction.js``): the trained attention-only model in the page.

Introduced with the explorers of chapter 9. The page gets the chapter's trained
:class:`~course_attention.induction.AttentionOnlyTransformer` as a model file
(:func:`payload`); the reader types token ids, and ``induction.js`` runs the forward pass in the
browser: embeddings plus learned positions, then per layer ``x ← x + attn(x)`` (causal, no MLP,
no layer norm), then the read-out to the logits. It draws the chosen head's weights as
:func:`course_attention.viz.attention_heatmap` does. :func:`model_from_payload` rebuilds the
torch model from the same file, so the browser test compares the page with torch.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from . import model_payload, tensors_from_payload

__all__ = [
    "payload",
    "model_from_payload",
    "tokens_text",
    "parse_tokens",
    "figure",
    "height",
    "spec",
]


def payload(model: Any) -> dict[str, Any]:
    """The page's model file of ``model`` (an ``AttentionOnlyTransformer``): its float32 weights
    and its :class:`~course_attention.induction.RepeatConfig` as ``config``."""
    from ..induction import AttentionOnlyTransformer

    if not isinstance(model, AttentionOnlyTransformer):
        raise ValueError(f"model must be an AttentionOnlyTransformer; got {type(model).__name__}")
    return model_payload(model.state_dict(), dataclasses.asdict(model.config))


def model_from_payload(file: dict[str, Any]) -> Any:
    """The torch model of a :func:`payload` (float32, in eval mode): what the page computes."""
    from ..induction import AttentionOnlyTransformer, RepeatConfig

    model = AttentionOnlyTransformer(RepeatConfig(**file["config"]))
    state = {k: torch.from_numpy(v) for k, v in tensors_from_payload(file).items()}
    model.load_state_dict(state)
    return model.eval()


def tokens_text(tokens: Any) -> str:
    """Token ids ``(seq,)`` as the page's text box holds them: ``"5 17 42"``."""
    return " ".join(str(int(t)) for t in torch.as_tensor(tokens).reshape(-1).tolist())


def parse_tokens(text: str, vocab: int, seq_len: int) -> list[int]:
    """``"5 17 42"`` → ``[5, 17, 42]``: ids in ``[0, vocab)``, 1 to ``seq_len`` of them, separated
    by spaces or commas. Raises ValueError naming the value at fault (``induction.js`` shows
    the same messages in the page)."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise ValueError(
            f"Type some token ids (whole numbers from 0 to {vocab - 1}), separated by spaces."
        )
    if len(parts) > seq_len:
        raise ValueError(
            f"{len(parts)} tokens is too many: the model has learned positions for at most "
            f"{seq_len}."
        )
    for p in parts:
        if not (p.isascii() and p.isdigit()):
            raise ValueError(
                f"\u201c{p}\u201d is not a token id: type whole numbers from 0 to {vocab - 1}, "
                "separated by spaces."
            )
        if int(p) >= vocab:
            raise ValueError(f"{p} is outside the vocabulary: token ids run from 0 to {vocab - 1}.")
    return [int(p) for p in parts]


def figure(run: Any, text: str, layer: int, head: int, checkpoint: int) -> Any:
    """The ipywidgets explorer's figure: head ``head`` of ``layer`` on the typed sequence.

    On the chapter's evaluation sequence the checkpoint's recorded maps (any training step);
    on any other sequence the trained model (the last checkpoint), as the page computes it.
    Bad text gives an empty figure whose title says what is wrong.
    """
    import plotly.graph_objects as go

    from .. import viz
    from ..induction import position_labels

    config = run.model.config
    try:
        ids = parse_tokens(text, config.vocab, config.seq_len)
    except ValueError as error:
        return go.Figure(layout=dict(title=str(error), height=300))
    if ids == run.eval_batch.tokens[0].tolist():
        weights = run.example[checkpoint, layer, head].astype(float)
        title = f"layer {layer}, head {head}, after {int(run.steps[checkpoint])} steps"
    else:
        with torch.no_grad():
            weights = run.model(torch.tensor([ids]))[1][layer, 0, head].double().numpy()
        title = f"layer {layer}, head {head}, trained model (your sequence)"
    fig = viz.attention_heatmap(weights, position_labels(ids), title=title)
    return fig.update_layout(height=height(len(ids)))


def height(seq: int) -> int:
    """The figure's height in pixels for ``seq`` tokens: ``viz.attention_heatmap``'s, at most
    700 (48 rows of 40 px would make a page-long strip; the page also keeps the map square)."""
    return max(300, min(60 + 40 * seq, 700))


def spec(model: Any) -> dict[str, Any]:
    """The ``live`` spec of ``widgets.induction_explorer``: the model (loaded on demand) and a
    button that draws a new sequence with a repeat; the checkpoint slider stays in JupyterLab."""
    return {
        "kind": "induction",
        "data": {},
        "model": payload(model),
        "omit": ["checkpoint"],  # only the trained model is exported, not every checkpoint
        "controls": [
            {
                "name": "draw",
                "type": "button",
                "label": "draw a random sequence with a repeat",
                "value": None,
            },
        ],
    }
