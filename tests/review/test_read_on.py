"""Reading on after the target is met (``rankcut review read-on``): the review asks for the ranker's
next picks again, counts each one read, and the certificate stays met and says when it was first
met; without the reviewer's choice, recorded in the label store, those labels are refused."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from review_testdata import labels_of, toy_records

from rankcut.audit import workflow
from rankcut.audit.designs.interleaved import READ_ON_META
from rankcut.certify.interleaved import interleaved_recall_certificate
from rankcut.certify.result import verify
from rankcut.review import session
from rankcut.review.records import Records

POLICY = "projected-cost:batch=10,chunk=5"


@pytest.fixture
def records() -> Records:
    return toy_records(80, 8, seed=2)


def _steps(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "review.jsonl").read_text().splitlines()]


def _met(records: Records, folder: Path) -> int:
    """A review simulated to its certificate; the steps it read."""
    session.simulate(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    info = session.status(folder)
    assert info["next_record"] is None and info["read"] < len(records.ids)
    return int(info["read"])


def test_reading_on_counts_the_ranker_s_next_picks_and_the_target_stays_met(records: Records,
                                                                             tmp_path: Path) -> None:
    folder = tmp_path / "R"
    met = _met(records, folder)
    before = workflow.certify(folder)
    bound = session.status(folder)["recall_bound"]
    assert session.read_on(folder) == (met, True)
    assert session.read_on(folder) == (met, False)   # again: nothing changes
    nxt = session.next_record(folder)
    assert nxt is not None and nxt["move"] == "screen"
    assert f"the target was met at step {met}, and the reviewer chose to read on" in nxt["why"]
    # the reviewer reads three more; each is the ranker's pick, counted
    result = session.label(folder, known=labels_of(records), limit=3)
    assert result.recorded == 3
    steps = _steps(folder)
    assert len(steps) == met + 3 and [s["move"] for s in steps[met:]] == ["screen"] * 3
    assert steps[met]["doc_id"] == nxt["record_id"]
    info = session.status(folder)
    assert info["read"] == met + 3 and info["recall_bound"] >= bound
    cert = workflow.certify(folder)
    verdict = cert.content["verdict"]
    assert verdict["met"] and f"met at step {met}, read on to {met + 3} of 80 records" in verdict["text"]
    entry = cert.content["report"]["certificates"][0]["certificate"]
    verify(entry)   # recomputed from the moves and labels
    assert entry["details"]["met_step"] == met
    assert f"met (first at step {met} of the {met + 3} read)" in entry["statement"]
    assert before.content["verdict"]["met"]


def test_labels_read_on_without_the_choice_are_refused(records: Records, tmp_path: Path) -> None:
    """The read-on picks of a review that did not choose to read on are not its steps: a label file
    of them records nothing, and a store that holds them without the choice is refused."""
    folder = tmp_path / "R"
    _met(records, folder)
    pick_folder = tmp_path / "copy"
    shutil.copytree(folder, pick_folder)
    session.read_on(pick_folder)
    pick = session.next_record(pick_folder)
    assert pick is not None
    (tmp_path / "mine.csv").write_text(f"record_id,label\n{pick['record_id']},0\n")
    with pytest.raises(ValueError, match="asks for no further record .*rankcut review read-on first"):
        session.label(folder, from_file=tmp_path / "mine.csv")
    session.label(pick_folder, from_file=tmp_path / "mine.csv")
    with sqlite3.connect(pick_folder / "labels.sqlite") as con:   # the choice removed by hand
        con.execute("DELETE FROM meta WHERE key = ?", (READ_ON_META,))
    with pytest.raises(ValueError, match="that the review never asked for"):
        workflow.certify(pick_folder)


def test_reading_on_is_refused_in_a_read_only_folder(records: Records, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from rankcut.audit import labels as labels_mod

    folder = tmp_path / "R"
    _met(records, folder)
    monkeypatch.setattr(labels_mod, "writable", lambda path: False)
    with pytest.raises(ValueError, match=f"the review folder {folder} is read-only: reading on records the "
                                         "choice in"):
        session.read_on(folder)
    monkeypatch.undo()
    assert session.next_record(folder) is None   # nothing was changed


def test_reading_on_is_refused_before_the_target_is_met(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    with pytest.raises(ValueError, match="nothing is read yet"):
        session.read_on(folder)
    session.label(folder, known=labels_of(records), limit=4)
    with pytest.raises(ValueError, match=r"the target is not met yet \(4 records read\): the review still "
                                         "asks for records"):
        session.read_on(folder)
    assert session.next_record(folder) is not None


def test_an_answer_kept_before_reading_on_is_recorded_when_the_ranker_picks_its_record(
        records: Records, tmp_path: Path) -> None:
    """A label file that met the target and answered records past it: those answers are kept, and
    reading on records the one the ranker picks next instead of asking for it again."""
    truth = labels_of(records)
    done = tmp_path / "done"
    met = _met(records, done)
    step_met = _steps(done)[-1]
    shutil.copytree(done, tmp_path / "peek")
    session.read_on(tmp_path / "peek")
    pick = session.next_record(tmp_path / "peek")
    assert pick is not None
    folder = tmp_path / "R"   # the same review, labelled to one step before its "met"
    session.start(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    session.label(folder, known=truth, limit=met - 1)
    ids = (step_met["doc_id"], pick["record_id"])
    (tmp_path / "mine.csv").write_text("record_id,label\n" + "".join(f"{i},{truth[i]}\n" for i in ids))
    with pytest.warns(UserWarning, match="not counted .unless you read on, rankcut review read-on, and the "
                                         "ranker picks them."):
        session.label(folder, from_file=tmp_path / "mine.csv")
    assert session.status(folder)["kept"] == 1 and session.next_record(folder) is None
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    shown = CliRunner().invoke(app, ["review", "status", "--folder", str(folder)]).stdout
    assert "kept: 1 answer for a record the review has not asked for (it asks for none now: counted only " \
           "if you read on and the ranker picks it)" in shown
    session.read_on(folder)
    info = session.status(folder)
    assert info["kept"] == 0 and info["read"] == met + 1 and info["reads_on"] and info["met_step"] == met
    assert _steps(folder)[-1]["doc_id"] == pick["record_id"]
    assert info["next_record"]["record_id"] != pick["record_id"]


def test_the_engine_keeps_a_met_target_met_while_screening_on() -> None:
    """After the target is met, any screening steps (any labels) keep it met, the recall bound never
    falls, and the certificate says at which step it was first met."""
    rng = np.random.default_rng(0)
    n, moves, labels = 300, "s" * 40 + "a" * 200, "1" * 20 + "0" * 20 + "0" * 200
    first = interleaved_recall_certificate(n, moves, labels, 0.8, 0.05)
    assert first.details["certified"]
    met = first.details["met_step"]
    assert met is not None and met <= len(moves)
    for i in range(1, met):   # not certified before its met step
        assert not interleaved_recall_certificate(n, moves[:i], labels[:i], 0.8, 0.05).details["certified"]
    more = "".join(map(str, rng.integers(0, 2, 30)))
    value = first.value
    for j in range(1, len(more) + 1):
        cert = interleaved_recall_certificate(n, moves + "s" * j, labels + more[:j], 0.8, 0.05)
        assert cert.details["certified"] and cert.details["met_step"] == met and cert.value >= value
        value = cert.value
    assert f"met (first at step {met} of the {len(moves) + 30} read)" in cert.statement


def test_the_command_line_offers_reading_on_once_met(records: Records, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    def run(*args: object) -> tuple[int, str, str]:
        out = CliRunner().invoke(app, ["review", *map(str, args)])
        return out.exit_code, out.stdout, out.stderr

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    code, _, err = run("read-on", "--folder", folder)
    assert code == 2 and err.startswith("error: ") and "nothing is read yet" in err
    session.label(folder, known=labels_of(records))
    code, out, _ = run("next", "--folder", folder)
    assert code == 0 and "the target is certified: the review asks for no further record" in out
    code, status, _ = run("status", "--folder", folder)
    assert f"rankcut review read-on --folder {folder}" in status
    assert f"to read on (the ranker's next picks, each counted; the target stays met): rankcut review " \
           f"read-on --folder {folder}" in out
    met = session.status(folder)["read"]
    code, out, _ = run("read-on", "--folder", folder)
    assert code == 0 and out.startswith(f"reading on after {met} records read: ")
    assert "to read now: record " in out and "a screening record (the ranker's pick)" in out
    code, out, _ = run("next", "--folder", folder)
    assert code == 0 and "review read-on" not in out and "the reviewer chose to read on" in out
    code, out, _ = run("read-on", "--folder", folder)
    assert code == 0
    assert out.startswith(f"this review reads on already, since {met} records were read: nothing was changed")
    code, out, _ = run("read-on", "--folder", folder, "--json")
    assert code == 0 and json.loads(out)["began_now"] is False and json.loads(out)["read_on_after"] == met
    code, out, _ = run("status", "--folder", folder, "--json")
    info = json.loads(out)
    assert info["reads_on"] and info["met_step"] == met
    session.label(folder, known=labels_of(records))   # to the end
    code, out, _ = run("status", "--folder", folder)
    assert "every record is read: the review asks for no further record" in out
    assert "review read-on" not in out


def test_a_short_batch_says_why(records: Records, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    folder = tmp_path / "R"
    met = _met(records, tmp_path / "done")
    session.start(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=met - 3)
    out = CliRunner().invoke(app, ["review", "next", "--folder", str(folder), "--batch", "10"]).stdout
    assert "only 3 of the 10 asked for: if none of them is relevant, the review asks for no further record " \
           "after them" in out
