"""`rankcut review` from the command line: the README's example as written, the session's steps,
simulation, and one-line refusals naming the file, line or option."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shlex
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app

README = Path(__file__).resolve().parents[2] / "README.md"
TOPIC = ("migraine", "triptan", "headache", "serotonin", "aura")
OTHER = ("kidney", "glucose", "transport", "cortex", "insulin", "rat", "membrane", "lithium", "calcium",
         "plasma", "ovary", "steroid")
POLICY = "projected-cost:batch=10,chunk=5"


def _run(*args: object) -> tuple[int, str, str]:
    out = CliRunner().invoke(app, [str(a) for a in args])
    return out.exit_code, out.stdout, out.stderr


def _records(path: Path, n: int = 80, relevant: int = 8, seed: int = 0) -> dict[str, int]:
    """A CSV of ``n`` records (record_id, title, abstract, label_included); its labels."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=int)
    labels[rng.permutation(n)[:relevant]] = 1
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["record_id", "title", "abstract", "label_included"])
        for i, y in enumerate(labels):
            words = list(rng.choice(OTHER, size=8))
            if y:
                words[:3] = rng.choice(TOPIC, size=3, replace=False)
            w.writerow([f"r{i}", f"Study {i}", " ".join(words), y])
    return {f"r{i}": int(y) for i, y in enumerate(labels)}


def test_the_readme_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"## Review records.*?```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "README has no Review records example"
    lines = [ln.split("#")[0].strip() for ln in block.group(1).splitlines() if ln.strip()]
    assert lines[0].startswith("rankcut review start") and lines[-1].startswith("rankcut review export")
    assert "repeat these two" in block.group(1).splitlines()[2]
    monkeypatch.chdir(tmp_path)
    truth = _records(tmp_path / "records.csv")

    def run(line: str) -> str:
        code, out, err = _run(*shlex.split(line)[1:])
        assert code == 0, (line, err)
        return out

    run(lines[0])
    batches = 0
    while True:   # the reviewer reads each batch and fills in its label column, until certified
        shown = run(lines[1])
        if "the target is certified" in shown:
            break
        assert re.search(r"wrote (\d+) records? to batch.csv: .*\nthe next \1 records? to read", shown), shown
        with open(tmp_path / "batch.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        with open(tmp_path / "batch.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows({**r, "label": truth[r["record_id"]]} for r in rows)
        assert "recorded " in run(lines[2])
        batches += 1
    assert batches >= 2
    outputs = [run(line) for line in lines[3:]]
    assert "recall ≥" in outputs[0] and "target recall ≥ 0.95: met" in outputs[1]
    assert (tmp_path / "report.html").exists() and (tmp_path / "report.json").exists()
    with open(tmp_path / "included.csv", newline="", encoding="utf-8") as f:   # the records found relevant
        included = {r["record_id"] for r in csv.DictReader(f)}
    assert outputs[-1].startswith(f"wrote {len(included)} relevant records to included.csv")
    assert included and all(truth[rid] for rid in included)


def test_start_next_label_status_certify_report(tmp_path: Path) -> None:
    truth = _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    code, out, err = _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3,
                          "--target-recall", 0.8, "--policy", POLICY)
    assert code == 0, err
    assert "started review" in out and "seed 3" in out and "a screening record" in out
    code, out, _ = _run("review", "status", "--folder", folder)   # no bound of 0 is called certified
    assert "0 relevant found; no recall certified yet (nothing read) (target 0.8" in out and "≥ 0 " not in out
    code, out, _ = _run("review", "next", "--folder", folder, "--json")
    first = json.loads(out)
    assert first["move"] == "screen" and first["position"] >= 1 and first["why"]
    code, out, _ = _run("review", "next", "--folder", folder, "--out", tmp_path / "one.csv")
    assert code == 0 and out.startswith(f"wrote 1 record to {tmp_path / 'one.csv'}: fill in")
    (tmp_path / "mine.csv").write_text(f"record_id,label\n{first['record_id']},{truth[first['record_id']]}\n")
    code, out, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "mine.csv")
    assert code == 0, err
    assert "recorded 1 label (file mine.csv" in out and "1 of 80 records read" in out
    code, out, err = _run("review", "label", "--folder", folder, "--simulate", "--records",
                          tmp_path / "records.csv", "--next", 5)
    assert code == 0, err
    assert "6 of 80 records read" in out
    assert "recorded 5 labels (simulation: known labels sha256:" in out and "qrels" not in out
    code, out, _ = _run("review", "status", "--folder", folder, "--json")
    info = json.loads(out)
    assert info["read"] == 6 and info["next_record"] is not None and info["recall_bound"] < 0.8
    assert info["met_now"] is False and info["met_step"] is None
    ahead = info["audits_to_certify"]   # a projection: that many audit reads, none relevant, meet it
    assert 0 < ahead <= 74 and info["tail"].startswith(f"if the next {ahead} audit records are all not")
    code, out, _ = _run("review", "certify", "--folder", folder)
    assert code == 1 and "NOT met yet after 6 of 80" in out   # exit status 1: not met yet
    # a reviewer reads the verdict and the plain words first; the theorem and δ come after
    assert out.startswith("target recall ≥ 0.8: NOT met yet after 6 of 80")
    assert out.index("In plain words:") < out.index("\nin full:\n") < out.index("Ville's inequality")
    # status says what the certificate says: the records screened and audited, the most left unfound
    said = re.search(r"\((\d+) screened, (\d+) audited; (\d+) relevant found, at most (\d+) unfound\)", out)
    assert said is not None
    screened, audited, found, unfound = said.groups()
    code, out, _ = _run("review", "status", "--folder", folder)
    assert (f"6 of 80 records read ({screened} screened, {audited} audited), {found} relevant found, at most "
            f"{unfound} unfound;") in out
    code, out, err = _run("review", "label", "--folder", folder, "--simulate", "--records",
                          tmp_path / "records.csv")
    assert code == 0, err
    code, out, _ = _run("review", "status", "--folder", folder)
    assert "recall ≥" in out and "NOT met yet" in out     # the certificate is of the first 6 steps
    met = json.loads(_run("review", "status", "--folder", folder, "--json")[1])
    assert met["met_now"] is True and met["met_step"] is not None   # whatever the last certify said
    assert "ahead:" not in out   # met: nothing is projected
    code, out, _ = _run("review", "certify", "--folder", folder, "--json")
    cert = json.loads(out)
    assert code == 0 and cert["verdict"]["met"] and cert["design"] == "interleaved"
    code, out, _ = _run("review", "next", "--folder", folder)   # certified: the report is what is left
    assert code == 0 and out.splitlines()[1] == f"next: rankcut review report --folder {folder} --out " \
        "report.html" and "done" not in out.split()
    code, out, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "report.md")
    assert code == 0, err
    assert "met after" in out and (tmp_path / "report.png").exists()
    assert out.splitlines()[-1] == f"wrote {tmp_path / 'report.md'} and {tmp_path / 'report.json'} and " \
        f"{tmp_path / 'report.png'}"
    code, out, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "report.html")
    assert code == 0, err   # the JSON beside it is the one the Markdown report wrote: said replaced
    assert out.splitlines()[-1] == (f"wrote {tmp_path / 'report.html'} and {tmp_path / 'report.json'} "
                                    f"(replacing the earlier {tmp_path / 'report.json'})")
    code, out, _ = _run("review", "report", "--folder", folder, "--out", tmp_path / "r2.html", "--json")
    assert json.loads(out)["curve"]["found"][-1] == cert["counts"]["relevant"]


