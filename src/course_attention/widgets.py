"""Live explorers for JupyterLab and Colab: controls that redraw a plotly figure.

Only widgets common to ipywidgets 7.7 (Colab) and 8 are used: sliders, dropdowns, toggle
buttons, boxes, ``interactive_output``. An explorer given a ``live`` spec displays one output with
two faces: the widgets (JupyterLab, Colab) and the spec the website runs in the reader's browser
(:mod:`course_attention.live`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import plotly.graph_objects as go

from . import viz

__all__ = ["Explorer", "EXPLORERS"]

#: Every explorer factory by name; each can be called with no arguments (tests drive them all).
EXPLORERS: dict[str, Callable[..., Explorer]] = {}


#: Each control keeps at least this width (label + ≥ 200 px of slider); the row wraps instead.
CONTROL_MIN_WIDTH = "420px"
#: Shown under every explorer, since a saved notebook keeps no live widgets.
REOPEN_NOTE = (
    "Live explorer: it runs in this kernel. After you reopen a saved notebook, run this cell "
    "again to bring it back."
)


def _explorer(factory: Callable[..., Explorer]) -> Callable[..., Explorer]:
    EXPLORERS[factory.__name__] = factory
    return factory


class Explorer:
    """Controls plus a figure that is rebuilt on every change.

    Introduced in chapter 1. ``controls`` maps keyword names of ``make_figure`` to widgets;
    ``figure`` always holds the latest figure, so tests can drive an explorer without a browser.
    """

    def __init__(
        self,
        controls: dict[str, w.ValueWidget],
        make_figure: Callable[..., go.Figure],
        live: dict[str, Any] | None = None,
    ) -> None:
        self.controls = controls
        self.make_figure = make_figure
        self.live = live  # {"kind", "data"}, optional "model", "controls", "omit": see spec()
        self.figure: go.Figure | None = None
        for control in controls.values():  # a full label, and room for the slider itself
            control.style.description_width = "initial"
            control.layout.min_width = CONTROL_MIN_WIDTH
        self.output = w.interactive_output(self._update, controls)
        row = w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap"))
        self.note = w.HTML(f"<small>{REOPEN_NOTE}</small>")
        self.widget = w.VBox([row, self.output, self.note])

    def _update(self, **values: Any) -> None:
        self.figure = self.make_figure(**values)
        viz.show(self.figure)

    def spec(self) -> dict[str, Any] | None:
        """The website's explorer: ``live`` plus the controls read off the widgets and the
        first state's figure (the page draws it before, and without, the live runtime)."""
        if self.live is None:
            return None
        from . import live

        shared = {k: c for k, c in self.controls.items() if k not in self.live.get("omit", ())}
        extra = self.live.get("controls", [])
        return live.jsonable(
            {**self.live, "controls": live.controls_spec(shared) + extra}
        ) | {"figure": json.loads(self.figure.to_json()) if self.figure is not None else None}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        spec = self.spec()
        if spec is None:
            display(self.widget)
            return
        from . import live

        view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
        text = f"Live explorer ({spec['kind']}): run this cell in JupyterLab or Colab."
        display({live.WIDGET_MIME: view, live.EXPLORER_MIME: spec, "text/plain": text}, raw=True)


def _slider(description: str, value: float, lo: float, hi: float, step: float) -> w.FloatSlider:
    return w.FloatSlider(
        value=value,
        min=lo,
        max=hi,
        step=step,
        description=description,
        continuous_update=True,
        readout_format=".2f",
        style={"description_width": "initial"},
    )


# --- chapter 1: soft look-up ----------------------------------------------------------------


