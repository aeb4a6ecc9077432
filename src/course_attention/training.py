"""One training loop for every model of the course, with a progress bar (chapter 7 onwards).

``train`` fits a model on a task deterministically; ``sequence_accuracy`` and
``accuracy_by_length`` score greedy decodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import BOS_ID, EOS_ID, PAD_ID, SequenceTask, decode_digits

__all__ = [
    "Progress",
    "TrainingLog",
    "torch_threads",
    "train",
    "sequence_accuracy",
    "accuracy_by_length",
]


class Progress:
    """A one-line progress bar: updated in place in a notebook, with ``\\r`` in a terminal."""

    def __init__(self, total: int, width: int = 30, every: int = 10):
        from IPython import get_ipython

        self.total, self.width, self.every = total, width, every
        shell = get_ipython()
        self._handle = None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            from IPython.display import display

            self._handle = display(self._text(0, float("nan")), display_id=True)

    def _text(self, step: int, loss: float) -> str:
        done = round(self.width * step / self.total)
        bar = "█" * done + "·" * (self.width - done)
        return f"{bar} step {step:>{len(str(self.total))}}/{self.total}  loss {loss:.4f}"

    def update(self, step: int, loss: float) -> None:
        if step % self.every and step != self.total:
            return
        text = self._text(step, loss)
        if self._handle is not None:
            self._handle.update(text)
        else:
            print("\r" + text, end="\n" if step == self.total else "", flush=True)


@dataclass(frozen=True)
class TrainingLog:
    """What :func:`train` did: the loss after every step ``(steps,)`` and the wall time."""

    losses: np.ndarray
    seconds: float


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` torch intra-op threads, then restore the setting.

    Introduced in chapter 7. ``None`` leaves torch's setting alone. The course's models are small:
    one thread is about as fast as two on an idle machine, far faster when other programs keep
    the cores busy (two threads then wait for each other: 38.7 s instead of 5.6 s for the
    chapter-7 training, measured on a loaded 2-core machine), and gives the same numbers on
    every machine, whatever its number of cores.
    """
    import torch

    if n is None:
        yield
        return
    if n < 1:
        raise ValueError(f"need n ≥ 1 threads or None; got {n}")
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _trim(rows: Any) -> Any:
    """``(batch, seq)`` → ``(batch, seq')``: the trailing columns that are ``PAD_ID`` everywhere
    dropped (at least one column is kept)."""
    real = (rows != PAD_ID).any(dim=0).nonzero()
    return rows[:, : int(real.max()) + 1 if len(real) else 1]


def train(
    model: Any,
    task: SequenceTask,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 5e-3,
    warmup: int = 30,
    seed: int = 0,
    progress: bool = True,
    threads: int | None = 1,
) -> TrainingLog:
    """Train a :class:`~course_attention.modules.Seq2SeqTransformer` on ``task``, deterministically.

    Teacher forcing: the decoder reads ``tgt[:, :-1]`` and is scored on ``tgt[:, 1:]``
    (cross-entropy, padding ignored). Adam with a linear warm-up and a cosine decay; batches are
    drawn from the training set with a generator seeded by ``seed``; the columns that hold only
    padding in a batch are dropped (the loss ignores padding, so the result is the same, sooner).
    ``threads``: torch threads while training (see :func:`torch_threads`; ``None`` keeps torch's
    setting, e.g. for a larger model on an idle machine).
    """
    import time

    import torch

    if steps < 1 or batch_size < 1 or lr <= 0:
        raise ValueError(f"need steps ≥ 1, batch_size ≥ 1, lr > 0; got {steps}, {batch_size}, {lr}")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    src, tgt = torch.from_numpy(task.train_src), torch.from_numpy(task.train_tgt)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: min(1.0, (i + 1) / warmup) * 0.5 * (1 + np.cos(np.pi * i / steps))
    )
    bar = Progress(steps) if progress else None
    losses = np.empty(steps)
    model.train()
    with torch_threads(threads):
        start = time.perf_counter()
        for step in range(steps):
            idx = torch.randint(0, len(src), (batch_size,), generator=gen)
            s, t = _trim(src[idx]), _trim(tgt[idx])  # drop columns that are padding in every row
            logits = model(s, t[:, :-1])  # (batch, seq_t, vocab)
            loss = torch.nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1), ignore_index=PAD_ID
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses[step] = loss.item()
            if bar is not None:
                bar.update(step + 1, losses[step])
        seconds = time.perf_counter() - start
    model.eval()
    return TrainingLog(losses, seconds)


def _correct(model: Any, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: whether each row's greedy decoding equals its target (up to EOS_ID)."""
    import torch

    src, tgt = np.asarray(src), np.asarray(tgt)
    if src.ndim != 2 or tgt.ndim != 2 or len(src) != len(tgt) or not len(src):
        raise ValueError(
            f"need src (n, seq_s) and tgt (n, seq_t) with the same n ≥ 1; got {src.shape}, "
            f"{tgt.shape}"
        )
    src_t = torch.from_numpy(np.ascontiguousarray(src))
    with torch_threads(1):
        out = model.greedy_decode(src_t, BOS_ID, EOS_ID, max_steps=tgt.shape[1] - 1)
    pred = [decode_digits(row) for row in out.tokens.tolist()]
    truth = [decode_digits(row[1:]) for row in tgt.tolist()]
    return np.array([p == t for p, t in zip(pred, truth, strict=True)])


def sequence_accuracy(model: Any, src: np.ndarray, tgt: np.ndarray) -> float:
    """Share of rows whose greedy decoding equals the target exactly (up to EOS_ID).

    ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in :class:`SequenceTask`.
    """
    return float(_correct(model, src, tgt).mean())


def accuracy_by_length(model: Any, src: np.ndarray, tgt: np.ndarray) -> dict[int, float]:
    """Exact-sequence accuracy of greedy decoding for each source length, ``{length: share}``.

    Introduced in chapter 7. ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in
    :class:`SequenceTask`; the length of a row is its number of digits. One greedy decoding of
    all rows; lengths in increasing order.
    """
    correct = _correct(model, src, tgt)
    lengths = np.array([len(decode_digits(row)) for row in np.asarray(src)])
    return {int(n): float(correct[lengths == n].mean()) for n in np.unique(lengths)}
