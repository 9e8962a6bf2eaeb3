"""An audit shipped to someone else to check is often a read-only copy: ``certify``, ``report`` and
``status`` work on it and write nothing into it, and ``label`` says that the folder is read-only
(one line, never a traceback; never 'not a rankcut label store').

Two ways to make a folder read-only: ``chmod`` (which does not bite for root, so those tests skip
there), and :func:`rankcut.audit.labels.writable` answering False, which runs as root too and
checks that no file of the folder changes."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from audit_testdata import write_lists
from typer.testing import CliRunner

from rankcut.audit import labels as labels_mod
from rankcut.audit import workflow as wf
from rankcut.audit.labels import LabelStore, ReadOnlyStoreError
from rankcut.audit.report import write_report
from rankcut.cli.audit import app

ROOT = os.geteuid() == 0


def _audit(folder: Path, design: str, certified: bool = True) -> Path:
    run, cut, qrels = write_lists(folder)
    audit = folder / "A"
    if design == "sequential":
        wf.freeze(audit, run=run, cut=cut, design="sequential", target_recall=0.5, seed=3)
    else:
        wf.freeze(audit, run=run, cut=cut, design="excluded", seed=3)
    wf.plan(audit)
    wf.sample(audit, **({} if design == "sequential" else {"excluded": 10}))
    wf.label(audit, qrels=qrels, **({"limit": 20} if design == "sequential" else {}))
    if certified:
        wf.certify(audit)
    return audit


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


@pytest.fixture
def no_write(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Called, it makes every label store and audit file count as read-only (works as root)."""
    return lambda: monkeypatch.setattr(labels_mod, "writable", lambda path: False)


@pytest.fixture
def chmod_read_only() -> Iterator[list[Path]]:
    """Folders appended to the list are made read-only, and writable again afterwards."""
    folders: list[Path] = []
    yield folders
    for folder in folders:
        folder.chmod(0o755)
        for p in folder.iterdir():
            p.chmod(0o644)


def _make_read_only(folder: Path) -> None:
    for p in folder.iterdir():
        p.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    folder.chmod(0o555)


def _cli(*args: object) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


@pytest.mark.parametrize("design", ["excluded", "sequential"])
def test_certify_report_and_status_read_a_read_only_copy(design: str, tmp_path: Path,
                                                         no_write: Callable[[], None]) -> None:
    audit = _audit(tmp_path, design)
    written = (audit / "certificate.json").read_text()
    no_write()
    before = _snapshot(audit)
    res = wf.certify(audit)
    assert any("is read-only" in n and "not rewritten" in n for n in res.content["notes"])
    assert res.content["labels_hash"] in written
    assert wf.status(audit)["labelled"] == (20 if design == "sequential" else 10)
    files = write_report(audit, tmp_path / "report.md")
    assert files.report.exists()
    assert _snapshot(audit) == before   # nothing in the folder changed, not even a log file appeared


def test_label_in_a_read_only_folder_says_so(tmp_path: Path, no_write: Callable[[], None]) -> None:
    audit = _audit(tmp_path, "sequential")
    no_write()
    before = _snapshot(audit)
    code, out, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", tmp_path / "qrels.txt")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: the audit folder {audit} is read-only") and "writable copy" in err
    assert _snapshot(audit) == before


def test_a_first_certify_in_a_read_only_folder_says_so(tmp_path: Path, no_write: Callable[[], None]) -> None:
    audit = _audit(tmp_path, "excluded", certified=False)
    no_write()
    before = _snapshot(audit)
    code, _, err = _cli("certify", "--audit", audit)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"the audit folder {audit} is read-only" in err and "certify a writable copy" in err
    assert _snapshot(audit) == before


def test_a_read_only_store_file_in_a_writable_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    audit = _audit(tmp_path, "excluded", certified=False)
    store = audit / "labels.sqlite"
    monkeypatch.setattr(labels_mod, "writable", lambda path: Path(path) != store)
    before = _snapshot(audit)
    code, _, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", tmp_path / "qrels.txt")
    assert code == 2 and err.startswith(f"error: the label store {store} is read-only"), err
    code, _, err = _cli("certify", "--audit", audit)
    assert code == 2 and err.startswith(f"error: the label store {store} is read-only"), err
    assert _snapshot(audit) == before


def test_a_read_only_store_never_writes(tmp_path: Path) -> None:
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as store:
        store.record([("q", "d")], [1], "test")
    before = _snapshot(tmp_path)
    with LabelStore(path, readonly=True) as store:
        assert store.get([("q", "d")]) == {("q", "d"): 1}
        with pytest.raises(ReadOnlyStoreError, match="opened read-only"):
            store.record([("q", "e")], [0], "test")
        with pytest.raises(ReadOnlyStoreError):
            store.set_meta("k", "v")
    assert _snapshot(tmp_path) == before
    with pytest.raises(FileNotFoundError):
        LabelStore(tmp_path / "none.sqlite", readonly=True)


def test_a_read_only_copy_taken_while_the_store_was_open_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Immutable reads ignore the write-ahead log: a copy whose log still holds labels would lose
    them silently, so it is refused, naming the log."""
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as writer:
        writer.record([("q", "d")], [1], "test")   # in the log until the last connection closes
        copy = tmp_path / "copy"
        copy.mkdir()
        for name in ("labels.sqlite", "labels.sqlite-wal"):
            shutil.copy(tmp_path / name, copy / name)
    assert (copy / "labels.sqlite-wal").stat().st_size > 0
    monkeypatch.setattr(labels_mod, "writable", lambda p: False)
    with pytest.raises(ReadOnlyStoreError, match="labels.sqlite-wal still holds labels not yet merged"):
        LabelStore(copy / "labels.sqlite", readonly=True)


@pytest.mark.skipif(ROOT, reason="chmod does not stop root from writing")
def test_a_chmod_read_only_copy(tmp_path: Path, chmod_read_only: list[Path]) -> None:
    audit = _audit(tmp_path, "excluded")
    copy = tmp_path / "shipped"
    shutil.copytree(audit, copy)
    _make_read_only(copy)
    chmod_read_only.append(copy)
    before = _snapshot(copy)
    code, out, err = _cli("certify", "--audit", copy)
    assert code == 0, err
    assert "not rewritten" in out
    code, out, err = _cli("status", "--audit", copy)
    assert code == 0, err
    code, out, err = _cli("report", "--audit", copy, "--out", tmp_path / "report.html")
    assert code == 0, err
    code, out, err = _cli("label", "--audit", copy, "--oracle", "qrels", "--qrels", tmp_path / "qrels.txt")
    assert code == 2 and err.startswith(f"error: the audit folder {copy} is read-only"), err
    assert _snapshot(copy) == before


@pytest.mark.skipif(ROOT, reason="chmod does not stop root from writing")
def test_a_chmod_read_only_store_file_says_so(tmp_path: Path, chmod_read_only: list[Path]) -> None:
    audit = _audit(tmp_path, "sequential", certified=False)
    (audit / "labels.sqlite").chmod(0o444)
    chmod_read_only.append(audit)
    code, _, err = _cli("label", "--audit", audit, "--oracle", "qrels", "--qrels", tmp_path / "qrels.txt")
    assert code == 2 and "is read-only" in err and "Traceback" not in err
