"""A new user's mistakes with ``rankcut review``: one-line refusals, nothing half-written (ux22)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.review import session


def _run(*args: object) -> tuple[int, str, str]:
    out = CliRunner().invoke(app, [str(a) for a in args])
    return out.exit_code, out.stdout, out.stderr


def test_a_start_that_fails_after_the_freeze_leaves_no_folder(tmp_path: Path) -> None:
    # one-letter words: the ranker's tf-idf has no vocabulary, which only the first step finds out
    (tmp_path / "r.csv").write_text("record_id,title,abstract\n1,a,b\n2,c,d\n")
    folder = tmp_path / "R"
    code, _, err = _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: {(tmp_path / 'r.csv').resolve()}: the ranker finds no word in the titles "
                          "and abstracts of the 2 records")   # the file named
    assert not folder.exists()
    folder.mkdir()      # an empty folder given: it stays, empty
    code, _, _ = _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)
    assert code == 2 and folder.is_dir() and not any(folder.iterdir())


def test_a_step_before_start_names_rankcut_review_start(tmp_path: Path) -> None:
    for folder in (tmp_path / "nope", tmp_path):
        for command in ("next", "status", "certify"):
            code, _, err = _run("review", command, "--folder", folder)
            assert code == 2 and len(err.strip().splitlines()) == 1, err
            assert f"review folder {folder}" in err and "rankcut review start" in err, err
            assert "audit freeze" not in err


def _labelled(path: Path, n: int = 40) -> None:
    """``n`` records about cats or dogs, every fourth one relevant (label_included)."""
    rows = [f"r{i},Study {i},{'cats purr softly' if i % 4 == 0 else 'dogs bark loudly'} {i},{int(i % 4 == 0)}"
            for i in range(n)]
    path.write_text("record_id,title,abstract,label_included\n" + "\n".join(rows) + "\n")


def test_ctrl_c_in_a_simulation_says_how_to_resume(tmp_path: Path, monkeypatch) -> None:
    from rankcut.audit import workflow

    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "S"

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(workflow, "certify", interrupted)   # after the labels, before the certificate
        code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--folder", folder, "--seed", 1)
    assert code == 130 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("interrupted: ") and "records read are recorded in" in err
    resume = err.split("resume with ", 1)[1].split()
    assert resume[:6] == ["rankcut", "review", "label", "--folder", str(folder), "--simulate"]
    code, out, err = _run(*resume[1:])
    assert code == 0, err
    assert _run("review", "certify", "--folder", folder)[0] == 0


@pytest.mark.parametrize("at", ["start", "status"])
def test_ctrl_c_in_start_says_whether_the_review_was_started(tmp_path: Path, monkeypatch, at: str) -> None:
    """Ctrl-C in `review start` of 150,000 records exited 130 without a word, whether the folder was
    removed or complete (a stop-56 walk)."""
    from rankcut.review import session

    unlabelled = tmp_path / "s.csv"
    _labelled(unlabelled)
    unlabelled.write_text(unlabelled.read_text().replace(",1\n", ",\n").replace(",0\n", ",\n"))
    folder = tmp_path / "R"
    real = getattr(session, at)
    calls = []

    def interrupted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            if at == "status":   # started, then interrupted
                real(*args, **kwargs)
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(session, at, interrupted)
        code, out, err = _run("review", "start", unlabelled, "--folder", folder, "--seed", 1)
    assert code == 130 and out == "", out
    if at == "start":
        assert err == f"interrupted: nothing was started in {folder}\n" and not folder.exists()
    else:
        assert err == (f"interrupted: 0 records read are recorded in {folder}; resume with rankcut review "
                       f"next --folder {folder}\n")
        assert _run("review", "next", "--folder", folder)[0] == 0


def test_labels_of_records_not_asked_for_yet_are_kept_until_the_review_asks(tmp_path: Path) -> None:
    _labelled(tmp_path / "r.csv")
    unlabelled = (tmp_path / "r.csv").read_text().replace(",1\n", ",\n").replace(",0\n", ",\n")
    (tmp_path / "s.csv").write_text(unlabelled)
    folder = tmp_path / "R"
    code, out, err = _run("review", "start", tmp_path / "s.csv", "--folder", folder, "--seed", 1, "--json")
    assert code == 0, err
    asked = json.loads(out)["next_record"]["record_id"]
    other = next(f"r{i}" for i in range(40) if f"r{i}" != asked)
    # the row asked for first left blank: nothing recorded, and the review says what it waits for
    (tmp_path / "blank.csv").write_text(f"record_id,label\n{asked},\n{other},yes\n")
    code, out, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "blank.csv",
                          "--reviewer", "Bob")
    assert code == 0 and out.startswith("recorded 0 labels"), err
    assert f"waiting for record {asked} (number " in out and "blank.csv gives it no label" in out
    assert f"next: rankcut review label --folder {folder} --from {tmp_path / 'blank.csv'} --reviewer Bob" \
        in out
    (folder / "pending-labels.csv").unlink()   # as if never given: the test goes on as before
    (tmp_path / "l.csv").write_text(f"record_id,label\n{asked},no\n{other},yes\n")
    code, out, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "l.csv")
    assert code == 0 and "recorded 1 label" in out, err
    assert err.strip().splitlines() == [
        f"warning: {tmp_path / 'l.csv'}: 1 of its labels is kept for later: the review has not asked for "
        f"those records yet (record {other}); none is lost: each is recorded when it does, and `next` leaves "
        f"them out of the records to read ({folder / 'pending-labels.csv'})"]
    # the same file again adds nothing: refused, naming the record asked for now
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "l.csv")
    now = session.next_record(folder)
    assert now is not None and now["record_id"] != other
    assert code == 2 and err.strip() == (
        f"error: {tmp_path / 'l.csv'}: nothing was recorded — it holds no new label, and none for record "
        f"{now['record_id']!r}, the one the review asks for now (rankcut review next names it, and --batch N "
        "the ones after it)")
    # the reviewer answers what is asked; the kept answer is recorded when the review asks for it
    for _ in range(40):
        if other in _recorded(folder):
            break
        nxt = session.next_record(folder)
        assert nxt is not None and nxt["record_id"] != other    # never asked again: it is answered
        (tmp_path / "a.csv").write_text(f"record_id,label\n{nxt['record_id']},no\n")
        session.label(folder, from_file=tmp_path / "a.csv")
    assert _recorded(folder)[other] == 1 and not (folder / "pending-labels.csv").exists()


def test_a_blank_row_of_a_batch_is_named_as_what_the_review_waits_for(tmp_path: Path) -> None:
    """A batch filled in but for one row records the rows before it, keeps those after it, and says
    it waits for the blank row's record (the new user's walk: it named the next batch, and only a
    warning that the rows after the blank one are kept said anything was amiss)."""
    import csv

    _labelled(tmp_path / "r.csv")
    truth = {f"r{i}": int(i % 4 == 0) for i in range(40)}
    unlabelled = (tmp_path / "r.csv").read_text().replace(",1\n", ",\n").replace(",0\n", ",\n")
    (tmp_path / "s.csv").write_text(unlabelled)
    folder, batch = tmp_path / "R", tmp_path / "b.csv"
    assert _run("review", "start", tmp_path / "s.csv", "--folder", folder, "--seed", 1)[0] == 0
    assert _run("review", "next", "--folder", folder, "--batch", 4, "--out", batch)[0] == 0
    rows = list(csv.reader(batch.open()))
    ids = [r[0] for r in rows[1:]]
    for r in rows[1:]:
        r[1] = "" if r[0] == ids[1] else ("yes" if truth[r[0]] else "no")
    with batch.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    code, out, err = _run("review", "label", "--folder", folder, "--from", batch)
    assert code == 0 and out.startswith("recorded 1 label"), err
    assert f"waiting for record {ids[1]} (" in out and "b.csv gives it no label" in out, out
    assert "--batch 4" not in out     # no next batch while this one waits
    (tmp_path / "empty.csv").write_text(",".join(session.BATCH_COLUMNS) + "\n\n\n")
    assert session.batch_records(batch) == ids and session.batch_records(tmp_path / "empty.csv") is None


def test_an_answers_file_a_spreadsheet_changed_is_told_what_happened(tmp_path: Path) -> None:
    """Ids whose leading zeros a spreadsheet dropped name the record they were; an answers column
    of another name points to --label-column (the new user's walk)."""
    rows = [f"{i:03d},Study {i},{'cats purr' if i % 4 == 0 else 'dogs bark'} {i}" for i in range(1, 41)]
    (tmp_path / "z.csv").write_text("record_id,title,abstract\n" + "\n".join(rows) + "\n")
    folder = tmp_path / "Z"
    code, out, err = _run("review", "start", tmp_path / "z.csv", "--folder", folder, "--seed", 1, "--json")
    assert code == 0, err
    asked = json.loads(out)["next_record"]["record_id"]
    (tmp_path / "a.csv").write_text(f"record_id,label\n{int(asked)},0\n")
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "a.csv")
    assert code == 2 and err.strip() == (
        f"error: {tmp_path / 'a.csv'}, line 2: record '{int(asked)}' is not a record of this review (record "
        f"'{asked}' is: a spreadsheet dropped the id's leading zeros; format the id column as text)")
    (tmp_path / "a.csv").write_text(f"record_id,decision\n{asked},0\n")
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "a.csv")
    assert code == 2 and "; it names 'record_id', 'decision'; if another column holds the answers, name it " \
        "with --label-column" in err, err
    assert _run("review", "label", "--folder", folder, "--from", tmp_path / "a.csv",
                "--label-column", "decision")[0] == 0


