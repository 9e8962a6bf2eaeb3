"""The anytime-valid sequential audit (rankcut.certify.sequential): exact enumeration.

The audit's count process is a Markov chain in ``(t, x)``, so the probability that the audit ever
certifies a false recall claim is computed exactly (:func:`operating_characteristics`) and checked
against ``δ`` for every true missed count of small pools; a rule that peeks with fixed-size bounds
fails the same check, so the check has power.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pytest

from rankcut.certify import recompute
from rankcut.certify.bounds import hypergeom_upper
from rankcut.certify.sequential import (
    SequentialAudit,
    _log_h,
    allowed_misses,
    audit_checks,
    default_prior_mean,
    ml_count,
    operating_characteristics,
    sequential_recall_certificate,
    stopping_laws,
)


def _scan_upper(audit: SequentialAudit, t: int, x: int) -> int:
    """max C_t from the definition, count by count: the one-sided ratio of the cut geometric prior
    conditioned on ``M < M'`` (module docstring), kept when below ``1/δ``."""
    if t == 0:
        return audit.pool
    rho = audit.prior_mean / (1 + audit.prior_mean)
    top = min(audit.pool, math.ceil(math.log(1e-12) / math.log(rho)))     # the tail cut at 1e-12
    prior = [(1 - rho) * rho ** m for m in range(top + 1)]

    def log_h(m: int) -> float:
        return float(_log_h(np.array(x), np.array(t), np.array(m), audit.pool))

    kept = []
    for big_m in range(x, audit.pool - t + x + 1):
        below = [m for m in range(min(big_m, len(prior))) if x <= m <= audit.pool - t + x]
        if big_m == 0:
            ratio = 1.0
        else:
            mass = sum(prior[:big_m])
            ratio = sum(prior[m] * math.exp(log_h(m) - log_h(big_m)) for m in below) / mass
        if ratio < 1 / audit.delta:
            kept.append(big_m)
    return max(kept)


@pytest.mark.parametrize("pool,found,mean", [(30, 0, 0.5), (45, 12, 1.5), (60, 40, 5.0), (25, 3, 20.0)])
def test_upper_end_matches_a_scan_of_every_count(pool: int, found: int, mean: float) -> None:
    audit = SequentialAudit(pool=pool, found=found, target=0.8, delta=0.05, prior_mean=mean)
    for t in range(pool + 1):
        for x in range(t + 1):
            assert int(audit.missed_upper(t, x)) == _scan_upper(audit, t, x), (t, x)


@pytest.mark.parametrize("found,mean,delta", [(0, 0.5, 0.05), (8, 1.0, 0.05), (20, 2.5, 0.05),
                                              (20, 10.0, 0.1), (40, 5.0, 0.01)])
def test_false_claims_at_most_delta_for_every_true_count(found: int, mean: float, delta: float) -> None:
    audit = SequentialAudit(pool=40, found=found, target=0.8, delta=delta, prior_mean=mean)
    worst = max(operating_characteristics(audit, m).p_false_claim for m in range(41))
    assert worst <= delta


def _peeking() -> type[SequentialAudit]:
    """Theorem 8's fixed-size bound recomputed after every label, posing as a sequential audit."""

    @dataclass(frozen=True)
    class Peeking(SequentialAudit):
        def missed_upper(self, t, x):  # type: ignore[no-untyped-def]
            t, x = np.broadcast_arrays(np.asarray(t), np.asarray(x))
            pairs = zip(t.ravel(), x.ravel(), strict=True)
            return np.array([self.pool if tt == 0 else int(hypergeom_upper(int(xx), self.delta,
                             population=self.pool, draws=int(tt))) for tt, xx in pairs]).reshape(t.shape)

        def certifies(self, t, x):  # type: ignore[no-untyped-def]
            return self.missed_upper(t, x) <= allowed_misses(self.found, x, self.target)

    return Peeking


def test_the_exact_check_catches_a_rule_that_peeks_with_fixed_size_bounds() -> None:
    """Theorem 8's bound recomputed after every label is not anytime-valid: the same exact check fails."""

    peeking = _peeking()(pool=40, found=40, target=0.8, delta=0.05, prior_mean=1.0)
    assert max(operating_characteristics(peeking, m).p_false_claim for m in range(41)) > 0.05


