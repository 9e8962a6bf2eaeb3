"""The desk keeps the labels, the first unlabelled item and the labelled start of the audit order
between answers and reads only what the store recorded since (issue 18's latency bar deep into an
audit): whatever happened in between — answers, undos, overwrites, ``rankcut audit label`` writing
the same store, the store removed — it shows what a fresh desk shows."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from serve_testdata import SmallAudit
from typer.testing import CliRunner

from rankcut.audit.labels import LabelStore, remove_store, write_label_file
from rankcut.cli.main import app as cli
from rankcut.serve.desk import Answer, Desk, Standing
from rankcut.serve.desks import open_desk

Item = tuple[str, str]
runner = CliRunner()


def _cli_label(folder: Path, rows: list[tuple[str, str, int]], *extra: str) -> None:
    path = folder.parent / "answers.csv"
    write_label_file(path, rows)
    result = runner.invoke(cli, ["audit", "label", "--audit", str(folder), "--from", str(path), *extra])
    assert result.exit_code == 0, result.output


def _store(folder: Path, desk: Desk) -> dict[Item, int]:
    if not (folder / "labels.sqlite").exists():
        return {}
    with LabelStore(folder / "labels.sqlite", create=False) as store:
        return {(q, d): y for q, d, y in store.items() if (q, d) in desk.index}


def _same_as_fresh(desk: Desk, folder: Path) -> Standing:
    shown = desk.standing()
    assert shown == open_desk(folder).standing()
    assert desk._held == _store(folder, desk)
    return shown


def _answer(desk: Desk, small: SmallAudit, label: int | None = None) -> None:
    item = desk.standing("page").item
    assert item is not None
    y = int(item in small.relevant) if label is None else label
    desk.record(Answer(desk.audit_id, desk.sample_hash, str(desk.index[item]), item[0], item[1], str(y)),
                "Ada", "page")


def test_the_kept_labels_and_pointers_are_a_fresh_desks_across_every_change(small: SmallAudit) -> None:
    desk = open_desk(small.folder)
    _same_as_fresh(desk, small.folder)
    cut, order = desk.cut, desk.audit_order
    _cli_label(small.folder, [(q, d, int((q, d) in small.relevant)) for q, d in cut[:-1]])
    _same_as_fresh(desk, small.folder)
    _answer(desk, small)                                    # the cut's last item: the bound shows
    shown = _same_as_fresh(desk, small.folder)
    assert shown.bound is not None and str(shown.progress).endswith("audit order: none of 16 labelled")
    for _ in range(3):
        _answer(desk, small)
        _same_as_fresh(desk, small.folder)
    assert desk.standing("page").item == order[3]
    given = desk.record(Answer(desk.audit_id, desk.sample_hash, str(desk.index[order[3]]), *order[3], "1"),
                        "Ada", "page")
    assert str(_same_as_fresh(desk, small.folder).progress).endswith("positions 1–4 of 16 labelled")
    desk.undo(given, "page")                                # taken back: the prefix and the item go back
    assert _same_as_fresh(desk, small.folder).item == order[3]
    _cli_label(small.folder, [(*order[1], 1)], "--overwrite")   # a change before an opening
    _same_as_fresh(desk, small.folder)
    _cli_label(small.folder, [(*order[5], 0), (*order[3], 0), (*order[4], 0)])   # out of order
    assert _same_as_fresh(desk, small.folder).item == order[6]
    with LabelStore(small.folder / "labels.sqlite") as store:   # another page's answer taken back
        store.record([order[6]], [0], "serve reviewer Bob")
        store.undo(order[6], 0, "serve reviewer Bob")
    assert _same_as_fresh(desk, small.folder).item == order[6]


def test_a_store_removed_or_written_afresh_is_read_again(small: SmallAudit) -> None:
    desk = open_desk(small.folder)
    items = desk.order
    _cli_label(small.folder, [(q, d, int((q, d) in small.relevant)) for q, d in items[:12]])
    assert _same_as_fresh(desk, small.folder).labelled == 12
    remove_store(small.folder / "labels.sqlite")
    assert _same_as_fresh(desk, small.folder).labelled == 0
    _cli_label(small.folder, [(q, d, 1) for q, d in items[:3]])
    assert _same_as_fresh(desk, small.folder).labelled == 3
    remove_store(small.folder / "labels.sqlite")              # between two reads: the mark is stale
    _cli_label(small.folder, [(q, d, 0) for q, d in items[:5]])
    assert _same_as_fresh(desk, small.folder).labelled == 5


def test_an_answer_reads_only_the_labels_written_since_the_last(small: SmallAudit,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    desk = open_desk(small.folder)
    _cli_label(small.folder, [(q, d, int((q, d) in small.relevant)) for q, d in desk.cut])
    desk.standing()
    read: list[int] = []
    changes_since = LabelStore.changes_since

    def whole(self: LabelStore) -> list[tuple[str, str, int]]:
        raise AssertionError("the page read the whole label store")

    def spy(self: LabelStore, mark: object) -> object:
        out = changes_since(self, mark)  # type: ignore[arg-type]
        read.append(len(out.labels))
        return out

    monkeypatch.setattr(LabelStore, "items", whole)
    monkeypatch.setattr(LabelStore, "changes_since", spy)
    for _ in range(3):
        _answer(desk, small)
    assert read == [0, 1, 1]   # each answer's page read the one label the last answer recorded


def test_a_label_from_the_command_line_between_two_page_answers(small: SmallAudit) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from rankcut.serve.app import create_app

    client = TestClient(create_app(small.folder, "tok"))
    origin = {"origin": "http://testserver"}
    client.get("/?token=tok")

    def fields() -> dict[str, str]:
        page = client.get("/").text
        return dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))

    client.post("/reviewer", data={"name": "Ada", "csrf": fields()["csrf"]}, headers=origin)
    desk = open_desk(small.folder)
    _cli_label(small.folder, [(q, d, int((q, d) in small.relevant)) for q, d in desk.cut])
    order = desk.audit_order
    for step in range(4):
        page = fields()
        item = (html.unescape(page["query_id"]), html.unescape(page["doc_id"]))
        assert item == order[2 * step]
        client.post("/answer", data={**page, "label": "0"}, headers=origin)
        _cli_label(small.folder, [(*order[2 * step + 1], 0)])   # the command line labels the next one
        text = client.get("/").text
        fresh = open_desk(small.folder).standing()
        assert fresh.progress is not None and fresh.bound is not None
        assert html.escape(fresh.progress) in text and fresh.bound in text
        assert fields()["doc_id"] == html.escape(order[2 * step + 2][1])
