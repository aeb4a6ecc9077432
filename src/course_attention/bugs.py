"""Bugs from the tutorials this course was built from, each rewritten small, fixed and caught.

Introduced in the spot-the-bug appendix. For every bug there is a ``*_buggy`` version (the
published code or claim, rewritten in this package's style with the bug kept), a ``*_fixed``
version, and a checker ``catches_*(fn) -> bool`` that returns True when ``fn`` shows the bug.
The checkers run ``fn`` on small deterministic inputs and never print. Item 5 is a trap, not an
error: the published code is right and only the names mislead. The last two pairs are common
mistakes that no cited source made; the appendix labels them so.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch

from . import modules, toy
from . import numpy_ref as ref

__all__ = [
    "source",
    # 1-2. seed 003: causal attention with undefined names and an unshifted exp
    "causal_attention_buggy",
    "causal_attention_renamed",
    "causal_attention_fixed",
    "catches_undefined_name",
    "catches_softmax_overflow",
    # 3. seeds 000/002 (Happy-LLM): a causal flag read but never stored
    "CausalAttentionBuggy",
    "CausalAttentionFixed",
    "catches_unset_causal_flag",
    # 4. seed 000: one config field checked, another used
    "head_dim_buggy",
    "head_dim_fixed",
    "catches_config_field_mismatch",
    # 5. seed 001: K and Q swapped twice
    "msa_buggy",
    "msa_half_fixed",
    "msa_fixed",
    "catches_wrong_msa",
    # 6. seed 001: the shape of the concatenated heads
    "concat_shape_buggy",
    "concat_shape_fixed",
    "catches_wrong_concat_shape",
    # 7. seed 001: the shape of the row maxima (keepdims keeps a length-1 axis)
    "softmax_max_without_keepdims_buggy",
    "softmax_fixed",
    "catches_max_shape",
    # 8. seed 002: a dot product computed by hand
    "SEED_002_Q",
    "SEED_002_K",
    "SEED_002_V",
    "worked_scores_buggy",
    "worked_scores_fixed",
    "catches_typed_scores",
    # 9. seed 004: concatenating the values instead of the heads' outputs
    "concat_values_buggy",
    "concat_values_fixed",
    "catches_values_not_outputs",
    # 10. seed 003: a feed-forward network that reshapes with a global length
    "ffn_buggy",
    "ffn_fixed",
    "catches_ffn_reshape",
    # 11. seed 003: the referents of "it" swapped
    "referents_buggy",
    "referents_fixed",
    "catches_swapped_referents",
    # common mistakes, not from a cited source
    "flipped_mask_attention_buggy",
    "flipped_mask_attention_fixed",
    "catches_flipped_mask",
    "merge_heads_buggy",
    "merge_heads_fixed",
    "catches_merge_without_transpose",
]


def source(obj: Any) -> Any:
    """The source of ``obj`` as a Markdown code block, for a notebook to display."""
    from IPython.display import Markdown

    return Markdown(f"```python\n{inspect.getsource(obj).rstrip()}\n```")


def _qkv(seed: int, *shape: int, scale: float = 1.0) -> tuple[np.ndarray, ...]:
    Q, K, V = scale * np.random.default_rng(seed).standard_normal((3, *shape))
    return Q, K, V


def _causal_reference(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    return ref.scaled_dot_product_attention(Q, K, V, mask=ref.causal_mask(Q.shape[-2]))[0]


# --- 1-2. seed 003: causal attention, undefined names, exp without the shift ---------------


def causal_attention_buggy(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Causal attention ``(seq, d_k), (seq, d_k), (seq, d_v) → (seq, d_v)``, as published.

    The parameters are ``Q, K, V``; the body reads ``query, key, value``.
    """
    d_k, seq_len = query.shape[1], query.shape[0]  # noqa: F821
    mask = np.where(np.triu(np.ones((seq_len, seq_len)), k=1) == 0, 0.0, -1e9)  # (seq, seq)
    scores = query @ key.T / np.sqrt(d_k) + mask  # noqa: F821
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    return weights @ value  # noqa: F821


def causal_attention_renamed(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """The same with the names fixed; the softmax still exponentiates the raw scores."""
    d_k, seq_len = Q.shape[1], Q.shape[0]
    mask = np.where(np.triu(np.ones((seq_len, seq_len)), k=1) == 0, 0.0, -1e9)  # (seq, seq)
    scores = Q @ K.T / np.sqrt(d_k) + mask  # (seq, seq)
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=1, keepdims=True)
    return weights @ V


