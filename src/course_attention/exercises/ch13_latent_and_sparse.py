"""Exercises of chapter 13 (DeepSeek's attention): MLA's cache per token, absorbing ``W_UK`` into
the query, the rotary and non-rotary parts of a score, and top-k selection under a causal mask.

Introduced in chapter 13. The learner writes numpy in float64; each reference is the package's
own code (:func:`course_attention.mla.cache_bytes_per_token`,
:meth:`~course_attention.mla.MultiHeadLatentAttention.expand`,
:func:`course_attention.numpy_ref.rotary`, :func:`course_attention.sparse.topk_mask`), and
``tests/test_exercises_latent.py`` checks that they equal what
:class:`~course_attention.mla.MultiHeadLatentAttention` and :mod:`course_attention.sparse`
compute.
"""

from __future__ import annotations

import math

import numpy as np

from ..i18n import N_
from .core import Exercise, Mistake, register, rng

# --- 1: MLA's cache bytes per token -----------------------------------------------------------


def _cache_bytes_reference(n_layers: int, n_heads: int, d_head: int, d_c: int, d_rope: int,
                           bytes_per_number: int) -> int:
    """Bytes MLA caches per token, all layers: ``n_layers · (d_c + d_rope) · bytes``
    (:func:`~course_attention.mla.cache_bytes_per_token`); ``n_heads`` and ``d_head`` are the
    config's, and do not enter."""
    from ..mla import PublishedConfig, cache_bytes_per_token

    config = PublishedConfig("exercise", "MLA", int(n_layers), int(n_heads), int(n_heads),
                             int(d_head), "", "", d_c=int(d_c), d_rope=int(d_rope))
    return cache_bytes_per_token(config, int(bytes_per_number))


CACHE_MISTAKES = (
    Mistake(
        N_(
            "every head's keys and values counted, 2 · n_heads · d_head per layer: that is what "
            "multi-head attention caches; MLA caches one latent and one rotary key per token"
        ),
        lambda L, H, dh, dc, dr, b: L * 2 * H * dh * b,
        hint=N_(
            "MLA rebuilds every head's keys and values from the latent c_KV when it attends: the "
            "cache holds only what the up-projections read, c_KV (d_c) and the shared k_rope "
            "(d_rope)."
        ),
    ),
    Mistake(
        N_(
            "the rotary key forgotten: besides the latent (d_c), each token caches the decoupled "
            "rotary key k_rope (d_rope), shared by the heads"
        ),
        lambda L, H, dh, dc, dr, b: L * dc * b,
    ),
    Mistake(
        N_(
            "a latent for the keys and another for the values (2 · d_c): one latent c_KV serves "
            "both, W_UK and W_UV read the same vector"
        ),
        lambda L, H, dh, dc, dr, b: L * (2 * dc + dr) * b,
        hint=N_(
            "the keys and the values come from the same latent: k = W_UK c_KV and v = W_UV c_KV, "
            "so it is cached once."
        ),
    ),
    Mistake(
        N_(
            "everything doubled, 2 · (d_c + d_rope), as for chapter 11's keys and values: MLA "
            "caches the latent and the rotary key once each"
        ),
        lambda L, H, dh, dc, dr, b: L * 2 * (dc + dr) * b,
    ),
    Mistake(
        N_(
            "multiplied by n_heads: the latent and the rotary key are shared by all heads, so "
            "the cache does not grow with the number of heads"
        ),
        lambda L, H, dh, dc, dr, b: L * H * (dc + dr) * b,
        hint=N_(
            "count what one token stores in one layer, then multiply by the layers and the "
            "bytes: no head count enters, since every head reads the same c_KV and k_rope."
        ),
    ),
    Mistake(
        N_(
            "one rotary key per head (n_heads · d_rope): the decoupled rotary key is one vector "
            "per token, shared by all heads"
        ),
        lambda L, H, dh, dc, dr, b: L * (dc + H * dr) * b,
    ),
    Mistake(
        N_("one layer counted: every layer caches its own latent and rotary key"),
        lambda L, H, dh, dc, dr, b: (dc + dr) * b,
    ),
    Mistake(
        N_("numbers counted, not bytes: multiply by bytes_per_number"),
        lambda L, H, dh, dc, dr, b: L * (dc + dr),
    ),
)


