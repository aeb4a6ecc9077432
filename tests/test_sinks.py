"""Chapter 14's package (``course_attention.sinks``): the softmax with a sink logit, soft-capping,
the new options of ``ModernAttention`` (sink logits, caps, windows), first-position shares, cache
bytes and reach of local/global stacks, the StreamingLLM cache (token by token = one pass), and
equality with Hugging Face's ``GptOssAttention``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_attention import gpt, induction, modern, sinks, sliding_window
from course_attention.sinks import streaming

F64 = torch.float64


def _sink_as_key(scores: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """The control: the sink as one more key with a zero value, through the plain softmax."""
    col = logits.reshape(-1, 1, 1).expand(*scores.shape[:-1], 1)
    return torch.softmax(torch.cat((scores, col), -1), -1)[..., :-1]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(1, 6), st.floats(-20, 20))
def test_softmax_with_sink_is_a_softmax_over_one_more_key_that_reads_nothing(h, q, k, b):
    gen = torch.Generator().manual_seed(h * 100 + q * 10 + k)
    scores = torch.randn(2, h, q, k, generator=gen, dtype=F64) * 3
    logits = torch.full((h,), b, dtype=F64)
    mine = sinks.softmax_with_sink(scores, logits)
    assert torch.allclose(mine, _sink_as_key(scores, logits), atol=1e-14, rtol=0)
    assert np.allclose(sinks.softmax_with_sink(scores.numpy(), logits.numpy()), mine.numpy(),
                       atol=1e-14, rtol=0)
    assert (mine.sum(-1) < 1).all() and (mine >= 0).all()


def test_the_sink_softmax_is_stable_masked_and_refuses_wrong_shapes():
    big = torch.tensor([[[1e4, -1e4, 0.0]]], dtype=F64)
    w = sinks.softmax_with_sink(big, torch.tensor([0.0], dtype=F64))
    assert torch.isfinite(w).all() and float(w[0, 0, 0]) == pytest.approx(1.0)
    hidden = sinks.softmax_with_sink(torch.zeros(1, 2, 3), torch.zeros(1),
                                     mask=torch.tensor([[True, False, False], [False] * 3]))
    assert hidden[0, 1].abs().sum() == 0 and float(hidden[0, 0, 0]) == pytest.approx(0.5)
    off = sinks.off_by_one_softmax(torch.zeros(1, 1, 3))
    assert torch.allclose(off, torch.full((1, 1, 3), 0.25))
    with pytest.raises(ValueError, match=r"sink_logits must be \(heads,\) = \(4,\)"):
        sinks.softmax_with_sink(torch.zeros(4, 6, 6), torch.zeros(6))
    with pytest.raises(ValueError, match="mask"):
        sinks.softmax_with_sink(torch.zeros(2, 3, 4), torch.zeros(2), mask=torch.ones(5, 5))
    with pytest.raises(ValueError, match="seq_q, seq_k"):
        sinks.softmax_with_sink(np.zeros(3), np.zeros(1))


def test_soft_cap_is_near_identity_near_zero_and_bends_into_the_cap():
    x = np.array([-1e4, -1.0, 0.0, 0.01, 1e4])
    y = sinks.soft_cap(x, 5.0)
    assert y[0] == pytest.approx(-5.0) and y[-1] == pytest.approx(5.0) and y[2] == 0
    assert y[3] == pytest.approx(0.01, rel=1e-5)
    assert (np.abs(y) <= 5.0).all() and np.all(np.diff(y) > 0)
    assert torch.allclose(sinks.soft_cap(torch.tensor(x), 5.0), torch.tensor(y))
    for bad in (0.0, -1.0, True, "5"):
        with pytest.raises(ValueError, match="cap"):
            sinks.soft_cap(x, bad)


def _config(**extra) -> modern.ModernConfig:
    return modern.ModernConfig(vocab_size=20, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2,
                               d_ff=24, context=40, **extra)


@torch.no_grad()
def test_modern_attention_options_change_exactly_what_they_say():
    torch.manual_seed(0)
    x = torch.randn(2, 9, 16, dtype=F64)
    cos, sin = modern.rope_cos_sin(torch.arange(9), 4, dtype=F64)
    plain = modern.ModernAttention(_config()).double()
    for extra in ({"sinks": True}, {"softcap": 3.0}, {"sliding_window": 3,
                                                       "layer_types": ("sliding_attention",) * 2}):
        other = modern.ModernAttention(_config(**extra)).double()
        other.load_state_dict(plain.state_dict(), strict=False)
        diff = (other(x, cos, sin) - plain(x, cos, sin)).abs()
        assert float(diff[:, 0].max()) < 1e-14 or "sinks" in extra  # one key: a window is moot
        assert float(diff.max()) > 1e-6, extra
    # with the sink logit at -inf, or a cap far above every score, or a window as long as the
    # text, the layer is the plain one
    for extra, fix in (({"sinks": True}, lambda a: a.sinks.data.fill_(-1e4)),
                       ({"softcap": 1e6}, lambda a: None),
                       ({"sliding_window": 9, "layer_types": ("sliding_attention",) * 2},
                        lambda a: None)):
        other = modern.ModernAttention(_config(**extra)).double()
        other.load_state_dict(plain.state_dict(), strict=False)
        fix(other)
        # 1e-6: the plain layer's softmax is float32 (Llama's), the sink layer's float64 (gpt-oss's)
        assert float((other(x, cos, sin) - plain(x, cos, sin)).abs().max()) < 1e-6, extra


@torch.no_grad()
def test_the_window_is_chapter_11s_and_a_sliding_model_caches_correctly():
    attn = modern.ModernAttention(_config(sliding_window=3, layer_types=("sliding_attention",) * 2))
    band = torch.from_numpy(sliding_window.sliding_window_mask(7, 3))
    assert torch.equal(attn.visible(7, 7), band)
    torch.manual_seed(1)
    model = modern.ModernGPT(_config(sliding_window=3, layer_types=(
        "sliding_attention", "full_attention"), sinks=True, softcap=4.0)).double()
    tokens = torch.randint(0, 20, (2, 12))
    cache = model.new_cache()
    pieces = [model.step(tokens[:, :5], cache)] + [model.step(tokens[:, t:t + 1], cache)
                                                   for t in range(5, 12)]
    assert float((torch.cat(pieces, 1) - model(tokens)).abs().max()) < 1e-12


def test_config_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="sliding_window"):
        _config(layer_types=("sliding_attention", "full_attention"))
    with pytest.raises(ValueError, match="layer_types"):
        _config(sliding_window=3, layer_types=("sliding_attention",))
    with pytest.raises(ValueError, match="layer_types"):
        _config(sliding_window=3, layer_types=("local", "global"))
    with pytest.raises(ValueError, match="softcap"):
        _config(softcap=0.0)


def test_attention_weights_and_value_norms_read_every_kind_of_model():
    torch.manual_seed(0)
    tokens = torch.randint(0, 20, (3, 10))
    m = modern.ModernGPT(_config(sinks=True))
    w = sinks.attention_weights(m, tokens)
    assert w.shape == (2, 3, 4, 10, 10) and (w.sum(-1) < 1).all()
    assert float(w.triu(1).abs().max()) == 0
    g = gpt.GPT(gpt.GPTConfig(vocab_size=20, context=10, d_model=16, n_heads=2, n_layers=2))
    assert sinks.attention_weights(g, tokens).shape == (2, 3, 2, 10, 10)
    a = induction.AttentionOnlyTransformer(induction.RepeatConfig())
    ids = torch.randint(0, 64, (2, 48))
    assert sinks.attention_weights(a, ids).shape == (2, 2, 4, 48, 48)
    for model, t in ((m, tokens), (g, tokens), (a, ids)):
        norms = sinks.value_norms(model, t)
        assert norms.shape[0] == 2 and norms.shape[-1] == t.shape[1] and (norms > 0).all()
    with pytest.raises(ValueError, match="model must be"):
        sinks.attention_weights(torch.nn.Linear(2, 2), tokens)


def test_first_position_share_against_the_uniform_share():
    seq = 12
    even = torch.tril(torch.ones(seq, seq)) / torch.arange(1, seq + 1)[:, None]
    w = even.expand(2, 3, 4, seq, seq)  # (layers, batch, heads, seq, seq)
    assert np.allclose(sinks.first_position_share(w, 3), sinks.uniform_share(seq, 3))
    assert sinks.uniform_share(seq, 0) == pytest.approx(np.mean(1 / np.arange(1, seq + 1)))
    spike = torch.zeros(1, 1, 1, seq, seq)
    spike[..., 0] = 1
    assert sinks.first_position_share(spike, 5)[0, 0] == 1
    with pytest.raises(ValueError, match="from_query"):
        sinks.first_position_share(w, seq)
    with pytest.raises(ValueError, match="layers, batch, heads"):
        sinks.first_position_share(w[0], 1)


def test_layer_patterns_cache_bytes_and_reach():
    assert sinks.layer_pattern(6, 5) == ("sliding_attention",) * 5 + ("full_attention",)
    assert sinks.layer_pattern(4, 1) == ("sliding_attention", "full_attention") * 2
    assert sinks.layer_pattern(3, 0) == ("full_attention",) * 3
    kinds = sinks.layer_pattern(4, 1)
    # by hand: 2 full layers keep 100 tokens, 2 sliding ones 8; keys and values, 2 heads of 4, 2 B
    assert sinks.cache_bytes(kinds, 100, 8, 2, 4) == 2 * 2 * 4 * 2 * (2 * 100 + 2 * 8)
    short = sinks.cache_bytes(kinds, 5, 8, 2, 4)
    assert short == sinks.cache_bytes(("full_attention",) * 4, 5, 8, 2, 4)
    for layers in (1, 2, 3):
        assert sinks.receptive_field(("sliding_attention",) * layers, 5, 40) == layers * 4 + 1
        reach = sliding_window.reach_after_layers(40, 5, layers)[-1, -1] + 1
        assert sinks.receptive_field(("sliding_attention",) * layers, 5, 40) == reach
    mixed = ("sliding_attention", "full_attention", "sliding_attention")
    assert sinks.receptive_field(mixed, 5, 40) == 40
    with pytest.raises(ValueError, match="layer_types"):
        sinks.cache_bytes(("global",), 10, 2, 1, 1)
    with pytest.raises(ValueError, match="window"):
        sinks.cache_bytes(kinds, 10, 0, 1, 1)
    with pytest.raises(ValueError, match="local_per_global"):
        sinks.layer_pattern(4, -1)


@pytest.mark.parametrize("window, n_sinks", [(4, 0), (4, 2), (6, 1), (3, 5), (30, 4)])
def test_the_streaming_cache_token_by_token_equals_the_one_pass(window, n_sinks):
    torch.manual_seed(window + n_sinks)
    model = modern.ModernGPT(_config(sinks=True, qk_norm=True)).double()
    tokens = torch.randint(0, 20, (2, 25))
    one = streaming.streaming_logits(model, tokens, window, n_sinks)
    steps = streaming.stepwise_logits(model, tokens, window, n_sinks)
    # the rotation angles are float32 (Hugging Face's), at slots here and text positions there
    assert float((one - steps).abs().max()) < 1e-5
    cache = streaming.StreamingCache(model, window, n_sinks)
    for t in range(25):
        cache.step(tokens[:, t])
        assert cache.positions == streaming.kept_positions(t + 1, window, n_sinks)
        assert cache.keys[0].shape[2] == len(cache.positions)
    if window + n_sinks < 25:  # numbered by the text, the sinks drift: a different function
        drifted = streaming.streaming_logits(model, tokens, window, n_sinks, positions="text")
        assert float((drifted - one).abs().max()) > 1e-4 or n_sinks == 0


def test_without_eviction_streaming_is_the_model_and_recompute_reads_the_kept_tokens():
    torch.manual_seed(3)
    model = modern.ModernGPT(_config()).double()
    tokens = torch.randint(0, 20, (2, 30))
    assert float((streaming.streaming_logits(model, tokens[:, :20], 20, 0) - model(tokens[:, :20])
                  ).abs().max()) < 1e-12
    again = streaming.recompute_logits(model, tokens, 8, 2)
    for t in (5, 9, 10, 29):
        kept = streaming.kept_positions(t + 1, 8, 2)
        assert float((again[:, t] - model(tokens[:, kept])[:, -1]).abs().max()) < 1e-12
    losses = streaming.position_losses(model, tokens, "sinks", 8, 2)
    assert losses.shape == (29,) and np.isfinite(losses).all()
    assert streaming.kept_positions(3, 4, 5) == [0, 1, 2]
    assert streaming.kept_positions(20, 4, 2) == [0, 1, 16, 17, 18, 19]
    vis = streaming.streaming_visible(20, 4, 2)
    assert [j for j in range(20) if vis[19, j]] == streaming.kept_positions(20, 4, 2)


def test_streaming_refuses_what_it_cannot_do():
    model = modern.ModernGPT(_config(sliding_window=3, layer_types=("sliding_attention",) * 2))
    tokens = torch.zeros(1, 5, dtype=torch.long)
    with pytest.raises(ValueError, match="sliding"):
        streaming.streaming_logits(model, tokens, 4, 1)
    plain = modern.ModernGPT(_config())
    with pytest.raises(ValueError, match="window"):
        streaming.streaming_logits(plain, tokens, 0, 1)
    with pytest.raises(ValueError, match="n_sinks"):
        streaming.kept_positions(5, 2, -1)
    with pytest.raises(ValueError, match="method"):
        streaming.method_logits(plain, tokens, "rolling", 4)
    with pytest.raises(ValueError, match="positions"):
        streaming.streaming_logits(plain, tokens, 4, 1, positions="slot")
    with pytest.raises(ValueError, match="token ids"):
        streaming.streaming_logits(plain, tokens + 20, 4, 1)
    with pytest.raises(ValueError, match="rotary ModernGPT"):
        streaming.streaming_logits(gpt.GPT(gpt.CHAPTER_CONFIG), tokens, 4, 1)


@torch.no_grad()
def test_the_course_attention_equals_hugging_faces_gpt_oss_sliding_and_full():
    from course_attention.sinks import hf

    checks = hf.attention_equality(seq=12, batch=2, seed=0)
    assert [c.kind for c in checks] == ["sliding_attention", "full_attention"]
    assert [c.window for c in checks] == [4, None]
    assert all(c.max_difference < 1e-12 and c.same_mask for c in checks)
    # the control: the copied layer without its sink logits is a different layer
    model = hf.gpt_oss_model(0)
    ours = hf.attention_from_hf(model.layers[1].self_attn)
    assert ours.sinks is not None and ours.window is None
    x = torch.randn(1, 6, 64, dtype=F64)
    cos, sin = modern.rope_cos_sin(torch.arange(6), 16, dtype=F64)
    out = ours(x, cos, sin)
    ours.sinks.data.fill_(-1e4)
    assert float((ours(x, cos, sin) - out).abs().max()) > 1e-6
    sliding = hf.attention_from_hf(model.layers[0].self_attn)
    assert sliding.window == 4 and dataclasses.is_dataclass(checks[0])