def _enumerated_running(audit: SequentialAudit, missed: int, every: int = 1) -> tuple[float, float]:
    """P(false claim) and E[labels] of the running-intersection rule checked every ``every``
    labels (and at the pool's end), by listing every placement of the ``missed`` relevant items
    in the audit order (each equally likely) — no Markov chain."""
    false = labels = 0.0
    places = list(itertools.combinations(range(audit.pool), missed))
    checks = np.zeros(audit.pool, dtype=bool)
    checks[every - 1::every] = checks[-1] = True
    for where in places:
        y = np.zeros(audit.pool, dtype=np.int64)
        y[list(where)] = 1
        bound, _ = audit.running_upper(y)
        x = np.concatenate(([0], np.cumsum(y)))
        met = bound[1:] <= [audit.allowed_misses(int(v)) for v in x[1:]]
        ok = np.nonzero(met & checks)[0]
        t = int(ok[0]) + 1 if ok.size else audit.pool
        labels += t
        false += bool(ok.size) and missed > audit.allowed_misses(int(x[t]))
    return false / len(places), labels / len(places)


@pytest.mark.parametrize("found,mean", [(8, 1.0), (12, 3.0), (4, 0.5)])
def test_running_rule_law_matches_an_enumeration_of_every_order(found: int, mean: float) -> None:
    audit = SequentialAudit(pool=12, found=found, target=0.8, delta=0.05, prior_mean=mean)
    for m in range(13):
        for every in (1, 5):
            oc = operating_characteristics(audit, m, every, running=True)
            false, labels = _enumerated_running(audit, m, every)
            assert oc.p_false_claim == pytest.approx(false, abs=1e-12), (m, every)
            assert oc.expected_labels == pytest.approx(labels, abs=1e-9), (m, every)


@pytest.mark.parametrize("found,mean,delta", [(8, 1.0, 0.05), (20, 2.5, 0.05), (20, 10.0, 0.1),
                                              (40, 5.0, 0.01)])
def test_running_rule_false_claims_at_most_delta_and_stops_no_later(found: int, mean: float,
                                                                    delta: float) -> None:
    """Once met, always met (the running intersection) keeps the level, and only saves labels."""
    audit = SequentialAudit(pool=40, found=found, target=0.8, delta=delta, prior_mean=mean)
    laws = [(operating_characteristics(audit, m), operating_characteristics(audit, m, running=True))
            for m in range(41)]
    assert max(run.p_false_claim for _, run in laws) <= delta
    assert all(run.expected_labels <= plain.expected_labels + 1e-9 for plain, run in laws)


def test_the_running_check_catches_a_rule_that_peeks_with_fixed_size_bounds() -> None:
    peeking = _peeking()(pool=40, found=40, target=0.8, delta=0.05, prior_mean=1.0)
    assert max(operating_characteristics(peeking, m, running=True).p_false_claim for m in range(41)) > 0.05


def test_running_upper_never_rises_and_a_met_stays_met() -> None:
    audit = SequentialAudit(pool=400, found=20, target=0.8, delta=0.05, prior_mean=2.5)
    y = np.zeros(300, dtype=np.int64)
    y[[5, 240, 241, 242, 243]] = 1          # a late run of finds after the target was met
    bound, where = audit.running_upper(y)
    x = np.concatenate(([0], np.cumsum(y)))
    plain = audit.missed_upper(np.arange(301), x)
    assert np.all(np.diff(bound) <= 0) and np.all(bound >= x) and np.all(bound <= plain)
    assert np.all(plain[where] == bound) and np.all(where <= np.arange(301))
    for t in range(301):   # the latest prefix that reached the bound
        assert not np.any(plain[where[t] + 1:t + 1] == bound[t]), t
    met = bound <= [audit.allowed_misses(int(v)) for v in x]
    first = int(np.argmax(met))
    assert met[first:].all()                      # once met, always met ...
    plainly = [plain[t] <= audit.allowed_misses(int(x[t])) for t in range(first, 301)]
    assert not all(plainly)                       # ... where the plain bound alone would withdraw it
    with pytest.raises(ValueError, match="0/1 sequence"):
        audit.running_upper([0, 2])
    # finds beyond an earlier bound (the sequence missed M there): the bound is never below x
    y = np.concatenate((np.zeros(200, dtype=np.int64), np.ones(12, dtype=np.int64)))
    bound, _ = audit.running_upper(y)
    x = np.concatenate(([0], np.cumsum(y)))
    assert np.min(audit.missed_upper(np.arange(201), x[:201])) < x[-1]
    assert bound[-1] == x[-1] and np.all(bound >= x)


