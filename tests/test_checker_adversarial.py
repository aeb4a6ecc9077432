"""The checker against an adversarial grader: no false accepts, no misnamed mistakes, no false
rejects, and no hangs.

For every exercise: the reference and equivalent correct answers (a torch tensor, a list, an
in-place version) pass; each catalogued mistake is named; a near miss of a catalogued mistake, and
an answer that makes a mistake's error on one test case only, fail without a name; ``None``, text
and complex numbers get their own message. Then hand-written wrong answers from the issue (a
softmax that subtracts the mean, or no maximum, or the maximum over hidden keys; a complex
rotation; float32 layer norm) and an answer that never returns.

``adversarial_answers()`` lists every answer with what the checker must say about it, and
``verdict_of`` sorts an outcome into ok / false accept / false reject / misnamed / unnamed, so the
counts for a whole checker come from one place.
"""

from __future__ import annotations

import copy
import itertools
import re
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from course_attention import exercises as ex
from course_attention.exercises import core

IDS = sorted(ex.EXERCISES)
PASS = "pass"  # the answer is right: it must pass
UNNAMED = "unnamed"  # wrong and not in the catalogue: it must fail and name no mistake


def named(exercise_id: str, answer: Any) -> tuple[str, str]:
    """Run the checker; return ('pass' | the named mistake | 'unnamed', message)."""
    passed, message = ex.evaluate(exercise_id, answer)
    if passed:
        return PASS, message
    found = re.search(r"\n  Likely mistake: (.*?)\.\n  Hint:", message, re.DOTALL)
    return (found.group(1) if found else UNNAMED), message


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _map(result: Any, fn: Callable[[np.ndarray], Any]) -> Any:
    """Apply ``fn`` to a result, or to each array of a tuple of results."""
    if isinstance(result, tuple):
        return tuple(fn(np.asarray(r)) for r in result)
    return fn(np.asarray(result))


def _differs(exercise: core.Exercise, expected: Any, got: Any) -> bool:
    return core._compare(expected, got, exercise) is not None


def _telling_cases(exercise: core.Exercise, mistake: core.Mistake) -> list[int]:
    """The cases on which ``mistake`` gives a wrong answer (it may be right on the others)."""
    telling = []
    for i, args in enumerate(exercise.cases()):
        try:
            with np.errstate(all="ignore"):
                theirs = mistake.fn(*copy.deepcopy(args))
        except Exception:  # noqa: BLE001, S112 - a mistake that raises there: not telling
            continue
        if _differs(exercise, exercise.reference(*copy.deepcopy(args)), theirs):
            telling.append(i)
    return telling


def _near_miss(result: Any) -> Any:
    """A result a little off a given one (a bool array gets one entry flipped)."""

    def nudge(a: np.ndarray) -> np.ndarray:
        if a.dtype == bool:
            flipped = a.copy()
            flipped.flat[0] = ~flipped.flat[0]
            return flipped
        return np.asarray(a, dtype=float) * (1 + 1e-3) + 1e-3

    return _map(result, nudge)


def _can_miss_nearly(exercise: core.Exercise, mistake: core.Mistake) -> bool:
    """Whether nudging the mistake's outputs changes them: not when it gives NaN everywhere
    (``(~mask) * -np.inf``: 0 · (−∞) = NaN), where a near miss is the mistake itself."""
    for args in exercise.cases():
        try:
            with np.errstate(all="ignore"):
                theirs = mistake.fn(*copy.deepcopy(args))
        except Exception:  # noqa: BLE001, S112 - a mistake that raises here: no output to nudge
            continue
        if core._compare(theirs, _near_miss(theirs), exercise, strict=True) is not None:
            return True
    return False


# --- generic answers, made for every exercise -----------------------------------------------


