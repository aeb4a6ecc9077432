"""Median time from a control change to the explorer's new figure, for every live explorer.

Target: ≤ 50 ms. Runs without a browser: the time measured is the Python side (recompute and
build the figure), which is what a slider waits for in JupyterLab and Colab.

    .venv/bin/python benchmarks/widgets.py
"""

from __future__ import annotations

import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_widgets import _other_value  # noqa: E402

from course_attention import widgets  # noqa: E402


def main(repeat: int = 15) -> None:
    print(f"{'explorer':28} {'control':14} {'median ms':>10} {'max ms':>8}")
    for name, factory in sorted(widgets.EXPLORERS.items()):
        with contextlib.redirect_stdout(io.StringIO()):
            explorer = factory()
        for label, control in explorer.controls.items():
            values = [control.value, _other_value(control)]
            times = []
            for i in range(repeat):
                with contextlib.redirect_stdout(io.StringIO()):  # clear_output's escape codes
                    start = time.perf_counter()
                    control.value = values[(i + 1) % 2]
                    times.append((time.perf_counter() - start) * 1000)
            print(f"{name:28} {label:14} {statistics.median(times):10.1f} {max(times):8.1f}")


if __name__ == "__main__":
    main()
