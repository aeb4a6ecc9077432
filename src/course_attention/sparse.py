"""DeepSeek-V3.2's sparse attention (DSA): a lightning indexer scores the keys, each query keeps
its top-k, and attention reads only those (chapter 13).

Introduced in chapter 13. Dense causal attention reads every earlier key: ``T(T + 1)/2`` pairs
for ``T`` tokens. DeepSeek Sparse Attention reads at most ``k`` keys a query. Which ``k``?
A small, cheap scorer, the *lightning indexer*, gives every visible key a score

    ``I[t, s] = Σ_h w_h(t) · ReLU(q_h(t) · k(s) / √d)``

with a few heads ``h`` of its own (queries ``q_h`` from the query's latent, one key ``k`` per
token shared by the heads, per-query head weights ``w_h``), and each query keeps its ``k``
highest-scoring keys (:func:`topk_indices`). The main attention then runs over those keys only
(:func:`sparse_attention`). The indexer still looks at every pair, but with a handful of narrow
heads (and in FP8 in DeepSeek's kernels), so the work saved is the main attention's
(:func:`work`).

The indexer is trained to imitate the main attention's own distribution (summed over the
heads). Its oracles are what :func:`only_top_k` runs on a trained model: each head keeping its own
top-k *true* scores, or (``shared=True``) one set of keys for all of a layer's heads, those of the
largest summed attention, as DSA reads them. On the course's trained models :func:`topk_mass`
measures how much of each query's attention the top-k keys hold, and :func:`loss_by_k` the
validation loss as ``k`` shrinks (:func:`sparse_results`, :func:`check_sparse_claims`). The
layers are restricted through their ``score_filter`` (``None`` by default: chapter 12's
:class:`~course_attention.modern.ModernAttention` computes exactly what it computed before).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import torch

from .modern import ModernAttention, apply_rope, rope_cos_sin

__all__ = [
    "indexer_scores",
    "LightningIndexer",
    "topk_indices",
    "mask_from_indices",
    "topk_mask",
    "sparse_attention",
    "Work",
    "work",
    "topk_mass",
    "uniform_mass",
    "attention_weights",
    "mass_by_k",
    "only_top_k",
    "only_random_k",
    "loss_by_k",
    "SPARSE_KS",
    "RANDOM_K",
    "LOSS_WINDOWS",
    "TOP_K_NEAR",
    "NEAR_LOSS",
    "ONE_KEY_LOSS",
    "RANDOM_GAP",
    "SHARED_KS",
    "SHARED_GAP",
    "MASS_GAIN",
    "SparseResults",
    "sparse_results",
    "check_sparse_claims",
]


def _positive(**values: int) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={v!r}")


def _future(seq_q: int, seq_k: int, device: torch.device | None = None) -> torch.Tensor:
    """``(seq_q, seq_k)``, True where a key lies after its query; the queries are the last
    ``seq_q`` positions of the ``seq_k`` keys (a cache holds the first ``seq_k - seq_q``)."""
    return torch.ones(seq_q, seq_k, dtype=torch.bool, device=device).triu(seq_k - seq_q + 1)


def indexer_scores(q: torch.Tensor, k: torch.Tensor, weights: torch.Tensor,
                   causal: bool = True) -> torch.Tensor:
    """The lightning indexer's scores ``Σ_h w_h · ReLU(q_h · k / √d)``, ``(batch, seq_q, seq_k)``.

    Introduced in chapter 13. ``q`` ``(batch, seq_q, heads, d)``: the indexer's queries (rotated);
    ``k`` ``(batch, seq_k, d)``: its keys, one per token, shared by its heads; ``weights``
    ``(batch, seq_q, heads)``: each query's weight for each head (``w_h`` may be negative: a head
    can vote against a key). With ``causal`` the keys after each query get ``-inf`` (the queries
    are the last ``seq_q`` of the ``seq_k`` positions). Computed in the inputs' dtype
    (Hugging Face casts to float32).
    """
    if q.dim() != 4 or k.dim() != 3 or weights.dim() != 3:
        raise ValueError(f"need q (batch, seq_q, heads, d), k (batch, seq_k, d) and weights "
                         f"(batch, seq_q, heads); got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(weights.shape)}")
    b, n, h, d = q.shape
    if k.shape[0] != b or k.shape[2] != d or weights.shape != (b, n, h):
        raise ValueError(f"q {tuple(q.shape)}, k {tuple(k.shape)} and weights "
                         f"{tuple(weights.shape)} disagree: need k (batch={b}, seq_k, d={d}) "
                         f"and weights ({b}, {n}, {h})")
    if causal and k.shape[1] < n:
        raise ValueError(f"causal scores need seq_k ≥ seq_q; got seq_k={k.shape[1]} < {n}")
    per_head = torch.relu(torch.einsum("bthd,bsd->bths", q, k) * d**-0.5)  # (b, seq_q, h, seq_k)
    scores = (weights.unsqueeze(-2) @ per_head).squeeze(-2)  # Σ_h w_h · ReLU(·)
    if causal:
        scores = scores.masked_fill(_future(n, k.shape[1], scores.device), float("-inf"))
    return scores


class LightningIndexer(torch.nn.Module):
    """DeepSeek-V3.2's lightning indexer, with Hugging Face's ``DeepseekV32Indexer`` weights.

    Introduced in chapter 13. ``wq_b`` turns the query's latent ``(batch, seq, q_dim)`` (in
    DeepSeek-V3.2 the main attention's ``q_a_layernorm(q_a_proj(x))``) into ``n_heads`` queries
    of width ``d_head``; ``wk`` and a LayerNorm (``k_norm``) turn ``x`` ``(batch, seq, d_model)``
    into one key per token; ``weights_proj`` gives each query its head weights, divided by
    ``√n_heads``. The first ``rope_dim`` features of queries and keys are rotated with
    ``rotate_half`` pairs (feature ``i`` with ``i + rope_dim/2``: *not* the interleaved pairs of
    DeepSeek's main attention), the rest are not. The weights' names are Hugging Face's:
    ``load_state_dict(hf_indexer.state_dict())`` loads one.
    """

    def __init__(self, d_model: int, q_dim: int, n_heads: int, d_head: int, rope_dim: int,
                 rope_theta: float = 10000.0):
        super().__init__()
        _positive(d_model=d_model, q_dim=q_dim, n_heads=n_heads, d_head=d_head,
                  rope_dim=rope_dim)
        if rope_dim % 2 or rope_dim > d_head:
            raise ValueError(f"rope_dim must be even and ≤ d_head={d_head}; got {rope_dim}")
        self.n_heads, self.d_head, self.rope_dim, self.rope_theta = (n_heads, d_head, rope_dim,
                                                                     rope_theta)
        self.wq_b = torch.nn.Linear(q_dim, n_heads * d_head, bias=False)
        self.wk = torch.nn.Linear(d_model, d_head, bias=False)
        self.k_norm = torch.nn.LayerNorm(d_head, eps=1e-6)
        self.weights_proj = torch.nn.Linear(d_model, n_heads, bias=False)

    def _rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Rotate the first ``rope_dim`` features of ``x`` ``(batch, seq, heads, d_head)``."""
        cos, sin = rope_cos_sin(positions, self.rope_dim, self.rope_theta, x.dtype)
        turned = apply_rope(x[..., : self.rope_dim].transpose(1, 2), cos, sin).transpose(1, 2)
        return torch.cat((turned, x[..., self.rope_dim:]), dim=-1)

    def forward(self, x: torch.Tensor, q_latent: torch.Tensor | None = None,
                causal: bool = True) -> torch.Tensor:
        """Scores ``(batch, seq, seq)`` of :func:`indexer_scores` for ``x`` ``(batch, seq,
        d_model)`` at positions ``0 … seq - 1``; the queries come from ``q_latent`` ``(batch,
        seq, q_dim)`` (``x`` itself when ``None``)."""
        q_latent = x if q_latent is None else q_latent
        if x.dim() != 3 or q_latent.shape[:2] != x.shape[:2]:
            raise ValueError(f"need x (batch, seq, d_model) and q_latent (batch, seq, q_dim); "
                             f"got {tuple(x.shape)} and {tuple(q_latent.shape)}")
        b, n, _ = x.shape
        positions = torch.arange(n, device=x.device)
        q = self._rotate(self.wq_b(q_latent).view(b, n, self.n_heads, self.d_head), positions)
        k = self._rotate(self.k_norm(self.wk(x)).unsqueeze(2), positions).squeeze(2)
        weights = self.weights_proj(x) * self.n_heads**-0.5
        return indexer_scores(q, k, weights, causal)


def topk_indices(scores: torch.Tensor, k: int, causal: bool = True) -> torch.Tensor:
    """Each query's ``k`` best keys: ``(..., seq_q, seq_k) → (..., seq_q, min(k, seq_k))``.

    Introduced in chapter 13. Best first; with ``causal`` only the keys up to the query count
    (the queries are the last ``seq_q`` positions), and a key whose score is ``-inf`` is never
    chosen, so a query that sees fewer than ``k`` keys keeps all of them and the rest of its row
    is ``-1`` (no key). Ties go to the earlier key (a stable sort), the same on every device:
    ``torch.topk``, which Hugging Face calls, does not say how it breaks ties (on this CPU it
    returns tied keys in no fixed order).
    """
    _positive(k=k)
    if scores.dim() < 2 or not scores.is_floating_point():
        raise ValueError(f"scores must be a float tensor (..., seq_q, seq_k); got "
                         f"{tuple(scores.shape)} {scores.dtype}")
    if torch.isnan(scores).any():
        raise ValueError("scores contain NaN: no order among the keys")
    n, m = scores.shape[-2:]
    if causal:
        if m < n:
            raise ValueError(f"causal selection needs seq_k ≥ seq_q; got {tuple(scores.shape)}")
        scores = scores.masked_fill(_future(n, m, scores.device), float("-inf"))
    values, order = torch.sort(scores, dim=-1, descending=True, stable=True)
    top = min(k, m)
    return order[..., :top].masked_fill(torch.isneginf(values[..., :top]), -1)


def mask_from_indices(indices: torch.Tensor, seq_k: int) -> torch.Tensor:
    """``(..., seq_q, top)`` key indices (``-1``: none) → ``(..., seq_q, seq_k)``, True at the
    keys a query reads. Introduced in chapter 13."""
    _positive(seq_k=seq_k)
    if indices.dim() < 2 or indices.is_floating_point() or indices.dtype == torch.bool:
        raise ValueError(f"indices must be an integer tensor (..., seq_q, top); got "
                         f"{tuple(indices.shape)} {indices.dtype}")
    if indices.numel() and (indices.min() < -1 or indices.max() >= seq_k):
        raise ValueError(f"indices must lie in -1 … {seq_k - 1}; got {int(indices.min())} … "
                         f"{int(indices.max())}")
    indices = indices.long()
    mask = torch.zeros(*indices.shape[:-1], seq_k + 1, dtype=torch.bool, device=indices.device)
    return mask.scatter(-1, indices.where(indices >= 0, seq_k), True)[..., :seq_k]


def topk_mask(scores: torch.Tensor, k: int, causal: bool = True) -> torch.Tensor:
    """``(..., seq_q, seq_k)``: True at the keys :func:`topk_indices` chooses (ties to the
    earlier key, never a ``-inf``). Introduced in chapter 13.

    Computed without sorting: the ``k``-th largest score of each row (``torch.topk``'s values,
    which do not depend on its order of ties), every key above it, and the earliest of the keys
    equal to it until ``k`` are chosen.
    """
    _positive(k=k)
    if scores.dim() < 2 or not scores.is_floating_point():
        raise ValueError(f"scores must be a float tensor (..., seq_q, seq_k); got "
                         f"{tuple(scores.shape)} {scores.dtype}")
    if torch.isnan(scores).any():
        raise ValueError("scores contain NaN: no order among the keys")
    n, m = scores.shape[-2:]
    if causal:
        if m < n:
            raise ValueError(f"causal selection needs seq_k ≥ seq_q; got {tuple(scores.shape)}")
        scores = scores.masked_fill(_future(n, m, scores.device), float("-inf"))
    kth = scores.topk(min(k, m), dim=-1).values[..., -1:]  # (..., seq_q, 1)
    above = scores > kth
    tied = scores == kth
    room = min(k, m) - above.sum(-1, keepdim=True)  # how many of the tied keys fit
    chosen = above | (tied & (tied.cumsum(-1) <= room))
    return chosen & ~torch.isneginf(scores)


def sparse_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     indices_or_mask: torch.Tensor, scale: float | None = None) -> torch.Tensor:
    """Attention over the chosen keys only: ``(batch, heads, seq_q, d_v)``.

    Introduced in chapter 13. ``q`` ``(batch, heads, seq_q, d)``, ``k`` ``(batch, heads, seq_k,
    d)`` and ``v`` ``(batch, heads, seq_k, d_v)`` (``heads`` may be 1 for ``k`` and ``v``: shared
    by every query head); ``indices_or_mask``: either :func:`topk_indices`' ``(batch, seq_q,
    top)`` (``-1``: none) or a boolean ``(batch, seq_q, seq_k)``, True at the keys read, shared
    by the heads as DeepSeek's indexer shares them, or either with a ``heads`` axis after
    ``batch`` (one choice per head). Nothing else is masked: the choice carries causality.
    ``softmax(q · kᵀ · scale)`` over the chosen keys (``scale``: ``1/√d`` by default), in
    float32 for lower precisions (as Hugging Face's eager attention), in float64 for float64.
    """
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(f"need q, k, v of shape (batch, heads, seq, d); got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    b, h, n, d = q.shape
    m = k.shape[2]
    if (k.shape[0] != b or k.shape[3] != d or k.shape[1] not in (1, h)
            or v.shape[:3] != k.shape[:3]):
        raise ValueError(f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} "
                         f"disagree: need k ({b}, {h} or 1, seq_k, {d}) and v of k's batch, "
                         "heads and seq_k")
    chosen = indices_or_mask
    if chosen.dtype != torch.bool:
        chosen = mask_from_indices(chosen, m)
    if chosen.dim() == 3:
        chosen = chosen.unsqueeze(1)
    if chosen.dim() != 4 or chosen.shape[0] != b or chosen.shape[1] not in (1, h) or (
            chosen.shape[2:] != (n, m)):
        raise ValueError(f"the choice {tuple(indices_or_mask.shape)} does not fit q "
                         f"{tuple(q.shape)} and k {tuple(k.shape)}: need a mask ({b}, [{h},] "
                         f"{n}, {m}) or indices ({b}, [{h},] {n}, top)")
    if not chosen.any(-1).all():
        raise ValueError("a query reads no key: each row of the choice needs at least one key")
    scale = d**-0.5 if scale is None else scale
    scores = (q @ k.transpose(2, 3)) * scale
    scores = scores.masked_fill(~chosen, float("-inf"))
    dtype = torch.promote_types(q.dtype, torch.float32)
    weights = torch.softmax(scores, dim=-1, dtype=dtype).to(q.dtype)
    return weights @ v


