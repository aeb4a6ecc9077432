# %% md
(sec-linear-attention-summary)=
## Summary

- **Linear attention** replaces $\exp(q \cdot k)$ by $\phi(q) \cdot \phi(k)$. Regrouping the
  product makes causal attention a recurrence over a state $S_t = S_{t-1} + \phi(k_t) v_t^\top$
  of $d_k \times d_v$ numbers per head, with a normaliser $z_t$. Its parallel, recurrent and
  chunkwise forms compute the same outputs (to float64 rounding here); they differ in speed.
- **A state against a cache.** The state weighs what the KV cache of $d_\text{head}/2$ tokens
  weighs, and then stops growing. Qwen3-Next's 3:1 hybrid keeps a cache in a quarter of its
  layers.
- **The state is a fast-weight memory**, written by outer products and read with a key. Past
  $d_k$ pairs the keys cannot all be orthogonal and every read picks up the other values.
- **The delta rule** writes the error, $S_t = S_{t-1} + \beta_t k_t (v_t - S_{t-1}^\top k_t)^\top$:
  one gradient step of online regression per token, exact at $\beta = 1$ for a unit key.
  **Gated DeltaNet** first decays the state by $e^{g_t}$. Both have a chunkwise form (one
  triangular solve per block) equal to the recurrent one.
- **Hugging Face's Qwen3-Next** computes the rule in float32; the course's rule equals its
  references, and its layer equals `Qwen3NextGatedDeltaNet`, to float32's precision, and a wrong
  gate is seen.
- **Trained on associative recall** at equal width, every kind fits a few pairs; past the head
  dimension linear attention's recall falls, both delta rules keep more of it, and softmax
  attention keeps nearly all, paying with a cache that grows with the text.
- **A 3:1 hybrid** caches a quarter of all-softmax's bytes per token; at this course's scale
  its one softmax layer gave back little recall over four Gated DeltaNet layers.
- **Normalised keys and $\beta \in (0, 1)$** keep the delta rule stable; positive features keep
  linear attention's normaliser away from zero.
