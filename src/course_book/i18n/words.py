"""Fixed phrases the package writes itself, per language (``"en"``, ``"zh"``).

A dozen phrases with named fields, kept here rather than in a catalogue; used by
:mod:`course_book.reader` for the reader editions (``notebooks/``, ``notebooks/zh/``).
"""

from __future__ import annotations

__all__ = ["READER_WORDS"]

#: The reader edition's own words, per language (the Chinese edition's are here, not in a
#: catalogue: a dozen fixed phrases with named fields).
READER_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "solution_details": "Solution to {exercise}: read it after trying",
        "solution_note": "**Solution to {exercise}.** Its code cells below are collapsed: click "
        "the bar at the left of a cell (JupyterLab) or *Show code* (Colab) to open one. Try the "
        "exercise first.",
        "title_solution": "Solution to {exercise}: open it after trying",
        "checker_note": "> **How the checker works.** Write your function in the cell below the "
        "exercise and run it: its last line, `ex.check(\"{id}\", your_function)`, runs it on "
        "cases with known answers (on copies of the inputs). It prints ✓ when every case "
        "passes. Otherwise the first try names the failing case and what came out, the second "
        "adds a hint, the third the full recipe; when your answer matches a known mistake, it "
        "names that mistake. `ex.hint(\"{id}\")` gives the next stage at once. The id beside "
        "each exercise's number is the one to pass.",
        "title_draws": "The code that draws the {what} below (collapsed)",
        "explorer": "explorer",
        "figure": "figure",
        "title_defines": "Hidden on the website: defines {names} for later cells, checks the text",
        "title_checks": "Hidden on the website: checks that the text above is true",
        "intro": "> **Reader edition.** Run it top to bottom (JupyterLab: *Run ▸ Run All Cells*; "
        "Colab: *Runtime ▸ Run all*) to get every figure and live explorer. The numbers in the "
        "text are the ones the book's build computed. Exact computations print the same in your "
        "run, to the digits shown. Numbers from a model trained in the notebook (its losses, "
        "accuracies, generated text) and timings are the build's example: your computer's CPU "
        "kernels round differently, so it trains a slightly different model and prints numbers "
        "of its own; the text says how much they vary, and what holds on every computer is "
        "checked by the cells. Hover over a number to see which kind it is. Collapsed cells "
        "hold set-up, checks and solutions. [Website version]({page}) · [Open in Colab]({colab})"
        " · generated from `{doc}.ipynb`: edit that file, not this one.",
        "glue_same": "computed by the book's build; your run prints the same",
        "glue_varies": "the build's example: your computer may print other digits",
        "glue_timing": "measured when the book was built; your computer's time differs",
    },
    "zh": {
        "solution_details": "{exercise}的解答：先自己试过再看",
        "solution_note": "**{exercise}的解答**。下面的代码单元已折叠：点击单元左侧的竖条"
        "（JupyterLab）或 *Show code*（Colab）即可展开。请先自己做一做这道练习。",
        "title_solution": "{exercise}的解答：先自己试过再展开",
        "checker_note": "> **检查器怎么用。** 在练习下方的代码单元里写好你的函数，然后运行它：最后"
        "一行 `ex.check(\"{id}\", your_function)` 会用一组已知答案的用例（输入的副本）来运行你的"
        "函数。全部通过时打印 ✓。否则，第一次会指出没通过的用例和得到的输出，第二次再给一条提示，"
        "第三次给出完整的做法；如果你的答案和某个常见错误一致，它会指出是哪一个。"
        "`ex.hint(\"{id}\")` 可以马上给出下一步的帮助。每道练习编号旁边的 id 就是要传入的那个。",
        "title_draws": "绘制下方{what}的代码（已折叠）",
        "explorer": "交互图",
        "figure": "图",
        "title_defines": "网站上隐藏的单元：定义后面要用的 {names}，并检验正文",
        "title_checks": "网站上隐藏的单元：检验上面的正文是否成立",
        "intro": "> **读者版。** 从头到尾运行一遍（JupyterLab：*Run ▸ Run All Cells*；Colab："
        "*Runtime ▸ Run all*），就能得到每张图和每个实时交互图。正文中的数字是本书构建时算出的。"
        "精确计算得到的数字，你运行时会在显示的位数上得到相同的结果。笔记本里训练出的模型给出的"
        "数字（损失、准确率、生成的文本）以及计时，只是构建时的一次示例：你的电脑的 CPU 内核舍入"
        "方式不同，训练出的模型会略有差别，打印的数字也会不同；正文会说明它们的变化范围，而在任何"
        "电脑上都成立的结论由代码单元检验。把鼠标悬停在数字上，可以看到它属于哪一类。"
        "折叠的单元里是设置、检验和解答。[网站版]({page}) · "
        "[在 Colab 中打开]({colab}) · 由 `{source}` 生成：请编辑那个文件，而不是这一个。"
        "第一个代码单元（设置）让图、交互图和练习检查器都说中文。",
        "glue_same": "由本书构建时算出；你运行时会得到相同的结果",
        "glue_varies": "构建时的示例：你的电脑上打印的数字可能不同",
        "glue_timing": "构建本书时测得；你的电脑上的耗时会不同",
    },
}
