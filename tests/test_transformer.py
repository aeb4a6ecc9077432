"""Transformer block and encoder–decoder (chapters 6–7): numpy ⇔ torch ⇔ PyTorch's layers,
causality, the route from source to output, the toy task and its training."""

from __future__ import annotations

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
    with pytest.raises(ValueError, match="the model reads 1 … 8 digits; got 9"):
        tasks.encode_source("123456789")
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
    sort = tasks.sequence_task("sort", n_train=20, n_test=5)
    assert all(
        tasks.decode_digits(t[1:]) == sorted(tasks.decode_digits(s))
        for s, t in zip(sort.train_src, sort.train_tgt, strict=True)
    )
    with pytest.raises(ValueError, match="task must be one of"):
        tasks.sequence_task("shuffle")


def test_progress_bar_prints_one_line_in_a_terminal(capsys):
    bar = training.Progress(total=20, every=10)
    for step in range(1, 21):
        bar.update(step, 0.5)
    out = capsys.readouterr().out
    assert out.count("\r") == 2 and out.endswith("step 20/20  loss 0.5000\n")


def test_trained_model_reaches_99_percent_on_held_out_sequences():
    task = tasks.sequence_task()
    torch.manual_seed(0)
    model = modules.Seq2SeqTransformer(
        tasks.VOCAB_SIZE, tasks.VOCAB_SIZE, d_model=64, n_heads=4, n_layers=2, max_len=16
    )
    assert training.sequence_accuracy(model, task.test_src, task.test_tgt) < 0.05
    log = training.train(model, task, progress=False)
    assert log.losses[-1] < log.losses[0] / 100
    assert training.sequence_accuracy(model, task.test_src, task.test_tgt) >= 0.99