def test_exact_law_matches_simulated_audits() -> None:
    audit = SequentialAudit(pool=80, found=16, target=0.8, delta=0.05, prior_mean=2.0)
    oc = operating_characteristics(audit, 3, check_every=5)
    pool = np.zeros(80, dtype=int)
    pool[:3] = 1
    sets = [set(s.tolist()) for s in audit.certified_counts(oc.checks)]
    stops = []
    for seed in range(4000):
        hits = np.cumsum(pool[np.random.default_rng(seed).permutation(80)])[oc.checks - 1]
        stops.append(next(i for i, (x, ok) in enumerate(zip(hits, sets, strict=True)) if x in ok
                          or i == len(sets) - 1))
    simulated = np.bincount(stops, minlength=oc.checks.size) / 4000
    assert np.abs(simulated - oc.stop_pmf).max() < 4 * math.sqrt(0.25 / 4000)
    assert abs(float(np.mean(oc.checks[stops])) - oc.expected_labels) < 1.0


def test_edges_empty_pool_end_of_pool_and_no_labels() -> None:
    empty = SequentialAudit(pool=0, found=5)
    assert int(empty.missed_upper(0, 0)) == 0 and empty.certified(0, 0)
    audit = SequentialAudit(pool=50, found=4, target=0.8, delta=0.05, prior_mean=1.0)
    assert int(audit.missed_upper(0, 0)) == 50           # nothing seen: anything is possible
    for x in (0, 1, 7):
        assert int(audit.missed_upper(50, x)) == x       # the whole pool seen: exact
    assert audit.certified(50, 7)                        # recall 1 after a full review
    with pytest.raises(ValueError, match="0 ≤ x ≤ t ≤ N0"):
        audit.missed_upper(51, 0)
    with pytest.raises(ValueError, match="prior_mean"):
        SequentialAudit(pool=10, found=1, prior_mean=0.0)


def test_upper_end_falls_with_more_labels_and_rises_with_more_finds() -> None:
    audit = SequentialAudit(pool=2000, found=40, target=0.8, delta=0.05, prior_mean=default_prior_mean(40))
    t = np.arange(0, 2001, 50)
    ups = audit.missed_upper(t, np.zeros_like(t))
    assert np.all(np.diff(ups) <= 0)
    finds = audit.missed_upper(np.full(6, 600), np.arange(6))
    assert np.all(np.diff(finds) > 0)


def test_zero_find_size_is_the_first_certified_check_and_near_theorem_8() -> None:
    for pool, found in ((3000, 20), (800, 8), (5000, 100)):
        audit = SequentialAudit(pool=pool, found=found, target=0.8, delta=0.05,
                                prior_mean=default_prior_mean(found))
        size = audit.zero_find_size(10)
        checks = [t for t in range(10, pool + 1, 10)]
        assert size == next(t for t in checks if audit.certified(t, 0))
        fixed = math.ceil(pool * (1 - 0.05 ** (1 / (audit.allowed_misses(0) + 1))))
        assert fixed <= size <= 1.35 * fixed     # the price of anytime validity, measured here
    small = SequentialAudit(pool=7, found=40, prior_mean=2.0)   # 10 misses allowed, 7 unread: none to audit
    assert small.zero_find_size(5) == 0
    assert SequentialAudit(pool=11, found=40, prior_mean=2.0).zero_find_size(5) > 0


