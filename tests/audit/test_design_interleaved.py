"""The interleaved design of the audit workflow (issue 16): one topic's collection, a frozen audit
order, each step chosen by the frozen policy from the labels recorded so far — checked against the
engine (rankcut.certify.interleaved, simulate.play) run by hand on the same labels, and every
refusal that keeps the guarantee."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from audit_testdata import Data, _frozen, _rows, _steps, _truth
from typer.testing import CliRunner

from rankcut.audit import labels as labels_mod
from rankcut.audit import workflow as wf
from rankcut.audit.folder import load_audit
from rankcut.audit.labels import LabelStore
from rankcut.audit.oracle import place_unretrieved
from rankcut.audit.report import write_report
from rankcut.certify.interleaved import InterleavedRule, interleaved_recall_certificate
from rankcut.certify.policies import ProjectedCostPolicy, ScreenThenAudit
from rankcut.certify.result import Certificate, verify
from rankcut.certify.sequential import SequentialAudit, default_prior_mean, sequential_recall_certificate
from rankcut.certify.simulate import play
from rankcut.cli.audit import app
from rankcut.data.trec import read_qrels


@pytest.fixture
def topic(tmp_path: Path) -> Data:
    """One query's ranking of 240 documents, relevant mostly near the top."""
    return Data(tmp_path, queries=1, depth=240, seed=3)


