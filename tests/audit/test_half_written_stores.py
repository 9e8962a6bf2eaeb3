"""Label stores in states no rankcut writes (every meta change is one transaction): refused, never
completed by guessing what was meant."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import write_lists

from rankcut.audit import workflow as wf
from rankcut.audit.labels import LabelStore


@pytest.fixture
def sampled(tmp_path: Path) -> tuple[Path, Path]:
    run, cut, qrels = write_lists(tmp_path, queries=4, depth=20, cut=5,
                                  grade=lambda rank: 1 if rank % 4 == 0 else None)
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=20)
    return audit, qrels


def test_an_owner_without_its_sample_hash_is_refused(sampled: tuple[Path, Path]) -> None:
    audit, qrels = sampled
    manifest_id = wf.status(audit)["audit_id"]
    with LabelStore(audit / "labels.sqlite") as store:
        store.set_meta("audit_id", manifest_id)
    with pytest.raises(ValueError, match="holds labels for sample None"):
        wf.label(audit, qrels=qrels)


def test_an_opening_without_its_labels_hash_is_refused(sampled: tuple[Path, Path]) -> None:
    audit, qrels = sampled
    assert wf.label(audit, qrels=qrels).missing == 0
    with LabelStore(audit / "labels.sqlite") as store:
        store.set_meta("opened_at", "2026-01-01T00:00:00.000000+00:00")
    with pytest.raises(ValueError, match="records an opening at 2026-01-01.* without its labels hash"):
        wf.certify(audit)
    assert not (audit / "opened.json").exists()
