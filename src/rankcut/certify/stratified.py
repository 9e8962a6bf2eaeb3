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

from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.result import Certificate, certificate_function

__all__ = ["stratified_binomial_certificate", "stratified_hypergeometric_certificate"]

# Allocations and stratum masses are compared with this relative slack for floating-point
# rounding (e.g. three strata of mass 1/3 summing to 0.9999999999999999).
_SUM_RTOL = 1e-9


def _check_delta(delta: Any, name: str = "delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name} must be a number in (0, 1), got {delta!r}")
    d = float(delta)
    if not 0.0 < d < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {delta!r}")
    return d


def _check_count(x: Any, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {x}")
    return int(x)


def _seq(x: Any, name: str) -> list[Any]:
    if isinstance(x, (str, bytes)) or not isinstance(x, (Sequence, np.ndarray)):
        raise ValueError(f"{name} must be a sequence with one entry per stratum, got {x!r}")
    values = list(x)
    if not values:
        raise ValueError(f"{name} must have at least one stratum")
    return values


def _strata_counts(sampled: Any, relevant: Any, strata: int) -> tuple[list[int], list[int]]:
    n = [_check_count(v, f"sampled[{s}]") for s, v in enumerate(_seq(sampled, "sampled"))]
    k = [_check_count(v, f"relevant[{s}]") for s, v in enumerate(_seq(relevant, "relevant"))]
    if len(n) != strata or len(k) != strata:
        raise ValueError(
            f"sampled ({len(n)}) and relevant ({len(k)}) must have one entry per stratum ({strata})"
        )
    for s, (ns, ks) in enumerate(zip(n, k, strict=True)):
        if ks > ns:
            raise ValueError(f"relevant[{s}]={ks} exceeds sampled[{s}]={ns}")
    return n, k


def _split(delta: float, deltas: Any, strata: int) -> list[float]:
    if deltas is None:
        return [delta / strata] * strata
    ds = [_check_delta(v, f"deltas[{s}]") for s, v in enumerate(_seq(deltas, "deltas"))]
    if len(ds) != strata:
        raise ValueError(f"deltas has {len(ds)} entries but there are {strata} strata")
    if math.fsum(ds) > delta * (1.0 + _SUM_RTOL):
        raise ValueError(f"deltas sum to {math.fsum(ds)!r}, more than delta={delta!r}")
    return ds


@certificate_function("stratified_binomial")
def stratified_binomial_certificate(
    weights: Sequence[float],
    sampled: Sequence[int],
    relevant: Sequence[int],
    delta: float,
    deltas: Sequence[float] | None = None,
    excluded_mass: float | None = None,
) -> Certificate:
    """Stratified i.i.d. excluded-pool certificate with known stratum masses (Section 9).

    With probability at least ``1 − Σ_s δ_s ≥ 1 − δ``,
    ``η(g) ≤ Σ_s w_s U_{n_s}(K_s, δ_s)`` and, when ``p_0(g)`` is given,
    ``r(g) ≤ p_0(g) Σ_s w_s U_{n_s}(K_s, δ_s)``. An unsampled stratum contributes its whole mass
    ``w_s`` (``U_0(0, α) = 1``).

    :param weights: ``w_s = P(A_s | g(X) = 0)``, the strata's known shares of the excluded pool;
        non-negative, summing to 1 (the strata partition the pool).
    :param sampled: ``n_0^(s)``, i.i.d. draws from ``P(· | X ∈ A_s, g(X) = 0)`` per stratum.
    :param relevant: ``K_0^(s)``, relevant items among them.
    :param delta: overall error probability ``δ`` in (0, 1).
    :param deltas: per-stratum levels ``δ_s > 0`` with ``Σ_s δ_s ≤ δ``, fixed before the audit;
        ``None`` splits ``δ`` evenly.
    :param excluded_mass: ``p_0(g) = P(g(X) = 0)`` in [0, 1]; when given the value bounds the missed
        mass ``r(g)``, otherwise the excluded-pool relevance rate ``η(g)``.
    """
    w_raw = _seq(weights, "weights")
    w = []
    for s, v in enumerate(w_raw):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
            raise ValueError(f"weights[{s}] must be a number, got {v!r}")
        if not (math.isfinite(float(v)) and float(v) >= 0.0):
            raise ValueError(f"weights[{s}] must be a finite number >= 0, got {v!r}")
        w.append(float(v))
    total = math.fsum(w)
    if abs(total - 1.0) > _SUM_RTOL:
        raise ValueError(
            f"weights must sum to 1 (they are P(A_s | g(X) = 0) over a partition of the excluded "
            f"pool), got {total!r}"
        )
    n, k = _strata_counts(sampled, relevant, len(w))
    d = _check_delta(delta)
    ds = _split(d, deltas, len(w))
    p0: float | None = None
    if excluded_mass is not None:
        if isinstance(excluded_mass, bool) or not isinstance(
            excluded_mass, (int, float, np.floating, np.integer)
        ):
            raise ValueError(f"excluded_mass must be a number in [0, 1], got {excluded_mass!r}")
        p0 = float(excluded_mass)
        if not 0.0 <= p0 <= 1.0:
            raise ValueError(f"excluded_mass must lie in [0, 1], got {excluded_mass!r}")
    upper = [float(v) for v in np.atleast_1d(cp_upper(k, n, ds))]
    # Each U_s <= 1 and the w_s sum to 1, so the cap only absorbs rounding in the weights.
    eta = min(1.0, math.fsum(ws * us for ws, us in zip(w, upper, strict=True)))
    value = eta if p0 is None else p0 * eta
    used = math.fsum(ds)
    target = "eta" if p0 is None else "r"
    return Certificate(
        quantity=target,
        side="upper",
        value=value,
        theorem="Section 9 (stratified excluded-pool audit, binomial)",
        function="stratified_binomial",
        inputs={"weights": w, "sampled": n, "relevant": k, "delta": d,
                "deltas": None if deltas is None else ds, "excluded_mass": p0},
        allocation={f"stratum_{s + 1}": ds_ for s, ds_ in enumerate(ds)},
        delta=d,
        statement=(
            f"With probability at least 1 - {used:g}, the "
            + ("excluded-pool relevance rate eta(g)" if p0 is None
               else f"missed relevant mass r(g) = {p0:g} * eta(g)")
            + f" is at most {value:.6g} (mass-weighted sum of {len(w)} per-stratum "
            "Clopper-Pearson upper bounds)."
        ),
        details={"weights": w, "stratum_upper": upper, "eta_upper": eta, "deltas": ds},
    )


@certificate_function("stratified_hypergeometric")
def stratified_hypergeometric_certificate(
    sizes: Sequence[int],
    sampled: Sequence[int],
    relevant: Sequence[int],
    delta: float,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """Stratified finite-corpus certificate: ``M_0(g) ≤ Σ_s MU(K_s, δ_s; N_s, n_s)`` (Section 9).

    Within each stratum of ``N_s`` excluded items, ``n_s`` items are drawn uniformly without
    replacement; the per-stratum hypergeometric inversions of Theorem 8 at ``δ_s`` and a union
    bound give the count bound with probability at least ``1 − Σ_s δ_s ≥ 1 − δ``. An unsampled
    stratum contributes its size ``N_s``; a fully sampled one its observed count. Divide by the
    corpus size ``N`` for the missed-mass bound ``M_0(g)/N``.

    :param sizes: ``N_s``, excluded items per stratum (the strata partition the excluded pool).
    :param sampled: ``n_s ≤ N_s``, items drawn without replacement per stratum.
    :param relevant: ``K_s``, relevant items among them.
    :param delta: overall error probability ``δ`` in (0, 1).
    :param deltas: per-stratum levels with ``Σ_s δ_s ≤ δ``; ``None`` splits ``δ`` evenly.
    """
    big_n = [_check_count(v, f"sizes[{s}]") for s, v in enumerate(_seq(sizes, "sizes"))]
    n, k = _strata_counts(sampled, relevant, len(big_n))
    for s, (ns, nn) in enumerate(zip(n, big_n, strict=True)):
        if ns > nn:
            raise ValueError(f"sampled[{s}]={ns} exceeds the stratum size sizes[{s}]={nn}")
    d = _check_delta(delta)
    ds = _split(d, deltas, len(big_n))
    upper = [int(v) for v in np.atleast_1d(hypergeom_upper(k, ds, population=big_n, draws=n))]
    value = sum(upper)
    used = math.fsum(ds)
    return Certificate(
        quantity="M0",
        side="upper",
        value=value,
        theorem="Section 9 (stratified excluded-pool audit, hypergeometric; Theorem 8 per stratum)",
        function="stratified_hypergeometric",
        inputs={"sizes": big_n, "sampled": n, "relevant": k, "delta": d,
                "deltas": None if deltas is None else ds},
        allocation={f"stratum_{s + 1}": ds_ for s, ds_ in enumerate(ds)},
        delta=d,
        statement=(
            f"With probability at least 1 - {used:g}, the excluded pool of {sum(big_n)} items "
            f"holds at most {value} relevant items (sum of {len(big_n)} per-stratum hypergeometric "
            "upper bounds)."
        ),
        details={"sizes": big_n, "stratum_upper": upper, "deltas": ds,
                 "excluded_size": sum(big_n)},
    )
