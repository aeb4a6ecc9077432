"""Reader editions: the chapters as learners open them in JupyterLab, Colab and Binder.

``chapters/*.ipynb`` are written in MyST for the website: ``{glue:text}`` roles, ``{ref}`` and
``{cite}`` roles, ``:::{exercise}`` directives, ``(label)=`` lines, cells hidden by tags. Jupyter
shows all of that as raw markup. :func:`write_reader_notebooks` turns each chapter into a
*reader edition* in ``notebooks/`` (same file names, stored without outputs) from the chapter and
the book build's own execution (``_build/jupyter_execute``: no second execution):

* every glued value is written in as text, formatted as on the website (myst-nb's own formatter);
* ``{ref}`` becomes a Markdown link to the heading in the sibling reader notebook (JupyterLab's
  heading ids) or, for pages that are not notebooks, to the website; ``{cite:p}`` becomes
  "(Vaswani et al., 2017)" linked to the website's references;
* an exercise becomes a heading with its number and badge as on the website; a solution's
  Markdown becomes ``<details>``, its code cells are collapsed; admonitions become blockquotes
  with a bold title; ``(label)=`` lines go; math is kept;
* cells the website hides are kept collapsed (JupyterLab's ``source_hidden``, Colab's form
  view) with a first ``# @title`` line that says what they hold; cells that only glue go.

``make notebooks`` runs this module; ``tests/test_reader_notebooks.py`` fails when
``notebooks/`` is stale or shows raw MyST.
"""

from __future__ import annotations

import ast
import copy
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from course_book.i18n.words import READER_WORDS

__all__ = [
    "RAW_MYST",
    "BookIndex",
    "convert_markdown",
    "raw_myst",
    "reader_notebook",
    "write_reader_notebooks",
]

ROLE_RE = re.compile(r"\{(?P<role>[a-z]+(?::[a-z]+)?)\}`(?P<body>[^`]*)`")
LABEL_LINE_RE = re.compile(r"^\((?P<label>[A-Za-z0-9_.:-]+)\)=\s*$")
FENCE_OPEN_RE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[A-Za-z0-9:_-]+)\}\s*(?P<arg>.*)$")
HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*$")
#: What a reader notebook must never show — MyST roles, directives and label lines.
RAW_MYST = re.compile(
    r"\{glue|\{ref\}|\{cite|\{numref\}|\{doc\}|\{term\}|^\s*:::|^\s*```\{|^\([^)\s]+\)=\s*$",
    re.MULTILINE,
)
#: Every glued value is written in wrapped in this span, which carries its name and format
#: (``data-glue``) and what kind of number it is (``title``, shown on hover): the same on every
#: computer, the build's example (``ca.glue_varies``: a trained model's numbers) or a timing.
#: The staleness check compares everything but the text inside, which differs between computers.
GLUE_SPAN = '<span title="{title}" data-glue="{key}">{text}</span>'
GLUE_RE = re.compile(r'(<span title="[^"<]*" data-glue="[^"<]*">)[^<]*(</span>)')
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
}


def raw_myst(text: str) -> list[str]:
    """The raw MyST constructs in Markdown ``text`` (empty for a clean reader cell)."""
    return [m.group(0) for m in RAW_MYST.finditer(_strip_code(text))]


