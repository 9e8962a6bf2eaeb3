"""The demo's synthetic lists: deterministic, loadable, and realistic where it matters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rankcut.data.synthetic import synthetic_run, write_synthetic
from rankcut.data.trec import load_trec


def test_same_seed_same_files_other_seed_other_files(tmp_path: Path) -> None:
    for name in "abc":
        (tmp_path / name).mkdir()
    a = write_synthetic(tmp_path / "a", 10, 30, seed=3)
    b = write_synthetic(tmp_path / "b", 10, 30, seed=3)
    c = write_synthetic(tmp_path / "c", 10, 30, seed=4)
    assert a[0].read_bytes() == b[0].read_bytes() and a[1].read_bytes() == b[1].read_bytes()
    assert a[0].read_bytes() != c[0].read_bytes()


def test_lists_load_with_ties_and_unretrieved_relevant(tmp_path: Path) -> None:
    run_path, qrels_path = write_synthetic(tmp_path, 40, 100, seed=0)
    lists = load_trec(run_path, qrels_path)
    assert len(lists) == 40 and (lists.lengths == 100).all()
    s = lists.scores
    assert np.sum(s[:, 1:] == s[:, :-1]) > 0, "real runs have ties; the synthetic ones should too"
    assert np.all(np.diff(s, axis=1) <= 0)
    in_list = lists.labels.sum(axis=1)
    assert (lists.n_relevant >= in_list).all() and (lists.n_relevant > in_list).any()
    assert 0 < lists.labels.mean() < 0.5


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="n_queries"):
        synthetic_run(0, 10)
