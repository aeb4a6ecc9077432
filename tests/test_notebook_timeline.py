"""The timeline ``_notebooks.execute`` records names where a run waited longest."""

from __future__ import annotations

import nbformat

from _notebooks import execute, longest_wait


def test_the_longest_gap_between_two_events_is_named_by_both():
    timeline = [(1.5, "kernel ready", None), (1.6, "cell start", 0), (1.7, "request sent", 0),
                (2.0, "cell done", 0), (302.0, "cell start", 1), (302.5, "kernel shut down", None)]
    wait, where = longest_wait(timeline)
    assert abs(wait - 300.0) < 1e-9 and where == "cell done 0 -> cell start 1"
    assert longest_wait([(4.0, "kernel ready", None)]) == (4.0, "start -> kernel ready")
    assert longest_wait([]) == (0.0, "")


def test_a_run_records_the_kernel_each_cell_and_the_shutdown_in_order(tmp_path):
    path = tmp_path / "two_cells.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_code_cell("x + 1")])
    nbformat.write(nb, path)
    timeline: list = []
    ran, seconds = execute(path, timeline=timeline)
    assert ran.cells[1].outputs[0]["data"]["text/plain"] == "2"
    assert [(event, cell) for _, event, cell in timeline] == [
        ("kernel ready", None), ("cell start", 0), ("request sent", 0), ("cell done", 0),
        ("cell start", 1), ("request sent", 1), ("cell done", 1), ("kernel shut down", None)]
    times = [t for t, _, _ in timeline]
    assert times == sorted(times) and times[-1] <= seconds