def _strip_code(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans (MyST there is just text)."""
    text = re.sub(r"^(```+)(?!\{).*?^\1\s*$", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"(`+)[^`\n]+?\1", "", text)


# --- the book: labels, exercise numbers, citations --------------------------------------------


@dataclass
class Target:
    """Where a label points: a document, the heading's text and the exercise number, if any."""

    doc: str  # e.g. "chapters/02_scaled_dot_product"
    title: str  # the text {ref} shows
    anchor: str  # JupyterLab's id of the heading (or of the exercise heading)


@dataclass
class BookIndex:
    """What converting one chapter needs to know about the whole book."""

    root: Path
    site_url: str
    targets: dict[str, Target] = field(default_factory=dict)
    exercises: dict[str, str] = field(default_factory=dict)  # label -> "Exercise 4 (★★☆ · ~10 min)"
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (names, year)
    citation_anchor: dict[str, str] = field(default_factory=dict)  # key -> id on references.html
    notebooks: set[str] = field(default_factory=set)  # docs that have a reader edition
    lang: str = "en"  # the edition: "en", or "zh" (sources in zh/, site under /zh)

    @classmethod
    def build(cls, root: Path, docs: list[str], site_url: str, bib: Path | None = None,
              lang: str = "en") -> BookIndex:
        index = cls(root=root, site_url=site_url.rstrip("/"), lang=lang)
        html_dir = root / "_build" / "html"
        for doc in docs:
            ipynb, md = root / f"{doc}.ipynb", root / f"{doc}.md"
            if ipynb.exists():
                index.notebooks.add(doc)
                nb = nbformat.read(ipynb, as_version=4)
                sources = ["".join(c.source) for c in nb.cells if c.cell_type == "markdown"]
            elif md.exists():
                sources = [md.read_text(encoding="utf-8")]
            else:
                continue
            page = html_dir / f"{doc}.html"
            numbers = _exercise_numbers(page.read_text(encoding="utf-8")) if page.exists() else {}
            index._scan_labels(doc, sources, numbers)
        index._read_bibliography(bib or root / "references.bib",
                                 html_dir / "chapters" / "references.html")
        return index

    def _scan_labels(self, doc: str, sources: list[str], numbers: dict[str, str]) -> None:
        pending: str | None = None
        for source in sources:
            for line in source.splitlines():
                label = LABEL_LINE_RE.match(line)
                if label:
                    pending = label.group("label")
                    continue
                heading = HEADING_RE.match(line)
                if pending and heading:
                    text = _plain_heading(heading.group("text"))
                    self.targets[pending] = Target(doc, text, heading_anchor(text))
                    pending = None
                elif pending and line.strip():
                    self.targets[pending] = Target(doc, pending, "")
                    pending = None
        for label, title in numbers.items():
            self.exercises[label] = title
            self.targets[label] = Target(doc, title.split(" (")[0], heading_anchor(title))

    def _read_bibliography(self, bib: Path, references_page: Path) -> None:
        from pybtex.database import parse_file

        entries = parse_file(str(bib)).entries
        page = references_page.read_text(encoding="utf-8") if references_page.exists() else ""
        divs = re.findall(
            r'<div class="citation" id="([^"]+)" role="doc-biblioentry">(.*?)</div>', page, re.S
        )
        for key, entry in entries.items():
            people = entry.persons.get("author", [])
            last = [_tex_text(" ".join(p.last_names)) for p in people]
            if not last:
                names = _tex_text(entry.fields.get("title", key)).split(":")[0].split(" [")[0]
            elif len(last) == 1:
                names = last[0]
            elif len(last) == 2:
                names = f"{last[0]} and {last[1]}"
            else:
                names = f"{last[0]} et al."
            self.citations[key] = (names, entry.fields.get("year", "n.d."))
            title = _squash(_tex_text(entry.fields.get("title", "")))
            for anchor, body in divs:
                if title and title in _squash(html.unescape(re.sub(r"<[^>]+>", "", body))):
                    self.citation_anchor[key] = anchor
                    break

    def link(self, label: str, here: str, text: str | None = None) -> str:
        """A Markdown link for ``{ref}`label``` written in the reader edition of ``here``."""
        target = self.targets.get(label)
        if target is None:
            raise ValueError(f"{here}: {{ref}} to an unknown label {label!r}")
        shown = text or target.title
        if target.doc in self.notebooks:
            fragment = f"#{target.anchor}" if target.anchor else ""
            if target.doc == here:
                return f"[{shown}]({fragment or '#'})"
            return f"[{shown}]({Path(target.doc).name}.ipynb{fragment})"
        return f"[{shown}]({self.site_url}/{target.doc}.html#{label})"

    def cite(self, keys: str, here: str, textual: bool) -> str:
        """``{cite:p}`` as "(Vaswani et al., 2017)", ``{cite:t}`` as "Vaswani et al. (2017)"."""
        parts = []
        for key in (k.strip() for k in keys.split(",")):
            if key not in self.citations:
                raise ValueError(f"{here}: citation of an unknown key {key!r}")
            names, year = self.citations[key]
            url = f"{self.site_url}/chapters/references.html"
            if key in self.citation_anchor:
                url += f"#{self.citation_anchor[key]}"
            parts.append(f"[{names} ({year})]({url})" if textual else f"[{names}, {year}]({url})")
        return "; ".join(parts) if textual else f"({'; '.join(parts)})"


def _exercise_numbers(page: str) -> dict[str, str]:
    """label -> "Exercise N (badge)" as the website's page numbers them."""
    found = re.findall(
        r'<div class="exercise admonition" id="([^"]+)">\s*<p class="admonition-title">'
        r'<span class="caption-number">([^<]+?)\s*</span>\s*(.*?)</p>',
        page,
        re.S,
    )
    def text(rest: str) -> str:  # inline code (the checker id) stays code
        rest = re.sub(r"<code[^>]*>(.*?)</code>", lambda m: f"`{re.sub(r'<[^>]+>', '', m[1])}`",
                      rest, flags=re.S)
        return html.unescape(re.sub(r"<[^>]+>", "", rest)).strip()

    return {label: f"{number} {text(rest)}".strip() for label, number, rest in found}


def _tex_text(text: str) -> str:
    letters = {"\\L": "Ł", "\\l": "ł"}
    text = re.sub(r"\\[A-Za-z]+\s*", lambda m: letters.get(m.group(0).strip(), ""), text)
    return text.replace("{", "").replace("}", "").strip()


def _squash(text: str) -> str:
    return re.sub(r"\W+", "", text.lower())


def _plain_heading(text: str) -> str:
    """A heading's text as JupyterLab renders it (no code ticks, emphasis or link syntax)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"(`+)(.+?)\1", r"\2", text)
    return re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)


def heading_anchor(text: str) -> str:
    """JupyterLab's id for a rendered heading: its text with spaces replaced by ``-``."""
    return text.replace(" ", "-")


# --- Markdown -----------------------------------------------------------------------------------


@dataclass
class _State:
    """Where the conversion is: inside a solution, and of which exercise."""

    solution: str | None = None  # "Exercise 4 (★★☆ · ~10 min)" while inside its solution
    checker_explained: bool = False  # the note on the checker precedes the first checked exercise


def convert_markdown(
    source: str,
    doc: str,
    index: BookIndex,
    glue: dict[str, str],
    kinds: dict[str, str],
    state: _State | None = None,
) -> str:
    """One MyST Markdown cell of ``doc`` as Markdown that Jupyter renders.

    ``kinds`` maps a glued name to ``"varies"`` or ``"timing"`` (others are ``"same"``)."""
    state = state or _State()
    source = _fill_roles(source, doc, index, glue, kinds)
    out: list[str] = []
    inside: list[str] = []  # lines of the open solution, shown as <details>

    def flush() -> None:
        text = "\n".join(inside).strip("\n")
        if text and state.solution:
            summary = READER_WORDS[index.lang]["solution_details"].format(exercise=state.solution)
            out.extend([_details(summary, text), ""])
        inside.clear()

    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if LABEL_LINE_RE.match(line):
            i += 1
            if i < len(lines) and not lines[i].strip():
                i += 1  # no blank line left where the label was
            continue
        opened = FENCE_OPEN_RE.match(line)
        if not opened:
            (inside if state.solution else out).append(line)
            i += 1
            continue
        fence, name, arg = opened.group("fence"), opened.group("name"), opened.group("arg").strip()
        body, options, i = _directive_body(lines, i + 1, fence)
        if name == "solution-start":
            flush()
            exercise = index.exercises.get(arg)
            if exercise is None:
                raise ValueError(f"{doc}: solution to an unknown exercise {arg!r}")
            out.append(READER_WORDS[index.lang]["solution_note"].format(exercise=exercise))
            state.solution = exercise
        elif name == "solution-end":
            flush()
            state.solution = None
        else:
            converted = _directive(name, arg, options, body, doc, index, glue, kinds)
            checker = _checker_id(name, options)
            if checker and not state.checker_explained:  # where this notebook's reader meets it
                converted = [*converted[:2], READER_WORDS[index.lang]["checker_note"].format(
                    id=checker), "", *converted[2:]]
                state.checker_explained = True
            (inside if state.solution else out).extend(converted)
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def _checker_id(name: str, options: dict[str, str]) -> str | None:
    """The checker id of an exercise directive (its label less ``ex-``), if it has a checker."""
    from course_attention.exercises import EXERCISES

    exercise_id = options.get("label", "").removeprefix("ex-") if name == "exercise" else ""
    return exercise_id if exercise_id in EXERCISES else None


def _directive_body(lines: list[str], i: int, fence: str) -> tuple[list[str], dict[str, str], int]:
    options: dict[str, str] = {}
    while i < len(lines) and re.match(r"^:[a-z-]+:", lines[i]):
        key, _, value = lines[i][1:].partition(":")
        options[key] = value.strip()
        i += 1
    body: list[str] = []
    open_fences: list[int] = []
    char = fence[0]
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        inner = FENCE_OPEN_RE.match(stripped)
        if inner and inner.group("fence")[0] == char:
            open_fences.append(len(inner.group("fence")))
        elif len(stripped) >= 3 and set(stripped) == {char}:
            if not open_fences and len(stripped) >= len(fence):
                return body, options, i + 1
            if open_fences:
                open_fences.pop()
        body.append(line)
        i += 1
    return body, options, i


def _directive(
    name: str,
    arg: str,
    options: dict[str, str],
    body: list[str],
    doc: str,
    index: BookIndex,
    glue: dict[str, str],
    kinds: dict[str, str],
) -> list[str]:
    inner = convert_markdown("\n".join(body), doc, index, glue, kinds) if body else ""
    if name == "exercise":
        label = options.get("label", "")
        title = index.exercises.get(label)
        if title is None:
            raise ValueError(f"{doc}: exercise {label!r} has no number on the site (build first)")
        return [f"### {title}", "", inner, ""]
    if name in ("solution", "dropdown") or options.get("class", "") == "dropdown":
        title = arg or ("Solution" if name == "solution" else "Details")
        return [_details(title, inner), ""]
    if name == "admonition" or name in ADMONITIONS:
        title = arg if name == "admonition" else ADMONITIONS[name]
        quoted = [f"> {line}" if line.strip() else ">" for line in inner.splitlines()]
        return [f"> **{title}**", ">", *quoted, ""]
    if name in ("math",):
        return ["$$", *body, "$$", ""]
    if name in ("code-block", "code"):
        return [f"```{arg}", *body, "```", ""]
    if name in ("figure", "image"):
        caption = inner.strip() or options.get("alt", "")
        return [f"![{caption}]({arg})", "", caption, ""]
    raise ValueError(f"{doc}: no reader-edition form for the directive {{{name}}}")


def _details(summary: str, text: str) -> str:
    return f"<details>\n<summary><b>{summary}</b></summary>\n\n{text}\n\n</details>"


def _fill_roles(
    source: str, doc: str, index: BookIndex, glue: dict[str, str], kinds: dict[str, str]
) -> str:
    from myst_nb.core.variables import format_plain_text

    def replace(match: re.Match[str]) -> str:
        role, body = match.group("role"), match.group("body")
        if role in ("glue:text", "glue", "glue:", "glue:any", "glue:md"):
            key, spec = (body.rsplit(":", 1) + ["s"])[:2] if ":" in body else (body, "s")
            if key not in glue:
                raise ValueError(f"{doc}: no glued value {key!r} in the build's execution")
            text = format_plain_text(glue[key], spec) if role == "glue:text" else str(glue[key])
            title = READER_WORDS[index.lang][f"glue_{kinds.get(key, 'same')}"]
            return GLUE_SPAN.format(title=title, key=html.escape(body, quote=True), text=text)
        if role in ("ref", "numref", "doc"):
            shown = re.match(r"^(?P<text>.*?)\s*<(?P<label>[^<>]+)>$", body)
            if shown:
                return index.link(shown.group("label"), doc, shown.group("text"))
            return index.link(body, doc)
        if role in ("cite:p", "cite", "cite:t"):
            return index.cite(body, doc, textual=role == "cite:t")
        if role == "term":
            return f"[{body}]({index.site_url}/chapters/appendix_glossary.html)"
        raise ValueError(f"{doc}: no reader-edition form for the role {{{role}}}")

    return ROLE_RE.sub(replace, source)


# --- code cells ---------------------------------------------------------------------------------

HIDDEN = {"remove-cell", "remove-input", "hide-input"}
#: The package's glue functions (``ca.glue``, ``ca.glue_varies``): bookkeeping, not teaching.
GLUE_FUNCTIONS = ("glue", "glue_varies")


def _strip_glue(source: str) -> str:
    """``source`` without its ``ca.glue(...)`` / ``glue(...)`` statements (bookkeeping)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: nothing to strip
        return source
    lines = source.splitlines()
    drop: set[int] = set()
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call):
            fn = call.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in GLUE_FUNCTIONS:
                drop.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")


def _names(source: str) -> tuple[set[str], set[str]]:
    """(names a cell binds, names it reads); empty sets when it is not plain Python."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(), set()
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, ast.Store) else read).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return bound, read


