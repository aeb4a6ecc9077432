"""Exercises of chapter 15 (attention as a recurrence): one recurrent step of linear attention,
the delta rule's update, linear attention's chunkwise form against its recurrent one, and the
bytes of a linear state against those of a KV cache.

Introduced in chapter 15. The learner writes numpy in float64 (or plain Python); each reference
is the package's own code where the package has it (:func:`course_attention.linear_attention.
gated_delta_rule` from a given state, :func:`course_attention.linear_attention.linear_attention`
in its recurrent form, :func:`course_attention.linear_attention.state_bytes` and
:func:`course_attention.grouped_query.kv_cache_bytes_per_token`), and
``tests/test_exercises_linear.py`` checks that the one step written here, run token by token,
is what ``linear_attention(mode="recurrent")`` computes.

Layout, as in the package: a state ``S`` is ``(d_k, d_v)``, written by the outer product
``k vᵀ`` and read by ``Sᵀ q``.
"""

from __future__ import annotations

import numpy as np

from ..i18n import N_
from .core import ErrorHint, Exercise, Mistake, register, rng

# --- 1: one recurrent step of linear attention -------------------------------------------------


def _step_reference(state: np.ndarray, z: np.ndarray, phi_q: np.ndarray, phi_k: np.ndarray,
                    v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One token of causal linear attention: the new state ``(d_k, d_v)``, the new normaliser
    ``(d_k,)`` and the output ``(d_v,)``, ``S ← S + φ(k) vᵀ``, ``z ← z + φ(k)``,
    ``o = Sᵀ φ(q) / (φ(q) · z)`` (the step of ``linear_attention(mode="recurrent")``, whose
    ``eps = 1e-6`` in the denominator is left out)."""
    state, z = np.asarray(state, dtype=float), np.asarray(z, dtype=float)
    phi_q, phi_k, v = (np.asarray(a, dtype=float) for a in (phi_q, phi_k, v))
    new_state = state + np.outer(phi_k, v)
    new_z = z + phi_k
    return new_state, new_z, new_state.T @ phi_q / (phi_q @ new_z)


def _elu1(x: np.ndarray) -> np.ndarray:
    """``elu(x) + 1``, the feature map, in numpy."""
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _step(state, z, phi_q, phi_k, v, *, read="after", norm="query", write_z=True,
          outer="k v", readout="S.T", again=False):
    """One step, done the way a catalogued mistake does it."""
    if again:
        phi_q, phi_k = _elu1(phi_q), _elu1(phi_k)
    new_state = state + (np.outer(phi_k, v) if outer == "k v" else np.outer(v, phi_k))
    new_z = z + phi_k if write_z else z
    s, zz = (new_state, new_z) if read == "after" else (state, z)
    out = s.T @ phi_q if readout == "S.T" else s @ phi_q
    if norm == "query":
        out = out / (phi_q @ zz)
    elif norm == "sum":
        out = out / zz.sum()
    return new_state, new_z, out


def _step_mistake(**how: object):
    return lambda *args: _step(*args, **how)


STEP_MISTAKES = (
    Mistake(
        N_(
            "the output read before the write: with the old S and z, the token's own key and "
            "value are left out of its output (the first token then divides 0 by 0); causal "
            "attention lets a token read itself"
        ),
        _step_mistake(read="before"),
        hint=N_(
            "write first, then read: the new S and z already hold the token's own φ(k) and v, "
            "as the diagonal of the causal mask lets a query see its own key."
        ),
    ),
    Mistake(
        N_(
            "no normaliser: Sᵀ φ(q) alone grows with the number of tokens read; divide it by "
            "φ(q) · z, as the softmax divides by its sum"
        ),
        _step_mistake(norm="none"),
    ),
    Mistake(
        N_(
            "divided by Σ z instead of φ(q) · z: the normaliser is the sum of this query's "
            "weights, φ(q) · φ(k_s) over the tokens, so the query enters it"
        ),
        _step_mistake(norm="sum"),
    ),
    Mistake(
        N_(
            "z not updated: the normaliser must add φ(k) of the token, as the state adds "
            "φ(k) vᵀ, and the output divides by the new one"
        ),
        _step_mistake(write_z=False),
    ),
    Mistake(
        N_(
            "the outer product transposed, v φ(k)ᵀ: the state is (d_k, d_v), so the write is "
            "np.outer(phi_k, v) (with d_k ≠ d_v the shapes no longer add up)"
        ),
        _step_mistake(outer="v k"),
        hint=N_(
            "the state's rows go with the key's features and its columns with the value's: "
            "S (d_k, d_v) += np.outer(phi_k, v) (d_k, d_v)."
        ),
    ),
    Mistake(
        N_(
            "read as S φ(q) instead of Sᵀ φ(q): the query meets the state's key side, its rows "
            "(with d_k ≠ d_v the product no longer runs)"
        ),
        _step_mistake(readout="S"),
    ),
    Mistake(
        N_(
            "the feature map applied again: phi_q and phi_k are already φ(q) and φ(k), "
            "elu + 1 was applied before the call"
        ),
        _step_mistake(again=True),
    ),
)

_OUTER_ERRORS = (
    ErrorHint(
        r"could not be broadcast together|mismatch in its core dimension|The size of tensor a",
        N_(
            "the state is (d_k, d_v), its rows on the key's side: adding a (d_v, d_k) outer "
            "product, or a product S @ x with x of d_k numbers, only runs when d_k = d_v — "
            "the outer product puts the key first, np.outer(k, …), and the state is read as "
            "S.T @ x"
        ),
        N_(
            "print the shapes: S (d_k, d_v), np.outer(k, v) (d_k, d_v), S.T @ q (d_v,). The "
            "key's side is the rows."
        ),
    ),
)


def _step_cases() -> list[tuple]:
    gen = rng(151)

    def case(d_k: int, d_v: int, before: int, scale: float = 1.0) -> tuple:
        keys = _elu1(gen.normal(size=(before, d_k)) * scale)  # φ(k) of the tokens read so far
        values = gen.normal(size=(before, d_v)) * scale
        return (keys.T @ values, keys.sum(0), _elu1(gen.normal(size=d_k) * scale),
                _elu1(gen.normal(size=d_k) * scale), gen.normal(size=d_v) * scale)

    # the first cases are square (d_k = d_v): a transposed write or read still runs there
    return [case(3, 3, 4), case(4, 4, 20, 2.0), case(4, 2, 5), case(2, 5, 10), case(3, 3, 0)]


# --- 2: the delta rule's update ---------------------------------------------------------------


def _delta_reference(state: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                     beta: float) -> tuple[np.ndarray, np.ndarray]:
    """One token of DeltaNet in Qwen3-Next's conventions: the new state ``(d_k, d_v)``,
    ``S + β k (v − Sᵀ k)ᵀ``, and the output ``(d_v,)``, ``Sᵀ q / √d_k`` read after the write
    (:func:`~course_attention.linear_attention.gated_delta_rule` with no decay, started from
    ``state``)."""
    import torch

    from ..linear_attention import gated_delta_rule

    def token(x: np.ndarray) -> torch.Tensor:  # (1, 1, 1, d): batch, heads, seq
        return torch.from_numpy(np.asarray(x, dtype=float).copy())[None, None, None]

    beta_t = torch.full((1, 1, 1), float(beta), dtype=torch.float64)
    state_t = torch.from_numpy(np.asarray(state, dtype=float).copy())[None, None]
    out, new_state = gated_delta_rule(token(q), token(k), token(v), torch.zeros_like(beta_t),
                                      beta_t, initial_state=state_t)
    return new_state[0, 0].numpy(), out[0, 0, 0].numpy()


def _delta(state, q, k, v, beta, *, write="error", strength=True, sign=1.0, outer="k e",
           memory="S.T", read="after", scale="query"):
    """The delta rule's step, done the way a catalogued mistake does it."""
    root = np.sqrt(len(k))
    if scale == "key":
        k = k / root
    recalled = state.T @ k if memory == "S.T" else state @ k
    error = v - recalled if write == "error" else v
    b = beta if strength else 1.0
    update = np.outer(k, error) if outer == "k e" else np.outer(error, k)
    new_state = state + sign * b * update
    out = (new_state if read == "after" else state).T @ q
    return new_state, out / root if scale == "query" else out


def _delta_mistake(**how: object):
    return lambda *args: _delta(*args, **how)


DELTA_MISTAKES = (
    Mistake(
        N_(
            "v written instead of the error v − Sᵀ k: that is linear attention's write, which "
            "adds the new value on top of whatever the key already reads; the delta rule first "
            "subtracts what the memory returns for k"
        ),
        _delta_mistake(write="value"),
        hint=N_(
            "read the memory with the key before writing: recalled = S.T @ k is what it "
            "returns now, and only the difference v − recalled is written."
        ),
    ),
    Mistake(
        N_(
            "β forgotten: the correction is scaled by the write strength β, so only β = 1 "
            "overwrites what the key read"
        ),
        _delta_mistake(strength=False),
    ),
    Mistake(
        N_(
            "the sign flipped: the step adds β k (v − Sᵀ k)ᵀ, moving Sᵀ k towards v; "
            "subtracting it moves the read away from v"
        ),
        _delta_mistake(sign=-1.0),
        hint=N_(
            "after the write, Sᵀ k = (1 − β) · recalled + β v (for a unit key): the read "
            "moves towards v. Check that on your result."
        ),
    ),
    Mistake(
        N_(
            "the outer product transposed, (v − Sᵀ k) kᵀ: the state is (d_k, d_v), so the "
            "write is np.outer(k, error) (with d_k ≠ d_v the shapes no longer add up)"
        ),
        _delta_mistake(outer="e k"),
    ),
    Mistake(
        N_(
            "the memory read as S k instead of Sᵀ k: the key meets the state's rows, its key "
            "side (with d_k ≠ d_v the product no longer runs)"
        ),
        _delta_mistake(memory="S"),
    ),
    Mistake(
        N_(
            "the output read before the write: Qwen3-Next's layer reads the state after this "
            "token's correction, o = Sᵀ q / √d_k with the new S"
        ),
        _delta_mistake(read="before"),
    ),
    Mistake(
        N_(
            "1/√d_k put on the key: the key is already unit length and goes into the write as "
            "it is; the scale belongs to the query, at the read"
        ),
        _delta_mistake(scale="key"),
        hint=N_(
            "the key is used twice, to read the memory and to write it, both unscaled; only "
            "the readout is divided by √d_k."
        ),
    ),
    Mistake(
        N_("the output not divided by √d_k: Qwen3-Next scales the query by 1/√d_k"),
        _delta_mistake(scale="none"),
    ),
)


def _delta_cases() -> list[tuple]:
    gen = rng(152)

    def unit(n: int) -> np.ndarray:
        x = gen.normal(size=n)
        return x / np.linalg.norm(x)

    def case(d_k: int, d_v: int, beta: float) -> tuple:
        return (gen.normal(size=(d_k, d_v)), unit(d_k), unit(d_k), gen.normal(size=d_v), beta)

    written = case(4, 4, 1.0)  # β = 1 on a key already written: the write overwrites
    k = written[2]
    written = (written[0] + np.outer(k, gen.normal(size=4)), *written[1:])
    # the first cases are square (d_k = d_v): a transposed write or read still runs there
    return [case(3, 3, 0.5), case(4, 4, 0.9), written, case(4, 2, 0.3), case(2, 5, 0.7),
            (np.zeros((3, 3)), unit(3), unit(3), gen.normal(size=3), 0.6)]


# --- 3: the chunkwise form equals the recurrent one --------------------------------------------


def _chunk_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, chunk_size: int) -> np.ndarray:
    """``(seq, d_v)``: causal linear attention of one head, ``q``, ``k`` ``(seq, d_k)`` and ``v``
    ``(seq, d_v)``, as :func:`~course_attention.linear_attention.linear_attention` computes it
    token by token (``mode="recurrent"``: every chunk size gives the same numbers)."""
    import torch

    from ..linear_attention import linear_attention

    def head(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.asarray(x, dtype=float).copy())[None, None]

    return linear_attention(head(q), head(k), head(v), mode="recurrent")[0, 0].numpy()