def test_what_a_spreadsheet_did_to_an_id_is_said_only_where_it_could_have() -> None:
    """Zeros are dropped, never added; where several records could be the id, all are named, in
    one order (a set's order had picked one by the hash seed)."""
    said = session._spreadsheet_id
    assert said("59", {"059", "59x"}) == (" (record '059' is: a spreadsheet dropped the id's leading zeros; "
                                          "format the id column as text)")
    assert said("0", {"00"}).startswith(" (record '00' is: a spreadsheet dropped")
    assert said("059", {"59"}) == "" and said("59", {"159", "5900"}) == ""
    assert said("7", {"0007", "07", "007"}) == (" (records '07', '007', '0007' are: a spreadsheet drops an "
                                                "id's leading zeros, so it is one of them; format the id "
                                                "column as text)")
    assert said("169.0", {"169"}).startswith(" (record '169' is: a spreadsheet wrote the id as a number")


def _recorded(folder: Path) -> dict[str, int]:
    lines = (folder / "review.jsonl").read_text().splitlines()
    return {s["doc_id"]: s["label"] for s in map(json.loads, lines)}


def test_simulating_twice_into_one_folder_says_how_to_go_on(tmp_path: Path) -> None:
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "S"
    assert _run("review", "simulate", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0
    code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--folder", folder, "--seed", 1)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "already holds a review" in err and "rankcut review label --simulate" in err


def test_name_calls_the_review_and_the_file_is_still_named_in_messages(tmp_path: Path) -> None:
    # records.csv, as a database export is called: the certificate said "Review … of records"
    _labelled(tmp_path / "records.csv")
    (tmp_path / "blank.csv").write_text("record_id,title,abstract\nr1,,\nr2,dogs bark,dogs bark loudly\n")
    folder = tmp_path / "S"
    code, out, err = _run("review", "simulate", tmp_path / "records.csv", "--folder", folder, "--seed", 1,
                          "--name", "Cats update 2026", "--target-recall", 0.8)
    assert code == 0, err
    assert "Review " in out and " of Cats_update_2026, 40 records" in out and " of records" not in out
    code, _, err = _run("review", "start", tmp_path / "blank.csv", "--folder", tmp_path / "B",
                        "--seed", 1, "--name", "Dogs")
    assert code == 0
    assert f"warning: {tmp_path / 'blank.csv'}: 1 record has neither title nor abstract" in err
    code, _, err = _run("review", "start", tmp_path / "records.csv", "--folder", tmp_path / "E",
                        "--name", " ")
    assert code == 2 and len(err.strip().splitlines()) == 1 and not (tmp_path / "E").exists()
    assert "--name must name the review (it is empty): leave it out to call the review by its file, " \
           "records.csv" in err


def test_threshold_grades_qrels_as_trec_dl_does(tmp_path: Path, monkeypatch) -> None:
    # graded qrels (TREC DL: 1 related, 2 relevant): every grade > 0 was relevant, with no way to say 2
    rows = [f"r{i},Study {i},{'cats purr softly' if i % 4 == 0 else 'dogs bark loudly'} {i}"
            for i in range(40)]
    (tmp_path / "r.csv").write_text("record_id,title,abstract\n" + "\n".join(rows) + "\n")
    (tmp_path / "q.txt").write_text("".join(f"R 0 r{i} {2 if i % 4 == 0 else 1}\n" for i in range(0, 40, 2)))
    args = (tmp_path / "r.csv", "--qrels", tmp_path / "q.txt", "--seed", 1, "--target-recall", 0.8)
    code, out, err = _run("review", "simulate", *args, "--folder", tmp_path / "A", "--threshold", 2)
    assert code == 0, err
    assert "with the known labels: 10 of 10 relevant records found" in out
    # the qrels judge half the records: the others count as not relevant, which was not said
    assert (f"note: {tmp_path / 'q.txt'}: 20 of the 40 records are not judged and count as not relevant "
            "(trec_eval's rule)") in err, err
    code, out, _ = _run("review", "next", "--folder", tmp_path / "A", "--batch", 5, "--out",
                        tmp_path / "b.csv")
    assert code == 0 and f"{tmp_path / 'b.csv'} is not written: the review asks for no further record" in out
    assert not (tmp_path / "b.csv").exists()   # certified: said, not silently skipped
    code, out, err = _run("review", "simulate", *args, "--folder", tmp_path / "B")
    assert code == 0 and "of 20 relevant records found" in out, err
    # a file that labels every record and qrels too: the qrels were ignored without a word
    _labelled(tmp_path / "lab.csv")
    code, _, err = _run("review", "simulate", tmp_path / "lab.csv", *args[1:], "--folder", tmp_path / "L")
    assert code == 2 and "lab.csv: its column label_included labels every record, and --qrels" in err, err
    assert not (tmp_path / "L").exists()
    (tmp_path / "r.run").write_text("".join(f"R Q0 r{i} {i + 1} {40 - i} bm25\n" for i in range(40)))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"doc_id": f"r{i}", "text": row}) + "\n"
                                              for i, row in enumerate(rows)))
    code, out, err = _run("review", "simulate", tmp_path / "r.run", "--format", "trec", "--texts",
                          tmp_path / "t.jsonl", *args[1:], "--folder", tmp_path / "T", "--threshold", 2)
    assert code == 0 and "of 10 relevant records found" in out, err
    assert f"note: {tmp_path / 'q.txt'}: 20 of the 40 records are not judged" in err, err   # a run's too
    code, _, err = _run("review", "simulate", tmp_path / "r.run", "--format", "trec", "--texts",
                        tmp_path / "t.jsonl", *args[1:], "--folder", tmp_path / "N", "--name", "R2")
    assert code == 2 and "--name is not for --format trec: the review of a run is called by its query" in err
    # qrels that judge nothing here, or nothing relevant: "met, 0 of 0 found" was printed without a word
    (tmp_path / "other.txt").write_text("S 0 r1 2\n")
    (tmp_path / "elsewhere.txt").write_text("R 0 x1 2\n")
    for folder, more, says in (
            ("T2", ("--format", "trec", "--texts", tmp_path / "t.jsonl", "--qrels", tmp_path / "other.txt"),
             "other.txt: the qrels judge no document of query 'R': give the qrels of the run's query"),
            ("T3", ("--format", "trec", "--texts", tmp_path / "t.jsonl", "--qrels", tmp_path / "q.txt",
                    "--threshold", 3),
             "q.txt: the qrels grade none of the records relevant (at least 3; the highest grade among them "
             "is 2): a threshold of at most that (--threshold) counts it, or give other qrels"),
            ("T4", ("--format", "trec", "--texts", tmp_path / "t.jsonl", "--qrels", tmp_path / "q.txt",
                    "--query", "S"), "r.run: the run holds no query 'S' (it holds 1: 'R')")):
        code, _, err = _run("review", "simulate", tmp_path / "r.run", *more, "--folder", tmp_path / folder,
                            "--seed", 1)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / folder).exists()
    code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--qrels", tmp_path / "elsewhere.txt",
                        "--folder", tmp_path / "E", "--seed", 1)
    assert code == 2 and "elsewhere.txt: the qrels judge none of the 40 records (their documents are " \
                         "others, e.g. 'x1'): give the qrels of these records" in err, err
    code, _, err = _run("review", "label", "--folder", tmp_path / "C", "--simulate", "--qrels",
                        tmp_path / "q.txt")   # before start: the folder is named, not its records.run
    assert code == 2 and f"{tmp_path / 'C'} does not exist" in err and "records.run" not in err, err
    from rankcut.audit import workflow

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(workflow, "certify", interrupted)
        code, _, err = _run("review", "simulate", *args, "--folder", tmp_path / "D", "--threshold", 2)
        code, _, err2 = _run("review", "start", *args, "--folder", tmp_path / "D2", "--threshold", 2,
                             "--simulate")
    assert code == 130 and "resume with rankcut review label --folder" in err, err
    assert err.rstrip().endswith(f"--qrels {tmp_path / 'q.txt'} --threshold 2"), err   # graded the same
    resume = err2.split("resume with ", 1)[1].split()   # start --simulate's: qrels, not the records too
    assert "--records" not in resume and resume[-2:] == ["--threshold", "2"], err2
    code, _, err = _run(*resume[1:])
    assert code == 0, err
    # start, then label --simulate: the same review as simulate's at the same grade
    assert _run("review", "start", tmp_path / "r.csv", "--folder", tmp_path / "C", "--seed", 1,
                "--target-recall", 0.8)[0] == 0
    code, _, err = _run("review", "label", "--folder", tmp_path / "C", "--simulate", "--qrels",
                        tmp_path / "q.txt", "--threshold", 2)
    assert code == 0, err
    assert (tmp_path / "A" / "review.jsonl").read_text() == (tmp_path / "C" / "review.jsonl").read_text()
    code, _, err = _run("review", "label", "--folder", tmp_path / "C", "--simulate", "--qrels",
                        tmp_path / "elsewhere.txt")
    assert code == 2 and "elsewhere.txt: the qrels judge none of the 40 records" in err, err
    for bad, says in ((("--threshold", 2), "--threshold is the grade --qrels count as relevant: it goes "
                                           "with --qrels"),
                      (("--qrels", tmp_path / "q.txt", "--threshold", 0), "--threshold must be > 0")):
        code, _, err = _run("review", "label", "--folder", tmp_path / "C", "--simulate", *bad)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1, err


