"""The toolbox chapter's probe exercise (toolbox-6): the prompt names the fitting rule the checker
uses; the same rule written another way passes, and the usual other linear probe, logistic
regression, is named when it fails (issue 24)."""

from __future__ import annotations

import re

import nbformat
import numpy as np

from _notebooks import CHAPTERS
from course_attention import exercises as ex


def _logistic_by_gradient_descent(X_fit, y_fit, X_new, y_new):
    """Logistic regression with a bias and ½‖w‖² on the weights (scikit-learn's default), fitted
    by plain gradient descent: another route to the checker's catalogued mistake."""
    A = np.c_[X_fit, np.ones(len(X_fit))]
    y, w = y_fit.astype(float), np.zeros(A.shape[1])
    for _ in range(20_000):
        p = 1 / (1 + np.exp(-A @ w))
        w -= 0.01 * (A.T @ (p - y) + np.r_[w[:-1], 0.0])
    return float(((np.c_[X_new, np.ones(len(X_new))] @ w > 0) == y_new).mean())


def _zero_one_at_half(X_fit, y_fit, X_new, y_new):
    """Least squares onto 0 and 1, thresholded at 0.5: the chapter's boundary, since the targets
    are (±1 + 1) / 2 and least squares is linear in its targets."""
    A = np.c_[X_fit, np.ones(len(X_fit))]
    w = np.linalg.lstsq(A, y_fit.astype(float), rcond=None)[0]
    return float(((np.c_[X_new, np.ones(len(X_new))] @ w > 0.5) == y_new).mean())


def _normal_equations(X_fit, y_fit, X_new, y_new):
    A = np.c_[X_fit, np.ones(len(X_fit))]
    w = np.linalg.solve(A.T @ A, A.T @ np.where(y_fit, 1.0, -1.0))
    return float((np.sign(np.c_[X_new, np.ones(len(X_new))] @ w) == np.where(y_new, 1, -1)).mean())


def test_the_chapters_rule_written_other_ways_passes():
    for answer in (_zero_one_at_half, _normal_equations):
        passed, message = ex.evaluate("toolbox-6", answer)
        assert passed, message


def test_logistic_regression_scores_differently_and_is_named():
    exercise = ex.EXERCISES["toolbox-6"]
    cases = exercise.cases()
    differs = [exercise.reference(*c) != _logistic_by_gradient_descent(*c) for c in cases]
    assert any(differs) and not all(differs)  # why the prompt must name the rule
    passed, message = ex.evaluate("toolbox-6", _logistic_by_gradient_descent)
    assert not passed and "Likely mistake: logistic regression" in message


def test_the_prompt_names_the_rule_the_checker_expects():
    nb = nbformat.read(CHAPTERS / "00_toolbox.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    prompt = re.search(r":label: ex-toolbox-6\n(.*?)\n:::", text, re.DOTALL).group(1)
    prompt = " ".join(prompt.split())
    assert "least squares onto +1 for True and −1 for False" in prompt
    assert "a column of ones for the bias" in prompt and "above 0" in prompt
