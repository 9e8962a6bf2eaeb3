"""The review folder's ranker cache (rankcut.review.ranker_cache): next, status and label take the
features and fits from it and ask for the same records as without it; certify never reads it; a
cache under another key (library versions) or damaged is recomputed; a read-only folder gets none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from review_testdata import labels_of, toy_records

from rankcut.audit import labels as labels_mod
from rankcut.audit import workflow
from rankcut.review import cal, session
from rankcut.review.records import Records

POLICY = "marginal-cost:probe=5"


@pytest.fixture
def records() -> Records:
    return toy_records(150, 12, seed=5)


def _fresh_process() -> None:
    """Forget what this process computed, as a new CLI call would."""
    for cached in (session._cal, session._features, session._texts_of):
        cached.cache_clear()


def _next_ids(folder: Path, n: int = 12) -> list[str]:
    return [r["record_id"] for r in session.next_records(folder, n)]


def _fits(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "ranker-cache" / "fits.jsonl").read_text().splitlines()]


def test_the_cache_gives_the_same_review_and_certify_never_reads_it(records: Records, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.9, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=60)
    cache = folder / "ranker-cache"
    assert (cache / "features.npz").is_file() and len(_fits(folder)) > 5   # label wrote them
    _fresh_process()
    with_cache = _next_ids(folder)
    status = session.status(folder)
    for damaged in (b"", b"PK\x03\x04 cut short", (cache / "features.npz").read_bytes()[:-40]):
        (cache / "features.npz").write_bytes(damaged)   # unreadable: recomputed and written again
        _fresh_process()
        assert _next_ids(folder) == with_cache
    # the same review recomputed: no cache at all
    (cache / "features.npz").rename(tmp_path / "features.npz")
    (cache / "fits.jsonl").rename(tmp_path / "fits.jsonl")
    _fresh_process()
    assert _next_ids(folder) == with_cache
    assert session.status(folder)["next_move"] == status["next_move"]
    assert _fits(folder) == [json.loads(x) for x in (tmp_path / "fits.jsonl").read_text().splitlines()]

    # a damaged cache, each batch reversed (still a batch of its state) and its last line cut short:
    # the replay asks for other records than the labels answer, so it is replayed without the
    # cache, which mends it; certify never reads it
    lines = _fits(folder)
    (cache / "fits.jsonl").write_text("".join(
        json.dumps({"key": e["key"], "batch": e["batch"][::-1]}) + "\n" for e in lines) + '{"key": "cut sh')
    _fresh_process()
    assert _next_ids(folder) == with_cache
    _fresh_process()
    fitted = _count_fits(monkeypatch)
    assert _next_ids(folder) == with_cache and len(fitted) <= 1   # mended: taken from the cache
    (cache / "fits.jsonl").write_text("".join(
        json.dumps({"key": e["key"], "batch": e["batch"][::-1]}) + "\n" for e in lines))
    _fresh_process()
    damaged = workflow.certify(folder).content
    clean = tmp_path / "clean"
    session.start(records, clean, target_recall=0.9, seed=3, policy=POLICY)
    session.label(clean, known=labels_of(records), limit=60)
    shutil.rmtree(clean / "ranker-cache")
    _fresh_process()
    expected = workflow.certify(clean).content
    assert damaged["verdict"] == expected["verdict"] and damaged["counts"] == expected["counts"]
    assert damaged["report"]["certificates"] == expected["report"]["certificates"]


def _count_fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The fits the ranker makes from now on (one entry each)."""
    fitted: list[int] = []
    real = cal.CALScreener._fit_scores
    monkeypatch.setattr(cal.CALScreener, "_fit_scores", lambda self, *a: fitted.append(1) or real(self, *a))
    return fitted


def test_fits_under_other_library_versions_are_not_taken(records: Records, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.9, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=40)
    held = len(_fits(folder))
    fitted = _count_fits(monkeypatch)
    _fresh_process()
    session.status(folder)
    assert held > 3 and len(fitted) <= 1   # from the cache (one at most: a batch label did not reach)
    key = str(np.load(folder / "ranker-cache" / "features.npz")["key"])
    monkeypatch.setattr(cal, "library_versions", lambda: "numpy 0, scipy 0, scikit-learn 0")
    _fresh_process()
    fitted.clear()
    session.status(folder)
    assert len(fitted) >= held   # none taken: every fit made again
    assert str(np.load(folder / "ranker-cache" / "features.npz")["key"]) != key   # recomputed, replaced


def test_a_read_only_folder_gets_no_cache(records: Records, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "R"
    session.start(records, folder, target_recall=0.9, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=30)
    expected = _next_ids(folder)
    workflow.certify(folder)
    for f in (folder / "ranker-cache").iterdir():
        f.unlink()
    (folder / "ranker-cache").rmdir()
    monkeypatch.setattr(labels_mod, "writable", lambda path: False)
    _fresh_process()
    assert _next_ids(folder) == expected
    notes = workflow.certify(folder).content["notes"]   # in the review's words
    said = f"the review folder {folder} is read-only: certificate.json was checked"
    assert any(n.startswith(said) for n in notes)
    assert not (folder / "ranker-cache").exists()


def test_certify_refuses_steps_a_damaged_cache_chose(records: Records, tmp_path: Path) -> None:
    """Steps label took from a damaged fit (one the replay of the steps before it never needs, so
    the labels agree with it) are not the frozen ranker's: certify, which recomputes every fit,
    refuses them, while a certify that trusted the cache would certify them."""
    folder, ahead = tmp_path / "R", tmp_path / "ahead"
    session.start(records, folder, target_recall=0.99, seed=3, policy=POLICY)
    session.label(folder, known=labels_of(records), limit=40)
    shutil.copytree(folder, ahead)
    _fresh_process()
    session.label(ahead, known=labels_of(records), limit=30)   # the fits the next steps need
    new = _fits(ahead)[len(_fits(folder)):]
    assert new and all(len(e["batch"]) > 1 for e in new)
    with open(folder / "ranker-cache" / "fits.jsonl", "a") as f:
        f.writelines(json.dumps({"key": e["key"], "batch": e["batch"][::-1]}) + "\n" for e in new)
    _fresh_process()
    session.label(folder, known=labels_of(records), limit=30)
    assert _steps(folder) != _steps(ahead)   # the damaged fits chose other records
    _fresh_process()
    with pytest.raises(ValueError, match="that the review never asked for"):
        workflow.certify(folder)
    _fresh_process()
    assert workflow.certify(ahead).content["counts"]["steps"] == 70


def _steps(folder: Path) -> list[str]:
    return [json.loads(x)["doc_id"] for x in (folder / "review.jsonl").read_text().splitlines()]
