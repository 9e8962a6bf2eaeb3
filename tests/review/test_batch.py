"""Reading a batch before labelling it: ``next --batch N`` (the lookahead of the interleaved
design), the CSV to fill in, and ``label --from`` on it."""

from __future__ import annotations

import csv
import json
import threading
import warnings
from pathlib import Path

import pytest
from review_testdata import labels_of, toy_records
from typer.testing import CliRunner

from rankcut.audit import workflow
from rankcut.audit.labels import LabelStore
from rankcut.audit.manifest import sha256_file
from rankcut.cli import review as review_cli
from rankcut.cli.main import app
from rankcut.review import session
from rankcut.review.records import Records

POLICY = "projected-cost:batch=10,chunk=5"


@pytest.fixture
def records() -> Records:
    return toy_records(80, 8, seed=2)


def _steps(folder: Path) -> list[dict]:
    path = folder / "review.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("read", [0, 9, 42])
def test_the_batch_is_what_the_review_asks_for_when_every_answer_is_not_relevant(
        records: Records, tmp_path: Path, read: int) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY, prior_basis="misses")
    if read:
        session.label(folder, known=labels_of(records), limit=read)
    before = len(_steps(folder))
    batch = session.next_records(folder, 15)
    assert len(batch) == 15 and batch[0] == session.next_record(folder)
    assert len({r["record_id"] for r in batch}) == 15
    # after 42 steps the batch ends screening and goes on to audit draws (the policy's own moves)
    assert {r["move"] for r in batch} == ({"screen", "audit"} if read == 42 else {"screen"})
    # the simulation goes on with the answers given so far (another one that disagreed is refused)
    read_so_far = {s["doc_id"] for s in _steps(folder)}
    known = {rid: y if rid in read_so_far else 0 for rid, y in labels_of(records).items()}
    session.label(folder, known=known, limit=15)
    taken = _steps(folder)[before:]
    assert [(s["doc_id"], s["move"], s["rank"], s["audit_position"], s["why"]) for s in taken] == \
        [(r["record_id"], r["move"], r["position"], r["audit_position"], r["why"]) for r in batch]
    assert session.status(folder)["read"] == before + 15   # the lookahead itself recorded nothing


