"""The drift check of ``make colab-check`` (tests/drift.py, tests/colab_like.py) on made-up runs."""

from __future__ import annotations

import colab_like
import drift


def test_a_move_is_measured_relative_and_rounding_is_not_a_move():
    assert drift.move("0.5", "0.5") == (0.0, False)
    assert drift.move("6e-17", "0.0")[1] is False  # rounding-level values differ by rounding
    assert drift.move("1.9269198", "1.9269166")[1] is False  # float32 arithmetic elsewhere
    worst, beyond = drift.move("0.91", "0.83")
    assert beyond and abs(worst - 0.08 / 0.91) < 1e-12
    assert drift.move("'the a'", "'from'") == (None, True)  # a text that changed
    assert drift.move("[1, 2]", "[1, 2, 3]") == (None, True)
    assert drift.move("[1.0, 2.0]", "[1.0, 2.5]")[1]


def _row(build, other, varies, spec=".2f"):
    worst, beyond = drift.move(build, other)
    shown = [] if drift.printed(build, spec) == drift.printed(other, spec) else [
        {"spec": spec, "build": drift.printed(build, spec), "other": drift.printed(other, spec)}]
    return {"build": build, "other": other, "varies": varies, "move": worst,
            "beyond_rounding": beyond, "prints_differently": shown}


def test_only_values_glued_as_the_same_everywhere_are_problems():
    rows = {
        "acc": _row("0.91", "0.83", varies=True),  # the build's example: recorded, allowed
        "diff": _row("4.4e-16", "5.6e-16", varies=False, spec=".1e"),  # prints differently
        "seeded": _row("0.25", "0.2500001", varies=False),  # the same to rounding
        "random": _row("0.123", "0.124", varies=False, spec=".1f"),  # same print, yet it moved
    }
    found = drift.problems("ch", rows)
    assert len(found) == 2
    assert "diff prints '4.4e-16' in the build and '5.6e-16'" in found[0]
    assert "random moved beyond rounding" in found[1]
    line = drift.summary("ch", rows)
    assert line.startswith("ch: 4 glued values (1 the build's); 2 move beyond rounding")
    assert "largest acc 0.91 -> 0.83 (9%)" in line and line.endswith("2 print differently")


def test_the_other_kernels_are_older_than_the_machines(monkeypatch):
    monkeypatch.delenv("OTHER_KERNELS", raising=False)
    for native, expected in [
        ({"torch": "AVX512", "openblas": "SkylakeX"},
         {"ATEN_CPU_CAPABILITY": "avx2", "OPENBLAS_CORETYPE": "Haswell"}),
        ({"torch": "AVX2", "openblas": "Zen"},
         {"ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Sandybridge"}),
        ({"torch": "DEFAULT", "openblas": "NeoverseN1"}, {"OPENBLAS_CORETYPE": "ARMV8"}),
    ]:
        monkeypatch.setattr(colab_like, "kernels", lambda env=None, n=native: n)
        assert colab_like.other_kernel_env() == expected
    monkeypatch.setenv("OTHER_KERNELS", "ATEN_CPU_CAPABILITY=default OPENBLAS_CORETYPE=Prescott")
    assert colab_like.other_kernel_env() == {"ATEN_CPU_CAPABILITY": "default",
                                             "OPENBLAS_CORETYPE": "Prescott"}