def _chunked(q, k, v, chunk_size, *, mask=0, before=False, starts=None, width=0, carry_z=True,
             phi=True):
    """The chunkwise form, one step done the way a catalogued mistake does it: ``mask`` the
    diagonal the intra-chunk mask keeps (None: no mask), ``width`` added to each chunk's end."""
    fq, fk = (_elu1(q), _elu1(k)) if phi else (q, k)
    n, c = len(q), chunk_size
    out = np.zeros((n, v.shape[1]))
    state, z = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1])
    for s in range(0, n, c) if starts is None else starts(n, c):
        e = s + c + width
        qc, kc, vc = fq[s:e], fk[s:e], v[s:e]
        if before:
            state, z = state + kc.T @ vc, z + kc.sum(0)
        inside = qc @ kc.T
        if mask is not None:
            inside = np.tril(inside, mask)
        num = qc @ state + inside @ vc
        den = (qc @ z if carry_z else 0.0) + inside.sum(-1)
        out[s:e] = num / den[:, None]
        if not before:
            state, z = state + kc.T @ vc, z + kc.sum(0)
    return out


def _chunk_mistake(**how: object):
    return lambda *args: _chunked(*args, **how)


_BOUNDARY_HINT = N_(
    "chunk i holds the tokens range(s, min(s + C, n)) with s = i · C: the chunks meet "
    "without gap or overlap, and the last one may be shorter — `for s in range(0, n, C)` "
    "with the slice `s:s + C`."
)