def test_a_batch_filled_in_with_the_true_labels_is_recorded_as_far_as_the_review_asks(
        records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    truth = labels_of(records)
    out = tmp_path / "batch.csv"
    session.write_batch(folder, out, session.next_records(folder, 30))
    with open(out, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(session.BATCH_COLUMNS) and all(r["label"] == "" for r in rows)
    assert rows[0]["text"] == records.texts[records.ids.index(rows[0]["record_id"])]
    with pytest.raises(ValueError, match="nothing was recorded — it holds no new label, and none for record"):
        session.label(folder, from_file=out)          # not filled in yet
    filled = tmp_path / "filled.csv"
    with open(filled, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(session.BATCH_COLUMNS))
        w.writeheader()
        w.writerows({**r, "label": truth[r["record_id"]]} for r in rows)
    assert any(truth[r["record_id"]] for r in rows)   # a relevant one, so the path can change after it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = session.label(folder, from_file=filled)
    taken = _steps(folder)
    assert result.recorded == len(taken) >= 1 and taken[0]["doc_id"] == rows[0]["record_id"]
    assert all(s["label"] == truth[s["doc_id"]] for s in taken)
    assert {s["doc_id"] for s in taken} <= {r["record_id"] for r in rows}
    left = len(rows) - len(taken)
    assert [str(w.message).split(": ")[1] for w in caught] == \
        ([f"{left} of its labels {'is' if left == 1 else 'are'} kept for later"] if left else [])
    kept = session.kept_answers(folder)
    assert kept == {r["record_id"]: truth[r["record_id"]] for r in rows
                    if r["record_id"] not in {s["doc_id"] for s in taken}}
    # the next batch does not list them again, and assumes their kept answers
    later = session.next_records(folder, 10)
    assert not {r["record_id"] for r in later} & set(kept)
    # the store names the reviewer's file, not the file translated from it
    assert result.source == f"file filled.csv sha256:{sha256_file(filled)[:12]}"
    with LabelStore(folder / "labels.sqlite", readonly=True) as store:
        assert store.sources() == [result.source]


def test_a_batch_file_is_replaced_only_once_its_labels_are_recorded(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    out = tmp_path / "batch.csv"
    first = session.next_records(folder, 5)
    session.write_batch(folder, out, first)
    session.write_batch(folder, out, first)        # nothing labelled in it yet: nothing to lose
    labelled = "record_id,label\n" + "".join(f"{r['record_id']},0\n" for r in first)
    out.write_text(labelled)
    unrecorded = f"holds 5 labels not recorded yet \\(record {first[0]['record_id']}, "
    with pytest.raises(FileExistsError, match=unrecorded):
        session.write_batch(folder, out, first)
    assert out.read_text() == labelled
    (tmp_path / "notes.csv").write_text("my notes\n")
    with pytest.raises(FileExistsError, match="is not a label file of this review"):
        session.write_batch(folder, tmp_path / "notes.csv", first)
    session.label(folder, from_file=out)
    session.write_batch(folder, out, session.next_records(folder, 5))   # recorded: replaced
    with open(out, newline="", encoding="utf-8") as f:
        assert [r["label"] for r in csv.DictReader(f)] == [""] * 5


def test_next_batch_on_the_command_line(records: Records, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["record_id", "title", "abstract"])
        w.writerows(zip(records.ids, records.titles, records.abstracts, strict=True))
    folder = tmp_path / "R"
    runner = CliRunner()
    assert runner.invoke(app, ["review", "start", str(path), "--folder", str(folder), "--seed", "4",
                               "--policy", POLICY]).exit_code == 0
    out = runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "6", "--out",
                              str(tmp_path / "b.tsv")])
    assert out.exit_code == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == f"wrote 6 records to {tmp_path / 'b.tsv'}: fill in its label column (1 relevant, " \
        "0 not)"
    assert lines[1].startswith("the next 6 records to read, if none of them is relevant")
    assert len([ln for ln in lines if ln.lstrip()[:2].rstrip(".").isdigit()]) == 6
    assert lines[-1] == f"next: rankcut review label --folder {folder} --from {tmp_path / 'b.tsv'}"
    with open(tmp_path / "b.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == list(session.BATCH_COLUMNS) and len(rows) == 7
    as_json = runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "6", "--json"])
    assert [r["record_id"] for r in json.loads(as_json.stdout)] == [r[0] for r in rows[1:]]
    bad = runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "0"])
    assert bad.exit_code == 2 and bad.stderr.strip() == "error: --batch must be an integer >= 1, got 0"
    txt = runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "6", "--out",
                              str(tmp_path / "b.txt")])
    assert txt.exit_code == 2
    assert txt.stderr.strip() == (f"error: {tmp_path / 'b.txt'}: a batch is a file to fill in and give back "
                                  "to label --from, written as CSV or TSV: name it *.csv or *.tsv (next "
                                  "--json prints the records)")
    assert not (tmp_path / "b.txt").exists()
    # the reviewer fills it in, and the spreadsheet saves it with a byte-order mark
    with open(tmp_path / "b.tsv", "w", newline="", encoding="utf-8-sig") as f:
        csv.writer(f, delimiter="\t").writerows([rows[0]] + [[r[0], "0", *r[2:]] for r in rows[1:]])
    done = runner.invoke(app, ["review", "label", "--folder", str(folder), "--from", str(tmp_path / "b.tsv")])
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("recorded 6 labels (file b.tsv sha256:")
    # the next batch under a new name: the filled-in file, which the store names by its sha256, is kept
    assert done.stdout.splitlines()[-1] == (f"next: rankcut review next --folder {folder} --batch 6 --out "
                                            f"{tmp_path / 'b-2.tsv'}   # the next records to read")
    (tmp_path / "b-2.tsv").touch()
    (tmp_path / "c-9.csv").touch()
    assert [review_cli._batch_after(tmp_path / n).name for n in ("b.tsv", "c-9.csv", "d.x-1.csv", "e-007.csv")
            ] == ["b-3.tsv", "c-10.csv", "d.x-2.csv", "e-008.csv"]
    unread = next(r for r in records.ids if r not in {row[0] for row in rows})
    (tmp_path / "b.tsv").write_text("record_id\tlabel\n" + f"{unread}\t1\n")
    again = runner.invoke(app, ["review", "next", "--folder", str(folder), "--out", str(tmp_path / "b.tsv")])
    assert again.exit_code == 2 and "holds 1 label not recorded yet" in again.stderr, again.stderr
    # a label file that is not a batch: the next record is named, as after any label call
    (tmp_path / "one.csv").write_text(f"record_id,label\n{session.next_record(folder)['record_id']},0\n")
    one = runner.invoke(app, ["review", "label", "--folder", str(folder), "--from",
                              str(tmp_path / "one.csv")])
    assert one.exit_code == 0 and "--batch 6" not in one.stdout, one.stdout
    assert one.stdout.splitlines()[-2:] == [   # no file named that does not exist
        f"next: rankcut review label --folder {folder} --interactive",
        f"  or: rankcut review next --folder {folder} --batch 25 --out batch.csv   # a CSV to fill in, then "
        "label --from batch.csv"]


