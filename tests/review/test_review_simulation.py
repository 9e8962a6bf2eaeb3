"""The seeded review simulation (rankcut.review.simulate)."""

from __future__ import annotations

import numpy as np
import pytest
from review_testdata import toy_records

from rankcut.certify.policies import ProjectedCostPolicy
from rankcut.review.cal import CALConfig
from rankcut.review.records import Records
from rankcut.review.simulate import simulate_review

POLICY = ProjectedCostPolicy(batch=20, chunk=10)


def test_a_simulation_is_reproducible_and_valid() -> None:
    r = toy_records(300, 25)
    a = simulate_review(r, policy=POLICY, seeds=range(4))
    b = simulate_review(r, policy=POLICY, seeds=range(4))
    assert a.runs == b.runs and a.seeds == (0, 1, 2, 3)
    assert (a.read < 300).all() and not a.false_claims.any()
    assert all(run.found >= 0.8 * 25 or not run.certified for run in a.runs)
    assert a.config == CALConfig()


def test_qrels_labels_replace_the_column() -> None:
    r = toy_records(200, 15)
    unlabelled = Records(r.name, r.ids, r.titles, r.abstracts)
    qrels = {rid: 1 for rid, y in zip(r.ids, r.labels.tolist(), strict=True) if y}
    assert simulate_review(unlabelled, labels=qrels, policy=POLICY).runs == \
        simulate_review(r, policy=POLICY).runs
    with pytest.raises(ValueError, match="toy: a simulation needs every record's label"):
        simulate_review(unlabelled)


@pytest.mark.parametrize(("seeds", "message"), [
    (5, r"seeds must be a non-empty sequence of integers, e\.g\. range\(5\) or \[0, 3\], got 5"),
    ([], r"got \[\]"), ("12", r"got '12'"),
    ([1.5], r"each seed must be an integer ≥ 0, got 1\.5"), ([-1], r"got -1"),
])
def test_seeds_that_name_no_run_are_refused(seeds: object, message: str) -> None:
    """seeds=5 was a bare TypeError, [1.5] ran seed 1, [] gave an empty simulation."""
    with pytest.raises(ValueError, match=message):
        simulate_review(toy_records(60, 6), policy=POLICY, seeds=seeds)   # type: ignore[arg-type]


def test_numpy_seeds_are_seeds() -> None:
    r = toy_records(60, 6)
    assert simulate_review(r, policy=POLICY, seeds=np.arange(2)).runs == \
        simulate_review(r, policy=POLICY, seeds=range(2)).runs


def test_prior_knowledge_is_read_first_and_must_agree_with_the_labels() -> None:
    r = toy_records(200, 15)
    first = r.ids[int(np.flatnonzero(r.labels)[0])]
    known = sorted({0, r.ids.index(first)})             # screened first, in file order
    run = simulate_review(r.with_prior({r.ids[i]: int(r.labels[i]) for i in known}), policy=POLICY).runs[0]
    assert run.moves.startswith("s" * len(known))
    assert run.labels.startswith("".join(str(r.labels[i]) for i in known))
    with pytest.raises(ValueError, match=f"the prior knowledge of record {first!r} \\(0\\) contradicts"):
        simulate_review(r.with_prior({first: 0}))


def test_progress_bar_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    r = toy_records(150, 12)
    simulate_review(r, policy=POLICY, seeds=range(2))
    assert capsys.readouterr().err == ""
    simulate_review(r, policy=POLICY, seeds=range(2), progress=True)
    assert "simulate toy" in capsys.readouterr().err
