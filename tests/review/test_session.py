"""A review session (rankcut.review.session): an interleaved audit folder whose screener is the
CAL ranker — start, next, label, status, certify, report, resume, refusals, simulation."""

from __future__ import annotations

import contextvars
import csv
import dataclasses
import json
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from review_testdata import labels_of, toy_records

from rankcut.audit import workflow
from rankcut.audit.designs.interleaved import one_replay
from rankcut.audit.labels import LabelStore
from rankcut.audit.manifest import sha256_file
from rankcut.audit.report import report_figure, write_report
from rankcut.certify.policies import MarginalCostPolicy, ProjectedCostPolicy
from rankcut.certify.result import verify
from rankcut.review import session
from rankcut.review.cal import CALConfig
from rankcut.review.export import export
from rankcut.review.records import Records, load_records
from rankcut.review.simulate import simulate_review

POLICY = "projected-cost:batch=10,chunk=5"


def _csv(path: Path, records: Records, labels: bool = True) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["record_id", "title", "abstract"] + (["label_included"] if labels else []))
        for i, rid in enumerate(records.ids):
            assert records.labels is not None
            w.writerow([rid, records.titles[i], records.abstracts[i]]
                       + ([int(records.labels[i])] if labels else []))
    return path


@pytest.fixture
def records(tmp_path: Path) -> Records:
    return load_records(_csv(tmp_path / "records.csv", toy_records(80, 8, seed=2)))


def _steps(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "review.jsonl").read_text().splitlines()]