CHUNK_MISTAKES = (
    Mistake(
        N_(
            "no causal mask inside the chunk: each token reads the keys of the later tokens of "
            "its chunk; keep the lower triangle of φ(q_c) φ(k_c)ᵀ, diagonal included"
        ),
        _chunk_mistake(mask=None),
        hint=N_(
            "between chunks the state hides the future by construction; inside a chunk only "
            "the mask does: np.tril(phi_q_c @ phi_k_c.T)."
        ),
    ),
    Mistake(
        N_(
            "the state updated before the chunk's outputs: the chunk's own keys and values are "
            "then counted twice, once in the state and once in the masked product; update S "
            "and z after"
        ),
        _chunk_mistake(before=True),
        hint=N_(
            "the state a chunk reads holds the tokens before the chunk, and only those: use "
            "it, then add the chunk's φ(K_c)ᵀ V_c and Σ φ(k)."
        ),
    ),
    Mistake(
        N_(
            "the mask without its diagonal (np.tril(…, -1)): a token must read its own key "
            "too; without it the first token divides 0 by 0"
        ),
        _chunk_mistake(mask=-1),
    ),
    Mistake(
        N_(
            "chunks that overlap by one token (the slice s:s + C + 1): the token on the "
            "boundary is written into the state twice and its output is computed again "
            "with itself counted twice"
        ),
        _chunk_mistake(width=1),
        hint=_BOUNDARY_HINT,
    ),
    Mistake(
        N_(
            "chunks one token short (the slice s:s + C − 1): the last token of every chunk is "
            "skipped, its output stays 0 and it never enters the state"
        ),
        _chunk_mistake(width=-1),
        hint=_BOUNDARY_HINT,
    ),
    Mistake(
        N_(
            "the last, shorter chunk dropped: when C does not divide the length the tokens "
            "after the last full chunk still need their outputs (range(0, n, C) covers them)"
        ),
        _chunk_mistake(starts=lambda n, c: range(0, n - c + 1, c)),
        hint=_BOUNDARY_HINT,
    ),
    Mistake(
        N_(
            "z not carried between chunks: the denominator must add φ(q) · z of the earlier "
            "tokens, as the numerator adds φ(q) S"
        ),
        _chunk_mistake(carry_z=False),
    ),
    Mistake(
        N_(
            "no feature map: the package's linear attention uses φ(x) = elu(x) + 1 on the "
            "queries and keys (positive, so every weight and every denominator is positive)"
        ),
        _chunk_mistake(phi=False),
    ),
)


