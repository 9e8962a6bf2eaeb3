"""The labelling page serves the interleaved review (issue 17): it asks for the one document the
review's frozen policy chooses next (screen or audit, its place and why), records the answer through
the label step's guards, keeps the review in memory between answers (one policy decision an answer,
no replay), and shows the running recall bound — the same review, step for step, and the same
certificate as ``rankcut audit label``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from serve_client import ORIGIN, fields_of, open_client, said
from serve_testdata import flip_with_history

from rankcut.audit import workflow as wf
from rankcut.audit.designs import interleaved
from rankcut.audit.labels import LabelStore
from rankcut.serve import interleaved_desk as desk_mod
from rankcut.serve.desk import Answer, Desk, Refused
from rankcut.serve.desks import open_desk

Item = tuple[str, str]
POLICY = "precision:batch=20,chunk=5"


def _topic(tmp_path: Path, name: str = "audit", policy: str = POLICY, depth: int = 240
           ) -> tuple[Path, set[Item], Path]:
    """One query's ranking of ``depth`` documents with texts, relevant mostly near the top; frozen,
    planned and sampled as an interleaved review. Returns the folder, the truth and the qrels."""
    rng = np.random.default_rng(5)
    run, qrels, texts = tmp_path / "run.txt", tmp_path / "qrels.txt", tmp_path / "texts.jsonl"
    relevant: set[Item] = set()
    with open(run, "w") as f, open(qrels, "w") as g, open(texts, "w") as t:
        for r in range(depth):
            f.write(f"q0 Q0 d{r} {r + 1} {depth - r} t\n")
            if rng.random() < (0.5 if r < 30 else 0.03):
                relevant.add(("q0", f"d{r}"))
                g.write(f"q0 0 d{r} 1\n")
            t.write(json.dumps({"query_id": "q0", "query": "what?", "doc_id": f"d{r}",
                                "text": f"Document {r}."}) + "\n")
    folder = tmp_path / name
    wf.freeze(folder, run=run, design="interleaved", target_recall=0.8, seed=11, policy=policy, texts=texts)
    wf.plan(folder)
    wf.sample(folder)
    return folder, relevant, qrels


def _steps(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (folder / interleaved.REVIEW_FILE).read_text().splitlines()]


def _answer(desk: Desk, who: str, relevant: set[Item], reviewer: str = "Ada") -> Any:
    shown = desk.standing(who)
    assert shown.item is not None and shown.position is not None
    label = str(int(shown.item in relevant))
    return desk.record(Answer(desk.audit_id, desk.sample_hash, str(shown.position), *shown.item, label),
                       reviewer, who)


def test_the_page_reviews_as_the_label_step_does(tmp_path: Path) -> None:
    page, relevant, qrels = _topic(tmp_path, "page")
    cli = tmp_path / "cli"
    shutil.copytree(page, cli)
    wf.label(cli, qrels=qrels)                       # the command line, to the end
    client = open_client(page)
    first = client.get("/").text
    assert "screen · rank 1 of the ranking" in first and "no relevant document found yet" in first
    assert "Document 0." in first and "0 read · 240 unread" in first
    answered = 0
    while True:
        text = client.get("/").text
        fields = fields_of(text)
        if "doc_id" not in fields:
            break
        item = (fields["query_id"], fields["doc_id"])
        label = str(int(item in relevant))
        response = client.post("/answer", data={**fields, "label": label}, headers=ORIGIN)
        assert response.status_code == 200 and said(response.text) is None, response.text[-300:]
        answered += 1
    assert answered == len(_steps(cli)) < 240
    assert _steps(page) == _steps(cli)               # every move, document, label and why
    assert "The target is certified: the review asks for no further document." in text
    assert "(the\nreview has stopped: the target is certified)" in text   # it said "stops once" (a walk)
    # a page left open on a document never read, answered now: not "the document to label now is not
    # ..." (none is)
    read = {(step["query_id"], step["doc_id"]) for step in _steps(page)}
    unread_desk = open_desk(page)
    item = next(i for i in unread_desk.index if i not in read)
    with pytest.raises(Refused, match=r"^this page is stale: the review asks for no further document \(the "
                                      r"target is certified, or every document is read\); nothing was "
                                      r"recorded$"):
        unread_desk.record(Answer(unread_desk.audit_id, unread_desk.sample_hash, str(unread_desk.index[item]),
                                  *item, "0"), "Ada", "someone")
    assert re.search(r'id="bound">current bound: recall ≥ 0\.\d{1,3}', text)
    assert 'class="met"' in text
    desk = open_desk(page)
    verdict = desk.standing().verdict
    assert client.post("/certify", data={"csrf": fields["csrf"]}, headers=ORIGIN).status_code == 200
    assert verdict == json.loads((page / "certificate.json").read_text())["verdict"]["text"]
    assert json.loads((page / "certificate.json").read_text())["verdict"] == \
        wf.certify(cli).content["verdict"]


def test_an_answer_is_one_policy_decision_not_a_replay(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    folder, relevant, qrels = _topic(tmp_path)
    wf.label(folder, qrels=qrels, limit=40)
    replays = 0
    review_of = desk_mod.review_of

    def counted(*args: Any, **kw: Any) -> Any:
        nonlocal replays
        replays += 1
        return review_of(*args, **kw)

    monkeypatch.setattr(desk_mod, "review_of", counted)
    desk = open_desk(folder)
    cls = interleaved._policy_class("precision")
    decide, decisions = cls.__call__, []

    def spy(self: Any, state: Any) -> str:
        decisions.append(state.review.read)
        return str(decide(self, state))

    monkeypatch.setattr(cls, "__call__", spy)
    assert desk.standing("me").labelled == 40
    assert replays == 1 and decisions == [40]        # resumed from review.jsonl: the next step only
    for _ in range(12):
        _answer(desk, "me", relevant)
        desk.standing("me")
    assert replays == 1                              # each answer took its step into the review
    assert decisions == list(range(40, 53))          # and the policy decided each next step once
    fresh = open_desk(folder).standing()
    assert (fresh.item, fresh.bound, fresh.verdict, fresh.progress) == \
        (lambda s: (s.item, s.bound, s.verdict, s.progress))(desk.standing())
    assert wf.status(folder)["review_steps"] == 52 == len(_steps(folder))


def test_labels_from_the_command_line_are_taken_in(tmp_path: Path) -> None:
    folder, relevant, qrels = _topic(tmp_path)
    desk = open_desk(folder)
    _answer(desk, "me", relevant)
    wf.label(folder, qrels=qrels, limit=30)          # another reviewer, at the terminal
    shown = desk.standing("me")
    assert shown.labelled == 31
    status = wf.status(folder)["next_item"]
    assert shown.item == (status["query_id"], status["doc_id"])
    assert shown.progress is not None and f"step 32: {status['why']}" in shown.progress


def test_undo_only_while_no_step_was_chosen_from_the_answer(tmp_path: Path) -> None:
    folder, relevant, _ = _topic(tmp_path)
    desk = open_desk(folder)
    given = _answer(desk, "me", relevant)
    assert desk.can_undo(given)
    desk.undo(given, "me")
    assert desk.standing("me").item == given.item and desk.standing("me").labelled == 0
    assert _steps(folder) == []
    given = _answer(desk, "me", relevant)
    later = _answer(desk, "me", relevant)
    assert not desk.can_undo(given)                  # step 2 was chosen from its label
    with pytest.raises(Refused, match="the review took a step after it"):
        desk.undo(given, "me")
    assert desk.can_undo(later)
    wf.certify(folder)                               # an opening: nothing given before it is taken back
    assert not desk.can_undo(later)


def test_a_stale_or_altered_form_records_nothing(tmp_path: Path) -> None:
    folder, relevant, _ = _topic(tmp_path)
    desk = open_desk(folder)
    shown = desk.standing("me")
    assert shown.item == ("q0", "d0") and shown.position == 0
    with pytest.raises(Refused, match="stale"):      # a document the review does not ask for
        desk.record(Answer(desk.audit_id, desk.sample_hash, "5", "q0", "d5", "1"), "Ada", "me")
    with pytest.raises(Refused, match="altered"):
        desk.record(Answer(desk.audit_id, desk.sample_hash, "3", "q0", "d0", "1"), "Ada", "me")
    assert desk.standing("me").labelled == 0
    other = desk.standing("you")                      # one document is asked at a time
    assert other.item is None and other.done is not None and "another reviewer" in other.done


def test_an_edited_store_is_refused_as_the_label_step_refuses_it(tmp_path: Path) -> None:
    folder, relevant, _ = _topic(tmp_path)
    desk = open_desk(folder)
    _answer(desk, "me", relevant)
    with LabelStore(folder / "labels.sqlite") as store:   # a label the review never asked for
        store.record([("q0", "d200")], [1], "cli")
    with pytest.raises(ValueError, match="never asked"):
        desk.standing("me")


def test_a_held_document_names_its_reader_and_a_second_session_of_that_name_is_asked_it(
        tmp_path: Path) -> None:
    """The review asks for one document at a time: a second reviewer is told who reads it and for
    how long it is held; the same reviewer in another session (a closed tab, another device) is
    asked it again rather than made to wait for their own hold."""
    folder, _, _ = _topic(tmp_path)
    desk = open_desk(folder)
    first = desk.standing("ada-tab", "Ada")
    assert first.item is not None
    other = desk.standing("bob", "Bob")
    assert other.item is None and other.done is not None
    assert other.done.startswith("The document the review asks for now is being read by reviewer 'Ada' "
                                 "(asked just now; it is asked of another reviewer if not answered within "
                                 "10 min): reload in a while")
    assert desk.standing("ada-phone", "Ada").item == first.item
    brief = open_desk(folder, hold_s=0.0)   # a hold that ran out: the document is asked of another
    assert brief.standing("ada", "Ada").item == first.item == brief.standing("bob", "Bob").item


def test_the_page_reads_on_an_audit_in_the_screener_s_words(tmp_path: Path) -> None:
    """An interleaved audit met: the page's Read on asks for the ranking's next document (a screen
    step), as ``rankcut audit read-on`` does."""
    folder, _, qrels = _topic(tmp_path)
    wf.label(folder, qrels=qrels)
    met = len(_steps(folder))
    assert met < 240   # certified before every document was read
    client = open_client(folder)
    page = client.get("/").text
    assert "screener's next picks" in page and f"rankcut audit read-on --audit {folder}" in page
    response = client.post("/read-on", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert response.status_code == 200
    assert f"reading on after {met} documents read: the review asks for the screener's next picks" in said(
        response.text)
    assert "screen · rank" in response.text and fields_of(response.text)["doc_id"]


def test_labels_edited_with_their_history_after_certify_are_not_shown_as_certified(tmp_path: Path) -> None:
    """A label and its history row edited together after a certify: the review replays consistently,
    so the header showed the edited review's bound and "certified" while certify refused them."""
    folder, relevant, qrels = _topic(tmp_path)
    wf.label(folder, qrels=qrels, limit=30)
    wf.certify(folder)
    assert open_desk(folder).standing("me").can_certify
    flip_with_history(folder, _steps(folder)[0]["doc_id"])
    said = "certifying is refused: the labels opened for certification"
    shown = open_desk(folder).standing("me")
    assert shown.verdict is not None and shown.verdict.startswith(said)
    assert shown.met is False and not shown.can_certify
    assert wf.status(folder)["labels_changed"] == shown.verdict


def test_a_store_deleted_after_certify_is_said_not_shown_as_nothing_read(tmp_path: Path) -> None:
    folder, _, qrels = _topic(tmp_path)
    wf.label(folder, qrels=qrels, limit=30)
    wf.certify(folder)
    (folder / "labels.sqlite").unlink()
    (folder / "review.jsonl").unlink()
    shown = open_desk(folder).standing("me")
    assert shown.verdict is not None and "labels.sqlite is missing, but the labels" in shown.verdict
    assert shown.verdict == wf.status(folder)["labels_changed"] and not shown.can_certify
    page = open_client(folder).get("/").text   # the page says it too, with no bound to show
    assert "labels.sqlite is missing, but the labels" in page
