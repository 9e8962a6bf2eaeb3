"""The stratified design of the audit workflow (rankcut.audit.designs.stratified): bands below the
cut, each drawn from its own stream, end to end on synthetic runs (relevance known), checked
against the engine called by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from audit_testdata import Data, _rows, _run_all, _y

from rankcut.audit import workflow as wf
from rankcut.certify import stratified as st


def test_stratified(data: Data, tmp_path: Path) -> None:
    audit = tmp_path / "B"
    m = wf.freeze(audit, run=data.run, cut=data.cut, design="stratified", bands=[5, 15], max_missed=40,
                  seed=9)
    assert m["bands"] == [0, 5, 15] and sum(m["band_sizes"]) == m["pools"]["n0"]
    res = _run_all(audit, data, excluded=[20, 20, 20])
    rows = _rows(audit)
    y = _y(data, rows)
    s = np.array([r["stratum"] for r in rows])
    depth = {d: int(d.split("-")[1]) + 1 for docs in data.lists.values() for d in docs}
    for r in rows:  # band s holds ranks k+1+o_s .. k+o_{s+1}
        below = depth[r["doc_id"]] - data.cuts[r["query_id"]]
        lo, hi = [(1, 5), (6, 15), (16, 10**9)][r["stratum"]]
        assert lo <= below <= hi
    expected = st.stratified_hypergeometric_certificate(excluded_sizes=m["band_sizes"], sizes=[20, 20, 20],
                                                        counts=[int(y[s == i].sum()) for i in range(3)],
                                                        delta=0.05)
    assert res.report["missed"] == expected
    assert data.truth()[0] <= expected.value
    assert [b["sample"] for b in res.content["bands"]] == [20, 20, 20]


def test_each_band_draws_from_its_own_stream(data: Data, tmp_path: Path) -> None:
    """Changing one band's sample size never changes another band's draws."""
    draws = []
    for n in (10, 11):
        audit = tmp_path / f"S{n}"
        wf.freeze(audit, run=data.run, cut=data.cut, design="stratified", bands=[5], seed=3)
        wf.plan(audit)
        wf.sample(audit, excluded=[n, 10])
        draws.append([(r["query_id"], r["doc_id"]) for r in _rows(audit) if r["stratum"] == 1])
    assert draws[0] == draws[1]
