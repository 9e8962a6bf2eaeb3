"""Monte Carlo coverage of the Section 5, 6 and 9 certificates.

Each test simulates the audit design the result assumes, with a known truth, and checks that the
certificate covers it in at least ``1 − δ − 3·s.e.`` of the repetitions. Simulation is vectorised
with numpy; each distinct count vector is certified once with the public function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from coverage_checks import assert_coverage

from rankcut.certify.diagnostics import (
    amplification_counts,
    amplification_diagnostics,
)
from rankcut.certify.noise import noisy_excluded_pool_certificate
from rankcut.certify.stratified import (
    stratified_binomial_certificate,
    stratified_hypergeometric_certificate,
)
from rankcut.certify.stress import cluster_escape_counts, stress_test_certificate

REPS = 2000


def certify_rows(rows: np.ndarray, fn: Callable[[tuple[int, ...]], Any]) -> list[Any]:
    """Apply ``fn`` once per distinct row of integer counts; return one result per row."""
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    results = [fn(tuple(int(v) for v in row)) for row in unique]
    return [results[i] for i in np.asarray(inverse).ravel()]


# --- Section 5: Proposition 26 and Theorem 24 -------------------------------------------------

# Positives come in two types; given the type, the three detectors fire independently. The type
# mixture makes the incremental coverages γ_j differ from the detectors' marginal hit rates.
TYPE_P = np.array([0.6, 0.4])
HIT_P = np.array([[0.7, 0.5, 0.4],      # easy positives
                  [0.2, 0.3, 0.25]])    # hard positives


def true_amplification() -> tuple[float, np.ndarray]:
    """``L(g_J)`` and ``γ_1..γ_J`` of the mixture model (Definition 23, identity (4))."""
    survive = np.cumprod(1.0 - HIT_P, axis=1)             # P(g_j = 0 | type)
    miss = TYPE_P @ survive                               # P(g_j = 0 | Y = 1)
    before = np.concatenate([[1.0], miss[:-1]])
    return float(miss[-1]), 1.0 - miss / before


def test_amplification_coverage():
    rng = np.random.default_rng(20260723)
    delta = 0.1
    loss, gamma = true_amplification()
    # Whole-population audit of 160 items at prevalence 0.5, positives retained: Q is random.
    q = rng.binomial(160, 0.5, size=REPS)
    qmax = int(q.max())
    types = rng.choice(2, p=TYPE_P, size=(REPS, qmax))
    hits = rng.random((REPS, qmax, 3)) < HIT_P[types]
    hits &= (np.arange(qmax) < q[:, None])[:, :, None]    # drop the padding beyond Q
    first_hit = np.where(hits.any(axis=2), hits.argmax(axis=2), -1)
    caught = np.stack([(first_hit == j).sum(axis=1) for j in range(3)], axis=1)
    assert amplification_counts(hits[0, : q[0]]) == (int(q[0]), [int(v) for v in caught[0]])

    certs = certify_rows(
        np.column_stack([q, caught]),
        lambda row: amplification_diagnostics(positives=row[0], caught=list(row[1:]),
                                              delta=delta),
    )
    direct = np.array([c.value for c in certs])
    lower = np.array([c.details["theorem_24"]["gamma_lower"] for c in certs])
    product = np.array([c.details["theorem_24"]["miss_rate_product_upper"] for c in certs])

    assert_coverage(loss <= direct, delta, "Proposition 26")
    assert_coverage(np.all(lower <= gamma, axis=1), delta, "Theorem 24, all rounds jointly")
    assert_coverage(loss <= product, delta, "Theorem 24 product bound")


# --- Section 6: Theorem 29 ------------------------------------------------------------------

# Two positive types; clusters of 1..5 variants; each variant escapes generator g independently
# with a type- and generator-specific probability.
CLUSTER_TYPES = np.array([0.7, 0.3])
ESCAPE_P = np.array([[0.02, 0.05],     # type 0: generators g1, g2
                     [0.15, 0.10]])    # type 1
MAX_VARIANTS = 5


def true_escape() -> tuple[np.ndarray, np.ndarray]:
    """``ρ_max(g)`` and ``ρ_avg(g)`` of the model (Definition 28), for g1 and g2."""
    sizes = np.arange(1, MAX_VARIANTS + 1)
    some = 1.0 - (1.0 - ESCAPE_P[:, None, :]) ** sizes[None, :, None]   # [type, size, g]
    rho_max = CLUSTER_TYPES @ some.mean(axis=1)
    rho_avg = CLUSTER_TYPES @ ESCAPE_P
    return rho_max, rho_avg


def test_stress_test_coverage():
    rng = np.random.default_rng(29)
    delta, q = 0.1, 150
    rho_max, rho_avg = true_escape()
    types = rng.choice(2, p=CLUSTER_TYPES, size=(REPS, q))
    sizes = rng.integers(1, MAX_VARIANTS + 1, size=(REPS, q))
    real = np.arange(MAX_VARIANTS)[None, None, :] < sizes[:, :, None]      # [rep, i, variant]
    escaped = rng.random((REPS, q, MAX_VARIANTS, 2)) < ESCAPE_P[types][:, :, None, :]
    escaped &= real[..., None]
    drawn = rng.integers(0, sizes)                                          # Z_i, uniform
    kmax = escaped.any(axis=2).sum(axis=1)                                  # [rep, g]
    krand = np.take_along_axis(escaped, drawn[:, :, None, None], axis=2)[:, :, 0, :].sum(axis=1)
    clusters0 = [escaped[0, i, : sizes[0, i]] for i in range(q)]
    assert cluster_escape_counts(clusters0, list(drawn[0])) == (list(kmax[0]), list(krand[0]))

    certs = certify_rows(
        np.column_stack([kmax, krand]),
        lambda row: stress_test_certificate(positives=q, max_escapes=list(row[:2]),
                                            rand_escapes=list(row[2:]), delta=delta,
                                            delta_max=0.06),
    )
    bmax = np.array([c.value[0] for c in certs])
    bavg = np.array([c.value[1] for c in certs])
    covered = np.all(rho_max <= bmax, axis=1) & np.all(rho_avg <= bavg, axis=1)
    assert_coverage(covered, delta, "Theorem 29, joint")
    assert_coverage(np.all(rho_max <= bmax, axis=1), 0.06, "Theorem 29, rho_max share")
    assert_coverage(np.all(rho_avg <= bavg, axis=1), 0.04, "Theorem 29, rho_avg share")


# --- Section 9: stratified audits -------------------------------------------------------------

def test_stratified_binomial_coverage():
    rng = np.random.default_rng(9)
    delta = 0.1
    weights = np.array([0.6, 0.3, 0.1])
    eta_s = np.array([0.01, 0.05, 0.2])
    sampled = np.array([60, 60, 40])          # oversampling the small, rich stratum
    eta = float(weights @ eta_s)
    # i.i.d. draws within each stratum; the relevant count per stratum is their sum.
    relevant = (rng.random((REPS, sampled.max(), 3)) < eta_s).astype(int)
    relevant *= (np.arange(sampled.max())[:, None] < sampled)[None]
    k = relevant.sum(axis=1)
    certs = certify_rows(
        k,
        lambda row: stratified_binomial_certificate(weights=list(weights), sizes=[int(v) for v in sampled],
                                                    counts=list(row), delta=delta, p0=0.5),
    )
    bound = np.array([c.value for c in certs])
    per_stratum = np.array([c.details["stratum_upper"] for c in certs])
    # the union-bound event of the proof: every stratum's rate under its own bound
    assert_coverage(np.all(eta_s <= per_stratum, axis=1), delta, "stratified binomial, strata")
    assert_coverage(0.5 * eta <= bound, delta, "stratified binomial")


def test_stratified_hypergeometric_coverage():
    rng = np.random.default_rng(8)
    delta = 0.1
    sizes = np.array([2000, 500, 100])
    missed = np.array([10, 15, 20])           # M_0 per stratum, fixed finite corpus
    sampled = np.array([120, 80, 40])
    k = np.column_stack([
        rng.hypergeometric(missed[s], sizes[s] - missed[s], sampled[s], size=REPS)
        for s in range(3)
    ])
    certs = certify_rows(
        k,
        lambda row: stratified_hypergeometric_certificate(excluded_sizes=[int(v) for v in sizes],
                                                          sizes=[int(v) for v in sampled], counts=list(row),
                                                          delta=delta),
    )
    bound = np.array([c.value for c in certs])
    per_stratum = np.array([c.details["stratum_upper"] for c in certs])
    assert_coverage(np.all(missed <= per_stratum, axis=1), delta,
                    "stratified hypergeometric, strata")
    assert_coverage(missed.sum() <= bound, delta, "stratified hypergeometric")


# --- Section 9: noisy labels with a sensitivity floor ---------------------------------------

@pytest.mark.parametrize(
    ("s_min", "false_positive", "at_floor"),
    [
        (0.6, 0.0, 1.0),     # every relevant item at the floor, no false positives: tightest
        (0.6, 0.0, 0.5),     # half the relevant items at the floor, half above it
        (0.8, 0.01, 0.5),    # false positives only make the bound more conservative
    ],
)
def test_noisy_label_coverage(s_min, false_positive, at_floor):
    rng = np.random.default_rng(int(1000 * s_min + 100 * at_floor))
    delta, n0, eta, p0 = 0.1, 200, 0.05, 0.4
    y = rng.random((REPS, n0)) < eta
    # per-item sensitivity s(X) >= s_min: at the floor, or uniform on [s_min, 1]
    s = np.where(rng.random((REPS, n0)) < at_floor, s_min,
                 rng.uniform(s_min, 1.0, size=(REPS, n0)))
    noisy = np.where(y, rng.random((REPS, n0)) < s, rng.random((REPS, n0)) < false_positive)
    k = noisy.sum(axis=1)
    certs = certify_rows(
        k[:, None],
        lambda row: noisy_excluded_pool_certificate(sizes=n0, counts=row[0],
                                                    delta=delta, sensitivity_floor=s_min,
                                                    p0=p0),
    )
    bound = np.array([c.value for c in certs])
    assert_coverage(p0 * eta <= bound, delta, "noisy labels")