def test_simulate_is_reproducible(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    outs = []
    for name in ("A", "B"):
        code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / name,
                              "--seed", 9, "--target-recall", 0.8, "--policy", POLICY, "--json")
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0]["counts"] == outs[1]["counts"] and outs[0]["verdict"]["met"]
    code, out, err = _run("review", "certify", "--folder", tmp_path / "A")   # said as a simulation's
    assert code == 0 and (f"\nSimulated: all {outs[0]['labels']['read']} labels come from a simulation "
                          "(known labels played the reviewer), not from a reviewer.\n") in out, out
    assert (tmp_path / "A" / "review.jsonl").read_text() == (tmp_path / "B" / "review.jsonl").read_text()
    code, out, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "C",
                          "--seed", 9, "--target-recall", 0.8, "--policy", POLICY, "--simulate", "--json")
    assert code == 0, err
    assert json.loads(out)["counts"] == outs[0]["counts"]
    code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / "D",
                          "--seed", 9, "--target-recall", 0.8, "--policy", POLICY, "--prior-basis", "tail",
                          "--json")
    assert code == 0, err
    assert json.loads((tmp_path / "D" / "manifest.json").read_text())["prior_basis"] == "tail"
    code, out, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "E",
                          "--prior-basis", "flat")
    assert code != 0 and "--prior-basis is one of misses, tail, got 'flat'" in err


def test_prior_relevant_and_ris(tmp_path: Path) -> None:
    truth = _records(tmp_path / "records.csv")
    known = [r for r, y in truth.items() if y][:2]
    code, out, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "R",
                          "--prior-relevant", ",".join(known), "--seed", 1)
    assert code == 0, err
    assert ("recorded the prior knowledge: 2 records (2 known before the session, from --prior-relevant: 2 "
            "relevant, 0 not)") in out
    ris = tmp_path / "records.ris"
    ris.write_text("TY  - JOUR\nID  - a1\nTI  - Migraine and triptans\nAB  - A trial.\nER  - \n\n"
                   "TY  - JOUR\nID  - a2\nTI  - Kidney transport\nAB  - In rats.\nER  - \n")
    code, out, err = _run("review", "start", ris, "--folder", tmp_path / "S", "--seed", 1)
    assert code == 0, err
    assert "of 2 records" in out and "to read now: record a" in out
    ris.write_text("TY  - JOUR\nID  - a1\nTI  - Migraine and triptans\nAB  - A trial.\n"
                   "N1  - ASReview_relevant\nER  - \n\n"
                   "TY  - JOUR\nID  - a2\nTI  - Kidney transport\nAB  - In rats.\nER  - \n\n"
                   "TY  - JOUR\nID  - a3\nTI  - Triptans in children\nAB  - A cohort.\nER  - \n")
    code, out, err = _run("review", "start", ris, "--folder", tmp_path / "T", "--seed", 1,
                          "--prior-relevant", "a3")
    assert code == 0, err   # both came "from the ASReview notes"
    assert ("recorded the prior knowledge: 2 records (2 known before the session, 1 from the ASReview notes, "
            "1 from --prior-relevant: 2 relevant, 0 not)") in out


