"""A ``rankcut review`` folder on the labelling page (``rankcut serve``, issue 17): the page speaks
of the review and its records, takes the same steps as ``rankcut review label`` and gives the same
certificate, and the answers kept from a batch file read ahead are recorded, or shown, when the
review asks for their records."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from review_testdata import labels_of, toy_records  # noqa: E402

from rankcut.audit import workflow  # noqa: E402
from rankcut.audit.folder import load_audit  # noqa: E402
from rankcut.audit.labels import LabelStore, write_label_file  # noqa: E402
from rankcut.audit.to_label import write_to_label  # noqa: E402
from rankcut.certify.result import format_bound  # noqa: E402
from rankcut.review import session  # noqa: E402
from rankcut.review.records import Records  # noqa: E402
from rankcut.serve.app import create_app  # noqa: E402

POLICY = "projected-cost:batch=10,chunk=5"
TOKEN = "t0ken-for-tests"
ORIGIN = {"origin": "http://testserver"}


@pytest.fixture
def records() -> Records:
    return toy_records(80, 8, seed=2)


def _open(folder: Path) -> TestClient:
    """A browser on the page as ``rankcut serve`` opens it: its notes name rankcut review's steps."""
    from rankcut.cli import review

    client = TestClient(create_app(folder, TOKEN, options=review.OPTIONS))
    assert client.get(f"/?token={TOKEN}").status_code == 200
    csrf = _fields(client.get("/").text)["csrf"]
    client.post("/reviewer", data={"name": "Ada", "csrf": csrf}, headers=ORIGIN)
    return client


def _fields(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))


def _answer(client: TestClient, label: int) -> str:
    fields = {**_fields(client.get("/").text), "label": str(label)}
    assert client.post("/answer", data=fields, headers=ORIGIN).status_code == 200
    return fields["doc_id"]


def _said(page: str) -> str:
    """The message the page shows above the record asked now (a refusal's reason), unescaped."""
    found = re.search(r'id="message">(.*?)</div>', page, re.S)
    return "" if found is None else html.unescape(found.group(1))


def _steps(folder: Path) -> list[tuple[str, str, int | None, int]]:
    rows = [json.loads(x) for x in (folder / "review.jsonl").read_text().splitlines()]
    return [(r["move"], r["doc_id"], r["audit_position"], r["label"]) for r in rows]


def _to_label(folder: Path) -> list[dict[str, str]]:
    with open(folder / "to_label.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_page_takes_the_review_s_steps_and_gives_its_certificate_in_a_reviewer_s_words(
        records: Records, tmp_path: Path) -> None:
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    page_folder, cli_folder = tmp_path / "page", tmp_path / "cli"
    for folder in (page_folder, cli_folder):
        session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    client = _open(page_folder)
    shown = client.get("/").text
    asked = session.next_record(page_folder)
    assert asked is not None and asked["move"] == "screen"
    # the header names the review and its records, not an audit's design; no query line
    review_id = session.status(page_folder)["audit_id"][:12]
    assert f"review <code>{review_id}</code> · 80 records of <q>toy</q>" in shown
    assert "interleaved design" not in shown and 'id="query"' not in shown
    assert f"screen · the ranker&#39;s pick, number {asked['position']} in the file" in shown
    assert f'record <code id="doc-id">{asked["record_id"]}</code>' in shown
    assert "0 of 80 records read (0 screened, 0 audited; 0 relevant found)" in shown
    assert "prior knowledge" not in shown   # none was given
    answered, audit_seen = 0, False
    while 'id="answer"' in (page := client.get("/").text):
        if "audit · the next of the frozen random order, audit order position" in page:
            audit_seen = True
        _answer(client, truth[_fields(page)["doc_id"]])
        answered += 1
        if answered == 1:   # to_label.csv names the record asked next, as the label step writes it
            written = (page_folder / "to_label.csv").read_bytes()
            asked_next = ("toy", _fields(client.get("/").text)["doc_id"])
            write_to_label(load_audit(page_folder), [asked_next], "csv")   # the design's own, replayed
            assert (page_folder / "to_label.csv").read_bytes() == written
            place = f"number {records.ids.index(asked_next[1]) + 1} in the file"   # its place, not a rank
            assert f"toy,{asked_next[1]},,screen,{place},".encode() in written
    assert audit_seen and "The target is certified: the review asks for no further record." in page
    info = session.status(page_folder)   # the page rounds the bound as status and certify do
    assert f"current bound: recall ≥ {format_bound(info['recall_bound'], 'lower')} —" in page
    session.label(cli_folder, known=truth)
    assert _steps(page_folder) == _steps(cli_folder)
    assert _to_label(page_folder) == _to_label(cli_folder) == []   # nothing is asked any more
    certified = client.post("/certify", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)
    assert certified.status_code in (200, 303)
    on_page = json.loads((page_folder / "certificate.json").read_text())
    on_cli = workflow.certify(cli_folder).content
    assert on_page["members"][0]["recall"] == on_cli["members"][0]["recall"] >= 0.8
    assert session.status(page_folder)["read"] == answered


