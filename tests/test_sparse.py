"""DeepSeek-V3.2's sparse attention (``course_attention.sparse``, chapter 13): the lightning
indexer, top-k selection and attention over the chosen keys, against direct computations,
dense attention and Hugging Face's ``DeepseekV32``; the top-k oracle on trained models; the
chapter's claims on seeds 1 and 2 (the chapter runs seed 0)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, modern, sparse
from course_attention.modern import compare

F64 = torch.float64


def _direct_scores(q, k, w):
    """Σ_h w_h · ReLU(q_h · k / √d), one query and key at a time."""
    b, n, h, d = q.shape
    out = torch.zeros(b, n, k.shape[1], dtype=q.dtype)
    for i, t, s in itertools.product(range(b), range(n), range(k.shape[1])):
        out[i, t, s] = sum(w[i, t, j] * max(float(q[i, t, j] @ k[i, s]) / d**0.5, 0.0)
                           for j in range(h))
    return out


def test_the_indexer_scores_are_the_weighted_sum_of_relus():
    torch.manual_seed(0)
    q, k, w = torch.randn(2, 5, 3, 4, dtype=F64), torch.randn(2, 5, 4, dtype=F64), torch.randn(
        2, 5, 3, dtype=F64)
    scores = sparse.indexer_scores(q, k, w)
    direct = _direct_scores(q, k, w)
    visible = torch.ones(5, 5, dtype=torch.bool).tril()
    assert torch.allclose(scores[:, visible], direct[:, visible], atol=1e-12)
    assert torch.isneginf(scores[:, ~visible]).all()
    assert torch.allclose(sparse.indexer_scores(q, k, w, causal=False), direct, atol=1e-12)
    # a negative head weight votes against a key: the score can be negative, unlike each ReLU
    assert (direct < 0).any()


def test_the_indexer_rotates_the_first_rope_dim_features_by_halves():
    torch.manual_seed(1)
    ix = sparse.LightningIndexer(d_model=8, q_dim=6, n_heads=2, d_head=6, rope_dim=4).to(F64)
    x, ql = torch.randn(1, 7, 8, dtype=F64), torch.randn(1, 7, 6, dtype=F64)
    ix.requires_grad_(False)
    scores = ix(x, ql)
    # by hand: queries and keys, features (0, 2) and (1, 3) turned by position · 10000^(-i/2)
    q = (ql @ ix.wq_b.weight.T).view(1, 7, 2, 6)
    k = torch.nn.functional.layer_norm(x @ ix.wk.weight.T, (6,), ix.k_norm.weight,
                                       ix.k_norm.bias, 1e-6)
    angle = torch.arange(7, dtype=F64)[:, None] * torch.tensor([1.0, 0.01], dtype=F64)

    def turn(v, cos, sin):
        a, b = v[..., 0:2], v[..., 2:4]
        return torch.cat((a * cos - b * sin, b * cos + a * sin, v[..., 4:]), dim=-1)

    q = turn(q, angle.cos()[:, None], angle.sin()[:, None])
    k = turn(k, angle.cos(), angle.sin())
    w = (x @ ix.weights_proj.weight.T) / 2**0.5
    visible = torch.ones(7, 7, dtype=torch.bool).tril()
    # the angles are float32 (as Hugging Face computes them): agreement to 1e-6
    assert torch.allclose(scores[:, visible], _direct_scores(q, k, w)[:, visible], atol=1e-6)


@pytest.mark.parametrize("k", [1, 3, 5, 9])
def test_topk_indices_keep_the_best_visible_keys(k):
    torch.manual_seed(2)
    scores = torch.randn(2, 3, 6, 6, dtype=F64)  # no ties
    idx = sparse.topk_indices(scores, k)
    assert idx.shape == (2, 3, 6, min(k, 6))
    for t in range(6):  # query t sees keys 0 … t and keeps min(k, t + 1) of them, best first
        kept = min(k, t + 1)
        best = scores[..., t, : t + 1].topk(kept, dim=-1).indices
        assert torch.equal(idx[..., t, :kept], best)
        assert (idx[..., t, kept:] == -1).all()
    mask = sparse.topk_mask(scores, k)
    kept = torch.tensor([min(k, t + 1) for t in range(6)])
    assert torch.equal(mask.sum(-1), kept.expand(2, 3, 6))
    assert not (mask & torch.ones(6, 6, dtype=torch.bool).triu(1)).any()  # never a future key


def test_ties_go_to_the_earlier_key_and_minus_inf_is_never_chosen():
    scores = torch.tensor([[1.0, 3.0, 1.0, 3.0, 1.0, float("-inf")]])
    assert sparse.topk_indices(scores, 3, causal=False).tolist() == [[1, 3, 0]]
    assert sparse.topk_indices(scores, 6, causal=False).tolist() == [[1, 3, 0, 2, 4, -1]]
    assert sparse.topk_mask(scores, 4, causal=False).tolist() == [[True] * 4 + [False] * 2]
    # queries after a cache: the 2 queries are positions 3 and 4 of 5 keys
    idx = sparse.topk_indices(torch.zeros(2, 5), 9)
    assert idx.tolist() == [[0, 1, 2, 3, -1], [0, 1, 2, 3, 4]]


def test_topk_mask_is_the_mask_of_topk_indices_even_with_ties():
    """The mask is computed without sorting; on scores full of ties and -inf it chooses exactly
    the keys the stable sort of topk_indices chooses."""
    gen = torch.Generator().manual_seed(3)
    for _ in range(20):
        scores = torch.randint(0, 4, (2, 3, 5, 8), generator=gen).to(F64)
        scores[scores == 3] = float("-inf")
        for k, causal in itertools.product((1, 2, 3, 5, 8, 11), (True, False)):
            indices = sparse.topk_indices(scores, k, causal)
            assert torch.equal(sparse.topk_mask(scores, k, causal),
                               sparse.mask_from_indices(indices, 8))


def _dense_causal(q, k, v):
    n, m = q.shape[2], k.shape[2]
    scores = (q @ k.transpose(2, 3)) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(m - n + 1), -torch.inf)
    return torch.softmax(scores, -1) @ v


def test_sparse_attention_is_dense_attention_when_k_reaches_the_sequence():
    torch.manual_seed(4)
    q, k, v = (torch.randn(2, 3, 10, 4, dtype=F64) for _ in range(3))
    scores = torch.randn(2, 10, 10, dtype=F64)
    dense = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    for top in (10, 11, 64):
        out = sparse.sparse_attention(q, k, v, sparse.topk_indices(scores, top))
        assert torch.allclose(out, dense, atol=1e-12)
    # the control: fewer keys than the sequence, and the output changes
    assert not torch.allclose(sparse.sparse_attention(q, k, v, sparse.topk_indices(scores, 9)),
                              dense, atol=1e-3)


def test_sparse_attention_reads_only_the_chosen_keys():
    torch.manual_seed(5)
    q, k, v = (torch.randn(2, 2, 7, 4, dtype=F64) for _ in range(3))
    per_head = sparse.topk_indices(torch.randn(2, 2, 7, 7, dtype=F64), 3)  # (batch, heads, 7, 3)
    out = sparse.sparse_attention(q, k, v, per_head, scale=0.3)
    for b, h, t in itertools.product(range(2), range(2), range(7)):
        keys = per_head[b, h, t][per_head[b, h, t] >= 0]
        w = torch.softmax(k[b, h, keys] @ q[b, h, t] * 0.3, dim=0)
        assert torch.allclose(out[b, h, t], w @ v[b, h, keys], atol=1e-12)
    # one choice for every head (DeepSeek's indexer), and keys and values shared by the heads
    shared = per_head[:, 0]
    assert torch.allclose(sparse.sparse_attention(q, k[:, :1], v[:, :1], shared),
                          sparse.sparse_attention(q, k[:, :1].expand(-1, 2, -1, -1),
                                                  v[:, :1].expand(-1, 2, -1, -1),
                                                  sparse.mask_from_indices(shared, 7)),
                          atol=1e-12)


def test_work_counts_the_pairs_each_mask_reads():
    torch.manual_seed(6)
    for seq, k in ((1, 1), (10, 3), (10, 10), (10, 50), (48, 8)):
        w = sparse.work(seq, k, heads=4, d_qk=16, d_v=8, index_heads=2, index_dim=5)
        mask = sparse.topk_mask(torch.randn(seq, seq), k)
        assert w.pairs_sparse == int(mask.sum())
        assert w.pairs_dense == int(torch.ones(seq, seq).tril().sum())
        assert (w.dense, w.sparse) == (4 * 24 * w.pairs_dense, 4 * 24 * w.pairs_sparse)
        assert w.indexer == 2 * 6 * w.pairs_dense
    assert sparse.work(10, 10, heads=1, d_qk=2).pairs_sparse == 55 and sparse.work(
        10, 1, heads=1, d_qk=2).indexer == 0
    # DeepSeek-V3.2 at 128K tokens: the indexer is ~1/17 of dense attention, the 2048 keys
    # ~1/32, and DSA does ~11 times less work than dense attention
    v32 = sparse.work(131_072, 2048, heads=128, d_qk=576, d_v=512, index_heads=64,
                      index_dim=128)
    assert v32.indexer / v32.dense == pytest.approx(64 * 129 / (128 * 1088))
    assert v32.ratio == pytest.approx(1 / (64 * 129 / (128 * 1088)
                                           + v32.pairs_sparse / v32.pairs_dense))
    assert 11 < v32.ratio < 11.1


def test_topk_mass_and_its_even_control():
    one_hot = torch.eye(6)[torch.tensor([2, 0, 5])]
    assert sparse.topk_mass(one_hot, 1) == 1.0
    rows = torch.tensor([[0.5, 0.3, 0.2, 0.0], [0.25, 0.25, 0.25, 0.25]])
    assert sparse.topk_mass(rows, 1) == pytest.approx((0.5 + 0.25) / 2)
    assert sparse.topk_mass(rows, 2) == pytest.approx((0.8 + 0.5) / 2)
    assert sparse.topk_mass(rows, 9) == pytest.approx(1.0)
    even = torch.ones(8, 8).tril()
    even = even / even.sum(-1, keepdim=True)  # causal attention with no favourites
    for k in (1, 3, 8):
        assert sparse.topk_mass(even, k) == pytest.approx(sparse.uniform_mass(8, k))
    assert sparse.uniform_mass(4, 1) == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 4) / 4)


def _tiny(seed: int = 0) -> modern.ModernGPT:
    config = modern.ModernConfig(vocab_size=20, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2,
                                 d_ff=24, context=12, qk_norm=True)
    torch.manual_seed(seed)
    model = modern.ModernGPT(config).to(F64).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.5).add_(1.0 if p.dim() == 1 else 0.0)
    return model


def test_attention_weights_are_the_softmax_of_chapter_12s_logits():
    model, tokens = _tiny(), torch.randint(0, 20, (3, 12))
    weights = sparse.attention_weights(model, tokens)
    assert weights.shape == (2, 3, 4, 12, 12)
    assert torch.allclose(weights.double(), torch.softmax(compare.attention_logits(model, tokens),
                                                          -1), atol=1e-6)
    assert all(b.attn.score_filter is None for b in model.blocks)


def test_only_top_k_keeps_each_heads_best_keys_and_changes_nothing_at_k_equal_T():
    model, tokens = _tiny(1), torch.randint(0, 20, (2, 12))
    with torch.no_grad():
        dense = model(tokens)
        with sparse.only_top_k(model, 12):
            assert torch.equal(model(tokens), dense)  # every visible key kept: the same numbers
        with sparse.only_top_k(model, 3):
            # what each layer reads: wrap the filter and look at what the softmax receives
            seen = []
            for b in model.blocks:
                keep = b.attn.score_filter
                b.attn.score_filter = lambda s, keep=keep: seen.append((s, keep(s))) or keep(s)
            three = model(tokens)
        assert torch.equal(model(tokens), dense)  # the filters are gone again
    assert not torch.allclose(three, dense, atol=1e-3)
    for scores, kept in seen:
        chosen = ~torch.isneginf(kept)
        assert torch.equal(chosen.sum(-1), torch.tensor([min(3, t + 1) for t in range(12)]).expand(
            2, 4, 12))
        assert torch.equal(chosen, sparse.topk_mask(scores, 3))  # each head its own top 3
        assert torch.equal(kept[chosen], scores[chosen])  # the chosen scores themselves
    # the decode path (a cache) goes through the same filter
    with torch.no_grad(), sparse.only_top_k(model, 3):
        cache = model.new_cache()
        model.step(tokens[:, :7], cache)
        assert torch.allclose(model.step(tokens[:, 7:], cache), three[:, 7:], atol=1e-12)


def test_the_shared_oracle_gives_every_head_the_keys_of_the_largest_summed_weight():
    model, tokens = _tiny(4), torch.randint(0, 20, (2, 12))
    seen = []
    with torch.no_grad():
        dense = model(tokens)
        with sparse.only_top_k(model, 12, shared=True):
            assert torch.equal(model(tokens), dense)
        with sparse.only_top_k(model, 3, shared=True):
            for b in model.blocks:
                keep = b.attn.score_filter
                b.attn.score_filter = lambda s, keep=keep: seen.append((s, keep(s))) or keep(s)
            shared = model(tokens)
        with sparse.only_top_k(model, 3):
            per_head = model(tokens)
    assert not torch.allclose(shared, per_head, atol=1e-3)
    for scores, kept in seen:
        chosen = ~torch.isneginf(kept)  # (batch, heads, 12, 12)
        assert torch.equal(chosen, chosen[:, :1].expand_as(chosen))  # one set for all heads
        summed = torch.softmax(scores, -1).sum(1)  # (batch, 12, 12), 0 on future keys
        assert torch.equal(chosen[:, 0], sparse.topk_mask(summed, 3))
        assert torch.equal(kept[chosen], scores[chosen])


def test_the_filters_are_removed_even_after_an_error():
    model = _tiny()
    with pytest.raises(RuntimeError), sparse.only_top_k(model, 2):
        raise RuntimeError("boom")
    assert all(b.attn.score_filter is None for b in model.blocks)


def test_random_keys_are_as_many_as_the_top_ks():
    model, tokens = _tiny(2), torch.randint(0, 20, (2, 12))
    counts = []
    with torch.no_grad(), sparse.only_random_k(model, 4, seed=0):
        for b in model.blocks:
            keep = b.attn.score_filter
            b.attn.score_filter = lambda s, keep=keep: counts.append(
                (~torch.isneginf(keep(s))).sum(-1)) or keep(s)
        model(tokens)
    assert all(torch.equal(c, torch.tensor([min(4, t + 1) for t in range(12)]).expand(2, 4, 12))
               for c in counts)


def test_loss_by_k_reaches_the_dense_loss_at_k_equal_T():
    model = _tiny(3)
    ids = np.random.default_rng(0).integers(0, 20, 100)
    losses = sparse.loss_by_k(model, ids, (1, 12))
    assert losses[12] == gpt.validation_loss(model, ids)
    assert losses[1] != losses[12]


def test_the_chapters_mla_model_can_be_restricted_too():
    from course_attention import mla

    model = mla.MLAGPT(mla.MLAConfig(vocab_size=20, d_model=16, n_layers=2, n_heads=4, d_c=8,
                                     d_nope=4, d_rope=4, d_v=4, d_ff=24, context=12)).eval()
    if not hasattr(model.blocks[0].attn, "score_filter"):
        pytest.skip("mla.MultiHeadLatentAttention has no score_filter yet")
    tokens = torch.randint(0, 20, (2, 12))
    with torch.no_grad():
        dense = model(tokens)
        with sparse.only_top_k(model, 12):
            assert torch.equal(model(tokens), dense)
        with sparse.only_top_k(model, 1):
            assert not torch.allclose(model(tokens), dense, atol=1e-6)
    assert sparse.attention_weights(model, tokens).shape == (2, 2, 4, 12, 12)


# ------------------------------------------------------------------------------ Hugging Face
SEQ, TOPK = 12, 5


def _hf(implementation: str):
    """A float64 DeepseekV32ForCausalLM of 2 layers, dense MLPs, 3 indexer heads keeping the
    top 5 keys, weights far from their start (norm weights near 1)."""
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "DeepseekV32Config"):
        pytest.skip("this transformers has no DeepseekV32 (it came after 4.57)")
    config = transformers.DeepseekV32Config(
        vocab_size=50, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, q_lora_rank=16, kv_lora_rank=12,
        qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=8, index_n_heads=3,
        index_head_dim=8, index_topk=TOPK, first_k_dense_replace=2, max_position_embeddings=64,
        attn_implementation=implementation)
    torch.manual_seed(0)
    model = transformers.DeepseekV32ForCausalLM(config).to(F64).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.5).add_(1.0 if p.dim() == 1 else 0.0)
    return model


def _hf_calls(model, monkeypatch, tokens):
    """Per layer: the indexer module, its inputs (hidden states, query latent) and its top-k
    indices; what the attention function received (query, key, value, scaling) and returned."""
    import transformers.models.deepseek_v32.modeling_deepseek_v32 as hf
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    attention, indexer = [], []
    implementation = model.config._attn_implementation
    real = hf.eager_attention_forward if implementation == "eager" else ALL_ATTENTION_FUNCTIONS[
        implementation]

    def spy(module, query, key, value, mask, **kwargs):
        out, weights = real(module, query, key, value, mask, **kwargs)
        attention.append({"query": query, "key": key, "value": value, "output": out,
                          "scaling": kwargs["scaling"]})
        return out, weights

    if implementation == "eager":
        monkeypatch.setattr(hf, "eager_attention_forward", spy)
    else:
        monkeypatch.setitem(ALL_ATTENTION_FUNCTIONS, implementation, spy)
    hooks = [layer.self_attn.indexer.register_forward_hook(
        lambda m, args, out: indexer.append((m, args[0], args[1], out)))
        for layer in model.model.layers]
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        for hook in hooks:
            hook.remove()
    return indexer, attention


def _visible(mask: torch.Tensor) -> torch.Tensor:
    return mask & torch.ones(mask.shape[-2:], dtype=torch.bool).tril()


@pytest.mark.parametrize("implementation, atol", [("sdpa", 1e-12), ("eager", 1e-6)])
def test_the_indexer_and_sparse_attention_equal_hugging_faces(implementation, atol, monkeypatch):
    """Given the hidden states and query latent HF's indexer received, the course's indexer
    (HF's weights loaded) chooses the same visible keys wherever the 5th and 6th scores are not
    tied (HF's ``torch.topk`` orders ties in no documented way; HF also fills the rows of early
    queries with future keys, which its causal mask then hides); given the query, key and value
    HF's attention received, :func:`sparse_attention` over HF's choice gives HF's output (float64
    in SDPA; eager's softmax is float32), and over the course's choice too on the untied rows."""
    model = _hf(implementation)
    tokens = torch.randint(0, 50, (2, SEQ), generator=torch.Generator().manual_seed(0))
    indexer, attention = _hf_calls(model, monkeypatch, tokens)
    compared = 0
    for (hf_indexer, x, q_latent, hf_top), call in zip(indexer, attention, strict=True):
        ours = sparse.LightningIndexer(32, 16, 3, 8, 4).to(F64)
        ours.load_state_dict(hf_indexer.state_dict())
        with torch.no_grad():
            scores = ours(x, q_latent)
        top = sparse.topk_indices(scores, TOPK)
        hf_chosen = _visible(sparse.mask_from_indices(hf_top.long(), SEQ))
        ours_chosen = sparse.mask_from_indices(top, SEQ)
        ranked = scores.sort(-1, descending=True).values
        untied = (ranked[..., TOPK - 1] - ranked[..., TOPK] > 1e-6) | torch.isneginf(
            ranked[..., TOPK])
        assert torch.equal(ours_chosen[untied], hf_chosen[untied])
        compared += int(untied.sum())
        q, k, v, scale = call["query"], call["key"], call["value"], call["scaling"]
        out = call["output"].transpose(1, 2)  # (batch, heads, seq, d_v)
        assert torch.allclose(sparse.sparse_attention(q, k, v, hf_chosen, scale), out, atol=atol)
        mine = sparse.sparse_attention(q, k, v, top, scale)
        assert torch.allclose(mine.transpose(1, 2)[untied], out.transpose(1, 2)[untied],
                              atol=atol)
        # the control: dense causal attention is far from HF's output
        every = _visible(torch.ones(2, SEQ, SEQ, dtype=torch.bool))
        dense = sparse.sparse_attention(q, k, v, every, scale)
        assert (dense - out).abs().max() > 0.1
    assert compared >= 0.8 * 2 * 2 * SEQ  # most queries of both layers are compared


def test_the_indexer_uses_rope_by_halves_not_interleaved(monkeypatch):
    """The control for the indexer's RoPE: the same weights with the rotary features taken as
    interleaved pairs (DeepSeek's main attention's layout) give other scores and keys."""
    model = _hf("sdpa")
    tokens = torch.randint(0, 50, (2, SEQ), generator=torch.Generator().manual_seed(0))
    hf_indexer, x, q_latent, _ = _hf_calls(model, monkeypatch, tokens)[0][0]
    ours = sparse.LightningIndexer(32, 16, 3, 8, 4).to(F64)
    ours.load_state_dict(hf_indexer.state_dict())
    swapped = sparse.LightningIndexer(32, 16, 3, 8, 4).to(F64)
    swapped.load_state_dict(hf_indexer.state_dict())
    order = torch.cat((modern.halves_order(4), torch.arange(4, 8)))  # rotary rows only
    with torch.no_grad():
        swapped.wq_b.weight.copy_(swapped.wq_b.weight.view(3, 8, 16)[:, order].reshape(24, 16))
        swapped.wk.weight.copy_(swapped.wk.weight[order])
        swapped.k_norm.weight.copy_(swapped.k_norm.weight[order])
        swapped.k_norm.bias.copy_(swapped.k_norm.bias[order])
        a, b = ours(x, q_latent), swapped(x, q_latent)
    visible = torch.ones(SEQ, SEQ, dtype=torch.bool).tril()
    assert (a - b)[:, visible].abs().max() > 0.1
    assert not torch.equal(sparse.topk_mask(a, TOPK), sparse.topk_mask(b, TOPK))
    # at position 0 nothing turns: the permutation alone changes no score there
    assert torch.allclose(a[:, 0, 0], b[:, 0, 0], atol=1e-12)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call, message", [
    (lambda: sparse.indexer_scores(torch.zeros(1, 2, 3), torch.zeros(1, 2, 3),
                                   torch.zeros(1, 2, 3)), "need q"),
    (lambda: sparse.indexer_scores(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 5),
                                   torch.zeros(1, 2, 3)), "disagree"),
    (lambda: sparse.indexer_scores(torch.zeros(1, 3, 1, 4), torch.zeros(1, 2, 4),
                                   torch.zeros(1, 3, 1)), "seq_k ≥ seq_q"),
    (lambda: sparse.LightningIndexer(8, 8, 2, 4, 3), "rope_dim must be even"),
    (lambda: sparse.topk_indices(torch.zeros(3, 3), 0), "k must be a positive integer"),
    (lambda: sparse.topk_indices(torch.zeros(3), 1), r"\(\.\.\., seq_q, seq_k\)"),
    (lambda: sparse.topk_indices(torch.full((2, 2), float("nan")), 1), "NaN"),
    (lambda: sparse.topk_mask(torch.zeros(3, 2), 1), "seq_k ≥ seq_q"),
    (lambda: sparse.mask_from_indices(torch.tensor([[0, 5]]), 5), r"-1 … 4"),
    (lambda: sparse.mask_from_indices(torch.zeros(2, 2), 5), "integer tensor"),
    (lambda: sparse.sparse_attention(torch.zeros(1, 2, 3), torch.zeros(1, 2, 3),
                                     torch.zeros(1, 2, 3), torch.ones(1, 3, 3).bool()),
     r"\(batch, heads, seq, d\)"),
    (lambda: sparse.sparse_attention(torch.zeros(1, 2, 3, 4), torch.zeros(1, 3, 3, 4),
                                     torch.zeros(1, 3, 3, 4), torch.ones(1, 3, 3).bool()),
     "disagree"),
    (lambda: sparse.sparse_attention(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4),
                                     torch.zeros(1, 2, 3, 4), torch.ones(1, 3, 4).bool()),
     "does not fit"),
    (lambda: sparse.sparse_attention(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4),
                                     torch.zeros(1, 2, 3, 4), torch.eye(3).bool()[None].flip(1)
                                     & torch.tensor([True, True, False])[:, None]),
     "reads no key"),
    (lambda: sparse.work(0, 1, heads=1, d_qk=1), "seq must be a positive integer"),
    (lambda: sparse.work(4, 1, heads=1, d_qk=1, index_dim=-1), "index_dim must be"),
    (lambda: sparse.topk_mass(torch.tensor([[0.5, 0.2]]), 1), "sum to 1"),
    (lambda: sparse.topk_mass(torch.tensor([[0.5, 0.5]]), 0), "k must be"),
    (lambda: sparse.only_top_k(torch.nn.Linear(2, 2), 2).__enter__(), "no attention layer"),
    (lambda: sparse.sparse_results(torch.nn.Linear(2, 2), 0), "no attention layer"),
])
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------------------ claims
def _results(**changes) -> sparse.SparseResults:
    ks = sparse.SPARSE_KS
    good = sparse.SparseResults(
        seed=0, context=48,
        mass=dict(zip(ks, (0.50, 0.68, 0.82, 0.92, 0.98, 1.0), strict=True)),
        uniform={k: sparse.uniform_mass(48, k) for k in ks},
        loss=dict(zip(ks, (2.52, 2.43, 2.405, 2.402, 2.4, 2.4), strict=True)),
        dense=2.4, random=2.9, shared={1: 2.8, 8: 2.405})
    return dataclasses.replace(good, **changes)


def test_the_claims_hold_on_results_that_make_them():
    sparse.check_sparse_claims(_results())


def test_the_claims_check_can_fail():
    ks = sparse.SPARSE_KS
    flat = dict(zip(ks, (0.2, 0.3, 0.5, 0.6, 0.8, 0.99), strict=True))  # spread, short of 1
    with pytest.raises(AssertionError, match=r"mass is 1 at k = T.*more than even attention's"):
        sparse.check_sparse_claims(_results(mass=flat))
    bad = dict(zip(ks, (2.401, 2.41, 2.40, 2.45, 2.4, 2.4001), strict=True))
    with pytest.raises(AssertionError, match=(r"k = T is the dense loss.*never falls.*"
                                              r"top 8 lose.*one key loses.*random keys")):
        sparse.check_sparse_claims(_results(loss=bad, random=2.5))
    with pytest.raises(AssertionError, match=r"shared key loses.*top 8 shared keys lose"):
        sparse.check_sparse_claims(_results(shared={1: 2.53, 8: 2.43}))
    with pytest.raises(AssertionError, match=r"\['the mass grows with k'\]"):
        sparse.check_sparse_claims(_results(mass={**_results().mass, 4: 0.92}))
    with pytest.raises(ValueError, match="including"):
        sparse.check_sparse_claims(_results(loss={1: 2.5, 48: 2.4}))


def _chapter_models(seed: int) -> dict[str, torch.nn.Module]:
    """The trained models chapter 13 restricts to their top-k keys: its grouped-query model and
    its latent one (``mla.compare.train_model``), as the chapter trains them."""
    from course_attention import mla
    from course_attention.mla import compare as mla_compare

    names = ["gqa"]
    if hasattr(mla.MultiHeadLatentAttention(mla_compare.MLA_CONFIG), "score_filter"):
        names.append("mla")
    return {name: mla_compare.train_model(name, seed).model for name in names}


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_sparse_claims_hold_on_seeds_1_and_2(seed):
    """Accuracy test, not a timed test: chapter 13 runs ``check_sparse_claims`` on seed 0 in
    each of its executions, on this machine's kernels and on the other kernels this test uses."""
    valid = corpus.load().valid
    for model in _chapter_models(seed).values():
        sparse.check_sparse_claims(sparse.sparse_results(model, seed, valid=valid))
