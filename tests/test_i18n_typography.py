"""The Chinese catalogues' typography (:mod:`course_book.i18n.typography`), in ``make test``.

A failure names the catalogue and its entries: ``python scripts/typography.py --fix <file.po>``
repairs them. The second half checks the Chinese edition's outputs for the English the package
shows without marking it (``outputs.po``, :func:`course_attention.i18n.outputs.translator`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_attention import experiments, numpy_ref, viz
from course_attention.i18n import outputs
from course_book.i18n import package
from course_book.i18n.typography import RULES, catalogue_problems, catalogues, fix, problems
from course_book.i18n.units import check_translation, protected_spans

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = catalogues(ROOT)


def test_every_catalogue_is_checked() -> None:
    names = {p.name for p in CATALOGUES}
    assert {"04_masking.po", "explorers.mask.po", "viz.core.po"} <= names


@pytest.mark.parametrize("path", CATALOGUES, ids=lambda p: p.name)
def test_catalogue_typography(path: Path) -> None:
    found = catalogue_problems(path)
    lines = [f"{dict(p)}: {zh[:80]!r}" for _en, zh, p in found]
    assert not found, f"{path.name} (fix: python scripts/typography.py --fix {path}):\n" + \
        "\n".join(lines)


@pytest.mark.parametrize(("bad", "good", "rule"), [
    ("对于查询`I`，有多少个键", "对于查询 `I`，有多少个键", "code-space"),
    ("用`fit`训练", "用 `fit` 训练", "code-space"),
    ("**文本。** 我们需要", "**文本**。我们需要", "bold-punct"),
    ("**下一章：** {ref}`ch-x`", "**下一章**：{ref}`ch-x`", "bold-punct"),
    ('只能输入数字："{char}" 不是词元', "只能输入数字：“{char}” 不是词元", "ascii-quote"),
    ("查询 'it' 的权重", "查询 ‘it’ 的权重", "ascii-quote"),
    ("**试一试**。 *在拖动滑块之前*", "**试一试**。*在拖动滑块之前*", "space-after"),
])
def test_each_rule_finds_and_fixes_its_problem(bad: str, good: str, rule: str) -> None:
    assert rule in RULES and problems(bad)[rule] >= 1
    assert fix(bad) == good
    assert not problems(good)


@pytest.mark.parametrize("fine", [
    "（`is_causal`、`attn_mask`）",             # code next to full-width punctuation
    "第{glue:text}`window_start`步",           # a role is not a code span
    '`"fruit"` 的权重',                         # quotes inside code are code
    "np.argsort(-probs, kind='stable')：",      # code without backticks, in English
    "GPT-2 small 的 50,257 个子词",
    "文本。\n下一行",                              # a line break is not a space
])
def test_what_is_not_a_problem(fine: str) -> None:
    assert not problems(fine), problems(fine)


_PIECES = st.sampled_from(["查询", "键", "`x`", "`K.T`", "**试一试**", "**文本。**", "。", " ",
                           "，", '"a"', "'b'", "{glue:text}`n`", "$T$", "word", "："])


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_fix_keeps_protected_spans_and_is_idempotent(text: str) -> None:
    fixed = fix(text)
    assert protected_spans(fixed) == protected_spans(text)
    assert fix(fixed) == fixed
    assert not problems(fixed), (text, fixed)


def test_fixed_translation_still_renders_its_emphasis() -> None:
    english = "**Try it.** *Before you move the slider: which?*"
    chinese = "**试一试**。 *在拖动滑块之前先想一想：哪个？*"
    assert check_translation(english, fix(chinese)) == []


# --- English left in the Chinese edition's outputs (texts the package shows unmarked) ---------

ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'-]*(?:[ ,:;]+[A-Za-z][A-Za-z'-]*){2,}")


def test_output_catalogue_is_sound_and_live() -> None:
    """Every entry is translated with the English fields, and some code still writes it."""
    assert package.output_catalog_path().exists()
    assert package.output_problems() == []


def test_output_catalogue_check_finds_a_stale_entry() -> None:
    import ast

    code = 'raise ValueError(f"d_model={d} must be a multiple " f"of n_heads={h}")'
    shown = package._code_pieces(ast.parse(code))
    assert package._pieces("d_model={a} must be a multiple of n_heads={b}") in shown
    assert package._pieces("d_model={a} must be divisible by n_heads={b}") not in shown


def test_a_package_error_message_is_translated() -> None:
    with pytest.raises(ValueError) as caught:
        numpy_ref.scaled_dot_product_attention(np.ones((2, 8)), np.ones((3, 6)), np.ones((3, 6)))
    message = str(caught.value)
    out = outputs.translate_output({"output_type": "stream", "name": "stdout",
                                    "text": message + "\n"}, outputs.translator("zh"))
    assert not ENGLISH_RUN.search(out["text"]), out["text"]
    assert "(2, 8)" in out["text"] and "(3, 6)" in out["text"]  # the values come through


def test_an_html_table_and_a_dict_repr_are_translated() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2, 5, 12))
    W = [rng.normal(size=(12, 12)) for _ in range(4)]
    steps, _ = experiments.trace_multi_head_shapes(X, *W, n_heads=3)
    table = viz.shape_table(steps)._repr_html_()
    tr = outputs.translator("zh")
    done = outputs.translate_output(
        {"output_type": "execute_result", "data": {"text/html": table}}, tr)["data"]["text/html"]
    words = re.sub(r"<code>.*?</code>|<[^>]*>", " ", done)
    assert "reshape: cut d into h heads" in table and "把 d 切成 h 个头" in done
    assert not ENGLISH_RUN.search(words), words
    shown = "{'BERT: self (bidirectional)': (6, 6),\n 'T5 decoder: cross': (4, 6)}"
    done = outputs.translate_output(
        {"output_type": "execute_result", "data": {"text/plain": shown}}, tr)["data"]["text/plain"]
    assert done == "{'BERT：自注意力（双向）': (6, 6),\n 'T5 解码器：交叉注意力': (4, 6)}"
