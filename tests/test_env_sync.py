"""environment.yml mirrors pyproject.toml: one source of truth for dependencies."""

from __future__ import annotations

from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_environment_yml_lists_exactly_the_runtime_and_book_requirements():
    project = _pyproject()["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["book"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = {req for req in pip_section if not req.startswith("-")}
    assert listed == wanted, (
        f"only in environment.yml: {listed - wanted}; missing: {wanted - listed}"
    )
    assert "-e ." in pip_section, "environment.yml must install the course package itself"


def test_python_versions_agree():
    requires = _pyproject()["project"]["requires-python"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{requires}" in env["dependencies"]


def test_runtime_requirements_stay_loose_for_colab():
    for req in _pyproject()["project"]["dependencies"]:
        assert ">=" in req and "==" not in req and "<" not in req, req


def test_the_github_workflow_runs_what_ci_runs():
    """GitHub's runners run `.ci/run` itself (make test, torch pinned), from the CPU wheel index."""
    root = Path(__file__).resolve().parents[1]
    workflow = yaml.safe_load((root / ".github" / "workflows" / "test.yml").read_text())
    steps = workflow["jobs"]["test"]["steps"]
    assert [s["run"] for s in steps if "run" in s] == ["bash .ci/run"]
    assert "whl/cpu" in workflow["jobs"]["test"]["env"]["TORCH_INDEX"]
    assert 'make test TORCH_SPEC="torch==' in (root / ".ci" / "run").read_text()
