"""Induction heads (chapter 9): repeat data, an attention-only model, head scores and ablation.

Introduced in chapter 9. The data are random token sequences in which one segment of random
length, at a random offset, appears twice; the second copy can be predicted only by finding the
previous occurrence of the current token and copying the token after it (an **induction head**,
Elhage et al. 2021; Olsson et al. 2022). The model is a 2-layer, attention-only Transformer built
from :class:`course_attention.modules.MultiHeadAttention`; it is trained with
:func:`course_attention.training.fit` (first on uneven copy distances, then on even ones),
recording checkpoints on a fixed evaluation batch. The tools that take it apart: head scores,
ablations, the loss by copy distance and by place, direct logit attribution and a key-only ablation
(K-composition). :mod:`course_attention.induction_claims` checks the chapter's claims.

Shapes: tokens ``(batch, seq)``; attention weights ``(layers, batch, heads, seq_q, seq_k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .modules import MultiHeadAttention, scaled_dot_product_attention
from .reuse import reusable

__all__ = [
    "RepeatConfig",
    "RepeatBatch",
    "repeat_batch",
    "AttentionOnlyTransformer",
    "repeat_losses",
    "seen_loss",
    "previous_token_score",
    "induction_score",
    "offset_profile",
    "head_ablation",
    "mean_head_outputs",
    "previous_token_probe",
    "InductionRun",
    "DISTANCES",
    "loss_by_distance",
    "loss_by_start",
    "logit_attribution",
    "key_ablation",
    "token_induction_score",
    "rise_step",
    "phase_change",
    "train_induction",
    "position_labels",
]


@dataclass(frozen=True)
class RepeatConfig:
    """The data and model of chapter 9 (the issue's measured setting by default).

    ``vocab`` token ids, sequences of ``seq_len``; the repeated segment has ``min_len`` to
    ``max_len`` tokens. ``fixed_offset`` puts the first copy at position 0 and the second right
    after it, with length ``max_len``: then position alone predicts the repeat.
    """

    vocab: int = 64
    seq_len: int = 48
    min_len: int = 12
    max_len: int = 24
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    fixed_offset: bool = False

    def __post_init__(self) -> None:
        if self.vocab < 2 or self.min_len < 2 or self.max_len < self.min_len:
            raise ValueError(
                f"need vocab ≥ 2 and 2 ≤ min_len ≤ max_len; got vocab={self.vocab}, "
                f"min_len={self.min_len}, max_len={self.max_len}"
            )
        if 2 * self.max_len > self.seq_len:
            raise ValueError(
                f"two copies of max_len={self.max_len} tokens do not fit in seq_len="
                f"{self.seq_len}: need 2 · max_len ≤ seq_len"
            )


@dataclass(frozen=True)
class RepeatBatch:
    """Sequences with one repeated segment: ``tokens`` ``(batch, seq)``; per row the first copy's
    start ``first`` ``(batch,)``, the second's ``second`` ``(batch,)`` and the length ``length``
    ``(batch,)`` (``second ≥ first + length``: the copies do not overlap)."""

    tokens: torch.Tensor
    first: torch.Tensor
    second: torch.Tensor
    length: torch.Tensor

    def repeated(self) -> torch.Tensor:
        """``(batch, seq)`` bool: positions in the second copy after its first token — the tokens
        an induction head can predict (the first token of the copy cannot be foreseen)."""
        idx = torch.arange(self.tokens.shape[1])
        return (idx > self.second[:, None]) & (idx < (self.second + self.length)[:, None])

    def induction_keys(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Where an induction head should look: ``(query, key)`` each ``(batch, seq)`` long int,
        with ``query = -1`` outside the second copy. A query in the second copy, at offset ``i``
        of the segment, holds the token at ``first + i``; the token *after* that previous
        occurrence is at ``key = first + i + 1``."""
        idx = torch.arange(self.tokens.shape[1]).expand_as(self.tokens)
        inside = (idx >= self.second[:, None]) & (idx < (self.second + self.length)[:, None])
        key = idx - self.second[:, None] + self.first[:, None] + 1
        return torch.where(inside, idx, -1), torch.where(inside, key, -1)


def repeat_batch(
    config: RepeatConfig,
    batch: int,
    gen: torch.Generator,
    distance: int | None = None,
    even: bool = False,
) -> RepeatBatch:
    """Draw ``batch`` random sequences, each with a segment that appears twice.

    Introduced in chapter 9. Tokens are uniform over ``config.vocab``. By default the segment's
    length is uniform in ``[min_len, max_len]``, the first copy starts uniformly in ``[0, seq −
    2 · len]`` and the second uniformly in ``[first + len, seq − len]``. So the **copy
    distance** ``second − first`` runs from ``min_len`` to ``seq − min_len``, but not evenly:
    middle distances are common, the extremes rare. With ``even=True`` the distance is drawn
    first, uniformly over that range, then the length (uniform in ``[min_len, min(max_len, d,
    seq − d)]``) and the first copy's start; ``distance=d`` fixes it at ``d`` for every row, to
    measure a model at one distance. Returns a :class:`RepeatBatch`, ``tokens`` ``(batch,
    seq_len)``. Only ``gen`` supplies randomness.
    """
    if batch < 1:
        raise ValueError(f"need batch ≥ 1; got {batch}")
    T, lo = config.seq_len, config.min_len
    if distance is not None and not lo <= distance <= T - lo:
        raise ValueError(
            f"distance must lie in [min_len, seq_len − min_len] = [{lo}, {T - lo}]; "
            f"got {distance}"
        )
    tokens = torch.randint(0, config.vocab, (batch, T), generator=gen)
    if distance is not None or even:
        if distance is None:
            gap = torch.randint(lo, T - lo + 1, (batch,), generator=gen)
        else:
            gap = torch.full((batch,), distance)
        top = torch.clamp(torch.minimum(gap, T - gap), max=config.max_len)
        length = lo + (torch.rand(batch, generator=gen) * (top - lo + 1)).long()
        first = (torch.rand(batch, generator=gen) * (T - gap - length + 1)).long()
        second = first + gap
    elif config.fixed_offset:
        length = torch.full((batch,), config.max_len)
        first = torch.zeros(batch, dtype=torch.long)
        second = length.clone()
    else:
        length = torch.randint(config.min_len, config.max_len + 1, (batch,), generator=gen)
        u = torch.rand(2, batch, generator=gen)
        first = (u[0] * (T - 2 * length + 1)).long()
        second = first + length + (u[1] * (T - length - first - length + 1)).long()
    return _with_copy(tokens, first, second, length)


def _with_copy(
    tokens: torch.Tensor, first: torch.Tensor, second: torch.Tensor, length: torch.Tensor
) -> RepeatBatch:
    """``tokens`` ``(batch, seq)`` with each row's ``length`` tokens from ``first`` copied to
    ``second`` (each ``(batch,)``), as a :class:`RepeatBatch`."""
    batch, T = tokens.shape
    idx = torch.arange(T).expand(batch, T)
    inside = (idx >= second[:, None]) & (idx < (second + length)[:, None])
    source = (idx - second[:, None] + first[:, None]).clamp(0, T - 1)
    tokens = torch.where(inside, tokens.gather(1, source), tokens)
    return RepeatBatch(tokens, first, second, length)


class AttentionOnlyTransformer(torch.nn.Module):
    """A Transformer with attention layers only: no feed-forward, no layer norm.

    Introduced in chapter 9. ``x = embed(tokens) + pos`` ``(batch, seq, d_model)``; each layer
    adds its causal multi-head attention to the residual stream, ``x ← x + attn(x)``; the logits
    are ``unembed(x)`` ``(batch, seq, vocab)``. Positions are learned. Each layer is a
    :class:`~course_attention.modules.MultiHeadAttention`; :meth:`forward` runs its projections
    head by head, so that one head can be switched off (ablated).
    """

    def __init__(self, config: RepeatConfig):
        super().__init__()
        self.config = config
        d = config.d_model
        self.embed = torch.nn.Embedding(config.vocab, d)
        self.pos = torch.nn.Parameter(torch.randn(config.seq_len, d) * 0.3)
        torch.nn.init.normal_(self.embed.weight, std=0.3)
        self.layers = torch.nn.ModuleList(
            MultiHeadAttention(d, config.n_heads) for _ in range(config.n_layers)
        )
        self.unembed = torch.nn.Linear(d, config.vocab)

    def attend(
        self,
        layer: int,
        x: torch.Tensor,
        keep: torch.Tensor | None = None,
        need_weights: bool = True,
        fill: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Layer ``layer``'s causal attention on ``x`` ``(batch, seq, d_model)``.

        ``keep`` ``(heads,)`` multiplies each head's output before ``W_o`` (0 ablates a head);
        ``fill`` ``(heads, d_head)``, if given, is added times ``1 − keep``: what an ablated
        head outputs instead of zero (a mean ablation). Returns the layer's output ``(batch,
        seq, d_model)`` and weights ``(batch, heads, seq, seq)``; with ``keep=None`` equal to
        ``MultiHeadAttention(x, causal=True)``.
        """
        mha = self.layers[layer]
        batch, seq, _ = x.shape
        Q, K, V = (mha._split(f(x)) for f in (mha.W_q, mha.W_k, mha.W_v))
        if need_weights and torch.is_grad_enabled():
            causal = torch.ones(seq, seq, dtype=torch.bool).tril()
            heads, weights = scaled_dot_product_attention(Q, K, V, mask=causal)
        elif need_weights:  # the same weights, 3 times sooner (every checkpoint draws them)
            scores = (Q * Q.shape[-1] ** -0.5) @ K.transpose(-2, -1)  # (batch, heads, seq, seq)
            future = torch.ones(seq, seq, dtype=torch.bool).triu(1)
            weights = torch.softmax(scores.masked_fill_(future, float("-inf")), dim=-1)
            heads = weights @ V
        else:
            heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
            weights = None
        if keep is not None:
            off = (1 - keep).view(1, -1, 1, 1).to(heads.dtype)
            heads = heads * keep.view(1, -1, 1, 1).to(heads.dtype)
            if fill is not None:
                heads = heads + off * fill.to(heads.dtype)[None, :, None, :]
        return mha.W_o(heads.transpose(1, 2).reshape(batch, seq, mha.d_model)), weights

    def forward(
        self,
        tokens: torch.Tensor,
        ablate: tuple[int, int] | None = None,
        need_weights: bool = True,
        fill: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits ``(batch, seq, vocab)`` and weights ``(layers, batch, heads, seq, seq)``.

        ``ablate=(layer, head)`` zeroes that head's output (counted from 0), or, with ``fill``
        ``(d_head,)``, puts ``fill`` in its place at every position (a mean ablation);
        ``need_weights=False`` returns ``None`` for the weights and trains faster.
        """
        c = self.config
        if tokens.dim() != 2 or tokens.shape[1] > c.seq_len or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be long ids of shape (batch, seq ≤ {c.seq_len}); got "
                f"{tuple(tokens.shape)} {tokens.dtype}"
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= c.vocab):
            raise ValueError(
                f"token ids must lie in [0, {c.vocab}); got "
                f"{int(tokens.min())}..{int(tokens.max())}"
            )
        if ablate is not None and not (0 <= ablate[0] < c.n_layers and 0 <= ablate[1] < c.n_heads):
            raise ValueError(
                f"ablate=(layer, head) must index {c.n_layers} layers × {c.n_heads} heads; "
                f"got {ablate}"
            )
        d_head = c.d_model // c.n_heads
        if fill is not None and (ablate is None or tuple(fill.shape) != (d_head,)):
            raise ValueError(
                f"fill must be a (d_head,) = ({d_head},) vector, with ablate; got "
                f"{tuple(fill.shape)}, ablate={ablate}"
            )
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        maps = []
        for i in range(c.n_layers):
            keep, fills = None, None
            if ablate is not None and ablate[0] == i:
                keep = torch.ones(c.n_heads)
                keep[ablate[1]] = 0.0
                if fill is not None:
                    fills = torch.zeros(c.n_heads, d_head)
                    fills[ablate[1]] = fill
            out, w = self.attend(i, x, keep, need_weights, fills)
            x = x + out
            maps.append(w)
        return self.unembed(x), torch.stack(maps) if need_weights else None

    def residual_after(self, tokens: torch.Tensor, layer: int) -> torch.Tensor:
        """The residual stream ``(batch, seq, d_model)`` after ``layer`` layers (0: embeddings)."""
        if not 0 <= layer <= self.config.n_layers:
            raise ValueError(f"layer must lie in [0, {self.config.n_layers}]; got {layer}")
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for i in range(layer):
            x = x + self.attend(i, x, need_weights=False)[0]
        return x


