"""Certificates for a pre-specified family of nested prefixes (Sections 3, 4.7, 4.8 of the audit paper).

A ranked list cut at depths ``k_1 < … < k_M`` (or a union of components cut after
``t_1 < … < t_M`` components) gives prefix generators ``g_1, …, g_M`` with nested excluded pools
``E_1 ⊇ E_2 ⊇ … ⊇ E_M``; list them in that order (``g_1`` the smallest candidate set). Each pool
must lie inside the one before it, as the cuts of one ranked list's do, not merely be smaller: the
bounds rest on it (:func:`_running_least`), and for pools that are not nested only
``details["own_bounds"]`` hold. Inputs that contradict the nesting are refused: excluded masses
``p0`` and sizes ``N0`` must be non-increasing, and so must the effective sizes and counts of a
shared reference sample (a draw in ``E_3`` also lies in ``E_1``). Two questions, two kinds of
tools:

* **How much relevant mass does each cut leave behind?** Simultaneous upper bounds for all
  prefixes at once, valid for any target chosen afterwards (each bound the least of its own
  inversion and those of the prefixes before it: :func:`_running_least`):
  :func:`prefix_bounds_separate` (Corollary 16, one excluded-pool audit per prefix) and
  :func:`prefix_bounds_separate_finite` (its exact finite-corpus form, Theorem 8 per prefix);
  :func:`prefix_bounds_shared` (Theorem 17, one reference sample shared by all prefixes) and
  :func:`prefix_bounds_shared_finite` (Corollary 18). :func:`choose_prefix` then applies the
  bicriteria rule (Eq. 1): the least-burden prefix whose bound meets the target.
* **Which cut meets a target fixed in advance?** :func:`fixed_sequence` and
  :func:`fixed_sequence_finite` (Theorem 19) test the prefixes from the largest candidate set
  down at the full level ``δ`` each, with no ``δ/M`` split, and return one prefix or none.

All functions are pure and return a :class:`~rankcut.certify.result.Certificate`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.certify._validate import (
    SUM_RTOL,
    allocation,
    as_family,
    check_corpus_size,
    check_count,
    check_delta,
    check_number,
    check_within,
    member_allocation,
    member_names,
    same_size,
    shown,
)
from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.result import (
    Certificate,
    certificate_function,
    confidence_text,
    format_bound,
    recompute,
    theorem_of,
)

__all__ = [
    "choose_prefix",
    "fixed_sequence",
    "fixed_sequence_finite",
    "prefix_bounds_separate",
    "prefix_bounds_separate_finite",
    "prefix_bounds_shared",
    "prefix_bounds_shared_finite",
    "shared_reference_counts",
]

# Registry names of the simultaneous family certificates that choose_prefix accepts.
_SIMULTANEOUS = ("prefix_bounds_separate", "prefix_bounds_separate_finite", "prefix_bounds_shared",
                 "prefix_bounds_shared_finite")


def _simultaneous(function: str) -> str:
    """The result a simultaneous family certificate implements, as ``choose_prefix`` cites it."""
    if function == "prefix_bounds_separate_finite":
        return f"{theorem_of('prefix_bounds_separate')} with {theorem_of('excluded_pool_finite')} per prefix"
    return theorem_of(function)


# ---------------------------------------------------------------------------------------------
# input handling


def _check_p0(p0: NDArray[np.float64], sizes: NDArray[np.int64], what: str,
              names: list[str]) -> None:
    outside = (p0 < 0) | (p0 > 1)
    if np.any(outside):
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"p0 must lie in [0, 1], got p0[{i}]={shown(p0[i])} ({names[i]})")
    bad = np.flatnonzero((p0 == 0) & (sizes > 0))
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"{names[i]} has p0=0 (an empty excluded pool) but {what}[{i}]={sizes[i]}: no item "
            "can be drawn from it"
        )


def _nested(values: NDArray[Any], name: str, labels: list[str], why: str = "") -> None:
    """Nested excluded pools ``E_1 ⊇ … ⊇ E_M`` (prefixes listed smallest candidate set first)
    make ``values`` non-increasing; ``why`` says what else shrinks with the pools."""
    grows = np.flatnonzero(np.diff(values) > 0)
    if grows.size:
        i = int(grows[0])
        raise ValueError(
            f"{name} must be non-increasing along the prefixes (nested excluded pools "
            f"E_1 ⊇ … ⊇ E_M, smallest candidate set first{why}), but {name}[{i}]="
            f"{shown(values[i])} ({labels[i]}) < {name}[{i + 1}]={shown(values[i + 1])} "
            f"({labels[i + 1]})"
        )


# A shared reference draw in E_{m+1} is also in E_m, so the effective sizes and counts shrink too.
_SHARED_WHY = "; a reference draw in E_m+1 also lies in E_m"


def _family_inputs(
    counts: ArrayLike, sizes: ArrayLike, size_name: str, pools: ArrayLike, pool_name: str,
    delta: float, names: Sequence[str] | None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[Any], float, list[str]]:
    """The opening every certificate of this module shares: counts ``K_m``, (effective) sizes and
    the pools (masses ``p0``, or sizes ``N0`` when ``pool_name`` is ``"excluded_sizes"``) as 1-D
    arrays with one entry per prefix, then the checked ``δ`` and the prefix names ``g1..gM``."""
    k, _ = as_family(counts, "counts", integer=True, scalar=False)
    n, _ = as_family(sizes, size_name, integer=True, scalar=False)
    if pool_name == "excluded_sizes" and isinstance(pools, float) and 0 < pools < 1:   # δ given third
        raise ValueError(f"excluded_sizes, the third argument, is the excluded pools' sizes N0(g_m), one per "
                         f"prefix, got {pools!r}: δ comes after them (or as delta={pools!r})")
    x, _ = as_family(pools, pool_name, integer=pool_name == "excluded_sizes", scalar=False)
    same_size(k.size, "prefixes", **{size_name: n, pool_name: x})
    return k, n, x, check_delta(delta), member_names(names, k.size, unit="prefix", numbered=True)


def _check_separate(k: NDArray[np.int64], n: NDArray[np.int64], pools: NDArray[Any], pool_name: str,
                    labels: list[str]) -> None:
    """Per-prefix audits (Corollary 16, Theorem 19): ``K_m ≤ n_m``, then ``n_m ≤ N0(g_m)`` or the
    checks on ``p0``, and pools non-increasing along the nested family."""
    check_within(k, n, "counts", "sizes", labels)
    if pool_name == "p0":
        _check_p0(pools, n, "sizes", labels)
    else:
        check_within(n, pools, "sizes", pool_name, labels)
    _nested(pools, pool_name, labels)


def _nested_shared(k: NDArray[np.int64], n: NDArray[np.int64], labels: list[str]) -> None:
    """One shared reference sample (Theorem 17, Corollary 18): a draw in ``E_{m+1}`` also lies in
    ``E_m``, so effective sizes, counts and non-relevant draws all shrink along the family."""
    _nested(n, "effective_sizes", labels, _SHARED_WHY)
    _nested(k, "counts", labels, _SHARED_WHY)
    _nested(n - k, "effective_sizes - counts", labels, _SHARED_WHY)


def _rounded(values: Sequence[Any], side: str) -> str:
    """The bounds, rounded to the safe side: ``(0.0042, 0.0061)``, or ``87`` for a family of one."""
    return format_bound(values[0] if len(values) == 1 else tuple(values), side)


# ---------------------------------------------------------------------------------------------
# simultaneous bounds


def _running_least(own: NDArray[Any]) -> NDArray[Any]:
    """Each prefix's bound as the least of its own and those of the smaller candidate sets before it.

    Valid on the simultaneous event the family's bounds hold on: the pools are nested
    (``E_m ⊆ E_i`` for ``i < m``), so what ``E_m`` holds, ``E_i`` holds too, and ``M0(g_m) ≤ M0(g_i)
    ≤ MU_i`` (``r(g_m) ≤ r(g_i)`` for masses). Without it a small audit of a later prefix could be
    printed with a larger bound than an earlier one (``M0 ≤ (1150, 1396, 838)``, a stop-55 walk)."""
    return np.minimum.accumulate(own)


def _family_certificate(
    *, function: str, quantity: str, value: tuple[Any, ...], alloc: NDArray[np.float64],
    delta: float, names: list[str], inputs: dict[str, Any], claim: str, details: dict[str, Any],
) -> Certificate:
    """A simultaneous upper bound for every prefix at once (Corollaries 16 and 18, Theorem 17),
    one error share per prefix; ``claim`` completes the statement."""
    return Certificate(
        quantity=quantity,
        side="upper",
        value=value,
        theorem=theorem_of(function),
        function=function,
        inputs=inputs,
        allocation=member_allocation(names, alloc),
        delta=delta,
        statement=f"With simultaneous confidence {confidence_text(delta)}, {claim}.",
        details=details,
    )


def _binomial_family(
    *, function: str, counts: NDArray[np.int64], sizes: NDArray[np.int64],
    size_name: str, p0: NDArray[np.float64], alloc: NDArray[np.float64], delta: float,
    names: list[str], inputs: dict[str, Any], extra: dict[str, Any],
) -> Certificate:
    eta = np.atleast_1d(cp_upper(counts, sizes, alloc))
    own = p0 * eta
    value = tuple(float(v) for v in _running_least(own))
    return _family_certificate(
        function=function, quantity="r", value=value, alloc=alloc, delta=delta, names=names,
        inputs=inputs,
        claim=(f"the missed relevant mass{'es' * (len(names) > 1)} of {', '.join(names)} "
               f"{'are' if len(names) > 1 else 'is'} at most {_rounded(value, 'upper')}"),
        details={
            "names": names,
            "eta_upper": tuple(float(v) for v in eta),
            "own_bounds": tuple(float(v) for v in own),
            "p0": p0.tolist(),
            "counts": counts.tolist(),
            size_name: sizes.tolist(),
            **extra,
        },
    )


def _finite_family(
    *, function: str, counts: NDArray[np.int64], sizes: NDArray[np.int64],
    size_name: str, excluded: NDArray[np.int64], alloc: NDArray[np.float64], delta: float,
    names: list[str], corpus_size: int | None, inputs: dict[str, Any], extra: dict[str, Any],
) -> Certificate:
    own = np.atleast_1d(hypergeom_upper(counts, alloc, population=excluded, draws=sizes))
    value = tuple(int(v) for v in _running_least(own))
    details: dict[str, Any] = {
        "names": names,
        "own_bounds": tuple(int(v) for v in own),
        "counts": counts.tolist(),
        size_name: sizes.tolist(),
        "excluded_sizes": excluded.tolist(),
        **extra,
    }
    r_text = ""
    if corpus_size is not None:
        details["r_upper"] = tuple(v / corpus_size for v in value)
        r_text = (f", missed masses r = M0/N (N = {corpus_size}) of at most "
                  f"{_rounded(details['r_upper'], 'upper')}")
    return _family_certificate(
        function=function, quantity="M0", value=value, alloc=alloc, delta=delta, names=names,
        inputs=inputs,
        claim=(f"the excluded pool{'s' * (len(names) > 1)} of {', '.join(names)} "
               f"hold{'s' * (len(names) == 1)} at most {_rounded(value, 'upper')} relevant items{r_text}"),
        details=details,
    )


@certificate_function("prefix_bounds_separate", theorem="Corollary 16")
def prefix_bounds_separate(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    p0: ArrayLike,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Simultaneous bounds from separate excluded-pool audits (Corollary 16).

    For each prefix ``g_m``, ``n_m = sizes[m]`` items were drawn i.i.d. from its excluded pool
    ``E_m = {g_m = 0}`` and ``K_m = counts[m]`` were relevant. With probability ``≥ 1 − δ``,
    ``η(g_m) ≤ U_{n_m}(K_m, δ_m)`` and ``r(g_m) ≤ p0(g_m)·U_{n_m}(K_m, δ_m)`` for every ``m`` at
    once, where ``Σ δ_m ≤ δ`` (default ``δ_m = δ/M``). A prefix with ``p0 = 0`` has the trivial
    bound 0 (Remark 5); ``n_m = 0`` gives ``U_0(0, ·) = 1`` (Lemma 6).

    §8: ``counts=[0, 0, 0]``, ``sizes=[300]*3``, ``p0=[0.85, 0.70, 0.62]``, ``δ = 0.05`` give
    ``U_300(0, 0.05/3) ≈ 0.013555`` and bounds 0.0116, 0.00949, 0.00841 (rounded up).

    :param counts: relevant items found per prefix, shape ``[M]``.
    :param sizes: audit sizes ``n_m``, shape ``[M]``.
    :param p0: excluded-pool masses ``p0(g_m)`` in [0, 1] (``N0(g_m)/N`` in a finite corpus),
        non-increasing (nested pools).
    :param delta: total error probability.
    :param deltas: optional per-prefix shares ``δ_m > 0`` with ``Σ δ_m ≤ δ``.
    :param names: optional prefix names (default ``g1..gM``).
    :returns: ``quantity="r"``, ``value`` = tuple of upper bounds on ``r(g_m)``, each the least of
        its own (``details["own_bounds"]``) and the earlier prefixes' (:func:`_running_least`);
        ``details["eta_upper"]`` the bounds on ``η(g_m)``.
    """
    k, n, p, delta, labels = _family_inputs(counts, sizes, "sizes", p0, "p0", delta, names)
    alloc = allocation(deltas, delta, k.size, units="prefixes", scalar=False)
    _check_separate(k, n, p, "p0", labels)
    inputs = {
        "counts": k.tolist(), "sizes": n.tolist(), "p0": p.tolist(), "delta": delta,
        "deltas": None if deltas is None else alloc.tolist(),
        "names": None if names is None else labels,
    }
    return _binomial_family(
        function="prefix_bounds_separate", counts=k, sizes=n,
        size_name="sizes", p0=p, alloc=alloc, delta=delta, names=labels, inputs=inputs, extra={},
    )


