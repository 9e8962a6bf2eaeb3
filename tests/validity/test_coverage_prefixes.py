"""Monte Carlo coverage of the prefix-family certificates (Cor 16, Thm 17, Cor 18, Thm 19).

Each design is simulated as it would be run — the audit draws are real samples from a synthetic
population or corpus with known labels — and each certificate is computed by the public function.
Passing criterion: coverage ≥ 1 − δ − 3 s.e., with s.e. = sqrt(δ(1 − δ)/reps). Where the design
allows it, the truth sits just beyond a bound's jump, so that coverage is close to 1 − δ and the
check has power against a wrong error split.
"""

from __future__ import annotations

import numpy as np
import pytest
from coverage_checks import coverage_floor

from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.prefixes import (
    fixed_sequence,
    fixed_sequence_finite,
    prefix_bounds_separate,
    prefix_bounds_separate_finite,
    prefix_bounds_shared,
    prefix_bounds_shared_finite,
    shared_reference_counts,
)


def _corpus(big_n: int, cuts: list[int], relevant_per_segment: list[int], seed: int) -> np.ndarray:
    """Labels of a corpus ranked 0..N−1; prefix m keeps ranks < cuts[m], so E_m = ranks ≥ cuts[m].

    ``relevant_per_segment[j]`` relevant items are placed at random in the j-th excluded segment
    [cuts[j], cuts[j+1]) (the last segment runs to N); the kept ranks < cuts[0] hold none, which
    changes no excluded-pool quantity.
    """
    rng = np.random.default_rng(seed)
    labels = np.zeros(big_n, dtype=bool)
    edges = [*cuts, big_n]
    for j, k in enumerate(relevant_per_segment):
        labels[rng.choice(np.arange(edges[j], edges[j + 1]), size=k, replace=False)] = True
    return labels


# --- Corollary 16: separate audits ---------------------------------------------------------------


def test_corollary_16_binomial_simultaneous_coverage() -> None:
    rng = np.random.default_rng(16)
    reps, delta = 4000, 0.10
    sizes = np.array([60, 120, 200])
    deltas = np.array([0.02, 0.05, 0.03])  # unequal shares, Σ = δ
    p0 = np.array([0.8, 0.5, 0.3])
    # η just above U_n(k, δ_m): each bound then fails with probability just under δ_m
    eta = cp_upper(np.array([0, 1, 2]), sizes, deltas) * (1 + 1e-6)
    k = rng.binomial(sizes, eta, size=(reps, 3))
    covered = np.empty(reps, dtype=bool)
    for i in range(reps):
        cert = prefix_bounds_separate(k[i], sizes, p0=p0, delta=delta, deltas=deltas)
        # each pool's rate is set alone, so its truths need not shrink as nested pools' do: the
        # per-prefix inversions (Corollary 16 as stated) are what is checked here
        covered[i] = np.all(p0 * eta <= np.array(cert.details["own_bounds"]))
    assert covered.mean() >= coverage_floor(delta, reps), covered.mean()


def test_corollary_16_hypergeometric_simultaneous_coverage() -> None:
    rng = np.random.default_rng(161)
    reps, delta = 2000, 0.10
    pools = np.array([500, 300, 150])
    sizes = np.array([60, 50, 40])
    # one relevant item beyond MU(k, δ/3): the bound fails with probability just under δ/3
    missed = hypergeom_upper(np.array([0, 1, 0]), delta / 3, population=pools, draws=sizes) + 1
    k = rng.hypergeometric(missed, pools - missed, sizes, size=(reps, 3))
    covered = np.empty(reps, dtype=bool)
    for i in range(reps):
        cert = prefix_bounds_separate_finite(k[i], sizes, pools, delta)
        # each pool's count is set alone (26, 29, 11: not those of nested pools), so the per-prefix
        # inversions are checked; the next test checks the printed bounds on one corpus's nested pools
        covered[i] = np.all(missed <= np.array(cert.details["own_bounds"]))
    assert covered.mean() >= coverage_floor(delta, reps), covered.mean()


def test_corollary_16_hypergeometric_coverage_of_a_nested_corpus() -> None:
    """Separate audits of one corpus's nested pools E1 ⊇ E2 ⊇ E3 (2,000, 1,950 and 150 items): a
    small audit of E2 leaves its own bound above E1's, so g2's bound is E1's (_running_least), and
    coverage is checked against the pools' true counts. A running least taken the wrong way (later
    prefixes bounding earlier ones) fails: E3's bound is far below E1's count."""
    rng = np.random.default_rng(162)
    reps, delta = 1500, 0.10
    cuts = [1000, 1050, 2850]
    labels = _corpus(3000, cuts, [2, 500, 30], seed=162)
    missed = np.array([labels[c:].sum() for c in cuts])
    sizes = [300, 30, 40]
    binding = 0
    covered = np.empty(reps, dtype=bool)
    for i in range(reps):
        k = [int(labels[rng.choice(np.arange(c, 3000), size=n, replace=False)].sum())
             for c, n in zip(cuts, sizes, strict=True)]
        cert = prefix_bounds_separate_finite(k, sizes, [3000 - c for c in cuts], delta)
        binding += cert.value[1] < cert.details["own_bounds"][1]
        covered[i] = np.all(missed <= np.array(cert.value))
    assert binding > 0.9 * reps, binding
    assert covered.mean() >= coverage_floor(delta, reps), covered.mean()


# --- Theorem 17 and Corollary 18: one shared reference sample -------------------------------------

