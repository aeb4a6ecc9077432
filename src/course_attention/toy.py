"""The course's small data for chapters 1–5: the fruit dictionary, word vectors, example sentences.

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
    "NEXT_TOKEN_SENTENCE",
    "UNEQUAL_SENTENCES",
    "PAD",
    "next_token_pairs",
    "pad_batch",
    "mask_scores",
    "IT_ENDINGS",
    "IT_FEATURES",
    "IT_QK_FEATURES",
    "IT_VALUE_FEATURES",
    "ItSentence",
    "it_projections",
    "it_sentence",
]

#: Introduced in chapter 1. A Python dict is a hard look-up table, key -> value.
FRUIT_DICT: dict[str, int] = {"apple": 10, "banana": 5, "chair": 2}

#: The two made-up features of :data:`WORD_VECTORS` (chapter 1).
WORD_FEATURES: tuple[str, str] = ("edible", "man-made")

#: Introduced in chapter 1. 2-D word vectors, ``(2,)`` each, so they can be drawn on a plane.
#: Similar words point in similar directions; their dot product is large.
WORD_VECTORS: dict[str, np.ndarray] = {
    word: np.array(vector, dtype=float)
    for word, vector in {
        "fruit": (1.0, -0.1),
        "apple": (0.9, 0.1),
        "banana": (0.8, -0.3),
        "cherry": (0.85, 0.2),
        "chair": (-0.2, 0.9),
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

    Key features: food, sweet, furniture, vehicle. They belong to the vocabulary, not to these
    three keys: every word has a number for each (the chair of the 2-D plane would score
    high on furniture), so the car has a small furniture entry and the query a negative
    one. The car replaces chair as the unrelated key because, with four features, it gets a
    feature of its own (vehicle) and values that stand out (high price and weight), so the
    chapter can show how much a small weight lets through. Value features describe what each
    word contributes when it is attended to: sweetness, crunch, price, weight.
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

#: Introduced in chapter 3. The two endings of "The animal didn't cross the street because it
#: was too …". With "tired", "it" is the animal; with "wide", it is the street.
IT_ENDINGS: tuple[str, str] = ("tired", "wide")

#: The seven hand-made features of the chapter-3 token vectors ``X`` (one column each).
IT_FEATURES: tuple[str, ...] = (
    "animate",
    "place",
    "noun",
    "pronoun",
    "wants animate",
    "wants place",
    "function word",
)
#: What each of the ``d_k = 3`` query/key features asks for (a query) or offers (a key).
IT_QK_FEATURES: tuple[str, ...] = ("animate?", "place?", "noun?")
#: What each of the ``d_v = 2`` value features carries.
IT_VALUE_FEATURES: tuple[str, ...] = ("animate", "place")

_IT_TOKENS = ("The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too")
_IT_VECTORS: dict[str, tuple[float, ...]] = {
    # animate, place, noun, pronoun, wants animate, wants place, function word
    "The": (0, 0, 0, 0, 0, 0, 1),
    "animal": (1, 0, 1, 0, 0, 0, 0),
    "didn't": (0, 0, 0, 0, 0, 0, 1),
    "cross": (0, 0, 0, 0, 0, 0, 0.5),
    "the": (0, 0, 0, 0, 0, 0, 1),
    "street": (0, 1, 1, 0, 0, 0, 0),
    "because": (0, 0, 0, 0, 0, 0, 1),
    "it": (0, 0, 0, 1, 0, 0, 0),
    "was": (0, 0, 0, 0, 0, 0, 1),
    "too": (0, 0, 0, 0, 0, 0, 1),
    "tired": (0, 0, 0, 0, 1, 0, 0),
    "wide": (0, 0, 0, 0, 0, 1, 0),
}


@dataclass(frozen=True)
class ItSentence:
    """One sentence of chapter 3 with hand-made token vectors and projections.

    Shapes: ``X`` ``(seq, d_model)`` with ``seq = 11`` and ``d_model = 7``; ``W_q`` and ``W_k``
    ``(d_model, d_k)`` with ``d_k = 3``; ``W_v`` ``(d_model, d_v)`` with ``d_v = 2``.
    """

    ending: str
    tokens: tuple[str, ...]
    X: np.ndarray
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    it_index: int  #: position of "it"
    referent: str  #: the word "it" refers to


def it_projections(strength: float = 4.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hand-made projections ``(W_q, W_k, W_v)`` of chapter 3.

    ``W_q`` ``(7, 3)``: "wants animate" asks for animate keys, "wants place" for places, a
    pronoun and a function word ask for nouns (with half the ``strength``). ``W_k`` ``(7, 3)``:
    each key offers what it is. ``W_v`` ``(7, 2)``: a value carries "animate" and "place". The
    nouns ask for nothing: their queries are zero.
    """
    if not np.isfinite(strength) or strength < 0:
        raise ValueError(f"strength must be a non-negative finite number; got {strength}")
    W_q = np.zeros((len(IT_FEATURES), len(IT_QK_FEATURES)))  # (d_model, d_k)
    W_q[4, 0] = W_q[5, 1] = strength  # wants animate -> animate?, wants place -> place?
    W_q[3, 2] = W_q[6, 2] = strength / 2  # a pronoun or a function word looks for a noun
    W_k = np.zeros_like(W_q)  # (d_model, d_k)
    W_k[0, 0] = W_k[1, 1] = W_k[2, 2] = 1.0  # animate, place, noun are offered as they are
    W_v = np.zeros((len(IT_FEATURES), len(IT_VALUE_FEATURES)))  # (d_model, d_v)
    W_v[0, 0] = W_v[1, 1] = 1.0
    return W_q, W_k, W_v


