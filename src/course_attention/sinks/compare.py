"""Chapter 14's trained models: where the weight goes, streaming past the window, learned sinks,
local and global layers, and soft-capping against QK-norm.

Introduced in chapter 14. Every model reads chapter 8's corpus with a *start token* in front of
each training window (id :data:`START`, one more than chapter 8's characters), as a language
model reads a beginning-of-text token at the start of every document: without a start token,
nothing marks the first position of a random window, and at the course's scale no sink forms
(``"plain"``, the control, measures it). The models (:data:`MODELS`):

- ``"modern"``: chapter 12's :data:`~course_attention.modern.compare.MODERN_CONFIG`, and
  ``"sink"``: the same with gpt-oss's learned sink logit per head, trained for
  :data:`LONG_TRAINING` (a sink forms in ``"modern"`` on every seed only after that many steps);
- ``"gpt2"``: chapter 8's GPT; ``"qknorm"``: ``"modern"`` again; ``"llama"``: without QK-norm;
  ``"softcap"``: ``"llama"`` with Gemma 2's soft-capping at :data:`CAP`; ``"local"``: ``"qknorm"``
  with its first layer a sliding window of :data:`LOCAL_WINDOW` keys (gpt-oss's 1:1 pattern); all
  trained for :data:`SHORT_TRAINING`, chapter 12's;
- ``"plain"``: the control, chapter 12's model trained exactly as chapter 12 trains it, on
  windows without a start token;
- ``"induction"``: chapter 9's attention-only model on chapter 9's task, trained as chapter 9
  trains it (without its checkpoints).

:func:`train_all` trains them in two processes; :func:`chapter_results` measures;
:func:`check_chapter_claims` asserts what chapter 14 says. The chapter calls them on seed 0,
``tests/test_sinks_compare.py`` and ``benchmarks/sinks_streaming.py`` on seeds 1 and 2.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import gpt
from ..modern import ModernGPT
from ..modern import compare as modern_compare
from ..reuse import reusable
from . import attention_weights, first_position_share, uniform_share, value_norms
from .streaming import position_losses

__all__ = [
    "START",
    "VOCAB",
    "CONTEXT",
    "CAP",
    "LOCAL_WINDOW",
    "LONG_TRAINING",
    "SHORT_TRAINING",
    "MODELS",
    "LONG",
    "STREAM_WINDOW",
    "STREAM_SINKS",
    "STREAM_LENGTH",
    "STREAM_TEXTS",
    "FROM_QUERY",
    "SHARE_MODELS",
    "GROUPS",
    "build",
    "start_batches",
    "start_windows",
    "start_validation_loss",
    "stream_texts",
    "Run",
    "train",
    "train_group",
    "start_training",
    "train_all",
    "ChapterResults",
    "chapter_results",
    "past",
    "SINK_RATIO",
    "PLAIN_RATIO",
    "INDUCTION_RATIO",
    "INDUCTION_VALUES",
    "SINK_VALUE",
    "SINK_LOGIT",
    "STREAM_SAME",
    "WINDOW_COST",
    "FULL_COST",
    "TEXT_COST",
    "LOGIT_GROWTH",
    "QK_FRACTION",
    "CAP_KEEPS",
    "LOCAL_GAIN",
    "induction_tokens",
    "check_induction_sink",
    "check_chapter_claims",
]

#: The start token's id — chapter 8's characters are ``0 … 95``; this is the 97th id.
START = gpt.CHAPTER_CONFIG.vocab_size
#: The models' vocabulary — chapter 8's characters and :data:`START`.
VOCAB = START + 1
#: The training windows' length, chapter 8's context — :data:`START` and 47 characters.
CONTEXT = gpt.CHAPTER_CONFIG.context
#: The soft cap of ``"softcap"`` (Gemma 2 caps at 50 with heads of 256 and scores scaled by
#: ``1/16``; ours are 16 wide, and 10 is where chapter 12's Llama-style logits start to leave).
CAP = 10.0
#: How many keys (itself included) the sliding layer of ``"local"`` sees.
LOCAL_WINDOW = 8
#: ``"modern"`` and ``"sink"``: 500 batches of 16 windows (chapter 12 trains 250).
LONG_TRAINING: dict[str, Any] = {"steps": 500, "batch_size": 16, "lr": 6e-3}
#: The other models — chapter 12's :data:`~course_attention.modern.compare.COMPARE_TRAINING`.
SHORT_TRAINING: dict[str, Any] = dict(modern_compare.COMPARE_TRAINING)
#: The chapter's models, in the order :func:`train_all` reports them.
MODELS: tuple[str, ...] = ("modern", "sink", "gpt2", "qknorm", "llama", "softcap", "local",
                           "plain", "induction")
#: The models trained for :data:`LONG_TRAINING`.
LONG = ("modern", "sink")
#: Streaming — a window of 16 keys, 4 sinks (StreamingLLM's), texts of 256 ids (a start token
#: and 255 characters, five times the trained context), 16 texts spread over the validation text.
STREAM_WINDOW, STREAM_SINKS, STREAM_LENGTH, STREAM_TEXTS = 16, 4, 256, 16
#: :func:`~course_attention.sinks.first_position_share` counts queries from this position on.
FROM_QUERY = 8
#: The models whose shares :func:`chapter_results` measures.
SHARE_MODELS = ("gpt2", "qknorm", "modern", "sink", "plain", "induction")


def build(name: str, seed: int = 0) -> torch.nn.Module:
    """A fresh model of :data:`MODELS` (``torch.manual_seed(seed)`` first). Introduced in
    chapter 14."""
    from .. import induction

    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {name!r}")
    torch.manual_seed(seed)
    if name == "induction":
        return induction.AttentionOnlyTransformer(induction.RepeatConfig())
    if name == "gpt2":
        return gpt.GPT(dataclasses.replace(gpt.CHAPTER_CONFIG, vocab_size=VOCAB))
    if name == "plain":
        return ModernGPT(modern_compare.MODERN_CONFIG)
    base = modern_compare.LLAMA_CONFIG if name in ("llama", "softcap") else \
        modern_compare.MODERN_CONFIG
    extra: dict[str, Any] = {"vocab_size": VOCAB}
    if name == "sink":
        extra["sinks"] = True
    elif name == "softcap":
        extra["softcap"] = CAP
    elif name == "local":
        extra.update(sliding_window=LOCAL_WINDOW,
                     layer_types=("sliding_attention", "full_attention"))
    return ModernGPT(dataclasses.replace(base, **extra))


def start_batches(ids: np.ndarray, batch_size: int) -> Callable[[torch.Generator], torch.Tensor]:
    """Chapter 8's batch sampler with a start token: ``(batch_size, CONTEXT + 1)`` rows of
    :data:`START` and ``CONTEXT`` characters from random offsets of ``ids`` ``(n,)``; the model
    reads the first ``CONTEXT`` ids and is scored on the last ``CONTEXT`` (chapter 14)."""
    draw = gpt.window_batches(ids, CONTEXT - 1, batch_size)

    def with_start(gen: torch.Generator) -> torch.Tensor:
        rows = draw(gen)  # (batch_size, CONTEXT)
        return torch.cat((torch.full((rows.shape[0], 1), START), rows), dim=1)

    return with_start


def start_windows(ids: np.ndarray, length: int, n: int) -> torch.Tensor:
    """``(n, length)``: :data:`START` and the ``length − 1`` characters at ``n`` offsets spread
    evenly over ``ids`` ``(m,)`` (chapter 14: the probe batch and the streaming texts)."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or n < 1 or length < 2 or len(ids) < n * (length - 1):
        raise ValueError(f"need ids (m,) with m ≥ n · (length − 1) = {n} · {length - 1}; got "
                         f"{ids.shape}")
    stride = len(ids) // n
    rows = np.stack([ids[i * stride: i * stride + length - 1] for i in range(n)])
    rows = torch.from_numpy(np.ascontiguousarray(rows, dtype=np.int64))
    return torch.cat((torch.full((n, 1), START), rows), dim=1)