def _cache_cases() -> list[tuple]:
    return [
        (61, 128, 128, 512, 64, 2),  # DeepSeek-V3 in bfloat16
        (27, 16, 128, 512, 64, 2),  # DeepSeek-V2-Lite
        (2, 4, 16, 16, 4, 8),  # the course's scale, in float64
        (12, 6, 32, 48, 16, 4),  # float32
    ]


# --- 2: absorbing W_UK into the query ---------------------------------------------------------


def _module(n_heads: int, d_c: int, d_nope: int, d_rope: int, d_v: int):
    """A :class:`~course_attention.mla.MultiHeadLatentAttention` of this shape in float64, built
    without touching torch's random state (its weights are overwritten)."""
    import torch

    from ..mla import MLAConfig, MultiHeadLatentAttention

    config = MLAConfig(d_model=8, n_heads=n_heads, d_c=d_c, d_nope=d_nope, d_rope=d_rope,
                       d_v=d_v)
    with torch.random.fork_rng(devices=[]):
        return MultiHeadLatentAttention(config).double()


def _absorbed_reference(q_nope: np.ndarray, c_kv: np.ndarray, kv_b_weight: np.ndarray,
                        d_rope: int) -> np.ndarray:
    """``(batch, heads, seq_q, seq_k)``: each head's non-rotary score share
    ``q_nope · (W_UK c_KV) / √(d_nope + d_rope)``, the keys rebuilt by the package
    (:meth:`~course_attention.mla.MultiHeadLatentAttention.expand`)."""
    import torch

    q_nope, c_kv = np.asarray(q_nope, dtype=float), np.asarray(c_kv, dtype=float)
    n_heads, d_nope = q_nope.shape[1], q_nope.shape[-1]
    d_c = c_kv.shape[-1]
    d_v = kv_b_weight.shape[0] // n_heads - d_nope
    attn = _module(n_heads, d_c, d_nope, int(d_rope), d_v)
    with torch.no_grad():
        attn.kv_b_proj.weight.copy_(torch.from_numpy(np.asarray(kv_b_weight, dtype=float)))
        k_nope = attn.expand(torch.from_numpy(c_kv))[0]  # (batch, heads, seq_k, d_nope)
        return (torch.from_numpy(q_nope) @ k_nope.transpose(2, 3) * attn.scale).numpy()


def _absorbed(q_nope, c_kv, kv_b_weight, d_rope, *, rows="keys", scale="d_qk",
              transposed=False):
    """The absorbed scores, with one step done the way a catalogued mistake does it."""
    h, d_nope, d_c = q_nope.shape[1], q_nope.shape[-1], c_kv.shape[-1]
    per_head = kv_b_weight.reshape(h, -1, d_c)  # (heads, d_nope + d_v, d_c)
    w_uk = {
        "keys": per_head[:, :d_nope],
        "values": per_head[:, d_nope:2 * d_nope],  # W_UV (the cases have d_v = d_nope)
        "split first": kv_b_weight[: h * d_nope].reshape(h, d_nope, d_c),
        "head 0": np.broadcast_to(kv_b_weight[:d_nope], (h, d_nope, d_c)),
    }[rows]
    q_c = np.einsum("bhqn,hnc->bhqc", q_nope, w_uk)  # (batch, heads, seq_q, d_c)
    scores = q_c @ c_kv[:, None].swapaxes(-1, -2)  # (batch, heads, seq_q, seq_k)
    if transposed:
        scores = scores.swapaxes(-1, -2)
    width = {"d_qk": d_nope + d_rope, "d_nope": d_nope, "d_c": d_c, "none": 1}[scale]
    return scores / math.sqrt(width)


def _absorbed_mistake(**how: object):
    return lambda *args: _absorbed(*args, **how)


