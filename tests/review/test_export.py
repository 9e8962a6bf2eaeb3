"""``rankcut review export``: the review's records with their labels, the records read in reading
order, then the unread ones (as ASReview exports a project)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from review_testdata import toy_records
from typer.testing import CliRunner

from rankcut.cli.main import app
from rankcut.data.screening import LABEL_COLUMNS
from rankcut.review import export as export_module
from rankcut.review import session
from rankcut.review.export import EXPORT_COLUMNS, _export_header
from rankcut.review.export import export as write_export
from rankcut.review.records import Records

POLICY = "projected-cost:batch=10,chunk=5"


@pytest.fixture
def records() -> Records:
    return toy_records(80, 8, seed=2)


def _rows(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter=delimiter))


def test_the_export_lists_the_records_read_in_reading_order_then_the_unread(records: Records,
                                                                            tmp_path: Path) -> None:
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    relevant = next(rid for rid, y in truth.items() if y)
    folder = tmp_path / "R"
    session.start(records.with_prior({relevant: 1}), folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=30)
    out = tmp_path / "export.csv"
    counts = write_export(folder, out)
    rows = _rows(out)
    steps = [json.loads(x) for x in (folder / "review.jsonl").read_text().splitlines()]
    assert tuple(rows[0]) == (*EXPORT_COLUMNS, "text")
    assert len(rows) == len(records) == counts["records"]
    assert [(r["record_id"], int(r["label"]), int(r["step"]), r["move"]) for r in rows[:len(steps)]] == \
        [(s["doc_id"], s["label"], s["step"], s["move"]) for s in steps]
    assert [r["prior_knowledge"] for r in rows].count("yes") == 1
    assert {r["prior_knowledge"] for r in rows} == {"yes", "no"}
    short = session.load_review(folder).short_id
    assert {r["review"] for r in rows} == {short}   # an export names its review
    assert rows[0]["record_id"] == relevant   # the prior knowledge is read first
    unread = rows[len(steps):]
    read = {s["doc_id"] for s in steps}
    assert [r["record_id"] for r in unread] == [rid for rid in records.ids if rid not in read]
    assert all(r["label"] == r["step"] == r["move"] == "" for r in unread)
    assert rows[5]["text"] == records.texts[records.ids.index(rows[5]["record_id"])]
    info = session.status(folder)
    assert counts == {"records": len(records), "read": info["read"], "relevant": info["found"],
                      "kept_relevant": 0, "prior_relevant": 0, "columns_of": "", "no_columns": ""}

    # only the relevant ones, as TSV; an earlier export is replaced, any other file is refused
    tsv = tmp_path / "included.tsv"
    assert write_export(folder, tsv, relevant_only=True)["records"] == info["found"]
    assert [r["record_id"] for r in _rows(tsv, "\t")] == [s["doc_id"] for s in steps if s["label"] == 1]
    write_export(folder, out)
    mine = tmp_path / "records.csv"
    mine.write_text("record_id,title\n1,mine\n")
    with pytest.raises(FileExistsError, match="records.csv exists and is not an export of a review"):
        write_export(folder, mine)
    assert mine.read_text() == "record_id,title\n1,mine\n"
    # another review's export is not replaced (a second review of the same records, another seed)
    other = tmp_path / "R2"
    session.start(records, other, target_recall=0.8, seed=5, policy=POLICY)
    before = out.read_text()
    with pytest.raises(FileExistsError, match=re.escape(
            f"{out} is an export of review {short}, not of this one ({session.load_review(other).short_id}): "
            "name a new file (or remove that one)")):
        write_export(other, out)
    assert out.read_text() == before
    with pytest.raises(ValueError, match=r"x.xlsx: an export is written as CSV, TSV or RIS: name it \*\.csv, "
                                         r"\*\.tsv or \*\.ris"):
        write_export(folder, tmp_path / "x.xlsx")
    assert not (tmp_path / "x.xlsx").exists()


def test_the_export_goes_to_stdout_alone(records: Records, tmp_path: Path) -> None:
    """``export --out /dev/stdout`` (or ``-``) was refused as "name it *.csv": the CSV is piped on,
    what was written said on stderr. A link to /dev/stdout in the test's folder stands for it (a
    regression replaces only that link). A batch to fill in still names a file, saying why."""
    import subprocess
    import sys

    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=10)
    write_export(folder, tmp_path / "file.csv")
    link = tmp_path / "stdout.csv"
    link.symlink_to("/dev/stdout")
    for out in (str(link), "-"):
        done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "review",
                               "export", "--folder", str(folder), "--out", out], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)   # it read the link: a hang
        assert done.returncode == 0, done.stderr
        assert done.stdout == (tmp_path / "file.csv").read_text()
        assert done.stderr.startswith(f"wrote {len(records)} records to {out} (10 read, ")
    assert link.is_symlink() and not (tmp_path / "-").exists()
    res = CliRunner().invoke(app, ["review", "next", "--folder", str(folder), "--out", "batch.txt"])
    assert res.exit_code == 2 and "a batch is a file to fill in and give back to label --from" in res.stderr


def _file(path: Path, records: Records, known: int) -> Path:
    """The records as a reviewer's CSV: its own columns besides title and abstract, a ``Label``
    (case apart, the review's name) holding the prior knowledge (record number ``known``), and a
    field with a comma."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["pubmedID", "title", "abstract", "authors", "Label", "record_id"])
        for i, rid in enumerate(records.ids):
            w.writerow([f"pm{i}", records.titles[i], records.abstracts[i], f"Doe, J.; Roe, {i}",
                        "1" if i == known else "", rid])
    return path


def test_the_files_label_columns_are_renamed_so_asreview_reads_the_reviews() -> None:
    """ASReview takes the first of its label names it finds (``included`` before ``label``): a
    file's own label column, kept under its name, would be read instead of the review's labels."""
    header = _export_header(["record_id", "included", "label_included", "Label", "title", "file_label"])
    assert header[len(EXPORT_COLUMNS):] == ("file_included", "file_label_included", "file_Label", "title",
                                            "file_file_label")
    assert not {c.lower() for c in header[len(EXPORT_COLUMNS):]} & set(LABEL_COLUMNS)


def test_the_export_carries_the_columns_of_the_records_file(records: Records, tmp_path: Path) -> None:
    """A review started from a CSV exports that file's columns after its own, as the file holds
    them; once the file changed (or for records from no table) it gives the screened text."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    known = int(records.labels.argmax())   # a relevant record: the prior knowledge
    source = _file(tmp_path / "mine.csv", records, known)
    folder, out = tmp_path / "R", tmp_path / "export.csv"
    runner = CliRunner()
    started = runner.invoke(app, ["review", "start", str(source), "--folder", str(folder), "--seed",
                                  "4", "--target-recall", "0.8", "--policy", POLICY])
    assert started.exit_code == 0, started.output
    session.label(folder, known=truth, limit=12)
    result = runner.invoke(app, ["review", "export", "--folder", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(f"with the columns of {source.resolve()}")
    with open(out, newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    assert header == [*EXPORT_COLUMNS, "pubmedID", "title", "abstract", "authors", "file_Label"]
    with open(source, newline="", encoding="utf-8") as f:
        given = {r["record_id"]: r for r in csv.DictReader(f)}
    for row in rows:
        mine = dict(zip(header, row, strict=True))
        own = given[mine["record_id"]]
        assert [mine["pubmedID"], mine["title"], mine["abstract"], mine["authors"], mine["file_Label"]] == \
            [own["pubmedID"], own["title"], own["abstract"], own["authors"], own["Label"]]
    assert rows[0][0] == records.ids[known] and rows[0][4] == "yes"   # the prior knowledge, read first
    assert len(rows) == len(records)

    def refused(*args: object, **kwargs: object) -> None:   # a reading rule added after the review started
        raise ValueError(f"{source}: the column 'id' reads like the record ids")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(export_module, "read_table", refused)
        said = write_export(folder, out)["no_columns"]
    assert said == f"{source.resolve()} is not read as a table of records now ({source}: the column 'id' " \
        "reads like the record ids)"
    assert out.read_text().splitlines()[0].split(",") == [*EXPORT_COLUMNS, "text"]   # still exported

    source.write_text(source.read_text().replace("pm0,", "pm-edited,"))   # changed since start
    result = runner.invoke(app, ["review", "export", "--folder", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"note: {source.resolve()} changed since the review started, so the export gives the title " \
        "and abstract the review screened (column text)" in result.stdout
    header = out.read_text().splitlines()[0].split(",")
    assert header == [*EXPORT_COLUMNS, "text"]
    source.unlink()
    assert write_export(folder, out)["no_columns"] == f"{source.resolve()} is gone"


def test_the_command_says_what_it_wrote(records: Records, tmp_path: Path) -> None:
    assert records.labels is not None
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=dict(zip(records.ids, records.labels.tolist(), strict=True)), limit=20)
    found = session.status(folder)["found"]
    result = CliRunner().invoke(app, ["review", "export", "--folder", str(folder), "--out",
                                      str(tmp_path / "rel.csv"), "--relevant"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"wrote {found} relevant records to {tmp_path / 'rel.csv'} (20 read, " \
        f"{found} relevant)"
    missing = CliRunner().invoke(app, ["review", "export", "--folder", str(tmp_path / "none"), "--out",
                                       str(tmp_path / "x.csv")])
    assert missing.exit_code == 2 and "review folder" in missing.stderr and "does not exist" in missing.stderr


def test_answers_kept_relevant_are_said_and_exported(records: Records, tmp_path: Path) -> None:
    """A record answered relevant that the review has not asked for (a batch read ahead) counts in
    no certificate: status, certify and export say so, and export --relevant lists it as 'kept'.
    Known labels (a simulation) that differ from a kept answer drop it, with a warning."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=5)
    read = {json.loads(x)["doc_id"] for x in (folder / "review.jsonl").read_text().splitlines()}
    later = [rid for rid in records.ids if rid not in read][-2:]   # far down: not asked soon
    session.keep(folder, {later[0]: 1, later[1]: 0}, "serve reviewer Bob")
    info = session.status(folder)
    assert info["kept_relevant"] == [later[0]] and info["kept"] == 2
    runner = CliRunner()
    said = runner.invoke(app, ["review", "status", "--folder", str(folder)]).stdout
    assert "kept: 2 answers for records the review has not asked for, 1 of them relevant" in said
    assert ("5 of 80 records read (5 screened, 0 audited; +2 answered, kept until the review asks for them), "
            in said)
    out = tmp_path / "rel.csv"
    result = runner.invoke(app, ["review", "export", "--folder", str(folder), "--out", str(out),
                                 "--relevant"])
    assert "relevant, 1 more answered relevant but kept)" in result.stdout
    assert "note: 1 record answered relevant is kept, not recorded" in result.stdout
    rows = _rows(out)
    assert [(r["record_id"], r["move"]) for r in rows][-1] == (later[0], "kept")
    assert len(rows) == info["found"] + 1
    certified = runner.invoke(app, ["review", "certify", "--folder", str(folder)])
    kept = f"so no certificate counts it (it stays a relevant record of your review): {later[0]}"
    assert kept in certified.stdout
    reported = runner.invoke(app, ["review", "report", "--folder", str(folder), "--out",
                                   str(tmp_path / "r.md")])
    assert reported.exit_code == 0 and kept in reported.stdout   # and in the report itself (it was not)
    assert (f"- Note: 1 record answered relevant is kept, not recorded: the review has not asked for it, "
            f"{kept}.") in (tmp_path / "r.md").read_text()
    with pytest.warns(UserWarning, match=r"the known labels replace 1 kept answer that says otherwise"):
        session.label(folder, known={**truth, later[0]: 0, later[1]: 0}, limit=1)
    assert session.kept_answers(folder) == {later[1]: 0}
    said = runner.invoke(app, ["review", "status", "--folder", str(folder)]).stdout
    assert "kept: 1 answer for a record the review has not asked for (recorded when it does)" in said
    pending = (folder / "pending-labels.csv").read_text()
    assert later[0] not in pending and later[1] in pending   # the file holds only what is still kept


def _ris(path: Path, records: Records, known: int) -> Path:
    """The records as a reviewer's RIS file: authors, a DOI, a tag rispy does not know, a note, the
    record ``known`` labelled relevant in ASReview's note (the prior knowledge), and the last
    record without an ID (its number in the file is its ID)."""
    entries = []
    for i, rid in enumerate(records.ids):
        lines = ["TY  - JOUR"] + ([f"ID  - {rid}"] if i < len(records) - 1 else []) + [
            f"TI  - {records.titles[i]}", "AU  - Doe, J.", f"AU  - Roe, {i}.",
            f"AB  - {records.abstracts[i]}", f"DO  - 10.1/{i}", "ZZ  - a tag of its own",
            f"N1  - a note of record {i}"]
        if i == known:
            lines.append("N1  - ASReview_relevant")
        entries.append("\n".join(lines + ["ER  - ", ""]))
    path.write_text("\n".join(entries))
    return path


def test_a_ris_review_exports_its_ris_file_with_the_labels(records: Records, tmp_path: Path) -> None:
    """A review of a RIS file exports that file, every tag kept, its labels in ASReview's notes
    (which ASReview's reader, and ours, read back), in the table's order; a RIS export of a review
    of a CSV is refused; an earlier RIS export of the review is replaced, another file refused."""
    from rankcut.review.records import load_records

    assert records.labels is not None
    last = len(records) - 1
    truth = dict(zip(records.ids[:last] + (str(len(records)),), records.labels.tolist(), strict=True))
    known = int(records.labels.argmax())
    source = _ris(tmp_path / "mine.ris", records, known)
    folder = tmp_path / "R"
    session.start(load_records(source), folder, target_recall=0.8, seed=4, policy=POLICY,
                  sources=[source])
    session.label(folder, known=truth, limit=25)
    table = _rows(tmp_path / "t.csv") if write_export(folder, tmp_path / "t.csv") else []
    out = tmp_path / "labelled.ris"
    counts = write_export(folder, out)
    assert counts["records"] == len(records) and counts["columns_of"] == str(source.resolve())
    back = load_records(out)   # read as ASReview would: the labels of the records read are its labels
    assert list(back.ids) == [r["record_id"] for r in table]
    short = session.load_review(folder).short_id
    for row, prior in zip(table, back.prior.tolist(), strict=True):
        assert prior == (int(row["label"]) if row["label"] else -1)
    text = out.read_text()
    assert text.startswith("TY  - ") and re.search(r"^\d+\.$", text, re.M) is None   # no rispy numbering
    assert text.count("ZZ  - a tag of its own") == text.count("AU  - Doe, J.") == len(records)
    assert text.count("ASReview_relevant") == sum(r["label"] == "1" for r in table)   # the old note replaced
    steps = [r for r in table if r["step"]]
    assert f"N1  - rankcut review {short}: step 1, {steps[0]['move']}, prior knowledge" in text
    assert f"N1  - rankcut review {short}: not read" in text
    assert f"a note of record {known}" in text
    assert f"ID  - {len(records)}\n" in text   # the record without an ID: the review's ID for it

    relevant = tmp_path / "included.ris"
    assert write_export(folder, relevant, relevant_only=True)["records"] == session.status(folder)["found"]
    assert "ASReview_irrelevant" not in relevant.read_text() and "not read" not in relevant.read_text()
    write_export(folder, out)   # replaced: an export of this review
    with pytest.raises(FileExistsError, match="mine.ris exists and is not a RIS export of a review"):
        write_export(folder, source)
    other = tmp_path / "R2"
    session.start(load_records(source), other, target_recall=0.8, seed=5, policy=POLICY,
                  sources=[source])
    with pytest.raises(FileExistsError, match=f"is an export of review {short}, not of this one"):
        write_export(other, out)
    csv_review = tmp_path / "C"
    session.start(records, csv_review, target_recall=0.8, seed=4, policy=POLICY)
    with pytest.raises(ValueError, match=r"x\.ris: a RIS export is the RIS file the review's records were "
                                         r"read from, with their labels, and they were not read from a RIS "
                                         r"file: name it \*\.csv or \*\.tsv"):
        write_export(csv_review, tmp_path / "x.ris")
    source.write_text(source.read_text().replace("Doe, J.", "Doe, John"))
    with pytest.raises(ValueError, match="mine.ris changed since the review started: name it"):
        write_export(folder, tmp_path / "y.ris")
    assert not (tmp_path / "x.ris").exists() and not (tmp_path / "y.ris").exists()


def test_a_ris_reviews_table_starts_a_review_again(records: Records, tmp_path: Path) -> None:
    """The CSV export of a review of a RIS file had one column ``text`` (title and abstract joined),
    which no reader of records takes: the table could not start a review again. It now has the RIS
    file's titles and abstracts, and its labels are the new review's prior knowledge."""
    from rankcut.review.records import load_records

    assert records.labels is not None
    last = len(records) - 1
    truth = dict(zip(records.ids[:last] + (str(len(records)),), records.labels.tolist(), strict=True))
    source = _ris(tmp_path / "mine.ris", records, int(records.labels.argmax()))
    folder = tmp_path / "R"
    session.start(load_records(source), folder, target_recall=0.8, seed=4, policy=POLICY, sources=[source])
    session.label(folder, known=truth, limit=25)
    out = tmp_path / "labelled.csv"
    result = CliRunner().invoke(app, ["review", "export", "--folder", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"with the titles and abstracts of {source.resolve()}" in result.stdout
    rows = _rows(out)
    assert tuple(rows[0]) == (*EXPORT_COLUMNS, "title", "abstract")
    given = load_records(source)
    by_id = dict(zip(given.ids, zip(given.titles, given.abstracts, strict=True), strict=True))
    assert all((r["title"], r["abstract"]) == by_id[r["record_id"]] for r in rows)
    again = load_records(out)
    assert sorted(zip(again.ids, again.texts, strict=True)) == \
        sorted(zip(given.ids, given.texts, strict=True))
    labelled = {r["record_id"]: int(r["label"]) for r in rows if r["label"]}
    assert len(labelled) == 25 + 1   # the prior knowledge and the 25 labelled
    assert {rid: y for rid, y in zip(again.ids, again.prior.tolist(), strict=True) if y >= 0} == labelled
    session.start(again, tmp_path / "R2", target_recall=0.8, seed=4, policy=POLICY, sources=[out])
    assert session.status(tmp_path / "R2")["read"] == len(labelled)

    def refused(*args: object, **kwargs: object) -> None:   # a reading rule added after the review started
        raise ValueError("a rule of today's reader")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(export_module, "load_records", refused)
        said = write_export(folder, out)["no_columns"]
    assert said == f"{source.resolve()} is not read as records now (a rule of today's reader)"
    assert out.read_text().splitlines()[0].split(",") == [*EXPORT_COLUMNS, "text"]   # still exported
    source.write_text(source.read_text().replace("Doe, J.", "Doe, John"))   # changed since start
    changed = CliRunner().invoke(app, ["review", "export", "--folder", str(folder), "--out", str(out)])
    assert changed.exit_code == 0, changed.output
    assert f"note: {source.resolve()} changed since the review started, so the export gives the title and " \
        "abstract the review screened (column text)" in changed.stdout
    assert out.read_text().splitlines()[0].split(",") == [*EXPORT_COLUMNS, "text"]


def test_prior_knowledge_not_read_yet_is_exported_with_its_label(records: Records, tmp_path: Path) -> None:
    """A review of records half of which were labelled before the session reads them as the ranker
    reaches them; its export gave those not read yet an empty label (RIS: ASReview_not_seen), so an
    export started from again, or read by ASReview, lost them without a word."""
    from rankcut.review.records import load_records

    assert records.labels is not None
    truth = dict(zip(records.ids[:-1] + (str(len(records)),), records.labels.tolist(), strict=True))
    prior = dict(list(truth.items())[::2])
    source = _ris(tmp_path / "mine.ris", records, -1)
    text = source.read_text().split("ER  - ")
    marked = [entry + (f"N1  - {'ASReview_relevant' if prior[rid] else 'ASReview_irrelevant'}\n"
                       if (rid := list(truth)[i]) in prior else "")
              for i, entry in enumerate(text[:-1])]
    source.write_text("ER  - ".join([*marked, text[-1]]))
    given = load_records(source)
    assert {rid: y for rid, y in zip(given.ids, given.prior.tolist(), strict=True) if y >= 0} == prior
    folder = tmp_path / "R"
    session.start(given, folder, target_recall=0.8, seed=4, policy=POLICY, sources=[source])
    session.label(folder, known=truth, limit=5)
    info = session.status(folder)
    assert info["prior_read"] < len(prior)   # some known labels not read yet: the case
    result = CliRunner().invoke(app, ["review", "export", "--folder", str(folder), "--out",
                                      str(tmp_path / "t.csv")])
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "t.csv")
    labelled = {r["record_id"]: int(r["label"]) for r in rows if r["label"]}
    assert {rid: y for rid, y in labelled.items() if rid in prior} == prior
    unread_prior = [r for r in rows if r["record_id"] in prior and not r["step"]]
    assert unread_prior and all(r["move"] == "" and r["prior_knowledge"] == "yes" for r in unread_prior)
    waiting = sum(int(r["label"]) for r in unread_prior)
    assert f"({info['read']} read, {info['found']} relevant, {waiting} more known relevant before the " \
        "session and not read yet)" in result.stdout
    again = load_records(tmp_path / "t.csv")
    assert {rid: y for rid, y in zip(again.ids, again.prior.tolist(), strict=True) if y >= 0} == labelled
    write_export(folder, tmp_path / "t.ris")
    back = load_records(tmp_path / "t.ris")
    assert {rid: y for rid, y in zip(back.ids, back.prior.tolist(), strict=True) if y >= 0} == labelled
    assert "prior knowledge, not read yet" in (tmp_path / "t.ris").read_text()
    relevant = write_export(folder, tmp_path / "rel.csv", relevant_only=True)
    assert relevant["records"] == sum(labelled.values()) and relevant["relevant"] == info["found"]