def stream_texts() -> torch.Tensor:
    """The streaming texts ``(STREAM_TEXTS, STREAM_LENGTH)`` from the validation text."""
    from .. import corpus

    return start_windows(corpus.load().valid, STREAM_LENGTH, STREAM_TEXTS)


@torch.no_grad()
def start_validation_loss(model: torch.nn.Module, ids: np.ndarray) -> float:
    """Nats per character on ``ids`` ``(m,)``: consecutive windows of ``CONTEXT`` characters,
    each read after :data:`START`, every character scored once (chapter 14)."""
    data = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
    n = len(data) // CONTEXT
    if n < 1:
        raise ValueError(f"need at least {CONTEXT} ids; got {len(data)}")
    rows = data[: n * CONTEXT].view(n, CONTEXT)
    rows = torch.cat((torch.full((n, 1), START), rows), dim=1)  # (n, CONTEXT + 1)
    model.eval()
    total = sum(float(gpt.next_token_loss(model, chunk)) * chunk.shape[0]
                for chunk in rows.split(256))
    return total / n


@dataclass(frozen=True)
class Run:
    """One trained model of :func:`train` (chapter 14).

    ``losses`` ``(steps,)`` per batch; ``valid`` the validation loss (nats per character; for
    ``"induction"`` the loss on chapter 9's repeated tokens); ``checkpoints`` ``(k,)`` and
    ``max_logit`` ``(k,)``: the largest attention logit *before* any cap at those steps;
    ``seconds`` the training's wall time; ``model`` the trained model.
    """

    name: str
    seed: int
    losses: np.ndarray
    valid: float
    checkpoints: np.ndarray
    max_logit: np.ndarray
    seconds: float
    model: torch.nn.Module


