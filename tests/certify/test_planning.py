"""Audit-size planners: §4.6 and §8 reference values, minimality, Remark 14 against exact search."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.planning import (
    plan_binomial,
    plan_hypergeometric,
    plan_missed_mass,
    plan_rule_out,
)
from rankcut.certify.result import Certificate, recompute

TARGETS = [0.10, 0.05, 0.02, 0.01, 0.005]


# --- Section 4.6 planning table ----------------------------------------------------------------


def test_section_4_6_table_single_generator() -> None:
    cert = plan_binomial(TARGETS, 0.05)
    assert cert.value == (29, 59, 149, 299, 598)
    assert cert.side == "size"


def test_section_4_6_table_ten_prefixes() -> None:
    cert = plan_binomial(TARGETS, 0.05, n_prefixes=10)
    assert cert.value == (51, 104, 263, 528, 1058)
    assert cert.details["alpha"] == pytest.approx(0.005)
    assert sum(cert.allocation.values()) == pytest.approx(0.05)


def test_ten_prefixes_equal_one_generator_at_delta_over_ten() -> None:
    assert plan_binomial(TARGETS, 0.05, n_prefixes=10).value == plan_binomial(TARGETS, 0.005).value


def test_scalar_in_scalar_out() -> None:
    cert = plan_binomial(0.01, 0.05)
    assert cert.value == 299 and isinstance(cert.value, int)


# --- Section 8: whole population against excluded pool -----------------------------------------


def test_section_8_whole_population_431() -> None:
    cert = plan_missed_mass(0.00853, 0.025, p0=0.70)
    assert cert.details["whole_population"] == 431
    # binomial excluded-pool plan for η ≤ 0.00853/0.70; the paper's 300 is the exact
    # hypergeometric size for N0 = 70,000 (next test)
    assert cert.value == 301
    assert cert.value == plan_binomial(0.00853 / 0.70, 0.025).value
    assert cert.details["whole_population"] == plan_binomial(0.00853, 0.025).value


def test_section_8_hypergeometric_sizes() -> None:
    # §8: n0 = 300 from N0 = 70,000 gives MU(K0, 0.025) = 853, 1287, 1668 for K0 = 0, 1, 2
    cert = plan_hypergeometric([853, 1287, 1668], 0.025, population=70_000, tolerated=[0, 1, 2])
    assert cert.value == (300, 300, 300)
    tighter = plan_hypergeometric([852, 1286, 1667], 0.025, population=70_000, tolerated=[0, 1, 2])
    assert tighter.value == (301, 301, 301)
    # the whole-corpus design (successes = relevant and excluded items among N = 100,000)
    assert plan_hypergeometric(853, 0.025, population=100_000).value == 430


def test_excluded_pool_gain_is_about_one_over_p0() -> None:
    for p0 in (0.2, 0.7):
        cert = plan_missed_mass(1e-4, 0.05, p0=p0)
        assert cert.value / cert.details["whole_population"] == pytest.approx(p0, rel=0.01)


def test_target_at_or_above_p0_needs_no_audit() -> None:
    cert = plan_missed_mass([0.5, 0.7, 0.01], 0.05, p0=[0.4, 0.7, 0.7])
    assert cert.value[:2] == (0, 0)
    assert cert.details["whole_population"][:2] == (0, 0)
    assert cert.value[2] == plan_binomial(0.01 / 0.7, 0.05).value
    assert cert.details["total_excluded_pool_labels"] == cert.value[2]
    assert "without an audit" in cert.statement


def test_per_prefix_plan_for_corollary_16() -> None:
    cert = plan_missed_mass(0.01, 0.05, p0=[0.85, 0.70, 0.62], n_prefixes=3)
    expected = tuple(plan_binomial(0.01 / p, 0.05 / 3).value for p in (0.85, 0.70, 0.62))
    assert cert.value == expected
    assert cert.details["total_excluded_pool_labels"] == sum(expected)


# --- minimality of the searched sizes ------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    eps=st.floats(1e-4, 0.6),
    alpha=st.floats(1e-4, 0.5),
    c=st.integers(0, 6),
)
def test_binomial_size_is_the_smallest(eps: float, alpha: float, c: int) -> None:
    n = plan_binomial(eps, alpha, tolerated=c).value
    assert cp_upper(c, n, alpha) <= eps
    assert cp_upper(c, n - 1, alpha) > eps


@settings(max_examples=100, deadline=None)
@given(eps=st.floats(1e-4, 0.6), alpha=st.floats(1e-4, 0.5))
def test_zero_count_size_is_the_rule_of_three(eps: float, alpha: float) -> None:
    closed = math.log(alpha) / math.log1p(-eps)
    n = plan_binomial(eps, alpha).value
    if abs(closed - round(closed)) > 1e-6:  # away from a floating-point tie
        assert n == math.ceil(closed)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 5000), alpha=st.floats(1e-4, 0.5), c=st.integers(0, 3))
def test_binomial_size_at_a_tie(n: int, alpha: float, c: int) -> None:
    # ε equal to the bound at n: the closed form often lands one off here and must be repaired
    if c >= n:
        return
    eps = cp_upper(c, n, alpha)
    assert plan_binomial(eps, alpha, tolerated=c).value == n
    just_below = float(np.nextafter(eps, 0.0))
    assert plan_binomial(just_below, alpha, tolerated=c).value == n + 1


def test_more_tolerated_or_more_prefixes_needs_more_labels() -> None:
    by_c = plan_binomial(0.02, 0.05, tolerated=[0, 1, 2, 3, 5, 8]).value
    assert all(a < b for a, b in zip(by_c, by_c[1:], strict=False))
    by_m = [plan_binomial(0.02, 0.05, n_prefixes=m).value for m in (1, 2, 5, 20)]
    assert all(a < b for a, b in zip(by_m, by_m[1:], strict=False))


@settings(max_examples=60, deadline=None)
@given(
    big_n=st.integers(1, 400),
    data=st.data(),
    alpha=st.floats(0.001, 0.5),
)
def test_hypergeometric_size_is_the_smallest(big_n: int, data: st.DataObject, alpha: float) -> None:
    c = data.draw(st.integers(0, min(big_n, 4)))
    t = data.draw(st.integers(c, big_n))
    n = plan_hypergeometric(t, alpha, population=big_n, tolerated=c).value
    if t >= big_n:
        assert n == 0
        return
    assert hypergeom_upper(c, alpha, population=big_n, draws=n) <= t
    assert hypergeom_upper(c, alpha, population=big_n, draws=n - 1) > t


def test_hypergeometric_brute_force_small_pool() -> None:
    big_n, alpha = 60, 0.05
    ts = np.arange(0, 60)
    got = plan_hypergeometric(ts, alpha, population=big_n).value
    draws = np.arange(big_n + 1)
    mu = hypergeom_upper(np.zeros_like(draws), alpha, population=big_n, draws=draws)
    for t, n in zip(ts, got, strict=True):
        assert n == draws[mu <= t].min()


def test_without_replacement_never_needs_more_than_binomial() -> None:
    # zero count: sampling without replacement is no less favourable (Section 4.2)
    big_n = 5_000
    for t in (5, 50, 500):
        hyper = plan_hypergeometric(t, 0.05, population=big_n).value
        binom = plan_binomial((t + 1) / big_n, 0.05).value
        assert hyper <= binom


# --- Remark 14 and Theorem 13 --------------------------------------------------------------------


def _remark14_exact(big_n: int, m: int, delta: float) -> int:
    """Smallest n with (1 − n/N0)^m ≤ δ, in exact rational arithmetic."""
    d = Fraction(delta)
    return next(n for n in range(big_n + 1) if Fraction(big_n - n, big_n) ** m <= d)


def _zero_tail(big_n: int, m: int, n: int) -> Fraction:
    """P(no relevant item among n draws | M0 = m) = C(N0 − m, n) / C(N0, n), exactly (a float pmf
    can land on the wrong side of δ at a tie such as N0 = 10, m = 1, n = 5, δ = 0.5)."""
    return Fraction(math.comb(big_n - m, n), math.comb(big_n, n))


@settings(max_examples=80, deadline=None)
@given(big_n=st.integers(1, 300), data=st.data(), delta=st.floats(0.001, 0.6))
def test_remark_14_against_exact_search(big_n: int, data: st.DataObject, delta: float) -> None:
    m = data.draw(st.integers(1, big_n))
    cert = plan_rule_out(m, delta, excluded_size=big_n, beta=0.0)
    n_r = cert.value
    # (a) value is ⌈N0(1 − δ^{1/m})⌉ with the mathematical ceiling
    assert n_r == _remark14_exact(big_n, m, delta)
    # (b) the zero-count test "P(no relevant seen | M0 = m) ≤ δ" needs at most that many
    n_p = next(n for n in range(big_n + 1) if _zero_tail(big_n, m, n) <= Fraction(delta))
    assert n_p <= n_r
    if m == 1:
        assert n_p == n_r
    # (c) MU keeps m when the tail equals α, so at an exact tie it needs one more draw
    exact = cert.details["exact_size"]
    tie = abs(float(_zero_tail(big_n, m, n_p)) - delta) <= 1e-12 * delta
    assert exact == (n_p + 1 if tie else n_p)
    assert exact <= n_r + (1 if tie else 0)
    # (d) Theorem 13: no valid audit beats the lower bound; Corollary 15's upper bound holds
    assert exact >= cert.details["lower_bound"]
    assert n_r <= cert.details["corollary15_upper"]


def test_remark_14_at_the_tie_hypothesis_found() -> None:
    # N0 = 10, m = 1, δ = 0.5: five draws miss the one relevant item with probability exactly 1/2
    cert = plan_rule_out(1, 0.5, excluded_size=10, beta=0.0)
    assert _zero_tail(10, 1, 5) == Fraction(1, 2)
    assert cert.value == 5 and cert.details["exact_size"] == 6


@settings(max_examples=100, deadline=None)
@given(big_n=st.integers(2, 2000), m=st.integers(1, 5), data=st.data())
def test_remark_14_ceiling_at_a_tie(big_n: int, m: int, data: st.DataObject) -> None:
    # δ = (1 − n/N0)^m makes N0(1 − δ^{1/m}) an integer up to rounding: the float ceiling is
    # often one off in either direction here
    n = data.draw(st.integers(1, big_n - 1))
    delta = ((big_n - n) / big_n) ** m
    if not 0 < delta < 1 or m > big_n:
        return
    cert = plan_rule_out(m, delta, excluded_size=big_n, beta=0.0)
    assert cert.value == _remark14_exact(big_n, m, delta)


def test_remark_14_examples() -> None:
    # m = 1 and N0·δ an integer: a tie, so MU needs ⌈N0(1 − δ)⌉ + 1
    cert = plan_rule_out(1, 0.05, excluded_size=100)
    assert cert.value == 95 and cert.details["exact_size"] == 96
    # §8 pool: ruling out 854 missed items (certifying M0 ≤ 853) at δ = 0.025
    cert = plan_rule_out(854, 0.025, excluded_size=70_000)
    assert cert.value == 302 and cert.details["exact_size"] == 300
    assert cert.details["exact_size"] == plan_hypergeometric(853, 0.025, population=70_000).value


def test_theorem_13_lower_bound_and_ratio() -> None:
    cert = plan_rule_out([10, 100], 0.05, excluded_size=10_000, beta=0.5)
    assert cert.details["lower_bound"] == pytest.approx((0.45 * 1000, 0.45 * 100))
    ratios = cert.details["ratio_to_lower_bound"]
    assert ratios == pytest.approx(tuple(v / lb for v, lb in zip(
        cert.value, cert.details["lower_bound"], strict=True)))
    # the plan is within the constant log(1/δ)/(1 − β − δ) of the bound, up to the ceiling
    const = cert.details["constant_factor"]
    assert const == pytest.approx(math.log(20) / 0.45)
    for v, lb in zip(cert.value, cert.details["lower_bound"], strict=True):
        assert v <= const * lb + 1


# --- certificates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cert",
    [
        plan_binomial(TARGETS, 0.05, tolerated=1, n_prefixes=3),
        plan_missed_mass(0.00853, 0.025, p0=0.7),
        plan_missed_mass([0.01, 0.02], 0.05, p0=[0.85, 0.62], tolerated=[0, 2]),
        plan_hypergeometric([853, 1287], 0.025, population=70_000, tolerated=[0, 1]),
        plan_rule_out([1, 854], 0.025, excluded_size=70_000),
    ],
    ids=lambda c: c.function,
)
def test_recompute_from_json(cert: Certificate) -> None:
    back = Certificate.from_json(cert.to_json())
    assert recompute(back) == cert
    assert cert.side == "size" and cert.quantity == "n0"
    assert sum(cert.allocation.values()) <= cert.delta * (1 + 1e-12)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: plan_binomial(0.0), "epsilon"),
        (lambda: plan_binomial(1.0), "epsilon"),
        (lambda: plan_binomial([[0.1]]), "epsilon"),
        (lambda: plan_binomial(0.1, 1.5), "delta"),
        (lambda: plan_binomial(0.1, tolerated=-1), "tolerated"),
        (lambda: plan_binomial(0.1, tolerated=0.5), "tolerated"),
        (lambda: plan_binomial(0.1, n_prefixes=0), "n_prefixes"),
        (lambda: plan_binomial([0.1, 0.2], tolerated=[0, 1, 2]), "broadcast"),
        (lambda: plan_missed_mass(0.01, p0=0.0), "p0"),
        (lambda: plan_missed_mass(0.01, p0=1.2), "p0"),
        (lambda: plan_hypergeometric(2, population=100, tolerated=3), "max_missed"),
        (lambda: plan_hypergeometric(2, population=0), "population"),
        (lambda: plan_rule_out(0, excluded_size=10), "m"),
        (lambda: plan_rule_out(11, excluded_size=10), "m"),
        (lambda: plan_rule_out(1, 0.05, excluded_size=10, beta=0.96), "beta"),
    ],
)
def test_bad_input_names_the_argument(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=name):
        call()


def test_the_allocation_does_not_grow_with_the_number_of_prefixes() -> None:
    # one union-bound entry of total δ for all M pools: M = 10**6 must not build 10**6 entries
    m = 10**6
    cert = plan_binomial(0.01, 0.05, n_prefixes=m)
    assert cert.allocation == {f"g1..g{m} (δ/{m} each)": 0.05}
    assert cert.details["alpha"] == 0.05 / m
    assert cert.value == math.ceil(math.log(0.05 / m) / math.log1p(-0.01))  # rule of three at δ/M
    assert recompute(Certificate.from_json(cert.to_json())) == cert
    assert plan_hypergeometric(853, 0.025, population=70_000, n_prefixes=m).allocation == {
        f"g1..g{m} (δ/{m} each)": 0.025
    }
    assert plan_binomial(0.01, 0.05).allocation == {"g1": 0.05}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: plan_binomial(np.float64(0.0)), r"got 0.0$"),
        (lambda: plan_binomial([0.1, np.float64(1.5)]), r"got 1.5$"),
        (lambda: plan_missed_mass(0.01, p0=np.float64(1.2)), r"got 1.2$"),
    ],
)
def test_messages_show_plain_numbers(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "np." not in str(info.value)


def test_tiny_delta_is_never_shown_as_confidence_one() -> None:
    for cert in (plan_binomial(0.5, 1e-300), plan_missed_mass(0.5, 1e-300, p0=0.9),
                 plan_hypergeometric(5, 1e-300, population=10), plan_rule_out(5, 1e-300, excluded_size=10)):
        assert "confidence 1 − 1e-300" in cert.statement


def test_statement_for_several_pools_reads_plainly() -> None:
    statement = plan_binomial(0.01, 0.05, n_prefixes=10).statement
    assert statement.startswith("Drawing 528 items i.i.d. from each of 10 pools (δ/M = 0.005 each) and")
    assert plan_binomial(0.01, 0.05).statement.startswith("Drawing 299 items i.i.d. from the pool and")
    several = plan_hypergeometric(853, 0.05, population=70_000, n_prefixes=3)
    assert several.statement == (
        f"Drawing {several.value} items without replacement from each of 3 pools of at most 70000 items "
        "(δ/M = 0.0166667 each) and finding at most 0 relevant certifies at most 853 relevant items in each "
        "pool at confidence 0.95.")   # it said "of 70000 items ... in the pool": one pool, at δ
    one = plan_hypergeometric(853, 0.05, population=70_000)
    assert one.statement.startswith("Drawing 244 of 70000 items")