_LAYOUT_HINT = N_(
    "kv_b_weight.reshape(n_heads, d_nope + d_v, d_c): each head's block holds its d_nope key "
    "rows (W_UK) first, then its d_v value rows (W_UV)."
)

ABSORB_MISTAKES = (
    Mistake(
        N_(
            "the value rows (W_UV) used: in each head's block of kv_b_weight the d_nope key rows "
            "come first, then the d_v value rows"
        ),
        _absorbed_mistake(rows="values"),
        hint=_LAYOUT_HINT,
    ),
    Mistake(
        N_(
            "the keys taken as the first n_heads · d_nope rows: kv_b_weight is split into heads "
            "first, (n_heads, d_nope + d_v, d_c), and each head's block into keys and values"
        ),
        _absorbed_mistake(rows="split first"),
        hint=_LAYOUT_HINT,
    ),
    Mistake(
        N_(
            "head 0's W_UK (the first d_nope rows) used for every head: each head has its own "
            "block of kv_b_weight"
        ),
        _absorbed_mistake(rows="head 0"),
        hint=_LAYOUT_HINT,
    ),
    Mistake(
        N_("the scores not divided by √(d_nope + d_rope)"),
        _absorbed_mistake(scale="none"),
    ),
    Mistake(
        N_(
            "divided by √d_nope: the score is scaled by the width of the whole head, "
            "√(d_nope + d_rope), even for its non-rotary share"
        ),
        _absorbed_mistake(scale="d_nope"),
    ),
    Mistake(
        N_(
            "divided by √d_c, the width of the absorbed query: absorbing changes no score, so "
            "the scale stays 1/√(d_nope + d_rope)"
        ),
        _absorbed_mistake(scale="d_c"),
        hint=N_(
            "absorption regroups the same product, q · (W_UK c) = (q W_UK) · c: every number "
            "is the naive score, scale included."
        ),
    ),
    Mistake(
        N_(
            "the scores transposed, (batch, heads, seq_k, seq_q): each query's row holds its "
            "scores against every latent"
        ),
        _absorbed_mistake(transposed=True),
    ),
)


def _absorb_cases() -> list[tuple]:
    gen = rng(131)

    def case(batch: int, heads: int, seq_q: int, seq_k: int, d_nope: int, d_c: int,
             d_rope: int) -> tuple:
        return (gen.normal(size=(batch, heads, seq_q, d_nope)),
                gen.normal(size=(batch, seq_k, d_c)),
                gen.normal(size=(heads * 2 * d_nope, d_c)) / math.sqrt(d_c),  # d_v = d_nope
                d_rope)

    return [
        case(1, 2, 2, 3, 3, 4, 2),
        case(2, 4, 3, 5, 8, 16, 4),  # three new queries against five cached latents
        case(1, 3, 1, 6, 4, 10, 4),  # one decode step
        case(1, 2, 4, 4, 6, 8, 4),
    ]


# --- 3: the rotary and the non-rotary parts ---------------------------------------------------


def _rotate(x: np.ndarray, positions: np.ndarray | None, theta: float) -> np.ndarray:
    from ..numpy_ref import rotary

    return rotary(x, positions, theta, pairs="halves")  # (..., seq, d)


