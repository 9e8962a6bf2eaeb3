"""Stratified excluded-pool audits with known stratum masses (Section 9 of the audit paper).

The excluded pool ``{g(X) = 0}`` is split, before the audit, into observable strata ``A_s`` (by
score band, document category, time period, query, ...) so that more labels can go where misses
are likely. Within each stratum the audit is an ordinary excluded-pool audit:

* i.i.d. (binomial): with known masses ``w_s = P(A_s | g(X) = 0)`` and
  ``K_0^(s) ~ Bin(n_0^(s), η_s(g))``, ``η_s(g) = P(Y = 1 | X ∈ A_s, g(X) = 0)``, a union bound gives,
  with probability at least ``1 − Σ_s δ_s``,
  ``η(g) = Σ_s w_s η_s(g) ≤ Σ_s w_s U_{n_0^(s)}(K_0^(s), δ_s)``, hence
  ``r(g) = p_0(g) η(g) ≤ p_0(g) Σ_s w_s U_{n_0^(s)}(K_0^(s), δ_s)``
  (:func:`stratified_binomial_certificate`).
* finite corpus (hypergeometric): each stratum of ``N_s`` excluded items is sampled uniformly
  without replacement; replacing the binomial inversions by those of Theorem 8 gives
  ``M_0(g) = Σ_s M_0^(s) ≤ Σ_s MU(K_0^(s), δ_s; N_s, n_0^(s))``
  (:func:`stratified_hypergeometric_certificate`).

The strata, their masses or sizes, the per-stratum sample sizes and the split ``δ_s`` are fixed
before the audit labels are seen (Assumption 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rankcut.certify._validate import (
    allocation,
    as_sequence,
    check_count,
    check_delta,
    check_fraction,
    check_number,
)
from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.result import Certificate, certificate_function, theorem_of

__all__ = ["stratified_binomial_certificate", "stratified_hypergeometric_certificate"]

# The stratum masses must sum to 1 up to this absolute slack for floating-point rounding (e.g.
# three strata of mass 1/3 summing to 0.9999999999999999).
_WEIGHT_TOL = 1e-9

_STRATUM = "stratum"


def _strata_counts(sizes: Any, counts: Any, strata: int) -> tuple[list[int], list[int]]:
    n = [check_count(v, f"sizes[{s}]") for s, v in enumerate(as_sequence(sizes, "sizes", _STRATUM))]
    k = [check_count(v, f"counts[{s}]") for s, v in enumerate(as_sequence(counts, "counts", _STRATUM))]
    if len(n) != strata or len(k) != strata:
        raise ValueError(
            f"sizes ({len(n)}) and counts ({len(k)}) must have one entry per stratum ({strata})"
        )
    for s, (ns, ks) in enumerate(zip(n, k, strict=True)):
        if ks > ns:
            raise ValueError(f"counts[{s}]={ks} exceeds sizes[{s}]={ns}")
    return n, k


def _split(delta: float, deltas: Any, strata: int) -> list[float]:
    return allocation(deltas, delta, strata, units="strata", scalar=False).tolist()


@certificate_function("stratified_binomial", theorem="Section 9")
def stratified_binomial_certificate(
    *,
    counts: Sequence[int],
    sizes: Sequence[int],
    weights: Sequence[float],
    delta: float,
    deltas: Sequence[float] | None = None,
    p0: float | None = None,
) -> Certificate:
    """Stratified i.i.d. excluded-pool certificate with known stratum masses (Section 9).

    With probability at least ``1 − Σ_s δ_s ≥ 1 − δ``,
    ``η(g) ≤ Σ_s w_s U_{n_s}(K_s, δ_s)`` and, when ``p_0(g)`` is given,
    ``r(g) ≤ p_0(g) Σ_s w_s U_{n_s}(K_s, δ_s)``. An unsampled stratum contributes its whole mass
    ``w_s`` (``U_0(0, α) = 1``).

    The arguments are keyword-only, named as the unstratified certificates name them
    (:func:`rankcut.certify.excluded.excluded_pool_certificate`), so that no positional order
    can be confused with theirs.

    :param counts: ``K_0^(s)``, relevant items among each stratum's draws.
    :param sizes: ``n_0^(s)``, i.i.d. draws from ``P(· | X ∈ A_s, g(X) = 0)`` per stratum.
    :param weights: ``w_s = P(A_s | g(X) = 0)``, the strata's known shares of the excluded pool;
        non-negative, summing to 1 (the strata partition the pool).
    :param delta: overall error probability ``δ`` in (0, 1).
    :param deltas: per-stratum levels ``δ_s > 0`` with ``Σ_s δ_s ≤ δ``, fixed before the audit;
        ``None`` splits ``δ`` evenly.
    :param p0: ``p_0(g) = P(g(X) = 0)`` in [0, 1]; when given the value bounds the missed mass
        ``r(g)``, otherwise the excluded-pool relevance rate ``η(g)``.
    """
    w_raw = as_sequence(weights, "weights", _STRATUM)
    w = [check_number(v, f"weights[{s}]") for s, v in enumerate(w_raw)]
    for s, v in enumerate(w):
        if v < 0.0:
            raise ValueError(f"weights[{s}] must be >= 0, got {v!r}")
    total = math.fsum(w)
    if abs(total - 1.0) > _WEIGHT_TOL:
        raise ValueError(
            f"weights must sum to 1 (they are P(A_s | g(X) = 0) over a partition of the excluded "
            f"pool), got {total!r}"
        )
    n, k = _strata_counts(sizes, counts, len(w))
    d = check_delta(delta)
    ds = _split(d, deltas, len(w))
    mass = None if p0 is None else check_fraction(p0, "p0")
    upper = [float(v) for v in np.atleast_1d(cp_upper(k, n, ds))]
    # Weights a rounding short of 1 are scaled up (never down), so rounding cannot understate η;
    # each U_s <= 1, so the cap only absorbs rounding the other way.
    scale = max(1.0, 1.0 / total)
    eta = min(1.0, scale * math.fsum(ws * us for ws, us in zip(w, upper, strict=True)))
    value = eta if mass is None else mass * eta
    used = math.fsum(ds)
    target = "eta" if mass is None else "r"
    return Certificate(
        quantity=target,
        side="upper",
        value=value,
        theorem=f"{theorem_of('stratified_binomial')} (stratified excluded-pool audit, binomial)",
        function="stratified_binomial",
        inputs={"counts": k, "sizes": n, "weights": w, "delta": d,
                "deltas": None if deltas is None else ds, "p0": mass},
        allocation={f"stratum_{s + 1}": ds_ for s, ds_ in enumerate(ds)},
        delta=d,
        statement=(
            f"With probability at least 1 - {used:g}, the "
            + ("excluded-pool relevance rate eta(g)" if mass is None
               else f"missed relevant mass r(g) = {mass:g} * eta(g)")
            + f" is at most {value:.6g} (mass-weighted sum of {len(w)} per-stratum "
            "Clopper-Pearson upper bounds)."
        ),
        details={"weights": w, "stratum_upper": upper, "eta_upper": eta, "deltas": ds},
    )


@certificate_function("stratified_hypergeometric", theorem="Section 9")
def stratified_hypergeometric_certificate(
    *,
    counts: Sequence[int],
    sizes: Sequence[int],
    excluded_sizes: Sequence[int],
    delta: float,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """Stratified finite-corpus certificate: ``M_0(g) ≤ Σ_s MU(K_s, δ_s; N_s, n_s)`` (Section 9).

    Within each stratum of ``N_s`` excluded items, ``n_s`` items are drawn uniformly without
    replacement; the per-stratum hypergeometric inversions of Theorem 8 at ``δ_s`` and a union
    bound give the count bound with probability at least ``1 − Σ_s δ_s ≥ 1 − δ``. An unsampled
    stratum contributes its size ``N_s``; a fully sampled one its observed count. Divide by the
    corpus size ``N`` for the missed-mass bound ``M_0(g)/N``.

    The arguments are keyword-only, named as the unstratified certificates name them
    (:func:`rankcut.certify.excluded.excluded_pool_finite_certificate`: ``sizes`` are the draws,
    ``excluded_sizes`` the pools).

    :param counts: ``K_s``, relevant items among each stratum's draws.
    :param sizes: ``n_s ≤ N_s``, items drawn without replacement per stratum.
    :param excluded_sizes: ``N_s``, excluded items per stratum (the strata partition the excluded
        pool).
    :param delta: overall error probability ``δ`` in (0, 1).
    :param deltas: per-stratum levels with ``Σ_s δ_s ≤ δ``; ``None`` splits ``δ`` evenly.
    """
    big_n = [check_count(v, f"excluded_sizes[{s}]")
             for s, v in enumerate(as_sequence(excluded_sizes, "excluded_sizes", _STRATUM))]
    n, k = _strata_counts(sizes, counts, len(big_n))
    for s, (ns, nn) in enumerate(zip(n, big_n, strict=True)):
        if ns > nn:
            raise ValueError(f"sizes[{s}]={ns} draws exceed the stratum's excluded_sizes[{s}]={nn}")
    d = check_delta(delta)
    ds = _split(d, deltas, len(big_n))
    upper = [int(v) for v in np.atleast_1d(hypergeom_upper(k, ds, population=big_n, draws=n))]
    value = sum(upper)
    used = math.fsum(ds)
    return Certificate(
        quantity="M0",
        side="upper",
        value=value,
        theorem=(f"{theorem_of('stratified_hypergeometric')} (stratified excluded-pool audit, "
                 f"hypergeometric; {theorem_of('excluded_pool_finite')} per stratum)"),
        function="stratified_hypergeometric",
        inputs={"counts": k, "sizes": n, "excluded_sizes": big_n, "delta": d,
                "deltas": None if deltas is None else ds},
        allocation={f"stratum_{s + 1}": ds_ for s, ds_ in enumerate(ds)},
        delta=d,
        statement=(
            f"With probability at least 1 - {used:g}, the excluded pool of {sum(big_n)} items "
            f"holds at most {value} relevant items (sum of {len(big_n)} per-stratum hypergeometric "
            "upper bounds)."
        ),
        details={"excluded_sizes": big_n, "stratum_upper": upper, "deltas": ds,
                 "excluded_size": sum(big_n)},
    )