@reusable
def train(name: str, seed: int = 0) -> Run:
    """Train model ``name`` of :data:`MODELS` from ``seed`` (chapter 14) on one torch thread.

    Chapter 12's loop and loss (:func:`~course_attention.training.fit`, Adam, warm-up of 30
    steps, cosine schedule) on :func:`start_batches` of the training text, for
    :data:`LONG_TRAINING` or :data:`SHORT_TRAINING`; every 10 steps the largest attention logit
    (:func:`~course_attention.modern.compare.max_attention_logit`) of a fixed probe batch.
    ``"induction"``: :func:`~course_attention.induction.train_induction` with chapter 9's
    defaults, recording only its end.
    """
    from .. import corpus, induction
    from ..training import fit, torch_threads

    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {name!r}")
    start = time.perf_counter()
    if name == "induction":
        run = induction.train_induction(seed=seed, every=1000, progress=False, eval_size=32)
        return Run(name, seed, run.losses, float(run.repeated_loss[-1]), np.array([]),
                   np.array([]), time.perf_counter() - start, run.model)
    if name == "plain":
        model = build(name, seed)
        log, valid = modern_compare.train_on_corpus(model, seed, **SHORT_TRAINING)
        return Run(name, seed, log.losses, valid, np.array([]), np.array([]),
                   time.perf_counter() - start, model)
    text = corpus.load()
    recipe = LONG_TRAINING if name in LONG else SHORT_TRAINING
    model = build(name, seed)
    probe = start_windows(text.valid, CONTEXT, modern_compare.PROBE_WINDOWS)
    checkpoints: list[int] = []
    logits: list[float] = []

    def record(step: int, loss: float = 0.0) -> None:
        if step % modern_compare.CHECK_EVERY == 0 or step == recipe["steps"]:
            checkpoints.append(step)
            logits.append(modern_compare.max_attention_logit(model, probe))

    with torch_threads(1):
        record(0)
    draw = start_batches(text.train, recipe["batch_size"])
    log = fit(model, draw, gpt.next_token_loss, recipe["steps"], recipe["lr"], 30, 0.0, seed,
              False, 1, record)
    with torch_threads(1):
        valid = start_validation_loss(model, text.valid)
    return Run(name, seed, log.losses, valid, np.array(checkpoints), np.array(logits),
               time.perf_counter() - start, model)


def train_group(names: tuple[str, ...], seed: int = 0) -> dict[str, Run]:
    """``{name: train(name, seed)}`` for the models ``names``, one after the other, here
    (chapter 14 trains :data:`GROUPS`' second group this way, in two cells)."""
    from ..training import train_each

    return train_each(train, names, seed)


#: How :func:`train_all` splits the models between its two processes (about 40 s each).
GROUPS = (("induction", "gpt2", "llama", "plain"),
          ("modern", "sink", "qknorm", "softcap", "local"))


def start_training(seed: int = 0, names: tuple[str, ...] = MODELS) -> Any:
    """Start training :data:`GROUPS`' first group (those of ``names``) in a second process;
    return its ``Future`` for :func:`train_all` (chapter 14 starts it first and reads on)."""
    from ..training import start_group

    return start_group(train, GROUPS[0], names, MODELS, seed)


def train_all(seed: int = 0, names: tuple[str, ...] = MODELS, pending: Any = None
              ) -> dict[str, Run]:
    """The models ``names`` of :data:`MODELS`, trained from ``seed`` (chapter 14):
    :data:`GROUPS`' first group in a second process (``pending``, from :func:`start_training`
    with the same seed and names, or started now), the second group here."""
    from ..training import join_groups

    return join_groups(train, GROUPS, names, MODELS, seed, pending)


