"""What the checker tells a learner about a wrong answer (issue 24, items 27–30).

27. a failure shows the failing case's inputs: small arrays in full, a large one by its shape and
    the first numbers of its first row, written as ``np.array(…)`` that rebuilds them;
28. wrong numbers that no catalogued mistake explains say so, and an answer that two catalogued
    mistakes explain (the same numbers on every case) names both;
29. the help is aimed at the difficulty the answer shows: ``np.outer`` on a batch (scaled-dot-
    product-2), numpy's ``transpose(1, 2)``, ``(~mask) * -np.inf`` (0 · (−∞) = NaN);
30. transformer-block-2's missing 4·d_model names the layer norms and the attention biases;
    encoder-decoder-1 names ``np.roll(labels, 1)`` without an axis.

Each test feeds a wrong answer to the checker and asserts what it prints, in English and (for
the new sentences) in Chinese; the checker still never raises and still copies the inputs.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time

import numpy as np
import pytest
import torch
from _checker import asked as _asked
from _checker import checked as _checked
from _checker import fresh_session  # noqa: F401 - autouse: every test starts a fresh session

from course_attention import exercises as ex
from course_attention import numpy_ref as ref
from course_attention.exercises import core, inputs
from course_attention.i18n import language, using
from i18n_checks import assert_speaks_both

IDS = sorted(ex.EXERCISES)


def _off_by_a_bit(exercise_id: str):
    reference = ex.EXERCISES[exercise_id].reference

    def answer(*args):
        result = reference(*args)
        if isinstance(result, tuple):
            return tuple(np.asarray(r, dtype=float) * 1.1 + 0.1 for r in result)
        return np.asarray(result, dtype=float) * 1.1 + 0.1

    return answer


def _wrong_on(exercise_id: str, case: int):
    """Right on every case but ``case`` (1-based), where it is off by 10 % and 0.1."""
    exercise = ex.EXERCISES[exercise_id]
    calls = itertools.count(1)  # the checker calls the answer once per case, in order
    off = _off_by_a_bit(exercise_id)
    return lambda *a: off(*a) if next(calls) == case else exercise.reference(*a)


def _shown_inputs(message: str) -> dict[str, np.ndarray]:
    """The arrays a message shows, rebuilt by running the code it shows (``x = np.array(…)``,
    ``K[0, 0, :6] = np.array(…)``), by the text left of ``=``."""
    shown, block = {}, []
    for line in message.split("\n") + [""]:
        if line.startswith("    ") and (block or " = np.array(" in line):
            block.append(line.strip())
            if line.rstrip().endswith(")") and "".join(block).count("(") == "".join(
                block
            ).count(")"):
                name, code = " ".join(block).split(" = ", 1)
                shown[name] = eval(code, {"np": np})  # noqa: S307 - the checker's own output
                block = []
    return shown


# --- 27: the failing case's inputs ------------------------------------------------------------


def test_a_wrong_value_shows_the_failing_cases_small_inputs_in_full(capsys):
    """The learner of the issue had to guess that the failing case was ``[0.6, 0.3, 0.1]``."""
    cases = ex.EXERCISES["soft-lookup-1"].cases()
    first = _checked(capsys, "soft-lookup-1", _wrong_on("soft-lookup-1", 3))
    assert first.startswith(f"✗ a stable softmax: test case 3 of {len(cases)}: values differ")
    assert "\n  This test case's inputs: x (3,).\n    x = np.array([" in first
    shown = _shown_inputs(first)
    assert list(shown) == ["x"]
    np.testing.assert_allclose(shown["x"], cases[2][0], rtol=1e-3)


def test_two_dimensional_inputs_are_shown_row_by_row_and_masks_as_booleans():
    _, message = ex.evaluate("masking-2", _wrong_on("masking-2", 5), core.WHAT_FAILED)
    scores, mask = ex.EXERCISES["masking-2"].cases()[4]
    assert (
        "\n    scores = np.array([[1000.0, 999.0, 998.0],"
        "\n                       [0.0, 1.0, -1.0]])"
        "\n    mask = np.array([[1, 1, 0],"
        "\n                     [1, 0, 1]], dtype=bool)"
    ) in message
    shown = _shown_inputs(message)
    assert shown["mask"].dtype == bool and (shown["mask"] == mask).all()
    np.testing.assert_array_equal(shown["scores"], scores)


def test_a_large_input_is_shown_by_its_shape_and_its_first_numbers():
    exercise = ex.EXERCISES["scaled-dot-product-1"]
    Q, K, V = exercise.cases()[3]  # Q (2, 3, 2, 64), K (2, 3, 5, 64), V (5, 4)
    _, message = ex.evaluate("scaled-dot-product-1", _wrong_on("scaled-dot-product-1", 4))
    assert "This test case's inputs: Q (2, 3, 2, 64), K (2, 3, 5, 64), V (5, 4)." in message
    shown = _shown_inputs(message)
    assert list(shown) == ["Q[0, 0, 0, :6]", "K[0, 0, 0, :6]", "V"]
    np.testing.assert_allclose(shown["Q[0, 0, 0, :6]"], Q[0, 0, 0, :6], rtol=1e-3)
    np.testing.assert_allclose(shown["K[0, 0, 0, :6]"], K[0, 0, 0, :6], rtol=1e-3)
    np.testing.assert_allclose(shown["V"], V, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("exercise_id", IDS)
def test_every_exercise_shows_inputs_that_rebuild_the_failing_case(exercise_id):
    """For every exercise and every case: the shown arrays are the case's (a small one whole, a
    large one's first numbers), to the four digits shown, and the numbers are on the first line."""
    exercise = ex.EXERCISES[exercise_id]
    for n, args in enumerate(exercise.cases(), start=1):
        _, message = ex.evaluate(exercise_id, _wrong_on(exercise_id, n), core.WHAT_FAILED)
        assert f"test case {n} of" in message and "This test case's inputs: " in message
        shown = _shown_inputs(message)
        for name, value in zip(exercise.argument_names, args, strict=False):
            if not hasattr(value, "shape") or np.ndim(value) == 0:
                assert f"{name} = {value!r}" in message
                continue
            value = np.asarray(value)
            if value.size <= inputs.SMALL_INPUT:
                got, want = shown[name], value
            else:
                (label,) = [k for k in shown if k.startswith(f"{name}[")]
                got = shown[label]
                want = eval(label.replace(name, "value", 1), {"value": value})  # noqa: S307
            assert got.shape == want.shape and got.dtype.kind == want.dtype.kind, (n, name)
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"{n} {name}")


