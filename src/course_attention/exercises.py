"""Checkers for the chapter exercises: ``check(exercise_id, fn)`` prints ✓ or a hint.

A checker never raises, so a book that still holds the exercise stubs executes cleanly. Each
exercise compares the learner's function with the package's reference on a few inputs, within a
tolerance, and explains a shape mismatch before a value mismatch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Exercise", "check", "evaluate", "EXERCISES"]


@dataclass(frozen=True)
class Exercise:
    """One exercise: a reference solution, input cases and a hint for a wrong answer."""

    id: str
    title: str
    reference: Callable[..., Any]
    cases: Callable[[], Sequence[tuple]]
    hint: str
    atol: float = 1e-6
    hints_by_shape: dict[str, str] = field(default_factory=dict)


EXERCISES: dict[str, Exercise] = {}


def _register(exercise: Exercise) -> Exercise:
    EXERCISES[exercise.id] = exercise
    return exercise


def _compare(expected: Any, got: Any, ex: Exercise, case: int) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return f"expected a tuple of {len(expected)} results, got {type(got).__name__}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            message = _compare(e, g, ex, case)
            if message:
                return f"result {i}: {message}"
        return None
    if got is None:
        return "your function returned None — did you forget `return`?"
    try:
        got_array = np.asarray(got.detach().numpy() if hasattr(got, "detach") else got, dtype=float)
    except (TypeError, ValueError):
        return f"expected a number or an array, got {type(got).__name__}"
    expected_array = np.asarray(expected, dtype=float)
    if got_array.shape != expected_array.shape:
        key = f"{got_array.shape}"
        extra = ex.hints_by_shape.get(key, "")
        if got_array.shape == expected_array.shape[::-1] and len(got_array.shape) > 1:
            extra = extra or "the axes look swapped: is a transpose missing or extra?"
        return f"expected shape {expected_array.shape}, got {got_array.shape}" + (
            f" — {extra}" if extra else ""
        )
    if np.isnan(got_array).any() and not np.isnan(expected_array).any():
        return "your result contains NaN where the reference has numbers"
    diff = np.abs(got_array - expected_array)
    if not np.allclose(got_array, expected_array, atol=ex.atol, rtol=1e-5):
        where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
        return (
            f"values differ (test case {case}): largest difference {diff.max():.3g} at index "
            f"{where}: expected {expected_array[where]:.6g}, got {got_array[where]:.6g}"
        )
    return None


def evaluate(exercise_id: str, fn: Callable[..., Any]) -> tuple[bool, str]:
    """Run ``fn`` on the exercise's cases; return ``(passed, message)``. Never raises."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        return False, f"unknown exercise {exercise_id!r}; known: {sorted(EXERCISES)}"
    for n, args in enumerate(ex.cases()):
        try:
            got = fn(*args)
        except NotImplementedError:
            return False, f"✗ {ex.title}: not implemented yet — replace the `raise` with your code."
        except Exception as error:  # noqa: BLE001 - the learner's code may raise anything
            return False, f"✗ {ex.title}: your function raised {type(error).__name__}: {error}"
        message = _compare(ex.reference(*args), got, ex, n)
        if message:
            return False, f"✗ {ex.title}: {message}\n  Hint: {ex.hint}"
    return True, f"✓ {ex.title}: correct on all {n + 1} test cases."


def check(exercise_id: str, fn: Callable[..., Any]) -> None:
    """Print ✓ when ``fn`` solves the exercise, else what is wrong and a hint. Never raises.

    Introduced in chapter 1. Example: ``ex.check("soft-lookup-1", my_softmax)``.
    """
    print(evaluate(exercise_id, fn)[1])


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- chapter 1: soft look-up ----------------------------------------------------------------


def _softmax_cases() -> list[tuple]:
    rng = _rng(1)
    return [
        (np.array([2.0, 1.0, 0.1]),),
        (rng.normal(size=5),),
        (np.array([1000.0, 999.0, 0.0]),),  # a naive np.exp overflows here
        (rng.normal(size=(3, 4)),),  # softmax along the last axis
    ]