@dataclass(frozen=True)
class ChapterResults:
    """What chapter 14 measures of one seed's :func:`train_all` (``runs``).

    ``shares[name]`` ``(layers, heads)``: :func:`~course_attention.sinks.first_position_share`
    from query :data:`FROM_QUERY` on the probe batch (for ``"induction"``: chapter 9's
    evaluation batch); ``uniform`` the share evenly spread weights would give;
    ``value_ratio[name]`` ``(layers, heads)``: the value vectors' length at position 0 over
    their mean length elsewhere; ``streaming[name][method]`` ``(STREAM_LENGTH − 1,)``:
    :func:`~course_attention.sinks.streaming.position_losses` of ``"modern"`` and ``"sink"``
    for ``"full"`` (every key, positions up to 255), ``"window"``, ``"sinks"``, ``"recompute"``
    (of the tokens the cache with sinks keeps), ``"fresh"`` (the window alone, recomputed:
    chapter 8's rule) and ``"text"`` (the cache with sinks, its keys numbered by their place in
    the text: the mistake).
    """

    runs: dict[str, Run]
    shares: dict[str, np.ndarray]
    uniform: float
    value_ratio: dict[str, np.ndarray]
    streaming: dict[str, dict[str, np.ndarray]]


def chapter_results(runs: dict[str, Run]) -> ChapterResults:
    """Measure chapter 14's trained models (one seed's :func:`train_all`)."""
    from .. import corpus

    if set(runs) - set(MODELS) or set(MODELS) - set(runs) - {"induction"} or len(
            {r.seed for r in runs.values()}) != 1:
        raise ValueError(f"need one run of each of {MODELS} (``induction`` may be left out), "
                         f"of one seed; got { {k: r.seed for k, r in runs.items()} }")
    probe = start_windows(corpus.load().valid, CONTEXT, modern_compare.PROBE_WINDOWS)
    seed = next(iter(runs.values())).seed
    shares, ratios = {}, {}
    plain_probe = modern_compare.probe_batch(corpus.load().valid)
    for name in [n for n in SHARE_MODELS if n in runs]:
        model = runs[name].model
        tokens = plain_probe if name == "plain" else probe
        if name == "induction":
            tokens = induction_tokens(seed)
        shares[name] = first_position_share(attention_weights(model, tokens), FROM_QUERY)
        norms = value_norms(model, tokens).double().numpy()
        ratios[name] = norms[:, :, 0] / norms[:, :, 1:].mean(-1)
    texts = stream_texts()
    streaming = {}
    for name in LONG:
        model = runs[name].model
        streaming[name] = {
            "full": position_losses(model, texts, "window", STREAM_LENGTH, 0),
            **{m: position_losses(model, texts, m, STREAM_WINDOW, STREAM_SINKS)
               for m in ("window", "sinks", "recompute")},
            "fresh": position_losses(model, texts, "recompute", STREAM_WINDOW, 0),
            "text": _text_positions(model, texts)}
    return ChapterResults(runs, shares, uniform_share(CONTEXT, FROM_QUERY), ratios, streaming)


def _text_positions(model: ModernGPT, texts: torch.Tensor) -> np.ndarray:
    from .streaming import streaming_logits

    logits = streaming_logits(model, texts, STREAM_WINDOW, STREAM_SINKS, positions="text")
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2).double(),
                                             texts[:, 1:], reduction="none")
    return loss.mean(0).numpy()


def past(losses: np.ndarray) -> float:
    """The mean of :func:`~course_attention.sinks.streaming.position_losses` ``(n,)`` past the
    trained context (positions ``CONTEXT …``): where no model has been trained to read."""
    return float(np.mean(np.asarray(losses)[CONTEXT:]))


