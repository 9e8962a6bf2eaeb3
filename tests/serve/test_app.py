"""The labelling page through the ASGI test client: the token, CSRF and origin checks, every refused
submission (nothing recorded), labelling a small sequential audit to its certificate, undo, a
fixed-size design, and the ``rankcut serve`` command."""

from __future__ import annotations

import html
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402
from serve_client import ORIGIN, TOKEN, answer, fields_of, open_client, said, stored_labels  # noqa: E402
from serve_testdata import SmallAudit, make_audit  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from rankcut.audit import workflow as wf  # noqa: E402
from rankcut.audit.folder import AuditStepError  # noqa: E402
from rankcut.audit.labels import LabelStore  # noqa: E402
from rankcut.certify.result import format_bound  # noqa: E402
from rankcut.serve.app import create_app  # noqa: E402

# --- the token and the origin ------------------------------------------------------------------------


def test_every_request_without_the_token_is_refused(small: SmallAudit) -> None:
    client = TestClient(create_app(small.folder, TOKEN))
    for path in ("/", "/result", "/certificate.json", "/report.html"):
        assert client.get(path).status_code == 403
    assert client.get("/?token=tökén").status_code == 403   # not a server error
    refused = client.get("/?token=wrong")
    assert refused.status_code == 403 and "access refused" in refused.text
    assert small.folder.name not in refused.text and "audit" not in refused.text   # nothing of the audit
    assert client.post("/answer", data={}, headers=ORIGIN).status_code == 403
    # the token once in the URL: a redirect that drops it, and a cookie from then on
    first = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"].lower()
    assert "rankcut_token_" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/").status_code == 200