def test_the_reviewer_named_on_the_command_line_is_recorded_with_each_answer(records: Records,
                                                                            tmp_path: Path) -> None:
    """A team taking batches in turns could not show who answered what: a file was recorded by its
    name and sha256, the terminal's answers as "interactive" (the page records its reviewers)."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    truth = labels_of(records)
    runner = CliRunner()
    batch = tmp_path / "a.csv"
    assert runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "3", "--out",
                               str(batch)]).exit_code == 0
    rows = list(csv.DictReader(batch.open(encoding="utf-8")))
    batch.write_text("record_id,label\n" + "".join(f"{r['record_id']},{truth[r['record_id']]}\n"
                                                   for r in rows))
    done = runner.invoke(app, ["review", "label", "--folder", str(folder), "--from", str(batch),
                               "--reviewer", " Ada   Lovelace "])
    assert done.exit_code == 0, done.stderr
    by_file = f"file a.csv sha256:{sha256_file(batch)[:12]}, reviewer Ada Lovelace"
    assert done.stdout.startswith(f"recorded 3 labels ({by_file})")
    asked = session.next_record(folder)["record_id"]
    typed = runner.invoke(app, ["review", "label", "--folder", str(folder), "--interactive", "--reviewer",
                                "Bob"], input=f"{'y' if truth[asked] else 'n'}\nq\n")
    assert typed.exit_code == 0, typed.stderr
    with LabelStore(folder / "labels.sqlite", create=False) as store:
        sources = store.sources_of([("toy", r["record_id"]) for r in rows] + [("toy", asked)])
    assert list(sources.values()) == [by_file] * 3 + ["interactive, reviewer Bob"]
    for bad, says in ((["--interactive", "--reviewer", " "], "a reviewer name is 1 to 60 printable"),
                      (["--simulate", "--reviewer", "Eve"], "--reviewer is for --from or --interactive")):
        refused = runner.invoke(app, ["review", "label", "--folder", str(folder), *bad])
        assert refused.exit_code == 2 and says in refused.stderr, refused.stderr


def test_a_review_read_in_batches_takes_the_steps_of_one_read_record_by_record(
        records: Records, tmp_path: Path) -> None:
    """The kept answers are recorded only when asked for: the same moves, documents and labels as
    the review answered one record at a time, so the same certificate."""
    truth = labels_of(records)
    one = tmp_path / "one"
    session.simulate(records, one, target_recall=0.8, seed=6, policy=POLICY)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=6, policy=POLICY)
    read: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # the kept-for-later warnings
        while batch := session.next_records(folder, 7):
            read |= {r["record_id"] for r in batch}
            (tmp_path / "b.csv").write_text("record_id,label\n" + "".join(
                f"{r['record_id']},{truth[r['record_id']]}\n" for r in batch))
            session.label(folder, from_file=tmp_path / "b.csv")
    steps = [(s["move"], s["doc_id"], s["label"]) for s in _steps(folder)]
    assert steps == [(s["move"], s["doc_id"], s["label"]) for s in _steps(one)]
    assert read >= {doc for _, doc, _ in steps}          # the reviewer read every record counted
    mine = workflow.certify(folder).content["report"]["certificates"]
    assert mine == json.loads((one / "certificate.json").read_text())["report"]["certificates"]


def test_a_label_file_error_names_the_line_the_record_starts_on(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    out = tmp_path / "b.csv"
    out.write_text('record_id,label,text\n1,0,"title one\nabstract one"\n2,x,"title two\nabstract two"\n')
    with pytest.raises(ValueError, match=r"b.csv, line 4: the label of record '2' must be"):
        session.label(folder, from_file=out)
    out.write_text("record_id;label;text\n1;0;" + "a long abstract " * 40 + "\n")
    semicolons = r"it names 'record_id;label;text' — the file looks separated by ';'"
    with pytest.raises(ValueError, match=semicolons):
        session.label(folder, from_file=out)
    tabs = tmp_path / "b.txt"                          # tab-separated, but not named so
    tabs.write_text("record_id\tlabel\n1\t0\n")
    with pytest.raises(ValueError, match=r"looks separated by tabs: name it \*\.tsv"):
        session.label(folder, from_file=tabs)
    out.write_text("1,0," + "a long abstract " * 40 + "\n")      # no header line
    with pytest.raises(ValueError) as err:
        session.label(folder, from_file=out)
    said = str(err.value)
    assert len(said) < 400 and "line 1: it looks like a record's label, not a header" in said
    out.write_text("id_of_record,label," + "a long header name " * 40 + "\n")   # a long header: cut short
    with pytest.raises(ValueError) as err:
        session.label(folder, from_file=out)
    assert len(str(err.value)) < 400 and "…" in str(err.value)


def test_status_after_the_certificate(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    truth = labels_of(records)
    prior = next(r for r in records.ids if truth[r])
    session.start(records.with_prior({prior: 1}), folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth)
    info = session.status(folder)
    assert info["next_record"] is None and info["prior_read"] == 1 and info["kept"] == 0
    runner = CliRunner()
    shown = runner.invoke(app, ["review", "status", "--folder", str(folder)]).stdout.splitlines()
    from rankcut.certify.result import format_bound

    assert shown[0].endswith(f"recall ≥ {format_bound(info['recall_bound'], 'lower')} certified now (target "
                             "0.8 at 95% confidence: met)")
    counts = f"({info['screened']} screened, {info['audited']} audited; prior knowledge among them: 1)"
    assert f"{info['read']} of 80 records read {counts}" in shown[0]
    # nothing more to read: next writes no batch file, and a label file is refused
    out = runner.invoke(app, ["review", "next", "--folder", str(folder), "--batch", "5", "--out",
                              str(tmp_path / "b.csv")])
    assert out.exit_code == 0 and not (tmp_path / "b.csv").exists()
    assert "the target is certified" in out.stdout
    other = next(r for r in records.ids if r not in {s["doc_id"] for s in _steps(folder)})
    (tmp_path / "l.csv").write_text(f"record_id,label\n{other},0\n")
    late = runner.invoke(app, ["review", "label", "--folder", str(folder), "--from", str(tmp_path / "l.csv")])
    assert late.exit_code == 2 and "the review asks for no further record" in late.stderr


def test_answers_kept_when_the_last_one_certifies_are_said_not_to_count(records: Records,
                                                                         tmp_path: Path) -> None:
    truth = labels_of(records)
    whole = tmp_path / "W"
    session.simulate(records, whole, target_recall=0.8, seed=4, policy=POLICY)
    last = _steps(whole)[-1]["doc_id"]
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=len(_steps(whole)) - 1)
    spare = next(r for r in records.ids if r not in {s["doc_id"] for s in _steps(whole)})
    (tmp_path / "l.csv").write_text(f"record_id,label\n{last},{truth[last]}\n{spare},0\n")
    with pytest.warns(UserWarning, match=r"record " + spare + r"\); it asks for no further record now, so "
                      r"they are not counted \(unless you read on"):
        assert session.label(folder, from_file=tmp_path / "l.csv").recorded == 1
    assert session.status(folder)["next_record"] is None and session.status(folder)["kept"] == 1


def test_a_batch_of_other_records_is_refused_whose_record_ids_are_the_same(records: Records,
                                                                         tmp_path: Path) -> None:
    """Two reviews of files numbered 1…N share their record ids, not their records: a batch of
    one, filled in, records nothing in the other, and is not replaced by the other's next batch. A
    review of the same records (another seed, a corrected review) takes it."""
    mine, other, same = tmp_path / "A", tmp_path / "B", tmp_path / "C"
    session.start(toy_records(80, 8, seed=9), mine, target_recall=0.8, seed=4, policy=POLICY)
    session.start(records, other, target_recall=0.8, seed=5, policy=POLICY)
    session.start(records, same, target_recall=0.8, seed=6, policy=POLICY)
    theirs = session.records_key(session.load_review(other))
    batch = tmp_path / "batch.csv"
    session.write_batch(other, batch, session.next_records(other, 5))
    with open(batch, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["records"] for r in rows} == {theirs} == {session.records_key(session.load_review(same))}
    with open(batch, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(session.BATCH_COLUMNS))
        w.writeheader()
        w.writerows({**r, "label": "0"} for r in rows)
    ours = session.records_key(session.load_review(mine))
    with pytest.raises(ValueError, match=rf"batch.csv, line 2: the row is of other records \(its records "
                                         rf"column says '{theirs}', this review's are '{ours}'\)"):
        session.label(mine, from_file=batch)
    assert _steps(mine) == [] and session.kept_answers(mine) == {}
    with pytest.raises(FileExistsError, match="exists and is not a label file of this review"):
        session.write_batch(mine, batch, session.next_records(mine, 5))
    assert session.label(other, from_file=batch).recorded == 5   # in its own review it is taken
    with pytest.warns(UserWarning, match="kept for later"):   # the same records: every answer holds there
        taken = session.label(same, from_file=batch).recorded
    assert taken + len(session.kept_answers(same)) == 5


def test_a_label_file_says_include_or_exclude_as_a_screening_tool_exports_it(records: Records,
                                                                             tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    asked = session.next_records(folder, 2)
    answers = tmp_path / "decisions.csv"
    answers.write_text(f"record_id,label\n{asked[0]['record_id']},Exclude\n{asked[1]['record_id']},maybe\n")
    with pytest.raises(ValueError, match=r"decisions.csv, line 3: the label of record .* got 'maybe'"):
        session.label(folder, from_file=answers)
    answers.write_text(f"record_id,label\n{asked[0]['record_id']},Exclude\n")
    assert session.label(folder, from_file=answers).recorded == 1
    assert [(s["doc_id"], s["label"]) for s in _steps(folder)] == [(asked[0]["record_id"], 0)]


def test_a_label_file_with_two_label_columns_is_refused_until_one_is_named(records: Records,
                                                                           tmp_path: Path) -> None:
    """A file with ``included`` and ``label`` (a records file's abstract and full-text decisions)
    was read by the first ASReview name found, without a word (the systematic-review walk)."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    asked = [r["record_id"] for r in session.next_records(folder, 2)]
    answers = tmp_path / "two.csv"
    answers.write_text("record_id,included,Label_Abstract_Screening\n"
                       + "".join(f"{rid},1,0\n" for rid in asked))
    with pytest.raises(ValueError, match=r"two.csv, line 1: columns 'included' and "
                                         r"'Label_Abstract_Screening' both read like labels \(line 2's "
                                         r"'Label_Abstract_Screening' holds '0'\): say which holds the "
                                         r"answers with label_column; nothing was recorded"):
        session.label(folder, from_file=answers)
    assert _steps(folder) == []
    first = tmp_path / "first.csv"   # the other column first in the row
    first.write_text("label_full_text,record_id,included\n" + "".join(f"1,{rid},0\n" for rid in asked))
    with pytest.raises(ValueError, match=r"first.csv, line 1: columns 'included' and 'label_full_text' both"):
        session.label(folder, from_file=first)
    with pytest.raises(ValueError, match=r"the header names no 'decision' column \(label_column\)"):
        session.label(folder, from_file=answers, label_column="decision")
    refused = CliRunner().invoke(app, ["review", "label", "--folder", str(folder), "--from", str(answers)])
    assert refused.exit_code != 0 and "with --label-column; nothing was recorded" in refused.output
    done = CliRunner().invoke(app, ["review", "label", "--folder", str(folder), "--from", str(answers),
                                    "--label-column", "label_abstract_screening"])
    assert done.exit_code == 0, done.output
    assert [(s["doc_id"], s["label"]) for s in _steps(folder)] == [(asked[0], 0), (asked[1], 0)]
    refused = CliRunner().invoke(app, ["review", "label", "--folder", str(folder), "--interactive",
                                       "--label-column", "label"])
    assert refused.exit_code != 0 and "--label-column is for --from" in refused.output
    more = [r["record_id"] for r in session.next_records(folder, 2)]
    alone = tmp_path / "alone.csv"   # a column ASReview's names do not find, named: it was refused
    alone.write_text("record_id,label_abstract_screening\n" + "".join(f"{rid},0\n" for rid in more))
    assert session.label(folder, from_file=alone, label_column="Label_Abstract_Screening").recorded == 2
    empty = tmp_path / "empty.csv"   # another label-like column, empty throughout: nothing to choose
    last = session.next_records(folder, 1)[0]["record_id"]
    empty.write_text(f"record_id,included,label_full_text\n{last},0,\n")
    assert session.label(folder, from_file=empty).recorded == 1


@pytest.mark.parametrize("call", ["label --from", "simulation", "record_kept"])
def test_an_answer_kept_by_the_page_while_a_label_call_runs_stays_kept(records: Records, tmp_path: Path,
                                                                      monkeypatch, call: str) -> None:
    """The page keeps a record read ahead while ``label --from`` (or a simulation, or the recording
    of kept answers) runs; each rewrote pending-labels.csv from the answers it had read when it
    began, so the page's answer was lost without a word. (In one process: the re-read; the lock
    across processes is the next test's.)"""
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=3)
    batch = session.next_records(folder, 4)
    far = [rid for rid in records.ids if rid not in {r["record_id"] for r in batch}
           and rid not in {s["doc_id"] for s in _steps(folder)}][-1]
    real = workflow.label

    def page_keeps_meanwhile(*args, **kwargs):   # the page's answer, given during the call
        done = real(*args, **kwargs)
        session.keep(folder, {far: 1}, "serve reviewer Ada")
        return done

    if call == "record_kept":
        session.keep(folder, {batch[0]["record_id"]: truth[batch[0]["record_id"]]}, "serve reviewer Bob")
    monkeypatch.setattr(workflow, "label", page_keeps_meanwhile)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if call == "label --from":
            answers = tmp_path / "a.csv"
            answers.write_text("record_id,label\n" + "".join(f"{r['record_id']},{truth[r['record_id']]}\n"
                                                              for r in batch))
            session.label(folder, from_file=answers)
        elif call == "simulation":
            session.label(folder, known=truth, limit=2)
        else:
            session.record_kept(folder)
    assert session.kept_with_sources(folder)[far] == (1, "serve reviewer Ada")


