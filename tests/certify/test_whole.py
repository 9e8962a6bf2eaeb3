"""Whole-population certificate (Theorem 12) and the §8 comparison with the excluded-pool audit."""

from __future__ import annotations

import math

import pytest

from rankcut.certify.bounds import cp_upper
from rankcut.certify.excluded import excluded_pool_finite_certificate
from rankcut.certify.planning import plan_missed_mass
from rankcut.certify.result import Certificate, recompute
from rankcut.certify.whole import whole_population_certificate


def test_theorem_12_is_clopper_pearson_on_the_joint_count():
    c = whole_population_certificate(3, 1000, 0.05)
    assert (c.quantity, c.side, c.theorem, c.value) == ("r", "upper", "Theorem 12",
                                                        cp_upper(3, 1000, 0.05))
    fam = whole_population_certificate([0, 3, 7], 1000, 0.06)
    assert fam.value == tuple(cp_upper(k, 1000, 0.02) for k in (0, 3, 7))
    assert fam.allocation == {"g1": 0.02, "g2": 0.02, "g3": 0.02}
    custom = whole_population_certificate([0, 3], 1000, 0.05, deltas=[0.01, 0.04], names=["a", "b"])
    assert custom.value == (cp_upper(0, 1000, 0.01), cp_upper(3, 1000, 0.04))


def test_section_8_whole_population_needs_431_labels():
    """§8 computes n ≥ log(1/0.025) / log(1/(1 − 0.00853)) ≈ 430.6, i.e. 431 labels, to match the
    excluded-pool bound r ≤ 0.00853 with zero observed events at δ = 0.025."""
    target = 0.00853
    assert excluded_pool_finite_certificate(0, 300, 70_000, 0.025, corpus_size=100_000).details[
        "r_upper"] == target
    assert math.ceil(math.log(1 / 0.025) / math.log(1 / (1 - target))) == 431
    # the certificate itself: 431 zero-event labels reach the target, 430 do not
    assert whole_population_certificate(0, 431, 0.025).value <= target
    assert whole_population_certificate(0, 430, 0.025).value > target
    # the planner agrees, and the ratio 300/431 is about p0 = 0.70
    assert plan_missed_mass(target, 0.025, p0=0.70).details["whole_population"] == 431
    assert 300 / 431 == pytest.approx(0.70, abs=0.005)


def test_recomputes_from_json():
    c = whole_population_certificate([0, 2], 500, 0.05, names=["deep", "shallow"])
    assert recompute(Certificate.from_json(c.to_json())).to_dict() == c.to_dict()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(counts=5, sample_size=4), r"counts\[0\]=5 exceeds sample_size=4"),
        (dict(counts=1, sample_size=-4), "sample_size must be >= 0"),
        (dict(counts=1, sample_size=[4]), "sample_size must be one non-negative integer"),
        (dict(counts=1, sample_size=4, delta=0), r"delta must lie in \(0, 1\)"),
        (dict(counts=[1, 2], sample_size=4, deltas=[0.04, 0.04]), "sum"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        whole_population_certificate(**kwargs)