BIG_N = 3000
CUTS = [1000, 2000, 2850]  # excluded pools of 2000, 1000 and 150 items
# high relevance in the excluded pools makes the bounds nearly tight over the random effective
# sizes (missed counts 951, 371, 66: rates 0.48, 0.37, 0.44)
LABELS = _corpus(BIG_N, CUTS, [580, 305, 66], seed=17)
RANKS = np.arange(BIG_N)
POOL_SIZES = np.array([BIG_N - c for c in CUTS])
MISSED = np.array([LABELS[c:].sum() for c in CUTS])


@pytest.mark.parametrize(
    ("reference_start", "q"),
    [(0, 30), (CUTS[0], 200)],  # R = X with a small sample (n_eff of g3 is often 0), R = E1
    ids=["R=X,Q=30", "R=E1,Q=200"],
)
def test_theorem_17_shared_reference_coverage(reference_start: int, q: int) -> None:
    rng = np.random.default_rng(q)
    reps, delta = 3000, 0.15
    reference = RANKS[reference_start:]
    mass = reference.size / BIG_N
    p0 = POOL_SIZES / BIG_N
    eta = MISSED / POOL_SIZES
    draws = rng.choice(reference, size=(reps, q), replace=True)  # i.i.d. from P(· | R)
    covered = np.empty(reps, dtype=bool)
    n_eff_zero = 0
    for i in range(reps):
        excluded = draws[i][:, None] >= np.array(CUTS)[None, :]
        n_eff, k = shared_reference_counts(excluded, LABELS[draws[i]])
        n_eff_zero += n_eff[-1] == 0
        cert = prefix_bounds_shared(k, n_eff, p0=p0, delta=delta, reference_size=q, reference_mass=mass)
        covered[i] = np.all(p0 * eta <= np.array(cert.value))
    assert covered.mean() >= coverage_floor(delta, reps), covered.mean()
    if q == 30:  # the Lemma 6 convention is exercised
        assert n_eff_zero > 0.1 * reps


@pytest.mark.parametrize(
    ("reference_start", "q"), [(0, 40), (CUTS[0], 200)], ids=["R=X,Q=40", "R=E1,Q=200"]
)
def test_corollary_18_shared_reference_coverage(reference_start: int, q: int) -> None:
    rng = np.random.default_rng(18 + q)
    reps, delta = 1500, 0.15
    reference = RANKS[reference_start:]
    # uniform without replacement from R: the q smallest of i.i.d. uniform keys
    keys = rng.random((reps, reference.size))
    draws = reference[np.argpartition(keys, q, axis=1)[:, :q]]
    covered = np.empty(reps, dtype=bool)
    for i in range(reps):
        excluded = draws[i][:, None] >= np.array(CUTS)[None, :]
        n_eff, k = shared_reference_counts(excluded, LABELS[draws[i]])
        cert = prefix_bounds_shared_finite(
            k, n_eff, POOL_SIZES, delta, reference_size=q, reference_pool_size=reference.size
        )
        covered[i] = np.all(MISSED <= np.array(cert.value))
    assert covered.mean() >= coverage_floor(delta, reps), covered.mean()


# --- Theorem 19: fixed-sequence stopping -----------------------------------------------------------


def test_theorem_19_fixed_sequence_separate_audits() -> None:
    """g1 and g2 miss just over ε and each passes its level-δ test with probability just under δ;
    g3 and g4 miss nothing. A wrong prefix is returned only if g2's test passes (probability ≈ δ);
    a rule that skipped past failures would also err through g1 (≈ 2δ)."""
    rng = np.random.default_rng(19)
    reps, delta, eps = 4000, 0.10, 0.005
    sizes = np.array([300, 200, 150, 150])
    u0 = cp_upper(0, sizes[:2], delta)
    p0 = np.array([*(eps / u0 * (1 - 1e-12)), 0.3, 0.2])  # K = 0 passes exactly
    eta = np.array([*(u0 * (1 + 1e-6)), 0.0, 0.0])
    r = p0 * eta
    assert r[0] >= r[1] > eps >= r[2] >= r[3]  # nested prefixes: missed mass non-increasing
    k = rng.binomial(sizes, eta, size=(reps, 4))
    wrong = np.empty(reps, dtype=bool)
    for i in range(reps):
        chosen = fixed_sequence(k[i], sizes, p0=p0, epsilon=eps, delta=delta).value
        wrong[i] = chosen is not None and r[int(chosen[1:]) - 1] > eps
    assert 1.0 - wrong.mean() >= coverage_floor(delta, reps), 1.0 - wrong.mean()


def test_theorem_19_fixed_sequence_shared_finite_sample() -> None:
    """One without-replacement reference sample from E1 shared by all tests (Theorem 19 uses only
    the marginal level of the boundary test); g1 leaves one item more than the target behind."""
    rng = np.random.default_rng(191)
    reps, delta, q = 1500, 0.10, 250
    reference = RANKS[CUTS[0]:]
    target = int(MISSED[0]) - 1  # g2, g3 meet the target, g1 misses it by one item
    assert MISSED[0] > target >= MISSED[1] >= MISSED[2]
    keys = rng.random((reps, reference.size))
    draws = reference[np.argpartition(keys, q, axis=1)[:, :q]]
    wrong = np.empty(reps, dtype=bool)
    for i in range(reps):
        excluded = draws[i][:, None] >= np.array(CUTS)[None, :]
        n_eff, k = shared_reference_counts(excluded, LABELS[draws[i]])
        chosen = fixed_sequence_finite(k, n_eff, POOL_SIZES, max_missed=target, delta=delta).value
        wrong[i] = chosen == "g1"
    assert 1.0 - wrong.mean() >= coverage_floor(delta, reps), 1.0 - wrong.mean()
