"""Chapter 15's trained comparisons (``course_attention.linear_attention.compare``, ``recall``,
``models``, ``copy_task``): the recall and copy data, the models' shapes and widths, refusals of
bad input, the claims failing on untrained models, and the chapter's claims on seeds 1 and 2 (the
chapter runs 0)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from course_attention.induction import _token_losses, repeat_batch
from course_attention.linear_attention import compare, copy_task, models, recall


def test_recall_batches_ask_each_key_once_for_the_value_that_followed_it():
    config = recall.RecallConfig(n_keys=8, n_values=5)
    data = recall.recall_batch(config, 6, 7, torch.Generator().manual_seed(0))
    assert data.tokens.shape == data.targets.shape == (6, 21) and data.pairs == 7
    keys, values, queries = data.tokens[:, 0:14:2], data.tokens[:, 1:14:2], data.tokens[:, 14:]
    assert (keys < 8).all() and ((values >= 8) & (values < 13)).all() and (queries < 8).all()
    assert data.asked().sum() == 6 * 7 and not data.asked()[:, :14].any()
    for row in range(6):
        assert len(set(keys[row].tolist())) == 7  # distinct keys
        assert sorted(queries[row].tolist()) == sorted(keys[row].tolist())
        answer = dict(zip(keys[row].tolist(), values[row].tolist(), strict=True))
        assert data.targets[row, 14:].tolist() == [answer[q] for q in queries[row].tolist()]
    again = recall.recall_batch(config, 6, 7, torch.Generator().manual_seed(0))
    assert torch.equal(again.tokens, data.tokens)  # only the generator draws
    one = recall.recall_batch(config, 2000, 1, torch.Generator().manual_seed(1))
    assert one.context_baseline() == 1.0  # one pair: its value is the answer
    many = recall.recall_batch(config, 2000, 8, torch.Generator().manual_seed(1))
    assert 1 / 8 < many.context_baseline() < 1 / 8 + 1 / 5  # repeats of a value help a little


def test_recall_refuses_bad_input_naming_it():
    with pytest.raises(ValueError, match="n_keys must be"):
        recall.RecallConfig(n_keys=1)
    with pytest.raises(ValueError, match="pairs=9 distinct keys do not fit in n_keys=8"):
        recall.recall_batch(recall.RecallConfig(8, 4), 2, 9, torch.Generator())
    with pytest.raises(ValueError, match="batch must be"):
        recall.recall_batch(recall.RecallConfig(8, 4), 0, 2, torch.Generator())
    with pytest.raises(ValueError, match="pairs=40"):
        recall.recall_batches(recall.RecallConfig(8, 4), 4, (2, 40))


def test_every_kind_reads_causally_at_equal_width():
    for kind in models.KINDS:
        config = models.StackConfig(20, (kind, kind), d_model=16, heads=2, d_ff=32)
        torch.manual_seed(0)
        model = models.MixerStack(config).eval()
        tokens = torch.randint(0, 20, (3, 10))
        logits = model(tokens)
        assert logits.shape == (3, 10, 20)
        changed = tokens.clone()
        changed[:, 6:] = (changed[:, 6:] + 1) % 20
        with torch.no_grad():  # a later token does not change an earlier prediction
            assert torch.allclose(model(changed)[:, :6], logits[:, :6], atol=1e-5)
        mixer = model.blocks[0].mixer
        assert mixer.qkv.weight.shape == (48, 16) and mixer.out.weight.shape == (16, 16)
    hybrid = compare.build("hybrid")
    assert [b.mixer.kind for b in hybrid.blocks] == [compare.HYBRID_LINEAR] * 3 + ["softmax"]
    widths = {compare.config_of(n).d_model * 1000 + compare.config_of(n).heads
              for n in compare.MODELS}
    assert len(widths) == 1


@pytest.mark.parametrize("taps", [1, 2, 4])
def test_the_mixers_convolution_is_the_causal_conv1d_it_replaces(taps):
    """The mixer convolves by shifted products (faster to train on a CPU); in float64 they equal
    ``Conv1d(groups=channels, padding=taps − 1)`` cut to the first ``seq`` outputs, gradients
    included, and no output reads a later position."""
    conv = torch.nn.Conv1d(6, 6, taps, groups=6, bias=False, padding=taps - 1).double()
    x = torch.randn(3, 11, 6, dtype=torch.float64, requires_grad=True)
    ours = models._causal_depthwise(x, conv.weight)
    torch_conv = conv(x.transpose(1, 2))[..., :11].transpose(1, 2)
    torch.testing.assert_close(ours, torch_conv, rtol=0, atol=1e-12)
    grads = [torch.autograd.grad(y.square().sum(), (x, conv.weight)) for y in (ours, torch_conv)]
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    later = x.detach().clone()
    later[:, 5:] += 1.0
    torch.testing.assert_close(models._causal_depthwise(later, conv.weight)[:, :5],
                               ours.detach()[:, :5], rtol=0, atol=0)


def test_models_refuse_bad_input_naming_it():
    with pytest.raises(ValueError, match="layers must name"):
        models.StackConfig(10, ("softmax", "mamba"))
    with pytest.raises(ValueError, match="heads=3 must divide d_model=32"):
        models.StackConfig(10, heads=3)
    with pytest.raises(ValueError, match="token ids must lie in 0 … 9; got 0 … 12"):
        models.MixerStack(models.StackConfig(10))(torch.tensor([[0, 12]]))
    with pytest.raises(ValueError, match="model must be one of"):
        compare.build("mamba")
    with pytest.raises(ValueError, match="seq must be"):
        compare.cache_bytes("softmax", 0)


def test_the_cache_grows_with_the_text_and_the_state_does_not():
    h, d = compare.WIDTH["heads"], compare.WIDTH["d_model"] // compare.WIDTH["heads"]
    conv = (compare.WIDTH["conv"] - 1) * 3 * compare.WIDTH["d_model"] * 4
    assert compare.cache_bytes("softmax", 10) == 2 * (2 * h * 10 * d * 4 + conv)
    assert compare.cache_bytes("softmax", 20) - compare.cache_bytes("softmax", 10) == \
        2 * 2 * h * 10 * d * 4
    for name in ("delta", "gated_delta"):
        assert compare.cache_bytes(name, 10) == compare.cache_bytes(name, 10_000) == \
            2 * (h * d * d * 4 + conv)
    assert compare.cache_bytes("linear", 7) == 2 * (h * d * d * 4 + h * d * 4 + conv)
    hybrid = compare.cache_bytes("hybrid", 96)
    assert compare.cache_bytes("all_linear", 96) < hybrid < compare.cache_bytes("all_softmax", 96)


def _untrained(seed: int) -> dict[str, compare.Run]:
    return {name: compare.Run(name, seed, np.zeros(1), 0.0, 0.0, compare.build(name, seed))
            for name in compare.MODELS}


def test_the_claims_fail_on_untrained_models():
    results = compare.chapter_results(_untrained(0))
    assert set(results.recall) == set(compare.RECALL_MODELS + compare.HYBRID_MODELS)
    assert all(v.shape == (len(compare.PAIRS),) for v in results.recall.values())
    for name, acc in results.recall.items():  # untrained: no better than the context baseline
        assert (acc < results.baseline + 0.1).all(), name
    with pytest.raises(AssertionError, match="fits recall at 4 and 8 pairs"):
        compare.check_chapter_claims(results)


def test_results_need_one_seed():
    runs = _untrained(0)
    runs["delta"] = dataclasses.replace(runs["delta"], seed=1)
    with pytest.raises(ValueError, match="one seed"):
        compare.chapter_results(runs)
    with pytest.raises(ValueError, match="names must be among"):
        compare.train_all(0, ("mamba",))


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_chapters_claims_hold_on_seeds_1_and_2(seed):
    """Not one lucky seed: the chapter's own claim checks on this seed's models."""
    compare.check_chapter_claims(compare.chapter_results(compare.train_all(seed)))


def test_the_copy_loss_counts_the_repeated_tokens_only():
    data = repeat_batch(copy_task.TASK, 8, torch.Generator().manual_seed(3))
    model = copy_task.build("linear", 0).double()
    with torch.no_grad():
        every = _token_losses(model(data.tokens), data.tokens)  # (batch, seq − 1): chapter 9's
        loss = float(copy_task.copy_loss(model, data))
    asked = data.repeated()[:, 1:]
    assert 0 < int(asked.sum()) < asked.numel()
    assert abs(loss - float(every[asked].mean())) < 1e-12


def test_kept_after_multiplies_the_gates_over_the_distance():
    model = copy_task.build("gated_delta", 1)
    data = repeat_batch(copy_task.TASK, 3, torch.Generator().manual_seed(2))
    block = model.blocks[0]
    with torch.no_grad():
        g = block.mixer.log_decay(block.norm1(model.embed(data.tokens)))  # (batch, seq, heads)
    n = data.tokens.shape[1]
    direct = np.mean([[g[b, t + 1: t + 6].sum(0).exp().numpy() for t in range(n - 5)]
                      for b in range(3)], axis=(0, 1))
    assert np.allclose(copy_task.kept_after(model, data, 5), direct, rtol=1e-5)
    assert ((copy_task.kept_after(model, data, 1) > 0) & (copy_task.kept_after(model, data, 1)
                                                           <= 1)).all()
    with pytest.raises(ValueError, match="one-layer Gated DeltaNet"):
        copy_task.kept_after(copy_task.build("delta", 0), data)
    with pytest.raises(ValueError, match="distance must lie"):
        copy_task.kept_after(model, data, n)
    with pytest.raises(ValueError, match="decay gate"):
        copy_task.build("linear", 0).blocks[0].mixer.log_decay(torch.zeros(1, 2, 32))


def test_the_copy_task_models_are_one_layer_and_the_control_has_no_convolution():
    for name in copy_task.MODELS:
        config = copy_task.config_of(name)
        assert len(config.layers) == 1 and config.d_model == compare.WIDTH["d_model"]
        assert config.conv == (0 if name == "softmax_no_conv" else compare.WIDTH["conv"])
    assert copy_task.build("softmax_no_conv").blocks[0].mixer.conv is None
    assert sorted(sum(copy_task.GROUPS, ())) == sorted(copy_task.MODELS)
    with pytest.raises(ValueError, match="model must be one of"):
        copy_task.config_of("hybrid")


def test_the_copy_task_claims_fail_on_untrained_models():
    runs = {name: copy_task.CopyRun(name, 0, np.zeros(1), 0.0, copy_task.build(name, 0))
            for name in copy_task.MODELS}
    found = copy_task.results(runs)
    assert all(abs(v - found.chance) < 0.5 for v in found.repeated.values())  # untrained: chance
    assert 2.5 < found.baseline < found.chance
    with pytest.raises(AssertionError, match="one softmax layer with the convolution"):
        copy_task.check_claims(found)
    runs["delta"] = dataclasses.replace(runs["delta"], seed=1)
    with pytest.raises(ValueError, match="one seed"):
        copy_task.results(runs)


@pytest.mark.claims
@pytest.mark.parametrize("seed", [1, 2])
def test_the_copy_task_claims_hold_on_seeds_1_and_2(seed):
    """Chapter 9's task in one layer of each kind: the chapter's claim checks on this seed."""
    copy_task.check_claims(copy_task.results(copy_task.train_all(seed)))


def test_the_recall_figure_and_table_draw_what_they_are_given_and_refuse_bad_shapes():
    from course_attention import viz

    recall_ = {"softmax attention": [1.0, 1.0, 0.99], "linear attention": [0.9, 0.7, 0.5]}
    fig = viz.recall_figure(recall_, [4, 8, 16], [0.3, 0.2, 0.1], state_width=16, title="t")
    assert [t.name for t in fig.data] == [*recall_, "context baseline"]
    assert list(fig.data[1].y) == [0.9, 0.7, 0.5] and fig.layout.shapes[0].x0 == 16
    with pytest.raises(ValueError, match="same shape"):
        viz.recall_figure({"a": [1.0, 0.5]}, [4, 8, 16], [0.3, 0.2, 0.1], 16)
    with pytest.raises(ValueError, match="state_width"):
        viz.recall_figure(recall_, [4, 8, 16], [0.3, 0.2, 0.1], 0)
    table = viz.recall_table({"m": [1.0, 0.5]}, [4, 8], {"m": [1234, 5]}, [96, 4096])
    assert table.header == ["model", "4 pairs", "8 pairs", "bytes after 96 tokens",
                            "bytes after 4,096 tokens"]
    assert table.rows == [["m", "1.000", "0.500", "1,234", "5"]]
    from course_attention.i18n import using

    with using("zh"):  # the header in the reader's language
        zh = viz.recall_table({"m": [1.0, 0.5]}, [4, 8], {"m": [1234, 5]}, [96, 4096])
    assert zh.header == ["模型", "4 对", "8 对", "96 个词元后的字节数", "4,096 个词元后的字节数"]
    with pytest.raises(ValueError, match="same models"):
        viz.recall_table({"m": [1.0]}, [4], {"n": [1]}, [96])
    with pytest.raises(ValueError, match="need 2 recalls"):
        viz.recall_table({"m": [1.0]}, [4, 8], {"m": [1]}, [96])