def causal_attention_fixed(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Causal attention ``(seq, d_k), (seq, d_k), (seq, d_v) → (seq, d_v)``, stable."""
    d_k, seq_len = Q.shape[1], Q.shape[0]
    mask = np.where(np.triu(np.ones((seq_len, seq_len)), k=1) == 0, 0.0, -1e9)  # (seq, seq)
    scores = Q @ K.T / np.sqrt(d_k) + mask  # (seq, seq)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))  # the largest entry becomes 1
    return e / e.sum(axis=1, keepdims=True) @ V


def catches_undefined_name(fn: Callable[..., np.ndarray]) -> bool:
    """True when calling ``fn(Q, K, V)`` raises ``NameError``."""
    try:
        fn(*_qkv(0, 4, 2))
    except NameError:
        return True
    return False


def catches_softmax_overflow(fn: Callable[..., np.ndarray]) -> bool:
    """True when ``fn(Q, K, V)`` is non-finite or wrong for scaled scores of a few hundred."""
    Q, K, V = _qkv(4, 4, 2, scale=30.0)  # scaled scores reach 1679: exp overflows float64
    with np.errstate(all="ignore"):
        out = np.asarray(fn(Q, K, V), dtype=np.float64)
    return not np.allclose(out, _causal_reference(Q, K, V))


# --- 3. seeds 000 and 002 (Happy-LLM): a causal flag read but never stored ----------------


class CausalAttentionBuggy(torch.nn.Module):
    """Single-head self-attention ``(batch, seq, d_model) → (batch, seq, d_model)``."""

    def __init__(self, d_model: int, is_causal: bool = True, max_len: int = 64):
        super().__init__()
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        if is_causal:  # the flag is read here, but never stored as self.is_causal
            self.register_buffer("allowed", torch.ones(max_len, max_len, dtype=torch.bool).tril())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Q, K, V = self.qkv(x).chunk(3, dim=-1)  # 3 × (batch, seq, d_model)
        seq = x.shape[1]
        mask = self.allowed[:seq, :seq] if self.is_causal else None
        return modules.scaled_dot_product_attention(Q, K, V, mask=mask)[0]


class CausalAttentionFixed(torch.nn.Module):
    """Single-head self-attention ``(batch, seq, d_model) → (batch, seq, d_model)``."""

    def __init__(self, d_model: int, is_causal: bool = True, max_len: int = 64):
        super().__init__()
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.is_causal = is_causal
        self.register_buffer("allowed", torch.ones(max_len, max_len, dtype=torch.bool).tril())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Q, K, V = self.qkv(x).chunk(3, dim=-1)  # 3 × (batch, seq, d_model)
        seq = x.shape[1]
        mask = self.allowed[:seq, :seq] if self.is_causal else None
        return modules.scaled_dot_product_attention(Q, K, V, mask=mask)[0]


def catches_unset_causal_flag(cls: Callable[..., torch.nn.Module]) -> bool:
    """True when ``cls(d_model, is_causal=...)`` fails, or lets the future change the past."""
    torch.manual_seed(0)
    x = torch.randn(1, 5, 8, dtype=torch.float64)  # (batch, seq, d_model)
    changed = x.clone()
    changed[:, -1] += 1.0  # a different last token
    try:
        cls(8, is_causal=False).double()(x)  # a non-causal layer (an encoder's) must run too
        layer = cls(8, is_causal=True).double()
        with torch.no_grad():
            before, after = layer(x), layer(changed)
    except AttributeError:
        return True
    return not torch.allclose(before[:, :-1], after[:, :-1])  # earlier outputs must not move


# --- 4. seed 000: one configuration field checked, another used ---------------------------


def head_dim_buggy(args: Any) -> int:
    """Width of one head from a config with ``dim`` and ``n_heads``, as published."""
    assert args.n_embd % args.n_heads == 0  # checks n_embd ...
    return args.dim // args.n_heads  # ... but splits dim


def head_dim_fixed(args: Any) -> int:
    """Width of one head, ``args.dim // args.n_heads``; ValueError when it does not divide."""
    if args.dim % args.n_heads:
        raise ValueError(f"dim={args.dim} is not divisible by n_heads={args.n_heads}")
    return args.dim // args.n_heads


def catches_config_field_mismatch(fn: Callable[[Any], int]) -> bool:
    """True when ``fn`` fails on a config without ``n_embd``, or accepts dim=100 with 8 heads."""
    try:
        fn(SimpleNamespace(dim=64, n_heads=8))
    except AttributeError:
        return True
    try:
        fn(SimpleNamespace(dim=100, n_embd=64, n_heads=8))
    except ValueError:
        return False
    return True


# --- 5. seed 001: K and Q swapped twice --------------------------------------------------


def msa_buggy(
    X: np.ndarray, mask: np.ndarray, heads: int, W_qkv: np.ndarray, W_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention ``(N, T, d) → (N, T, d)``, the names as published.

    ``W_qkv`` ``(d, 3d)`` stacks the query, key and value projections in PyTorch's order;
    ``mask`` is additive ``(T, T)`` (0 or -inf). Returns ``(output, weights)``.
    """
    K, Q, V = np.split(X @ W_qkv, 3, axis=-1)  # the first block is named K
    K, Q, V = (ref.split_heads(a, heads) for a in (K, Q, V))  # (N, heads, T, d_head)
    weights = ref.softmax(K @ Q.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]) + mask)
    return ref.merge_heads(weights @ V) @ W_out, weights


def msa_half_fixed(
    X: np.ndarray, mask: np.ndarray, heads: int, W_qkv: np.ndarray, W_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The names corrected in the split only: ``K @ Qᵀ`` is kept."""
    Q, K, V = np.split(X @ W_qkv, 3, axis=-1)
    Q, K, V = (ref.split_heads(a, heads) for a in (Q, K, V))  # (N, heads, T, d_head)
    weights = ref.softmax(K @ Q.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]) + mask)
    return ref.merge_heads(weights @ V) @ W_out, weights


