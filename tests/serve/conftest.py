"""The page's fixtures: a small sequential audit with texts (serve_testdata.make_audit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_testdata import SmallAudit, make_audit


@pytest.fixture
def small(tmp_path: Path) -> SmallAudit:
    return make_audit(tmp_path)
