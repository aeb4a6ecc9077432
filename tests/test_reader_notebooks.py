"""The reader editions in notebooks/: complete, free of raw MyST, and never stale."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat
import pytest

from _notebooks import ROOT, notebooks, toc_files
from course_book import reader
from course_book.i18n.comments import code_tokens
from course_book.i18n.words import READER_WORDS

CHAPTERS = notebooks()
IDS = [p.stem for p in CHAPTERS]
READER = ROOT / "notebooks"


def _index() -> reader.BookIndex:
    index = reader.BookIndex(root=ROOT, site_url="https://example.org/book")
    index.notebooks = {"chapters/01_a", "chapters/02_b"}
    index.targets = {
        "sec-a": reader.Target("chapters/01_a", "Why √d_k? The scale", "Why-√d_k?-The-scale"),
        "sec-b": reader.Target("chapters/02_b", "Masks", "Masks"),
        "glossary": reader.Target("chapters/appendix_glossary", "Glossary", "Glossary"),
    }
    index.exercises = {"ex-a-1": "Exercise 4 (★★☆ · ~10 min)"}
    index.citations = {"vaswani": ("Vaswani et al.", "2017"), "ba": ("Ba et al.", "2016")}
    index.citation_anchor = {"vaswani": "id6"}
    return index


def _convert(text: str, glue: dict | None = None, kinds: dict | None = None) -> str:
    return reader.convert_markdown(text, "chapters/01_a", _index(), glue or {}, kinds or {})


def test_glue_is_formatted_as_on_the_website_and_marked_with_its_name_format_and_kind():
    glue = {"x": "1109.4369632916132", "n": "3", "s": "'abc'", "t": "0.0123", "v": "0.9137"}
    text = _convert("{glue:text}`x:.1f`, {glue:text}`n`, {glue:text}`s`, {glue:text}`t:.3f`, "
                    "{glue:text}`v:.2f`", glue, {"t": "timing", "v": "varies"})
    assert reader.glued_texts(text) == ["1109.4", "3", "abc", "0.012", "0.91"]
    assert re.sub(r"<[^>]+>", "", text) == "1109.4, 3, abc, 0.012, 0.91"
    words = READER_WORDS["en"]
    assert f'<span title="{words["glue_same"]}" data-glue="x:.1f">1109.4</span>' in text
    assert f'<span title="{words["glue_timing"]}" data-glue="t:.3f">0.012</span>' in text
    assert f'<span title="{words["glue_varies"]}" data-glue="v:.2f">0.91</span>' in text
    with pytest.raises(ValueError, match="no glued value 'y'"):
        _convert("{glue:text}`y:.2f`")


def _edition(text: str) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nb.cells[0].id = "a"
    return nbformat.writes(nb)


def test_staleness_compares_what_the_sources_determine_not_the_digits():
    """Another computer's build changes digits only; a change of prose, of a glued value's
    name, format or kind, or of the cells is stale."""
    glue, other = {"v": "0.9137", "e": "6e-17"}, {"v": "0.8311", "e": "0.0"}
    source = "Accuracy {glue:text}`v:.2f`, error {glue:text}`e:.0e`."
    here = reader.comparable(_edition(_convert(source, glue, {"v": "varies"})))
    assert here == reader.comparable(_edition(_convert(source, other, {"v": "varies"})))
    for changed, kinds in [
        ("Accuracy {glue:text}`v:.3f`, error {glue:text}`e:.0e`.", {"v": "varies"}),
        ("Accuracy {glue:text}`e:.2f`, error {glue:text}`e:.0e`.", {"v": "varies"}),
        ("Accuracy: {glue:text}`v:.2f`, error {glue:text}`e:.0e`.", {"v": "varies"}),
        (source, {}),
    ]:
        assert here != reader.comparable(_edition(_convert(changed, glue, kinds))), changed


def test_references_citations_and_labels():
    text = _convert(
        "(sec-a)=\n## Why √d_k? The scale\n\nSee {ref}`sec-a`, {ref}`the masks <sec-b>` and "
        "{ref}`glossary` {cite:p}`vaswani,ba`; {cite:t}`vaswani` says so."
    )
    assert "(sec-a)=" not in text and text.startswith("## Why")
    assert "[Why √d_k? The scale](#Why-√d_k?-The-scale)" in text
    assert "[the masks](02_b.ipynb#Masks)" in text
    assert "[Glossary](https://example.org/book/chapters/appendix_glossary.html#glossary)" in text
    assert "([Vaswani et al., 2017](https://example.org/book/chapters/references.html#id6); " \
           "[Ba et al., 2016](https://example.org/book/chapters/references.html))" in text
    assert "[Vaswani et al. (2017)](" in text
    with pytest.raises(ValueError, match="unknown label"):
        _convert("{ref}`nowhere`")


def test_directives_become_what_jupyter_renders():
    text = _convert(
        ":::{exercise} ★★☆ · ~10 min\n:label: ex-a-1\n\nWrite $x^2$.\n:::\n\n"
        ":::{admonition} What the builder shows\nA *note*.\n\nTwo lines.\n:::\n\n"
        ":::{note}\nShort.\n:::\n\n:::{admonition} More\n:class: dropdown\nHidden.\n:::"
    )
    assert "### Exercise 4 (★★☆ · ~10 min)\n\nWrite $x^2$." in text
    assert "> **What the builder shows**\n>\n> A *note*.\n>\n> Two lines." in text
    assert "> **Note**\n>\n> Short." in text
    assert "<details>\n<summary><b>More</b></summary>\n\nHidden.\n\n</details>" in text
    assert reader.raw_myst(text) == []
    with pytest.raises(ValueError, match="no reader-edition form"):
        _convert(":::{unknown-thing}\nx\n:::")


def test_a_solution_spanning_cells_is_collapsed():
    state = reader._State()
    index = _index()
    first = reader.convert_markdown(
        ":::{solution-start} ex-a-1\n:class: dropdown\n:::", "chapters/01_a", index, {}, {},
        state,
    )
    assert first.startswith("**Solution to Exercise 4") and state.solution
    inside = reader.convert_markdown("Because.", "chapters/01_a", index, {}, {}, state)
    assert inside.startswith("<details>") and "Because." in inside
    last = reader.convert_markdown(
        "So.\n\n:::{solution-end}\n:::\n\nAfter.", "chapters/01_a", index, {}, {}, state
    )
    assert last.startswith("<details>") and last.endswith("</details>\n\nAfter.")
    assert state.solution is None


def test_raw_myst_is_found_outside_code_only():
    assert reader.raw_myst("a {glue:text}`x` b") and reader.raw_myst("(sec-x)=\n# T")
    assert reader.raw_myst(":::{note}\nx\n:::") and reader.raw_myst("```{code-cell}\nx\n```")
    assert reader.raw_myst("see {cite:p}`k`") and reader.raw_myst("{term}`Query`")
    assert not reader.raw_myst("write `{glue:text}` like this") and not reader.raw_myst("$x$")


def test_glue_statements_are_stripped_from_hidden_cells():
    source = "assert x > 0\nca.glue(\n    a=1,\n    b=2,\n)\ny = 3\nca.glue('c', y)"
    assert reader._strip_glue(source) == "assert x > 0\ny = 3"
    assert reader._strip_glue("%pip install x") == "%pip install x"


def _clean_reader_edition(reader_path: Path):
    """A reader edition, checked: valid, no raw MyST, no outputs, every collapsed cell titled."""
    assert reader_path.exists(), f"{reader_path.name} is missing: run `make notebooks`"
    nb = nbformat.read(reader_path, as_version=4)
    nbformat.validate(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            assert reader.raw_myst(cell.source) == [], f"cell {i} shows raw MyST"
        else:
            assert cell.outputs == [] and cell.execution_count is None, f"cell {i} has outputs"
            if cell.metadata.get("jupyter", {}).get("source_hidden"):
                assert cell.source.startswith("# @title "), f"collapsed cell {i} has no title"
                assert cell.metadata.get("cellView") == "form"
    return nb


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_reader_edition_exists_is_clean_and_complete(path):
    nb = _clean_reader_edition(READER / path.name)
    chapter = nbformat.read(path, as_version=4)
    # every line of code the chapter runs is in the reader edition, but for glue bookkeeping
    reader_code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for cell in chapter.cells:
        if cell.cell_type == "code":
            for line in reader._strip_glue(cell.source).splitlines():
                titled = line.replace("# ", "# @title ", 1)  # a comment that became the title
                assert line in reader_code or titled in reader_code, f"lost the line {line!r}"
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert "course_attention" in first_code.source, "the setup cell comes first"


def test_every_chapter_notebook_has_a_reader_edition_and_nothing_else_is_there():
    names = {p.name for p in CHAPTERS}
    assert {p.name for p in READER.glob("*.ipynb")} == names


def _build_is_fresh(chapters: list[Path]) -> bool:
    """Each chapter's execution in the book's build is newer than the chapter and the package."""
    executed = ROOT / "_build" / "jupyter_execute" / "chapters"
    package = max(p.stat().st_mtime for p in (ROOT / "src").rglob("*.py"))
    for chapter in chapters:
        built = executed / chapter.name
        if not built.exists() or built.stat().st_mtime <= max(package, chapter.stat().st_mtime):
            return False
    return True


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory, request) -> Path:
    """The reader editions written afresh from the build `make test` has just run (with
    ``--chapter``, `make chapter`'s incremental build: that chapter's execution must be fresh)."""
    prefix = request.config.getoption("--chapter")
    chapters = [c for c in CHAPTERS if not prefix or c.stem.startswith(prefix)]
    assert _build_is_fresh(chapters), (
        "the book's build is older than the chapters: run `make notebooks`")
    out = tmp_path_factory.mktemp("notebooks")
    reader.write_reader_notebooks(ROOT, out)
    return out


@pytest.mark.notebooks
def test_reader_notebooks_are_not_stale(regenerated):
    """Compare notebooks/ with a fresh generation, as nbdev's clean check does.

    On what the sources determine (:func:`reader.comparable`): a glued value's digits differ
    between computers and are compared by presence (its name, format and kind)."""
    stale = [
        p.name for p in CHAPTERS
        if reader.comparable((regenerated / p.name).read_text(encoding="utf-8"))
        != reader.comparable((READER / p.name).read_text(encoding="utf-8"))
    ]
    assert not stale, f"notebooks/ is stale for {stale}: run `make notebooks` and commit"


def website_glued_values(doc: str) -> list[str]:
    """The glued texts of a chapter's page on the built website (Sphinx's smart quotes undone)."""
    page = (ROOT / "_build" / "html" / f"{doc}.html").read_text(encoding="utf-8")
    texts = re.findall(r'<span class="pasted-text">([^<]*)</span>', page)
    return [html.unescape(t).translate(SMART_QUOTES) for t in texts]


SMART_QUOTES = str.maketrans("‘’“”", "''\"\"")


@pytest.mark.notebooks
@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_every_glued_value_of_the_website_is_in_the_reader_text(path, regenerated):
    values = website_glued_values(f"chapters/{path.stem}")
    text = "\n".join(
        c.source for c in nbformat.read(regenerated / path.name, as_version=4).cells
        if c.cell_type == "markdown"
    )
    missing = [v for v in values if v not in text]
    assert values and not missing, f"{path.name}: glued values missing: {missing[:5]}"


def test_toc_lists_every_reader_notebook_source():
    assert all(f"chapters/{p.stem}" in toc_files() for p in READER.glob("*.ipynb"))


def test_launch_buttons_and_download_open_the_reader_edition():
    from course_book import book

    class Config:
        course_attention_language = "en"
        course_attention_reader_dir = "notebooks"
        course_attention_reader_path = "notebooks"

    class App:
        srcdir = str(ROOT)
        config = Config()

    context = {
        "pathto": lambda name, resource=0: f"../{name}",
        "header_buttons": [
            {"buttons": [
                {"url": "https://colab.research.google.com/github/o/r/blob/main/chapters/"
                        "01_soft_lookup.ipynb"},
                {"url": "https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/chapters/"
                        "01_soft_lookup.ipynb"},
            ]},
            {"buttons": [{"label": "download-source-button",
                          "url": "../_sources/chapters/01_soft_lookup.ipynb"}]},
        ],
    }
    book._reader_edition_buttons(App(), "chapters/01_soft_lookup", "page.html", context, None)
    colab, binder = context["header_buttons"][0]["buttons"]
    assert colab["url"].endswith("/blob/main/notebooks/01_soft_lookup.ipynb")
    assert binder["url"].endswith("urlpath=lab/tree/notebooks/01_soft_lookup.ipynb")
    download = context["header_buttons"][1]["buttons"][0]
    assert download["url"] == "../_static/notebooks/01_soft_lookup.ipynb"


def test_readme_and_make_lab_point_at_the_reader_notebooks():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "blob/main/notebooks/01_soft_lookup.ipynb" in readme
    assert "lab/tree/notebooks" in readme
    assert re.search(r"^lab:.*\n\t.*jupyter lab notebooks/", (ROOT / "Makefile").read_text(),
                     re.MULTILINE)


READER_ZH = READER / "zh"


def _code_without_titles(nb) -> list[list[tuple[int, str]]]:
    """Each code cell's tokens but its comments (the Chinese edition translates those), without
    the Colab title and the setup call's language."""
    return [code_tokens(re.sub(r"\A# @title [^\n]*\n?", "", c.source).replace(', lang="zh"', ""))
            for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_chinese_reader_edition_is_clean_and_runs_the_same_code(path):
    """notebooks/zh/: Chinese prose, no raw MyST, no outputs, titled collapsed cells, and the
    code of the English reader edition but for the language the setup call passes (its comments
    are translated: tests/test_i18n_comments.py)."""
    chinese = _clean_reader_edition(READER_ZH / path.name)
    english = nbformat.read(READER / path.name, as_version=4)
    assert _code_without_titles(chinese) == _code_without_titles(english)
    assert sum('lang="zh"' in c.source for c in chinese.cells) == 1
    intro = chinese.cells[1].source
    assert intro.startswith("> **读者版。**") and "notebooks/zh/" in intro


def test_the_chinese_reader_editions_are_the_chapters_and_nothing_else():
    assert {p.name for p in READER_ZH.glob("*.ipynb")} == {p.name for p in CHAPTERS}


@pytest.mark.notebooks
def test_chinese_reader_notebooks_are_not_stale(tmp_path):
    assert (ROOT / "zh" / "_build" / "html").is_dir(), "run `make strict-build` first"
    reader.write_reader_notebooks(ROOT, tmp_path, lang="zh")
    stale = [
        p.name for p in CHAPTERS
        if reader.comparable((tmp_path / p.name).read_text(encoding="utf-8"))
        != reader.comparable((READER_ZH / p.name).read_text(encoding="utf-8"))
    ]
    assert not stale, f"notebooks/zh/ is stale for {stale}: run `make notebooks` and commit"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", CHAPTERS, ids=IDS)
def test_the_checker_is_explained_where_the_notebook_first_uses_it(path, lang):
    """Issue 24 item 31: a learner who opens any one notebook meets the checker explained at its
    first checked exercise, and every checked exercise's heading shows the id to pass."""
    from course_attention.exercises import EXERCISES

    nb = nbformat.read((READER if lang == "en" else READER_ZH) / path.name, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    headings = re.findall(r"^### (.+)$", text, re.M)
    checked = [h for h in headings if any(f"`{i}`" in h for i in EXERCISES)]
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    ids = re.findall(r"^:label: ex-(\S+)$", source, re.M)
    assert len(checked) == sum(i in EXERCISES for i in ids), f"{path.name}: {headings}"
    note = READER_WORDS[lang]["checker_note"].split("`")[0]  # the words before the id
    assert text.count(note) == (1 if checked else 0)
    if checked:
        first = re.search(r"`([a-z0-9-]+)`\)?$", checked[0])[1]
        start, at = text.index(f"### {checked[0]}"), text.index(note)
        after = text.find("\n### ", start + 1)
        assert start < at and (after == -1 or at < after), "the note sits in the first exercise"
        assert f'`ex.check("{first}", your_function)`' in text[at:]
