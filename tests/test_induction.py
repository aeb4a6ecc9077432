"""Chapter 9: the repeat data, the attention-only model, the head scores, ablation, training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_attention import induction as ind
from course_attention import induction_claims as claims
from course_attention import viz, widgets
from course_attention.modules import MultiHeadAttention
from course_attention.sinks import compare as sinks_compare

CONFIG = ind.RepeatConfig()


def _batch(n: int = 512, seed: int = 0, config: ind.RepeatConfig = CONFIG) -> ind.RepeatBatch:
    return ind.repeat_batch(config, n, torch.Generator().manual_seed(seed))


def test_every_row_repeats_its_segment_without_overlap():
    data = _batch()
    for row, a, b, n in zip(data.tokens, data.first, data.second, data.length, strict=True):
        assert CONFIG.min_len <= n <= CONFIG.max_len
        assert 0 <= a and a + n <= b and b + n <= CONFIG.seq_len  # two disjoint copies
        assert torch.equal(row[a : a + n], row[b : b + n])


def test_repeats_have_random_offsets_and_lengths():
    data = _batch()
    assert len(set(data.first.tolist())) >= 10 and len(set(data.second.tolist())) >= 15
    assert set(data.length.tolist()) == set(range(CONFIG.min_len, CONFIG.max_len + 1))
    # how far back the copy lies varies: no fixed "look k back" finds the earlier occurrence
    distance = (data.second - data.first).bincount()
    assert (distance > 0).sum() >= 15 and distance.max() < 0.2 * len(data.tokens)


def test_fixed_offset_puts_the_copies_side_by_side():
    data = _batch(8, config=ind.RepeatConfig(fixed_offset=True))
    assert data.first.eq(0).all() and data.second.eq(CONFIG.max_len).all()
    n = CONFIG.max_len
    assert torch.equal(data.tokens[:, :n], data.tokens[:, n : 2 * n])


def test_the_data_depend_only_on_the_generator():
    assert torch.equal(_batch(16, 3).tokens, _batch(16, 3).tokens)
    assert not torch.equal(_batch(16, 3).tokens, _batch(16, 4).tokens)


def test_induction_keys_hold_the_token_after_the_previous_occurrence():
    data = _batch(64)
    query, key = data.induction_keys()
    rows, cols = torch.nonzero(query >= 0, as_tuple=True)
    assert len(rows) == int(data.length.sum())
    k = key[rows, cols]
    assert (k <= cols).all()  # causal: the key is visible to the query
    assert torch.equal(data.tokens[rows, k - 1], data.tokens[rows, cols])  # same token before it


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="seq_len"):
        ind.RepeatConfig(max_len=30, seq_len=48)
    with pytest.raises(ValueError, match="min_len"):
        ind.RepeatConfig(min_len=9, max_len=8)
    with pytest.raises(ValueError, match="batch"):
        ind.repeat_batch(CONFIG, 0, torch.Generator())
    model = ind.AttentionOnlyTransformer(CONFIG)
    with pytest.raises(ValueError, match="token ids"):
        model(torch.tensor([[0, 64]]))
    with pytest.raises(ValueError, match="seq"):
        model(torch.zeros(1, 49, dtype=torch.long))
    with pytest.raises(ValueError, match="ablate"):
        model(torch.zeros(1, 4, dtype=torch.long), ablate=(2, 0))
    with pytest.raises(ValueError, match="seq, seq"):
        ind.previous_token_score(np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="max_offset"):
        ind.offset_profile(np.ones((1, 1, 4, 4)), max_offset=3)


def test_layers_equal_multi_head_attention_and_are_causal():
    torch.manual_seed(0)
    model = ind.AttentionOnlyTransformer(CONFIG).double()
    x = torch.randn(2, 10, CONFIG.d_model, dtype=torch.float64)
    ours, w = model.attend(0, x)
    theirs, w_ref = MultiHeadAttention.forward(model.layers[0], x, causal=True)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-12)
    torch.testing.assert_close(w, w_ref, rtol=0, atol=1e-12)
    fused, _ = model.attend(0, x, need_weights=False)
    torch.testing.assert_close(fused, theirs, rtol=0, atol=1e-10)
    with torch.no_grad():  # without autograd: the faster path to the same weights
        quick, w_quick = model.attend(0, x)
    torch.testing.assert_close(quick, theirs, rtol=0, atol=1e-12)
    torch.testing.assert_close(w_quick, w_ref, rtol=0, atol=1e-12)
    tokens = _batch(2).tokens
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % CONFIG.vocab
    with torch.no_grad():
        a, b = model(tokens)[0], model(changed)[0]
    assert torch.equal(a[:, :-1], b[:, :-1])  # the future never changes earlier logits


def test_ablating_a_head_zeroes_exactly_its_contribution():
    torch.manual_seed(1)
    model = ind.AttentionOnlyTransformer(CONFIG).double()
    x = torch.randn(1, 6, CONFIG.d_model, dtype=torch.float64)
    mha = model.layers[1]
    full, _ = model.attend(1, x)
    keep = torch.ones(CONFIG.n_heads)
    keep[2] = 0
    ablated, _ = model.attend(1, x, keep)
    _, weights = model.attend(1, x)
    V = mha._split(mha.W_v(x))  # (1, heads, seq, d_head)
    d = mha.d_head
    head_out = (weights[:, 2] @ V[:, 2]) @ mha.W_o.weight[:, 2 * d : 3 * d].T  # (1, seq, d_model)
    torch.testing.assert_close(full - ablated, head_out, rtol=0, atol=1e-12)


def test_mean_ablation_puts_the_heads_average_output_in_its_place():
    torch.manual_seed(2)
    model = ind.AttentionOnlyTransformer(CONFIG).double()
    data = _batch(6, seed=4)
    means = ind.mean_head_outputs(model, data.tokens)  # (layers, heads, d_head)
    assert means.shape == (2, CONFIG.n_heads, CONFIG.d_model // CONFIG.n_heads)
    x = model.embed(data.tokens) + model.pos
    with torch.no_grad():
        mha = model.layers[0]
        Q, K, V = (mha._split(f(x)) for f in (mha.W_q, mha.W_k, mha.W_v))
        _, weights = model.attend(0, x)
        torch.testing.assert_close(means[0], (weights @ V).mean(dim=(0, 2)))  # by hand
        zero = model(data.tokens, ablate=(1, 3))[0]
        filled = model(data.tokens, ablate=(1, 3), fill=torch.zeros(16, dtype=torch.float64))[0]
        torch.testing.assert_close(zero, filled)  # a zero fill is the zero ablation
        one = torch.ones(CONFIG.n_heads)
        one[3] = 0.0
        fills = torch.zeros(CONFIG.n_heads, 16, dtype=torch.float64)
        fills[3] = means[0, 3]
        out, _ = model.attend(0, x, one, fill=fills)
        full, _ = model.attend(0, x)
        d = mha.d_head  # the head's output replaced by its mean at every position
        head = (weights[:, 3] @ V[:, 3] - means[0, 3]) @ mha.W_o.weight[:, 3 * d : 4 * d].T
        torch.testing.assert_close(full - out, head)
    zero_abl = ind.head_ablation(model, data)
    mean_abl = ind.head_ablation(model, data, mean=True)
    assert zero_abl.shape == mean_abl.shape == (2, CONFIG.n_heads)
    assert not np.allclose(zero_abl, mean_abl)
    with pytest.raises(ValueError, match="fill"):
        model(data.tokens, ablate=(0, 1), fill=torch.zeros(3))
    with pytest.raises(ValueError, match="fill"):
        model(data.tokens, fill=torch.zeros(16))


def test_a_run_is_the_never_switching_run_until_its_switch():
    """The phase change happens before the switch to even distances: up to the switch, a run
    is step for step the run that never switches (same batches, same learning rates)."""
    kw = dict(steps=12, every=2, eval_size=2, progress=False)
    switching = ind.train_induction(even_after=6, **kw)
    never = ind.train_induction(even_after=None, **kw)
    np.testing.assert_array_equal(switching.losses[:6], never.losses[:6])
    assert not np.array_equal(switching.losses[6:], never.losses[6:])
    assert switching.even_after == 6 and never.even_after is None


def test_previous_token_score_on_hand_made_patterns():
    seq = 6
    perfect = np.eye(seq, k=-1)[None, None]  # (batch, heads, seq, seq)
    perfect[..., 0, 0] = 1.0
    uniform = np.tril(np.ones((seq, seq)))
    uniform = (uniform / uniform.sum(axis=1, keepdims=True))[None, None]
    both = np.concatenate([perfect, uniform], axis=1)  # (1, 2, seq, seq)
    np.testing.assert_allclose(ind.previous_token_score(both), [1.0, np.mean(1 / np.arange(2, 7))])
    np.testing.assert_allclose(ind.previous_token_score(np.eye(seq)[None, None]), [0.0])


def test_induction_score_on_hand_made_patterns():
    data = _batch(4, seed=2)
    query, key = data.induction_keys()
    T = CONFIG.seq_len
    perfect = np.zeros((4, 1, T, T))
    prev = np.zeros((4, 1, T, T))
    for b in range(4):
        for q in range(T):
            prev[b, 0, q, max(q - 1, 0)] = 1.0
            k = int(key[b, q]) if query[b, q] >= 0 else max(q - 1, 0)
            perfect[b, 0, q, k] = 1.0
    both = np.concatenate([perfect, prev], axis=1)  # (batch, 2 heads, seq, seq)
    np.testing.assert_allclose(ind.induction_score(both, data), [1.0, 0.0])
    stacked = np.stack([both, both])  # (layers, batch, heads, seq, seq)
    assert ind.induction_score(stacked, data).shape == (2, 2)
    assert ind.previous_token_score(stacked).shape == (2, 2)
    np.testing.assert_allclose(ind.offset_profile(prev, 2)[0], [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="weights"):
        ind.induction_score(both[:2], data)


def test_distance_and_even_batches_put_the_copies_where_asked():
    for d in (12, 18, 36):
        data = ind.repeat_batch(CONFIG, 64, torch.Generator().manual_seed(d), distance=d)
        assert (data.second - data.first).eq(d).all()
        assert (data.length >= CONFIG.min_len).all() and (data.length <= min(d, 48 - d)).all()
        for row, a, b, n in zip(data.tokens, data.first, data.second, data.length, strict=True):
            assert b + n <= CONFIG.seq_len and torch.equal(row[a : a + n], row[b : b + n])
    even = ind.repeat_batch(CONFIG, 4096, torch.Generator().manual_seed(0), even=True)
    counts = (even.second - even.first).bincount()[CONFIG.min_len :]
    assert len(counts) == 25 and counts.min() > 0.6 * counts.max()  # every distance alike
    uneven = _batch(4096)
    gap = uneven.second - uneven.first
    assert ((gap - 24).abs() <= 2).float().mean() > 2 * ((gap <= 14) | (gap >= 34)).float().mean()
    with pytest.raises(ValueError, match="distance"):
        ind.repeat_batch(CONFIG, 4, torch.Generator(), distance=40)


def test_loss_by_start_moves_the_pair_and_nothing_else():
    """Each place's loss is the loss on sequences built by hand: the same random tokens, the
    segment at ``start − distance`` copied to ``start``, no other repeat made."""
    torch.manual_seed(0)
    model = ind.AttentionOnlyTransformer(CONFIG)
    d, starts, n = 12, [12, 24, 36], 8
    got = ind.loss_by_start(model, d, starts, batch=n)
    assert got.shape == (3,) and np.array_equal(got, ind.loss_by_start(model, d, starts, batch=n))
    for s, loss in zip(starts, got, strict=True):
        gen = torch.Generator().manual_seed(30_000 + 1000 * d + s)
        tokens = torch.randint(0, CONFIG.vocab, (n, CONFIG.seq_len), generator=gen)
        for i in range(CONFIG.min_len):  # the second copy, token by token
            tokens[:, s + i] = tokens[:, s - d + i]
        full = lambda t: torch.full((n,), t)  # noqa: E731
        data = ind.RepeatBatch(tokens, full(s - d), full(s), full(CONFIG.min_len))
        with torch.no_grad():
            assert loss == ind.repeat_losses(model(tokens, need_weights=False)[0], data)[0]
    with pytest.raises(ValueError, match=r"each start must lie in .* = \[12, 36\].*got \[8\]"):
        ind.loss_by_start(model, d, [8])
    with pytest.raises(ValueError, match="length ≤ distance"):
        ind.loss_by_start(model, d, [24], length=13)
    places = claims.places(CONFIG, 12)
    assert list(places) == [12, 16, 20, 24, 28, 32, 36]  # the last leaves room for 12 tokens


def test_rise_step_and_phase_change_on_made_up_curves():
    steps = np.arange(0, 101, 10)
    assert ind.rise_step(steps, np.linspace(0, 1, 11)) == 50
    assert ind.rise_step(steps, np.linspace(4, 0, 11), share=0.25) == 30
    run = ind.train_induction(steps=4, every=2, eval_size=2, progress=False)
    run.steps = steps
    run.repeated_loss = np.array([4, 4, 4, 3.9, 3.8, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5])
    start, end, fall = ind.phase_change(run, window=20)
    assert (start, end) == (40, 60) and np.isclose(fall, 3.3)
    run.repeated_loss = np.linspace(4, 0.5, 11)  # a steady slope: the first stretch is as steep
    assert ind.phase_change(run, window=20) == (0, 20, pytest.approx(0.7))
    with pytest.raises(ValueError, match="window"):
        ind.phase_change(run, window=200)


def test_key_ablation_and_logit_attribution_on_a_head_that_writes_nothing():
    torch.manual_seed(3)
    model = ind.AttentionOnlyTransformer(CONFIG)
    d = model.layers[0].d_head
    with torch.no_grad():
        model.layers[0].W_o.weight[:, 2 * d : 3 * d] = 0.0  # head 2 of layer 0 writes nothing
    data = _batch(8)
    with torch.no_grad():
        intact = ind.repeat_losses(model(data.tokens)[0], data)[0]
    np.testing.assert_allclose(ind.key_ablation(model, data, 2), [intact] * 3, rtol=1e-5)
    assert not np.allclose(ind.key_ablation(model, data, 1), [intact] * 3, rtol=1e-5)
    dla = ind.logit_attribution(model, data)
    assert dla.shape == (2, 4) and dla[0, 2] == 0.0 and np.abs(dla).sum() > 0
    from course_attention.induction import _head_outputs

    x = torch.randn(2, 9, CONFIG.d_model)
    with torch.no_grad():  # the heads' shares add up to the layer's output, less W_o's bias
        shares = _head_outputs(model, 1, x).sum(1) + model.layers[1].W_o.bias
        torch.testing.assert_close(shares, model.attend(1, x)[0], rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="2-layer"):
        ind.key_ablation(ind.AttentionOnlyTransformer(ind.RepeatConfig(n_layers=1)), data, 0)


def test_token_induction_score_is_exercise_2s_reference():
    from course_attention.exercises.ch09_induction_heads import _induction_reference

    data = _batch(3, seed=5)
    gen = np.random.default_rng(0)
    w = np.tril(gen.random((3, 2, CONFIG.seq_len, CONFIG.seq_len)) ** 3)
    w /= w.sum(-1, keepdims=True)
    for b in range(3):
        ours = ind.token_induction_score(w[b : b + 1], data.tokens[b : b + 1])
        theirs = [_induction_reference(w[b, h], data.tokens[b].numpy()) for h in range(2)]
        np.testing.assert_allclose(ours, theirs)


def test_the_try_it_sequence_is_a_repeat_the_explorer_accepts():
    from course_attention.explorers.induction import parse_tokens

    ids = parse_tokens(claims.TRY_IT, CONFIG.vocab, CONFIG.seq_len)
    assert len(ids) == 38 and ids[2:14] == ids[26:38] and len(set(ids[:26])) == 26
    where, new = claims.TRY_IT_CHANGE
    assert 27 <= where < 37 and new not in ids


def test_figures_and_explorer_build():
    run = ind.train_induction(steps=4, every=2, eval_size=2, progress=False)
    assert run.steps.tolist() == [0, 2, 4]
    assert run.example.shape == (3, 2, 4, CONFIG.seq_len, CONFIG.seq_len)
    labels = ind.position_labels(run.eval_batch.tokens[0])
    fig = viz.checkpoint_slider(
        run.example[:, 0, 0], run.example[:, 1, 0], run.steps, labels, ("a", "b")
    )
    assert len(fig.frames) == 3
    fig = viz.phase_change_figure(
        run.steps, run.repeated_loss, run.other_loss, run.chance, (2, 4),
        control=(run.steps, run.repeated_loss), training=(np.arange(1, 5), run.losses),
    )
    assert len(fig.data) == 5 and fig.layout.shapes[-1].x0 == 2
    assert fig.data[-1].name.startswith("chance") and fig.data[-1].line.dash == "dash"
    top = max(float(np.max(t.y)) for t in fig.data)  # room above the curves for the labels
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= 1.15 * top
    fig = viz.phase_change_figure(run.steps, run.repeated_loss, run.other_loss, run.chance,
                                  switch=3)
    assert fig.layout.shapes[-1].x0 == 3 and "3" in fig.layout.annotations[-1].text
    fig = viz.distance_figure(ind.DISTANCES, {"end": run.by_distance[4]}, reference=3.0)
    assert list(fig.data[0].x) == list(ind.DISTANCES)
    names = ("layer 0 · head 1: previous token", "layer 1 · head 0: induction")
    fig = viz.two_heads_figure(run.example[-1, 0, 1], run.example[-1, 1, 0], labels, names)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == [viz.panel_title("layer 0 · head 1<br>previous token"),  # phone-wide lines
                      viz.panel_title("layer 1 · head 0<br>induction")]
    assert fig.layout.xaxis.showticklabels and fig.layout.yaxis2.showticklabels
    assert list(fig.layout.xaxis.ticktext) == ["0", "16", "32"]  # six collide on a phone
    viz.head_scores_figure(run.previous[-1], run.induction[-1])
    viz.ablation_figure(ind.head_ablation(run.model, run.eval_batch), 4.0, run.chance)
    assert set(run.by_distance) == {4}  # no switch to even distances in four steps
    explorer = widgets.induction_explorer(run=run)
    assert explorer.figure is not None


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Not one lucky seed: the chapter's own claim checks (``ind.check_claims``, which the
    chapter runs on seed 0 in each of its executions) hold for the models of seeds 1 and 2, each
    trained as the chapter trains it, with its 1-layer control and its fixed-offset model."""
    run = ind.train_induction(seed=seed, progress=False)
    control = ind.train_induction(ind.RepeatConfig(n_layers=1), seed=seed, progress=False)
    fixed = ind.train_induction(
        ind.RepeatConfig(fixed_offset=True), steps=100, lr=3e-2, every=50, seed=seed,
        progress=False,
    )
    found = {**claims.analyse(run, control), **claims.analyse_fixed(fixed, run.eval_batch)}
    claims.check_claims(found)
    # chapter 14's claims about this model (where it puts weight it does not need), which
    # chapter 14 checks on seed 0: tested here, on the models this test trains anyway
    sinks_compare.check_induction_sink(run.model, seed)


