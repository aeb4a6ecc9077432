"""Shared test configuration: float64 everywhere, a fixed hypothesis profile."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "course",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("course")
