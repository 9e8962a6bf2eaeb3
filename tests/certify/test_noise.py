"""Section 9 label noise: the sensitivity-floor certificate and the designs it does not cover."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_values import ref_upper

from rankcut.certify.bounds import cp_upper
from rankcut.certify.noise import (
    NOISY_LABEL_DESIGNS,
    noisy_excluded_pool_certificate,
    noisy_label_certificate,
)
from rankcut.certify.result import Certificate, recompute


def test_reference_value():
    c = noisy_excluded_pool_certificate(sizes=300, counts=2, delta=0.025,
                                        sensitivity_floor=0.8, p0=0.7)
    assert c.value == pytest.approx(0.7 * ref_upper(2, 300, 0.025) / 0.8, rel=1e-10)
    assert c.quantity == "r" and c.side == "upper"
    eta = noisy_excluded_pool_certificate(sizes=300, counts=2, delta=0.025,
                                          sensitivity_floor=0.8)
    assert eta.quantity == "eta"
    assert eta.value == pytest.approx(ref_upper(2, 300, 0.025) / 0.8, rel=1e-10)


def test_perfect_sensitivity_is_the_noiseless_bound():
    c = noisy_excluded_pool_certificate(sizes=300, counts=0, delta=0.025,
                                        sensitivity_floor=1.0, p0=0.7)
    assert c.value == pytest.approx(0.7 * (1 - 0.025 ** (1 / 300)), rel=1e-12)


def test_capped_at_one():
    # U/s_min > 1 is capped: r(g) <= p0(g) min{1, U/s_min}
    c = noisy_excluded_pool_certificate(sizes=10, counts=5, delta=0.05,
                                        sensitivity_floor=0.1, p0=0.3)
    assert c.value == pytest.approx(0.3)
    assert noisy_excluded_pool_certificate(sizes=0, counts=0, delta=0.05,
                                           sensitivity_floor=0.9).value == 1.0


@given(st.integers(1, 500), st.integers(0, 500), st.floats(0.05, 1.0), st.floats(1e-4, 0.5))
def test_monotone_in_floor_and_count(n, k, s, delta):
    k = min(k, n - 1)
    base = noisy_excluded_pool_certificate(sizes=n, counts=k, delta=delta,
                                           sensitivity_floor=s).value
    lower_floor = noisy_excluded_pool_certificate(sizes=n, counts=k, delta=delta,
                                                  sensitivity_floor=s / 2).value
    more = noisy_excluded_pool_certificate(sizes=n, counts=k + 1, delta=delta,
                                           sensitivity_floor=s).value
    assert lower_floor >= base and more >= base
    assert base == pytest.approx(min(1.0, ref_upper(k, n, delta) / s), rel=1e-9)


def test_dispatch_supported_design():
    kw = {"sizes": 200, "counts": 1, "delta": 0.05, "sensitivity_floor": 0.9}
    assert noisy_label_certificate("excluded-pool", **kw) == noisy_excluded_pool_certificate(**kw)


@pytest.mark.parametrize(
    ("design", "reason"),
    [
        ("two-pool", "false-positive audit labels can inflate"),
        ("incremental-coverage", "conditional on true relevance Y = 1"),
        ("direct-miss-rate", "conditional on true relevance Y = 1"),
        ("stress-test", "conditional on true relevance Y = 1"),
        ("hypergeometric", "specific to the i.i.d. excluded-pool"),
        ("whole-population", "specific to the i.i.d. excluded-pool"),
        ("shared-reference", "specific to the i.i.d. excluded-pool"),
        ("stratified", "specific to the i.i.d. excluded-pool"),
    ],
)
def test_other_designs_refused_with_the_papers_reason(design, reason):
    assert design in NOISY_LABEL_DESIGNS
    with pytest.raises(ValueError, match=reason):
        noisy_label_certificate(design, sizes=200, counts=1, delta=0.05,
                                sensitivity_floor=0.9)


def test_unknown_design():
    with pytest.raises(ValueError, match="unknown design 'iid'.*excluded-pool"):
        noisy_label_certificate("iid")


def test_recompute_round_trip():
    c = noisy_excluded_pool_certificate(sizes=120, counts=3, delta=0.05,
                                        sensitivity_floor=0.85, p0=0.25)
    assert recompute(Certificate.from_json(c.to_json())) == c


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sensitivity_floor": 0.0}, "sensitivity_floor"),
        ({"sensitivity_floor": 1.1}, "sensitivity_floor"),
        ({"sensitivity_floor": "0.9"}, "sensitivity_floor"),
        ({"counts": 11}, "counts=11 noisy relevant labels exceed sizes=10 draws"),
        ({"sizes": -1}, "sizes"),
        ({"delta": 0.0}, "delta"),
        ({"p0": -0.1}, "p0"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"sizes": 10, "counts": 0, "delta": 0.05, "sensitivity_floor": 0.9,
            **kwargs}
    with pytest.raises(ValueError, match=match):
        noisy_excluded_pool_certificate(**args)


def test_its_arguments_are_named_as_the_excluded_pool_certificate_names_them() -> None:
    """``(sampled, noisy_relevant, delta, sensitivity_floor, excluded_mass)`` took the draws before
    the count, the other way round from every other certificate, and three numbers in (0, 1] in a
    row, which a positional swap would not reveal: keyword-only now, under the shared names."""
    with pytest.raises(TypeError):
        noisy_excluded_pool_certificate(300, 0, 0.025, 0.9)   # type: ignore[misc]
    with pytest.raises(TypeError):
        noisy_excluded_pool_certificate(sampled=300, noisy_relevant=0, delta=0.025,   # type: ignore[call-arg]
                                        sensitivity_floor=0.9)
    c = noisy_excluded_pool_certificate(counts=0, sizes=300, delta=0.025, sensitivity_floor=1.0, p0=0.7)
    assert c.value == pytest.approx(0.7 * cp_upper(0, 300, 0.025))
