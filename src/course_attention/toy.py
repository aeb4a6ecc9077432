"""The course's small data: the fruit dictionary, toy word vectors, the worked example.

Every vector here was made up for teaching (a trained model learns its own); the chapters say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FRUIT_DICT",
    "WORD_FEATURES",
    "WORD_VECTORS",
    "WorkedExample",
    "worked_example",
    "word_matrix",
]

#: Introduced in chapter 1: a Python dict is a hard look-up table, key -> value.
FRUIT_DICT: dict[str, int] = {"apple": 10, "banana": 5, "chair": 2}

#: The two made-up features of :data:`WORD_VECTORS` (chapter 1).
WORD_FEATURES: tuple[str, str] = ("edible", "man-made")

#: Introduced in chapter 1: 2-D word vectors, ``(2,)`` each, so they can be drawn on a plane.
#: Similar words point in similar directions; their dot product is large.
WORD_VECTORS: dict[str, np.ndarray] = {
    word: np.array(vector, dtype=float)
    for word, vector in {
        "fruit": (1.0, -0.1),
        "apple": (0.9, 0.1),
        "banana": (0.8, -0.3),
        "cherry": (0.85, 0.2),
        "chair": (-0.2, 0.9),
        "table": (-0.1, 1.0),
        "car": (-0.5, 0.8),
        "furniture": (-0.3, 1.0),
        "vehicle": (-0.6, 0.7),
    }.items()
}


def word_matrix(words: list[str]) -> np.ndarray:
    """Stack the vectors of ``words`` into a ``(len(words), 2)`` matrix (chapter 1)."""
    unknown = [w for w in words if w not in WORD_VECTORS]
    if unknown:
        raise ValueError(f"unknown words {unknown}; the vocabulary is {sorted(WORD_VECTORS)}")
    return np.stack([WORD_VECTORS[w] for w in words])


@dataclass(frozen=True)
class WorkedExample:
    """The worked example of chapter 1: one query, three keys, three values.

    Shapes: ``q`` ``(d_k,)``, ``K`` ``(n_keys, d_k)``, ``V`` ``(n_keys, d_v)`` with
    ``d_k = d_v = 4`` and ``n_keys = 3``.
    """

    query_word: str
    key_words: tuple[str, ...]
    key_features: tuple[str, ...]
    value_features: tuple[str, ...]
    q: np.ndarray
    K: np.ndarray
    V: np.ndarray


def worked_example() -> WorkedExample:
    """Return the chapter-1 worked example (query "fruit"; keys apple, banana, car).

    Key features: food, sweet, furniture, vehicle. Value features describe what each word
    contributes when it is attended to: sweetness, crunch, price, weight.
    """
    return WorkedExample(
        query_word="fruit",
        key_words=("apple", "banana", "car"),
        key_features=("food", "sweet", "furniture", "vehicle"),
        value_features=("sweetness", "crunch", "price", "weight"),
        q=np.array([0.9, 0.7, -0.4, -0.3]),
        K=np.array(
            [
                [0.8, 0.6, -0.3, -0.2],  # apple
                [0.7, 0.8, -0.2, -0.4],  # banana
                [-0.6, -0.3, 0.2, 0.9],  # car
            ]
        ),
        V=np.array(
            [
                [0.7, 0.9, 0.2, 0.1],  # apple
                [0.9, 0.1, 0.2, 0.2],  # banana
                [0.0, 0.0, 1.0, 1.0],  # car
            ]
        ),
    )


# --- chapter 3: self-attention ------------------------------------------------------------


# --- chapter 4: masking -------------------------------------------------------------------


# --- chapter 5: multi-head attention --------------------------------------------------------
