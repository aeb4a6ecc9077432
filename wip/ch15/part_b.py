# %% md
(sec-linear-attention-delta)=
## A memory that corrects what it stores

Drop the feature map and the normaliser for a moment: the state $S = \sum_i k_i v_i^\top$ is a
**fast-weight memory** (快速权重记忆) {cite:p}`schlag2021linear`, a matrix written by outer products
and read by a product with a key. Read it with one of the keys that were written:

$$
S^\top k_j = \sum_i v_i\, (k_i \cdot k_j) = v_j \|k_j\|^2 + \sum_{i \ne j} v_i\, (k_i \cdot k_j)
$$

With unit keys that are orthogonal, the second sum vanishes and the memory returns exactly
$v_j$. But $d_k$ numbers hold at most $d_k$ orthogonal directions. Write more pairs than that and
every read picks up the other values, weighted by how much their keys overlap: **interference**
(干扰). Write the same key twice, with a new value, and the read returns the sum of old and new.
Unit random keys in $d_k = 8$, reading back every value written (the mean over 200 random
memories):
# %% code
def write_and_read(n_pairs, d_k=8, d_v=8, trials=200, seed=0):
    """Mean relative error of reading back every value, over `trials` random memories."""
    gen = torch.Generator().manual_seed(seed)
    keys = torch.randn(trials, n_pairs, d_k, generator=gen, dtype=torch.float64)
    keys = torch.nn.functional.normalize(keys, dim=-1)  # unit keys
    values = torch.randn(trials, n_pairs, d_v, generator=gen, dtype=torch.float64)
    S = keys.transpose(1, 2) @ values  # (trials, d_k, d_v): the sum of the outer products k_i v_iᵀ
    read = keys @ S  # (trials, n_pairs, d_v): S^T k_j for every key written
    return float(((read - values).norm(dim=-1) / values.norm(dim=-1)).mean())


{n: round(write_and_read(n), 2) for n in (1, 2, 4, 8, 16, 32, 64)}  # mean relative error
# %% code remove-cell
errors = {n: write_and_read(n) for n in (1, 2, 4, 8, 16, 32, 64)}
assert errors[1] < 1e-12 and all(errors[a] < errors[b] for a, b in zip(errors, list(errors)[1:]))
assert errors[8] > 0.5 and errors[64] > 2  # past d_k pairs, the read is mostly other values
near = {n: e / ((n - 1) / 8) ** 0.5 for n, e in errors.items() if n > 1}
assert all(0.8 < r < 1.2 for r in near.values())  # about √((n − 1) / d_k)
ca.glue(err_8=errors[8], err_64=errors[64])
# %% md
One pair comes back exactly; every added pair makes every read worse. At 8 pairs in 8 dimensions
the mean error is already {glue:text}`err_8:.2f` of a value's length, and at 64 pairs
{glue:text}`err_64:.1f`: the reads are mostly the other values. The errors stay within 20 % of
$\sqrt{(n - 1)/d_k}$, the size of $n - 1$ overlaps $k_i \cdot k_j$ of random unit keys, each of
variance $1/d_k$.

The **delta rule** (delta 规则) writes the error instead of the value. Before writing $v_t$ under
$k_t$, read what the memory already returns for $k_t$, and write only the difference, scaled by
a write strength $\beta_t \in (0, 1)$:

$$
S_t = S_{t-1} + \beta_t\, k_t \big(v_t - S_{t-1}^\top k_t\big)^\top
    = \big(I - \beta_t k_t k_t^\top\big) S_{t-1} + \beta_t\, k_t v_t^\top
$$

This is one step of gradient descent on the regression loss
$\tfrac12 \| S^\top k_t - v_t \|^2$, with learning rate $\beta_t$: the memory is trained online,
one pair per token {cite:p}`schlag2021linear`. With a unit key and $\beta_t = 1$ the step is exact:
afterwards $S_t^\top k_t = v_t$, whatever was stored under $k_t$ before. Autograd confirms the
gradient, and the overwrite:
# %% code
S = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)  # (d_k, d_v)
k_t = torch.nn.functional.normalize(torch.randn(4, dtype=torch.float64), dim=0)
v_t, beta_t = torch.randn(3, dtype=torch.float64), 0.7
(0.5 * (S.T @ k_t - v_t).pow(2).sum()).backward()
with torch.no_grad():
    delta_update = S + beta_t * torch.outer(k_t, v_t - S.T @ k_t)
    sgd_step = S - beta_t * S.grad
    exact = S + torch.outer(k_t, v_t - S.T @ k_t)  # β = 1
