"""How long a chapter takes, computed from the notebook rather than typed.

Each chapter opens with a **Time** line (issue 17: the typed estimates were 2–3× short). This
module computes it from what the learner meets, in four parts:

* **reading** — the Markdown prose (math included) at :data:`PROSE_WORDS_PER_MIN` words a minute,
  plus the code cells a learner reads at :data:`CODE_LINES_PER_MIN` lines a minute, plus
  :data:`FIGURE_MIN` for each figure a cell draws (a ``viz`` function that returns a plotly
  figure, called in a cell the learner sees; explorers are counted apart);
* **exercises** — the minutes of the chapter's registered exercises, the same numbers as their
  badges (:attr:`course_attention.exercises.Exercise.badge`), plus :data:`QUESTION_MIN` for each
  exercise without a checker (the spot-the-bug appendix's questions); an exercise's prompt, stub
  and solution are part of its minutes, not of the reading;
* **explorers** — :data:`EXPLORER_MIN` for each live explorer (a ``widgets.…_explorer(`` call in
  a cell the learner sees) with its *Try it* question.

Each part is rounded to :data:`ROUND_TO` minutes (at least one step when it is not empty) and the
total is the sum of the rounded parts, so the line adds up. :func:`time_line` writes the line,
:func:`course_time` sums the table of contents; ``scripts/update_times.py`` rewrites the chapters'
lines and ``tests/test_course_time.py`` fails when a line differs from the computation.

The rates are stated assumptions, anchored in published measurements:

* Prose, 150 words a minute. Carver (1992), "Reading rate: theory, research, and practical
  implications", *Journal of Reading* 36(2): 84–95, measured college readers' "gears": about
  300 words a minute to understand easy text (rauding), 200 to *learn* from it and 138 to
  memorise it. Brysbaert (2019), "How many words do we read per minute?", *Journal of Memory and
  Language* 109: 104047, puts silent reading of non-fiction at 238 words a minute for reading,
  not studying. A learner who must follow a derivation and check a number is between Carver's
  learning and memorising gears: 150.
* Code, 5 lines a minute (300 an hour). The Cisco code-review study (Cohen, *Best Kept Secrets
  of Peer Code Review*, SmartBear 2006, ch. "Code review at Cisco Systems") found that reviewers
  understand code and find its defects only below 300–500 lines an hour; a learner reading new
  code, running it and comparing its output with the prose reads like a careful reviewer.
* A figure, 2 minutes: read its axes and legend, then find in it what the prose says it shows
  (an assumption, calibrated on learners' times, :data:`LEARNERS_MINUTES`: chapters 8 and 9 took
  them 24 % and 31 % longer than the estimate said while it counted no figures; with figures
  counted, ``tests/test_course_time.py`` asserts each estimate within 10 % of the learners').
* An explorer, 5 minutes: answer the *Try it* question first, then move the controls through
  their range (an assumption, about three settings of a minute and a minute to compare).
* A question without a checker, 3 minutes: decide, run the cell, read the answer (assumption).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PROSE_WORDS_PER_MIN",
    "CODE_LINES_PER_MIN",
    "EXPLORER_MIN",
    "FIGURE_MIN",
    "LEARNERS_MINUTES",
    "QUESTION_MIN",
    "ROUND_TO",
    "ChapterTime",
    "chapter_time",
    "course_time",
    "time_line",
    "course_line",
    "chinese_line",
    "toc_documents",
    "TIME_LINE_RE",
    "COURSE_LINE_RE",
]

PROSE_WORDS_PER_MIN = 150
"""Words of prose (and math symbols) a learner studies in a minute (see the module docstring)."""
CODE_LINES_PER_MIN = 5
"""Lines of visible code a learner reads, runs and checks in a minute."""
EXPLORER_MIN = 5
"""Minutes for one live explorer with its *Try it* question."""
FIGURE_MIN = 2
"""Minutes for one figure: its axes, its legend and what the prose says it shows."""
#: Minutes learners took for a whole chapter (reported in issue 24, item 33), the estimate's
#: calibration, checked by the tests.
LEARNERS_MINUTES = {"08_decoder_only": 130, "09_induction_heads": 85}
QUESTION_MIN = 3
"""Minutes for one exercise without a checker (no registered minutes)."""
ROUND_TO = 5
"""Each part is rounded to this many minutes."""

#: The chapter's Time line as :func:`time_line` writes it, e.g.
#: ``**Time** about 75 min: 40 to read, 30 for the exercises, 5 for the explorer``.
TIME_LINE_RE = re.compile(
    r"^\*\*Time\*\* about (?P<total>\d+) min: (?P<read>\d+) to read"
    r"(?:, (?P<exercise>\d+) for the exercises)?"
    r"(?:, (?P<explorer>\d+) for the explorers?)?$"
)
#: The welcome page's line on the whole course, as :func:`course_line` writes it.
COURSE_LINE_RE = re.compile(r"^\*\*Time for the whole course\*\*.*$", re.MULTILINE)
#: Any Time line, old or new (what ``scripts/update_times.py`` replaces).
ANY_TIME_LINE_RE = re.compile(r"^\*\*Time\*\*(?! for the whole course).*$", re.MULTILINE)

HIDDEN_CODE = {"remove-cell", "remove-input", "hide-input"}  # code the website does not show
EXPLORER_CALL = re.compile(r"\bwidgets\.\w+_explorer\(")
VIZ_CALL = re.compile(r"\bviz\.(\w+)\(")
SOLUTION_START = re.compile(r"^:{3,}\{solution-start\}\s*ex-(?P<id>[\w-]+)", re.MULTILINE)
SOLUTION_END = re.compile(r"^:{3,}\{solution-end\}", re.MULTILINE)
_FENCE = re.compile(r"^:{3,}.*$|^:[a-z-]+:.*$|^\([\w.:-]+\)=\s*$", re.MULTILINE)
_ROLE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<body>[^`]*)`")
_MATH = re.compile(r"\$\$(?P<block>.+?)\$\$|\$(?P<inline>[^$\n]+?)\$", re.DOTALL)
#: LaTeX commands that only lay out math; they are not read as symbols.
_LAYOUT = {
    "left", "right", "big", "Big", "bigg", "Bigg", "mathrm", "mathbf", "mathit", "text",
    "operatorname", "qquad", "quad", "displaystyle", "begin", "end", "tag", "label", "nonumber",
}  # fmt: skip


@dataclass(frozen=True)
class ChapterTime:
    """Minutes a chapter takes, rounded to :data:`ROUND_TO`; ``total_min`` is their sum.

    ``words``, ``code_lines``, ``figures``, ``exercises`` and ``explorers`` are the counts they
    come from (``exercises`` = the chapter's exercise ids, checked or not).
    """

    read_min: int
    exercise_min: int
    explorer_min: int
    total_min: int
    words: int = 0
    code_lines: int = 0
    figures: int = 0
    exercises: tuple[str, ...] = ()
    explorers: int = 0

    @property
    def line(self) -> str:
        """The chapter's Time line (see :func:`time_line`)."""
        return time_line(self)


def _round(minutes: float) -> int:
    """``minutes`` to the nearest :data:`ROUND_TO` (halves up); anything above 0 is ≥ one step."""
    if minutes <= 0:
        return 0
    return max(ROUND_TO, int(math.floor(minutes / ROUND_TO + 0.5)) * ROUND_TO)


def _role_text(match: re.Match[str]) -> str:
    """A MyST role as the words it shows: a glued value is one word, a citation about three."""
    role, body = match.group("role"), match.group("body")
    if role.startswith("glue"):
        return "0"
    if role.startswith("cite"):
        return " ".join("Author et al. 2000" for _ in body.split(","))
    shown = re.match(r"^(?P<text>.*?)\s*<[^<>]+>$", body)
    if shown:
        return shown.group("text")
    return "the chapter title" if role in ("ref", "numref", "doc") else body


def _math_words(match: re.Match[str]) -> str:
    """Math as the symbols read aloud: each command, name, number or operator is one word."""
    tex = match.group("block") or match.group("inline") or ""
    symbols = re.findall(r"\\([A-Za-z]+)|([A-Za-z]+|\d+(?:\.\d+)?|[=+\-<>≤≥≈·×/|])", tex)
    kept = [cmd or other for cmd, other in symbols if cmd not in _LAYOUT]
    return " ".join("x" for _ in kept)


def prose_words(markdown: str) -> int:
    """Words a learner reads in one Markdown cell: MyST labels and fences dropped, roles as
    the text they show, math as its symbols, HTML tags dropped; a word holds a letter or digit."""
    text = _FENCE.sub("", markdown)
    text = _ROLE.sub(_role_text, text)
    text = _MATH.sub(_math_words, text)
    text = re.sub(r"<[^>]+>", " ", text)
    return sum(1 for token in text.split() if re.search(r"\w", token))


def _code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


def _read_cells(path: Path) -> list[dict]:
    if path.suffix == ".md":
        return [{"cell_type": "markdown", "source": path.read_text(encoding="utf-8"), "tags": []}]
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [
        {
            "cell_type": cell["cell_type"],
            "source": "".join(cell["source"]),  # a string, or a list of lines in the JSON
            "tags": cell.get("metadata", {}).get("tags", []),
        }
        for cell in nb["cells"]
    ]


def _figures(source: str) -> int:
    """The figures a code cell draws: its calls of ``course_attention.viz`` functions annotated
    to return a plotly ``go.Figure`` (tables and data helpers are not figures)."""
    from course_attention import viz

    def draws(name: str) -> bool:
        returns = getattr(getattr(viz, name, None), "__annotations__", {}).get("return")
        return "Figure" in str(returns)

    return sum(1 for name in VIZ_CALL.findall(source) if draws(name))


def _registered_minutes() -> dict[str, int]:
    from course_attention.exercises import EXERCISES

    return {exercise_id: exercise.minutes for exercise_id, exercise in EXERCISES.items()}


def chapter_time(notebook_path: str | Path, minutes: dict[str, int] | None = None) -> ChapterTime:
    """The time ``notebook_path`` (a chapter ``.ipynb``, or a ``.md`` page) takes to work through.

    ``minutes`` maps exercise ids to their minutes (default: the registered exercises', as their
    badges show). A registered exercise's prompt, stub cell and solution count as its minutes,
    not as reading; an unregistered exercise's text is read and adds :data:`QUESTION_MIN`.
    """
    minutes = _registered_minutes() if minutes is None else minutes
    words = code_lines = explorers = figures = 0
    exercises: list[str] = []
    # "read": counted; "prompt": inside an exercise directive; "stub": between a registered
    # exercise and its solution; "solution": inside a registered exercise's solution
    state, opening = "read", False
    for cell in _read_cells(Path(notebook_path)):
        source, tags = cell["source"], set(cell["tags"])
        if cell["cell_type"] == "code":
            if "remove-cell" not in tags:
                explorers += len(EXPLORER_CALL.findall(source))
                figures += _figures(source) if state == "read" else 0
            if state == "read" and not HIDDEN_CODE & tags:
                code_lines += _code_lines(source)
            continue
        if cell["cell_type"] != "markdown":
            continue
        if state == "stub" and not SOLUTION_START.match(source.lstrip()):
            state = "read"  # an exercise without a solution: the prose goes on
        counted: list[str] = []
        for line in source.splitlines():
            label = re.match(r"^:label:\s*ex-(?P<id>[\w-]+)", line)
            if re.match(r"^:{3,}\{exercise\}", line):
                opening = True
            elif opening and label:
                opening = False
                exercises.append(label.group("id"))
                state = "prompt" if label.group("id") in minutes else "read"
            elif state == "prompt" and re.match(r"^:{3,}\s*$", line):
                state = "stub"
            elif solution := SOLUTION_START.match(line):
                state = "solution" if solution.group("id") in minutes else "read"
            elif SOLUTION_END.match(line):
                state = "read"
            elif state == "read" and not ANY_TIME_LINE_RE.match(line):
                counted.append(line)  # (the Time line itself is not counted: no feedback)
        words += prose_words("\n".join(counted))
    read = words / PROSE_WORDS_PER_MIN + code_lines / CODE_LINES_PER_MIN + FIGURE_MIN * figures
    checked = sum(minutes[e] for e in exercises if e in minutes)
    unchecked = QUESTION_MIN * sum(1 for e in exercises if e not in minutes)
    parts = _round(read), _round(checked + unchecked), _round(EXPLORER_MIN * explorers)
    return ChapterTime(
        *parts,
        total_min=sum(parts),
        words=words,
        code_lines=code_lines,
        figures=figures,
        exercises=tuple(exercises),
        explorers=explorers,
    )


def time_line(time: ChapterTime) -> str:
    """The chapter's Time line, e.g. ``**Time** about 75 min: 40 to read, 30 for the exercises,
    5 for the explorer`` (a part of 0 minutes is left out)."""
    line = f"**Time** about {time.total_min} min: {time.read_min} to read"
    if time.exercise_min:
        line += f", {time.exercise_min} for the exercises"
    if time.explorer_min:
        line += f", {time.explorer_min} for the explorer" + ("s" if time.explorers > 1 else "")
    return line


def course_line(total: ChapterTime) -> str:
    """The welcome page's sentence on the whole course, from :func:`course_time`'s ``"total"``."""
    hours = total.total_min / 60
    return (
        f"**Time for the whole course** about {round(hours)} hours ({total.total_min} min: "
        f"{total.read_min} to read, {total.exercise_min} for the exercises, "
        f"{total.explorer_min} for the explorers), counted chapter by chapter as each "
        f"chapter's **Time** line is. The count assumes that you study {PROSE_WORDS_PER_MIN} "
        f"words of prose a minute, read and run {CODE_LINES_PER_MIN} lines of code a minute, "
        f"spend {FIGURE_MIN} minutes on a figure and {EXPLORER_MIN} on an explorer, and take "
        "each exercise's stated minutes; it leaves out the time the cells take to run."
    )


def chinese_line(line: str) -> str | None:
    """The Chinese edition's form of a Time line or of the welcome page's course line (the same
    numbers), or ``None`` when ``line`` is neither: ``scripts/update_times.py`` writes it into
    the catalogues, so the Chinese lines follow the English ones without a translator."""
    if found := TIME_LINE_RE.match(line):
        parts = found.groupdict()
        out = f"**时间** 约 {parts['total']} 分钟：阅读 {parts['read']} 分钟"
        out += f"，练习 {parts['exercise']} 分钟" if parts["exercise"] else ""
        out += f"，交互图 {parts['explorer']} 分钟" if parts["explorer"] else ""
        return out
    course = re.match(
        r"^\*\*Time for the whole course\*\* about (\d+) hours \((\d+) min: (\d+) to read, (\d+) "
        r"for the exercises, (\d+) for the explorers\).*?study (\d+) words.*?run (\d+) lines.*?"
        r"spend (\d+) minutes on a figure and (\d+) on an explorer", line)
    if not course:
        return None
    h, total, read, exercise, explorer, words, lines, figure, explorer_min = course.groups()
    return (
        f"**全课程时间** 约 {h} 小时（{total} 分钟：阅读 {read} 分钟，练习 {exercise} 分钟，"
        f"交互图 {explorer} 分钟），与每章的**时间**一行一样，逐章计算得出。这一估计假定：你每分钟"
        f"研读 {words} 个词的正文（按英文原文计），每分钟阅读并运行 {lines} 行代码，每张图花 "
        f"{figure} 分钟，每个交互图花 {explorer_min} 分钟，每道练习用它标明的分钟数；运行代码单元格"
        "所需的时间不计在内。"
    )


def toc_documents(toc: str | Path) -> list[Path]:
    """The documents of a Jupyter Book ``_toc.yml``, in reading order (root, chapters, sections)."""
    import yaml

    toc = Path(toc)
    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    files = [data["root"]]
    for part in data.get("parts", [{"chapters": data.get("chapters", [])}]):
        for chapter in part.get("chapters", []):
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    found = []
    for name in files:
        for suffix in (".ipynb", ".md"):
            path = toc.parent / f"{name}{suffix}"
            if path.exists():
                found.append(path)
                break
    return found


def course_time(toc: str | Path | Iterable[str | Path]) -> dict[str, ChapterTime]:
    """Every timed document of the course (the notebooks that carry a Time line), by file stem,
    in reading order, and ``"total"``: the sum of their parts.

    ``toc`` is the book's ``_toc.yml`` or the documents themselves.
    """
    paths = toc_documents(toc) if isinstance(toc, (str, Path)) else [Path(p) for p in toc]
    minutes = _registered_minutes()
    times = {
        path.stem: chapter_time(path, minutes)
        for path in paths
        if ANY_TIME_LINE_RE.search("\n".join(c["source"] for c in _read_cells(path)))
    }
    chapters = list(times.values())
    times["total"] = ChapterTime(
        read_min=sum(t.read_min for t in chapters),
        exercise_min=sum(t.exercise_min for t in chapters),
        explorer_min=sum(t.explorer_min for t in chapters),
        total_min=sum(t.total_min for t in chapters),
        words=sum(t.words for t in chapters),
        code_lines=sum(t.code_lines for t in chapters),
        figures=sum(t.figures for t in chapters),
        exercises=tuple(e for t in chapters for e in t.exercises),
        explorers=sum(t.explorers for t in chapters),
    )
    return times