def test_simulate_and_label_take_one_query_of_qrels_by_one_rule(tmp_path: Path) -> None:
    """``simulate`` and ``label --simulate`` read qrels by the same rule (records.qrels_labels):
    the review's query, else the one query the qrels hold; a run's review only its run's query
    (``simulate`` refused qrels of several queries that ``label`` took; ``label`` took qrels of
    another query for a run's review)."""
    rows = [f"r{i},Study {i},{'cats purr' if i % 4 == 0 else 'dogs bark'} {i}" for i in range(40)]
    (tmp_path / "r.csv").write_text("record_id,title,abstract\n" + "\n".join(rows) + "\n")
    mine = "".join(f"r 0 r{i} 1\n" for i in range(0, 40, 4))   # the review of r.csv is called 'r'
    (tmp_path / "many.txt").write_text(mine + "S 0 r1 1\nS 0 r2 1\n")
    (tmp_path / "others.txt").write_text("S 0 r1 1\nT 0 r2 1\n")
    code, out, err = _run("review", "simulate", tmp_path / "r.csv", "--qrels", tmp_path / "many.txt",
                          "--folder", tmp_path / "A", "--seed", 1, "--target-recall", 0.8)
    assert code == 0 and "with the known labels: 10 of 10 relevant records found" in out, err
    code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--qrels", tmp_path / "others.txt",
                        "--folder", tmp_path / "B", "--seed", 1)
    assert code == 2 and "others.txt: the qrels hold 2 queries, none of them the review's 'r': give qrels " \
                         "of one query, or of 'r'" in err, err
    assert not (tmp_path / "B").exists()
    (tmp_path / "r.run").write_text("".join(f"R Q0 r{i} {i + 1} {40 - i} bm25\n" for i in range(40)))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"doc_id": f"r{i}", "text": row}) + "\n"
                                              for i, row in enumerate(rows)))
    (tmp_path / "s.txt").write_text("S 0 r0 1\nS 0 r4 1\n")   # another query's, of the same documents
    assert _run("review", "start", tmp_path / "r.run", "--format", "trec", "--texts", tmp_path / "t.jsonl",
                "--folder", tmp_path / "T", "--seed", 1)[0] == 0
    code, _, err = _run("review", "label", "--folder", tmp_path / "T", "--simulate", "--qrels",
                        tmp_path / "s.txt")
    assert code == 2 and "s.txt: the qrels judge no document of query 'R': give the qrels of the run's " \
                         "query" in err, err


