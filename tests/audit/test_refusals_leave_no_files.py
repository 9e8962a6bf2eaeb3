"""A refused certify (or report) leaves the folder as it found it: no hidden temporary file, no half
of a pair of files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rankcut.audit import workflow


@pytest.fixture
def audit(tmp_path: Path) -> tuple[Path, Path]:
    run, cut, qrels = tmp_path / "run.txt", tmp_path / "cut.run", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(5)))
    qrels.write_text("".join(f"q{q} 0 d{q}-{r} 1\n" for q in range(3) for r in range(0, 30, 7)))
    folder = tmp_path / "A"
    workflow.freeze(folder, run=run, cut=cut, design="two-pool", target_recall=0.5, seed=1)
    workflow.plan(folder)
    workflow.sample(folder)
    return folder, qrels


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))   # hidden files included


def test_an_incomplete_sample_refused_at_certify_changes_nothing(audit: tuple[Path, Path]) -> None:
    folder, qrels = audit
    workflow.label(folder, qrels=qrels, limit=3)
    before = listing(folder)
    with pytest.raises(ValueError, match="the sample is incomplete"):
        workflow.certify(folder)
    assert listing(folder) == before


def test_a_certificate_json_cannot_hold_is_refused_before_either_file_is_written(
        audit: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    folder, qrels = audit
    workflow.label(folder, qrels=qrels)
    before = listing(folder)
    monkeypatch.setattr(workflow, "now", lambda: float("nan"))   # certified_at: a value JSON refuses
    with pytest.raises(ValueError, match="Out of range float"):
        workflow.certify(folder)
    assert listing(folder) == before   # not opened.json without certificate.json
    monkeypatch.undo()
    workflow.certify(folder)
    assert {"opened.json", "certificate.json"} <= set(listing(folder))


def test_a_refused_report_plot_leaves_no_hidden_temporary_file(audit: tuple[Path, Path], tmp_path: Path
                                                               ) -> None:
    pytest.importorskip("matplotlib")
    from rankcut.audit.report import write_report

    folder, qrels = audit
    workflow.label(folder, qrels=qrels)
    workflow.certify(folder)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.png").mkdir()   # the plot cannot be moved into place
    before = listing(out)
    with pytest.raises(OSError):
        write_report(folder, out / "report.md")
    assert [n for n in listing(out) if n.startswith(".")] == [] and "report.png" in before


def test_an_empty_label_store_is_no_labels_and_is_left_empty(audit: tuple[Path, Path]) -> None:
    """A label call killed before its first label can leave an empty labels.sqlite; certify says
    there are no labels yet and does not write a schema into it."""
    folder, _ = audit
    (folder / "labels.sqlite").touch()
    before = listing(folder)
    with pytest.raises(workflow.AuditStepError, match=r"no labels yet \(.*labels.sqlite empty\): run label"):
        workflow.certify(folder)
    assert listing(folder) == before and (folder / "labels.sqlite").stat().st_size == 0