@dataclass(frozen=True)
class Work:
    """The multiply-adds of causal attention over ``T`` tokens, dense and sparse (chapter 13).

    ``pairs_dense``: the (query, key) pairs dense attention reads, ``T(T + 1)/2``;
    ``pairs_sparse``: those top-k attention reads, ``Σ_t min(k, t + 1)``; ``dense`` and
    ``sparse``: their multiply-adds, ``heads · (d_qk + d_v)`` a pair (the score, then the
    value's share); ``indexer``: the lightning indexer's, ``index_heads · (index_dim + 1)`` a
    *dense* pair (each head's score and its weight). Projections, linear in ``T``, are left out.
    """

    pairs_dense: int
    pairs_sparse: int
    dense: int
    sparse: int
    indexer: int

    @property
    def ratio(self) -> float:
        """``dense / (sparse + indexer)``: how many times less work DSA does."""
        return self.dense / (self.sparse + self.indexer)


def work(seq: int, k: int, *, heads: int, d_qk: int, d_v: int | None = None,
         index_heads: int = 0, index_dim: int = 0) -> Work:
    """Count the work of dense and of top-``k`` causal attention over ``seq`` tokens.

    Introduced in chapter 13. ``heads`` attention heads with queries and keys of width ``d_qk``
    and values of width ``d_v`` (``d_qk`` by default); the indexer has ``index_heads`` heads of
    width ``index_dim`` (0: no indexer, as for the oracle of :func:`only_top_k`). DeepSeek-V3.2
    (absorbed MLA): ``heads=128, d_qk=576, d_v=512, index_heads=64, index_dim=128, k=2048``.
    """
    _positive(seq=seq, k=k, heads=heads, d_qk=d_qk)
    d_v = d_qk if d_v is None else d_v
    _positive(d_v=d_v)
    for name, value in (("index_heads", index_heads), ("index_dim", index_dim)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be an integer ≥ 0; got {name}={value!r}")
    dense_pairs = seq * (seq + 1) // 2
    kept = min(k, seq)  # queries 0 … kept - 1 read all t + 1 keys, the others k
    sparse_pairs = kept * (kept + 1) // 2 + (seq - kept) * k
    per_pair = heads * (d_qk + d_v)
    return Work(dense_pairs, sparse_pairs, per_pair * dense_pairs, per_pair * sparse_pairs,
                index_heads * (index_dim + 1) * dense_pairs if index_dim else 0)


def topk_mass(weights: torch.Tensor, k: int) -> float:
    """The mean share of each query's attention its ``k`` largest weights hold.

    Introduced in chapter 13. ``weights`` ``(..., seq)``: rows of attention weights (each sums
    to 1; masked keys have weight 0); the sum of each row's ``k`` largest, averaged over every
    row. A row with ``k`` or fewer keys keeps all its mass: 1.
    """
    _positive(k=k)
    if weights.dim() < 1 or not weights.is_floating_point() or weights.shape[-1] < 1:
        raise ValueError(f"weights must be a float tensor (..., seq); got {tuple(weights.shape)}")
    if (weights < 0).any() or not torch.allclose(weights.sum(-1), weights.new_ones(()),
                                                 atol=1e-4):
        raise ValueError("each row of weights must be ≥ 0 and sum to 1 (attention weights)")
    top = weights.topk(min(k, weights.shape[-1]), dim=-1).values  # ties: the same values
    return float(top.sum(-1).mean())


def uniform_mass(seq: int, k: int) -> float:
    """:func:`topk_mass` of causal attention spread evenly over every visible key: query ``t``
    keeps ``min(k, t + 1) / (t + 1)``, averaged over ``t = 0 … seq - 1``. The control for a
    trained model's mass: attention with no favourites. Introduced in chapter 13."""
    _positive(seq=seq, k=k)
    return float(np.mean([min(k, t + 1) / (t + 1) for t in range(seq)]))


def _attention_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The attention layers of ``model`` that take a ``score_filter``: chapter 12's
    :class:`~course_attention.modern.ModernAttention` (and chapter 13's latent attention)."""
    layers = [m for m in model.modules()
              if isinstance(m, ModernAttention) or _is_latent_attention(m)]
    if not layers:
        raise ValueError(f"{type(model).__name__} has no attention layer with a score_filter "
                         "(modern.ModernAttention, mla.MultiHeadLatentAttention)")
    return layers


def _is_latent_attention(module: torch.nn.Module) -> bool:
    from . import mla

    return isinstance(module, mla.MultiHeadLatentAttention) and hasattr(module, "score_filter")


@contextlib.contextmanager
def _filtered(model: torch.nn.Module, keep: Any) -> Iterator[torch.nn.Module]:
    layers = _attention_layers(model)
    before = [layer.score_filter for layer in layers]
    try:
        for layer in layers:
            layer.score_filter = keep
        yield model
    finally:
        for layer, old in zip(layers, before, strict=True):
            layer.score_filter = old


@torch.no_grad()
def attention_weights(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Every layer's attention weights, ``(layers, batch, heads, seq, seq)``, as ``model``'s
    layers compute them on ``tokens`` ``(batch, seq)`` (the softmax, in float32, of the scores
    each layer hands its ``score_filter``). Introduced in chapter 13."""
    seen: list[torch.Tensor] = []

    def spy(scores: torch.Tensor) -> torch.Tensor:
        seen.append(torch.softmax(scores, dim=-1, dtype=torch.float32))
        return scores

    with _filtered(model, spy):
        model(tokens)
    return torch.stack(seen)


@torch.no_grad()
def mass_by_k(model: torch.nn.Module, tokens: torch.Tensor, ks: Sequence[int]
              ) -> dict[int, float]:
    """``{k: topk_mass}`` of ``model``'s attention on ``tokens`` ``(batch, seq)``, every layer and
    head together (chapter 13; one forward pass, :func:`attention_weights`)."""
    weights = attention_weights(model, tokens)
    return {int(k): topk_mass(weights, k) for k in ks}


def only_top_k(model: torch.nn.Module, k: int, shared: bool = False
               ) -> contextlib.AbstractContextManager[Any]:
    """Within ``with only_top_k(model, k):`` every head of ``model`` reads only the ``k`` keys of
    its own highest scores (each query, each head: :func:`topk_mask` of the true scores).

    Introduced in chapter 13. The oracles DeepSeek's indexer is trained to imitate: with
    ``shared``, one set of keys for all the heads of a layer, those of the largest summed
    attention weight ``Σ_h p_h`` (the indexer's training target, and its single choice for every
    head); without, each head its own (more generous). ``model``: a
    :class:`~course_attention.modern.ModernGPT` or an :class:`~course_attention.mla.MLAGPT`
    (anything holding their
    attention layers); each layer gets its ``score_filter`` back on leaving. With ``k`` ≥ the
    sequence every visible key is kept and the model computes exactly what it computes without.
    """
    _positive(k=k)

    def keep(scores: torch.Tensor) -> torch.Tensor:  # (batch, heads, n, past + n)
        if not shared:
            return scores.masked_fill(~topk_mask(scores, k, causal=False), float("-inf"))
        summed = torch.softmax(scores, dim=-1, dtype=torch.float32).sum(1, keepdim=True)
        hidden = torch.isneginf(scores).all(1, keepdim=True)
        chosen = topk_mask(summed.masked_fill(hidden, float("-inf")), k, causal=False)
        return scores.masked_fill(~chosen, float("-inf"))

    return _filtered(model, keep)


def only_random_k(model: torch.nn.Module, k: int, seed: int = 0
                  ) -> contextlib.AbstractContextManager[Any]:
    """The control for :func:`only_top_k`: each head and query reads ``k`` of its visible keys
    drawn at random (``seed``; a query that sees fewer keeps all). Same sparsity, no choice.
    Introduced in chapter 13."""
    _positive(k=k)
    generator = torch.Generator().manual_seed(seed)

    def keep(scores: torch.Tensor) -> torch.Tensor:
        noise = torch.rand(scores.shape, generator=generator).to(scores.device)
        noise = noise.masked_fill(torch.isneginf(scores), float("-inf"))
        return scores.masked_fill(~topk_mask(noise, k, causal=False), float("-inf"))

    return _filtered(model, keep)


@torch.no_grad()
def loss_by_k(model: torch.nn.Module, ids: np.ndarray, ks: Sequence[int],
              shared: bool = False) -> dict[int, float]:
    """``{k: validation loss}`` of ``model`` on ``ids`` ``(n,)`` with each head restricted to its
    top ``k`` keys (:func:`only_top_k`; ``shared``: one set per layer), in nats per character
    (chapter 8's ``gpt.validation_loss``: windows of the model's context). Introduced in
    chapter 13."""
    from .gpt import validation_loss

    out = {}
    for k in ks:
        with only_top_k(model, int(k), shared):
            out[int(k)] = validation_loss(model, ids)
    return out


#: The ``k`` chapter 13 measures: 1 to the whole context of chapter 12's models (48).
SPARSE_KS: tuple[int, ...] = (1, 2, 4, 8, 16, 48)
#: The ``k`` at which chapter 13 measures the shared oracle (one set of keys per layer).
SHARED_KS: tuple[int, ...] = (1, 8)
#: How many validation windows (of the model's context) :func:`sparse_results` scores: 128 · 48
#: = 6,144 characters, a quarter of the text, so that ten losses take about 1 s.
LOSS_WINDOWS = 128
#: The ``k`` at which random keys (:func:`only_random_k`) are the control for the top ``k``.
RANDOM_K = 8


@dataclass(frozen=True)
class SparseResults:
    """What chapter 13 measures of one trained model (one seed): ``mass`` ``{k: topk_mass}`` on
    the probe batch, ``uniform`` ``{k: uniform_mass}``, ``loss`` ``{k: validation loss}`` with
    each head's top ``k`` keys, ``shared`` the same at :data:`SHARED_KS` with one set of keys
    per layer (``only_top_k(shared=True)``, DSA's form), ``dense`` the loss without
    restriction, ``random`` the loss with :data:`RANDOM_K` random keys, ``context`` the model's
    context ``T``."""

    seed: int
    context: int
    mass: dict[int, float]
    uniform: dict[int, float]
    loss: dict[int, float]
    dense: float
    random: float
    shared: dict[int, float]


def sparse_results(model: torch.nn.Module, seed: int, ks: Sequence[int] = SPARSE_KS,
                   valid: np.ndarray | None = None, windows: int = LOSS_WINDOWS
                   ) -> SparseResults:
    """Measure :class:`SparseResults` of a trained ``model`` (a ``ModernGPT`` or ``MLAGPT`` of
    chapter 8's context, e.g. ``mla.compare.train_model(name, seed).model``; ``seed`` is
    recorded, and seeds the random control) on chapter 8's validation text (``valid`` ``(n,)``,
    loaded when ``None``): the mass on ``modern.compare.probe_batch``, every loss on the text's
    first ``windows`` windows of the model's context, on one torch thread. Introduced in
    chapter 13; about 1 s."""
    from .gpt import validation_loss
    from .modern import compare
    from .training import torch_threads

    _attention_layers(model)  # refuses a model it cannot restrict
    _positive(windows=windows)
    if valid is None:
        from . import corpus

        valid = corpus.load().valid
    context = model.config.context
    probe = compare.probe_batch(valid, context)
    valid = np.asarray(valid)[: windows * context + 1]
    ks = sorted({int(k) for k in ks})
    with torch_threads(1), torch.no_grad():  # small tensors: one thread is the fastest
        mass = mass_by_k(model, probe, ks)
        with only_random_k(model, RANDOM_K, seed):
            random = validation_loss(model, valid)
        dense = validation_loss(model, valid)
        loss = loss_by_k(model, valid, ks)
        shared = loss_by_k(model, valid, SHARED_KS, shared=True)
    return SparseResults(seed, context, mass, {k: uniform_mass(context, k) for k in ks}, loss,
                         dense, random, shared)


#: Chapter 13's margins, in nats per character and shares of attention mass, each well inside
#: what chapters 12 and 13's trained models measured on seeds 0–2 under three CPU kernels
#: (chapter 12's ``"modern"``, chapter 13's ``"mha"``, ``"gqa"`` and ``"mla"``; the range in
#: brackets): the top :data:`TOP_K_NEAR` keys of 48 lose at most :data:`NEAR_LOSS` (-0.0003 to
#: 0.0099) …
TOP_K_NEAR = 8
#: … (that bound, in nats per character) …
NEAR_LOSS = 0.025
#: … one key alone loses more than :data:`ONE_KEY_LOSS`, the noise (0.0057 to 0.18: little in
#: the models without QK-norm, whose heads are sharper) …
ONE_KEY_LOSS = 0.002
#: … :data:`RANDOM_K` random keys lose at least :data:`RANDOM_GAP` more than the top
#: :data:`RANDOM_K` (0.18 to 0.62) …
RANDOM_GAP = 0.1
#: … one key shared by a layer's heads loses at least :data:`SHARED_GAP` more than each head's
#: own key (0.050 to 0.59), while the top :data:`TOP_K_NEAR` shared keys still lose at most
#: :data:`NEAR_LOSS` (-0.0008 to 0.0157) …
SHARED_GAP = 0.025
#: … and the top 4 keys of the trained heads hold at least :data:`MASS_GAIN` more of the mass
#: than the top 4 of evenly spread attention (0.52 to 0.70 more).
MASS_GAIN = 0.3


def check_sparse_claims(results: SparseResults) -> None:
    """Assert every claim chapter 13 makes about top-k attention in a trained model (one seed).

    Introduced in chapter 13; the chapter calls it for seed 0, ``tests/test_sparse.py`` for
    seeds 1 and 2. Raises ``AssertionError`` naming each claim that fails:

    - the mass the top ``k`` keys hold grows with ``k`` and is 1 at ``k = T`` (within 1e-6);
    - the trained heads are concentrated: their top 4 keys hold at least :data:`MASS_GAIN` more
      than the top 4 of evenly spread attention (:func:`uniform_mass`, the control);
    - at ``k = T`` the loss is the dense loss, exactly (every visible key is kept);
    - the loss never falls as ``k`` shrinks, beyond 0.002 nats of noise;
    - the top :data:`TOP_K_NEAR` keys of ``T`` lose at most :data:`NEAR_LOSS` nats;
    - one key alone loses more than :data:`ONE_KEY_LOSS` nats (sparsity has a price);
    - :data:`RANDOM_K` random keys lose at least :data:`RANDOM_GAP` nats more than the top
      :data:`RANDOM_K` (the control: which keys, not how many, keeps the loss down);
    - one set of keys for all of a layer's heads (DSA's form): one key loses at least
      :data:`SHARED_GAP` nats more than one key per head, but the top :data:`TOP_K_NEAR` still
      lose at most :data:`NEAR_LOSS`.

    Not claimed: the order of the seeds or models, or how much one key loses (from 0.006 nats in
    the sharp heads of models without QK-norm to 0.18 in chapter 12's QK-norm model).
    """
    r, ks = results, sorted(results.loss)
    needed = {1, 4, TOP_K_NEAR, RANDOM_K, r.context}
    if (ks != sorted(results.mass) or ks[-1] != r.context or not needed <= set(ks)
            or not {1, TOP_K_NEAR} <= set(r.shared)):
        raise ValueError(f"need mass and loss at the same k, including {sorted(needed)}, up to "
                         f"T={r.context}, and shared at 1 and {TOP_K_NEAR}; got {sorted(r.mass)}, "
                         f"{ks} and {sorted(r.shared)}")
    mass, loss = [r.mass[k] for k in ks], [r.loss[k] for k in ks]
    checks = {
        "the mass grows with k": all(a < b for a, b in pairwise(mass)),
        "the mass is 1 at k = T": abs(mass[-1] - 1.0) <= 1e-6,
        f"the top 4 hold ≥ {MASS_GAIN} more than even attention's": r.mass[4]
        >= r.uniform[4] + MASS_GAIN,
        "the loss at k = T is the dense loss": r.loss[r.context] == r.dense,
        "the loss never falls as k shrinks": all(a >= b - 0.002 for a, b in pairwise(loss)),
        f"the top {TOP_K_NEAR} lose ≤ {NEAR_LOSS} nats": r.loss[TOP_K_NEAR] - r.dense
        <= NEAR_LOSS,
        f"one key loses > {ONE_KEY_LOSS} nats": r.loss[1] - r.dense > ONE_KEY_LOSS,
        f"{RANDOM_K} random keys lose ≥ {RANDOM_GAP} more than the top {RANDOM_K}": r.random
        >= r.loss[RANDOM_K] + RANDOM_GAP,
        f"one shared key loses ≥ {SHARED_GAP} more than one per head": r.shared[1]
        >= r.loss[1] + SHARED_GAP,
        f"the top {TOP_K_NEAR} shared keys lose ≤ {NEAR_LOSS} nats": r.shared[TOP_K_NEAR]
        - r.dense <= NEAR_LOSS,
    }
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise AssertionError(
            f"chapter 13's sparse claims fail on seed {r.seed}: {failed} (mass "
            f"{ {k: round(v, 3) for k, v in r.mass.items()} }, even "
            f"{ {k: round(v, 3) for k, v in r.uniform.items()} }, loss "
            f"{ {k: round(v, 4) for k, v in r.loss.items()} }, dense {r.dense:.4f}, random "
            f"{r.random:.4f}, shared {r.shared})")
