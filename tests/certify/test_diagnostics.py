"""Proposition 26 and Theorem 24 (amplification diagnostics) against scipy reference values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_values import ref_lower, ref_upper

from rankcut.certify.bounds import cp_lower, cp_upper
from rankcut.certify.diagnostics import (
    amplification_counts,
    amplification_diagnostics,
    direct_miss_rate_certificate,
    incremental_coverage_certificate,
)
from rankcut.certify.result import Certificate, recompute


def test_direct_miss_rate_reference_values():
    c = direct_miss_rate_certificate(positives=200, missed=4, delta=0.05)
    assert c.value == pytest.approx(ref_upper(4, 200, 0.05), rel=1e-10)
    assert c.theorem == "Proposition 26" and c.side == "upper" and c.quantity == "L"
    # zero observed misses: U_n(0, δ) = 1 − δ^(1/n)
    zero = direct_miss_rate_certificate(positives=300, missed=0, delta=0.025)
    assert zero.value == pytest.approx(1 - 0.025 ** (1 / 300), rel=1e-12)


def test_direct_miss_rate_edges():
    assert direct_miss_rate_certificate(positives=0, missed=0, delta=0.05).value == 1.0
    assert direct_miss_rate_certificate(positives=7, missed=7, delta=0.05).value == 1.0


def test_incremental_coverage_reference_values():
    q, h, ds = 200, [150, 30, 10], [0.02, 0.02, 0.01]
    c = incremental_coverage_certificate(positives=q, caught=h, delta=0.05, deltas=ds)
    residual = [200, 50, 20]
    expected = [ref_lower(hj, qj, dj) for hj, qj, dj in zip(h, residual, ds, strict=True)]
    assert c.value == pytest.approx(tuple(expected), rel=1e-10)
    assert c.details["residual"] == residual
    assert c.details["miss_rate_product_upper"] == pytest.approx(
        math.prod(1 - v for v in expected), rel=1e-10
    )
    assert c.side == "lower" and c.theorem == "Theorem 24"
    assert sum(c.allocation.values()) == pytest.approx(0.05)


def test_even_split_when_deltas_omitted():
    c = incremental_coverage_certificate(positives=100, caught=[60, 20], delta=0.05)
    assert c.details["deltas"] == [0.025, 0.025]
    assert c.value[1] == pytest.approx(ref_lower(20, 40, 0.025), rel=1e-10)


def test_combined_result_reports_prop26_and_keeps_thm24_in_details():
    c = amplification_diagnostics(positives=200, caught=[150, 30, 10], delta=0.05)
    direct = direct_miss_rate_certificate(positives=200, missed=10, delta=0.05)
    inc = incremental_coverage_certificate(positives=200, caught=[150, 30, 10], delta=0.05)
    assert c.value == direct.value
    assert c.details["missed"] == 10
    t24 = c.details["theorem_24"]
    assert tuple(t24["gamma_lower"]) == inc.value
    assert t24["miss_rate_product_upper"] == inc.details["miss_rate_product_upper"]
    assert "Proposition 26" in c.statement and "diagnostic" in c.statement.lower()
    assert c.allocation == {"L": 0.05}


def test_zero_positives_gives_trivial_bounds():
    c = amplification_diagnostics(positives=0, caught=[0, 0], delta=0.05)
    assert c.value == 1.0
    assert c.details["theorem_24"]["gamma_lower"] == [0.0, 0.0]
    assert c.details["theorem_24"]["miss_rate_product_upper"] == 1.0


def test_everything_caught_in_round_one():
    # Q_2 = 0: the second round has no residual positives, so L_0(0, δ_2) = 0.
    c = incremental_coverage_certificate(positives=50, caught=[50, 0], delta=0.05)
    assert c.value[0] == pytest.approx(0.025 ** (1 / 50), rel=1e-12)   # L_n(n, α) = α^(1/n)
    assert c.value[1] == 0.0
    assert c.details["residual"] == [50, 0]


@given(
    n=st.integers(0, 400),
    frac=st.floats(0, 1),
    a=st.floats(1e-6, 0.5),
)
def test_j1_identity(n, frac, a):
    """Section 5.3: U_n(k, α) = 1 − L_n(n − k, α), so J = 1, δ_1 = δ makes both coincide."""
    k = int(round(frac * n))
    # to 3e-12: each bound is moved 1e-12 (relative) to its safe side of floating-point error
    assert cp_upper(k, n, a) == pytest.approx(1 - cp_lower(n - k, n, a), abs=3e-12)
    c = amplification_diagnostics(positives=n, caught=[n - k], delta=a, deltas=[a])
    assert c.value == pytest.approx(c.details["theorem_24"]["miss_rate_product_upper"], abs=3e-12)


@st.composite
def audits(draw):
    j = draw(st.integers(1, 4))
    q = draw(st.integers(0, 300))
    left, caught = q, []
    for _ in range(j):
        h = draw(st.integers(0, left))
        caught.append(h)
        left -= h
    return q, caught


@given(audits(), st.floats(1e-4, 0.5))
def test_product_never_below_direct_bound(audit, delta):
    """Section 5.3: as a bound on L(g_J) the product is looser than Proposition 26."""
    q, caught = audit
    c = amplification_diagnostics(positives=q, caught=caught, delta=delta)
    product = c.details["theorem_24"]["miss_rate_product_upper"]
    assert product >= c.value * (1 - 1e-10)


@given(audits(), st.floats(1e-4, 0.5))
def test_more_catches_in_a_round_never_weakens_it(audit, delta):
    q, caught = audit
    j = len(caught) - 1
    residual_last = q - sum(caught[:-1])
    if caught[j] == residual_last:
        return
    bumped = [*caught[:-1], caught[j] + 1]
    a = incremental_coverage_certificate(positives=q, caught=caught, delta=delta)
    b = incremental_coverage_certificate(positives=q, caught=bumped, delta=delta)
    assert b.value[j] >= a.value[j]
    assert b.details["miss_rate_product_upper"] <= a.details["miss_rate_product_upper"]


@given(st.integers(1, 300), st.integers(0, 300), st.floats(1e-4, 0.5))
def test_direct_bound_monotone(q, c, delta):
    c = min(c, q - 1)
    lo = direct_miss_rate_certificate(positives=q, missed=c, delta=delta).value
    hi = direct_miss_rate_certificate(positives=q, missed=c + 1, delta=delta).value
    bigger = direct_miss_rate_certificate(positives=q + 1, missed=c, delta=delta).value
    looser = direct_miss_rate_certificate(positives=q, missed=c, delta=delta / 2).value
    assert lo <= hi and bigger <= lo and looser >= lo


def test_recompute_round_trip():
    for cert in (
        amplification_diagnostics(positives=80, caught=[40, 20], delta=0.1, deltas=[0.06, 0.04]),
        incremental_coverage_certificate(positives=80, caught=[40, 20], delta=0.1),
        direct_miss_rate_certificate(positives=80, missed=20, delta=0.1),
    ):
        assert recompute(Certificate.from_json(cert.to_json())) == cert


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"positives": 10, "caught": [6, 5], "delta": 0.05}, r"caught\[1\]=5 exceeds"),
        ({"positives": 10, "caught": [], "delta": 0.05}, "at least one"),
        ({"positives": -1, "caught": [0], "delta": 0.05}, "positives"),
        ({"positives": 10, "caught": [1.5], "delta": 0.05}, r"caught\[0\]"),
        ({"positives": 10, "caught": 3, "delta": 0.05}, "caught must be a sequence"),
        ({"positives": 10, "caught": [1], "delta": 1.0}, "delta"),
        ({"positives": 10, "caught": [1, 1], "delta": 0.05, "deltas": [0.03, 0.03]}, "sum to"),
        ({"positives": 10, "caught": [1, 1], "delta": 0.05, "deltas": [0.05]}, "J=2"),
        ({"positives": 10, "caught": [1, 1], "delta": 0.05, "deltas": [0.05, 0.0]},
         r"deltas\[1\]"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        amplification_diagnostics(**kwargs)
    with pytest.raises(ValueError, match=match):
        incremental_coverage_certificate(**kwargs)


def test_deltas_sum_tolerates_rounding_only():
    # 5 × 0.01 rounds to 0.05000000000000001 in floating point and must be accepted.
    c = incremental_coverage_certificate(positives=10, caught=[1] * 5, delta=0.05,
                                         deltas=[0.01] * 5)
    assert len(c.value) == 5


def test_direct_bad_input():
    with pytest.raises(ValueError, match="missed=5 exceeds positives=4"):
        direct_miss_rate_certificate(positives=4, missed=5, delta=0.05)
    with pytest.raises(ValueError, match="delta"):
        direct_miss_rate_certificate(positives=4, missed=0, delta=0)


def test_amplification_counts_credits_first_catch():
    hits = np.array([
        [1, 0, 1],   # caught by h1 first
        [0, 1, 1],   # h2
        [0, 0, 0],   # missed by the union
        [0, 0, 1],   # h3
        [1, 1, 1],   # h1
    ])
    q, h = amplification_counts(hits)
    assert (q, h) == (5, [2, 1, 1])
    c = amplification_diagnostics(positives=q, caught=h, delta=0.05)
    assert c.details["missed"] == 1
    assert c.details["theorem_24"]["residual"] == [5, 3, 2]


def test_amplification_counts_bad_input():
    with pytest.raises(ValueError, match=r"shape \[Q, J\]"):
        amplification_counts([1, 0, 1])
    with pytest.raises(ValueError, match="0/1"):
        amplification_counts([[2, 0]])
    with pytest.raises(ValueError, match="at least one column"):
        amplification_counts(np.zeros((3, 0)))


def test_the_per_round_shares_are_keyword_only() -> None:
    """``deltas`` after ``delta``, positional, as the stratified certificates no longer take them."""
    for certificate in (incremental_coverage_certificate, amplification_diagnostics):
        with pytest.raises(TypeError):
            certificate(80, [40, 20], 0.1, [0.06, 0.04])   # type: ignore[misc]
