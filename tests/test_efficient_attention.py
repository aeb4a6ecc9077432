"""Chapter 11: online softmax, the tiled (FlashAttention-style) pass, GQA/MQA, sliding windows."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from course_attention import efficient, grouped_query, sliding_window
from course_attention import numpy_ref as ref

# --- online softmax -------------------------------------------------------------------------


@given(
    rows=st.integers(1, 4),
    n=st.integers(1, 20),
    block=st.integers(1, 25),
    spread=st.sampled_from([1.0, 30.0, 1e4]),
    seed=st.integers(0, 2**16),
)
def test_online_softmax_equals_softmax(rows, n, block, spread, seed):
    x = np.random.default_rng(seed).standard_normal((rows, n)) * spread
    np.testing.assert_allclose(efficient.online_softmax(x, block), ref.softmax(x), atol=1e-12)


def test_online_softmax_gives_zeros_for_an_all_minus_inf_row_and_rejects_nan():
    x = np.array([[1.0, -np.inf, 3.0], [-np.inf, -np.inf, -np.inf]])
    w = efficient.online_softmax(x, block_size=2)
    np.testing.assert_allclose(w, ref.softmax(x), atol=1e-15)
    assert (w[1] == 0).all()
    with pytest.raises(ValueError, match="finite"):
        efficient.online_softmax(np.array([0.0, np.nan]))


# --- the tiled pass -------------------------------------------------------------------------


@st.composite
def attention_case(draw):
    """Random leading dims, unequal lengths, any block size, optional bool mask with empty rows."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    seq_q, seq_k = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    spread = draw(st.sampled_from([1.0, 1e4]))  # logits of ±1e4 must not overflow
    Q = rng.standard_normal((*lead, seq_q, d_k)) * spread
    K = rng.standard_normal((*lead, seq_k, d_k))
    V = rng.standard_normal((*lead, seq_k, d_v))
    mask = None
    if draw(st.booleans()):
        mask = rng.random((seq_q, seq_k)) < 0.6
        if draw(st.booleans()):
            mask[rng.integers(seq_q)] = False  # a query with nothing to attend to
    block = draw(st.integers(1, 14))  # divides the lengths or not, or exceeds them
    return Q, K, V, mask, block


@given(attention_case())
def test_flash_attention_equals_the_reference_and_pytorch(case):
    Q, K, V, mask, block = case
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    got = efficient.flash_attention(Q, K, V, mask=mask, block_size=block)
    assert got.shape == expected.shape and np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)
    tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V))
    tm = None if mask is None else torch.from_numpy(mask)
    theirs = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm).numpy()
    keep = np.ones(expected.shape[:-1], dtype=bool)  # SDPA gives NaN for an empty row
    if mask is not None:
        keep &= np.broadcast_to(mask.any(axis=-1), expected.shape[:-1])
        assert (got[~keep] == 0).all()
    np.testing.assert_allclose(got[keep], theirs[keep], atol=1e-12, rtol=0)


def test_flash_attention_broadcasts_leading_dims_and_key_padding_masks():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((2, 3, 7, 4))  # (batch, heads, seq_q, d_k)
    K = rng.standard_normal((2, 1, 10, 4))  # shared by the heads
    V = rng.standard_normal((1, 1, 10, 5))
    mask = ref.padding_mask(np.array([10, 0]), 10)  # the second sentence has no keys at all
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=mask)
    got = efficient.flash_attention(Q, K, V, mask=mask, block_size=3)
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)
    assert (got[1] == 0).all()


def test_flash_attention_with_a_causal_mask_and_a_custom_scale():
    rng = np.random.default_rng(1)
    Q, K, V = (rng.standard_normal((9, 4)) for _ in range(3))
    mask = ref.causal_mask(9)
    expected, _ = ref.scaled_dot_product_attention(Q, K, V, mask=mask, scale=0.3)
    got = efficient.flash_attention(Q, K, V, mask=mask, scale=0.3, block_size=4)
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)


