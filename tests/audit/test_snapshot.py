"""The audit folder's snapshot (``snapshot.npz``): the steps after freeze read it, never the run or the
cut; it gives the pools the input files give; it is refused when it is not the one frozen; and an
input changed after freeze is refused still, whether the check was by file status or by hash."""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from audit_testdata import Data

from rankcut.audit import manifest as manifest_mod
from rankcut.audit import workflow as wf
from rankcut.audit.folder import build_pools, load_audit
from rankcut.audit.manifest import check_inputs, load_manifest
from rankcut.audit.report import write_report
from rankcut.audit.snapshot import SNAPSHOT_FILE

DESIGNS: dict[str, dict[str, Any]] = {
    "excluded": {"max_missed": 30},
    "two-pool": {"target_recall": 0.5},
    "prefixes": {"offsets": [-2, 0, 3], "max_missed": 30},
    "fixed-sequence": {"depths": [5, 10, 20], "max_missed": 30},
    "stratified": {"bands": [5, 15], "max_missed": 30},
    "sequential": {"target_recall": 0.5},
}


def _no_run_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a run (or an id corpus) from now on fails the test."""
    import rankcut.data.trec as trec
    from rankcut.audit.pools import Corpus

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a step after freeze read an input file")

    for name in ("load_trec", "read_run"):
        monkeypatch.setattr(trec, name, refuse)
    monkeypatch.setattr(Corpus, "ids", refuse)


@pytest.mark.parametrize("design", DESIGNS)
def test_the_steps_after_freeze_never_read_the_run(design: str, data: Data, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    audit = tmp_path / "A"
    given = DESIGNS[design]
    wf.freeze(audit, run=data.run, design=design, seed=4, **({} if "depths" in given else {"cut": data.cut}),
              **given)
    assert (audit / SNAPSHOT_FILE).is_file()
    _no_run_reading(monkeypatch)
    wf.plan(audit)
    wf.sample(audit, allow_underpowered=True)
    wf.label(audit, qrels=data.qrels)
    result = wf.certify(audit)
    files = write_report(audit, tmp_path / "report.md")   # recomputes every certificate
    assert files.report.exists() and result.content["audit_id"] == load_manifest(audit).audit_id
    assert wf.status(audit)["steps"]["certify"]


def _pairs(pools: Any) -> list[Any]:
    return pools.included_items(np.arange(pools.n1)) + pools.excluded_items(np.arange(pools.n0))


@pytest.mark.parametrize("kind", ["cut", "corpus size", "corpus ids", "family", "offsets", "depths",
                                  "missing queries"])
def test_the_snapshot_gives_the_pools_of_the_input_files(kind: str, data: Data, tmp_path: Path) -> None:
    kwargs: dict[str, Any] = {"run": data.run, "cut": data.cut, "design": "excluded"}
    if kind == "corpus size":
        kwargs["corpus_size"] = 55
    elif kind == "corpus ids":
        ids = tmp_path / "corpus.txt"
        listed = [d for docs in data.lists.values() for d in docs]
        ids.write_text("".join(f"{d}\n" for d in ["z-1", *listed[::-1], "z-2", "é-3"]))
        kwargs["corpus_ids"] = ids
    elif kind == "family":
        kwargs.update(design="prefixes", cut=None,
                      family=[data.write_cut("a.run", 3), data.write_cut("b.run", 9)])
    elif kind == "offsets":
        kwargs.update(design="prefixes", offsets=[-3, 0, 4])
    elif kind == "depths":
        kwargs.update(design="prefixes", cut=None, depths=[2, 10, 30])
    elif kind == "missing queries":
        cut = tmp_path / "some.run"
        cut.write_text("".join(line for line in data.cut.read_text().splitlines(keepends=True)
                               if not line.startswith(("q3 ", "q7 "))))
        kwargs.update(cut=cut, allow_missing_queries=True)
    m = wf.freeze(tmp_path / "A", **kwargs)
    audit = load_audit(tmp_path / "A")
    rebuilt, _ = build_pools(check_inputs(m), m["ordering"], m.get("family"), m.get("corpus"),
                                bool(m["allow_missing_queries"]))
    assert len(audit.members) == len(rebuilt)
    for got, want in zip(audit.members, rebuilt, strict=True):
        assert got.qids == want.qids and got.cuts.tolist() == want.cuts.tolist()
        assert (got.n1, got.n0, got.n_items) == (want.n1, want.n0, want.n_items)
        assert _pairs(got) == _pairs(want)
    base = audit.base
    assert base.listed("q2") == data.lists["q2"]
    items = _pairs(rebuilt[0])[::7]
    assert [a.tolist() for a in base.item_positions(items)] == [a.tolist() for a in
                                                                rebuilt[0].item_positions(items)]


def _frozen(data: Data, folder: Path) -> Path:
    wf.freeze(folder, run=data.run, cut=data.cut, design="excluded", max_missed=30, seed=1)
    return folder


def test_a_changed_missing_or_half_written_snapshot_is_refused(data: Data, tmp_path: Path) -> None:
    audit = _frozen(data, tmp_path / "A")
    path = audit / SNAPSHOT_FILE
    good = path.read_bytes()
    frozen = json.loads((audit / "manifest.json").read_text())["snapshot"]["sha256"][:12]
    for bad in (good[: len(good) // 2], good[:100] + bytes([good[100] ^ 1]) + good[101:]):
        path.write_bytes(bad)
        for step in (wf.plan, wf.sample):
            with pytest.raises(ValueError, match=rf"^{path} is not the snapshot frozen with this audit \(its "
                                                 rf"sha256 is not {frozen}\): it was changed or only partly "
                                                 "written"):
                step(audit)
    path.unlink()
    with pytest.raises(ValueError, match=rf"^{path} is missing \(written by freeze.*freeze a new audit"):
        wf.plan(audit)
    path.write_bytes(good)
    wf.plan(audit)


def test_a_copied_folder_whose_snapshot_changed_reads_the_frozen_one_and_says_so(data: Data,
                                                                                 tmp_path: Path) -> None:
    """A copy of an audit folder falls back to the snapshot where freeze wrote it: right, but the
    changed copy in the folder was passed over without a word (inputs are warned of so)."""
    import shutil

    audit = _frozen(data, tmp_path / "A")
    copy = Path(shutil.copytree(audit, tmp_path / "B"))
    (copy / SNAPSHOT_FILE).write_bytes(b"garbage\n")
    with pytest.warns(UserWarning, match=rf"^{copy / SNAPSHOT_FILE} changed after the audit was frozen, so "
                                         rf"it is not read: the frozen snapshot at "
                                         rf"{audit / SNAPSHOT_FILE} is read instead"):
        assert wf.plan(copy).sizes == wf.plan(audit).sizes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wf.plan(audit)


def test_a_freeze_that_fails_leaves_no_snapshot(data: Data, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(folder: Any, content: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(wf, "write_manifest", broken)
    with pytest.raises(OSError, match="disk full"):
        _frozen(data, tmp_path / "A")
    assert os.listdir(tmp_path / "A") == []
    monkeypatch.undo()
    # a snapshot without a manifest (a freeze stopped, or one running now) is not frozen over
    (tmp_path / "A" / SNAPSHOT_FILE).write_bytes(b"")
    with pytest.raises(ValueError, match=rf"holds {SNAPSHOT_FILE} but no manifest: freeze into a new folder"):
        _frozen(data, tmp_path / "A")


def test_an_input_changed_while_it_is_frozen_is_refused(data: Data, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def and_then_edit(*args: Any) -> Any:
        out = build_pools(*args)
        with open(data.cut, "a") as f:
            f.write("q0 Q0 d0-39 40 60.25 t\n")
        return out

    monkeypatch.setattr(wf, "build_pools", and_then_edit)
    with pytest.raises(ValueError, match=rf"^--cut {data.cut} changed while the audit was being frozen"):
        _frozen(data, tmp_path / "A")
    assert not (tmp_path / "A" / "manifest.json").exists() and not (tmp_path / "A" / SNAPSHOT_FILE).exists()


def _hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files hashed in full from now on."""
    seen: list[str] = []
    real = manifest_mod.sha256_file

    def counting(path: Any) -> str:
        seen.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(manifest_mod, "sha256_file", counting)
    return seen


