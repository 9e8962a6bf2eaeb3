"""``rankcut review correct``: a wrong label is mended by the review that the right labels would
have given, on the same frozen audit order, with the old answers given again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_testdata import labels_of, toy_records
from typer.testing import CliRunner

from rankcut.audit import workflow
from rankcut.audit.manifest import load_manifest
from rankcut.audit.report import write_report
from rankcut.cli.main import app
from rankcut.review import session
from rankcut.review.records import Records

POLICY = "projected-cost:batch=10,chunk=5"


@pytest.fixture
def records() -> Records:
    return toy_records(80, 8, seed=2)


def _steps(folder: Path) -> list[tuple[str, str, int]]:
    return [(s["move"], s["doc_id"], s["label"])
            for s in map(json.loads, (folder / "review.jsonl").read_text().splitlines())]


@pytest.mark.parametrize("nth", [0, 2, 4])
def test_the_corrected_review_is_the_review_the_right_labels_give(records: Records, tmp_path: Path,
                                                                  nth: int) -> None:
    """A reviewer labels one relevant record 0 by mistake and reads on; the corrected review, read on
    with the right labels, takes step for step the moves, records and labels of the review read with
    the right labels from the start (same seed, so same audit order), and certifies the same."""
    truth = labels_of(records)
    right = tmp_path / "right"
    session.start(records, right, target_recall=0.8, seed=6, policy=POLICY)
    session.label(right, known=truth)
    wrong_at = [s for s in _steps(right) if s[2] == 1][nth][1]   # the nth relevant record read
    mistaken = {**truth, wrong_at: 0}
    old = tmp_path / "old"
    session.start(records, old, target_recall=0.8, seed=6, policy=POLICY)
    session.label(old, known=mistaken, limit=40)
    assert _steps(old) != _steps(right)[:len(_steps(old))]   # the mistake changed the review
    done = session.correct(old, tmp_path / "new", {wrong_at: 1})
    assert done["corrected"] == {wrong_at: (0, 1)} and done["recorded"] + done["kept"] == done["answers"]
    assert done["recorded"] > 0
    new = tmp_path / "new"
    assert _steps(new) == _steps(right)[:len(_steps(new))]   # recorded from the old answers, as asked
    session.label(new, known=truth)
    assert _steps(new) == _steps(right)
    assert workflow.certify(new).content["counts"] == workflow.certify(right).content["counts"]
    # everything frozen is the old review's, but which review it corrects and how
    a, b = load_manifest(old).to_dict(), load_manifest(new).to_dict()
    for key in ("frozen_at", "inputs", "snapshot", "audit_id", "screener"):
        a.pop(key), b.pop(key)
    assert a == b
    config = load_manifest(new)["screener"]["config"]
    assert config["corrects"] == {"review": load_manifest(old).audit_id,
                                  "relabelled": {wrong_at: {"was": 0, "now": 1}}}
    report = write_report(new, tmp_path / "report.md").report.read_text()
    said = f"| corrects | review {load_manifest(old).audit_id[:12]}: record '{wrong_at}' labelled 1 (was 0)"
    assert said in report


def test_a_relabelled_record_of_the_prior_knowledge_is_the_new_prior(records: Records,
                                                                     tmp_path: Path) -> None:
    truth = labels_of(records)
    relevant = next(rid for rid, y in truth.items() if y)
    old = tmp_path / "old"
    session.start(records.with_prior({relevant: 0}), old, target_recall=0.8, seed=2, policy=POLICY)
    session.label(old, known={**truth, relevant: 0}, limit=10)
    session.correct(old, tmp_path / "new", {relevant: 1})
    assert load_manifest(tmp_path / "new")["screener"]["config"]["prior"] == {relevant: 1}
    assert _steps(tmp_path / "new")[0] == ("screen", relevant, 1)


def test_corrections_that_change_nothing_or_name_nothing_are_refused(records: Records,
                                                                     tmp_path: Path) -> None:
    truth = labels_of(records)
    old = tmp_path / "old"
    session.start(records, old, target_recall=0.8, seed=2, policy=POLICY)
    session.label(old, known=truth, limit=10)
    read = _steps(old)[0]
    unread, kept = [rid for rid in records.ids if rid not in {s[1] for s in _steps(old)}][-2:]
    session.keep(old, {kept: 0}, "serve reviewer Bob")   # answered ahead, never recorded
    for relabel, into, message in [
        ({read[1]: read[2]}, "n1", f"record '{read[1]}' is labelled {read[2]} in review .* already"),
        ({"nope": 1}, "n2", "record 'nope' is not in review"),
        ({unread: 1}, "n3", f"record '{unread}' has no answer in review .*: nothing to correct"),
        ({}, "n4", "name at least one record to relabel"),
        ({kept: 1}, "n5", f"record '{kept}' is only kept in review .*: give its right label with rankcut "
                          "review label --from"),
        ({read[1]: 1 - read[2]}, "old", "is the review to correct: a corrected review goes into a new"),
    ]:
        with pytest.raises(ValueError, match=message):
            session.correct(old, tmp_path / into, relabel)
        assert into == "old" or not (tmp_path / into).exists()   # nothing half-written


def test_the_command_line(records: Records, tmp_path: Path) -> None:
    truth = labels_of(records)
    old = tmp_path / "old"
    session.start(records, old, target_recall=0.8, seed=2, policy=POLICY)
    session.label(old, known=truth, limit=12)
    first = _steps(old)[0]
    run = CliRunner().invoke(app, ["review", "correct", "--folder", str(old), "--into", str(tmp_path / "new"),
                                   "--relabel", f"{first[1]}={'no' if first[2] else 'yes'}"])
    assert run.exit_code == 0, run.stderr
    said = f"with record {first[1]} labelled {1 - first[2]} (was {first[2]}); the same records, seed 2"
    assert said in run.stdout
    assert "answers as the corrected review asked for their records" in run.stdout
    status = CliRunner().invoke(app, ["review", "status", "--folder", str(tmp_path / "new")]).stdout
    said = f"(record {first[1]} labelled {1 - first[2]}, was {first[2]})"
    assert f"corrects: review {load_manifest(old).audit_id[:12]} {said}" in status
    bad = CliRunner().invoke(app, ["review", "correct", "--folder", str(old), "--into", str(tmp_path / "x"),
                                   "--relabel", first[1]])
    assert bad.exit_code == 2 and "give RECORD=LABEL" in bad.stderr


def test_a_kept_answer_is_corrected_by_label_after_the_target_is_met(records: Records,
                                                                     tmp_path: Path) -> None:
    """``correct`` sends a wrong kept answer to ``label --from``, which refused any file once the
    target was met ("the review asks for no further record"): the advice failed as given."""
    import warnings

    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=2, policy=POLICY)
    session.label(folder, known=truth)
    assert workflow.status(folder).get("next_item") is None   # met: the review asks for no record
    unread = next(rid for rid in records.ids if rid not in {s[1] for s in _steps(folder)})
    session.keep(folder, {unread: 0}, "serve reviewer Bob")
    with pytest.raises(ValueError, match=f"record '{unread}' is only kept in review .*: give its right label "
                                         "with rankcut review label --from"):
        session.correct(folder, tmp_path / "new", {unread: 1})
    fix = tmp_path / "fix.csv"
    fix.write_text(f"record_id,label\n{unread},1\n")
    with pytest.warns(UserWarning, match=f"record '{unread}' is labelled 1, which replaces the 0 kept for "
                                         "it, given by serve reviewer Bob"):
        assert session.label(folder, from_file=fix).recorded == 0
    assert session.kept_answers(folder) == {unread: 1}
    with warnings.catch_warnings(), pytest.raises(ValueError, match="nothing was recorded — the review asks "
                                                                    "for no further record"):
        warnings.simplefilter("ignore")
        session.label(folder, from_file=fix)   # the same answer again: nothing new
    other = next(rid for rid in records.ids if rid not in {s[1] for s in _steps(folder)} and rid != unread)
    fix.write_text(f"record_id,label\n{unread},0\n{other},1\n")   # a correction and a new answer
    with pytest.raises(ValueError, match=f"and record '{other}' has no kept answer to correct"):
        session.label(folder, from_file=fix)
    assert session.kept_answers(folder) == {unread: 1}   # nothing kept of that file