def test_refusals_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("record_id,title,notes\n1,a,b\n")
    code, _, err = _run("review", "start", tmp_path / "bad.csv", "--folder", tmp_path / "X")
    assert code == 2 and err.startswith("error: ")
    assert "bad.csv, line 1: the header names no 'abstract'" in err
    (tmp_path / "bad.csv").write_text("record_id,abstract\n1,b\n")
    code, _, err = _run("review", "start", tmp_path / "bad.csv", "--folder", tmp_path / "X")
    assert code == 2 and "line 1: the header names no 'title'" in err
    assert not (tmp_path / "X").exists()
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 1)[0] == 0
    (tmp_path / "l.csv").write_text("record_id,label\nr1,1\nzz,0\n")
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "l.csv")
    assert code == 2 and "l.csv, line 3: record 'zz' is not a record of this review" in err
    (tmp_path / "l.csv").write_text("record_id,label\nr1,2\n")
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "l.csv")
    assert code == 2 and "l.csv, line 2: the label of record 'r1' must be 0/1" in err
    code, _, err = _run("review", "label", "--folder", folder)
    assert code == 2 and "--from FILE, --interactive or --simulate" in err
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "P",
                        "--policy", "x")
    assert code == 2 and "error: --policy must be one of" in err
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", folder)
    assert code == 2 and "already holds a review" in err
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "T",
                        "--format", "ris")
    assert code == 2 and "--format ris" in err
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "T",
                        "--prior-relevant", "nope")
    assert code == 2 and "--prior-relevant names record 'nope'" in err
    assert len(err.strip().splitlines()) == 1
    # a record the file labels irrelevant is not made relevant by the option without a word
    (tmp_path / "part.csv").write_text("record_id,title,abstract,label_included\n"
                                       "r0,A,a,0\nr1,B,b,\nr2,C,c,1\n")
    code, _, err = _run("review", "start", tmp_path / "part.csv", "--folder", tmp_path / "T",
                        "--prior-relevant", "r1,r0")
    assert code == 2 and "--prior-relevant names record 'r0', which part.csv marks not relevant (its " \
        "column label_included): drop it from --prior-relevant" in err
    assert not (tmp_path / "T").exists()
    # a TREC run read as a table, texts given to a table, a simulation of a RIS file without labels
    (tmp_path / "bm25.run").write_text("q1 Q0 d1 1 2.0 bm25\n")
    (tmp_path / "r.ris").write_text("TY  - JOUR\nTI  - A\nER  - \n")
    for args, says in (
            (("bm25.run",), "bm25.run is named as a TREC run: read it with --format trec --texts FILE"),
            (("records.csv", "--texts", "t.jsonl"), "--texts is for a TREC run, read with --format trec: add "
             f"it to read {tmp_path / 'records.csv'} as one, or leave --texts out"),
            (("r.ris", "--simulate"), "r.ris: a simulation needs every record's label: label every record "
             "with an ASReview note (N1  - ASReview_relevant or ASReview_irrelevant), or give the labels as "
             "--qrels FILE")):
        code, _, err = _run("review", "start", tmp_path / args[0], *args[1:], "--folder", tmp_path / "T")
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "T").exists()
    # RIS files keep their labels in notes: no --label-column (named as the option, not label=)
    code, _, err = _run("review", "start", tmp_path / "r.ris", "--label-column", "label", "--folder",
                        tmp_path / "T")
    assert code == 2 and "r.ris: a RIS file carries its labels in its notes (ASReview_relevant, " \
        "ASReview_irrelevant); drop --label-column" in err, err
    (tmp_path / "two.ris").write_text("TY  - JOUR\nID  - a1\nTI  - Migraine and triptans\nAB  - A "
                                      "trial.\nN1  - ASReview_relevant\nER  - \n\n"
                                      "TY  - JOUR\nID  - a2\nTI  - Kidney transport\nAB  - In rats.\n"
                                      "ER  - \n")
    assert _run("review", "start", tmp_path / "two.ris", "--folder", tmp_path / "S", "--seed", 1)[0] == 0
    code, _, err = _run("review", "label", "--folder", tmp_path / "S", "--simulate", "--records",
                        tmp_path / "two.ris")
    assert code == 2 and "two.ris does not label every record (label every record with an ASReview note " \
        "(N1  - ASReview_relevant or ASReview_irrelevant), or give --qrels)" in err, err
    # prior knowledge the simulation's labels contradict: the column named, not the review
    (tmp_path / "all.csv").write_text("record_id,title,abstract,label_included\nr0,A,a,0\nr1,B,b,1\n")
    code, _, err = _run("review", "simulate", tmp_path / "all.csv", "--prior-relevant", "r0", "--seed", 1,
                        "--folder", tmp_path / "T")
    assert code == 2 and "all: record 'r0' is known relevant before the session, but the labels the " \
        "simulation plays (column label_included) say 0" in err, err
    assert not (tmp_path / "T").exists()
    (tmp_path / "q.qrels").write_text("two 0 a1 0\ntwo 0 a2 1\n")   # qrels play the reviewer, not the notes
    code, _, err = _run("review", "simulate", tmp_path / "two.ris", "--qrels", tmp_path / "q.qrels", "--seed",
                        1, "--folder", tmp_path / "T")
    assert code == 2 and "record 'a1' is known relevant before the session, but the labels the simulation " \
        f"plays (--qrels {tmp_path / 'q.qrels'}) say 0" in err, err


