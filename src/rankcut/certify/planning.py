"""Audit sample-size planning (Section 4.6, Remark 14, Theorem 13 and Corollary 15 of the audit paper).

Every planner answers "how many labels must I draw so that, if the audit turns out as hoped
(no relevant item found, or at most ``tolerated`` of them), the certificate meets my target?".
The answer is an integer found by search and then checked with the very bound the certificate
will report (:func:`~rankcut.certify.bounds.cp_upper` or
:func:`~rankcut.certify.bounds.hypergeom_upper`): the returned ``n`` meets the target and
``n − 1`` does not.

* :func:`plan_binomial` — smallest ``n`` with ``U_n(c, δ/M) ≤ ε`` (Theorem 7, Section 4.6;
  ``c = 0`` is the exact rule of three ``n = ⌈log(M/δ) / log(1/(1 − ε))⌉``).
* :func:`plan_missed_mass` — a target on the absolute missed mass ``r = p0·η``: the
  excluded-pool size (target ``ε/p0`` on ``η``) beside the whole-population size (target ``ε`` on
  ``r`` directly, Theorem 12).
* :func:`plan_hypergeometric` — finite pool: smallest ``n`` with ``MU(c, δ/M; N, n) ≤ t``
  (Theorem 8).
* :func:`plan_rule_out` — the zero-count size ``⌈N0(1 − δ^{1/m})⌉`` that rules out ``m`` missed
  items (Remark 14, Corollary 15) beside the lower bound ``(1 − β − δ)·N0/m`` that every valid
  audit must pay (Theorem 13).

Targets (``epsilon``, ``max_missed``, ``m``) and ``tolerated`` accept a scalar or a 1-D sequence;
they are broadcast together and the certificate's ``value`` is then a tuple of sizes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.certify._validate import as_family, check_count, check_delta, check_number, out, plain, shown
from rankcut.certify.bounds import cp_lower, cp_upper, hypergeom_lower, hypergeom_upper
from rankcut.certify.result import (
    Certificate,
    certificate_function,
    confidence_text,
    format_bound,
    theorem_of,
)

__all__ = [
    "REFERENCE_PROBABILITY",
    "shared_reference_size",
    "two_pool_recall_sizes",
    "plan_binomial",
    "plan_hypergeometric",
    "plan_missed_mass",
    "plan_rule_out",
]


# ---------------------------------------------------------------------------------------------
# input handling


def _broadcast(*arrays: NDArray[Any], names: tuple[str, ...]) -> list[NDArray[Any]]:
    try:
        return [np.array(a) for a in np.broadcast_arrays(*arrays)]
    except ValueError:
        sizes = ", ".join(f"{n} has {a.size}" for n, a in zip(names, arrays, strict=True))
        raise ValueError(f"cannot broadcast {' and '.join(names)} together ({sizes})") from None


def _floor_text(values: NDArray[np.float64], scalar: bool) -> str:
    """Lower bounds shown with one decimal, rounded down (the safe side); a whole number without
    it (``75000000``, not ``75000000.0``)."""
    texts = [f"{math.floor(v * 10) / 10:.1f}".removesuffix(".0") for v in values.tolist()]
    return texts[0] if scalar else "(" + ", ".join(texts) + ")"


def _per_prefix_allocation(delta: float, n_prefixes: int) -> dict[str, float]:
    """The union bound over ``M`` pools as one entry of total ``δ`` (``δ/M`` each), so that the
    certificate's size does not grow with ``M``."""
    if n_prefixes == 1:
        return {"g1": delta}
    return {f"g1..g{n_prefixes} (δ/{n_prefixes} each)": delta}


def _check_rates(eps: NDArray[np.float64]) -> None:
    """Targets on a rate (``η`` or ``r``) lie in (0, 1) (Section 4.6)."""
    if np.any((eps <= 0) | (eps >= 1)):
        raise ValueError(f"epsilon must lie in (0, 1), got {shown(eps[(eps <= 0) | (eps >= 1)][0])}")


def _size_certificate(
    function: str, value: Any, inputs: dict[str, Any], delta: float, n_prefixes: int, statement: str,
    details: dict[str, Any],
) -> Certificate:
    """An audit size for ``M`` pools certified jointly at ``δ/M`` each (Section 4.6): the planners
    of Theorems 7, 8 and 12 report it alike."""
    return Certificate(
        quantity="n0",
        side="size",
        value=value,
        theorem=theorem_of(function),
        function=function,
        inputs=inputs,
        allocation=_per_prefix_allocation(delta, n_prefixes),
        delta=delta,
        statement=statement,
        details=details,
    )


# ---------------------------------------------------------------------------------------------
# integer searches (exact: the returned n meets the target with the library's own bound, n − 1
# does not)


