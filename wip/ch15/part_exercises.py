# %% md
(sec-linear-attention-exercises)=
## Exercises
# %% md
:::{exercise} ★☆☆ · ~10 min · `linear-attention-1`
:label: ex-linear-attention-1

Write `linear_step(state, z, phi_q, phi_k, v)`: one token of causal linear attention
({ref}`sec-linear-attention-forms`). `state` `(d_k, d_v)` and `z` `(d_k,)` hold what the earlier
tokens wrote, $S = \sum_s \phi(k_s)\, v_s^\top$ and $z = \sum_s \phi(k_s)$; `phi_q`, `phi_k`
`(d_k,)` are the token's query and key already through the feature map, and `v` `(d_v,)` its
value. Return the new state, the new normaliser and the token's output `(d_v,)`, as
`la.linear_attention(..., mode="recurrent")` computes them: `return state, z, out`. Does the
token read its own key?
:::
# %% code
def linear_step(state, z, phi_q, phi_k, v):
    raise NotImplementedError  # your code here


ex.check("linear-attention-1", linear_step)
# %% md
:::{solution-start} ex-linear-attention-1
:class: dropdown
:::
Write, then read. The token's own key and value go into $S$ and $z$ first, as the diagonal of
the causal mask lets a query see its own key; reading the old state instead leaves the token out
of its own output, and the very first token would divide 0 by 0. The write is an outer product
with the key on the rows, `np.outer(phi_k, v)`, because $S$ is $(d_k, d_v)$; the read is
$S^\top \phi(q)$, divided by $\phi(q) \cdot z$, the sum of this query's weights. Run token by
token from an empty state, the step is the package's recurrent form (the last line: the largest
difference, rounding and the package's $\epsilon = 10^{-6}$).
# %% code
def linear_step(state, z, phi_q, phi_k, v):
    state = state + np.outer(phi_k, v)  # (d_k, d_v): write the token first
    z = z + phi_k  # (d_k,): the normaliser grows with it
    out = state.T @ phi_q / (phi_q @ z)  # read: (d_v,), weights that sum to 1
    return state, z, out


ex.check("linear-attention-1", linear_step)
gen = torch.Generator().manual_seed(0)
q_ex, k_ex, v_ex = (torch.randn(1, 1, 9, 4, generator=gen, dtype=torch.float64) for _ in range(3))
fq_ex, fk_ex = la.elu_feature(q_ex)[0, 0].numpy(), la.elu_feature(k_ex)[0, 0].numpy()
S_ex, z_ex, outs = np.zeros((4, 4)), np.zeros(4), []
for t in range(9):
    S_ex, z_ex, o = linear_step(S_ex, z_ex, fq_ex[t], fk_ex[t], v_ex[0, 0, t].numpy())
    outs.append(o)
package_ex = la.linear_attention(q_ex, k_ex, v_ex, mode="recurrent")[0, 0].numpy()
float(np.abs(np.stack(outs) - package_ex).max())
# %% code remove-cell
assert float(np.abs(np.stack(outs) - package_ex).max()) < 1e-6
# %% md
:::{solution-end}
:::
# %% md
:::{exercise} ★★☆ · ~10 min · `linear-attention-2`
:label: ex-linear-attention-2

Write `delta_step(state, q, k, v, beta)`: one token of DeltaNet in Qwen3-Next's conventions
({ref}`sec-linear-attention-delta`). `state` `(d_k, d_v)` is the memory, `q` and `k` `(d_k,)`
the token's query and key (unit length, as Qwen3-Next's L2 normalisation leaves them), `v`
`(d_v,)` its value and `beta` a number in $(0, 1]$, the write strength. Update the state with the
delta rule, $S \leftarrow S + \beta\, k\, (v - S^\top k)^\top$, then read it:
$o = S^\top q / \sqrt{d_k}$. Return `state, out`. The classic mistake writes $v$ instead of
$v - S^\top k$: what would that write be?
:::
# %% code
def delta_step(state, q, k, v, beta):
    raise NotImplementedError  # your code here