def test_start_next_label_status_certify_report(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    manifest = session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    assert manifest["design"] == "interleaved" and manifest["seed"] == 3
    assert manifest["screener"]["name"] == "cal"
    assert manifest["screener"]["config"]["cal"] == CALConfig(seed=3).to_json()
    assert manifest["inputs"]["texts"]["path"] == session.TEXTS_FILE   # frozen in the folder
    first = session.next_record(folder)
    assert first is not None and first["move"] == "screen" and first["why"]
    assert first["text"] == records.texts[records.ids.index(first["record_id"])]
    # the reviewer labels the record asked for in a CSV of record ids
    (tmp_path / "mine.csv").write_text(f"record_id,label\n{first['record_id']},no\n")
    result = session.label(folder, from_file=tmp_path / "mine.csv")
    assert result.recorded == 1 and _steps(folder)[0]["doc_id"] == first["record_id"]
    info = session.status(folder)
    assert info["read"] == 1 and info["found"] == 0 and info["recall_bound"] == 0.0
    assert info["next_record"]["record_id"] != first["record_id"]
    # known labels play the reviewer to the certificate
    session.label(folder, known=labels_of(records))
    info = session.status(folder)
    assert info["next_record"] is None and info["next"] == "certify"
    cert = workflow.certify(folder)
    assert cert.content["verdict"]["met"]
    assert info["found"] == cert.content["counts"]["relevant"] and info["recall_bound"] >= 0.8
    moves = {s["move"] for s in _steps(folder)}
    assert moves == {"screen", "audit"}
    files = write_report(folder, tmp_path / "report.md")
    assert files.plot is not None and "met" in files.report.read_text()
    # the relevant records found in a panel of their own: on a second y axis of the bound's, their
    # plateau read as recall where it met the target line (the walk of 2026-12-07)
    figure = report_figure(json.loads((tmp_path / "report.json").read_text()), manifest)
    bound, found = figure.axes
    assert bound.get_ylabel() == "certified lower bound on recall"
    assert found.get_ylabel() == "relevant records\nfound"
    assert found.get_xlabel() == "records read (screened or audited)"
    assert [t.get_text() for t in bound.get_legend().get_texts()] == ["certified lower bound on recall",
                                                                      "target recall 0.8"]
    text = files.report.read_text()
    assert text.startswith("# Review report ") and "| ranker | CAL (AutoTAR/BMI): logistic regression" in text
    frozen = session.load_review(folder)["frozen_at"]   # a review reads its labels as it goes
    assert f"the policy and the target) was frozen at {frozen}, before its first label. Each move" in text
    assert "labels were first opened" not in text
    assert "| prior knowledge | none |" in text and "burden N1" not in text
    assert "| collection | 80 records, in the order of the records file (the folder's frozen copy: " \
           "records.run) |" in text
    curve = json.loads(files.certificate.read_text())["curve"]
    assert curve["found"][-1] == info["found"] and len(curve["found"]) == len(curve["bound"])


def test_the_certificate_recomputes_from_the_folder(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    first = session.simulate(records, folder, target_recall=0.8, seed=5, policy=POLICY)
    content = json.loads((folder / "certificate.json").read_text())
    for entry in content["report"]["certificates"]:
        verify(entry["certificate"])
    again = workflow.certify(folder)
    assert again.content["report"] == first.content["report"]
    assert again.content["counts"] == first.content["counts"]


def test_the_certificate_of_a_review_counts_records_read_in_a_reviewer_s_words(records: Records,
                                                                             tmp_path: Path) -> None:
    """certificate.json says what the review read (no "draws" of the whole collection, no
    "unlabelled" 0 with records unread), and its verdict, statement, certify text and report speak
    of records, with one δ event said as one."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=12)   # stopped early: records left unread
    cert = workflow.certify(folder)
    info = session.status(folder)
    content = cert.content
    assert content["labels"] == {"collection": 80, "read": 12, "relevant": info["found"]}
    assert "draws" not in content["counts"] and "unlabelled" not in content["counts"]
    assert content["counts"]["collection"] == 80 and content["counts"]["steps"] == 12
    text = cert.render()
    assert "With confidence at least 0.95 (δ = 0.05):" in text
    assert "union bound" not in text and "simultaneous" not in text
    assert f"of {records.name}, 80 records (interleaved design" in text
    assert "NOT met yet after 12 of 80 records read" in content["verdict"]["text"]
    statement = content["report"]["certificates"][0]["certificate"]["statement"]
    assert "relevant records" in statement and "12 of 80 records read" in statement
    report = write_report(folder, tmp_path / "report.md").report.read_text()
    assert "Read: 12 of the collection's 80 records" in report and "(the ranker's picks)," in report
    for said in (text, statement, content["verdict"]["text"], *content["notes"], report):
        assert "document" not in said and "ranked list" not in said, said
    # the collection's size is recounted from the sample, never taken from the file
    path = folder / "certificate.json"
    edited = json.loads(path.read_text())
    edited["counts"]["collection"] = 79
    path.write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="counts give collection = 79, but the sample holds 80 rows"):
        write_report(folder, tmp_path / "again.md")


def test_bigram_and_balanced_options_are_frozen_and_replayed(records: Records, tmp_path: Path) -> None:
    config = CALConfig(ngrams=2, balanced=True)
    folder = tmp_path / "R"
    first = session.simulate(records, folder, target_recall=0.8, seed=5, policy=POLICY, config=config)
    frozen = json.loads((folder / "manifest.json").read_text())["screener"]["config"]["cal"]
    assert frozen["ngrams"] == 2 and frozen["balanced"] is True
    again = workflow.certify(folder)                  # the ranker rebuilt from the manifest
    assert again.content["counts"] == first.content["counts"]
    plain = session.simulate(records, tmp_path / "P", target_recall=0.8, seed=5, policy=POLICY)
    assert plain.content["counts"]["moves"] != first.content["counts"]["moves"] or \
        _steps(tmp_path / "P") != _steps(folder)     # the options change what is read


def test_a_killed_session_resumes_at_the_same_record(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
    truth = labels_of(records)
    asked: list[str] = []

    def answer(prompt: str) -> str:
        if len(asked) == 5:
            raise KeyboardInterrupt   # the session is killed while the fifth record is shown
        return "y" if truth[asked[-1]] else "n"

    def shown(line: str) -> None:
        if line.startswith("record "):
            asked.append(line.split()[1])

    with pytest.raises(KeyboardInterrupt):
        session.label(folder, interactive=True, input=answer, output=shown)
    assert len(_steps(folder)) == 4
    session._cal.cache_clear()   # as a new process: the ranker is rebuilt from the frozen folder
    assert session.next_record(folder)["record_id"] == asked[4]  # type: ignore[index]
    session.label(folder, known=truth, limit=1)
    assert _steps(folder)[4]["doc_id"] == asked[4]


def test_an_edited_frozen_input_is_refused(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
    texts = folder / session.TEXTS_FILE
    texts.write_text(texts.read_text().replace("title 1", "title one"))
    session._cal.cache_clear()
    with pytest.raises(ValueError, match="changed after the audit was frozen"):
        session.next_record(folder)
    with pytest.raises(ValueError, match="changed after the audit was frozen"):
        session.label(folder, known=labels_of(records))


def test_prior_knowledge_is_read_first_from_the_frozen_prior(records: Records, tmp_path: Path) -> None:
    relevant = [rid for rid, y in labels_of(records).items() if y][:2]
    known = records.with_prior({relevant[1]: 1, relevant[0]: 1, records.ids[0]: 0})
    folder = tmp_path / "R"
    manifest = session.start(known, folder, target_recall=0.8, seed=2, policy=POLICY)
    assert manifest["screener"]["config"]["prior"] == {relevant[0]: 1, relevant[1]: 1, records.ids[0]: 0}
    steps = _steps(folder)
    in_file_order = [rid for rid in records.ids if rid in {*relevant, records.ids[0]}]
    assert [s["doc_id"] for s in steps] == in_file_order and {s["move"] for s in steps} == {"screen"}
    assert session.status(folder)["found"] == 2
    with pytest.raises(ValueError, match="prior knowledge"):
        session.label(folder, known={**labels_of(records), relevant[0]: 0})
    (tmp_path / "l.csv").write_text(f"record_id,label\n{relevant[0]},no\n")
    with pytest.raises(ValueError, match=re.escape(
            f"{tmp_path / 'l.csv'}, line 2: record {relevant[0]!r} is labelled 0, but the prior knowledge "
            "frozen at start says 1 — nothing was recorded")):
        session.label(folder, from_file=tmp_path / "l.csv")
    # the report counts them among the screened, and says so (the reviewer's walk: "the ranker's
    # picks" counted the prior knowledge)
    session.label(folder, known=labels_of(records), limit=10)
    workflow.certify(folder)
    report = write_report(folder, tmp_path / "report.md").report.read_text()
    assert "screened (the ranker's picks; the 3 records of the prior knowledge first)" in report


def test_simulation_is_reproducible_and_matches_simulate_review(records: Records, tmp_path: Path) -> None:
    a = session.simulate(records, tmp_path / "A", target_recall=0.8, seed=7, policy=POLICY)
    b = session.simulate(records, tmp_path / "B", target_recall=0.8, seed=7, policy=POLICY)
    assert _steps(tmp_path / "A") == _steps(tmp_path / "B")
    assert a.content["counts"] == b.content["counts"]
    assert a.content["report"]["certificates"] == b.content["report"]["certificates"]
    # simulate_review draws its audit order from another stream: the reviews agree up to and
    # including the first audit move (the ranker and the policy see the same labels until then)
    sim = simulate_review(records, target=0.8, config=CALConfig(seed=7), seeds=[7],
                          policy=ProjectedCostPolicy(batch=10, chunk=5)).runs[0]
    moves = a.content["counts"]["moves"]
    k = moves.index("a")
    assert sim.moves[:k + 1] == moves[:k + 1]
    assert sim.labels[:k] == a.content["counts"]["labels"][:k]
    assert sim.certified and a.content["verdict"]["met"]


def test_the_tail_prior_is_frozen_and_matches_simulate_review(records: Records, tmp_path: Path) -> None:
    """``prior_basis="tail"`` reaches the frozen rule: the review is simulate_review's under the same
    basis up to its first audit move, and its certificate carries the basis."""
    a = session.simulate(records, tmp_path / "A", target_recall=0.8, seed=7, policy=POLICY,
                         prior_basis="tail")
    assert json.loads((tmp_path / "A" / "manifest.json").read_text())["prior_basis"] == "tail"
    cert = a.content["report"]["certificates"][0]["certificate"]
    assert cert["inputs"]["prior_basis"] == "tail"
    sim = simulate_review(records, target=0.8, config=CALConfig(seed=7), seeds=[7], prior_basis="tail",
                          policy=ProjectedCostPolicy(batch=10, chunk=5)).runs[0]
    moves = a.content["counts"]["moves"]
    k = moves.index("a")
    assert sim.moves[:k + 1] == moves[:k + 1]


def test_the_review_defaults_are_frozen_and_are_simulate_reviews(tmp_path: Path) -> None:
    """Without --policy and --prior-basis a review freezes the review's defaults (MarginalCostPolicy
    with a probe of 25, the tail basis), the ones simulate_review plays."""
    records = toy_records(300, 25, seed=2)      # more than a batch of 100: the audit has a turn
    a = session.simulate(records, tmp_path / "A", target_recall=0.8, seed=7)
    manifest = json.loads((tmp_path / "A" / "manifest.json").read_text())
    assert manifest["policy"] == {"name": "marginal-cost",
                                  "config": dataclasses.asdict(MarginalCostPolicy(probe=25))}
    assert manifest["prior_basis"] == "tail"
    sim = simulate_review(records, target=0.8, config=CALConfig(seed=7), seeds=[7]).runs[0]
    moves = a.content["counts"]["moves"]
    k = moves.index("a")
    assert sim.moves[:k + 1] == moves[:k + 1]
    assert sim.certified and a.content["verdict"]["met"]


def test_ris_records(tmp_path: Path) -> None:
    toy = toy_records(40, 5, seed=4)
    ris = tmp_path / "records.ris"
    ris.write_text("".join(f"TY  - JOUR\nID  - r{i}\nTI  - {t}\nAB  - {a}\nER  - \n\n"
                           for i, (t, a) in enumerate(zip(toy.titles, toy.abstracts, strict=True))))
    recs = load_records(ris)
    session.start(recs, tmp_path / "R", target_recall=0.8, seed=1)
    nxt = session.next_record(tmp_path / "R")
    assert nxt is not None and nxt["record_id"].startswith("r")


def test_bad_label_files_name_the_file_and_line(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"record_id,label\n{records.ids[0]},1\nnope,0\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 3: record 'nope' is not a record of this review"):
        session.label(folder, from_file=bad)
    bad.write_text(f"record_id,label\n{records.ids[1]}.0,1\n")   # a spreadsheet's number
    rid = records.ids[1]
    with pytest.raises(ValueError, match=rf"line 2: record '{rid}.0' is not a record of this review "
                                         rf"\(record '{rid}' is: a spreadsheet wrote the id as a number"):
        session.label(folder, from_file=bad)
    bad.write_text(f"record_id,label\n{records.ids[0]},maybe\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 2: the label of record '0' must be 0/1"):
        session.label(folder, from_file=bad)
    bad.write_text("ID_of_Record,Label\n1,1\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 1: the header names no 'record_id' column .*; it "
                                         r"names 'ID_of_Record', 'Label'"):   # as written, not lower-cased
        session.label(folder, from_file=bad)
    bad.write_text(f"{records.ids[3]},0\n{records.ids[4]},1\n")   # no header line
    with pytest.raises(ValueError, match=re.escape(
            f"bad.csv, line 1: it looks like a record's label, not a header (record {records.ids[3]!r} is "
            "one of this review's): add a first line naming the columns, record_id,label")):
        session.label(folder, from_file=bad)
    # a label that contradicts a recorded step names the reviewer's file, not a translation of it
    assert not (folder / "review.jsonl").exists()
    nxt = session.next_record(folder)["record_id"]  # type: ignore[index]
    (tmp_path / "ok.csv").write_text(f"record_id,label\n{nxt},0\n")
    session.label(folder, from_file=tmp_path / "ok.csv")
    other = next(r for r in records.ids if r != nxt)
    (tmp_path / "ok.csv").write_text(f"record_id,label\n{other},0\n{nxt},1\n")
    with pytest.raises(ValueError, match=re.escape(
            f"{tmp_path / 'ok.csv'}, line 3: record {nxt!r} is labelled 1, but the review recorded 0 for it: "
            "a recorded step is never changed")) as refused:
        session.label(folder, from_file=tmp_path / "ok.csv")
    assert (f"made from this one with the record relabelled: correct --folder {folder} --into NEW_FOLDER "
            f"--relabel {nxt}=1 — nothing was recorded") in str(refused.value)
    assert not (folder / "pending-labels.csv").exists()    # refused: nothing kept either


def test_start_refusals(records: Records, tmp_path: Path) -> None:
    spaced = Records("x", ("a b", "c"), ("t1", "t2"), ("", ""))
    with pytest.raises(ValueError, match="white space"):
        session.start(spaced, tmp_path / "S")
    assert not (tmp_path / "S").exists()
    with pytest.raises(ValueError, match="policy must be one of"):
        session.start(records, tmp_path / "P", policy="nope")
    assert not (tmp_path / "P").exists()   # nothing half-started
    session.start(records, tmp_path / "R", seed=1)
    with pytest.raises(FileExistsError, match="already holds a review"):
        session.start(records, tmp_path / "R", seed=1)
    (tmp_path / "U").mkdir()
    (tmp_path / "U" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is not empty"):
        session.start(records, tmp_path / "U", seed=1)
    assert (tmp_path / "U" / "notes.txt").read_text() == "mine"
    with pytest.raises(ValueError, match="one source of labels"):
        session.label(tmp_path / "R")
    assert np.isclose(session.status(tmp_path / "R")["target"], 0.95)


def test_a_folder_whose_screener_is_not_registered_is_refused_by_name(
        records: Records, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankcut.audit.designs import interleaved

    session.start(records, tmp_path / "R", seed=1, policy=POLICY)
    monkeypatch.delitem(interleaved.SCREENERS, "cal")
    with pytest.raises(ValueError, match="its screener 'cal' is not registered in this process"):
        workflow.status(tmp_path / "R")


def test_interactive_labelling_answers_a_prior_record_from_the_prior(records: Records,
                                                                    tmp_path: Path) -> None:
    # a policy that audits from the start: the audit order reaches records of the prior knowledge
    # before the ranker screens them, and the reviewer is never asked for one
    truth = labels_of(records)
    prior = {rid: truth[rid] for rid in records.ids[::2]}
    folder = tmp_path / "R"
    session.start(records.with_prior(prior), folder, target_recall=0.8, seed=1,
                  policy="screen-then-audit:depth=0")
    shown: list[str] = []

    def answer(prompt: str) -> str:
        assert shown[-1] not in prior
        return "q" if len(shown) > 6 else "y" if truth[shown[-1]] else "n"

    result = session.label(folder, interactive=True, input=answer,
                           output=lambda line: shown.append(line.split()[1]) if line.startswith("record ")
                           else None)
    steps = _steps(folder)
    assert result.recorded == 6 and any(s["doc_id"] in prior for s in steps)
    assert [s["doc_id"] for s in steps if s["doc_id"] not in prior] == shown[:6]
    assert all(s["label"] == truth[s["doc_id"]] for s in steps)


def test_interactive_labelling_never_asks_a_record_answered_in_a_file(records: Records,
                                                                     tmp_path: Path) -> None:
    """Answers kept from a batch file (records read ahead) are recorded when the review asks for
    their records, also between interactive answers: the reviewer is not asked again."""
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy="screen-then-audit:depth=0")
    ahead = [r["record_id"] for r in session.next_records(folder, 6)]   # the audit order: fixed
    session.keep(folder, {rid: truth[rid] for rid in ahead[1:5:2]}, "serve reviewer Bob")   # 2nd, 4th ahead
    shown: list[str] = []
    said: list[str] = []

    def answer(prompt: str) -> str:
        return "q" if len(shown) > 3 else "y" if truth[shown[-1]] else "n"

    def output(line: str) -> None:
        said.append(line)
        if line.startswith("record "):
            shown.append(line.split()[1])

    result = session.label(folder, interactive=True, input=answer, output=output)
    steps = [s["doc_id"] for s in _steps(folder)]
    assert steps == ahead[:5] and shown == [ahead[0], ahead[2], ahead[4], ahead[5]]   # the last: quit
    assert result.recorded == 3 and session.kept_answers(folder) == {}
    assert sum("answer given before (prior knowledge, or kept from a label file)" in x for x in said) == 2
    assert all(s["label"] == truth[s["doc_id"]] for s in _steps(folder))


def test_two_reviews_in_one_process_do_not_restart_each_others_ranker(records: Records,
                                                                      tmp_path: Path) -> None:
    # the labelling page keeps a review in memory while a certify replays another in the same
    # process: the CAL ranker of one must not restart the other's batch queue and draws
    from rankcut.audit.designs.interleaved import Review
    from rankcut.audit.folder import SAMPLE_ITEMS, FrozenAudit, read_rows
    from rankcut.audit.manifest import load_manifest

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records))
    recorded = [(s["move"], s["doc_id"]) for s in _steps(folder)]
    audit, rows = FrozenAudit(load_manifest(folder)), read_rows(folder / SAMPLE_ITEMS)
    truth = labels_of(records)
    first, second = Review(audit, rows), Review(audit, rows)
    for _ in range(len(recorded)):      # turn about: one step of each, as page and certify would
        for review in (first, second):
            if (step := review.next()) is not None:
                review.take(step, truth[step.item[1]])
    assert [(s.move, s.item[1]) for s in first.steps] == recorded
    assert [(s.move, s.item[1]) for s in second.steps] == recorded


def test_a_copied_folder_whose_texts_were_edited_warns_and_reads_the_frozen_ones(records: Records,
                                                                                 tmp_path: Path) -> None:
    session.start(records, tmp_path / "A", target_recall=0.8, seed=1, policy=POLICY)
    shutil.copytree(tmp_path / "A", tmp_path / "B")
    texts = tmp_path / "B" / "records.jsonl"
    texts.write_text(texts.read_text().replace("a", "b", 1))
    said = (f"{texts} changed after the audit was frozen, so it is not read: the frozen file at "
            f"{tmp_path / 'A' / 'records.jsonl'} is read instead")
    with pytest.warns(UserWarning, match=re.escape(said)):
        session.status(tmp_path / "B")
    shutil.rmtree(tmp_path / "A")   # without the original, the copy's edit is refused
    with pytest.raises(ValueError, match="changed after the audit was frozen"):
        session.status(tmp_path / "B")


def test_next_and_status_refuse_a_changed_ranking(records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
    run = folder / "records.run"
    run.write_text("".join(run.read_text().splitlines(keepends=True)[:-1]))   # a line lost
    for step in (session.status, session.next_record):
        with pytest.raises(ValueError, match="records.run .*changed after the audit was frozen"):
            step(folder)


@pytest.mark.parametrize("swap", [0, -2])
def test_every_step_refuses_a_changed_audit_order_by_its_name(records: Records, tmp_path: Path,
                                                               swap: int) -> None:
    """Two lines of sample.jsonl swapped: status still said "met" with no word, or (mid-review)
    blamed labels.sqlite, which was untouched; only certify and report named the audit order."""
    for met in (False, True):
        folder = tmp_path / f"R{met}{swap}"
        session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
        session.label(folder, known=labels_of(records), limit=None if met else 20)
        if met:
            workflow.certify(folder)
        assert (session.status(folder)["next_record"] is None) == met
        sample = folder / "sample.jsonl"
        lines = sample.read_text().splitlines(keepends=True)
        i = swap % len(lines)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        sample.write_text("".join(lines))
        for step in (session.status, session.next_record, lambda f: export(f, f.parent / "out.csv")):
            with pytest.raises(ValueError, match=f"{sample} changed after sampling"):
                step(folder)


def test_labelling_in_the_terminal_says_where_the_review_stands_before_each_record(records: Records,
                                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=1, policy=POLICY)
    lines: list[str] = []
    replies = iter(["y", "n", "n", "q"])
    session.label(folder, interactive=True, input=lambda _: next(replies), output=lines.append)
    steps = [i for i, line in enumerate(lines) if line.startswith("[step ")]
    assert len(steps) == 4 and not any(line.startswith("so far: ") for line in lines[:steps[0]])
    for read, at in enumerate(steps[1:], 1):
        assert lines[at - 1] == (f"so far: target recall ≥ 0.8: NOT met yet after {read} of 80 records read "
                                 f"({read} screened, 0 audited; 1 relevant found, at most {80 - read} "
                                 "unfound)")


def test_a_folder_without_a_review_is_named_with_the_way_out_that_works(tmp_path: Path) -> None:
    """start is offered only for a folder it would take (missing or empty); a working folder with
    other files in it is told to name the review's folder instead."""
    with pytest.raises(FileNotFoundError, match=r"review folder .*nope does not exist \(start one with "
                                                r"rankcut review start RECORDS --folder .*nope\)"):
        session.status(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"empty holds no review yet \(start one with"):
        session.status(tmp_path / "empty")
    (tmp_path / "records.csv").write_text("title,abstract\nA,x\n")
    said = r"holds no review \(manifest.json is missing\): give the folder that rankcut review start made"
    with pytest.raises(FileNotFoundError, match=said):
        session.status(tmp_path)


def test_answers_kept_are_recorded_with_the_source_they_were_given_by(records: Records,
                                                                      tmp_path: Path) -> None:
    """A record read ahead on the page (kept as ``serve reviewer Bob``) and then reached by a label
    file of another reviewer is recorded as Bob's answer; the file's own answers as the file's."""
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy="screen-then-audit:depth=0")
    ahead = [r["record_id"] for r in session.next_records(folder, 4)]   # the audit order: fixed
    session.keep(folder, {ahead[1]: truth[ahead[1]]}, "serve reviewer Bob")
    assert session.kept_with_sources(folder) == {ahead[1]: (truth[ahead[1]], "serve reviewer Bob")}
    mine = tmp_path / "mine.csv"
    mine.write_text("record_id,label\n" + "".join(f"{rid},{truth[rid]}\n" for rid in (ahead[0], ahead[2])))
    result = session.label(folder, from_file=mine)
    assert result.recorded == 3 and result.source.endswith("and pending-labels.csv")
    with LabelStore(folder / "labels.sqlite", readonly=True) as store:
        by = {e.doc_id: e.source for e in store.history()}
    file = f"file mine.csv sha256:{sha256_file(mine)[:12]}"
    assert [by[rid] for rid in ahead[:3]] == [file, "serve reviewer Bob", file]