def _chunk_cases() -> list[tuple]:
    gen = rng(153)

    def case(seq: int, d_k: int, d_v: int, chunk_size: int) -> tuple:
        return (gen.normal(size=(seq, d_k)), gen.normal(size=(seq, d_k)),
                gen.normal(size=(seq, d_v)), chunk_size)

    return [
        case(7, 2, 3, 3),  # chunks of 3, 3 and 1
        case(8, 4, 4, 4),  # two full chunks
        case(5, 3, 2, 1),  # chunks of one token: the recurrent form
        case(6, 3, 3, 8),  # one chunk longer than the text: the parallel form
        case(13, 3, 2, 5),  # chunks of 5, 5 and 3
    ]


# --- 4: a state's bytes against a KV cache's --------------------------------------------------


def _bytes_reference(n_layers: int, heads: int, d_k: int, d_v: int, length: int,
                     bytes_per_value: int) -> tuple[int, int]:
    """The bytes of a stack's linear states, ``n_layers · heads · d_k · d_v · bytes``
    (:func:`~course_attention.linear_attention.state_bytes`), and of the KV cache of a
    ``length``-token text in the same stack made softmax, a key of ``d_k`` and a value of
    ``d_v`` numbers per token, head and layer
    (:func:`~course_attention.grouped_query.kv_cache_bytes_per_token`, which counts
    ``2 · d_head``: its mean over ``d_head = d_k`` and ``d_head = d_v``)."""
    from ..grouped_query import kv_cache_bytes_per_token
    from ..linear_attention import state_bytes

    L, H, dk, dv, T, b = (int(x) for x in (n_layers, heads, d_k, d_v, length, bytes_per_value))
    per_token = (kv_cache_bytes_per_token(L, H, dk, b) + kv_cache_bytes_per_token(L, H, dv, b))
    return state_bytes(L, H, dk, dv, b), T * per_token // 2


