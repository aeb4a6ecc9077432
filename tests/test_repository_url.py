"""The repository URL lives in pyproject.toml; every copy agrees, and one script rewrites them."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("set_url", ROOT / "scripts/set_repository_url.py")
set_url = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(set_url)


def _setup_cell(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return next(c.source for c in nb.cells if c.cell_type == "code")


def _copies_agree(root: Path, url: str) -> None:
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert config["repository"]["url"] == url
    assert config["repository"]["branch"] == "main"
    assert config["repository"]["path_to_book"] == ""
    sources = [*(root / "chapters").glob("*.ipynb"), *(root / "notebooks").glob("*.ipynb")]
    for path in sorted(sources):
        cell = _setup_cell(path)
        assert f"course-attention @ git+{url}" in cell, path.name
        assert "except ImportError" in cell and "--quiet" in cell, path.name
    slug = url.removeprefix("https://github.com/")
    readme = (root / "README.md").read_text()
    assert f"colab.research.google.com/github/{slug}/" in readme
    assert f"mybinder.org/v2/gh/{slug}/" in readme
    site = f"https://{slug.split('/')[0].lower()}.github.io/{slug.split('/')[1]}/"
    for path in sorted((root / "notebooks").glob("*.ipynb")):  # the reader editions' links
        text = path.read_text(encoding="utf-8")
        assert f"colab.research.google.com/github/{slug}/" in text and site in text, path.name


def test_every_copy_of_the_repository_url_agrees_with_pyproject():
    _copies_agree(ROOT, set_url.repository_url())


def test_the_script_moves_every_copy_to_a_fork(tmp_path, monkeypatch):
    for name in ("pyproject.toml", "_config.yml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "chapters", tmp_path / "chapters")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.setattr(set_url, "ROOT", tmp_path)
    fork = "https://github.com/a-learner/my-attention-course"
    set_url.sync(fork)
    assert set_url.repository_url() == fork
    _copies_agree(tmp_path, fork)
