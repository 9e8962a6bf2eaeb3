"""Shared fixtures for the data-layer tests: the real datasets beside the repository."""

from pathlib import Path

import pytest

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


@pytest.fixture
def datasets() -> Path:
    """Root of ../shared/datasets; the test is skipped when it is absent."""
    if not DATASETS.is_dir():
        pytest.skip(f"real datasets not found at {DATASETS}")
    return DATASETS