def test_a_post_without_the_session_token_or_from_another_origin_records_nothing(small: SmallAudit) -> None:
    client = open_client(small.folder)
    fields = fields_of(client.get("/").text)
    answer = {**fields, "label": "1"}
    assert client.post("/answer", data={**answer, "csrf": "forged"}, headers=ORIGIN).status_code == 403
    assert client.post("/answer", data={**answer, "csrf": "förged"}, headers=ORIGIN).status_code == 403
    assert client.post("/answer", data={k: v for k, v in answer.items() if k != "csrf"},
                       headers=ORIGIN).status_code == 403
    evil = client.post("/answer", data=answer, headers={"origin": "http://evil.example"})
    assert evil.status_code == 403 and "cross-site" in evil.text
    assert client.post("/answer", data=answer,
                       headers={"referer": "http://evil.example/x"}).status_code == 403
    assert client.post("/answer", data=answer).status_code == 403   # neither Origin nor Referer
    assert stored_labels(small.folder) == {}
    ok = client.post("/answer", data=answer, headers={"referer": "http://testserver/"},
                     follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    assert len(stored_labels(small.folder)) == 1


def test_the_page_shows_query_document_and_place_and_no_url_holds_document_text(small: SmallAudit) -> None:
    client = open_client(small.folder)
    page = client.get("/").text
    assert "what is topic 0?" in page and "Document 0 of topic 0." in page
    assert "cut 1 of 8" in page and "0 labelled · 24 to go" in page
    urls = re.findall(r'(?:href|action)="([^"]*)"', page)
    assert urls and not any("Document" in u or "topic" in u for u in urls)
    # document text is escaped, never run; the page cannot be framed or cached
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page and "<script>alert" not in page
    headers = client.get("/").headers
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    _, _, _ = answer(client, small)
    assert "1 labelled · 23 to go" in client.get("/").text


def test_a_title_heads_its_text_whether_the_text_holds_it_or_not(small: SmallAudit) -> None:
    """A texts file's title is shown above the text: less the title where the text begins with it
    (rankcut review's records), the whole text where the title stands apart (a corpus's title and
    body; the page refused to open such a file while it asked a title to begin the text)."""
    from rankcut.serve.desks import open_desk

    desk = open_desk(small.folder)
    item = next(iter(desk.texts or {}))
    body = (desk.texts or {})[item]
    desk.titles = {item: "Apart"}
    assert desk.title_and_text(item) == ("Apart", body)
    desk.texts = {item: f"Heading\n{body}"}
    desk.titles = {item: "Heading"}
    assert desk.title_and_text(item) == ("Heading", body)
    desk.texts = {item: "Heading"}
    assert desk.title_and_text(item) == ("Heading", "")
    desk.titles = {}
    assert desk.title_and_text(item) == (None, "Heading")


def test_without_a_name_nothing_is_recorded_and_a_blank_name_is_refused(small: SmallAudit) -> None:
    client = open_client(small.folder, name=None)
    page = client.get("/").text
    assert 'name="name"' in page
    csrf = fields_of(page)["csrf"]
    response = client.post("/answer", data={"csrf": csrf, "label": "1"}, headers=ORIGIN)
    assert "give your name before labelling" in response.text and stored_labels(small.folder) == {}
    response = client.post("/reviewer", data={"name": "   ", "csrf": csrf}, headers=ORIGIN)
    assert "a reviewer name is 1 to 60 printable characters" in response.text


# --- bad and stale submissions -------------------------------------------------------------------------


def test_an_item_not_in_the_sample_is_refused(small: SmallAudit) -> None:
    client = open_client(small.folder)
    message, text, _ = answer(client, small, doc_id="not-sampled")
    assert message and "is not in the sample" in message
    assert text.count("is not in the sample") == 1     # said once, not again in the page's header
    assert stored_labels(small.folder) == {}
    message, _, _ = answer(client, small, audit_id="", sample_hash="")   # a form without the page's fields
    assert message and message.startswith("the form lacks the fields the page sends")


def test_a_double_submit_records_one_label(small: SmallAudit) -> None:
    client = open_client(small.folder)
    fields = fields_of(client.get("/").text) | {"label": "1"}
    assert said(client.post("/answer", data=fields, headers=ORIGIN).text) is None
    again = client.post("/answer", data=fields, headers=ORIGIN, follow_redirects=False)
    assert again.status_code == 303 and again.headers["location"] == "/"   # a reload sends nothing again
    page = client.get("/").text
    assert "already labelled 1: nothing was recorded" in (said(page) or "")
    assert fields_of(page)["position"] != fields["position"]   # the message is above the item asked now
    assert said(client.get("/").text) is None                  # and said once
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert len(store.history()) == 1 and store.count() == 1


def test_a_stale_page_for_a_later_item_is_refused(small: SmallAudit) -> None:
    client = open_client(small.folder)
    first = fields_of(client.get("/").text)
    answer(client, small)
    answer(client, small)
    # the first page, sent again with the other label: already labelled, and the two readings
    # disagree; a later item's form, early: stale
    held = stored_labels(small.folder)[(first["query_id"], first["doc_id"])]
    message, _, _ = answer(client, small, **{k: first[k] for k in ("position", "query_id", "doc_id")},
                           label=str(1 - held))
    assert f"is already labelled {held}, and this answer says {1 - held}: two readings disagree. Nothing " \
        "was recorded" in (message or "")
    message, _, _ = answer(client, small, position="5", query_id="q1", doc_id="d1-1")
    assert "this page is stale" in (message or "")
    assert len(stored_labels(small.folder)) == 2


@pytest.mark.parametrize(("change", "says"), [
    ({"label": "2"}, "its label '2' is neither 0 nor 1"), ({"label": ""}, "its label '' is neither 0 nor 1"),
    ({"position": "7"}, "is not at the position '7' it gives: its item or its position was changed"),
    # another record's id under the position the page sent (a reviewer's walk: "its position or label")
    ({"query_id": "q1", "doc_id": "d1-11"}, "(query 'q1', document 'd1-11') is not at the position"),
    ({"audit_id": "0" * 64}, "another audit or sample"),
    ({"sample_hash": "f" * 64}, "another audit or sample")])
def test_a_tampered_form_records_nothing(small: SmallAudit, change: dict[str, str], says: str) -> None:
    client = open_client(small.folder)
    message, _, _ = answer(client, small, **change)
    assert "nothing was recorded" in (message or "") and says in html.unescape(message or ""), message
    assert stored_labels(small.folder) == {}


def test_a_label_after_the_folder_was_frozen_again_is_refused(small: SmallAudit, tmp_path: Path) -> None:
    client = open_client(small.folder)
    fields = fields_of(client.get("/").text) | {"label": "1"}
    for name in ("manifest.json", "snapshot.npz", "plan.json", "sample.json", "sample.jsonl", "to_label.csv"):
        (small.folder / name).unlink()
    wf.freeze(small.folder, run=tmp_path / "run.txt", cut=tmp_path / "cut.run", design="sequential",
              target_recall=0.5, delta=0.2, seed=4, texts=tmp_path / "texts.jsonl")
    wf.plan(small.folder)
    wf.sample(small.folder)
    response = client.post("/answer", data=fields, headers=ORIGIN)
    assert response.status_code == 409 and "was frozen again" in response.text
    assert "was frozen again" in client.get("/").text
    assert stored_labels(small.folder) == {}


# --- labelling to the certificate --------------------------------------------------------------------------


def test_a_sequential_audit_is_labelled_to_its_certificate(small: SmallAudit) -> None:
    client = open_client(small.folder)
    given: dict[tuple[str, str], int] = {}
    bounds = []
    while True:
        page = client.get("/").text
        if "target recall ≥ 0.5: met" in page:
            break
        message, _, fields = answer(client, small)
        assert message is None
        given[fields["query_id"], fields["doc_id"]] = int(fields["label"])
        bounds += re.findall(r"recall ≥ (0\.\d+) —", client.get("/").text)
    assert len(given) == 12 and bounds == sorted(bounds) and float(bounds[-1]) >= 0.5 > float(bounds[-2])
    assert 'id="certify"' in page
    assert client.get("/result").status_code == 404   # not certified yet
    response = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert response.status_code == 200
    assert "target recall ≥ 0.5: met after 4 of 16 audit labels" in response.text
    assert "In plain words" in response.text and "Simulated" not in response.text   # a reviewer's labels
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert {(q, d): y for q, d, y in store.items()} == given   # exactly the labels given
        assert store.sources() == ["serve reviewer Ada"]
        assert len(store.history()) == len(given)
    downloaded = client.get("/certificate.json")
    assert downloaded.json() == json.loads((small.folder / "certificate.json").read_text())
    assert "attachment" in downloaded.headers["content-disposition"]
    report = client.get("/report.html")
    assert report.status_code == 200 and "Audit report" in report.text
    assert 'src="/plot.png"' in response.text
    plot = client.get("/plot.png")
    assert plot.headers["content-type"] == "image/png" and plot.content.startswith(b"\x89PNG")


def test_the_result_says_how_many_labels_a_simulation_gave(small: SmallAudit, tmp_path: Path) -> None:
    """A reviewer's walk: a certificate of simulated labels read on the page (and from certify)
    exactly like a reviewer's; only certificate.json and the report's "Labels from" said it."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in sorted(small.relevant)))
    wf.label(small.folder, qrels=qrels, limit=2)   # the first two from the qrels, the rest on the page
    client = open_client(small.folder)
    while "target recall ≥ 0.5: met" not in client.get("/").text:
        assert answer(client, small)[0] is None
    page = client.get("/").text
    response = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert response.status_code == 200
    sources = json.loads((small.folder / "certificate.json").read_text())["label_sources"]
    total = sum(sources.values())
    assert total > 2 and (f"Simulated: 2 of the {total} labels come from a simulation (known labels played "
                          "the reviewer), not from a reviewer.") in response.text
    assert "Simulated: 2 of the" in wf.certify(small.folder).render(plain_first=True)


def test_undo_takes_the_last_answer_back_while_nothing_may_have_seen_it(small: SmallAudit) -> None:
    client = open_client(small.folder)
    _, _, first = answer(client, small)
    item = (first["query_id"], first["doc_id"])
    page = client.get("/").text
    assert 'id="undo"' in page
    response = client.post("/undo", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert "undone: the document is asked again" in response.text and "cut 1 of 8" in response.text
    assert 'id="undo"' not in response.text   # one answer back
    assert stored_labels(small.folder) == {}
    message, _, _ = answer(client, small, label="0")
    assert message is None and stored_labels(small.folder) == {item: 0}
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert [(e.old_label, e.new_label, e.source) for e in store.history()] == [
            (None, 1, "serve reviewer Ada"), (1, None, "serve reviewer Ada"), (None, 0, "serve reviewer Ada")]
    # certify opens the labels: an answer given before that is never taken back
    while len(stored_labels(small.folder)) < 8:   # the cut: certify may run
        answer(client, small)
    page = client.get("/").text
    client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert 'id="undo"' not in client.get("/").text
    response = client.post("/undo", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert "no answer of yours that can be undone" in response.text and len(stored_labels(small.folder)) == 8
    assert "cannot be taken back: the labels were opened for certification" in html.unescape(response.text)
    # the sequential design takes new labels after an opening; one given since may be taken back
    answer(client, small)
    page = client.get("/").text
    assert 'id="undo"' in page
    client.post("/undo", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert len(stored_labels(small.folder)) == 8


def test_an_answer_is_not_taken_back_once_certify_opened_the_labels_in_between(small: SmallAudit) -> None:
    client = open_client(small.folder)
    for _ in range(8):
        answer(client, small)
    page = client.get("/").text
    assert 'id="undo"' in page
    wf.certify(small.folder)   # rankcut audit certify, from the command line, meanwhile
    response = client.post("/undo", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert "no answer of yours that can be undone" in response.text and len(stored_labels(small.folder)) == 8


def test_a_fixed_size_design_shows_no_bound_and_certifies_once_every_item_is_labelled(tmp_path: Path) -> None:
    small = make_audit(tmp_path, design="excluded")
    client = open_client(small.folder)
    page = client.get("/").text
    assert "item 1 of 4" in page and "current bound" not in page and 'id="certify"' not in page
    early = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert early.status_code == 409 and "every sampled item must be labelled first" in early.text
    assert not (small.folder / "opened.json").exists()
    for _ in range(4):
        assert answer(client, small)[0] is None
    page = client.get("/").text
    assert "Every item of the sample is labelled" in page and 'id="certify"' in page
    response = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert response.status_code == 200 and "target" in response.text
    # what it means: the report's validity lines (the section was empty for a fixed-size design)
    means = re.search(r'<ul id="notes">(.*?)</ul>', response.text, re.S)
    assert means is not None and "Assumption 1 (design before certification)" in means.group(1)
    assert "Assumption 2 (noiseless labels)" in means.group(1)
    assert 'id="certify"' not in client.get("/").text
    again = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert again.status_code == 409 and "nothing was certified" in again.text


def test_a_folder_without_a_sample_is_refused(small: SmallAudit) -> None:
    (small.folder / "sample.json").unlink()
    with pytest.raises(AuditStepError, match="no sample yet"):
        create_app(small.folder, TOKEN)


# --- the command ----------------------------------------------------------------------------------------


def test_the_command_prints_the_address_once_and_warns_for_another_host(
        small: SmallAudit, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from rankcut.cli.main import app

    served = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets: served.append(sockets[0].getsockname()))
    result = CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0"])
    assert result.exit_code == 0, result.output
    assert served[0][0] == "127.0.0.1"
    assert re.search(rf"http://127\.0\.0\.1:{served[0][1]}/\?token=[\w-]{{40,}}", result.output)
    assert "warning" not in result.output
    wide = CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0", "--host", "0.0.0.0"])
    assert wide.exit_code == 0 and "warning: --host 0.0.0.0: the page is reachable from other machines" \
        in wide.output


def test_the_command_names_a_folder_that_is_not_an_audit(tmp_path: Path) -> None:
    from rankcut.cli.main import app

    result = CliRunner().invoke(app, ["serve", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and result.output.startswith("error: ")


def test_the_command_names_the_audit_step_to_run(small: SmallAudit) -> None:
    from rankcut.cli.main import app

    (small.folder / "sample.json").unlink()
    result = CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0"])
    assert result.exit_code == 2 and "run rankcut audit sample first" in result.output, result.output


def test_the_command_line_and_the_page_label_the_same_folder_at_once(small: SmallAudit,
                                                                     tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in sorted(small.relevant)))
    client = open_client(small.folder)
    stale = fields_of(client.get("/").text) | {"label": "1"}
    wf.label(small.folder, qrels=qrels, limit=3)   # rankcut audit label --oracle qrels --next 3
    response = client.post("/answer", data=stale, headers=ORIGIN)
    assert "already labelled 1" in (said(response.text) or "")
    assert "cut 4 of 8" in response.text and "3 labelled" in response.text
    assert answer(client, small)[0] is None
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert sorted(e.source.split()[0] for e in store.history()) == ["serve", *["simulation:"] * 3]


def test_the_place_groups_the_digits_of_a_long_audit_order(tmp_path: Path) -> None:
    small = make_audit(tmp_path, depth=600)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} 1\n" for q, d in sorted(small.relevant)))
    wf.label(small.folder, qrels=qrels, limit=8)   # the cut
    assert "audit order 1 of 1,192" in open_client(small.folder).get("/").text


def test_a_store_that_cannot_be_written_is_a_message_not_a_crash(small: SmallAudit,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    client = open_client(small.folder)
    answer(client, small)

    def read_only(*args: object, **kwargs: object) -> int:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(LabelStore, "record", read_only)
    message, _, _ = answer(client, small)
    assert "could not be written (attempt to write a readonly database)" in (message or "")
    assert len(stored_labels(small.folder)) == 1


def test_the_bound_shown_after_each_answer_is_the_one_certify_writes(small: SmallAudit,
                                                                      tmp_path: Path) -> None:
    client = open_client(small.folder)
    for step in range(14):
        page = client.get("/").text
        if step >= 8:   # the cut is labelled: the header shows the bound at the labelled prefix
            copy = tmp_path / f"copy{step}"
            shutil.copytree(small.folder, copy)
            written = wf.certify(copy).content
            shown = re.search(r'class="(?:met|notmet)">([^<]*)</span>', page)
            assert shown and shown.group(1) == written["verdict"]["text"]
            recall = written["members"][0]["recall"]
            assert f"recall ≥ {format_bound(recall, 'lower')} —" in page
        assert answer(client, small)[0] is None
    assert not (small.folder / "opened.json").exists()   # showing the bound opened nothing


def test_two_reviewers_are_asked_different_items_and_each_answer_carries_its_name(
        small: SmallAudit) -> None:
    app = create_app(small.folder, TOKEN)
    ada, bob = open_client(small.folder, "Ada", app), open_client(small.folder, "Bob", app)
    first, second = fields_of(ada.get("/").text), fields_of(bob.get("/").text)
    assert (first["position"], second["position"]) == ("0", "1")
    assert fields_of(ada.get("/").text)["position"] == "0"   # a reload asks the same item again
    # Ada may not answer the item Bob was asked
    message, _, _ = answer(ada, small, **{k: second[k] for k in ("position", "query_id", "doc_id")})
    assert "this page is stale" in (message or "")
    assert answer(bob, small)[0] is None and answer(ada, small)[0] is None
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        sources = {(e.query_id, e.doc_id): e.source for e in store.history()}
    assert sources == {(first["query_id"], first["doc_id"]): "serve reviewer Ada",
                       (second["query_id"], second["doc_id"]): "serve reviewer Bob"}
    # Bob answered first and was asked the next free item (2), so Ada is asked the one after it
    assert fields_of(bob.get("/").text)["position"] == "2" and fields_of(ada.get("/").text)["position"] == "3"


def test_the_last_item_held_by_another_reviewer_is_not_said_to_be_labelled(tmp_path: Path) -> None:
    """Bob labelled every item but the one Ada holds: his page said "Every item of the sample is
    labelled." (offering nothing, no Certify) while status said one was still to label."""
    small = make_audit(tmp_path, design="excluded")
    app = create_app(small.folder, TOKEN)
    ada, bob = open_client(small.folder, "Ada", app), open_client(small.folder, "Bob", app)
    held = fields_of(ada.get("/").text)
    while "doc_id" in fields_of(bob.get("/").text):
        assert answer(bob, small)[0] is None
    page = bob.get("/").text
    assert "Every item of the sample is labelled" not in page and 'id="certify"' not in page
    assert f"The 1 document still to label is being read by other reviewers (the first, item " \
           f"{int(held['position']) + 1} of " in page and "being read by reviewer &#39;Ada&#39;" in page
    assert answer(ada, small)[0] is None   # Ada answers: now every item is labelled
    assert "Every item of the sample is labelled" in bob.get("/").text


def test_an_item_asked_of_a_reviewer_who_left_is_asked_again_after_the_hold(small: SmallAudit) -> None:
    app = create_app(small.folder, TOKEN, hold_s=0.0)
    ada, bob = open_client(small.folder, "Ada", app), open_client(small.folder, "Bob", app)
    assert fields_of(ada.get("/").text)["position"] == "0"
    assert fields_of(bob.get("/").text)["position"] == "0"   # Ada's hold is over


def test_two_servers_on_one_machine_keep_their_own_cookies(small: SmallAudit) -> None:
    # a browser sends a host's cookies to every port: the second server's login must not replace
    # the first one's token cookie
    names = [TestClient(create_app(small.folder, token)).get(f"/?token={token}", follow_redirects=False)
             .headers["set-cookie"].split("=")[0] for token in ("token-one", "token-two")]
    assert names[0] != names[1] and all(n.startswith("rankcut_token_") for n in names)


def test_a_label_after_an_opening_recorded_in_the_store_only_is_refused(tmp_path: Path) -> None:
    # as `rankcut audit label` refuses it: the store's meta records an opening (opened.json not yet)
    small = make_audit(tmp_path, design="excluded")
    client = open_client(small.folder)
    answer(client, small)
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        store.set_meta("opened_at", "2026-01-01T00:00:00+00:00")
    message, _, _ = answer(client, small)
    assert "recording labels is refused" in (message or "")
    assert len(stored_labels(small.folder)) == 1


def test_a_second_server_on_one_folder_is_refused_while_the_first_runs(
        small: SmallAudit, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each server keeps which record each reviewer is being asked: a second one on the same folder
    would ask two reviewers the same record, so it is refused, naming the first one's address; once
    the first stops, the folder can be served again."""
    import uvicorn

    from rankcut.cli.main import app

    seconds = []

    def run(self: object, sockets: list) -> None:   # while the first server runs, a second starts
        seconds.append(CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0"]))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    first = CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0"])
    assert first.exit_code == 0, first.output
    port = re.search(r"http://127\.0\.0\.1:(\d+)/", first.output)
    assert port is not None and seconds[0].exit_code == 2
    assert seconds[0].output.startswith(f"error: {small.folder} is being labelled by another rankcut serve "
                                        f"(http://127.0.0.1:{port[1]}/, pid ")
    assert "token=" not in seconds[0].output   # the address is named, never its access token
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets: None)
    assert CliRunner().invoke(app, ["serve", str(small.folder), "--port", "0"]).exit_code == 0


def test_the_command_refuses_a_folder_without_a_manifest_and_a_port_out_of_range(tmp_path: Path) -> None:
    from rankcut.cli.main import app

    result = CliRunner().invoke(app, ["serve", str(tmp_path), "--port", "0"])
    assert result.exit_code == 2 and "holds no audit or review (manifest.json is missing)" in result.output
    assert "rankcut review start" in result.output and "rankcut audit freeze" in result.output
    missing = CliRunner().invoke(app, ["serve", str(tmp_path / "nope"), "--port", "0"])
    assert missing.exit_code == 2
    assert f"{tmp_path / 'nope'} does not exist: serve the folder" in missing.output
    result = CliRunner().invoke(app, ["serve", str(tmp_path), "--port", "99999"])
    assert result.exit_code == 2 and "65535" in result.output and "Traceback" not in result.output


def test_the_result_of_a_certificate_answers_came_after_is_refused(small: SmallAudit) -> None:
    """Certified midway, then answered on: the report and its plot would show the old certificate
    as if it were the audit's now (refused); the result page shows it as the last one."""
    client = open_client(small.folder)
    while len(stored_labels(small.folder)) < 9:   # the cut and one audit label: not met yet
        answer(client, small)
    page = client.get("/").text
    response = client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    assert response.status_code == 200 and "NOT met yet after 1 of 16 audit labels" in response.text
    answer(client, small)
    for path in ("/report.html", "/plot.png"):
        stale = client.get(path)
        assert stale.status_code == 409, path
        assert "the certificate is out of date (1 audit label read since the last" in stale.text, path
    last = client.get("/result")   # the link "the last certificate": shown, said out of date, no report
    assert last.status_code == 200 and 'id="stale"' in last.text and "NOT met yet after 1 of 16" in last.text
    assert 'id="report"' not in last.text and 'id="plot"' not in last.text
    page = client.get("/").text
    assert client.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN).status_code == 200
    assert client.get("/result").status_code == 200
