"""Shared test configuration: float64 everywhere, a fixed hypothesis profile."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "course",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")


# --- one chapter's checks (``make chapter NB=08``) --------------------------------------------

#: The unit-test files of each chapter's package code and live explorers, by file-name prefix.
#: Tests parametrized by chapter (notebooks, reader editions, site pages, English and Chinese)
#: are found by the chapter's name in their id.
CHAPTER_TESTS: dict[str, tuple[str, ...]] = {
    "00": ("test_exercises.py",),
    "01": ("test_soft_lookup_chapter.py", "test_live_lookup.py"),
    "02": ("test_scaled_dot_product_chapter.py", "test_live_scaling.py"),
    "03": ("test_self_attention.py", "test_live_self_attention.py", "test_experiments.py"),
    "04": ("test_masking_chapter.py", "test_masks.py", "test_live_mask.py"),
    "05": ("test_multi_head.py", "test_multi_head_chapter.py", "test_live_heads.py"),
    "06": ("test_transformer_block_chapter.py", "test_transformer.py", "test_architecture.py"),
    "07": ("test_encoder_decoder_chapter.py", "test_live_decoding.py"),
    "08": ("test_gpt.py", "test_gpt_hf.py", "test_decoder_only_figures.py", "test_sampling.py",
           "test_ngram.py", "test_corpus.py", "test_live_gpt.py"),
    "09": ("test_induction.py", "test_induction_explorer.py", "test_live_induction.py"),
    "10": ("test_positions.py", "test_live_positions.py", "test_live_rope.py"),
    "11": ("test_efficient_attention.py", "test_live_tiling.py"),
    "12": ("test_modern.py", "test_rope_scaling.py", "test_exercises_modern.py",
           "test_live_long_context.py", "test_modern_compare.py"),
    "13": ("test_mla.py", "test_mla_compare.py", "test_sparse.py", "test_exercises_latent.py",
           "test_live_latent.py"),
    "14": ("test_sinks.py", "test_sinks_compare.py", "test_exercises_sinks.py",
           "test_live_sinks.py"),
    "15": ("test_linear_attention.py", "test_linear_compare.py", "test_exercises_linear.py",
           "test_live_linear.py"),
    "appendix_spot_the_bug": ("test_bugs.py", "test_appendices.py"),
}


def pytest_addoption(parser):
    parser.addoption("--chapter", default=None,
                     help="keep only one chapter's tests (its file-name prefix, e.g. 08)")


#: The explorer, JupyterLab and claims checks that take longest (the trained models' chapters),
#: by a part of their id: they run first, so that xdist's two workers finish at about the same time
#: instead of one of them starting a minute-long check when the other is nearly done.
LONGEST_FIRST = ("09_induction_heads", "08_decoder_only", "14_sinks_and_streaming",
                 "15_linear_attention",
                 "test_linear_compare.py::test_the_chapters_claims",
                 "test_induction.py::test_the_chapters_claims",
                 "test_sinks_compare.py::test_the_chapters_claims",
                 "test_gpt.py::test_the_chapters",
                 "test_positions.py::test_length_generalisation_claims", "04_masking",
                 "10_positions", "07_encoder_decoder", "11_efficient_attention",
                 "12_modern_attention", "13_latent_and_sparse")
LONG_FILES = ("test_site_polish.py", "test_figure_text.py", "test_lab.py", "test_induction.py",
              "test_gpt.py", "test_positions.py", "test_sinks_compare.py",
              "test_linear_compare.py")


def _marks_selected(markexpr: str) -> list[str] | None:
    """The marks of a ``-m`` expression that only names marks joined by ``or`` (``"lab"``,
    ``"notebooks or browser"``); None for any other expression."""
    words = markexpr.split()
    names, joins = words[::2], words[1::2]
    if len(words) % 2 == 0 or any(j != "or" for j in joins) \
            or not all(n.isidentifier() for n in names):
        return None
    return None if {"not", "and", "or"} & set(names) else names


def pytest_ignore_collect(collection_path, config):
    """Under ``-m lab``, ``-m claims`` or ``-m "notebooks or browser"`` (make test's later
    stages), leave unimported the test files that never name those marks: each xdist worker
    imports every file it collects, about 20 s of a stage's start on two busy cores."""
    marks = _marks_selected(config.getoption("markexpr") or "")
    if not marks or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    text = collection_path.read_text(encoding="utf-8")
    if not any(re.search(rf"\bmark\.{name}\b", text) for name in marks):
        return True
    return None


def _rank(item) -> int:
    if item.path.name not in LONG_FILES:
        return len(LONGEST_FIRST)
    return next((k for k, part in enumerate(LONGEST_FIRST) if part in item.nodeid),
                len(LONGEST_FIRST))


def spread(items: list, workers: int) -> list:
    """Reorder the longest-first ``items`` for xdist's load scheduling, which first hands each
    worker two consecutive items: worker k gets the k-th longest and the (workers + k)-th, not
    the two longest together (which made one worker's share a minute longer than the other's)."""
    head = items[: 2 * workers]
    if workers < 2 or len(head) < 2 * workers:
        return items
    return [head[k + j * workers] for k in range(workers) for j in (0, 1)] + items[2 * workers:]


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config, items):
    items.sort(key=_rank)  # stable: otherwise in the order collected
    prefix = config.getoption("--chapter")
    if not prefix:
        items[:] = spread(items, int(getattr(config, "workerinput", {}).get("workercount", 1)))
        return
    from _notebooks import notebooks

    stems = [p.stem for p in notebooks() if p.stem.startswith(prefix)]
    if len(stems) != 1:
        raise ValueError(f"--chapter {prefix!r} names {len(stems)} chapters: {stems}")
    files = set(CHAPTER_TESTS.get(prefix, ()))
    kept, dropped = [], []
    for item in items:
        chosen = stems[0] in item.nodeid or item.path.name in files
        (kept if chosen else dropped).append(item)
    config.hook.pytest_deselected(items=dropped)
    items[:] = spread(kept, int(getattr(config, "workerinput", {}).get("workercount", 1)))
