"""Section 9 stratified excluded-pool audits (binomial and hypergeometric per stratum)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_values import ref_upper
from scipy import stats

from rankcut.certify.result import Certificate, recompute
from rankcut.certify.stratified import (
    stratified_binomial_certificate,
    stratified_hypergeometric_certificate,
)


def ref_mu(k: int, a: float, big_n: int, n: int) -> int:
    """MU(k, α; N, n) by scanning m = 0..N with scipy's hypergeometric cdf."""
    ms = np.arange(big_n + 1)
    ok = stats.hypergeom.cdf(k, big_n, ms, n) >= a
    return int(ms[ok].max())


def test_binomial_reference_values():
    w, n, k = [0.5, 0.3, 0.2], [100, 50, 20], [0, 1, 0]
    c = stratified_binomial_certificate(weights=w, sizes=n, counts=k, delta=0.06)
    expected = sum(ws * ref_upper(ks, ns, 0.02) for ws, ns, ks in zip(w, n, k, strict=True))
    assert c.value == pytest.approx(expected, rel=1e-10)
    assert c.quantity == "eta"
    r = stratified_binomial_certificate(weights=w, sizes=n, counts=k, delta=0.06, p0=0.7)
    assert r.quantity == "r" and r.value == pytest.approx(0.7 * expected, rel=1e-10)


def test_binomial_declared_split():
    c = stratified_binomial_certificate(weights=[0.9, 0.1], sizes=[200, 30], counts=[1, 0], delta=0.05,
                                        deltas=[0.04, 0.01])
    expected = 0.9 * ref_upper(1, 200, 0.04) + 0.1 * ref_upper(0, 30, 0.01)
    assert c.value == pytest.approx(expected, rel=1e-10)
    assert c.allocation == {"stratum_1": 0.04, "stratum_2": 0.01}


def test_one_stratum_is_theorem_7():
    c = stratified_binomial_certificate(weights=[1.0], sizes=[300], counts=[0], delta=0.025, p0=0.7)
    assert c.value == pytest.approx(0.7 * (1 - 0.025 ** (1 / 300)), rel=1e-12)


def test_unsampled_stratum_contributes_its_mass():
    c = stratified_binomial_certificate(weights=[0.75, 0.25], sizes=[100, 0], counts=[0, 0], delta=0.05)
    assert c.value == pytest.approx(0.75 * ref_upper(0, 100, 0.025) + 0.25, rel=1e-10)
    assert c.details["stratum_upper"][1] == 1.0


def test_hypergeometric_reference_values():
    sizes, n, k = [400, 150, 60], [40, 30, 10], [0, 2, 1]
    c = stratified_hypergeometric_certificate(excluded_sizes=sizes, sizes=n, counts=k, delta=0.03)
    per = [ref_mu(ks, 0.01, nn, ns) for nn, ns, ks in zip(sizes, n, k, strict=True)]
    assert c.details["stratum_upper"] == per
    assert c.value == sum(per)
    assert isinstance(c.value, int) and c.quantity == "M0"


def test_hypergeometric_single_stratum_matches_paper_example():
    """Section 8: N0 = 70,000, n0 = 300, K0 = 0, δ0 = 0.025 gives MU = 853."""
    c = stratified_hypergeometric_certificate(excluded_sizes=[70_000], sizes=[300], counts=[0], delta=0.025)
    assert c.value == 853


def test_hypergeometric_edges():
    # unsampled stratum -> its size; fully sampled -> its observed count; empty stratum -> 0
    c = stratified_hypergeometric_certificate(excluded_sizes=[50, 20, 0], sizes=[0, 20, 0], counts=[0, 3, 0],
                                              delta=0.05)
    assert c.details["stratum_upper"] == [50, 3, 0]


@st.composite
def strata(draw):
    s = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(0, 120), min_size=s, max_size=s))
    sampled = [draw(st.integers(0, nn)) for nn in sizes]
    relevant = [draw(st.integers(0, ns)) for ns in sampled]
    return sizes, sampled, relevant


@given(strata(), st.floats(1e-3, 0.5))
def test_hypergeometric_monotone_and_never_below_observed(design, delta):
    sizes, sampled, relevant = design
    c = stratified_hypergeometric_certificate(excluded_sizes=sizes, sizes=sampled, counts=relevant,
                                              delta=delta)
    assert sum(relevant) <= c.value <= sum(sizes)
    for s, (nn, ns, ks) in enumerate(zip(sizes, sampled, relevant, strict=True)):
        if ks < ns:
            bumped = list(relevant)
            bumped[s] += 1
            more = stratified_hypergeometric_certificate(excluded_sizes=sizes, sizes=sampled, counts=bumped,
                                                         delta=delta)
            assert more.value >= c.value
        assert c.details["stratum_upper"][s] <= nn


