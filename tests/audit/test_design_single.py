"""The single-cut designs of the audit workflow (rankcut.audit.designs.single), excluded and
two-pool, end to end on synthetic runs (relevance known) and on Robust04, checked against the
engine called by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from audit_testdata import Data, _rows, _run_all, _y

from rankcut.audit import workflow as wf
from rankcut.audit.manifest import load_manifest, sha256_file
from rankcut.audit.report import write_report
from rankcut.certify import excluded as ex
from rankcut.certify import recall as rc
from rankcut.certify.bounds import hypergeom_lower
from rankcut.certify.planning import plan_hypergeometric
from rankcut.certify.result import verify

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


def test_two_pool_of_a_cut_that_keeps_everything_needs_no_label(data: Data, tmp_path: Path) -> None:
    """N0 = 0: the plan asked for one included label, and its K1 decided the verdict ("recall ≥ 0:
    NOT met" on three seeds of five, "met" on two), though nothing can be missed."""
    for seed in (2, 3, 4):
        audit = tmp_path / f"A{seed}"
        wf.freeze(audit, run=data.run, cut=data.run, design="two-pool", target_recall=0.8, seed=seed)
        plan = wf.plan(audit)
        assert plan.sizes == {"excluded": 0, "included": 0}
        assert "the cut keeps every item (N0 = 0): it misses none" in plan.render()
        wf.sample(audit)
        wf.label(audit, qrels=data.qrels)
        result = wf.certify(audit)
        assert result.met and [c.value for name, c, _ in result.report.entries if name == "recall"] == [1.0]
        write_report(audit, tmp_path / f"r{seed}.md")   # its curve ends at the certificate (it was refused)


def test_the_report_says_who_gave_the_labels(data: Data, tmp_path: Path) -> None:
    """A report of labels simulated from qrels read like a reviewer's: nothing said where they came
    from. Every source is named (the report cut the list at five: "and 9 more sources (243)")."""
    audit = tmp_path / "A"
    wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", target_recall=0.5, seed=11)
    wf.plan(audit)
    wf.sample(audit)
    rows = _rows(audit)
    files = []
    for i, r in enumerate(rows[:6]):   # six reviewers' files, a label each
        files.append(tmp_path / f"part{i}.csv")
        files[-1].write_text(f"query_id,doc_id,label\n{r['query_id']},{r['doc_id']},{i % 2}\n")
        wf.label(audit, from_file=files[-1])
    wf.label(audit, qrels=data.qrels)
    content = wf.certify(audit).content
    qrels_source = f"simulation: qrels qrels.txt sha256:{sha256_file(data.qrels)[:12]}"
    n = len({(r["query_id"], r["doc_id"]) for r in rows})
    from_files = {f"file {f.name} sha256:{sha256_file(f)[:12]}": 1 for f in files}
    assert content["label_sources"] == {**from_files, qrels_source: n - 6}
    text = write_report(audit, tmp_path / "r.md").report.read_text()
    assert f"Labels from: {'; '.join(f'{s} (1)' for s in from_files)}; {qrels_source} ({n - 6:,})." in text


def test_two_pool_end_to_end(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "A"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", delta=0.05, target_recall=0.5,
                  seed=11)
    assert m.audit_id == load_manifest(audit).audit_id
    assert m["pools"]["n1"] == sum(data.cuts.values()) and m["pools"]["items"] == 12 * 40
    assert m["theorem"] == "Corollary 11 with Theorem 8"
    res = _run_all(audit, data)
    rows = _rows(audit)
    y = _y(data, rows)
    inc = np.array([r["pool"] == "included" for r in rows])
    n1, n0 = m["pools"]["n1"], m["pools"]["n0"]
    expected = rc.two_pool_recall_finite_certificate(k0=int(y[~inc].sum()), n0=int((~inc).sum()), pool0=n0,
                                                     k1=int(y[inc].sum()), n1=int(inc.sum()), pool1=n1,
                                                     delta=0.05, deltas=[0.025, 0.025])
    assert res.report["recall"] == expected
    assert res.report["missed"].value == expected.details["M0_upper"]
    assert res.report.joint_delta == pytest.approx(0.05)  # the shared excluded-pool event is charged once
    m0, m1 = data.truth()
    assert res.report["recall"].value <= m1 / (m0 + m1) and m0 <= res.report["missed"].value
    assert res.content["verdict"]["met"] == (expected.value >= 0.5)
    content = json.loads((audit / "certificate.json").read_text())
    for entry in content["report"]["certificates"]:
        verify(entry["certificate"])
    assert wf.status(audit)["next"] is None


def test_plan_sizes_come_from_the_planners(data: Data, tmp_path: Path) -> None:
    ex_audit = tmp_path / "E"
    m = wf.freeze(ex_audit, run=data.run, cut=data.cut, design="excluded", max_missed=20, seed=1)
    planned = wf.plan(ex_audit)
    assert planned.sizes == {"excluded": plan_hypergeometric(20, 0.05, population=m["pools"]["n0"]).value}
    # two-pool: at the expected outcome (K1 = ⌊π̂ n1⌋, K0 = 0) the recall bound meets the target, and
    # one excluded draw fewer does not
    tp = tmp_path / "T"
    m = wf.freeze(tp, run=data.run, cut=data.cut, design="two-pool", target_recall=0.7, seed=1)
    sizes = wf.plan(tp, expected_precision=0.4).sizes
    assert sizes is not None
    n0, n1 = sizes["excluded"], sizes["included"]
    big0, big1 = m["pools"]["n0"], m["pools"]["n1"]
    k1 = math.floor(0.4 * n1)

    def bound(n0_: int) -> float:
        return float(rc.two_pool_recall_finite_certificate(k0=0, n0=n0_, pool0=big0, k1=k1, n1=n1, pool1=big1,
                                                           delta=0.05).value)

    assert bound(n0) >= 0.7 and (n0 == 0 or bound(n0 - 1) < 0.7)
    assert int(hypergeom_lower(k1, 0.025, population=big1, draws=n1)) > 0
    # the sample takes the plan's sizes by default
    assert wf.sample(tp).sizes == sizes


def test_excluded_design_and_reproducible_draws(data: Data, tmp_path: Path) -> None:
    kwargs = dict(run=data.run, cut=data.cut, design="excluded", delta=0.05, seed=12)
    a = wf.freeze(tmp_path / "A", **kwargs)
    b = wf.freeze(tmp_path / "B", **kwargs)
    assert a.audit_id != b.audit_id  # frozen at different times
    for audit in (tmp_path / "A", tmp_path / "B"):
        wf.plan(audit)
        wf.sample(audit, excluded=60)
    assert (tmp_path / "A" / "sample.jsonl").read_text() == (tmp_path / "B" / "sample.jsonl").read_text()
    c = wf.freeze(tmp_path / "C", **{**kwargs, "seed": 13})
    wf.plan(c.folder)
    wf.sample(c.folder, excluded=60)
    assert (tmp_path / "C" / "sample.jsonl").read_text() != (tmp_path / "A" / "sample.jsonl").read_text()
    wf.label(tmp_path / "A", qrels=data.qrels)
    res = wf.certify(tmp_path / "A")
    rows = _rows(tmp_path / "A")
    assert {r["pool"] for r in rows} == {"excluded"} and len(rows) == 60
    kept = {(q, d) for q, docs in data.lists.items() for d in docs[: data.cuts[q]]}
    assert not kept & {(r["query_id"], r["doc_id"]) for r in rows}
    y = _y(data, rows)
    expected = ex.excluded_pool_finite_certificate(int(y.sum()), 60, a["pools"]["n0"], 0.05,
                                                   names=["the cut"], corpus_size=a["pools"]["items"])
    assert res.report["missed"] == expected
    assert data.truth()[0] <= expected.value
    assert res.verdict is None  # no target frozen
    curve = res.content["curve"]
    assert curve["labels"][-1] == 60 and curve["bound"][-1] == expected.value


def test_with_replacement_uses_the_binomial_theorems(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "W"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="two-pool", sampling="with-replacement", seed=3)
    assert m["theorem"] == "Theorem 10 with Theorem 7"
    res = _run_all(audit, data, excluded=50, included=30)
    rows = _rows(audit)
    y = _y(data, rows)
    inc = np.array([r["pool"] == "included" for r in rows])
    n = m["pools"]["items"]
    expected = rc.two_pool_recall_certificate(int(y[~inc].sum()), 50, int(y[inc].sum()), 30,
                                              p0=m["pools"]["n0"] / n, delta=0.05, p1=m["pools"]["n1"] / n,
                                              deltas=[0.025, 0.025])
    assert res.report["recall"] == expected


# ---------------------------------------------------------------------------------------------
# real data


def test_robust04_bm25_cut_at_depth_20_with_qrels_oracle(tmp_path: Path) -> None:
    root = DATASETS / "robust04"
    run = root / "runs" / "bm25.test.run"
    qrels = root / "qrels.robust04.positives.txt"
    if not run.is_file() or not qrels.is_file():
        pytest.skip(f"robust04 data not found at {root}")
    from rankcut.data.trec import load_trec, read_qrels, write_run

    lists = load_trec(run)
    cut = tmp_path / "bm25.top20.run"
    write_run(cut, lists, np.minimum(lists.lengths, 20))
    audit = tmp_path / "robust04"
    m = wf.freeze(audit, run=run, cut=cut, design="two-pool", target_recall=0.5, seed=11)
    assert m["pools"]["n1"] == int(np.minimum(lists.lengths, 20).sum())
    planned = wf.plan(audit, expected_precision=0.3)
    assert planned.sizes is not None
    wf.sample(audit)
    wf.label(audit, qrels=qrels)
    res = wf.certify(audit)
    judged = read_qrels(qrels)
    relevant = [{d for d, g in judged.get(q, {}).items() if g >= 1} for q in lists.qids]
    kept = [set(lists.doc_ids[i, :min(20, n)]) for i, n in enumerate(lists.lengths)]
    listed = [set(lists.doc_ids[i, :n]) for i, n in enumerate(lists.lengths)]
    m1 = sum(len(r & k) for r, k in zip(relevant, kept, strict=True))
    m0 = sum(len(r & (li - k)) for r, li, k in zip(relevant, listed, kept, strict=True))
    assert m0 <= res.report["missed"].value
    assert res.report["recall"].value <= m1 / (m0 + m1)
