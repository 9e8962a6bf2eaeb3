"""Excluded-pool certificates: Theorem 7 (with Eq. 3 and the Hoeffding p0 bound) and Theorem 8."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.excluded import (
    excluded_pool_certificate,
    excluded_pool_finite_certificate,
    excluded_pool_hoeffding_certificate,
    full_review_recall_certificate,
    p0_upper_hoeffding,
)
from rankcut.certify.result import Certificate, format_bound, recompute, round_conservative

# ------------------------------------------------------------------ Theorem 7: paper §8 values


def test_section_8_binomial_missed_mass():
    c = excluded_pool_certificate(0, 300, 0.025, p0=0.70)
    assert (c.quantity, c.side, c.theorem) == ("r", "upper", "Theorem 7")
    assert round(c.details["eta_upper"], 7) == 0.0122210  # U_300(0, 0.025)
    assert round_conservative(c.value, "upper", 3) == 0.00856
    assert c.value * 100_000 == pytest.approx(855.47, abs=0.005)  # "approximately 855.47"
    assert c.allocation == {"g": 0.025} and c.delta == 0.025


def test_section_8_prefix_family():
    c = excluded_pool_certificate([0, 0, 0], [300] * 3, 0.05, p0=[0.85, 0.70, 0.62])
    assert round(c.details["eta_upper"][0], 6) == 0.013555  # U_300(0, 0.05/3)
    assert format_bound(c.value, "upper") == "(0.0116, 0.00949, 0.00841)"
    assert sum(c.allocation.values()) == pytest.approx(0.05, rel=1e-15)


def test_a_union_bound_is_said_only_of_a_family():
    """One cut spends its whole δ on itself: its statement said "union bound over the family"
    (the RAG engineer walk, certify excluded-pool without --finite)."""
    one, family = (excluded_pool_certificate(0, 300, 0.025, p0=0.70),
                   excluded_pool_certificate([0, 0], [300] * 2, 0.05, p0=[0.85, 0.70]))
    assert "union bound" not in one.statement and "union bound over the family" in family.statement
    assert "union bound" not in p0_upper_hoeffding(700, 1000, 0.025).statement
    assert "union bound over the family" in p0_upper_hoeffding([700, 450], 1000, 0.025).statement


def test_a_delta_meant_as_the_confidence_is_warned_of():
    """delta=0.95 meant as 95% confidence certified at 5% without a word from Python (the command
    line refuses it): warned of, the certificate still computed (a call may mean it)."""
    with pytest.warns(UserWarning, match=r"delta=0.95 is the chance the certificate is wrong \(1 − "
                                         r"confidence\): it claims only 5% confidence; for 95% confidence "
                                         r"pass delta=0.05"):
        cert = excluded_pool_finite_certificate(0, 300, 70000, 0.95)
    assert cert.delta == 0.95
    with pytest.warns(UserWarning, match=r"it claims only 0\.1% confidence;"):     # not "0%"
        excluded_pool_finite_certificate(0, 300, 70000, 0.999)


# ---------------------------------------------------------------- Theorem 7: the construction


def test_each_member_gets_its_share_of_delta():
    fam = excluded_pool_certificate([0, 3], [300, 120], 0.05, p0=[0.5, 0.2])
    for i, (k, n, p) in enumerate([(0, 300, 0.5), (3, 120, 0.2)]):
        single = excluded_pool_certificate(k, n, 0.025, p0=p)
        assert fam.value[i] == single.value == p * cp_upper(k, n, 0.025)
    custom = excluded_pool_certificate([0, 3], [300, 120], 0.05, deltas=[0.04, 0.01])
    assert custom.quantity == "eta"
    assert custom.value == (cp_upper(0, 300, 0.04), cp_upper(3, 120, 0.01))
    assert custom.allocation == {"g1": 0.04, "g2": 0.01}


def test_zero_count_closed_form_and_log_bound_in_details():
    c = excluded_pool_certificate([0, 2, 0], [200, 200, 0], 0.05, p0=[0.3, 0.3, 0.3])
    alpha = 0.05 / 3
    assert c.details["zero_count_exact"][0] == pytest.approx(1 - alpha ** (1 / 200), rel=1e-12)
    assert c.details["zero_count_log_bound"][0] == pytest.approx(math.log(3 / 0.05) / 200, rel=1e-12)
    assert c.details["r_zero_count_log_bound"][0] == pytest.approx(0.3 * math.log(3 / 0.05) / 200)
    # Eq. (3) applies only to K0 = 0 with n0 >= 1
    assert c.details["zero_count_exact"][1:] == (None, None)
    assert c.value[2] == 0.3  # an empty audit: U_0(0, ·) = 1, so r ≤ p0


@settings(deadline=None, max_examples=80)
@given(n=st.one_of(st.just(1), st.integers(1, 5000)), members=st.integers(1, 50), delta=st.floats(1e-6, 0.5),
       p0=st.floats(1e-6, 1.0))
def test_equation_3_chain(n, members, delta, p0):
    """r ≤ p0·U_n(0, δ/|G|) = p0(1 − (δ/|G|)^{1/n}) ≤ p0·log(|G|/δ)/n."""
    c = excluded_pool_certificate([0] * members, [n] * members, delta, p0=[p0] * members)
    closed = p0 * (1 - (delta / members) ** (1 / n))
    assert c.value[0] == pytest.approx(closed, rel=1e-9, abs=1e-300)
    log_bound = p0 * math.log(members / delta) / n
    assert c.value[0] <= log_bound * (1 + 1e-12)
    assert c.details["r_zero_count_log_bound"][0] == pytest.approx(log_bound, rel=1e-12)


def test_empty_excluded_pool_is_trivially_zero():
    c = excluded_pool_certificate([0, 1], [0, 10], 0.05, p0=[0.0, 0.4])
    assert c.value[0] == 0.0  # Remark 5
    with pytest.raises(ValueError, match=r"p0\[0\] = 0 .* sizes\[0\]=5"):
        excluded_pool_certificate([0], [5], 0.05, p0=[0.0])


def test_scalar_call_gives_a_number_and_a_family_gives_a_tuple():
    assert isinstance(excluded_pool_certificate(1, 50, 0.05).value, float)
    assert isinstance(excluded_pool_certificate([1], [50], 0.05).value, tuple)
    assert isinstance(excluded_pool_finite_certificate(1, 50, 500, 0.05).value, int)


# --------------------------------------------------------------------------------- Hoeffding


def test_hoeffding_p0_bound():
    c = p0_upper_hoeffding(700, 1000, 0.025)
    assert c.value == pytest.approx(0.7 + math.sqrt(math.log(1 / 0.025) / 2000), rel=1e-12)
    # the paper's display at delta/2 for a family of |G| = 3: slack sqrt(log(2|G|/δ)/(2m))
    fam = p0_upper_hoeffding([700, 450, 999], 1000, 0.05 / 2)
    slack = math.sqrt(math.log(2 * 3 / 0.05) / (2 * 1000))
    assert fam.value == pytest.approx((0.7 + slack, 0.45 + slack, 1.0), rel=1e-12)  # capped at 1
    assert p0_upper_hoeffding(0, 0, 0.05).value == 1.0  # no unlabelled data


def test_combined_certificate_spends_half_on_each_part():
    c = excluded_pool_hoeffding_certificate([0, 2], [300, 300], [6000, 2000], 10_000, 0.05)
    slack = math.sqrt(math.log(2 * 2 / 0.05) / (2 * 10_000))
    for i, (k, p_hat) in enumerate([(0, 0.6), (2, 0.2)]):
        assert c.value[i] == pytest.approx((p_hat + slack) * cp_upper(k, 300, 0.05 / 4), rel=1e-12)
    assert sum(c.allocation.values()) == pytest.approx(0.05, rel=1e-15)
    assert c.allocation["p0 (Hoeffding, all members)"] == 0.025
    with pytest.raises(ValueError, match="sum"):
        excluded_pool_hoeffding_certificate([0, 2], [300, 300], [6000, 2000], 10_000, 0.05,
                                            deltas=[0.02, 0.01])


# ------------------------------------------------------------------------------ Theorem 8


def test_section_8_cli_example_finite():
    """--pool-size 70000 --corpus-size 100000 --sample-size 300 --positives 0 --delta 0.025."""
    c = excluded_pool_finite_certificate(0, 300, 70_000, 0.025, corpus_size=100_000)
    assert (c.quantity, c.value, c.theorem) == ("M0", 853, "Theorem 8")
    assert c.details["r_upper"] == 0.00853


def test_section_8_table_and_own_pool_sizes():
    c = excluded_pool_finite_certificate([0, 1, 2], [300] * 3, [70_000] * 3, 0.075,
                                         deltas=[0.025] * 3, corpus_size=100_000)
    assert c.value == (853, 1287, 1668)
    assert c.details["r_upper"] == (0.00853, 0.01287, 0.01668)
    mixed = excluded_pool_finite_certificate([1, 1, 0], [50, 50, 0], [400, 9000, 0], 0.06)
    assert mixed.value == (hypergeom_upper(1, 0.02, population=400, draws=50),
                           hypergeom_upper(1, 0.02, population=9000, draws=50), 0)


def test_full_review_recall():
    c = full_review_recall_certificate(0, 300, 70_000, 4983, 0.025)
    assert c.value == pytest.approx(4983 / (4983 + 853), rel=1e-15)
    assert (c.quantity, c.side) == ("recall", "lower")
    both_zero = full_review_recall_certificate([0, 0], [0, 10], [0, 10], [0, 0], 0.05)
    assert both_zero.value == (1.0, 1.0)  # MU = 0: nothing is missed, read as 1 (Corollary 11 too)
    assert both_zero.details["M0_upper"] == (0, 0)
    assert full_review_recall_certificate(0, 5, 30, 0, 0.05).value == 0.0   # MU > 0 = M1


# ---------------------------------------------------------------------------- recompute, JSON


@pytest.mark.parametrize(
    "cert",
    [
        lambda: excluded_pool_certificate([0, 2], [300, 80], 0.05, p0=[0.7, 0.1], names=["a", "b"]),
        lambda: excluded_pool_certificate(3, 80, 0.1),
        lambda: p0_upper_hoeffding([5, 9], 20, 0.1),
        lambda: excluded_pool_hoeffding_certificate(0, 300, 700, 1000, 0.05),
        lambda: excluded_pool_finite_certificate(0, 300, 70_000, 0.025, corpus_size=100_000),
        lambda: full_review_recall_certificate([0, 1], [30, 30], [100, 200], [12, 0], 0.05,
                                               deltas=[0.03, 0.02]),
    ],
)
def test_recomputes_from_json(cert):
    c = cert()
    again = recompute(Certificate.from_json(c.to_json()))
    assert again.to_dict() == c.to_dict()


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: excluded_pool_certificate(5, 4, 0.05), r"counts\[0\]=5 exceeds sizes\[0\]=4"),
        (lambda: excluded_pool_certificate(-1, 4, 0.05), "counts must be >= 0"),
        (lambda: excluded_pool_certificate(1.5, 4, 0.05), "counts must hold integers"),
        (lambda: excluded_pool_certificate([1, 2], [4], 0.05), "sizes has 1 entries"),
        (lambda: excluded_pool_certificate(1, 4, 1.0), r"delta must lie in \(0, 1\)"),
        (lambda: excluded_pool_certificate(1, 4, "0.05"), "delta must be a number"),
        (lambda: excluded_pool_certificate(1, 4, 0.05, p0=1.2), r"p0 must lie in \[0, 1\]"),
        (lambda: excluded_pool_certificate([1, 1], [4, 4], 0.05, deltas=[0.03, 0.03]), "sum"),
        (lambda: excluded_pool_certificate([1, 1], [4, 4], 0.05, deltas=[0.0, 0.01]),
         r"deltas must lie in \(0, 1\)"),
        (lambda: excluded_pool_certificate([1, 1], [4, 4], 0.05, names=["a", "a"]), "distinct"),
        (lambda: excluded_pool_certificate([[1]], [[4]], 0.05), "1-D"),
        (lambda: p0_upper_hoeffding(11, 10, 0.05), r"excluded\[0\]=11 exceeds unlabelled_size"),
        (lambda: p0_upper_hoeffding(1, [10], 0.05), "unlabelled_size must be one"),
        (lambda: excluded_pool_hoeffding_certificate([0, 0], [5, 5], [1], 10, 0.05),
         "excluded has 1 entries"),
        (lambda: excluded_pool_finite_certificate(0, 301, 300, 0.05), r"sizes\[0\]=301 exceeds"),
        (lambda: excluded_pool_finite_certificate(0, 30, 300, 0.05, corpus_size=200), "corpus_size"),
        (lambda: full_review_recall_certificate(0, 3, 30, [1, 2], 0.05), "included_relevant has 2"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # numpy scalars from a caller's arrays are shown as plain numbers, not np.float64(1.5)
        (lambda: excluded_pool_certificate(1, 4, np.float64(1.5)), r"delta must lie in \(0, 1\), got 1.5$"),
        (lambda: excluded_pool_certificate(1, 4, 0.05, p0=np.float64(1.2)), r"got 1.2$"),
        (lambda: excluded_pool_certificate(1, 4, 0.05, p0=np.array([-0.5])), r"got -0.5$"),
        (lambda: p0_upper_hoeffding(1, np.float64(10.5), 0.05), r"got 10.5$"),
        (lambda: excluded_pool_certificate([1, 1], [4, 4], 0.05, names=np.array(["a"])),
         r"got 1 names: \['a'\]$"),
        (lambda: excluded_pool_certificate(np.array([np.nan]), 4, 0.05), r"got counts\[0\]=nan$"),
    ],
)
def test_bad_input_shows_plain_numbers(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "np." not in str(info.value)


def test_tiny_delta_is_never_shown_as_confidence_one():
    for cert in (excluded_pool_certificate(0, 300, 1e-300),
                 excluded_pool_finite_certificate(0, 300, 1_000, 1e-300),
                 full_review_recall_certificate(0, 300, 1_000, 50, 1e-300)):
        assert "confidence 1 − 1e-300" in cert.statement