@given(strata(), st.floats(1e-3, 0.5))
def test_binomial_within_unit_interval_and_monotone(design, delta):
    _, sampled, relevant = design
    w = np.arange(1, len(sampled) + 1, dtype=float)
    w = list(w / w.sum())
    c = stratified_binomial_certificate(weights=w, sizes=sampled, counts=relevant, delta=delta)
    assert 0.0 <= c.value <= 1.0
    looser = stratified_binomial_certificate(weights=w, sizes=sampled, counts=relevant, delta=delta / 2)
    assert looser.value >= c.value - 1e-12


def test_recompute_round_trip():
    for cert in (
        stratified_binomial_certificate(weights=[0.6, 0.4], sizes=[50, 50], counts=[1, 0], delta=0.05,
                                        deltas=[0.03, 0.02], p0=0.4),
        stratified_hypergeometric_certificate(excluded_sizes=[300, 100], sizes=[30, 20], counts=[0, 1],
                                              delta=0.05),
    ):
        assert recompute(Certificate.from_json(cert.to_json())) == cert


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"weights": [0.5, 0.4]}, "sum to 1"),
        ({"weights": [1.2, -0.2]}, r"weights\[1\]"),
        ({"weights": [0.5, math.nan]}, r"weights\[1\]"),
        ({"sizes": [10]}, "one entry per stratum"),
        ({"counts": [11, 0]}, r"counts\[0\]=11 exceeds sizes\[0\]=10"),
        ({"deltas": [0.04, 0.02]}, "sum to"),
        ({"deltas": [0.05]}, "2 strata"),
        ({"p0": 1.5}, "p0"),
        ({"delta": 1.5}, "delta"),
        ({"weights": []}, "at least one stratum"),
        ({"sizes": "10"}, "sizes must be a sequence"),
    ],
)
def test_binomial_bad_input(kwargs, match):
    args = {"weights": [0.5, 0.5], "sizes": [10, 10], "counts": [0, 0], "delta": 0.05, **kwargs}
    with pytest.raises(ValueError, match=match):
        stratified_binomial_certificate(**args)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": [11, 0]}, r"sizes\[0\]=11 draws exceed the stratum's excluded_sizes\[0\]=10"),
        ({"excluded_sizes": [10, -1]}, r"excluded_sizes\[1\]"),
        ({"counts": [1, 1]}, r"counts\[1\]=1 exceeds sizes\[1\]=0"),
        ({"deltas": [0.04, 0.04]}, "sum to"),
    ],
)
def test_hypergeometric_bad_input(kwargs, match):
    args = {"excluded_sizes": [10, 5], "sizes": [5, 0], "counts": [0, 0], "delta": 0.05, **kwargs}
    with pytest.raises(ValueError, match=match):
        stratified_hypergeometric_certificate(**args)


def test_the_strata_take_the_names_of_the_unstratified_certificates() -> None:
    """``sizes`` were the pools here and the draws everywhere else: a call with the draws as
    ``sizes`` (and the pools as ``sampled``) said M0 ≤ 0. Every argument is keyword-only now, and
    the old names are refused."""
    with pytest.raises(TypeError):
        stratified_hypergeometric_certificate([300, 300], [300, 300], [0, 0], 0.05)   # type: ignore[misc]
    with pytest.raises(TypeError):
        stratified_hypergeometric_certificate(sizes=[300, 300], sampled=[30, 30],   # type: ignore[call-arg]
                                              relevant=[0, 0], delta=0.05)
    with pytest.raises(TypeError):
        stratified_binomial_certificate(weights=[1.0], sampled=[30], relevant=[0],   # type: ignore[call-arg]
                                        delta=0.05)
    c = stratified_hypergeometric_certificate(counts=[0, 0], sizes=[30, 30], excluded_sizes=[300, 300],
                                              delta=0.05)
    assert c.value > 0 and c.inputs["excluded_sizes"] == [300, 300] and c.inputs["sizes"] == [30, 30]


def test_weights_a_rounding_short_of_one_do_not_understate_eta() -> None:
    # found in review: weights summing to 1 - 5e-10 were accepted and understated the bound
    exact = stratified_binomial_certificate(weights=[0.5, 0.5], sizes=[50, 50], counts=[0, 0],
                                            delta=0.05).value
    short = stratified_binomial_certificate(weights=[0.5, 0.5 - 5e-10], sizes=[50, 50], counts=[0, 0],
                                            delta=0.05).value
    assert short >= exact