def _binomial_sizes(eps: NDArray[np.float64], c: NDArray[np.int64], alpha: float) -> NDArray[np.int64]:
    """Smallest ``n`` with ``U_n(c, alpha) ≤ eps`` elementwise, for ``0 < eps < 1``."""

    def ok(n: NDArray[np.int64], sel: NDArray[np.bool_]) -> NDArray[np.bool_]:
        return np.asarray(cp_upper(c[sel], n[sel], alpha) <= eps[sel])

    every = np.ones(c.shape, dtype=bool)
    n = np.empty(c.shape, dtype=np.int64)
    zero = c == 0
    # Zero count: U_n(0, α) = 1 − α^{1/n} ≤ ε  ⇔  n ≥ log α / log(1 − ε) (the rule of three).
    n[zero] = np.ceil(np.log(alpha) / np.log1p(-eps[zero])).astype(np.int64)
    pos = ~zero
    if np.any(pos):
        # U_c(c) = 1 > ε fails; double an upper end until it holds, then bisect (lo, hi].
        lo = c[pos].copy()
        hi = c[pos] + 1
        cp, ep = c[pos], eps[pos]
        while True:
            bad = ~np.asarray(cp_upper(cp, hi, alpha) <= ep)
            if not np.any(bad):
                break
            lo = np.where(bad, hi, lo)
            hi = np.where(bad, 2 * hi, hi)
        while True:
            active = hi - lo > 1
            if not np.any(active):
                break
            mid = (lo + hi) // 2
            good = np.asarray(cp_upper(cp, mid, alpha) <= ep)
            hi = np.where(active & good, mid, hi)
            lo = np.where(active & ~good, mid, lo)
        n[pos] = hi
    n = np.maximum(n, c + 1)
    # Repair any floating-point off-by-one of the closed form, then check minimality.
    while True:
        bad = ~ok(n, every)
        if not np.any(bad):
            break
        n[bad] += 1
    while True:
        can = n - 1 >= c + 1
        shrink = np.zeros(c.shape, dtype=bool)
        shrink[can] = ok(n - 1, can)
        if not np.any(shrink):
            break
        n[shrink] -= 1
    return n