def test_prior_knowledge_the_audit_meets_is_answered_from_it_and_never_asked(tmp_path: Path) -> None:
    # 140 of 150 records labelled before the session: the policy audits after its first 100 screening
    # reads, and the audit meets records of the prior knowledge. A batch listed them, label-less, to be
    # read again, and label --from stopped at the first one (the file had no label for it)
    import csv

    from rankcut.audit.labels import LabelStore

    relevant = {0, 50, 100, 145, 148}
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]
    texts = ["cats purr" if i in relevant else f"dogs {words[i % 10]} {words[i // 10 % 10]}"
             for i in range(150)]
    rows = [f"r{i},Study {i},{texts[i]},{int(i in relevant) if i < 140 else ''}" for i in range(150)]
    (tmp_path / "r.csv").write_text("record_id,title,abstract,label_included\n" + "\n".join(rows) + "\n")
    prior = {f"r{i}" for i in range(140)}
    folder = tmp_path / "R"
    code, out, err = _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1,
                          "--target-recall", 0.8)
    assert code == 0, err
    assert "recorded the prior knowledge: 105 records; 35 more when the review asks for them (140 known " \
           "before the session, from the column label_included" in out   # 100 screened, 5 audit draws met
    code, _, err = _run("review", "next", "--folder", folder, "--batch", 30, "--out", tmp_path / "b.csv")
    assert code == 0, err
    with open(tmp_path / "b.csv", newline="") as f:
        batch = list(csv.DictReader(f))
    assert batch and not prior & {r["record_id"] for r in batch}
    for r in batch:
        r["label"] = str(int(int(r["record_id"][1:]) in relevant))
    with open(tmp_path / "b.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(batch[0]))
        w.writeheader()
        w.writerows(batch)
    info = session.status(folder)
    code, out, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "b.csv")
    assert code == 0, err
    after = session.status(folder)
    met_prior, answered = after["prior_read"] - info["prior_read"], len(batch) - after["kept"]
    assert met_prior > 0 and answered > 0 and after["read"] == info["read"] + answered + met_prior
    assert f"recorded {answered + met_prior} labels (file b.csv sha256:" in out
    assert f"and the prior knowledge, {met_prior} of them)" in out
    with LabelStore(folder / "labels.sqlite", readonly=True) as store:
        by = {e.doc_id: e.source for e in store.history()}
    assert {by[r] for r in by if r in prior} == {session.PRIOR_SOURCE}
    assert sum(by.get(r["record_id"], "").startswith("file b.csv sha256:") for r in batch) == answered
    # a corrected review gives its old answers again: the prior knowledge its audit meets is answered too
    wrong = next(r["record_id"] for r in batch if r["record_id"] in by and r["label"] == "0")
    code, _, err = _run("review", "correct", "--folder", folder, "--into", tmp_path / "R2", "--relabel",
                        f"{wrong}=1")
    assert code == 0, err
    info = session.status(tmp_path / "R2", ahead=3)
    assert info["next_record"] is None or info["next_record"]["record_id"] not in prior
    assert not prior & {r["record_id"] for r in info["next_records"]}
    assert not prior & {r["record_id"] for r in session.status(tmp_path / "R2")["next_records"]}