def test_zero_find_stop_is_the_first_certifying_size_without_new_finds() -> None:
    for pool, found, t, x in ((400, 12, 0, 0), (400, 12, 90, 3), (1500, 30, 200, 1), (60, 2, 10, 2)):
        audit = SequentialAudit(pool=pool, found=found, target=0.8, delta=0.05,
                                prior_mean=default_prior_mean(found))
        stop = audit.zero_find_stop(t, x)
        assert stop == next(s for s in range(t, pool + 1) if audit.certified(s, x))
    audit = SequentialAudit(pool=300, found=10)
    assert audit.zero_find_stop(300, 40) == 300          # the whole pool: exact, always certifies
    with pytest.raises(ValueError, match="need 0 ≤ x ≤ t ≤ N0 = 300"):
        audit.zero_find_stop(10, 11)


def test_allowed_misses_is_exact_at_the_target() -> None:
    audit = SequentialAudit(pool=100, found=8, target=0.8)
    assert [audit.allowed_misses(x) for x in range(4)] == [2, 3, 4, 5]   # m ≤ 2.5, 3.25, 4.5, 5.75
    assert SequentialAudit(pool=100, found=4).allowed_misses(0) == 1     # 4/5 is exactly 0.8


def test_certificate_states_the_bound_and_recomputes() -> None:
    cert = sequential_recall_certificate(found=40, pool=2000, labelled=900, hits=0, prior_mean=5.0)
    audit = SequentialAudit(pool=2000, found=40, target=0.8, delta=0.05, prior_mean=5.0)
    upper = int(audit.missed_upper(900, 0))
    assert cert.details["missed_upper"] == upper
    assert cert.value == pytest.approx(40 / (40 + upper))
    assert cert.details["certified"] is (upper <= 10)
    assert "anytime-valid" in cert.statement
    assert recompute(cert.to_dict()).value == cert.value


def test_certificate_takes_the_tightest_earlier_prefix() -> None:
    audit = SequentialAudit(pool=2000, found=40, target=0.8, delta=0.05, prior_mean=5.0)
    earlier, now = int(audit.missed_upper(900, 0)), int(audit.missed_upper(950, 3))
    assert earlier < now                               # three finds after 900 labels widen C_t
    cert = sequential_recall_certificate(found=40, pool=2000, labelled=950, hits=3, target=0.8, delta=0.05,
                                         prior_mean=5.0, best_prefix=900, best_prefix_hits=0)
    assert cert.details["missed_upper"] == earlier
    assert cert.value == pytest.approx(43 / (40 + earlier))
    assert "first 900 labels" in cert.statement
    assert recompute(cert.to_dict()).value == cert.value
    plain = sequential_recall_certificate(found=40, pool=2000, labelled=950, hits=3, target=0.8, delta=0.05,
                                          prior_mean=5.0)
    assert plain.details["missed_upper"] == now and "best_prefix" not in plain.inputs
    looser = sequential_recall_certificate(found=40, pool=2000, labelled=950, hits=3, target=0.8, delta=0.05,
                                           prior_mean=5.0, best_prefix=100,
                                           best_prefix_hits=0)   # an earlier bound that is not lower
    assert looser.details["missed_upper"] == now and "tightest" not in looser.statement
    for s, xs in ((951, 0), (900, 4), (10, 11), (900, 0 - 1), (2, 3), (949, 0)):
        with pytest.raises(ValueError, match="best_prefix"):
            sequential_recall_certificate(found=40, pool=2000, labelled=950, hits=3, best_prefix=s,
                                          best_prefix_hits=xs)
    with pytest.raises(ValueError, match="go together"):
        sequential_recall_certificate(found=40, pool=2000, labelled=950, hits=3, best_prefix=900)


