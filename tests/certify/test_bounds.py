"""Exact bounds of Section 4 (Lemma 6, Theorem 8, Corollary 11): reference values, exact coverage
by enumeration, properties, edge cases and input errors. Speed is measured in
benchmarks/bench_bounds.py, never asserted here."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from reference_values import CP_INTERVAL_95, CP_UPPER, HYPERGEOM_LOWER, HYPERGEOM_UPPER
from scipy import special, stats

from rankcut.certify.bounds import (
    clopper_pearson_interval,
    cp_lower,
    cp_upper,
    hypergeom_cdf,
    hypergeom_lower,
    hypergeom_sf,
    hypergeom_upper,
)

# --------------------------------------------------------------------------- reference values


@pytest.mark.parametrize(("k", "n", "alpha", "value", "places"), CP_UPPER)
def test_cp_upper_reference(k, n, alpha, value, places):
    got = cp_upper(k, n, alpha)
    assert round(got, places) == value
    assert got == pytest.approx(1 - alpha ** (1 / n), rel=3e-12)  # zero-count closed form, nudged up


@pytest.mark.parametrize(("k", "alpha", "big_n", "n", "value"), HYPERGEOM_UPPER)
def test_hypergeom_upper_reference(k, alpha, big_n, n, value):
    assert hypergeom_upper(k, alpha, population=big_n, draws=n) == value


@pytest.mark.parametrize(("k", "alpha", "big_n", "n", "value"), HYPERGEOM_LOWER)
def test_hypergeom_lower_reference(k, alpha, big_n, n, value):
    assert hypergeom_lower(k, alpha, population=big_n, draws=n) == value


def test_the_interval_takes_its_confidence_by_name() -> None:
    """``cp_upper(k, n, alpha)`` takes ``α`` third: a confidence given third here was its complement."""
    with pytest.raises(TypeError):
        clopper_pearson_interval(0, 300, 0.95)   # type: ignore[misc]
    assert clopper_pearson_interval(0, 300, confidence=0.9)[1] == pytest.approx(cp_upper(0, 300, 0.05))


@pytest.mark.parametrize(("x", "n", "lower", "upper", "rel"), CP_INTERVAL_95)
def test_clopper_pearson_interval_matches_r(x, n, lower, upper, rel):
    lo, hi = clopper_pearson_interval(x, n, confidence=0.95)
    assert lo == pytest.approx(lower, rel=rel, abs=0)
    assert hi == pytest.approx(upper, rel=rel, abs=0)
    assert (lo, hi) == pytest.approx((cp_lower(x, n, 0.025), cp_upper(x, n, 0.025)), rel=1e-12)


def test_hypergeom_tails_use_named_arguments():
    # P(H <= 0) for 2 successes among 10, 3 draws: C(8,3)/C(10,3) = 56/120.
    assert hypergeom_cdf(0, population=10, successes=2, draws=3) == pytest.approx(56 / 120)
    assert hypergeom_sf(1, population=10, successes=2, draws=3) == pytest.approx(64 / 120)


# ------------------------------------------------------------- exact coverage by enumeration


def _hypergeom_pmf_table(big_n: int, n: int) -> np.ndarray:
    """P(Hypergeom(N, M, n) = k) for every M in 0..N (rows) and k in 0..n (columns).

    Computed from log-gamma, independently of the scipy/boost routine the bounds call.
    """

    def log_choose(a, b):
        ok = (b >= 0) & (b <= a)
        out = np.full(np.broadcast(a, b).shape, -np.inf)
        a_, b_ = np.broadcast_arrays(a, b)
        out[ok] = special.gammaln(a_[ok] + 1) - special.gammaln(b_[ok] + 1) - special.gammaln(
            a_[ok] - b_[ok] + 1
        )
        return out

    m = np.arange(big_n + 1, dtype=float)[:, None]
    k = np.arange(n + 1, dtype=float)[None, :]
    pmf = np.exp(log_choose(m, k) + log_choose(big_n - m, n - k) - log_choose(big_n, n))
    np.testing.assert_allclose(pmf.sum(axis=1), 1.0, rtol=1e-9)
    return pmf


# (N, n, alpha): pools up to 2,000, small and large sampling fractions, several levels
ENUMERATION_CASES = [
    (1, 1, 0.5),
    (7, 3, 0.2),
    (50, 10, 0.05),
    (120, 120, 0.05),
    (200, 37, 0.1),
    (500, 60, 0.025),
    (1000, 900, 0.01),
    (2000, 40, 0.2),
    (2000, 300, 0.025),
]


@pytest.mark.parametrize(("big_n", "n", "alpha"), ENUMERATION_CASES)
def test_hypergeom_bounds_exact_coverage(big_n, n, alpha):
    """For every true M in 0..N: P(MU(K) ≥ M) ≥ 1 − α and P(ML(K) ≤ M) ≥ 1 − α, summing the pmf."""
    k = np.arange(n + 1)
    mu = hypergeom_upper(k, alpha, population=big_n, draws=n)  # once per (N, n, α)
    ml = hypergeom_lower(k, alpha, population=big_n, draws=n)
    pmf = _hypergeom_pmf_table(big_n, n)
    m = np.arange(big_n + 1)[:, None]
    cover_upper = (pmf * (mu[None, :] >= m)).sum(axis=1)
    cover_lower = (pmf * (ml[None, :] <= m)).sum(axis=1)
    assert cover_upper.min() >= 1 - alpha - 1e-9
    assert cover_lower.min() >= 1 - alpha - 1e-9


@pytest.mark.parametrize(("big_n", "n", "alpha"), [(1, 0, 0.3), (13, 5, 0.3), (60, 17, 0.05),
                                                   (150, 149, 0.01), (150, 30, 0.001)])
def test_hypergeom_bounds_equal_their_definition(big_n, n, alpha):
    """MU = max{m : P(H ≤ k) ≥ α} and ML = min{m : P(H ≥ k) ≥ α}, by brute force over all m."""
    k = np.arange(n + 1)
    m = np.arange(big_n + 1)[:, None]
    cdf = stats.hypergeom.cdf(k[None, :], big_n, m, n)
    sf = stats.hypergeom.sf(k[None, :] - 1, big_n, m, n)
    mu_def = np.where(cdf >= alpha, m, -1).max(axis=0)
    ml_def = np.where(sf >= alpha, m, big_n + 1).min(axis=0)
    np.testing.assert_array_equal(hypergeom_upper(k, alpha, population=big_n, draws=n), mu_def)
    np.testing.assert_array_equal(hypergeom_lower(k, alpha, population=big_n, draws=n), ml_def)


def test_hypergeom_upper_at_a_billion_errs_only_by_its_safe_side_slack():
    """The docstring's example: at N = 10^9 the tail test's slack lets MU exceed the exact bound
    (12,220,972 for k = 0, α = 0.025, n = 300, in exact decimal arithmetic) by about one part in
    10^6 (12,220,986), never fall below it."""
    big_n, n, alpha = 10**9, 300, Decimal("0.025")

    def none_found(m: int) -> Decimal:   # P(H = 0), exact to 60 digits
        with localcontext() as ctx:
            ctx.prec = 60
            terms = (Decimal(big_n - m - i) / Decimal(big_n - i) for i in range(n))
            return math.prod(terms, start=Decimal(1))

    lo, hi = 0, big_n
    while lo < hi:   # the largest m not rejected
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if none_found(mid) >= alpha else (lo, mid - 1)
    assert lo == 12_220_972
    assert hypergeom_upper(0, 0.025, population=big_n, draws=n) == 12_220_986


@pytest.mark.parametrize("n", [1, 10, 57, 300])
@pytest.mark.parametrize("alpha", [0.2, 0.05, 0.01])
def test_clopper_pearson_exact_coverage(n, alpha):
    """min over p of P_p(U_n(K) ≥ p) and P_p(L_n(K) ≤ p) is ≥ 1 − α.

    The coverage of U drops just above each U_n(k), so the grid holds those points (and the
    points just below each L_n(k)), not only a regular mesh.
    """
    k = np.arange(n + 1)
    upper = cp_upper(k, n, alpha)
    lower = cp_lower(k, n, alpha)
    p = np.concatenate([
        np.linspace(0, 1, 2001),
        np.nextafter(upper[upper < 1], 2.0),
        np.nextafter(lower[lower > 0], -1.0),
    ])
    pmf = stats.binom.pmf(k[None, :], n, p[:, None])
    cover_upper = (pmf * (upper[None, :] >= p[:, None])).sum(axis=1)
    cover_lower = (pmf * (lower[None, :] <= p[:, None])).sum(axis=1)
    assert cover_upper.min() >= 1 - alpha - 1e-9
    assert cover_lower.min() >= 1 - alpha - 1e-9


# ------------------------------------------------------------------------------ properties

alphas = st.floats(min_value=1e-6, max_value=0.5)


@st.composite
def pools(draw, max_n: int = 5000):
    """(N, n, k) with 0 ≤ k ≤ n ≤ N; N sometimes very large."""
    big_n = draw(st.one_of(st.integers(0, max_n), st.integers(10**5, 10**8)))
    n = draw(st.integers(0, min(big_n, 2000)))
    k = draw(st.integers(0, n))
    return big_n, n, k


@settings(deadline=None, max_examples=60)
@given(pools(), alphas)
def test_monotone_in_k(pool, alpha):
    big_n, n, k = pool
    if k == n:
        return
    kk = np.array([k, k + 1])
    assert np.all(np.diff(hypergeom_upper(kk, alpha, population=big_n, draws=n)) >= 0)
    assert np.all(np.diff(hypergeom_lower(kk, alpha, population=big_n, draws=n)) >= 0)
    assert np.all(np.diff(cp_upper(kk, n, alpha)) >= 0)
    assert np.all(np.diff(cp_lower(kk, n, alpha)) >= 0)


@settings(deadline=None, max_examples=60)
@given(pools(), alphas)
def test_more_draws_with_the_same_count_lower_every_bound(pool, alpha):
    big_n, n, k = pool
    if n == big_n:
        return
    nn = np.array([n, n + 1])
    assert np.all(np.diff(hypergeom_upper(k, alpha, population=big_n, draws=nn)) <= 0)
    assert np.all(np.diff(hypergeom_lower(k, alpha, population=big_n, draws=nn)) <= 0)
    assert np.all(np.diff(cp_upper(k, nn, alpha)) <= 0)
    assert np.all(np.diff(cp_lower(k, nn, alpha)) <= 0)


@settings(deadline=None, max_examples=60)
@given(pools(), alphas, alphas)
@example(pool=(105, 105, 24), a1=0.5, a2=0.49999999999999994)
def test_smaller_alpha_widens(pool, a1, a2):
    big_n, n, k = pool
    small, large = min(a1, a2), max(a1, a2)
    assert hypergeom_upper(k, small, population=big_n, draws=n) >= hypergeom_upper(
        k, large, population=big_n, draws=n)
    assert hypergeom_lower(k, small, population=big_n, draws=n) <= hypergeom_lower(
        k, large, population=big_n, draws=n)
    # Clopper–Pearson is a beta quantile in floating point: alphas one ulp apart (0.5 and
    # 0.49999999999999994, found by hypothesis) may give bounds 1e-16 the wrong way round
    assert cp_upper(k, n, small) >= cp_upper(k, n, large) - 1e-12
    assert cp_lower(k, n, small) <= cp_lower(k, n, large) + 1e-12


@settings(deadline=None, max_examples=60)
@given(pools(), alphas)
def test_one_more_pool_item_moves_each_bound_by_zero_or_one(pool, alpha):
    """Adding an item to the pool raises MU and ML by 0 or 1 (a coupling argument)."""
    big_n, n, k = pool
    nn = np.array([big_n, big_n + 1])
    assert set(np.diff(hypergeom_upper(k, alpha, population=nn, draws=n))) <= {0, 1}
    assert set(np.diff(hypergeom_lower(k, alpha, population=nn, draws=n))) <= {0, 1}


@settings(deadline=None, max_examples=60)
@given(pools(), alphas)
def test_support_and_zero_count_binomial_dominance(pool, alpha):
    big_n, n, k = pool
    mu = hypergeom_upper(k, alpha, population=big_n, draws=n)
    ml = hypergeom_lower(k, alpha, population=big_n, draws=n)
    assert k <= ml <= big_n - n + k
    assert k <= mu <= big_n - n + k
    assert 0 <= cp_lower(k, n, alpha) <= cp_upper(k, n, alpha) <= 1
    if k == 0:
        # §4.2: with zero observed, the binomial bound N·U_n(0, α) is conservative for MU.
        assert mu <= big_n * cp_upper(0, n, alpha) * (1 + 1e-12)


# ------------------------------------------------------------------------------ edge cases


@pytest.mark.parametrize("big_n", [0, 1, 10, 10**8])
def test_empty_sample(big_n):
    assert hypergeom_upper(0, 0.05, population=big_n, draws=0) == big_n
    assert hypergeom_lower(0, 0.05, population=big_n, draws=0) == 0
    assert cp_upper(0, 0, 0.05) == 1.0
    assert cp_lower(0, 0, 0.05) == 0.0


def test_all_observed_relevant():
    assert cp_upper(7, 7, 0.05) == 1.0
    assert cp_lower(7, 7, 0.05) == pytest.approx(0.05 ** (1 / 7), rel=3e-12)   # nudged down 1e-12
    assert hypergeom_upper(7, 0.05, population=100, draws=7) == 100
    assert hypergeom_lower(0, 0.05, population=100, draws=7) == 0


def test_full_census_is_exact():
    k = np.arange(31)
    np.testing.assert_array_equal(hypergeom_upper(k, 0.05, population=30, draws=30), k)
    np.testing.assert_array_equal(hypergeom_lower(k, 0.05, population=30, draws=30), k)


def test_scalar_in_scalar_out():
    assert isinstance(hypergeom_upper(0, 0.05, population=100, draws=10), int)
    assert isinstance(hypergeom_lower(np.int64(1), 0.05, population=100, draws=10), int)
    assert isinstance(cp_upper(0, 10, 0.05), float)
    assert isinstance(cp_lower(np.int32(2), 10, np.float64(0.05)), float)
    assert isinstance(hypergeom_upper(np.array(1), 0.05, population=100, draws=10), int)


def test_arrays_broadcast_to_the_inputs_shape():
    k = np.array([[0, 1, 2], [3, 4, 5]])
    alpha = np.array([0.05, 0.1, 0.2])
    mu = hypergeom_upper(k, alpha, population=1000, draws=[[50], [60]])
    assert mu.shape == (2, 3) and mu.dtype.kind == "i"
    assert mu[1, 2] == hypergeom_upper(5, 0.2, population=1000, draws=60)
    ml = hypergeom_lower(k, alpha, population=1000, draws=50)
    assert ml.shape == (2, 3) and ml[0, 1] == hypergeom_lower(1, 0.1, population=1000, draws=50)
    assert cp_upper(k, 10, alpha).shape == (2, 3)
    assert cp_lower([1, 2], 10, 0.05).shape == (2,)
    assert hypergeom_upper([], 0.05, population=10, draws=3).shape == (0,)


# ------------------------------------------------------------------------------ bad input

BAD_HYPERGEOM = [
    (dict(k=4, alpha=0.05, population=10, draws=3), "k=4 exceeds sample size draws=3"),
    (dict(k=0, alpha=0.05, population=10, draws=11), "draws=11 exceeds population size"),
    (dict(k=-1, alpha=0.05, population=10, draws=3), "k must be >= 0"),
    (dict(k=0, alpha=0.05, population=10, draws=-3), "draws must be >= 0"),
    (dict(k=0, alpha=0.05, population=-1, draws=0), "population size must be >= 0"),
    (dict(k=1.5, alpha=0.05, population=10, draws=3), "k must be an integer"),
    (dict(k=1, alpha=0.05, population=10.5, draws=3), "population must be an integer, got 10.5$"),
    (dict(k=1, alpha=0.05, population=math.inf, draws=3), "population must be an integer"),
    (dict(k="1", alpha=0.05, population=10, draws=3), "k must be an integer"),
    (dict(k=1, alpha=0.0, population=10, draws=3), r"alpha must lie in \(0, 1\), got 0.0$"),
    (dict(k=1, alpha=1.0, population=10, draws=3), r"alpha must lie in \(0, 1\)"),
    (dict(k=1, alpha=math.nan, population=10, draws=3), r"alpha must lie in \(0, 1\)"),
    (dict(k=1, alpha="x", population=10, draws=3), "alpha must be a number"),
    (dict(k=[0, 5], alpha=0.05, population=10, draws=3), "k=5 exceeds"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_HYPERGEOM)
@pytest.mark.parametrize("fn", [hypergeom_upper, hypergeom_lower])
def test_hypergeom_bad_input(fn, kwargs, message):
    kwargs = dict(kwargs)
    k, alpha = kwargs.pop("k"), kwargs.pop("alpha")
    with pytest.raises(ValueError, match=message):
        fn(k, alpha, **kwargs)


@pytest.mark.parametrize(
    ("k", "n", "alpha", "message"),
    [
        (5, 4, 0.05, "k=5 exceeds sample size n=4"),
        (-1, 4, 0.05, "k must be >= 0"),
        (0, -4, 0.05, "n must be >= 0"),
        (0.5, 4, 0.05, "k must be an integer"),
        (0, 4.2, 0.05, "n must be an integer, got 4.2$"),
        (0, 4, 1.5, r"alpha must lie in \(0, 1\), got 1.5$"),
        (0, 4, -0.1, r"alpha must lie in \(0, 1\)"),
    ],
)
@pytest.mark.parametrize("fn", [cp_upper, cp_lower])
def test_clopper_pearson_bad_input(fn, k, n, alpha, message):
    with pytest.raises(ValueError, match=message):
        fn(k, n, alpha)


# ---------------------------------------------------------------------------------- huge pools
def _exact_mu_zero(alpha: float, big_n: int, n: int) -> int:
    """MU(0, α; N, n) in exact rational arithmetic: P(H = 0) = Π_{i<n} (N − m − i)/(N − i)."""
    from fractions import Fraction

    a = Fraction(alpha)

    def ok(m: int) -> bool:
        p = Fraction(1)
        for i in range(n):
            p *= Fraction(big_n - m - i, big_n - i)
        return p >= a

    lo, hi = 0, big_n - n  # ok(lo) holds; search the largest m that passes
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


@pytest.mark.parametrize("big_n", [10**7, 10**9, 10**10])
@pytest.mark.parametrize(("n", "alpha"), [(1, 0.05), (2, 0.025), (3, 0.05)])
def test_mu_is_never_below_the_exact_value_for_huge_pools(big_n: int, n: int, alpha: float) -> None:
    # scipy's tail loses ~3e-16·N relative accuracy; the search's slack must keep MU on the safe side
    exact = _exact_mu_zero(alpha, big_n, n)
    got = hypergeom_upper(0, alpha, population=big_n, draws=n)
    assert exact <= got <= exact * (1 + 1e-4)
    # ML mirrors MU on the failures: ML(n, α) = N − MU(0, α) for the failure count
    assert hypergeom_lower(n, alpha, population=big_n, draws=n) <= big_n - exact


def test_populations_beyond_the_accuracy_limit_are_refused() -> None:
    with pytest.raises(ValueError, match="exceeds 1e"):
        hypergeom_upper(0, 0.05, population=10**11, draws=10)


def _binomial_cdf(k: int, n: int, q: float) -> Decimal:
    """P(Bin(n, q) ≤ k) to 60 digits (the finite sum; ``decimal``, no floating-point error)."""
    with localcontext() as ctx:
        ctx.prec = 60
        p = Decimal(q)
        term = (1 - p) ** n
        total = term
        for i in range(1, k + 1):
            term = term * (n - i + 1) / i * p / (1 - p)
            total += term
        return total


@pytest.mark.parametrize(("k", "n", "alpha"), [(1, 10**9, 0.05), (2, 10**9, 1e-4), (0, 10**9, 0.05),
                                               (1, 10**8, 0.05), (3, 10**7, 0.01), (5, 10**6, 0.2),
                                               (1, 10**5, 0.05), (7, 1000, 1e-6)])
def test_clopper_pearson_bounds_are_on_the_safe_side_of_floating_point(k, n, alpha):
    """scipy's beta quantile left U_n(1, 0.05) at n = 10^9 4e-9 (relative) below the exact bound:
    P(Bin(n, U) ≤ 1) = 0.05 + 7.8e-10 > α. Both bounds now keep their tail at most α, exactly."""
    upper = cp_upper(k, n, alpha)
    assert _binomial_cdf(k, n, upper) <= Decimal(alpha)
    assert _binomial_cdf(k, n, upper * (1 - 1e-7)) > Decimal(alpha)   # and only just: a nudge, no loss
    if k:
        lower = cp_lower(k, n, alpha)
        assert 1 - _binomial_cdf(k - 1, n, lower) <= Decimal(alpha)
        assert 1 - _binomial_cdf(k - 1, n, lower * (1 + 1e-7)) > Decimal(alpha)