@_explorer
def soft_lookup_explorer(
    angle: float = 0.0,
    temperature: float = 1.0,
    keys: tuple[str, ...] = viz.LOOKUP_KEYS,
) -> Explorer:
    """Turn a 2-D query and change the temperature; watch the weights and the value follow.

    Introduced in chapter 1. Controls: ``angle`` of the unit query in degrees, ``temperature``
    of the softmax. The figure is :func:`course_attention.viz.soft_lookup_figure`. On the
    website (``lookup.js``) the reader drags the query anywhere on the plane instead.
    """
    from . import toy

    controls = {
        "angle": w.FloatSlider(
            value=angle,
            min=-180.0,
            max=180.0,
            step=5.0,
            description="query angle (°)",
            continuous_update=True,
            readout_format=".0f",
            style={"description_width": "initial"},
        ),
        "temperature": _slider("temperature", temperature, 0.05, 5.0, 0.05),
    }

    def make_figure(angle: float, temperature: float) -> go.Figure:
        return viz.soft_lookup_figure(viz.query_direction(angle), temperature, keys)

    q = viz.query_direction(angle)
    live = {  # the page drags the query anywhere on the plane, not only round the unit circle
        "kind": "lookup",
        "data": {"keys": toy.word_matrix(list(keys)), "words": list(keys),
                 "values": [toy.FRUIT_DICT[k] for k in keys]},
        "omit": ["angle"],
        "controls": [
            {"name": "qx", "type": "range", "label": f"query {toy.WORD_FEATURES[0]}",
             "min": -1.3, "max": 1.3, "step": 0.01, "value": round(float(q[0]), 2), "format": 2},
            {"name": "qy", "type": "range", "label": f"query {toy.WORD_FEATURES[1]}",
             "min": -1.3, "max": 1.3, "step": 0.01, "value": round(float(q[1]), 2), "format": 2},
        ],
    }
    return Explorer(controls, make_figure, live)


# --- chapter 2: scaled dot-product ----------------------------------------------------------


@_explorer
def scaling_explorer(
    d_k: int = 64, scaled: bool = True, draw: int = 0, seq_k: int = 8
) -> Explorer:
    """Live explorer of one query's weights as ``d_k`` grows, with the √d_k scale on or off.

    Introduced in chapter 2. Controls: ``scaled`` (divide the scores by √d_k), ``d_k`` (every
    integer 1 … 1024) and ``draw`` (which random query and keys; a button moves to the next).
    Width ``d_k`` uses the first ``d_k`` features of the draw's query and keys, drawn by the
    portable generator the website's page runs too (:mod:`course_attention.live.scaling`).
    """
    from .live import scaling as live_scaling

    live_scaling.check_arguments(d_k, scaled, draw, seq_k)
    controls = {  # the checkbox first: at d_k = 1 scaling changes nothing (√1 = 1)
        "scaled": w.Checkbox(value=scaled, description="divide the scores by √d_k"),
        "d_k": w.IntSlider(value=d_k, min=1, max=live_scaling.MAX_WIDTH, description="d_k"),
        "draw": w.IntSlider(value=draw, min=0, max=live_scaling.N_DRAWS - 1,
                            description="draw (random query and keys)"),
    }

    def make_figure(d_k: int, scaled: bool, draw: int) -> go.Figure:
        weights = live_scaling.draw_weights(d_k, scaled, draw, seq_k)  # (seq_k,)
        return viz.scaling_bars_figure(weights, live_scaling.title(d_k, scaled, draw))

    explorer = Explorer(controls, make_figure, live_scaling.spec(controls, seq_k))
    live_scaling.add_resample_button(explorer)
    return explorer


# --- chapter 3: self-attention ------------------------------------------------------------


@_explorer
def self_attention_explorer(
    ending: str = "tired", query: int = 7, context: float = 1.0
) -> Explorer:
    """Pick the sentence ending and a query token; see where that token attends.

    Introduced in chapter 3. Controls: ``ending`` ("tired" or "wide"), ``query`` (the position
    of the query token, 0 … 10) and ``context`` (how much of the adjective the vector of "it"
    carries, :func:`course_attention.toy.it_sentence`). The figure is
    :func:`course_attention.viz.query_row_figure`; on the website ``self_attention.js`` computes
    the same row in the reader's browser (:mod:`course_attention.live.self_attention`).
    """
    from . import toy
    from .live import self_attention as live

    seq = len(toy.it_sentence(ending).tokens)
    if not 0 <= query < seq:
        raise ValueError(f"query must be a position in 0 … {seq - 1}; got {query}")
    controls = {
        "ending": w.Dropdown(options=list(toy.IT_ENDINGS), value=ending, description="too …"),
        "context": _slider("context in 'it'", context, *live.CONTEXT_RANGE),
        "query": w.IntSlider(
            value=query, min=0, max=seq - 1, description="query position", continuous_update=True
        ),
    }
    return Explorer(controls, live.figure, live.spec())  # the page: self_attention.js