def test_raising_and_endless_answers_show_the_values_too(monkeypatch):
    _, raised = ex.evaluate("soft-lookup-1", lambda x: x @ np.ones((7, 7)), core.WHAT_FAILED)
    assert "raised ValueError" in raised and "\n    x = np.array([" in raised
    monkeypatch.setattr(core, "TIME_LIMIT_S", 0.2)

    def forever(x):
        while True:
            time.sleep(0.01)

    _, stopped = ex.evaluate("soft-lookup-1", forever, core.WHAT_FAILED)
    assert "still running after 0.2 s" in stopped and "\n    x = np.array([" in stopped


def test_the_inputs_shown_are_the_cases_not_what_the_answer_scribbled_over_them():
    cases = ex.EXERCISES["soft-lookup-1"].cases()

    def scribble_then_fail(x):
        x[...] = 7.0
        return np.zeros_like(x)

    _, message = ex.evaluate("soft-lookup-1", scribble_then_fail)
    np.testing.assert_allclose(_shown_inputs(message)["x"], cases[0][0], rtol=1e-3)
    assert "7.0" not in message.split("inputs:")[1].split("\n  No known")[0]


def test_odd_numbers_and_odd_inputs_are_shown_without_raising(monkeypatch):
    words = ex.EXERCISES["soft-lookup-1"]
    odd = (
        np.array([-np.inf, np.nan, np.inf, 1e-7, 12345.678, 3.0]),
        np.arange(30).reshape(5, 6),
        np.array([1 + 2j, 3j]),
        torch.arange(4.0),
        object(),
        "text",
    )

    def reference(a, b, c, d, e, f):
        return np.zeros(2)

    probe = dataclasses.replace(
        words, id="feedback-probe", reference=reference, cases=lambda: [odd], mistakes=()
    )
    monkeypatch.setitem(core.EXERCISES, "feedback-probe", probe)
    passed, message = ex.evaluate("feedback-probe", lambda *a: np.ones(2))
    assert not passed
    assert "    a = np.array([-np.inf, np.nan, np.inf, 1e-07, 1.235e+04, 3.0])" in message
    assert "    b[0] = np.array([0, 1, 2, 3, 4, 5])" in message  # a row of 6: all of it
    assert "    d = np.array([0.0, 1.0, 2.0, 3.0])" in message
    assert "c = np.array" not in message  # complex inputs: their shape only
    assert "e = <object object" in message and "f = 'text'" in message
    shown = _shown_inputs(message)
    assert np.isneginf(shown["a"][0]) and np.isnan(shown["a"][1])


