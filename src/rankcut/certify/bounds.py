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
here. The tails are monotone in ``m``, so the inversion is a search over integers: it starts at a
cheap approximation (the beta-binomial form of the tail, see ``_guess_upper``), checks the exact
scipy tail at that ``m`` and its neighbour, and only where the check fails gallops and bisects
to the answer. Every returned ``m`` has passed the exact check at ``m`` and its neighbour; the
approximation decides where to look, never the answer.

Every function takes scalars or arrays (broadcast together): scalar in, scalar out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.certify._validate import shown

# scipy.stats is imported in the functions that use it: it takes about a second to import, which
# every command line call that loads rankcut.certify but computes none of these would pay.

__all__ = [
    "cp_lower",
    "cp_upper",
    "hypergeom_cdf",
    "hypergeom_lower",
    "hypergeom_sf",
    "hypergeom_upper",
    "clopper_pearson_interval",
]

# The tail condition is tested with a relative slack on the safe side, so that a bound may come
# out a little larger (upper) or smaller (lower) when the tail probability equals α to within the
# error of its floating-point evaluation, never the other way round. scipy's hypergeometric tail
# loses relative accuracy roughly in proportion to the population: measured against exact
# rational arithmetic (n ≤ 5, 80 random m per N), the worst relative error was 2.8e-7 at
# N = 10^9, 2.4e-6 at 10^10 and 2.6e-5 at 10^11, i.e. about 3e-16·N. The slack is ten times that.
_SAFE_RTOL = 1e-12
_SAFE_RTOL_PER_ITEM = 4e-15
# Beyond this population scipy's tail is slow (its cost grows with N: ~0.2 s a call at 10^10,
# ~2 s at 10^11) and the slack grows past 4e-5 of α; the binomial certificate (Theorem 7) is the
# practical choice there.
MAX_POPULATION = 10**10


# scipy's beta quantiles, as Clopper–Pearson bounds, can stand on the unsafe side of the exact bound
# by floating-point error that grows with n: on the raw quantile, tests/certify/test_bounds.py's
# test_clopper_pearson_bounds_are_on_the_safe_side_of_floating_point fails 5 of its 8 cases (the
# binomial tail above α, exact in ``decimal``, for n from 1,000 to 10^9). Each bound is moved to
# the safe side by max(1e-12, 1e-16·n) (upper) or 1e-12 (lower), relative; that test checks it is
# enough and costs less than 1e-7 (:func:`cp_upper`, :func:`cp_lower`).
_CP_RTOL = 1e-12
_CP_RTOL_PER_DRAW = 1e-16


def _slack(big_n: NDArray[np.int64]) -> NDArray[np.float64]:
    """Relative slack of the tail test for population sizes ``big_n`` (see above)."""
    return np.maximum(_SAFE_RTOL, _SAFE_RTOL_PER_ITEM * big_n.astype(float))


def _as_scalar_if_0d(x: NDArray[Any], *inputs: ArrayLike) -> Any:
    if all(np.ndim(v) == 0 for v in inputs):
        return x.item()
    return x


def _check_alpha(alpha: NDArray[np.float64]) -> None:
    if np.any(~((alpha > 0) & (alpha < 1))):
        raise ValueError(f"alpha must lie in (0, 1), got {shown(alpha[~((alpha > 0) & (alpha < 1))][0])}")


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
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if np.any(bad):
            raise ValueError(f"{name} must be an integer, got {shown(arr[bad].flat[0])}")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be an integer, got {x!r} (dtype {arr.dtype})")
    return arr.astype(np.int64)


def _as_alpha(alpha: ArrayLike) -> NDArray[np.float64]:
    try:
        return np.asarray(alpha, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}") from None


def _shape(*inputs: ArrayLike) -> tuple[int, ...]:
    return np.broadcast_shapes(*(np.shape(v) for v in inputs))


