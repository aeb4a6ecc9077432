"""Induction heads (chapter 9): repeat data, an attention-only model, head scores and ablation.

Introduced in chapter 9. The data are random token sequences in which one segment of random
length, at a random offset, appears twice; the second copy can be predicted only by finding the
previous occurrence of the current token and copying the token after it (an **induction head**,
Elhage et al. 2021; Olsson et al. 2022). The model is a 2-layer, attention-only Transformer built
from :class:`course_attention.modules.MultiHeadAttention`; it is trained with
:func:`course_attention.training.fit`, recording checkpoints on a fixed evaluation batch.

Shapes: tokens ``(batch, seq)``; attention weights ``(layers, batch, heads, seq_q, seq_k)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from .modules import MultiHeadAttention, scaled_dot_product_attention

__all__ = [
    "RepeatConfig",
    "RepeatBatch",
    "repeat_batch",
    "AttentionOnlyTransformer",
    "repeat_losses",
    "previous_token_score",
    "induction_score",
    "offset_profile",
    "head_ablation",
    "previous_token_probe",
    "InductionRun",
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


def repeat_batch(config: RepeatConfig, batch: int, gen: torch.Generator) -> RepeatBatch:
    """Draw ``batch`` random sequences, each with a segment that appears twice.

    Introduced in chapter 9. Tokens are uniform over ``config.vocab``; the segment's length is
    uniform in ``[min_len, max_len]``, the first copy starts uniformly in ``[0, seq − 2 · len]``
    and the second uniformly in ``[first + len, seq − len]``: neither where nor how long the
    repeat is can be told from positions. Returns a :class:`RepeatBatch`, ``tokens`` ``(batch,
    seq_len)``. Only ``gen`` supplies randomness.
    """
    if batch < 1:
        raise ValueError(f"need batch ≥ 1; got {batch}")
    T = config.seq_len
    tokens = torch.randint(0, config.vocab, (batch, T), generator=gen)
    if config.fixed_offset:
        length = torch.full((batch,), config.max_len)
        first = torch.zeros(batch, dtype=torch.long)
        second = length.clone()
    else:
        length = torch.randint(config.min_len, config.max_len + 1, (batch,), generator=gen)
        u = torch.rand(2, batch, generator=gen)
        first = (u[0] * (T - 2 * length + 1)).long()
        second = first + length + (u[1] * (T - length - first - length + 1)).long()
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
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Layer ``layer``'s causal attention on ``x`` ``(batch, seq, d_model)``.

        ``keep`` ``(heads,)`` multiplies each head's output before ``W_o`` (0 ablates a head).
        Returns the layer's output ``(batch, seq, d_model)`` and weights ``(batch, heads, seq,
        seq)``; with ``keep=None`` equal to ``MultiHeadAttention(x, causal=True)``.
        """
        mha = self.layers[layer]
        batch, seq, _ = x.shape
        Q, K, V = (mha._split(f(x)) for f in (mha.W_q, mha.W_k, mha.W_v))
        if need_weights:
            causal = torch.ones(seq, seq, dtype=torch.bool).tril()
            heads, weights = scaled_dot_product_attention(Q, K, V, mask=causal)
        else:
            heads = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=True)
            weights = None
        if keep is not None:
            heads = heads * keep.view(1, -1, 1, 1).to(heads.dtype)
        return mha.W_o(heads.transpose(1, 2).reshape(batch, seq, mha.d_model)), weights

    def forward(
        self,
        tokens: torch.Tensor,
        ablate: tuple[int, int] | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Logits ``(batch, seq, vocab)`` and weights ``(layers, batch, heads, seq, seq)``.

        ``ablate=(layer, head)`` zeroes that head's output (counted from 0);
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
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        maps = []
        for i in range(c.n_layers):
            keep = None
            if ablate is not None and ablate[0] == i:
                keep = torch.ones(c.n_heads)
                keep[ablate[1]] = 0.0
            out, w = self.attend(i, x, keep, need_weights)
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
def head_ablation(model: AttentionOnlyTransformer, data: RepeatBatch) -> np.ndarray:
    """Loss on the repeated tokens with one head switched off: ``(layers, heads)`` in nats.

    Introduced in chapter 9. Entry ``[l, h]`` is :func:`repeat_losses`' first value when head
    ``h`` of layer ``l`` outputs zeros (zero ablation); compare with the intact model's loss.
    """
    c = model.config
    out = np.empty((c.n_layers, c.n_heads))
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            out[layer, head] = repeat_losses(model(data.tokens, ablate=(layer, head))[0], data)[0]
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


@dataclass
class InductionRun:
    """A training run with checkpoints on a fixed evaluation batch.

    ``steps`` ``(n,)``; ``repeated_loss`` and ``other_loss`` ``(n,)`` nats; ``previous`` and
    ``induction`` ``(n, layers, heads)`` scores; ``example`` ``(n, layers, heads, seq, seq)``
    float16 maps of the first evaluation sequence; ``losses`` the training loss per step;
    ``seconds`` the training time (checkpoints included).
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
    chance: float = field(init=False)

    def __post_init__(self) -> None:
        self.chance = math.log(self.model.config.vocab)


@torch.no_grad()
def _checkpoint(model: AttentionOnlyTransformer, data: RepeatBatch) -> tuple[Any, ...]:
    logits, w = model(data.tokens)
    rep, other = repeat_losses(logits, data)
    return rep, other, previous_token_score(w), induction_score(w, data), w[:, 0].half().numpy()


def train_induction(
    config: RepeatConfig = RepeatConfig(),
    steps: int = 1000,
    batch: int = 64,
    lr: float = 1e-2,
    weight_decay: float = 0.01,
    every: int = 50,
    seed: int = 0,
    eval_size: int = 64,
    progress: bool = True,
) -> InductionRun:
    """Train an :class:`AttentionOnlyTransformer` on :func:`repeat_batch` data with ``fit``.

    Introduced in chapter 9. AdamW (``lr``, ``weight_decay``) with ``fit``'s warm-up and cosine
    decay, loss: next-token cross-entropy on every position. The model is seeded by ``seed``;
    the evaluation batch of ``eval_size`` sequences is drawn with seed ``10_000 + seed``, never
    trained on. Every ``every`` steps (and at step 0) :func:`repeat_losses`, the scores and the
    maps of the first evaluation sequence are recorded.
    """
    from .training import fit

    if every < 1 or eval_size < 1:
        raise ValueError(f"need every ≥ 1 and eval_size ≥ 1; got {every}, {eval_size}")
    torch.manual_seed(seed)
    model = AttentionOnlyTransformer(config)
    eval_batch = repeat_batch(config, eval_size, torch.Generator().manual_seed(10_000 + seed))
    records = [(0, *_checkpoint(model, eval_batch))]

    def loss(model: AttentionOnlyTransformer, data: RepeatBatch) -> torch.Tensor:
        return _token_losses(model(data.tokens, need_weights=False)[0], data.tokens).mean()

    def record(step: int, _loss: float) -> None:
        if step % every == 0 or step == steps:
            records.append((step, *_checkpoint(model, eval_batch)))

    log = fit(
        model,
        lambda gen: repeat_batch(config, batch, gen),
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
    )


def phase_change(run: InductionRun, window: int = 100) -> tuple[int, float, float]:
    """The phase change: ``(step, loss_before, loss_after)`` of the loss on repeated tokens.

    Introduced in chapter 9. ``step`` is the first checkpoint at which the loss on the repeated
    tokens is below half of chance, ``ln(vocab) / 2`` nats: without an induction mechanism a model
    cannot get there (guessing among the tokens already seen costs about ``ln`` of their number,
    more than 3 nats here). ``loss_before`` is the loss at the last checkpoint at least
    ``window`` steps earlier, ``loss_after`` the loss at the last checkpoint. ``step`` is −1
    (and ``loss_before`` the final loss) if the loss never gets below half of chance.
    """
    if window < 0:
        raise ValueError(f"window must be ≥ 0; got {window}")
    steps, rep = run.steps, run.repeated_loss
    below = np.nonzero(rep < run.chance / 2)[0]
    if not len(below):
        return -1, float(rep[-1]), float(rep[-1])
    step = int(steps[below[0]])
    before = np.nonzero(steps <= step - window)[0]
    return step, float(rep[before[-1] if len(before) else 0]), float(rep[-1])


def position_labels(tokens: torch.Tensor | np.ndarray) -> list[str]:
    """``(seq,)`` token ids → labels ``"position:id"``, e.g. ``"7:t42"`` (unique, for plots)."""
    return [f"{i}:t{int(t)}" for i, t in enumerate(np.asarray(tokens).tolist())]