def test_rankcut_audit_reads_a_review_folder(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "simulate", tmp_path / "records.csv", "--folder", folder, "--seed", 2,
                "--target-recall", 0.8, "--policy", POLICY)[0] == 0
    # a fresh process, as from the shell: rankcut audit registers the review's screener itself
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    for command in (["audit", "certify", "--audit"], ["certify", "audits"]):   # (audits said "its
        done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", *command,
                               str(folder)], capture_output=True, text=True, env=env)   # screener 'cal' is
        assert done.returncode == 0, done.stderr   # not registered in this process")
        assert "target recall ≥ 0.8: met" in done.stdout


def test_a_trec_run_with_texts_and_qrels(tmp_path: Path) -> None:
    truth = _records(tmp_path / "records.csv", n=60, relevant=6)
    rows = list(csv.DictReader(open(tmp_path / "records.csv", encoding="utf-8")))
    (tmp_path / "t.run").write_text("".join(f"T1 Q0 {r['record_id']} {i + 1} {100 - i} bm25\n"
                                            for i, r in enumerate(rows)))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"doc_id": r["record_id"], "text": r["abstract"]})
                                              + "\n" for r in rows))
    (tmp_path / "t.qrels").write_text("".join(f"T1 0 {r} 1\n" for r, y in truth.items() if y))
    code, out, err = _run("review", "simulate", tmp_path / "t.run", "--format", "trec", "--texts",
                          tmp_path / "t.jsonl", "--qrels", tmp_path / "t.qrels", "--folder", tmp_path / "R",
                          "--seed", 1, "--target-recall", 0.8, "--json")
    assert code == 0, err
    cert = json.loads(out)
    assert cert["verdict"]["met"] and cert["counts"]["relevant"] >= 5
    code, _, err = _run("review", "start", tmp_path / "t.run", "--format", "trec", "--folder", tmp_path / "S")
    assert code == 2 and "give its documents' texts with --texts" in err
    # a run has no label column: --label-column was taken and read by nothing
    code, _, err = _run("review", "start", tmp_path / "t.run", "--format", "trec", "--texts",
                        tmp_path / "t.jsonl", "--label-column", "foo", "--folder", tmp_path / "S")
    assert code == 2 and "--label-column is not for --format trec: a run has no label column" in err, err
    # qrels without --simulate were read into labels no step used, and the warning said a label
    # column of the run "labels every record"
    for fmt in (["--format", "trec", "--texts", tmp_path / "t.jsonl"], []):
        given = tmp_path / ("t.run" if fmt else "records.csv")
        code, _, err = _run("review", "start", given, *fmt, "--qrels", tmp_path / "t.qrels", "--folder",
                            tmp_path / "S")
        assert code == 2 and err.strip() == (
            "error: --qrels is for --simulate: the known labels played as the reviewer (a review asks the "
            "reviewer for each record it reads); records known relevant before the review are "
            "--prior-relevant ID,..."), err
    assert not (tmp_path / "S").exists()
    assert _run("review", "start", tmp_path / "t.run", "--format", "trec", "--texts", tmp_path / "t.jsonl",
                "--folder", tmp_path / "S", "--seed", 1)[0] == 0
    code, _, err = _run("review", "label", "--folder", tmp_path / "S", "--simulate", "--records",
                        tmp_path / "t.run", "--format", "trec", "--texts", tmp_path / "t.jsonl")
    assert code == 2 and "t.run does not label every record (give --qrels)" in err, err   # no column there
    with open(tmp_path / "t.run", "a") as f:
        f.write("T2 Q0 r0 1 1 bm25\n")
    code, _, err = _run("review", "start", tmp_path / "t.run", "--format", "trec", "--texts",
                        tmp_path / "t.jsonl", "--folder", tmp_path / "S")
    assert code == 2 and "the run holds 2 queries; choose one with --query, e.g. 'T1'" in err, err


def test_simulate_draws_a_progress_bar_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _records(tmp_path / "records.csv", n=40, relevant=4)
    monkeypatch.setenv("RANKCUT_PROGRESS", "1")
    code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / "A",
                          "--seed", 1, "--target-recall", 0.8)
    assert code == 0, err
    assert "label:" in err and "record" in err
    # the bar counts the records the review may still ask for; once certified it ends full, saying so
    read = int(re.search(r"met after (\d+) of 40 records read", out)[1])
    assert read < 40   # certified before the end: the case the bar must not leave short
    assert re.search(rf"100%\|[^|]*\| {read}/{read} \[[^]]*certified\]", err.replace("\r", "\n")), err
    code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / "B",
                          "--seed", 1, "--target-recall", 0.8, "--json")
    assert code == 0 and "label:" not in err and json.loads(out)["verdict"]


