"""How far each glued value moves on another computer: ``_build/drift.json`` and a summary.

``make colab-check`` executes every chapter a second time with another CPU's kernels
(``tests/colab_like.py``). This compares its glued values with the strict build's and

* writes ``_build/drift.json``: per chapter and glued name, both values, whether the value is the
  build's own example (glued with ``ca.glue_varies``), how far it moved, and the text the prose
  prints in each run;
* prints a summary per chapter: how many values move beyond rounding, and the largest move;
* fails, naming them, when a value glued with plain ``ca.glue`` moves beyond rounding or prints
  differently: such a value must be the same on every computer (what the same-machine repeat
  guarded against: unseeded randomness), or be glued with ``ca.glue_varies`` and worded as the
  build's (its spread, or "in the build, …").

Timings (cells tagged ``timing``, names ending in ``_seconds``) are measured, not computed:
left out.
"""

from __future__ import annotations

import ast
import json
import math
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _notebooks import ROOT, notebooks  # noqa: E402
from course_attention import VARIES  # noqa: E402
from course_book import reader  # noqa: E402

BUILD = ROOT / "_build" / "jupyter_execute" / "chapters"
OTHER = ROOT / "_build" / "other_kernels"
DRIFT = ROOT / "_build" / "drift.json"
#: Two floats agree "to rounding" when they differ by at most this, relative to max(1, |x|):
#: float32 arithmetic on other kernels moves a value by about 1e-7, and a few steps of float32
#: training by about 1e-6; unseeded randomness moves it by far more.
ROUNDING = 1e-4


def _value(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _numbers(value: object) -> list[float] | None:
    """The numbers in a glued value (a number, or a flat list/tuple of numbers), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (list, tuple)) and value and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        return [float(v) for v in value]
    return None


def move(build: str, other: str) -> tuple[float | None, bool]:
    """(the largest relative move, whether it is beyond rounding) of one glued value."""
    if build == other:
        return 0.0, False
    a, b = _numbers(_value(build)), _numbers(_value(other))
    if a is None or b is None or len(a) != len(b):
        return None, True  # text, or a list that changed length: moved
    worst, beyond = 0.0, False
    for x, y in zip(a, b, strict=True):
        if math.isnan(x) and math.isnan(y):
            continue
        diff = abs(x - y)
        worst = max(worst, diff / max(abs(x), abs(y), 1e-300))
        beyond |= not diff <= ROUNDING * max(1.0, abs(x), abs(y))
    return worst, beyond


def prose_uses(path: Path) -> dict[str, set[str]]:
    """name -> the format specs the chapter's prose prints it with (``{glue:text}`x:.2f```)."""
    uses: dict[str, set[str]] = {}
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for match in reader.ROLE_RE.finditer(cell.source):
            if match.group("role").startswith("glue"):
                body = match.group("body")
                name, spec = body.rsplit(":", 1) if ":" in body else (body, "")
                if match.group("role") != "glue:text":
                    spec = ""
                uses.setdefault(name, set()).add(spec)
    return uses


def printed(text: str, spec: str) -> str:
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, spec or "s") if spec else text


def chapter_drift(path: Path) -> dict[str, dict]:
    """Every glued value of one chapter in both runs, with its move (timings left out)."""
    build = json.loads((BUILD / f"{path.stem}.glue.json").read_text(encoding="utf-8"))
    other = json.loads((OTHER / f"{path.stem}.glue.json").read_text(encoding="utf-8"))
    timing = reader._timing_names(nbformat.read(path, as_version=4))
    uses = prose_uses(path)
    rows = {}
    for name, out in build.items():
        if name in timing:
            continue
        a = out["data"].get("text/plain", "")
        b = other.get(name, {}).get("data", {}).get("text/plain")
        varies = bool(out.get("metadata", {}).get(VARIES, {}).get("varies"))
        if b is None:
            rows[name] = {"build": a, "other": None, "varies": varies, "move": None,
                          "beyond_rounding": True, "prints_differently": [], "missing": True}
            continue
        worst, beyond = move(a, b)
        specs = uses.get(name, ())
        differs = sorted(spec for spec in specs if printed(a, spec) != printed(b, spec))
        rows[name] = {
            "build": a, "other": b, "varies": varies, "move": worst, "beyond_rounding": beyond,
            "prints_differently": [
                {"spec": spec, "build": printed(a, spec), "other": printed(b, spec)}
                for spec in differs
            ],
        }
    return rows


def _short(text: str | None, width: int = 24) -> str:
    text = "—" if text is None else text
    return text if len(text) <= width else text[: width - 1] + "…"


def summary(chapter: str, rows: dict[str, dict]) -> str:
    moved = {n: r for n, r in rows.items() if r["beyond_rounding"]}
    numeric = {n: r for n, r in moved.items() if r["move"] is not None}
    line = (f"{chapter}: {len(rows)} glued values ({sum(r['varies'] for r in rows.values())} "
            f"the build's); {len(moved)} move beyond rounding")
    if numeric:
        name, row = max(numeric.items(), key=lambda item: item[1]["move"])
        line += (f", largest {name} {_short(row['build'])} -> {_short(row['other'])} "
                 f"({row['move']:.0%})")
    texts = len(moved) - len(numeric)
    if texts:
        line += f"; {texts} text or list values changed"
    printed_differently = sum(bool(r["prints_differently"]) for r in rows.values())
    return line + f"; {printed_differently} print differently"


def problems(chapter: str, rows: dict[str, dict]) -> list[str]:
    """Values glued as the same everywhere (plain ``glue``) that moved on the other kernels."""
    found = []
    for name, row in rows.items():
        if row["varies"]:
            continue
        if row.get("missing"):
            found.append(f"{chapter}: {name} was not glued on the other kernels")
        elif row["prints_differently"]:
            shown = row["prints_differently"][0]
            found.append(f"{chapter}: {name} prints {shown['build']!r} in the build and "
                         f"{shown['other']!r} on other kernels")
        elif row["beyond_rounding"]:
            found.append(f"{chapter}: {name} moved beyond rounding: {_short(row['build'], 40)} "
                         f"-> {_short(row['other'], 40)}")
    return found


def main(names: list[str]) -> int:
    kernels = json.loads((OTHER / "kernels.json").read_text(encoding="utf-8"))
    report: dict[str, object] = {"kernels": kernels, "rounding": ROUNDING, "chapters": {}}
    found: list[str] = []
    print(f"Drift of the glued values: the strict build's kernels {kernels['native']} against "
          f"{kernels['other']} (Colab's library versions)")
    for path in notebooks():
        if names and not any(path.stem.startswith(n) for n in names):
            continue
        if not (BUILD / f"{path.stem}.glue.json").exists():
            continue
        if not (OTHER / f"{path.stem}.glue.json").exists():
            found.append(f"{path.stem}: no run on other kernels (make colab-check)")
            continue
        rows = chapter_drift(path)
        report["chapters"][path.stem] = rows  # type: ignore[index]
        print("  " + summary(path.stem, rows))
        found += problems(path.stem, rows)
    target = DRIFT if not names else DRIFT.with_name(f"drift-{'-'.join(names)}.json")
    target.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"written {target.relative_to(ROOT)}")
    if found:
        print("Values glued with ca.glue that are not the same on another computer: make them "
              "hold (seed them, print fewer digits) or glue them with ca.glue_varies and say in "
              "the prose how they vary:")
        print("\n".join(f"  {line}" for line in found))
        return 1
    return 0


if __name__ == "__main__":  # python tests/drift.py [CHAPTER ...]  (e.g. 08: its prefix)
    sys.exit(main(sys.argv[1:]))