def test_a_collection_smaller_than_the_first_batch_says_its_own_size(tmp_path: Path) -> None:
    """A 12-record review said "2 of the first 100 screening reads done": the first batch holds at
    most the records there are."""
    small = load_records(_csv(tmp_path / "small.csv", toy_records(12, 4, seed=5)))
    folder = tmp_path / "R"
    session.start(small, folder, target_recall=0.8, seed=1)   # the default policy: batches of 100
    said = []
    for _ in range(6):
        said.append(session.next_record(folder)["why"])
        session.label(folder, known=labels_of(small), limit=1)
    first = [w for w in said if w.startswith("screening comes first")]
    assert first and all("of the first 12 screening reads done" in w for w in first), said


def test_a_command_replays_the_review_once(records: Records, tmp_path: Path, audit_steps: list[int]) -> None:
    """Status, its certificate's check and the batch after it step the engine once (a replay costs
    seconds at 100,000 records); what they say is what each says alone."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    known = labels_of(records)
    session.label(folder, known=known, limit=55)
    workflow.certify(folder)
    session.label(folder, known=known, limit=6)   # the certificate is 6 steps behind
    alone = session.status(folder)
    assert alone["audited"] > 5 and alone["next_record"] is not None
    batch = session.status(folder, ahead=5)["next_records"]
    audit_steps.clear()
    info = session.status(folder, ahead=5)
    assert len(audit_steps) == alone["audited"] + sum(r["move"] == "audit" for r in batch)
    assert info["next_records"] == batch and {**info, "next_records": None} == {**alone, "next_records": None}
    with one_replay():   # a status after the batch's lookahead, and after labels, as each alone
        assert session.status(folder, ahead=5) == info
        assert session.status(folder) == alone
        (tmp_path / "a.csv").write_text("record_id,label\n" + "".join(
            f"{r['record_id']},{known[r['record_id']]}\n" for r in batch))
        session.label(folder, from_file=tmp_path / "a.csv")
        after = session.status(folder, ahead=3)
    assert after == session.status(folder, ahead=3) and after["read"] == alone["read"] + 5


def test_a_replay_goes_on_only_from_a_whole_review_of_its_own_folder_and_thread(
        records: Records, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within one_replay: a step cut short by an exception (Ctrl-C in label, then its status), a
    copied folder (same audit id) and another thread sharing the block each replay anew (the
    diff review of 2026-12-07)."""
    from rankcut.audit.designs.interleaved import replayed
    from rankcut.audit.folder import FrozenAudit
    from rankcut.certify.policies import ReviewState

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    known = labels_of(records)
    session.label(folder, known=known, limit=55)
    record = ReviewState.record

    def cut_short(self: ReviewState, move: str, doc: int, label: int) -> None:
        record(self, move, doc, label)   # the engine and the ranker's state moved ...
        raise KeyboardInterrupt          # ... and the step was never taken

    with one_replay():
        session.status(folder)
        monkeypatch.setattr(ReviewState, "record", cut_short)
        with pytest.raises(KeyboardInterrupt):
            session.label(folder, known=known, limit=3)   # its label is recorded, its step cut
        monkeypatch.setattr(ReviewState, "record", record)
        inside = session.status(folder, ahead=3)
        mine = replayed(FrozenAudit(session.load_review(folder)))
        copy = tmp_path / "C"
        shutil.copytree(folder, copy)   # the same audit and labels, in another folder
        assert replayed(FrozenAudit(session.load_review(copy))) is not mine
        mine = replayed(FrozenAudit(session.load_review(folder)))
        other: list[object] = []
        context = contextvars.copy_context()   # a thread that shares the block
        thread = threading.Thread(target=lambda: other.append(context.run(
            replayed, FrozenAudit(session.load_review(folder)))))
        thread.start()
        thread.join()
        assert other[0] is not mine and replayed(FrozenAudit(session.load_review(folder))) is not other[0]
    assert inside == session.status(folder, ahead=3) and inside["read"] == 56