def test_tile_steps_visit_every_tile_once_and_end_at_the_output():
    rng = np.random.default_rng(2)
    Q, K, V = rng.standard_normal((10, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    steps = list(efficient.flash_attention_steps(Q, K, V, block_size=4))
    tiles = [(s.rows, s.cols) for s in steps]
    assert tiles == [((i, min(i + 4, 10)), (j, min(j + 4, 7))) for i in (0, 4, 8) for j in (0, 4)]
    assert [s.last for s in steps] == [False, True] * 3
    expected, _ = ref.scaled_dot_product_attention(Q, K, V)
    last = [s for s in steps if s.last]
    np.testing.assert_allclose(np.concatenate([s.acc / s.total for s in last]), expected)


@pytest.mark.parametrize("block_size", [0, -3, 2.5, True])
def test_bad_block_size_is_named(block_size):
    Q = np.ones((2, 2))
    with pytest.raises(ValueError, match="block_size"):
        efficient.flash_attention(Q, Q, Q, block_size=block_size)
    with pytest.raises(ValueError, match="block_size"):
        efficient.online_softmax(Q, block_size=block_size)


def test_flash_attention_rejects_what_the_reference_rejects():
    Q = np.ones((2, 3))
    with pytest.raises(ValueError, match="boolean"):
        efficient.flash_attention(Q, Q, Q, mask=np.ones((2, 2)))
    with pytest.raises(ValueError, match="does not broadcast"):
        efficient.flash_attention(Q, Q, Q, mask=np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="d_k"):
        efficient.flash_attention(Q, np.ones((2, 4)), Q)


def test_the_tiled_pass_holds_far_less_memory():
    rng = np.random.default_rng(3)
    Q, K, V = (rng.standard_normal((1024, 64)) for _ in range(3))  # the benchmark's setting
    naive = efficient.measure(lambda: ref.scaled_dot_product_attention(Q, K, V)[0])
    tiled = efficient.measure(lambda: efficient.flash_attention(Q, K, V, block_size=64))
    assert naive.peak_bytes > 1024 * 1024 * 8  # at least the float64 scores
    assert tiled.peak_bytes < naive.peak_bytes / 16  # the benchmark's target, reached at T=1024
    np.testing.assert_allclose(tiled.result, naive.result, atol=1e-12)


def test_hbm_traffic_and_scores_bytes():
    assert efficient.scores_bytes(2, 3, 5, 7, 4) == 2 * 3 * 5 * 7 * 4
    with pytest.raises(ValueError, match="heads"):
        efficient.scores_bytes(1, 0, 5, 5)
    small, large = efficient.hbm_traffic(1024, 64, 128), efficient.hbm_traffic(4096, 64, 128)
    for t in (small, large):
        assert t["fa2"] < t["fa1"] < t["plain"]
    with pytest.raises(ValueError, match="seq_len"):
        efficient.hbm_traffic(0, 64, 128)


@pytest.mark.parametrize("T, d, B", [(16, 4, 4), (10, 3, 4), (4096, 64, 128), (7, 5, 16)])
def test_hbm_traffic_equals_a_count_of_every_load_and_store(T, d, B):
    """Walk the loops of FlashAttention-1 and -2 and add up what each step reads and writes."""
    tiles = [min(B, T - i) for i in range(0, T, B)]  # rows of each tile
    fa1 = T * d + 2 * T  # O, ℓ, m initialised in HBM
    for kv in tiles:  # outer loop: key/value tiles
        fa1 += 2 * kv * d  # K_j, V_j
        for q in tiles:  # inner loop: read Q_i, O_i, ℓ_i, m_i; write O_i, ℓ_i, m_i
            fa1 += q * d + q * d + 2 * q + q * d + 2 * q
    fa2 = 0
    for q in tiles:  # outer loop: query tiles
        fa2 += q * d  # Q_i
        fa2 += sum(2 * kv * d for kv in tiles)  # every K_j, V_j
        fa2 += q * d + q  # O_i and its log-sum-exp, once
    plain = 2 * T * d + T * T + T * T + T * T + (T * T + T * d) + T * d
    assert efficient.hbm_traffic(T, d, B, bytes_per_value=1) == {
        "plain": plain,
        "fa1": fa1,
        "fa2": fa2,
    }


def test_lean_attention_equals_the_reference_with_one_scores_array():
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((2, 9, 4)) for _ in range(3))
    out, weights = efficient.lean_attention(Q, K, V)
    ref_out, ref_weights = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(weights, ref_weights, atol=1e-12)
    Q, K, V = (rng.standard_normal((512, 64)) for _ in range(3))
    peak = efficient.measure(lambda: efficient.lean_attention(Q, K, V)).peak_bytes
    assert 512 * 512 * 8 <= peak < 1.2 * 512 * 512 * 8  # one (T, T) float64 array, little more


@given(
    seq_q=st.integers(1, 13),
    seq_k=st.integers(1, 13),
    block=st.integers(1, 6),
    seed=st.integers(0, 2**16),
    with_mask=st.booleans(),
)
def test_causal_flash_attention_skips_masked_tiles_and_equals_the_reference(
    seq_q, seq_k, block, seed, with_mask
):
    rng = np.random.default_rng(seed)
    Q, K, V = (
        rng.standard_normal((seq_q, 3)),
        rng.standard_normal((seq_k, 3)),
        rng.standard_normal((seq_k, 2)),
    )
    mask = rng.random((seq_q, seq_k)) < 0.7 if with_mask else None
    full = ref.causal_mask(seq_q, seq_k) & (True if mask is None else mask)
    expected, weights = ref.scaled_dot_product_attention(Q, K, V, mask=full)
    got, lse = efficient.flash_attention(
        Q, K, V, mask=mask, block_size=block, causal=True, return_lse=True
    )
    np.testing.assert_allclose(got, expected, atol=1e-12, rtol=0)
    np.testing.assert_allclose(
        efficient.flash_attention(Q, K, V, mask=full, block_size=block),
        expected,
        atol=1e-12,
        rtol=0,
    )
    # the log-sum-exp is enough to recompute every weight from its score (the backward pass)
    s = np.where(full, Q @ K.T / np.sqrt(3), -np.inf)
    with np.errstate(invalid="ignore"):
        again = np.where(np.isfinite(lse)[:, None], np.exp(s - lse[:, None]), 0.0)
    np.testing.assert_allclose(again, weights, atol=1e-12)
    # no tile it computes is fully masked, and it computes every tile that is not
    steps = list(efficient.flash_attention_steps(Q, K, V, mask=mask, block_size=block, causal=True))
    for st_ in steps:
        (i0, i1), (j0, j1) = st_.rows, st_.cols
        assert full[i0:i1, j0:j1].any()
    needed = {
        (i0, j0)
        for i0 in range(0, seq_q, block)
        for j0 in range(0, seq_k, block)
        if full[i0 : i0 + block, j0 : j0 + block].any()
    }
    assert {(s.rows[0], s.cols[0]) for s in steps} == needed
    count = efficient.tiles_computed(seq_q, seq_k, block, causal=True, mask=mask)
    assert count["tiles"] == len(needed) and count["all tiles"] == (-(-seq_q // block)) * (
        -(-seq_k // block)
    )
    assert count["scores"] == sum((s.rows[1] - s.rows[0]) * (s.cols[1] - s.cols[0]) for s in steps)


def test_causal_tiles_at_16_tokens_and_tiles_of_4():
    count = efficient.tiles_computed(16, 16, 4, causal=True)
    assert count == {"tiles": 10, "all tiles": 16, "scores": 160, "all scores": 256}
    assert efficient.tiles_computed(16, 16, 4) == {
        "tiles": 16,
        "all tiles": 16,
        "scores": 256,
        "all scores": 256,
    }


def test_flash_backward_figures_say_recomputing_costs_flops_and_saves_time():
    std, flash = efficient.FLASH_BACKWARD["standard"], efficient.FLASH_BACKWARD["flash"]
    assert flash["gflops"] > std["gflops"] and flash["ms"] < std["ms"]
    assert flash["hbm_gb"] < std["hbm_gb"]


# --- grouped-query attention ----------------------------------------------------------------


def _gqa_weights(rng, d_model, n_heads, n_kv_heads):
    d_kv = n_kv_heads * d_model // n_heads
    return (
        rng.standard_normal((d_model, d_model)),
        rng.standard_normal((d_model, d_kv)),
        rng.standard_normal((d_model, d_kv)),
        rng.standard_normal((d_model, d_model)),
    )


@given(seed=st.integers(0, 2**16), n_heads=st.sampled_from([1, 2, 4]), seq_k=st.integers(1, 6))
def test_gqa_with_as_many_kv_heads_as_heads_is_multi_head_attention(seed, n_heads, seq_k):
    rng = np.random.default_rng(seed)
    X_q, X_kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, seq_k, 8))
    W = _gqa_weights(rng, 8, n_heads, n_heads)
    mask = ref.padding_mask(np.array([seq_k, 1]), seq_k)
    out, weights = grouped_query.grouped_query_attention(X_q, X_kv, *W, n_heads, n_heads, mask)
    out_mha, weights_mha = ref.multi_head_attention(X_q, X_kv, *W, n_heads, mask=mask)
    np.testing.assert_allclose(out, out_mha, atol=1e-12)
    np.testing.assert_allclose(weights, weights_mha, atol=1e-12)


def test_gqa_with_one_kv_head_is_multi_query_attention():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((2, 5, 8))
    W_q, W_k, W_v, W_o = _gqa_weights(rng, 8, 4, 1)  # W_k, W_v: (8, 2), one head of width 2
    out, weights = grouped_query.grouped_query_attention(X, X, W_q, W_k, W_v, W_o, 4, 1)
    Q = ref.split_heads(X @ W_q, 4)  # (2, 4, 5, 2)
    K, V = (X @ W_k)[:, None], (X @ W_v)[:, None]  # (2, 1, 5, 2): one head, shared by broadcasting
    heads, w_direct = ref.scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(out, ref.merge_heads(heads) @ W_o, atol=1e-12)
    np.testing.assert_allclose(weights, w_direct, atol=1e-12)


def test_gqa_query_head_i_reads_kv_head_i_over_group_and_matches_pytorch():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1, 6, 12))
    W_q, W_k, W_v, W_o = _gqa_weights(rng, 12, 6, 2)  # groups of 3 query heads
    out, weights = grouped_query.grouped_query_attention(X, X, W_q, W_k, W_v, W_o, 6, 2)
    Q = ref.split_heads(X @ W_q, 6)
    K, V = ref.split_heads(X @ W_k, 2), ref.split_heads(X @ W_v, 2)  # (1, 2, 6, 2)
    for i in range(6):
        _, w_i = ref.scaled_dot_product_attention(Q[:, i], K[:, i // 3], V[:, i // 3])
        np.testing.assert_allclose(weights[:, i], w_i, atol=1e-12)
    if "enable_gqa" in F.scaled_dot_product_attention.__doc__:
        theirs = F.scaled_dot_product_attention(
            *(torch.from_numpy(np.ascontiguousarray(a)) for a in (Q, K, V)), enable_gqa=True
        )
        heads = ref.merge_heads(theirs.numpy()) @ W_o
        np.testing.assert_allclose(out, heads, atol=1e-12)


def test_repeat_kv_repeats_each_head_in_place():
    X = np.arange(2)[None, :, None, None] * np.ones((1, 2, 3, 1))  # heads 0 and 1
    assert grouped_query.repeat_kv(X, 4)[0, :, 0, 0].tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("n_heads, n_kv_heads", [(4, 3), (4, 0), (4, 8)])
def test_kv_heads_that_do_not_divide_the_heads_are_named(n_heads, n_kv_heads):
    X = np.ones((1, 2, 8))
    W = np.ones((8, 8))
    with pytest.raises(ValueError, match=f"n_kv_heads={n_kv_heads}"):
        grouped_query.grouped_query_attention(X, X, W, W, W, W, n_heads, n_kv_heads)


def test_gqa_names_wrong_projection_shapes():
    X, W = np.ones((1, 2, 8)), np.ones((8, 8))
    with pytest.raises(ValueError, match=r"W_k must have shape \(8, 4\)"):
        grouped_query.grouped_query_attention(X, X, W, W, W, W, 4, 2)


def test_kv_cache_table_numbers():
    rows = {r["model"]: r for r in grouped_query.kv_cache_table()}
    assert rows["Llama 2 70B"]["KV bytes / token"] == 2 * 80 * 8 * 128 * 2
    assert rows["Llama 2 70B"]["saving"] == 8 and rows["GPT-3 175B"]["saving"] == 1
    assert rows["PaLM 540B"]["attention"] == "MQA" and rows["PaLM 540B"]["saving"] == 48
    assert rows["Mistral 7B"]["attention"] == "GQA"
    with pytest.raises(ValueError, match="n_layers"):
        grouped_query.kv_cache_bytes_per_token(0, 1, 1)


def test_model_configs_are_the_published_ones():
    # (layers, heads, KV heads, d_head, d_model, context) as GPT-3 Table 2.1, Llama 2 (paper and
    # released configuration), Mistral 7B Table 1 and PaLM Table 1 / sections 2 and 5 give them
    published = {
        "GPT-3 175B": (96, 96, 96, 128, 12288, 2048),
        "Llama 2 70B": (80, 64, 8, 128, 8192, 4096),
        "Mistral 7B": (32, 32, 8, 128, 4096, 8192),
        "PaLM 540B": (118, 48, 1, 256, 18432, 2048),
    }
    configs = {c.name: c for c in grouped_query.MODEL_CONFIGS}
    assert set(configs) == set(published)
    for name, numbers in published.items():
        c = configs[name]
        assert (c.n_layers, c.n_heads, c.n_kv_heads, c.d_head, c.d_model, c.context) == numbers
        assert (c.n_heads * c.d_head == c.d_model) == (name != "PaLM 540B")  # PaLM: 256 always
    rows = {r["model"]: r for r in grouped_query.kv_cache_table(context=4096)}
    assert rows["GPT-3 175B"]["KV bytes / token"] == 2 * 96 * 96 * 128 * 2  # 4.5 MiB
    assert rows["Mistral 7B"]["KV bytes / token"] == 128 * 2**10
    assert rows["PaLM 540B"]["KV bytes / token"] == 2 * 118 * 256 * 2
    assert rows["Llama 2 70B"]["GiB at 4096 tokens"] == 1.25


def test_kv_cache_view_formats_the_table():
    from course_attention import viz

    table = viz.kv_cache_view(grouped_query.kv_cache_table())
    assert table.header[0] == "model" and len(table.rows) == len(grouped_query.MODEL_CONFIGS)
    llama = next(r for r in table.rows if r[0] == "Llama 2 70B")
    assert "327,680" in llama and "1.25" in llama and "8×" in llama
    with pytest.raises(ValueError, match="at least one row"):
        viz.kv_cache_view([])


# --- sliding windows ------------------------------------------------------------------------


@given(seq_len=st.integers(1, 20), window=st.integers(1, 25))
def test_sliding_window_mask_equals_a_direct_construction(seq_len, window):
    i, j = np.arange(seq_len)[:, None], np.arange(seq_len)[None, :]
    direct = (j <= i) & (i - j < window)
    mask = sliding_window.sliding_window_mask(seq_len, window)
    assert mask.dtype == bool and np.array_equal(mask, direct)
    cost = sliding_window.window_cost(seq_len, window)
    assert cost["window"] == direct.sum() and cost["causal"] == np.tril(np.ones_like(direct)).sum()


@given(window=st.integers(1, 6), n_layers=st.integers(1, 5))
def test_reach_grows_by_window_minus_one_per_layer(window, n_layers):
    seq_len = 40
    reach = sliding_window.reach_after_layers(seq_len, window, n_layers)
    expected = np.minimum(np.arange(1, n_layers + 1)[:, None] * (window - 1), np.arange(seq_len))
    np.testing.assert_array_equal(reach, expected)


@pytest.mark.parametrize("seq_len, window", [(0, 2), (4, 0), (4, 1.5)])
def test_bad_window_arguments_are_named(seq_len, window):
    with pytest.raises(ValueError, match="seq_len|window"):
        sliding_window.sliding_window_mask(seq_len, window)


def test_numpy_ref_reexports_chapter_11():
    assert ref.flash_attention is efficient.flash_attention
    assert ref.sliding_window_mask is sliding_window.sliding_window_mask
    assert "online_softmax" in ref.__all__
    assert not hasattr(ref, "grouped_query_attention")  # it builds on numpy_ref: one-way imports


def test_gqa_equals_pytorch_sdpa_with_enable_gqa():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((2, 5, 24))
    W_q, W_k, W_v, W_o = _gqa_weights(rng, 24, 6, 2)
    out, _ = grouped_query.grouped_query_attention(
        X, X, W_q, W_k, W_v, W_o, 6, 2, ref.causal_mask(5)
    )
    Q = torch.from_numpy(ref.split_heads(X @ W_q, 6))
    K, V = (torch.from_numpy(ref.split_heads(X @ W, 2)) for W in (W_k, W_v))
    try:
        theirs = F.scaled_dot_product_attention(Q, K, V, is_causal=True, enable_gqa=True).numpy()
    except TypeError:  # torch before 2.5 has no enable_gqa
        pytest.skip("this torch has no enable_gqa")
    np.testing.assert_allclose(ref.merge_heads(theirs) @ W_o, out, atol=1e-12)


def test_the_package_imports_form_no_cycle():
    """Every import inside course_attention (top-level or in a function) runs one way."""
    import ast
    from pathlib import Path

    import course_attention

    root = Path(course_attention.__file__).parent
    names = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + [node.module] if node.module else base)
                if not node.level:
                    target = node.module or ""
                for alias in node.names:  # `from . import x`: the submodule x, if it is one
                    dep = f"{target}.{alias.name}" if f"{target}.{alias.name}" in names else target
                    if dep in names and dep != name:
                        graph[name].add(dep)
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in names and a.name != name}
    # the parent package is imported before any of its modules anyway: leave those arrows out
    graph = {n: {d for d in deps if not n.startswith(d + ".")} for n, deps in graph.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                raise AssertionError("import cycle: " + " → ".join(path[path.index(dep) :] + [dep]))
            if dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert "course_attention.numpy_ref" in graph["course_attention.grouped_query"]


def test_tiling_figure_names_the_states_in_a_legend_not_a_colour_bar():
    from course_attention import viz

    fig = viz.tiling_figure(16, 4, step=3, title="tiles")
    heatmap = fig.data[0]
    assert heatmap.showscale is False  # a colour bar between the panels covered the right axis
    keys = [t.name for t in fig.data if t.showlegend is not False and t.name]
    assert keys == list(viz.efficient.TILE_STATES)
    assert fig.layout.legend.y < 0 and fig.layout.margin.b >= 100  # under the panels