def test_a_semicolon_separated_csv_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("record_id;title;abstract\n1;cats sleep;cats sleep well\n")
    code, _, err = _run("review", "start", tmp_path / "r.csv", "--folder", tmp_path / "R")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "r.csv, line 1: the header names no 'title' column" in err
    assert "the file looks separated by ';': save it with ',' (*.csv) or tabs (*.tsv)" in err


def test_start_says_which_label_column_it_read_and_that_a_full_one_is_not_used(tmp_path: Path) -> None:
    _labelled(tmp_path / "r.csv")
    code, out, err = _run("review", "start", tmp_path / "r.csv", "--folder", tmp_path / "A", "--seed", 1)
    assert code == 0, err
    assert err.strip().splitlines() == [
        f"warning: {tmp_path / 'r.csv'}: its column label_included labels every record, but a review asks "
        "the reviewer for each record it reads, so those labels are not used: add --simulate to play them "
        "as the reviewer, or leave empty the labels not known before the session (those given are its "
        "prior knowledge)"]
    lines = (tmp_path / "r.csv").read_text().splitlines()
    partial = [ln if i in (0, 1, 2) else ln.rsplit(",", 1)[0] + "," for i, ln in enumerate(lines)]
    (tmp_path / "p.csv").write_text("\n".join(partial) + "\n")     # r0 (1) and r1 (0) known before
    code, out, err = _run("review", "start", tmp_path / "p.csv", "--folder", tmp_path / "B", "--seed", 1)
    assert code == 0 and not err, err
    assert "recorded the prior knowledge: 2 records (2 known before the session, from the column " \
           "label_included: 1 relevant, 1 not)" in out   # it did not say how many were relevant


