"""What every explorer shares: the :class:`Explorer` (ipywidgets), its output bundle, the spec.

Introduced with the explorers of chapter 1. Each explorer *kind* lives in one module of this
package beside its page code: ``lookup.py`` and ``lookup.js``, ``mask.py`` and ``mask.js``, …
The module holds the ipywidgets factory (JupyterLab, Colab: controls recomputed in Python), the
*spec* the website runs (``<kind>.js`` on top of ``core.js``, in the reader's browser) and the
Python twin of what the page computes, which the browser tests compare with the page.

An explorer cell (``widgets.soft_lookup_explorer()``) displays three outputs
(``Explorer._ipython_display_``):

1. the first state's figure, saved with the notebook (plotly's JSON, HTML for front ends
   without plotly's renderer, and :data:`STATIC_MIME`, which the website draws as nothing);
2. a note: this is a saved picture; run the cell again for the live explorer;
3. the live explorer: the ipywidgets view (:data:`WIDGET_MIME`) and the website's spec
   (:data:`EXPLORER_MIME`: kind, controls, data, model, first figure).

While the kernel runs, the live view carries a style rule that hides outputs 1 and 2 (in
JupyterLab, the two outputs just before it; elsewhere, their ``ca-static-<id>`` class). A
notebook reopened without its kernel cannot draw the widget: no rule hides 1 and 2, so the
reader sees the saved figure and the note instead of only "model not found".
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html import escape
from typing import Any

import numpy as np

from ..i18n import N_, _, using

__all__ = [
    "EXPLORER_MIME",
    "WIDGET_MIME",
    "STATIC_MIME",
    "EXPLORERS",
    "Explorer",
    "controls_spec",
    "model_payload",
    "tensors_from_payload",
    "jsonable",
]

#: The mime type of an explorer spec in a notebook output.
EXPLORER_MIME = "application/vnd.course-attention.explorer+json"
#: The mime type of an ipywidgets view (the same in ipywidgets 7.7 and 8).
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: The mark of an explorer's saved first-state outputs, figure and note. The website runs the
#: live explorer itself and draws them as nothing (``course_book.book``).
STATIC_MIME = "application/vnd.course-attention.explorer-static+json"
PLOTLY_MIME = "application/vnd.plotly.v1+json"

#: Shown under every live explorer, since a saved notebook keeps no live widgets.
REOPEN_NOTE = N_(
    "Live explorer: it runs in this kernel. After you reopen a saved notebook, run this cell "
    "again to bring it back."
)
#: Shown under the saved figure, which a notebook reopened without its kernel displays.
SAVED_NOTE = N_(
    "Saved picture of this explorer's first state: the live explorer needs the running kernel "
    "(\"model not found\" below means it is gone). Run this cell again to bring it back."
)
#: The words ``core.js`` shows for every explorer, by key (``spec["text"]``, see
#: :meth:`Explorer.spec`): templates whose ``{fields}`` ``CourseAttention.format`` fills.
CORE_TEXT = {
    "not_loaded": N_("This explorer ({kind}) did not load; the figure shows its first state."),
    "load_model": N_("Run the trained model in this page ({kb} KB)"),
    "loading_model": N_("Loading the model…"),
    "retry_model": N_("Try loading the model again"),
    "model_failed": N_("The model file did not load ({error}). The figure shows the notebook's "
                       "result."),
}
#: Each control keeps at least this width (label + ≥ 200 px of slider); the row wraps instead.
CONTROL_MIN_WIDTH = "420px"


def english(build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``build(*args, **kwargs)`` in English: the title an explorer hands to a figure function,
    which shows it in the reader's language laid out as the English one (the Chinese book
    translates the English figure, margins and all)."""
    with using("en"):
        return build(*args, **kwargs)


