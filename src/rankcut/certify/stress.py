"""Stress-test cluster certificates (Section 6 of the audit paper: Definitions 27–28, Theorem 29).

A stress-test generator ``A`` (Definition 27), fixed before the audit, maps each item to a finite
non-empty cluster of variants (paraphrases, OCR corruptions, spelling variants, ...). For a
candidate generator ``g`` (Definition 28):

* ``ρ_max(g) = P(∃ z ∈ A(X) : g(z) = 0 | Y = 1)`` — some variant of a relevant item escapes;
* ``ρ_avg(g) = E[ |A(X)|⁻¹ Σ_{z ∈ A(X)} 1{g(z) = 0} | Y = 1 ]`` — the expected escaping fraction.

Theorem 29 audits ``Q`` positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``, with clusters formed
independently across items, and observes for each ``g`` in a finite family ``G``:

* ``K^max(g)``: audited clusters with at least one variant excluded by ``g``;
* ``K^rand(g)``: audited items whose *one* variant ``Z_i``, drawn uniformly from its cluster
  independently of the labels, is excluded by ``g`` (one draw serves every ``g``).

Then ``ρ_max(g) ≤ U_Q(K^max(g), δ_max/|G|)`` and ``ρ_avg(g) ≤ U_Q(K^rand(g), δ_avg/|G|)``
simultaneously over ``G`` with probability at least ``1 − δ`` whenever ``δ_max + δ_avg ≤ δ``,
fixed before the audit (Remark 30; the theorem's default is ``δ/2`` each). Both bounds are exact
binomial certificates (Remark 31); the empirical mean of within-cluster fractions is *not* what
the theorem uses, and is not implemented here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rankcut.certify._validate import SUM_RTOL, check_count, check_delta, member_names
from rankcut.certify.bounds import cp_upper
from rankcut.certify.result import Certificate, certificate_function, theorem_of

__all__ = [
    "average_variant_certificate",
    "cluster_escape_counts",
    "stress_test_certificate",
    "worst_cluster_certificate",
]


def _family_counts(escapes: Any, positives: int, name: str) -> tuple[list[int], bool]:
    """Escape counts per family member; ``True`` when a single scalar count was given."""
    scalar = (not isinstance(escapes, (Sequence, np.ndarray)) or isinstance(escapes, (str, bytes))
              or np.ndim(escapes) == 0)
    values = [escapes] if scalar else list(escapes)
    if not values:
        raise ValueError(f"{name} must hold one count per candidate generator (|G| >= 1)")
    out = []
    for i, v in enumerate(values):
        k = check_count(v, name if scalar else f"{name}[{i}]")
        if k > positives:
            raise ValueError(f"{name}{'' if scalar else f'[{i}]'}={k} exceeds positives={positives}")
        out.append(k)
    return out, scalar


def _check_names(names: Any, size: int) -> list[str] | None:
    if names is None:
        return None
    return member_names(names, size, arg="names", unit="generator")


def _bounds(counts: list[int], positives: int, level: float) -> list[float]:
    return [float(v) for v in np.atleast_1d(cp_upper(counts, positives, level))]


def _one_family(
    kind: str, positives: Any, escapes: Any, delta: Any, names: Any
) -> Certificate:
    q = check_count(positives, "positives")
    counts, scalar = _family_counts(escapes, q, "escapes")
    d = check_delta(delta)
    names = _check_names(names, len(counts))
    level = d / len(counts)
    bounds = _bounds(counts, q, level)
    labels = names or member_names(None, len(counts), numbered=True)
    symbol = "rho_max" if kind == "max" else "rho_avg"
    what = (
        "probability that some variant in a relevant item's stress-test cluster escapes g"
        if kind == "max"
        else "expected fraction of a relevant item's stress-test variants that g excludes"
    )
    observed = (
        "clusters with at least one excluded variant"
        if kind == "max"
        else "uniformly drawn variants that are excluded"
    )
    return Certificate(
        quantity=symbol,
        side="upper",
        value=bounds[0] if scalar else tuple(bounds),
        theorem=theorem_of("worst_cluster" if kind == "max" else "average_variant"),
        function="worst_cluster" if kind == "max" else "average_variant",
        inputs={"positives": q, "escapes": counts[0] if scalar else counts, "delta": d,
                "names": names},
        allocation={f"{symbol}[{lab}]": level for lab in labels},
        delta=d,
        statement=(
            f"With probability at least 1 - {d:g}, simultaneously for the {len(counts)} "
            f"candidate generator(s), the {what} is at most U_Q(K, delta/|G|) with Q = {q} "
            f"audited positives and K = {observed}; relative to the declared generator A only."
        ),
        details={"positives": q, "escapes": dict(zip(labels, counts, strict=True)),
                 "per_generator_level": level, "bounds": dict(zip(labels, bounds, strict=True))},
    )


@certificate_function("worst_cluster", theorem="Theorem 29 (worst-cluster part)")
def worst_cluster_certificate(
    positives: int,
    escapes: int | Sequence[int],
    delta: float,
    *,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Theorem 29, worst-cluster part: ``ρ_max(g) ≤ U_Q(K^max(g), δ/|G|)`` for all ``g ∈ G``.

    ``delta`` is the share of the budget given to this family of bounds (``δ_max`` of Remark 30);
    use :func:`stress_test_certificate` to state both bounds jointly.

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param escapes: ``K^max(g)`` for one generator (an int; scalar out) or one per member of ``G``.
    :param delta: error probability in (0, 1) for the simultaneous statement over ``G``.
    :param names: optional names of the members of ``G``, in the order of ``escapes``.
    """
    return _one_family("max", positives, escapes, delta, names)