def test_an_undo_on_the_page_while_kept_answers_are_recorded_waits_and_finds_them_recorded(
        records: Records, tmp_path: Path, monkeypatch) -> None:
    """record_kept read the kept answers without their lock: the page's undo of one of them
    (unkeep) said "taken back" while the call went on to record it (note 49)."""
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    asked = session.next_records(folder, 1)[0]["record_id"]
    session.keep(folder, {asked: truth[asked]}, "serve reviewer Bob")
    real, undone = workflow.label, []
    page = threading.Thread(target=lambda: undone.append(
        session.unkeep(folder, asked, truth[asked], "serve reviewer Bob")))

    def undo_meanwhile(*args, **kwargs):   # the page's undo, from another thread, during the call
        page.start()
        page.join(0.5)
        assert page.is_alive(), "the undo did not wait for the kept answers' lock"
        return real(*args, **kwargs)

    monkeypatch.setattr(workflow, "label", undo_meanwhile)
    session.record_kept(folder)
    page.join(30)
    assert undone == [False]
    assert [(s["doc_id"], s["label"]) for s in _steps(folder)] == [(asked, truth[asked])]
    assert asked not in session.kept_with_sources(folder)


def test_a_file_that_replaces_an_answer_the_page_kept_meanwhile_says_whose(records: Records, tmp_path: Path,
                                                                           monkeypatch) -> None:
    """The page kept Ada's answer for a record of the file while label --from ran; the file's label
    replaced it without a word (the warning saw only the answers kept when the call began)."""
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    batch = [r["record_id"] for r in session.next_records(folder, 6)]
    last = batch[-1]
    real = workflow.label

    def page_keeps_meanwhile(*args, **kwargs):
        done = real(*args, **kwargs)
        session.keep(folder, {last: 1 - truth[last]}, "serve reviewer Ada")
        return done

    monkeypatch.setattr(workflow, "label", page_keeps_meanwhile)
    answers = tmp_path / "a.csv"
    answers.write_text("record_id,label\n" + "".join(f"{r},{truth[r]}\n" for r in batch[:2] + [last]))
    with pytest.warns(UserWarning, match=f"record '{last}' is labelled {truth[last]}, which replaces the "
                                         f"{1 - truth[last]} kept for it while this file was read, given by "
                                         "serve reviewer Ada"):
        session.label(folder, from_file=answers)
    assert session.kept_answers(folder)[last] == truth[last]
    with pytest.raises(ValueError, match=f"record '{last}' has a kept answer {truth[last]} \\(given by file "
                                         "a.csv sha256:"):
        session.keep(folder, {last: 1 - truth[last]}, "serve reviewer Bob", agreeing=True)