def test_answers_kept_from_a_batch_file_are_recorded_when_the_review_asks_for_their_records(
        records: Records, tmp_path: Path) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    batch = [r["record_id"] for r in session.next_records(folder, 9)]

    def read_ahead(name: str, rids: list[str]) -> None:   # the reviewer read on, past the record asked now
        with pytest.warns(UserWarning, match=f"{len(rids)} of its labels are kept for later"):
            write_label_file(tmp_path / name, [("toy", rid, 0) for rid in rids], kind="csv")
            assert session.label(folder, from_file=tmp_path / name).recorded == 0

    read_ahead("ahead.csv", batch[1:4])
    assert session.kept_answers(folder) == dict.fromkeys(batch[1:4], 0)
    client = _open(folder)
    stale = _fields(client.get("/").text)
    assert 'id="kept"' not in client.get("/").text           # batch[0]: no answer kept for it
    assert stale["doc_id"] == batch[0]
    # the kept answers of the records asked next are recorded at once, and the page says so
    page = client.post("/answer", data={**stale, "label": "0"}, headers=ORIGIN).text   # the page after it
    assert _fields(page)["doc_id"] == batch[4]
    assert "recorded the answers known for the records the review asked for next (read ahead, or given in " \
        "a batch file, and kept in pending-labels.csv; or the prior knowledge): " \
        f"{', '.join(batch[1:4])}" in page
    steps = [json.loads(x) for x in (folder / "review.jsonl").read_text().splitlines()]
    assert [s["doc_id"] for s in steps] == batch[:4] and session.kept_answers(folder) == {}
    refused = client.post("/answer", data={**stale, "label": "1"}, headers=ORIGIN)   # a page left open
    said = _said(refused.text)   # above the record asked now, on the page a redirect gave
    assert refused.status_code == 200 and _fields(refused.text)["doc_id"] == batch[4]
    assert f"record {batch[0]!r} (number {int(batch[0]) + 1} in the file) is already labelled 0" in said
    assert "two readings disagree" in said and "(query " not in said
    assert f"rankcut review correct --folder {folder} --into NEW_FOLDER --relabel {batch[0]}=1" in said

    # a page opened records the kept answers the review asks for now, as label --interactive does
    read_ahead("more.csv", batch[5:7])
    workflow.label(folder, qrels=_qrels(tmp_path, {batch[4]: 0}), limit=1)   # batch[4], elsewhere
    page = client.get("/").text                     # this page: batch[5] is asked, its answer shown
    assert _fields(page)["doc_id"] == batch[5]
    assert ("this record was answered before the review asked for it (read ahead, or in a batch file): not "
            "relevant (kept, not recorded)") in page
    assert _fields(_open(folder).get("/").text)["doc_id"] == batch[7]


def _qrels(tmp_path: Path, labels: dict[str, int]) -> Path:
    path = tmp_path / "elsewhere.qrels"
    path.write_text("".join(f"toy 0 {rid} {y}\n" for rid, y in labels.items()))
    return path