def _soft_lookup_reference(q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(K @ q) @ V  # (d_v,)


def _soft_lookup_cases() -> list[tuple]:
    from . import toy

    example = toy.worked_example()
    rng = _rng(2)
    return [
        (example.q, example.K, example.V),
        (rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))),
        (rng.normal(size=2), rng.normal(size=(4, 2)), rng.normal(size=(4, 6))),
    ]


def _temperature_reference(scores: np.ndarray, temperature: float) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(scores, temperature=temperature)


def _temperature_cases() -> list[tuple]:
    rng = _rng(3)
    return [
        (np.array([0.89, 0.83, -0.29]), 0.1),
        (rng.normal(size=4), 2.0),
        (rng.normal(size=6), 0.5),
        (np.array([3.0, 1.0, 0.0]), 1.0),
    ]


def _softmax_reference(x: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(x, axis=-1)


_register(
    Exercise(
        id="soft-lookup-1",
        title="a stable softmax",
        reference=_softmax_reference,
        cases=_softmax_cases,
        hint=(
            "exponentiate, then divide by the sum along the last axis (keepdims=True). If a case "
            "with scores near 1000 gives NaN, subtract the largest score of each row first: "
            "softmax(x) equals softmax(x - max(x))."
        ),
    )
)

_register(
    Exercise(
        id="soft-lookup-2",
        title="a soft look-up",
        reference=_soft_lookup_reference,
        cases=_soft_lookup_cases,
        hint=(
            "three steps: scores = K @ q, shape (n_keys,); weights = softmax(scores); "
            "output = weights @ V, shape (d_v,). Chapter 1 does not divide by sqrt(d_k)."
        ),
        hints_by_shape={"()": "you returned a number: multiply the weights with V, not with q."},
    )
)

_register(
    Exercise(
        id="soft-lookup-3",
        title="softmax with a temperature",
        reference=_temperature_reference,
        cases=_temperature_cases,
        hint=(
            "divide the scores by the temperature before the softmax (not the weights after it); "
            "a temperature below 1 should make the largest weight larger."
        ),
    )
)


# --- chapter 2: scaled dot-product ----------------------------------------------------------


def _attention_output(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.scaled_dot_product_attention(Q, K, V)[0]  # (..., seq_q, d_v)


def _attention_cases() -> list[tuple]:
    rng = _rng(21)
    return [
        (rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))),
        (rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 6, 8)), rng.normal(size=(2, 6, 5))),
        # batch = seq = d_k: K.T has the right shape here but the wrong values
        (rng.normal(size=(4, 4, 4)), rng.normal(size=(4, 4, 4)), rng.normal(size=(4, 4, 3))),
        (rng.normal(size=(2, 3, 2, 64)), rng.normal(size=(2, 3, 5, 64)), rng.normal(size=(5, 4))),
    ]