@certificate_function(
    "prefix_bounds_separate_finite",
    theorem="Corollary 16 (finite corpus: Theorem 8 per prefix)",
)
def prefix_bounds_separate_finite(
    counts: ArrayLike,
    sizes: ArrayLike,
    excluded_sizes: ArrayLike,
    delta: float = 0.05,
    *,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
    corpus_size: int | None = None,
) -> Certificate:
    """Simultaneous finite-corpus bounds from separate audits (Corollary 16 with Theorem 8).

    For each prefix, ``n_m`` items were drawn uniformly without replacement from its excluded
    pool of ``N0(g_m)`` items and ``K_m`` were relevant. With probability ``≥ 1 − δ``,
    ``M0(g_m) ≤ MU(K_m, δ_m; N0(g_m), n_m)`` for every ``m``, each inversion with the prefix's
    own pool size.

    :param counts: relevant items found per prefix.
    :param sizes: audit sizes ``n_m ≤ N0(g_m)``.
    :param excluded_sizes: excluded-pool sizes ``N0(g_m)``, non-increasing (nested pools).
    :param delta: total error probability.
    :param deltas: optional shares ``δ_m`` with ``Σ δ_m ≤ δ`` (default ``δ/M``).
    :param names: optional prefix names.
    :param corpus_size: optional corpus size ``N``; adds ``details["r_upper"] = MU/N``.
    :returns: ``quantity="M0"``, ``value`` = tuple of upper bounds on the missed counts, each the
        least of its own (``details["own_bounds"]``) and the earlier prefixes' (:func:`_running_least`).
    """
    k, n, big, delta, labels = _family_inputs(counts, sizes, "sizes", excluded_sizes, "excluded_sizes",
                                              delta, names)
    alloc = allocation(deltas, delta, k.size, units="prefixes", scalar=False)
    _check_separate(k, n, big, "excluded_sizes", labels)
    n_corpus = None if corpus_size is None else check_corpus_size(corpus_size, int(big.max()))
    inputs = {
        "counts": k.tolist(), "sizes": n.tolist(), "excluded_sizes": big.tolist(), "delta": delta,
        "deltas": None if deltas is None else alloc.tolist(),
        "names": None if names is None else labels, "corpus_size": n_corpus,
    }
    return _finite_family(
        function="prefix_bounds_separate_finite", counts=k, sizes=n,
        size_name="sizes", excluded=big, alloc=alloc, delta=delta, names=labels,
        corpus_size=n_corpus, inputs=inputs, extra={},
    )


