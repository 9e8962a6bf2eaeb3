"""The nested-family designs of the audit workflow (rankcut.audit.designs.nested), prefixes and
fixed-sequence with a shared or separate reference, end to end on synthetic runs (relevance
known), checked against the engine called by hand."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from audit_testdata import Data, _rows, _run_all, _y

from rankcut.audit import workflow as wf
from rankcut.audit.manifest import load_manifest
from rankcut.certify import prefixes as pf
from rankcut.certify.planning import plan_hypergeometric


def test_prefixes_shared_reference_and_choice(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "P"
    m = wf.freeze(audit, run=data.run, design="prefixes", depths=[5, 10, 20, 30], max_missed=25, seed=2)
    assert m["reference"] == "shared" and m["theorem"] == "Corollary 18 and Eq. 1"
    res = _run_all(audit, data, excluded=150)
    rows = _rows(audit)
    y = _y(data, rows)
    depth = {d: int(d.split("-")[1]) + 1 for docs in data.lists.values() for d in docs}
    depths = [5, 10, 20, 30]
    inside = np.array([[depth[r["doc_id"]] > k for k in depths] for r in rows])
    assert inside[:, 0].all()  # drawn from E_1
    n_eff, k = pf.shared_reference_counts(inside, y.astype(bool))
    n0s = [m_["n0"] for m_ in m["pools"]["members"]]
    expected = pf.prefix_bounds_shared_finite(k, n_eff, n0s, 0.05, reference_size=150,
                                              reference_pool_size=n0s[0],
                                              names=["depth5", "depth10", "depth20", "depth30"],
                                              corpus_size=12 * 40)
    assert res.report["bounds"] == expected
    choice = pf.choose_prefix(expected, [12 * d for d in depths], at_most=25)
    assert res.report["choice"].value == choice.value
    for i, d in enumerate(depths):
        assert data.truth({q: d for q in data.cuts})[0] <= expected.value[i]
    assert [row["sample"] for row in res.content["members"]] == n_eff.tolist()


@pytest.mark.parametrize("design", ["prefixes", "fixed-sequence"])
def test_shared_reference_plan_meets_every_need_with_high_probability(data: Data, tmp_path: Path,
                                                                      design: str) -> None:
    """Q is the least size at which every member's effective size reaches its need with probability
    ≥ 0.95 (not only in expectation, which left P(n_eff < need) near one half)."""
    from scipy.stats import hypergeom

    audit = tmp_path / "P"
    depths = [5, 10, 20, 30]
    m = wf.freeze(audit, run=data.run, design=design, depths=depths, max_missed=25, seed=2)
    planned = wf.plan(audit)
    assert planned.sizes is not None
    q = planned.sizes["excluded"]
    n0s = [p["n0"] for p in m["pools"]["members"]]
    split = len(depths) if design == "prefixes" else 1
    needs = [plan_hypergeometric(25, 0.05, population=n, n_prefixes=split).value if n > 25 else 0
             for n in n0s]

    def chance(size: int, need: int, pool: int) -> float:
        return float(hypergeom.sf(need - 1, n0s[0], pool, size)) if need > 0 else 1.0

    assert all(chance(q, n, p) >= 0.95 for n, p in zip(needs, n0s, strict=True))
    assert any(chance(q - 1, n, p) < 0.95 for n, p in zip(needs, n0s, strict=True))
    expected_only = max(math.ceil(n * n0s[0] / p) for n, p in zip(needs, n0s, strict=True) if n > 0)
    assert q > expected_only  # the old rule's size falls short too often
    assert "with probability ≥ 0.95, for each member separately" in planned.render()


def test_shared_reference_plan_with_replacement(data: Data, tmp_path: Path) -> None:
    from scipy.stats import binom

    audit = tmp_path / "W"
    m = wf.freeze(audit, run=data.run, design="prefixes", depths=[5, 20], max_missed=10**7,
                  corpus_size=10**9, sampling="with-replacement", seed=2)
    q = wf.plan(audit).sizes["excluded"]  # type: ignore[index]
    lines = wf.plan(audit).lines
    needs = [int(line.split(": ")[1].split()[0]) for line in lines[1:3]]
    n0s = [p["n0"] for p in m["pools"]["members"]]
    assert all(binom.sf(n - 1, q, p / n0s[0]) >= 0.95 for n, p in zip(needs, n0s, strict=True))
    assert any(binom.sf(n - 1, q - 1, p / n0s[0]) < 0.95 for n, p in zip(needs, n0s, strict=True))


def test_prefixes_separate_samples(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "S"
    wf.freeze(audit, run=data.run, cut=data.cut, offsets=[-2, 0, 4], design="prefixes",
              reference="separate", seed=4)
    res = _run_all(audit, data, excluded=[40, 30, 20])
    rows = _rows(audit)
    y = _y(data, rows)
    member = np.array([r["member"] for r in rows])
    assert [int((member == i).sum()) for i in range(3)] == [40, 30, 20]
    n0s = [p["n0"] for p in load_manifest(audit)["pools"]["members"]]
    counts = [int(y[member == i].sum()) for i in range(3)]
    expected = pf.prefix_bounds_separate_finite(counts, [40, 30, 20], n0s, 0.05,
                                                names=["cut-2", "cut+0", "cut+4"], corpus_size=480)
    assert res.report["bounds"] == expected
    assert "choice" not in [n for n, _, _ in res.report.entries]  # no target: bounds only


def test_a_member_bounded_by_an_earlier_pool_says_so_in_the_report(data: Data, tmp_path: Path) -> None:
    """Two draws from the last member's pool leave its own bound above the one before it, which
    holds it (nested pools): the report's row printed the earlier bound as the member's own (a
    review of stop 56's diff)."""
    from rankcut.audit.report import write_report

    audit = tmp_path / "S"
    wf.freeze(audit, run=data.run, cut=data.cut, offsets=[-2, 0, 4], design="prefixes",
              reference="separate", seed=4)
    res = _run_all(audit, data, excluded=[60, 40, 2])
    own, value = res.report["bounds"].details["own_bounds"], res.report["bounds"].value
    assert own[2] > own[1] and value[2] == own[1]
    rows = res.content["members"]
    assert [r.get("bound_of") for r in rows] == [None, None, "cut+0"]
    write_report(audit, tmp_path / "report.md")
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert f"M0 ≤ {value[2]} (as cut+0's, whose pool holds it)" in text


def test_fixed_sequence(data: Data, tmp_path: Path) -> None:
    f1, f2, f3 = (data.write_cut(f"top{d}.run", d) for d in (6, 12, 24))
    audit = tmp_path / "F"
    m = wf.freeze(audit, run=data.run, family=[f1, f2, f3], design="fixed-sequence", max_missed=30, seed=8)
    assert [p["name"] for p in m["pools"]["members"]] == ["top6.run", "top12.run", "top24.run"]
    res = _run_all(audit, data)
    cert = res.report["fixed-sequence"]
    assert cert.theorem == "Theorem 19" and cert.allocation == {"each_test": 0.05}
    rows = _rows(audit)
    y = _y(data, rows)
    depth = {d: int(d.split("-")[1]) + 1 for docs in data.lists.values() for d in docs}
    inside = np.array([[depth[r["doc_id"]] > k for k in (6, 12, 24)] for r in rows])
    n_eff, k = pf.shared_reference_counts(inside, y.astype(bool))
    n0s = [p["n0"] for p in m["pools"]["members"]]
    names = ["top6.run", "top12.run", "top24.run"]
    assert cert == pf.fixed_sequence_finite(k, n_eff, n0s, max_missed=30, delta=0.05, names=names)
    if cert.value is not None:
        d = {"top6.run": 6, "top12.run": 12, "top24.run": 24}[cert.value]
        assert data.truth({q: d for q in data.cuts})[0] <= 30


def test_prefixes_with_a_target_of_nothing_missed(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "Z"
    wf.freeze(audit, run=data.run, cut=data.cut, design="prefixes", offsets=[0, 10, 20], max_missed=0,
              seed=3)
    res = _run_all(audit, data)
    assert res.report["choice"].inputs["at_most"] == 0
    bounds = res.report["bounds"].value
    assert res.content["verdict"]["met"] == any(b == 0 for b in bounds)
    assert (audit / "certificate.json").exists()


@pytest.mark.parametrize(("family", "repeated"), [({"offsets": [0, 1000, 2000]}, "cut+1000 and cut+2000"),
                                                  ({"depths": [5, 1000, 2000]}, "depth1000 and depth2000")])
def test_members_that_keep_the_same_documents_are_refused(family: dict[str, list[int]], repeated: str,
                                                          data: Data, tmp_path: Path) -> None:
    """Offsets or depths past every list's end clip to the same cut: the family was frozen, and each
    repeated member took a share of δ from the others."""
    audit = tmp_path / "D"
    said = f"members {repeated} of the family keep the same documents on every query (the "
    with pytest.raises(ValueError, match=re.escape(said)):
        wf.freeze(audit, run=data.run, design="prefixes", max_missed=5, seed=3,
                  **family, **({"cut": data.cut} if "offsets" in family else {}))
    assert not (audit / "manifest.json").exists()
    # fixed-sequence tests each member at δ: a repeated member costs the others nothing, and is taken
    wf.freeze(tmp_path / "F", run=data.run, design="fixed-sequence", max_missed=5, seed=3,
              **family, **({"cut": data.cut} if "offsets" in family else {}))


def test_a_deepest_member_with_nothing_excluded_is_refused(data: Data, tmp_path: Path) -> None:
    """A depth that keeps every list whole, with no corpus claim, has an empty excluded pool: it
    misses nothing for sure, and took δ/2 from the other member (the RAG engineer walk,
    --depths 50,100 on top-100 lists). With a corpus claim it excludes the unretrieved documents,
    and is audited."""
    said = "member depth1000 of the family keeps every list whole and its excluded pool is empty"
    with pytest.raises(ValueError, match=re.escape(said)):
        wf.freeze(tmp_path / "D", run=data.run, design="prefixes", max_missed=5, seed=3, depths=[5, 1000])
    assert not (tmp_path / "D" / "manifest.json").exists()
    wf.freeze(tmp_path / "C", run=data.run, design="prefixes", max_missed=5, seed=3, depths=[5, 1000],
              corpus_size=10_000)