def test_a_changed_frozen_file_is_refused_in_a_reviewers_words(tmp_path: Path) -> None:
    _labelled(tmp_path / "r.csv")
    lines = (tmp_path / "r.csv").read_text().replace(",1\n", ",\n").replace(",0\n", ",\n")
    (tmp_path / "s.csv").write_text(lines)
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "s.csv", "--folder", folder, "--seed", 1)[0] == 0
    texts = folder / "records.jsonl"
    texts.write_text(texts.read_text().replace("cats", "kittens", 1))
    for command in ("next", "status"):
        code, _, err = _run("review", command, "--folder", folder)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"error: the review's texts {texts} changed after the audit was frozen")
        assert err.rstrip().endswith("restore the file or start a new review (rankcut review start)")
        assert "--texts" not in err and "freeze" not in err


def test_a_missing_label_file_is_named_with_its_option(tmp_path: Path) -> None:
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "R"
    assert _run("review", "simulate", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0
    code, _, err = _run("review", "label", "--folder", folder, "--from", tmp_path / "none.csv")
    assert code == 2
    assert err.strip() == f"error: --from {tmp_path / 'none.csv'}: no such file — nothing was recorded"


def test_a_report_before_any_record_is_read_says_to_read_first(tmp_path: Path) -> None:
    """It said "no certificate yet: run certify first", and certify writes none with nothing read."""
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0
    code, _, err = _run("review", "report", "--folder", folder, "--out", tmp_path / "report.html")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"review {folder}: nothing is read yet, so there is no certificate to report: read records " \
        f"first (rankcut review next --folder {folder}, then label)" in err
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "report.json").exists()


