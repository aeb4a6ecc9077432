"""``training.in_background`` (and ``start_group`` / ``join_groups`` on it): chapter 9 trains its
1-layer control in a second process, while the 2-layer model trains in the notebook; the second
process must give the same model."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

from course_attention import training

# A script, as a learner might copy the chapter's cell into one: no ``if __name__ ==
# "__main__"`` guard (Python's own spawning would run the script again in the new process).
SCRIPT = """
import os
import numpy as np
from course_attention import induction as ind, training

assert training._cores() < 2 or training.in_background(os.getpid).result() != os.getpid()
kw = dict(steps=6, every=3, eval_size=2, progress=False, seed=1)
job = training.in_background(ind.train_induction, ind.RepeatConfig(n_layers=1), **kw)
here = ind.train_induction(ind.RepeatConfig(n_layers=1), **kw)
there = job.result(timeout=240)
assert np.array_equal(here.losses, there.losses)
assert np.array_equal(here.repeated_loss, there.repeated_loss)
assert np.array_equal(here.example, there.example)
for a, b in zip(here.model.parameters(), there.model.parameters(), strict=True):
    assert bool((a == b).all())
print("the same model")
"""


def test_the_second_process_trains_the_same_model_bit_for_bit(tmp_path):
    script = tmp_path / "train_two.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "the same model"


def test_an_error_in_the_second_process_comes_back_as_itself():
    job = training.in_background(math.sqrt, -1.0)
    with pytest.raises(ValueError, match="math domain error"):
        job.result(timeout=120)


def test_on_one_core_the_function_runs_here_before_it_returns(monkeypatch):
    monkeypatch.setattr(training, "_cores", lambda: 1)
    job = training.in_background(os.getpid)
    assert job.done() and job.result() == os.getpid()
    failed = training.in_background(math.sqrt, -1.0)
    assert failed.done()
    with pytest.raises(ValueError, match="math domain error"):
        failed.result()


def test_something_that_cannot_be_called_is_a_value_error():
    with pytest.raises(ValueError, match="callable"):
        training.in_background(3)
def test_two_groups_join_in_the_chapters_order_and_a_wrong_seed_is_named(monkeypatch):
    """training.start_group / join_groups (chapters 14 and 15), on one core: the first group
    runs before start_group returns, the second in join_groups, and the runs come back in the
    chapter's order; a pending group of another seed, or of other names, is a ValueError."""
    from collections import namedtuple

    from course_attention import training

    monkeypatch.setattr(training, "_cores", lambda: 1)
    Run = namedtuple("Run", "name seed")
    ran: list[str] = []

    def train_one(name: str, seed: int) -> Run:
        ran.append(name)
        return Run(name, seed)

    known, groups = ("a", "b", "c", "d"), (("c", "a"), ("d", "b"))
    pending = training.start_group(train_one, groups[0], ("a", "b", "c"), known, seed=3)
    assert ran == ["c", "a"]
    runs = training.join_groups(train_one, groups, ("a", "b", "c"), known, 3, pending)
    assert ran == ["c", "a", "b"] and list(runs) == ["a", "b", "c"]
    assert all(r.seed == 3 for r in runs.values())
    assert list(training.join_groups(train_one, groups, known, known, 0)) == list(known)
    other = training.start_group(train_one, groups[0], known, known, seed=1)
    with pytest.raises(ValueError, match="of seed 0"):
        training.join_groups(train_one, groups, known, known, 0, other)
    with pytest.raises(ValueError, match="names must be among"):
        training.start_group(train_one, groups[0], ("e",), known)
    with pytest.raises(ValueError, match="names must be among"):
        training.join_groups(train_one, groups, (), known)
