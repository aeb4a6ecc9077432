"""Bugs that published attention tutorials shipped, each rewritten small, fixed and caught.

Introduced in the spot-the-bug appendix. For every bug there is a ``*_buggy`` function, a
``*_fixed`` function and a checker ``catches_*(fn) -> bool`` that returns True when ``fn`` shows
the bug. The checkers run ``fn`` on small deterministic inputs and never print.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from . import modules, toy
from . import numpy_ref as ref

__all__ = [
    "source",
    "attention_buggy",
    "attention_fixed",
    "catches_undefined_name",
    "softmax_buggy",
    "softmax_fixed",
    "catches_softmax_overflow",
    "CausalAttentionBuggy",
    "CausalAttentionFixed",
    "catches_unset_causal_flag",
    "causal_attention_buggy",
    "causal_attention_fixed",
    "catches_flipped_mask",
    "add_positions_buggy",
    "add_positions_fixed",
    "catches_positions_on_batch",
    "encoder_decoder_buggy",
    "encoder_decoder_fixed",
    "catches_decoder_skips_encoder",
    "merge_heads_buggy",
    "merge_heads_fixed",
    "catches_merge_without_transpose",
    "worked_example_weights_buggy",
    "worked_example_weights_fixed",
    "catches_arithmetic_slip",
]


def source(obj: Any) -> Any:
    """The source of ``obj`` as a Markdown code block, for a notebook to display."""
    from IPython.display import Markdown

    return Markdown(f"```python\n{inspect.getsource(obj).rstrip()}\n```")


def _qkv(seed: int, *shape: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Q, K, V = np.random.default_rng(seed).standard_normal((3, *shape))
    return Q, K, V


# --- 1. a name the function never defines --------------------------------------------------


def attention_buggy(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Attention output ``(..., seq_q, d_v)``; ``d_k`` is used but never defined."""
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # noqa: F821 - the bug
    return ref.softmax(scores) @ V