@certificate_function("average_variant", theorem="Theorem 29 (average-variant part)")
def average_variant_certificate(
    positives: int,
    escapes: int | Sequence[int],
    delta: float,
    *,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Theorem 29, average-variant part: ``ρ_avg(g) ≤ U_Q(K^rand(g), δ/|G|)`` for all ``g ∈ G``.

    ``K^rand(g)`` counts the audited items whose single variant ``Z_i``, drawn uniformly from the
    cluster ``A(X_i)`` independently of the labels, is excluded by ``g`` (Remark 31: this makes
    the bound exact binomial). ``delta`` is this family's share (``δ_avg`` of Remark 30).

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param escapes: ``K^rand(g)`` for one generator (an int) or one per member of ``G``.
    :param delta: error probability in (0, 1) for the simultaneous statement over ``G``.
    :param names: optional names of the members of ``G``, in the order of ``escapes``.
    """
    return _one_family("avg", positives, escapes, delta, names)


@certificate_function("stress_test", theorem="Theorem 29 (budget split of Remark 30)")
def stress_test_certificate(
    positives: int,
    max_escapes: int | Sequence[int],
    rand_escapes: int | Sequence[int],
    delta: float,
    *,
    delta_max: float | None = None,
    delta_avg: float | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Theorem 29 with the budget split of Remark 30: both cluster-escape bounds, jointly.

    With probability at least ``1 − δ``, simultaneously over ``g ∈ G``,
    ``ρ_max(g) ≤ U_Q(K^max(g), δ_max/|G|)`` and ``ρ_avg(g) ≤ U_Q(K^rand(g), δ_avg/|G|)``, where
    ``δ_max + δ_avg ≤ δ`` is declared before the audit. Leaving both shares ``None`` gives the
    theorem's ``δ/2`` each; giving one sets the other to the rest of ``δ``. Both bounds are read
    as the trivial 1 when ``Q = 0``.

    The value is the pair ``(ρ_max bounds, ρ_avg bounds)``, each a float (one generator) or a
    tuple over ``G``.

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param max_escapes: ``K^max(g)``, clusters with at least one variant excluded by ``g``.
    :param rand_escapes: ``K^rand(g)``, drawn variants ``Z_i`` excluded by ``g``; since
        ``Z_i ∈ A(X_i)``, ``K^rand(g) ≤ K^max(g)`` (checked).
    :param delta: overall error probability ``δ`` in (0, 1).
    :param delta_max: share for the worst-cluster bounds.
    :param delta_avg: share for the average-variant bounds.
    :param names: optional names of the members of ``G``.
    """
    q = check_count(positives, "positives")
    kmax, scalar_max = _family_counts(max_escapes, q, "max_escapes")
    krand, scalar_rand = _family_counts(rand_escapes, q, "rand_escapes")
    if len(kmax) != len(krand) or scalar_max != scalar_rand:
        raise ValueError(
            f"max_escapes and rand_escapes must have the same shape (one count per generator), "
            f"got {max_escapes!r} and {rand_escapes!r}"
        )
    for i, (a, b) in enumerate(zip(kmax, krand, strict=True)):
        if b > a:
            raise ValueError(
                f"rand_escapes[{i}]={b} exceeds max_escapes[{i}]={a}: a drawn variant that "
                f"escapes makes its cluster escape, so K^rand(g) <= K^max(g)"
            )
    d = check_delta(delta)
    if delta_max is None and delta_avg is None:
        dmax = davg = d / 2.0
    elif delta_avg is None:
        dmax = check_delta(delta_max, "delta_max")
        if dmax >= d:
            raise ValueError(f"delta_max={dmax!r} leaves no budget for delta_avg (delta={d!r})")
        davg = d - dmax
    elif delta_max is None:
        davg = check_delta(delta_avg, "delta_avg")
        if davg >= d:
            raise ValueError(f"delta_avg={davg!r} leaves no budget for delta_max (delta={d!r})")
        dmax = d - davg
    else:
        dmax = check_delta(delta_max, "delta_max")
        davg = check_delta(delta_avg, "delta_avg")
        if math.fsum([dmax, davg]) > d * (1.0 + SUM_RTOL):
            raise ValueError(
                f"delta_max + delta_avg = {dmax + davg!r} exceeds delta={d!r} (Remark 30)"
            )
    names = _check_names(names, len(kmax))
    cmax = _one_family("max", q, kmax[0] if scalar_max else kmax, dmax, names)
    cavg = _one_family("avg", q, krand[0] if scalar_rand else krand, davg, names)
    return Certificate(
        quantity="(rho_max, rho_avg)",
        side="upper",
        value=(cmax.value, cavg.value),
        theorem=theorem_of("stress_test"),
        function="stress_test",
        inputs={
            "positives": q,
            "max_escapes": kmax[0] if scalar_max else kmax,
            "rand_escapes": krand[0] if scalar_rand else krand,
            "delta": d,
            "delta_max": delta_max if delta_max is None else float(delta_max),
            "delta_avg": delta_avg if delta_avg is None else float(delta_avg),
            "names": names,
        },
        allocation={**cmax.allocation, **cavg.allocation},
        delta=d,
        statement=(
            f"With probability at least 1 - {d:g}, simultaneously for the {len(kmax)} candidate "
            f"generator(s): the probability that some stress-test variant of a relevant item "
            f"escapes is bounded by rho_max (budget {dmax:g}), and the expected escaping fraction "
            f"of its variants by rho_avg (budget {davg:g}); relative to the declared generator A."
        ),
        details={"delta_max": dmax, "delta_avg": davg, "rho_max": dict(cmax.details),
                 "rho_avg": dict(cavg.details)},
    )


def cluster_escape_counts(
    excluded: Sequence[ArrayLike], drawn: Sequence[int]
) -> tuple[list[int], list[int]]:
    """``K^max(g)`` and ``K^rand(g)`` for every ``g ∈ G`` from the audited clusters (Theorem 29).

    :param excluded: one boolean array per audited positive ``i``, of shape
        ``[|A(X_i)|, |G|]``; entry ``[v, g]`` is ``g(z_v) = 0`` for the ``v``-th variant.
    :param drawn: index of the variant ``Z_i`` drawn uniformly from each cluster, independently
        of the labels and before they are seen.
    :returns: ``(K^max, K^rand)``, each a list of ``|G|`` counts.
    """
    if len(excluded) != len(drawn):
        raise ValueError(f"excluded has {len(excluded)} clusters but drawn has {len(drawn)} indices")
    kmax: np.ndarray | None = None
    krand: np.ndarray | None = None
    for i, (cluster, z) in enumerate(zip(excluded, drawn, strict=True)):
        arr = np.asarray(cluster, dtype=bool)
        if arr.ndim != 2 or arr.shape[0] == 0:
            raise ValueError(
                f"excluded[{i}] must have shape [variants >= 1, |G|], got shape {arr.shape}"
            )
        if kmax is None or krand is None:
            kmax = np.zeros(arr.shape[1], dtype=np.int64)
            krand = np.zeros(arr.shape[1], dtype=np.int64)
        if arr.shape[1] != kmax.shape[0]:
            raise ValueError(f"excluded[{i}] has {arr.shape[1]} generators, expected {kmax.shape[0]}")
        zi = check_count(z, f"drawn[{i}]")
        if zi >= arr.shape[0]:
            raise ValueError(f"drawn[{i}]={zi} is not a variant index of a cluster of {arr.shape[0]}")
        kmax += arr.any(axis=0)
        krand += arr[zi]
    if kmax is None or krand is None:
        raise ValueError("excluded is empty: with Q = 0 there is nothing to count (bounds are 1)")
    return [int(v) for v in kmax], [int(v) for v in krand]