def test_rankcut_serve_refuses_a_changed_review_in_the_review_s_words(records: Records,
                                                                    tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    texts = folder / session.TEXTS_FILE
    texts.write_text(texts.read_text().replace("migraine", "migrain"))   # an edited abstract
    result = CliRunner().invoke(app, ["serve", str(folder), "--port", "0"])
    assert result.exit_code == 2 and result.output.startswith("error: the review's texts "), result.output
    assert "start a new review (rankcut review start)" in result.output


def test_the_page_shows_a_record_s_title_as_the_heading_of_its_text(tmp_path: Path) -> None:
    """A record's title is set apart from its abstract (a reviewer could not tell where one ended,
    a line break apart in one box); a record with no title shows its abstract alone."""
    records = Records("titled", ("a", "b", "c"), ("Aspirin & the heart", "", "Only a title"),
                      ("A trial.\nSecond line.", "No title here.", ""), np.array([1, 0, 0], dtype=np.int8))
    folder = tmp_path / "review"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    assert records.texts[0] == "Aspirin & the heart\nA trial.\nSecond line."   # the ranker's text, unchanged
    client = _open(folder)
    seen = {}
    while 'id="answer"' in (page := client.get("/").text):
        doc = re.search(r'<div class="doc" id="doc">(.*?)</div>\n<form', page, re.S)
        assert doc is not None
        seen[_fields(page)["doc_id"]] = doc[1]
        _answer(client, int(_fields(page)["doc_id"] == "a"))
        if len(seen) == 3:
            break
    assert seen["a"] == '<div class="title" id="title">Aspirin &amp; the heart</div>A trial.\nSecond line.'
    assert seen["b"] == "No title here."
    assert seen["c"] == '<div class="title" id="title">Only a title</div>'


def test_the_page_says_that_the_prior_knowledge_counts_as_read(records: Records, tmp_path: Path) -> None:
    assert records.labels is not None
    relevant = records.ids[int(records.labels.argmax())]
    folder = tmp_path / "R"
    session.start(records.with_prior({relevant: 1, records.ids[records.ids.index(relevant) - 1]: 0}), folder,
                  target_recall=0.8, seed=4, policy=POLICY)
    shown = _open(folder).get("/").text
    assert "2 read · 78 unread (the\nreview stops once the target is certified; the 2 records of the prior " \
        "knowledge read so far count as read)" in shown


def test_the_page_never_asks_for_a_record_of_the_prior_knowledge(records: Records, tmp_path: Path) -> None:
    # 60 of 80 records known before: the policy audits after 10 screening reads, and its audit meets
    # records of the prior knowledge, which the page showed to be labelled again, to the reviewer
    # asked now and to one reading ahead (whose answer then replaced the frozen label)
    truth = labels_of(records)
    prior = {rid: truth[rid] for rid in records.ids[:60]}
    folder = tmp_path / "R"
    session.start(records.with_prior(prior), folder, target_recall=0.8, seed=4, policy=POLICY)
    before = session.status(folder)["prior_read"]
    app = create_app(folder, TOKEN)
    ada, bob = _named(app, "Ada"), _named(app, "Bob")
    assert f"the {before} records of the prior knowledge read so far count as read" in ada.get("/").text
    assert before < len(prior)   # not the whole prior, which the header said
    unread = next(rid for rid in prior if rid not in {step[1] for step in _steps(folder)})
    forged = {**_fields(ada.get("/").text), "doc_id": unread, "position": str(records.ids.index(unread)),
              "label": str(1 - prior[unread])}
    said = _said(ada.post("/answer", data=forged, headers=ORIGIN).text)
    assert f"is of the review's prior knowledge, labelled {prior[unread]} before it started: it is never " \
        "asked, and nothing was recorded" in said
    shown: list[str] = []
    while "doc_id" in (fields := _fields(ada.get("/").text)):
        if "doc_id" in (ahead := _fields(bob.get("/").text)):   # Bob reads ahead, Ada answers after
            shown.append(ahead["doc_id"])
            bob.post("/answer", data={**ahead, "label": str(truth[ahead["doc_id"]])}, headers=ORIGIN)
        fields = _fields(ada.get("/").text)
        if "doc_id" in fields:
            shown.append(fields["doc_id"])
            ada.post("/answer", data={**fields, "label": str(truth[fields["doc_id"]])}, headers=ORIGIN)
    assert shown and not set(shown) & set(prior)
    assert session.status(folder)["prior_read"] > before   # met by the audit after the page's answers
    with LabelStore(folder / "labels.sqlite", readonly=True) as store:
        by = {e.doc_id: e.source for e in store.history()}
    assert {by[rid] for rid in by if rid in prior} == {session.PRIOR_SOURCE}
    assert {by[rid] for rid in set(shown) & set(by)} == {"serve reviewer Ada", "serve reviewer Bob"}


def test_the_page_s_notes_name_rankcut_review_s_steps(records: Records, tmp_path: Path) -> None:
    from rankcut.cli import review

    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    notes = {}
    for options in (None, review.OPTIONS):   # as rankcut serve gives them, and without
        client = TestClient(create_app(folder, TOKEN, options=options))
        client.get(f"/?token={TOKEN}")
        csrf = _fields(client.get("/").text)["csrf"]
        client.post("/reviewer", data={"name": "Ada", "csrf": csrf}, headers=ORIGIN)
        _answer(client, 0)
        client.post("/certify", data={"csrf": _fields(client.get("/").text)["csrf"]}, headers=ORIGIN)
        notes[options is None] = client.get("/result").text
    assert "next: label on (label); status names" in notes[True]
    assert "NOT met" in notes[False]
    assert "next: label on (rankcut review label); rankcut review status names" in notes[False]


def _named(app: object, name: str) -> TestClient:
    client = TestClient(app)   # one browser: its own session cookie, on the one server
    assert client.get(f"/?token={TOKEN}").status_code == 200
    csrf = _fields(client.get("/").text)["csrf"]
    client.post("/reviewer", data={"name": name, "csrf": csrf}, headers=ORIGIN)
    return client


def _reading_ahead(records: Records, folder: Path, ahead: int) -> tuple[dict[str, int], list[str], Any]:
    """A review of ``records`` started in ``folder``, with the true labels, the first ``ahead``
    records its lookahead asks for (if none is relevant), and its page."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    asked = [r["record_id"] for r in session.status(folder, ahead=ahead)["next_records"]]
    return truth, asked, create_app(folder, TOKEN)


def test_a_second_reviewer_reads_ahead_and_the_answer_is_recorded_when_the_review_asks(
        records: Records, tmp_path: Path) -> None:
    """While one reviewer reads the record asked now, another is given the record the review asks
    for after it if that one is not relevant (status's lookahead), told who reads the first; the
    answer is kept, and recorded when the review asks for it — the review is the one label --from
    gives for the same two answers. A second session of the same name is asked the same record."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder, cli = tmp_path / "page", tmp_path / "cli"
    for f in (folder, cli):
        session.start(records, f, target_recall=0.8, seed=4, policy=POLICY)
    ahead = [r["record_id"] for r in session.status(folder, ahead=3)["next_records"]]
    assert truth[ahead[0]] == 0   # the lookahead is the review's path (the toy set's first pick)
    app = create_app(folder, TOKEN)
    ada, bob = _named(app, "Ada"), _named(app, "Bob")
    assert _fields(ada.get("/").text)["doc_id"] == ahead[0]
    page = html.unescape(bob.get("/").text)
    assert _fields(page)["doc_id"] == ahead[1] and "read ahead · screen" in page
    assert "The record the review asks for now is being read by reviewer 'Ada' (asked just now" in page
    assert "asked after it (step 2) if that one is not relevant. Your answer is kept" in page
    assert _fields(_named(app, "Ada").get("/").text)["doc_id"] == ahead[0]   # Ada on another device
    fields = {**_fields(bob.get("/").text), "label": str(truth[ahead[1]])}
    said = html.unescape(bob.post("/answer", data=fields, headers=ORIGIN, follow_redirects=True).text)
    assert f"kept your answer for record {ahead[1]} (read ahead)" in said
    assert session.kept_answers(folder) == {ahead[1]: truth[ahead[1]]}
    assert not (folder / "review.jsonl").exists()   # nothing recorded
    page = html.unescape(bob.get("/").text)
    assert _fields(page)["doc_id"] == ahead[2]   # the next one ahead, after the kept answer
    assert "· +1 answered, kept until the review asks for it" in " ".join(page.split())   # the header
    assert ("asked after it (step 3) if that one is not relevant; of the 1 record between, 1 answered "
            "already (kept, or the prior knowledge). Your answer is kept") in page
    fields = {**_fields(ada.get("/").text), "label": "0"}
    said = _said(ada.post("/answer", data=fields, headers=ORIGIN).text)
    assert said == ("recorded the answer known for the record the review asked for next (read ahead, or "
                    "given in a batch file, and kept in pending-labels.csv; or the prior knowledge): "
                    f"{ahead[1]}")
    assert [s[1] for s in _steps(folder)] == ahead[:2] and session.kept_answers(folder) == {}
    assert "kept until the review asks" not in ada.get("/").text
    assert not (folder / "pending-labels.csv").exists()   # no stale row left of what was recorded
    with LabelStore(folder / "labels.sqlite", readonly=True) as store:   # each recorded as given: by whom
        assert [(e.doc_id, e.source) for e in store.history()] == [(ahead[0], "serve reviewer Ada"),
                                                                   (ahead[1], "serve reviewer Bob")]
    path = tmp_path / "two.csv"
    path.write_text(f"record_id,label\n{ahead[0]},0\n{ahead[1]},{truth[ahead[1]]}\n")
    session.label(cli, from_file=path)
    assert _steps(folder) == _steps(cli)
    # a read-ahead answer that disagrees with an answer kept meanwhile is refused; the kept one stands
    current = session.next_record(folder)
    assert current is not None and _fields(bob.get("/").text)["doc_id"] == current["record_id"]   # his
    fields = {**_fields(ada.get("/").text), "label": "0"}   # so Ada reads ahead now
    assert fields["doc_id"] != current["record_id"]
    session.keep(folder, {fields["doc_id"]: 1}, "file b.csv")   # a batch file's answer, given meanwhile
    refused = ada.post("/answer", data=fields, headers=ORIGIN)
    assert refused.status_code == 200 and "two readings disagree" in _said(refused.text)
    assert session.kept_answers(folder)[fields["doc_id"]] == 1


def test_a_read_ahead_answer_is_taken_back_while_it_is_kept(records: Records, tmp_path: Path) -> None:
    """An answer given to a record read ahead is kept, not recorded: Undo takes it back (the page
    offered none, and a forced undo said "the review took a step after it, chosen from its label",
    of an answer no step had seen); once the review asked for the record and recorded it, it is
    taken back as any step is: while it is the last one."""
    folder = tmp_path / "page"
    truth, ahead, app = _reading_ahead(records, folder, 3)
    ada, bob = _named(app, "Ada"), _named(app, "Bob")
    assert _fields(ada.get("/").text)["doc_id"] == ahead[0]
    fields = {**_fields(bob.get("/").text), "label": str(1 - truth[ahead[1]])}   # a misclick
    assert fields["doc_id"] == ahead[1]
    page = html.unescape(bob.post("/answer", data=fields, headers=ORIGIN, follow_redirects=True).text)
    assert session.kept_answers(folder) == {ahead[1]: 1 - truth[ahead[1]]} and 'id="undo"' in page
    said = _said(bob.post("/undo", data={"csrf": fields["csrf"]}, headers=ORIGIN).text)
    assert said == (f"undone: your answer for record {ahead[1]} (read ahead) is no longer kept; it was never "
                    "recorded, and the record is asked again")
    assert session.kept_answers(folder) == {} and not (folder / "review.jsonl").exists()   # none recorded
    fields = {**_fields(bob.get("/").text), "label": str(truth[ahead[1]])}   # asked again: answered right
    assert fields["doc_id"] == ahead[1]
    bob.post("/answer", data=fields, headers=ORIGIN)
    ada.post("/answer", data={**_fields(ada.get("/").text), "label": str(truth[ahead[0]])}, headers=ORIGIN)
    assert [s[1] for s in _steps(folder)] == ahead[:2]   # the kept answer recorded when asked for
    assert session.kept_answers(folder) == {} and 'id="undo"' in bob.get("/").text   # the last step
    said = _said(bob.post("/undo", data={"csrf": fields["csrf"]}, headers=ORIGIN).text)
    assert said.startswith("undone: the record is asked again")
    assert [s[1] for s in _steps(folder)] == ahead[:1]
    assert _fields(bob.get("/").text)["doc_id"] == ahead[1]
    # read ahead again, and the kept answer replaced by a batch file before the undo: said so (it
    # said "the review took a step after it", of an answer no step had seen)
    fresh = tmp_path / "again"
    _, _, app = _reading_ahead(records, fresh, 3)
    ada, bob = _named(app, "Ada"), _named(app, "Bob")
    assert _fields(ada.get("/").text)["doc_id"] == ahead[0]
    fields = {**_fields(bob.get("/").text), "label": str(1 - truth[ahead[1]])}
    bob.post("/answer", data=fields, headers=ORIGIN)
    session.keep(fresh, {ahead[1]: truth[ahead[1]]}, "file batch.csv")   # label --from, meanwhile
    refused = _said(bob.post("/undo", data={"csrf": fields["csrf"]}, headers=ORIGIN).text)
    assert refused.endswith("cannot be taken back: the answer you gave it (read ahead) is no longer kept — "
                            "another answer replaced it (a batch file, or another reviewer)")
    assert session.kept_answers(fresh) == {ahead[1]: truth[ahead[1]]}


def test_a_read_ahead_record_answered_in_one_tab_and_held_in_another_counts_once(
        records: Records, tmp_path: Path) -> None:
    """Bob read ahead in two tabs and answered in one: a third reviewer's page counted his record
    as answered and as being read ahead, and said "-1 not read yet"."""
    folder = tmp_path / "page"
    truth, ahead, app = _reading_ahead(records, folder, 4)
    ada, bob, tab = _named(app, "Ada"), _named(app, "Bob"), _named(app, "Bob")
    assert _fields(ada.get("/").text)["doc_id"] == ahead[0]
    assert _fields(bob.get("/").text)["doc_id"] == _fields(tab.get("/").text)["doc_id"] == ahead[1]
    fields = {**_fields(bob.get("/").text), "label": str(truth[ahead[1]])}
    bob.post("/answer", data=fields, headers=ORIGIN)
    assert _fields(bob.get("/").text)["doc_id"] == ahead[2]   # tab still holds ahead[1]
    page = " ".join(html.unescape(_named(app, "Cy").get("/").text).split())
    assert _fields(page)["doc_id"] == ahead[3]
    assert ("of the 2 records between, 1 answered already (kept, or the prior knowledge) and 1 being read "
            "ahead by other reviewers, taken as not relevant. Your answer is kept") in page


def test_a_second_reading_of_a_review_asks_the_records_in_the_order_they_were_read(
        records: Records, tmp_path: Path) -> None:
    from rankcut.serve.agreement import SecondReading
    from rankcut.serve.desk import Answer
    from rankcut.serve.desks import open_desk

    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=12)
    read = [s[1] for s in _steps(folder)]
    assert read != sorted(read, key=records.ids.index)   # reading order is not the file's
    desk = open_desk(folder)
    reading, asked = SecondReading(desk), []
    while (item := reading.ask("Bob", "bob")) is not None:
        asked.append(item[1])
        reading.record(Answer(desk.audit_id, desk.sample_hash, str(desk.index[item]), *item,
                              str(truth[item[1]])), "Bob", "bob")
    assert asked == read and reading.agreement().agree == 12


def test_a_read_ahead_answer_once_the_review_asks_for_nothing_keeps_nothing(records: Records,
                                                                           tmp_path: Path) -> None:
    from rankcut.serve.desk import Answer, Refused
    from rankcut.serve.desks import open_desk

    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth)   # read to its certificate
    assert session.next_record(folder) is None
    desk = open_desk(folder)
    read = {s[1] for s in _steps(folder)}
    unread = next(i for i in desk.order if i[1] not in read)
    assert desk.ask(lambda i: i == unread, "bob") == unread   # as a page read ahead left open holds it
    with pytest.raises(Refused, match="this page is stale"):
        desk.record(Answer(desk.audit_id, desk.sample_hash, str(desk.index[unread]), *unread, "1"),
                    "Bob", "bob")
    assert session.kept_answers(folder) == {}


