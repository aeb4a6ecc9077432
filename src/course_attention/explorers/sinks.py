"""Chapter 14's live explorer of attention sinks and streaming (kind ``sinks``, ``sinks.js``).

Introduced in chapter 14. Like chapter 9's recorded frames, every number is computed in Python
from the chapter's two trained rotary models (``sinks.compare``'s ``"modern"``, no sink logit, and
``"sink"``, gpt-oss's learned sink logit per head) and shipped in the spec (:func:`explorer_data`);
the page only picks the chosen model's, window's and sinks' numbers and draws them. Three controls:
the model, the rolling cache's window (8 … 40 tokens) and the number of first tokens it keeps as
sinks (0, 1, 2, 4, 8). The figure (:func:`course_attention.viz.sinks_explorer_figure`):

- top, the chosen model's sink map: each head's mean weight on position 0, by query position,
  over the probe batch of :func:`~course_attention.sinks.compare.start_windows`;
- bottom, the next-token loss by position on texts over three times the trained context
  (:func:`explorer_texts`), in bins of :data:`BIN` positions: the rolling cache
  (:func:`~course_attention.sinks.streaming.position_losses`, ``"window"`` without sinks,
  ``"sinks"`` with), the recomputation of the same kept tokens (``"recompute"``) and full
  attention; the title gives each curve's mean loss past the trained context.

``tests/test_live_sinks.py`` proves every plotted number equal to
:func:`course_attention.viz.sinks_explorer_numbers` of the same data, and :func:`explorer_data`
equal to the package's ``position_losses`` and ``attention_weights``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

from .. import viz
from ..i18n import N_, _
from .core import Explorer, number_options, register, seeded

__all__ = ["MODELS", "MODEL_LABELS", "WINDOWS", "SINKS", "BIN", "TEXTS", "LENGTH", "DIGITS",
           "TITLE", "READOUT", "explorer_texts", "recompute_losses", "explorer_data",
           "figure_title", "default_data", "sinks_live", "sinks_explorer", "ONE_TOKEN_GAIN",
           "NARROW_EXTRA", "FULL_WORSE", "CACHE_SAME", "check_try_it"]

#: The chapter's two rotary models (``sinks.compare.MODELS``' names), in the menu's order.
MODELS = ("modern", "sink")
#: Their names in the menu.
MODEL_LABELS = {"modern": N_("without a sink per head (modern)"),
                "sink": N_("with a sink per head (gpt-oss)")}
#: The rolling cache's windows (the slider) and the first tokens it keeps (the menu):
#: ``max(WINDOWS) + max(SINKS)`` is the trained context, the longest input a recomputation reads.
WINDOWS = (8, 16, 24, 32, 40)
SINKS = (0, 1, 2, 4, 8)
#: Positions averaged into one point of a loss curve.
BIN = 16
#: The loss curves average every fourth of ``sinks.compare.stream_texts()``, the first
#: ``LENGTH`` ids of each (more than three times the trained context): the full grid of 2 models ×
#: 5 windows × 5 sinks, with a recomputation each, then takes about 3 s on one core.
TEXTS, LENGTH = 4, 160
#: Decimals the spec keeps (a page of 10⁴ numbers; no visible change).
DIGITS = 4
#: Rows of one recomputation batch (a batch of thousands of rows is 3 times slower a token).
CHUNK = 64
#: The figure's title, and the readout under it (``sinks.js`` fills the same templates).
TITLE = N_("{model}: window {window}, {sinks} sinks")
READOUT = N_("<sup>loss past {context}: cache {cache:.2f}, recompute {recompute:.2f}, "
             "full {full:.2f}</sup>")


def explorer_texts() -> torch.Tensor:
    """The texts of the loss curves ``(TEXTS, LENGTH)``: the first ``LENGTH`` ids (a start token
    and the validation text's characters) of every fourth of ``sinks.compare.stream_texts()``."""
    from ..sinks import compare as sc

    texts = sc.stream_texts()
    return texts[:: len(texts) // TEXTS][:TEXTS, :LENGTH]


@torch.no_grad()
def recompute_losses(model: torch.nn.Module, tokens: torch.Tensor, n_sinks: int,
                     windows: tuple[int, ...] = WINDOWS) -> dict[int, np.ndarray]:
    """``position_losses(model, tokens, "recompute", w, n_sinks)`` ``(seq − 1,)`` for every
    window ``w`` of ``windows``, in one pass (chapter 14's explorer).

    The model reads, for every start ``s``, the first ``n_sinks`` tokens then
    ``tokens[s : s + max(windows)]`` (past the text's end: start tokens, which no prediction
    reads): a causal model's output at row position ``n_sinks + w − 1`` is then its recomputation
    of position ``s + w − 1`` from the kept tokens of window ``w`` (``kept_positions``), for every
    ``w`` at once. Before anything is evicted (``t < n_sinks + w``) the kept tokens are the whole
    prefix, which the first row holds. Equal to ``position_losses`` up to float32 rounding
    (``tests/test_live_sinks.py``); about ``len(windows)`` times less work.
    """
    from ..sinks import compare as sc
    from ..sinks.streaming import _check, _check_model

    for w in windows:
        _check(w, n_sinks)
    _check_model(model, tokens)
    b, length = tokens.shape
    wide, narrow = max(windows), min(windows)
    if n_sinks + wide > model.config.context:
        raise ValueError(f"n_sinks + max(windows) = {n_sinks + wide} exceeds the model's "
                         f"context {model.config.context}")
    if length <= n_sinks + wide:
        raise ValueError(f"tokens {tuple(tokens.shape)} must be longer than n_sinks + "
                         f"max(windows) = {n_sinks + wide}")
    padded = torch.cat((tokens, torch.full((b, wide), sc.START, dtype=tokens.dtype)), dim=1)
    starts = torch.arange(n_sinks, length - narrow + 1)
    rows = padded.unfold(1, wide, 1)[:, starts]  # (batch, starts, wide)
    if n_sinks:
        rows = torch.cat((tokens[:, None, :n_sinks].expand(b, len(starts), n_sinks), rows), 2)
    flat = rows.reshape(-1, n_sinks + wide)
    logits = torch.cat([model(chunk) for chunk in flat.split(CHUNK)])
    logp = torch.log_softmax(logits.double(), -1).view(b, len(starts), n_sinks + wide, -1)
    out = {}
    for w in windows:
        size = n_sinks + w
        early = torch.arange(size)  # nothing evicted: the first row, the prefix
        late = torch.arange(size, length - 1)  # row t − w + 1 − n_sinks, at its position size − 1
        lp = torch.cat((logp[:, 0, early], logp[:, late - w + 1 - n_sinks, size - 1]), dim=1)
        target = tokens[:, 1:, None]
        out[w] = (-lp.gather(-1, target)[..., 0]).mean(0).numpy()
    return out


def _bins(losses: np.ndarray) -> np.ndarray:
    """Means of :data:`BIN` positions at a time (the last bin may hold fewer)."""
    return np.array([losses[i: i + BIN].mean() for i in range(0, len(losses), BIN)])


def explorer_data(models: dict[str, torch.nn.Module], texts: torch.Tensor | None = None
                  ) -> dict[str, Any]:
    """Every number of the sinks explorer, for ``models`` (``{"modern": …, "sink": …}``, the
    chapter's trained :class:`~course_attention.modern.ModernGPT` s) and ``texts``
    ``(batch, length)`` (default :func:`explorer_texts`). Introduced in chapter 14.

    Returns (floats rounded to :data:`DIGITS` decimals, as the page gets them):

    - ``models``, ``windows``, ``sinks``: the controls' values; ``context``: the trained context
      (``sinks.compare.CONTEXT``); ``length``: the texts' length; ``bin``: :data:`BIN`;
    - ``layers``, ``heads``; ``queries`` ``(context − 1,)``: positions 1 … context − 1;
      ``uniform`` of the same shape: ``1/(t + 1)``, the weight on position 0 of a query ``t``
      that spreads its weight evenly;
    - ``share[model]`` ``(layers · heads, context − 1)``: row ``layer · heads + head``, the mean
      over the probe batch of the weight query ``t`` puts on position 0
      (:func:`~course_attention.sinks.attention_weights`);
    - ``x`` ``(bins,)``: each bin's mean position; ``full[model]`` ``(bins,)``: the loss of full
      attention; ``cache[model]`` and ``recompute[model]`` ``(windows, sinks, bins)``: the
      rolling cache's and the recomputation's (``position_losses``), binned;
    - ``past[model]``: ``{"full": float, "cache": (windows, sinks), "recompute": (windows,
      sinks)}``, the mean loss over positions ``context … length − 2`` (not binned);
    - ``loss_range``: ``[0, top]``, the loss axis, the same for every state.
    """
    from .. import corpus
    from ..modern import ModernGPT
    from ..modern import compare as modern_compare
    from ..sinks import compare as sc
    from ..training import torch_threads

    if not isinstance(models, dict) or set(models) != set(MODELS):
        raise ValueError(f"models must be a dict with the keys {MODELS}; got "
                         f"{sorted(models) if isinstance(models, dict) else type(models).__name__}")
    for name, model in models.items():
        if not isinstance(model, ModernGPT) or model.config.vocab_size != sc.VOCAB:
            raise ValueError(f"models[{name!r}] must be a ModernGPT of vocabulary {sc.VOCAB} "
                             f"(sinks.compare.build); got {type(model).__name__}")
    shapes = {(m.config.n_layers, m.config.n_heads) for m in models.values()}
    if len(shapes) != 1:
        raise ValueError(f"the models must have the same layers and heads; got {shapes}")
    texts = explorer_texts() if texts is None else texts
    context = sc.CONTEXT
    if not isinstance(texts, torch.Tensor) or texts.dim() != 2 or texts.shape[1] <= context:
        raise ValueError(f"texts must be (batch, length) with length > {context}; got "
                         f"{getattr(texts, 'shape', type(texts).__name__)}")
    (layers, heads), = shapes
    probe = sc.start_windows(corpus.load().valid, context, modern_compare.PROBE_WINDOWS)
    queries = np.arange(1, context)
    data: dict[str, Any] = {
        "models": list(MODELS), "windows": list(WINDOWS), "sinks": list(SINKS),
        "context": context, "length": int(texts.shape[1]), "bin": BIN, "layers": layers,
        "heads": heads, "queries": queries, "uniform": 1.0 / (queries + 1),
        "share": {}, "full": {}, "cache": {}, "recompute": {}, "past": {},
    }
    with torch_threads(1):  # faster on shared cores, and the same bits on any machine
        for name in MODELS:
            _measure(data, name, models[name].eval(), probe, texts, layers, heads)
    data["x"] = _bins(np.arange(texts.shape[1] - 1, dtype=float))
    top = max(float(np.max(data[k][n])) for k in ("full", "cache", "recompute") for n in MODELS)
    data["loss_range"] = [0.0, float(np.ceil(top * 1.05 * 2) / 2)]
    return _round(data)


def _measure(data: dict[str, Any], name: str, model: torch.nn.Module, probe: torch.Tensor,
             texts: torch.Tensor, layers: int, heads: int) -> None:
    """Fill ``data``'s entries of model ``name`` (see :func:`explorer_data`)."""
    from ..sinks import attention_weights
    from ..sinks.streaming import position_losses

    context = data["context"]
    weights = attention_weights(model, probe)[:, :, :, 1:, 0].double().mean(1)
    data["share"][name] = weights.reshape(layers * heads, context - 1).numpy()
    full = position_losses(model, texts, "window", texts.shape[1], 0)
    cached = np.stack([np.stack([
        position_losses(model, texts, "sinks" if s else "window", w, s) for s in SINKS])
        for w in WINDOWS])  # (windows, sinks, length − 1)
    again = {s: recompute_losses(model, texts, s) for s in SINKS}
    redone = np.stack([np.stack([again[s][w] for s in SINKS]) for w in WINDOWS])
    data["full"][name] = _bins(full)
    data["cache"][name] = np.apply_along_axis(_bins, -1, cached)
    data["recompute"][name] = np.apply_along_axis(_bins, -1, redone)
    data["past"][name] = {"full": full[context:].mean(), "cache": cached[..., context:]
                          .mean(-1), "recompute": redone[..., context:].mean(-1)}


def _round(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, (np.ndarray, np.floating, float)) and np.asarray(value).dtype.kind == "f":
        rounded = np.round(np.asarray(value, dtype=float), DIGITS)
        return float(rounded) if rounded.ndim == 0 else rounded
    return value


def sinks_live(data: dict[str, Any]) -> dict[str, Any]:
    """The page's spec (kind ``sinks``): :func:`explorer_data`'s numbers and the words."""
    return {
        "kind": "sinks",
        "data": data,
        "text": {"title": TITLE, "readout": READOUT,
                 "bad_window": N_("Pick a window among {windows}."),
                 "bad_sinks": N_("Pick a number of sinks among {sinks}."),
                 "bad_model": N_("No model named {model}.")},
        "phone": viz.SINKS_PHONE,
    }


@cache
def default_data() -> dict[str, Any]:
    """:func:`explorer_data` of untrained models ``sinks.compare.build(name, 0)``: the
    explorer's default, computed once (tests and the explorer alone; the chapter passes its
    trained models)."""
    from ..sinks import compare as sc

    return explorer_data({name: seeded(lambda n=name: sc.build(n, 0), 0) for name in MODELS})


@register
def sinks_explorer(model: str = "sink", window: int = 16, sinks: int = 4,
                   models: dict[str, torch.nn.Module] | None = None,
                   data: dict[str, Any] | None = None) -> Explorer:
    """Where each head puts its weight, and a rolling cache's loss far past the context.

    Introduced in chapter 14. Controls: ``model`` (``"modern"``: no sink logit; ``"sink"``:
    gpt-oss's learned sink logits), ``window`` (8, 16, …, 40 keys the cache keeps) and ``sinks``
    (0, 1, 2, 4 or 8 first tokens it keeps as well). ``models``: the chapter's trained models,
    ``{name: run.model}`` (default: untrained ones, so that the explorer works alone); ``data``:
    their ``explorers.sinks.explorer_data``, if already computed. The figure is
    :func:`course_attention.viz.sinks_explorer_figure`.
    """
    import ipywidgets as w

    if model not in MODELS or window not in WINDOWS or sinks not in SINKS:
        raise ValueError(f"need model in {MODELS}, window in {WINDOWS} and sinks in {SINKS}; "
                         f"got {model!r}, {window!r}, {sinks!r}")
    if data is None:
        data = default_data() if models is None else explorer_data(models)
    controls = {
        "model": w.Dropdown(options=[(_(MODEL_LABELS[m]), m) for m in MODELS], value=model,
                            description=_("model")),
        "window": w.IntSlider(value=window, min=min(WINDOWS), max=max(WINDOWS),
                              step=WINDOWS[1] - WINDOWS[0], continuous_update=True,
                              description=_("window (last tokens kept)")),
        "sinks": w.Dropdown(options=number_options(list(SINKS)), value=sinks,
                            description=_("sinks kept (first tokens)")),
    }

    def make_figure(model: str, window: int, sinks: int) -> Any:
        return viz.sinks_explorer_figure(data, model, window, sinks,
                                         title=figure_title(data, model, window, sinks))

    return Explorer(controls, make_figure, sinks_live(data))


def figure_title(data: dict[str, Any], model: str, window: int, sinks: int) -> str:
    """The figure's title in English (the figure shows it in the reader's language): the state,
    and each curve's mean loss past the trained context."""
    past = viz.sinks_explorer_numbers(data, model, window, sinks)["past"]
    return (TITLE.format(model=MODEL_LABELS[model], window=window, sinks=sinks) + "<br>"
            + READOUT.format(context=data["context"], **past))


#: The Try it's margins (on seeds 0–2 the measurements cleared them as noted) — one first token
#: kept lowers the window-8 rolling cache's loss by more than this (0.10 to 0.47) …
ONE_TOKEN_GAIN = 0.05
#: … more at window 8 than at window 40, by more than this (0.07 to 0.27) …
NARROW_EXTRA = 0.03
#: … with sinks kept, full attention past the context is worse than the cache and the
#: recompute by more than this (0.39 to 0.93), and the cache within this of recomputing (≤ 0.008).
FULL_WORSE, CACHE_SAME = 0.2, 0.02


def check_try_it(data: dict[str, Any]) -> None:
    """Assert the answers to chapter 14's Try it on :func:`explorer_data` of trained models
    (the chapter calls it on seed 0, ``tests/test_sinks_compare.py`` on seeds 1 and 2): for both
    models, keeping one first token lowers the window-8 cache's loss past the context by more
    than :data:`ONE_TOKEN_GAIN`, by :data:`NARROW_EXTRA` more than at window 40; with sinks kept,
    full attention is the worst curve by :data:`FULL_WORSE` at every window and the cache within
    :data:`CACHE_SAME` of recomputing; some layer-0 head gives position 0 more than twice the
    even share (queries from 8 on), every layer-1 head less than it. Raises ``AssertionError``
    naming what fails."""
    from ..viz.sinks_explorer import sinks_explorer_numbers

    failed = []
    for name in MODELS:
        def past(window: int, sinks: int, name: str = name) -> dict[str, float]:
            return sinks_explorer_numbers(data, name, window, sinks)["past"]

        gap = {w: past(w, 0)["cache"] - past(w, 1)["cache"] for w in data["windows"]}
        if not gap[8] > ONE_TOKEN_GAIN:
            failed.append(f"{name}: one first token kept gains {gap[8]:.3f} at window 8")
        if not gap[8] - gap[40] > NARROW_EXTRA:
            failed.append(f"{name}: window 8 gains {gap[8]:.3f}, window 40 {gap[40]:.3f}")
        for w in data["windows"]:
            for s in (1, 2, 4, 8):
                p = past(w, s)
                if not p["full"] - max(p["cache"], p["recompute"]) > FULL_WORSE:
                    failed.append(f"{name}: full attention not the worst at {w}, {s}: {p}")
                if not abs(p["cache"] - p["recompute"]) < CACHE_SAME:
                    failed.append(f"{name}: the cache differs from recomputing at {w}, {s}: {p}")
        share = np.asarray(data["share"][name])
        ratio = share[:, 7:].mean(1) / np.mean(data["uniform"][7:])
        heads = data["heads"]
        if not (ratio[:heads].max() > 2 and ratio[heads:].max() < 1):
            failed.append(f"{name}: sink map ratios {np.round(ratio, 2).tolist()}")
    if failed:
        raise AssertionError(f"chapter 14's Try it fails: {failed}")