#: Chapter 14's margins (on seeds 0–2 the measurements cleared them by the factors noted). With
#: a start token, each model's largest layer-0 share of weight on position 0 is at least this
#: many times the uniform share (2.06 to 10 times) …
SINK_RATIO = 1.5
#: … without one (``"plain"``), every head's share is below this many times uniform …
PLAIN_RATIO = 1.5
#: … chapter 9's layer-1 heads — the largest at least this many times uniform (1.3 to 1.6), and
#: every layer-1 value at position 0 shorter than this fraction of the mean (0.63 to 0.77).
INDUCTION_RATIO, INDUCTION_VALUES = 1.2, 0.85
#: ``"modern"``: its layer-0 sink head's values at position 0 are at least this fraction of the
#: mean length elsewhere (0.8 to 1.4), its layer-1 values shorter than :data:`INDUCTION_VALUES`.
SINK_VALUE = 0.7
#: ``"sink"``'s learned sink logits stay within this distance of 0 (at most 0.16 to 0.42).
SINK_LOGIT = 1.0
#: Streaming, past the trained context — the rolling cache with sinks within this many nats of
#: recomputing its tokens (0.000 to 0.002) …
STREAM_SAME = 0.01
#: … the window alone at least this much worse (0.08 to 0.36) …
WINDOW_COST = 0.05
#: … and every key at once (positions the model never saw) at least this much worse (0.6 to 1).
FULL_COST = 0.3
#: Numbering the kept keys by the text instead of the cache costs at least this much.
TEXT_COST = 0.02
#: Without QK-norm the largest logit grows at least this many times from its start (soft-capped
#: or not: 77 to 200 times), and QK-norm's ends below this fraction of the smaller (0.3 to 0.5).
LOGIT_GROWTH, QK_FRACTION = 50.0, 0.6
#: The capped model's raw logit ends at least this fraction of the uncapped one's (0.87 to 1.3):
#: the cap bends what the softmax sees, not the growth.
CAP_KEEPS = 0.5
#: The local/global stack ends at least this far below the all-global one (0.05 to 0.13 nats).
LOCAL_GAIN = 0.02


def induction_tokens(seed: int) -> torch.Tensor:
    """Chapter 9's evaluation batch of ``seed`` (32 sequences, ``(32, 48)``), on which the
    chapter measures chapter 9's model (chapter 14)."""
    from .. import induction

    gen = torch.Generator().manual_seed(10_000 + seed)
    return induction.repeat_batch(induction.RepeatConfig(), 32, gen).tokens


def _induction_checks(share: np.ndarray, ratio: np.ndarray, uniform: float) -> dict[str, bool]:
    return {
        f"chapter 9's layer 1 leans on position 0 (≥ {INDUCTION_RATIO} × uniform)": bool(
            share[1].max() >= INDUCTION_RATIO * uniform),
        f"chapter 9's layer-1 values at position 0 are short (< {INDUCTION_VALUES})": bool(
            ratio[1].max() < INDUCTION_VALUES),
    }


def check_induction_sink(model: torch.nn.Module, seed: int) -> None:
    """Assert chapter 14's claims about chapter 9's trained model of ``seed`` (its first-position
    shares and value lengths on :func:`induction_tokens`). ``tests/test_induction.py`` calls it
    on the models it trains for seeds 1 and 2; the chapter on seed 0."""
    tokens = induction_tokens(seed)
    share = first_position_share(attention_weights(model, tokens), FROM_QUERY)
    norms = value_norms(model, tokens).double().numpy()
    checks = _induction_checks(share, norms[:, :, 0] / norms[:, :, 1:].mean(-1),
                               uniform_share(tokens.shape[1], FROM_QUERY))
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise AssertionError(f"chapter 14's claims about chapter 9's model fail: {failed} "
                             f"(shares {np.round(share, 3).tolist()})")


