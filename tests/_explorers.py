"""Drive live explorers in headless Chromium: on one standalone page, or on the built site.

A standalone page (:func:`standalone`) holds one explorer exactly as the book renders it
(:func:`course_book.book.explorer_html`) with the site's scripts, so an explorer's checks run
in seconds without building the book; ``tests/_site_explorers.py`` runs the same checks on
the built site.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from course_book import book

STATIC = Path(book.__file__).parent / "static"  # the site's stylesheet


def standalone(explorer: Any, folder: Path) -> Path:
    """Write ``folder/index.html`` with ``explorer`` (a :class:`course_attention.explorers.Explorer`
    with a ``live`` spec) and the scripts it needs; return the page's path."""
    spec = explorer.spec()
    figure = spec.pop("figure")
    static = folder / "_static"
    (static / book.EXPLORER_DIR).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(book.plotly_js_path(), static / book.PLOTLY_JS)
    for js in book.explorer_script_files():  # core.js and every kind's, beside its Python
        shutil.copyfile(js, static / book.EXPLORER_DIR / js.name)
    shutil.copyfile(STATIC / "course_attention.css", static / "course_attention.css")
    if spec.get("model") is not None:
        body = json.dumps(spec["model"], separators=(",", ":")).encode()
        models = static / book.EXPLORER_DIR / "models"
        models.mkdir(exist_ok=True)
        (models / f"{spec['kind']}.json").write_bytes(body)
        spec["model"] = {"url": f"_static/{book.EXPLORER_DIR}/models/{spec['kind']}.json",
                         "bytes": len(body)}
    scripts = "".join(f'<script src="_static/{uri}"></script>' for _, uri in
                      book.explorer_scripts(spec))
    html = (
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="_static/course_attention.css">{scripts}</head>'
        f"<body><main>{book.explorer_html(spec, figure, div_id='fig-0-0')}</main></body></html>"
    )
    (folder / "index.html").write_text(html)
    return folder / "index.html"


# JavaScript run in the page. Explorer ``i`` is the i-th live explorer of the page.
_SET = """([i, name, value]) => {
  const ex = CourseAttention.explorers[i], c = ex.controls[name];
  if (!c) throw new Error('no control ' + name + ' in ' + Object.keys(ex.controls));
  const input = c.input, type = c.spec.type;
  if (type === 'select') {
    const k = c.spec.options.findIndex(o => JSON.stringify(o.value) === JSON.stringify(value));
    if (k < 0) throw new Error('no option ' + JSON.stringify(value) + ' for ' + name);
    input.selectedIndex = k;
    input.dispatchEvent(new Event('change'));
  } else if (type === 'checkbox') {
    input.checked = !!value;
    input.dispatchEvent(new Event('change'));
  } else {
    input.value = value;
    input.dispatchEvent(new Event('input'));
  }
  return ex.values()[name];
}"""


_SET_MANY = """([i, values]) => {
  const ex = CourseAttention.explorers[i], names = Object.keys(values);
  for (const name of names) if (!ex.controls[name]) throw new Error('no control ' + name);
  names.slice(0, -1).forEach(name => ex.controls[name].write(values[name]));
  const last = names[names.length - 1];
  return last === undefined ? null : (""" + _SET + """)([i, last, values[last]]);
}"""


def wait_live(page: Any, count: int = 1, timeout: int = 10000) -> None:
    """Wait until ``count`` explorers of the page run (a model explorer: before its model loads)."""
    page.wait_for_function(
        "n => window.CourseAttention && CourseAttention.explorers.length >= n", arg=count,
        timeout=timeout,
    )


def load_model(page: Any, i: int = 0, timeout: int = 20000) -> None:
    """Click explorer ``i``'s load button and wait until it runs the model."""
    page.locator("figure.ca-explorer").nth(i).locator("button.ca-load").click()
    page.wait_for_function(
        "i => CourseAttention.explorers[i].update !== null", arg=i, timeout=timeout
    )


