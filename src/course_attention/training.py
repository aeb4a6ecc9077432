"""One training loop for every model of the course, with a progress bar (chapter 7 onwards).

``fit`` is the loop: any model, any batch sampler, any loss, deterministic from ``seed``.
``train`` fits chapter 7's encoder–decoder on a digit task with it; ``sequence_accuracy`` and
``accuracy_by_length`` score greedy decodes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import BOS_ID, EOS_ID, PAD_ID, SequenceTask, decode_digits

__all__ = [
    "Progress",
    "TrainingLog",
    "torch_threads",
    "Adam",
    "fit",
    "in_background",
    "train_each",
    "start_group",
    "join_groups",
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

            self._handle = display(self._line(0, float("nan")), display_id=True)

    def _line(self, step: int, loss: float) -> object:
        """The line as a notebook shows it: plain text, not a quoted Python string."""
        from IPython.display import Pretty

        return Pretty(self._text(step, loss))

    def _text(self, step: int, loss: float) -> str:
        done = round(self.width * step / self.total)
        bar = "█" * done + "·" * (self.width - done)
        return f"{bar} step {step:>{len(str(self.total))}}/{self.total}  loss {loss:.4f}"

    def update(self, step: int, loss: float) -> None:
        if step % self.every and step != self.total:
            return
        text = self._text(step, loss)
        if self._handle is not None:
            self._handle.update(self._line(step, loss))
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

    Introduced in chapter 7. ``None`` leaves torch's setting alone. The course's models are small,
    and when other programs share the cores, threads wait for each other: chapter 7's training
    took 2.8 s on one thread and 5.3 to 38.7 s on two (measured on a 2-core machine shared with
    other work). On one thread the numbers also do not depend on how many cores the machine has
    (the order of a sum split over threads changes the last bits).
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


class Adam:
    """Adam (Kingma and Ba, 2015), computed exactly as ``torch.optim.Adam`` computes it.

    Introduced in chapter 7. Written out because the first use of ``torch.optim`` imports
    ``torch._dynamo``, which takes 0.8 s, a tenth of chapter 7's time budget; a test checks that
    both give the same parameters. For every parameter ``p`` with gradient ``g``, at step ``t``:
    ``m ← β₁ m + (1 − β₁) g``, ``v ← β₂ v + (1 − β₂) g²``,
    ``p ← p − lr · (m / (1 − β₁ᵗ)) / (√(v / (1 − β₂ᵗ)) + eps)``. With ``weight_decay`` λ > 0 it
    is AdamW (Loshchilov and Hutter, 2019) in PyTorch's form, as ``torch.optim.AdamW``: first
    ``p ← p · (1 − lr λ)``, with ``lr`` the step's learning rate, schedule included. The paper
    shrinks by ``η_t λ`` instead, ``η_t`` being the schedule multiplier and not the learning rate
    α: PyTorch's λ is the paper's divided by α.
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        import torch

        self.params = [p for p in params if p.requires_grad]
        if not self.params or lr <= 0 or not all(0 <= b < 1 for b in betas) or eps <= 0:
            raise ValueError(
                f"need parameters that require grad, lr > 0, 0 ≤ betas < 1, eps > 0; got "
                f"{len(self.params)} parameters, lr={lr}, betas={betas}, eps={eps}"
            )
        if weight_decay < 0:
            raise ValueError(f"weight_decay must be ≥ 0; got {weight_decay}")
        self.lr, self.betas, self.eps, self.t = lr, betas, eps, 0
        self.weight_decay = weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]  # running mean of the gradients
        self.v = [torch.zeros_like(p) for p in self.params]  # running mean of their squares

    def zero_grad(self) -> None:
        """Forget the gradients (``None``, as ``torch.optim`` does by default)."""
        for p in self.params:
            p.grad = None

    def step(self, lr: float | None = None) -> None:
        """Update every parameter that has a gradient, with ``lr`` (default: ``self.lr``)."""
        import torch

        lr = self.lr if lr is None else lr
        self.t += 1
        (b1, b2), t = self.betas, self.t
        with torch.no_grad():
            for p, m, v in zip(self.params, self.m, self.v, strict=True):
                if p.grad is None:
                    continue
                if self.weight_decay:  # AdamW: shrink the weights, apart from the gradient
                    p.mul_(1 - lr * self.weight_decay)
                m.lerp_(p.grad, 1 - b1)  # m ← β₁ m + (1 − β₁) g
                v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)  # v ← β₂ v + (1 − β₂) g²
                denom = (v.sqrt() / (1 - b2**t) ** 0.5).add_(self.eps)
                p.addcdiv_(m, denom, value=-lr / (1 - b1**t))