def test_kept_answers_wait_for_another_process_holding_them(records: Records, tmp_path: Path) -> None:
    """Mutual exclusion across processes (the page's server, a label command): a keep waits while
    another process holds pending-labels.csv for its read and rewrite."""
    import subprocess
    import sys
    import time

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path\n"
         "from rankcut.review import session\n"
         "with session._kept_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(1.0)",
         str(folder)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    began = time.monotonic()
    session.keep(folder, {records.ids[-1]: 1}, "serve reviewer Ada")
    waited = time.monotonic() - began
    assert holder.wait(timeout=30) == 0
    assert waited > 0.5 and session.kept_answers(folder) == {records.ids[-1]: 1}


def test_a_label_file_of_several_topics_is_refused_at_a_row_of_another_query(records: Records,
                                                                           tmp_path: Path) -> None:
    """A judgement file kept for every topic of a run (query_id, doc_id, label) gives the same
    document ids under other queries: a row of another query is not this review's label, and was
    recorded as one. Its own query's rows, and a row with the query left empty, are taken."""
    import dataclasses

    folder = tmp_path / "R"   # a run's documents: ranked records, called by the run's query
    session.start(dataclasses.replace(records, ranked=True), folder, target_recall=0.8, seed=4, policy=POLICY)
    qid = session._items(folder)[0]
    first = session.next_records(folder, 1)[0]["record_id"]
    (tmp_path / "all.csv").write_text(f"query_id,doc_id,label\n{qid},{first},0\nq-other,{first},1\n")
    with pytest.raises(ValueError, match=rf"all.csv, line 3: the row is of query 'q-other', this review's "
                                         rf"is '{qid}': its label of record '{first}' is a judgement for "
                                         rf"another topic; keep only the rows of query '{qid}' in the file"):
        session.label(folder, from_file=tmp_path / "all.csv")
    assert _steps(folder) == [] and session.kept_answers(folder) == {}
    (tmp_path / "mine.csv").write_text(f"qid,doc_id,label\n,{first},0\n")
    assert session.label(folder, from_file=tmp_path / "mine.csv").recorded == 1
    # records from a table: the review's query id is the file's name, which a topic column need not be
    table = tmp_path / "T"
    session.start(records, table, target_recall=0.8, seed=4, policy=POLICY)
    first = session.next_records(table, 1)[0]["record_id"]
    (tmp_path / "topic.csv").write_text(f"query_id,doc_id,label\nCD008803,{first},0\n")
    assert session.label(table, from_file=tmp_path / "topic.csv").recorded == 1