def test_the_statement_of_a_review_with_nothing_relevant_or_nothing_left_bounded() -> None:
    """"found at least 100% of the relevant items" of a review with none, and "at most 0 unfound"
    with items unread, read as certainties (note 48's carried item; the interleaved statement's
    wording since stop 49)."""
    none = sequential_recall_certificate(found=0, pool=30, labelled=30, hits=0)
    assert none.value == 1.0 and "missed none of the relevant items, as there are none" in none.statement
    assert "100%" not in none.statement and "not audited" not in none.statement     # a census: exact
    left = sequential_recall_certificate(found=3, pool=30, labelled=29, hits=0)
    assert left.details["missed_upper"] == 0
    assert ("found at least 100% of the relevant items: the cut's 3 plus 0 found in 29 audit labels of the "
            "30 excluded items leave at most 0 unfound among the 1 not audited (a bound at this confidence, "
            "not a certainty; anytime-valid") in left.statement
    bounded = sequential_recall_certificate(found=0, pool=30, labelled=29, hits=0)   # a bound, not a census
    assert "missed none of the relevant items, as the bound leaves none to miss" in bounded.statement
    some = sequential_recall_certificate(found=40, pool=2000, labelled=900, hits=2, prior_mean=5.0)
    assert "unfound (anytime-valid" in some.statement and "not a certainty" not in some.statement


def test_the_two_counts_are_named_so_a_swap_cannot_certify_silently() -> None:
    """The engine took ``(pool, found)`` and the certificate ``(found, pool)``: a swapped call
    certified another review without a word (the Python API walk, 2026-12-06)."""
    with pytest.raises(TypeError):
        SequentialAudit(2000, 40)              # type: ignore[misc]
    with pytest.raises(TypeError):
        sequential_recall_certificate(40, 2000, 900, 0)   # type: ignore[misc]


def test_certificate_refuses_counts_that_cannot_be() -> None:
    with pytest.raises(ValueError, match="labelled = 11 exceeds the excluded pool's 10 items"):
        sequential_recall_certificate(found=3, pool=10, labelled=11, hits=0)
    with pytest.raises(ValueError, match="hits = 5 exceeds the 4 audit labels"):
        sequential_recall_certificate(found=3, pool=10, labelled=4, hits=5)
    with pytest.raises(ValueError, match="check_every"):
        operating_characteristics(SequentialAudit(pool=10, found=3), 1, check_every=0)


def test_ml_count_is_the_argmax_of_the_likelihood() -> None:
    pool = 37
    for t in range(1, pool + 1):
        for x in range(t + 1):
            ms = np.arange(x, pool - t + x + 1)
            log_h = _log_h(np.full(ms.shape, x), np.full(ms.shape, t), ms, pool)
            assert log_h[int(ml_count(x, t, pool)) - x] == pytest.approx(log_h.max(), abs=1e-9), (t, x)


@pytest.mark.parametrize("pool,found,mean", [(20, 12, 0.5), (40, 40, 3.0), (60, 4, 3.0)])
def test_stopping_sets_hold_every_certifying_count(pool: int, found: int, mean: float) -> None:
    """The pre-filter of certified_counts must never drop a count that certifies (it once did,
    near the end of the pool, where the likelihood's argmax is clipped)."""
    audit = SequentialAudit(pool=pool, found=found, target=0.8, delta=0.05, prior_mean=mean)
    t = np.arange(1, pool + 1)
    for tt, got in zip(t, audit.certified_counts(t), strict=True):
        assert got.tolist() == [x for x in range(tt + 1)
                                if audit.missed_upper(tt, x) <= audit.allowed_misses(x)], tt


def _verdicts_and_full_evaluations(audit: SequentialAudit, t: np.ndarray, x: np.ndarray,
                                   monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, int]:
    """``audit.certifies(t, x)`` and how many pairs it passed to ``missed_upper``."""
    evaluated = []
    full = SequentialAudit.missed_upper

    def counting(self: SequentialAudit, t: np.ndarray, x: np.ndarray, **kw: object) -> np.ndarray:
        evaluated.append(np.size(t))
        return full(self, t, x, **kw)

    with monkeypatch.context() as patch:
        patch.setattr(SequentialAudit, "missed_upper", counting)
        verdict = audit.certifies(t, x)
    return verdict, sum(evaluated)


@pytest.mark.parametrize("pool,found,mean,target,delta", [
    (40, 0, 0.5, 0.8, 0.05), (60, 12, 3.0, 0.8, 0.05), (80, 40, 20.0, 0.95, 0.1), (50, 5, 1.0, 0.5, 0.01),
    (20_000, 1_800, 225.0, 0.8, 0.05), (60_000, 300, 37.5, 0.95, 0.05), (200_000, 40, 5.0, 0.8, 0.2)])
