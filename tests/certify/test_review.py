"""Screen-then-audit review (rankcut.certify.screening): the cut reads screened labels only, the
whole review keeps its guarantee (exactly, on real CLEF TAR 2017 topics), and the cost floor is
the linear programme it claims to solve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.special import comb
from scipy.stats import poisson

from rankcut.certify.screening import (
    ReviewRule,
    cost_floor,
    plan_review,
    projected_audit_labels,
    screening_stop,
    stop_depth,
    tail_estimate,
)
from rankcut.certify.sequential import operating_characteristics
from rankcut.certify.simulate import simulate_screen_then_audit

CLEF = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "clef-tar-2017"


def _ranking(seed: int, size: int = 3000, relevant: int = 60, decay: float = 300.0) -> np.ndarray:
    """A synthetic ranking whose relevance rate decays exponentially with rank."""
    rng = np.random.default_rng(seed)
    w = np.exp(-np.arange(size) / decay)
    y = np.zeros(size, dtype=np.int64)
    y[rng.choice(size, size=relevant, replace=False, p=w / w.sum())] = 1
    return y


def test_the_cut_reads_only_screened_labels() -> None:
    y = _ranking(0)
    k = stop_depth(y)
    assert 0 < k < y.size
    changed = y.copy()
    changed[k:] = np.random.default_rng(1).integers(0, 2, y.size - k)
    assert stop_depth(changed) == k


def test_nothing_stops_before_the_first_relevant_item() -> None:
    y = np.zeros(2000, dtype=np.int64)
    y[1500] = 1
    assert stop_depth(y) >= 1550


def test_tail_estimate_follows_an_exponential_rate() -> None:
    y = np.zeros(4000, dtype=np.int64)
    rate = 0.5 * np.exp(-np.arange(4000) / 400)
    y[:] = np.random.default_rng(3).random(4000) < rate
    depth = 1200
    truth = rate[depth:].sum()
    assert tail_estimate(y, depth, 4000, 1000) == pytest.approx(truth, rel=0.5)
    assert tail_estimate(np.zeros(1000, dtype=np.int64), 500, 1000, 500) == pytest.approx(0.5)


def _clef_topic(name: str) -> np.ndarray:
    rel = {line.split()[2] for line in (CLEF / "qrel_abs_test.txt").read_text().splitlines()
           if line.startswith(name) and int(line.split()[3]) > 0}
    lines = (CLEF / "runs" / "waterloo-A-rank-normal.run").read_text().splitlines()
    docs = sorted((int(r), d) for q, _, d, r, _, _ in (line.split() for line in lines) if q == name)
    return np.array([d in rel for _, d in docs], dtype=np.int64)


@pytest.mark.skipif(not CLEF.exists(), reason="needs ../shared/datasets/clef-tar-2017")
@pytest.mark.parametrize("topic", ["CD010276", "CD008782", "CD009372"])
def test_real_topics_false_claims_at_most_delta_exact_and_simulated(topic: str) -> None:
    """The three run-A topics with the largest exact false-claim probability in the benchmark."""
    y = _clef_topic(topic)
    rule = ReviewRule()
    plan = plan_review(y, rule)
    oc = operating_characteristics(plan.audit, int(y[plan.depth:].sum()), rule.check_every)
    assert oc.p_false_claim <= rule.delta
    runs = simulate_screen_then_audit(y, rule, range(200))
    assert runs.depth == plan.depth and runs.found == plan.found
    assert runs.false_claims.mean() <= rule.delta + 3 * np.sqrt(rule.delta * (1 - rule.delta) / 200)
    assert abs(runs.audit_labels.mean() - oc.expected_labels) < 0.1 * oc.expected_labels + 20
    assert np.all(runs.audit_labels[~runs.certified] == y.size - plan.depth)   # no claim: full review


def _floor_lp(total: int, relevant: int, target: float, delta: float) -> float:
    """The programme over laws of (claim, ℓ non-relevant read, j relevant read) or no claim."""
    neg = total - relevant
    a = int(np.floor(relevant * (1 - target) / target + 1e-9)) + 1
    need = int(np.ceil(relevant * target - 1e-9))
    ell, j = (v.ravel() for v in np.meshgrid(np.arange(neg + 1), np.arange(relevant + 1), indexing="ij"))
    g = comb(neg - ell, a) / comb(neg, a) if a <= neg else np.zeros(ell.size)   # nowhere to hide a
    # variables: P(claim at ℓ, j) for each pair, P(no claim); minimise cost, Σ = 1,
    # Σ g·p ≤ δ (a hidden shortfall stays unread), Σ_{j < need} p ≤ δ (a false claim in the truth)
    c = np.append((ell + j).astype(float), float(total))
    res = linprog(c, A_ub=[np.append(g, 0.0), np.append((j < need).astype(float), 0.0)],
                  b_ub=[delta, delta], A_eq=[np.ones(ell.size + 1)], b_eq=[1.0], bounds=(0, None),
                  method="highs")
    return float(res.fun)


@pytest.mark.parametrize("total,relevant,target,delta", [(60, 8, 0.8, 0.05), (120, 3, 0.8, 0.05),
                                                         (90, 12, 0.9, 0.1), (50, 0, 0.8, 0.05),
                                                         (40, 20, 0.8, 0.05), (12, 10, 0.8, 0.05)])
def test_cost_floor_is_the_linear_programme(total: int, relevant: int, target: float, delta: float) -> None:
    expected = _floor_lp(total, relevant, target, delta)
    assert cost_floor(total, relevant, target, delta) == pytest.approx(expected, rel=1e-6)


def test_cost_floor_properties() -> None:
    assert cost_floor(1000, 40, 0.8, 0.1) <= cost_floor(1000, 40, 0.8, 0.05)   # more error, fewer labels
    assert cost_floor(1000, 40, 0.8) <= cost_floor(1000, 40, 0.9)              # higher target, more labels
    assert cost_floor(1000, 24, 0.8) < cost_floor(1000, 23, 0.8)               # R/4 exact: a = 7, not 6
    assert cost_floor(10, 10) == pytest.approx(0.95 * 8)   # nothing to hide a shortfall in; 8 to find
    assert cost_floor(50, 0) == pytest.approx(50 * (1 - 0.05))   # a = 1: each unread item could be it
    with pytest.raises(ValueError, match="exceeds"):
        cost_floor(5, 6)


def test_bad_labels_name_the_rank() -> None:
    with pytest.raises(ValueError, match="rank 3 holds 2"):
        stop_depth([1, 0, 2, 0])
    with pytest.raises(ValueError, match="1-D"):
        plan_review([[0, 1]])
    with pytest.raises(ValueError, match="check_every"):
        ReviewRule(check_every=0)
    for bad in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="prior_scale must be a positive number"):
            ReviewRule(prior_scale=bad)


def test_the_prior_scale_sets_the_audits_prior_mean() -> None:
    assert ReviewRule().audit(1000, 40).prior_mean == 5.0                 # m(0) = 10, scale 1/2
    assert ReviewRule(prior_scale=0.25).audit(1000, 40).prior_mean == 2.5
    assert ReviewRule(prior_scale=0.25).audit(1000, 4).prior_mean == 0.5  # never below 1/2
    # a smaller prior mean certifies sooner when the audit finds nothing (the zero-find size)
    assert ReviewRule(prior_scale=0.125).audit(3000, 40).zero_find_size() \
        < ReviewRule().audit(3000, 40).zero_find_size()


def test_screening_stop_reads_the_screened_prefix_only() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(2000) < 0.5 * np.exp(-np.arange(2000) / 150)).astype(int)
    k = stop_depth(y)
    assert 0 < k < 2000
    assert screening_stop(y[:k], 2000) == k                 # the labels at the stop suffice
    assert screening_stop(y[:k - 1], 2000) is None          # one short: screen on
    assert screening_stop(np.concatenate([y[:k], 1 - y[k:]]), 2000) == k   # what lies below is never read
    assert screening_stop(np.zeros(2000, dtype=int), 2000) == 2000          # screened to the end
    with pytest.raises(ValueError, match="2001 screened labels exceed the list's 2000 ranks"):
        screening_stop(np.zeros(2001, dtype=int), 2000)


def test_lookahead_stops_no_earlier_than_the_margin_test_and_reads_the_prefix_only() -> None:
    plain = ReviewRule(lookahead=False)
    later = 0
    for seed in range(6):
        y = _ranking(seed, size=2000, relevant=40, decay=250.0)
        k, k0 = stop_depth(y), stop_depth(y, plain)
        assert k >= k0                        # the margin test still gates every stop
        later += k > k0
        assert screening_stop(np.concatenate([y[:k], 1 - y[k:]]), y.size) == k
        assert screening_stop(y[:k - 1], y.size) is None
    assert later, "the lookahead never screened on past the margin test: the check has no power here"


def test_projected_audit_labels_is_the_poisson_average_of_the_exact_law() -> None:
    rule = ReviewRule()
    audit = rule.audit(800, 12)
    assert projected_audit_labels(rule, 800, 12, 0.0) == audit.zero_find_size(rule.check_every)
    counts = np.arange(int(poisson.ppf(0.999, 1.5)) + 2)   # 0 … one past the 0.999 quantile
    weights = poisson.pmf(counts, 1.5)
    keep = weights >= 1e-4
    exact = [operating_characteristics(audit, int(m), rule.check_every).expected_labels for m in counts]
    want = float(np.dot(weights[keep], np.array(exact)[keep]) / weights[keep].sum())
    assert projected_audit_labels(rule, 800, 12, 1.5) == pytest.approx(want, rel=1e-12)
    assert projected_audit_labels(rule, 800, 12, 3.0) > projected_audit_labels(rule, 800, 12, 1.5)
    assert projected_audit_labels(rule, 0, 12, 3.0) == 0.0
    full = operating_characteristics(rule.audit(50, 5), 50, rule.check_every).expected_labels
    assert projected_audit_labels(rule, 50, 5, 3e7) == pytest.approx(full)   # far above the pool