def generic_answers(exercise_id: str) -> list[tuple[str, Callable[[], Callable], str]]:
    """(label, factory of an answer, expected verdict) for one exercise."""
    exercise = ex.EXERCISES[exercise_id]
    reference = exercise.reference
    answers: list[tuple[str, Callable[[], Callable], str]] = [
        ("the reference", lambda: reference, PASS),
        (
            "the reference as torch tensors",
            lambda: lambda *a: _map(reference(*a), lambda r: torch.from_numpy(np.array(r))),
            PASS,
        ),
        ("the reference as lists", lambda: lambda *a: _map(reference(*a), np.ndarray.tolist), PASS),
        ("the reference's output nudged", lambda: lambda *a: _near_miss(reference(*a)), UNNAMED),
        ("None (no `return`)", lambda: lambda *a: None, UNNAMED),
        (
            "the reference plus 0j (complex)",
            lambda: lambda *a: _map(reference(*a), lambda r: r + 0j),
            UNNAMED,
        ),
    ]
    first = reference(*exercise.cases()[0])
    if not isinstance(first, tuple) and np.ndim(first) == 0:
        answers.append(("the right number as text", lambda: lambda *a: str(reference(*a)), UNNAMED))
    for mistake in exercise.mistakes:
        answers.append((f"mistake: {mistake.name}", lambda m=mistake: m.fn, mistake.name))
        if _can_miss_nearly(exercise, mistake):
            answers.append(
                (
                    f"near miss of: {mistake.name}",
                    lambda m=mistake: lambda *a: _near_miss(m.fn(*a)),
                    UNNAMED,
                )
            )
        telling = _telling_cases(exercise, mistake)
        if len(telling) >= 2:  # right everywhere but on one of the mistake's telling cases

            def one_case_only(m: core.Mistake = mistake, at: int = telling[0]) -> Callable:
                calls = itertools.count()  # the checker calls once per case, in order
                return lambda *a: m.fn(*a) if next(calls) == at else reference(*a)

            answers.append(
                (f"only case {telling[0] + 1} like: {mistake.name}", one_case_only, UNNAMED)
            )
    return answers


# --- hand-written answers from the issue and beyond -----------------------------------------


def _mean_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _naive_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def _logsumexp_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return np.exp(x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def _in_place_softmax(x: np.ndarray) -> np.ndarray:
    x -= x.max(axis=-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=-1, keepdims=True)
    return x


def _torch_softmax(x: np.ndarray) -> torch.Tensor:
    return torch.softmax(torch.from_numpy(x), dim=-1)


def _sdpa(softmax: Callable) -> Callable:
    return lambda Q, K, V: softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])) @ V


def _masked_pt(softmax: Callable) -> Callable:
    return lambda scores, mask: softmax(scores + np.where(mask, 0.0, -np.inf))


