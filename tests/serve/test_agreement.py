"""The second reading: Cohen's κ (against scikit-learn's), a second reviewer labelling a first one's
items blind into agreement.sqlite, never into the audit's store, and what it refuses."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from serve_client import ORIGIN, TOKEN, answer, fields_of, open_client, said, stored_labels  # noqa: E402
from serve_testdata import SmallAudit  # noqa: E402

from rankcut.audit.labels import LabelStore  # noqa: E402
from rankcut.serve.agreement import cohen_kappa  # noqa: E402
from rankcut.serve.app import create_app  # noqa: E402


def test_cohen_kappa_by_hand_and_against_scikit_learn() -> None:
    assert cohen_kappa([(1, 1), (0, 0), (1, 0), (0, 0)]) == pytest.approx(0.5)
    assert cohen_kappa([(1, 1), (1, 1)]) is None and cohen_kappa([]) is None   # undefined
    assert cohen_kappa([(1, 0), (0, 1)]) == pytest.approx(-1.0)
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.integers(0, 2, size=int(rng.integers(2, 30)))
        b = np.where(rng.random(a.size) < 0.8, a, 1 - a)
        ours = cohen_kappa(list(zip(a.tolist(), b.tolist(), strict=True)))
        if ours is not None:
            assert ours == pytest.approx(metrics.cohen_kappa_score(a, b))


def _second(small: SmallAudit, name: str, app: FastAPI) -> TestClient:
    client = open_client(small.folder, name=None, app=app)
    page = client.get("/").text
    client.post("/reviewer", data={"name": name, "second": "1", "csrf": fields_of(page)["csrf"]},
                headers=ORIGIN)
    return client


def test_a_second_reader_labels_blind_into_its_own_store_and_sees_kappa(small: SmallAudit) -> None:
    app = create_app(small.folder, TOKEN)
    ada = open_client(small.folder, "Ada", app)
    for _ in range(6):
        assert answer(ada, small)[0] is None
    first = stored_labels(small.folder)
    bob = _second(small, "Bob", app)
    page = bob.get("/").text
    assert "second reading" in page and "no item read twice yet" in page
    assert "recorded answer" not in page and 'action="/second"' in page
    pairs = []
    for step in range(4):
        fields = fields_of(bob.get("/").text)
        item = (fields["query_id"], fields["doc_id"])
        label = first[item] if step != 2 else 1 - first[item]   # one disagreement
        response = bob.post("/second", data={**fields, "label": str(label)}, headers=ORIGIN)
        assert response.status_code == 200 and said(response.text) is None
        pairs.append((first[item], label))
    kappa = cohen_kappa(pairs)
    shown = f"Cohen's κ {kappa:.2f}" if kappa is not None else "κ undefined"
    assert f"3 of 4 items read twice agree; {shown}" in html.unescape(bob.get("/").text)
    assert stored_labels(small.folder) == first   # the audit's labels are untouched
    with LabelStore(small.folder / "labels.sqlite", create=False) as store:
        assert len(store.history()) == 6
    with LabelStore(small.folder / "agreement.sqlite", create=False) as store:
        assert len(store.items()) == 4 and store.sources() == ["serve reviewer Bob"]
    # the same answer again is refused; a first-reading session cannot post a second label
    again = bob.post("/second", data={**fields, "label": str(label)}, headers=ORIGIN, follow_redirects=False)
    assert again.status_code == 303 and "read twice already" in (said(bob.get("/").text) or "")
    own = {**fields, "label": "1", "csrf": fields_of(ada.get("/").text)["csrf"]}
    assert "not a second reading" in ada.post("/second", data=own, headers=ORIGIN).text
    # certify counts the audit's labels only
    for _ in range(2):
        answer(ada, small)
    page = ada.get("/").text
    assert ada.post("/certify", data={"csrf": fields_of(page)["csrf"]}, headers=ORIGIN).status_code == 200


def test_a_reviewer_is_not_asked_to_read_their_own_labels_again(small: SmallAudit) -> None:
    app = create_app(small.folder, TOKEN)
    ada = open_client(small.folder, "Ada", app)
    answer(ada, small)
    again = _second(small, "Ada", app)
    assert "No item waits for a second reading" in again.get("/").text


def test_labels_given_on_the_command_line_under_a_reviewer_s_name_are_theirs(small: SmallAudit,
                                                                             tmp_path: Path) -> None:
    """rankcut review label --reviewer Ada records "file …, reviewer Ada": the second reading asked
    Ada her own labels again, as it knew only the page's "serve reviewer Ada"."""
    import csv

    from rankcut.audit import workflow

    with open(small.folder / "to_label.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))[:3]
    answers = tmp_path / "answers.csv"
    truth = [int((r["query_id"], r["doc_id"]) in small.relevant) for r in rows]
    answers.write_text("query_id,doc_id,label\n" + "".join(f"{r['query_id']},{r['doc_id']},{y}\n"
                                                         for r, y in zip(rows, truth, strict=True)))
    workflow.label(small.folder, from_file=answers, file_source="file answers.csv sha256:0, reviewer Ada")
    app = create_app(small.folder, TOKEN)
    assert "No item waits for a second reading" in _second(small, "Ada", app).get("/").text
    bob = fields_of(_second(small, "Bob", app).get("/").text)
    assert (bob["query_id"], bob["doc_id"]) == (rows[0]["query_id"], rows[0]["doc_id"])


def test_the_reviewer_a_source_names() -> None:
    from rankcut.audit.labels import reviewer_of

    assert [reviewer_of(s) for s in ("serve reviewer Ada", "file b.csv sha256:0123, reviewer Ada Lovelace",
                                     "interactive, reviewer Bob", "interactive", "file b.csv sha256:0123",
                                     "simulation: qrels q.txt sha256:0")] == [
        "Ada", "Ada Lovelace", "Bob", None, None, None]
