"""Transformer block and encoder–decoder (chapters 6–7): numpy ⇔ torch ⇔ PyTorch's layers,
causality, the route from source to output, the toy task and its training."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from course_attention import modules, tasks, training
from course_attention import numpy_ref as ref

D, HEADS, FF = 16, 4, 32


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _randomise(module: torch.nn.Module, seed: int = 0) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.3)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_encoder_layer_equals_pytorch(norm_first):
    theirs = torch.nn.TransformerEncoderLayer(
        D, HEADS, FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).double()
    _randomise(theirs)
    ours = modules.EncoderLayer.from_torch(theirs.eval()).eval()
    x = _x(3, 5, D)
    padding = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    expected = theirs(x, src_key_padding_mask=padding)
    got, weights = ours(x, mask=~padding[:, None, None, :])
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-6)
    assert weights.shape == (3, HEADS, 5, 5)
    fused, none = ours(x, mask=~padding[:, None, None, :], need_weights=False)
    torch.testing.assert_close(fused, expected, atol=1e-6, rtol=1e-6)
    assert none is None


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_decoder_layer_equals_pytorch(norm_first):
    theirs = torch.nn.TransformerDecoderLayer(
        D, HEADS, FF, dropout=0.0, batch_first=True, norm_first=norm_first
    ).double()
    _randomise(theirs, seed=1)
    ours = modules.DecoderLayer.from_torch(theirs.eval()).eval()
    y, memory = _x(2, 4, D, seed=2), _x(2, 6, D, seed=3)
    padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    expected = theirs(y, memory, tgt_mask=causal, memory_key_padding_mask=padding)
    got, self_w, cross_w = ours(y, memory, memory_mask=~padding[:, None, None, :])
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-6)
    assert self_w.shape == (2, HEADS, 4, 4) and cross_w.shape == (2, HEADS, 4, 6)
    assert (self_w.triu(1) == 0).all(), "self-attention of the decoder is causal"
    assert (cross_w[1, :, :, 4:] == 0).all(), "padded source tokens get no weight"


def test_layer_norm_feed_forward_and_positions_match_torch():
    x = _x(2, 3, D)
    norm = torch.nn.LayerNorm(D).double()
    _randomise(norm)
    expected = norm(x).detach().numpy()
    got = ref.layer_norm(x.numpy(), norm.weight.detach().numpy(), norm.bias.detach().numpy())
    np.testing.assert_allclose(got, expected, atol=1e-10)
    ff = modules.FeedForward(D, FF).double()
    _randomise(ff, seed=4)
    l1, l2 = ff.linear1, ff.linear2
    got = ref.feed_forward(
        x.numpy(), *(t.detach().numpy() for t in (l1.weight.T, l1.bias, l2.weight.T, l2.bias))
    )
    np.testing.assert_allclose(got, ff(x).detach().numpy(), atol=1e-10)
    pe = modules.PositionalEncoding(D, max_len=10)
    table = ref.sinusoidal_positions(10, D)
    np.testing.assert_allclose(pe(torch.zeros(1, 10, D)).numpy()[0], table, atol=1e-6)


def test_sinusoidal_positions_values_and_relative_shift():
    table = ref.sinusoidal_positions(50, 8)
    assert table.shape == (50, 8) and np.abs(table).max() <= 1
    np.testing.assert_allclose(table[0], [0, 1] * 4)
    assert table[3, 0] == pytest.approx(np.sin(3.0))
    # PE(pos + k) = M_k PE(pos) for one matrix M_k: positions are relative by construction
    k = 5
    M, *_ = np.linalg.lstsq(table[:-k], table[k:], rcond=None)
    np.testing.assert_allclose(table[:-k] @ M, table[k:], atol=1e-8)


def _model(seed=0, **kw):
    torch.manual_seed(seed)
    return modules.Seq2SeqTransformer(tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, max_len=16, **kw).double()


def test_decoder_is_causal_future_targets_do_not_change_earlier_logits():
    model = _model().eval()
    src = torch.from_numpy(tasks.encode_source("40213", 8))
    tgt = torch.tensor([[tasks.BOS_ID, 5, 6, 7, 8, 9]])
    changed = tgt.clone()
    changed[0, 3:] = torch.tensor([3, 4, 12])
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(before[:, :3], after[:, :3], rtol=0, atol=0)
    assert not torch.allclose(before[:, 3:], after[:, 3:])


def test_source_reaches_the_output_only_through_cross_attention():
    model = _model().eval()
    tgt = torch.tensor([[tasks.BOS_ID, 5, 6]])
    a = torch.from_numpy(tasks.encode_source("123", 8))
    b = torch.from_numpy(tasks.encode_source("987", 8))
    assert not torch.allclose(model(a, tgt), model(b, tgt)), (
        "changing the source changes the output"
    )
    with torch.no_grad():
        for layer in model.decoder:  # cut the only road from memory to the decoder
            layer.cross_attn.W_o.weight.zero_()
    torch.testing.assert_close(model(a, tgt), model(b, tgt), rtol=0, atol=0)


def test_bad_tokens_and_lengths_are_named():
    model = _model()
    tgt = torch.tensor([[tasks.BOS_ID]])
    with pytest.raises(ValueError, match=r"src ids must lie in 0 … 12; got 3 … 13"):
        model(torch.tensor([[3, 13]]), tgt)
    with pytest.raises(ValueError, match=r"tgt_in ids must lie in 0 … 12; got -1 … -1"):
        model(torch.tensor([[3]]), torch.tensor([[-1]]))
    with pytest.raises(ValueError, match="src has length 17 > max_len=16"):
        model(torch.full((1, 17), 3), tgt)
    with pytest.raises(ValueError, match="must be an integer tensor"):
        model(torch.zeros(1, 3), tgt)
    with pytest.raises(ValueError, match="max_steps must lie in 1 … 15"):
        model.greedy_decode(torch.tensor([[3]]), tasks.BOS_ID, tasks.EOS_ID, max_steps=16)
    with pytest.raises(ValueError, match="the model reads 1 … 10 digits; got 11"):
        tasks.encode_source("1" * 11)
    with pytest.raises(ValueError, match="the model reads 3 … 8 digits; got 2"):
        tasks.encode_source("12", max_len=8, min_len=3)
    with pytest.raises(ValueError, match="type digits 0-9 only"):
        tasks.encode_source("12a")
    with pytest.raises(ValueError, match="d_model=10 must be divisible by n_heads=4|multiple"):
        modules.Seq2SeqTransformer(13, 13, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match="need seq_len ≥ 1 and an even d_model"):
        ref.sinusoidal_positions(4, 7)


def test_reverse_task_is_generated_with_disjoint_train_and_held_out_sets():
    task = tasks.sequence_task("reverse", n_train=300, n_test=50, seed=1)
    train = {tuple(tasks.decode_digits(r)) for r in task.train_src}
    test = {tuple(tasks.decode_digits(r)) for r in task.test_src}
    assert len(train) == 300 and len(test) == 50 and not train & test
    for s, t in zip(task.train_src, task.train_tgt, strict=True):
        assert tasks.decode_digits(t[1:]) == tasks.decode_digits(s)[::-1]
        assert t[0] == tasks.BOS_ID
    sort = tasks.sequence_task("sort", n_train=20, n_test=6)
    assert all(
        tasks.decode_digits(t[1:]) == sorted(tasks.decode_digits(s))
        for s, t in zip(sort.train_src, sort.train_tgt, strict=True)
    )
    with pytest.raises(ValueError, match="task must be one of"):
        tasks.sequence_task("shuffle")


def _digits_per_row(src):
    return (src >= tasks.DIGIT_OFFSET).sum(axis=1)


def test_every_trained_length_is_held_out_too_and_no_string_is_in_both():
    """Before: the de-duplication used up the 3-digit strings, leaving none to hold out."""
    task = tasks.sequence_task("reverse")
    train = {tuple(r) for r in task.train_src}
    test = [tuple(r) for r in task.test_src]
    assert len(train) == len(task.train_src) == 20000 and len(set(test)) == len(test) == 600
    assert train.isdisjoint(test)
    n_train, n_test = _digits_per_row(task.train_src), _digits_per_row(task.test_src)
    assert task.lengths == (3, 4, 5, 6, 7, 8)
    assert sorted(set(n_test)) == sorted(set(n_train)) == list(task.lengths)
    assert all((n_test == n).sum() == 100 for n in task.lengths)  # an equal share per length
    assert (n_train == 3).sum() == 900  # the 1000 strings of 3 digits: 900 + 100
    assert task.train_src.shape[1] == tasks.WIDTH + 1 and task.test_tgt.shape[1] == tasks.WIDTH + 2
    small = tasks.sequence_task("sort", n_train=30, n_test=7, min_len=1, max_len=2, seed=3)
    assert sorted(set(_digits_per_row(small.test_src))) == [1, 2]
    assert {tuple(r) for r in small.train_src}.isdisjoint(map(tuple, small.test_src))
    with pytest.raises(ValueError, match="too few distinct strings"):
        tasks.sequence_task(n_train=200, n_test=10, min_len=1, max_len=2)
    with pytest.raises(ValueError, match="one string per length"):
        tasks.sequence_task(n_test=3)
    with pytest.raises(ValueError, match="max_len ≤ width"):
        tasks.sequence_task(max_len=11)


def test_strings_of_lengths_gives_all_short_strings_and_a_sample_of_long_ones():
    src, tgt = tasks.strings_of_lengths("reverse", (1, 2, 10), n_per_length=50, seed=1)
    n = _digits_per_row(src)
    assert [(n == k).sum() for k in (1, 2, 10)] == [10, 50, 50]  # only 10 strings of 1 digit
    assert len({tuple(r) for r in src}) == len(src)
    for s, t in zip(src, tgt, strict=True):
        assert tasks.decode_digits(t[1:]) == tasks.decode_digits(s)[::-1]
    with pytest.raises(ValueError, match="lengths in 1 … width=10"):
        tasks.strings_of_lengths("reverse", (11,))


class _Oracle:
    """Answers every source correctly except those of ``wrong_length`` digits."""

    def __init__(self, task_name, wrong_length):
        self.name, self.wrong_length = task_name, wrong_length

    def greedy_decode(self, src, bos_id, eos_id, max_steps=None):
        rows = []
        for s in src.tolist():
            digits = tasks.decode_digits(s)
            answer = tasks.TASKS[self.name](digits)
            if len(digits) == self.wrong_length:
                answer = [(d + 1) % 10 for d in answer]
            rows.append(tasks.encode_digits(answer, max_steps).tolist())
        return modules.Decoding(torch.tensor(rows), [])


def test_accuracy_by_length_scores_each_length_on_its_own():
    src, tgt = tasks.strings_of_lengths("sort", (1, 4, 9), n_per_length=20)
    accuracy = training.accuracy_by_length(_Oracle("sort", wrong_length=4), src, tgt)
    assert accuracy == {1: 1.0, 4: 0.0, 9: 1.0}
    assert training.sequence_accuracy(_Oracle("sort", 4), src, tgt) == pytest.approx(30 / 50)
    with pytest.raises(ValueError, match="same n"):
        training.accuracy_by_length(_Oracle("sort", 4), src, tgt[:3])


def test_adam_equals_pytorch_adam_step_for_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)
    ).double()
    start = copy.deepcopy(net)
    ours_net, theirs_net = net, copy.deepcopy(net)
    ours = training.Adam(ours_net.parameters(), lr=1e-2)
    theirs = torch.optim.Adam(theirs_net.parameters(), lr=1e-2)
    x = _x(16, 4)
    for step in range(20):
        lr = 1e-2 * (step + 1) / 20  # a changing rate, as the warm-up gives
        for model, opt in ((ours_net, ours), (theirs_net, theirs)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
        ours.step(lr)
        for group in theirs.param_groups:
            group["lr"] = lr
        theirs.step()
    for p, q in zip(ours_net.parameters(), theirs_net.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=1e-12)
    assert not torch.allclose(ours_net[0].weight, start[0].weight)  # it did move
    with pytest.raises(ValueError, match="lr > 0"):
        training.Adam(net.parameters(), lr=0.0)


def test_torch_threads_sets_and_restores():
    before = torch.get_num_threads()
    with training.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with training.torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"), training.torch_threads(0):
        pass


def test_dropping_all_padding_columns_leaves_the_loss_unchanged():
    """``train`` trims a batch to its longest row: the loss must not notice."""
    model = _model().eval()
    task = tasks.sequence_task("reverse", n_train=20, n_test=6, max_len=4)
    s, t = torch.from_numpy(task.train_src[:8]), torch.from_numpy(task.train_tgt[:8])
    s_trim, t_trim = training._trim(s), training._trim(t)
    assert s_trim.shape[1] < s.shape[1] and t_trim.shape[1] < t.shape[1]

    def loss(src, tgt):
        logits = model(src, tgt[:, :-1])
        return torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), tgt[:, 1:].reshape(-1), ignore_index=tasks.PAD_ID
        )

    torch.testing.assert_close(loss(s, t), loss(s_trim, t_trim), rtol=0, atol=1e-12)


def test_progress_bar_prints_one_line_in_a_terminal(capsys):
    bar = training.Progress(total=20, every=10)
    for step in range(1, 21):
        bar.update(step, 0.5)
    out = capsys.readouterr().out
    assert out.count("\r") == 2 and out.endswith("step 20/20  loss 0.5000\n")


def test_progress_bar_shows_plain_text_in_a_notebook_not_a_quoted_string():
    from IPython.core.formatters import PlainTextFormatter

    shown = PlainTextFormatter()(training.Progress(total=20)._line(20, 0.5))
    assert shown.endswith("step 20/20  loss 0.5000") and shown[0] not in "'\""
    assert PlainTextFormatter()("step")[0] == "'"  # what a str showed: quoted


def test_adamw_equals_pytorch_adamw():
    torch.manual_seed(1)
    net = torch.nn.Linear(5, 3).double()
    theirs_net = copy.deepcopy(net)
    ours = training.Adam(net.parameters(), lr=1e-2, weight_decay=0.1)
    theirs = torch.optim.AdamW(theirs_net.parameters(), lr=1e-2, weight_decay=0.1)
    x = _x(8, 5)
    for _ in range(10):
        for model, opt in ((net, ours), (theirs_net, theirs)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
        ours.step()
        theirs.step()
    for p, q in zip(net.parameters(), theirs_net.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="weight_decay"):
        training.Adam(net.parameters(), weight_decay=-1.0)


def test_fit_trains_any_model_on_any_batches_and_calls_back():
    """The one loop: here a linear regression, y = 3x − 1, learned from seeded batches."""
    model = torch.nn.Linear(1, 1)
    seen = []

    def batch(gen):
        x = torch.rand(32, 1, generator=gen)
        return x, 3 * x - 1

    def mse(model, xy):
        return (model(xy[0]) - xy[1]).pow(2).mean()

    log = training.fit(model, batch, mse, steps=200, lr=0.1, warmup=5, progress=False,
                       callback=lambda step, loss: seen.append(step))  # fmt: skip
    assert seen == list(range(1, 201)) and log.losses.shape == (200,)
    assert log.losses[-1] < 1e-3 < log.losses[0]
    assert abs(model.weight.item() - 3) < 0.05 and not model.training
    with pytest.raises(ValueError, match="warmup"):
        training.fit(model, batch, mse, steps=10, warmup=0)
