"""Chapter 8's claims about its trained GPT, measured and checked on any seed.

Introduced in chapter 8. :func:`chapter_results` measures what the chapter states about the model
it trains (validation loss against the bigram and the Kneser–Ney ladder, the repeated-text losses,
the greedy loop); :func:`check_chapter_claims` asserts each claim. The chapter calls them on seed
0, ``tests/test_gpt.py`` and ``benchmarks/train_gpt.py`` on seeds 0, 1 and 2, so a sentence that
holds for one lucky seed only fails a test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import GPT, generate, greedy_loop, repeat_losses, validation_loss

__all__ = ["GREEDY_N", "ChapterResults", "chapter_results", "check_chapter_claims"]


#: How many greedy characters the loop claim reads. Long enough that a loop which starts late
#: (seed 2 on this machine: at character 85, period 11) still repeats many times: the claim
#: keeps a margin over where another computer's run may start its loop.
GREEDY_N = 240


@dataclass(frozen=True)
class ChapterResults:
    """What chapter 8 measures of a trained model (nats per character on the validation text).

    ``ladder`` maps ``n`` to the Kneser–Ney ``n``-gram's loss (:mod:`course_attention.ngram`),
    ``bigram`` is the add-0.1 bigram of the chapter's first section, ``losses`` the training
    losses ``(steps,)``, ``repeat`` the losses on a first and a repeated copy
    (:func:`~course_attention.gpt.repeat_losses`), ``loop`` the
    :func:`~course_attention.gpt.greedy_loop` of :data:`GREEDY_N` greedy characters after
    ``"for i in "``.
    """

    valid: float
    bigram: float
    ladder: dict[int, float]
    losses: np.ndarray
    repeat: tuple[float, float]
    loop: tuple[int, int] | None


def chapter_results(
    model: GPT,
    losses: np.ndarray,
    train: np.ndarray,
    valid: np.ndarray,
    ladder: dict[int, float] | None = None,
    valid_loss: float | None = None,
) -> ChapterResults:
    """Measure ``model`` as chapter 8 does: validation loss, baselines, repeated text, greedy loop.

    Introduced in chapter 8. ``ladder`` (from :func:`course_attention.ngram.ladder` on the same
    ``train`` and ``valid``, orders 1 … 5) and ``valid_loss``
    (:func:`~course_attention.gpt.validation_loss` on ``valid``) are computed when not given.
    """
    from .. import corpus, ngram
    from ..training import torch_threads

    ladder = ngram.ladder(train, valid) if ladder is None else ladder
    _, bigram = corpus.unigram_bigram_loss(train, valid)
    with torch_threads(1):
        valid_loss = validation_loss(model, valid) if valid_loss is None else valid_loss
        greedy = corpus.decode(generate(model, corpus.encode("for i in "), GREEDY_N).tokens)
        repeat = repeat_losses(model)
    return ChapterResults(valid_loss, bigram, dict(ladder), np.asarray(losses, dtype=float),
                          repeat, greedy_loop(greedy))


def check_chapter_claims(results: ChapterResults) -> None:
    """Assert every claim chapter 8 makes about its trained model (one seed's results).

    Introduced in chapter 8; the chapter calls it for seed 0, ``tests/test_gpt.py`` and
    ``benchmarks/train_gpt.py`` for seeds 1 and 2. Raises ``AssertionError`` naming the claim
    that fails. The claims: the training loss halves; the model is at least 25 % below the
    add-0.1 bigram; each Kneser–Ney order beats the one below it; the model beats the 3-gram but
    not the 4-gram (so not the 5-gram either); it has no induction: the second copy of a
    repeated random text costs at least 90 % of the first; and greedy decoding after
    ``"for i in "`` ends in a loop (:func:`~course_attention.gpt.greedy_loop`): a piece repeated
    to the 120th character at least 3 times, filling at least a quarter of the 120 characters.
    """
    r, ladder = results, results.ladder
    checks = {
        "the training loss halves": r.losses[-20:].mean() < r.losses[:20].mean() / 2,
        "at least 25 % below the add-0.1 bigram": r.valid <= 0.75 * r.bigram,
        "each n-gram order beats the one below": all(
            ladder[n] < ladder[n - 1] for n in range(2, 6)
        ),
        "the GPT beats the 3-gram": r.valid < ladder[3],
        "the GPT does not reach the 4-gram": ladder[4] < r.valid,
        "no copying: the repeat costs ≥ 90 % of the first copy": r.repeat[1] >= 0.9 * r.repeat[0],
        "greedy text ends in a loop": r.loop is not None,
    }
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        raise AssertionError(
            f"chapter 8's claims fail: {failed} (GPT {r.valid:.3f}, bigram {r.bigram:.3f}, "
            f"n-grams { {n: round(v, 3) for n, v in ladder.items()} }, repeat {r.repeat}, "
            f"greedy loop {r.loop})"
        )