def test_status_and_next_follow_a_long_replay_with_a_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A large review's replay takes seconds before status or next says anything: where bars are
    shown, a replay that runs longer than REPLAY_BAR_DELAY is followed (here: at once)."""
    from rankcut.audit.designs import interleaved

    _records(tmp_path / "records.csv", n=40, relevant=4)
    assert _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "A", "--seed", 1)[0] == 0
    assert _run("review", "label", "--folder", tmp_path / "A", "--simulate", "--records",
                tmp_path / "records.csv", "--next", 12)[0] == 0
    monkeypatch.setattr(interleaved, "REPLAY_BAR_DELAY", 0.0)
    monkeypatch.setenv("RANKCUT_PROGRESS", "1")
    for command in (["status"], ["next", "--batch", "3"]):
        code, out, err = _run("review", *command, "--folder", tmp_path / "A")
        assert code == 0 and re.search(r"replay: .*\| \d+/12 ", err), (command, err)
        assert "replay" not in out
        code, out, err = _run("review", *command, "--folder", tmp_path / "A", "--json")
        assert code == 0 and "replay" not in err and json.loads(out)


def test_interactive_labelling_from_the_terminal(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 1)[0] == 0
    first = json.loads(_run("review", "next", "--folder", folder, "--json")[1])
    out = CliRunner().invoke(app, ["review", "label", "--folder", str(folder), "--interactive"],
                             input="0\nmaybe\ny\nq\n")
    assert out.exit_code == 0, out.stderr
    assert f"\nrecord {first['record_id']}\n" in out.stdout
    assert "please answer y (or 1), n (or 0) or q" in out.stdout
    # piped answers are echoed after their prompt, each on its line
    assert "relevant? [y]es / [n]o / [q]uit: 0\n" in out.stdout and "[q]uit: maybe\nplease" in out.stdout
    # in the review's words: the record's place among the records, no query, no ranking
    assert f"[step 1: screen, number {first['position']} in the file]" in out.stdout
    assert "query " not in out.stdout and "document" not in out.stdout and "ranking" not in out.stdout
    assert "recorded 2 labels (interactive)" in out.stdout and "2 of 80 records read" in out.stdout


def test_piped_interactive_labelling_writes_each_prompt_before_reading_its_answer(tmp_path: Path) -> None:
    """A program that answers each prompt it sees (a pty driver, an expect script) hung: with
    answers piped, the prompt came only after the answer was read (a reviewer's walk)."""
    import subprocess
    import threading

    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 1)[0] == 0
    child = subprocess.Popen([sys.executable, "-m", "rankcut", "review", "label", "--folder", str(folder),
                              "--interactive"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert child.stdin is not None and child.stdout is not None
    seen: list[str] = []
    prompted = threading.Event()

    def read(stream: Any) -> None:
        while char := stream.read(1):
            seen.append(char)
            if "".join(seen[-8:]) == "[q]uit: ":
                prompted.set()

    reader = threading.Thread(target=read, args=(child.stdout,), daemon=True)
    reader.start()
    try:
        assert prompted.wait(120), "".join(seen)   # before any answer is written
        child.stdin.write("q\n")
        child.stdin.close()
        assert child.wait(60) == 0
    finally:
        child.kill()
    reader.join(10)
    assert "relevant? [y]es / [n]o / [q]uit: q\n" in "".join(seen)   # the answer echoed after it, as before


def test_label_simulate_from_qrels(tmp_path: Path) -> None:
    truth = _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 1,
                "--target-recall", 0.8, "--policy", POLICY)[0] == 0
    (tmp_path / "q.qrels").write_text("".join(f"topic7 0 {r} 1\n" for r, y in truth.items() if y))
    code, out, err = _run("review", "label", "--folder", folder, "--simulate", "--qrels",
                          tmp_path / "q.qrels")
    assert code == 0, err
    assert "recall ≥" in out and "the target is certified" in out
    (tmp_path / "two.qrels").write_text("a 0 r1 1\nb 0 r2 1\n")
    code, _, err = _run("review", "label", "--folder", folder, "--simulate", "--qrels",
                        tmp_path / "two.qrels")
    assert code == 2 and "two.qrels: the qrels hold 2 queries, none of them the review's 'records'" in err


def test_the_records_file_is_named_in_the_report_and_an_edit_after_start_is_said(tmp_path: Path) -> None:
    """The review screens its frozen copy: the report names the file it was started from (hash,
    size), and status warns when that file changed since (h27: edits went unnoticed)."""
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3,
                        "--target-recall", 0.8, "--policy", POLICY)
    assert code == 0, err
    code, out, _ = _run("review", "status", "--folder", folder)
    assert code == 0 and "warning:" not in out
    code, out, _ = _run("review", "certify", "--folder", folder)   # nothing read: not met, no refusal
    assert code == 1 and out.startswith("nothing is read yet: target recall ≥ 0.8 NOT met (0 of 80 records")
    code, printed, _ = _run("review", "certify", "--folder", folder, "--json")   # JSON, as --json says
    said = json.loads(printed)
    assert code == 1 and said["verdict"] == {"met": False, "text": out.strip()} and said["read"] == 0
    (folder / "labels.sqlite").write_bytes(b"")   # what a label call stopped before its first write leaves
    code, again, _ = _run("review", "certify", "--folder", folder)
    assert (code, again) == (1, out)
    (folder / "labels.sqlite").unlink()
    _run("review", "label", "--folder", folder, "--simulate", "--records", tmp_path / "records.csv",
         "--next", 3)
    _run("review", "certify", "--folder", folder)   # not met yet (exit status 1): a report all the same
    code, _, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "report.md")
    assert code == 0, err
    digest = hashlib.sha256((tmp_path / "records.csv").read_bytes()).hexdigest()
    report = (tmp_path / "report.md").read_text()
    assert f"| records from | {(tmp_path / 'records.csv').resolve()} (sha256:{digest[:12]}, " in report
    with open(tmp_path / "records.csv", "a", encoding="utf-8") as f:   # a record added after start
        f.write("r80,Study 80,kidney glucose transport,0\n")
    code, out, _ = _run("review", "status", "--folder", folder)
    source = (tmp_path / "records.csv").resolve()
    assert code == 0 and f"warning: {source} changed since the review started" in out
    assert "screens the records frozen at its start (records.jsonl" in out
    code, out, _ = _run("review", "status", "--folder", folder, "--json")
    assert len(json.loads(out)["changed_sources"]) == 1
    code, out, err = _run("review", "next", "--folder", folder, "--json")
    assert code == 0 and json.loads(out)["record_id"]   # the review goes on, on its own copy
    assert f"warning: {source} changed since the review started" in err
    code, _, err = _run("review", "certify", "--folder", folder)   # a certificate says it too (it was silent)
    assert code == 1 and f"warning: {source} changed since the review started" in err
    code, _, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "again.md")
    assert code == 0 and f"warning: {source} changed since the review started" in err
    again = (tmp_path / "again.md").read_text()
    assert f"{digest[:12]}, " in again and "; the file differs now (sha256:" in again
    assert f"- Warning: {source} changed since the review started" in again
    (tmp_path / "records.csv").unlink()   # gone: status said nothing
    code, out, _ = _run("review", "status", "--folder", folder)
    assert code == 0 and f"warning: {source} is gone (sha256:{digest[:12]} at the start)" in out
    _, _, err = _run("review", "certify", "--folder", folder)   # the certificate loses nothing by it
    assert "is gone" not in err and "changed since" not in err