# --- 28: when no single mistake fits ----------------------------------------------------------


def test_wrong_numbers_that_match_no_known_mistake_say_so(capsys):
    n = len(ex.EXERCISES["soft-lookup-1"].mistakes)
    first = _checked(capsys, "soft-lookup-1", lambda x: np.full_like(x, 0.25))
    assert "Likely mistake" not in first
    assert (
        f"\n  No known mistake fits: your answer matches none of the {n} mistakes catalogued for "
        "this exercise. Test case 1 is the first it fails: run your function on its inputs "
        "(above) and check each intermediate result."
        '\n  Stuck? Run ex.hint("soft-lookup-1") for a hint.'
    ) in first
    later = _checked(capsys, "scaled-dot-product-3", lambda d_k, std_q, std_k: d_k + 1.0)
    assert "Test case 1 is the first it fails" in later and "values differ" in later


def test_no_mistake_line_names_the_first_failing_case_and_comes_after_its_inputs():
    _, message = ex.evaluate("soft-lookup-1", _wrong_on("soft-lookup-1", 4))
    assert "Test case 4 is the first it fails" in message
    assert message.index("This test case's inputs") < message.index("No known mistake fits")


@pytest.mark.parametrize(
    ("label", "answer"),
    [
        ("None", lambda x: None),
        ("a wrong shape", lambda x: np.zeros(2)),
        ("raises", lambda x: 1 / 0),
        ("a catalogued mistake", lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)),
    ],
)
def test_the_no_mistake_line_is_only_for_wrong_numbers(label, answer):
    passed, message = ex.evaluate("soft-lookup-1", answer)
    assert not passed and "No known mistake fits" not in message, label


def test_an_exercise_without_a_catalogue_has_no_no_mistake_line(monkeypatch):
    probe = dataclasses.replace(ex.EXERCISES["soft-lookup-1"], id="feedback-probe", mistakes=())
    monkeypatch.setitem(core.EXERCISES, "feedback-probe", probe)
    passed, message = ex.evaluate("feedback-probe", lambda x: np.zeros_like(x))
    assert not passed and "values differ" in message and "No known mistake" not in message


def test_an_answer_two_mistakes_explain_names_both(capsys):
    """transformer-block-2 (item 30): 4·d_model missing is the two layer norms' γ and β or the
    four attention biases — the cases cannot tell them apart."""
    no_norms = lambda d, f: 4 * d * d + 2 * d * f + f + d + 4 * d  # noqa: E731
    first = _checked(capsys, "transformer-block-2", no_norms)
    assert (
        "\n  Likely mistake: the two layer norms left out: each has γ and β of shape (d_model,), "
        "4·d_model in all."
        "\n  Or, just as likely (it gives the same numbers on every test case): the biases of the "
        "four attention projections left out: W_q, W_k, W_v and W_o each have a bias of shape "
        "(d_model,), 4·d_model in all."
        '\n  Stuck? Run ex.hint("transformer-block-2") for a hint.'
    ) in first
    assert "No known mistake fits" not in first
    with using("zh"):
        chinese = ex.evaluate("transformer-block-2", no_norms)[1]
    assert "\n  可能的错误：漏掉了两个层归一化" in chinese
    twin = "或者，可能性相同（它在每个测试用例上都给出同样的数值）：漏掉了四个注意力投影的偏置"
    assert f"\n  {twin}" in chinese


