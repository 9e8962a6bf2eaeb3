"""Recall certificates: Remark 9, Theorem 10 (two-pool), Corollary 11 (finite two-pool)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.certify.bounds import cp_lower, cp_upper
from rankcut.certify.recall import (
    recall_from_missed_mass,
    two_pool_recall_bound,
    two_pool_recall_certificate,
    two_pool_recall_finite_certificate,
)
from rankcut.certify.result import Certificate, format_bound, recompute

# ------------------------------------------------------------------------ Corollary 11 (§8)


def test_section_8_two_pool_recall():
    c = two_pool_recall_finite_certificate(k0=0, n0=300, pool0=70_000, k1=100, n1=500, pool1=30_000,
                                           delta=0.05)
    assert (c.details["M0_upper"], c.details["M1_lower"]) == (853, 4983)
    assert c.value == pytest.approx(4983 / (4983 + 853), rel=1e-15)
    assert math.floor(c.value * 10_000) / 10_000 == 0.8538  # "Recall(g) ≥ 0.8538"
    assert format_bound(c.value, "lower") == "0.853"  # "recall at least 85.3%"
    assert c.details["caught_mass_lower"] == 0.04983
    assert c.details["missed_mass_upper"] == 0.00853
    assert c.allocation == {"excluded audit": 0.025, "included audit": 0.025}
    assert (c.quantity, c.side, c.theorem) == ("recall", "lower", "Corollary 11")
    # the N = N0 + N1 items of §2.2 (query-document pairs in an audit), not a corpus of documents
    assert c.statement.endswith("at most 853 relevant items are missed and at least 4983 are caught "
                                "(of 100000 items).")


def test_finite_two_pool_reads_one_when_nothing_can_be_missed():
    # an empty excluded pool (MU = 0) misses nothing: recall 1 whatever the included sample shows
    # (ML = 0 read as 0 gave "recall ≥ 0: NOT met" for a cut that keeps every item), as the
    # binomial version reads p0 = 0
    c = two_pool_recall_finite_certificate(k0=0, n0=0, pool0=0, k1=0, n1=50, pool1=200, delta=0.05)
    assert (c.details["M0_upper"], c.details["M1_lower"], c.value) == (0, 0, 1.0)
    assert two_pool_recall_finite_certificate(k0=0, n0=0, pool0=0, k1=5, n1=50, pool1=200,
                                              delta=0.05).value == 1.0
    assert two_pool_recall_certificate(0, 0, 0, 50, p0=0.0, delta=0.05).value == 1.0
    # an excluded pool sampled nearly through with nothing found: MU = 0, so recall ≥ 1 on its event
    c = two_pool_recall_finite_certificate(k0=0, n0=98, pool0=100, k1=0, n1=1, pool1=50, delta=0.05)
    assert (c.details["M0_upper"], c.value) == (0, 1.0)
    assert two_pool_recall_finite_certificate(k0=0, n0=90, pool0=100, k1=0, n1=1, pool1=50,
                                              delta=0.05).value == 0.0   # MU > 0 = ML


def test_finite_two_pool_custom_split():
    c = two_pool_recall_finite_certificate(k0=0, n0=300, pool0=70_000, k1=100, n1=500, pool1=30_000,
                                           delta=0.05, deltas=[0.04, 0.01])
    assert c.allocation == {"excluded audit": 0.04, "included audit": 0.01}
    even = two_pool_recall_finite_certificate(k0=0, n0=300, pool0=70_000, k1=100, n1=500, pool1=30_000,
                                              delta=0.05)
    assert c.details["M0_upper"] < even.details["M0_upper"]
    assert c.details["M1_lower"] < even.details["M1_lower"]


# -------------------------------------------------------------------------- Theorem 10


def test_two_pool_population_formula():
    c = two_pool_recall_certificate(0, 300, 100, 500, p0=0.70, delta=0.05)
    upper, lower = cp_upper(0, 300, 0.025), cp_lower(100, 500, 0.025)
    assert c.value == pytest.approx(0.3 * lower / (0.3 * lower + 0.7 * upper), rel=1e-12)
    assert c.details["p1"] == pytest.approx(0.3)
    assert c.allocation == {"excluded audit": 0.025, "included audit": 0.025}


def test_two_pool_with_bounded_pool_masses_charges_their_error():
    c = two_pool_recall_certificate(0, 300, 100, 500, p0=0.72, delta=0.05, p1=0.28, mass_delta=0.01)
    assert c.allocation == {"excluded audit": 0.02, "included audit": 0.02, "pool masses": 0.01}
    upper, lower = cp_upper(0, 300, 0.02), cp_lower(100, 500, 0.02)
    assert c.value == pytest.approx(0.28 * lower / (0.28 * lower + 0.72 * upper), rel=1e-12)
    with pytest.raises(ValueError, match="left for the two audits"):
        two_pool_recall_certificate(0, 300, 100, 500, p0=0.72, delta=0.05, mass_delta=0.01,
                                    deltas=[0.025, 0.025])


def test_two_pool_degenerate_pools():
    assert two_pool_recall_certificate(0, 0, 4, 10, p0=0.0, delta=0.05).value == 1.0  # p0 = 0: Remark 5
    assert two_pool_recall_certificate(0, 10, 0, 0, p0=1.0, delta=0.05).value == 0.0  # p1 = 0: Remark 5
    assert two_pool_recall_certificate(0, 10, 0, 0, p0=0.5, delta=0.05).value == 0.0  # no included audit
    with pytest.raises(ValueError, match="p0 = 0"):
        two_pool_recall_certificate(0, 10, 4, 10, p0=0.0, delta=0.05)


@settings(deadline=None, max_examples=60)
@given(k0=st.integers(0, 20), k1=st.integers(0, 60), p0=st.floats(0.01, 0.99))
def test_two_pool_bound_rises_with_k1_and_falls_with_k0(k0, k1, p0):
    base = two_pool_recall_certificate(k0, 100, k1, 100, p0=p0, delta=0.05).value
    assert two_pool_recall_certificate(k0, 100, k1 + 1, 100, p0=p0, delta=0.05).value >= base
    assert two_pool_recall_certificate(k0 + 1, 100, k1, 100, p0=p0, delta=0.05).value <= base
    assert 0.0 <= base <= 1.0


# ----------------------------------------------------------------------------- Remark 9


def test_remark_9():
    c = recall_from_missed_mass(0.00853, 0.05, missed_delta=0.025, relevant_delta=0.025)
    assert c.value == pytest.approx(1 - 0.00853 / 0.05, rel=1e-15)
    assert c.delta == 0.05 and c.allocation == {"missed mass": 0.025, "relevant mass": 0.025}
    # known denominator: no error charged for it
    assert recall_from_missed_mass(1.0, 4.0, missed_delta=0.05).delta == 0.05
    # u ≥ a only says recall ≥ 0
    weak = recall_from_missed_mass(0.02, 0.01, missed_delta=0.05)
    assert weak.value == 0.0 and weak.details["one_minus_ratio"] == pytest.approx(-1.0)


# ---------------------------------------------------------------------------- recompute, JSON


@pytest.mark.parametrize(
    "cert",
    [
        lambda: recall_from_missed_mass(0.004, 0.05, missed_delta=0.025, relevant_delta=0.025),
        lambda: two_pool_recall_certificate(1, 300, 90, 400, p0=0.6, delta=0.05, deltas=[0.03, 0.02]),
        lambda: two_pool_recall_certificate(1, 300, 90, 400, p0=0.6, delta=0.05, p1=0.35, mass_delta=0.01),
        lambda: two_pool_recall_finite_certificate(k0=0, n0=300, pool0=70_000, k1=100, n1=500, pool1=30_000,
                                                   delta=0.05),
    ],
)
def test_recomputes_from_json(cert):
    c = cert()
    assert recompute(Certificate.from_json(c.to_json())).to_dict() == c.to_dict()


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: recall_from_missed_mass(0.1, 0.0, missed_delta=0.05), "relevant_lower must be > 0"),
        (lambda: recall_from_missed_mass(-0.1, 0.2, missed_delta=0.05), "missed_upper must be >= 0"),
        (lambda: recall_from_missed_mass(0.1, 0.2, missed_delta=0.0), "missed_delta must lie"),
        (lambda: recall_from_missed_mass(0.1, 0.2, missed_delta=0.6, relevant_delta=0.5), "< 1"),
        (lambda: two_pool_recall_certificate(5, 4, 1, 4, p0=0.5), "k0=5 exceeds n0=4"),
        (lambda: two_pool_recall_certificate(1, 4, 1, 4, p0=1.5), r"p0 must lie in \[0, 1\]"),
        (lambda: two_pool_recall_certificate(1, 4, 1, 4, p0=0.5, deltas=[0.05]), "pair"),
        (lambda: two_pool_recall_certificate(1, 4, 1, 4, p0=0.5, mass_delta=0.05), "mass_delta"),
        (lambda: two_pool_recall_certificate(1, 4, 1, 4.0, p0=0.5), "n1 must be one non-negative"),
        (lambda: two_pool_recall_finite_certificate(k0=0, n0=31, pool0=30, k1=1, n1=4,
                                                    pool1=40), "n0=31 exceeds pool0=30"),
        (lambda: two_pool_recall_finite_certificate(k0=0, n0=3, pool0=30, k1=1, n1=41,
                                                    pool1=40), "n1=41 exceeds pool1=40"),
        (lambda: two_pool_recall_finite_certificate(k0=0, n0=3, pool0=30, k1=1, n1=4, pool1=40,
                                                    deltas=[0.03, 0.03]), "sum"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_known_masses_summing_past_one_are_refused() -> None:
    # found in review: p0 = 0.7 with p1 = 0.9 gave recall >= 0.945 instead of 0.853
    with pytest.raises(ValueError, match="p0 \\+ p1 = 1.6 > 1"):
        two_pool_recall_certificate(0, 300, 100, 500, p0=0.7, delta=0.05, p1=0.9)
    # as estimated bounds with their own error share they are allowed
    c = two_pool_recall_certificate(0, 300, 100, 500, p0=0.7, delta=0.05, p1=0.9, mass_delta=0.01)
    assert c.allocation["pool masses"] == 0.01


def test_the_finite_two_pool_certificate_takes_its_pools_by_name() -> None:
    """It took ``(k0, n0, pool0, k1, n1, pool1)`` and the bound ``(k0, n0, k1, n1, pool0=, pool1=)``."""
    with pytest.raises(TypeError):
        two_pool_recall_finite_certificate(0, 300, 70_000, 100, 500, 30_000)   # type: ignore[misc]
    assert two_pool_recall_finite_certificate(0, 300, 100, 500, pool0=70_000, pool1=30_000).value == \
        two_pool_recall_bound(0, 300, 100, 500, method="finite", pool0=70_000, pool1=30_000).value


def test_the_two_pool_certificate_takes_delta_fifth_and_its_masses_by_name() -> None:
    """Its fifth argument was ``p0`` where the finite certificate's and the bound's is ``delta``:
    a ``delta`` given fifth was read as ``p0 = 0.05`` and said recall ≥ 0.996."""
    with pytest.raises(TypeError):
        two_pool_recall_certificate(0, 300, 100, 500, 0.05)   # type: ignore[call-arg]
    with pytest.raises(TypeError):
        two_pool_recall_certificate(0, 300, 100, 500, 0.3, 0.05)   # type: ignore[misc]
    named = two_pool_recall_certificate(0, 300, 100, 500, 0.05, p0=0.3)
    assert named.inputs["p0"] == 0.3 and named.delta == 0.05 and named.value < 0.99
    assert named.value == two_pool_recall_bound(0, 300, 100, 500, 0.05, method="binomial", p0=0.3).value


def test_a_recall_of_one_with_nothing_relevant_says_it_is_read_so() -> None:
    """A census of both pools with nothing relevant said "recall is at least 1" (recall is 0/0
    there; the paper reads it 0): the statement names the convention (the statistician's review)."""
    from rankcut.certify.excluded import full_review_recall_certificate

    census = two_pool_recall_finite_certificate(k0=0, n0=100, pool0=100, k1=0, n1=50, pool1=50)
    assert census.value == 1.0 and "also if nothing is relevant at all (0/0)" in census.statement
    found = two_pool_recall_finite_certificate(k0=0, n0=100, pool0=100, k1=3, n1=50, pool1=50)
    assert found.value == 1.0 and "0/0" not in found.statement
    full = full_review_recall_certificate(0, 100, 100, 0)
    assert full.value == 1.0 and "also if nothing is relevant at all (0/0)" in full.statement
    assert "0/0" not in full_review_recall_certificate(0, 100, 100, 3).statement
    empty = two_pool_recall_certificate(0, 0, 0, 10, p0=0.0)   # p0 = 0: an empty excluded pool
    assert empty.value == 1.0 and "also if nothing is relevant at all (0/0)" in empty.statement
    assert "(0/0)" not in two_pool_recall_certificate(0, 0, 4, 10, p0=0.0).statement