def _settled(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Inputs written a moment ago count as settled (their status then vouches for them), as a run
    written well before its freeze does."""
    monkeypatch.setattr(manifest_mod, "SETTLED_NS", 0)
    return lambda: time.sleep(0.05)


def test_a_settled_input_is_checked_by_its_status_not_hashed(data: Data, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _settled(monkeypatch)()
    m = _frozen(data, tmp_path / "A")
    assert load_manifest(m)["inputs"]["run"]["status"]["size"] == data.run.stat().st_size
    hashed = _hashes(monkeypatch)
    wf.plan(m)
    assert hashed == []   # neither the run nor the cut: their status is the frozen one


def test_an_input_written_just_before_freeze_is_hashed_at_every_step(data: Data, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    m = _frozen(data, tmp_path / "A")   # a change within the same timestamp tick would keep its status
    assert load_manifest(m)["inputs"]["run"]["status"] is None
    hashed = _hashes(monkeypatch)
    wf.plan(m)
    assert sorted(hashed) == ["cut.run", "run.txt"]


@pytest.mark.parametrize("settled", [True, False])
def test_a_run_edited_after_freeze_is_refused_even_with_its_size_and_time_kept(
        settled: bool, data: Data, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if settled:
        _settled(monkeypatch)()
    audit = _frozen(data, tmp_path / "A")
    wf.plan(audit)
    before = data.run.stat()
    text = data.run.read_text()
    swapped = text.replace("q5 Q0 d5-30 ", "q5 Q0 d5-31 ", 1).replace("q5 Q0 d5-31 32", "q5 Q0 d5-30 32")
    data.run.write_text(swapped)   # two documents swapped: the same size
    assert data.run.stat().st_size == before.st_size and data.run.read_text() != text
    os.utime(data.run, ns=(before.st_atime_ns, before.st_mtime_ns))   # the time set back, as it was
    with pytest.raises(ValueError, match=rf"^--run {data.run} changed after the audit was frozen"):
        wf.sample(audit)
    data.run.write_text(text)   # the same bytes again: found by its hash, and the audit goes on
    wf.sample(audit, allow_underpowered=True)


def test_a_folder_copied_with_its_inputs_is_hashed_and_goes_on(data: Data, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    _settled(monkeypatch)()
    _frozen(data, data.folder / "audits" / "A")
    copy = tmp_path.parent / f"{tmp_path.name}-copy"
    shutil.copytree(tmp_path, copy)   # other inodes: the status no longer vouches, the hash does
    hashed = _hashes(monkeypatch)
    wf.plan(copy / "audits" / "A")
    assert sorted(hashed) == ["cut.run", "run.txt"]
    assert load_audit(copy / "audits" / "A").inputs["run"]["path"] == str(copy / "run.txt")


@pytest.mark.parametrize("ids", [[], ["a"], ["d1", "", "doc-22", "x"], ["é", "日本語", "ascii", "ß-2"]])
def test_an_id_column_gives_back_its_ids(ids: list[str]) -> None:
    from rankcut.audit.pools import IdColumn

    for chunk in (1, 2, 1 << 20):
        column = IdColumn.encode(ids, chunk=chunk)
        assert len(column) == column.size == len(ids)
        assert column[:].tolist() == ids and column[1:3].tolist() == ids[1:3]
        assert column[::2].tolist() == ids[::2] and column[3:1].tolist() == []
        picks = np.array([i % max(len(ids), 1) for i in (2, 0, 2)] if ids else [], dtype=np.int64)
        assert column[picks].tolist() == [ids[i] for i in picks.tolist()]