def _bytes(L, H, dk, dv, T, b, *, state_numbers=None, per_token=None, length=True, unit=1,
           state_heads=True):
    """The two byte counts, one step done the way a catalogued mistake does it."""
    state = L * (H if state_heads else 1) * (dk * dv if state_numbers is None
                                             else state_numbers(dk, dv)) * b
    kv = L * H * (dk + dv if per_token is None else per_token(dk, dv)) * b * (T if length else 1)
    return unit * state, unit * kv


BYTES_MISTAKES = (
    Mistake(
        N_(
            "the state counted per token (times length): it is one d_k × d_v matrix per head "
            "and layer, overwritten at each token, whatever the length"
        ),
        lambda L, H, dk, dv, T, b: (T * _bytes(L, H, dk, dv, T, b)[0],
                                    _bytes(L, H, dk, dv, T, b)[1]),
        hint=N_(
            "the length enters the cache only: each token adds a key and a value to it, "
            "while the state keeps its size."
        ),
    ),
    Mistake(
        N_("the keys forgotten: the cache holds a key (d_k numbers) and a value (d_v) per token"),
        lambda *a: _bytes(*a, per_token=lambda dk, dv: dv),
    ),
    Mistake(
        N_("the values forgotten: the cache holds a key (d_k numbers) and a value (d_v) per "
           "token"),
        lambda *a: _bytes(*a, per_token=lambda dk, dv: dk),
    ),
    Mistake(
        N_("the cache of one token: a text of `length` tokens caches `length` keys and values"),
        lambda *a: _bytes(*a, length=False),
    ),
    Mistake(
        N_(
            "the state counted as d_k + d_v numbers, a key and a value: it is their outer "
            "product's sum, a d_k × d_v matrix"
        ),
        lambda *a: _bytes(*a, state_numbers=lambda dk, dv: dk + dv),
    ),
    Mistake(
        N_("one state per layer: each head carries its own d_k × d_v state"),
        lambda *a: _bytes(*a, state_heads=False),
    ),
    Mistake(
        N_("bits counted, not bytes: bytes_per_value is already in bytes"),
        lambda *a: _bytes(*a, unit=8),
    ),
)


