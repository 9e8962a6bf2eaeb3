"""Monte Carlo coverage of the excluded-pool, recall and whole-population certificates
(Theorems 7, 8, 10, 12, Corollary 11 and the Hoeffding p0 bound of §4.1).

Each design is simulated as it is run: real draws from a synthetic population or corpus with a
known truth, with replacement where the theorem assumes i.i.d. draws and without replacement
where it assumes a finite corpus. Each distinct outcome is certified once by the public function.
The truth sits just beyond a bound's jump wherever the design allows, so that coverage is close
to 1 − δ and the check has power against a wrong error split. Passing criterion: coverage
≥ 1 − δ − 3 s.e., s.e. = sqrt(δ(1 − δ)/reps).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from coverage_checks import assert_coverage

from rankcut.certify.bounds import cp_lower, cp_upper, hypergeom_lower, hypergeom_upper
from rankcut.certify.excluded import (
    excluded_pool_certificate,
    excluded_pool_finite_certificate,
    excluded_pool_hoeffding_certificate,
)
from rankcut.certify.recall import two_pool_recall_certificate, two_pool_recall_finite_certificate
from rankcut.certify.whole import whole_population_certificate

REPS = 4000


def certify_rows(rows: np.ndarray, fn: Callable[..., Any]) -> np.ndarray:
    """``fn(*row)`` once per distinct row of counts, spread back to one result per row."""
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    results = [fn(*(int(v) for v in row)) for row in unique]
    return np.array([results[i] for i in np.asarray(inverse).ravel()], dtype=object)


def just_above(x: float) -> float:
    return x * (1 + 1e-9)


def just_below(x: float) -> float:
    return x * (1 - 1e-9)


def test_theorem_7_binomial_family():
    """Three generators, separate i.i.d. excluded-pool audits, δ/3 each: each η sits just above
    U(k, δ/3), so each member fails with probability ≈ δ/3 and the family with ≈ δ."""
    rng = np.random.default_rng(7)
    delta, n = 0.05, np.array([100, 300, 50])
    p0 = np.array([0.6, 0.4, 0.2])
    eta = np.array([just_above(cp_upper(k, m, delta / 3)) for k, m in zip([2, 0, 5], n, strict=True)])
    counts = rng.binomial(n, eta, size=(REPS, 3))
    values = certify_rows(counts, lambda *k: excluded_pool_certificate(
        list(k), n.tolist(), delta, p0=p0.tolist()).value)
    covered = np.array([np.all(p0 * eta <= np.array(v)) for v in values])
    coverage = assert_coverage(covered, delta, "Theorem 7 family")
    assert coverage < 1 - delta / 2  # nearly tight: the union bound is really spent


def test_theorem_8_hypergeometric_family():
    """Two finite excluded pools of their own sizes, sampled without replacement, δ/2 each."""
    rng = np.random.default_rng(8)
    delta = 0.05
    pools, n, k_edge = [5000, 800], [200, 120], [1, 3]
    # M0 one above MU(k_edge): the bound misses M0 exactly when K ≤ k_edge (probability ≈ δ/2)
    m0 = [hypergeom_upper(k, delta / 2, population=N, draws=s) + 1
          for k, N, s in zip(k_edge, pools, n, strict=True)]
    counts = np.column_stack([rng.hypergeometric(m, N - m, s, size=REPS)
                              for m, N, s in zip(m0, pools, n, strict=True)])
    values = certify_rows(counts, lambda *k: excluded_pool_finite_certificate(
        list(k), n, pools, delta).value)
    covered = np.array([np.all(np.array(m0) <= np.array(v)) for v in values])
    coverage = assert_coverage(covered, delta, "Theorem 8 family")
    assert coverage < 1 - delta / 2


def test_theorem_10_two_pool_population():
    rng = np.random.default_rng(10)
    delta, p0, n0, n1 = 0.05, 0.7, 300, 200
    eta0 = just_above(cp_upper(1, n0, delta / 2))
    eta1 = just_below(cp_lower(40, n1, delta / 2))
    recall = (1 - p0) * eta1 / ((1 - p0) * eta1 + p0 * eta0)
    rows = np.column_stack([rng.binomial(n0, eta0, REPS), rng.binomial(n1, eta1, REPS)])
    values = certify_rows(rows, lambda k0, k1: two_pool_recall_certificate(k0, n0, k1, n1, p0=p0,
                                                                           delta=delta).value)
    assert_coverage(recall >= values.astype(float), delta, "Theorem 10")


def test_theorem_10_gives_the_excluded_audit_its_share():
    """Every included draw relevant (η1 = 1): K1 = n1 and L = δ1^{1/n1} are fixed, and the bound
    fails exactly when U(K0, δ0) < L·η0. With η0 just above U(20, δ0)/L that is K0 ≤ 20, of
    probability ≈ δ0 = δ/2: coverage must reach 1 − δ0, not only 1 − δ. (At 20 counts a larger
    δ0 moves the edge by a count or more, so a wrong split shows.)"""
    rng = np.random.default_rng(100)
    delta, p0, n0, n1 = 0.05, 0.7, 300, 2000
    lower1 = cp_lower(n1, n1, delta / 2)
    eta0 = just_above(cp_upper(20, n0, delta / 2) / lower1)
    recall = (1 - p0) / ((1 - p0) + p0 * eta0)
    k0 = rng.binomial(n0, eta0, REPS)
    values = certify_rows(k0[:, None], lambda k: two_pool_recall_certificate(k, n0, n1, n1, p0=p0,
                                                                             delta=delta).value)
    coverage = assert_coverage(recall >= values.astype(float), delta / 2, "Theorem 10, δ0 share")
    assert coverage < 1 - delta / 4


def test_corollary_11_two_pool_finite():
    rng = np.random.default_rng(11)
    delta, pool0, pool1, n0, n1 = 0.05, 7000, 3000, 300, 200
    m0 = hypergeom_upper(1, delta / 2, population=pool0, draws=n0) + 1
    m1 = hypergeom_lower(40, delta / 2, population=pool1, draws=n1) - 1
    recall = m1 / (m0 + m1)
    rows = np.column_stack([rng.hypergeometric(m0, pool0 - m0, n0, REPS),
                            rng.hypergeometric(m1, pool1 - m1, n1, REPS)])
    values = certify_rows(rows, lambda k0, k1: two_pool_recall_finite_certificate(k0=k0, n0=n0, pool0=pool0,
                                                                                  k1=k1, n1=n1, pool1=pool1,
                                                                                  delta=delta).value)
    assert_coverage(recall >= values.astype(float), delta, "Corollary 11")


def test_corollary_11_exact_where_the_excluded_pool_can_be_sampled_through():
    """Exact enumeration over every truth (M0, M1) of small pools sampled nearly or wholly
    through, where MU = 0 happens and the bound reads 1: the probability that it exceeds the true
    recall is at most δ for every truth. With nothing relevant (M0 = M1 = 0) recall is 1 by the
    certificates' convention (a cut that misses nothing; the sequential audit's and Theorem 10's
    too); with M1 = 0 < M0 it is 0."""
    from scipy.stats import hypergeom

    delta = 0.05
    for pool0, n0, pool1, n1 in ((60, 59, 12, 3), (40, 40, 12, 12), (0, 0, 12, 2), (25, 24, 8, 8)):
        values = {(k0, k1): two_pool_recall_finite_certificate(k0=k0, n0=n0, pool0=pool0, k1=k1, n1=n1,
                                                               pool1=pool1, delta=delta).value
                  for k0 in range(n0 + 1) for k1 in range(n1 + 1)}
        assert any(v == 1.0 for v in values.values()) == (n0 != 24)   # 24 of 25: MU ≥ 1 even at K0 = 0
        for m0 in range(pool0 + 1):
            p0 = hypergeom(pool0, m0, n0).pmf(np.arange(n0 + 1)) if pool0 else np.ones(1)
            for m1 in range(pool1 + 1):
                p1 = hypergeom(pool1, m1, n1).pmf(np.arange(n1 + 1))
                truth = m1 / (m1 + m0) if m1 + m0 else 1.0
                fail = sum(p0[k0] * p1[k1] for (k0, k1), v in values.items() if v > truth + 1e-12)
                assert fail <= delta + 1e-9, (pool0, n0, pool1, n1, m0, m1, fail)


def test_corollary_11_gives_the_excluded_audit_its_share():
    """The included pool reviewed in full (n1 = N1) makes ML = M1 exactly, so the bound fails
    exactly when MU(K0, δ0) < M0: probability ≈ δ0 = δ/2 with M0 just above MU(20, δ0)."""
    rng = np.random.default_rng(110)
    delta, pool0, pool1, n0, m1 = 0.05, 7000, 4000, 300, 1200
    m0 = hypergeom_upper(20, delta / 2, population=pool0, draws=n0) + 1
    recall = m1 / (m0 + m1)
    k0 = rng.hypergeometric(m0, pool0 - m0, n0, REPS)
    values = certify_rows(k0[:, None], lambda k: two_pool_recall_finite_certificate(k0=k, n0=n0, pool0=pool0,
                                                                                    k1=m1, n1=pool1,
                                                                                    pool1=pool1,
                                                                                    delta=delta).value)
    coverage = assert_coverage(recall >= values.astype(float), delta / 2, "Corollary 11, δ0 share")
    assert coverage < 1 - delta / 4


def test_theorem_12_whole_population_family():
    """One whole-population sample certifies two nested generators at δ/2 each.

    Population cells: relevant and excluded by both (r_both), relevant and excluded only by the
    shallower cut g1 (r_extra), and the rest. r(g1) = r_both + r_extra, r(g2) = r_both.
    """
    rng = np.random.default_rng(12)
    delta, n = 0.05, 500
    r2 = just_above(cp_upper(2, n, delta / 2))
    r1 = just_above(cp_upper(6, n, delta / 2))
    cells = rng.multinomial(n, [r2, r1 - r2, 1 - r1], size=REPS)
    rows = np.column_stack([cells[:, 0] + cells[:, 1], cells[:, 0]])  # K_g1, K_g2
    values = certify_rows(rows, lambda k1, k2: whole_population_certificate([k1, k2], n, delta).value)
    covered = np.array([v[0] >= r1 and v[1] >= r2 for v in values])
    assert_coverage(covered, delta, "Theorem 12 family")


def test_hoeffding_combined_certificate():
    """p0 estimated from m unlabelled draws (Hoeffding at δ/2), η audited at δ/2."""
    rng = np.random.default_rng(4)
    delta, p0, m, n0 = 0.05, 0.6, 2000, 300
    eta = just_above(cp_upper(1, n0, delta / 2))
    rows = np.column_stack([rng.binomial(n0, eta, REPS), rng.binomial(m, p0, REPS)])
    values = certify_rows(rows, lambda k, e: excluded_pool_hoeffding_certificate(
        k, n0, e, m, delta).value)
    assert_coverage(p0 * eta <= values.astype(float), delta, "Hoeffding + Theorem 7")
