"""Deep stacks at initialisation: what residuals and the norm placement do to signal and gradient.

Introduced in chapter 6 (the Transformer block). Two measurements, seeded and small enough to run
while the chapter executes (well under a second each, on one thread):

- :func:`residual_stack_signal` pushes two inputs through a stack of feed-forward blocks, with or
  without residual connections, and reports how large the activations are, how much of the input
  survives, and how large the gradient is at every depth;
- :func:`ffn_gradient_norms` measures, layer by layer, the gradient of each feed-forward network's
  output weight ``W^2`` in a stack of encoder layers at initialisation — the quantity of Xiong et
  al. (2020), Fig. 3 — for post-norm and pre-norm stacks.

Both are re-exported by :mod:`course_attention.experiments`, where the chapters find them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .training import torch_threads

__all__ = ["INITS", "StackSignal", "residual_stack_signal", "FfnGradients", "ffn_gradient_norms"]

#: The initialisations :func:`residual_stack_signal` knows.
INITS: tuple[str, ...] = ("pytorch", "he")


def _check_count(name: str, value: int, least: int = 1) -> None:
    if int(value) != value or value < least:
        raise ValueError(f"{name} must be an integer ≥ {least}; got {value!r}")


class StackSignal(NamedTuple):
    """What flows through a stack of blocks (chapter 6), one entry per block boundary.

    ``rms`` ``(depth + 1,)``: root-mean-square of the activations, the input first;
    ``spread`` ``(depth + 1,)``: root-mean-square of the difference between the activations of two
    independent inputs — how much of the input is still visible (0: the output ignores the input);
    ``grad`` ``(depth + 1,)``: norm of the loss gradient with respect to the activations.
    """

    rms: np.ndarray
    spread: np.ndarray
    grad: np.ndarray


def _initialise(block: object, init: str) -> None:
    import torch

    if init == "he":  # variance-preserving: He for the ReLU layer, fan-in for the output layer
        torch.nn.init.kaiming_normal_(block.linear1.weight, nonlinearity="relu")
        torch.nn.init.kaiming_normal_(block.linear2.weight, nonlinearity="linear")
        torch.nn.init.zeros_(block.linear1.bias)
        torch.nn.init.zeros_(block.linear2.bias)


def residual_stack_signal(
    depth: int = 24,
    residual: bool = True,
    init: str = "pytorch",
    d_model: int = 32,
    seq: int = 8,
    seed: int = 0,
) -> StackSignal:
    """Push random tokens through ``depth`` feed-forward blocks, with or without residuals.

    Introduced in chapter 6. Each block is :class:`course_attention.modules.FeedForward`
    ``(d_model → 4·d_model → d_model)``, float64. ``init="pytorch"`` keeps PyTorch's default
    ``Linear`` initialisation (weights and biases uniform in ±1/√fan_in: each block multiplies the
    size of its input by about √(1/18) ≈ 0.236); ``init="he"`` draws the ReLU layer's weights with
    He's variance 2/fan_in, the output layer's with 1/fan_in, and zeroes the biases (each block
    keeps the size of its input on average). With ``residual`` a block computes ``x + ff(x)``,
    without it ``ff(x)``. Two inputs ``(seq, d_model)``, standard normal, go through the same
    blocks; the loss is the first one's output times a fixed random ``(seq, d_model)`` array,
    summed, so the gradient at the output has the same size in every stack.
    """
    import torch

    from .modules import FeedForward

    _check_count("depth", depth)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}; got {init!r}")
    gen = torch.Generator().manual_seed(seed)
    with torch_threads(1), torch.random.fork_rng():
        torch.manual_seed(seed)
        blocks = [FeedForward(d_model, 4 * d_model).double() for _ in range(depth)]
        for block in blocks:
            _initialise(block, init)
        x = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)
        probe = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)
        other = torch.randn(seq, d_model, generator=gen, dtype=torch.float64)
        xs, others = [x.requires_grad_()], [other]
        for block in blocks:
            for hs in (xs, others):
                hs.append(hs[-1] + block(hs[-1]) if residual else block(hs[-1]))
        for h in xs:
            h.retain_grad()
        (xs[-1] * probe).sum().backward()
    rms = np.array([float(h.detach().pow(2).mean().sqrt()) for h in xs])
    spread = np.array(
        [
            float((h.detach() - o.detach()).pow(2).mean().sqrt())
            for h, o in zip(xs, others, strict=True)
        ]
    )
    grad = np.array([float(h.grad.norm()) for h in xs])
    return StackSignal(rms, spread, grad)


class FfnGradients(NamedTuple):
    """Per-layer gradients of a stack of encoder layers at initialisation (chapter 6).

    Every field has shape ``(n_layers,)``, layer 1 (next to the input) first, averaged over seeds:
    ``w2``: Frobenius norm of the gradient of the feed-forward network's output weight ``W^2``;
    ``arriving``: norm of the gradient arriving at the feed-forward network's output;
    ``hidden``: root-mean-square of the hidden activations ``relu(h W^1)`` that ``W^2`` multiplies;
    ``stream``: root-mean-square of the residual stream after the layer, before any final norm.
    ``W^2``'s gradient is ``hiddenᵀ · arriving``, so ``w2`` follows ``arriving`` wherever
    ``hidden`` keeps one size.
    """

    w2: np.ndarray
    arriving: np.ndarray
    hidden: np.ndarray
    stream: np.ndarray


def ffn_gradient_norms(
    n_layers: int = 6,
    norm_first: bool = False,
    d_model: int = 32,
    n_heads: int = 4,
    seq: int = 8,
    batch: int = 4,
    seeds: Sequence[int] = (0, 1, 2),
) -> FfnGradients:
    """Gradient of each layer's feed-forward weight ``W^2`` at initialisation, averaged over seeds.

    Introduced in chapter 6; the quantity of Xiong et al. (2020), Fig. 3. A stack of ``n_layers``
    :class:`course_attention.modules.EncoderLayer` ``(d_model, n_heads, 4·d_model)``, linear
    weights Xavier-uniform and biases zero (their initialisation); post-norm
    (``norm_first=False``) or pre-norm, which ends with a final layer norm as pre-norm models do.
    Input ``(batch, seq, d_model)`` standard normal; the loss is the output times a fixed random
    array, summed and divided by ``batch``. Returns :class:`FfnGradients`, each ``(n_layers,)``.
    """
    import torch

    from .modules import EncoderLayer

    _check_count("n_layers", n_layers)
    if len(seeds) == 0:
        raise ValueError("ffn_gradient_norms needs at least one seed")
    totals = np.zeros((4, n_layers))
    with torch_threads(1), torch.random.fork_rng():
        for seed in seeds:
            torch.manual_seed(seed)
            layers = [
                EncoderLayer(d_model, n_heads, 4 * d_model, norm_first=norm_first)
                for _ in range(n_layers)
            ]
            seen: list[dict[str, torch.Tensor]] = [{} for _ in layers]
            for layer, record in zip(layers, seen, strict=True):
                for module in layer.modules():
                    if isinstance(module, torch.nn.Linear):
                        torch.nn.init.xavier_uniform_(module.weight)
                        torch.nn.init.zeros_(module.bias)

                def keep(module, inputs, output, record=record):  # noqa: ANN001
                    output.retain_grad()
                    record["hidden"], record["out"] = inputs[0].detach(), output

                layer.ff.linear2.register_forward_hook(keep)
            final = torch.nn.LayerNorm(d_model) if norm_first else torch.nn.Identity()
            x = torch.randn(batch, seq, d_model)  # (batch, seq, d_model)
            probe = torch.randn(batch, seq, d_model)
            stream = []
            for layer in layers:
                x, _ = layer(x, need_weights=False)
                stream.append(float(x.detach().pow(2).mean().sqrt()))
            ((final(x) * probe).sum() / batch).backward()
            totals += [
                [float(layer.ff.linear2.weight.grad.norm()) for layer in layers],
                [float(record["out"].grad.norm()) for record in seen],
                [float(record["hidden"].pow(2).mean().sqrt()) for record in seen],
                stream,
            ]
    return FfnGradients(*(totals / len(seeds)))