def test_the_page_reads_on_once_the_reviewer_chooses_to(records: Records, tmp_path: Path) -> None:
    """Met: the page offers the read-on command; after it (run while the page is open), the page
    asks for the ranker's next picks, and its answers are the review's steps."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth)
    client = _open(folder)
    page = client.get("/").text
    met = session.status(folder)["read"]
    assert 'id="answer"' not in page
    assert "The target is certified: the review asks for no further record." in page
    assert f"rankcut review read-on --folder {folder}" in html.unescape(page)
    session.read_on(folder)
    page = client.get("/").text
    asked = session.next_record(folder)
    assert asked is not None and 'id="answer"' in page and _fields(page)["doc_id"] == asked["record_id"]
    assert f"the target was met at step {met}, and the reviewer chose to read on" in html.unescape(page)
    _answer(client, truth[asked["record_id"]])
    steps = _steps(folder)
    assert len(steps) == met + 1 and steps[-1][:2] == ("screen", asked["record_id"])
    verdict = workflow.certify(folder).content["verdict"]
    assert verdict["met"] and f"met at step {met}, read on to {met + 1} of 80 records" in verdict["text"]


def test_the_reviewer_reads_on_with_the_page_s_button(records: Records, tmp_path: Path) -> None:
    """The button is offered once met and nowhere before; a forged form or a press before met
    changes nothing; pressed, the page asks for the ranker's next pick and says it reads on."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=3)
    client = _open(folder)
    page = client.get("/").text
    assert 'id="read-on"' not in page
    refused = client.post("/read-on", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)
    assert refused.status_code == 409
    assert "read on is offered once the target is met" in html.unescape(refused.text)
    session.label(folder, known=truth)   # on to the certificate
    met = session.status(folder)["read"]
    page = client.get("/").text
    assert 'id="read-on"' in page and "review has stopped: the target is certified" in page
    forged = client.post("/read-on", data={"csrf": "forged"}, headers=ORIGIN)
    assert forged.status_code == 403 and not session.status(folder)["reads_on"]
    said = client.post("/read-on", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)
    assert said.status_code == 200 and session.status(folder)["reads_on"]
    assert f"reading on after {met} records read" in _said(said.text)
    asked = session.next_record(folder)
    assert asked is not None and _fields(said.text)["doc_id"] == asked["record_id"]
    assert "review reads on after the target was met" in said.text and 'id="read-on"' not in said.text
    again = client.post("/read-on", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)   # a stale page
    assert again.status_code == 200
    assert f"this review reads on already, since {met} records" in _said(again.text)
    assert _answer(client, truth[asked["record_id"]]) == asked["record_id"]
    assert len(_steps(folder)) == met + 1


