"""Who gave a simulated audit's labels: the qrels oracle's source says it is a simulation, one
audit's simulated labels come from one oracle (other qrels, or the same at another grade, are
refused: two notions of relevant mixed would certify neither), and labels reused from a simulated
audit still say so."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import _rows, write_lists

from rankcut.audit import workflow as wf
from rankcut.audit.labels import LabelStore
from rankcut.audit.oracle import SIMULATION


def _graded(folder: Path, queries: int = 3, depth: int = 15) -> tuple[Path, Path]:
    """Run and cut of ``queries`` × ``depth`` documents, qrels grading every 3rd rank 2, every other
    even rank 1."""
    run, cut, qrels = write_lists(folder, queries=queries, depth=depth,
                                  grade=lambda rank: 2 if rank % 3 == 0 else int(rank % 2 == 0))
    return run, qrels


def _excluded(folder: Path, run: Path) -> Path:
    audit = folder / "A"
    wf.freeze(audit, run=run, cut=folder / "cut.run", design="excluded", seed=3)
    wf.plan(audit)
    wf.sample(audit, excluded=20, allow_underpowered=True)
    return audit


def _sources(audit: Path) -> dict[str, int]:
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        return store.source_counts()


def test_a_second_threshold_is_refused_where_it_labels_otherwise(tmp_path: Path) -> None:
    run, qrels = _graded(tmp_path)
    audit = _excluded(tmp_path, run)
    assert wf.label(audit, qrels=qrels, limit=5).recorded == 5
    first = _sources(audit)
    (source,) = first
    assert source.startswith(f"{SIMULATION}qrels qrels.txt sha256:") and "grade" not in source
    refused = (r"query 'q\d', document 'd\d-\d+' is labelled 1 by 'simulation: qrels qrels.txt "
               r"sha256:\w+', and this call's '.*, relevant at grade ≥ 2' says 0( \(and \d+ more\))?: two "
               r"simulations mixed would certify neither. Simulate with the same labels as before \(the "
               r"same file, and threshold\), or relabel every item with overwrite and no limit — nothing "
               r"was recorded")
    with pytest.raises(ValueError, match=refused):
        wf.label(audit, qrels=qrels, threshold=2)
    assert _sources(audit) == first
    # an overwrite of some items only would leave the others as the first oracle says
    with pytest.raises(ValueError, match="two simulations mixed"):
        wf.label(audit, qrels=qrels, threshold=2, overwrite=True, limit=3)
    wf.label(audit, qrels=qrels, threshold=2, overwrite=True)
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        labels = dict(((q, d), y) for q, d, y in store.items())
    grades = {(q, d): int(g) for q, _, d, g in (line.split() for line in qrels.read_text().splitlines())}
    assert labels == {item: int(grades.get(item, 0) >= 2) for item in labels}
    # the first oracle's labels that the second gives alike stay theirs, and the second goes on
    assert len(_sources(audit)) == 2
    assert wf.label(audit, qrels=qrels, threshold=2).recorded == 0


def test_another_oracle_that_agrees_may_go_on(tmp_path: Path) -> None:
    """A copy of the qrels under another name is another source, but labels every item alike."""
    run, qrels = _graded(tmp_path)
    audit = _excluded(tmp_path, run)
    wf.label(audit, qrels=qrels, limit=5)
    copy = tmp_path / "copy.txt"
    copy.write_bytes(qrels.read_bytes())
    wf.label(audit, qrels=copy)
    assert sorted(_sources(audit).values()) == [5, 15]


def test_the_interleaved_review_refuses_a_second_oracle(tmp_path: Path) -> None:
    run, qrels = _graded(tmp_path, queries=1, depth=40)
    audit = tmp_path / "I"
    wf.freeze(audit, run=run, design="interleaved", target_recall=0.8, seed=7)
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=qrels, limit=4)
    before = _sources(audit)
    with pytest.raises(ValueError, match="two simulations mixed would certify neither.* or freeze a new "):
        wf.label(audit, qrels=qrels, threshold=2)
    assert _sources(audit) == before
    wf.label(audit, qrels=qrels, limit=2)   # the same oracle goes on
    assert sum(_sources(audit).values()) == 6


def test_labels_reused_from_a_simulated_audit_say_who_gave_them(tmp_path: Path) -> None:
    run, qrels = _graded(tmp_path)
    old = _excluded(tmp_path, run)
    first = _rows(old)[0]
    (tmp_path / "half.csv").write_text(f"query_id,doc_id,label\n{first['query_id']},{first['doc_id']},1\n")
    wf.label(old, from_file=tmp_path / "half.csv")
    wf.label(old, qrels=qrels)
    given = _sources(old)
    new = tmp_path / "B"
    wf.freeze(new, run=run, cut=tmp_path / "cut.run", design="excluded", seed=3, reuse_labels=old)
    wf.plan(new)
    wf.sample(new, excluded=20, allow_underpowered=True)
    wf.label(new, reuse=True)
    reused = _sources(new)
    assert reused == {f"reused from audit {wf.load_audit(old).manifest.audit_id[:12]} ({s})": n
                      for s, n in given.items()}
    content = wf.certify(new).content
    assert content["label_sources"] == reused
    assert any(SIMULATION in s for s in content["label_sources"])