def test_two_matching_mistakes_give_no_aimed_hint(monkeypatch):
    """Of two mistakes that fit, neither one's own hint is shown: the exercise's is."""
    exercise = ex.EXERCISES["soft-lookup-1"]
    naive = exercise.mistakes[0]
    twins = (
        core.Mistake("first twin", naive.fn, hint="aimed at the first"),
        core.Mistake("second twin", naive.fn, hint="aimed at the second"),
    )
    monkeypatch.setitem(
        core.EXERCISES, "feedback-probe",
        dataclasses.replace(exercise, id="feedback-probe", mistakes=twins),
    )
    _, message = ex.evaluate("feedback-probe", naive.fn, core.HINT)
    assert "Likely mistake: first twin." in message and "): second twin." in message
    assert f"Hint: {exercise.nudge}" in message and "aimed at" not in message


# --- 29: help aimed at the difficulty the answer shows ----------------------------------------


def _outer_jacobian(p):
    return np.diag(p) - np.outer(p, p)  # right for one vector; raises on the batch (3, 6)


BATCH_HINT = (
    "diag(p) − p pᵀ is right for one weight vector; what breaks is the batch: `np.outer` and "
    "`np.diag` handle one 1-D vector only."
)


def test_np_outer_on_a_batch_is_explained_at_once_and_aimed_at_by_the_hint(capsys):
    exercise = ex.EXERCISES["scaled-dot-product-2"]
    first = _checked(capsys, "scaled-dot-product-2", _outer_jacobian)
    assert "on test case 4 of 4 your function raised ValueError: operands could not be broadcast" \
        in first
    assert "\n  What it means: `np.outer` flattens its inputs: on this case's batch p (3, 6) it " \
        "builds the (18, 18) matrix" in first
    assert "keepdims" not in first  # not the general word on broadcasting
    assert "\n    p = np.array([[" in first  # the batch itself
    second = _checked(capsys, "scaled-dot-product-2", _outer_jacobian)
    assert f"\n  Hint: {BATCH_HINT}" in second and exercise.nudge not in second
    third = _checked(capsys, "scaled-dot-product-2", _outer_jacobian)
    assert third.endswith(f"\n  Hint: {exercise.hint}")  # the recipe stays the exercise's


def test_the_hint_asked_for_after_a_failure_is_aimed_at_it(capsys):
    exercise = ex.EXERCISES["scaled-dot-product-2"]
    _checked(capsys, "scaled-dot-product-2", _outer_jacobian)
    assert _asked(capsys, "scaled-dot-product-2").startswith(
        f"Hint for {exercise.title}: {BATCH_HINT}"
    )
    assert _asked(capsys, "scaled-dot-product-2") == f"Recipe for {exercise.title}: {exercise.hint}"
    ex.reset()
    _checked(capsys, "scaled-dot-product-2", _outer_jacobian)
    _checked(capsys, "scaled-dot-product-2", exercise.reference)  # a pass forgets the aim
    assert _asked(capsys, "scaled-dot-product-2") == (
        f"Hint for {exercise.title}: {exercise.nudge}"
        '\n  Still stuck? Run ex.hint("scaled-dot-product-2") again for the recipe.'
    )


def test_np_outer_variants_get_the_same_aimed_help():
    exercise = ex.EXERCISES["scaled-dot-product-2"]

    def torch_outer(p):
        t = torch.from_numpy(p)
        return torch.diag_embed(t) - torch.outer(t, t)

    def flat_outer(p):
        return np.diagflat(p) - np.outer(p, p)  # (18, 18) on the batch: the catalogued mistake

    _, raised = ex.evaluate("scaled-dot-product-2", torch_outer, core.HINT)
    assert "outer: Expected 1-D" in raised and "What it means: `np.outer` flattens" in raised
    _, named = ex.evaluate("scaled-dot-product-2", flat_outer, core.HINT)
    assert "Likely mistake: `np.outer` on a batch of weight vectors" in named
    for message in (raised, named):
        assert f"Hint: {BATCH_HINT}" in message and exercise.nudge not in message


