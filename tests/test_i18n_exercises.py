"""The exercise checker speaks Chinese (中文版, issue 18): every message of every exercise.

For each registered exercise, each message the checker can give — a pass, a catalogued mistake
at each stage of help, a stub, an error, a missing ``return``, the hints of ``ex.hint`` — comes
out in Chinese with no English prose left, and translating the English message (what the Chinese
website does with the English build's outputs) gives exactly the Chinese one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from course_attention import exercises as ex
from course_attention.exercises import core
from course_attention.i18n import language, using
from i18n_checks import assert_speaks_both

IDS = sorted(core.EXERCISES)
KINDS = ("pass", "mistakes", "stub", "raises", "none", "hints")


def _stub(*args):
    raise NotImplementedError


def _crash(*args):
    raise KeyError("oops")


def _misaligned(*args):  # a numpy error the checker explains ("What it means: …")
    raise ValueError("shapes (3,4) and (5,2) not aligned: 4 (dim 1) != 5 (dim 0)")


def _evaluated(exercise_id: str, fn: Callable, stage: int = core.RECIPE) -> Callable[[], str]:
    return lambda: ex.evaluate(exercise_id, fn, stage)[1]


def _printed(exercise_id: str, fn: Callable, stage: int) -> Callable[[], str]:
    """The message as the stream output of ``ex.check`` holds it, with the newline of ``print``
    (the website translates a cell's whole stream at once)."""
    return lambda: ex.evaluate(exercise_id, fn, stage)[1] + "\n"


def _asked_twice(exercise_id: str) -> str:
    """What ``ex.hint`` prints the first and the second time (the hint, then the recipe)."""
    ex.reset(exercise_id)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            ex.hint(exercise_id)
            ex.hint(exercise_id)
    finally:
        ex.reset(exercise_id)
    return out.getvalue()


def _builds(exercise_id: str, kind: str) -> list[tuple[str, Callable[[], str]]]:
    exercise = core.EXERCISES[exercise_id]
    if kind == "pass":
        return [("pass", _evaluated(exercise_id, exercise.reference))]
    if kind == "mistakes":
        return [(f"{m.name!r} at stage {stage}{how}", make(exercise_id, m.fn, stage))
                for m in exercise.mistakes
                for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE)
                for how, make in (("", _evaluated), (", printed", _printed))]
    if kind == "stub":
        return [("stub", _evaluated(exercise_id, _stub))]
    if kind == "raises":
        return [(f"{fn.__name__} at stage {stage}", _evaluated(exercise_id, fn, stage))
                for fn in (_crash, _misaligned)
                for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE)]
    if kind == "none":
        return [(f"None at stage {stage}", _evaluated(exercise_id, lambda *a: None, stage))
                for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE)]
    return [("hint twice", lambda: _asked_twice(exercise_id))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("exercise_id", IDS)
def test_the_checker_speaks_both(exercise_id, kind):
    for label, build in _builds(exercise_id, kind):
        try:
            assert_speaks_both(build)
        except AssertionError as error:
            raise AssertionError(f"{exercise_id}, {label}: {error}") from None
    assert language() == "en"


def test_a_few_messages_read_right_in_chinese():
    with using("zh"):
        passed, message = ex.evaluate("soft-lookup-1", core.EXERCISES["soft-lookup-1"].reference)
        assert passed and message == "✓ 数值稳定的 softmax：全部 6 个测试用例都正确。"
        assert ex.evaluate("soft-lookup-2", _stub)[1] == (
            "✗ 软查找：尚未实现。\n  把 `raise` 换成你的代码，再运行这个单元。"
        )
        no_scaling = core.EXERCISES["scaled-dot-product-1"].mistakes[0]
        first = ex.evaluate("scaled-dot-product-1", no_scaling.fn, core.WHAT_FAILED)[1]
        assert first.startswith(
            "✗ 矩阵形式的缩放点积注意力：第 1 个测试用例（共 5 个）：数值不同："
        )
        assert first.endswith(
            "\n  可能的错误：没有缩放：分数 Q Kᵀ 没有除以 √dₖ。"
            '\n  卡住了？运行 ex.hint("scaled-dot-product-1") 获取提示。'
        )
        crashed = ex.evaluate("soft-lookup-2", _crash, core.WHAT_FAILED)[1]
        assert crashed.startswith(
            "✗ 软查找：在第 1 个测试用例（共 5 个）上，你的函数抛出了 KeyError: 'oops'\n"
            "  本测试用例的输入：q (4,), K (3, 4), V (3, 4)。\n"
        )
    assert language() == "en"


def test_the_first_hint_taken_from_the_recipe_is_a_chinese_sentence():
    """Without a nudge, stage 2 shows the recipe's first sentence, in either language."""
    exercise = dataclasses.replace(core.EXERCISES["soft-lookup-1"], nudge="")
    assert exercise.first_hint == (
        "exponentiate, then divide by the sum along the last axis (keepdims=True)."
    )
    with using("zh"):
        assert exercise.first_hint == "先取指数，再除以沿最后一个轴的和（keepdims=True）。"
        clause = dataclasses.replace(core.EXERCISES["soft-lookup-3"], nudge="")
        assert clause.first_hint == "在 softmax 之前把分数除以温度（而不是在之后除权重）。"
    assert language() == "en"


def test_an_unknown_exercise_is_named_in_chinese_too():
    assert_speaks_both(lambda: ex.evaluate("no-such-exercise", _stub)[1])
    assert_speaks_both(lambda: _asked_twice("no-such-exercise"))
    with using("zh"):
        assert ex.evaluate("no-such-exercise", _stub)[1].startswith(
            "未知的练习 'no-such-exercise'；已有的练习：["
        )
    assert language() == "en"


def _probe(reference: Callable, case: tuple, **changes) -> core.Exercise:
    """An exercise with the words of soft-lookup-1 (catalogue entries) and our own answer."""
    words = core.EXERCISES["soft-lookup-1"]
    return dataclasses.replace(words, id="i18n-probe", reference=reference,
                               cases=lambda: [case], **{"mistakes": (), **changes})


def _slow(x):
    time.sleep(0.5)  # past the time limit set below, without keeping a core busy
    return x


def _raising(text: str) -> Callable:
    def fn(*args):
        raise ValueError(text)
    return fn


_MATRIX = (np.arange(6.0).reshape(2, 3),)
_ARRAY_ANSWERS = {
    "float32": lambda x: (2 * x + 1e-3).astype(np.float32),
    "a tiny difference": lambda x: 2 * x + 1e-4 * np.arange(6).reshape(2, 3),
    "values differ": lambda x: 3 * x,
    "wrong shape": lambda x: x.ravel(),
    "hint by shape": lambda x: x[0],
    "axes swapped": lambda x: 2 * x.T,
    "text": lambda x: "[[0, 2, 4], [6, 8, 10]]",
    "complex": lambda x: 2 * x + 0j,
    "NaN": lambda x: np.where(x > 4, np.nan, 2 * x),
    "an object": lambda x: object(),
    "a timeout": _slow,
    **{f"raises {needle!r}": _raising(needle) for needle in (
        "operands could not be broadcast together", "cannot reshape array of size 6",
        "index out of range", "expected scalar type Double but found Float")},
}


@pytest.mark.parametrize("answer", sorted(_ARRAY_ANSWERS))
def test_every_message_of_the_checker_speaks_both(answer, monkeypatch):
    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.2)
    monkeypatch.setitem(core.EXERCISES, "i18n-probe", _probe(
        lambda x: 2 * x, _MATRIX, hints_by_shape=core.EXERCISES["soft-lookup-2"].hints_by_shape
        | {"(3,)": core.EXERCISES["soft-lookup-2"].hints_by_shape["()"]}))
    for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE):
        assert_speaks_both(_evaluated("i18n-probe", _ARRAY_ANSWERS[answer], stage))
        assert_speaks_both(_printed("i18n-probe", _ARRAY_ANSWERS[answer], stage))
    assert language() == "en"