def _jacobian_reference(p: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax_jacobian(p)  # (..., n, n)


def _jacobian_cases() -> list[tuple]:
    from . import numpy_ref

    rng = _rng(22)
    return [
        (numpy_ref.softmax(rng.normal(size=4)),),
        (np.full(5, 0.2),),  # uniform weights
        (np.array([0.0, 1.0, 0.0]),),  # saturated: the Jacobian is all zeros
        (numpy_ref.softmax(rng.normal(size=(3, 6))),),  # a batch of weight vectors
    ]


def _variance_reference(d_k: int, std_q: float, std_k: float) -> float:
    from . import experiments

    return experiments.expected_dot_variance(d_k, std_q, std_k)


_register(
    Exercise(
        id="scaled-dot-product-1",
        title="scaled dot-product attention in matrix form",
        reference=_attention_output,
        cases=_attention_cases,
        hint=(
            "compute scores = Q @ K.swapaxes(-1, -2) / np.sqrt(d_k) with d_k = Q.shape[-1], "
            "softmax along the last axis (subtract the row maximum first), then weights @ V. "
            "`K.T` reverses every axis of a batched array: swap only the last two."
        ),
    )
)

_register(
    Exercise(
        id="scaled-dot-product-2",
        title="the softmax Jacobian diag(p) − p pᵀ",
        reference=_jacobian_reference,
        cases=_jacobian_cases,
        hint=(
            "entry [i, j] is p_i (δ_ij − p_j). For p of shape (..., n) build p[..., :, None] * "
            "np.eye(n) for the diagonal and subtract the outer product "
            "p[..., :, None] * p[..., None, :] (np.outer only handles 1-D p)."
        ),
    )
)

_register(
    Exercise(
        id="scaled-dot-product-3",
        title="the variance of q · k",
        reference=_variance_reference,
        cases=lambda: [(64, 1.0, 1.0), (16, 2.0, 0.5), (100, 0.1, 3.0), (1, 1.0, 1.0)],
        hint=(
            "q · k is a sum of d_k independent products q_i k_i. Each product has mean 0 and "
            "variance std_q² · std_k², and variances of independent terms add."
        ),
    )
)


# --- chapter 3: self-attention ------------------------------------------------------------


def _self_attention_reference(
    X: np.ndarray, W_q: np.ndarray, W_k: np.ndarray, W_v: np.ndarray
) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]  # (seq, d_v)


def _self_attention_cases() -> list[tuple]:
    from . import toy

    s = toy.it_sentence("wide")
    rng = _rng(31)
    return [
        (s.X, s.W_q, s.W_k, s.W_v),
        (
            rng.normal(size=(5, 4)),
            rng.normal(size=(4, 3)),
            rng.normal(size=(4, 3)),
            rng.normal(size=(4, 2)),
        ),
        (
            rng.normal(size=(6, 8)),
            rng.normal(size=(8, 16)),
            rng.normal(size=(8, 16)),
            rng.normal(size=(8, 8)),
        ),
    ]


def _weight_bytes_reference(seq: int, batch: int, n_heads: int, bytes_per_number: int) -> int:
    return batch * n_heads * seq * seq * bytes_per_number


def _unpermute_reference(Y: np.ndarray, perm: np.ndarray) -> np.ndarray:
    return Y[np.argsort(perm)]  # (seq, d_v)


def _unpermute_cases() -> list[tuple]:
    rng = _rng(33)
    return [
        (rng.normal(size=(3, 2)), np.array([1, 2, 0])),  # not its own inverse: Y[perm] fails
        (rng.normal(size=(5, 4)), np.array([4, 0, 3, 1, 2])),
        (rng.normal(size=(6, 3)), rng.permutation(6)),
    ]


_register(
    Exercise(
        id="self-attention-1",
        title="self-attention from X and three weight matrices",
        reference=_self_attention_reference,
        cases=_self_attention_cases,
        hint=(
            "project first: Q = X @ W_q, K = X @ W_k, V = X @ W_v (shapes (seq, d_k), (seq, d_k), "
            "(seq, d_v)); then softmax(Q Kᵀ / √d_k) V with d_k = W_k.shape[1], the width of the "
            "keys — not d_model, the width of X."
        ),
    )
)

_register(
    Exercise(
        id="self-attention-2",
        title="the memory of the attention weights",
        reference=_weight_bytes_reference,
        cases=lambda: [(1024, 1, 1, 4), (4096, 8, 16, 2), (100, 3, 12, 4), (7, 2, 1, 8)],
        hint=(
            "the weights have shape (batch, n_heads, seq, seq): multiply the four sizes, with seq "
            "twice, and the bytes per number."
        ),
    )
)

_register(
    Exercise(
        id="self-attention-3",
        title="undo a permutation of the outputs",
        reference=_unpermute_reference,
        cases=_unpermute_cases,
        hint=(
            "row i of Y belongs to the original token perm[i]. You need the inverse "
            "permutation, np.argsort(perm): Y[np.argsort(perm)]. Y[perm] permutes a second time."
        ),
    )
)


# --- chapter 4: masking -------------------------------------------------------------------