def _trim(rows: Any) -> Any:
    """``(batch, seq)`` → ``(batch, seq')``: the trailing columns that are ``PAD_ID`` everywhere
    dropped (at least one column is kept)."""
    real = (rows != PAD_ID).any(dim=0).nonzero()
    return rows[:, : int(real.max()) + 1 if len(real) else 1]


def fit(
    model: Any,
    batch: Callable[[Any], Any],
    loss: Callable[[Any, Any], Any],
    steps: int = 300,
    lr: float = 5e-3,
    warmup: int = 30,
    weight_decay: float = 0.0,
    seed: int = 0,
    progress: bool = True,
    threads: int | None = 1,
    callback: Callable[[int, float], None] | None = None,
) -> TrainingLog:
    """The course's one training loop: any model, any batches, any loss, deterministically.

    Introduced in chapter 7; chapters 8–10 train their models with it too.

    Args:
        model: a ``torch.nn.Module``; put in training mode while it trains, eval mode after.
        batch: ``batch(gen)`` draws one training batch (anything ``loss`` accepts) using the
            ``torch.Generator`` ``gen``, seeded by ``seed`` — the only source of randomness.
        loss: ``loss(model, batch)`` → a scalar tensor to minimise.
        steps, lr, warmup: :class:`Adam` at rate ``lr · min(1, (i + 1) / warmup) · (1 + cos(π i /
            steps)) / 2`` at step ``i`` (linear warm-up, cosine decay).
        weight_decay: AdamW's decoupled weight decay λ, in PyTorch's form: each step shrinks the
            weights by ``lr · λ`` at that step's rate (0: plain Adam).
        threads: torch threads while training (see :func:`torch_threads`; ``None`` keeps torch's
            setting, e.g. for a larger model on an idle machine).
        callback: ``callback(step, loss)`` after every step (``step`` counts from 1), e.g. to
            record attention maps at checkpoints; the model is in training mode when called.

    Returns:
        :class:`TrainingLog`: the loss after every step ``(steps,)`` and the wall time.
    """
    import time

    import torch

    if steps < 1 or lr <= 0 or warmup < 1:
        raise ValueError(f"need steps ≥ 1, lr > 0, warmup ≥ 1; got {steps}, {lr}, {warmup}")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    bar = Progress(steps) if progress else None
    losses = np.empty(steps)
    model.train()
    with torch_threads(threads):
        start = time.perf_counter()
        for step in range(steps):
            value = loss(model, batch(gen))
            opt.zero_grad()
            value.backward()
            opt.step(lr * min(1.0, (step + 1) / warmup) * 0.5 * (1 + np.cos(np.pi * step / steps)))
            losses[step] = value.item()
            if bar is not None:
                bar.update(step + 1, losses[step])
            if callback is not None:
                callback(step + 1, losses[step])
        seconds = time.perf_counter() - start
    model.eval()
    return TrainingLog(losses, seconds)