ex.check("linear-attention-2", delta_step)
# %% md
:::{solution-start} ex-linear-attention-2
:class: dropdown
:::
Read the memory with the key before writing: `state.T @ k` is what it returns for $k$ now, and
the delta rule writes only the error $v - S^\top k$, scaled by $\beta$. Writing $v$ itself is
linear attention's write (without the normaliser): it adds the new value on top of the old one.
The key is used twice, to read and to write, unscaled; only the query is divided by
$\sqrt{d_k}$, at the read, which comes after the write. Below, a key under which something is
stored: with $\beta = 1$ the delta step reads back exactly $v$ (a difference of rounding),
linear attention's write the old value plus $v$.
# %% code
def delta_step(state, q, k, v, beta):
    error = v - state.T @ k  # (d_v,): what the memory gets wrong for this key
    state = state + beta * np.outer(k, error)  # (d_k, d_v): write the correction
    out = state.T @ q / np.sqrt(len(q))  # read after the write; the query is scaled
    return state, out


ex.check("linear-attention-2", delta_step)
gen = np.random.default_rng(0)
k_unit = gen.normal(size=4)
k_unit /= np.linalg.norm(k_unit)
S_old = np.outer(k_unit, gen.normal(size=3))  # something already stored under k
v_new = gen.normal(size=3)
S_delta, _ = delta_step(S_old, k_unit, k_unit, v_new, 1.0)
S_linear = S_old + np.outer(k_unit, v_new)  # the classic mistake: v, not the error
float(np.abs(S_delta.T @ k_unit - v_new).max()), float(np.abs(S_linear.T @ k_unit - v_new).max())
# %% code remove-cell
assert float(np.abs(S_delta.T @ k_unit - v_new).max()) < 1e-12
assert float(np.abs(S_linear.T @ k_unit - v_new).max()) > 0.1
# %% md
:::{solution-end}
:::
# %% md
:::{exercise} ★★★ · ~20 min · `linear-attention-3`
:label: ex-linear-attention-3

Write `linear_attention_chunked(q, k, v, chunk_size)`: causal linear attention of one head in its
chunkwise form ({ref}`sec-linear-attention-forms`). `q`, `k` `(seq, d_k)` and `v` `(seq, d_v)`
are raw: apply $\phi(x) = \mathrm{elu}(x) + 1$ (`phi` below) to the queries and keys. Split the
tokens into chunks of `chunk_size` (the last may be shorter); each chunk's outputs add what the
earlier chunks left in $S$ and $z$, read with the chunk's queries, to the chunk's own tokens
through a causal mask. Return `(seq, d_v)`; the checker compares it with the package's recurrent
form, token by token. When must $S$ and $z$ take in the chunk's keys and values?
:::
# %% code
def phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # elu(x) + 1, positive


def linear_attention_chunked(q, k, v, chunk_size):
    raise NotImplementedError  # your code here


