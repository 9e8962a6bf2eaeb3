"""Shared fixtures of the CLI tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def review(tmp_path: Path) -> dict[str, Path]:
    """Three long ranked lists with relevance that falls with rank (a screening to stop)."""
    rng = np.random.default_rng(5)
    run, qrels = tmp_path / "review.run", tmp_path / "review.qrels"
    with open(run, "w") as f, open(qrels, "w") as g:
        for q in range(3):
            for r in range(600):
                f.write(f"t{q} Q0 t{q}-{r} {r + 1} {-r} sys\n")
                if rng.random() < 0.6 * np.exp(-r / (40 + 30 * q)):
                    g.write(f"t{q} 0 t{q}-{r} 1\n")
    return {"run": run, "qrels": qrels, "dir": tmp_path}
