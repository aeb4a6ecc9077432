"""One training loop for every model of the course, with a progress bar (chapter 7 onwards).

``train`` fits a model on a task deterministically; ``sequence_accuracy`` scores greedy decodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import BOS_ID, EOS_ID, PAD_ID, SequenceTask, decode_digits

__all__ = ["Progress", "TrainingLog", "train", "sequence_accuracy"]


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


def train(
    model: Any,
    task: SequenceTask,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 5e-3,
    warmup: int = 30,
    seed: int = 0,
    progress: bool = True,
) -> TrainingLog:
    """Train a :class:`~course_attention.modules.Seq2SeqTransformer` on ``task``, deterministically.

    Teacher forcing: the decoder reads ``tgt[:, :-1]`` and is scored on ``tgt[:, 1:]``
    (cross-entropy, padding ignored). Adam with a linear warm-up and a cosine decay; batches are
    drawn from the training set with a generator seeded by ``seed``.
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
    start = time.perf_counter()
    for step in range(steps):
        idx = torch.randint(0, len(src), (batch_size,), generator=gen)
        s, t = src[idx], tgt[idx]
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
    model.eval()
    return TrainingLog(losses, time.perf_counter() - start)


def sequence_accuracy(model: Any, src: np.ndarray, tgt: np.ndarray) -> float:
    """Share of rows whose greedy decoding equals the target exactly (up to EOS_ID).

    ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in :class:`SequenceTask`.
    """
    import torch

    out = model.greedy_decode(torch.from_numpy(src), BOS_ID, EOS_ID, max_steps=tgt.shape[1] - 1)
    pred = [decode_digits(row) for row in out.tokens.tolist()]
    truth = [decode_digits(row[1:]) for row in tgt.tolist()]
    return float(np.mean([p == t for p, t in zip(pred, truth, strict=True)]))