def _padding_mask_reference(lengths: np.ndarray, seq_len: int) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.padding_mask(lengths, seq_len)  # (batch, 1, seq_len) bool


def _padding_mask_cases() -> list[tuple]:
    return [
        (np.array([3, 1, 4]), 4),
        (np.array([2]), 5),
        (np.array([0, 6, 2, 5]), 6),  # an empty sentence: a row of False
    ]


def _masked_weights_reference(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.softmax(np.where(mask, scores, -np.inf))  # all-hidden rows: zeros


def _masked_weights_cases() -> list[tuple]:
    rng = _rng(41)
    causal = np.tril(np.ones((4, 4), dtype=bool))
    empty_row = np.array([[True, False, True], [False, False, False]])
    return [
        (rng.normal(size=(4, 4)), causal),
        (rng.normal(size=(2, 3)) * 100, empty_row),  # large scores and a fully hidden row
        (rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 1, 5)) > -0.3),  # broadcast mask
    ]


def _masked_mean_reference(losses: np.ndarray, lengths: np.ndarray) -> float:
    real = np.arange(losses.shape[1])[None, :] < lengths[:, None]  # (batch, seq)
    return float(losses[real].mean())


def _masked_mean_cases() -> list[tuple]:
    rng = _rng(42)
    return [
        (rng.uniform(0, 3, size=(3, 5)), np.array([5, 2, 3])),
        (rng.uniform(0, 3, size=(2, 4)), np.array([4, 4])),  # no padding at all
        (rng.uniform(0, 3, size=(4, 6)), np.array([1, 6, 3, 2])),
    ]


_register(
    Exercise(
        id="masking-1",
        title="a key-padding mask from lengths",
        reference=_padding_mask_reference,
        cases=_padding_mask_cases,
        hint=(
            "compare positions with lengths: np.arange(seq_len)[None, :] < lengths[:, None] is "
            "(batch, seq_len), True at real tokens; add an axis in the middle with [:, None, :] "
            "so the mask broadcasts over the queries."
        ),
    )
)

_register(
    Exercise(
        id="masking-2",
        title="masked softmax without NaN",
        reference=_masked_weights_reference,
        cases=_masked_weights_cases,
        hint=(
            "hidden entries must get weight exactly 0, and a row in which every key is hidden "
            "must be all zeros, not NaN and not uniform. Replace hidden scores by the row "
            "maximum of the allowed ones before np.exp, then multiply by the mask and divide "
            "only where the row sum is positive (np.divide(..., where=total > 0))."
        ),
    )
)

_register(
    Exercise(
        id="masking-3",
        title="a loss that ignores padded positions",
        reference=_masked_mean_reference,
        cases=_masked_mean_cases,
        hint=(
            "outputs at padded query positions are garbage: leave them out. Build the "
            "(batch, seq) mask of real positions from lengths and average losses[mask] only, "
            "not losses.mean() over every position."
        ),
    )
)


# --- chapter 5: multi-head attention --------------------------------------------------------


def _split_heads_reference(X: np.ndarray, n_heads: int) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.split_heads(X, n_heads)  # (batch, heads, seq, d_head)


def _split_heads_cases() -> list[tuple]:
    rng = _rng(51)
    return [
        (rng.normal(size=(1, 3, 4)), 2),
        (rng.normal(size=(2, 5, 12)), 3),
        (rng.normal(size=(2, 4, 16)), 4),  # seq = heads = d_head: a plain reshape fits the shape
        (rng.normal(size=(3, 2, 6)), 1),
    ]


