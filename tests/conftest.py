"""Test-wide settings: property tests draw their examples from a fixed seed by default, so that a
run of the suite (CI's included) is reproducible; ``HYPOTHESIS_PROFILE=explore`` draws fresh ones."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))
