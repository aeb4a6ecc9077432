"""A small decoder-only language model (a GPT) and its key–value cache (chapter 8).

Introduced in chapter 8 (a GPT you train yourself). Built from the course's own pieces: each
:class:`Block` is pre-norm, ``x + attn(norm1(x))`` with the causal
:class:`~course_attention.modules.MultiHeadAttention` of chapter 5, then
``x + ff(norm2(x))`` with chapter 6's :class:`~course_attention.modules.FeedForward`. A final layer
norm, then the output layer. The architecture is GPT-2's (Radford et al., 2019): GELU with the
tanh approximation in the feed-forward network, biases in every projection and layer norm (eps
1e-5), an output layer without bias. So :func:`to_hf_gpt2` and :func:`from_hf_gpt2`
(:mod:`course_attention.gpt.hf`) convert exactly to and from Hugging Face's ``GPT2LMHeadModel``.
The output layer has its own matrix by default (*untied*); ``tied=True`` reuses the token
embedding instead, so the vector that embeds character ``c`` also scores ``c`` as the next
character (Press and Wolf, 2017; GPT-2 ties). Tying saves ``vocab · d_model`` parameters, which
matters for a vocabulary of 50,000 words and hardly for 96 characters; in this course's short
training the untied model learns faster (``benchmarks/train_gpt.py`` measures it).
:mod:`course_attention.gpt.claims` checks what chapter 8 says about its trained model.

The :class:`KVCache` keeps every layer's keys and values ``(batch, heads, context, d_head)`` so that
generating one more token runs one position through the projections and feed-forward networks
instead of the whole prefix; its query still reads every cached key and value, so the attention
of a step still grows with the length of the text.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..modules import FeedForward, MultiHeadAttention

__all__ = [
    "GPTConfig",
    "CHAPTER_CONFIG",
    "CHAPTER_TRAINING",
    "LONGER_TRAINING",
    "REGULARISED_TRAINING",
    "Block",
    "GPT",
    "KVCache",
    "Generation",
    "generate",
    "prefix_work",
    "cache_bytes",
    "window_batches",
    "next_token_loss",
    "validation_loss",
    "train_gpt",
    "time_generation",
    "repeat_losses",
    "greedy_loop",
    "LOOP_REPEATS",
    "LOOP_SHARE",
    "TIMING_REPEATS",
    "to_hf_gpt2",
    "from_hf_gpt2",
]


@dataclass(frozen=True)
class GPTConfig:
    """The shape of a :class:`GPT`: vocabulary, context length, width, heads, layers.

    ``d_ff`` defaults to ``4 · d_model``; ``tied`` shares the embedding with the output layer.
    """

    vocab_size: int = 96
    context: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int | None = None
    tied: bool = False

    def __post_init__(self) -> None:
        for name in ("vocab_size", "context", "d_model", "n_heads", "n_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1; got {getattr(self, name)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be a multiple of n_heads={self.n_heads}")


#: The configuration of chapter 8, 2 layers, width 64, 4 heads, 48 characters of context (≈ 115,000
#: parameters).
CHAPTER_CONFIG = GPTConfig(vocab_size=96, context=48, d_model=64, n_heads=4, n_layers=2)
#: How chapter 8 trains it with :func:`train_gpt`: about 12 s on one core of a 2-core CPU.
CHAPTER_TRAINING: dict[str, Any] = {"steps": 700, "batch_size": 32, "lr": 6e-3}
#: Chapter 8's model and training, seed 0, for its budget and longer ones (each with its own cosine
#: schedule):
#: ``steps: (validation loss, mean training loss of the last 50 batches)`` in nats per character,
#: on Python 3.11's standard library. Measured by ``benchmarks/train_gpt.py --curve``, which fails
#: when a new measurement differs by more than 0.01.
LONGER_TRAINING: dict[int, tuple[float, float]] = {
    700: (1.6297, 1.6273),
    1000: (1.5044, 1.4238),
    2000: (1.4048, 1.2020),
    4000: (1.3946, 1.0629),
    8000: (1.4270, 0.9866),
}
#: The same, 4000 steps with AdamW's decoupled weight decay 0.1 (``train_gpt(weight_decay=0.1)``):
#: ``(validation loss, mean training loss of the last 50 batches)``, measured alike.
REGULARISED_TRAINING: dict[str, Any] = {"steps": 4000, "weight_decay": 0.1,
                                        "losses": (1.3726, 1.0600)}


#: GPT-2's layer-norm epsilon (Hugging Face's ``layer_norm_epsilon``), the same as torch's default.
NORM_EPS = 1e-5


class Block(torch.nn.Module):
    """One pre-norm decoder block: ``x + attn(norm1(x))``, then ``x + ff(norm2(x))``.

    Introduced in chapter 8. Causal self-attention only (no cross-attention: there is no
    encoder); the feed-forward network uses GELU's tanh approximation, as GPT-2 does. Input and
    output ``(batch, seq, d_model)``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(d_model, eps=NORM_EPS)
        self.norm2 = torch.nn.LayerNorm(d_model, eps=NORM_EPS)
        self.attn = MultiHeadAttention(d_model, n_heads)  # W_q, W_k, W_v, W_o with biases
        self.ff = FeedForward(d_model, d_ff, activation="gelu_tanh")

    def forward(self, x: torch.Tensor, need_weights: bool = False) -> tuple[torch.Tensor, Any]:
        """``(batch, seq, d_model)`` → the same shape, and the weights ``(batch, heads, seq,
        seq)`` when asked (else ``None``)."""
        out, weights = self.attn(self.norm1(x), causal=True, need_weights=need_weights)
        x = x + out
        return x + self.ff(self.norm2(x)), weights

    def step(self, x: torch.Tensor, cache: KVCache, layer: int) -> torch.Tensor:
        """The block for ``n`` new positions ``(batch, n, d_model)`` that attend to the cache.

        The new keys and values are written into ``cache`` at positions ``cache.length … +n``;
        the new queries attend to everything cached so far and to themselves, causally. Same
        projections as :meth:`forward` (the attention module's ``W_q, W_k, W_v, W_o``).
        """
        attn = self.attn
        h = self.norm1(x)
        Q, K, V = attn._split(attn.W_q(h)), attn._split(attn.W_k(h)), attn._split(attn.W_v(h))
        K_all, V_all = cache.write(layer, K, V)  # (batch, heads, length + n, d_head)
        n, total = x.shape[1], K_all.shape[2]
        # new query i sits at position total - n + i: it may see keys 0 … total - n + i
        mask = None
        if n > 1:
            mask = torch.ones(n, total, dtype=torch.bool, device=x.device).tril(total - n)
        out = torch.nn.functional.scaled_dot_product_attention(Q, K_all, V_all, attn_mask=mask)
        out = attn.W_o(out.transpose(1, 2).reshape(x.shape[0], n, attn.d_model))
        x = x + out
        return x + self.ff(self.norm2(x))


