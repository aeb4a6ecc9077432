"""``inspection.agreement``: the words the prose glues for two computations of the same numbers —
an exact 0 is no rounding error (issue 24)."""

from __future__ import annotations

import numpy as np
import pytest

from course_attention.i18n import using
from course_attention.i18n.outputs import translator
from course_attention.inspection import agreement


def test_an_exact_zero_and_a_rounding_error_are_worded_apart():
    assert agreement(0.0) == "exactly the same numbers"
    assert agreement(np.float64(-0.0)) == "exactly the same numbers"
    assert agreement(4.440892098500626e-16) == "the same numbers up to 4.4e-16, rounding error"
    assert "rounding" not in agreement(0) and "exactly" not in agreement(1e-16)


@pytest.mark.parametrize("gap", [1e-12, 1e-3, -1e-16, np.nan, np.inf])
def test_a_gap_that_is_no_rounding_error_raises(gap):
    with pytest.raises(ValueError, match="rounding error at most"):
        agreement(gap)


def test_a_looser_tolerance_is_the_callers_to_give():
    assert agreement(1e-9, tol=1e-6) == "the same numbers up to 1.0e-09, rounding error"


@pytest.mark.parametrize("gap", [0.0, 4.440892098500626e-16, 1.1e-13])
def test_the_chinese_book_translates_the_english_runs_words_into_the_chinese_ones(gap):
    with using("zh"):
        chinese = agreement(gap)
    assert chinese != agreement(gap)  # translated
    assert translator("zh").text(agreement(gap)) == chinese
