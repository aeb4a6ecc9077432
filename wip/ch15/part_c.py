# %% md
(sec-linear-attention-hf)=
## Qwen3-Next's layer, against Hugging Face's

Hugging Face's Qwen3-Next {cite:p}`qwen2025qwen3next` ships two plain-PyTorch references for
the gated delta rule, `torch_recurrent_gated_delta_rule` and `torch_chunk_gated_delta_rule`
(fast GPU kernels replace them when the `flash-linear-attention` library is installed).
`la_hf.rule_equality` runs them and the course's rule on the same random inputs in float64:
# %% code
gaps = la_hf.rule_equality(seq=40, chunk_size=16)
gaps
# %% code remove-cell
assert gaps.chunk_recurrent < 1e-12  # the course's two forms: float64 rounding
assert 1e-9 < gaps.hf_recurrent < 1e-5 * gaps.scale and 1e-9 < gaps.hf_chunk < 1e-5 * gaps.scale
ca.glue(hf_rec_gap=gaps.hf_recurrent, hf_chunk_gap=gaps.hf_chunk,
        own_gap=gaps.chunk_recurrent)
# %% md
The course's recurrent and chunkwise forms differ by {glue:text}`own_gap:.0e`, float64's
rounding. Hugging Face's two differ from them by {glue:text}`hf_rec_gap:.0e` and
{glue:text}`hf_chunk_gap:.0e`: about float32's rounding, and far above float64's. That is not a
disagreement about the rule. Both references convert their inputs to float32 before they
compute, whatever dtype they are given, as their source shows:
# %% code
from transformers.models.qwen3_next import modeling_qwen3_next

print(inspect.getsource(modeling_qwen3_next.torch_recurrent_gated_delta_rule))
# %% code remove-cell
rule_src = inspect.getsource(modeling_qwen3_next.torch_recurrent_gated_delta_rule)
layer_src = inspect.getsource(modeling_qwen3_next.Qwen3NextGatedDeltaNet.forward)
for piece in (".to(torch.float32", "l2norm(query, dim=-1, eps=1e-6)", "query.shape[-1] ** 0.5",
              "kv_mem = (last_recurrent_state * k_t.unsqueeze(-1)).sum(dim=-2)",
              "delta = (v_t - kv_mem) * beta_t",
              "last_recurrent_state + k_t.unsqueeze(-1) * delta.unsqueeze(-2)",
              "(last_recurrent_state * q_t.unsqueeze(-1)).sum(dim=-2)", ".to(initial_dtype)"):
    assert piece in rule_src, piece
assert re.search(r"last_recurrent_state = last_recurrent_state \* \w+_t\b", rule_src)
grouped = ("repeat_interleave(num_v_heads // num_k_heads, dim=2)" in rule_src  # transformers 5
           or "repeat_interleave(self.num_v_heads // self.num_k_heads, dim=2)" in layer_src)
assert grouped
# %% md
Read it from the top, beside the teaching copy above:

1. **Grouped value heads.** Qwen3-Next gives its linear layers more value heads than key heads;
   `repeat_interleave` lets each query/key head serve its group of value heads, the same idea as
   chapter 11's grouped-query attention with the roles of keys and values swapped (transformers 5
   does this inside the function; version 4.57, which Colab has, does it in the layer before the
   call).
2. **Everything goes to float32** (`.to(torch.float32)`), in the layout
   `(batch, heads, seq, dim)`. This line is why the comparison above stops at float32's
   precision.
3. **Queries and keys are L2-normalised** when `use_qk_l2norm_in_kernel` is set (the layer sets
   it), and queries are divided by $\sqrt{d_k}$: the teaching copy's first line.
4. **The loop.** The state is first multiplied by $e^{g_t}$; `kv_mem` is $S^\top k_t$, what the memory returns for
   this key, computed as a broadcast product summed over $d_k$; `delta` is the error
   $\beta_t (v_t - S^\top k_t)$; the state adds the outer product $k_t\, \text{delta}^\top$; the
   output is $S^\top q_t$. Line for line the teaching copy.
5. **Back to the input's dtype** at the end: float64 in, float64 out, float32 in between.

The layer around the rule, `Qwen3NextGatedDeltaNet`, adds what the rule does not have. Its
`forward`, the part from the projections to the rule:
# %% code
forward = inspect.getsource(modeling_qwen3_next.Qwen3NextGatedDeltaNet.forward)
start = forward.rindex("\n", 0, forward.index("projected_states_qkvz =")) + 1  # from that line
end = forward.rindex("\n", 0, forward.index("# Update cache")) + 1  # to the cache's comment
print(textwrap.dedent(forward[start:end]))
# %% code remove-cell
for piece in ("self.in_proj_qkvz(hidden_states)", "self.in_proj_ba(hidden_states)",
              "causal_conv1d_fn(", "beta = b.sigmoid()",
              "g = -self.A_log.float().exp() * F.softplus(a.float() + self.dt_bias)",
              "use_qk_l2norm_in_kernel=True", "chunk_gated_delta_rule(",
              "recurrent_gated_delta_rule("):
    assert piece in forward[start:end], piece
assert "self.norm(core_attn_out, z)" in forward
# %% md
In order:

1. **Two projections.** `in_proj_qkvz` gives queries, keys, values and a gate `z` per value
   head; `in_proj_ba` gives two numbers per value head, `b` and `a`.
2. **A short causal convolution** over queries, keys and values (`causal_conv1d_fn`, width 4 in
   the released config, followed by SiLU): each channel mixes its own last four positions. It
   lets a key carry a little of the tokens just before it, which the state alone cannot do
   cheaply; the trained models of {ref}`sec-linear-attention-recall` have it too.
3. **The gates.** $\beta = \sigma(b)$, the write strength. $g = -e^{A_\text{log}}\,
   \mathrm{softplus}(a + \text{dt\_bias})$, always $\le 0$, so $e^{g} \in (0, 1]$: a learned
   rate per head, times a softplus of the token's own signal. The names come from state-space
   models (Mamba's step size $\Delta t$ and decay $A$).
4. **The rule**, chunkwise on a whole text and recurrent for one new token with a cached state,
   with `use_qk_l2norm_in_kernel=True`.
5. **After it** (not shown above): a gated RMSNorm of each head's output, $\mathrm{RMSNorm}(o)
   \odot \mathrm{SiLU}(z)$, and `out_proj`.

The course's `gated_deltanet.GatedDeltaNet` is that layer, written with the course's rule and
Hugging Face's weight names, so `gated_deltanet.from_hf` loads a `Qwen3NextGatedDeltaNet`'s
weights as they are. A small random layer in float64 (two key heads serving four value heads),
and the control: one gate's bias moved by 0.5 in the course's copy:
# %% code
layer_gap, layer_scale, layer_control = la_hf.layer_equality(seq=37)
layer_gap, layer_scale, layer_control  # gap, largest output, gap with a wrong gate
# %% code remove-cell
assert layer_gap < 1e-5 * layer_scale and layer_gap > 1e-12  # float32's rule inside
assert layer_control > 1e4 * layer_gap  # the comparison sees a wrong gate
ca.glue(layer_gap=layer_gap, layer_rel=layer_gap / layer_scale, layer_control=layer_control)
# %% md
The outputs agree to {glue:text}`layer_rel:.0e` of their size, float32's precision again (the
rule inside Hugging Face's layer computes in float32), and the wrong gate moves them by
{glue:text}`layer_control:.2f`: the comparison can tell.