def test_the_answer_that_met_the_target_is_not_taken_back_once_the_reviewer_reads_on(
        records: Records, tmp_path: Path) -> None:
    """Reading on is chosen from the labels up to "met": the answer that met it stays."""
    truth, first, folder = labels_of(records), tmp_path / "first", tmp_path / "R"
    session.start(records, first, target_recall=0.8, seed=4, policy=POLICY)
    session.label(first, known=truth)
    met = session.status(first)["read"]
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    session.label(folder, known=truth, limit=met - 1)
    client = _open(folder)
    _answer(client, truth[_fields(client.get("/").text)["doc_id"]])   # the answer that meets it
    page = client.get("/").text
    assert session.status(folder)["met_step"] == met and 'id="undo"' in page and 'id="read-on"' in page
    client.post("/read-on", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)
    page = client.get("/").text
    assert 'id="undo"' not in page
    undone = client.post("/undo", data={"csrf": _fields(page)["csrf"]}, headers=ORIGIN)
    assert "there is no answer of yours that can be undone now: record " in _said(undone.text)
    assert "cannot be taken back: the reviewer chose to read on after it" in _said(undone.text)   # why
    assert len(_steps(folder)) == met and session.status(folder)["reads_on"]


def test_an_answer_into_a_store_edited_by_hand_is_refused(records: Records, tmp_path: Path) -> None:
    """A label row edited with sqlite3 while the page is open: the page recorded the next answers
    into a store that every command then refused (it read only the store's changes)."""
    import sqlite3

    assert records.labels is not None
    truth = labels_of(records)
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    client = _open(folder)
    first = _answer(client, truth[_fields(client.get("/").text)["doc_id"]])
    _answer(client, truth[_fields(client.get("/").text)["doc_id"]])
    with sqlite3.connect(folder / "labels.sqlite") as con:   # the labels row only, not its history
        con.execute("UPDATE labels SET label = 1 - label WHERE doc_id = ?", (first,))
    con.close()
    fields = {**_fields(client.get("/").text), "label": "0"}
    said = _said(client.post("/answer", data=fields, headers=ORIGIN).text)
    assert f"document '{first}' holds label {1 - truth[first]}, but the store's history wrote label " \
        f"{truth[first]}: it was edited outside rankcut — refused; restore it, or start a new review" in said
    with LabelStore(folder / "labels.sqlite", create=False) as store:
        assert store.count() == 2   # nothing recorded
    forged = {**_fields(client.get("/").text), "doc_id": "9999", "label": "1"}
    said = _said(client.post("/answer", data=forged, headers=ORIGIN).text)
    assert said.startswith(f"record '9999' is not in review {session.load_review(folder).short_id}: nothing")