def test_a_replay_under_other_ranker_libraries_says_so_not_that_the_store_was_edited(
        records: Records, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A review re-certified after a library upgrade whose fits differ was refused as an edited
    label store, with "start a new review" (a reviewer's walk): the versions are frozen at start,
    said in the report, and a replay that takes other steps under others names them."""
    from rankcut.review.cal import CALScreener, library_versions

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    assert session.load_review(folder)["screener"]["config"]["libraries"] == library_versions()
    session.label(folder, known=labels_of(records), limit=40)
    other = tmp_path / "V"
    shutil.copytree(folder, other)
    fit = CALScreener._fit_scores
    monkeypatch.setattr(CALScreener, "_fit_scores", lambda self, *a: -fit(self, *a))   # other fits
    with pytest.raises(ValueError, match=r"\(it was edited\)"):   # the same libraries: an edit, as before
        workflow.certify(other)
    monkeypatch.setattr(session, "library_versions", lambda: "numpy 9.0, scipy 9.0, scikit-learn 9.0")
    with pytest.raises(ValueError) as refused:
        workflow.certify(other)
    said = str(refused.value)
    assert "edited" not in said and "its labels are kept as they are" in said
    assert f"the ranker's libraries changed since the review started ({library_versions()}; now numpy 9.0, " \
           "scipy 9.0, scikit-learn 9.0)" in said
    assert "pip install 'numpy==" in said and "'scikit-learn==" in said
    monkeypatch.undo()
    session._cal.cache_clear()   # the process' rankers, fitted the other way above
    workflow.certify(folder)
    files = write_report(folder, tmp_path / "report.md")
    assert f"| ranker's libraries | {library_versions()} |" in files.report.read_text()


def test_a_review_whose_manifest_freezes_no_libraries_is_refused_by_name(
        records: Records, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder frozen without the ranker's libraries (as before 2026-12-07; no release wrote one)
    is refused by a sentence that says so at its first replay, not with a TypeError."""
    real = workflow.freeze

    def earlier(out: Path, **options: Any) -> Any:
        options["screener"]["config"].pop("libraries")
        return real(out, **options)

    monkeypatch.setattr(workflow, "freeze", earlier)
    with pytest.raises(ValueError, match="was started by an earlier rankcut, which did not freeze the "
                                         "versions of its ranker's libraries"):
        session.start(records, tmp_path / "R", target_recall=0.8, seed=3, policy=POLICY)


def test_a_store_edited_with_its_history_is_refused_naming_the_label_edited(records: Records,
                                                                           tmp_path: Path) -> None:
    """A label flipped in labels.sqlite and its history: the refusal named the first label the
    replay never asked for (record 1000 where 100 was flipped, a reviewer's walk); it now names
    the step of review.jsonl whose label the store no longer holds."""
    import sqlite3

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=30)
    step = _steps(folder)[9]
    with sqlite3.connect(folder / "labels.sqlite") as con:
        for table, column in (("labels", "label"), ("events", "new_label")):
            con.execute(f"UPDATE {table} SET {column} = 1 - {column} WHERE doc_id = ?", (step["doc_id"],))
    con.close()
    with pytest.raises(ValueError, match=rf"\(it was edited: document '{step['doc_id']}', step 10 in "
                                         rf"review.jsonl, read as {step['label']} there, is labelled "
                                         rf"{1 - step['label']} in the store\) — refused"):
        session.status(folder)


def test_the_report_counts_the_answers_kept_as_records_people_read(records: Records, tmp_path: Path) -> None:
    """The report's "read" counts the steps recorded; answers kept (read ahead, or in a batch file)
    were read by people too, and a PRISMA count of records screened taken from it was short of
    them (a reviewer's walk): the report says how many."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=3, policy=POLICY)
    truth = labels_of(records)
    session.label(folder, known=truth, limit=10)
    ahead = session.status(folder, ahead=4)["next_records"][1:]   # three records past the one asked
    (tmp_path / "ahead.csv").write_text("record_id,label\n" + "".join(
        f"{r['record_id']},0\n" for r in ahead))
    with pytest.warns(UserWarning, match="kept for later"):
        session.label(folder, from_file=tmp_path / "ahead.csv")
    assert session.report_notes(folder, [])[-1] == (
        "Note: 3 more records answered not relevant are kept, not recorded (read ahead, or in a batch "
        "file, before the review asked for them): a count of the records people screened includes them, "
        "the records read above do not.")
    workflow.certify(folder)
    files = write_report(folder, tmp_path / "report.md", session.report_notes(folder, []))
    assert "3 more records answered not relevant are kept" in files.report.read_text()
