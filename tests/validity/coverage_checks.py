"""The passing criterion of the Monte Carlo coverage tests (imported by them): coverage of at least
``1 − δ − 3 s.e.``, with s.e. = sqrt(δ(1 − δ)/reps) the standard error of a coverage-(1 − δ)
estimate over ``reps`` repetitions."""

from __future__ import annotations

import math

import numpy as np


def coverage_floor(delta: float, reps: int) -> float:
    """Smallest acceptable coverage: 1 − δ − 3 standard errors of a coverage-(1 − δ) estimate."""
    return 1.0 - delta - 3.0 * math.sqrt(delta * (1.0 - delta) / reps)


def assert_coverage(covered: np.ndarray, delta: float, what: str) -> float:
    """The share of repetitions ``covered`` (one entry each), asserted to reach the floor."""
    coverage = float(np.mean(covered))
    floor = coverage_floor(delta, covered.size)
    assert coverage >= floor, f"{what}: coverage {coverage:.4f} < {floor:.4f}"
    return coverage
