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

from ..i18n import N_, _
from .core import Explorer, model_payload, register, tensors_from_payload

__all__ = [
    "payload",
    "model_from_payload",
    "tokens_text",
    "parse_tokens",
    "figure",
    "height",
    "predicted_right",
    "random_sequence",
    "spec",
    "induction_explorer",
]

#: The label of the button that draws a new sequence, on the page and in JupyterLab.
DRAW = N_("draw a random sequence with a repeat")
#: The messages for typed text the model cannot read (``induction.js`` fills the same).
NO_TOKENS = N_("Type some token ids (whole numbers from 0 to {max}), separated by spaces.")
TOO_MANY = N_("{n} tokens is too many: the model has learned positions for at most {seq_len}.")
NOT_ID = N_("\u201c{part}\u201d is not a token id: type whole numbers from 0 to {max}, separated "
            "by spaces.")
OUTSIDE = N_("{part} is outside the vocabulary: token ids run from 0 to {max}.")
#: The title's first line — a recorded checkpoint, the trained model on the reader's sequence
#: (the notebook), the trained model (the page); its second line counts the right predictions.
TITLE_CHECKPOINT = N_("layer {layer}, head {head}, after {steps} steps")
TITLE_YOURS = N_("layer {layer}, head {head}, trained model (your sequence)")
TITLE_PAGE = N_("layer {layer}, head {head}, trained model")
RIGHT = N_("<sup>trained model: next token predicted right at {right} of {n} positions</sup>")


def payload(model: Any) -> dict[str, Any]:
    """The page's model file of ``model`` (an ``AttentionOnlyTransformer``): its float32 weights
    and its :class:`~course_attention.induction.RepeatConfig` as ``config``."""
    from ..induction import AttentionOnlyTransformer

    if not isinstance(model, AttentionOnlyTransformer):
        raise ValueError(f"model must be an AttentionOnlyTransformer; got {type(model).__name__}")
    return model_payload(model.state_dict(), dataclasses.asdict(model.config))


def model_from_payload(file: dict[str, Any]) -> Any:
    """The torch model of a :func:`payload` (float32, in eval mode): what the page computes."""
    import torch

    from ..induction import AttentionOnlyTransformer, RepeatConfig

    model = AttentionOnlyTransformer(RepeatConfig(**file["config"]))
    state = {k: torch.from_numpy(v) for k, v in tensors_from_payload(file).items()}
    model.load_state_dict(state)
    return model.eval()


def tokens_text(tokens: Any) -> str:
    """Token ids ``(seq,)`` as the page's text box holds them: ``"5 17 42"``."""
    import torch

    return " ".join(str(int(t)) for t in torch.as_tensor(tokens).reshape(-1).tolist())


