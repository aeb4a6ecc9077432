"""`reuse.reusable`: off in a reader's run; with the course's test variables, a saved result is
the one training would return, bit for bit, and later random draws are unchanged."""

from __future__ import annotations

import pickle

import pytest
import torch

from course_attention import induction as ind
from course_attention import reuse

CALLS: list[tuple] = []


@reuse.reusable
def _train(n: int, scale: float = 1.0, progress: bool = True) -> torch.Tensor:
    CALLS.append((n, scale))
    torch.manual_seed(n)
    return torch.randn(3) * scale


@pytest.fixture
def clean(monkeypatch):
    monkeypatch.delenv(reuse.SAVE, raising=False)
    monkeypatch.delenv(reuse.REUSE, raising=False)
    CALLS.clear()
    return monkeypatch


def test_a_readers_run_always_trains(clean):
    _train(1), _train(1)
    assert CALLS == [(1, 1.0), (1, 1.0)]


def test_reuse_returns_the_saved_result_and_the_random_state_after_it(clean, tmp_path):
    clean.setenv(reuse.REUSE, str(tmp_path))
    first = _train(2, progress=False)
    after_first = torch.rand(2)
    again = _train(2, 1.0)  # the same call: defaults filled in, the progress bar ignored
    assert CALLS == [(2, 1.0)]
    assert torch.equal(first, again) and torch.equal(torch.rand(2), after_first)
    _train(2, scale=2.0)  # another argument: another key, so it trains
    assert CALLS == [(2, 1.0), (2, 2.0)]
    assert len(list(tmp_path.glob("*.pt"))) == 2 and not list(tmp_path.glob("*.part"))


def test_save_trains_every_time_and_reuse_reads_what_it_saved(clean, tmp_path):
    clean.setenv(reuse.SAVE, str(tmp_path))
    saved = _train(3), _train(3)
    assert CALLS == [(3, 1.0), (3, 1.0)]  # the build: every printed time its own training's
    clean.delenv(reuse.SAVE)
    clean.setenv(reuse.REUSE, str(tmp_path))
    assert torch.equal(_train(3), saved[0]) and len(CALLS) == 2


def test_the_key_holds_the_kernels_threads_and_source(clean, tmp_path):
    clean.delenv("OPENBLAS_CORETYPE", raising=False)  # a machine may set it for every program
    name = reuse.key(_train, (4,), {})
    assert name == reuse.key(_train, (), {"n": 4, "scale": 1.0, "progress": False})
    clean.setenv("OPENBLAS_CORETYPE", "Haswell")
    assert reuse.key(_train, (4,), {}) != name
    clean.delenv("OPENBLAS_CORETYPE")
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(threads + 1)
        assert reuse.key(_train, (4,), {}) != name
    finally:
        torch.set_num_threads(threads)
    assert len(reuse.source_digest()) == 64


def test_an_argument_shown_by_its_address_is_never_reused(clean, tmp_path):
    clean.setenv(reuse.REUSE, str(tmp_path))

    @reuse.reusable
    def describe(thing: object) -> str:
        CALLS.append((thing,))
        return type(thing).__name__

    thing = object()
    describe(thing), describe(thing)
    assert len(CALLS) == 2 and not list(tmp_path.iterdir())


def test_a_reused_training_equals_training_again_bit_for_bit(clean, tmp_path):
    """The premise: chapter 9's training, saved by one call and reused by the next, is exactly
    what a fresh training returns (same kernels, one thread)."""
    kw = dict(steps=6, every=3, eval_size=2, progress=False, seed=1)
    fresh = ind.train_induction(**kw)
    clean.setenv(reuse.REUSE, str(tmp_path))
    ind.train_induction(**kw)
    reused = ind.train_induction(**kw)
    assert len(list(tmp_path.glob("train_induction-*.pt"))) == 1
    for a, b in zip(fresh.model.state_dict().values(), reused.model.state_dict().values(),
                    strict=True):
        assert torch.equal(a, b)
    assert (fresh.losses == reused.losses).all() and (fresh.example == reused.example).all()
    assert pickle.loads(pickle.dumps(ind.train_induction)) is ind.train_induction  # for loky