def attention_fixed(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Attention output ``(..., seq_q, d_v)``; Q ``(..., seq_q, d_k)``, K ``(..., seq_k, d_k)``."""
    d_k = Q.shape[-1]
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)  # (..., seq_q, seq_k)
    return ref.softmax(scores) @ V


def catches_undefined_name(fn: Callable[..., np.ndarray]) -> bool:
    """True when calling ``fn(Q, K, V)`` raises ``NameError``."""
    try:
        fn(*_qkv(0, 3, 4))
    except NameError:
        return True
    return False


# --- 2. softmax without subtracting the maximum --------------------------------------------


def softmax_buggy(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``x`` ``(..., n)``; overflows for large scores."""
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def softmax_fixed(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``x`` ``(..., n)``; the largest entry becomes exp(0) = 1."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def catches_softmax_overflow(fn: Callable[[np.ndarray], np.ndarray]) -> bool:
    """True when ``fn`` gives non-finite or wrong weights for float32 scores around 100."""
    x = np.array([100.0, 99.0, 0.0], dtype=np.float32)  # exp(100) overflows float32
    with np.errstate(all="ignore"):
        p = np.asarray(fn(x), dtype=np.float64)
    return not np.allclose(p, ref.softmax(x.astype(np.float64)), atol=1e-6)


# --- 3. a causal flag that is read but never set --------------------------------------------


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
    """True when ``cls(d_model, is_causal=True)`` fails, or lets the future change the past."""
    torch.manual_seed(0)
    layer = cls(8, is_causal=True).double()
    x = torch.randn(1, 5, 8, dtype=torch.float64)  # (batch, seq, d_model)
    changed = x.clone()
    changed[:, -1] += 1.0  # a different last token
    try:
        with torch.no_grad():
            before, after = layer(x), layer(changed)
    except AttributeError:
        return True
    return not torch.allclose(before[:, :-1], after[:, :-1])  # earlier outputs must not move


# --- 4. a boolean mask with the wrong polarity ----------------------------------------------


def causal_attention_buggy(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention, Q, K, V ``(..., seq, d)``; the mask says True = hide, wrongly."""
    seq = Q.shape[-2]
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # True above the diagonal
    return modules.scaled_dot_product_attention(Q, K, V, mask=future)


def causal_attention_fixed(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal attention: ``(output, weights)``, ``(..., seq, d_v)`` and ``(..., seq, seq)``."""
    seq = Q.shape[-2]
    future = torch.ones(seq, seq, dtype=torch.bool).triu(1)  # True above the diagonal
    return modules.scaled_dot_product_attention(Q, K, V, mask=~future)  # True = may attend


def catches_flipped_mask(fn: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """True when the output of ``fn(Q, K, V)[0]`` differs from causal attention."""
    Q, K, V = (torch.as_tensor(a) for a in _qkv(1, 4, 3))
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=ref.causal_mask(4))
    return not np.allclose(fn(Q, K, V)[0].numpy(), expected)


# --- 5. sequence-first positions on batch-first tensors -------------------------------------


def add_positions_buggy(x: torch.Tensor) -> torch.Tensor:
    """Add sinusoidal positions to ``x`` ``(batch, seq, d_model)``, in code written seq-first."""
    seq, d_model = x.shape[0], x.shape[-1]  # seq-first: x is (seq, batch, d_model)
    table = torch.as_tensor(ref.sinusoidal_positions(seq, d_model), dtype=x.dtype)
    return x + table[:, None, :]  # (seq, 1, d_model) broadcasts over the middle axis


def add_positions_fixed(x: torch.Tensor) -> torch.Tensor:
    """Add sinusoidal positions to ``x`` ``(batch, seq, d_model)``."""
    seq, d_model = x.shape[1], x.shape[-1]
    table = torch.as_tensor(ref.sinusoidal_positions(seq, d_model), dtype=x.dtype)
    return x + table[None, :, :]  # (1, seq, d_model) broadcasts over the batch


def catches_positions_on_batch(fn: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """True when ``fn`` does not add row ``t`` of the table to token ``t`` of every sequence."""
    x = torch.zeros(3, 5, 8, dtype=torch.float64)  # (batch, seq, d_model), batch ≠ seq
    expected = np.broadcast_to(ref.sinusoidal_positions(5, 8), (3, 5, 8))
    out = fn(x)
    return out.shape != x.shape or not np.allclose(out.numpy(), expected)


# --- 6. the decoder fed the encoder's input -------------------------------------------------


def encoder_decoder_buggy(
    encoder: modules.EncoderLayer,
    decoder: modules.DecoderLayer,
    src: torch.Tensor,
    tgt: torch.Tensor,
) -> torch.Tensor:
    """Encode ``src`` ``(batch, seq_s, d_model)``, decode ``tgt`` ``(batch, seq_t, d_model)``."""
    memory, _ = encoder(src)  # (batch, seq_s, d_model)
    out, _, _ = decoder(tgt, src)  # cross-attends to the encoder's *input*
    return out


def encoder_decoder_fixed(
    encoder: modules.EncoderLayer,
    decoder: modules.DecoderLayer,
    src: torch.Tensor,
    tgt: torch.Tensor,
) -> torch.Tensor:
    """Encode ``src``, then decode ``tgt`` against the memory: ``(batch, seq_t, d_model)``."""
    memory, _ = encoder(src)  # (batch, seq_s, d_model)
    out, _, _ = decoder(tgt, memory)
    return out


def catches_decoder_skips_encoder(fn: Callable[..., torch.Tensor]) -> bool:
    """True when changing the encoder's weights leaves ``fn``'s output unchanged."""
    torch.manual_seed(0)
    encoder = modules.EncoderLayer(8, 2, 16).double()
    decoder = modules.DecoderLayer(8, 2, 16).double()
    src = torch.randn(1, 5, 8, dtype=torch.float64)  # (batch, seq_s, d_model)
    tgt = torch.randn(1, 3, 8, dtype=torch.float64)  # (batch, seq_t, d_model)
    with torch.no_grad():
        before = fn(encoder, decoder, src, tgt)
        encoder.ff.linear2.weight.mul_(2.0)  # a different encoder
        after = fn(encoder, decoder, src, tgt)
    return torch.allclose(before, after)


# --- 7. view without transpose when merging heads -------------------------------------------


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


# --- 8. a worked example computed by hand ---------------------------------------------------


def worked_example_weights_buggy() -> np.ndarray:
    """Chapter 1's weights ``(3,)`` for "fruit" over apple, banana, car, from typed scores."""
    scores = np.array([1.32, 1.15, -1.10])  # q·k typed by hand; banana has a sign slip
    return ref.softmax(scores / np.sqrt(4))


def worked_example_weights_fixed() -> np.ndarray:
    """Chapter 1's weights ``(3,)`` for "fruit" over apple, banana, car, computed."""
    example = toy.worked_example()
    scores = example.K @ example.q  # (3,)
    return ref.softmax(scores / np.sqrt(example.q.shape[-1]))


def catches_arithmetic_slip(fn: Callable[[], np.ndarray]) -> bool:
    """True when ``fn()`` is more than 0.005 from the weights computed by the package."""
    example = toy.worked_example()
    _, weights = ref.scaled_dot_product_attention(example.q[None], example.K, example.V)
    return not np.allclose(fn(), weights[0], atol=5e-3)
