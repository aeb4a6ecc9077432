"""The book's Sphinx extension and myst-nb renderers: plotly figures and live explorers in the
static site, with no CDN.

Two parts, both listed in the book's configuration:

* :class:`PlotlyMimeRenderer`, a myst-nb mime-render plugin (entry point
  ``myst_nb.mime_renderers``): it turns plotly's JSON output into a ``<div>`` plus a
  ``Plotly.newPlot`` call and asks for ``plotly.min.js`` on that page only.
* :class:`ExplorerMimeRenderer`, the same for a live explorer's spec: the first state's figure,
  the spec, and the explorer runtime (``_static/explorers/``) on that page only.
* the ``course-map`` directive: the welcome page's course map
  (:func:`course_attention.viz.course_map_figure`), drawn from the models' forward passes while
  the book is built.
* :func:`setup`, a Sphinx extension (``course_book.book`` in ``_config.yml``): at the end of
  the build it copies ``plotly.min.js`` from the installed plotly into ``_static/``, so the
  browser library always matches the Python one, and it adds the course's small stylesheet.
"""

from __future__ import annotations

import json
import re
import shutil
from html import escape
from pathlib import Path
from typing import Any, ClassVar

import course_attention

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PLOTLY_JS = "plotly.min.js"
HTML_BUILDERS = ("html", "dirhtml", "singlehtml")


class PlotlyMimeRenderer:
    """Render ``application/vnd.plotly.v1+json`` outputs as static, interactive HTML."""

    mime_priority_overrides: ClassVar[list[tuple[str, str, int]]] = [
        (builder, PLOTLY_MIME, 1) for builder in HTML_BUILDERS
    ]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> list | None:
        if data.mime_type != PLOTLY_MIME:
            return None
        from docutils import nodes

        content = data.content
        figure = json.loads(content) if isinstance(content, (str, bytes)) else content
        TRACE_TYPES.update(trace.get("type", "scatter") for trace in figure.get("data", []))
        for frame in figure.get("frames", []):
            TRACE_TYPES.update(trace.get("type", "scatter") for trace in frame.get("data", []))
        html = figure_html(figure, div_id=f"fig-{data.cell_index}-{data.output_index}")
        renderer.add_js_file("plotly", PLOTLY_JS, {})
        label = escape(figure_label(figure, _language(renderer)), quote=True)
        html = f'<figure class="plotly-figure" role="group" aria-label="{label}">{html}</figure>'
        return [nodes.raw("", html, format="html", classes=["output", "plotly-figure"])]


EXPLORER_MIME = "application/vnd.course-attention.explorer+json"  # = explorers.EXPLORER_MIME
#: The mark of an explorer's saved first-state outputs (as ``explorers.STATIC_MIME``). The page
#: runs the explorer itself, so they are drawn as nothing and each cell shows one explorer.
STATIC_MIME = "application/vnd.course-attention.explorer-static+json"
EXPLORER_DIR = "explorers"  # under _static/: core.js, one file per kind, models/
#: The folder of the explorers' page code, beside each kind's Python (in the course package).
EXPLORER_SOURCE = Path(course_attention.__file__).parent / "explorers"


class ExplorerMimeRenderer:
    """Render an explorer spec (:mod:`course_attention.explorers`) as a live explorer of the page.

    The page gets the first state as a static plotly figure, the spec as JSON, and the runtime
    (``_static/explorers/core.js`` plus the kind's file). A model's weights go to their own
    file under ``_static/explorers/models/``, fetched only when the reader asks for them.
    Outranks the ipywidgets view that shares the output. The explorer's saved first-state
    outputs (:data:`STATIC_MIME`: figure and note, for a notebook reopened without its kernel)
    outrank their plotly and HTML copies and render as nothing.
    """

    mime_priority_overrides: ClassVar[list[tuple[str, str, int]]] = [
        (builder, mime, rank) for builder in HTML_BUILDERS
        for mime, rank in ((STATIC_MIME, 0), (EXPLORER_MIME, 2))
    ]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> list | None:
        from docutils import nodes

        if data.mime_type == STATIC_MIME:
            # Not []: myst-nb drops a mime type that renders no node, and the bundle then falls
            # back to its plotly and HTML copies, so the page would draw the explorer twice.
            return [nodes.comment("", "an explorer's saved first state: the page runs it live")]
        if data.mime_type != EXPLORER_MIME:
            return None

        content = data.content
        spec = dict(json.loads(content) if isinstance(content, (str, bytes)) else content)
        figure = spec.pop("figure")
        TRACE_TYPES.update(trace.get("type", "scatter") for trace in figure.get("data", []))
        env = renderer.renderer.sphinx_env
        if spec.get("model") is not None:
            spec["model"] = _write_model(env, spec["kind"], spec["model"])
        for key, uri in explorer_scripts(spec):
            renderer.add_js_file(key, uri, {})
        html = explorer_html(spec, figure, div_id=f"fig-{data.cell_index}-{data.output_index}",
                             language=_language(renderer))
        return [nodes.raw("", html, format="html", classes=["output", "ca-explorer-output"])]


