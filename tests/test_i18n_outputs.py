"""How the Chinese book translates the English execution's outputs (``i18n.outputs``)."""

from __future__ import annotations

from course_attention.i18n.outputs import Translator, translate_output, translator

CATALOGUE = {
    "query": "查询",
    "weights of query {i}": "查询 {i} 的权重",
    "✗ {title}: {label}: {message}": "✗ {title}：{label}：{message}",
    "test case {n} of {m}": "第 {n} 个测试用例（共 {m} 个）",
    "values differ: largest difference {d:.3g}": "数值不同：最大差 {d:.3g}",
    "Hint for {title}: {hint}": "{title} 的提示：{hint}",
    "GQA: repeat the key/value heads": "GQA：重复键/值头",
    "repeat each head: use `repeat_interleave`": "重复每个头：用 `repeat_interleave`",
    "{a} and {{b}}": "{a} 与 {{b}}",
    "zeros": "全零",
    "an attention sublayer": "注意力子层",
    "inputs: {inputs}.": "输入：{inputs}。",
}


def test_entries_templates_and_their_fields_translate_in_turn() -> None:
    tr = Translator(CATALOGUE)
    assert tr.text("query") == "查询"
    assert tr.text("weights of query 3") == "查询 3 的权重"
    assert tr.text("weights of query query") == "查询 查询 的权重"  # a field holding an entry
    assert tr.text("query and {b}") == "查询 与 {b}"  # braces in a formatted text
    assert tr.text("not an entry at all") == "not an entry at all"
    assert tr.text("0.25") == "0.25"  # no words: nothing to do


def test_a_message_of_several_lines_translates_line_by_line() -> None:
    tr = Translator(CATALOGUE)
    english = "✗ softmax: test case 2 of 6: values differ: largest difference 0.5\nquery\n"
    assert tr.text(english) == "✗ softmax：第 2 个测试用例（共 6 个）：数值不同：最大差 0.5\n查询\n"


def test_a_field_that_holds_the_separator_is_split_where_every_field_translates() -> None:
    tr = Translator(CATALOGUE)
    english = "Hint for GQA: repeat the key/value heads: repeat each head: use `repeat_interleave`"
    assert tr.text(english) == "GQA：重复键/值头 的提示：重复每个头：用 `repeat_interleave`"


def test_a_one_line_template_does_not_swallow_the_next_line() -> None:
    tr = Translator(CATALOGUE)
    assert tr.text("weights of query 1\nquery") == "查询 1 的权重\n查询"


def test_outputs_glued_texts_and_the_checkers_inputs() -> None:
    tr = Translator(CATALOGUE)
    stream = {"output_type": "stream", "name": "stdout",
              "text": ["query\n", "weights of query 2\n"]}
    assert translate_output(stream, tr)["text"] == ["查询\n", "查询 2 的权重\n"]
    glued = {"output_type": "display_data", "data": {"text/plain": "'zeros'"}, "metadata": {}}
    assert translate_output(glued, tr)["data"]["text/plain"] == "'全零'"
    assert tr.text("inputs: x (4, 6), attn = an attention sublayer.") == \
        "输入：x (4, 6), attn = 注意力子层。"


def test_a_figure_translates_its_words_and_keeps_its_data_and_frame_names() -> None:
    tr = Translator(CATALOGUE)
    fig = {"data": [{"type": "bar", "name": "query", "x": ["apple", "query"], "y": [1.0, 2.0],
                     "hovertemplate": "weights of query %{x}"}],
           "layout": {"title": {"text": "weights of query 1", "font": {"size": 14}}},
           "frames": [{"name": "query", "data": [{"name": "query"}]}]}
    out = translate_output({"output_type": "display_data", "metadata": {},
                            "data": {"application/vnd.plotly.v1+json": fig}}, tr)
    done = out["data"]["application/vnd.plotly.v1+json"]
    assert done["data"][0]["name"] == "查询"
    assert done["data"][0]["x"] == ["apple", "查询"]  # a category that is an entry is a word
    assert done["data"][0]["y"] == [1.0, 2.0]
    assert done["data"][0]["hovertemplate"] == "查询 %{x} 的权重"
    assert done["layout"]["title"] == {"text": "查询 1 的权重", "font": {"size": 14}}
    assert done["frames"][0]["name"] == "query"  # the slider finds its frame by this name
    assert done["frames"][0]["data"][0]["name"] == "查询"


def test_the_package_translator_reads_the_shipped_catalogues() -> None:
    tr = translator("zh")
    assert len(tr.exact) > 500
    assert tr.text("zeros") == "全零"
