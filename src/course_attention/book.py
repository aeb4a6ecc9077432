"""Jupyter Book plumbing: plotly figures in the static site, with no CDN.

Two parts, both listed in the book's configuration:

* :class:`PlotlyMimeRenderer`, a myst-nb mime-render plugin (entry point
  ``myst_nb.mime_renderers``): it turns plotly's JSON output into a ``<div>`` plus a
  ``Plotly.newPlot`` call and asks for ``plotly.min.js`` on that page only.
* :func:`setup`, a Sphinx extension (``course_attention.book`` in ``_config.yml``): at the end of
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
        label = escape(figure_label(figure), quote=True)
        html = f'<figure class="plotly-figure" role="group" aria-label="{label}">{html}</figure>'
        return [nodes.raw("", html, format="html", classes=["output", "plotly-figure"])]


def figure_label(figure: dict) -> str:
    """A text alternative for a screen reader: the title, or the kinds of plot and their axes."""
    layout = figure.get("layout", {})
    title = layout.get("title", {})
    title = title.get("text") if isinstance(title, dict) else title
    kinds = sorted({trace.get("type", "scatter") for trace in figure.get("data", [])})
    axes = [
        (layout.get(axis, {}).get("title") or {}).get("text")
        for axis in ("xaxis", "yaxis")
        if isinstance(layout.get(axis, {}).get("title"), dict)
    ]
    described = f"Interactive {' and '.join(kinds) or 'figure'}"
    if any(axes):
        described += " of " + " against ".join(a for a in reversed(axes) if a)
    if layout.get("sliders"):
        described += ", with a slider"
    text = f"{title}. {described}" if title else described
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


def _add_static_path(app: Any) -> None:
    # after Jupyter Book has read its own config: it adds every .js/.css of html_static_path
    # folders to every page, which is what we want for this one stylesheet only
    app.config.html_static_path.append(str(Path(__file__).parent / "static"))


def setup(app: Any) -> dict[str, Any]:
    """Sphinx extension entry point."""
    app.add_config_value("course_attention_plotly_dir", "_vendor/plotly", "html")
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("course_attention.css")
    app.connect("build-finished", _copy_plotly_js)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