def test_full_review_is_the_engine_played_on_the_same_order(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    rows = _rows(audit)
    assert [(r["query_id"], r["doc_id"]) for r in rows] == [("q0", d) for d in topic.lists["q0"]]
    assert sorted(r["audit"] for r in rows) == list(range(1, len(rows) + 1))   # a permutation
    wf.label(audit, qrels=topic.qrels)
    result = wf.certify(audit)
    y, order = _truth(topic, audit)
    played = play(y, order, ProjectedCostPolicy(), InterleavedRule(0.8, 0.05))
    steps = _steps(audit)
    assert "".join(s["move"][0] for s in steps) == played.moves
    assert "".join(str(s["label"]) for s in steps) == played.labels
    assert played.certified and result.content["verdict"]["met"]
    assert all(s["why"] for s in steps) and {s["move"] for s in steps} == {"screen", "audit"}
    assert all((s["audit_position"] is None) == (s["move"] == "screen") for s in steps)
    # the certificate is recomputed from the folder alone: review.jsonl's moves and labels
    cert = Certificate.from_dict(result.content["report"]["certificates"][0]["certificate"])
    again = interleaved_recall_certificate(len(rows), "".join(s["move"][0] for s in steps),
                                           "".join(str(s["label"]) for s in steps), 0.8, 0.05, 0.5)
    assert cert.value == again.value and cert.details == again.details
    verify(cert)
    # the review stops asking once certified; status says so
    assert wf.label(audit, qrels=topic.qrels).recorded == 0
    info = wf.status(audit)
    assert info["next"] is None and info["next_item"] is None
    assert "In plain words" in " ".join(result.content["notes"])
    # the curve: the bound after each step read, ending at the certificate, never falling
    curve = result.content["curve"]
    assert curve["labels"][-1] == len(steps) and curve["bound"][-1] == pytest.approx(cert.value)
    assert np.all(np.diff(curve["bound"]) >= 0)
    files = write_report(audit, tmp_path / "report.md")
    text = files.report.read_text()
    # a review's words: what was frozen is the collection, the policy and the screener, no pools
    assert text.startswith(f"# Review report {result.content['audit_id'][:12]}\n")
    assert f"| collection | ../run.txt: {len(rows)} documents |" in text   # the path as the manifest has it
    assert "| policy | projected-cost (batch=50, chunk=10, overhead=0.5, window=500) |" in text
    assert "| screener | frontier: the top unread document of the ranking |" in text
    frozen = json.loads((audit / "manifest.json").read_text())["frozen_at"]   # its labels are read as it goes
    assert f"the policy and the target) was frozen at {frozen}, before its first label. Each move was " \
        "chosen from the labels recorded before it" in text and "labels were first opened" not in text
    assert not any(w in text for w in ("burden N1", "excluded pool N0", "queries = 1", "sampling"))
    # one δ event: no union bound to speak of, and no corpus that was not given
    assert "Confidence at least 0.95 (δ = 0.05)." in text and "union bound" not in text
    assert "every document the review could read: the ranked list)" in text and "corpus" not in text


def test_the_tail_prior_is_frozen_and_the_certificate_replays_it(topic: Data, tmp_path: Path) -> None:
    """``prior_basis="tail"`` is frozen in the manifest, the review is the engine played under that
    rule, the certificate recomputes from the folder with it, and the report names it."""
    audit = _frozen(tmp_path, topic, prior_basis="tail")
    manifest = json.loads((audit / "manifest.json").read_text())
    assert (manifest["prior_basis"], manifest["prior_scale"]) == ("tail", 1.0)
    wf.label(audit, qrels=topic.qrels)
    result = wf.certify(audit)
    y, order = _truth(topic, audit)
    rule = InterleavedRule(0.8, 0.05, prior_basis="tail")
    played = play(y, order, ProjectedCostPolicy(), rule)
    steps = _steps(audit)
    moves, labels = "".join(s["move"][0] for s in steps), "".join(str(s["label"]) for s in steps)
    assert (moves, labels) == (played.moves, played.labels)
    cert = Certificate.from_dict(result.content["report"]["certificates"][0]["certificate"])
    assert cert.inputs["prior_basis"] == "tail"
    again = interleaved_recall_certificate(len(y), moves, labels, 0.8, 0.05, 1.0, prior_basis="tail")
    assert cert.value == again.value and cert.details == again.details
    first = moves.index("a")
    assert cert.details["prior_mean"] == rule.prior_mean_at(labels[:first].count("1"),
                                                            [int(c) for c in labels[:first]], len(y))
    # the other basis is another review: it is played, and certifies, differently
    assert play(y, order, ProjectedCostPolicy(), InterleavedRule(0.8, 0.05)).labels != played.labels or \
        interleaved_recall_certificate(len(y), moves, labels).details != cert.details
    text = write_report(audit, tmp_path / "report.md").report.read_text()
    assert ("| prior | 1 × the relevant count the screened tail projects (fixed at the first audit "
            "step; it tunes how soon the bound tightens, any prior keeps the guarantee) |") in text


def test_the_prior_basis_elsewhere_and_on_the_command_line(tmp_path: Path) -> None:
    data = Data(tmp_path, queries=1, depth=20)
    with pytest.raises(ValueError, match="prior_basis is for the interleaved design: the sequential"):
        wf.freeze(tmp_path / "A", run=data.run, cut=data.cut, design="sequential", target_recall=0.8,
                  prior_basis="tail")
    with pytest.raises(ValueError, match="prior_basis is for the interleaved design, not"):
        wf.freeze(tmp_path / "B", run=data.run, cut=data.cut, design="two-pool", target_recall=0.8,
                  prior_basis="tail")
    out = CliRunner().invoke(app, ["freeze", "--run", str(data.run), "--design", "interleaved",
                                   "--target-recall", "0.8", "--out", str(tmp_path / "C"),
                                   "--prior-basis", "tial"])
    assert out.exit_code != 0 and "--prior-basis is one of misses, tail, got 'tial'" in out.output
    out = CliRunner().invoke(app, ["freeze", "--run", str(data.run), "--design", "interleaved",
                                   "--target-recall", "0.8", "--out", str(tmp_path / "D"),
                                   "--prior-basis", "tail", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads((tmp_path / "D" / "manifest.json").read_text())["prior_basis"] == "tail"


def test_report_refuses_an_edited_record_of_moves(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels)
    wf.certify(audit)
    path = audit / "certificate.json"
    content = json.loads(path.read_text())
    moves = content["counts"]["moves"]
    content["counts"]["moves"] = moves[:-1] + ("a" if moves[-1] == "s" else "s")
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match="certificate"):
        write_report(audit, tmp_path / "report.md")


def test_an_interrupted_session_resumes_at_the_same_item(topic: Data, tmp_path: Path) -> None:
    whole = _frozen(tmp_path, topic, "whole")
    wf.label(whole, qrels=topic.qrels, limit=80)
    steps = _steps(whole)
    parts = _frozen(tmp_path, topic, "parts")
    truth = {(s["query_id"], s["doc_id"]): s["label"] for s in steps}
    asked: list[str] = []

    def reviewer(prompt: str) -> str:   # answers 23 steps, then the session is killed
        if len(asked) == 23:
            raise KeyboardInterrupt
        asked.append(prompt)
        return "y" if truth[_asked_item(parts)] else "n"

    with pytest.raises(KeyboardInterrupt):
        wf.label(parts, interactive=True, input=reviewer, output=lambda _: None)
    info = wf.status(parts)
    assert info["review_steps"] == 23
    assert info["next_item"] == {**steps[23], "label": None}
    wf.label(parts, qrels=topic.qrels, limit=57)
    assert _steps(parts) == steps


def _asked_item(audit: Path) -> tuple[str, str]:
    return wf.status(audit)["next_item"]["query_id"], wf.status(audit)["next_item"]["doc_id"]


def test_labels_from_the_to_label_file_one_step_at_a_time(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    header, line = (audit / "to_label.csv").read_text().splitlines()
    assert header == "query_id,doc_id,label,part,position,why"
    assert line.startswith("q0,d0-0,,screen,rank 1 of the ranking,")
    for _ in range(3):
        q, d = (audit / "to_label.csv").read_text().splitlines()[1].split(",")[:2]
        filled = tmp_path / "filled.csv"
        filled.write_text(f"query_id,doc_id,label\n{q},{d},{int((q, d) in topic.relevant)}\n")
        assert wf.label(audit, from_file=filled).recorded == 1
    assert [s["doc_id"] for s in _steps(audit)] == ["d0-0", "d0-1", "d0-2"]
    # labels of documents not asked for yet are left for later, not recorded
    ahead = tmp_path / "ahead.csv"
    ahead.write_text("query_id,doc_id,label\nq0,d0-200,0\n")
    waited = wf.label(audit, from_file=ahead)
    assert (waited.recorded, waited.waiting) == (0, 1)
    assert ("1 label of the file is for a document the review has not asked for yet: not recorded; give "
            "the file again once it asks for them") in waited.render()   # it said only "recorded 0 labels"
    assert wf.status(audit)["review_steps"] == 3
    q, d = _asked_item(audit)
    ahead.write_text(f"query_id,doc_id,label\nq0,d0-200,0\n{q},{d},{int((q, d) in topic.relevant)}\n")
    assert wf.label(audit, from_file=ahead).recorded == 1


def test_screen_then_audit_is_the_sequential_certificate(topic: Data, tmp_path: Path) -> None:
    k = 40
    audit = _frozen(tmp_path, topic, policy=f"screen-then-audit:depth={k}")
    wf.label(audit, qrels=topic.qrels)
    result = wf.certify(audit)
    steps = _steps(audit)
    assert [s["move"] for s in steps[:k]] == ["screen"] * k
    assert [s["rank"] for s in steps[:k]] == list(range(1, k + 1))
    assert {s["move"] for s in steps[k:]} == {"audit"}
    found = sum(s["label"] for s in steps[:k])
    y = np.array([s["label"] for s in steps[k:]], dtype=np.int64)
    n0, t = len(topic.lists["q0"]) - k, len(y)
    prior = default_prior_mean(found, 0.8, 0.5)
    _, reached = SequentialAudit(pool=n0, found=found, target=0.8, delta=0.05,
                                 prior_mean=prior).running_upper(y)
    seq = sequential_recall_certificate(found=found, pool=n0, labelled=t, hits=int(y.sum()), target=0.8,
                                        delta=0.05, prior_mean=prior, best_prefix=int(reached[t]),
                                        best_prefix_hits=int(y[:reached[t]].sum()))
    cert = Certificate.from_dict(result.content["report"]["certificates"][0]["certificate"])
    assert cert.value == pytest.approx(seq.value, abs=1e-12)
    assert cert.details["certified"] == seq.details["certified"]
    assert cert.details["relevant_upper"] == found + seq.details["missed_upper"]
    y_all, order = _truth(topic, audit)
    assert play(y_all, order, ScreenThenAudit(k), InterleavedRule()).moves == "".join(
        s["move"][0] for s in steps)


def test_a_changed_frozen_input_is_refused(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=10)
    with open(topic.run, "a") as f:
        f.write("q0 Q0 extra 241 0.1 t\n")
    with pytest.raises(ValueError, match="run"):
        wf.label(audit, qrels=topic.qrels, limit=10)
    with pytest.raises(ValueError, match="run"):
        wf.certify(audit)


def test_a_store_label_the_review_never_asked_for_is_refused(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=10)
    con = sqlite3.connect(audit / "labels.sqlite")
    columns = [r[1] for r in con.execute("PRAGMA table_info(labels)")]
    row = con.execute("SELECT * FROM labels LIMIT 1").fetchone()
    edited = dict(zip(columns, row, strict=True)) | {"doc_id": "d0-230"}
    con.execute(f"INSERT INTO labels ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                list(edited.values()))
    # its history too, as a store of another review would hold it
    con.execute("INSERT INTO events (query_id, doc_id, old_label, new_label, source, recorded_at) "
                "VALUES (?, ?, NULL, ?, ?, ?)", [edited[k] for k in ("query_id", "doc_id", "label", "source",
                                                                      "recorded_at")])
    con.commit()
    con.close()
    with pytest.raises(ValueError, match="never asked for"):
        wf.certify(audit)


@pytest.mark.parametrize("edit", ["UPDATE labels SET label = 1 - label WHERE doc_id = ?",
                                  "DELETE FROM labels WHERE doc_id = ?"])
def test_a_store_row_edited_by_hand_is_refused_at_every_step(topic: Data, tmp_path: Path, edit: str) -> None:
    # a label changed or removed outside rankcut: the replay would silently be another review
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=10)
    con = sqlite3.connect(audit / "labels.sqlite")
    con.execute(edit, (_steps(audit)[-1]["doc_id"],))   # the last step: the replay alone would not notice
    con.commit()
    con.close()
    for step in (wf.status, wf.certify, lambda a: wf.label(a, qrels=topic.qrels, limit=1)):
        with pytest.raises(ValueError, match="edited outside rankcut"):
            step(audit)
    assert len(_steps(audit)) == 10


def test_recorded_steps_are_never_changed(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=5)
    first = _steps(audit)[0]
    wrong = tmp_path / "wrong.csv"
    wrong.write_text(f"query_id,doc_id,label\nq0,{first['doc_id']},{1 - first['label']}\n")
    with pytest.raises(ValueError, match="never changed"):
        wf.label(audit, from_file=wrong)
    with pytest.raises(wf.AuditStepError, match="never changed"):
        wf.label(audit, qrels=topic.qrels, overwrite=True)
    assert len(_steps(audit)) == 5


def test_labels_edited_with_their_history_after_certify_are_warned_of_by_status(topic: Data,
                                                                                tmp_path: Path) -> None:
    """A label and its history row edited together: the replay is consistent, so status said the
    review of the edited labels ("certified now") while certify refused."""
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=20)
    wf.certify(audit)
    assert "labels_changed" not in wf.status(audit)
    first = _steps(audit)[0]
    with sqlite3.connect(audit / "labels.sqlite") as con:
        for table, column in (("labels", "label"), ("events", "new_label")):
            con.execute(f"UPDATE {table} SET {column} = 1 - {column} WHERE doc_id = ?", (first["doc_id"],))
    con.close()
    said = "certifying is refused: the labels opened for certification"
    with pytest.raises(ValueError, match=said):
        wf.certify(audit)
    assert wf.status(audit)["labels_changed"].startswith(said)
    result = CliRunner().invoke(app, ["status", "--audit", str(audit)])
    assert result.exit_code == 0 and f"  warning: {said}" in result.stdout


def test_status_reads_an_empty_label_store_as_no_label(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    (audit / "labels.sqlite").write_bytes(b"")   # a label call stopped before it wrote anything
    info = wf.status(audit)
    assert info["review_steps"] == 0 and "labels_changed" not in info


def test_certify_midway_then_label_on(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=20)
    early = wf.certify(audit)
    assert not early.content["verdict"]["met"] and early.content["counts"]["steps"] == 20
    assert wf.status(audit)["next"] == "label"
    wf.label(audit, qrels=topic.qrels)   # anytime-valid: new steps after an opening are taken
    info = wf.status(audit)
    assert info["next"] == "certify"
    # the old certificate is said to be of step 20, not of the review now
    since = info["review_steps"] - 20
    assert info["verdict"].startswith('out of date: the last certify, at step 20, said "target recall')
    assert info["verdict"].endswith(f'"; {since} steps were read since, which only certify counts: '
                                    "run certify again")
    with pytest.raises(wf.AuditStepError, match=f"certificate is out of date \\({since} steps read since"):
        write_report(audit, tmp_path / "r.md")   # it would say "NOT met" of a review read on since
    assert wf.certify(audit).content["verdict"]["met"]
    assert "met" in write_report(audit, tmp_path / "r.md").report.read_text()
    read = {(s["query_id"], s["doc_id"]) for s in _steps(audit)}
    q, d = next((q, d) for q, docs in topic.lists.items() for d in docs if (q, d) not in read)
    late = tmp_path / "late.csv"
    late.write_text(f"query_id,doc_id,label\n{q},{d},0\n")
    said = wf.label(audit, from_file=late).render()   # met: never asked, so never "give it again"
    assert "1 label of the file is for a document the review has not asked for yet: not recorded; the " \
        "review asks for no further document" in said, said


@pytest.mark.parametrize(("kw", "match"), [
    ({"cut": "CUT"}, "cut is not for the interleaved design"),
    ({"policy": "bogus"}, "policy must be one of"),
    ({"policy": "screen-then-audit"}, "needs depth"),
    ({"policy": "precision:ratio=x"}, "ratio must be a number"),
    ({"policy": "projected-cost:batch=0"}, "batch"),
    ({"policy": "precision:batch=0"}, "batch"),
    ({"sampling": "with-replacement"}, "with-replacement is not for it"),
    ({"allow_incomplete": True}, "allow_incomplete"),
    ({"target_recall": None}, "needs its recall target"),
    ({"prior_basis": "flat"}, "prior_basis is one of misses, tail"),
    ({"prior_scale": 0.0}, "prior_scale"),
])
def test_bad_freeze_options_are_refused(topic: Data, tmp_path: Path, kw: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"run": topic.run, "design": "interleaved", "target_recall": 0.8} | kw
    if args.get("cut") == "CUT":
        args["cut"] = topic.write_cut("cut.run", 10)
    with pytest.raises(ValueError, match=match):
        wf.freeze(tmp_path / "A", **args)
    assert not (tmp_path / "A" / "manifest.json").exists()


def test_several_queries_and_a_policy_elsewhere_are_refused(tmp_path: Path) -> None:
    many = Data(tmp_path, queries=3, depth=20)
    with pytest.raises(ValueError, match="one topic's ranking.*3 queries"):
        wf.freeze(tmp_path / "A", run=many.run, design="interleaved", target_recall=0.8)
    with pytest.raises(ValueError, match="policy is for the interleaved design"):
        wf.freeze(tmp_path / "B", run=many.run, cut=many.cut, design="sequential", target_recall=0.8,
                  policy="precision")


def test_a_label_outside_the_collection_is_refused(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,doc_id,label\nq0,d0-0,1\nq0,nowhere,1\n")
    with pytest.raises(ValueError, match="'nowhere' is not in the collection"):
        wf.label(audit, from_file=bad)
    assert not (audit / "labels.sqlite").exists()


def test_a_corpus_adds_the_unretrieved_documents_after_the_ranking(tmp_path: Path) -> None:
    topic = Data(tmp_path, queries=1, depth=30)
    audit = _frozen(tmp_path, topic, corpus_size=50)
    rows = _rows(audit)
    assert len(rows) == 50 and [r["doc_id"] for r in rows[30:]] == [f"#{u}" for u in range(20)]


def test_qrels_relevant_outside_the_run_of_a_size_only_corpus_are_placed(tmp_path: Path) -> None:
    """The unretrieved documents of ``--corpus-size`` are ``#u`` placeholders that no qrels judge:
    the oracle labelled each one the audit drew not relevant, though the qrels grade relevant
    documents outside the run (a falsely tight simulated certificate). They are placed at random
    placeholders now, the same ones at every label call (seeded by the query id)."""
    topic = Data(tmp_path, queries=1, depth=30)
    with open(topic.qrels, "a") as f:
        f.write("q0 0 elsewhere-1 1\nq0 0 elsewhere-2 2\n")
    audit = _frozen(tmp_path, topic, corpus_size=50)
    first = wf.label(audit, qrels=topic.qrels, limit=3)
    assert first.placed == 2 and "2 relevant outside the run placed at random #u" in first.source
    res = wf.label(audit, qrels=topic.qrels)   # the rest of the review, to its end
    assert res.placed == 2
    judged, placed = place_unretrieved(load_audit(audit).base, read_qrels(topic.qrels), 1)
    spots = [d for d in judged["q0"] if d.startswith("#")]
    assert placed == {"q0": 2} and len(spots) == 2
    with LabelStore(audit / "labels.sqlite") as store:
        got = store.get([("q0", d) for d in spots])
    assert got and all(y == 1 for y in got.values())   # each placed document the review read: relevant
    assert place_unretrieved(load_audit(audit).base, read_qrels(topic.qrels), 2)[1] == {"q0": 1}


def test_cli_status_says_the_next_move_and_why(topic: Data, tmp_path: Path) -> None:
    runner = CliRunner()
    audit = tmp_path / "A"
    out = runner.invoke(app, ["freeze", "--run", str(topic.run), "--design", "interleaved",
                              "--target-recall", "0.8", "--seed", "7", "--out", str(audit),
                              "--policy", "screen-then-audit:depth=5"])
    assert out.exit_code == 0, out.output
    assert "policy screen-then-audit (depth=5)" in out.output
    for step in ("plan", "sample"):
        assert runner.invoke(app, [step, "--audit", str(audit)]).exit_code == 0
    out = runner.invoke(app, ["label", "--audit", str(audit), "--oracle", "qrels", "--qrels",
                              str(topic.qrels), "--next", "5"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["status", "--audit", str(audit)])
    assert "5 of 240 documents read" in out.output
    assert "next: audit query q0" in out.output and "only audit draws from now on" in out.output
    assert ("guarantee: the chance that this review ever says 'met' while its recall is below 0.8 is at "
            "most 0.05") in out.output
    out = runner.invoke(app, ["freeze", "--run", str(topic.run), "--design", "interleaved",
                              "--target-recall", "0.8", "--out", str(tmp_path / "B"), "--policy", "x"])
    assert out.exit_code == 2 and "error: --policy must be one of" in out.output


def test_the_screener_is_frozen_by_name_and_plugs_in_there(topic: Data, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from rankcut.audit.designs import interleaved

    audit = _frozen(tmp_path, topic, policy="screen-then-audit:depth=3")
    manifest = json.loads((audit / "manifest.json").read_text())
    assert manifest["screener"] == {"name": "frontier", "config": {}}
    assert manifest["policy"] == {"name": "screen-then-audit", "config": {"depth": 3}}
    # a screener that reads the ranking from the bottom, registered under the frozen name
    monkeypatch.setitem(interleaved.SCREENERS, "frontier",
                        lambda audit, items, cached: lambda state: int(
                            np.flatnonzero(state.rank_labels < 0)[-1]))
    wf.label(audit, qrels=topic.qrels, limit=3)
    assert [s["rank"] for s in _steps(audit)] == [240, 239, 238]


def test_an_edited_audit_order_is_refused(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels, limit=5)
    lines = (audit / "sample.jsonl").read_text().splitlines()
    a, b = json.loads(lines[100]), json.loads(lines[200])
    a["audit"], b["audit"] = b["audit"], a["audit"]
    lines[100], lines[200] = json.dumps(a), json.dumps(b)
    (audit / "sample.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="changed after sampling"):
        wf.label(audit, qrels=topic.qrels, limit=5)
    with pytest.raises(ValueError, match="changed after sampling"):
        wf.certify(audit)


def test_interactive_labelling_asks_step_by_step_until_quit(topic: Data, tmp_path: Path) -> None:
    audit = _frozen(tmp_path, topic)
    answers = iter(["maybe", "n", "1", "q"])   # 1/0 as a label file says them
    shown: list[str] = []
    result = wf.label(audit, interactive=True, input=lambda _: next(answers), output=shown.append)
    assert result.recorded == 2 and [s["label"] for s in _steps(audit)] == [0, 1]
    assert any(line.startswith("[step 1: screen, rank 1 of the ranking]") for line in shown)
    assert any("please answer y (or 1), n (or 0) or q (not 'maybe')" in line for line in shown)
    # an unfilled list to label records nothing and leaves the next item where it was
    assert wf.label(audit, from_file=audit / "to_label.csv").recorded == 0
    assert wf.status(audit)["next_item"]["rank"] == 3


def test_rankcut_audit_read_on_asks_for_the_ranking_s_next_documents(topic: Data, tmp_path: Path) -> None:
    """Once met, `rankcut audit status` offers read-on; after it the review asks for the frontier's
    next documents, and certify says when the target was first met."""
    audit = _frozen(tmp_path, topic)
    runner = CliRunner()
    early = runner.invoke(app, ["read-on", "--audit", str(audit)])
    assert early.exit_code == 2 and "nothing is read yet" in early.stderr
    wf.label(audit, qrels=topic.qrels, limit=3)
    with pytest.raises(ValueError, match=r"the target is not met yet \(3 documents read\)"):
        wf.read_on(audit)
    wf.label(audit, qrels=topic.qrels)
    met = len(_steps(audit))
    status = runner.invoke(app, ["status", "--audit", str(audit)]).stdout
    assert f"to read on (the screener's next picks, each counted; the target stays met): rankcut audit " \
           f"read-on --audit {audit}" in status
    assert (audit / "to_label.csv").read_text().count("\n") == 1   # met: nothing to label
    out = runner.invoke(app, ["read-on", "--audit", str(audit)])
    assert out.exit_code == 0 and out.stdout.startswith(f"reading on after {met} documents read: ")
    asked = wf.status(audit)["next_item"]
    assert f"next: screen query q0, document {asked['doc_id']}" in out.stdout
    assert f"q0,{asked['doc_id']}," in (audit / "to_label.csv").read_text()   # the list to label names it
    assert f"rankcut audit label --audit {audit} --from {audit / 'to_label.csv'}" in out.stdout
    assert "rankcut audit read-on" not in runner.invoke(app, ["status", "--audit", str(audit)]).stdout
    assert wf.label(audit, qrels=topic.qrels, limit=2).recorded == 2
    steps = _steps(audit)
    read = {s["doc_id"] for s in steps[:met]}
    frontier = [d for d in topic.lists["q0"] if d not in read][:2]   # the frontier screener's next two
    assert [(s["move"], s["doc_id"]) for s in steps[met:]] == [("screen", d) for d in frontier]
    verdict = wf.certify(audit).content["verdict"]
    assert verdict["met"] and f"met at step {met}, read on to {met + 2} of 240 documents" in verdict["text"]
    again = runner.invoke(app, ["read-on", "--audit", str(audit), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["began_now"] is False
    assert json.loads(again.stdout)["read_on_after"] == met


def test_read_on_refuses_a_changed_input_a_missing_sample_and_a_read_only_folder(
        topic: Data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsampled = tmp_path / "U"
    wf.freeze(unsampled, run=topic.run, design="interleaved", target_recall=0.8, seed=7)
    with pytest.raises(wf.AuditStepError, match="no sample yet .*: run sample first"):
        wf.read_on(unsampled)
    audit = _frozen(tmp_path, topic)
    wf.label(audit, qrels=topic.qrels)
    monkeypatch.setattr(labels_mod, "writable", lambda path: False)
    with pytest.raises(wf.AuditStepError, match=r"the review folder .* is read-only: reading on records the "
                                                 "choice in .*labels.sqlite — nothing was changed"):
        wf.read_on(audit)
    monkeypatch.undo()
    with open(topic.run, "a") as f:
        f.write("q0 Q0 extra 999 -1.0 x\n")
    with pytest.raises(ValueError, match="changed"):
        wf.read_on(audit)


def test_read_on_is_refused_for_a_fixed_sample_design(tmp_path: Path) -> None:
    data = Data(tmp_path, queries=1, depth=60, seed=1)
    audit = tmp_path / "P"
    wf.freeze(audit, run=data.run, design="prefixes", depths=[5, 20], max_missed=25, seed=2)
    out = CliRunner().invoke(app, ["read-on", "--audit", str(audit)])
    assert out.exit_code == 2 and "reading on is for an interleaved review" in out.stderr


def test_read_on_is_refused_once_every_document_is_read(tmp_path: Path) -> None:
    """Every document relevant, recall 0.9: five found of six is short of it, so the review reads
    all six before the bound says met; there is nothing to read on, and status does not offer it."""
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("".join(f"q0 Q0 d{r} {r + 1} {9 - r} t\n" for r in range(6)))
    qrels.write_text("".join(f"q0 0 d{r} 1\n" for r in range(6)))
    audit = tmp_path / "A"
    wf.freeze(audit, run=run, design="interleaved", target_recall=0.9, seed=7)
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=qrels)
    info = wf.status(audit)
    assert len(_steps(audit)) == 6 and info["next_item"] is None and not info["can_read_on"]
    with pytest.raises(ValueError, match="every document is read: there is nothing to read on"):
        wf.read_on(audit)
    assert wf.certify(audit).content["verdict"]["met"]


def test_a_step_another_label_call_recorded_first_is_not_counted(topic: Data, tmp_path: Path) -> None:
    """Two label calls at once walk the same steps; a step the other recorded first (the same label)
    is written once. Both said "recorded N labels", though the store holds N (h46: two simulations of
    300 each both claimed all 300)."""
    audit = _frozen(tmp_path, topic)
    shown: list[str] = []

    answered: list[str] = []

    def answer(_: str) -> str:   # another call records the first 3 steps' labels first, then this one
        if len(answered) == 8:
            return "q"
        doc = next(line.split()[1] for line in reversed(shown) if line.startswith("document "))
        answered.append(doc)
        label = int(("q0", doc) in topic.relevant)
        if len(answered) <= 3:
            with LabelStore(audit / "labels.sqlite") as other:
                other.record([("q0", doc)], [label], "another label call")
        return "y" if label else "n"

    result = wf.label(audit, interactive=True, input=answer, output=shown.append)
    assert result.recorded == 5 and len(_steps(audit)) == 8
    with LabelStore(audit / "labels.sqlite", readonly=True) as store:
        assert store.count() == 8
