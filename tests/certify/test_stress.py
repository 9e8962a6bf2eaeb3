"""Theorem 29 stress-test cluster certificates and the Remark 30 budget split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_values import ref_upper

from rankcut.certify.result import Certificate, recompute
from rankcut.certify.stress import (
    average_variant_certificate,
    cluster_escape_counts,
    stress_test_certificate,
    worst_cluster_certificate,
)


def test_remark_31_example():
    """Remark 31: Q = 300, budget 0.025, zero escapes gives U_300(0, 0.025) = 0.0122..."""
    c = average_variant_certificate(positives=300, escapes=0, delta=0.025)
    assert c.value == pytest.approx(1 - 0.025 ** (1 / 300), rel=1e-12)
    assert 0.0122 < c.value < 0.0123


def test_default_split_is_half_each_over_family():
    c = stress_test_certificate(positives=250, max_escapes=[7, 2], rand_escapes=[3, 0], delta=0.1)
    rho_max, rho_avg = c.value
    assert rho_max == pytest.approx((ref_upper(7, 250, 0.025), ref_upper(2, 250, 0.025)))
    assert rho_avg == pytest.approx((ref_upper(3, 250, 0.025), ref_upper(0, 250, 0.025)))
    assert c.details["delta_max"] == c.details["delta_avg"] == 0.05
    assert sum(c.allocation.values()) == pytest.approx(0.1)
    assert len(c.allocation) == 4


def test_declared_split():
    c = stress_test_certificate(positives=300, max_escapes=4, rand_escapes=1, delta=0.05,
                                delta_max=0.04, delta_avg=0.01)
    assert c.value == pytest.approx((ref_upper(4, 300, 0.04), ref_upper(1, 300, 0.01)))
    # giving one share assigns the rest of δ to the other
    one = stress_test_certificate(positives=300, max_escapes=4, rand_escapes=1, delta=0.05,
                                  delta_avg=0.01)
    assert one.value == pytest.approx(c.value)
    other = stress_test_certificate(positives=300, max_escapes=4, rand_escapes=1, delta=0.05,
                                    delta_max=0.04)
    assert other.value == pytest.approx(c.value)


def test_joint_matches_the_separate_functions():
    joint = stress_test_certificate(positives=120, max_escapes=[5, 9], rand_escapes=[2, 4], delta=0.05,
                                    delta_max=0.02, names=["bm25", "dense"])
    wmax = worst_cluster_certificate(positives=120, escapes=[5, 9], delta=0.02, names=["bm25", "dense"])
    wavg = average_variant_certificate(positives=120, escapes=[2, 4], delta=0.03, names=["bm25", "dense"])
    assert joint.value == (wmax.value, wavg.value)
    assert set(joint.allocation) == {"rho_max[bm25]", "rho_max[dense]",
                                     "rho_avg[bm25]", "rho_avg[dense]"}


def test_zero_positives_is_trivial():
    c = stress_test_certificate(positives=0, max_escapes=0, rand_escapes=0, delta=0.05)
    assert c.value == (1.0, 1.0)
    assert worst_cluster_certificate(positives=5, escapes=5, delta=0.05).value == 1.0


@given(st.integers(1, 500), st.integers(0, 500), st.integers(1, 8), st.floats(1e-4, 0.5))
def test_bounds_monotone(q, k, family, delta):
    k = min(k, q - 1)
    base = worst_cluster_certificate(positives=q, escapes=[k] * family, delta=delta).value
    more = worst_cluster_certificate(positives=q, escapes=[k + 1] * family, delta=delta).value
    larger_family = worst_cluster_certificate(positives=q, escapes=[k] * (family + 1),
                                              delta=delta).value
    assert all(a <= b for a, b in zip(base, more, strict=True))
    assert larger_family[0] >= base[0]          # δ/|G| shrinks as |G| grows
    assert base[0] == pytest.approx(ref_upper(k, q, delta / family), rel=1e-9)


def test_recompute_round_trip():
    for cert in (
        stress_test_certificate(positives=90, max_escapes=[3, 1], rand_escapes=[1, 1], delta=0.05,
                                delta_avg=0.01, names=["a", "b"]),
        worst_cluster_certificate(positives=90, escapes=3, delta=0.05),
        average_variant_certificate(positives=90, escapes=[1, 0], delta=0.05),
    ):
        assert recompute(Certificate.from_json(cert.to_json())) == cert


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_escapes": [1, 2], "rand_escapes": [1]}, "same shape"),
        ({"max_escapes": 1, "rand_escapes": [1]}, "same shape"),
        ({"max_escapes": [1], "rand_escapes": [2]}, "K\\^rand\\(g\\) <= K\\^max\\(g\\)"),
        ({"max_escapes": 11, "rand_escapes": 0}, "exceeds positives=10"),
        ({"max_escapes": [], "rand_escapes": []}, "one count per"),
        ({"max_escapes": 1, "rand_escapes": 0, "delta_max": 0.05}, "no budget for delta_avg"),
        ({"max_escapes": 1, "rand_escapes": 0, "delta_avg": 0.07}, "no budget for delta_max"),
        ({"max_escapes": 1, "rand_escapes": 0, "delta_max": 0.03, "delta_avg": 0.03},
         "exceeds delta"),
        ({"max_escapes": 1, "rand_escapes": 0, "delta": 0}, "delta"),
        ({"max_escapes": [1, 1], "rand_escapes": [0, 0], "names": ["a"]}, "names"),
        ({"max_escapes": [1, 1], "rand_escapes": [0, 0], "names": ["a", "a"]}, "distinct"),
        ({"max_escapes": -1, "rand_escapes": 0}, "max_escapes"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"positives": 10, "delta": 0.05, **kwargs}
    with pytest.raises(ValueError, match=match):
        stress_test_certificate(**args)


def test_cluster_escape_counts():
    # 3 audited positives, 2 generators; entries are "g(z) = 0" per variant.
    excluded = [
        [[0, 0], [1, 0], [0, 0]],   # g1 escapes via variant 1, g2 never
        [[1, 1]],                   # both escape
        [[0, 1], [0, 0]],           # g2 escapes via variant 0
    ]
    kmax, krand = cluster_escape_counts(excluded, drawn=[1, 0, 1])
    assert kmax == [2, 2]
    assert krand == [2, 1]
    c = stress_test_certificate(positives=3, max_escapes=kmax, rand_escapes=krand, delta=0.1)
    assert len(c.value[0]) == 2


def test_cluster_escape_counts_bad_input():
    with pytest.raises(ValueError, match="3 clusters but drawn has 2"):
        cluster_escape_counts([[[0]], [[0]], [[1]]], drawn=[0, 0])
    with pytest.raises(ValueError, match=r"drawn\[0\]=2"):
        cluster_escape_counts([[[0], [1]]], drawn=[2])
    with pytest.raises(ValueError, match="variants >= 1"):
        cluster_escape_counts([[]], drawn=[0])
    with pytest.raises(ValueError, match="expected 2"):
        cluster_escape_counts([[[0, 1]], [[0]]], drawn=[0, 0])
    with pytest.raises(ValueError, match="Q = 0"):
        cluster_escape_counts([], drawn=[])


def test_the_budget_split_and_names_are_keyword_only() -> None:
    """``delta_max`` and ``delta_avg`` were the fifth and sixth positional arguments, two shares of
    one budget that a swap would not reveal; ``generators`` is ``names``, as in every family."""
    with pytest.raises(TypeError):
        stress_test_certificate(200, [3], [1], 0.05, 0.04, 0.01)   # type: ignore[misc]
    with pytest.raises(TypeError):
        worst_cluster_certificate(200, [3], 0.05, ["g"])   # type: ignore[misc]
    c = stress_test_certificate(200, [3], [1], 0.05, delta_max=0.04, names=["g"])
    assert c.allocation == pytest.approx({"rho_max[g]": 0.04, "rho_avg[g]": 0.01})