def it_sentence(ending: str = "tired", context: float = 1.0) -> ItSentence:
    """Return "The animal didn't cross the street because it was too ``ending``" as vectors.

    Introduced in chapter 3. Every vector is made up by hand (a trained model learns its own).
    The row of "it" also carries ``context`` times the "wants …" feature of the ending: it stands
    in for what earlier layers of a trained model would have mixed into "it" from the adjective.
    With ``context=0`` the two sentences give "it" the same query.

    Returns:
        An :class:`ItSentence`; ``X`` is ``(11, 7)``.
    """
    if ending not in IT_ENDINGS:
        raise ValueError(f"ending must be one of {IT_ENDINGS}; got {ending!r}")
    tokens = (*_IT_TOKENS, ending)
    X = np.array([_IT_VECTORS[t] for t in tokens], dtype=float)  # (seq, d_model)
    it_index = tokens.index("it")
    X[it_index] += context * X[-1]  # "it" carries a trace of the adjective
    W_q, W_k, W_v = it_projections()
    referent = "animal" if ending == "tired" else "street"
    return ItSentence(ending, tokens, X, W_q, W_k, W_v, it_index, referent)


# --- chapter 4: masking -------------------------------------------------------------------

#: Introduced in chapter 4. One training sentence for next-token prediction, with its
#: beginning- and end-of-sequence tokens.
NEXT_TOKEN_SENTENCE: tuple[str, ...] = ("[BOS]", "I", "like", "you", "[EOS]")

#: Introduced in chapter 4. Sentences of unequal length, to be padded into one batch.
UNEQUAL_SENTENCES: tuple[tuple[str, ...], ...] = (
    ("[BOS]", "I", "like", "you"),
    ("[BOS]", "hello"),
    ("[BOS]", "you", "like", "tea", "too"),
)

#: The padding token of chapter 4.
PAD = "[PAD]"


def next_token_pairs(tokens: tuple[str, ...] | list[str]) -> tuple[list[str], list[str]]:
    """Split a sentence into model inputs and next-token targets (chapter 4).

    ``tokens`` ``(seq + 1,)`` gives inputs ``tokens[:-1]`` and targets ``tokens[1:]``, both
    ``(seq,)``: position ``i`` reads ``inputs[: i + 1]`` and must predict ``targets[i]``.
    """
    tokens = list(tokens)
    if len(tokens) < 2:
        raise ValueError(f"need at least 2 tokens to make a (input, target) pair; got {tokens}")
    return tokens[:-1], tokens[1:]


