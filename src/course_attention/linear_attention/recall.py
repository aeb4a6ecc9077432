"""Multi-query associative recall (MQAR; Arora et al. 2023, "Zoology"): the task on which
chapter 15 trains its softmax, linear and delta-rule models.

Introduced in chapter 15. A sequence lists ``n`` key–value pairs, ``k₁ v₁ k₂ v₂ … kₙ vₙ``, then
asks for every key once more, in a random order, ``q₁ q₂ … qₙ``: at each query the model must
answer the value that followed that key. Keys and values come from disjoint parts of a small
vocabulary (keys ``0 … n_keys − 1``, values ``n_keys … n_keys + n_values − 1``), keys distinct
within a sequence, values drawn with replacement; the loss and the accuracy count only the
query positions. A model that knows the answer is one of the sequence's values but not which
one scores :meth:`RecallBatch.context_baseline` (about ``1/n``): the strongest answer that does
not bind keys to values.

Shapes: tokens and targets ``(batch, 3n)``; ``targets`` holds :data:`IGNORE` where nothing is
asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

__all__ = ["IGNORE", "RecallConfig", "RecallBatch", "recall_batch", "recall_batches",
           "recall_loss", "recall_accuracy"]

#: The target where nothing is asked (``cross_entropy``'s ``ignore_index``).
IGNORE = -100


@dataclass(frozen=True)
class RecallConfig:
    """The vocabulary of :func:`recall_batch`: ``n_keys`` key ids, then ``n_values`` value ids."""

    n_keys: int = 64
    n_values: int = 64

    def __post_init__(self) -> None:
        for name in ("n_keys", "n_values"):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, int) or x < 2:
                raise ValueError(f"{name} must be an integer ≥ 2; got {name}={x!r}")

    @property
    def vocab(self) -> int:
        """How many ids a sequence may hold (keys and values)."""
        return self.n_keys + self.n_values


@dataclass(frozen=True)
class RecallBatch:
    """``tokens`` ``(batch, 3n)``: the ``n`` pairs, then ``n`` queries; ``targets`` ``(batch,
    3n)``: the value each query asks for, :data:`IGNORE` elsewhere; ``pairs`` = ``n``."""

    tokens: torch.Tensor
    targets: torch.Tensor
    pairs: int

    def asked(self) -> torch.Tensor:
        """``(batch, 3n)`` bool: the query positions (where the loss counts)."""
        return self.targets != IGNORE

    def context_baseline(self) -> float:
        """The expected accuracy of answering a value of the sequence's pairs chosen at random:
        for each query, the share of the ``n`` pair values equal to its target, averaged."""
        n = self.pairs
        values = self.tokens[:, 1:2 * n:2]  # (batch, n)
        answers = self.targets[:, 2 * n:]  # (batch, n)
        return float((answers[:, :, None] == values[:, None, :]).double().mean(-1).mean())


def recall_batch(config: RecallConfig, batch: int, pairs: int, gen: torch.Generator
                 ) -> RecallBatch:
    """Draw ``batch`` MQAR sequences of ``pairs`` key–value pairs each (chapter 15).

    Keys are ``pairs`` distinct ids of ``0 … n_keys − 1`` (so ``pairs ≤ n_keys``), values
    uniform over the value ids; then the same keys in a random order as queries. Only ``gen``
    supplies randomness.
    """
    for name, x in (("batch", batch), ("pairs", pairs)):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise ValueError(f"{name} must be a positive integer; got {name}={x!r}")
    if pairs > config.n_keys:
        raise ValueError(f"pairs={pairs} distinct keys do not fit in n_keys={config.n_keys}")
    keys = torch.rand(batch, config.n_keys, generator=gen).argsort(-1)[:, :pairs]
    values = config.n_keys + torch.randint(0, config.n_values, (batch, pairs), generator=gen)
    order = torch.rand(batch, pairs, generator=gen).argsort(-1)  # (batch, pairs)
    queries = keys.gather(1, order)
    tokens = torch.cat((torch.stack((keys, values), -1).reshape(batch, 2 * pairs), queries), 1)
    targets = torch.cat((torch.full((batch, 2 * pairs), IGNORE), values.gather(1, order)), 1)
    return RecallBatch(tokens, targets, pairs)


def recall_batches(config: RecallConfig, batch: int, pairs: Sequence[int]
                   ) -> Callable[[torch.Generator], RecallBatch]:
    """``batch(gen)`` for :func:`~course_attention.training.fit`: each batch of ``batch``
    sequences draws its number of pairs uniformly from ``pairs``, then :func:`recall_batch`."""
    choices = tuple(pairs)
    if not choices:
        raise ValueError("pairs must name at least one number of pairs")
    for p in choices:
        recall_batch(config, 1, p, torch.Generator())  # refuses a bad number of pairs now

    def draw(gen: torch.Generator) -> RecallBatch:
        n = choices[int(torch.randint(0, len(choices), (1,), generator=gen))]
        return recall_batch(config, batch, n, gen)

    return draw


def recall_loss(model: torch.nn.Module, data: RecallBatch) -> torch.Tensor:
    """Cross-entropy at the query positions only: ``model(tokens)`` is ``(batch, seq, vocab)``
    logits (the prediction *at* each query is its value)."""
    logits = model(data.tokens)
    return torch.nn.functional.cross_entropy(logits.transpose(1, 2), data.targets,
                                             ignore_index=IGNORE)


@torch.no_grad()
def recall_accuracy(model: torch.nn.Module, data: RecallBatch) -> float:
    """The share of queries whose highest logit is their value (chapter 15)."""
    model.eval()
    guess = model(data.tokens).argmax(-1)
    asked = data.asked()
    return float((guess[asked] == data.targets[asked]).double().mean())