def _bytes_cases() -> list[tuple]:
    return [
        (1, 2, 3, 4, 5, 1),  # a toy to count by hand: 24 bytes of state, 70 of cache
        (32, 32, 128, 128, 4096, 2),  # Llama 2 7B's shape at 4k tokens, bfloat16
        (36, 32, 128, 128, 32768, 2),  # Qwen3-Next's linear layers at 32k tokens
        (2, 4, 16, 8, 100, 8),  # the course's scale, float64, d_k ≠ d_v
        (24, 16, 64, 32, 64, 4),  # float32
        (12, 8, 64, 64, 1, 2),  # one token
    ]


# --- the exercises ------------------------------------------------------------------------------

register(
    Exercise(
        id="linear-attention-1",
        title=N_("One recurrent step of linear attention"),
        reference=_step_reference,
        cases=_step_cases,
        difficulty=1,
        minutes=10,
        mistakes=STEP_MISTAKES,
        error_hints=_OUTER_ERRORS,
        hint=N_(
            "state = state + np.outer(phi_k, v) (d_k, d_v); z = z + phi_k; out = state.T @ phi_q "
            "/ (phi_q @ z); return state, z, out."
        ),
        nudge=N_(
            "write the token first (its φ(k) vᵀ into S, its φ(k) into z), then read with the "
            "query: Sᵀ φ(q), divided by φ(q) · z."
        ),
    )
)

register(
    Exercise(
        id="linear-attention-2",
        title=N_("The delta rule's update"),
        reference=_delta_reference,
        cases=_delta_cases,
        difficulty=2,
        minutes=10,
        mistakes=DELTA_MISTAKES,
        error_hints=_OUTER_ERRORS,
        hint=N_(
            "error = v - state.T @ k (d_v,); state = state + beta * np.outer(k, error) (d_k, "
            "d_v); out = state.T @ q / np.sqrt(len(q)); return state, out."
        ),
        nudge=N_(
            "first ask the memory what it returns for k, then write β times the difference "
            "between v and that, under k; read the new state with the query, scaled by "
            "1/√d_k."
        ),
    )
)

register(
    Exercise(
        id="linear-attention-3",
        title=N_("The chunkwise form equals the recurrent one"),
        reference=_chunk_reference,
        cases=_chunk_cases,
        difficulty=3,
        minutes=20,
        mistakes=CHUNK_MISTAKES,
        hint=N_(
            "`fq, fk = phi(q), phi(k)`; `n, C = len(q), chunk_size`; S = np.zeros((d_k, d_v)); "
            "z = np.zeros(d_k); out = np.zeros((n, d_v)); for s in range(0, n, C): `qc, kc, vc "
            "= fq[s:s + C], fk[s:s + C], v[s:s + C]`; inside = np.tril(qc @ kc.T); out[s:s + C] "
            "= (qc @ S + inside @ vc) / (qc @ z + inside.sum(-1))[:, None]; then S = S + kc.T @ "
            "vc and z = z + kc.sum(0); return out."
        ),
        nudge=N_(
            "each chunk's outputs have two parts: what the earlier chunks left in S and z, "
            "read with the chunk's queries, and the chunk's own tokens, through a causal mask; "
            "update S and z only once the chunk is done."
        ),
    )
)

register(
    Exercise(
        id="linear-attention-4",
        title=N_("A state's bytes against a KV cache's"),
        reference=_bytes_reference,
        cases=_bytes_cases,
        difficulty=1,
        minutes=10,
        mistakes=BYTES_MISTAKES,
        hint=N_(
            "state = n_layers * heads * d_k * d_v * bytes_per_value; kv = length * n_layers * "
            "heads * (d_k + d_v) * bytes_per_value; return state, kv."
        ),
        nudge=N_(
            "a state is one d_k × d_v matrix per head and layer, whatever the length; the "
            "cache holds, per token, head and layer, a key of d_k numbers and a value of d_v."
        ),
    )
)