def test_rankcut_audit_steps_on_a_review_folder_name_the_review_command(tmp_path: Path) -> None:
    """A review folder is an audit folder too, and rankcut audit's steps ran there: audit label
    recorded a step but not the answers kept in pending-labels.csv, so the review asked again for
    a record already answered, and plan and status named rankcut audit label as the next step.
    certify and report, which recompute and write, still take it (tests/cli/test_cli_review.py)."""
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0
    before = sorted(p.name for p in folder.iterdir())
    for command, theirs in (("plan", "status"), ("sample", "next"), ("label", "label"),
                            ("status", "status"), ("read-on", "read-on")):
        code, out, err = _run("audit", command, "--audit", folder)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1, (command, err)
        assert err.strip() == (f"error: {folder} is a review of rankcut review start: use rankcut review "
                               f"{theirs} --folder {folder}"), err
    assert sorted(p.name for p in folder.iterdir()) == before
    # certify, which recomputes, takes it, and names the review's commands (it named audit label)
    session.label(folder, known={f"r{i}": int(i % 4 == 0) for i in range(40)}, limit=3)
    code, out, _ = _run("audit", "certify", "--audit", folder)
    assert code == 1 and ("next: label on (rankcut review label); rankcut review status names the next "
                          "record and why") in out, out