def test_certifies_agrees_with_the_upper_end_pair_for_pair(pool: int, found: int, mean: float,
                                                          target: float, delta: float,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """certifies decides most pairs by two bounds (its docstring); each verdict must be the one
    max C_t ≤ m(x) gives, on small pools over every pair and on large ones over a grid that crosses
    the stopping boundary, and the bounds must decide some pairs (else this checks nothing new)."""
    audit = SequentialAudit(pool=pool, found=found, target=target, delta=delta, prior_mean=mean)
    if pool <= 100:
        t = np.repeat(np.arange(pool + 1), np.arange(pool + 1) + 1)
        x = np.concatenate([np.arange(size + 1) for size in range(pool + 1)])
    else:
        grid = np.linspace(0, pool, 41).astype(np.int64)
        top = int(allowed_misses(found, 0, target)) + 60
        t, x = np.repeat(grid, top), np.tile(np.arange(top), grid.size)
        t, x = t[x <= t], x[x <= t]
    verdict, evaluated = _verdicts_and_full_evaluations(audit, t, x, monkeypatch)
    expected = audit.missed_upper(t, x) <= allowed_misses(found, x, target)
    assert np.array_equal(verdict, expected), np.flatnonzero(verdict != expected)[:5]
    assert expected.any() and not expected.all()
    assert evaluated < t.size / 2


def test_shared_stopping_sets_give_the_same_law() -> None:
    audit = SequentialAudit(pool=300, found=16, target=0.8, delta=0.05, prior_mean=2.0)
    checks = audit_checks(300, 10)
    shared = audit.certified_counts(checks, x_max=9)
    for m in (0, 3, 9):
        alone, reused = operating_characteristics(audit, m, 10), operating_characteristics(audit, m, 10,
                                                                                          stopsets=shared)
        assert (alone.p_false_claim, alone.expected_labels) == (reused.p_false_claim, reused.expected_labels)
        assert np.array_equal(alone.stop_pmf, reused.stop_pmf)


@pytest.mark.parametrize("every", [1, 3])
def test_stopping_laws_of_several_counts_match_an_enumeration_of_every_order(every: int) -> None:
    """The counts side by side in one pass of the chain: each row's law must be the one listing every
    placement of its relevant items in the audit order gives (each equally likely), and a row must
    not depend on the others (the same count alone gives the same law)."""
    audit = SequentialAudit(pool=12, found=6, target=0.8, delta=0.1, prior_mean=1.0)
    counts = [0, 1, 2, 3, 5, 8, 12]
    laws = stopping_laws(audit, counts, every)
    checks = audit_checks(12, every)
    stopsets = [set(s.tolist()) for s in audit.certified_counts(checks)]
    for m, law in zip(counts, laws, strict=True):
        stop_pmf, false = np.zeros(checks.size), 0.0
        places = list(itertools.combinations(range(12), m))
        for where in places:
            y = np.zeros(12, dtype=np.int64)
            y[list(where)] = 1
            hits = np.cumsum(y)[checks - 1]
            i = next(i for i, (x, ok) in enumerate(zip(hits, stopsets, strict=True)) if x in ok)
            stop_pmf[i] += 1 / len(places)
            false += (m > audit.allowed_misses(int(hits[i]))) / len(places)
        assert law.missed == m
        assert law.stop_pmf == pytest.approx(stop_pmf, abs=1e-12), m
        assert law.p_false_claim == pytest.approx(false, abs=1e-12), m
        assert law.expected_labels == pytest.approx(float(stop_pmf @ checks), abs=1e-9), m
        alone = stopping_laws(audit, [m], every)[0]
        assert (alone.expected_labels, alone.p_false_claim) == pytest.approx((law.expected_labels,
                                                                               law.p_false_claim), abs=1e-15)
    with pytest.raises(ValueError, match="0 … 12"):
        stopping_laws(audit, [3, 13])
    for bad in (2.7, True, -1):   # a count, as operating_characteristics takes it (2.7 read as 2 before)
        with pytest.raises(ValueError, match="a missed count must be"):
            stopping_laws(audit, [3, bad])