def _masked_all_max_plain(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    e = np.exp(np.where(mask, scores, -np.inf) - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)  # NaN where every visible exp underflowed


def _masked_global_max_plain(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    e = np.exp(np.where(mask, scores, -np.inf) - scores.max())
    return np.nan_to_num(e / e.sum(axis=-1, keepdims=True))


def _hint_recipe(scores: np.ndarray, mask: np.ndarray, top: Any) -> np.ndarray:
    """The masking-2 hint's recipe with a maximum of the learner's choice."""
    top = np.broadcast_to(top, scores.shape)
    e = np.exp(np.where(mask, scores, top) - top) * mask
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _masked_right(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    hidden = np.where(mask, scores, -np.inf)
    top = hidden.max(axis=-1, keepdims=True)
    e = np.exp(hidden - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _masked_torch(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    s = torch.from_numpy(scores).masked_fill(~torch.from_numpy(np.array(mask)), float("-inf"))
    return torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0).numpy()


def _rotate_complex(real_part_only: bool) -> Callable:
    def rotate(x: np.ndarray, position: int) -> np.ndarray:
        d = len(x)
        angle = position * 10000.0 ** (-np.arange(0, d, 2) / d)
        z = (x[0::2] + 1j * x[1::2]) * np.exp(1j * angle)
        out = np.empty(d, dtype=complex)
        out[0::2], out[1::2] = z.real, z.imag
        return out + 0.5j if real_part_only else out.real

    return rotate


def _layer_norm_torch(dtype: torch.dtype) -> Callable:
    def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
        norm = torch.nn.LayerNorm(x.shape[-1]).to(dtype)
        with torch.no_grad():
            norm.weight.copy_(torch.from_numpy(gamma))
            norm.bias.copy_(torch.from_numpy(beta))
            return norm(torch.from_numpy(x).to(dtype)).numpy()

    return layer_norm


def _cross_attention(softmax: Callable) -> Callable:
    def attend(y: np.ndarray, m: np.ndarray) -> tuple:
        weights = softmax(y @ m.T / np.sqrt(y.shape[-1]))
        return weights @ m, weights

    return attend


def _self_attention(softmax: Callable) -> Callable:
    def attend(X, W_q, W_k, W_v):  # noqa: ANN001, ANN202
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        return softmax(Q @ K.T / np.sqrt(K.shape[-1])) @ V

    return attend


# --- the toolbox chapter's exercises (toolbox-1 … toolbox-4) ---------------------------------


def _softmax_backward_autograd(s: np.ndarray, g: np.ndarray) -> torch.Tensor:
    scores = torch.tensor(s, requires_grad=True)
    (torch.softmax(scores, dim=-1) * torch.from_numpy(g)).sum().backward()
    return scores.grad


def _softmax_backward_jacobian(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    from course_attention import numpy_ref

    return (numpy_ref.softmax_jacobian(numpy_ref.softmax(s)) @ g[..., None])[..., 0]


def _softmax_backward_outer(s: np.ndarray, g: np.ndarray) -> np.ndarray:
    p = _softmax(s)
    return (np.diag(p) - np.outer(p, p)) @ g  # right for one vector, wrong for a batch


def _vjp(softmax: Callable) -> Callable:
    def backward(s: np.ndarray, g: np.ndarray) -> np.ndarray:
        p = softmax(s)
        return p * (g - (p * g).sum(axis=-1, keepdims=True))

    return backward


def _bits(log_p: Callable) -> Callable:
    def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
        picked = log_p(logits)[np.arange(len(targets)), targets]
        return float(-np.mean(picked) / np.log(2))

    return cross_entropy


def _cross_entropy_torch(logits: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    nats = torch.nn.functional.cross_entropy(torch.from_numpy(logits), torch.from_numpy(targets))
    return nats / np.log(2)


def _adamw_torch(optimizer: str) -> Callable:
    """One step of ``torch.optim.AdamW`` (or ``Adam``) from the given state."""

    def step(p, g, m, v, t, lr, weight_decay):  # noqa: ANN001, ANN202
        param = torch.nn.Parameter(torch.tensor(p))
        opt = getattr(torch.optim, optimizer)([param], lr=lr, weight_decay=weight_decay)
        opt.state[param] = {
            "step": torch.tensor(float(t - 1)),
            "exp_avg": torch.tensor(m),
            "exp_avg_sq": torch.tensor(v),
        }
        param.grad = torch.tensor(g)
        opt.step()
        state = opt.state[param]
        return param.detach(), state["exp_avg"], state["exp_avg_sq"]

    return step


def _adamw_package(p, g, m, v, t, lr, weight_decay):  # noqa: ANN001, ANN202
    """One step of the package's readable ``training.Adam`` from the given state."""
    from course_attention import training

    param = torch.nn.Parameter(torch.tensor(p))
    opt = training.Adam([param], lr=lr, weight_decay=weight_decay)
    opt.t, opt.m, opt.v = t - 1, [torch.tensor(m)], [torch.tensor(v)]
    param.grad = torch.tensor(g)
    opt.step()
    return param.detach(), opt.m[0], opt.v[0]


NO_MAX = "no maximum subtracted"  # a part of every catalogued no-maximum mistake's name

HANDWRITTEN: list[tuple[str, str, Callable, str]] = [
    # (exercise, label, answer, verdict: PASS, UNNAMED or a part of the mistake's name)
    ("soft-lookup-1", "row mean subtracted", _mean_softmax, "mean subtracted instead"),
    ("soft-lookup-1", "no maximum subtracted", _naive_softmax, NO_MAX),
    (
        "soft-lookup-1",
        "row minimum subtracted",
        lambda x: _naive_softmax(x - x.min(axis=-1, keepdims=True)),
        UNNAMED,
    ),
    ("soft-lookup-1", "log-sum-exp", _logsumexp_softmax, PASS),
    ("soft-lookup-1", "in place", _in_place_softmax, PASS),
    ("soft-lookup-1", "torch.softmax", _torch_softmax, PASS),
    (
        "soft-lookup-1",
        "torch.softmax in float32 (rounding only)",
        lambda x: torch.softmax(torch.from_numpy(x).float(), dim=-1),
        PASS,
    ),
    ("soft-lookup-2", "row mean subtracted", lambda q, K, V: _mean_softmax(K @ q) @ V, UNNAMED),
    ("soft-lookup-2", "no maximum subtracted", lambda q, K, V: _naive_softmax(K @ q) @ V, NO_MAX),
    ("soft-lookup-2", "torch", lambda q, K, V: _torch_softmax(K @ q) @ torch.from_numpy(V), PASS),
    ("soft-lookup-3", "no maximum subtracted", lambda s, t: _naive_softmax(s / t), NO_MAX),
    ("soft-lookup-3", "row mean subtracted", lambda s, t: _mean_softmax(s / t), UNNAMED),
    (
        "soft-lookup-3",
        "maximum subtracted before dividing by T",
        lambda s, t: _naive_softmax((s - s.max()) / t),
        PASS,
    ),
    ("scaled-dot-product-1", "no maximum subtracted", _sdpa(_naive_softmax), NO_MAX),
    ("scaled-dot-product-1", "row mean subtracted", _sdpa(_mean_softmax), UNNAMED),
    ("scaled-dot-product-1", "log-sum-exp", _sdpa(_logsumexp_softmax), PASS),
    (
        "scaled-dot-product-1",
        "torch",
        lambda Q, K, V: (
            torch.softmax(
                torch.from_numpy(Q) @ torch.from_numpy(K).transpose(-1, -2) / Q.shape[-1] ** 0.5, -1
            )
            @ torch.from_numpy(V)
        ),
        PASS,
    ),
    ("scaled-dot-product-4", "no maximum subtracted", _masked_pt(_naive_softmax), NO_MAX),
    (
        "scaled-dot-product-4",
        "row mean subtracted (over the visible keys)",
        lambda s, m: _naive_softmax(
            np.where(
                m, s - np.where(m, s, 0).sum(-1, keepdims=True) / m.sum(-1, keepdims=True), -np.inf
            )
        ),
        UNNAMED,
    ),
    (
        "scaled-dot-product-4",
        "maximum over every key, hidden ones included",
        lambda s, m: _naive_softmax(s + np.where(m, 0.0, -np.inf) - s.max(axis=-1, keepdims=True)),
        "hidden ones included",
    ),
    (
        "scaled-dot-product-4",
        "−1e9 instead of −inf (no row is fully hidden)",
        lambda s, m: _softmax(s + np.where(m, 0.0, -1e9)),
        PASS,
    ),
    ("scaled-dot-product-4", "torch masked_fill", _masked_torch, PASS),
    (
        "masking-2",
        "maximum over every key, hidden ones included (plain division: NaN)",
        _masked_all_max_plain,
        UNNAMED,
    ),
    (
        "masking-2",
        "maximum over every key, hidden ones included (the hint's safe division)",
        lambda s, m: _hint_recipe(s, m, s.max(axis=-1, keepdims=True)),
        "hidden ones included",
    ),
    ("masking-2", "one global maximum (NaN turned to 0)", _masked_global_max_plain, UNNAMED),
    (
        "masking-2",
        "one global maximum over the visible keys (the hint's safe division)",
        lambda s, m: _hint_recipe(s, m, np.where(m, s, -np.inf).max()),
        "whole array",
    ),
    ("masking-2", "the visible maximum, safe division", _masked_right, PASS),
    ("masking-2", "torch masked_fill + nan_to_num", _masked_torch, PASS),
    (
        "masking-2",
        "no maximum subtracted",
        lambda s, m: np.nan_to_num(_naive_softmax(np.where(m, s, -np.inf))),
        UNNAMED,
    ),
    ("positions-2", "complex array with the right real part", _rotate_complex(True), UNNAMED),
    ("positions-2", "rotation by complex numbers, returned real", _rotate_complex(False), PASS),
    ("self-attention-1", "no maximum subtracted", _self_attention(_naive_softmax), NO_MAX),
    ("self-attention-1", "row mean subtracted", _self_attention(_mean_softmax), UNNAMED),
    ("encoder-decoder-3", "no maximum subtracted", _cross_attention(_naive_softmax), NO_MAX),
    ("encoder-decoder-3", "row mean subtracted", _cross_attention(_mean_softmax), UNNAMED),
    (
        "encoder-decoder-3",
        "a list instead of a tuple",
        lambda y, m: list(_cross_attention(_softmax)(y, m)),
        PASS,
    ),
    (
        "transformer-block-1",
        "torch nn.LayerNorm in float32",
        _layer_norm_torch(torch.float32),
        UNNAMED,
    ),
    (
        "transformer-block-1",
        "torch nn.LayerNorm in float64",
        _layer_norm_torch(torch.float64),
        PASS,
    ),
    ("toolbox-1", "torch autograd", _softmax_backward_autograd, PASS),
    ("toolbox-1", "the package's Jacobian times g", _softmax_backward_jacobian, PASS),
    ("toolbox-1", "no maximum subtracted", _vjp(_naive_softmax), NO_MAX),
    ("toolbox-1", "row mean subtracted", _vjp(_mean_softmax), UNNAMED),
    ("toolbox-1", "log-sum-exp softmax", _vjp(_logsumexp_softmax), PASS),
    ("toolbox-1", "np.outer: one vector only, raises on a batch", _softmax_backward_outer, UNNAMED),
    ("toolbox-2", "F.cross_entropy / ln 2", _cross_entropy_torch, PASS),
    ("toolbox-2", "log2 of torch.log_softmax", _bits(lambda z: torch.log_softmax(
        torch.from_numpy(z), dim=-1).numpy()), PASS),
    (
        "toolbox-2",
        "no maximum subtracted (softmax, then log)",
        _bits(lambda z: np.log(_naive_softmax(z))),
        NO_MAX,
    ),
    (
        "toolbox-2",
        "no maximum subtracted (log-softmax written out)",
        _bits(lambda z: z - np.log(np.exp(z).sum(axis=-1, keepdims=True))),
        NO_MAX,
    ),
    ("toolbox-2", "the log of a stable softmax", _bits(lambda z: np.log(_softmax(z))),
     "log of the softmax"),
    ("toolbox-2", "row mean subtracted (log of the softmax)",
     _bits(lambda z: np.log(_mean_softmax(z))), UNNAMED),
    ("toolbox-3", "torch.optim.AdamW from the same state", _adamw_torch("AdamW"), PASS),
    ("toolbox-3", "the package's training.Adam from the same state", _adamw_package, PASS),
    (
        "toolbox-3",
        "torch.optim.Adam with weight_decay (an L2 penalty in the gradient)",
        _adamw_torch("Adam"),
        "added to the gradient",
    ),
    ("toolbox-4", "x * keep / (1 - p)", lambda x, keep, p: x * keep / (1 - p), PASS),
    (
        "toolbox-4",
        "torch, the mask as floats",
        lambda x, keep, p: torch.from_numpy(x) * torch.from_numpy(keep).double() / (1 - p),
        PASS,
    ),
    (
        "toolbox-4",
        "F.dropout's own random draw instead of the given keep",
        lambda x, keep, p: torch.nn.functional.dropout(torch.from_numpy(x), p),
        UNNAMED,
    ),
]


def adversarial_answers() -> list[tuple[str, str, Callable[[], Callable], str]]:
    """Every answer: (exercise, label, factory of the answer, verdict)."""
    answers = [
        (i, label, make, verdict) for i in IDS for label, make, verdict in generic_answers(i)
    ]
    answers += [(i, label, lambda fn=fn: fn, verdict) for i, label, fn, verdict in HANDWRITTEN]
    return answers


ANSWERS = adversarial_answers()


def verdict_of(exercise_id: str, make: Callable[[], Callable], verdict: str) -> tuple[str, str]:
    """What went wrong: 'ok', 'false accept', 'false reject', 'misnamed' or 'unnamed'."""
    got, message = named(exercise_id, make())
    if verdict == PASS:
        return ("ok" if got == PASS else "false reject"), message
    if got == PASS:
        return "false accept", message
    if verdict == UNNAMED:
        return ("ok" if got == UNNAMED else "misnamed"), message
    if got == UNNAMED:
        return "unnamed", message
    return ("ok" if verdict in got else "misnamed"), message


@pytest.mark.parametrize(
    ("exercise_id", "label", "make", "verdict"),
    ANSWERS,
    ids=[f"{i}: {label[:60]}" for i, label, _, _ in ANSWERS],
)
def test_the_checker_judges_each_adversarial_answer_right(exercise_id, label, make, verdict):
    outcome, message = verdict_of(exercise_id, make, verdict)
    assert outcome == "ok", f"{outcome}: {label}\n{message}"


def test_the_adversarial_set_covers_every_exercise_and_the_issues_answers():
    assert {i for i, *_ in ANSWERS} == set(IDS)
    assert len(ANSWERS) >= 300


# --- the messages ---------------------------------------------------------------------------


def test_the_large_score_cases_fail_a_softmax_that_subtracts_the_mean_with_nan():
    passed, message = ex.evaluate("soft-lookup-1", _mean_softmax)
    assert not passed and "contains NaN" in message and "mean subtracted instead" in message
    for exercise_id in ("soft-lookup-2", "soft-lookup-3", "scaled-dot-product-1"):
        passed, message = ex.evaluate(
            exercise_id,
            dict(((i, label), fn) for i, label, fn, _ in HANDWRITTEN)[
                (exercise_id, "row mean subtracted")
            ],
        )
        assert not passed and "contains NaN" in message and "Likely mistake" not in message


@pytest.mark.parametrize("exercise_id", IDS)
def test_none_asks_whether_return_is_missing(exercise_id):
    passed, message = ex.evaluate(exercise_id, lambda *args: None)
    assert not passed and "did you forget `return`?" in message


def _first_result(exercise_id: str) -> Any:
    exercise = ex.EXERCISES[exercise_id]
    return exercise.reference(*exercise.cases()[0])


SCALAR_IDS = [
    i for i in IDS if not isinstance(_first_result(i), tuple) and np.ndim(_first_result(i)) == 0
]


def test_the_scalar_exercises_are_found():
    assert len(SCALAR_IDS) >= 9, SCALAR_IDS  # the nine of the issue, and any added since


@pytest.mark.parametrize("exercise_id", SCALAR_IDS)
def test_a_string_holding_the_right_number_fails_with_a_word_on_types(exercise_id):
    reference = ex.EXERCISES[exercise_id].reference
    for text in (lambda *a: str(reference(*a)), lambda *a: np.array(str(reference(*a)))):
        passed, message = ex.evaluate(exercise_id, text)
        assert not passed and "got text" in message and "not a string" in message, message


@pytest.mark.parametrize("exercise_id", IDS)
def test_complex_output_where_real_is_expected_fails(exercise_id):
    reference = ex.EXERCISES[exercise_id].reference
    passed, message = ex.evaluate(exercise_id, lambda *a: _map(reference(*a), lambda r: r + 0j))
    assert not passed and "complex" in message


def test_float32_layer_norm_is_told_to_compute_in_float64():
    passed, message = ex.evaluate("transformer-block-1", _layer_norm_torch(torch.float32))
    assert not passed and "float32" in message and "float64" in message
    assert "Likely mistake" not in message


def test_a_float32_answer_turned_back_to_float64_gets_a_conditional_word_on_float32():
    f32 = _layer_norm_torch(torch.float32)
    passed, message = ex.evaluate("transformer-block-1", lambda *a: f32(*a).astype(np.float64))
    assert not passed and "typical of a float32 computation" in message


def test_a_float32_module_on_float64_input_gets_the_dtype_error_explained():
    def mixed(x, gamma, beta):  # noqa: ANN001, ANN202
        return torch.nn.LayerNorm(x.shape[-1])(torch.from_numpy(x)).detach().numpy()

    passed, message = ex.evaluate("transformer-block-1", mixed)
    assert not passed and "float32 parameters" in message and "`.double()`" in message


def test_a_wrong_value_message_comes_in_stages():
    """What is wrong and where, then the likely mistake, then the hint: in one message, and as
    the stages of help give them (the hint only from the second, the recipe only in the third)."""
    passed, message = ex.evaluate("soft-lookup-1", _naive_softmax)
    case = message.index("test case")
    assert case < message.index("Likely mistake:") < message.index("Hint:")
    exercise = ex.EXERCISES["soft-lookup-1"]
    first, second, third = (
        ex.evaluate("soft-lookup-1", _naive_softmax, stage=stage)[1]
        for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE)
    )
    assert first.index("test case") < first.index("Likely mistake:") < first.index("ex.hint(")
    assert "Hint:" not in first
    assert second.index("Likely mistake:") < second.index(f"Hint: {exercise.nudge}")
    assert exercise.hint not in first + second and third == message


def test_a_mistake_is_not_named_on_nan_against_nan_alone():
    """The no-maximum and mean-subtracted softmaxes give NaN at the same entries of the
    thousands case; the case where only the no-maximum one overflows tells them apart."""
    for exercise_id in ("soft-lookup-2", "soft-lookup-3"):
        answers = {label: fn for i, label, fn, _ in HANDWRITTEN if i == exercise_id}
        assert named(exercise_id, answers["row mean subtracted"])[0] == UNNAMED
        assert NO_MAX in named(exercise_id, answers["no maximum subtracted"])[0]


@pytest.mark.parametrize("exercise_id", IDS)
def test_an_answer_that_corrupts_its_inputs_first_still_gets_a_fair_judgement(exercise_id):
    """Scribbling over the inputs *before* answering must not change the reference's answer
    or a later case's inputs: the wrong answer is judged wrong, the right one right."""
    reference = ex.EXERCISES[exercise_id].reference

    def right_then_scribble(*args):  # noqa: ANN202
        result = _map(reference(*args), np.copy)
        for a in args:
            if isinstance(a, np.ndarray) and a.size and a.dtype != bool:
                a[...] = 7
        return result

    assert ex.evaluate(exercise_id, right_then_scribble)[0]
    first = ex.EXERCISES[exercise_id].cases()[0]
    assert all(not isinstance(a, np.ndarray) or not (a == 7).all() for a in first if np.size(a) > 1)


# --- answers that never return --------------------------------------------------------------


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.2)


def _forever(*args):  # noqa: ANN202
    while True:
        pass


def _forever_swallowing(*args):  # noqa: ANN202
    while True:
        try:
            time.sleep(0.01)
        except Exception:  # noqa: BLE001, S112 - the learner's catch-all must not stop the alarm
            continue


@pytest.mark.parametrize("answer", [_forever, _forever_swallowing])
def test_an_endless_loop_is_stopped_with_a_message_and_no_alarm_is_left(short_limit, answer):
    handler = signal.getsignal(signal.SIGALRM)
    start = time.monotonic()
    passed, message = ex.evaluate("soft-lookup-1", answer)
    assert time.monotonic() - start < 2.0
    assert not passed and "still running after 0.2 s" in message and "endless loop" in message
    assert "Hint:" in message and "x (3,)" in message
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is handler


def test_an_earlier_timer_is_given_back(short_limit):
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        ex.evaluate("soft-lookup-1", _forever)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25.0 < left < 30.0 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_an_endless_loop_off_the_main_thread_is_left_behind_with_a_warning(short_limit):
    stop = threading.Event()

    def loop_until_stopped(*args):  # noqa: ANN202
        while not stop.is_set():
            time.sleep(0.01)

    outcome: list[tuple[bool, str]] = []
    worker = threading.Thread(
        target=lambda: outcome.append(ex.evaluate("soft-lookup-1", loop_until_stopped))
    )
    worker.start()
    worker.join(5.0)
    stop.set()
    passed, message = outcome[0]
    assert not passed and "still running after 0.2 s" in message
    assert "cannot stop a running function" in message and "restart the kernel" in message
    off_main = []
    checker = threading.Thread(
        target=lambda: off_main.append(ex.evaluate("soft-lookup-1", _softmax))
    )
    checker.start()
    checker.join(5.0)
    assert off_main[0][0], off_main  # a right answer passes off the main thread too


def test_a_slow_but_finite_answer_within_the_limit_passes():
    def slow(x):  # noqa: ANN001, ANN202
        time.sleep(0.01)
        return _softmax(x)

    assert ex.evaluate("soft-lookup-1", slow)[0]


def test_the_checker_never_raises_on_odd_outputs():
    class Weird:
        def __array__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204
            raise RuntimeError("no")

    for odd in (Weird(), {"a": 1}, object(), [[1, 2], [3]], b"0.5", "nan", np.array(["a"])):
        passed, message = ex.evaluate("soft-lookup-1", lambda x, odd=odd: odd)
        assert not passed and message.startswith("✗")
    passed, message = ex.evaluate("soft-lookup-1", lambda x: (_ for _ in ()).throw(SystemExit))
    assert not passed