def test_without_the_review_extra_it_says_which_to_install(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _records(tmp_path / "records.csv")
    for name in [m for m in sys.modules if m.split(".")[0] == "sklearn"] + ["sklearn"]:
        monkeypatch.setitem(sys.modules, name, None)   # importing it raises ImportError
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "R")
    assert code == 2 and "needs the extra 'review' (pip install 'rankcut[review]')" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "R").exists()


def test_a_started_review_without_the_extra_says_which_to_install(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`status` reads the ranker cache, whose key names scikit-learn's version from the installed
    package's metadata, not by importing it: a missing package still asks for the extra."""
    import importlib.metadata

    _records(tmp_path / "records.csv")
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "R", "--seed", 1)
    assert code == 0, err
    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "scikit-learn":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    from rankcut.review import session

    session._cal.cache_clear()   # as in a new process: no screener kept from start
    for name in [m for m in sys.modules if m.split(".")[0] == "sklearn"] + ["sklearn"]:
        monkeypatch.setitem(sys.modules, name, None)
    code, _, err = _run("review", "status", "--folder", tmp_path / "R")
    assert code == 2 and "needs the extra 'review' (pip install 'rankcut[review]')" in err, err
    assert "Traceback" not in err


def test_a_simulation_without_labels_names_the_file_and_the_options(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    bare = tmp_path / "bare.csv"
    with open(tmp_path / "records.csv", newline="") as f, open(bare, "w", newline="") as g:
        csv.writer(g).writerows(row[:3] for row in csv.reader(f))   # the label column dropped
    code, _, err = _run("review", "start", bare, "--folder", tmp_path / "R", "--simulate", "--seed", 1)
    assert code == 2 and f"error: {bare}: a simulation needs every record's label" in err
    assert "--label-column" in err and "--qrels FILE" in err and not (tmp_path / "R").exists()


def test_a_changed_answer_names_the_command_that_corrects_it(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 1)[0] == 0
    first = json.loads(_run("review", "next", "--folder", folder, "--json")[1])["record_id"]
    (tmp_path / "a.csv").write_text(f"record_id,label\n{first},0\n")
    assert _run("review", "label", "--folder", folder, "--from", tmp_path / "a.csv")[0] == 0
    (tmp_path / "a.csv").write_text(f"record_id,label\n{first},1\n")
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "a.csv")
    said = err.strip()
    assert code == 2 and f"--into NEW_FOLDER --relabel {first}=1 — nothing was recorded" in said
    command = said.split("with the record relabelled: ", 1)[1].split(" — nothing", 1)[0]
    words = shlex.split(command.replace("NEW_FOLDER", shlex.quote(str(tmp_path / "R2"))))
    assert words[:3] == ["rankcut", "review", "correct"]
    ran = _run(*words[1:])
    assert ran[0] == 0, ran[2]
    assert (tmp_path / "R2" / "manifest.json").is_file()   # it runs