TRANSPOSE = "What it means: numpy's `transpose` takes the new order of *every* axis"


@pytest.mark.parametrize(
    ("exercise_id", "answer"),
    [
        (
            "multi-head-1",
            lambda X, h: X.reshape(X.shape[0], X.shape[1], h, -1).transpose(1, 2),
        ),
        (
            "multi-head-2",
            lambda H: H.transpose(1, 2).reshape(H.shape[0], H.shape[2], -1),
        ),
        (
            "scaled-dot-product-1",
            lambda Q, K, V: ref.softmax(Q @ K.transpose(-1, -2) / np.sqrt(Q.shape[-1])) @ V
            if K.ndim == 2 else ref.softmax(Q @ K.transpose(1, 2)) @ V,
        ),
    ],
)
def test_numpys_transpose_1_2_gets_the_numpy_versus_torch_explanation(exercise_id, answer):
    _, message = ex.evaluate(exercise_id, answer, core.WHAT_FAILED)
    assert "ValueError: axes don't match array" in message and TRANSPOSE in message
    assert "torch's `x.transpose(1, 2)` swaps two axes" in message
    assert "`np.swapaxes(x, 1, 2)`" in message


def _own_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


NAN_NAME = "at a kept key that is 0 · (−∞), which is NaN, not 0"
NAN_HINT = "0 · (−∞) is NaN, not 0: no product with −∞ leaves a kept score unchanged."


@pytest.mark.parametrize("exercise_id", ["scaled-dot-product-4", "masking-2"])
@pytest.mark.parametrize(
    ("label", "answer"),
    [
        ("own softmax", lambda s, m: _own_softmax(s + (~m) * -np.inf)),
        ("mask times scores", lambda s, m: _own_softmax(s * m + (~m) * -np.inf)),
        ("torch.softmax", lambda s, m: torch.softmax(torch.from_numpy(s + (~m) * -np.inf), -1)),
    ],
)
def test_a_mask_multiplied_by_minus_infinity_is_named_with_0_times_inf(exercise_id, label, answer):
    exercise = ex.EXERCISES[exercise_id]
    _, first = ex.evaluate(exercise_id, answer, core.WHAT_FAILED)
    assert "your result contains NaN (first at index (0, 0))" in first, label
    assert "Likely mistake: the" in first and NAN_NAME in first, label
    _, second = ex.evaluate(exercise_id, answer, core.HINT)
    assert f"Hint: {NAN_HINT}" in second and exercise.nudge not in second, label


@pytest.mark.parametrize("exercise_id", ["scaled-dot-product-4", "masking-2"])
def test_the_nan_the_courses_softmax_refuses_is_explained_with_0_times_inf(exercise_id):
    _, first = ex.evaluate(exercise_id, lambda s, m: ref.softmax(s + (~m) * -np.inf), 1)
    assert "raised ValueError: x must be finite; found nan" in first
    assert "\n  What it means: NaN reached the softmax. A common source here is a product with " \
        "−∞: 0 · (−∞) is NaN, not 0" in first
    _, second = ex.evaluate(exercise_id, lambda s, m: ref.softmax(s + (~m) * -np.inf), 2)
    assert f"Hint: {NAN_HINT}" in second


def test_a_nan_from_elsewhere_is_not_blamed_on_the_mask():
    """Only NaN everywhere, on every case, is the 0 · (−∞) mistake: NaN on the large cases
    alone is the catalogued overflow."""
    def no_max(s, m):
        e = np.exp(s + np.where(m, 0.0, -np.inf))
        return e / e.sum(axis=-1, keepdims=True)

    _, message = ex.evaluate("scaled-dot-product-4", no_max)
    assert "no maximum subtracted" in message and NAN_NAME not in message


def test_an_error_hint_with_a_broken_pattern_never_raises(monkeypatch):
    exercise = ex.EXERCISES["soft-lookup-1"]
    broken = core.ErrorHint("(unclosed", "never shown", "never shown either")
    monkeypatch.setitem(
        core.EXERCISES, "feedback-probe",
        dataclasses.replace(exercise, id="feedback-probe", error_hints=(broken,)),
    )
    passed, message = ex.evaluate("feedback-probe", lambda x: 1 / 0, core.HINT)
    assert not passed and "ZeroDivisionError" in message and "never shown" not in message
    assert f"Hint: {exercise.nudge}" in message