def _title_line(cell: Any, source: str, later_reads: set[str], solution: str | None,
                lang: str = "en") -> str:
    tags = set(cell.metadata.get("tags", []))
    first = source.splitlines()[0] if source else ""
    words = READER_WORDS[lang]
    if solution:
        return "# @title " + words["title_solution"].format(exercise=solution)
    if "remove-input" in tags and first.startswith("# "):
        return "# @title " + first[2:]
    if "hide-input" in tags:
        what = words["explorer"] if "widgets." in source else words["figure"]
        return "# @title " + words["title_draws"].format(what=what)
    bound, _ = _names(source)
    used = sorted(bound & later_reads)
    if used:
        names = ", ".join(used[:4]) + (", …" if len(used) > 4 else "")
        return "# @title " + words["title_defines"].format(names=names)
    return "# @title " + words["title_checks"]


def _collapse(cell: Any, title: str, hide_outputs: bool = False) -> None:
    source = cell.source
    first = source.splitlines()[0] if source else ""
    if first.startswith("# ") and title == "# @title " + first[2:]:
        cell.source = "# @title " + source[2:]  # the setup cell already says what it holds
    elif not source.startswith("# @title"):
        cell.source = f"{title}\n{source}"
    jupyter = {"source_hidden": True}
    if hide_outputs:
        jupyter["outputs_hidden"] = True
    cell.metadata["jupyter"] = jupyter
    cell.metadata["cellView"] = "form"  # Colab: show the title, hide the code