def test_a_trec_run_review_shows_its_query_with_every_record(tmp_path: Path) -> None:
    """A TREC topic's relevance is judged against its query, and the texts file's ``query`` was
    dropped: next, the interactive step and the page showed the passages alone."""
    from typer.testing import CliRunner

    from rankcut.cli.main import app
    from rankcut.review.records import load_trec_records

    docs = [f"d{i}" for i in range(30)]
    (tmp_path / "t.run").write_text("".join(f"1037798 Q0 {d} {i + 1} {30 - i} bm25\n"
                                            for i, d in enumerate(docs)))
    (tmp_path / "t.jsonl").write_text("".join(
        json.dumps({"query_id": "1037798", "doc_id": d, "text": f"passage {d} about gray",
                    **({"query": "who is robert gray"} if i == 3 else {})}) + "\n"
        for i, d in enumerate(docs)))
    records = load_trec_records(tmp_path / "t.run", tmp_path / "t.jsonl")
    assert records.query_text == "who is robert gray"
    assert records.with_prior({"d0": 1}).query_text == "who is robert gray"
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    assert session.query_text(folder) == "who is robert gray" == session.status(folder)["query_text"]
    out = CliRunner().invoke(app, ["review", "next", "--folder", str(folder)])
    assert out.exit_code == 0 and out.stdout.startswith("query: who is robert gray\n"), out.stdout
    # a run's documents stand at their rank in the run ("number 1 in the file" read as a line number)
    assert "to read now: record d0, a screening record (the ranker's pick), rank 1 in the run" in out.stdout
    said: list[str] = []
    session.label(folder, interactive=True, input=lambda prompt: "q", output=said.append)
    assert said[0] == "query: who is robert gray"
    page = _open(folder).get("/").text
    assert re.search(r'id="query">query <code>1037798</code>:\s*<b>who is robert gray</b>', page), page
    assert "rank 1 in the run" in page and "in the file" not in page
    # records from a table hold no query: none is shown
    plain = tmp_path / "P"
    session.start(toy_records(40, 4, seed=1), plain, target_recall=0.8, seed=4, policy=POLICY)
    assert session.query_text(plain) is None and 'id="query"' not in _open(plain).get("/").text