def test_a_timeout_off_the_main_thread_speaks_both(monkeypatch):
    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.2)
    monkeypatch.setitem(core.EXERCISES, "i18n-probe", _probe(lambda x: x, _MATRIX))
    messages = []
    worker = threading.Thread(
        target=lambda: messages.append(ex.evaluate("i18n-probe", _slow)[1]))
    worker.start()
    worker.join()
    with using("zh"):
        worker = threading.Thread(
            target=lambda: messages.append(ex.evaluate("i18n-probe", _slow)[1]))
        worker.start()
        worker.join()
    english, chinese = messages
    assert "Kernel → Restart" in english and "重启内核" in chinese
    assert_speaks_both(lambda: english if language() == "en" else chinese)


_TUPLE_ANSWERS = {
    "an array": lambda x: np.zeros(2),
    "a short tuple": lambda x: (x,),
    "a short list": lambda x: [x],
    "a wrong part": lambda x: (x + 1, x > 2),
    "a mask as numbers": lambda x: (x, (x > 2).astype(float)),
    "None": lambda x: None,
    "None in a tuple": lambda x: (None, None),
    "a failing reference": None,
}


@pytest.mark.parametrize("answer", sorted(_TUPLE_ANSWERS))
def test_every_message_about_a_tuple_speaks_both(answer, monkeypatch):
    def reference(x):
        if answer == "a failing reference":
            raise RuntimeError("the reference broke")
        return x, x > 2

    monkeypatch.setitem(core.EXERCISES, "i18n-probe", _probe(reference, _MATRIX))
    fn = _TUPLE_ANSWERS[answer] or (lambda x: (x, x > 2))
    for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE):
        assert_speaks_both(_evaluated("i18n-probe", fn, stage))
        assert_speaks_both(_printed("i18n-probe", fn, stage))
    assert language() == "en"


def test_a_named_mistake_drops_the_float32_guess_in_chinese_too(monkeypatch):
    tiny = _ARRAY_ANSWERS["a tiny difference"]
    name = core.EXERCISES["soft-lookup-1"].mistakes[0].name
    monkeypatch.setitem(core.EXERCISES, "i18n-probe", _probe(
        lambda x: 2 * x, _MATRIX, mistakes=(core.Mistake(name, tiny),)))
    assert_speaks_both(_evaluated("i18n-probe", tiny, core.WHAT_FAILED))
    with using("zh"):
        message = ex.evaluate("i18n-probe", tiny, core.WHAT_FAILED)[1]
    assert "float32" not in message and "\n  可能的错误：每一行都减去了同一个全局最大值" in message