def test_qrels_given_as_a_label_file_name_the_simulation(records: Records, tmp_path: Path) -> None:
    """label --from QRELS said the header names no 'record_id' column, naming its first line."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    first = session.next_records(folder, 1)[0]["record_id"]
    (tmp_path / "q.qrels").write_text(f"other 0 D9 2\ntoy 0 {first} 1\n")   # its first line: no record
    with pytest.raises(ValueError, match=r"q\.qrels, line 1: it reads like TREC qrels \(query, 0, "
                                         r"document, grade\), not a label file \(record_id,label\): to play "
                                         r"qrels as the reviewer, label --simulate --qrels FILE"):
        session.label(folder, from_file=tmp_path / "q.qrels")
    assert _steps(folder) == []


def test_a_second_batch_file_names_the_open_one_and_skip_open_lists_the_records_after_it(
        records: Records, tmp_path: Path) -> None:
    """Two reviewers taking `next --batch 10 --out` in turn got the same ten records without a word
    (a stop-55 walk); the CLI holds nothing as the page does. The second file now names the first
    (double screening, if meant), and --skip-open hands out the records after it."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    runner = CliRunner()

    def next_(*args: str) -> tuple[int, str, str]:
        res = runner.invoke(app, ["review", "next", "--folder", str(folder), *args])
        return res.exit_code, res.stdout, res.stderr

    alice, bob, carol = (tmp_path / f"{n}.csv" for n in ("alice", "bob", "carol"))
    assert next_("--batch", "5", "--out", str(alice))[0] == 0
    first = [r["record_id"] for r in csv.DictReader(alice.open(encoding="utf-8"))]
    assert session.open_batches(folder) == [{"file": str(alice.resolve()), "records": first,
                                             "written_at": session.open_batches(folder)[0]["written_at"]}]
    code, out, err = next_("--batch", "5", "--out", str(bob))
    assert code == 0 and f"5 of these records are in {alice.resolve()} too (written by next --out at " in err
    assert "two reviewers would read them (double screening, if meant); next --skip-open lists" in err
    assert [r["record_id"] for r in csv.DictReader(bob.open(encoding="utf-8"))] == first   # as asked
    code, out, err = next_("--batch", "5", "--out", str(bob), "--skip-open")
    assert code == 0 and err == "", err
    second = [r["record_id"] for r in csv.DictReader(bob.open(encoding="utf-8"))]
    assert second == [r["record_id"] for r in session.next_records(folder, 10)][5:]   # the ones after
    # the same file again is not another reviewer's, and a listing without --out hands nothing out
    assert next_("--batch", "5", "--out", str(bob), "--skip-open")[2] == ""
    assert next_("--batch", "5")[2] == ""
    # Alice answers hers (all not relevant): her batch is closed, Bob's is open
    alice.write_text("record_id,label\n" + "".join(f"{rid},0\n" for rid in first))
    done = runner.invoke(app, ["review", "label", "--folder", str(folder), "--from", str(alice)])
    assert done.exit_code == 0, done.stderr
    assert [b["file"] for b in session.open_batches(folder)] == [str(bob.resolve())]
    code, _, err = next_("--batch", "5", "--out", str(carol), "--skip-open")
    assert code == 0 and err == ""
    assert not {r["record_id"] for r in csv.DictReader(carol.open(encoding="utf-8"))} & set(second)


def test_an_edited_list_of_batch_files_is_named(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    (folder / session.BATCHES_FILE).write_text('[{"file": "a.csv"}]')
    res = CliRunner().invoke(app, ["review", "next", "--folder", str(folder), "--batch", "3", "--out",
                                   str(tmp_path / "b.csv")])
    assert res.exit_code == 2 and res.stderr == (f"error: {folder / session.BATCHES_FILE} is not as next "
                                                 "--out wrote it: delete it (it only names the batch files "
                                                 "handed out, for next --skip-open; no label or certificate "
                                                 "reads it)\n")
    assert not (tmp_path / "b.csv").exists()
    with pytest.raises(ValueError, match="is not as next --out wrote it"):   # from Python too: no file
        session.write_batch(folder, tmp_path / "c.csv", session.next_records(folder, 3))
    assert not (tmp_path / "c.csv").exists()