def msa_fixed(
    X: np.ndarray, mask: np.ndarray, heads: int, W_qkv: np.ndarray, W_out: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention ``(N, T, d) → (N, T, d)``, names and product in order."""
    Q, K, V = np.split(X @ W_qkv, 3, axis=-1)
    Q, K, V = (ref.split_heads(a, heads) for a in (Q, K, V))  # (N, heads, T, d_head)
    weights = ref.softmax(Q @ K.swapaxes(-1, -2) / np.sqrt(Q.shape[-1]) + mask)
    return ref.merge_heads(weights @ V) @ W_out, weights


def catches_wrong_msa(fn: Callable[..., tuple[np.ndarray, np.ndarray]]) -> bool:
    """True when ``fn`` differs from :func:`~course_attention.numpy_ref.multi_head_attention`."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((2, 5, 8))  # (N, T, d)
    W_qkv, W_out = rng.standard_normal((8, 24)), rng.standard_normal((8, 8))
    causal = ref.causal_mask(5)
    W_q, W_k, W_v = np.split(W_qkv, 3, axis=-1)
    expected, _ = ref.multi_head_attention(X, X, W_q, W_k, W_v, W_out, 2, mask=causal)
    got, _ = fn(X, np.where(causal, 0.0, -np.inf), 2, W_qkv, W_out)
    return got.shape != expected.shape or not np.allclose(got, expected)


# --- 6. seed 001: the shape of the concatenated heads ------------------------------------


def concat_shape_buggy(N: int, T: int, d: int, h: int) -> tuple[int, ...]:
    """Shape of the concatenated heads, as the tutorial's step 5 states it."""
    return (N, h, T, d)


def concat_shape_fixed(N: int, T: int, d: int, h: int) -> tuple[int, ...]:
    """Shape of the concatenated heads: merge ``h`` heads of ``(N, h, T, d/h)``."""
    return ref.merge_heads(np.zeros((N, h, T, d // h))).shape


def catches_wrong_concat_shape(fn: Callable[..., tuple[int, ...]]) -> bool:
    """True when ``fn(N, T, d, h)`` is not ``(N, T, d)``, the shape ``W_o`` maps back to."""
    return any(tuple(fn(N, T, d, h)) != (N, T, d) for N, T, d, h in [(2, 5, 8, 4), (1, 3, 6, 2)])


# --- 7. seed 001: the shape of the row maxima ----------------------------------------------


def softmax_max_without_keepdims_buggy(Z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, trusting that the row maxima already have ``Z``'s shape."""
    e = np.exp(Z - Z.max(axis=-1))  # (..., n) - (..., rows): broadcast against the wrong axis
    return e / e.sum(axis=-1, keepdims=True)


def softmax_fixed(Z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``Z`` ``(..., n)``: subtract the row maxima ``(..., 1)``."""
    e = np.exp(Z - Z.max(axis=-1, keepdims=True))  # the largest entry becomes exp(0) = 1
    return e / e.sum(axis=-1, keepdims=True)


def catches_max_shape(fn: Callable[[np.ndarray], np.ndarray]) -> bool:
    """True when ``fn`` raises ``ValueError`` or differs from the softmax, on square scores too."""
    rng = np.random.default_rng(7)
    for shape in [(3, 5), (4, 4), (2, 4, 4)]:  # rows ≠ keys, square, a batch of squares
        Z = 50 * rng.standard_normal(shape)
        try:
            with np.errstate(all="ignore"):
                p = fn(Z)
        except ValueError:
            return True
        if np.shape(p) != Z.shape or not np.allclose(p, ref.softmax(Z)):
            return True
    return False


# --- 8. seed 002: a dot product computed by hand -----------------------------------------

#: The query "fruit" ``(4,)`` of seed 002's worked example.
SEED_002_Q = np.array([1.0, 0.5, -0.3, 0.8])
#: Seed 002's keys ``(3, 4)``: apple, banana, car.
SEED_002_K = np.array([[0.9, 0.4, -0.2, 0.7], [0.8, 0.6, -0.1, -0.6], [-0.5, 0.2, 0.9, -0.4]])
#: Seed 002's values ``(3, 4)``: apple, banana, car.
SEED_002_V = np.array([[1.2, 0.3, 0.5, 0.9], [1.0, 0.4, 0.6, 0.8], [0.2, 0.9, 1.1, 0.1]])


def worked_scores_buggy() -> np.ndarray:
    """Scores ``q · k`` ``(3,)`` for apple, banana, car, as typed in the tutorial."""
    return np.array([1.72, 1.61, -0.99])


def worked_scores_fixed() -> np.ndarray:
    """Scores ``q · k`` ``(3,)`` for apple, banana, car, computed from the vectors."""
    return SEED_002_K @ SEED_002_Q


def catches_typed_scores(fn: Callable[[], np.ndarray]) -> bool:
    """True when ``fn()`` is more than 0.005 from the dot products of the tutorial's vectors."""
    products = [sum(qi * ki for qi, ki in zip(SEED_002_Q, k, strict=True)) for k in SEED_002_K]
    return not np.allclose(fn(), products, atol=5e-3)


# --- 9. seed 004: concatenating the values instead of the heads' outputs -----------------


def concat_values_buggy(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, W_o: np.ndarray, heads: int
) -> np.ndarray:
    """Multi-head self-attention ``(T, d) → (T, d)`` by the tutorial's equation (3)."""
    v = ref.split_heads((X @ W_v)[None], heads)[0]  # (heads, T, d/heads): v_i of every head
    return ref.merge_heads(v[None])[0] @ W_o  # O [v_i^(1); …; v_i^(k)]


def concat_values_fixed(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray, W_o: np.ndarray, heads: int
) -> np.ndarray:
    """Multi-head self-attention ``(T, d) → (T, d)``: concatenate each head's output h_i."""
    q, k, v = (ref.split_heads((X @ W)[None], heads)[0] for W in (W_q, W_k, W_v))
    alpha = ref.softmax(q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]))  # (heads, T, T)
    h = alpha @ v  # (heads, T, d/heads): h_i of every head
    return ref.merge_heads(h[None])[0] @ W_o  # O [h_i^(1); …; h_i^(k)]


def catches_values_not_outputs(fn: Callable[..., np.ndarray]) -> bool:
    """True when ``fn`` differs from :func:`~course_attention.numpy_ref.multi_head_attention`."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 8))  # (T, d)
    W_q, W_k, W_v, W_o = rng.standard_normal((4, 8, 8))
    expected, _ = ref.multi_head_attention(X[None], X[None], W_q, W_k, W_v, W_o, 2)
    return not np.allclose(fn(X, W_q, W_k, W_v, W_o, 2), expected[0])


# --- 10. seed 003: a feed-forward network that reshapes with a global length ---------------

_S = 3  # the tutorial's global sequence length


def ffn_buggy(
    x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    """Position-wise feed-forward network on ``x`` ``(..., d)``, as published."""
    x_flat = x.reshape(-1, x.shape[-1])  # (tokens, d)
    h = np.maximum(0, x_flat @ W1 + b1)  # (tokens, d_ff)
    return (h @ W2 + b2).reshape(_S, -1)  # "restore the original 3-D shape", with the global S


def ffn_fixed(
    x: np.ndarray, W1: np.ndarray, b1: np.ndarray, W2: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    """Position-wise feed-forward network ``(..., d) → (..., d)``."""
    x_flat = x.reshape(-1, x.shape[-1])  # (tokens, d)
    h = np.maximum(0, x_flat @ W1 + b1)  # (tokens, d_ff)
    return (h @ W2 + b2).reshape(*x.shape[:-1], -1)  # the input's own leading axes


def catches_ffn_reshape(fn: Callable[..., np.ndarray]) -> bool:
    """True when ``fn`` fails or differs from the reference on a batch, or on 6 tokens."""
    rng = np.random.default_rng(4)
    W1, W2 = rng.standard_normal((4, 16)), rng.standard_normal((16, 4))
    b1, b2 = rng.standard_normal(16), rng.standard_normal(4)
    for shape in [(3, 4), (2, 3, 4), (6, 4)]:  # (seq, d), (batch, seq, d), a longer sequence
        x = rng.standard_normal(shape)
        try:
            out = fn(x, W1, b1, W2, b2)
        except ValueError:
            return True
        expected = ref.feed_forward(x, W1, b1, W2, b2)
        if out.shape != expected.shape or not np.allclose(out, expected):
            return True
    return False


# --- 11. seed 003: the referents of "it" swapped --------------------------------------------


def referents_buggy() -> dict[str, str]:
    """The noun "it" should attend to, by the sentence's last word, as the article writes it."""
    return {"tired": "street", "wide": "animal"}  # "road" and "cat" in the article


def referents_fixed() -> dict[str, str]:
    """The noun "it" should attend to: what can be tired is animate, what can be wide a place."""
    return {"tired": "animal", "wide": "street"}


def catches_swapped_referents(fn: Callable[[], dict[str, str]]) -> bool:
    """True when ``fn()`` names, for an ending, a noun that lacks the feature the ending wants.

    Uses chapter 3's hand-made vectors (:func:`course_attention.toy.it_sentence`): "tired"
    wants something animate, "wide" a place; the referent is the noun that offers it.
    """
    wants = {
        "animate": toy.IT_FEATURES.index("wants animate"),
        "place": toy.IT_FEATURES.index("wants place"),
    }
    claimed = fn()
    for ending in toy.IT_ENDINGS:
        sentence = toy.it_sentence(ending, context=0.0)
        X = dict(zip(sentence.tokens, sentence.X, strict=True))
        wanted = max(wants, key=lambda f: X[ending][wants[f]])  # the feature the ending wants
        nouns = [t for t in ("animal", "street") if X[t][toy.IT_FEATURES.index(wanted)] > 0]
        if claimed.get(ending) not in nouns:
            return True
    return False


# --- common mistake: a boolean mask with the wrong polarity ------------------------------


def flipped_mask_attention_buggy(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention, Q, K, V ``(..., seq, d)``; the mask says True = hide, wrongly."""
    seq = Q.shape[-2]
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # True above the diagonal
    return modules.scaled_dot_product_attention(Q, K, V, mask=future)


def flipped_mask_attention_fixed(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention: ``(output, weights)``, ``(..., seq, d_v)`` and ``(..., seq, seq)``."""
    seq = Q.shape[-2]
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # True above the diagonal
    return modules.scaled_dot_product_attention(Q, K, V, mask=~future)  # True = may attend


def catches_flipped_mask(fn: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """True when the output of ``fn(Q, K, V)[0]`` differs from causal attention."""
    Q, K, V = _qkv(1, 4, 3)
    got = fn(*(torch.as_tensor(a) for a in (Q, K, V)))[0].numpy()
    return not np.allclose(got, _causal_reference(Q, K, V))


# --- common mistake: view without transpose when merging heads ---------------------------


def merge_heads_buggy(x: torch.Tensor) -> torch.Tensor:
    """Merge heads ``(batch, heads, seq, d_head)`` → ``(batch, seq, heads * d_head)``, wrongly."""
    batch, heads, seq, d_head = x.shape
    return x.view(batch, seq, heads * d_head)


def merge_heads_fixed(x: torch.Tensor) -> torch.Tensor:
    """Merge heads ``(batch, heads, seq, d_head)`` → ``(batch, seq, heads * d_head)``."""
    batch, heads, seq, d_head = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * d_head)


def catches_merge_without_transpose(fn: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """True when ``fn`` differs from :func:`course_attention.numpy_ref.merge_heads`."""
    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float64).reshape(2, 3, 4, 5)
    out = fn(x)
    return out.shape != (2, 4, 15) or not np.allclose(out.numpy(), ref.merge_heads(x.numpy()))