# --- notebooks ----------------------------------------------------------------------------------


def reader_notebook(
    chapter: Path, doc: str, index: BookIndex, glue: dict[str, str], intro: str,
    varies: set[str] | None = None,
) -> nbformat.NotebookNode:
    """The reader edition of one chapter notebook (stored without outputs).

    ``varies``: the glued names that are the build's example (``ca.glue_varies``)."""
    nb = nbformat.read(chapter, as_version=4)
    kinds = {name: "varies" for name in varies or ()}
    kinds.update((name, "timing") for name in _timing_names(nb))
    reads_after: list[set[str]] = [set() for _ in nb.cells]
    seen: set[str] = set()
    for i in range(len(nb.cells) - 1, -1, -1):
        reads_after[i] = set(seen)
        if nb.cells[i].cell_type == "code":
            seen |= _names(nb.cells[i].source)[1]
    state = _State()
    cells = []
    for i, original in enumerate(nb.cells):
        cell = copy.deepcopy(original)
        solution = state.solution
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source, doc, index, glue, kinds, state)
            if not cell.source.strip():
                continue
            cells.append(cell)
            if i == 0:
                intro_cell = nbformat.v4.new_markdown_cell(intro)
                intro_cell.id = f"{cell.get('id', 'title')}-reader"[:64]
                cells.append(intro_cell)
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        cell.outputs, cell.execution_count = [], None
        tags = set(cell.metadata.get("tags", []))
        if "remove-cell" in tags or "timing" in tags:
            cell.source = _strip_glue(cell.source)
            if not cell.source.strip():
                continue
        if tags & HIDDEN or solution:
            _collapse(cell, _title_line(cell, cell.source, reads_after[i], solution, index.lang),
                      hide_outputs=bool(solution))
        cells.append(cell)
    reader = nbformat.v4.new_notebook()
    reader.metadata = copy.deepcopy(nb.metadata)
    reader.metadata["colab"] = {"name": chapter.name, "provenance": []}
    reader.cells = cells
    return reader