# --- chapter 4: masking -------------------------------------------------------------------


@_explorer
def mask_explorer(kind: str = "causal + padding", n_real: int = 4, window: int = 3) -> Explorer:
    """Build a mask and see the weights it gives, side by side.

    Introduced in chapter 4. Controls: ``kind`` of mask (a preset of
    ``course_attention.live.mask.PRESETS``: the four of :data:`course_attention.viz.MASK_KINDS`
    and a sliding window of ``window`` keys, with or without padding) and ``n_real``, the number of
    real tokens in the six-token sentence (the rest is padding). The figure is
    :func:`course_attention.viz.mask_figure`. On the website (``mask.js``) a slider sets the
    window too, and the reader clicks cells of the mask (or uses menus) to allow or block them.
    """
    from .live import mask as live_mask

    seq = len(viz.MASK_TOKENS)
    live_mask.check(kind, n_real, window, seq)
    controls = {
        "kind": w.Dropdown(options=list(live_mask.PRESETS), value=kind, description="mask"),
        "n_real": w.IntSlider(
            value=n_real,
            min=1,
            max=seq,
            description="real tokens",
            continuous_update=True,
            style={"description_width": "initial"},
        ),
    }

    def make_figure(kind: str, n_real: int) -> go.Figure:
        return live_mask.figure(kind, n_real, window)

    return Explorer(controls, make_figure, live_mask.spec(window))


# --- chapter 5: multi-head attention --------------------------------------------------------


@_explorer
def multi_head_explorer(
    head: int = 0, n_heads: int = 2, projections: str = "built", seed: int = 0
) -> Explorer:
    """Cut one set of projections into 1, 2, 4 or 8 heads and see each head's weights.

    Introduced in chapter 5. Controls: ``projections`` ("built": the chapter's hand-made
    :func:`course_attention.toy.two_head_example`; "random": seeded, with no meaning),
    ``n_heads`` (1, 2, 4 or 8 heads of width ``8 / n_heads``) and ``head`` (which head to draw),
    all over "the cat sat on the mat". On the website ``heads.js`` runs the multi-head attention
    in the reader's browser (:mod:`course_attention.live.heads`).
    """
    from .live import heads as live

    live.inputs(projections, seed)  # checks the projections
    if n_heads not in live.HEAD_COUNTS:
        raise ValueError(f"n_heads must be one of {list(live.HEAD_COUNTS)}; got {n_heads}")
    if not 0 <= head < n_heads:
        raise ValueError(f"head={head} is not an index into {n_heads} heads")
    controls = {  # head first: with one head the head slider has nowhere to go
        "head": w.IntSlider(
            value=head, min=0, max=n_heads - 1, description="head", continuous_update=True
        ),
        "n_heads": w.Dropdown(options=list(live.HEAD_COUNTS), value=n_heads, description="heads"),
        "projections": w.Dropdown(
            options=[(label, v) for v, label in live.PROJECTIONS.items()], value=projections,
            description="projections",
        ),
    }
    controls["n_heads"].observe(lambda c: setattr(controls["head"], "max", c["new"] - 1), "value")
    cache: dict[tuple[str, int], Any] = {}

    def make_figure(projections: str, n_heads: int, head: int) -> go.Figure:
        if (projections, n_heads) not in cache:  # (n_heads, T, T)
            cache[projections, n_heads] = live.head_weights(projections, n_heads, seed)
        return live.figure(cache[projections, n_heads], n_heads, min(head, n_heads - 1))

    return Explorer(controls, make_figure, live.spec(seed))


# --- chapter 6: the Transformer block ------------------------------------------------------