def parse_tokens(text: str, vocab: int, seq_len: int) -> list[int]:
    """``"5 17 42"`` → ``[5, 17, 42]``: ids in ``[0, vocab)``, 1 to ``seq_len`` of them, separated
    by spaces or commas. Raises ValueError naming the value at fault (``induction.js`` shows
    the same messages in the page)."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts:
        raise ValueError(_(NO_TOKENS).format(max=vocab - 1))
    if len(parts) > seq_len:
        raise ValueError(_(TOO_MANY).format(n=len(parts), seq_len=seq_len))
    for p in parts:
        if not (p.isascii() and p.isdigit()):
            raise ValueError(_(NOT_ID).format(part=p, max=vocab - 1))
        if int(p) >= vocab:
            raise ValueError(_(OUTSIDE).format(part=p, max=vocab - 1))
    return [int(p) for p in parts]


def predicted_right(model: Any, ids: list[int]) -> tuple[int, int]:
    """``(right, positions)``: at how many of the ``len(ids) - 1`` positions the model's most
    likely next token is the one that follows (``induction.js`` counts the same)."""
    return _run(model, tuple(ids))[1:]


def _run(model: Any, ids: tuple[int, ...]) -> tuple[Any, int, int]:
    """The model once on ``ids``: every head's weights ``(layers, heads, seq, seq)`` and the
    count of :func:`predicted_right`."""
    import torch

    with torch.no_grad():
        logits, weights = model(torch.tensor([ids]))  # (1, seq, vocab), (layers, 1, heads, ...)
    guess = logits[0].argmax(dim=-1)[:-1].tolist()
    right = sum(int(g == t) for g, t in zip(guess, ids[1:], strict=True))
    return weights[:, 0].double().numpy(), right, len(ids) - 1


def random_sequence(config: Any, gen: Any) -> str:
    """A random sequence with one repeated segment, as the chapter's training data draws them
    (:func:`course_attention.induction.repeat_batch`), as the text box holds it."""
    from ..induction import repeat_batch

    return tokens_text(repeat_batch(config, 1, gen).tokens[0])


def figure(run: Any, text: str, layer: int, head: int, checkpoint: int,
           cache: dict | None = None) -> Any:
    """The ipywidgets explorer's figure: head ``head`` of ``layer`` on the typed sequence.

    On the chapter's evaluation sequence the checkpoint's recorded maps (any training step);
    on any other sequence the trained model (the last checkpoint), as the page computes it.
    The title's second line counts the positions where the trained model predicts the next
    token right. Bad text raises the ValueError whose message the explorer shows. ``cache``
    keeps the model's run per sequence (a new head or layer only redraws).
    """
    from .. import viz
    from ..induction import position_labels

    config = run.model.config
    ids = parse_tokens(text, config.vocab, config.seq_len)
    cache = {} if cache is None else cache
    if tuple(ids) not in cache:
        cache[tuple(ids)] = _run(run.model, tuple(ids))
    every, right, n = cache[tuple(ids)]
    if ids == run.eval_batch.tokens[0].tolist():
        weights = run.example[checkpoint, layer, head].astype(float)
        title = _(TITLE_CHECKPOINT).format(layer=layer, head=head,
                                           steps=int(run.steps[checkpoint]))
    else:
        weights = every[layer, head]
        title = _(TITLE_YOURS).format(layer=layer, head=head)
    title += "<br>" + _(RIGHT).format(right=right, n=n)
    fig = viz.attention_heatmap(weights, position_labels(ids), title=title)
    return fig.update_layout(height=height(len(ids)))


def height(seq: int) -> int:
    """The figure's height in pixels for ``seq`` tokens: ``viz.attention_heatmap``'s, at most
    :data:`MAX_HEIGHT`, so that controls and map fit in a notebook's view (the page also keeps
    the map square)."""
    return max(300, min(60 + 40 * seq, MAX_HEIGHT))


#: The tallest map in px, since 48 rows of 40 px would make a strip taller than a notebook's view.
MAX_HEIGHT = 440


def spec(model: Any) -> dict[str, Any]:
    """The ``live`` spec of :func:`induction_explorer`: the model (loaded on demand) and the
    button that draws a new sequence with a repeat; the checkpoint slider stays in the notebook
    (the page runs the trained model only: the checkpoints' weights are not exported)."""
    return {
        "kind": "induction",
        "data": {"max_height": MAX_HEIGHT},
        "model": payload(model),
        "omit": ["checkpoint"],  # only the trained model is exported, not every checkpoint
        "controls": [
            {"name": "draw", "type": "button", "label": DRAW, "value": None},
        ],
        "text": {
            "no_tokens": NO_TOKENS, "too_many": TOO_MANY, "not_id": NOT_ID, "outside": OUTSIDE,
            "title": TITLE_PAGE, "right": RIGHT,
            "hover": N_("query %{y}<br>key %{x}<br>weight %{z:.3f}<br>model's next token after "
                        "the query: %{customdata}<extra></extra>"),
        },
    }


#: Said under the notebook's explorer, of the one control only the notebook has.
NOTE = N_("The training-step slider exists only here: the website's explorer runs the trained "
          "model alone.")


@register
def induction_explorer(
    layer: int = 1, head: int = 0, checkpoint: int = -1, run: Any = None, seed: int = 0
) -> Explorer:
    """Any head of the chapter-9 model on a sequence you type, at any training checkpoint.

    Introduced in chapter 9. Controls: ``layer``, ``head``, ``checkpoint`` (the training step:
    its maps are recorded for the evaluation sequence only; the website has only the trained
    model), ``tokens``, the token ids (other sequences run the trained model), and a button
    that draws a random sequence with a repeat (``random_sequence``, seeded by ``seed``).
    The title says at how many positions the trained model predicts the next token right.
    ``run`` is a :class:`course_attention.induction.InductionRun` (pass the chapter's); the
    default is a 20-step run, too short to learn anything, so that the explorer works alone.
    The page (``induction.js``) runs ``run.model``.
    """
    import ipywidgets as w
    import torch

    from .. import induction

    if run is None:
        run = induction.train_induction(steps=20, every=10, eval_size=2, progress=False)
    n_ckpt, n_layers, n_heads = run.example.shape[:3]  # (checkpoints, layers, heads, seq, seq)
    config = run.model.config
    controls = {
        "layer": w.Dropdown(options=list(range(n_layers)), value=layer, description=_("layer")),
        "head": w.IntSlider(value=head, min=0, max=n_heads - 1, description=_("head")),
        "checkpoint": w.SelectionSlider(
            options=[(str(int(s)), i) for i, s in enumerate(run.steps)],
            value=checkpoint % n_ckpt,
            description=_("training step"),
        ),
        "tokens": w.Textarea(value=tokens_text(run.eval_batch.tokens[0]), rows=2,
                             continuous_update=False, layout=w.Layout(width="100%"),
                             description=_("token ids (0 to {max}, at most {seq_len})").format(
                                 max=config.vocab - 1, seq_len=config.seq_len)),
    }  # two rows: all 48 ids in sight
    draw = w.Button(description=_(DRAW), tooltip=_("a new random sequence in which one segment "
                                                   "appears twice"), layout=w.Layout(width="auto"))
    gen = torch.Generator().manual_seed(seed)
    draw.on_click(lambda _: setattr(controls["tokens"], "value", random_sequence(config, gen)))

    runs: dict = {}  # the model's run per typed sequence

    def make_figure(layer: int, head: int, checkpoint: int, tokens: str) -> Any:
        return figure(run, tokens, layer, head, checkpoint, cache=runs)

    explorer = Explorer(controls, make_figure, spec(run.model), buttons={"draw": draw},
                        note=NOTE)
    controls["tokens"].layout.flex = "1 1 100%"  # a whole row: 48 ids stay readable
    return explorer