def _timing_names(nb: nbformat.NotebookNode) -> set[str]:
    """The glued names whose values are wall-clock measurements: everything a `timing` cell
    glues, and by convention every name ending in ``_seconds`` (e.g. ``train_seconds``)."""
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        timing = "timing" in cell.metadata.get("tags", [])
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in GLUE_FUNCTIONS:
                glued = {k.arg for k in node.keywords if k.arg}
                if node.args and isinstance(node.args[0], ast.Constant):
                    glued.add(str(node.args[0].value))
                names |= glued if timing else {n for n in glued if n.endswith("_seconds")}
    for cell in nb.cells:  # names glued from a dict (glue(**claims)) are seen in the text
        if cell.cell_type == "markdown":
            for match in ROLE_RE.finditer(cell.source):
                name = match.group("body").rsplit(":", 1)[0]
                if name.endswith("_seconds"):
                    names.add(name)
    return names


def _glue_outputs(executed_dir: Path, doc: str) -> dict[str, Any]:
    path = executed_dir / f"{doc}.glue.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def load_glue(executed_dir: Path, doc: str) -> dict[str, str]:
    """The glued values of ``doc`` from the build's execution: name -> text/plain."""
    return {name: out["data"]["text/plain"]
            for name, out in _glue_outputs(executed_dir, doc).items()}