def test_check_claims_fails_on_an_untrained_model():
    run = ind.train_induction(steps=120, every=10, even_after=None, progress=False)
    control = ind.train_induction(ind.RepeatConfig(n_layers=1), steps=120, progress=False)
    with pytest.raises(AssertionError, match="chapter 9 claims fail"):
        claims.check_claims(claims.analyse(run, control))


def test_checkpoint_frames_keep_only_the_causal_part_of_each_row():
    from course_attention.viz.induction import _compact

    causal = np.tril(np.full((4, 4), 0.25))
    causal[3] = [0.5, 0.0, 0.25, 0.25]
    rows = _compact(causal)
    assert [len(r) for r in rows] == [1, 2, 3, 4]
    assert rows[3] == [0.5, 0, 0.25, 0.25] and isinstance(rows[3][1], int)
    full = np.full((3, 3), 1 / 3)  # not causal: every row kept whole
    assert [len(r) for r in _compact(full)] == [3, 3, 3]


def test_the_seen_loss_is_the_log_of_the_ids_seen_so_far():
    """Guessing among the distinct ids seen so far (chapter 9; chapter 15's context baseline)."""
    config = ind.RepeatConfig()
    data = ind.repeat_batch(config, 4, torch.Generator().manual_seed(5))
    logs = [np.log(len(set(data.tokens[b, : t + 1].tolist())))
            for b in range(4) for t in range(data.tokens.shape[1] - 1)
            if data.repeated()[b, t + 1]]
    assert abs(ind.seen_loss(data, config.vocab) - float(np.mean(logs))) < 1e-9
    one = ind.RepeatBatch(torch.tensor([[3, 5, 3, 5]]), torch.tensor([0]), torch.tensor([2]),
                          torch.tensor([2]))  # predicts the last 5 after seeing {3, 5}
    assert abs(ind.seen_loss(one, 6) - np.log(2)) < 1e-12
