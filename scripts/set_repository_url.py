"""Point the course at another repository (a fork): one command rewrites every copy of the URL.

The URL's single source is ``[project.urls] Repository`` in pyproject.toml. Its copies — the
book's ``repository.url`` (launch buttons), the install line of every chapter's setup cell (and
of every reader edition in notebooks/, with its Colab and website links) and the Colab/Binder
links of the README — are rewritten from it; tests/test_repository_url.py
checks that they agree.

    python scripts/set_repository_url.py https://github.com/OWNER/NAME
    python scripts/set_repository_url.py            # re-sync the copies from pyproject.toml
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SLUG_RE = r"[\w.-]+/[\w.-]+"
URL_RE = r"https://github\.com/" + SLUG_RE


def repository_url() -> str:
    """The repository URL from pyproject.toml (no trailing slash, no .git)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["urls"]["Repository"].rstrip("/").removesuffix(".git")


def _rewrite(path: Path, pattern: str, replacement: str) -> None:
    text = path.read_text(encoding="utf-8")
    new = re.sub(pattern, replacement, text)
    if new != text:
        path.write_text(new, encoding="utf-8")
        print(f"updated {path.relative_to(ROOT)}")


def sync(url: str) -> None:
    """Write ``url`` into pyproject.toml and every copy of it."""
    if not re.fullmatch(URL_RE, url):
        raise SystemExit(f"expected https://github.com/OWNER/NAME, got {url!r}")
    slug = url.removeprefix("https://github.com/")
    _rewrite(ROOT / "pyproject.toml", rf'(Repository = "){URL_RE}(")', rf"\g<1>{url}\g<2>")
    _rewrite(ROOT / "_config.yml", rf"(\n  url: ){URL_RE}", rf"\g<1>{url}")
    owner, name = slug.split("/")
    notebooks = [*(ROOT / "chapters").glob("*.ipynb"), *(ROOT / "notebooks").glob("*.ipynb")]
    for notebook in sorted(notebooks):
        _rewrite(notebook, rf"(course-attention @ git\+){URL_RE}", rf"\g<1>{url}")
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):  # reader editions' links
        _rewrite(notebook, rf"(colab\.research\.google\.com/github/){SLUG_RE}", rf"\g<1>{slug}")
        _rewrite(notebook, r"https://[\w.-]+\.github\.io/[\w.-]+/",
                 f"https://{owner.lower()}.github.io/{name}/")
    _rewrite(
        ROOT / "README.md", rf"(colab\.research\.google\.com/github/){SLUG_RE}", rf"\g<1>{slug}"
    )
    _rewrite(ROOT / "README.md", rf"(mybinder\.org/v2/gh/){SLUG_RE}", rf"\g<1>{slug}")
    _rewrite(ROOT / "README.md", rf"(git clone ){URL_RE}", rf"\g<1>{url}")


if __name__ == "__main__":
    sync(sys.argv[1].rstrip("/").removesuffix(".git") if len(sys.argv) > 1 else repository_url())