@_explorer
def positions_explorer(position: int = 5, d_model: int = 32, base: float = 10000.0) -> Explorer:
    """Pick a position, the width and the base of the sinusoidal positions; see the vector.

    Introduced in chapter 10. Controls: ``position`` (0 … 47), ``d_model`` (16, 32, 64 or 128)
    and ``base`` (100, 1000 or 10000: how slowly the slowest clock turns). The figure is
    :func:`course_attention.viz.position_figure`: the position's features, and its dot products
    with every position of a 48-token sequence.
    """
    from . import numpy_ref

    seq_len, widths, bases = 48, [16, 32, 64, 128], [100.0, 1000.0, 10000.0]
    if d_model not in widths or base not in bases or not 0 <= position < seq_len:
        raise ValueError(
            f"need position in 0 … {seq_len - 1}, d_model in {widths}, base in {bases}; "
            f"got {position}, {d_model}, {base}"
        )
    controls = {
        "position": w.IntSlider(
            value=position, min=0, max=seq_len - 1, description="position", continuous_update=True
        ),
        "d_model": w.Dropdown(options=widths, value=d_model, description="d_model"),
        "base": w.Dropdown(options=bases, value=base, description="base"),
    }

    def make_figure(position: int, d_model: int, base: float) -> go.Figure:
        table = numpy_ref.sinusoidal_positions(seq_len, d_model, base)  # (seq_len, d_model)
        title = f"position {position}, d_model = {d_model}, base = {base:g}"
        return viz.position_figure(table, position, title=title)

    from .live.positions import positions_live  # the page computes the table itself

    return Explorer(controls, make_figure, positions_live(seq_len))


# --- chapter 7: encoder–decoder ---------------------------------------------------------


def _digit_model(seed: int = 0) -> Any:
    """The chapter-7 model, untrained and seeded without touching the global torch RNG."""
    from . import modules, tasks

    return _seeded(
        lambda: modules.Seq2SeqTransformer(
            tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=32, n_heads=4, n_layers=2, max_len=16
        ),
        seed,
    )


def _seeded(build: Callable[[], Any], seed: int) -> Any:
    """``build()`` with torch seeded by ``seed``, leaving the global torch RNG as it was; in
    eval mode. The explorers' default models are untrained: the chapters pass trained ones."""
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = build()
    return model.eval()