float((delta_update - sgd_step).abs().max()), float((exact.T @ k_t - v_t).abs().max())
# %% code remove-cell
assert float((delta_update - sgd_step).abs().max()) < 1e-12
assert float((exact.T @ k_t - v_t).abs().max()) < 1e-12
# %% md
Both differences are rounding: the delta update *is* the gradient step, and at $\beta = 1$ the
key reads back exactly the value just written. DeltaNet {cite:p}`yang2024parallelizing` is
this rule with L2-normalised keys and queries and a learned $\beta_t = \sigma(w_\beta^\top x_t)$
per token and head, read as $o_t = S_t^\top q_t$.

**Gated DeltaNet** (门控 DeltaNet) {cite:p}`yang2025gated` adds forgetting. Before each write the whole state
decays by $\alpha_t = e^{g_t} \in (0, 1]$, learned per token and head:

$$
S_t = \alpha_t \big(I - \beta_t k_t k_t^\top\big) S_{t-1} + \beta_t\, k_t v_t^\top
$$

The delta rule erases one direction at a time; the gate can clear the whole memory at once, when
a new document starts or an old fact stops mattering. Qwen3-Next's linear layers are Gated
DeltaNet. Kimi Linear's "Kimi Delta Attention" refines the gate: a decay for each of the $d_k$
rows of the state instead of one number per head. The teaching copy, in the conventions of
Hugging Face's Qwen3-Next (queries scaled by $1/\sqrt{d_k}$, decay, then read, correct, write):
# %% code
def gated_delta_recurrent(q, k, v, g, beta):
    """q, k: (seq, d_k) unit rows; v: (seq, d_v); g ≤ 0, beta: (seq,) → (seq, d_v), final S."""
    q = q / q.shape[-1] ** 0.5
    S = torch.zeros(q.shape[1], v.shape[1], dtype=q.dtype)  # (d_k, d_v)
    out = []
    for t in range(len(q)):
        S = S * torch.exp(g[t])  # forget a little
        error = v[t] - S.T @ k[t]  # what the memory gets wrong for this key
        S = S + beta[t] * torch.outer(k[t], error)  # write the correction
        out.append(S.T @ q[t])
    return torch.stack(out), S
# %% code
q, k, v, g, beta = la_hf.rule_inputs(seq=50, heads=2, seed=1)  # (1, heads, seq, d) and (1, heads, seq)
recurrent, state = la.gated_delta_rule(q, k, v, g, beta, mode="recurrent")
mine = [gated_delta_recurrent(q[0, h], k[0, h], v[0, h], g[0, h], beta[0, h]) for h in range(2)]
chunks = {c: la.gated_delta_rule(q, k, v, g, beta, mode="chunk", chunk_size=c) for c in (1, 7, 16, 64)}
(max(float((o - recurrent[0, h]).abs().max()) for h, (o, _) in enumerate(mine)),
 {c: float((out - recurrent).abs().max()) for c, (out, _) in chunks.items()})
# %% code remove-cell
copy_gap = max(max(float((o - recurrent[0, h]).abs().max()), float((s - state[0, h]).abs().max()))
               for h, (o, s) in enumerate(mine))
chunk_gap = max(max(float((o - recurrent).abs().max()), float((s - state).abs().max()))
                for o, s in chunks.values())
assert copy_gap < 1e-12 and chunk_gap < 1e-12
ca.glue(delta_copy_gap=copy_gap, delta_chunk_gap=chunk_gap)
# %% md
The teaching copy equals the package's recurrent form, and the chunkwise form equals it for
chunks of 1, 7, 16 and 64 tokens, outputs and final states alike, to
{glue:text}`delta_chunk_gap:.0e`. The chunkwise form is less obvious here than for linear
attention, because each write inside a block depends on the state the previous writes left.
Unrolled over a block of $C$ tokens, those dependencies form one unit lower-triangular
$C \times C$ system, $(I + \text{strictly lower part of } \beta K K^\top \odot \text{decay})$,
solved once per block (the WY or UT representation of {cite:t}`yang2024parallelizing`); after
that, everything is a matrix product. `la.gated_delta_rule(..., mode="chunk")` does exactly that:
read it beside the recurrent loop in the package's source.
