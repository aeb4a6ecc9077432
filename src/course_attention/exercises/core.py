"""The exercise checker shared by every chapter: ``check(exercise_id, fn)`` prints ✓ or a hint.

Introduced in chapter 1. A checker never raises and never hangs, so a book that still holds the
exercise stubs executes cleanly. For every test case it gives the learner's function and the
reference their own copy of the inputs (an in-place answer cannot change what the reference or a
later case sees), stops a function still running after ``TIME_LIMIT_S`` seconds, and compares
the results within a tolerance. It explains a missing ``return``, text, complex numbers, float32
and a shape or dtype mismatch before a value mismatch, and — the point of checking — compares a
wrong answer with a short catalogue of known mistakes (:class:`Mistake`). It names a mistake only
when the learner's output agrees with it on *every* test case (a case where the mistake happens to
give the right answer must be right too) and it is wrong on at least one: one degenerate case
never decides. When two catalogued mistakes give the very same numbers on every case it names
both, and when the numbers are wrong and no mistake fits it says so (issue 24). When the
learner's code raises, it shows the error and what it means: first the exercise's own reading of
it (:class:`ErrorHint`, e.g. ``np.outer`` on a batch), else what the common numpy and torch
errors mean. Every failure shows the failing case's inputs: their shapes, small arrays in full
and of a larger one its first numbers, written as ``np.array(…)`` to paste into a cell.

Help comes in stages, remembered per exercise for the session (issue 17: a recipe handed over on
the first failure makes the second try mechanical):

1. the first failure shows what failed — the case and its inputs, what differs or what was
   raised, and the catalogued mistake's name when one matches — and says how to get a hint;
2. the second failure, or ``hint(exercise_id)``, adds the hint: where to look — aimed at the
   difficulty the answer shows when the matched mistake or error has a hint of its own
   (:attr:`Mistake.hint`, :attr:`ErrorHint.hint`: ``np.outer`` is 1-D), else the exercise's
   (:attr:`Exercise.first_hint`);
3. the third failure, or a second ``hint``, gives the recipe (:attr:`Exercise.hint`), and the
   message is then the complete one that :func:`evaluate` returns.

A stub that still raises ``NotImplementedError`` is not a failure, a pass changes no stage (a
hint once given stays given), and :func:`reset` or a fresh session starts over.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..i18n import N_, _
from .inputs import _as_array, _error_hint, _explain_error, _inputs_line
from .limits import _Run, _run_limited

__all__ = [
    "Mistake",
    "ErrorHint",
    "Exercise",
    "EXERCISES",
    "TIME_LIMIT_S",
    "WHAT_FAILED",
    "HINT",
    "RECIPE",
    "register",
    "evaluate",
    "check",
    "hint",
    "reset",
    "rng",
]

TIME_LIMIT_S = 5.0
"""Seconds one call of the learner's function may run before the checker stops it."""


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: what the learner probably did, and a function that does exactly that.

    ``name`` completes the sentence "Likely mistake: …", e.g. ``"softmax over the queries
    (axis 0) instead of the keys (axis -1)"``; ``fn`` takes the exercise's arguments. ``hint``,
    when given, is the hint (stage 2) for an answer that makes this mistake, in place of the
    exercise's ``nudge``, which may aim elsewhere.
    """

    name: str
    fn: Callable[..., Any]
    hint: str = ""


@dataclass(frozen=True)
class ErrorHint:
    """What an error of the learner's code means in one exercise, found by its text.

    ``pattern`` is a regular expression searched in ``"ValueError: <message>"``; ``meaning``
    completes "What it means: …" and comes before the general meanings of numpy and torch errors;
    ``hint``, when given, is the hint (stage 2) in place of the exercise's ``nudge``.
    """

    pattern: str
    meaning: str
    hint: str = ""


WHAT_FAILED, HINT, RECIPE = 1, 2, 3
"""The stages of help: what failed (and the likely mistake), then the hint, then the recipe."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: reference solution, input cases, hints and catalogue of known mistakes.

    ``hint`` is the recipe, the last stage of help: how to compute the answer, step by step.
    ``nudge`` is the hint that comes before it: where to look, without the steps (when it is
    empty, :attr:`first_hint` takes the recipe's first sentence). ``difficulty`` is 1–3 stars and
    ``minutes`` a time estimate; the chapter shows both in the exercise's title (:attr:`badge`),
    and a test checks that they agree. The texts a learner reads (``title``, ``hint``, ``nudge``,
    each mistake's ``name``, the values of ``hints_by_shape``) are marked with ``N_`` where the
    chapter module defines them; the checker shows them in the current language (中文版).
    ``error_hints`` read the errors this exercise's wrong answers typically raise
    (:class:`ErrorHint`).
    """

    id: str
    title: str
    reference: Callable[..., Any]
    cases: Callable[[], Sequence[tuple]]
    hint: str
    difficulty: int = 1
    minutes: int = 5
    mistakes: tuple[Mistake, ...] = ()
    atol: float = 1e-6
    hints_by_shape: dict[str, str] = field(default_factory=dict)
    nudge: str = ""
    error_hints: tuple[ErrorHint, ...] = ()

    def __post_init__(self) -> None:
        if self.difficulty not in (1, 2, 3):
            raise ValueError(f"difficulty must be 1, 2 or 3 stars; got {self.difficulty}")
        if self.minutes < 1:
            raise ValueError(f"minutes must be ≥ 1; got {self.minutes}")

    @property
    def badge(self) -> str:
        """The difficulty (stars) and time the chapter shows, e.g. ``"★★☆ · ~10 min"``."""
        return "★" * self.difficulty + "☆" * (3 - self.difficulty) + f" · ~{self.minutes} min"

    @property
    def first_hint(self) -> str:
        """The hint of stage 2 (``nudge``, or else the recipe's first sentence or clause), in
        the current language."""
        if self.nudge:
            return _(self.nudge)
        recipe = _(self.hint).strip()
        if _CJK.search(recipe):  # Chinese: sentences end at 。, clauses at ； or ：
            sentences = [s for s in re.split(r"(?<=[。！？])", recipe) if s.strip()]
            if len(sentences) > 1 and len(sentences[0]) >= 8:
                return sentences[0].strip()
            clause = re.split(r"[；：]", recipe, maxsplit=1)[0].strip()
            if clause != recipe and len(clause) >= 8:
                return clause + "。"
        else:
            sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(`])", recipe)
            if len(sentences) > 1 and len(sentences[0].split()) >= 4:
                return sentences[0]
            clause = re.split(r"[:;]\s", recipe, maxsplit=1)[0]
            if clause != recipe and len(clause.split()) >= 4:
                return clause + "."
        return _(
            "print the shape and a few values of every intermediate result on the failing case, "
            "and compare them with the chapter's teaching copy."
        )

    @property
    def argument_names(self) -> list[str]:
        """The reference's parameter names, used to describe a case's inputs."""
        return list(inspect.signature(self.reference).parameters)


EXERCISES: dict[str, Exercise] = {}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def register(exercise: Exercise) -> Exercise:
    """Add ``exercise`` to :data:`EXERCISES` (each chapter module registers its own)."""
    if exercise.id in EXERCISES:
        raise ValueError(f"exercise {exercise.id!r} is registered twice")
    EXERCISES[exercise.id] = exercise
    return exercise


def rng(seed: int) -> np.random.Generator:
    """The random generator of an exercise's test cases (seeded: the same cases every run)."""
    return np.random.default_rng(seed)


# --- comparing a result with the expected one ---------------------------------------------------


_FLOAT32_NOTE = N_(
    "float32 keeps only about 7 significant digits, so its results differ from float64 by "
    "~1e-5 to 1e-4: compute in float64 (`dtype=torch.float64`, `module.double()`, "
    "`np.float64`)"
)


def _maybe_float32() -> str:
    """The line that guesses float32 behind a small difference (dropped when a mistake is
    named)."""
    return "\n  " + _(
        "A difference this small is typical of a float32 computation somewhere (a torch module "
        "or tensor made without `dtype=torch.float64`): if so, {note}"
    ).format(note=_(_FLOAT32_NOTE))


def _precision_note(expected: np.ndarray, got_raw: np.ndarray, diff: np.ndarray) -> str:
    """A word on float32 when it explains the difference, else ''."""
    if got_raw.dtype in (np.float16, np.float32):
        note = _("Your result is {dtype} (torch's default dtype is float32): {note}")
        return "\n  " + note.format(dtype=got_raw.dtype, note=_(_FLOAT32_NOTE))
    finite = np.abs(expected[np.isfinite(expected)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    if np.isfinite(diff).all() and diff.max() <= 1e-3 * scale:
        return _maybe_float32()
    return ""


def _type_problem(expected: np.ndarray, got: Any, got_raw: np.ndarray | None) -> str | None:
    """A message when ``got`` is not numbers of the expected kind (text, complex), else None."""
    if isinstance(got, (str, bytes)) or (got_raw is not None and got_raw.dtype.kind in "USO"):
        if got_raw is not None and got_raw.dtype.kind == "O" and not isinstance(got, (str, bytes)):
            return None  # an object array (e.g. of Python ints): judged on its values
        shown = repr(got) if len(repr(got)) <= 60 else repr(got)[:57] + "..."
        return _(
            "expected a number or an array of numbers, got text ({kind} {shown}): return the "
            "number itself (e.g. `float(x)`, `int(n)`), not a string that shows it"
        ).format(kind=type(got).__name__, shown=shown)
    if got_raw is not None and got_raw.dtype.kind == "c" and expected.dtype.kind != "c":
        return _(
            "expected real numbers, got a complex array (dtype {dtype}): even when its real part "
            "is right, return a real array (for pairs held as complex numbers z, put z.real and "
            "z.imag back into the pair's two features)"
        ).format(dtype=got_raw.dtype)
    return None


def _compare(expected: Any, got: Any, ex: Exercise, strict: bool = False) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or None.

    ``strict`` (comparing two answers, not an answer with the reference) also tells a boolean
    array from 0/1 numbers either way round.
    """
    return _difference(expected, got, ex, strict)[0]


def _difference(
    expected: Any, got: Any, ex: Exercise, strict: bool = False
) -> tuple[str | None, bool]:
    """:func:`_compare`'s message, and whether it is about the numbers alone: the result has the
    expected type and shape, and its values differ (or are NaN)."""
    if isinstance(expected, tuple):
        if got is None:
            return _("your function returned None — did you forget `return`?"), False
        if not isinstance(got, (tuple, list)):
            return _("expected a tuple of {n} results, got {kind}").format(
                n=len(expected), kind=type(got).__name__
            ), False
        if len(got) != len(expected):  # "got tuple of": "got {kind} of" could match any "of"
            if type(got) is tuple:
                wrong = _("expected a tuple of {n} results, got tuple of {k}")
            elif type(got) is list:
                wrong = _("expected a tuple of {n} results, got list of {k}")
            else:
                wrong = _("expected a tuple of {n} results, got {kind} of {k}")
            return wrong.format(n=len(expected), kind=type(got).__name__, k=len(got)), False
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            message, numbers = _difference(e, g, ex, strict)
            if message:
                return _("result {i}: {message}").format(i=i, message=message), numbers
        return None, False
    if got is None:
        return _("your function returned None — did you forget `return`?"), False
    expected_raw = np.asarray(expected)
    if isinstance(got, (str, bytes)):
        return _type_problem(expected_raw, got, None), False
    not_numbers = _("expected a number or an array, got {kind}")
    try:
        got_raw = _as_array(got)
    except (TypeError, ValueError, RuntimeError):
        return not_numbers.format(kind=type(got).__name__), False
    problem = _type_problem(expected_raw, got, got_raw)
    if problem:
        return problem, False
    try:
        got_array = got_raw.astype(float)
    except (TypeError, ValueError):
        return not_numbers.format(kind=type(got).__name__), False
    expected_array = expected_raw.astype(float)
    if got_array.shape != expected_array.shape:
        extra = ex.hints_by_shape.get(f"{got_array.shape}", "")
        if got_array.shape == expected_array.shape[::-1] and len(got_array.shape) > 1:
            extra = extra or N_("the axes look swapped: is a transpose missing or extra?")
        if extra:
            return _("expected shape {expected}, got {got} — {extra}").format(
                expected=expected_array.shape, got=got_array.shape, extra=_(extra)
            ), False
        return _("expected shape {expected}, got {got}").format(
            expected=expected_array.shape, got=got_array.shape
        ), False
    if strict and (expected_raw.dtype == bool) != (got_raw.dtype == bool):
        return _("one is a boolean array and the other is not"), False
    if expected_raw.dtype == bool and got_raw.dtype != bool:
        return _(
            "expected a boolean array (dtype bool, True/False), got dtype {dtype}: numpy and "
            "PyTorch read an int or float 0/1 array as numbers, not as a mask (`x[mask]` picks "
            "rows 0 and 1, torch's attn_mask *adds* it) — compare with `<` or use `.astype(bool)`"
        ).format(dtype=got_raw.dtype), False
    if np.isnan(got_array).any() and not np.isnan(expected_array).any():
        where = tuple(int(i) for i in np.argwhere(np.isnan(got_array))[0])
        return _(
            "your result contains NaN (first at index {where}) where the reference has numbers"
        ).format(where=where), True
    close = np.isclose(got_array, expected_array, atol=ex.atol, rtol=1e-5, equal_nan=True)
    if not close.all():
        with np.errstate(invalid="ignore"):  # inf - inf where both are -inf: those are close
            diff = np.where(close, 0.0, np.abs(got_array - expected_array))
        diff = np.where(np.isnan(diff), np.inf, diff)
        where = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
        return _(
            "values differ: largest difference {diff:.3g} at index {where}: "
            "expected {expected:.6g}, got {got:.6g}"
        ).format(
            diff=diff.max(), where=where, expected=expected_array[where], got=got_array[where]
        ) + _precision_note(expected_array, got_raw, diff), True
    return None, False


def _agrees(ex: Exercise, mistake_out: Any, learner_out: Any) -> bool:
    """Whether the learner's output equals a mistake's, NaN only where the mistake has NaN."""
    try:
        return _compare(mistake_out, learner_out, ex, strict=True) is None
    except Exception:  # noqa: BLE001 - an odd output agrees with nothing
        return False


# --- messages -----------------------------------------------------------------------------------


def _timeout_message(ex: Exercise, n: int, m: int, args: tuple, run: _Run) -> str:
    stopped = (
        N_("This check ran where Python cannot stop a running function (outside the main "
           "thread, or without SIGALRM as on Windows): it goes on in the background, and an "
           "endless loop keeps a CPU core busy until you restart the kernel (Kernel → Restart).")
        if run.still_running
        else N_("The checker stopped it.")
    )
    # the template ends with its field: a field followed by "." could reach into later lines
    return _(
        "✗ {title}: on test case {n} of {m} your function was still running after {limit:g} s "
        "— an endless loop (a `while` whose condition never changes)? {stopped}"
    ).format(title=_(ex.title), n=n, m=m, limit=TIME_LIMIT_S, stopped=_(stopped)) + (
        "\n" + _inputs_line(ex, args)
    )


def _no_mistake_fits(ex: Exercise, n: int) -> str:
    """The line for wrong numbers that no catalogued mistake explains (issue 24)."""
    return "  " + _(
        "No known mistake fits: your answer matches none of the {count} mistakes catalogued "
        "for this exercise. Test case {n} is the first it fails: run your function on its "
        "inputs (above) and check each intermediate result."
    ).format(count=len(ex.mistakes), n=n)


# --- judging ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Verdict:
    """What the checker found, before it is worded for a stage of help.

    ``what`` says what failed (the case and its inputs, the difference or the error, or that no
    catalogued mistake fits); ``mistakes`` are the catalogued mistakes the answer matches (more
    than one when they give the same numbers on every case); ``hint`` is the hint aimed at the
    difficulty the answer shows (:attr:`Mistake.hint`, :attr:`ErrorHint.hint`), shown at stage 2
    in place of the exercise's; ``attempt`` is False for a pass, a stub that still raises
    ``NotImplementedError`` and an unknown exercise: those move no stage.
    """

    passed: bool
    what: str
    mistakes: tuple[str, ...] = ()
    attempt: bool = True
    hint: str = ""


def _likely_mistakes(
    ex: Exercise, cases: Sequence[tuple], expected: Sequence[Any], runs: Sequence[_Run]
) -> list[Mistake]:
    """The catalogued mistakes the learner's outputs match on every case (usually none or one).

    A mistake matches when, on every case, its output agrees with the learner's (or both raise),
    and it differs from the reference on at least one case (a *telling* case). Agreeing on the
    cases where the mistake happens to be right is required too: there the learner must be right.
    Two mistakes match together only when they give the same numbers on every case.
    """
    if len(runs) != len(cases) or any(run.timed_out for run in runs):
        return []
    found = []
    for mistake in ex.mistakes:
        telling, consistent = 0, True
        for args, want, run in zip(cases, expected, runs, strict=True):
            theirs = _run_limited(mistake.fn, copy.deepcopy(args), TIME_LIMIT_S)
            if theirs.timed_out:
                consistent = False
            elif theirs.error is not None or run.error is not None:
                consistent = theirs.error is not None and run.error is not None
            elif not _agrees(ex, theirs.value, run.value):
                consistent = False
            elif not _agrees(ex, want, theirs.value):
                telling += 1
            if not consistent:
                break
        if consistent and telling:
            found.append(mistake)
    return found


def _judge(ex: Exercise, fn: Callable[..., Any]) -> _Verdict:
    cases = list(ex.cases())
    runs: list[_Run] = []
    expected: list[Any] = []
    failure: tuple[int, str, bool] | None = None  # (case number, message, numbers) of the first
    m = len(cases)
    title = _(ex.title)
    for n, args in enumerate(cases, start=1):
        # the reference first, outside the time limit: what it imports on first use (torch takes
        # seconds) must not be cut off by the alarm, leaving a half-imported module behind
        expected.append(ex.reference(*copy.deepcopy(args)))
        run = _run_limited(fn, copy.deepcopy(args), TIME_LIMIT_S)
        runs.append(run)
        if run.timed_out:
            if failure is None:
                return _Verdict(False, _timeout_message(ex, n, m, args, run))
            break
        if failure is not None:
            continue  # only the mistake catalogue needs the later cases
        if isinstance(run.error, NotImplementedError):
            return _Verdict(
                False,
                "\n  ".join([  # two lines: one would run past a notebook's output width
                    _("✗ {title}: not implemented yet.").format(title=title),
                    _("Replace the `raise` with your code, then run the cell again."),
                ]),
                attempt=False,
            )
        if run.error is not None:
            error = run.error
            own = _error_hint(error, ex)
            return _Verdict(
                False,
                _("✗ {title}: on test case {n} of {m} your function raised {error}").format(
                    title=title, n=n, m=m, error=f"{type(error).__name__}: {error}"
                )
                + _explain_error(error, ex, args),
                hint=own.hint if own else "",
            )
        message, numbers = _difference(expected[-1], run.value, ex)
        if message:
            failure = (n, _("✗ {title}: test case {n} of {m}: {message}").format(
                title=title, n=n, m=m, message=message
            ), numbers)
    if failure is None:
        passed = _("✓ {title}: correct on all {n} test cases.").format(title=title, n=m)
        return _Verdict(True, passed, attempt=False)
    mistakes = _likely_mistakes(ex, cases, expected, runs)
    n, message, numbers = failure
    if mistakes:  # a named mistake explains the difference: no guess about float32
        message = message.split(_maybe_float32())[0]
    message += "\n" + _inputs_line(ex, cases[n - 1])
    if numbers and ex.mistakes and not mistakes:
        message += "\n" + _no_mistake_fits(ex, n)
    return _Verdict(
        False,
        message,
        tuple(mistake.name for mistake in mistakes),
        hint=mistakes[0].hint if len(mistakes) == 1 else "",
    )


def _verdict(exercise_id: str, fn: Callable[..., Any]) -> _Verdict:
    """Judge ``fn``; never raises (a checker bug becomes a message)."""
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        return _Verdict(False, _unknown(exercise_id), attempt=False)
    try:
        return _judge(ex, fn)
    except Exception as error:  # noqa: BLE001 - the checker must never raise
        return _Verdict(
            False,
            _("✗ {title}: the checker could not judge your answer ({error}).").format(
                title=_(ex.title), error=f"{type(error).__name__}: {error}"
            ),
        )


def _unknown(exercise_id: str) -> str:
    return _("unknown exercise {exercise_id}; known: {known}").format(
        exercise_id=repr(exercise_id), known=sorted(EXERCISES)
    )


def _hint_call(exercise_id: str) -> str:
    return f'ex.hint("{exercise_id}")'


def _message(exercise_id: str, verdict: _Verdict, stage: int) -> str:
    """The checker's message at a stage of help (:data:`WHAT_FAILED`, :data:`HINT`,
    :data:`RECIPE`); at :data:`RECIPE` it is the complete message."""
    ex = EXERCISES.get(exercise_id)
    if verdict.passed or not verdict.attempt or ex is None:
        return verdict.what
    # one template per line: a printed message is translated line by line (i18n.outputs)
    call = _hint_call(exercise_id)
    lines = [verdict.what]
    if verdict.mistakes:
        first, *others = verdict.mistakes
        lines.append(_("Likely mistake: {mistake}.").format(mistake=_(first)))
        for other in others:  # the cases cannot tell them apart: name each (issue 24)
            lines.append(
                _("Or, just as likely (it gives the same numbers on every test case): "
                  "{mistake}.").format(mistake=_(other))
            )
    if stage >= RECIPE:
        lines.append(_("Hint: {hint}").format(hint=_(ex.hint)))
    elif stage == HINT:
        lines.append(_("Hint: {hint}").format(hint=_first_hint(ex, verdict.hint)))
        lines.append(_("Still stuck? Run {call} for the recipe.").format(call=call))
    else:
        lines.append(_("Stuck? Run {call} for a hint.").format(call=call))
    return "\n  ".join(lines)


def evaluate(
    exercise_id: str, fn: Callable[..., Any], stage: int = RECIPE
) -> tuple[bool, str]:
    """Run ``fn`` on the exercise's cases; return ``(passed, message)``. Never raises.

    Each call of ``fn`` gets its own deep copy of the case's inputs and at most
    ``TIME_LIMIT_S`` seconds. The message is worded for ``stage`` (1: what failed, 2: and the
    hint, 3 — the default — and the recipe: the complete message); unlike :func:`check`,
    ``evaluate`` remembers nothing.
    """
    return (verdict := _verdict(exercise_id, fn)).passed, _message(exercise_id, verdict, stage)


def _first_hint(ex: Exercise, aimed: str = "") -> str:
    """The hint of stage 2: the one aimed at the answer's difficulty, else the exercise's."""
    return _(aimed) if aimed else ex.first_hint


# --- help in stages, remembered for the session --------------------------------------------------

_FAILURES: dict[str, int] = {}  # exercise id -> failed attempts judged by check()
_STAGE: dict[str, int] = {}  # exercise id -> the stage of help reached (default WHAT_FAILED)
_AIMED: dict[str, str] = {}  # exercise id -> the hint aimed at the last failed answer, if any


def _next_stage(exercise_id: str) -> int:
    _STAGE[exercise_id] = min(_STAGE.get(exercise_id, WHAT_FAILED) + 1, RECIPE)
    return _STAGE[exercise_id]


def check(exercise_id: str, fn: Callable[..., Any]) -> None:
    """Print ✓ when ``fn`` solves the exercise, else what failed, with help in stages.

    Introduced in chapter 1. Example: ``ex.check("soft-lookup-1", my_softmax)``. The first failure
    shows the failing case, its inputs and, when the answer matches a catalogued mistake, its
    name; the second adds the hint (aimed at that mistake when it has one); the third the recipe
    (``ex.hint(exercise_id)`` gives them sooner). Never raises.
    """
    verdict = _verdict(exercise_id, fn)
    if verdict.attempt and not verdict.passed:
        _FAILURES[exercise_id] = _FAILURES.get(exercise_id, 0) + 1
        _AIMED[exercise_id] = verdict.hint
        if _FAILURES[exercise_id] > 1:
            _next_stage(exercise_id)
    elif verdict.passed:
        _AIMED.pop(exercise_id, None)
    print(_message(exercise_id, verdict, _STAGE.get(exercise_id, WHAT_FAILED)))


def hint(exercise_id: str) -> None:
    """Print the next stage of help for an exercise: first the hint, then the recipe.

    Introduced in chapter 1. Example: ``ex.hint("soft-lookup-1")``. Asking moves the stage like a
    failed try: after one ``hint``, the next failure of :func:`check` shows the hint again, the
    one after it the recipe. When the last failed check matched a mistake or an error with a hint
    of its own, that hint comes first. Never raises.
    """
    ex = EXERCISES.get(exercise_id)
    if ex is None:
        print(_unknown(exercise_id))
    elif _next_stage(exercise_id) == HINT:
        print(
            _("Hint for {title}: {hint}").format(
                title=_(ex.title), hint=_first_hint(ex, _AIMED.get(exercise_id, ""))
            )
            + "\n  "
            + _("Still stuck? Run {call} again for the recipe.").format(
                call=_hint_call(exercise_id)
            )
        )
    else:
        print(_("Recipe for {title}: {hint}").format(title=_(ex.title), hint=_(ex.hint)))


def reset(exercise_id: str | None = None) -> None:
    """Start the stages of help over, for one exercise or (``None``) for all of them."""
    for memory in (_FAILURES, _STAGE, _AIMED):
        if exercise_id is None:
            memory.clear()
        else:
            memory.pop(exercise_id, None)
