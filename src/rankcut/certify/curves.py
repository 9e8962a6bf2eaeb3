"""Bounds against labels spent: the certified bound from the first ``j`` labels of a sample.

For the fixed-size designs (Theorems 7, 8, 10, Corollary 11) a uniform sample's first ``j`` draws
are themselves a uniform sample, so each point is the bound a sample of that size would give —
but stopping at a point because of what the curve shows is not covered by the certificate
(Remark 20): these curves are for display. The sequential audit's curve (§9) is different: the
confidence sequence holds at every ``j`` at once, so every point of it is a valid certificate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rankcut.certify.bounds import cp_lower, cp_upper, hypergeom_lower, hypergeom_upper
from rankcut.certify.recall import recall_lower

__all__ = ["CURVE_POINTS", "curve_points", "excluded_curve", "sequential_curve", "two_pool_curve"]

CURVE_POINTS = 25


def curve_points(n: int, points: int = CURVE_POINTS) -> np.ndarray:
    """At most ``points`` label counts ``j`` in ``1..n``, evenly spread, ending at ``n``."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.linspace(0, n, min(n, points) + 1)).astype(np.int64))[1:]


def excluded_curve(y: np.ndarray, pool: int, n_items: int, delta: float, *, finite: bool) -> dict[str, Any]:
    """The excluded-pool bound from the first ``j`` draws ``y`` (0/1) of a pool of ``pool`` items:
    ``MU`` on ``M0`` (Theorem 8, ``finite``) or ``p0·U`` on ``r`` (Theorem 7)."""
    j = curve_points(len(y))
    k = np.cumsum(y)[j - 1] if j.size else j
    if finite:
        b = np.atleast_1d(hypergeom_upper(k, delta, population=pool, draws=j)).astype(float)
        quantity = "M0"
    else:
        b = np.atleast_1d(cp_upper(k, j, delta)) * pool / n_items
        quantity = "r"
    return {"quantity": quantity, "labels": j.tolist(), "bound": b.tolist()}


def two_pool_curve(y0: np.ndarray, y1: np.ndarray, pool0: int, pool1: int, delta0: float, delta1: float,
                   *, finite: bool) -> dict[str, Any]:
    """The recall bound ``ML/(ML + MU)`` (Corollary 11; Theorem 10 with ``finite`` False) from the
    first share of each pool's draws ``y0`` (excluded) and ``y1`` (included)."""
    frac = curve_points(CURVE_POINTS) / CURVE_POINTS
    j0 = np.round(frac * y0.size).astype(np.int64)
    j1 = np.round(frac * y1.size).astype(np.int64)
    k0 = np.array([int(y0[:j].sum()) for j in j0], dtype=np.int64)
    k1 = np.array([int(y1[:j].sum()) for j in j1], dtype=np.int64)
    if finite:
        mu = np.atleast_1d(hypergeom_upper(k0, delta0, population=pool0, draws=j0)).astype(float)
        ml = np.atleast_1d(hypergeom_lower(k1, delta1, population=pool1, draws=j1)).astype(float)
    else:
        mu = np.atleast_1d(cp_upper(k0, j0, delta0)) * pool0
        ml = np.atleast_1d(cp_lower(k1, j1, delta1)) * pool1
    recall = recall_lower(ml, mu)   # as the certificate reads it (Corollary 11, Theorem 10)
    return {"quantity": "recall", "labels": (j0 + j1).tolist(), "bound": recall.tolist()}


def sequential_curve(found: int, y: np.ndarray, upper: np.ndarray) -> dict[str, Any]:
    """The recall bound after the first ``j`` audit labels, from the running bound ``upper`` of
    :meth:`~rankcut.certify.sequential.SequentialAudit.running_upper` — each point a valid
    certificate (the confidence sequence holds at every ``j`` at once), unlike the fixed-size
    designs' curves, and the curve never falls."""
    j = np.concatenate(([0], curve_points(y.size))).astype(np.int64)
    x = np.concatenate(([0], np.cumsum(y)))[j]
    total = found + upper[j]
    bound = np.where(total > 0, (found + x) / np.maximum(total, 1), 1.0)
    return {"quantity": "recall", "labels": j.tolist(), "bound": bound.tolist()}
