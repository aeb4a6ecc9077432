"""Chapter 12's trained comparison (``course_attention.modern.compare``): the parameter match, the
largest attention logit against a direct computation, QK-norm's bound, and the chapter's claims
on seeds 1 and 2 (the chapter runs seed 0)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import torch

from course_attention import corpus, gpt, modern, ngram, viz
from course_attention.modern import compare
from i18n_checks import assert_speaks_both

F64 = torch.float64


@functools.cache
def _ladder() -> dict[int, float]:
    text = corpus.load()
    return ngram.ladder(text.train, text.valid)


def test_the_modern_models_match_chapter_8s_parameters_and_shape():
    counts = {name: compare.n_parameters(compare.build(name)) for name in compare.MODELS}
    assert counts == {"gpt2": 115_456, "modern": 115_584, "llama": 115_520}
    c, g = compare.MODERN_CONFIG, gpt.CHAPTER_CONFIG
    assert (c.vocab_size, c.d_model, c.n_layers, c.n_heads, c.context) == (
        g.vocab_size, g.d_model, g.n_layers, g.n_heads, g.context)
    assert c.qk_norm and not compare.LLAMA_CONFIG.qk_norm
    assert dataclasses.replace(compare.LLAMA_CONFIG, qk_norm=True) == c  # only QK-norm differs
    # SwiGLU's width is the closest match: one unit more or less is further from the GPT's count
    gap = {d_ff: abs(compare.n_parameters(modern.ModernGPT(dataclasses.replace(c, d_ff=d_ff)))
                     - counts["gpt2"]) for d_ff in (c.d_ff - 1, c.d_ff, c.d_ff + 1)}
    assert min(gap, key=gap.get) == c.d_ff and gap[c.d_ff] <= 0.002 * counts["gpt2"]


def test_build_is_seeded():
    a, b = compare.build("modern", seed=3), compare.build("modern", seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.embed.weight, compare.build("modern", seed=4).embed.weight)


def _tiny(qk_norm: bool, seed: int = 0) -> modern.ModernGPT:
    """A float64 modern model with weights (and norm weights) far from their start."""
    config = modern.ModernConfig(vocab_size=20, d_model=16, n_layers=2, n_heads=4, n_kv_heads=2,
                                 d_ff=24, context=12, qk_norm=qk_norm)
    torch.manual_seed(seed)
    model = modern.ModernGPT(config).to(F64).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.5).add_(1.0 if p.dim() == 1 else 0.0)  # norms near 1, others ±0.5
    return model


def _rms(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return w * x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)


@pytest.mark.parametrize("qk_norm", [True, False])
def test_the_logits_equal_a_direct_computation(qk_norm):
    model, tokens = _tiny(qk_norm), torch.randint(0, 20, (3, 9))
    logits = compare.attention_logits(model, tokens)  # (layers, batch, heads, seq, seq)
    assert logits.shape == (2, 3, 4, 9, 9)
    # layer 0 by hand: the embedding, RMSNorm, the projections, per-head QK-norm, the rotation
    c, attn = model.config, model.blocks[0].attn
    h = _rms(model.embed.weight[tokens], model.blocks[0].norm1.weight, c.norm_eps)
    q = (h @ attn.q_proj.weight.T).view(3, 9, 4, 4)
    k = (h @ attn.k_proj.weight.T).view(3, 9, 2, 4)
    if qk_norm:
        q, k = _rms(q, attn.q_norm.weight, c.norm_eps), _rms(k, attn.k_norm.weight, c.norm_eps)
    angle = torch.arange(9, dtype=F64)[:, None] * 10000.0 ** (-torch.arange(0, 4, 2) / 4)

    def turn(x):  # pairs (i, i + 2) of each head, turned by position · frequency
        x1, x2 = x[..., :2], x[..., 2:]
        cos, sin = angle.cos()[:, None], angle.sin()[:, None]  # (seq, 1, 2)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    q, k = turn(q), turn(k).repeat_interleave(2, dim=2)  # query heads 0, 1 share key head 0
    direct = torch.einsum("bqhd,bkhd->bhqk", q, k) / 2.0  # √d_head = 2
    visible = torch.ones(9, 9, dtype=torch.bool).tril()
    # the angles are computed in float32, as Hugging Face computes them: agreement to 1e-6
    assert torch.allclose(logits[0][..., visible], direct[..., visible], atol=1e-6)
    assert torch.isneginf(logits[..., ~visible]).all()  # the future stays hidden
    assert compare.max_attention_logit(model, tokens) == float(logits.max())


@pytest.mark.parametrize("qk_norm", [True, False])
def test_the_softmax_of_the_logits_is_what_every_layer_attends_with(qk_norm):
    """Every layer, not just the first: the logits, softmaxed and applied to the layer's own
    values, give the output the layer actually produced."""
    model, tokens = _tiny(qk_norm, seed=1), torch.randint(0, 20, (2, 12))
    logits = compare.attention_logits(model, tokens)
    seen = []
    hooks = [b.attn.register_forward_hook(lambda m, args, out: seen.append((args[0], out)))
             for b in model.blocks]
    with torch.no_grad():
        model(tokens)
    for hook in hooks:
        hook.remove()
    for layer, (x, out) in enumerate(seen):
        attn = model.blocks[layer].attn
        v = attn.v_proj(x).view(2, 12, 2, 4).transpose(1, 2).repeat_interleave(2, dim=1)
        weights = torch.softmax(logits[layer], -1, dtype=torch.float32).to(F64)  # as the layer
        mixed = (weights @ v).transpose(1, 2).reshape(2, 12, 16)
        assert torch.allclose(attn.o_proj(mixed), out, atol=1e-12)


def test_the_gpt2_logits_give_chapter_8s_attention_weights():
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=20, context=10, d_model=16, n_heads=4)).to(F64)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 0.5)
    tokens = torch.randint(0, 20, (2, 10))
    logits = compare.attention_logits(model, tokens)
    assert torch.allclose(torch.softmax(logits, -1), model.attention(tokens), atol=1e-12)
    x = model.blocks[0].norm1(model.tok_embed(tokens) + model.pos_embed.weight)
    a = model.blocks[0].attn
    q = (x @ a.W_q.weight.T + a.W_q.bias).view(2, 10, 4, 4)
    k = (x @ a.W_k.weight.T + a.W_k.bias).view(2, 10, 4, 4)
    direct = torch.einsum("bqhd,bkhd->bhqk", q, k) / 2.0
    assert torch.allclose(logits[0].tril(), direct.tril(), atol=1e-12)


def test_qk_norm_bounds_the_logit_whatever_the_input():
    model = _tiny(True, seed=2)
    with torch.no_grad():
        model.embed.weight.mul_(1000.0)  # huge inputs: RMSNorm and QK-norm take them back
        model.blocks[1].attn.q_norm.weight[0] = 3.0  # a norm weight that grew
    tokens = torch.randint(0, 20, (4, 12))
    bound = compare.qk_norm_bound(model)
    assert bound == pytest.approx(2.0 * max(
        float(b.attn.q_norm.weight.detach().abs().max() * b.attn.k_norm.weight.detach().abs().max())
        for b in model.blocks))
    assert compare.max_attention_logit(model, tokens) <= bound
    # without QK-norm the same huge queries and keys are not held back: the control
    loose = _tiny(False, seed=2)
    with torch.no_grad():
        for b in loose.blocks:
            b.norm1.weight.mul_(100.0)
    assert compare.max_attention_logit(loose, tokens) > 100 * bound


def test_train_model_records_the_logit_from_step_0():
    run = compare.train_model("modern", seed=5, steps=4, batch_size=2, every=3)
    assert run.checkpoints.tolist() == [0, 3, 4] and run.losses.shape == (4,)
    probe = compare.probe_batch(corpus.load().valid)
    assert probe.shape == (compare.PROBE_WINDOWS, gpt.CHAPTER_CONFIG.context)
    assert run.max_logit[0] == compare.max_attention_logit(compare.build("modern", 5), probe)
    assert np.all(run.max_logit <= run.bound) and run.bound[0] == pytest.approx(4.0)  # √16 · 1 · 1
    assert np.isnan(compare.train_model("llama", seed=5, steps=1, batch_size=2).bound).all()


@pytest.mark.parametrize("call, message", [
    (lambda: compare.build("bert"), "model must be one of"),
    (lambda: compare.train_model("modern", steps=0), "steps must be a positive integer"),
    (lambda: compare.train_model("modern", batch_size=2.0), "batch_size must be"),
    (lambda: compare.probe_batch(np.arange(10), context=4, n=3), "m ≥ n · context"),
    (lambda: compare.attention_logits(torch.nn.Linear(2, 2), torch.zeros(1, 2)), "gpt.GPT or"),
    (lambda: compare.qk_norm_bound(compare.build("llama")), "qk_norm=True"),
    (lambda: compare.chapter_results({}), "one run of each"),
    (lambda: viz.max_logit_figure({}), "at least one curve"),
    (lambda: viz.max_logit_figure({"a": ([0, 1], [1.0])}), "alike"),
    (lambda: viz.max_logit_figure({"a": ([0, 1], [1.0, 0.0])}), "> 0"),
])
def test_bad_input_is_refused_with_a_clear_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _fake(name: str, valid: float, logits: list[float], bound: list[float] | None = None,
          n_params: int = 115_456) -> compare.Run:
    steps = np.arange(len(logits)) * 10
    return compare.Run(name, 0, n_params, np.linspace(4.5, 2.2, 50), valid, steps,
                       np.array(logits), np.array(bound or [np.nan] * len(logits)), 1.0)


def test_the_claims_check_can_fail():
    """A tie and QK-norm logits that run away: the claims that say otherwise fail."""
    spiked = _fake("gpt2", 2.20, [1.6, 20.0])
    spiked.losses[30:40] += 1.0  # a blow-up, then recovery
    runs = {"gpt2": spiked, "modern": _fake("modern", 2.10, [3.3, 6.5], [4.0, 7.7], 115_584),
            "llama": _fake("llama", 2.17, [0.1, 30.0], n_params=115_520)}
    with pytest.raises(AssertionError, match=r"\['no training blows up'\]"):
        compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
    runs = {"gpt2": _fake("gpt2", 2.10, [1.6, 20.0]),
            "modern": _fake("modern", 2.09, [3.3, 12.0], [4.0, 8.0], 115_584),
            "llama": _fake("llama", 2.30, [0.5, 30.0], n_params=130_000)}
    runs["llama"].losses[20] = 10.0  # one batch 6 nats up: the 10-batch mean rises by 0.6
    with pytest.raises(AssertionError, match=(
            r"parameter count.*blows up.*beats the 2-gram.*below GPT-2's.*never exceeds its bound.*"
            r"ends < 3 × its start.*logit grows > 100-fold.*QK-norm's")):
        compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))


def test_the_claims_hold_on_runs_that_make_them():
    runs = {"gpt2": _fake("gpt2", 2.20, [1.6, 20.0]),
            "modern": _fake("modern", 2.10, [3.3, 6.5], [4.0, 7.7], 115_584),
            "llama": _fake("llama", 2.17, [0.1, 30.0], n_params=115_520)}
    compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))


def test_the_figure_speaks_chinese():
    steps = [0, 10, 20]
    assert_speaks_both(lambda: viz.max_logit_figure(
        {"GPT-2": (steps, [1.6, 19.0, 21.0]), "Qwen3": (steps, [3.3, 4.7, 5.7])},
        bound=(steps, [4.0, 4.8, 6.0])), allowed=("GPT-2", "Qwen3", "QK-norm"))


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Accuracy test, not a timed test: chapter 12 runs ``check_chapter_claims`` on seed 0 in
    each of its executions, on this machine's kernels and on the other kernels this test uses."""
    runs = {name: compare.train_model(name, seed) for name in compare.MODELS}
    compare.check_chapter_claims(compare.chapter_results(runs, _ladder()))
