# %% md
(ch-linear-attention)=
# Attention as a recurrence: linear attention, DeltaNet, hybrids

**You will learn**

1. how replacing the softmax by a product of feature maps turns causal attention into a
   **recurrence** over a fixed-size state, and why its parallel, recurrent and chunkwise forms
   compute the same thing (proven here in float64);
2. what that state costs in bytes against a KV cache that grows with the text, for a 7B-scale
   model and for Qwen3-Next's 3:1 hybrid;
3. the **delta rule** (DeltaNet) and its gated form (Gated DeltaNet): a memory that corrects what
   it stores instead of piling values on top of each other, proven equal to Hugging Face's
   Qwen3-Next references and read line by line;
4. what each kind of layer can recall when trained on the same task, and what one softmax layer
   in four gives back.

**You need** {ref}`ch-self-attention`, {ref}`ch-efficient-attention`, {ref}`ch-modern-attention`

**Time** about 110 min: 55 to read, 50 for the exercises, 5 for the explorer
# %% code remove-input
# Setup: makes this notebook run anywhere. In Colab it installs the course package once.
try:
    import course_attention  # noqa: F401
except ImportError:
    %pip install --quiet "course-attention @ git+https://github.com/attention-step-by-step/attention-step-by-step"
# %% code
import inspect
import re
import textwrap

import numpy as np
import torch
import transformers

import course_attention as ca
from course_attention import grouped_query, viz, widgets
from course_attention import exercises as ex
from course_attention import linear_attention as la
from course_attention.linear_attention import compare as lc
from course_attention.linear_attention import gated_deltanet
from course_attention.linear_attention import hf as la_hf

ca.setup(seed=0)
# %% md
Section {ref}`sec-linear-attention-recall` trains seven small models. Four of them start now in
a second Python process (`training.in_background`, chapter 9) and train while you read; the
other three train here when that section comes.
# %% code
pending = lc.start_training(seed=0)  # a Future: softmax, DeltaNet, all-softmax, the 3:1 hybrid
# %% md
(sec-linear-attention-why)=
## A state that does not grow