# --- 30: two gaps of the catalogue ------------------------------------------------------------


def test_np_roll_without_an_axis_is_named(capsys):
    first = _checked(capsys, "encoder-decoder-1", lambda labels, bos_id: np.roll(labels, 1))
    assert "\n  Likely mistake: `np.roll(labels, 1)` without `axis`: numpy rolls the flattened " \
        "array, so the last label of each row moves to the front of the next row" in first
    assert "\n    labels = np.array([[8, 4, 7, 2]])" in first


def test_np_roll_without_an_axis_then_bos_in_column_0_is_right():
    def rolled(labels, bos_id):
        out = np.roll(labels, 1)
        out[:, 0] = bos_id
        return out

    assert ex.evaluate("encoder-decoder-1", rolled)[0]


def test_np_roll_along_the_rows_keeps_its_own_name():
    _, message = ex.evaluate("encoder-decoder-1", lambda labels, b: np.roll(labels, 1, axis=1))
    assert "Likely mistake: `np.roll(labels, 1, axis=1)`: the last label wraps around" in message
    assert "without `axis`" not in message


# --- in Chinese ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exercise_id", "make"),
    [
        ("soft-lookup-1", lambda: lambda x: np.full_like(x, 0.25)),
        ("masking-2", lambda: lambda s, m: _own_softmax(s + (~m) * -np.inf)),
        ("masking-2", lambda: lambda s, m: ref.softmax(s + (~m) * -np.inf)),
        ("scaled-dot-product-4", lambda: lambda s, m: ref.softmax(s + (~m) * -np.inf)),
        ("scaled-dot-product-2", lambda: _outer_jacobian),
        (
            "multi-head-1",
            lambda: lambda X, h: X.reshape(X.shape[0], X.shape[1], h, -1).transpose(1, 2),
        ),
        ("transformer-block-2", lambda: lambda d, f: 4 * d * d + 2 * d * f + f + 5 * d),
        ("encoder-decoder-1", lambda: lambda labels, bos_id: np.roll(labels, 1)),
        ("scaled-dot-product-1", lambda: _wrong_on("scaled-dot-product-1", 4)),  # large inputs
        ("masking-2", lambda: _wrong_on("masking-2", 2)),  # a mask shown, with a hidden row
    ],
)
def test_the_new_messages_speak_both(exercise_id, make):
    """Chinese, and the English translated (what the Chinese book shows), give one message; the
    shown inputs are data, left as they are."""
    for stage in (core.WHAT_FAILED, core.HINT, core.RECIPE):
        assert_speaks_both(lambda stage=stage: ex.evaluate(exercise_id, make(), stage)[1])
        assert_speaks_both(lambda stage=stage: ex.evaluate(exercise_id, make(), stage)[1] + "\n")
    assert language() == "en"


def test_a_few_new_messages_read_right_in_chinese(capsys):
    with using("zh"):
        _, none = ex.evaluate("soft-lookup-1", lambda x: np.full_like(x, 0.25), 1)
        assert "\n  本测试用例的输入：x (3,)。\n    x = np.array([" in none
        assert re.search(
            r"\n  没有哪个已知错误与之相符：你的答案与本练习收录的 \d+ 个错误都不一致。"
            r"第 1 个测试用例是它第一个没通过的", none
        )
        _, outer = ex.evaluate("scaled-dot-product-2", _outer_jacobian, 2)
        assert "\n  含义：`np.outer` 会把输入展平" in outer
        assert "\n  提示：diag(p) − p pᵀ 对单个权重向量是对的；出问题的是批量" in outer
        _, transpose = ex.evaluate(
            "multi-head-2", lambda H: H.transpose(1, 2).reshape(H.shape[0], H.shape[2], -1), 1
        )
        assert "\n  含义：numpy 的 `transpose` 要的是*所有*轴的新顺序" in transpose
    assert language() == "en"
