"""Shared fixtures of the audit tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import Data


@pytest.fixture
def data(tmp_path: Path) -> Data:
    return Data(tmp_path)