def jsonable(value: Any) -> Any:
    """``value`` with numpy arrays and scalars turned into lists and Python numbers.

    Floats keep every bit: JSON writes the shortest text that reads back as the same float64.
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _digits(fmt: str | None) -> int | None:
    if fmt and fmt.startswith(".") and fmt.endswith("f"):
        return int(fmt[1:-1])
    return None


def controls_spec(controls: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's controls, read off the explorer's ipywidgets: one list, two front ends.

    ``controls`` maps a keyword name to a widget (sliders, dropdowns, selection sliders,
    checkboxes, text boxes and areas). Each becomes ``{"id", "name", "type", "label", "value", …}``
    with ``type`` one of ``"range"``, ``"select"``, ``"checkbox"``, ``"text"``. ``id`` is the
    name the page's code uses; ``name``, the same name for readers of the spec, sits under a key
    whose words the Chinese book translates (``course_attention.i18n.outputs.TEXT_KEYS``),
    as ``label`` (the widget's description, already in the reader's language) and the options'
    ``label`` do: code never reads them. (So ``name`` is written as the translation would leave
    it: ``_(name)``, the name itself in English.)
    """
    import ipywidgets as w

    out = []
    for name, widget in controls.items():
        label = widget.description or name
        base = {"id": name, "name": _(name), "label": label, "value": jsonable(widget.value)}
        if isinstance(widget, (w.FloatSlider, w.IntSlider)):
            base |= {
                "type": "range",
                "min": jsonable(widget.min),
                "max": jsonable(widget.max),
                "step": jsonable(widget.step),
                "format": _digits(getattr(widget, "readout_format", None))
                if isinstance(widget, w.FloatSlider)
                else 0,
            }
        elif isinstance(widget, (w.Dropdown, w.SelectionSlider)):
            labels, values = widget._options_labels, widget._options_values  # 7.7 and 8 alike
            base |= {
                "type": "select",
                "options": [
                    {"label": str(lab), "value": jsonable(v)}
                    for lab, v in zip(labels, values, strict=True)
                ],
            }
        elif isinstance(widget, w.Checkbox):
            base |= {"type": "checkbox"}
        elif isinstance(widget, (w.Text, w.Textarea)):  # the page: a one-line box, a whole row
            base |= {"type": "text"}
        else:
            raise ValueError(f"control {name!r}: no page control for {type(widget).__name__}")
        out.append(base)
    return out