Chapter 3 compared attention with the recurrent networks it replaced. A recurrent network reads
a text one token at a time and carries a state of fixed size: each step costs the same, however
long the text, but everything it will ever know about the past must fit in that state.
Attention keeps every key and value instead (chapter 11's KV cache), so token $t$ costs $t$
dot products and the cache grows with the text. Qwen3-Next {cite:p}`qwen2025qwen3next`, Kimi
Linear {cite:p}`kimiteam2025kimilinear` and MiniMax-01 {cite:p}`minimax2025minimax01` mix the
two: most of their layers carry a state, a few keep the whole cache. This chapter builds those
state layers from attention's own algebra.

Start from one query over $n$ keys. Softmax attention computes $\exp(q \cdot k_j)$ for every key,
normalises, and averages the values. Suppose the score were a dot product of features instead, $\phi(q) \cdot \phi(k_j)$, for some
**feature map** (特征映射) $\phi$ into $r$ positive numbers. Then the
weighted sum of values can be regrouped:

$$
\sum_j \big(\phi(q)^\top \phi(k_j)\big)\, v_j^\top
= \phi(q)^\top \underbrace{\sum_j \phi(k_j)\, v_j^\top}_{S \;\in\; \mathbb{R}^{r \times d_v}}
$$

The sum $S$ does not depend on the query. It is one $r \times d_v$ matrix that every query
reads. For all queries at once, that is the associativity of matrix products:
$(\phi(Q)\,\phi(K)^\top)\,V = \phi(Q)\,(\phi(K)^\top V)$. The left order builds an $n \times n$
matrix of scores; the right order never does.
# %% code
torch.manual_seed(0)
n, d = 6, 4
Q, K, V = (torch.randn(n, d, dtype=torch.float64) for _ in range(3))
fQ, fK = la.elu_feature(Q), la.elu_feature(K)  # (n, d) each: elu(x) + 1 > 0
scores_first = (fQ @ fK.T) @ V  # (n, n) scores, then (n, d_v)
state_first = fQ @ (fK.T @ V)  # (d, d_v) state, then (n, d_v)
float((scores_first - state_first).abs().max())
# %% code remove-cell
assert float((scores_first - state_first).abs().max()) < 1e-12
assert bool((fQ > 0).all() and (fK > 0).all())
ca.glue(assoc_gap=float((scores_first - state_first).abs().max()))
# %% md
The two orders agree to rounding ({glue:text}`assoc_gap:.0e`). This is **linear attention**
(线性注意力) {cite:p}`katharopoulos2020transformers`: the feature map is $\phi(x) = \mathrm{elu}(x) + 1$,
positive so that every weight is positive, and each output is divided by the sum of its weights,
$\phi(q)^\top z$ with $z = \sum_j \phi(k_j)$, as the softmax divides by its sum. The weights are
no longer a softmax: they are not sharp, and no temperature makes them so. That price comes
back in {ref}`sec-linear-attention-recall`.

(sec-linear-attention-forms)=
## Causal: a running sum, three ways

A decoder's query $t$ may only read keys $1 \dots t$. The sum then runs up to $t$, and it can be
kept as it grows, one token at a time:

$$
S_t = S_{t-1} + \phi(k_t)\, v_t^\top, \qquad z_t = z_{t-1} + \phi(k_t), \qquad
o_t = \frac{S_t^\top \phi(q_t)}{\phi(q_t)^\top z_t}
$$

That is a recurrent network whose state is the pair $(S_t, z_t)$: $r \times d_v + r$ numbers per
head, whatever $t$. The same outputs come out of three computations. The **parallel form** (并行形式)
masks the $n \times n$ matrix $\phi(Q)\phi(K)^\top$ below its diagonal, as chapter 4 masked
scores, and multiplies by $V$: fast to train, quadratic in $n$. The **recurrent form**
(循环形式) runs the
loop above: what a decoder does at inference, one token and one constant-size update at a time.
The **chunkwise form** (分块形式) splits the text into blocks of $C$ tokens: inside a block, the masked
product; between blocks, the state. A teaching copy of the recurrent form:
# %% code
def linear_attention_recurrent(q, k, v, eps=1e-6):
    """q, k: (seq, d_k); v: (seq, d_v) → (seq, d_v), one token at a time."""
    fq, fk = la.elu_feature(q), la.elu_feature(k)
    S = torch.zeros(q.shape[1], v.shape[1], dtype=q.dtype)  # (d_k, d_v): the whole memory
    z = torch.zeros(q.shape[1], dtype=q.dtype)  # (d_k,): the normaliser
    out = []
    for t in range(len(q)):
        S = S + torch.outer(fk[t], v[t])  # write: one outer product
        z = z + fk[t]
        out.append(S.T @ fq[t] / (fq[t] @ z + eps))  # read with the query
    return torch.stack(out)
# %% code
q, k, v = (torch.randn(1, 2, 37, 8, dtype=torch.float64) for _ in range(3))  # (batch, heads, seq, d)
forms = {mode: la.linear_attention(q, k, v, mode=mode, chunk_size=8)
         for mode in ("parallel", "recurrent", "chunk")}
mine = torch.stack([linear_attention_recurrent(q[0, h], k[0, h], v[0, h]) for h in range(2)])
{mode: float((out - forms["parallel"]).abs().max()) for mode, out in forms.items()}, \
    float((mine - forms["recurrent"][0]).abs().max())
# %% code remove-cell
gaps = [float((out - forms["parallel"]).abs().max()) for out in forms.values()]
assert max(gaps) < 1e-12 and float((mine - forms["recurrent"][0]).abs().max()) < 1e-12
assert 37 % 8 != 0  # a last chunk shorter than the others is covered
ca.glue(forms_gap=max(max(gaps), float((mine - forms["recurrent"][0]).abs().max())))
# %% md
All three forms and the teaching copy agree to {glue:text}`forms_gap:.0e` on 37 tokens in
chunks of 8 (the last chunk is shorter, and still equal). Which form runs is a matter of speed,
not of meaning: training kernels use the chunkwise form, because its products are matrix
products a GPU is fast at, and decoding uses the recurrent one.

(sec-linear-attention-bytes)=
## Bytes: a state against a cache

A softmax layer caches a key and a value per token, per layer and per KV head (chapter 11); a
linear layer keeps one $d_k \times d_v$ state per head, whatever the length. For a 7B-scale
decoder, Hugging Face's default `LlamaConfig` (32 layers, 32 heads of 128, Llama 2 7B's
shape), in 16-bit numbers:
# %% code
llama = transformers.LlamaConfig()
head = llama.hidden_size // llama.num_attention_heads
per_token = grouped_query.kv_cache_bytes_per_token(llama.num_hidden_layers,
                                                   llama.num_key_value_heads, head)