def _token_losses(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``(batch, seq − 1)``: cross-entropy of predicting ``tokens[:, t + 1]`` at position t."""
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none"
    )


def repeat_losses(logits: torch.Tensor, data: RepeatBatch) -> tuple[float, float]:
    """Mean next-token loss in nats on the repeated tokens and on all the others.

    Introduced in chapter 9. ``logits`` ``(batch, seq, vocab)``. The *repeated tokens* are
    :meth:`RepeatBatch.repeated` (the second copy after its first token); the *others* are every
    other predicted token.
    """
    losses = _token_losses(logits, data.tokens)  # (batch, seq - 1), target t + 1
    rep = data.repeated()[:, 1:]
    return float(losses[rep].mean()), float(losses[~rep].mean())


def seen_loss(data: RepeatBatch, vocab: int) -> float:
    """The loss in nats of guessing each repeated token uniformly among the distinct ids seen so
    far: ``mean ln(distinct ids in tokens[: t + 1])`` over the positions ``t`` that predict a
    repeated token (:meth:`RepeatBatch.repeated`). The answer is always one of them, so this is
    what a model scores that favours the tokens already seen but cannot copy.

    Introduced in chapter 9; chapter 15 calls it the context baseline of its induction runs.
    """
    seen = torch.nn.functional.one_hot(data.tokens, vocab).cummax(1).values.sum(-1)  # (batch, seq)
    asked = data.repeated()[:, 1:]  # target t + 1, predicted at t
    return float(seen[:, :-1][asked].double().log().mean())


def _check_weights(weights: np.ndarray | torch.Tensor) -> np.ndarray:
    w = weights.detach().cpu().numpy() if isinstance(weights, torch.Tensor) else weights
    w = np.asarray(w, dtype=float)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2] or w.shape[-1] < 2:
        raise ValueError(f"weights must have shape (..., seq, seq) with seq ≥ 2; got {w.shape}")
    return w


def previous_token_score(weights: np.ndarray | torch.Tensor) -> np.ndarray:
    """Mean weight a query puts on the token just before it.

    Introduced in chapter 9. ``weights`` ``(..., batch, heads, seq, seq)`` → ``(..., heads)``:
    the average over the batch and over queries ``1 … seq − 1`` of ``w[q, q − 1]``. A perfect
    previous-token head scores 1; uniform causal attention scores about ``ln(seq) / seq``.
    """
    w = _check_weights(weights)
    if w.ndim < 4:
        raise ValueError(f"weights must be (..., batch, heads, seq, seq); got {w.shape}")
    q = np.arange(1, w.shape[-1])
    return w[..., q, q - 1].mean(axis=(-1, -3))


def induction_score(weights: np.ndarray | torch.Tensor, data: RepeatBatch) -> np.ndarray:
    """Mean weight a query in the second copy puts on the token after its previous occurrence.

    Introduced in chapter 9. ``weights`` ``(..., batch, heads, seq, seq)`` → ``(..., heads)``.
    For each query in the second copy (all ``length`` of them; :meth:`RepeatBatch.induction_keys`),
    the weight on key ``first + i + 1``, averaged over those queries and the batch. A perfect
    induction head scores 1.
    """
    w = _check_weights(weights)
    query, key = (t.numpy() for t in data.induction_keys())
    if w.ndim < 4 or w.shape[-4] != query.shape[0] or w.shape[-1] != query.shape[1]:
        raise ValueError(
            f"weights {w.shape} must be (..., batch, heads, seq, seq) for tokens {query.shape}"
        )
    rows, cols = np.nonzero(query >= 0)  # (n,) batch row and query position of every query
    picked = w[..., rows, :, cols, key[rows, cols]]  # (n, ..., heads): advanced indices first
    return picked.mean(axis=0)


def offset_profile(weights: np.ndarray | torch.Tensor, max_offset: int = 4) -> np.ndarray:
    """How far back each head looks: mean weight at offsets ``0 … max_offset`` (0: itself).

    Introduced in chapter 9. ``weights`` ``(..., batch, heads, seq, seq)`` → ``(..., heads,
    max_offset + 1)``, averaged over the batch and the queries ``q ≥ max_offset`` (which have
    every offset). The rest of a row's weight lies further back.
    """
    w = _check_weights(weights)
    if not 0 <= max_offset < w.shape[-1] - 1:
        raise ValueError(f"max_offset must lie in [0, {w.shape[-1] - 2}]; got {max_offset}")
    q = np.arange(max_offset, w.shape[-1])
    out = [w[..., q, q - k].mean(axis=(-1, -3)) for k in range(max_offset + 1)]
    return np.stack(out, axis=-1)


@torch.no_grad()
def mean_head_outputs(model: AttentionOnlyTransformer, tokens: torch.Tensor) -> torch.Tensor:
    """Each head's average output (before ``W_o``) over ``tokens``' rows and positions:
    ``(layers, heads, d_head)``. Introduced in chapter 9 (what a mean ablation puts in)."""
    x = model.embed(tokens) + model.pos[: tokens.shape[1]]
    out = []
    for layer, mha in enumerate(model.layers):
        Q, K, V = (mha._split(f(x)) for f in (mha.W_q, mha.W_k, mha.W_v))
        heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
        out.append(heads.mean(dim=(0, 2)))  # (batch, heads, seq, d_head) -> (heads, d_head)
        x = x + model.attend(layer, x, need_weights=False)[0]
    return torch.stack(out)


@torch.no_grad()
def head_ablation(
    model: AttentionOnlyTransformer, data: RepeatBatch, mean: bool = False
) -> np.ndarray:
    """Loss on the repeated tokens with one head switched off: ``(layers, heads)`` in nats.

    Introduced in chapter 9. Entry ``[l, h]`` is :func:`repeat_losses`' first value when head
    ``h`` of layer ``l`` outputs zeros (zero ablation) or, with ``mean=True``, its average
    output on ``data`` at every position (:func:`mean_head_outputs`, a mean ablation); compare
    with the intact model's loss.
    """
    c = model.config
    means = mean_head_outputs(model, data.tokens) if mean else None
    out = np.empty((c.n_layers, c.n_heads))
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            fill = None if means is None else means[layer, head]
            logits = model(data.tokens, ablate=(layer, head), need_weights=False, fill=fill)[0]
            out[layer, head] = repeat_losses(logits, data)[0]
    return out


@torch.no_grad()
def previous_token_probe(
    model: AttentionOnlyTransformer, train: RepeatBatch, test: RepeatBatch, layer: int = 1
) -> float:
    """Can the previous token be read off the residual stream at a position? Accuracy in [0, 1].

    Introduced in chapter 9. Fits a linear read-out (least squares onto one-hot ids) from the
    residual stream after ``layer`` layers at position ``t`` to the token at ``t − 1`` on
    ``train``, and returns its accuracy on ``test``. After 0 layers (embeddings only) the
    previous token is not there: chance is ``1 / vocab``.
    """

    def features(data: RepeatBatch) -> tuple[np.ndarray, np.ndarray]:
        x = model.residual_after(data.tokens, layer)[:, 1:].reshape(-1, model.config.d_model)
        x = torch.cat([x, torch.ones(len(x), 1)], dim=1).double().numpy()  # (n, d_model + 1)
        return x, data.tokens[:, :-1].reshape(-1).numpy()

    X, y = features(train)
    W = np.linalg.lstsq(X, np.eye(model.config.vocab)[y], rcond=None)[0]  # (d_model + 1, vocab)
    X_test, y_test = features(test)
    return float(((X_test @ W).argmax(axis=1) == y_test).mean())


@torch.no_grad()
def loss_by_distance(
    model: AttentionOnlyTransformer, distances: Any, batch: int = 128, seed: int = 20_000
) -> np.ndarray:
    """Loss on the repeated tokens at each copy distance: ``(len(distances),)`` nats.

    Introduced in chapter 9. For each distance ``d``, ``batch`` fresh sequences whose copies lie
    exactly ``d`` apart (:func:`repeat_batch` with ``distance=d``, seeded by ``seed + d``). A
    model that does induction whatever the distance gives a flat curve; one that learned where
    copies usually are gives a valley.
    """
    out = []
    for d in distances:
        data = repeat_batch(
            model.config, batch, torch.Generator().manual_seed(seed + int(d)), distance=int(d)
        )
        out.append(repeat_losses(model(data.tokens, need_weights=False)[0], data)[0])
    return np.array(out)


@torch.no_grad()
def loss_by_start(
    model: AttentionOnlyTransformer,
    distance: int,
    starts: Any,
    length: int | None = None,
    batch: int = 256,
    seed: int = 30_000,
) -> np.ndarray:
    """Loss on the repeated tokens with the copies ``distance`` apart and the second copy
    starting at each of ``starts``: ``(len(starts),)`` nats.

    Introduced in chapter 9, to ask whether a model uses *where* the copies are. Every place
    gets ``batch`` fresh random sequences (seeded by ``seed + 1000 · distance + start``) with a
    segment of ``length`` tokens (default ``min_len``) at ``start − distance`` and again at
    ``start``. The distance, the length and the way tokens are drawn are the same at every
    place; only the number of random tokens before the pair changes (none when ``start ==
    distance``). A model that found the earlier copy by its tokens alone could pay a little more
    where more of them come before (each matches the current token by chance), never more at
    the start; a model that also uses position can.
    """
    c = model.config
    length = c.min_len if length is None else int(length)
    starts = [int(s) for s in starts]
    if not 2 <= length <= distance or batch < 1:
        raise ValueError(
            f"need batch ≥ 1 and 2 ≤ length ≤ distance (copies that do not overlap); got "
            f"batch={batch}, length={length}, distance={distance}"
        )
    bad = [s for s in starts if not distance <= s <= c.seq_len - length]
    if not starts or bad:
        raise ValueError(
            f"each start must lie in [distance, seq_len − length] = [{distance}, "
            f"{c.seq_len - length}], so that both copies fit; got {starts or 'none'}"
        )
    out = []
    for s in starts:
        gen = torch.Generator().manual_seed(seed + 1000 * distance + s)
        tokens = torch.randint(0, c.vocab, (batch, c.seq_len), generator=gen)
        data = _with_copy(
            tokens,
            torch.full((batch,), s - distance),
            torch.full((batch,), s),
            torch.full((batch,), length),
        )
        out.append(repeat_losses(model(data.tokens, need_weights=False)[0], data)[0])
    return np.array(out)


def _head_outputs(model: AttentionOnlyTransformer, layer: int, x: torch.Tensor) -> torch.Tensor:
    """Each head's own share of layer ``layer``'s output: ``(batch, heads, seq, d_model)``
    (through its slice of ``W_o``, without ``W_o``'s bias)."""
    mha = model.layers[layer]
    Q, K, V = (mha._split(f(x)) for f in (mha.W_q, mha.W_k, mha.W_v))
    heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
    W = mha.W_o.weight.view(mha.d_model, mha.n_heads, mha.d_head)  # (d_model, heads, d_head)
    return torch.einsum("bhsk,mhk->bhsm", heads, W)


@torch.no_grad()
def logit_attribution(model: AttentionOnlyTransformer, data: RepeatBatch) -> np.ndarray:
    """Does a head *copy*? ``(layers, heads)``: direct logit attribution on the repeated tokens.

    Introduced in chapter 9. Each head's output at a repeated position, read straight through
    the unembedding, gives a vector of ``vocab`` logits; the entry is how far it raises the
    logit of the token that comes next (the token an induction head attends to) above the mean
    of all the logits, averaged over the repeated tokens. Large and positive: the head writes
    that token's identity into the output.
    """
    x = model.embed(data.tokens) + model.pos[: data.tokens.shape[1]]
    rows, cols = torch.nonzero(data.repeated()[:, 1:], as_tuple=True)  # position t predicts t+1
    target = data.tokens[rows, cols + 1]  # (n,)
    out = np.empty((model.config.n_layers, model.config.n_heads))
    for layer in range(model.config.n_layers):
        logits = _head_outputs(model, layer, x)[rows, :, cols] @ model.unembed.weight.T
        right = logits.gather(2, target[:, None, None].expand(-1, logits.shape[1], 1))[..., 0]
        out[layer] = (right - logits.mean(-1)).mean(0).numpy()  # (n, heads, vocab) -> (heads,)
        x = x + model.attend(layer, x, need_weights=False)[0]
    return out


@torch.no_grad()
def key_ablation(model: AttentionOnlyTransformer, data: RepeatBatch, head: int) -> np.ndarray:
    """Which input of layer 1 needs layer-0 head ``head``? ``(3,)`` losses on repeated tokens.

    Introduced in chapter 9 (2-layer models). The head's output is removed from what layer 1's
    queries, keys or values read (entry 0, 1, 2), one at a time, and nowhere else. If the
    induction head matches on the previous token through its keys (**K-composition**), removing
    it from the keys alone breaks induction.
    """
    if model.config.n_layers != 2:
        raise ValueError(f"key_ablation needs a 2-layer model; got {model.config.n_layers}")
    x = model.embed(data.tokens) + model.pos[: data.tokens.shape[1]]
    keep = torch.ones(model.config.n_heads)
    keep[head] = 0.0
    full, off = x + model.attend(0, x)[0], x + model.attend(0, x, keep)[0]
    mha, out = model.layers[1], []
    for part in range(3):
        inputs = [off if i == part else full for i in range(3)]
        projections = zip((mha.W_q, mha.W_k, mha.W_v), inputs, strict=True)
        Q, K, V = (mha._split(f(z)) for f, z in projections)
        heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
        merged = heads.transpose(1, 2).reshape(*x.shape)
        out.append(repeat_losses(model.unembed(full + mha.W_o(merged)), data)[0])
    return np.array(out)


def token_induction_score(weights: np.ndarray | torch.Tensor, tokens: Any) -> np.ndarray:
    """Exercise 2's score, from the tokens alone: ``(..., batch, heads, seq, seq)`` → ``(...,
    heads)``.

    Introduced in chapter 9. Every query whose token occurred before counts (also tokens that
    recur by chance, outside the repeated segment), with the weight on the position after the
    most recent earlier occurrence. :func:`induction_score` counts only the second copy's
    queries, with the key after the twin in the first copy.
    """
    w = _check_weights(weights)
    t = np.asarray(tokens)
    picks = []  # (batch row, query, key) of every query whose token occurred before
    for b, row in enumerate(t):
        last: dict[int, int] = {}  # token -> its most recent position so far
        for q, tok in enumerate(row.tolist()):
            if tok in last:
                picks.append((b, q, last[tok] + 1))
            last[tok] = q
    rows, cols, keys = (np.array(v) for v in zip(*picks, strict=True))
    return w[..., rows, :, cols, keys].mean(axis=0)


def rise_step(steps: Any, values: Any, share: float = 0.5) -> int:
    """The first step at which ``values`` ``(n,)`` has gone ``share`` of the way from its first
    to its last value (up or down), at checkpoints ``steps`` ``(n,)``. Introduced in chapter 9."""
    s, v = np.asarray(steps), np.asarray(values, dtype=float)
    target = v[0] + share * (v[-1] - v[0])
    past = (v >= target) if v[-1] >= v[0] else (v <= target)
    return int(s[np.nonzero(past)[0][0]])


#: Copy distances at which chapter 9 measures a model (:func:`loss_by_distance`).
DISTANCES = (12, 16, 20, 24, 28, 32, 36)


@dataclass
class InductionRun:
    """A training run with checkpoints on a fixed evaluation batch.

    ``steps`` ``(n,)``; ``repeated_loss`` and ``other_loss`` ``(n,)`` nats; ``previous`` and
    ``induction`` ``(n, layers, heads)`` scores; ``example`` ``(n, layers, heads, seq, seq)``
    float16 maps of the first evaluation sequence; ``losses`` the training loss per step;
    ``seconds`` the training time (checkpoints included); ``by_distance`` maps a step (where
    the data switched to even distances, and the last) to :func:`loss_by_distance` at
    :data:`DISTANCES` ``(7,)``; ``even_after`` the step of that switch (``None``: never).
    """

    model: AttentionOnlyTransformer
    eval_batch: RepeatBatch
    steps: np.ndarray
    repeated_loss: np.ndarray
    other_loss: np.ndarray
    previous: np.ndarray
    induction: np.ndarray
    example: np.ndarray
    losses: np.ndarray
    seconds: float
    by_distance: dict[int, np.ndarray] = field(default_factory=dict)
    even_after: int | None = None
    chance: float = field(init=False)

    def __post_init__(self) -> None:
        self.chance = math.log(self.model.config.vocab)


@torch.no_grad()
def _checkpoint(model: AttentionOnlyTransformer, data: RepeatBatch) -> tuple[Any, ...]:
    logits, w = model(data.tokens)
    rep, other = repeat_losses(logits, data)
    return rep, other, previous_token_score(w), induction_score(w, data), w[:, 0].half().numpy()


@reusable
def train_induction(
    config: RepeatConfig = RepeatConfig(),
    steps: int = 1000,
    batch: int = 64,
    lr: float = 1e-2,
    weight_decay: float = 0.01,
    every: int = 10,
    seed: int = 0,
    eval_size: int = 64,
    progress: bool = True,
    even_after: int | None = 750,
) -> InductionRun:
    """Train an :class:`AttentionOnlyTransformer` on :func:`repeat_batch` data with ``fit``.

    Introduced in chapter 9. AdamW (``lr``, ``weight_decay``) with ``fit``'s warm-up and cosine
    decay, loss: next-token cross-entropy on every position. For the first ``even_after`` steps
    the batches have :func:`repeat_batch`'s default, uneven copy distances, after that even ones
    (``even=True``; ``None``: never). The model is seeded by ``seed``; the evaluation batch of
    ``eval_size`` sequences (default distances) is drawn with seed ``10_000 + seed``, never
    trained on. Every ``every`` steps (and at step 0) :func:`repeat_losses`, the scores and the
    maps of the first evaluation sequence are recorded; :func:`loss_by_distance` at the switch
    and at the end.
    """
    from .training import fit

    if every < 1 or eval_size < 1:
        raise ValueError(f"need every ≥ 1 and eval_size ≥ 1; got {every}, {eval_size}")
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(config)
    eval_batch = repeat_batch(config, eval_size, torch.Generator().manual_seed(10_000 + seed))
    records = [(0, *_checkpoint(model, eval_batch))]
    by_distance: dict[int, np.ndarray] = {}
    drawn = [0]

    def loss(model: AttentionOnlyTransformer, data: RepeatBatch) -> torch.Tensor:
        return _token_losses(model(data.tokens, need_weights=False)[0], data.tokens).mean()

    def draw(gen: torch.Generator) -> RepeatBatch:
        drawn[0] += 1
        even = even_after is not None and drawn[0] > even_after
        return repeat_batch(config, batch, gen, even=even)

    def record(step: int, _loss: float) -> None:
        if step % every == 0 or step == steps:
            records.append((step, *_checkpoint(model, eval_batch)))
        if step in (even_after, steps):
            by_distance[step] = loss_by_distance(model, DISTANCES)

    log = fit(
        model,
        draw,
        loss,
        steps=steps,
        lr=lr,
        weight_decay=weight_decay,
        seed=seed,
        progress=progress,
        callback=record,
    )
    cols = list(zip(*records, strict=True))
    return InductionRun(
        model,
        eval_batch,
        np.array(cols[0]),
        np.array(cols[1]),
        np.array(cols[2]),
        np.stack(cols[3]),
        np.stack(cols[4]),
        np.stack(cols[5]),
        log.losses,
        log.seconds,
        by_distance,
        even_after if even_after is not None and even_after < steps else None,
    )


def phase_change(run: InductionRun, window: int = 100) -> tuple[int, int, float]:
    """Where the loss on repeated tokens falls fastest: ``(start, end, fall)``.

    Introduced in chapter 9. Among the stretches of ``window`` training steps between two
    checkpoints, the one over which the loss on the repeated tokens falls most, and that fall
    in nats. Any curve has a steepest stretch: whether it is a phase change is for the controls
    to say (the plateau before it, the 1-layer model, the induction scores).
    """
    steps, rep = run.steps, run.repeated_loss
    if window < 1 or steps[-1] - steps[0] < window:
        raise ValueError(f"window must lie in [1, {steps[-1] - steps[0]}] steps; got {window}")
    starts = [i for i in range(len(steps)) if steps[i] + window <= steps[-1]]
    ends = [int(np.searchsorted(steps, steps[i] + window)) for i in starts]
    falls = [float(rep[i] - rep[j]) for i, j in zip(starts, ends, strict=True)]
    best = int(np.argmax(falls))
    return int(steps[starts[best]]), int(steps[ends[best]]), falls[best]


def position_labels(tokens: torch.Tensor | np.ndarray) -> list[str]:
    """``(seq,)`` token ids → labels ``"position:id"``, e.g. ``"7:t42"`` (unique, for plots)."""
    return [f"{i}:t{int(t)}" for i, t in enumerate(np.asarray(tokens).tolist())]