def pad_batch(
    sentences: tuple[tuple[str, ...], ...] | list[list[str]], pad: str = PAD
) -> tuple[list[list[str]], np.ndarray]:
    """Pad sentences to the longest one (chapter 4).

    Returns the padded tokens, ``batch`` lists of ``seq`` tokens each, and the real lengths
    ``(batch,)`` int, ready for :func:`course_attention.numpy_ref.padding_mask`.
    """
    if not sentences:
        raise ValueError("pad_batch needs at least one sentence")
    seq = max(len(s) for s in sentences)
    padded = [list(s) + [pad] * (seq - len(s)) for s in sentences]
    return padded, np.array([len(s) for s in sentences])


def mask_scores(seq_len: int, seed: int = 4) -> np.ndarray:
    """Made-up attention scores ``(seq_len, seq_len)`` for the masking figures (chapter 4).

    Standard-normal entries from a fixed seed: the same scores every run, so the figures only
    change when the mask does.
    """
    if seq_len < 1:
        raise ValueError(f"seq_len must be positive; got {seq_len}")
    return np.random.default_rng(seed).standard_normal((seq_len, seq_len))


# --- chapter 5: multi-head attention --------------------------------------------------------

__all__ += ["TwoHeadExample", "two_head_example"]


@dataclass(frozen=True)
class TwoHeadExample:
    """The constructed two-head example of chapter 5.

    Shapes: ``X`` ``(1, T, d_model)`` with ``T = len(tokens)`` and ``d_model = 8``;
    ``W_q``, ``W_k``, ``W_v``, ``W_o`` ``(d_model, d_model)``, multiplying on the right as in
    :func:`course_attention.numpy_ref.multi_head_attention`; ``n_heads = 2``.
    """

    tokens: tuple[str, ...]
    features: tuple[str, ...]
    head_names: tuple[str, ...]
    X: np.ndarray
    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray
    W_o: np.ndarray
    n_heads: int = 2


#: Word kinds of the chapter-5 sentence (determiner, noun, verb, preposition).
_KINDS: dict[str, str] = {"the": "det", "cat": "noun", "sat": "verb", "on": "prep", "mat": "noun"}


def two_head_example(position_scale: float = 50.0, kind_scale: float = 8.0) -> TwoHeadExample:
    """Return a hand-made two-head attention over "the cat sat on the mat" (chapter 5).

    Each token's 8 features are ``(cos θ, sin θ, 0, 0)`` of its position (θ = 30° per token)
    followed by a one-hot word kind (det, noun, verb, prep). Head 0 sees only the position
    features and its query is the position turned back by one step, so each token looks at the
    token before it. Head 1 sees only the word kinds, so each token looks at tokens of its own
    kind. The weights were built by hand to make the two relations visible; a trained model
    learns its own, messier heads.
    """
    tokens = ("the", "cat", "sat", "on", "the", "mat")
    kinds = ("det", "noun", "verb", "prep")
    step = np.pi / 6  # 30° per position
    theta = step * np.arange(len(tokens))  # (T,)
    X = np.zeros((len(tokens), 8))  # (T, d_model)
    X[:, 0], X[:, 1] = np.cos(theta), np.sin(theta)
    for t, word in enumerate(tokens):
        X[t, 4 + kinds.index(_KINDS[word])] = 1.0
    turn_back = np.array([[np.cos(step), -np.sin(step)], [np.sin(step), np.cos(step)]])
    W_q, W_k = np.zeros((8, 8)), np.zeros((8, 8))
    W_q[:2, :2] = position_scale * turn_back  # head 0: x_t W_q points at position t - 1
    W_k[:2, :2] = np.eye(2)
    W_q[4:, 4:] = kind_scale * np.eye(4)  # head 1: a word kind matches the same kind
    W_k[4:, 4:] = np.eye(4)
    return TwoHeadExample(
        tokens=tokens,
        features=("cos θ", "sin θ", "unused", "unused", *kinds),
        head_names=("head 0: the previous token", "head 1: the same kind of word"),
        X=X[None],
        W_q=W_q,
        W_k=W_k,
        W_v=np.eye(8),
        W_o=np.eye(8),
    )
