"""Chapter 8's live GPT explorer (``gpt.js``): the model file and the seeded sampler.

Introduced with the live explorers of chapter 8. :func:`payload` writes a
:class:`course_attention.gpt.GPT` as the page loads it (its weights plus the shape and the
characters of its vocabulary); :func:`model_from_payload` rebuilds the torch model from that file,
so a test can compare the page's numbers with torch's.

The continuation both front ends show is drawn with :func:`seeded_sampler`: a 32-bit linear
congruential generator simple enough to write the same in Python and JavaScript, so JupyterLab
and the website show the *same* sampled text for the same settings, and a test can check it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..i18n import N_, _
from ..viz.decoder_only import CROPPED
from .core import Explorer, model_payload, register, seeded, slider, tensors_from_payload

__all__ = ["LCG", "SHOWN", "uniforms", "inverse_cdf", "seeded_sampler", "shown_ids", "payload",
           "model_from_payload", "spec", "gpt_explorer"]

#: The bars show at most this many characters, the most likely first.
SHOWN = 12

#: The figure's title, two lines — the settings, then what the figure shows (``gpt.js`` fills
#: the same templates from ``spec["text"]``).
TITLE_SETTINGS = N_("T = {temperature:.2f}, top-k {top_k}, top-p {top_p:.2f}:")
TITLE_SAMPLED = N_("the next character, and {n} sampled")
TITLE_GREEDY = N_("the next character, and {n} greedy")
#: The page's words — the title, the messages for a prompt the model cannot read (the second as
#: :func:`course_attention.corpus.encode` says it), the last bar's label.
TEXT = {
    "title_settings": TITLE_SETTINGS, "title_sampled": TITLE_SAMPLED,
    "title_greedy": TITLE_GREEDY,
    "empty": N_("type at least one character"),
    "outside": N_("characters outside the vocabulary of {size} (newline and printable ASCII): "
                  "{chars}"),
    "bad_temperature": N_("temperature must be > 0"),
    "all_others": N_("all others"),
    "cropped": CROPPED,
}

#: The generator's constants (Numerical Recipes), in ``state ← (a · state + c) mod 2³²``.
LCG = {"a": 1664525, "c": 1013904223, "m": 2**32}


def uniforms(seed: int, n: int) -> np.ndarray:
    """The first ``n`` numbers in [0, 1) of the generator seeded with ``seed`` ``(n,)``.

    ``state₀ = seed mod 2³²``; each draw advances the state and returns ``state / 2³²``.
    ``gpt.js`` computes the same numbers (every step is exact in float64).
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer; got {seed!r}")
    state, out = int(seed) % LCG["m"], []
    for _step in range(n):
        state = (LCG["a"] * state + LCG["c"]) % LCG["m"]
        out.append(state / LCG["m"])
    return np.array(out, dtype=np.float64)


def inverse_cdf(probs: np.ndarray, u: float) -> int:
    """The token whose slice of [0, 1) holds ``u``: the first id whose cumulative probability
    exceeds ``u`` (ids in order; a token with probability 0 is never chosen)."""
    cum = np.cumsum(probs)
    i = int(np.searchsorted(cum, u, side="right"))
    if i >= len(probs):  # u beyond the rounded total: the last token that has any mass
        i = int(np.flatnonzero(probs > 0)[-1])
    return i


def seeded_sampler(
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    seed: int = 0,
) -> Callable[[np.ndarray], int]:
    """A ``choose(logits (vocab,)) → id`` for :func:`course_attention.gpt.generate` that draws
    from :func:`course_attention.sampling.next_token_probabilities` with :func:`uniforms`.

    The ``t``-th call uses the ``t``-th number of the generator: the page does the same.
    """
    from .. import sampling

    sampling.check_temperature(temperature)
    draws = iter(uniforms(seed, 4096))

    def choose(logits: np.ndarray) -> int:
        probs = sampling.next_token_probabilities(logits, temperature, top_k, top_p)
        return inverse_cdf(probs, next(draws))

    return choose


def shown_ids(probs: np.ndarray, shown: int = SHOWN) -> list[int]:
    """The ids the bars show: the ``shown`` most likely, by decreasing probability (the lower id
    first on a tie), without the ones top-k or top-p left at probability 0 (``gpt.js`` too)."""
    order = np.argsort(-probs, kind="stable")[:shown]
    return [int(i) for i in order if probs[i] > 0]


