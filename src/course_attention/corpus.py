"""Chapter 8's text: Python standard-library source code, read from the running Python.

Introduced in chapter 8 (a GPT you train yourself). Nothing is downloaded: every Python ships the
source of its standard library, so the corpus is a pinned list of modules read from the folder of
``os.py``. That source is distributed under the Python Software Foundation License (version 2),
which permits copying and use with its notice kept; :data:`LICENCE` says so. The text differs
slightly between Python versions (a fix here, a new function there), so counts and losses differ a
little from one Python to another; on one Python they are always the same.

Tokens are single characters: a newline and the 95 printable ASCII characters, ids 0 … 95 in that
order. Any other character (a tab, an accented letter in a comment) becomes ``"?"`` before
encoding, so every text can be encoded and :func:`decode` inverts :func:`encode` on clean text.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .i18n import _

__all__ = [
    "VOCAB",
    "VOCAB_SIZE",
    "UNKNOWN",
    "TRAIN_MODULES",
    "VALID_MODULES",
    "LICENCE",
    "Corpus",
    "stdlib_root",
    "clean",
    "encode",
    "decode",
    "load",
    "unigram_bigram_loss",
]

#: One token per character, a newline then the printable ASCII characters (the vocabulary).
VOCAB: str = "\n" + "".join(chr(c) for c in range(32, 127))
VOCAB_SIZE: int = len(VOCAB)
#: What a character outside :data:`VOCAB` becomes.
UNKNOWN: str = "?"
_ID = {ch: i for i, ch in enumerate(VOCAB)}

#: Standard-library modules the model trains on (pinned; paths under :func:`stdlib_root`).
TRAIN_MODULES: tuple[str, ...] = (
    "argparse.py",
    "dataclasses.py",
    "difflib.py",
    "enum.py",
    "contextlib.py",
    "random.py",
    "textwrap.py",
    "string.py",
    "queue.py",
    "copy.py",
    "calendar.py",
    "csv.py",
    "glob.py",
    "fnmatch.py",
)
#: The held-out modules, the validation text, never trained on.
VALID_MODULES: tuple[str, ...] = ("pprint.py",)
#: The licence of the corpus text.
LICENCE = (
    "Python standard-library source, © Python Software Foundation, distributed under the "
    "Python Software Foundation License Version 2 (https://docs.python.org/3/license.html)"
)


def stdlib_root() -> Path:
    """The folder that holds the standard library's source: the parent of ``os.py``."""
    return Path(os.__file__).parent


def clean(text: str) -> str:
    """``text`` with every character outside :data:`VOCAB` replaced by :data:`UNKNOWN`."""
    return "".join(ch if ch in _ID else UNKNOWN for ch in text)


def encode(text: str, strict: bool = False) -> np.ndarray:
    """Characters → token ids ``(len(text),)`` int64.

    Introduced in chapter 8. With ``strict`` a character outside :data:`VOCAB` raises a
    ``ValueError`` naming it (the live explorer uses this); otherwise it becomes ``"?"``.
    """
    if not isinstance(text, str):
        raise ValueError(f"encode needs a str; got {type(text).__name__}")
    if strict:
        bad = sorted({ch for ch in text if ch not in _ID})
        if bad:
            raise ValueError(_(  # the explorers show it: in the reader's language
                "characters outside the vocabulary of {size} (newline and printable ASCII): "
                "{chars}").format(size=VOCAB_SIZE, chars=", ".join(repr(ch) for ch in bad)))
    return np.fromiter((_ID[ch] for ch in clean(text)), dtype=np.int64, count=len(text))


def decode(ids: object) -> str:
    """Token ids ``(n,)`` (a list, array or tensor) → the text they stand for."""
    flat = np.asarray(ids.tolist() if hasattr(ids, "tolist") else ids, dtype=np.int64).ravel()
    if flat.size and (flat.min() < 0 or flat.max() >= VOCAB_SIZE):
        raise ValueError(
            f"token ids must lie in 0 … {VOCAB_SIZE - 1}; got {int(flat.min())} … {int(flat.max())}"
        )
    return "".join(VOCAB[i] for i in flat)


@dataclass(frozen=True)
class Corpus:
    """The training and validation text, and their token ids.

    ``train`` ``(n_train,)`` and ``valid`` ``(n_valid,)`` are int64 ids; ``python`` is the version
    the text was read from (the text differs slightly between versions).
    """

    train_text: str
    valid_text: str
    train: np.ndarray
    valid: np.ndarray
    python: str
    licence: str = LICENCE


def _read(modules: tuple[str, ...], root: Path) -> str:
    missing = [m for m in modules if not (root / m).exists()]
    if missing:
        raise ValueError(f"standard-library modules not found under {root}: {missing}")
    return "\n".join(clean((root / m).read_text(encoding="utf-8")) for m in modules)


def load(
    train_modules: tuple[str, ...] = TRAIN_MODULES,
    valid_modules: tuple[str, ...] = VALID_MODULES,
    root: Path | None = None,
) -> Corpus:
    """Read the pinned modules: training text, validation text (a disjoint set of modules).

    Introduced in chapter 8. Deterministic: the same Python gives the same text every time.
    """
    if set(train_modules) & set(valid_modules):
        raise ValueError(
            f"a module is in both the training and validation text: "
            f"{sorted(set(train_modules) & set(valid_modules))}"
        )
    root = stdlib_root() if root is None else root
    train_text, valid_text = _read(train_modules, root), _read(valid_modules, root)
    version = ".".join(map(str, sys.version_info[:3]))
    return Corpus(train_text, valid_text, encode(train_text), encode(valid_text), version)


def unigram_bigram_loss(
    train: np.ndarray, valid: np.ndarray, vocab_size: int = VOCAB_SIZE, alpha: float = 0.1
) -> tuple[float, float]:
    """Cross-entropy (nats per character) of a unigram and a bigram model on ``valid``.

    Introduced in chapter 8: the baselines a language model must beat. Both are counted on
    ``train`` ``(n,)`` with add-``alpha`` smoothing (so an unseen pair is not infinitely
    surprising) and scored on ``valid`` ``(m,)``: the unigram on every character, the bigram on
    every character after the first, predicted from the one before it.
    """
    train, valid = np.asarray(train), np.asarray(valid)
    for name, ids in (("train", train), ("valid", valid)):
        if ids.ndim != 1 or ids.size < 2 or ids.min() < 0 or ids.max() >= vocab_size:
            raise ValueError(
                f"{name} must be ≥ 2 ids in 0 … {vocab_size - 1}, shape (n,); got shape {ids.shape}"
            )
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0; got {alpha}")
    uni = np.bincount(train, minlength=vocab_size) + alpha
    uni_loss = -np.log(uni / uni.sum())[valid].mean()
    pairs = np.zeros((vocab_size, vocab_size)) + alpha  # (previous, next) counts
    np.add.at(pairs, (train[:-1], train[1:]), 1)
    bi = pairs / pairs.sum(axis=1, keepdims=True)  # row: P(next | previous)
    bi_loss = -np.log(bi[valid[:-1], valid[1:]]).mean()
    return float(uni_loss), float(bi_loss)
