"""An audit folder moved or shipped together with its inputs still works: inputs are recorded
relative to the folder and found by their hash; a missing one is named with its hash."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rankcut.audit import workflow


def _project(root: Path) -> dict[str, Path]:
    data = root / "data"
    data.mkdir(parents=True)
    run, cut, qrels, texts = (data / n for n in ("run.txt", "cut.run", "qrels.txt", "texts.jsonl"))
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(5)))
    qrels.write_text("".join(f"q{q} 0 d{q}-{r} 1\n" for q in range(3) for r in range(0, 30, 7)))
    texts.write_text("".join(json.dumps({"query_id": f"q{q}", "doc_id": f"d{q}-{r}", "text": "t"}) + "\n"
                             for q in range(3) for r in range(30)))
    return {"run": run, "cut": cut, "qrels": qrels, "texts": texts, "audit": root / "audits" / "A"}


def test_a_folder_moved_with_its_inputs_goes_on(tmp_path: Path) -> None:
    p = _project(tmp_path / "before")
    m = workflow.freeze(p["audit"], run=p["run"], cut=p["cut"], texts=p["texts"], design="excluded",
                        max_missed=20, seed=1)
    assert m["inputs"]["run"]["path"] == "../../data/run.txt"   # relative to the folder
    workflow.plan(p["audit"])
    workflow.sample(p["audit"])
    shutil.move(tmp_path / "before", tmp_path / "after")        # the folder and its inputs, shipped
    moved = tmp_path / "after" / "audits" / "A"
    workflow.label(moved, qrels=tmp_path / "after" / "data" / "qrels.txt")
    result = workflow.certify(moved)
    assert result.content["audit_id"] == m.audit_id
    assert workflow.status(moved)["next"] is None


def test_a_folder_moved_alone_finds_its_inputs_where_they_were_given(tmp_path: Path) -> None:
    p = _project(tmp_path / "before")
    m = workflow.freeze(p["audit"], run=p["run"], cut=p["cut"], design="excluded", max_missed=20, seed=1)
    shutil.move(p["audit"], tmp_path / "elsewhere" / "A")       # the folder alone: its inputs stay behind
    workflow.plan(tmp_path / "elsewhere" / "A")
    frozen = m["inputs"]["cut"]["sha256"][:12]
    p["cut"].unlink()
    with pytest.raises(ValueError, match=rf"--cut \.\./\.\./data/cut\.run \(sha256 {frozen}\) is missing: no "
                                         rf"file at {tmp_path}/data/cut\.run or {p['cut']}"):
        workflow.sample(tmp_path / "elsewhere" / "A")


def test_an_input_found_but_changed_is_refused(tmp_path: Path) -> None:
    p = _project(tmp_path)
    workflow.freeze(p["audit"], run=p["run"], cut=p["cut"], design="excluded", max_missed=20, seed=1)
    p["run"].write_text(p["run"].read_text() + "q9 Q0 x 1 1.0 t\n")
    with pytest.raises(ValueError, match=r"--run .*data/run\.txt changed after the audit was frozen"):
        workflow.plan(p["audit"])


def _reusing(root: Path) -> tuple[Path, Path, Path]:
    """Audit A labelled (not opened), and audit B frozen to reuse A's labels for certification."""
    p = _project(root)
    kwargs = {"run": p["run"], "cut": p["cut"], "design": "excluded", "max_missed": 20}
    workflow.freeze(p["audit"], seed=1, **kwargs)
    workflow.plan(p["audit"])
    workflow.sample(p["audit"], allow_underpowered=True)
    workflow.label(p["audit"], qrels=p["qrels"])
    later = root / "audits" / "B"
    m = workflow.freeze(later, reuse_labels=p["audit"], seed=1, **kwargs)   # the same draws
    assert m["reuse_labels"]["audit"] == "../A"   # the link, relative to the audit holding it
    workflow.plan(later)
    workflow.sample(later, allow_underpowered=True)
    return p["audit"], later, p["qrels"]


def test_audits_that_reuse_labels_move_together(tmp_path: Path) -> None:
    _, later, _ = _reusing(tmp_path / "before")
    shutil.move(tmp_path / "before", tmp_path / "after")
    moved = tmp_path / "after" / "audits" / "B"
    reused = workflow.label(moved, reuse=True)   # reads the earlier audit's store where it moved
    assert reused.recorded > 0
    assert workflow.certify(moved).content["audit_id"] == workflow.status(moved)["audit_id"]


def test_a_reusing_audit_moved_alone_finds_the_earlier_one_where_it_was(tmp_path: Path) -> None:
    first, later, _ = _reusing(tmp_path)
    moved = tmp_path / "elsewhere" / "B"
    moved.parent.mkdir()
    shutil.move(later, moved)
    assert workflow.label(moved, reuse=True).recorded > 0
    workflow.certify(moved)


def test_a_broken_reuse_link_names_both_places(tmp_path: Path) -> None:
    first, later, _ = _reusing(tmp_path / "before")
    shutil.move(tmp_path / "before", tmp_path / "after")
    shutil.rmtree(tmp_path / "after" / "audits" / "A")
    with pytest.raises(ValueError, match=r"chain of reused labels is broken at .*after/audits/A/manifest"
                                         r".*nor does .*before/audits/A, where it was frozen"):
        workflow.label(tmp_path / "after" / "audits" / "B", reuse=True)