def _merge_heads_reference(H: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.merge_heads(H)  # (batch, seq, heads * d_head)


def _merge_heads_cases() -> list[tuple]:
    rng = _rng(52)
    return [
        (rng.normal(size=(1, 2, 3, 2)),),
        (rng.normal(size=(2, 3, 5, 4)),),
        (rng.normal(size=(2, 4, 4, 4)),),  # seq = heads = d_head: a plain reshape fits the shape
    ]


def _multiply_adds_reference(seq: int, d_model: int, n_heads: int) -> int:
    from . import experiments

    return sum(experiments.multi_head_multiply_adds(seq, d_model, n_heads).values())


_register(
    Exercise(
        id="multi-head-1",
        title="split the features into heads",
        reference=_split_heads_reference,
        cases=_split_heads_cases,
        hint=(
            "reshape (batch, seq, d_model) to (batch, seq, n_heads, d_model // n_heads) first, "
            "then swap the seq and heads axes with .transpose(0, 2, 1, 3). Reshaping straight to "
            "(batch, n_heads, seq, d_head) gives the right shape but mixes positions into heads."
        ),
    )
)

_register(
    Exercise(
        id="multi-head-2",
        title="merge the heads back",
        reference=_merge_heads_reference,
        cases=_merge_heads_cases,
        hint=(
            "swap the heads and seq axes back first, .transpose(0, 2, 1, 3), giving "
            "(batch, seq, heads, d_head), then reshape to (batch, seq, heads * d_head)."
        ),
    )
)

_register(
    Exercise(
        id="multi-head-3",
        title="multiply-adds of multi-head self-attention",
        reference=_multiply_adds_reference,
        cases=lambda: [(4, 8, 2), (10, 64, 8), (128, 512, 1), (128, 512, 16), (1, 6, 3)],
        hint=(
            "(m, k) @ (k, n) costs m·k·n multiply-adds. Count the four projections "
            "(seq, d) @ (d, d), then per head the scores (seq, d/h) @ (d/h, seq) and the "
            "weighted sum (seq, seq) @ (seq, d/h), times n_heads heads."
        ),
    )
)


# --- chapter 6: the Transformer block ------------------------------------------------------


def _layer_norm_reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.layer_norm(x, gamma, beta, eps=1e-5)  # (..., d_model)


def _layer_norm_cases() -> list[tuple]:
    rng = _rng(61)
    cases = []
    for shape in [(4,), (3, 5), (2, 4, 8), (2, 3, 6)]:
        d = shape[-1]
        x = rng.normal(loc=3.0, scale=2.0, size=shape)  # not centred: the mean must go
        cases.append((x, rng.normal(size=d), rng.normal(size=d)))
    return cases


def _positions_reference(seq_len: int, d_model: int) -> np.ndarray:
    from . import numpy_ref

    return numpy_ref.sinusoidal_positions(seq_len, d_model)  # (seq_len, d_model)


def _residual_ff_reference(
    x: np.ndarray,
    W1: np.ndarray,
    b1: np.ndarray,
    W2: np.ndarray,
    b2: np.ndarray,
    norm_first: bool,
) -> np.ndarray:
    from . import numpy_ref

    if norm_first:  # pre-norm: x + ff(norm(x))
        return x + numpy_ref.feed_forward(numpy_ref.layer_norm(x), W1, b1, W2, b2)
    return numpy_ref.layer_norm(x + numpy_ref.feed_forward(x, W1, b1, W2, b2))  # post-norm


def _residual_ff_cases() -> list[tuple]:
    rng = _rng(63)
    cases = []
    for (seq, d), norm_first in [((3, 4), True), ((3, 4), False), ((5, 8), True), ((5, 8), False)]:
        x = rng.normal(loc=1.0, scale=3.0, size=(seq, d))
        W1, W2 = rng.normal(size=(d, 4 * d)) / np.sqrt(d), rng.normal(size=(4 * d, d)) / (2 * d)
        cases.append((x, W1, rng.normal(size=4 * d), W2, rng.normal(size=d), norm_first))
    return cases


_register(
    Exercise(
        id="transformer-block-1",
        title="layer norm over each token's features",
        reference=_layer_norm_reference,
        cases=_layer_norm_cases,
        hint=(
            "take the mean and the variance over the last axis only, keeping it "
            "(axis=-1, keepdims=True); use the biased variance (np.var's default) plus eps = 1e-5 "
            "under the square root, then multiply by gamma and add beta."
        ),
    )
)

_register(
    Exercise(
        id="transformer-block-2",
        title="sinusoidal positions",
        reference=_positions_reference,
        cases=lambda: [(1, 2), (4, 4), (10, 8), (50, 16), (7, 64)],
        hint=(
            "feature pair i turns at frequency 10000 ** (-2i / d_model): the even features "
            "(table[:, 0::2]) hold sin(pos · freq), the odd ones (table[:, 1::2]) cos(pos · freq)."
        ),
    )
)

_register(
    Exercise(
        id="transformer-block-3",
        title="a feed-forward sublayer, pre-norm or post-norm",
        reference=_residual_ff_reference,
        cases=_residual_ff_cases,
        hint=(
            "pre-norm (norm_first=True) is x + ff(layer_norm(x)); post-norm is "
            "layer_norm(x + ff(x)). Use ref.layer_norm with its defaults (gamma 1, beta 0) and "
            "ref.feed_forward; keep the residual x outside the norm in pre-norm."
        ),
    )
)


# --- chapter 7: encoder–decoder ---------------------------------------------------------


def _shift_right_reference(labels: np.ndarray, bos_id: int) -> np.ndarray:
    bos = np.full((labels.shape[0], 1), bos_id, dtype=labels.dtype)  # (batch, 1)
    return np.concatenate([bos, labels[:, :-1]], axis=1)  # (batch, seq)


def _shift_right_cases() -> list[tuple]:
    rng = _rng(71)
    return [
        (np.array([[8, 4, 7, 2]]), 1),
        (rng.integers(3, 13, size=(3, 6)), 1),
        (rng.integers(3, 13, size=(2, 1)), 1),
        (rng.integers(3, 13, size=(4, 5)), 0),
    ]


def _t5_masks_reference(n_src: int, n_tgt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from .viz.encoder_decoder import architecture_masks

    masks = architecture_masks(n_src, n_tgt)
    return (
        masks["T5 encoder: self"],  # (n_src, n_src)
        masks["T5 decoder: self (causal)"],  # (n_tgt, n_tgt)
        masks["T5 decoder: cross"],  # (n_tgt, n_src)
    )


def _cross_attention_reference(
    decoder_states: np.ndarray, memory: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    from . import numpy_ref

    return numpy_ref.scaled_dot_product_attention(decoder_states, memory, memory)


def _cross_attention_cases() -> list[tuple]:
    rng = _rng(73)
    return [
        (rng.normal(size=(2, 4)), rng.normal(size=(5, 4))),
        (rng.normal(size=(6, 8)), rng.normal(size=(3, 8))),
        (rng.normal(size=(1, 3)), rng.normal(size=(7, 3))),
    ]


_register(
    Exercise(
        id="encoder-decoder-1",
        title="shift the targets right (teacher forcing)",
        reference=_shift_right_reference,
        cases=_shift_right_cases,
        hint=(
            "the decoder input at position t must be the target at t − 1: put a column of "
            "bos_id in front, (batch, 1), and drop the last column of labels, labels[:, :-1]. "
            "The result has the same shape as labels."
        ),
    )
)

_register(
    Exercise(
        id="encoder-decoder-2",
        title="the three masks of an encoder–decoder",
        reference=_t5_masks_reference,
        cases=lambda: [(4, 3), (1, 1), (6, 2), (2, 5)],
        hint=(
            "encoder self-attention sees everything: np.ones((n_src, n_src), bool); decoder "
            "self-attention is causal: np.tril of ones (n_tgt, n_tgt); cross-attention lets every "
            "target query see every source key: np.ones((n_tgt, n_src), bool) — rows are queries."
        ),
    )
)

_register(
    Exercise(
        id="encoder-decoder-3",
        title="cross-attention, one head",
        reference=_cross_attention_reference,
        cases=_cross_attention_cases,
        hint=(
            "queries come from the decoder, keys and values from the memory: "
            "scores = decoder_states @ memory.T / sqrt(d), shape (seq_t, seq_s); softmax over "
            "the last axis (the source positions); output = weights @ memory, shape (seq_t, d). "
            "Return (output, weights)."
        ),
    )
)
