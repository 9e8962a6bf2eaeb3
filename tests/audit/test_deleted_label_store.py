"""A label store deleted after ``certify``: both ``certify`` and ``label`` say what happened and
what can be done — never 'run label' on one side and 'the labels were opened' on the other."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import write_lists
from typer.testing import CliRunner

from rankcut.audit import workflow as wf
from rankcut.cli.audit import app


def _certified(folder: Path, design: str) -> tuple[Path, Path]:
    run, cut, qrels = write_lists(folder)
    audit = folder / "A"
    extra = {"target_recall": 0.5} if design == "sequential" else {}
    wf.freeze(audit, run=run, cut=cut, design=design, seed=3, **extra)
    wf.plan(audit)
    wf.sample(audit, **({} if design == "sequential" else {"excluded": 10}))
    wf.label(audit, qrels=qrels, **({"limit": 20} if design == "sequential" else {}))
    wf.certify(audit)
    (audit / "labels.sqlite").unlink()
    return audit, qrels


def _cli(*args: object) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


@pytest.mark.parametrize("design", ["excluded", "sequential"])
def test_certify_says_the_store_was_deleted_after_the_opening(design: str, tmp_path: Path) -> None:
    audit, _ = _certified(tmp_path, design)
    code, out, err = _cli("certify", "--audit", audit)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "labels.sqlite is missing, but the labels of this audit were opened for certification" in err
    assert "deleted after certify" in err and "restore it" in err and "freeze a new audit" in err
    assert "run rankcut audit label" not in err   # the loop the issue met
    assert "rankcut audit report" in err          # what still works


def test_label_says_the_same(tmp_path: Path) -> None:
    audit, qrels = _certified(tmp_path, "excluded")
    code, _, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", qrels)
    assert code == 2 and "deleted after certify" in err and "Labelling again cannot replace it" in err
    assert not (audit / "labels.sqlite").exists()


def test_before_any_opening_certify_still_says_run_label(tmp_path: Path) -> None:
    audit = tmp_path / "B"
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q0 Q0 d{r} {r + 1} {9 - r}.5 t\n" for r in range(8)))
    cut = tmp_path / "cut.run"
    cut.write_text("".join(f"q0 Q0 d{r} {r + 1} {9 - r}.5 t\n" for r in range(2)))
    wf.freeze(audit, run=run, cut=cut, design="excluded", seed=1)
    wf.plan(audit)
    wf.sample(audit, excluded=3)
    with pytest.raises(wf.AuditStepError, match="no labels yet .* run label first"):
        wf.certify(audit)


@pytest.mark.parametrize("design", ["sequential", "interleaved"])
def test_an_emptied_store_is_refused_as_a_deleted_one(design: str, tmp_path: Path) -> None:
    """An empty file where the store was (a failed copy, a truncation) is no store: label wrote a new
    store into it after the opening, which then held labels that were never seen."""
    run, cut, qrels = tmp_path / "run.txt", tmp_path / "cut.run", tmp_path / "qrels.txt"
    lines = [f"q0 Q0 d{r} {r + 1} {99 - r}.5 t\n" for r in range(60)]   # one query: relevant at the top
    run.write_text("".join(lines))
    cut.write_text("".join(lines[:10]))
    qrels.write_text("".join(f"q0 0 d{r} 1\n" for r in range(8)))
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, design=design, target_recall=0.5, seed=3,
              **({"cut": cut} if design == "sequential" else {}))
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=qrels, limit=20)
    wf.certify(audit)
    (audit / "labels.sqlite").write_bytes(b"")
    code, _, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", qrels)
    assert code == 2 and "labels.sqlite is empty, but the labels of this audit were opened" in err
    assert (audit / "labels.sqlite").stat().st_size == 0
    code, _, err = _cli("certify", "--audit", audit)
    assert code == 2 and "labels.sqlite is empty, but" in err and "(or emptied)" in err
    if design == "sequential":
        assert "labels.sqlite is empty, but the labels" in wf.status(audit)["labels_changed"]
    else:   # review.jsonl holds the steps whose labels are gone: every step refuses
        with pytest.raises(ValueError, match=r"labels.sqlite is empty, but .*review.jsonl records 20 steps"):
            wf.status(audit)
        (audit / "review.jsonl").unlink()
        assert "labels.sqlite is empty, but the labels" in wf.status(audit)["labels_changed"]