def load_varies(executed_dir: Path, doc: str) -> set[str]:
    """The glued names of ``doc`` that are the build's example (glued with ``ca.glue_varies``)."""
    from course_attention import VARIES

    return {name for name, out in _glue_outputs(executed_dir, doc).items()
            if out.get("metadata", {}).get(VARIES, {}).get("varies")}


def site_url(repository: str) -> str:
    """The GitHub Pages address of a ``https://github.com/OWNER/NAME`` repository."""
    owner, name = repository.rstrip("/").removeprefix("https://github.com/").split("/")[:2]
    return f"https://{owner.lower()}.github.io/{name}"


def intro_text(doc: str, repository: str, lang: str = "en") -> str:
    """The note under each reader edition's title."""
    name = Path(doc).name
    slug = repository.removeprefix("https://github.com/")
    folder = "notebooks" if lang == "en" else f"notebooks/{lang}"
    colab = f"https://colab.research.google.com/github/{slug}/blob/main/{folder}/{name}.ipynb"
    site = site_url(repository) + ("" if lang == "en" else f"/{lang}")
    return READER_WORDS[lang]["intro"].format(page=f"{site}/{doc}.html", colab=colab, doc=doc,
                                    source=f"{doc}.ipynb + locales/zh_CN/LC_MESSAGES/{name}.po")


def write_reader_notebooks(root: Path, out_dir: Path | None = None,
                           lang: str = "en") -> list[Path]:
    """Write ``notebooks/<name>.ipynb`` for every chapter notebook in the table of contents.

    ``lang="zh"``: the Chinese edition, from ``zh/`` (written by :mod:`course_book.i18n.edition`)
    and its built site, into ``notebooks/zh/``; the glued values are the English build's.
    """
    import yaml

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    if lang not in READER_WORDS:
        raise ValueError(f"lang must be one of {sorted(READER_WORDS)}, got {lang!r}")
    source = root if lang == "en" else root / lang
    toc = yaml.safe_load((source / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]] + [
        c["file"] for part in toc.get("parts", []) for c in part["chapters"]
    ]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    repository = project["urls"]["Repository"].rstrip("/")
    site = site_url(repository) + ("" if lang == "en" else f"/{lang}")
    index = BookIndex.build(source, docs, site, bib=root / "references.bib", lang=lang)
    # the Chinese book's execution is the English one with its words translated
    executed = source / "_build" / "jupyter_execute"
    out_dir = out_dir or (root / "notebooks" if lang == "en" else root / "notebooks" / lang)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for doc in docs:
        chapter = source / f"{doc}.ipynb"
        if not chapter.exists():
            continue
        if not (executed / f"{doc}.ipynb").exists():
            raise FileNotFoundError(f"{doc}: no execution in {executed}; run `make book` first")
        glue, intro = load_glue(executed, doc), intro_text(doc, repository, lang)
        nb = reader_notebook(chapter, doc, index, glue, intro, load_varies(executed, doc))
        path = out_dir / chapter.name
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        written.append(path)
    return written


def comparable(text: str) -> str:
    """A reader notebook as the sources determine it (staleness check): every cell's type,
    metadata and text, each glued value's name, format and kind, but not its digits, which
    differ between computers (and timings between runs)."""
    nb = nbformat.reads(text, as_version=4)
    return "\n\u241e\n".join(
        f"{c.cell_type}|{json.dumps(c.metadata, sort_keys=True)}|"
        + GLUE_RE.sub(r"\1…\2", c.source)
        for c in nb.cells
    )


def glued_texts(source: str) -> list[str]:
    """The glued values written into a reader edition's Markdown, in order."""
    return [m.group(0)[len(m.group(1)):-len(m.group(2))] for m in GLUE_RE.finditer(source)]


if __name__ == "__main__":  # python -m course_book.reader [ROOT [LANG]]
    import sys

    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    lang = sys.argv[2] if len(sys.argv) > 2 else "en"
    for p in write_reader_notebooks(base.resolve(), lang=lang):
        print(f"wrote {p.relative_to(base.resolve())}")