def _cores() -> int:
    """The cores this process may run on (a container's limit, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def in_background(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
    """Start ``fn(*args, **kwargs)`` in a fresh Python process and return its ``Future``.

    Introduced in chapter 9, which trains its 1-layer control this way while the 2-layer model
    trains: each training uses one core (:func:`fit`'s default), so two cores finish both in
    the time of the longer. ``fn`` must be importable (a package function, not one defined in a
    notebook), its arguments and result picklable. The process is a fresh interpreter (joblib's
    loky executor) that shares nothing with this one, so ``fn`` returns exactly what it returns
    when called here: the same seeds, kernels and thread count give the same numbers, bit for
    bit. ``.result()`` waits for it and re-raises its exception, if any. With one core, ``fn``
    runs here before this returns.
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable; got {type(fn).__name__}")
    if _cores() < 2:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # noqa: BLE001 - handed to the caller by .result()
            future.set_exception(error)
        return future
    from joblib.externals.loky import get_reusable_executor

    # loky starts a fresh interpreter without re-running the caller's script, so a script with
    # no ``if __name__ == "__main__"`` guard works too; its worker waits 60 s for the next job
    return get_reusable_executor(max_workers=1, timeout=60).submit(fn, *args, **kwargs)


def train_each(train_one: Callable[[str, int], Any], names: Sequence[str], seed: int = 0
               ) -> dict[str, Any]:
    """``{name: train_one(name, seed)}``, one after the other, here (chapters 14 and 15)."""
    return {name: train_one(name, seed) for name in names}


def _checked(names: Sequence[str], known: Sequence[str]) -> tuple[str, ...]:
    if not names or set(names) - set(known):
        raise ValueError(f"names must be among {tuple(known)}; got {tuple(names)}")
    return tuple(names)


def start_group(train_one: Callable[[str, int], Any], group: Sequence[str], names: Sequence[str],
                known: Sequence[str], seed: int = 0) -> Future:
    """Start :func:`train_each` of ``group``'s models that are among ``names`` (all of ``known``,
    a chapter's models) in a second process (:func:`in_background`); return its ``Future``.

    Introduced in chapter 14: a chapter starts its first group here, in its first cells, reads
    on, and joins it with :func:`join_groups`. ``train_one`` must be a package function."""
    names = _checked(names, known)
    return in_background(train_each, train_one, tuple(n for n in group if n in names), seed)


def join_groups(train_one: Callable[[str, int], Any], groups: tuple[Sequence[str], Sequence[str]],
                names: Sequence[str], known: Sequence[str], seed: int = 0,
                pending: Future | None = None) -> dict[str, Any]:
    """The runs of ``names`` (among ``known``) from ``seed``, in ``known``'s order: ``groups[0]``
    in a second process (``pending``, from :func:`start_group` with the same names and seed,
    or started now), ``groups[1]`` here. Each run must carry a ``seed`` (chapters 14 and 15)."""
    names = _checked(names, known)
    if pending is None:
        pending = start_group(train_one, groups[0], names, known, seed)
    here = train_each(train_one, tuple(n for n in groups[1] if n in names), seed)
    runs = {**pending.result(), **here}
    if {r.seed for r in runs.values()} != {seed} or set(runs) != set(names):
        raise ValueError(f"pending trained {sorted(runs)} of seed(s) "
                         f"{sorted({r.seed for r in runs.values()})}; expected {sorted(names)} "
                         f"of seed {seed}")
    return {name: runs[name] for name in known if name in names}


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
    """Train a :class:`~course_attention.modules.Seq2SeqTransformer` on ``task`` with :func:`fit`.

    Introduced in chapter 7. Teacher forcing: the decoder reads ``tgt[:, :-1]`` and is scored on
    ``tgt[:, 1:]`` (cross-entropy, padding ignored). Each batch holds ``batch_size`` rows drawn
    from the training set; the columns that hold only padding in a batch are dropped (the loss
    ignores padding, so the result is the same, sooner).
    """
    import torch

    if batch_size < 1:
        raise ValueError(f"need batch_size ≥ 1; got {batch_size}")
    src, tgt = torch.from_numpy(task.train_src), torch.from_numpy(task.train_tgt)

    def draw(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.randint(0, len(src), (batch_size,), generator=gen)
        return _trim(src[idx]), _trim(tgt[idx])  # drop columns that are padding in every row

    def teacher_forced_loss(model: Any, pair: tuple[torch.Tensor, torch.Tensor]) -> Any:
        s, t = pair
        logits = model(s, t[:, :-1])  # (batch, seq_t, vocab)
        return torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1), ignore_index=PAD_ID
        )

    return fit(model, draw, teacher_forced_loss, steps, lr, warmup, 0.0, seed, progress, threads)


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

    ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in
    :class:`~course_attention.tasks.SequenceTask`.
    """
    return float(_correct(model, src, tgt).mean())


def accuracy_by_length(model: Any, src: np.ndarray, tgt: np.ndarray) -> dict[int, float]:
    """Exact-sequence accuracy of greedy decoding for each source length, ``{length: share}``.

    Introduced in chapter 7. ``src`` ``(n, seq_s)`` and ``tgt`` ``(n, seq_t)`` as in
    :class:`~course_attention.tasks.SequenceTask`; the length of a row is its number of digits.
    One greedy decoding of all rows; lengths in increasing order.
    """
    correct = _correct(model, src, tgt)
    lengths = np.array([len(decode_digits(row)) for row in np.asarray(src)])
    return {int(n): float(correct[lengths == n].mean()) for n in np.unique(lengths)}
