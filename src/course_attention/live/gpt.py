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

from . import model_payload, tensors_from_payload

__all__ = ["LCG", "uniforms", "inverse_cdf", "seeded_sampler", "payload", "model_from_payload",
           "spec"]

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
    for _ in range(n):
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


def payload(model: Any) -> dict[str, Any]:
    """``model`` (a :class:`course_attention.gpt.GPT` on :mod:`course_attention.corpus`'s
    characters) as the page loads it: float32 weights plus its shape and vocabulary."""
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
    """The ``live`` dict of :func:`course_attention.widgets.gpt_explorer` (kind ``gpt``)."""
    return {
        "kind": "gpt",
        "data": {"n_new": n_new, "seed": seed, "shown": 12, "lcg": LCG},
        "model": payload(model),
    }
