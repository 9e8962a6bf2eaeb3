"""A refused ``label`` call — or one that records nothing — leaves no label store behind: the store
is made by the first call that records a label."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import write_lists

from rankcut.audit import workflow as wf
from rankcut.audit.labels import LabelStore


@pytest.fixture
def sampled(tmp_path: Path) -> tuple[Path, Path]:
    run, cut, qrels = write_lists(tmp_path, grade=lambda rank: int(rank % 3 == 0))
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=10)
    return audit, qrels


def _left(audit: Path) -> list[str]:
    return sorted(p.name for p in audit.iterdir() if p.name.startswith("labels.sqlite"))


def test_a_label_file_with_an_item_outside_the_sample(sampled: tuple[Path, Path], tmp_path: Path) -> None:
    audit, _ = sampled
    stray = tmp_path / "stray.csv"
    stray.write_text("query_id,doc_id,label\nq0,d0-0,1\n")  # kept by the cut: never sampled
    with pytest.raises(ValueError, match="not in the sample"):
        wf.label(audit, from_file=stray)
    assert _left(audit) == []


def test_a_label_file_that_cannot_be_read(sampled: tuple[Path, Path], tmp_path: Path) -> None:
    audit, _ = sampled
    bad = tmp_path / "bad.csv"
    bad.write_text("query,doc\nq0,d0-9\n")
    with pytest.raises(ValueError, match="no label column"):
        wf.label(audit, from_file=bad)
    assert _left(audit) == []


def test_an_interactive_session_quit_before_any_answer(sampled: tuple[Path, Path]) -> None:
    audit, _ = sampled
    res = wf.label(audit, interactive=True, input=lambda prompt: "q", output=lambda line: None)
    assert res.recorded == 0 and _left(audit) == []


def test_the_store_stays_once_it_holds_labels(sampled: tuple[Path, Path], tmp_path: Path) -> None:
    audit, qrels = sampled
    assert wf.label(audit, qrels=qrels, overwrite=False).missing == 0
    stray = tmp_path / "stray.csv"
    stray.write_text("query_id,doc_id,label\nq0,d0-0,1\n")
    with pytest.raises(ValueError, match="not in the sample"):
        wf.label(audit, from_file=stray)
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        assert store.count() == 10