def _split_scores(q, k_nope, k_rope, positions, theta, *, rotate="rope", order="nope first",
                  scale="d_qk", shared=True):
    """The decoupled scores, with one step done the way a catalogued mistake does it."""
    d_nope, d_rope = k_nope.shape[-1], k_rope.shape[-1]
    if order == "nope first":
        q_nope, q_rope = q[..., :d_nope], q[..., d_nope:]
    else:
        q_rope, q_nope = q[..., :d_rope], q[..., d_rope:]
    k_rope = k_rope[:, None] if shared else k_rope  # (batch, 1, seq, d_rope): one for all heads
    if rotate == "whole":  # one rotation over the whole head, [nope | rope]
        k = np.concatenate([k_nope, np.broadcast_to(k_rope, (*k_nope.shape[:-1], d_rope))], -1)
        scores = _rotate(q, positions, theta) @ _rotate(k, positions, theta).swapaxes(-1, -2)
    else:
        if rotate in ("rope", "both", "key only"):
            k_rope = _rotate(k_rope, positions, theta)
        if rotate in ("rope", "both"):
            q_rope = _rotate(q_rope, positions, theta)
        if rotate == "both":
            q_nope, k_nope = _rotate(q_nope, positions, theta), _rotate(k_nope, positions, theta)
        nope = q_nope @ k_nope.swapaxes(-1, -2)
        rope = q_rope @ k_rope.swapaxes(-1, -2)  # (batch, heads, seq, seq)
        if scale == "each":
            return nope / math.sqrt(d_nope) + rope / math.sqrt(d_rope)
        scores = nope + rope
    width = {"d_qk": d_nope + d_rope, "d_nope": d_nope}[scale]
    return scores / math.sqrt(width)


def _split_reference(q: np.ndarray, k_nope: np.ndarray, k_rope: np.ndarray,
                     positions: np.ndarray, theta: float) -> np.ndarray:
    """``(batch, heads, seq, seq)``: the scores :class:`~course_attention.mla.
    MultiHeadLatentAttention` hands to its softmax, before the causal mask."""
    return _split_scores(np.asarray(q, dtype=float), np.asarray(k_nope, dtype=float),
                         np.asarray(k_rope, dtype=float), positions, theta)


def _split_mistake(**how: object):
    return lambda *args: _split_scores(*args, **how)


SPLIT_MISTAKES = (
    Mistake(
        N_(
            "the non-rotary parts rotated too: only q_rope and the shared k_rope turn; q_nope · "
            "k_nope must not depend on the positions, or W_UK could not be absorbed"
        ),
        _split_mistake(rotate="both"),
        hint=N_(
            "RoPE touches only the last d_rope features of the query and the shared rotary key; "
            "q_nope and k_nope meet unrotated."
        ),
    ),
    Mistake(
        N_(
            "one rotation over the whole head (d_nope + d_rope features): only the d_rope rotary "
            "features turn, with rotate_half pairs of width d_rope"
        ),
        _split_mistake(rotate="whole"),
        hint=N_(
            "rotate q_rope and k_rope, each of width d_rope, on their own: the rotation's pairs "
            "are (i, i + d_rope/2) inside the rotary part."
        ),
    ),
    Mistake(
        N_(
            "the query's rotary part taken first: as in Hugging Face's DeepseekV3Attention, "
            "each head's query is d_nope non-rotary features, then d_rope rotary ones"
        ),
        _split_mistake(order="rope first"),
        hint=N_("q_nope, q_rope = q[..., :d_nope], q[..., d_nope:], with d_nope = "
                "k_nope.shape[-1]."),
    ),
    Mistake(
        N_(
            "the shared rotary key used without a heads axis: numpy lined its batch axis up with "
            "the query's heads, so head h read sample h's key; write k_rope[:, None]"
        ),
        _split_mistake(shared=False),
        hint=N_(
            "k_rope is `(batch, seq, d_rope)`, one key for all heads: give it a heads axis of "
            "size 1, k_rope[:, None], before multiplying with q_rope `(batch, heads, seq, "
            "d_rope)`."
        ),
    ),
    Mistake(
        N_("the rotary parts not rotated: q_rope and k_rope turn by their positions (RoPE)"),
        _split_mistake(rotate="none"),
    ),
    Mistake(
        N_("only the key rotated: the query's rotary part turns by its position too"),
        _split_mistake(rotate="key only"),
    ),
    Mistake(
        N_(
            "divided by √d_nope only: the score of a head is scaled by its whole width, "
            "√(d_nope + d_rope)"
        ),
        _split_mistake(scale="d_nope"),
    ),
    Mistake(
        N_(
            "each part divided by the root of its own width: the sum q_nope · k_nope + q_rope · "
            "k_rope is divided once, by √(d_nope + d_rope)"
        ),
        _split_mistake(scale="each"),
    ),
)