def test_a_simulation_with_nothing_relevant_to_find_is_refused(tmp_path: Path) -> None:
    """A label column with no relevant record (most often the wrong column) was played to a
    certificate at once ("0 of 0 relevant records found"); qrels of none were refused already."""
    rows = [f"r{i},Study {i},dogs bark {i},0,{int(i % 4 == 0)}" for i in range(40)]
    (tmp_path / "r.csv").write_text("record_id,title,abstract,included,label_included\n" + "\n".join(rows)
                                    + "\n")
    code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--folder", tmp_path / "S", "--seed", 1)
    assert code == 2 and err.strip() == (
        "error: r: the labels the simulation plays (column included) mark none of the 40 records "
        "relevant: a review with nothing to find is met at once, which is no simulation of it; give the "
        "labels of the relevant records (another column: --label-column)"), err
    assert not (tmp_path / "S").exists()
    code, _, err = _run("review", "simulate", tmp_path / "r.csv", "--label-column", "label_included",
                        "--folder", tmp_path / "S", "--seed", 1)
    assert code == 0, err


def test_ctrl_c_in_interactive_labelling_resumes_with_interactive_labelling(tmp_path: Path,
                                                                            monkeypatch) -> None:
    """It said "resume with rankcut review next", which only names the record."""
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "label", interrupted)
    code, _, err = _run("review", "label", "--folder", folder, "--interactive")
    assert code == 130 and err.strip().endswith(
        f"resume with rankcut review label --folder {folder} --interactive"), err
    # a reviewer named is named again in the command that resumes
    code, _, err = _run("review", "label", "--folder", folder, "--interactive", "--reviewer", "Ada L")
    assert code == 130 and err.strip().endswith(
        f"resume with rankcut review label --folder {folder} --interactive --reviewer 'Ada L'"), err


def test_simulating_on_from_a_reviewer_s_labels_says_where_they_differ(tmp_path: Path) -> None:
    """label --simulate on a review a reviewer began went on silently from answers its known
    labels contradict."""
    _labelled(tmp_path / "r.csv")
    folder = tmp_path / "R"
    assert _run("review", "start", tmp_path / "r.csv", "--folder", folder, "--seed", 1)[0] == 0
    truth = {f"r{i}": int(i % 4 == 0) for i in range(40)}
    first = session.next_record(folder)["record_id"]
    (tmp_path / "a.csv").write_text(f"record_id,label\n{first},{1 - truth[first]}\n")
    assert session.label(folder, from_file=tmp_path / "a.csv").recorded == 1
    code, _, err = _run("review", "label", "--folder", folder, "--simulate", "--records", tmp_path / "r.csv",
                        "--next", 2)
    assert code == 0 and (f"warning: the known labels say otherwise than 1 recorded step (record {first}): a "
                          "recorded step stands") in err, err


def test_a_missing_records_file_and_an_audit_folder_are_named(tmp_path: Path) -> None:
    """A missing records file was a bare "[Errno 2] No such file or directory"; an audit's folder
    was "its screener is None"."""
    code, _, err = _run("review", "start", tmp_path / "nothere.ris", "--folder", tmp_path / "R")
    assert code == 2 and err.strip() == f"error: the records {tmp_path / 'nothere.ris'}: no such file", err
    run = "".join(f"q{q} Q0 d{q}-{r} {r + 1} {10 - r} s\n" for q in range(2) for r in range(10))
    (tmp_path / "r.run").write_text(run)
    cut = [line for line in run.splitlines() if int(line.split()[3]) <= 3]
    (tmp_path / "c.run").write_text("".join(line + "\n" for line in cut))
    assert _run("audit", "freeze", "--run", tmp_path / "r.run", "--cut", tmp_path / "c.run", "--design",
                "excluded", "--max-missed", 5, "--out", tmp_path / "A")[0] == 0
    code, _, err = _run("review", "status", "--folder", tmp_path / "A")
    assert code == 2 and err.strip() == (f"error: {tmp_path / 'A'} is not a review folder of rankcut review "
                                         "(an audit's, of the excluded design): use rankcut audit on it"), err
