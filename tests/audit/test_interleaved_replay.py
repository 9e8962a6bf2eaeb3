"""The interleaved design's replay resumed from ``review.jsonl`` (issue 17, the labelling page): the
recorded steps are taken without asking the policy again, and the review is the same step for step
as the policy's full replay — for several policies and seeds, and for a stale, shortened or edited
``review.jsonl``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from audit_testdata import Data, _frozen, _steps

from rankcut.audit import labels as labels_mod
from rankcut.audit import workflow as wf
from rankcut.audit.designs import interleaved
from rankcut.audit.designs.interleaved import REVIEW_FILE, Review, recorded_steps, review_of
from rankcut.audit.folder import LABELS_FILE, SAMPLE_ITEMS, FrozenAudit, read_rows
from rankcut.audit.manifest import load_manifest

POLICIES = ["projected-cost:batch=20,chunk=5", "precision:batch=20,chunk=5", "screen-then-audit:depth=60",
            "marginal-cost:batch=20,chunk=5,window=60"]


def _review(audit: Path, recorded: list[dict[str, Any]] | None) -> Review:
    frozen = FrozenAudit(load_manifest(audit))
    with labels_mod.LabelStore(audit / LABELS_FILE, readonly=True) as store:
        labels = {(q, d): y for q, d, y in store.items()}
    rows = read_rows(audit / SAMPLE_ITEMS)
    return review_of(frozen, rows, labels, "store", recorded_steps(audit) if recorded is None else recorded)


def _same(a: Review, b: Review) -> None:
    assert [s.to_dict() for s in a.steps] == [s.to_dict() for s in b.steps]
    ra, rb = a.state.review, b.state.review
    assert (ra.moves, ra.labels, ra.running_upper, ra.running_step) == \
        (rb.moves, rb.labels, rb.running_upper, rb.running_step)
    assert a.bounds == b.bounds
    assert a.next() == b.next()


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_resumed_replay_is_the_full_replay(tmp_path: Path, policy: str, seed: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = Data(tmp_path, queries=1, depth=240, seed=seed)
    audit = _frozen(tmp_path, data, seed=seed, policy=policy)
    wf.label(audit, qrels=data.qrels, limit=150)
    full = _review(audit, [])
    calls = 0
    cls = interleaved._policy_class(policy.partition(":")[0])
    decide = cls.__call__

    def counting(self: Any, state: Any) -> str:
        nonlocal calls
        calls += 1
        return str(decide(self, state))

    monkeypatch.setattr(cls, "__call__", counting)
    resumed = _review(audit, None)
    assert calls == 1            # the next step only: the 150 recorded ones were not decided again
    assert len(resumed.steps) == 150
    _same(full, resumed)
    lines = recorded_steps(audit)
    # a stale review.jsonl (the last steps missing) or one edited at step 40: the policy decides from
    # where it stops matching, and the review is the same
    _same(full, _review(audit, lines[:97]))
    edited = [dict(x) for x in lines]
    edited[39]["move"] = "audit" if edited[39]["move"] == "screen" else "screen"
    _same(full, _review(audit, edited))
    relabelled = [dict(x) for x in lines]
    relabelled[10]["label"] = 1 - relabelled[10]["label"]
    _same(full, _review(audit, relabelled))


def test_an_unreadable_review_file_is_replayed_from_the_start(tmp_path: Path) -> None:
    data = Data(tmp_path, queries=1, depth=240, seed=3)
    audit = _frozen(tmp_path, data)
    wf.label(audit, qrels=data.qrels, limit=60)
    before = (audit / REVIEW_FILE).read_text()
    (audit / REVIEW_FILE).write_text(before[: len(before) // 2])   # cut mid-line
    assert recorded_steps(audit) == []
    (audit / REVIEW_FILE).write_text("[1]\n2\n")            # JSON, but not steps
    assert recorded_steps(audit) == []
    (audit / REVIEW_FILE).write_text(before[: len(before) // 2])
    assert wf.status(audit)["review_steps"] == 60
    wf.label(audit, qrels=data.qrels, limit=5)
    lines = _steps(audit)
    assert len(lines) == 65 and [x["step"] for x in lines] == list(range(1, 66))


def test_certify_checks_with_the_policy_only_the_steps_since_the_last_certify(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = Data(tmp_path, queries=1, depth=240, seed=2)
    audit = _frozen(tmp_path, data, seed=2, policy="projected-cost:batch=20,chunk=5")
    wf.label(audit, qrels=data.qrels, limit=100)
    cls = interleaved._policy_class("projected-cost")
    decide, read = cls.__call__, []

    def spy(self: Any, state: Any) -> str:
        read.append(state.review.read)
        return str(decide(self, state))

    monkeypatch.setattr(cls, "__call__", spy)
    wf.certify(audit)
    assert read[:100] == list(range(100))                # the first certify: every step by the policy
    wf.label(audit, qrels=data.qrels, limit=30)
    copy = tmp_path / "B"
    shutil.copytree(audit, copy)
    read.clear()
    again = wf.certify(audit).content
    assert min(read) == 100                              # the 100 it verified are not decided again
    lines = recorded_steps(copy)
    lines[20]["move"] = "audit" if lines[20]["move"] == "screen" else "screen"
    (copy / REVIEW_FILE).write_text("".join(json.dumps(x) + "\n" for x in lines))
    read.clear()
    edited = wf.certify(copy).content                    # an edited step 21: all decided again
    assert read[:100] == list(range(100))
    for key in ("report", "verdict", "counts", "members", "curve", "labels_hash"):
        assert edited[key] == again[key], key