def _hypergeom_bracket(
    max_missed: NDArray[np.int64], c: NDArray[np.int64], alpha: float, population: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """An analytic bracket ``(lo, hi]`` of the smallest ``n`` with ``MU(c, alpha; N, n) ≤ t``:
    ``lo`` fails, ``hi`` meets the target, for ``c ≤ t < N``.

    ``MU ≤ t`` holds exactly when ``m = K = t + 1`` fails the tail test of
    :func:`~rankcut.certify.bounds.hypergeom_upper`, ``P(H ≤ c) ≥ α(1 − s)`` with
    ``H ~ Hypergeom(N, K, n)`` and ``s ≤ 4·10⁻⁵`` the bound's relative slack.

    * ``hi = ⌈N·x/K⌉ + 1`` (at most ``N``), ``x = c + L + √(L² + 2cL)``, ``L = log(2/α)``.
      Hoeffding (1963, Theorem 4) bounds the moment generating function of ``H`` by that of
      ``B ~ Bin(n, K/N)``, so the Chernoff lower tail of ``B`` holds for ``H``:
      ``P(H ≤ c) ≤ exp(−(μ − c)²/(2μ))`` with ``μ = nK/N > c``. At ``n = hi``, ``μ > x``, and
      ``(μ − c)²/(2μ)`` increases for ``μ > c`` and equals ``L`` at ``μ = x`` (the larger root
      of ``μ² − 2(c + L)μ + c² = 0``); so ``P(H ≤ c) < α/2 < α(1 − s)``: the target is met. At
      ``n = N`` it is met too (``H = K > c``).
    * ``lo = max(c, ⌊(1 − α)(N + 1)/(K + 1 − α)⌋)``. At ``n = c``, ``MU = N > t``. For the other
      value, ``nK ≤ (1 − α)(N − n + 1)``, and by the Weierstrass product inequality
      ``P(H ≤ c) ≥ P(H = 0) = ∏_{i<n} (1 − K/(N − i)) ≥ 1 − nK/(N − n + 1) ≥ α``: the tail test
      passes at ``K``, so ``MU ≥ K > t``.

    The bisection then runs between the two ends, near the answer, where the tail is cheap; from
    ``(c, N]`` its first steps evaluated it at ``n ≈ N/2``, seconds a call for ``N = 10^10``.
    """
    n_f, k = population.astype(float), (max_missed + 1).astype(float)
    big_l = math.log(2.0 / alpha)
    x = c + big_l + np.sqrt(big_l**2 + 2.0 * c * big_l)
    # + 1 beyond the ceiling: the float product may round below N·x/K
    hi = np.minimum(population, np.ceil(n_f * x / k).astype(np.int64) + 1)
    lo = np.maximum(c, np.floor((1.0 - alpha) * (n_f + 1.0) / (k + 1.0 - alpha)).astype(np.int64))
    return np.minimum(lo, hi - 1), hi


def _hypergeom_sizes(
    max_missed: NDArray[np.int64], c: NDArray[np.int64], alpha: float, population: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Smallest ``n`` with ``MU(c, alpha; N, n) ≤ t`` elementwise, for ``c ≤ t < N``.

    ``MU`` is non-increasing in ``n`` (a larger sample can only see more successes), so bisection
    applies on any bracket whose lower end fails and upper end meets the target: the analytic one
    of :func:`_hypergeom_bracket`, whose ends are checked with the bound itself (where rounding
    defeated an end, the support's own end is used: ``MU = N > t`` at ``n = c``, ``MU = c ≤ t`` at
    ``n = N``).
    """

    def mu(n: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.atleast_1d(hypergeom_upper(c, alpha, population=population, draws=n))

    lo, hi = _hypergeom_bracket(max_missed, c, alpha, population)
    lo = np.where(mu(lo) > max_missed, lo, c)
    hi = np.where(mu(hi) <= max_missed, hi, population)
    while True:
        active = hi - lo > 1
        if not np.any(active):
            break
        mid = np.where(active, (lo + hi) // 2, hi)
        good = mu(mid) <= max_missed
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
    if not (np.all(mu(hi) <= max_missed) and np.all(mu(hi - 1) > max_missed)):
        raise ArithmeticError("plan_hypergeometric: the searched size is not the smallest one")
    return hi


def _remark14_size(excluded_size: int, m: int, delta: float) -> int:
    """``⌈N0(1 − δ^{1/m})⌉``: the smallest integer ``n`` with ``(1 − n/N0)^m ≤ δ``.

    The float formula is repaired near a tie with exact rational arithmetic, so the ceiling is
    the mathematical one for the given ``delta``.
    """
    n = math.ceil(excluded_size * -math.expm1(math.log(delta) / m))
    n = min(max(n, 0), excluded_size)

    def meets(k: int) -> bool:
        gap = m * math.log1p(-k / excluded_size) - math.log(delta) if k < excluded_size else -1.0
        if abs(gap) > 1e-9:
            return gap < 0
        return Fraction(excluded_size - k) ** m <= Fraction(delta) * Fraction(excluded_size) ** m

    while not meets(n):
        n += 1
    while n > 0 and meets(n - 1):
        n -= 1
    return n


# ---------------------------------------------------------------------------------------------
# planners


@certificate_function(
    "plan_binomial",
    theorem="Section 4.6 (Theorem 7 zero-count identity; Corollary 16 for M pools)",
)
def plan_binomial(
    epsilon: ArrayLike, delta: float = 0.05, *, tolerated: ArrayLike = 0, n_prefixes: int = 1
) -> Certificate:
    """Audit size for a target on a relevance rate, binomial design (Section 4.6, Theorem 7).

    Smallest ``n`` with ``U_n(c, δ/M) ≤ ε``: drawing ``n`` items i.i.d. from a pool and finding at
    most ``c = tolerated`` relevant ones certifies that the pool's relevance rate is at most ``ε``
    with confidence ``1 − δ/M`` each, jointly ``1 − δ`` over ``M = n_prefixes`` audits
    (Corollary 16). For ``c = 0`` this is ``⌈log(M/δ) / log(1/(1 − ε))⌉``, the exact rule of three
    (§4.6 table: 29, 59, 149, 299, 598 at ``δ = 0.05`` for ε = 0.10, 0.05, 0.02, 0.01, 0.005).

    The pool is the excluded pool for a target on ``η(g)`` (Theorem 7) or the whole population for
    a target on ``r(g)`` (Theorem 12); :func:`plan_missed_mass` shows both for a target on ``r``.

    :param epsilon: target rate(s) in (0, 1); scalar or 1-D.
    :param delta: total error probability, in (0, 1).
    :param tolerated: relevant items the audit may find and still meet the target (``c ≥ 0``);
        scalar or 1-D, broadcast with ``epsilon``.
    :param n_prefixes: number ``M ≥ 1`` of pools certified jointly; each gets ``δ/M``.
    :returns: ``Certificate`` with ``side="size"``, ``value`` the size (tuple if vectorised).
    """
    eps, eps_scalar = as_family(epsilon, "epsilon", integer=False)
    c, c_scalar = as_family(tolerated, "tolerated", integer=True)
    delta = check_delta(delta)
    n_prefixes = check_count(n_prefixes, "n_prefixes", 1)
    _check_rates(eps)
    inputs = {
        "epsilon": plain(epsilon, float),
        "delta": delta,
        "tolerated": plain(tolerated, int),
        "n_prefixes": n_prefixes,
    }
    eps, c = _broadcast(eps, c, names=("epsilon", "tolerated"))
    alpha = delta / n_prefixes
    n = _binomial_sizes(eps, c, alpha)
    scalar = eps_scalar and c_scalar
    value = out(n, scalar)
    return _size_certificate(
        "plan_binomial", value, inputs, delta, n_prefixes,
        (
            f"Drawing {format_bound(value, 'size')} {'item' if value == 1 else 'items'} i.i.d. from "
            f"{'the pool' if n_prefixes == 1 else f'each of {n_prefixes} pools (δ/M = {alpha:g} each)'} and "
            f"finding at "
            f"most {format_bound(inputs['tolerated'], 'size')} relevant certifies a relevance rate "
            f"≤ {format_bound(inputs['epsilon'], 'estimate', 6)} at confidence "
            f"{confidence_text(delta)}."
        ),
        details={"alpha": alpha, "U_at_n": out(np.asarray(cp_upper(c, n, alpha)), scalar)},
    )


@certificate_function(
    "plan_missed_mass",
    theorem="Section 4.6 (Theorem 7 excluded pool vs Theorem 12 whole population)",
)
def plan_missed_mass(
    epsilon: ArrayLike,
    delta: float = 0.05,
    *,
    p0: ArrayLike,
    tolerated: ArrayLike = 0,
    n_prefixes: int = 1,
) -> Certificate:
    """Audit sizes for a target ``r(g) ≤ ε`` on absolute missed mass (Section 4.6, Theorems 7, 12).

    Excluded-pool design (Theorem 7): since ``r = p0·η``, plan ``η ≤ ε/p0``; if ``ε ≥ p0`` the
    target holds without an audit (``r ≤ p0``) and the size is 0. Whole-population design
    (Theorem 12): plan ``r ≤ ε`` directly. At zero observed events the whole-population audit
    needs about ``1/p0`` times as many labels (§8: 431 whole-population labels for ``ε = 0.00853``,
    ``δ = 0.025``, against 301 binomial excluded-pool labels at ``p0 = 0.70``, or 300 with the
    hypergeometric planner for ``N0 = 70,000``).

    :param epsilon: target(s) on ``r`` in (0, 1); scalar or 1-D.
    :param delta: total error probability, in (0, 1).
    :param p0: excluded-pool mass(es) ``p0(g)`` in (0, 1] (``N0/N`` in a finite corpus); a 1-D
        sequence gives one size per prefix, e.g. for the separate audits of Corollary 16.
    :param tolerated: relevant items the audit may find (``c ≥ 0``).
    :param n_prefixes: number ``M`` of generators certified jointly (``δ/M`` each).
    :returns: ``value`` = excluded-pool size(s) ``n0``; ``details["whole_population"]`` = the
        whole-population size(s) for the same target and error split.
    """
    eps, eps_scalar = as_family(epsilon, "epsilon", integer=False)
    p, p_scalar = as_family(p0, "p0", integer=False)
    c, c_scalar = as_family(tolerated, "tolerated", integer=True)
    delta = check_delta(delta)
    n_prefixes = check_count(n_prefixes, "n_prefixes", 1)
    _check_rates(eps)
    if np.any((p <= 0) | (p > 1)):
        raise ValueError(f"p0 must lie in (0, 1], got {shown(p[(p <= 0) | (p > 1)][0])}")
    inputs = {
        "epsilon": plain(epsilon, float),
        "delta": delta,
        "p0": plain(p0, float),
        "tolerated": plain(tolerated, int),
        "n_prefixes": n_prefixes,
    }
    eps, p, c = _broadcast(eps, p, c, names=("epsilon", "p0", "tolerated"))
    scalar = eps_scalar and p_scalar and c_scalar
    alpha = delta / n_prefixes
    eta_target = eps / p
    needed = eta_target < 1  # ε ≥ p0: r ≤ p0 ≤ ε holds without labels (Section 4.6)
    n0 = np.zeros(eps.shape, dtype=np.int64)
    whole = np.zeros(eps.shape, dtype=np.int64)
    if np.any(needed):
        n0[needed] = _binomial_sizes(eta_target[needed], c[needed], alpha)
        whole[needed] = _binomial_sizes(eps[needed], c[needed], alpha)
    value = out(n0, scalar)
    no_audit = "" if np.all(needed) else " (0 where ε ≥ p0: the target holds without an audit)"
    return _size_certificate(
        "plan_missed_mass", value, inputs, delta, n_prefixes,
        (
            f"To certify r ≤ {format_bound(inputs['epsilon'], 'estimate', 6)} at confidence "
            f"{confidence_text(delta)} with at most {format_bound(inputs['tolerated'], 'size')} "
            f"relevant found, "
            f"label {format_bound(value, 'size')} excluded-pool items{no_audit}, against "
            f"{format_bound(out(whole, scalar), 'size')} whole-population items."
        ),
        details={
            "whole_population": out(whole, scalar),
            "eta_target": out(np.minimum(eta_target, 1.0), scalar),
            "total_excluded_pool_labels": int(n0.sum()),
            "alpha": alpha,
        },
    )


@certificate_function(
    "plan_hypergeometric",
    theorem="Theorem 8 (hypergeometric inversion), Section 4.6",
)
def plan_hypergeometric(
    max_missed: ArrayLike,
    delta: float = 0.05,
    *,
    population: int,
    tolerated: ArrayLike = 0,
    n_prefixes: int = 1,
) -> Certificate:
    """Exact finite-pool audit size: smallest ``n`` with ``MU(c, δ/M; N, n) ≤ t`` (Theorem 8).

    Drawing ``n`` items uniformly without replacement from a pool of ``N = population`` items and
    finding at most ``c = tolerated`` relevant ones certifies that the pool holds at most
    ``t = max_missed`` relevant items. With ``population = N0`` (the excluded pool) this bounds
    the missed count ``M0(g)``; with ``population = N`` (the whole corpus, counting items that are
    relevant *and* excluded) it is the whole-corpus design. §8: ``N0 = 70,000``, ``δ = 0.025``
    needs 300 draws for ``MU ≤ 853`` at ``c = 0``, and also 300 for ``MU ≤ 1,287`` at ``c = 1``.

    If ``t ≥ N`` the target holds without an audit (size 0). ``t < c`` is impossible, since
    ``MU(c, ·) ≥ c`` always.

    :param max_missed: target count(s) ``t`` of relevant items left in the pool; scalar or 1-D.
    :param delta: total error probability, in (0, 1).
    :param population: pool size ``N ≥ 1``.
    :param tolerated: relevant items the audit may find (``c ≥ 0``), broadcast with ``max_missed``.
    :param n_prefixes: number ``M`` of pools certified jointly (``δ/M`` each).
    """
    t, t_scalar = as_family(max_missed, "max_missed", integer=True)
    c, c_scalar = as_family(tolerated, "tolerated", integer=True)
    delta = check_delta(delta)
    big_n = check_count(population, "population", 1)
    n_prefixes = check_count(n_prefixes, "n_prefixes", 1)
    inputs = {
        "max_missed": plain(max_missed, int),
        "delta": delta,
        "population": big_n,
        "tolerated": plain(tolerated, int),
        "n_prefixes": n_prefixes,
    }
    t, c = _broadcast(t, c, names=("max_missed", "tolerated"))
    if np.any(t < c):
        bad = np.flatnonzero(t < c)[0]
        raise ValueError(
            f"max_missed={t[bad]} is below tolerated={c[bad]}: an audit that finds c relevant items "
            "cannot certify fewer than c"
        )
    if np.any(c > big_n):
        raise ValueError(f"tolerated must be <= population={big_n}, got {c[c > big_n][0]}")
    scalar = t_scalar and c_scalar
    alpha = delta / n_prefixes
    n = np.zeros(t.shape, dtype=np.int64)
    needed = t < big_n
    if np.any(needed):
        n[needed] = _hypergeom_sizes(t[needed], c[needed], alpha, np.full(int(needed.sum()), big_n))
    value = out(n, scalar)
    return _size_certificate(
        "plan_hypergeometric", value, inputs, delta, n_prefixes,
        (
            f"Drawing {format_bound(value, 'size')} "
            + (f"of {big_n} items without replacement" if n_prefixes == 1 else
               f"items without replacement from each of {n_prefixes} pools of at most {big_n} items (δ/M = "
               f"{alpha:g} each)")
            + f" and finding at most {format_bound(inputs['tolerated'], 'size')} relevant "
            f"certifies at most {format_bound(inputs['max_missed'], 'size')} relevant items in "
            f"{'the pool' if n_prefixes == 1 else 'each pool'} at confidence {confidence_text(delta)}."
        ),
        details={"alpha": alpha},
    )


@certificate_function("plan_rule_out", theorem="Remark 14 and Corollary 15 (plan); Theorem 13 (lower bound)")
def plan_rule_out(
    m: ArrayLike, delta: float = 0.05, *, excluded_size: int, beta: float = 0.5
) -> Certificate:
    """Zero-count size that rules out ``m`` missed items, beside the minimum (Remark 14, Thm 13).

    ``value = ⌈N0(1 − δ^{1/m})⌉`` (Remark 14, Corollary 15): if the excluded pool holds ``m`` or
    more relevant items, a uniform without-replacement sample of this size sees none with
    probability at most ``δ``, so a zero count certifies ``M0(g) ≤ m − 1``.

    Theorem 13: any valid audit (adaptive, randomised, allowed to label the whole included pool)
    that certifies ``M0(g) ≤ m − 1`` with probability ``≥ 1 − β`` when ``M0(g) = 0`` must inspect
    on average at least ``(1 − β − δ)·N0/m`` excluded-pool items. ``details`` report that lower
    bound, the ratio of the plan to it (at most ``log(1/δ)/(1 − β − δ)`` up to the ceiling),
    Corollary 15's upper bound ``(N0/m)·log(1/δ) + 1``, and ``exact_size``: the smallest ``n`` with
    ``MU(0, δ; N0, n) ≤ m − 1`` from :func:`plan_hypergeometric`.

    What holds exactly (tested), at pools up to about 10^6: ``exact_size ≤ value`` except at a tie
    ``P(Hypergeom(N0, m, n) = 0) = δ``, where ``MU`` (which keeps ``m`` when the tail equals ``α``)
    needs one more draw than Remark 14's "error at most δ"; for ``m = 1`` the tail is
    ``1 − n/N0``, so ``value = ⌈N0(1 − δ)⌉`` is exact and ties occur whenever ``N0·δ`` is an
    integer. For ``m ≥ 2`` the product bound ``(1 − n/N0)^m`` is loose and ``exact_size`` can be a
    few draws smaller (300 against 302 for ``N0 = 70,000``, ``m = 854``, ``δ = 0.025``). At larger
    pools ``MU``'s safe-side slack (:func:`~rankcut.certify.bounds.hypergeom_upper`) can make
    ``exact_size`` the larger: 393,038,170 against 393,037,769 at ``N0 = 10^9``, ``m = 6``,
    ``δ = 0.05``. It is still the size to plan with, since certify inverts ``MU`` the same way.

    :param m: number(s) of missed items to rule out, ``1 ≤ m ≤ N0``; scalar or 1-D.
    :param delta: error probability of the certificate, in (0, 1).
    :param excluded_size: excluded-pool size ``N0 ≥ 1``.
    :param beta: allowed failure probability in the zero-miss case for the lower bound,
        ``0 ≤ β < 1 − δ`` (Theorem 13 states ``β > 0``; ``β = 0``, met by the zero-count audit,
        is its limit and gives the largest lower bound).
    """
    ms, m_scalar = as_family(m, "m", integer=True)
    delta = check_delta(delta)
    big_n = check_count(excluded_size, "excluded_size", 1)
    beta = check_number(beta, "beta")
    if not 0.0 <= beta < 1.0 - delta:
        raise ValueError(f"beta must lie in [0, 1 − delta) = [0, {1 - delta:g}), got {beta!r}")
    if np.any((ms < 1) | (ms > big_n)):
        raise ValueError(
            f"m must lie in 1..excluded_size={big_n}, got {ms[(ms < 1) | (ms > big_n)][0]}"
        )
    n = np.array([_remark14_size(big_n, int(k), delta) for k in ms], dtype=np.int64)
    exact = _hypergeom_sizes(ms - 1, np.zeros_like(ms), delta, np.full(ms.shape, big_n))
    lower = (1.0 - beta - delta) * big_n / ms
    cor15 = big_n / ms * math.log(1.0 / delta) + 1.0
    value = out(n, m_scalar)
    return Certificate(
        quantity="n0",
        side="size",
        value=value,
        theorem=theorem_of("plan_rule_out"),
        function="plan_rule_out",
        inputs={
            "m": plain(m, int),
            "delta": delta,
            "excluded_size": big_n,
            "beta": beta,
        },
        allocation={"excluded_pool": delta},
        delta=delta,
        statement=(
            f"Drawing {format_bound(value, 'size')} of {big_n} excluded-pool items without "
            f"replacement and finding none rules out {format_bound(out(ms, m_scalar), 'size')} "
            f"or more missed items at confidence {confidence_text(delta)}; no valid audit that succeeds with "
            f"probability {1 - beta:g} can inspect fewer than "
            f"{_floor_text(lower, m_scalar)} on average (Theorem 13)."
        ),
        details={
            "exact_size": out(exact, m_scalar),
            "lower_bound": out(lower, m_scalar),
            "ratio_to_lower_bound": out(n / lower, m_scalar),
            "constant_factor": math.log(1.0 / delta) / (1.0 - beta - delta),
            "corollary15_upper": out(cor15, m_scalar),
        },
    )


# A shared reference sample is planned so that each member's effective size reaches its need with
# at least this probability (the effective size is random: the draws that fall in the member's pool).
REFERENCE_PROBABILITY = 0.95


@certificate_function("shared_reference_size", theorem="Theorem 17 / Corollary 18 (effective size)")
def shared_reference_size(need: int, *, excluded_size: int, reference_pool_size: int, finite: bool,
                          probability: float = REFERENCE_PROBABILITY) -> Certificate:
    """Least shared-reference size ``Q`` whose effective size for a member with excluded pool
    ``E_m ⊆ E_1`` (``|E_m| = excluded_size``, ``|E_1| = reference_pool_size``) reaches ``need``
    with probability at least ``probability``: the effective size of Theorem 17 / Corollary 18 is
    ``n_eff ~ Hypergeometric(|E_1|, |E_m|, Q)`` without replacement, ``Binomial(Q, |E_m|/|E_1|)``
    with it. The two pool sizes are keyword-only (named as in :func:`prefix_bounds_shared_finite`):
    swapped, they gave a size with no error.

    :returns: ``Certificate`` with ``side="size"``, ``value`` the size ``Q`` (``0`` when
        ``need ≤ 0``); ``delta`` is ``None``: ``probability`` is a planning aim, not an error
        probability of the later certificate.
    """
    pool = check_count(excluded_size, "excluded_size")
    reference = check_count(reference_pool_size, "reference_pool_size", 1)
    if pool > reference:
        raise ValueError(f"excluded_size={pool} exceeds reference_pool_size={reference}: a member's "
                         "excluded pool lies within the reference pool E_1")
    if not 0.0 < check_number(probability, "probability") < 1.0:
        raise ValueError(f"probability must lie in (0, 1), got {shown(probability)}")
    inputs: dict[str, Any] = {"need": int(need), "excluded_size": pool, "reference_pool_size": reference,
                              "finite": bool(finite), "probability": float(probability)}
    q = _shared_reference_size(int(need), pool, reference, bool(finite), float(probability))
    law = f"Hypergeometric({reference}, {pool}, Q)" if finite else f"Binomial(Q, {pool}/{reference})"
    return Certificate(
        quantity="Q",
        side="size",
        value=q,
        theorem=f"{theorem_of('prefix_bounds_shared' + ('_finite' if finite else ''))} (effective size)",
        function="shared_reference_size",
        inputs=inputs,
        allocation={},
        delta=None,
        statement=(f"A shared reference sample of {q} draws from E_1 gives a member with {pool} of its "
                   f"{reference} items an effective size n_eff ~ {law} of at least {need} with "
                   f"probability ≥ {probability:g}."),
    )


def _shared_reference_size(need: int, pool: int, reference: int, finite: bool, probability: float) -> int:
    from scipy.stats import binom, hypergeom

    if need <= 0:
        return 0

    def enough(q: int) -> bool:
        if finite:
            p = float(hypergeom.sf(need - 1, reference, pool, q))
        else:
            p = float(binom.sf(need - 1, q, pool / reference))
        return p >= probability

    lo = need  # n_eff never exceeds Q
    if finite:
        hi = reference  # Q = N0(g_1) draws all of E_1, so n_eff = N0(g_m) ≥ need
        if need > pool:
            return reference
    else:
        hi = max(lo, 1)
        while not enough(hi):
            hi *= 2
    if enough(lo):
        return lo
    while hi - lo > 1:  # enough(hi), not enough(lo)
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


@certificate_function("two_pool_recall_sizes", theorem="Corollary 11 / Theorem 10")
def two_pool_recall_sizes(rho: float, precision: float, tolerated: int, *, excluded_size: int,
                          included_size: int, corpus_size: int, delta0: float, delta1: float, finite: bool
                          ) -> Certificate:
    """Two-pool sample sizes ``(n0, n1)`` for ``Recall ≥ ρ`` (Corollary 11; Theorem 10 with
    ``finite`` False) with the fewest labels in total, or None when no sizes within the pools do.

    Recall ``≥ ρ`` holds on the certificate's event when ``MU ≤ ML·(1 − ρ)/ρ``. An included sample
    of ``n1`` items at the expected ``precision`` (``K1 = ⌊precision·n1⌋``) gives ``ML``, which turns
    the target into a missed-count tolerance ``⌊ML(1 − ρ)/ρ⌋`` for the excluded audit, sized by
    :func:`plan_hypergeometric` (Theorem 8; :func:`plan_missed_mass` binomially, §4.6). A coarse
    grid over ``n1``, then a fine one around its best point; the best few are sized exactly.
    The precision and ``tolerated`` are planning guesses: they move the sizes, never validity.

    :returns: ``Certificate`` with ``side="size"``, ``value`` the pair ``(n0, n1)`` or ``None``;
        ``δ0`` spent on the excluded audit, ``δ1`` on the included one.
    """
    inputs: dict[str, Any] = {"rho": float(rho), "precision": float(precision), "tolerated": int(tolerated),
              "excluded_size": int(excluded_size), "included_size": int(included_size),
              "corpus_size": int(corpus_size), "delta0": float(delta0), "delta1": float(delta1),
              "finite": bool(finite)}
    sizes = _two_pool_recall_sizes(**inputs)
    found = ("no sizes within the pools do" if sizes is None else
             f"{sizes[0]} excluded-pool and {sizes[1]} included-pool draws do, with the fewest labels")
    return Certificate(
        quantity="(n0, n1)",
        side="size",
        value=sizes,
        theorem=theorem_of("two_pool_recall_finite" if finite else "two_pool_recall"),
        function="two_pool_recall_sizes",
        inputs=inputs,
        allocation={"excluded audit": float(delta0), "included audit": float(delta1)},
        delta=float(delta0) + float(delta1),
        statement=(f"For recall ≥ {rho:g} at the expected precision {precision:g}, finding at most "
                   f"{tolerated} relevant in the excluded pool: {found}."),
    )


def _two_pool_recall_sizes(rho: float, precision: float, tolerated: int, *, excluded_size: int,
                           included_size: int, corpus_size: int, delta0: float, delta1: float, finite: bool
                           ) -> tuple[int, int] | None:
    big0, big1, big_n = excluded_size, included_size, corpus_size
    d0, d1 = delta0, delta1
    best: tuple[int, int, int] | None = None

    def tolerance(n1: np.ndarray) -> np.ndarray:
        k1 = np.floor(precision * n1).astype(np.int64)
        if finite:
            caught = np.asarray(hypergeom_lower(k1, d1, population=big1, draws=n1), dtype=float)
        else:
            caught = np.asarray(cp_lower(k1, n1, d1), dtype=float) * big1  # in items: N·p1·L
        return np.floor(caught * (1 - rho) / rho + 1e-9).astype(np.int64)

    def binomial_n0(tol: np.ndarray) -> np.ndarray:
        """i.i.d. sizes for ``r ≤ tol/N``: exact with replacement, a quick stand-in without (the
        exact hypergeometric search is slow for large pools; it runs on the best few only)."""
        out = np.zeros(tol.shape, dtype=np.int64)
        census = tol <= 0  # only without replacement: MU ≤ 0 needs the whole pool
        out[census] = big0
        part = (tol > 0) & (tol < big0)
        if np.any(part):
            out[part] = np.atleast_1d(plan_missed_mass((tol[part] / big_n).tolist(), d0, p0=big0 / big_n,
                                                       tolerated=tolerated).value)
        return out

    hi = big1 if finite else max(big1, 100_000)
    grid = np.unique(np.round(np.geomspace(1, hi, 80)).astype(np.int64))
    found: dict[int, tuple[int, int]] = {}  # n1 -> (tolerance, i.i.d. n0)
    for _ in range(2):  # a coarse grid, then a fine one around the best point
        tol = tolerance(grid)
        ok = (tol >= tolerated) & ((tol > 0) | finite)  # i.i.d.: r ≤ 0 is never certified
        for n1, t, n0 in zip(grid[ok].tolist(), tol[ok].tolist(), binomial_n0(tol[ok]).tolist(), strict=True):
            found[n1] = (t, n0)
        if not found:
            break
        best_n1 = min(found, key=lambda n: (found[n][1] + n, n))
        grid = np.linspace(max(1, best_n1 // 2), min(hi, best_n1 * 2), 120).round().astype(np.int64)
        grid = np.unique(grid)
    if found:
        shortlist = sorted(found, key=lambda n: (found[n][1] + n, n))[:5]
        tols = np.array([found[n][0] for n in shortlist], dtype=np.int64)
        n0s = np.array([found[n][1] for n in shortlist], dtype=np.int64)
        exact = finite & (tols < big0)
        if np.any(exact):
            n0s[exact] = np.atleast_1d(plan_hypergeometric(tols[exact].tolist(), d0, population=big0,
                                                           tolerated=tolerated).value)
        n0s[tols >= big0] = 0
        best = min((int(n0) + n1, n1, int(n0)) for n1, n0 in zip(shortlist, n0s.tolist(), strict=True))
    return None if best is None else (best[2], best[1])