def test_the_page_s_result_and_report_name_the_relevant_answers_kept(records: Records,
                                                                     tmp_path: Path) -> None:
    """The CLI's certify and report say which records answered relevant are kept, counted by no
    certificate; the page's result and report.html left it out (a reviewer's walk)."""
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.8, seed=4, policy=POLICY)
    client = _open(folder)
    asked = _answer(client, 0)
    later = next(rid for rid, y in zip(records.ids, records.labels.tolist(), strict=True)
                 if y == 1 and rid != asked)
    (tmp_path / "ahead.csv").write_text(f"record_id,label\n{later},1\n")
    with pytest.warns(UserWarning, match="kept for later"):
        session.label(folder, from_file=tmp_path / "ahead.csv")   # answered ahead: kept, not recorded
    client.post("/certify", data={"csrf": _fields(client.get("/").text)["csrf"]}, headers=ORIGIN)
    said = "1 record answered relevant is kept, not recorded: the review has not asked for it"
    assert said in html.unescape(client.get("/result").text)
    report = html.unescape(client.get("/report.html").text)
    assert said in report and f"{said}, so no certificate counts it (it stays a relevant record of your " \
        f"review): {later}" in report


def test_reading_ahead_stops_at_most_ahead_records_past_the_one_asked(records: Records,
                                                                      tmp_path: Path) -> None:
    """While an idle tab holds the record asked now, a second reviewer reads ahead at most AHEAD
    records past it, then waits: the answers kept counted as room, so one reviewer read about 770
    records ahead while nothing was recorded (a reviewer's walk)."""
    from rankcut.serve.interleaved_desk import AHEAD

    truth, asked, app = _reading_ahead(records, tmp_path / "R", AHEAD + 2)
    zed, ada = _named(app, "Zed"), _named(app, "Ada")
    assert _fields(zed.get("/").text)["doc_id"] == asked[0]   # held, never answered
    read = []
    for _ in range(AHEAD + 2):
        fields = _fields(ada.get("/").text)
        if "doc_id" not in fields:
            break
        read.append(fields["doc_id"])
        ada.post("/answer", data={**fields, "label": "0"}, headers=ORIGIN)
    assert read == asked[1:1 + AHEAD]   # the review's lookahead, as far as AHEAD records past the one held
    assert "is being read by reviewer 'Zed'" in html.unescape(ada.get("/").text)   # waits, told why
    assert not (tmp_path / "R" / "review.jsonl").exists()   # nothing recorded: all kept
