"""Exact one-sided confidence bounds: Clopper–Pearson and hypergeometric inversion.

These are the two elementary problems every certificate of the audit paper reduces to
(Section 4, "finite-sample-coverage-audits"):

* ``cp_upper(k, n, alpha)`` is ``U_n(k, α) = sup{q : P(Bin(n, q) ≤ k) ≥ α}`` and ``cp_lower`` is
  ``L_n(k, α) = inf{q : P(Bin(n, q) ≥ k) ≥ α}``, with the conventions of Lemma 6:
  ``U_0(0, α) = 1``, ``L_0(0, α) = 0``, and ``U_n(n, α) = 1``, ``L_n(0, α) = 0``.
* ``hypergeom_upper(k, alpha, population=N, draws=n)`` is
  ``MU(k, α; N, n) = max{m : P(Hypergeom(N, m, n) ≤ k) ≥ α}`` (Theorem 8) and
  ``hypergeom_lower`` is ``ML(k, α; N, n) = min{m : P(Hypergeom(N, m, n) ≥ k) ≥ α}`` (Cor 11).

The continuous bounds delegate to ``scipy.stats.beta``; only the integer inversion is written
here, as a vectorised bisection over ``m`` (the tails are monotone in ``m``), followed by a
post-check of the tail condition at the returned ``m`` and its neighbour.

Every function takes scalars or arrays (broadcast together): scalar in, scalar out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = [
    "cp_lower",
    "cp_upper",
    "hypergeom_cdf",
    "hypergeom_lower",
    "hypergeom_sf",
    "hypergeom_upper",
    "clopper_pearson_interval",
]

# The tail condition is tested with this relative slack on the safe side: a bound may come out
# one unit larger (upper) or smaller (lower) when the tail probability equals α to within
# floating-point noise, never the other way round.
_SAFE_RTOL = 1e-12


def _as_scalar_if_0d(x: NDArray[Any], *inputs: ArrayLike) -> Any:
    if all(np.ndim(v) == 0 for v in inputs):
        return x.item()
    return x


def _check_alpha(alpha: NDArray[np.float64]) -> None:
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha[~((alpha > 0) & (alpha < 1))][0]!r}")


def _check_counts(k: NDArray[np.int64], n: NDArray[np.int64], what: str = "n") -> None:
    if np.any(n < 0):
        raise ValueError(f"sample size {what} must be >= 0, got {n[n < 0][0]}")
    if np.any(k < 0):
        raise ValueError(f"observed count k must be >= 0, got {k[k < 0][0]}")
    bad = k > n
    if np.any(bad):
        raise ValueError(f"observed count k={k[bad][0]} exceeds sample size {what}={n[bad][0]}")


def _as_int_array(x: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        if np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must be an integer, got {arr[arr != np.floor(arr)].flat[0]!r}")
    elif arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must be an integer, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def cp_upper(k: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Any:
    """One-sided Clopper–Pearson upper bound ``U_n(k, α)`` (Section 4, Lemma 6).

    With probability at least ``1 − α`` over ``K ~ Bin(n, p)``, ``p ≤ U_n(K, α)``.
    Conventions: ``U_0(0, α) = 1`` and ``U_n(n, α) = 1``; for ``k = 0``,
    ``U_n(0, α) = 1 − α^{1/n}``.
    """
    k_a = _as_int_array(k, "k")
    n_a = _as_int_array(n, "n")
    a = np.asarray(alpha, dtype=float)
    k_a, n_a, a = np.broadcast_arrays(k_a, n_a, a)
    _check_counts(k_a, n_a)
    _check_alpha(a)
    out = np.ones(k_a.shape, dtype=float)
    inner = k_a < n_a
    if np.any(inner):
        out[inner] = stats.beta.isf(a[inner], k_a[inner] + 1, n_a[inner] - k_a[inner])
    return _as_scalar_if_0d(out, k, n, alpha)


def cp_lower(k: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Any:
    """One-sided Clopper–Pearson lower bound ``L_n(k, α)`` (Section 4, Lemma 6).

    With probability at least ``1 − α`` over ``K ~ Bin(n, p)``, ``p ≥ L_n(K, α)``.
    Conventions: ``L_0(0, α) = 0`` and ``L_n(0, α) = 0``; ``L_n(n, α) = α^{1/n}``.
    """
    k_a = _as_int_array(k, "k")
    n_a = _as_int_array(n, "n")
    a = np.asarray(alpha, dtype=float)
    k_a, n_a, a = np.broadcast_arrays(k_a, n_a, a)
    _check_counts(k_a, n_a)
    _check_alpha(a)
    out = np.zeros(k_a.shape, dtype=float)
    inner = k_a > 0
    if np.any(inner):
        out[inner] = stats.beta.ppf(a[inner], k_a[inner], n_a[inner] - k_a[inner] + 1)
    return _as_scalar_if_0d(out, k, n, alpha)


def clopper_pearson_interval(k: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> tuple[Any, Any]:
    """Two-sided Clopper–Pearson interval: each side at ``α/2`` with ``α = 1 − confidence``.

    Matches R's ``binom.confint(method="exact")``.
    """
    alpha = (1.0 - confidence) / 2.0
    return cp_lower(k, n, alpha), cp_upper(k, n, alpha)


def hypergeom_cdf(k: ArrayLike, *, population: ArrayLike, successes: ArrayLike, draws: ArrayLike) -> Any:
    """``P(Hypergeom(population, successes, draws) ≤ k)`` with named arguments.

    scipy orders them (observed, population, successes, draws); naming them here avoids the
    classic swap of ``successes`` and ``draws``.
    """
    return stats.hypergeom.cdf(k, population, successes, draws)


def hypergeom_sf(k: ArrayLike, *, population: ArrayLike, successes: ArrayLike, draws: ArrayLike) -> Any:
    """``P(Hypergeom(population, successes, draws) ≥ k)`` with named arguments."""
    return stats.hypergeom.sf(np.asarray(k) - 1, population, successes, draws)


def _hypergeom_inputs(
    k: ArrayLike, alpha: ArrayLike, population: ArrayLike, draws: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    k_a = _as_int_array(k, "k")
    big_n = _as_int_array(population, "population")
    n_a = _as_int_array(draws, "draws")
    a = np.asarray(alpha, dtype=float)
    k_a, a, big_n, n_a = np.broadcast_arrays(k_a, a, big_n, n_a)
    _check_alpha(a)
    if np.any(big_n < 0):
        raise ValueError(f"population size must be >= 0, got {big_n[big_n < 0][0]}")
    _check_counts(k_a, n_a, what="draws")
    bad = n_a > big_n
    if np.any(bad):
        raise ValueError(
            f"sample size draws={n_a[bad][0]} exceeds population size population={big_n[bad][0]}"
        )
    return k_a, a, big_n, n_a


def _upper_ok(m: NDArray[np.int64], k: NDArray[np.int64], a: NDArray[np.float64],
              big_n: NDArray[np.int64], n: NDArray[np.int64]) -> NDArray[np.bool_]:
    cdf = hypergeom_cdf(k, population=big_n, successes=m, draws=n)
    return np.asarray(cdf >= a * (1.0 - _SAFE_RTOL))


def _lower_ok(m: NDArray[np.int64], k: NDArray[np.int64], a: NDArray[np.float64],
              big_n: NDArray[np.int64], n: NDArray[np.int64]) -> NDArray[np.bool_]:
    sf = hypergeom_sf(k, population=big_n, successes=m, draws=n)
    return np.asarray(sf >= a * (1.0 - _SAFE_RTOL))


def hypergeom_upper(k: ArrayLike, alpha: ArrayLike, *, population: ArrayLike, draws: ArrayLike) -> Any:
    """Upper confidence bound ``MU(k, α; N, n)`` on the successes in a finite population (Thm 8).

    ``MU = max{m ∈ {0..N} : P(Hypergeom(N, m, n) ≤ k) ≥ α}``. With probability at least
    ``1 − α`` over a uniform without-replacement sample of ``n`` from ``N`` items containing
    ``M`` successes, ``M ≤ MU(K, α; N, n)``. ``n = 0`` gives the trivial bound ``N``.

    :param k: observed successes in the sample, ``0 ≤ k ≤ n``.
    :param alpha: error probability of the one-sided bound, in (0, 1).
    :param population: population (pool) size ``N``.
    :param draws: sample size ``n ≤ N``.
    """
    k_a, a, big_n, n_a = _hypergeom_inputs(k, alpha, population, draws)
    # P(H <= k) = 1 for m <= k, and = 0 once m > N - n + k (more than k successes are forced).
    lo = k_a.copy()                      # condition holds here
    hi = big_n - n_a + k_a               # largest m where the condition can hold
    hi_ok = _upper_ok(hi, k_a, a, big_n, n_a)
    lo = np.where(hi_ok, hi, lo)
    # invariant: condition holds at lo; fails at hi + 1 ... bisect on (lo, hi]
    hi = np.where(hi_ok, hi, hi - 1)
    while True:
        active = lo < hi
        if not np.any(active):
            break
        mid = lo + (hi - lo + 1) // 2
        ok = np.ones(mid.shape, dtype=bool)
        ok[active] = _upper_ok(mid[active], k_a[active], a[active], big_n[active], n_a[active])
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid - 1, hi)
    m = lo
    # Post-check: the tail condition holds at m and fails at m + 1 (where m + 1 ≤ N).
    if not np.all(_upper_ok(m, k_a, a, big_n, n_a)):
        raise ArithmeticError("hypergeom_upper: tail condition fails at the returned m")
    nxt = m < big_n
    if np.any(nxt) and np.any(
        _upper_ok(m[nxt] + 1, k_a[nxt], a[nxt], big_n[nxt], n_a[nxt])
    ):
        raise ArithmeticError("hypergeom_upper: tail condition still holds at m + 1")
    return _as_scalar_if_0d(m, k, alpha, population, draws)


def hypergeom_lower(k: ArrayLike, alpha: ArrayLike, *, population: ArrayLike, draws: ArrayLike) -> Any:
    """Lower confidence bound ``ML(k, α; N, n)`` on the successes in a finite population (Cor 11).

    ``ML = min{m ∈ {0..N} : P(Hypergeom(N, m, n) ≥ k) ≥ α}``. With probability at least
    ``1 − α``, ``M ≥ ML(K, α; N, n)``. ``k = 0`` (and so ``n = 0``) gives the trivial bound 0.
    """
    k_a, a, big_n, n_a = _hypergeom_inputs(k, alpha, population, draws)
    # P(H >= k) = 0 for m < k, and = 1 once m >= N - n + k.
    lo = k_a.copy()                      # smallest m where the condition can hold
    hi = big_n - n_a + k_a               # condition holds here
    lo_ok = _lower_ok(lo, k_a, a, big_n, n_a)
    hi = np.where(lo_ok, lo, hi)
    lo = np.where(lo_ok, lo, lo + 1)
    # invariant: condition holds at hi; fails at lo - 1 ... bisect on [lo, hi)
    while True:
        active = lo < hi
        if not np.any(active):
            break
        mid = lo + (hi - lo) // 2
        ok = np.zeros(mid.shape, dtype=bool)
        ok[active] = _lower_ok(mid[active], k_a[active], a[active], big_n[active], n_a[active])
        hi = np.where(active & ok, mid, hi)
        lo = np.where(active & ~ok, mid + 1, lo)
    m = hi
    if not np.all(_lower_ok(m, k_a, a, big_n, n_a)):
        raise ArithmeticError("hypergeom_lower: tail condition fails at the returned m")
    prv = m > 0
    if np.any(prv) and np.any(_lower_ok(m[prv] - 1, k_a[prv], a[prv], big_n[prv], n_a[prv])):
        raise ArithmeticError("hypergeom_lower: tail condition still holds at m - 1")
    return _as_scalar_if_0d(m, k, alpha, population, draws)
