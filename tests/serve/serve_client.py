"""The labelling page's test browser: a client holding the token (and a reviewer name), the hidden
fields of a page's forms, the labels in a folder's store, and a truthful answer."""

from __future__ import annotations

import html
import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient
from serve_testdata import SmallAudit

from rankcut.audit.labels import LabelStore
from rankcut.serve.app import create_app

__all__ = ["ORIGIN", "TOKEN", "answer", "fields_of", "open_client", "said", "stored_labels"]

TOKEN = "t0ken-for-tests"
ORIGIN = {"origin": "http://testserver"}


def open_client(folder: Path, name: str | None = "Ada", app: FastAPI | None = None) -> TestClient:
    """A browser with the token and (unless ``name`` is None) a reviewer name, on its own server or
    on ``app``."""
    client = TestClient(create_app(folder, TOKEN) if app is None else app)
    assert client.get(f"/?token={TOKEN}").status_code == 200
    if name is not None:
        page = client.get("/").text
        client.post("/reviewer", data={"name": name, "csrf": fields_of(page)["csrf"]}, headers=ORIGIN)
    return client


def fields_of(page: str) -> dict[str, str]:
    """The hidden fields of the page's forms (the answer form's, and the CSRF token)."""
    return dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))


def stored_labels(folder: Path) -> dict[tuple[str, str], int]:
    if not (folder / "labels.sqlite").exists():
        return {}
    with LabelStore(folder / "labels.sqlite", create=False) as store:
        return {(q, d): y for q, d, y in store.items()}


def said(page: str) -> str | None:
    """The message a page shows above the item (or its refusal), unescaped; None when it shows none."""
    found = re.search(r'id="(?:message|refusal)">(.*?)</', page, re.S)
    return None if found is None else html.unescape(found.group(1))


def answer(client: TestClient, small: SmallAudit, **change: str) -> tuple[str | None, str, dict[str, str]]:
    """Answer the item the page asks for truthfully (``change`` alters form fields): the message the
    page then shows (None: the answer was taken without a word), that page, and the form sent. An
    answer, refused or not, is followed by a redirect to ``/`` (nothing sent again on a reload)."""
    fields = fields_of(client.get("/").text)
    fields["label"] = str(int((fields["query_id"], fields["doc_id"]) in small.relevant))
    fields.update(change)
    response = client.post("/answer", data=fields, headers=ORIGIN, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/", response.text
    page = client.get("/").text
    return said(page), page, fields