def test_a_missing_module_outside_the_extra_is_not_called_a_missing_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankcut.cli import review

    def broken(*args: object, **kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'rankcut.nowhere'", name="rankcut.nowhere")

    monkeypatch.setattr(review, "_records", broken)
    out = CliRunner().invoke(app, ["review", "start", str(tmp_path / "records.csv"),
                                   "--folder", str(tmp_path / "R")])
    assert isinstance(out.exception, ModuleNotFoundError) and "extra 'review'" not in out.stderr


def test_the_help_names_the_defaults_the_commands_freeze(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--policy` and `--prior-basis` are spelled in one place for `review` and `audit freeze`; their
    help must name the defaults the library freezes."""
    import inspect

    from rankcut.audit.designs.interleaved import DEFAULT_POLICY, POLICIES
    from rankcut.certify.interleaved import PRIOR_BASES, InterleavedRule
    from rankcut.review import session

    monkeypatch.setenv("COLUMNS", "400")
    basis = inspect.signature(InterleavedRule).parameters["prior_basis"].default
    for command, policy, prior in ((["review", "start"], session.POLICY, session.PRIOR_BASIS),
                                   (["audit", "freeze"], DEFAULT_POLICY, basis)):
        shown = " ".join(CliRunner().invoke(app, [*command, "--help"]).stdout.split())
        assert f"{policy} (default)" in shown and f"{prior} (default)" in shown, (command, shown)
        # the names are spelled again in rankcut.cli._interleaved (no import at startup): every one
        assert all(name in shown for name in [*POLICIES, *PRIOR_BASES]), (command, shown)


def test_start_says_what_takes_its_time_where_bars_are_shown(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The features of a large collection take seconds before the first line: start says so on
    stderr where progress bars are shown, and nothing where they are not."""
    _records(tmp_path / "r.csv", n=60, relevant=0)
    monkeypatch.setenv("RANKCUT_PROGRESS", "1")
    code, out, err = _run("review", "start", tmp_path / "r.csv", "--folder", tmp_path / "A", "--seed", 1)
    assert code == 0 and err.startswith("freezing 60 records and computing the ranker's features")
    assert "freezing" not in out
    monkeypatch.setenv("RANKCUT_PROGRESS", "0")
    code, _, err = _run("review", "start", tmp_path / "r.csv", "--folder", tmp_path / "B", "--seed", 1)
    assert code == 0 and "freezing" not in err


def test_simulate_says_what_the_known_labels_show(tmp_path: Path) -> None:
    """A simulation knows every label: it says how many relevant records the review found, the
    step of the last one, and the share read (which the certificate cannot know)."""
    truth = _records(tmp_path / "records.csv", n=90, relevant=9, seed=3)
    code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / "S",
                          "--seed", 2, "--target-recall", 0.8, "--policy", POLICY)
    assert code == 0, err
    steps = [json.loads(x) for x in (tmp_path / "S" / "review.jsonl").read_text().splitlines()]
    hits = [s["step"] for s in steps if truth[s["doc_id"]]]
    assert all(s["label"] == truth[s["doc_id"]] for s in steps)
    assert (f"with the known labels: {len(hits)} of 9 relevant records found (recall {len(hits) / 9:.3f}, "
            f"the last at step {max(hits)}); {len(steps)} of 90 records read ({len(steps) / 90:.1%})") in out


def test_simulate_takes_a_seed_query_as_start_does(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    code, _, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", tmp_path / "Q", "--seed",
                        4, "--target-recall", 0.8, "--policy", POLICY, "--seed-query", "migraine triptan")
    assert code == 0, err
    config = json.loads((tmp_path / "Q" / "manifest.json").read_text())["screener"]["config"]["cal"]
    assert config["query"] == "migraine triptan"


def test_a_simulation_is_not_continued_with_other_known_labels(tmp_path: Path) -> None:
    truth = _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3,
                "--policy", POLICY)[0] == 0
    code, _, err = _run("review", "label", "--folder", folder, "--simulate", "--records",
                        tmp_path / "records.csv", "--next", 5)
    assert code == 0, err
    flipped = tmp_path / "flipped.csv"
    lines = (tmp_path / "records.csv").read_text().splitlines()
    flipped.write_text("\n".join([lines[0], *(line[:-1] + str(1 - int(line[-1])) for line in lines[1:])]))
    code, out, err = _run("review", "label", "--folder", folder, "--simulate", "--records", flipped,
                          "--next", 3)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "error: record 'r" in err and "by 'simulation: known labels sha256:" in err
    assert ("two simulations mixed would certify neither. Simulate with the same labels as before (the "
            "same file, and --threshold), or start a new review (rankcut review start) — nothing was "
            "recorded") in err
    code, out, _ = _run("review", "status", "--folder", folder, "--json")
    assert json.loads(out)["read"] == 5 and len(truth) == 80


def test_the_report_is_of_the_records_read_now_and_refuses_an_edited_store(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3,
                "--policy", POLICY)[0] == 0
    simulate = ("review", "label", "--folder", folder, "--simulate", "--records", tmp_path / "records.csv")
    assert _run(*simulate, "--next", 8)[0] == 0
    assert "after 8 of 80" in _run("review", "certify", "--folder", folder)[1]
    assert _run(*simulate, "--next", 1)[0] == 0   # read on after the certificate was written
    code, out, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "r.html")
    assert code == 0, err
    assert "after 9 of 80" in out and "after 8 of 80" not in (tmp_path / "r.html").read_text()
    with sqlite3.connect(folder / "labels.sqlite") as con:   # a label changed behind rankcut's back
        con.execute("UPDATE labels SET label = 1 - label WHERE doc_id = (SELECT MIN(doc_id) FROM labels)")
    code, out, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "r2.html")
    assert code == 2 and "edited outside rankcut" in err and not (tmp_path / "r2.html").exists()


def test_status_warns_of_a_certificate_edited_since_certify(tmp_path: Path) -> None:
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3, "--target-recall", 0.8,
         "--policy", POLICY)
    _run("review", "label", "--folder", folder, "--simulate", "--records", tmp_path / "records.csv",
         "--next", 20)
    _run("review", "certify", "--folder", folder)
    code, out, _ = _run("review", "status", "--folder", folder, "--json")
    assert code == 0 and json.loads(out)["certificate_refused"] is None
    path = folder / "certificate.json"
    content = json.loads(path.read_text())
    labels = content["counts"]["labels"]
    content["counts"]["labels"] = labels[:-1] + str(1 - int(labels[-1]))   # edited by hand
    path.write_text(json.dumps(content))
    code, out, _ = _run("review", "status", "--folder", folder, "--json")
    said = json.loads(out)["certificate_refused"]
    assert code == 0 and said.startswith(f"{path}: ")
    code, out, _ = _run("review", "status", "--folder", folder)
    assert code == 0 and f"warning: {said}" in out


def test_a_simulation_refuses_the_labels_of_another_records_file(tmp_path: Path) -> None:
    """The screening sets number their records 1 … N: another set's file was taken as the known
    labels, its missing ids as not relevant, and the review certified on them."""
    _records(tmp_path / "records.csv")
    _records(tmp_path / "other.csv", seed=1)            # the same ids, other records
    _records(tmp_path / "fewer.csv", n=60)              # the first 60 of the same records
    folder = tmp_path / "R"
    _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3, "--target-recall", 0.8,
         "--policy", POLICY)
    for name, said in (("other.csv", "80 of the review's 80 records are in it with another title or "),
                       ("fewer.csv", "20 of the review's 80 records are not in it (record 'r60', 'r61', ")):
        code, _, err = _run("review", "label", "--folder", folder, "--simulate", "--records", tmp_path / name)
        assert code == 2 and said in err and f"simulate with {tmp_path / 'records.csv'}, or give" in err, err
    assert not (folder / "review.jsonl").exists()
    code, _, err = _run("review", "label", "--folder", folder, "--simulate", "--records",
                        tmp_path / "records.csv", "--next", 3)
    assert code == 0, err


def test_a_deleted_label_store_is_refused_not_started_again(tmp_path: Path) -> None:
    """labels.sqlite deleted: next asked for the first record again and label wrote a new store, the
    steps review.jsonl recorded lost without a word; after a certify, status said "0 read", certify
    "nothing is read yet" and report wrote the certificate of labels that are gone."""
    _records(tmp_path / "records.csv")
    folder, records = tmp_path / "R", tmp_path / "records.csv"
    _run("review", "start", records, "--folder", folder, "--seed", 3, "--target-recall", 0.8,
         "--policy", POLICY)
    _run("review", "label", "--folder", folder, "--simulate", "--records", records, "--next", 12)
    shutil.copytree(folder, tmp_path / "copy")
    (folder / "labels.sqlite").unlink()
    said = "labels.sqlite is missing, but"
    for step in (["status"], ["next"], ["certify"],
                 ["label", "--simulate", "--records", records, "--next", 1]):
        code, _, err = _run("review", *step, "--folder", folder)
        assert code == 2 and said in err and "review.jsonl records 12 steps read" in err, step
    assert not (folder / "labels.sqlite").exists()
    folder = tmp_path / "copy"
    _run("review", "certify", "--folder", folder)
    (folder / "labels.sqlite").unlink()
    (folder / "review.jsonl").unlink()
    code, out, _ = _run("review", "status", "--folder", folder)
    assert code == 0 and f"warning: {folder / 'labels.sqlite'} is missing, but the labels" in out
    assert out.splitlines()[-1].startswith("next: restore the labels that were opened")
    for step in (["certify"], ["report", "--out", tmp_path / "r.md"]):
        code, _, err = _run("review", *step, "--folder", folder)
        assert code == 2 and "the label store was deleted after certify" in err, step
    assert not (tmp_path / "r.md").exists()


@pytest.mark.parametrize("name", ["records.run", "sample.jsonl", "sample.json"])
def test_a_missing_frozen_file_is_named_in_the_review_s_words(name: str, tmp_path: Path) -> None:
    """A raw "[Errno 2] No such file" (records.run, sample.jsonl), a KeyError (sample.json), and an
    audit's "run sample first" for a review that has no sample step."""
    _records(tmp_path / "records.csv")
    folder = tmp_path / "R"
    _run("review", "start", tmp_path / "records.csv", "--folder", folder, "--seed", 3, "--target-recall", 0.8,
         "--policy", POLICY)
    (folder / name).unlink()
    for step in ("status", "next", "certify"):
        code, _, err = _run("review", step, "--folder", folder)
        assert code == 2 and name in err and "is missing" in err and "Errno" not in err, (step, err)
        assert "restore it, or start a new review" in err or "put it back where it was" in err, (step, err)