def shared_reference_counts(
    excluded: ArrayLike, relevant: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Effective sizes and counts of a shared reference sample (the sums of Theorem 17).

    :param excluded: boolean array of shape ``[Q, M]``; ``excluded[i, m]`` is true when reference
        draw ``Z_i`` lies in the excluded pool ``E_m`` of prefix ``g_m``.
    :param relevant: boolean array of shape ``[Q]``, the audit label ``φ⋆(Z_i)`` of each draw.
    :returns: ``(effective_sizes, counts)``, each of shape ``[M]``:
        ``n_eff_m = Σ_i 1{Z_i ∈ E_m}`` and ``K_m = Σ_i 1{Z_i ∈ E_m, φ⋆(Z_i) = 1}``.
    """
    ex = np.asarray(excluded)
    rel = np.asarray(relevant)
    if ex.ndim != 2:
        raise ValueError(f"excluded must have shape [Q, M], got shape {ex.shape}")
    if rel.shape != (ex.shape[0],):
        raise ValueError(f"relevant must have shape [Q] = [{ex.shape[0]}], got shape {rel.shape}")
    for name, arr in (("excluded", ex), ("relevant", rel)):
        if arr.dtype.kind != "b" and not np.isin(arr, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (or 0/1)")
    ex = ex.astype(bool)
    rel = rel.astype(bool)
    return ex.sum(axis=0).astype(np.int64), (ex & rel[:, None]).sum(axis=0).astype(np.int64)


@certificate_function("prefix_bounds_shared", theorem="Theorem 17")
def prefix_bounds_shared(
    counts: ArrayLike,
    effective_sizes: ArrayLike,
    delta: float = 0.05,
    *,
    p0: ArrayLike,
    reference_size: int,
    reference_mass: float = 1.0,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Simultaneous bounds from one shared reference sample (Theorem 17).

    A reference pool ``R`` with ``P(R) = reference_mass > 0`` contains every excluded pool
    (``E_m ⊆ R``; e.g. ``R = X`` with mass 1, or ``R = E_1`` with mass ``p0(g_1)``).
    ``Q = reference_size`` items ``Z_1..Z_Q`` were drawn i.i.d. from ``P(· | R)`` and all were
    labelled. ``n_eff_m`` is the number of draws that fell in ``E_m`` and ``K_m`` the number of
    those that are relevant (see :func:`shared_reference_counts`). With probability ``≥ 1 − δ``,
    ``r(g_m) ≤ p0(g_m)·U_{n_eff_m}(K_m, δ/M)`` for every ``m``; ``n_eff_m = 0`` gives the
    trivial ``U_0(0, ·) = 1`` (Lemma 6). The sizes are random, yet the guarantee is
    unconditional. Unequal shares ``δ_m`` with ``Σ δ_m ≤ δ`` are allowed (same union bound). Each
    ``value`` is the least of its own bound (``details["own_bounds"]``) and the earlier prefixes'
    (:func:`_running_least`).

    ``details["expected_effective_sizes"] = Q·p0(g_m)/P(R)`` helps plan ``Q``: nested prefixes
    leave the last prefix with the fewest effective draws.

    :param counts: relevant items among the draws in each ``E_m``, non-increasing (a draw in ``E_{m+1}``
        also lies in ``E_m``).
    :param effective_sizes: ``n_eff_m``, draws falling in each ``E_m``, non-increasing.
    :param p0: excluded-pool masses ``p0(g_m) = P(E_m) ≤ P(R)``, non-increasing.
    :param delta: total error probability.
    :param reference_size: ``Q``, the number of reference draws.
    :param reference_mass: ``P(R)`` in (0, 1].
    :param deltas: optional shares (default ``δ/M``).
    :param names: optional prefix names.
    """
    k, n, p, delta, labels = _family_inputs(counts, effective_sizes, "effective_sizes", p0, "p0", delta,
                                            names)
    alloc = allocation(deltas, delta, k.size, units="prefixes", scalar=False)
    q = check_count(reference_size, "reference_size")
    mass = check_number(reference_mass, "reference_mass")
    if not 0.0 < mass <= 1.0:
        raise ValueError(f"reference_mass must lie in (0, 1], got {shown(reference_mass)}")
    check_within(k, n, "counts", "effective_sizes", labels)
    _check_p0(p, n, "effective_sizes", labels)
    check_within(n, q, "effective_sizes", "reference_size", labels)
    _nested(p, "p0", labels)
    _nested_shared(k, n, labels)
    bad = np.flatnonzero(p > mass * (1 + SUM_RTOL))
    if bad.size:
        i = bad[0]
        raise ValueError(
            f"p0[{i}]={shown(p[i])} exceeds reference_mass={mass!r}: every excluded pool must lie in "
            f"the reference pool R ({labels[i]})"
        )
    inputs = {
        "counts": k.tolist(), "effective_sizes": n.tolist(), "p0": p.tolist(), "delta": delta,
        "reference_size": q, "reference_mass": mass,
        "deltas": None if deltas is None else alloc.tolist(),
        "names": None if names is None else labels,
    }
    return _binomial_family(
        function="prefix_bounds_shared", counts=k, sizes=n,
        size_name="effective_sizes", p0=p, alloc=alloc, delta=delta, names=labels,
        inputs=inputs,
        extra={"reference_size": q, "reference_mass": mass,
               "expected_effective_sizes": (q * p / mass).tolist()},
    )


@certificate_function("prefix_bounds_shared_finite", theorem="Corollary 18")
def prefix_bounds_shared_finite(
    counts: ArrayLike,
    effective_sizes: ArrayLike,
    excluded_sizes: ArrayLike,
    delta: float = 0.05,
    *,
    reference_size: int,
    reference_pool_size: int,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
    corpus_size: int | None = None,
) -> Certificate:
    """Finite-corpus shared-reference bounds (Corollary 18).

    A reference pool ``R`` of ``reference_pool_size`` items contains every excluded pool ``E_m``
    (of ``N0(g_m)`` items). ``Q = reference_size`` items were drawn uniformly without replacement
    from ``R`` and labelled; ``n_eff_m`` of them fell in ``E_m`` and ``K_m`` of those are relevant.
    With probability ``≥ 1 − δ``, ``M0(g_m) ≤ MU(K_m, δ/M; N0(g_m), n_eff_m)`` for every ``m``;
    ``n_eff_m = 0`` gives the trivial bound ``N0(g_m)``. Each ``value`` is the least of its own bound
    (``details["own_bounds"]``) and the earlier prefixes' (:func:`_running_least`).

    :param counts: relevant items among the draws in each ``E_m``, non-increasing.
    :param effective_sizes: ``n_eff_m``, non-increasing.
    :param excluded_sizes: ``N0(g_m) ≤ |R|``, non-increasing.
    :param delta: total error probability.
    :param reference_size: ``Q ≤ |R|``.
    :param reference_pool_size: ``|R|``.
    :param deltas: optional shares (default ``δ/M``).
    :param names: optional prefix names.
    :param corpus_size: optional corpus size ``N``; adds ``details["r_upper"] = MU/N``.
    """
    k, n, big, delta, labels = _family_inputs(counts, effective_sizes, "effective_sizes", excluded_sizes,
                                              "excluded_sizes", delta, names)
    m = k.size
    alloc = allocation(deltas, delta, m, units="prefixes", scalar=False)
    pool = check_count(reference_pool_size, "reference_pool_size", 1)
    q = check_count(reference_size, "reference_size")
    if q > pool:
        raise ValueError(f"reference_size={q} exceeds reference_pool_size={pool}")
    check_within(k, n, "counts", "effective_sizes", labels)
    _nested(big, "excluded_sizes", labels)
    _nested_shared(k, n, labels)
    for i in range(m):
        if big[i] > pool:
            raise ValueError(
                f"excluded_sizes[{i}]={big[i]} exceeds reference_pool_size={pool}: every excluded "
                f"pool must lie in the reference pool R ({labels[i]})"
            )
        if n[i] > min(q, big[i]):
            raise ValueError(
                f"effective_sizes[{i}]={n[i]} exceeds min(reference_size, excluded_sizes[{i}]) = "
                f"{min(q, big[i])} ({labels[i]})"
            )
        if q - n[i] > pool - big[i]:
            raise ValueError(
                f"{q - n[i]} draws outside E_{i + 1} but R holds only {pool - big[i]} items "
                f"outside it ({labels[i]}): check effective_sizes[{i}]"
            )
    n_corpus = None if corpus_size is None else check_corpus_size(corpus_size, pool, "reference pool R")
    inputs = {
        "counts": k.tolist(), "effective_sizes": n.tolist(), "excluded_sizes": big.tolist(),
        "delta": delta, "reference_size": q, "reference_pool_size": pool,
        "deltas": None if deltas is None else alloc.tolist(),
        "names": None if names is None else labels, "corpus_size": n_corpus,
    }
    return _finite_family(
        function="prefix_bounds_shared_finite", counts=k, sizes=n,
        size_name="effective_sizes", excluded=big, alloc=alloc, delta=delta, names=labels,
        corpus_size=n_corpus, inputs=inputs,
        extra={"reference_size": q, "reference_pool_size": pool,
               "expected_effective_sizes": (q * big / pool).tolist()},
    )


# ---------------------------------------------------------------------------------------------
# bicriteria choice (Eq. 1)


@certificate_function("choose_prefix", theorem="Eq. 1")
def choose_prefix(
    certificate: Certificate | Mapping[str, Any], burdens: ArrayLike, *, at_most: float
) -> Certificate:
    """Least-burden prefix whose simultaneous upper bound meets the target (Eq. 1, Section 3).

    ``minimise B(g) subject to U(g) ≤ at_most, g ∈ G``. Because the bounds hold simultaneously
    with probability ``≥ 1 − δ``, the member picked after seeing them still satisfies its bound
    with that probability, and the target may be chosen after the audit. Ties in burden go to
    the earlier prefix.

    :param certificate: a simultaneous family certificate from :func:`prefix_bounds_separate`,
        :func:`prefix_bounds_separate_finite`, :func:`prefix_bounds_shared` or
        :func:`prefix_bounds_shared_finite` (object or its ``to_dict()``). It is recomputed from
        its inputs, and a value that does not match is rejected.
    :param burdens: review burden of each prefix, e.g. ``B(g_m) = p1(g_m)`` or the included-pool
        size ``N1(g_m)``; any non-negative numbers, lower is cheaper.
    :param at_most: the target on the bound, in the units of the certificate's value: a mass
        ``ε > 0`` for ``r``, a number of items ``≥ 0`` for ``M0`` (0: nothing missed, which a bound
        of 0 meets). Keyword-only, and not called ``target``, which names a recall target elsewhere.
    :returns: ``side="choice"``, ``value`` = the chosen prefix name, or ``None`` when no prefix
        meets the target; ``details["table"]`` lists every prefix with burden, bound and verdict.
    """
    cert = certificate if isinstance(certificate, Certificate) else Certificate.from_dict(certificate)
    if cert.function not in _SIMULTANEOUS:
        raise ValueError(
            f"certificate must come from one of {sorted(_SIMULTANEOUS)}, got {cert.function!r}"
        )
    fresh = recompute(cert)
    if fresh.to_dict()["value"] != cert.to_dict()["value"]:
        raise ValueError("certificate value does not match a recomputation from its inputs")
    bounds = np.asarray(fresh.value, dtype=float)
    labels = list(fresh.details["names"])
    b, _ = as_family(burdens, "burdens", integer=False, scalar=False)
    same_size(bounds.size, "prefixes", burdens=b)
    if np.any(b < 0):
        raise ValueError(f"burdens must be >= 0, got {b[b < 0][0].item()!r}")
    eps = check_number(at_most, "at_most")
    if fresh.quantity == "r" and eps <= 0:
        raise ValueError(f"at_most must be a missed mass > 0, got {shown(at_most)}")
    if eps < 0:
        raise ValueError(f"at_most must be >= 0 missed items, got {shown(at_most)}")
    meets = bounds <= eps
    table = [
        {"name": labels[i], "burden": float(b[i]), "upper": fresh.value[i], "meets": bool(meets[i])}
        for i in range(bounds.size)
    ]
    unit = "r" if fresh.quantity == "r" else "M0"
    conf = confidence_text(fresh.delta) if fresh.delta is not None else "?"
    if np.any(meets):
        idx = int(np.flatnonzero(meets)[np.argmin(b[meets])])
        value: str | None = labels[idx]
        statement = (
            f"{value} is the least-burden prefix (burden {b[idx]:g}) whose simultaneous "
            f"{conf}-confidence upper bound meets {unit} ≤ {eps:g}: "
            f"{unit}({value}) ≤ {format_bound(fresh.value[idx], 'upper')}."
        )
    else:
        idx = -1
        value = None
        best = int(np.argmin(bounds))
        statement = (
            f"no prefix meets {unit} ≤ {eps:g} at confidence {conf}: the smallest simultaneous "
            f"upper bound is {format_bound(fresh.value[best], 'upper')} ({labels[best]})."
        )
    return Certificate(
        quantity="prefix",
        side="choice",
        value=value,
        theorem=f"{theorem_of('choose_prefix')} (Section 3) with {_simultaneous(cert.function)}",
        function="choose_prefix",
        inputs={"certificate": fresh.to_dict(), "burdens": b.tolist(), "at_most": eps},
        allocation=dict(fresh.allocation),
        delta=fresh.delta,
        statement=statement,
        details={"index": None if idx < 0 else idx, "table": table, "bounded": unit},
    )


# ---------------------------------------------------------------------------------------------
# fixed-sequence certification (Theorem 19)


def _fixed_sequence_result(
    *, function: str, bounds: Sequence[Any], passed: NDArray[np.bool_], labels: list[str],
    target_text: str, side_text: str, delta: float, inputs: dict[str, Any],
) -> Certificate:
    m = len(labels)
    tests: list[dict[str, Any]] = []
    chosen: str | None = None
    for i in range(m - 1, -1, -1):  # g_M first, then down towards g_1
        tests.append({"name": labels[i], "upper": bounds[i], "passed": bool(passed[i])})
        if not passed[i]:
            break
        chosen = labels[i]
    if chosen is None:
        statement = (
            f"{labels[-1]}, the largest candidate set, is not certified at {side_text} ≤ "
            f"{target_text} (level {delta:g}); no prefix is returned."
        )
    else:
        statement = (
            f"Fixed-sequence testing from {labels[-1]} down returns {chosen}: with probability "
            f"≥ {confidence_text(delta)} the procedure returns no prefix or one with {side_text} ≤ "
            f"{target_text} (Theorem 19), so {chosen} is certified at that confidence."
        )
    return Certificate(
        quantity="prefix",
        side="choice",
        value=chosen,
        theorem=theorem_of(function),
        function=function,
        inputs=inputs,
        allocation={"each_test": delta},
        delta=delta,
        statement=statement,
        details={"tests": tests, "order": [t["name"] for t in tests]},
    )


@certificate_function("fixed_sequence", theorem="Theorem 19")
def fixed_sequence(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    p0: ArrayLike,
    epsilon: float,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Fixed-sequence certification of nested prefixes against a pre-set target (Theorem 19).

    Prefixes are listed ``g_1..g_M`` with nested excluded pools ``E_1 ⊇ … ⊇ E_M`` (so ``p0`` is
    non-increasing). Test ``pass_m: p0(g_m)·U_{n_m}(K_m, δ) ≤ ε`` — a level-``δ`` certificate,
    no ``δ/M`` split — in the order ``g_M, g_{M−1}, …, g_1``. If ``g_M`` fails, return none;
    otherwise continue down until the first failure and return the last prefix that passed
    (``g_1`` if all pass). With probability ``≥ 1 − δ``, either none is returned or the returned
    prefix has ``r(g) ≤ ε``. Only the selected prefix is certified, and only against this ``ε``
    (Remark 21); ``ε`` and the prefixes must be fixed before the labels are seen.

    The audits may be separate (``sizes`` = ``n_m``) or one shared reference sample (``sizes`` =
    effective sizes ``n_eff_m``; ``n_eff_m = 0`` gives ``U = 1`` by Lemma 6): the proof uses
    only the marginal level of the single boundary test.

    :param counts: relevant items found per prefix.
    :param sizes: audit sizes (or effective sizes) per prefix.
    :param p0: excluded-pool masses, non-increasing.
    :param epsilon: pre-set target on ``r``, ``> 0``.
    :param delta: level of each test.
    :param names: optional prefix names.
    :returns: ``side="choice"``, ``value`` = chosen name or ``None``; ``details["tests"]`` the
        tests performed, in order, with their bounds and outcomes.
    """
    k, n, p, delta, labels = _family_inputs(counts, sizes, "sizes", p0, "p0", delta, names)
    eps = check_number(epsilon, "epsilon")
    if eps <= 0:
        raise ValueError(f"epsilon must be > 0, got {shown(epsilon)}")
    _check_separate(k, n, p, "p0", labels)
    bounds = p * np.atleast_1d(cp_upper(k, n, delta))
    inputs = {
        "counts": k.tolist(), "sizes": n.tolist(), "p0": p.tolist(), "epsilon": eps,
        "delta": delta, "names": None if names is None else labels,
    }
    return _fixed_sequence_result(
        function="fixed_sequence", bounds=[float(v) for v in bounds], passed=bounds <= eps,
        labels=labels, target_text=f"{eps:g}", side_text="r", delta=delta, inputs=inputs,
    )


@certificate_function("fixed_sequence_finite", theorem="Theorem 19")
def fixed_sequence_finite(
    counts: ArrayLike,
    sizes: ArrayLike,
    excluded_sizes: ArrayLike,
    delta: float = 0.05,
    *,
    max_missed: int,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Finite-corpus fixed-sequence certification (Theorem 19 with the test of Theorem 8).

    As :func:`fixed_sequence`, with the level-``δ`` test
    ``pass_m: MU(K_m, δ; N0(g_m), n_m) ≤ max_missed`` on the missed count ``M0(g_m)``; ``sizes``
    may be separate without-replacement audit sizes or the effective sizes of one shared
    without-replacement reference sample (Corollary 18's conditioning argument).

    :param counts: relevant items found per prefix.
    :param sizes: audit sizes (or effective sizes), ``≤ N0(g_m)``.
    :param excluded_sizes: ``N0(g_m)``, non-increasing (nested pools).
    :param max_missed: pre-set target on ``M0``, ``≥ 0``.
    :param delta: level of each test.
    :param names: optional prefix names.
    """
    k, n, big, delta, labels = _family_inputs(counts, sizes, "sizes", excluded_sizes, "excluded_sizes",
                                              delta, names)
    target = check_count(max_missed, "max_missed")
    _check_separate(k, n, big, "excluded_sizes", labels)
    mu = np.atleast_1d(hypergeom_upper(k, delta, population=big, draws=n))
    inputs = {
        "counts": k.tolist(), "sizes": n.tolist(), "excluded_sizes": big.tolist(),
        "max_missed": target, "delta": delta, "names": None if names is None else labels,
    }
    return _fixed_sequence_result(
        function="fixed_sequence_finite", bounds=[int(v) for v in mu], passed=mu <= target,
        labels=labels, target_text=str(target), side_text="M0", delta=delta, inputs=inputs,
    )


REFERENCES = ("shared", "separate")


def prefix_bounds(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    method: str,
    reference: str,
    excluded_sizes: ArrayLike | None = None,
    p0: ArrayLike | None = None,
    reference_size: int | None = None,
    reference_pool_size: int | None = None,
    reference_mass: float = 1.0,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
    corpus_size: int | None = None,
) -> Certificate:
    """Simultaneous bounds for a nested family by ``method`` (``"finite"``: draws without replacement
    from pools of ``excluded_sizes``; ``"binomial"``: i.i.d. draws, masses ``p0``) and ``reference``
    (``"shared"``: one reference sample of ``reference_size`` draws; ``"separate"``: one sample per
    member): :func:`prefix_bounds_shared_finite` (Corollary 18), :func:`prefix_bounds_separate_finite`
    (Corollary 16 with Theorem 8), :func:`prefix_bounds_shared` (Theorem 17) or
    :func:`prefix_bounds_separate` (Corollary 16)."""
    from rankcut.certify.excluded import _method

    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {', '.join(REFERENCES)}, got {reference!r}")
    if _method(method) == "finite":
        if reference == "shared":
            assert reference_size is not None and reference_pool_size is not None
            return prefix_bounds_shared_finite(counts, sizes, excluded_sizes, delta,
                                               reference_size=reference_size,
                                               reference_pool_size=reference_pool_size, deltas=deltas,
                                               names=names, corpus_size=corpus_size)
        return prefix_bounds_separate_finite(counts, sizes, excluded_sizes, delta, deltas=deltas, names=names,
                                             corpus_size=corpus_size)
    if reference == "shared":
        assert reference_size is not None
        return prefix_bounds_shared(counts, sizes, p0=p0, delta=delta, reference_size=reference_size,
                                    reference_mass=reference_mass, deltas=deltas, names=names)
    return prefix_bounds_separate(counts, sizes, p0=p0, delta=delta, deltas=deltas, names=names)


def fixed_sequence_bound(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    at_most: float,
    method: str,
    excluded_sizes: ArrayLike | None = None,
    p0: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Fixed-sequence testing (Theorem 19) by ``method``: ``"finite"`` —
    :func:`fixed_sequence_finite` (Theorem 8 tests, ``at_most`` its ``max_missed``, a count);
    ``"binomial"`` — :func:`fixed_sequence` (Theorem 7 tests, ``at_most`` its ``epsilon``, a
    missed mass). ``at_most`` is keyword-only, and its units follow ``method``, as
    :func:`choose_prefix`'s follow the certificate's."""
    from rankcut.certify.excluded import _method

    if _method(method) == "finite":
        return fixed_sequence_finite(counts, sizes, excluded_sizes, max_missed=at_most, delta=delta,
                                     names=names)
    return fixed_sequence(counts, sizes, p0=p0, epsilon=at_most, delta=delta, names=names)