def explorer_scripts(spec: dict) -> list[tuple[str, str]]:
    """``(key, path under _static/)`` of every script an explorer's page needs, in order."""
    names = [*spec.get("scripts", []), spec["kind"]]
    return [("plotly", PLOTLY_JS), ("ca-explorers", f"{EXPLORER_DIR}/core.js")] + [
        (f"ca-{name}", f"{EXPLORER_DIR}/{name}.js") for name in names
    ]


def explorer_html(spec: dict, figure: dict, div_id: str, language: str = "en") -> str:
    """The explorer's HTML: controls (filled by the runtime), a message line, the first state's
    figure, the spec as JSON, and a note for readers without JavaScript, in ``language``."""
    text = json.dumps(spec, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    words = _words(language)
    label = escape(words["live"].format(label=figure_label(figure, language)), quote=True)
    return (
        f'<figure class="plotly-figure ca-explorer" role="group" aria-label="{label}"'
        f' data-kind="{escape(spec["kind"], quote=True)}">'
        '<div class="ca-controls" hidden></div>'
        '<p class="ca-message" role="status" aria-live="polite" hidden></p>'
        f"{figure_html(figure, div_id=div_id)}"
        f'<script type="application/json" class="ca-spec">{text}</script>'
        f'<noscript><p class="ca-noscript">{escape(words["noscript"])}</p></noscript>'
        "</figure>"
    )


def _write_model(env: Any, kind: str, payload: dict) -> dict:
    """Write a model's weights to ``_static/explorers/models/`` (named by content); return the
    page's reference: its URL relative to the page, and its size in bytes."""
    import hashlib

    from myst_nb._compat import get_env_app  # env.app, across Sphinx versions

    body = json.dumps(payload, separators=(",", ":")).encode()
    name = f"{kind}-{hashlib.sha256(body).hexdigest()[:12]}.json"
    folder = Path(get_env_app(env).outdir) / "_static" / EXPLORER_DIR / "models"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(body)
    up = "../" * env.docname.count("/")
    return {"url": f"{up}_static/{EXPLORER_DIR}/models/{name}", "bytes": len(body)}


#: The words the site puts around a figure for a screen reader (``aria-label``) and for a
#: reader without JavaScript, per site language; the title and the axes come from the figure,
#: already in the page's language. The glossary's 交互图 is "explorer".
WORDS: dict[str, dict[str, Any]] = {
    "en": {
        "kinds": {},
        "figure": "figure",
        "described": "Interactive {kinds}",
        "and": " and ",
        "axes": " of {y} against {x}",
        "x only": " of {x}",
        "y only": " of {y}",
        "slider": ", with a slider",
        "titled": "{title}. {described}",
        "live": "Live explorer. {label}",
        "noscript": "This explorer runs in your browser and needs JavaScript; open the notebook "
        "in JupyterLab or Colab to use it there.",
    },
    "zh": {
        "kinds": {"scatter": "散点图", "heatmap": "热力图", "bar": "柱状图", "table": "表格"},
        "figure": "图",
        "described": "交互式{kinds}",
        "and": "和",
        "axes": "，纵轴为{y}，横轴为{x}",
        "x only": "，横轴为{x}",
        "y only": "，纵轴为{y}",
        "slider": "，带滑块",
        "titled": "{title}。{described}",
        "live": "交互图。{label}",
        "noscript": "这个交互图在你的浏览器中运行，需要 JavaScript；在 JupyterLab 或 Colab "
        "中打开笔记本，就可以在那里使用它。",
    },
}


def _words(language: str) -> dict[str, Any]:
    if language not in WORDS:
        raise ValueError(f"language must be one of {sorted(WORDS)}; got {language!r}")
    return WORDS[language]


def _language(renderer: Any) -> str:
    """The language of the site a myst-nb renderer is building (``course_attention_language``)."""
    return getattr(renderer.renderer.sphinx_env.config, "course_attention_language", "en")


def figure_label(figure: dict, language: str = "en") -> str:
    """A text alternative for a screen reader, in ``language`` (``"en"`` or ``"zh"``): the
    title, then the kinds of plot and their axes."""
    words = _words(language)
    layout = figure.get("layout", {})
    title = layout.get("title", {})
    title = title.get("text") if isinstance(title, dict) else title
    kinds = sorted({trace.get("type", "scatter") for trace in figure.get("data", [])})
    x, y = (
        (layout.get(axis, {}).get("title") or {}).get("text")
        if isinstance(layout.get(axis, {}).get("title"), dict)
        else None
        for axis in ("xaxis", "yaxis")
    )
    named = words["and"].join(words["kinds"].get(k, k) for k in kinds) or words["figure"]
    described = words["described"].format(kinds=named)
    if x and y:
        described += words["axes"].format(x=x, y=y)
    elif x or y:
        described += words["x only" if x else "y only"].format(x=x, y=y)
    if layout.get("sliders"):
        described += words["slider"]
    text = words["titled"].format(title=title, described=described) if title else described
    return re.sub(r"<[^>]+>", " ", text).strip()


def figure_html(figure: dict, div_id: str) -> str:
    """A ``<div>`` and the script that draws ``figure`` into it (plotly.js loaded by the page)."""
    import plotly.io as pio

    return pio.to_html(
        figure,
        include_plotlyjs=False,
        full_html=False,
        auto_play=False,
        div_id=div_id,
        validate=False,
        config={"responsive": True, "displaylogo": False},
    )


#: Trace types drawn on the site's pages (filled while the pages are written).
TRACE_TYPES: set[str] = set()
#: Trace types of plotly.js's "cartesian" bundle, a third of the full bundle's 4.7 MB.
CARTESIAN_TYPES = frozenset(
    "bar box contour heatmap histogram histogram2d histogram2dcontour image pie scatter "
    "scatterternary violin".split()
)


def plotly_js_path(vendor_dir: Path | None = None) -> Path:
    """The ``plotly.min.js`` the site serves: the same version as the installed plotly.

    The cartesian bundle of that exact plotly.js version when ``vendor_dir`` holds it (``make``
    fetches it with ``npm pack``) and every figure uses only its trace types; otherwise the full
    bundle shipped inside the Python package.
    """
    import plotly
    from plotly.offline import get_plotlyjs_version

    if vendor_dir is not None and TRACE_TYPES <= CARTESIAN_TYPES:
        small = vendor_dir / f"plotly-cartesian-{get_plotlyjs_version()}.min.js"
        if small.is_file():
            return small
    return Path(plotly.__file__).parent / "package_data" / PLOTLY_JS


def _copy_plotly_js(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        vendor = Path(app.srcdir) / app.config.course_attention_plotly_dir
        shutil.copyfile(plotly_js_path(vendor), static / PLOTLY_JS)


def explorer_script_files() -> list[Path]:
    """The page code of the explorers: ``core.js`` and one ``<kind>.js`` per kind."""
    return sorted(EXPLORER_SOURCE.glob("*.js"))


def _copy_explorer_scripts(app: Any, exception: Exception | None) -> None:
    """Copy the explorers' page code, kept beside each kind's Python, to ``_static/explorers/``
    (only the pages that hold an explorer load it: :func:`explorer_scripts`)."""
    if exception is None and app.builder.format == "html":
        folder = Path(app.outdir) / "_static" / EXPLORER_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for js in explorer_script_files():
            shutil.copyfile(js, folder / js.name)


#: The theme's colour-mode icons, each with a ``title`` ("Light", "System Settings") that is not in
#: the button's name "Color mode" (axe-core: label-content-name-mismatch).
_THEME_ICON = re.compile(r'(<i class="theme-switch [^"]*" data-mode="\w+")\s+title="[^"]*"></i>')


def _accessible_theme_switch(app: Any, exception: Exception | None) -> None:
    """Mark the colour-mode button's icons as decoration in every written page: the button's
    name says what it does and it shows its own tooltip. Done in the HTML, not by the page's
    script, so that no check and no screen reader meets the page before the script ran (under
    load, an axe-core check once did)."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        fixed = _THEME_ICON.sub(r'\1 aria-hidden="true"></i>', html)
        if fixed != html:
            page.write_text(fixed, encoding="utf-8")


def _add_static_path(app: Any) -> None:
    # after Jupyter Book has read its own config: it adds every .js/.css of html_static_path
    # folders to every page, which is what we want for this one stylesheet only
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def _drop_widget_state(app: Any, pagename: str, *args: Any) -> None:
    """The site loads no ipywidgets JavaScript (its explorers run on their own), so the widget
    state myst-nb would embed from the executed notebook is dead weight: 18–43 KB a page."""
    from myst_nb.sphinx_ import NbMetadataCollector

    if getattr(app.env, "nb_metadata", None) is not None:
        NbMetadataCollector.get_js_files(app.env, pagename).pop("ipywidgets_state", None)


def _reader_edition_buttons(app: Any, pagename: str, templatename: str, context: dict,
                            doctree: Any) -> None:
    """Colab, Binder and the download button open the reader edition (``notebooks/``, or
    ``notebooks/zh/`` on the Chinese site), which Jupyter renders like this page, instead of the
    MyST source in ``chapters/``."""
    name = Path(pagename).name
    folder = app.config.course_attention_reader_dir
    reader = Path(app.srcdir) / app.config.course_attention_reader_path / f"{name}.ipynb"
    if not pagename.startswith("chapters/") or not reader.is_file():
        return

    def retarget(buttons: list[dict]) -> None:
        for button in buttons:
            retarget(button.get("buttons", []))
            url = button.get("url", "")
            if f"chapters/{name}.ipynb" in url and "_sources" not in url:
                button["url"] = url.replace(f"chapters/{name}.ipynb", f"{folder}/{name}.ipynb")
            elif button.get("label") == "download-source-button":
                button["url"] = f"{context['pathto']('_static', 1)}/notebooks/{name}.ipynb"
                button["tooltip"] = (
                    "下载笔记本（读者版）" if app.config.course_attention_language == "zh"
                    else "Download the notebook (reader edition)"
                )

    retarget(context.get("header_buttons", []))


def _copy_reader_notebooks(app: Any, exception: Exception | None) -> None:
    source = Path(app.srcdir) / app.config.course_attention_reader_path
    if exception is None and app.builder.format == "html" and source.is_dir():
        target = Path(app.outdir) / "_static" / "notebooks"
        target.mkdir(parents=True, exist_ok=True)
        for notebook in source.glob("*.ipynb"):
            shutil.copyfile(notebook, target / notebook.name)


def counterpart_href(pagename: str, language: str) -> str:
    """The relative link from page ``pagename`` to the same page in the other language.

    The English site is the root of ``_build/html``; the Chinese one is its ``zh/`` folder.
    """
    up = "../" * pagename.count("/")
    return f"{up}zh/{pagename}.html" if language == "en" else f"{up}../{pagename}.html"


def _language_switch(app: Any, pagename: str, templatename: str, context: dict,
                     doctree: Any) -> None:
    """A link at the top of every page to its counterpart in the other language (中文 ↔ English)."""
    language = app.config.course_attention_language
    if doctree is None or "body" not in context:
        return
    href = escape(counterpart_href(pagename, language), quote=True)
    other, hreflang, label = (
        ("zh-CN", "zh-CN", "中文") if language == "en" else ("en", "en", "English")
    )
    notice = app.config.course_attention_notice
    notice = f' <span class="edition-notice">{escape(notice)}</span>' if notice else ""
    context["body"] = (
        f'<p class="language-switch"><a href="{href}" hreflang="{hreflang}" lang="{other}">'
        f"{label}</a>{notice}</p>\n" + context["body"]
    )
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{hreflang}" href="{href}">'
    )


def _course_map_directive() -> type:
    from docutils import nodes
    from sphinx.util.docutils import SphinxDirective

    class CourseMap(SphinxDirective):
        """``{course-map}``: :func:`course_attention.viz.course_map_figure`, computed at build."""

        def run(self) -> list:
            from course_attention.i18n import using
            from course_attention.viz import course_map_figure

            with using(self.config.course_attention_language):  # the Chinese site's map in 中文
                figure = json.loads(course_map_figure().to_json())
            TRACE_TYPES.update(trace.get("type", "scatter") for trace in figure.get("data", []))
            self.env.metadata[self.env.docname]["needs_plotly"] = True
            label = escape(figure_label(figure, self.config.course_attention_language),
                           quote=True)
            html = (f'<figure class="plotly-figure" role="group" aria-label="{label}">'
                    f'{figure_html(figure, div_id="course-map")}</figure>')
            return [nodes.raw("", html, format="html", classes=["output", "plotly-figure"])]

    return CourseMap


def _plotly_on_directive_pages(app: Any, pagename: str, *args: Any) -> None:
    if app.env.metadata.get(pagename, {}).get("needs_plotly"):
        app.add_js_file(PLOTLY_JS)  # this page only (called from html-page-context)


def _no_output_widget_echo() -> None:
    """Keep nbclient's stand-in for an ``ipywidgets.Output`` from writing to the kernel.

    Every explorer draws its first figure into an ``Output`` widget while its cell runs. nbclient
    mimics a front end: each captured output is echoed to the kernel as a ``comm_msg`` on the
    shell socket, from the task that reads IOPub, while another task awaits the cell's
    ``execute_reply`` on that same socket. zmq signals a readable socket by an edge, and the send
    can consume the edge of a reply that has just arrived: the waiting task then sleeps until the
    cell's timeout (120 s), finds the reply and goes on, without an error (chapter 11's tiling
    explorer, sometimes chapter 4's mask explorer, in full builds). The echo only keeps the
    kernel's copy of the widget's outputs, which the build never reads; the notebook's saved
    widget state is written by nbclient either way.
    """
    from nbclient.output_widget import OutputWidget

    OutputWidget.sync_state = lambda self: None  # type: ignore[method-assign]


#: The bibliography's style (``bibtex_default_style`` in ``_config.yml``): pybtex's ``alpha``
#: labels, entries sorted by author (see :func:`bibliography_sort_key`).
BIB_STYLE = "course_alpha"


def bibliography_sort_key(entry: Any) -> tuple[str, str, str]:
    """How the references page orders a pybtex entry: by the authors' last names, then year,
    then title, case and braces ignored. An entry without an author sorts by its ``key`` field
    (the name its label shows, "Summary of Happy-LLM"), else by its title; pybtex's own
    ``author_year_title`` puts those first and ``{Datawhale}`` last (a brace sorts after z)."""

    def plain(text: str) -> str:
        return re.sub(r"[{}\\]", "", str(text)).strip().lower()

    people = entry.persons.get("author") or entry.persons.get("editor") or []
    if people:
        who = "   ".join(
            "  ".join((" ".join(p.prelast_names + p.last_names),
                       " ".join(p.first_names + p.middle_names)))
            for p in people
        )
    else:
        who = entry.fields.get("key", "") or entry.fields.get("title", "")
    fields = entry.fields
    return plain(who), str(fields.get("year", "")), plain(fields.get("title", ""))


def _register_bibliography_style() -> None:
    """Register :data:`BIB_STYLE` with pybtex (once): alpha labels, sorted by
    :func:`bibliography_sort_key`."""
    from pybtex.plugin import find_plugin, register_plugin
    from pybtex.style.sorting import BaseSortingStyle

    try:
        find_plugin("pybtex.style.formatting", BIB_STYLE)
        return
    except Exception:  # not registered yet
        pass

    class AuthorSorting(BaseSortingStyle):
        def sorting_key(self, entry: Any) -> tuple[str, str, str]:
            return bibliography_sort_key(entry)

    alpha = find_plugin("pybtex.style.formatting", "alpha")
    style = type("CourseAlphaStyle", (alpha,), {"default_sorting_style": "course_author"})
    register_plugin("pybtex.style.sorting", "course_author", AuthorSorting)
    register_plugin("pybtex.style.formatting", BIB_STYLE, style)


def _accessible_bibliography(app: Any, pagename: str, templatename: str, context: dict,
                             doctree: Any) -> None:
    """The bibliography's entries are items of its list: docutils marks them
    ``role="doc-biblioentry"``, a role ARIA 1.2 deprecates, and a ``role="list"`` may hold only
    list items (axe-core: aria-deprecated-role, aria-required-children)."""
    body = context.get("body")
    if body and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app: Any) -> dict[str, Any]:
    """Sphinx extension entry point."""
    _no_output_widget_echo()
    _register_bibliography_style()
    app.add_config_value("course_attention_plotly_dir", "_vendor/plotly", "html")
    app.add_config_value("course_attention_language", "en", "html")
    app.add_config_value("course_attention_notice", "", "html")  # what the edition lacks yet
    app.add_config_value("course_attention_reader_dir", "notebooks", "html")  # in the repository
    app.add_config_value("course_attention_reader_path", "notebooks", "html")  # from the srcdir
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("course_attention.css")
    app.add_js_file("course_attention.js", loading_method="defer")
    app.add_js_file("course_titles.js", loading_method="defer")  # titles wrapped as drawn
    app.connect("build-finished", _copy_plotly_js)
    app.connect("build-finished", _copy_explorer_scripts)
    app.connect("build-finished", _accessible_theme_switch)
    app.connect("html-page-context", _drop_widget_state, priority=400)  # before myst-nb's 500
    app.connect("html-page-context", _reader_edition_buttons, priority=600)  # after the theme's
    app.connect("build-finished", _copy_reader_notebooks)
    app.connect("html-page-context", _language_switch)
    app.connect("html-page-context", _accessible_bibliography)
    app.add_directive("course-map", _course_map_directive())
    app.connect("html-page-context", _plotly_on_directive_pages)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
