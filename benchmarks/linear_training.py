"""Chapter 15's seven models: milliseconds per training step, with the mixers' convolution and
chunkwise solve as the package computes them, against the way it computed them before.

``linear_attention.models`` runs each mixer's short causal convolution as a few shifted products
(``_causal_depthwise``), where it used to call PyTorch's depthwise ``Conv1d``; and the gated delta
rule's chunkwise form solves its triangular system once for the values and the keys together,
where it used to solve it twice. Both give the same numbers in exact arithmetic (the tests check
them in float64). This script trains each model of ``linear_attention.compare.MODELS`` for
``--steps`` steps both ways, in one run, one torch thread (as the chapter trains), alternating
the two, and prints the time per step. The last line: ``chapter 15 training: <old> s -> <new> s
for 500 steps of all seven models (<ratio>x)``.

    .venv/bin/python benchmarks/linear_training.py [--steps 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager

import torch

import course_attention.linear_attention as la
from course_attention.linear_attention import compare, models
from course_attention.linear_attention.recall import recall_batches, recall_loss
from course_attention.training import fit


def _conv1d(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The convolution as it was: PyTorch's padded depthwise ``Conv1d``, cut to ``seq``."""
    taps, n = weight.shape[-1], x.shape[1]
    out = torch.nn.functional.conv1d(x.transpose(1, 2), weight, padding=taps - 1,
                                     groups=weight.shape[0])
    return out[..., :n].transpose(1, 2)


def _two_solves(q, k, v, g, beta, mode="recurrent", chunk_size=64, initial_state=None):
    """The gated delta rule's chunkwise form as it was: two triangular solves per block."""
    b, h, n, dk = k.shape
    q = q * dk**-0.5
    state = q.new_zeros(b, h, dk, v.shape[-1])
    out = torch.zeros_like(v)
    for s in range(0, n, chunk_size):
        e = min(s + chunk_size, n)
        qc, kc, vc = q[:, :, s:e], k[:, :, s:e], v[:, :, s:e]
        bc, cum = beta[:, :, s:e], g[:, :, s:e].cumsum(-1)
        c = e - s
        below = torch.ones(c, c, dtype=torch.bool).tril()
        decay = (cum[..., :, None] - cum[..., None, :]).masked_fill(~below, float("-inf")).exp()
        kb = kc * bc[..., None]
        system = (kb @ kc.transpose(-1, -2)) * decay
        u = torch.linalg.solve_triangular(system, bc[..., None] * vc, upper=False,
                                          unitriangular=True)
        w = torch.linalg.solve_triangular(system, kb * cum.exp()[..., None], upper=False,
                                          unitriangular=True)
        new = u - w @ state
        attn = (qc @ kc.transpose(-1, -2)) * decay
        out[:, :, s:e] = (qc * cum.exp()[..., None]) @ state + attn @ new
        tail = (cum[..., -1:] - cum).exp()[..., None]
        state = state * cum[..., -1].exp()[..., None, None] + (kc * tail).transpose(-1, -2) @ new
    return out, state


@contextmanager
def before():
    """The package as it computed before: Conv1d and two solves."""
    conv, rule = models._causal_depthwise, models.gated_delta_rule
    models._causal_depthwise, models.gated_delta_rule = _conv1d, _two_solves
    la.gated_delta_rule = _two_solves  # delta_rule calls it through the package
    try:
        yield
    finally:
        models._causal_depthwise, models.gated_delta_rule = conv, rule
        la.gated_delta_rule = rule


def ms_per_step(name: str, steps: int) -> float:
    model = compare.build(name, 0)
    start = time.perf_counter()
    fit(model, recall_batches(compare.TASK, compare.TRAINING["batch_size"], compare.TRAIN_PAIRS),
        recall_loss, steps, compare.TRAINING["lr"], 30, 0.0, 0, False, 1)
    return (time.perf_counter() - start) / steps * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3, help="runs each way (median kept)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)  # both ways compute the same numbers (float64)
    q, k, v = (torch.randn(2, 2, 70, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    g, beta = -torch.rand(2, 2, 70, generator=gen, dtype=torch.float64), torch.rand(2, 2, 70)
    assert torch.allclose(_two_solves(q, k, v, g, beta.double(), "chunk", 32)[0],
                          la.gated_delta_rule(q, k, v, g, beta.double(), "chunk", 32)[0],
                          rtol=0, atol=1e-10)
    x, weight = (torch.randn(*shape, generator=gen, dtype=torch.float64)
                 for shape in ((3, 70, 6), (6, 1, 4)))
    assert torch.allclose(_conv1d(x, weight), models._causal_depthwise(x, weight), rtol=0,
                          atol=1e-12)
    ms_per_step("softmax", 5)  # warm up
    total = {"before": 0.0, "now": 0.0}
    print(f"{'model':12} {'before':>8} {'now':>8}  ms per step (median of {args.repeat})")
    for name in compare.MODELS:
        runs: dict[str, list[float]] = {"before": [], "now": []}
        for _ in range(args.repeat):  # alternate, so that both see the same machine
            with before():
                runs["before"].append(ms_per_step(name, args.steps))
            runs["now"].append(ms_per_step(name, args.steps))
        med = {k: statistics.median(v) for k, v in runs.items()}
        for k in total:
            total[k] += med[k] * compare.TRAINING["steps"] / 1e3
        print(f"{name:12} {med['before']:8.1f} {med['now']:8.1f}")
    print(f"chapter 15 training: {total['before']:.1f} s -> {total['now']:.1f} s for "
          f"{compare.TRAINING['steps']} steps of all seven models "
          f"({total['before'] / total['now']:.2f}x)")


if __name__ == "__main__":
    main()