class KVCache:
    """Keys and values of every layer, kept between generation steps (chapter 8).

    Introduced in chapter 8. ``keys[l]`` and ``values[l]`` are ``(batch, heads, context,
    d_head)`` buffers; the first ``length`` positions are filled. ``tokens`` holds the
    ids the cache has seen ``(batch, length)``, so reusing it for a different prompt is caught.
    """

    def __init__(self, config: GPTConfig, batch: int = 1, dtype: torch.dtype = torch.float32):
        if batch < 1:
            raise ValueError(f"batch must be ≥ 1; got {batch}")
        d_head = config.d_model // config.n_heads
        shape = (batch, config.n_heads, config.context, d_head)
        self.config, self.batch = config, batch
        self.keys = [torch.zeros(shape, dtype=dtype) for _ in range(config.n_layers)]
        self.values = [torch.zeros(shape, dtype=dtype) for _ in range(config.n_layers)]
        self.length = 0
        self.tokens = torch.zeros(batch, 0, dtype=torch.long)

    @property
    def nbytes(self) -> int:
        """Bytes the *filled* part holds: ``2 · layers · length · d_model · bytes`` per sequence,
        times the batch."""
        per = self.keys[0].element_size() * self.config.d_model * self.length
        return 2 * self.config.n_layers * per * self.batch

    def write(
        self, layer: int, K: torch.Tensor, V: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Store ``n`` new keys and values ``(batch, heads, n, d_head)`` of ``layer`` after the
        cached ones; return all of them ``(batch, heads, length + n, d_head)``.

        ``length`` itself advances in :meth:`GPT.step`, once every layer has written.
        """
        end = self.length + K.shape[2]
        self.keys[layer][:, :, self.length : end] = K
        self.values[layer][:, :, self.length : end] = V
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def reset(self) -> None:
        """Forget everything (the buffers are kept): ready for a new prompt."""
        self.length = 0
        self.tokens = self.tokens[:, :0]


class GPT(torch.nn.Module):
    """A decoder-only Transformer language model (chapter 8).

    Introduced in chapter 8. Token embedding plus a learned position embedding (one vector per
    position ``0 … context − 1``), ``n_layers`` pre-norm :class:`Block` layers, a final layer
    norm and the output layer, without bias (its own matrix, or the token embedding when
    ``config.tied``), as GPT-2.
    ``forward(tokens (batch, seq)) → logits (batch, seq, vocab)``; position ``t`` predicts token
    ``t + 1``.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        d_ff = 4 * config.d_model if config.d_ff is None else config.d_ff
        self.tok_embed = torch.nn.Embedding(config.vocab_size, config.d_model)
        self.pos_embed = torch.nn.Embedding(config.context, config.d_model)
        for embed in (self.tok_embed, self.pos_embed):
            torch.nn.init.normal_(embed.weight, std=0.02)
        self.blocks = torch.nn.ModuleList(
            Block(config.d_model, config.n_heads, d_ff) for _ in range(config.n_layers)
        )
        self.norm = torch.nn.LayerNorm(config.d_model, eps=NORM_EPS)
        self.out = (None if config.tied
                    else torch.nn.Linear(config.d_model, config.vocab_size, bias=False))

    def _check(self, tokens: torch.Tensor, start: int = 0) -> None:
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.is_floating_point():
            shape = tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens)
            raise ValueError(f"tokens must be an integer tensor (batch, seq); got {shape}")
        if start + tokens.shape[1] > self.config.context:
            raise ValueError(
                f"{start + tokens.shape[1]} positions ({start} cached + {tokens.shape[1]} new) "
                f"exceed the context of {self.config.context}: the model has no position "
                f"embedding beyond {self.config.context - 1}"
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.vocab_size):
            raise ValueError(
                f"token ids must lie in 0 … {self.config.vocab_size - 1}; got "
                f"{int(tokens.min())} … {int(tokens.max())}"
            )

    def _embed(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
        return self.tok_embed(tokens) + self.pos_embed(positions)  # (batch, seq, d_model)

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(x)
        return x @ self.tok_embed.weight.T if self.out is None else self.out(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``tokens`` ``(batch, seq)`` → logits ``(batch, seq, vocab)``, all positions at once."""
        self._check(tokens)
        x = self._embed(tokens, 0)
        for block in self.blocks:
            x, _ = block(x)
        return self._logits(x)

    def attention(self, tokens: torch.Tensor) -> torch.Tensor:
        """Every layer's attention weights ``(layers, batch, heads, seq, seq)``."""
        self._check(tokens)
        x, maps = self._embed(tokens, 0), []
        with torch.no_grad():
            for block in self.blocks:
                x, w = block(x, need_weights=True)
                maps.append(w)
        return torch.stack(maps)

    def new_cache(self, batch: int = 1) -> KVCache:
        """An empty :class:`KVCache` with this model's shape and dtype."""
        return KVCache(self.config, batch, dtype=self.tok_embed.weight.dtype)

    def step(self, tokens: torch.Tensor, cache: KVCache) -> torch.Tensor:
        """Run only the ``n`` new tokens ``(batch, n)``, reading the rest from ``cache``.

        Returns logits ``(batch, n, vocab)`` equal to ``forward(all tokens)[:, -n:]``. The new
        tokens sit at positions ``cache.length … cache.length + n − 1``: the position comes from
        the cache, so it advances with it (a hand-written loop that keeps its own position
        counter, and forgets to advance it, is the classic bug; chapter 8 shows what it costs).
        """
        if cache.config != self.config or cache.keys[0].dtype != self.tok_embed.weight.dtype:
            raise ValueError("the cache was made for another model (config or dtype differ)")
        self._check(tokens, cache.length)
        if tokens.shape[0] != cache.batch:
            raise ValueError(f"tokens have batch {tokens.shape[0]}, the cache {cache.batch}")
        x = self._embed(tokens, cache.length)
        for layer, block in enumerate(self.blocks):
            x = block.step(x, cache, layer)
        cache.length += tokens.shape[1]
        cache.tokens = torch.cat([cache.tokens, tokens], dim=1)
        return self._logits(x)


def prefix_work(prompt_len: int, n_new: int, cached: bool, context: int | None = None) -> int:
    """Token positions pushed through the model to generate ``n_new`` tokens (chapter 8).

    This counts the work of the embeddings, projections and feed-forward networks, done once per
    position run. It does not count attention: a cached step's query still reads every cached
    key and value, so its attention grows with the length of the text.
    Without a cache, step ``i`` reruns the whole sequence so far, ``prompt_len + i`` positions:
    ``Σ_{i<n_new} (prompt_len + i)``. With one, the prompt runs once and each later step runs
    one position: ``prompt_len + n_new − 1``. With a ``context`` ``C``, the model reads only the
    last ``C`` tokens (:func:`generate`): a step costs at most ``C`` positions without the cache,
    and with it, once the text fills the context, every step rebuilds the cache from the last
    ``C`` tokens, ``C`` positions too (their positions all moved by one, and above layer 0 every
    key and value also depended on the token that left the window).
    """
    if prompt_len < 1 or n_new < 1 or (context is not None and context < 1):
        raise ValueError(
            f"need prompt_len ≥ 1, n_new ≥ 1, context ≥ 1; got {prompt_len}, {n_new}, {context}"
        )
    if context is None:
        context = prompt_len + n_new  # never full
    start = min(prompt_len, context)  # what the first step reads
    if cached:
        grow = min(n_new - 1, context - start)  # steps that add one position to the cache
        return start + grow + (n_new - 1 - grow) * context  # the rest rebuild it
    below = min(max(context - prompt_len, 0), n_new)  # steps whose text still fits the context
    return below * prompt_len + below * (below - 1) // 2 + (n_new - below) * context


def cache_bytes(n_layers: int, seq: int, d_model: int, bytes_per_number: int = 4) -> int:
    """Memory of a full KV cache for one sequence: ``2 · layers · seq · d_model · bytes``.

    Introduced in chapter 8. The 2 counts keys and values; all heads together are ``d_model``
    wide.
    """
    for name, v in (("n_layers", n_layers), ("seq", seq), ("d_model", d_model)):
        if v < 1:
            raise ValueError(f"{name} must be ≥ 1; got {v}")
    return 2 * n_layers * seq * d_model * bytes_per_number


@dataclass
class Generation:
    """The result of :func:`generate`: new token ids ``(n_new,)`` and each step's logits
    ``(n_new, vocab)`` (float64 numpy)."""

    tokens: np.ndarray
    logits: np.ndarray
    cache: KVCache | None = field(default=None, repr=False)


@torch.no_grad()
def generate(
    model: GPT,
    prompt: Sequence[int] | np.ndarray | torch.Tensor,
    n_new: int,
    choose: Callable[[np.ndarray], int] | None = None,
    use_cache: bool = True,
    cache: KVCache | None = None,
    threads: int | None = 1,
) -> Generation:
    """Generate ``n_new`` tokens after ``prompt`` ``(prompt_len,)``, one at a time.

    Introduced in chapter 8. ``choose(logits (vocab,)) → id`` picks each token (default: greedy,
    the argmax; see :mod:`course_attention.sampling` for temperature, top-k and top-p). The model
    reads at most its last ``context`` tokens, as nanoGPT does (``idx[:, -block_size:]``): a
    longer prompt is cropped, and once the text outgrows the context the window slides. With
    ``use_cache`` the prompt runs once and every later step runs only the newest token through
    :meth:`GPT.step`, until the window slides: then every position moves by one, and above
    layer 0 every key and value also depended on the token that left the window, so the cached
    keys and values are stale and the cache is rebuilt from the window (``context`` positions per
    token, see :func:`prefix_work`). Without, every step reruns the whole window. A ``cache``
    passed in must be empty or hold a prefix of the (cropped) prompt; reusing one across prompts
    is an error. ``threads``: torch threads while generating (one step of a small model is
    fastest on one; see :func:`~course_attention.training.torch_threads`, ``None`` keeps torch's
    setting).
    """
    from ..training import torch_threads

    with torch_threads(threads):
        return _generate(model, prompt, n_new, choose, use_cache, cache)


def _generate(
    model: GPT,
    prompt: Sequence[int] | np.ndarray | torch.Tensor,
    n_new: int,
    choose: Callable[[np.ndarray], int] | None,
    use_cache: bool,
    cache: KVCache | None,
) -> Generation:
    ids = torch.as_tensor(np.asarray(prompt), dtype=torch.long).reshape(1, -1)  # (1, prompt_len)
    context = model.config.context
    if ids.shape[1] < 1 or n_new < 1:
        raise ValueError(f"need a prompt of ≥ 1 token and n_new ≥ 1; got {ids.shape[1]}, {n_new}")
    seq = ids[:, -context:]  # (1, ≤ context): what the model can read
    choose = (lambda z: int(np.argmax(z))) if choose is None else choose
    if cache is not None:
        if not use_cache:
            raise ValueError("a cache was given but use_cache=False")
        seen = cache.tokens[0]
        if len(seen) > seq.shape[1] or not torch.equal(seen, seq[0, : len(seen)]):
            raise ValueError(
                f"the cache holds {cache.length} tokens of another prompt "
                f"({seen[:12].tolist()} …): its keys and values belong to that text. Use a new "
                "cache (model.new_cache()) or call cache.reset()"
            )
    elif use_cache:
        cache = model.new_cache()
    model.eval()
    tokens, logits = [], []
    if use_cache:
        z = model.step(seq[:, cache.length :], cache)[0, -1]  # the prompt (what is not cached yet)
    else:
        z = model(seq)[0, -1]  # (vocab,)
    for i in range(n_new):
        row = z.double().numpy()
        nxt = choose(row)
        tokens.append(nxt)
        logits.append(row)
        if i == n_new - 1:
            break
        new = torch.tensor([[nxt]])
        seq = torch.cat([seq, new], dim=1)[:, -context:]  # the last `context` tokens
        if not use_cache:
            z = model(seq)[0, -1]  # the whole window again
        elif cache.length < context:
            z = model.step(new, cache)[0, -1]  # one new position; it reads every cached key
        else:  # the window slid: positions moved, and a key above layer 0 saw the token that left
            cache.reset()
            z = model.step(seq, cache)[0, -1]  # rebuild: `context` positions
    return Generation(np.array(tokens), np.array(logits), cache)


def window_batches(
    ids: np.ndarray, context: int, batch_size: int
) -> Callable[[torch.Generator], torch.Tensor]:
    """A batch sampler for :func:`~course_attention.training.fit`: random windows of the text.

    Each batch is ``(batch_size, context + 1)`` ids at random offsets of ``ids`` ``(n,)``:
    the model reads the first ``context`` and is scored on the last ``context``.
    """
    data = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
    if len(data) <= context or batch_size < 1:
        raise ValueError(
            f"need more than context={context} ids and batch_size ≥ 1; got {len(data)} ids, "
            f"batch_size={batch_size}"
        )
    offsets = torch.arange(context + 1)

    def draw(gen: torch.Generator) -> torch.Tensor:
        starts = torch.randint(0, len(data) - context, (batch_size, 1), generator=gen)
        return data[starts + offsets]  # (batch_size, context + 1)

    return draw


def next_token_loss(model: GPT, batch: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting ``batch[:, 1:]`` from ``batch[:, :-1]`` (nats)."""
    logits = model(batch[:, :-1])  # (batch, context, vocab)
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].reshape(-1))


@torch.no_grad()
def validation_loss(model: GPT, ids: np.ndarray, context: int | None = None) -> float:
    """Cross-entropy in nats per character on ``ids`` ``(n,)``, every character scored once.

    Introduced in chapter 8. The text is cut into windows of ``context + 1`` ids that overlap by
    one, so each character after the first is predicted exactly once from up to ``context``
    characters before it (fewer at the start of each window). Comparable with the bigram's loss.
    """
    context = model.config.context if context is None else context
    data = torch.from_numpy(np.ascontiguousarray(ids, dtype=np.int64))
    if len(data) < 2:
        raise ValueError(f"need at least 2 ids; got {len(data)}")
    n_win = (len(data) - 1) // context
    model.eval()
    total, count = 0.0, 0
    if n_win:
        rows = data[: n_win * context + 1]
        windows = rows.unfold(0, context + 1, context)  # (n_win, context + 1)
        for chunk in windows.split(256):
            loss = next_token_loss(model, chunk)
            total, count = total + loss.item() * chunk[:, 1:].numel(), count + chunk[:, 1:].numel()
    rest = data[n_win * context :]
    if len(rest) > 1:
        loss = next_token_loss(model, rest[None])
        total, count = total + loss.item() * (len(rest) - 1), count + len(rest) - 1
    return total / count


def train_gpt(
    config: GPTConfig,
    train_ids: np.ndarray,
    steps: int,
    batch_size: int = 32,
    lr: float = 3e-3,
    warmup: int = 30,
    seed: int = 0,
    progress: bool = True,
    weight_decay: float = 0.0,
) -> tuple[GPT, Any]:
    """Build a :class:`GPT` with ``seed`` and train it with :func:`~course_attention.training.fit`.

    Introduced in chapter 8. Returns ``(model, log)``; ``log.losses`` ``(steps,)``.
    ``weight_decay`` > 0 makes the optimiser AdamW.
    """
    from ..training import fit

    torch.manual_seed(seed)
    model = GPT(config)
    draw = window_batches(train_ids, config.context, batch_size)
    log = fit(model, draw, next_token_loss, steps, lr, warmup, weight_decay, seed, progress)
    return model, log


#: How many times :func:`time_generation` runs each way by default; it reports the best run.
TIMING_REPEATS = 7


def time_generation(
    model: GPT, prompt: np.ndarray, n_new: int, repeat: int = TIMING_REPEATS
) -> dict[str, float]:
    """Tokens per second of greedy generation with and without the cache (best of ``repeat``,
    the two interleaved so that a busy moment of the machine slows both alike).

    Introduced in chapter 8. Time is this process's CPU time (``time.process_time``) on one
    torch thread: programs running beside it take turns on the cores, which would stretch the
    wall-clock time of whichever run they interrupt, but not the CPU time it used. Returns
    ``{"cached": tok/s, "uncached": tok/s, "speedup": ratio, "max_diff": largest |logit
    difference| between the two runs}``.
    """
    from ..training import torch_threads

    best: dict[bool, float] = {}
    runs: dict[bool, Generation] = {}
    with torch_threads(1):
        for _ in range(repeat):
            for use_cache in (True, False):
                start = time.process_time()
                runs[use_cache] = generate(model, prompt, n_new, use_cache=use_cache)
                seconds = time.process_time() - start
                best[use_cache] = min(best.get(use_cache, math.inf), seconds)
    if not np.array_equal(runs[True].tokens, runs[False].tokens):
        raise AssertionError("cached and uncached generation chose different tokens")
    return {
        "cached": n_new / best[True],
        "uncached": n_new / best[False],
        "speedup": best[False] / best[True],
        "max_diff": float(np.abs(runs[True].logits - runs[False].logits).max()),
    }


@torch.no_grad()
def repeat_losses(
    model: GPT, length: int = 24, trials: int = 64, seed: int = 0
) -> tuple[float, float]:
    """Loss on the first and on the second copy of random text repeated once (chapter 8).

    Introduced in chapter 8. Each of ``trials`` rows is ``length`` characters drawn uniformly from
    the 95 printable ones, then the same ``length`` again ``(trials, 2 · length)``. Returns the
    mean cross-entropy (nats) of predicting characters ``1 … length − 1`` of the first copy and
    ``1 … length − 1`` of the second (the first character of each copy is skipped). A model that
    finds the earlier copy and reads on (an *induction head*, chapter 9) is far less surprised
    by the second copy; one that only knows what characters usually follow which is not.
    """
    if not (2 <= length and 2 * length <= model.config.context):
        raise ValueError(
            f"need 2 ≤ length ≤ context / 2 = {model.config.context // 2}; got {length}"
        )
    gen = np.random.default_rng(seed)
    half = torch.as_tensor(gen.integers(1, model.config.vocab_size, (trials, length)))
    rows = torch.cat([half, half], dim=1)  # (trials, 2 · length)
    model.eval()
    logp = torch.log_softmax(model(rows[:, :-1]), dim=-1)  # (trials, 2 · length − 1, vocab)
    loss = -logp.gather(-1, rows[:, 1:, None])[..., 0]  # (trials, 2 · length − 1)
    first, second = loss[:, : length - 1], loss[:, length:]
    return float(first.mean()), float(second.mean())


#: :func:`greedy_loop`'s defaults: a loop repeats its piece at least this many whole times …
LOOP_REPEATS = 3
#: … and fills at least this share of the text (for chapter 8's 120 characters, 30 or more).
LOOP_SHARE = 0.25


def greedy_loop(
    text: str, min_repeats: int = LOOP_REPEATS, min_share: float = LOOP_SHARE
) -> tuple[int, int] | None:
    """Where ``text`` falls into a loop: ``(start, period)``, or ``None`` when it does not.

    Introduced in chapter 8 (greedy decoding gets stuck). A loop is a tail ``text[start:]`` that
    repeats its first ``period`` characters to the end (the last copy may be cut short), at least
    ``min_repeats`` whole times, and that fills at least ``min_share`` of ``text``: the earliest
    such start, then the shortest period. Both conditions matter. Two equal characters at the end
    (``"ab  "``, two spaces or two newlines) repeat a piece only twice and are no loop; neither is
    a short repeat at the end of a long text (three spaces closing 120 characters). One character
    repeated over enough of the text is a loop (``"x = 1" + "_" * 30`` is ``(5, 1)``): greedy text
    does get stuck on one character. ``"abcabcabcabc"`` is ``(0, 3)``.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str; got {type(text).__name__}")
    if not isinstance(min_repeats, int) or min_repeats < 2 or not 0 < min_share <= 1:
        raise ValueError(
            f"need an integer min_repeats ≥ 2 and 0 < min_share ≤ 1; got {min_repeats}, {min_share}"
        )
    n = len(text)
    for start in range(n):
        tail = n - start
        if tail < min_share * n:
            return None  # every later tail is shorter still
        for period in range(1, tail // min_repeats + 1):
            if text[start + period :] == text[start : n - period]:
                return start, period
    return None


def to_hf_gpt2(model: GPT) -> Any:
    """``model`` as Hugging Face ``transformers``' ``GPT2LMHeadModel``, the same function.

    Introduced in chapter 8; see :func:`course_attention.gpt.hf.to_hf_gpt2` (``transformers`` is
    imported only here).
    """
    return hf.to_hf_gpt2(model)


def from_hf_gpt2(hf_model: Any) -> GPT:
    """A ``transformers`` ``GPT2LMHeadModel`` as this module's :class:`GPT`, the same function.

    Introduced in chapter 8; see :func:`course_attention.gpt.hf.from_hf_gpt2`. For GPT-2 small:
    ``from_hf_gpt2(GPT2LMHeadModel.from_pretrained("gpt2"))`` (a download).
    """
    return hf.from_hf_gpt2(hf_model)


# the submodules build on the names above: gpt.hf (Hugging Face), gpt.claims (chapter 8's claims)
from . import claims, hf  # noqa: E402, F401