ex.check("linear-attention-3", linear_attention_chunked)
# %% md
:::{solution-start} ex-linear-attention-3
:class: dropdown
:::
The state a chunk reads holds the tokens before the chunk, and only those; inside the chunk, the
lower triangle of $\phi(Q_c)\phi(K_c)^\top$, diagonal included, lets each token read its
predecessors in the chunk and itself. Only once the chunk's outputs are computed do $S$ and $z$
take in its keys and values: updated before, the chunk would be counted twice. The chunks meet
without gap or overlap, `s:s + C` for `s in range(0, n, C)`, and the last one may be shorter.
Below, the largest difference from the package's recurrent form for chunks of 1, 3, 5 and 40
tokens on 37 tokens (it comes from the package's $\epsilon = 10^{-6}$ in the denominators): every
chunk size gives the same numbers.
# %% code
def linear_attention_chunked(q, k, v, chunk_size):
    fq, fk = phi(q), phi(k)
    n, C = len(q), chunk_size
    S, z = np.zeros((q.shape[1], v.shape[1])), np.zeros(q.shape[1])  # the earlier chunks
    out = np.zeros((n, v.shape[1]))
    for s in range(0, n, C):
        qc, kc, vc = fq[s:s + C], fk[s:s + C], v[s:s + C]  # the last chunk may be shorter
        inside = np.tril(qc @ kc.T)  # (c, c): the chunk's own tokens, causally
        out[s:s + C] = (qc @ S + inside @ vc) / (qc @ z + inside.sum(-1))[:, None]
        S, z = S + kc.T @ vc, z + kc.sum(0)  # only now: after the chunk's outputs
    return out


ex.check("linear-attention-3", linear_attention_chunked)
gen = torch.Generator().manual_seed(1)
q_ex, k_ex, v_ex = (torch.randn(1, 1, 37, d, generator=gen, dtype=torch.float64)
                    for d in (4, 4, 3))
recurrent_ex = la.linear_attention(q_ex, k_ex, v_ex, mode="recurrent")[0, 0].numpy()
one_head = q_ex[0, 0].numpy(), k_ex[0, 0].numpy(), v_ex[0, 0].numpy()
chunk_gaps = {C: float(np.abs(linear_attention_chunked(*one_head, C) - recurrent_ex).max())
              for C in (1, 3, 5, 40)}
chunk_gaps
# %% code remove-cell
assert max(chunk_gaps.values()) < 1e-6
# %% md
:::{solution-end}
:::
# %% md
:::{exercise} ★☆☆ · ~10 min · `linear-attention-4`
:label: ex-linear-attention-4

Write `state_and_cache_bytes(n_layers, heads, d_k, d_v, length, bytes_per_value)`
({ref}`sec-linear-attention-bytes`). A stack of `n_layers` linear-attention layers with `heads`
heads each keeps one $d_k \times d_v$ state per head; the same stack made softmax caches, for
each of the `length` tokens, a key of `d_k` numbers and a value of `d_v` numbers per head and
layer. Every number takes `bytes_per_value` bytes. Return `state, kv`, the two sizes in bytes.
At what length do they weigh the same when $d_k = d_v$?
:::
# %% code
def state_and_cache_bytes(n_layers, heads, d_k, d_v, length, bytes_per_value):
    raise NotImplementedError  # your code here


ex.check("linear-attention-4", state_and_cache_bytes)
# %% md
:::{solution-start} ex-linear-attention-4
:class: dropdown
:::
The length enters the cache only: the state is overwritten at each token and keeps its size. With
$d_k = d_v = d$ the state of $d^2$ numbers per head weighs what the cache of $d / 2$ tokens
weighs ($2\, d\, T = d^2$). For Llama 2 7B's shape (32 layers, 32 heads of 128) in 16-bit numbers,
the last line gives the state and the cache at 4,096 tokens in MiB, the cache of 64 tokens
against the state, and their ratio at 4,096 tokens.
# %% code
def state_and_cache_bytes(n_layers, heads, d_k, d_v, length, bytes_per_value):
    state = n_layers * heads * d_k * d_v * bytes_per_value  # one d_k × d_v matrix per head
    kv = length * n_layers * heads * (d_k + d_v) * bytes_per_value  # a key and a value each
    return state, kv


ex.check("linear-attention-4", state_and_cache_bytes)
state_7b, kv_7b = state_and_cache_bytes(32, 32, 128, 128, 4096, 2)
(state_7b / 2**20, kv_7b / 2**20, state_and_cache_bytes(32, 32, 128, 128, 64, 2),
 kv_7b / state_7b)
# %% code remove-cell
assert state_7b == la.state_bytes(32, 32, 128, 128)
assert kv_7b == 4096 * grouped_query.kv_cache_bytes_per_token(32, 32, 128)
state_64, kv_64 = state_and_cache_bytes(32, 32, 128, 128, 64, 2)
assert state_64 == kv_64 == state_7b
assert kv_7b == 64 * state_7b
# %% md
:::{solution-end}
:::
