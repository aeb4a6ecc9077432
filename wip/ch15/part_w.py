# %% md
(sec-linear-attention-wrong)=
## What can go wrong

**Keys that are not normalised.** The delta rule multiplies the state by $I - \beta_t k_t k_t^\top$
at every step. Along $k_t$ that factor is $1 - \beta_t \|k_t\|^2$: between 0 and 1 for a unit key
and $\beta_t \in (0, 1)$, but below $-1$ once $\beta_t \|k_t\|^2 > 2$. Then every write along a
direction the keys keep returning to flips the state's sign and makes it larger: the online
regression's learning rate is too large, and it diverges. Two hundred random keys in four
dimensions, $\beta = 0.7$, once normalised and once of length 2:
# %% code
gen = torch.Generator().manual_seed(0)
raw = torch.randn(1, 1, 200, 4, generator=gen, dtype=torch.float64)  # (batch, heads, seq, d_k)
v200 = torch.randn(1, 1, 200, 4, generator=gen, dtype=torch.float64)
no_decay, beta07 = torch.zeros(1, 1, 200, dtype=torch.float64), torch.full((1, 1, 200), 0.7, dtype=torch.float64)
unit = torch.nn.functional.normalize(raw, dim=-1)
_, unit_state = la.gated_delta_rule(unit, unit, v200, no_decay, beta07)
_, long_state = la.gated_delta_rule(2 * unit, 2 * unit, v200, no_decay, beta07)
float(unit_state.norm()), float(long_state.norm())  # the state's size after 200 writes
# %% code remove-cell
assert float(unit_state.norm()) < 10 and float(long_state.norm()) > 1e6
ca.glue(unit_norm=float(unit_state.norm()), long_norm=float(long_state.norm()))
# %% md
With unit keys the state stays at {glue:text}`unit_norm:.1f`; with keys of length 2 it reaches
{glue:text}`long_norm:.1e` after 200 tokens. That is why DeltaNet and Qwen3-Next L2-normalise
queries and keys (`use_qk_l2norm_in_kernel=True` in the layer above) and keep $\beta$ in
$(0, 1)$ with a sigmoid: together they hold $\beta \|k\|^2 \le 1$.

**A feature map that is not positive.** Linear attention divides by $\phi(q_t)^\top z_t$, the sum
of the weights. With positive features that sum is positive. Take $\phi(x) = x$ instead (no
feature map at all) and the weights can be negative, their sum near zero, and the output
anything. 256 random queries, keys and values of width 8:
# %% code
q256, k256, v256 = (torch.randn(256, 8, generator=gen, dtype=torch.float64) for _ in range(3))
for name, phi in (("elu + 1", la.elu_feature), ("identity", lambda x: x)):
    weights = (phi(q256) @ phi(k256).T).tril()  # (seq, seq): causal, unnormalised
    out = (weights @ v256) / weights.sum(-1, keepdim=True)
    print(f"{name:9s} smallest |sum of weights| {float(weights.sum(-1).abs().min()):.3f}, "
          f"largest |output| {float(out.abs().max()):.1f}")
# %% code remove-cell
sums = {}
for name, phi in (("elu", la.elu_feature), ("identity", lambda x: x)):
    w = (phi(q256) @ phi(k256).T).tril()
    sums[name] = (float(w.sum(-1).abs().min()), float(((w @ v256) / w.sum(-1, keepdim=True)).abs().max()))
assert sums["elu"][1] <= float(v256.abs().max()) < 0.1 * sums["identity"][1]
ca.glue(elu_out=sums["elu"][1], identity_out=sums["identity"][1], v_max=float(v256.abs().max()))
# %% md
With $\mathrm{elu}+1$ every output is a weighted average of values, so it stays within the
values' range (at most {glue:text}`elu_out:.2f` here, the largest value being
{glue:text}`v_max:.2f`). Without it one output reaches {glue:text}`identity_out:.1f`. The delta
rule has no normaliser, so it needs no positive features; its normalised keys play that role.

**Comparing in the wrong precision.** Hugging Face's references compute in float32 whatever they
are given ({ref}`sec-linear-attention-hf`). A float64 comparison against them that demands
float64's agreement fails for no fault of either side; one that accepts any difference would miss
a wrong gate. The chapter's checks accept float32's rounding and test that a wrong gate is seen.