def payload(model: Any) -> dict[str, Any]:
    """``model`` (a :class:`course_attention.gpt.GPT` on :mod:`course_attention.corpus`'s
    characters) as the page loads it: float32 weights plus its shape and vocabulary. ``gpt.js``
    runs GPT-2's architecture, as the model does: GELU's tanh approximation, no output bias."""
    from .. import corpus, gpt

    if not isinstance(model, gpt.GPT):
        raise ValueError(f"model must be a course_attention.gpt.GPT; got {type(model).__name__}")
    c = model.config
    if c.vocab_size != corpus.VOCAB_SIZE:
        raise ValueError(
            f"model.config.vocab_size={c.vocab_size}, but the page reads "
            f"{corpus.VOCAB_SIZE} characters (course_attention.corpus.VOCAB)"
        )
    config = {
        "vocab": corpus.VOCAB,
        "vocab_size": c.vocab_size,
        "context": c.context,
        "d_model": c.d_model,
        "n_heads": c.n_heads,
        "n_layers": c.n_layers,
        "d_ff": 4 * c.d_model if c.d_ff is None else c.d_ff,
        "tied": c.tied,
        "norm_eps": model.norm.eps,
        "activation": model.blocks[0].ff.activation,  # "gelu_tanh", as GPT-2
        "positions": "learned",
        "norms": "pre-norm blocks, then a final layer norm",
    }
    return model_payload(model.state_dict(), config)


def model_from_payload(data: dict[str, Any]) -> Any:
    """The torch :class:`course_attention.gpt.GPT` of a :func:`payload` (float32, eval mode)."""
    import torch

    from .. import gpt

    c = data["config"]
    config = gpt.GPTConfig(
        vocab_size=c["vocab_size"], context=c["context"], d_model=c["d_model"],
        n_heads=c["n_heads"], n_layers=c["n_layers"], d_ff=c["d_ff"], tied=c["tied"],
    )
    model = gpt.GPT(config)
    state = {k: torch.from_numpy(v) for k, v in tensors_from_payload(data).items()}
    model.load_state_dict(state)
    return model.float().eval()


def spec(model: Any, n_new: int, seed: int) -> dict[str, Any]:
    """The ``live`` dict of :func:`gpt_explorer` (kind ``gpt``)."""
    return {
        "kind": "gpt",
        "data": {"n_new": n_new, "seed": seed, "shown": SHOWN, "lcg": LCG},
        "model": payload(model),
        "text": TEXT,
    }


def _gpt_model(seed: int = 0) -> Any:
    """Chapter 8's model, untrained and seeded without touching the global torch RNG."""
    from .. import gpt

    return seeded(lambda: gpt.GPT(gpt.CHAPTER_CONFIG), seed)


@register
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
    (seeded), so pass the trained one. The bars show the (at most) 12 most likely next
    characters that can still be drawn (``shown_ids``); the text is ``n_new`` characters
    from :func:`course_attention.gpt.generate`, which reads the last ``context`` characters as
    nanoGPT does, drawn with ``seeded_sampler`` and ``seed``: the website's ``gpt.js`` draws
    the same text. A character outside the vocabulary or an empty box shows the message the
    website shows.
    """
    import ipywidgets as w

    from .. import corpus, gpt, sampling, viz

    model = _gpt_model() if model is None else model
    vocab = model.config.vocab_size
    controls = {
        "prompt": w.Text(value=prompt, description=_("prompt"), continuous_update=False),
        "sample": w.Checkbox(value=sample, description=_("sample (off: greedy)")),
        "temperature": slider(_("temperature"), temperature, 0.1, 2.0, 0.05),
        "top_p": slider("top-p", 1.0 if top_p is None else top_p, 0.05, 1.0, 0.05),
        "top_k": w.IntSlider(value=vocab if top_k is None else top_k, min=1, max=vocab,
                             description="top-k", continuous_update=True),
    }

    def make_figure(prompt: str, sample: bool, temperature: float, top_p: float,
                    top_k: int) -> Any:
        if not prompt:
            raise ValueError(_(TEXT["empty"]))
        ids = corpus.encode(prompt, strict=True)  # ValueError naming the characters
        choose = seeded_sampler(temperature, top_k, top_p, seed) if sample else None
        run = gpt.generate(model, ids, n_new, choose=choose)
        probs = sampling.next_token_probabilities(run.logits[0], temperature, top_k, top_p)
        # two lines, as viz.title_lines would break the English one after its ": "
        title = _(TITLE_SETTINGS).format(temperature=temperature, top_k=top_k, top_p=top_p) + \
            "<br>" + _(TITLE_SAMPLED if sample else TITLE_GREEDY).format(n=n_new)
        text = corpus.decode(run.tokens)
        return viz.next_char_figure(probs, shown_ids(probs), corpus.VOCAB, prompt, text,
                                    title=title, read=model.config.context)

    return Explorer(controls, make_figure, spec(model, n_new, seed))