def _split_cases() -> list[tuple]:
    gen = rng(133)

    def case(batch: int, heads: int, seq: int, d_nope: int, d_rope: int, start: int,
             theta: float) -> tuple:
        return (gen.normal(size=(batch, heads, seq, d_nope + d_rope)),
                gen.normal(size=(batch, heads, seq, d_nope)),
                gen.normal(size=(batch, seq, d_rope)),
                np.arange(start, start + seq), theta)

    # batch = heads in every case: a rotary key without its heads axis then runs, wrongly
    return [
        case(2, 2, 3, 4, 2, 1, 10000.0),
        case(2, 2, 4, 6, 4, 5, 10000.0),
        case(3, 3, 5, 8, 4, 2, 100.0),
        case(2, 2, 2, 2, 6, 9, 1000.0),  # d_rope > d_nope
    ]


# --- 4: top-k selection under a causal mask ---------------------------------------------------


def _topk_reference(scores: np.ndarray, k: int) -> np.ndarray:
    """``(seq, seq)`` bool: the keys each query reads (:func:`~course_attention.sparse.
    topk_mask`, causal)."""
    import torch

    from ..sparse import topk_mask

    return topk_mask(torch.from_numpy(np.asarray(scores, dtype=float)), int(k)).numpy()


def _visible(seq: int) -> np.ndarray:
    return np.tril(np.ones((seq, seq), dtype=bool))


def _chosen(values: np.ndarray, k: int, axis: int = -1, smallest: bool = False) -> np.ndarray:
    """True at the ``k`` highest (``smallest``: lowest) entries along ``axis``."""
    order = np.argsort(values if smallest else -values, axis=axis, kind="stable")
    top = order[:k] if axis == 0 else order[..., :k]
    mask = np.zeros(values.shape, dtype=bool)
    np.put_along_axis(mask, top, True, axis=axis)
    return mask


def _masked(scores: np.ndarray) -> np.ndarray:
    return np.where(_visible(scores.shape[-1]), scores, -np.inf)


TOPK_MISTAKES = (
    Mistake(
        N_(
            "the top k chosen among all keys, future ones included: mask the future keys "
            "(−inf) before choosing"
        ),
        lambda scores, k: _chosen(scores, k),
        hint=N_(
            "first hide the future keys, np.where(np.tril(...), scores, -np.inf), then take each "
            "row's k highest: a query may only choose keys it can see."
        ),
    ),
    Mistake(
        N_(
            "chosen first and masked after: the future keys took places in a query's top k, so "
            "it reads fewer than k of the keys it can see"
        ),
        lambda scores, k: _chosen(scores, k) & _visible(scores.shape[-1]),
        hint=N_(
            "the order matters: mask first, then choose; masking after the choice leaves the "
            "places the future keys took empty."
        ),
    ),
    Mistake(
        N_(
            "early rows given k keys: a query that sees fewer than k keys picked future keys "
            "(their −inf scores) to make up k; it reads all the keys it sees and no others"
        ),
        lambda scores, k: _chosen(_masked(scores), k),
        hint=N_(
            "query i sees only i + 1 keys: when i + 1 < k, the last places of its top k go to "
            "−inf scores, future keys; drop them (& np.tril(...))."
        ),
    ),
    Mistake(
        N_(
            "the top k taken over the queries (axis 0) instead of the keys (the last axis): "
            "each query chooses among its own row"
        ),
        lambda scores, k: _chosen(_masked(scores), k, axis=0) & _visible(scores.shape[-1]),
    ),
    Mistake(
        N_(
            "the k smallest kept: np.argsort sorts in ascending order, so the k highest are the "
            "last k (or sort -scores)"
        ),
        lambda scores, k: _chosen(_masked(scores), k, smallest=True) & _visible(scores.shape[-1]),
    ),
)


