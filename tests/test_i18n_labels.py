"""Prose that names a control uses the control's own label, in English and in Chinese.

The labels come from the package (:func:`course_book.i18n.labels.control_labels`); the prose
from every unit of every chapter and its Chinese translation (the catalogues).
"""

from __future__ import annotations

from pathlib import Path

import polib
import pytest

from course_attention.i18n import using
from course_attention.widgets import EXPLORERS
from course_book.i18n import catalog
from course_book.i18n.labels import Label, control_labels, label_mentions, spans

ROOT = Path(__file__).resolve().parents[1]
DOCS = [d for d in catalog.documents(ROOT) if catalog.catalog_path(ROOT, d).exists()]
LABELS = control_labels()


def _is_label(text: str, lang: str) -> bool:
    return any(label.matches(text, lang) for label in LABELS)


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_labels_hold_every_control_an_explorer_shows(name: str) -> None:
    """What the static reading of the source finds is what the explorers show, both languages."""
    for lang in ("en", "zh"):
        with using(lang):
            explorer = EXPLORERS[name]()
        shown = [c.description for c in explorer.controls.values() if c.description]
        shown += [b.description for b in explorer.buttons.values()]
        missing = [text for text in shown if not _is_label(text, lang)]
        assert not missing, f"{name} ({lang}) shows labels control_labels() lacks: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_prose_names_controls_by_their_labels(doc: str) -> None:
    """Every bold, italic or quoted span that names a control (next to "slider", "button",
    "menu", "press", …; "滑块", "按钮", "点击", …) is a label the package shows, in its
    language; and where the English names a control, the Chinese names it by the Chinese label."""
    wrong = []
    for unit, _where in catalog.doc_units(catalog.source_path(ROOT, doc)):  # the English itself
        wrong += [f"en {s!r} in {unit[:60]!r}" for s in label_mentions(unit, LABELS, "en")
                  if not _is_label(s, "en")]
    for entry in polib.pofile(str(catalog.catalog_path(ROOT, doc))):
        if entry.obsolete or not entry.msgstr:
            continue
        english = label_mentions(entry.msgid, LABELS, "en")
        chinese = label_mentions(entry.msgstr, LABELS, "zh")
        wrong += [f"zh {s!r} in {entry.msgstr[:60]!r}" for s in chinese if not _is_label(s, "zh")]
        marked = [s for _a, _b, s in spans(entry.msgstr)]
        for s in english:
            zh = [label.zh for label in LABELS if label.matches(s, "en")]
            if zh and not any(Label(z, z).matches(t, "en") for z in zh for t in marked):
                wrong.append(f"zh lacks {zh[0]!r} (for {s!r}) in {entry.msgstr[:60]!r}")
    assert not wrong, "\n".join(wrong)


def test_the_check_finds_a_wrong_label() -> None:
    """The cases of the issue are caught: an English label left in the Chinese, a shortened
    label, a label that is not one."""
    assert label_mentions("Untick *sample* for the greedy text.", LABELS, "en") == ["sample"]
    assert not _is_label("sample", "en") and _is_label("sample (off: greedy)", "en")
    assert label_mentions("在拖动*训练步*滑块之前", LABELS, "zh") == ["训练步"]
    assert not _is_label("训练步", "zh") and _is_label("训练步数", "zh")
    assert label_mentions("用 *query* 和 *key* 两个菜单选中", LABELS, "zh") == ["query", "key"]
    assert not _is_label("query", "zh") and _is_label("查询", "zh")
    assert label_mentions("press **new query and keys**", LABELS, "en") == ["new query and keys"]
    assert label_mentions("the *query* is a vector", LABELS, "en") == []  # not about a control