def set_control(page: Any, i: int, name: str, value: Any) -> Any:
    """Set a control of explorer ``i`` as a reader would (an input or change event); the
    explorer redraws synchronously. Returns the control's value as the page reads it."""
    return page.evaluate(_SET, [i, name, value])


def set_controls(page: Any, i: int, values: dict[str, Any]) -> dict[str, Any]:
    """Set several controls of explorer ``i`` and redraw once: each but the last is written
    without an event (as the page writes a preset's values), the last as :func:`set_control`
    sets it; the explorer reads every control when it redraws. Returns the controls' values."""
    page.evaluate(_SET_MANY, [i, values])
    return controls(page, i)


def plotted(page: Any, i: int = 0) -> list[dict]:
    """The traces explorer ``i`` plots now (``gd.data``: the numbers on screen)."""
    return page.evaluate("i => CourseAttention.explorers[i].figure.data", i)


def thin(values: Any, n: int | None) -> list:
    """``values`` as a list, or, with ``n``, ``n`` of them spread from the first to the last: a
    check's held-out sample where the page's numbers were already checked in full elsewhere (the
    Chinese page holds the English page's)."""
    values = list(values)
    if n is None or n >= len(values):
        return values
    if n < 2:
        raise ValueError(f"need n ≥ 2 to keep both ends; got {n}")
    return [values[round(k * (len(values) - 1) / (n - 1))] for k in range(n)]


def pairs(first: list, second: list, n: int | None) -> list[tuple]:
    """Every (a, b) of ``first`` × ``second``; with ``n``, ``n`` of them (or more where needed)
    chosen so that every value of each list is taken at least once."""
    every = [(a, b) for a in first for b in second]
    if n is None or n >= len(every):
        return every
    chosen: list[tuple] = []
    for k in range(max(len(first), len(second))):  # a diagonal: each value once at least
        pair = (first[k % len(first)], second[k % len(second)])
        if pair not in chosen:
            chosen.append(pair)
    chosen += [p for p in every if p not in chosen][: max(0, n - len(chosen))]
    return chosen


def message(page: Any, i: int = 0) -> str:
    """The explorer's message line ('' when it shows a figure)."""
    return page.evaluate(
        "i => { const m = CourseAttention.explorers[i].message;"
        " return m.hidden ? '' : m.textContent; }",
        i,
    )


def controls(page: Any, i: int = 0) -> dict[str, Any]:
    """The names and current values of explorer ``i``'s controls."""
    return page.evaluate("i => CourseAttention.explorers[i].values()", i)


def spec(page: Any, i: int = 0) -> dict[str, Any]:
    """Explorer ``i``'s spec as the page parsed it."""
    return page.evaluate("i => CourseAttention.explorers[i].spec", i)


def model_file(page: Any, i: int, root: Path) -> Path:
    """The file behind explorer ``i``'s model URL, under the served folder ``root``."""
    from urllib.parse import urljoin, urlparse

    url = urljoin(page.url, spec(page, i)["model"]["url"])
    return root / urlparse(url).path.lstrip("/")


def open_page(chromium: Any, url: str, width: int = 1000) -> tuple[Any, list[str], list[str]]:
    """Open ``url``; return the page, the requests that left 127.0.0.1 and the console errors."""
    page = chromium.new_page(viewport={"width": width, "height": 900})
    outside: list[str] = []
    errors: list[str] = []
    local = "http://127.0.0.1"
    page.on("request", lambda r: None if r.url.startswith(local) else outside.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="load")
    return page, outside, errors


def assert_fits_375(chromium: Any, url: str) -> None:
    """At 375 px the page does not scroll sideways, every control fits, nothing goes wrong."""
    page, outside, errors = open_page(chromium, url, width=375)
    wait_live(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    for box in page.locator(".ca-control").all():
        b = box.bounding_box()
        assert b["x"] >= 0 and b["x"] + b["width"] <= 375, b
    assert not outside and not errors, (outside, errors)
    page.close()