def _topk_cases() -> list[tuple]:
    gen = rng(134)
    return [
        (np.array([[0.5, 2.0, -1.0, 0.3, 1.5],
                   [1.0, -0.5, 3.0, 0.2, -2.0],
                   [0.1, 0.9, 0.4, 2.5, -0.3],
                   [-1.2, 0.7, 0.0, 1.1, 2.2],
                   [0.6, -0.8, 1.9, 0.25, 1.3]]), 2),
        (gen.normal(size=(6, 6)), 3),
        (gen.normal(size=(8, 8)), 4),
        (gen.normal(size=(7, 7)), 2),
    ]


# --- the exercises ----------------------------------------------------------------------------

register(
    Exercise(
        id="latent-sparse-1",
        title=N_("MLA's cache bytes per token"),
        reference=_cache_bytes_reference,
        cases=_cache_cases,
        difficulty=1,
        minutes=5,
        mistakes=CACHE_MISTAKES,
        hint=N_(
            "per token and layer MLA caches the latent c_KV (d_c numbers) and the shared rotary "
            "key k_rope (d_rope numbers): return n_layers * (d_c + d_rope) * bytes_per_number. "
            "n_heads and d_head do not enter."
        ),
        nudge=N_(
            "list what one token leaves in one layer's cache: the keys and values of the heads "
            "are rebuilt from it, so they are not in the list."
        ),
    )
)

register(
    Exercise(
        id="latent-sparse-2",
        title=N_("Absorbing W_UK into the query"),
        reference=_absorbed_reference,
        cases=_absorb_cases,
        difficulty=2,
        minutes=15,
        mistakes=ABSORB_MISTAKES,
        hint=N_(
            "n_heads, d_nope = q_nope.shape[1], q_nope.shape[-1]; W_UK = kv_b_weight.reshape("
            "n_heads, -1, d_c)[:, :d_nope] (heads, d_nope, d_c); q_c = np.einsum('bhqn,hnc->bhqc', "
            "q_nope, W_UK) (batch, heads, seq_q, d_c); return q_c @ c_kv[:, None].swapaxes(-1, -2) "
            "/ np.sqrt(d_nope + d_rope)."
        ),
        nudge=N_(
            "q · (W_UK c) = (W_UKᵀ q) · c: turn each head's query into a d_c-wide vector with its "
            "own W_UK, then take its dot product with every cached latent."
        ),
    )
)

register(
    Exercise(
        id="latent-sparse-3",
        title=N_("The rotary and the non-rotary parts of a score"),
        reference=_split_reference,
        cases=_split_cases,
        difficulty=3,
        minutes=20,
        mistakes=SPLIT_MISTAKES,
        hint=N_(
            "d_nope, d_rope = k_nope.shape[-1], k_rope.shape[-1]; q_nope, q_rope = q[..., "
            ":d_nope], q[..., d_nope:]; q_rope = rope_halves(q_rope, positions, theta); k_rope = "
            "rope_halves(k_rope, positions, theta)[:, None] (batch, 1, seq, d_rope); return "
            "(q_nope @ k_nope.swapaxes(-1, -2) + q_rope @ k_rope.swapaxes(-1, -2)) / np.sqrt("
            "d_nope + d_rope)."
        ),
        nudge=N_(
            "a head's score is the sum of two dot products: the non-rotary parts unrotated, the "
            "rotary parts each turned by its position, the key's part shared by all heads; one "
            "scale, the whole head's width."
        ),
    )
)

register(
    Exercise(
        id="latent-sparse-4",
        title=N_("Top-k selection under a causal mask"),
        reference=_topk_reference,
        cases=_topk_cases,
        difficulty=2,
        minutes=10,
        mistakes=TOPK_MISTAKES,
        hint=N_(
            "visible = np.tril(np.ones((seq, seq), dtype=bool)); `masked = np.where(visible, "
            "scores, -np.inf)`; top = np.argsort(-masked, axis=-1)[:, :k]; mask = np.zeros((seq, "
            "seq), dtype=bool); `np.put_along_axis(mask, top, True, axis=-1)`; return mask & "
            "visible."
        ),
        nudge=N_(
            "mask first, then choose: hide the future keys with −inf, take each row's k highest, "
            "and keep only the chosen keys that are visible (an early row sees fewer than k)."
        ),
    )
)
