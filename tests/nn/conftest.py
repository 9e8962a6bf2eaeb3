"""Shared set-up of the rankcut.nn tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_thread(one_thread: None) -> None:
    """Every rankcut.nn test runs on one torch thread (the ``one_thread`` fixture of tests/conftest.py)."""