@_explorer
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
    box show a message that says what to type, instead of a traceback or a meaningless answer.
    On the website (``decoding.js``) the model runs in the reader's browser.
    """
    from .live import seq2seq

    model = _digit_model() if model is None else model
    lo, hi = min(lengths), max(lengths)
    cache: dict[str, Any] = {}

    def steps_for(text: str) -> Any:  # greedy decoding once per typed string
        if text.strip() not in cache:
            cache[text.strip()] = seq2seq.decode(model, text, lengths=(lo, hi))
        return cache[text.strip()]

    controls = {
        "digits": w.Text(value=digits, description="digits", continuous_update=False),
        "step": w.IntSlider(
            value=step, min=1, max=hi + 1, description="step", continuous_update=True
        ),
        "layer": w.Dropdown(options=[(f"layer {i + 1}", i) for i in range(len(model.decoder))],
                            value=len(model.decoder) - 1, description="decoder layer"),
        "head": w.Dropdown(options=[("average of the heads", -1)] + [
            (f"head {h + 1}", h) for h in range(model.decoder[0].cross_attn.n_heads)
        ], value=-1, description="cross-attention head"),
    }

    def limit_step(change: dict) -> None:
        try:
            controls["step"].max = max(2, len(steps_for(change["new"]).tokens))
        except ValueError:
            pass

    controls["digits"].observe(limit_step, names="value")
    limit_step({"new": digits})

    def make_figure(digits: str, step: int, layer: int, head: int) -> go.Figure:
        try:
            steps = steps_for(digits).steps(layer, head)
        except ValueError as error:
            return viz.decoding_error_figure(str(error))
        step = min(step, len(steps.tokens))
        which = "heads averaged" if head < 0 else f"head {head + 1}"  # short: fits 375 px
        title = f"step {step} of {len(steps.tokens)} · layer {layer + 1}, {which}"
        return viz.decoding_figure(steps, step - 1, title=title)

    return Explorer(controls, make_figure, seq2seq.live_spec(model, (lo, hi)))


# --- chapter 11: efficient attention --------------------------------------------------------


@_explorer
def tiling_explorer(seq_len: int = 16, block_size: int = 4, progress: float = 25.0) -> Explorer:
    """Step through the tiled (FlashAttention-style) pass of one head.

    Introduced in chapter 11. Controls: ``seq_len`` (queries = keys), ``block_size`` (the tile's
    rows and columns) and ``progress``, the share of the tiles done (%). The figure is
    :func:`course_attention.viz.tiling_figure`: the one tile of scores held now, and how far
    each query's running output still is from its final value.
    """
    controls = {
        "seq_len": w.IntSlider(
            value=seq_len,
            min=8,
            max=32,
            step=4,
            description="sequence length T",
            continuous_update=False,
            style={"description_width": "initial"},
        ),
        "block_size": w.Dropdown(options=[2, 3, 4, 8], value=block_size, description="block"),
        "progress": w.FloatSlider(
            value=progress,
            min=0.0,
            max=100.0,
            step=1.0,
            description="tiles done (%)",
            continuous_update=True,
            readout_format=".0f",
            style={"description_width": "initial"},
        ),
    }

    def make_figure(seq_len: int, block_size: int, progress: float) -> go.Figure:
        n_tiles = (-(-seq_len // block_size)) ** 2
        step = max(1, round(progress / 100 * n_tiles))
        return viz.tiling_figure(
            seq_len, block_size, step, title=f"T = {seq_len}, block {block_size}: tile {step} of "
            f"{n_tiles}"
        )

    from .live.tiling import tiling_live  # the page runs the tiled pass itself

    T = controls["seq_len"]
    return Explorer(controls, make_figure, tiling_live(list(range(T.min, T.max + 1, T.step))))


# --- chapter 9: induction heads ------------------------------------------------------------


@_explorer
def induction_explorer(
    layer: int = 1, head: int = 0, checkpoint: int = -1, run: Any = None
) -> Explorer:
    """Any head of the chapter-9 model on a sequence you type, at any training checkpoint.

    Introduced in chapter 9. Controls: ``layer``, ``head``, ``checkpoint`` (the training step:
    its maps are recorded for the evaluation sequence only) and ``tokens``, the token ids (other
    sequences run the trained model). ``run`` is a :class:`course_attention.induction.InductionRun`
    (pass the chapter's); the default is a 20-step run, too short to learn anything, so that the
    explorer works alone. The page (``induction.js``) runs ``run.model`` with no checkpoints.
    """
    from . import induction
    from .live import induction as live

    if run is None:
        run = induction.train_induction(steps=20, every=10, eval_size=2, progress=False)
    n_ckpt, n_layers, n_heads = run.example.shape[:3]  # (checkpoints, layers, heads, seq, seq)
    config = run.model.config
    controls = {
        "layer": w.Dropdown(options=list(range(n_layers)), value=layer, description="layer"),
        "head": w.IntSlider(value=head, min=0, max=n_heads - 1, description="head"),
        "checkpoint": w.SelectionSlider(
            options=[(str(int(s)), i) for i, s in enumerate(run.steps)],
            value=checkpoint % n_ckpt,
            description="training step",
        ),
        "tokens": w.Text(value=live.tokens_text(run.eval_batch.tokens[0]),
                         description=f"token ids (0 to {config.vocab - 1}, at most "
                         f"{config.seq_len})"),
    }

    def make_figure(layer: int, head: int, checkpoint: int, tokens: str) -> go.Figure:
        return live.figure(run, tokens, layer, head, checkpoint)

    return Explorer(controls, make_figure, live.spec(run.model))


# --- chapter 10: positions ------------------------------------------------------------------


@_explorer
def rope_explorer(offset: int = 8, d: int = 64, base: float = 10000.0) -> Explorer:
    """Move the offset ``m − n`` between a rotated query and key; change the width and the base.

    Introduced in chapter 10. Controls: ``offset`` (0 … 64), ``d`` (16, 32, 64 or 128 features)
    and ``base`` (100, 1000 or 10000). The figure is
    :func:`course_attention.viz.rope_offset_figure`: how much of each pair survives at this
    offset, and the score of a vector with itself at every offset.
    """
    max_offset, widths, bases = 64, [16, 32, 64, 128], [100.0, 1000.0, 10000.0]
    if d not in widths or base not in bases or not 0 <= offset <= max_offset:
        raise ValueError(
            f"need offset in 0 … {max_offset}, d in {widths}, base in {bases}; "
            f"got {offset}, {d}, {base}"
        )
    controls = {
        "offset": w.IntSlider(
            value=offset, min=0, max=max_offset, description="offset m − n",
            continuous_update=True,
        ),
        "d": w.Dropdown(options=widths, value=d, description="d (features)"),
        "base": w.Dropdown(options=bases, value=base, description="base"),
    }

    def make_figure(offset: int, d: int, base: float) -> go.Figure:
        title = f"offset {offset}, d = {d}, base = {base:g}"
        return viz.rope_offset_figure(offset, d, base, max_offset, title=title)

    from .live.positions import rope_live  # the page computes the curves itself

    return Explorer(controls, make_figure, rope_live(widths, max_offset))


# --- chapter 8: a GPT you train yourself ------------------------------------------------------


def _gpt_model(seed: int = 0) -> Any:
    """Chapter 8's model, untrained and seeded without touching the global torch RNG."""
    from . import gpt

    return _seeded(lambda: gpt.GPT(gpt.CHAPTER_CONFIG), seed)


@_explorer
def gpt_explorer(
    prompt: str = "def ",
    temperature: float = 0.8,
    model: Any = None,
    n_new: int = 40,
    top_k: int | None = None,
    seed: int = 0,
    top_p: float | None = None,
    sample: bool = True,
) -> Explorer:
    """Type a prompt; see the next-character distribution and a continuation.

    Introduced in chapter 8. Controls: ``prompt`` (a text box), ``sample`` (off: the greedy
    continuation), ``temperature``, ``top_p`` (``None`` is 1) and ``top_k`` (1 … vocab; ``None``
    is the whole vocabulary). ``model`` is a :class:`course_attention.gpt.GPT` on
    :mod:`course_attention.corpus`'s characters; the default is the chapter's model *untrained*
    (seeded), so pass the trained one. The bars show the 12 most likely next characters; the
    text is ``n_new`` characters (fewer when the context would overflow), drawn with
    :func:`course_attention.live.gpt.seeded_sampler` and ``seed``: the website's ``gpt.js``
    draws the same text. A character outside the vocabulary, an empty box or a prompt longer
    than the context shows a message instead of a figure.
    """
    import numpy as np

    from . import corpus, gpt, sampling
    from .live import gpt as live_gpt

    model = _gpt_model() if model is None else model
    context, vocab = model.config.context, model.config.vocab_size
    controls = {
        "prompt": w.Text(value=prompt, description="prompt", continuous_update=False),
        "sample": w.Checkbox(value=sample, description="sample (off: greedy)"),
        "temperature": _slider("temperature", temperature, 0.1, 2.0, 0.05),
        "top_p": _slider("top-p", 1.0 if top_p is None else top_p, 0.05, 1.0, 0.05),
        "top_k": w.IntSlider(value=vocab if top_k is None else top_k, min=1, max=vocab,
                             description="top-k", continuous_update=True),
    }

    def make_figure(prompt: str, sample: bool, temperature: float, top_p: float,
                    top_k: int) -> go.Figure:
        try:
            if not prompt:
                raise ValueError("type at least one character")
            ids = corpus.encode(prompt, strict=True)
            if len(ids) > context:
                raise ValueError(
                    f"the prompt has {len(ids)} characters; this model reads at most {context}"
                )
        except ValueError as error:
            return viz.message_figure(str(error))
        n = min(n_new, context - len(ids) + 1)
        choose = live_gpt.seeded_sampler(temperature, top_k, top_p, seed) if sample else None
        run = gpt.generate(model, ids, n, choose=choose)
        probs = sampling.next_token_probabilities(run.logits[0], temperature, top_k, top_p)
        shown = [int(i) for i in np.argsort(-probs, kind="stable")[:12]]
        how = f"{n} sampled" if sample else f"{n} greedy"
        title = (f"T = {temperature:.2f}, top-k {top_k}, top-p {top_p:.2f}: the next character, "
                 f"and {how}")
        text = corpus.decode(run.tokens)
        return viz.next_char_figure(probs, shown, corpus.VOCAB, prompt, text, title=title)

    return Explorer(controls, make_figure, live_gpt.spec(model, n_new, seed))