def check_chapter_claims(results: ChapterResults) -> None:
    """Assert every claim chapter 14 makes about its trained models (one seed's results).

    Introduced in chapter 14; the chapter calls it for seed 0, ``tests/test_sinks_compare.py``
    for seeds 1 and 2 (``"induction"``'s claims there ride on chapter 9's own training).
    Raises ``AssertionError`` naming each claim that fails. The claims:

    - with a start token, every model has a layer-0 head whose share of weight on position 0 is
      at least :data:`SINK_RATIO` times the uniform share (the learned sink logit included: it
      does not remove the first-token sink, and its logits stay within ±:data:`SINK_LOGIT`);
      without one (``"plain"``) no head reaches
      :data:`PLAIN_RATIO` times;
    - ``"modern"``'s second layer avoids position 0: every head below a quarter of uniform; its
      layer-0 sink head reads values at position 0 at least :data:`SINK_VALUE` of the mean
      length, its layer-1 values there are shorter than :data:`INDUCTION_VALUES` of it;
    - chapter 9's model: a layer-1 head at least :data:`INDUCTION_RATIO` times uniform, and every
      layer-1 value at position 0 shorter than :data:`INDUCTION_VALUES` of the mean elsewhere;
    - past the trained context, for both rotary models: sinks within :data:`STREAM_SAME` of
      recomputation; the window alone, and the window recomputed alone, at least
      :data:`WINDOW_COST` worse; every key at once at least :data:`FULL_COST` worse; the cache
      numbered by the text at least :data:`TEXT_COST` worse;
    - the largest raw logit grows at least :data:`LOGIT_GROWTH`-fold without QK-norm, capped or
      not; the capped model's raw logit ends at least :data:`CAP_KEEPS` times the uncapped one's;
      QK-norm's ends below :data:`QK_FRACTION` of both;
    - the local/global stack ends at least :data:`LOCAL_GAIN` nats below the all-global one.

    Not claimed: that the learned sink logit makes the model depend less on the first tokens
    (on seed 2 the window alone costs it more than it costs ``"modern"``).
    """
    runs, u = results.runs, results.uniform
    sh = results.shares
    checks: dict[str, bool] = {
        f"a start token gives a layer-0 sink (≥ {SINK_RATIO} × uniform)": all(
            sh[n][0].max() >= SINK_RATIO * u for n in ("gpt2", "qknorm", "modern", "sink")),
        f"no start token, no sink (< {PLAIN_RATIO} × uniform)": bool(
            sh["plain"].max() < PLAIN_RATIO * u),
        "modern's layer 1 avoids position 0 (< uniform / 4)": bool(sh["modern"][1].max() < u / 4),
        f"modern's sink head reads values of ordinary length (≥ {SINK_VALUE})": bool(
            results.value_ratio["modern"][0, int(np.argmax(sh["modern"][0]))] >= SINK_VALUE),
        f"modern's layer-1 values at position 0 are short (< {INDUCTION_VALUES})": bool(
            results.value_ratio["modern"][1].max() < INDUCTION_VALUES),
    }
    checks[f"the learned sink logits stay within ±{SINK_LOGIT}"] = all(
        float(b.attn.sinks.detach().abs().max()) < SINK_LOGIT for b in runs["sink"].model.blocks)
    if "induction" in sh:
        checks.update(_induction_checks(sh["induction"], results.value_ratio["induction"], u))
    for name, curves in results.streaming.items():
        p = {k: past(v) for k, v in curves.items()}
        checks[f"{name}: sinks ≈ recomputation (within {STREAM_SAME})"] = abs(
            p["sinks"] - p["recompute"]) < STREAM_SAME
        checks[f"{name}: the window alone costs ≥ {WINDOW_COST}"] = min(
            p["window"], p["fresh"]) >= p["sinks"] + WINDOW_COST
        checks[f"{name}: every key at once costs ≥ {FULL_COST}"] = p["full"] >= p["sinks"] + \
            FULL_COST
        checks[f"{name}: positions by the text cost ≥ {TEXT_COST}"] = p["text"] >= p["sinks"] + \
            TEXT_COST
    ll, sc, qk = runs["llama"].max_logit, runs["softcap"].max_logit, runs["qknorm"].max_logit
    checks.update({
        f"no QK-norm: the logit grows ≥ {LOGIT_GROWTH}-fold, capped or not": bool(
            ll[-1] >= LOGIT_GROWTH * ll[0] and sc[-1] >= LOGIT_GROWTH * sc[0]),
        f"the cap does not slow the raw growth (≥ {CAP_KEEPS} × uncapped)": bool(
            sc[-1] >= CAP_KEEPS * ll[-1]),
        f"QK-norm's logit ends below {QK_FRACTION} × the others'": bool(
            qk[-1] < QK_FRACTION * min(ll[-1], sc[-1])),
        f"local/global ends ≥ {LOCAL_GAIN} below all-global": runs["local"].valid
        <= runs["qknorm"].valid - LOCAL_GAIN,
    })
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        summary = {
            "shares": {k: np.round(v.max(axis=1), 3).tolist() for k, v in sh.items()},
            "uniform": round(u, 3),
            "streaming": {n: {k: round(past(v), 3) for k, v in c.items()}
                          for n, c in results.streaming.items()},
            "logits": {k: (round(float(runs[k].max_logit[0]), 2),
                           round(float(runs[k].max_logit[-1]), 2))
                       for k in ("llama", "softcap", "qknorm")},
            "valid": {k: round(r.valid, 3) for k, r in runs.items()},
        }
        raise AssertionError(f"chapter 14's claims fail: {failed} ({summary})")