state = la.state_bytes(llama.num_hidden_layers, llama.num_attention_heads, head, head)
lengths = np.array([1, 64, 1024, 4096, 32768])
{int(t): (per_token * int(t) / 2**20, state / 2**20) for t in lengths}  # MiB: cache, state
# %% code remove-cell
assert per_token == 2 * 32 * 32 * 128 * 2 and state == 32 * 32 * 128 * 128 * 2
crossover = state / per_token
assert crossover == head / 2  # the state weighs what the cache of d_head / 2 tokens weighs
ca.glue(kv_kib=per_token / 2**10, state_mib=state / 2**20, crossover=int(crossover),
        ratio_4k=per_token * 4096 / state, ratio_32k=per_token * 32768 / state)
# %% md
The cache costs {glue:text}`kv_kib:.0f` KiB per token; the state costs
{glue:text}`state_mib:.0f` MiB, once. They weigh the same at {glue:text}`crossover` tokens
($d_k d_v = 2\, d_\text{head}\, T$ gives $T = d_\text{head} / 2$); at 4,096 tokens the cache is
{glue:text}`ratio_4k:.0f` times the state, at 32,768 tokens {glue:text}`ratio_32k:.0f` times.
Qwen3-Next keeps one softmax layer in four (its config's
`layer_types`), with 2 KV heads of 256, and gives its linear layers 32 value heads of
$128 \times 128$:
# %% code
qwen = transformers.Qwen3NextConfig()
kinds = {kind: qwen.layer_types.count(kind) for kind in ("linear_attention", "full_attention")}
qwen_token = grouped_query.kv_cache_bytes_per_token(kinds["full_attention"],
                                                    qwen.num_key_value_heads, qwen.head_dim)
qwen_state = la.state_bytes(kinds["linear_attention"], qwen.linear_num_value_heads,
                            qwen.linear_key_head_dim, qwen.linear_value_head_dim)
all_full = grouped_query.kv_cache_bytes_per_token(qwen.num_hidden_layers,
                                                  qwen.num_key_value_heads, qwen.head_dim)
kinds, {int(t): ((qwen_state + qwen_token * int(t)) / 2**20, all_full * int(t) / 2**20)
        for t in lengths}  # MiB: hybrid, every layer softmax
# %% code remove-cell
assert kinds == {"linear_attention": 36, "full_attention": 12}
assert qwen.layer_types[:4] == ["linear_attention"] * 3 + ["full_attention"]
hybrid_32k = qwen_state + qwen_token * 32768
assert 2.5 < all_full * 32768 / hybrid_32k < 4  # 4× fewer cached layers, minus the states
ca.glue(qwen_linear=kinds["linear_attention"], qwen_full=kinds["full_attention"],
        qwen_kib=qwen_token / 2**10, qwen_state_mib=qwen_state / 2**20,
        qwen_saving_32k=all_full * 32768 / hybrid_32k)
# %% md
Its {glue:text}`qwen_full` softmax layers cache {glue:text}`qwen_kib:.0f` KiB per token, and its
{glue:text}`qwen_linear` linear layers hold {glue:text}`qwen_state_mib:.0f` MiB of state (plus
each one's short convolution window, a few tokens wide, in
{ref}`sec-linear-attention-hf`). At 32,768 tokens the whole memory is
{glue:text}`qwen_saving_32k:.1f` times smaller than if every layer were softmax. A state is
cheap. The question is what fits in it.
