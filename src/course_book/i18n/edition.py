"""The Chinese book: ``zh/`` written from ``chapters/`` and the catalogues, built under ``zh/``.

``python -m course_book.i18n.edition`` writes ``zh/_config.yml``, ``zh/_toc.yml`` and every
document of the table of contents translated (:func:`catalog.write_translation`). Jupyter Book then
builds ``zh/`` like the English book; the Makefile copies its HTML to ``_build/html/zh/``, so one
site holds both languages and every page links to its counterpart (:mod:`course_book.book`).
A file whose text is unchanged is left untouched (its time stamp too), and ``zh/_build`` is kept:
after one chapter changed, Sphinx rebuilds only that chapter's Chinese page (``make chapter``).
The book's own strings — its title and the table of contents' captions — have the catalogue
``locales/zh_CN/LC_MESSAGES/_book.po``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import polib
import yaml

from . import catalog

__all__ = ["book_strings", "update_book_catalog", "write_book"]

BOOK = "_book"


def book_strings(root: Path) -> list[str]:
    """The title in ``_config.yml`` and the captions of ``_toc.yml``, in order."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return [config["title"], *(part["caption"] for part in toc.get("parts", []))]


def _book_catalog_path(root: Path) -> Path:
    return catalog.catalog_path(root, BOOK)


def update_book_catalog(root: Path) -> None:
    """Add new book strings to ``_book.po``; mark none fuzzy (each is one short line)."""
    path = _book_catalog_path(root)
    old = polib.pofile(str(path), wrapwidth=0) if path.exists() else None
    known = {e.msgid: e for e in old} if old else {}
    po = polib.POFile(wrapwidth=0)
    po.metadata = {"Language": catalog.LOCALE, "Content-Type": "text/plain; charset=utf-8",
                   "X-Source": "_config.yml, _toc.yml"}
    for text in dict.fromkeys(book_strings(root)):
        prior = known.get(text)
        po.append(polib.POEntry(msgid=text, msgstr=prior.msgstr if prior else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))


def book_problems(root: Path) -> list[str]:
    """Book strings that are untranslated or missing from ``_book.po``."""
    path = _book_catalog_path(root)
    have = {e.msgid: e.msgstr for e in polib.pofile(str(path))} if path.exists() else {}
    return [f"_book: untranslated: {s!r}" for s in book_strings(root) if not have.get(s)]


def write_book(root: Path, out: Path | None = None, executed: Path | None = None) -> Path:
    """Write the Chinese book's sources to ``out`` (default ``root/zh``); return ``out``.

    ``executed`` (default ``root/_build/jupyter_execute``, written by the English build) gives
    every code cell its English outputs, and the Chinese book is built without executing again:
    the package's own text in those outputs is not translated yet (see the note on the welcome
    page of the Chinese edition).
    """
    executed = root / "_build" / "jupyter_execute" if executed is None else executed
    if not executed.is_dir():
        raise ValueError(f"build the English book first: {executed} does not exist")
    out = root / "zh" if out is None else out
    written = out.parent / f".{out.name}.writing"
    if written.exists():
        shutil.rmtree(written)
    written.mkdir(parents=True)
    _write(root, written, executed)
    _sync(written, out)
    shutil.rmtree(written)
    return out


def _sync(new: Path, out: Path) -> None:
    """Make ``out`` hold ``new``'s files: copy those that differ, delete those ``new`` lacks;
    an unchanged file keeps its time stamp, and ``out/_build`` (the build) stays."""
    out.mkdir(parents=True, exist_ok=True)
    keep = {p.relative_to(new) for p in new.rglob("*") if p.is_file()}
    for path in sorted(out.rglob("*"), reverse=True):  # files before their folders
        rel = path.relative_to(out)
        if rel.parts[0] == "_build":
            continue
        if path.is_file() and rel not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for rel in sorted(keep):
        target = out / rel
        if target.is_file() and target.read_bytes() == (new / rel).read_bytes():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(new / rel, target)


def _write(root: Path, out: Path, executed: Path) -> None:
    """Write every file of the Chinese book's sources to the empty folder ``out``."""
    path = _book_catalog_path(root)
    names = {e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.msgstr}
    up = Path("..")  # zh/ sits in the repository root
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = names.get(config["title"], config["title"])
    config["language"] = "zh_CN"
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    config["bibtex_bibfiles"] = [str(up / b) for b in config.get("bibtex_bibfiles", [])]
    config.setdefault("html", {})["favicon"] = str(up / config["html"].get("favicon", ""))
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["html_static_path"] = [str(up / p) for p in sphinx.get("html_static_path", [])]
    sphinx.update({
        "language": "zh_CN",
        "html_search_language": "zh",
        "course_attention_plotly_dir": str(up / "_vendor" / "plotly"),
        "course_attention_language": "zh",
        "course_attention_notice": "中文版：API 参考中的文档字符串和代码里的名字仍是英文。",
        "course_attention_reader_dir": "notebooks/zh",
        "course_attention_reader_path": str(up / "notebooks" / "zh"),
        # myst-nb's own labels of a collapsed cell (Sphinx's catalogues do not hold them)
        "nb_code_prompt_show": "显示代码",
        "nb_code_prompt_hide": "隐藏代码",
        # sphinx-togglebutton's hint on every dropdown (its catalogue has no Chinese)
        "togglebutton_hint": "点击显示",
        "togglebutton_hint_hide": "点击隐藏",
    })
    (out / "_config.yml").write_text(
        "# Written by `python -m course_book.i18n.edition` from ../_config.yml: do not edit.\n"
        + yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    for part in toc.get("parts", []):
        part["caption"] = names.get(part["caption"], part["caption"])
    (out / "_toc.yml").write_text(
        "# Written from ../_toc.yml: do not edit.\n"
        + yaml.safe_dump(toc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    for doc in catalog.documents(root):
        catalog.write_translation(root, doc, out, executed=executed)
    images = root / "chapters" / "images"
    if images.is_dir():
        shutil.copytree(images, out / "chapters" / "images")


if __name__ == "__main__":
    print("wrote", write_book(Path.cwd(), Path(sys.argv[1]) if len(sys.argv) > 1 else None))