def _binomial_inputs(
    k: ArrayLike, n: ArrayLike, alpha: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """``k``, ``n`` and ``α`` of a Clopper–Pearson bound (Lemma 6), checked and broadcast together."""
    k_a = _as_int_array(k, "k")
    n_a = _as_int_array(n, "n")
    a = _as_alpha(alpha)
    k_a, n_a, a = np.broadcast_arrays(k_a, n_a, a)
    _check_counts(k_a, n_a)
    _check_alpha(a)
    return k_a, n_a, a


def cp_upper(k: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Any:
    """One-sided Clopper–Pearson upper bound ``U_n(k, α)`` (Section 4, Lemma 6).

    With probability at least ``1 − α`` over ``K ~ Bin(n, p)``, ``p ≤ U_n(K, α)``.
    Conventions: ``U_0(0, α) = 1`` and ``U_n(n, α) = 1``; for ``k = 0``,
    ``U_n(0, α) = 1 − α^{1/n}``. Computed as scipy's beta quantile, raised by a relative
    ``max(1e-12, 1e-16·n)`` so that floating-point error never leaves it below the exact bound
    (module comment).
    """
    k_a, n_a, a = _binomial_inputs(k, n, alpha)
    out = np.ones(k_a.shape, dtype=float)
    inner = k_a < n_a
    if np.any(inner):
        from scipy import stats
        u = stats.beta.isf(a[inner], k_a[inner] + 1, n_a[inner] - k_a[inner])
        slack = np.maximum(_CP_RTOL, _CP_RTOL_PER_DRAW * n_a[inner].astype(float))
        out[inner] = np.minimum(1.0, u * (1.0 + slack))
    return _as_scalar_if_0d(out, k, n, alpha)


def cp_lower(k: ArrayLike, n: ArrayLike, alpha: ArrayLike) -> Any:
    """One-sided Clopper–Pearson lower bound ``L_n(k, α)`` (Section 4, Lemma 6).

    With probability at least ``1 − α`` over ``K ~ Bin(n, p)``, ``p ≥ L_n(K, α)``.
    Conventions: ``L_0(0, α) = 0`` and ``L_n(0, α) = 0``; ``L_n(n, α) = α^{1/n}``. Computed as
    scipy's beta quantile, lowered by a relative 1e-12 so that floating-point error never leaves it
    above the exact bound (module comment).
    """
    k_a, n_a, a = _binomial_inputs(k, n, alpha)
    out = np.zeros(k_a.shape, dtype=float)
    inner = k_a > 0
    if np.any(inner):
        from scipy import stats
        out[inner] = stats.beta.ppf(a[inner], k_a[inner], n_a[inner] - k_a[inner] + 1) * (1.0 - _CP_RTOL)
    return _as_scalar_if_0d(out, k, n, alpha)


def clopper_pearson_interval(k: ArrayLike, n: ArrayLike, *, confidence: float = 0.95) -> tuple[Any, Any]:
    """Two-sided Clopper–Pearson interval: each side at ``α/2`` with ``α = 1 − confidence``.

    Matches R's ``binom.confint(method="exact")``. ``confidence`` is keyword-only: the third
    argument of :func:`cp_upper` and :func:`cp_lower` is its complement ``α``.
    """
    alpha = (1.0 - confidence) / 2.0
    return cp_lower(k, n, alpha), cp_upper(k, n, alpha)


def hypergeom_cdf(k: ArrayLike, *, population: ArrayLike, successes: ArrayLike, draws: ArrayLike) -> Any:
    """``P(Hypergeom(population, successes, draws) ≤ k)`` with named arguments.

    scipy orders them (observed, population, successes, draws); naming them here avoids the
    classic swap of ``successes`` and ``draws``.
    """
    from scipy import stats
    return stats.hypergeom.cdf(k, population, successes, draws)


def hypergeom_sf(k: ArrayLike, *, population: ArrayLike, successes: ArrayLike, draws: ArrayLike) -> Any:
    """``P(Hypergeom(population, successes, draws) ≥ k)`` with named arguments."""
    from scipy import stats
    return stats.hypergeom.sf(np.asarray(k) - 1, population, successes, draws)


def _hypergeom_inputs(
    k: ArrayLike, alpha: ArrayLike, population: ArrayLike, draws: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    k_a = _as_int_array(k, "k")
    big_n = _as_int_array(population, "population")
    n_a = _as_int_array(draws, "draws")
    a = _as_alpha(alpha)
    k_a, a, big_n, n_a = np.broadcast_arrays(k_a, a, big_n, n_a)
    _check_alpha(a)
    if np.any(big_n < 0):
        raise ValueError(f"population size must be >= 0, got {big_n[big_n < 0][0]}")
    if np.any(big_n > MAX_POPULATION):
        raise ValueError(
            f"population size {int(big_n.max())} exceeds {MAX_POPULATION:.0e}: beyond the speed and "
            "accuracy of the hypergeometric tail used here; use the binomial (Theorem 7) certificate"
        )
    _check_counts(k_a, n_a, what="draws")
    bad = n_a > big_n
    if np.any(bad):
        raise ValueError(
            f"sample size draws={n_a[bad][0]} exceeds population size population={big_n[bad][0]}"
        )
    # the search works on 1-d arrays; the public functions reshape its result
    return k_a.ravel(), a.ravel(), big_n.ravel(), n_a.ravel()


def _guess_upper(k: NDArray[np.int64], a: NDArray[np.float64], big_n: NDArray[np.int64],
                 n: NDArray[np.int64]) -> NDArray[np.float64]:
    """A cheap approximation of ``MU(k, α; N, n)`` for ``k < n < N``; only a starting point.

    Exactly, ``P(Hypergeom(N, m, n) ≤ k) = P(X ≥ m − k)`` with
    ``X ~ BetaBinomial(N − n, k + 1, n − k)`` (the successes left outside the sample), so
    ``MU = k + max{j : P(X ≥ j) ≥ α}``. ``X`` is ``Bin(N − n, p)`` mixed over
    ``p ~ Beta(k + 1, n − k)``, whose upper α-quantile is the Clopper–Pearson ``U_n(k, α)``. Take
    that quantile and stretch its distance from the mean by the exact ratio of the standard
    deviations of ``X`` and ``(N − n)p``, ``sqrt((N + 1) / (N − n))``. Rounded, it equals ``MU``
    on 99.9% of the random inputs of ``benchmarks/bench_bounds.py`` and is off by one on the rest.
    """
    kf, nf, big_nf = k.astype(float), n.astype(float), big_n.astype(float)
    from scipy import stats
    u = stats.beta.isf(a, kf + 1, nf - kf)
    mean = (kf + 1) / (nf + 1)
    return kf + (big_nf - nf) * (mean + (u - mean) * np.sqrt((big_nf + 1) / (big_nf - nf)))


# passes(m, idx) -> bool array: does the exact tail condition hold at m for the elements idx?
_Passes = Callable[[NDArray[np.int64], NDArray[np.intp]], NDArray[np.bool_]]


def _largest_passing(passes: _Passes, lo: NDArray[np.int64], hi: NDArray[np.int64],
                     guess: NDArray[np.float64]) -> NDArray[np.int64]:
    """Largest ``m`` in ``[lo, hi]`` that passes, for a condition that holds up to some ``m`` only.

    ``lo`` must pass and ``hi + 1`` must fail (known from the support of the law). Where
    ``lo < hi`` the answer is accepted only after an exact check: ``m`` passes and ``m + 1`` fails.
    The rounded ``guess`` is checked first; where that check fails, a search gallops from it
    (steps 1, 2, 4, ...) in the direction the check pointed until it steps across the answer,
    bisects, and checks again.
    """
    m = lo.copy()
    open_ = np.flatnonzero(lo < hi)
    # fmin/fmax (unlike clip) map a nan guess into the bracket too
    start = np.fmax(np.fmin(np.round(guess[open_]), hi[open_]), lo[open_])
    m[open_] = start.astype(np.int64)

    def check(idx: NDArray[np.intp]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Exact tail at m and m + 1 for the elements idx (m + 1 ≤ hi + 1 is a valid count)."""
        return passes(m[idx], idx), passes(m[idx] + 1, idx)

    # Where lo == hi the support alone fixes the answer (e.g. N = 0, n = N); nothing to check.
    idx = open_
    here, nxt = check(idx)
    wrong = ~(here & ~nxt)
    if not np.any(wrong):
        return m
    # Search where the guess was wrong; the check already moved one end of the bracket.
    idx = idx[wrong]
    here = here[wrong]
    lo, hi = lo[idx].copy(), hi[idx].copy()
    lo = np.where(here, m[idx] + 1, lo)        # m and m + 1 both pass: the answer is above
    hi = np.where(here, hi, m[idx] - 1)        # m fails: the answer is below
    step = np.where(here, 1, -1)               # > 0: gallop up from lo; < 0: down from hi; 0: bisect
    active = lo < hi
    while np.any(active):
        i = np.flatnonzero(active)
        s, lo_i, hi_i = step[i], lo[i], hi[i]
        probe = np.where(s > 0, lo_i + s, np.where(s < 0, hi_i + s + 1, lo_i + (hi_i - lo_i + 1) // 2))
        probe = np.clip(probe, lo_i + 1, hi_i)
        ok = passes(probe, idx[i])
        lo[i] = np.where(ok, probe, lo_i)
        hi[i] = np.where(ok, hi_i, probe - 1)
        crossed = ((s > 0) & ~ok) | ((s < 0) & ok)
        step[i] = np.where(crossed, 0, 2 * s)
        active = lo < hi
    m[idx] = lo
    here, nxt = check(idx)
    if not np.all(here & ~nxt):
        raise ArithmeticError("hypergeometric inversion: the exact tail check fails at the returned m")
    return m


def _hypergeom_upper_1d(k: NDArray[np.int64], a: NDArray[np.float64], big_n: NDArray[np.int64],
                        n: NDArray[np.int64]) -> NDArray[np.int64]:
    """``MU(k, α; N, n)`` for validated 1-d arrays (see :func:`hypergeom_upper`)."""

    def passes(m: NDArray[np.int64], i: NDArray[np.intp]) -> NDArray[np.bool_]:
        cdf = hypergeom_cdf(k[i], population=big_n[i], successes=m, draws=n[i])
        return np.asarray(cdf >= a[i] * (1.0 - _slack(big_n[i])))

    # Support: P(H ≤ k) = 1 for m ≤ k and 0 for m > N − n + k; for k = n it is 1 for every m.
    lo = np.where(k == n, big_n, k)
    hi = big_n - n + k
    with np.errstate(all="ignore"):
        guess = _guess_upper(k, a, big_n, n)
    return _largest_passing(passes, lo, hi, guess)


def _hypergeom_lower_1d(k: NDArray[np.int64], a: NDArray[np.float64], big_n: NDArray[np.int64],
                        n: NDArray[np.int64]) -> NDArray[np.int64]:
    """``ML(k, α; N, n)`` for validated 1-d arrays (see :func:`hypergeom_lower`).

    Searched as ``N − m'`` over the failure count ``m' = N − m``: ``P(Hypergeom(N, m, n) ≥ k)``
    is the probability of at most ``n − k`` failures in the sample, so ``m'`` obeys the ``MU``
    condition for ``n − k`` and the same search, guess and support apply. The condition tested
    is still the definition of ``ML`` (the upper tail at ``m = N − m'``), so the exact check at
    ``m'`` and ``m' + 1`` is the check of ``ML`` at ``m`` and ``m − 1``.
    """

    def passes(mp: NDArray[np.int64], i: NDArray[np.intp]) -> NDArray[np.bool_]:
        sf = hypergeom_sf(k[i], population=big_n[i], successes=big_n[i] - mp, draws=n[i])
        return np.asarray(sf >= a[i] * (1.0 - _slack(big_n[i])))

    fails = n - k
    lo = np.where(k == 0, big_n, fails)
    hi = big_n - k
    with np.errstate(all="ignore"):
        guess = _guess_upper(fails, a, big_n, n)
    return big_n - _largest_passing(passes, lo, hi, guess)


def hypergeom_upper(k: ArrayLike, alpha: ArrayLike, *, population: ArrayLike, draws: ArrayLike) -> Any:
    """Upper confidence bound ``MU(k, α; N, n)`` on the successes in a finite population (Thm 8).

    ``MU = max{m ∈ {0..N} : P(Hypergeom(N, m, n) ≤ k) ≥ α}``. With probability at least
    ``1 − α`` over a uniform without-replacement sample of ``n`` from ``N`` items containing
    ``M`` successes, ``M ≤ MU(K, α; N, n)``. ``n = 0`` gives the trivial bound ``N``.

    The tail is tested against ``α`` with a relative slack on the safe side that grows with ``N``
    (scipy's tail loses accuracy with it; see the module's comment): up to about 10^6 the result
    is the exact ``MU``, and at ``N = 10^9`` it can exceed it by about one part in 10^6 (12,220,986
    for the exact 12,220,972 at ``k = 0``, ``α = 0.025``, ``n = 300``) — larger, never smaller.

    :param k: observed successes in the sample, ``0 ≤ k ≤ n``.
    :param alpha: error probability of the one-sided bound, in (0, 1).
    :param population: population (pool) size ``N``.
    :param draws: sample size ``n ≤ N``.
    :return: int, or an int64 array of the broadcast shape of the inputs.
    """
    k_a, a, big_n, n_a = _hypergeom_inputs(k, alpha, population, draws)
    m = _hypergeom_upper_1d(k_a, a, big_n, n_a)
    return _as_scalar_if_0d(m.reshape(_shape(k, alpha, population, draws)), k, alpha, population, draws)


def hypergeom_lower(k: ArrayLike, alpha: ArrayLike, *, population: ArrayLike, draws: ArrayLike) -> Any:
    """Lower confidence bound ``ML(k, α; N, n)`` on the successes in a finite population (Cor 11).

    ``ML = min{m ∈ {0..N} : P(Hypergeom(N, m, n) ≥ k) ≥ α}``. With probability at least
    ``1 − α``, ``M ≥ ML(K, α; N, n)``. ``k = 0`` (and so ``n = 0``) gives the trivial bound 0.
    As :func:`hypergeom_upper`, exact up to a safe-side slack that grows with ``N`` (smaller,
    never larger, than the exact ``ML`` at very large ``N``).

    Computed as ``N − MU(n − k, α; N, n)``: ``P(Hypergeom(N, m, n) ≥ k)`` is the probability of at
    most ``n − k`` failures, and the failures are ``Hypergeom(N, N − m, n)``. The post-check then
    tests the definition above directly, at the returned ``m`` and ``m − 1``.
    """
    k_a, a, big_n, n_a = _hypergeom_inputs(k, alpha, population, draws)
    m = _hypergeom_lower_1d(k_a, a, big_n, n_a)
    return _as_scalar_if_0d(m.reshape(_shape(k, alpha, population, draws)), k, alpha, population, draws)