def model_payload(
    state_dict: dict[str, Any], config: dict[str, Any], extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A model as the page loads it: ``{"config", "tensors", "extra"}``.

    Each tensor of ``state_dict`` (a torch module's ``state_dict()``) becomes
    ``{"shape": [...], "data": base64 of its float32 numbers, little-endian}``; ``config`` holds
    what the page needs to rebuild the forward pass (widths, heads, layers, vocabulary).
    The book writes this to ``_static/explorers/models/`` and the page fetches it on demand.
    """
    tensors = {}
    for name, tensor in state_dict.items():
        array = np.asarray(tensor.detach().cpu().numpy() if hasattr(tensor, "detach") else tensor)
        if not np.issubdtype(array.dtype, np.floating):
            continue  # counters and other buffers the forward pass does not read
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        tensors[name] = {"shape": list(array.shape), "data": base64.b64encode(data).decode()}
    return {"config": jsonable(config), "tensors": tensors, "extra": jsonable(extra or {})}


def tensors_from_payload(payload: dict[str, Any]) -> dict[str, np.ndarray]:
    """The float32 arrays of a :func:`model_payload`, by state-dict name (tests rebuild models)."""
    return {
        name: np.frombuffer(base64.b64decode(t["data"]), dtype="<f4").reshape(t["shape"]).copy()
        for name, t in payload["tensors"].items()
    }


# ---- the ipywidgets explorer ---------------------------------------------------------------

#: Every explorer factory by name; each can be called with no arguments (tests drive them all).
EXPLORERS: dict[str, Callable[..., Explorer]] = {}


def register(factory: Callable[..., Explorer]) -> Callable[..., Explorer]:
    """Add an explorer factory to :data:`EXPLORERS` (``widgets`` exports each by its name)."""
    EXPLORERS[factory.__name__] = factory
    return factory


def _hide_saved_css(uid: str) -> str:
    """Style rules, live only while the widget is drawn, that hide this explorer's saved outputs:
    in JupyterLab the two outputs just before the widget's (figure, note), elsewhere (HTML
    outputs) their class."""
    live = f".jp-OutputArea-child .ca-live-{uid}"
    return (
        f".jp-OutputArea-child:has(+ {live}), "
        f".jp-OutputArea-child:has(+ .jp-OutputArea-child + {live}), "
        f".ca-static-{uid} {{display: none !important;}} "
        ".ca-explorer-live .ca-stale {opacity: 0.35;}"
    )


class Explorer:
    """Controls plus a figure that is rebuilt on every change (JupyterLab, Colab).

    Introduced in chapter 1. ``controls`` maps keyword names of ``make_figure`` to value widgets;
    ``buttons`` maps names to ``ipywidgets.Button``\\ s (their actions are the factory's: a button
    sets controls); ``extra`` widgets go under the row of controls (chapter 4's grid of cells).
    ``figure`` always holds the latest figure and ``message`` the latest bad-input message ('' when
    the figure is current), so tests drive an explorer without a browser. ``make_figure`` raises
    ``ValueError`` for bad input: its text is shown in the message line, as the page shows it,
    and the last good figure stays (dimmed). ``note`` adds a sentence under the explorer (what
    exists in only one of the two places). ``live`` is the website's part (see :meth:`spec`).
    """

    def __init__(
        self,
        controls: dict[str, Any],
        make_figure: Callable[..., Any],
        live: dict[str, Any] | None = None,
        buttons: dict[str, Any] | None = None,
        extra: list[Any] | None = None,
        note: str = "",
    ) -> None:
        import ipywidgets as w

        self.controls = controls
        self.buttons = dict(buttons or {})
        self.make_figure = make_figure
        self.live = live  # {"kind", "data"}, optional "model", "controls", "omit": see spec()
        self.figure: Any = None
        self.message = ""
        self._held = 0
        for control in controls.values():  # a full label, and room for the slider itself
            control.style.description_width = "initial"
            control.layout.min_width = CONTROL_MIN_WIDTH
        for button in self.buttons.values():  # the whole label, never "new query and k…"
            button.layout.width = button.layout.width or "auto"
        self.row = w.HBox([*controls.values(), *self.buttons.values()],
                          layout=w.Layout(flex_flow="row wrap"))
        self.message_line = w.HTML("", layout=w.Layout(display="none"))
        self.output = w.Output()
        self.widget = w.VBox([self.row, *(extra or []), self.message_line, self.output])
        uid = self.widget.model_id or "0"
        self.uid = uid
        text = f"{_(note)} {_(REOPEN_NOTE)}" if note else _(REOPEN_NOTE)
        self.note = w.HTML(f"<small>{escape(text)}</small><style>{_hide_saved_css(uid)}</style>")
        self.widget.children = (*self.widget.children, self.note)
        self.widget.add_class("ca-explorer-live")
        self.widget.add_class(f"ca-live-{uid}")
        for control in controls.values():
            control.observe(lambda _change: self.redraw(), names="value")
        self.redraw()

    def values(self) -> dict[str, Any]:
        """The controls' current values, by keyword name."""
        return {name: c.value for name, c in self.controls.items()}

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Set several controls, then redraw once (and not once per control)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        self.redraw()

    def say(self, text: str) -> None:
        """Show ``text`` in the message line (the page's ``ca-message``); '' hides it."""
        self.message = text
        self.message_line.value = f'<p role="status">{escape(text)}</p>' if text else ""
        self.message_line.layout.display = "" if text else "none"
        (self.output.add_class if text else self.output.remove_class)("ca-stale")

    def redraw(self) -> None:
        """Recompute the figure from the controls; bad input shows a message instead."""
        if self._held:
            return
        try:
            figure = self.make_figure(**self.values())
        except ValueError as error:
            self.say(str(error))
            return
        self.say("")
        self.figure = figure
        from IPython import get_ipython

        from .. import viz

        if get_ipython() is None:  # tests, scripts: nothing to draw into
            return
        with self.output:
            self.output.clear_output(wait=True)
            viz.show(figure)

    def spec(self) -> dict[str, Any] | None:
        """The website's explorer: ``live`` plus the controls read off the widgets (less
        ``live["omit"]``) and the page-only ones (``live["controls"]``), the words the page
        shows (``text``: ``CORE_TEXT`` and ``live["text"]``, templates in the current
        language) and the first state's figure (the page draws it before, and without, the
        live runtime).

        Every word sits under a key of ``course_attention.i18n.outputs.TEXT_KEYS``
        (``label``, ``description``, ``text``), since the Chinese book translates those of the
        English spec; nothing the code reads does (the controls' ``id``, option values, data).
        """
        if self.live is None:
            return None
        omit = set(self.live.get("omit", ()))
        shared = {k: c for k, c in self.controls.items() if k not in omit}
        extra = [_page_control(c) for c in self.live.get("controls", [])]
        spec = {k: v for k, v in self.live.items() if k != "only"}
        text = {k: _(v) for k, v in {**CORE_TEXT, **self.live.get("text", {})}.items()}
        return jsonable({**spec, "controls": controls_spec(shared) + extra, "text": text}) | {
            "figure": json.loads(self.figure.to_json()) if self.figure is not None else None
        }

    def outputs(self) -> list[dict[str, Any]]:
        """The three display bundles of ``_ipython_display_`` (see the module's docstring): the
        saved figure, the saved note, the live explorer.

        In Colab, which draws each output in a frame of its own (no style rule reaches from one
        to another), the saved outputs hide themselves instead: their script asks the kernel
        whether this explorer is alive (a callback registered under its ``uid``), which it is
        only in the session that displayed it; in a reopened notebook nothing answers and they
        stay. Colab gets no plotly JSON: it draws HTML only
        (:func:`course_attention.viz.colab_html`).
        """
        from .. import in_colab

        spec = self.spec()
        kind = spec["kind"] if spec else "explorer"
        static = {"kind": kind, "uid": self.uid}
        colab = in_colab()
        hide = _register_colab_callback(self.uid) if colab else ""
        saved = []
        if self.figure is not None:
            figure = json.loads(self.figure.to_json())
            if colab:
                from ..viz import colab_html

                html = colab_html(figure)
            else:
                html = self.figure.to_html(full_html=False, include_plotlyjs="cdn",
                                           config={"displaylogo": False, "responsive": True})
            bundle = {STATIC_MIME: static | {"part": "figure"}}
            if not colab:
                bundle[PLOTLY_MIME] = figure
            saved.append(bundle | {
                "text/html": f'<div class="ca-static-{self.uid}">{html}</div>{hide}',
                "text/plain": _("Saved figure of the explorer's first state ({kind}).").format(
                    kind=kind),
            })
        saved_note = _(SAVED_NOTE)
        saved.append({
            STATIC_MIME: static | {"part": "note"},
            "text/html": f'<p class="ca-static-{self.uid}"><small>{escape(saved_note)}</small>'
                         f"</p>{hide}",
            "text/markdown": f"<small>{saved_note}</small>",
            "text/plain": saved_note,
        })
        view = {"version_major": 2, "version_minor": 0, "model_id": self.widget.model_id}
        # text/plain: what an untrusted notebook shows instead of the widget (JupyterLab skips
        # the widget renderer there), under the saved figure and note
        live: dict[str, Any] = {WIDGET_MIME: view, "text/plain": _(
            "Live explorer ({kind}): not running. Run this cell again.").format(kind=kind)}
        if spec is not None:
            live[EXPLORER_MIME] = spec
        return [*saved, live]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        for bundle in self.outputs():
            display(bundle, raw=True)


def _page_control(control: dict[str, Any]) -> dict[str, Any]:
    """A page-only control of ``live["controls"]`` (``name`` its id, ``label`` an English
    text marked ``N_``) as the spec holds it: with its ``id`` and its words translated."""
    out = {"id": control["name"], **control}
    for key in ("name", "label", "description"):  # name: as controls_spec writes it
        if key in out:
            out[key] = _(out[key])
    return out


_COLAB_HIDE = """<script>
(function () {{
  // Colab: hide this saved output while the explorer it pictures is alive in the kernel
  var colab = window.google && google.colab, kernel = colab && google.colab.kernel;
  if (!kernel || !kernel.invokeFunction) return;
  kernel.invokeFunction("{name}", [], {{}}).then(function () {{
    document.body.style.display = "none";
    if (colab.output && colab.output.setIframeHeight) colab.output.setIframeHeight(0, true);
  }}, function () {{}});
}})();
</script>"""


def _register_colab_callback(uid: str) -> str:
    """Register, in Colab's kernel, a callback that answers while this explorer lives; return
    the script that asks it (empty outside Colab)."""
    name = f"course_attention.explorer_{uid}"
    try:
        from google.colab import output  # type: ignore[import-not-found]
    except ImportError:  # the Colab-like check: Colab's versions, not Colab's runtime
        return ""
    output.register_callback(name, lambda: True)
    return _COLAB_HIDE.format(name=name)


def slider(description: str, value: float, lo: float, hi: float, step: float) -> Any:
    """A float slider with two decimals that redraws while it moves."""
    import ipywidgets as w

    return w.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         continuous_update=True, readout_format=".2f",
                         style={"description_width": "initial"})


def number_options(values: list[float]) -> list[tuple[str, float]]:
    """Menu options that read as numbers are written: ``10000``, not ``10000.0``."""
    return [(f"{v:g}", v) for v in values]


def seeded(build: Callable[[], Any], seed: int) -> Any:
    """``build()`` with torch seeded by ``seed``, leaving the global torch RNG as it was; in
    eval mode. The explorers' default models are untrained: the chapters pass trained ones."""
    import torch

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = build()
    return model.eval()
