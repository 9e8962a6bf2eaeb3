"""Excluded-pool certificates for missed relevant mass (Section 4.1–4.2 of the audit paper).

Missed relevant items can only lie in the excluded pool ``{g = 0}`` (Proposition 3), so the
audit samples that pool:

* :func:`excluded_pool_certificate` — Theorem 7: ``n0(g)`` i.i.d. draws from ``P(· | g(X) = 0)``
  with ``K0(g)`` relevant give, simultaneously over a family ``G`` with ``Σ_g δ_g ≤ δ``,
  ``η(g) ≤ U_{n0}(K0(g), δ_g)`` and ``r(g) = p0(g)·η(g) ≤ p0(g)·U_{n0}(K0(g), δ_g)``.
* :func:`p0_upper_hoeffding` — when ``p0(g)`` is not known: Hoeffding and a union bound over
  ``G`` on an unlabelled sample, ``p0(g) ≤ p̂0(g) + sqrt(log(|G|/δ_p)/(2m))``.
* :func:`excluded_pool_hoeffding_certificate` — the two combined at ``δ/2 + δ/2`` (§4.1).
* :func:`excluded_pool_finite_certificate` — Theorem 8: ``n0(g)`` uniform draws without
  replacement from a finite excluded pool of ``N0(g)`` items give
  ``M0(g) ≤ MU(K0(g), δ_g; N0(g), n0(g))``; divided by the corpus size ``N`` it bounds ``r``.
* :func:`full_review_recall_certificate` — Theorem 8's recall bound when the included pool was
  reviewed in full (``M1(g)`` known): ``Recall(g) ≥ M1/(M1 + MU)``.

Family arguments take a scalar (one generator: the value is a number) or a 1-D sequence with
one entry per member (the value is a tuple). Degenerate pools follow Remark 5: ``p0(g) = 0`` or
``N0(g) = 0`` gives the trivial bound 0, an empty audit gives ``U_0(0, ·) = 1`` (Lemma 6). The
family, its error split and the audit sizes are fixed before the labels are opened
(Assumption 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.certify._validate import (
    allocation,
    as_family,
    check_corpus_size,
    check_count,
    check_delta,
    check_within,
    member_allocation,
    member_names,
    out,
    plain,
    same_size,
    shown,
)
from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.recall import recall_lower
from rankcut.certify.result import (
    READ_AS_ONE,
    Certificate,
    certificate_function,
    confidence_text,
    family_statement,
    format_bound,
    theorem_of,
)

__all__ = [
    "excluded_pool_certificate",
    "excluded_pool_finite_certificate",
    "excluded_pool_hoeffding_certificate",
    "full_review_recall_certificate",
    "p0_upper_hoeffding",
]


# ---------------------------------------------------------------------------------------------
# Theorem 7 (binomial, i.i.d. draws from the excluded pool)


def _union(labels: Sequence[str]) -> str:
    """How a family's statement says its δ is spent: one cut, no union bound."""
    return ", union bound over the family" if len(labels) > 1 else ""


@certificate_function("excluded_pool", theorem="Theorem 7")
def excluded_pool_certificate(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    p0: ArrayLike | None = None,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Excluded-pool binomial certificate for a family ``G`` (Theorem 7).

    For each ``g``, ``n0(g)`` items were drawn i.i.d. from ``P(· | g(X) = 0)`` and ``K0(g)`` were
    relevant. With probability at least ``1 − δ``, for every ``g`` at once,
    ``η(g) ≤ U_{n0}(K0(g), δ_g)`` and ``r(g) ≤ p0(g)·U_{n0}(K0(g), δ_g)``, where
    ``Σ_g δ_g ≤ δ`` (default ``δ_g = δ/|G|``). With ``K0(g) = 0`` and ``n0 ≥ 1`` the bound is
    Eq. (3): ``U = 1 − δ_g^{1/n0} ≤ log(1/δ_g)/n0`` (``log(|G|/δ)/n0`` at the default split).

    §8: ``counts=0, sizes=300, p0=0.70, delta=0.025`` gives ``U_300(0, 0.025) ≈ 0.01222`` and
    ``r(g) ≤ 0.00856``.

    :param counts: ``K0(g)``, relevant items found; a scalar or one per member.
    :param sizes: ``n0(g)``, audit sizes (0 allowed: ``U_0(0, ·) = 1``).
    :param delta: total error probability ``δ`` in (0, 1).
    :param p0: optional excluded-pool masses ``p0(g) = P(g(X) = 0)`` in [0, 1] (``N0(g)/N`` in a
        finite corpus). When given the value bounds ``r(g)``, otherwise ``η(g)``. ``p0(g) = 0``
        gives the trivial bound 0 (Remark 5) and needs ``n0(g) = 0``.
    :param deltas: optional shares ``δ_g > 0`` with ``Σ δ_g ≤ δ``, fixed before the audit.
    :param names: optional member names.
    :returns: ``quantity`` ``"r"`` (with ``p0``) or ``"eta"``; ``details`` hold both bounds and,
        for zero-count members, the closed form and its ``log`` bound.
    """
    k, scalar = as_family(counts, "counts", integer=True)
    n, n_scalar = as_family(sizes, "sizes", integer=True)
    m = k.size
    same_size(m, "members", sizes=n)
    d = check_delta(delta)
    alloc = allocation(deltas, d, m)
    labels = member_names(names, m)
    check_within(k, n, "counts", "sizes")
    p: NDArray[np.float64] | None = None
    if p0 is not None:
        p, _ = as_family(p0, "p0", integer=False)
        same_size(m, "members", p0=p)
        outside = (p < 0) | (p > 1)
        if np.any(outside):
            raise ValueError(f"p0 must lie in [0, 1], got {shown(p[outside][0])}")
        bad = np.flatnonzero((p == 0) & (n > 0))
        if bad.size:
            i = bad[0]
            raise ValueError(f"p0[{i}] = 0 (an empty excluded pool) but sizes[{i}]={n[i]}: nothing "
                             "can be drawn from it")
    scalar = scalar and n_scalar and (p0 is None or np.ndim(p0) == 0)
    eta = np.atleast_1d(cp_upper(k, n, alloc)).astype(float)
    # Eq. (3) for members with K0 = 0 and n0 >= 1 (None for the others)
    zero = (k == 0) & (n >= 1)
    exact0 = -np.expm1(np.log(alloc) / np.maximum(n, 1))  # 1 - δ_g^(1/n0), accurate for small values
    log0 = np.log(1 / alloc) / np.maximum(n, 1)
    details: dict[str, Any] = {
        "names": labels,
        "eta_upper": out(eta, scalar),
        "zero_count_exact": out(exact0, scalar, where=zero),
        "zero_count_log_bound": out(log0, scalar, where=zero),
    }
    if p is None:
        quantity, value, what = "eta", out(eta, scalar), "excluded-pool relevance rate eta"
    else:
        r = p * eta
        quantity, value, what = "r", out(r, scalar), "missed relevant mass r"
        details.update(p0=out(p, scalar), r_zero_count_exact=out(p * exact0, scalar, where=zero),
                       r_zero_count_log_bound=out(p * log0, scalar, where=zero))
    return Certificate(
        quantity=quantity,
        side="upper",
        value=value,
        theorem=theorem_of("excluded_pool"),
        function="excluded_pool",
        inputs={"counts": plain(counts, int), "sizes": plain(sizes, int), "delta": d, "p0": plain(p0),
                "deltas": plain(deltas), "names": None if names is None else labels},
        allocation=member_allocation(labels, alloc),
        delta=d,
        statement=family_statement(d, f"{what}(g)", labels, value, "upper",
                                   "Clopper-Pearson on i.i.d. excluded-pool draws" + _union(labels)),
        details=details,
    )


@certificate_function("p0_hoeffding", theorem="Section 4.1 (Hoeffding bound on p0)")
def p0_upper_hoeffding(
    excluded: ArrayLike,
    unlabelled_size: int,
    delta: float,
    *,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Upper bound on the excluded-pool mass ``p0(g)`` from an unlabelled sample (§4.1).

    ``m`` items drawn i.i.d. from ``P`` without labels, ``excluded[g]`` of them with ``g = 0``.
    By Hoeffding's inequality and a union bound over ``G``, with probability at least ``1 − δ``,
    ``p0(g) ≤ min{1, p̂0(g) + sqrt(log(|G|/δ)/(2m))}`` for every ``g``. Here ``delta`` is the
    error given to this bound alone; the paper's combined certificate spends ``δ/2`` on it,
    giving its displayed ``sqrt(log(2|G|/δ)/(2m))`` (see
    :func:`excluded_pool_hoeffding_certificate`). ``m = 0`` gives the trivial bound 1.

    :param excluded: items of the sample with ``g = 0``; a scalar or one per member.
    :param unlabelled_size: ``m``, the size of the unlabelled sample (shared by all members).
    :param delta: error probability of this bound, in (0, 1).
    :param names: optional member names.
    """
    c, scalar = as_family(excluded, "excluded", integer=True)
    mm = check_count(unlabelled_size, "unlabelled_size")
    check_within(c, mm, "excluded", "unlabelled_size")
    d = check_delta(delta)
    labels = member_names(names, c.size)
    if mm == 0:
        slack = math.inf
        upper = np.ones(c.size)
    else:
        slack = math.sqrt(math.log(c.size / d) / (2 * mm))
        upper = np.minimum(1.0, c / mm + slack)
    value = out(upper, scalar)
    return Certificate(
        quantity="p0",
        side="upper",
        value=value,
        theorem=theorem_of("p0_hoeffding"),
        function="p0_hoeffding",
        inputs={"excluded": plain(excluded, int), "unlabelled_size": mm, "delta": d,
                "names": None if names is None else labels},
        allocation={"p0 (all members)": d},
        delta=d,
        statement=family_statement(d, "excluded-pool mass p0(g)", labels, value, "upper",
                                   f"Hoeffding on {mm} unlabelled items" + _union(labels)),
        details={"names": labels, "p0_hat": out(c / max(mm, 1), scalar, where=np.full(c.size, mm > 0)),
                 "slack": slack},
    )


@certificate_function(
    "excluded_pool_hoeffding",
    theorem="Theorem 7 with the Hoeffding bound on p0 (Section 4.1)",
)
def excluded_pool_hoeffding_certificate(
    counts: ArrayLike,
    sizes: ArrayLike,
    excluded: ArrayLike,
    unlabelled_size: int,
    delta: float = 0.05,
    *,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Missed-mass certificate with ``p0(g)`` estimated from unlabelled data (§4.1, Theorem 7).

    ``δ/2`` goes to the Hoeffding bound on every ``p0(g)`` (:func:`p0_upper_hoeffding`, slack
    ``sqrt(log(2|G|/δ)/(2m))``) and ``δ/2`` to the excluded-pool audit (Theorem 7 with
    ``Σ_g δ_g ≤ δ/2``, default ``δ/(2|G|)`` each). On both events, with probability at least
    ``1 − δ``, ``r(g) ≤ min{1, p̂0(g) + slack}·U_{n0}(K0(g), δ_g)`` for every ``g``.

    :param counts: ``K0(g)``, relevant items in the excluded-pool audit.
    :param sizes: ``n0(g)``, excluded-pool audit sizes.
    :param excluded: unlabelled items with ``g = 0``, out of ``unlabelled_size``.
    :param unlabelled_size: ``m``, size of the independent unlabelled sample from ``P``.
    :param delta: total error probability ``δ``.
    :param deltas: optional audit shares ``δ_g`` with ``Σ δ_g ≤ δ/2``.
    :param names: optional member names.
    """
    d = check_delta(delta)
    k, _ = as_family(counts, "counts", integer=True)
    c, _ = as_family(excluded, "excluded", integer=True)
    same_size(k.size, "members", excluded=c)
    mass = p0_upper_hoeffding(excluded, unlabelled_size, d / 2, names=names)
    audit = excluded_pool_certificate(counts, sizes, d / 2, p0=mass.value, deltas=deltas, names=names)
    labels = list(audit.details["names"])
    return Certificate(
        quantity="r",
        side="upper",
        value=audit.value,
        theorem=theorem_of("excluded_pool_hoeffding"),
        function="excluded_pool_hoeffding",
        inputs={"counts": plain(counts, int), "sizes": plain(sizes, int), "excluded": plain(excluded, int),
                "unlabelled_size": mass.inputs["unlabelled_size"], "delta": d, "deltas": plain(deltas),
                "names": None if names is None else labels},
        allocation={"p0 (Hoeffding, all members)": d / 2,
                    **{f"audit {g}": a for g, a in audit.allocation.items()}},
        delta=d,
        statement=family_statement(d, "missed relevant mass r(g)", labels, audit.value, "upper",
                                   "Hoeffding bound on p0 at delta/2, excluded-pool audit at delta/2"),
        details={"names": labels, "p0_upper": mass.value, "p0_hat": mass.details["p0_hat"],
                 "hoeffding_slack": mass.details["slack"], "eta_upper": audit.details["eta_upper"]},
    )


# ---------------------------------------------------------------------------------------------
# Theorem 8 (hypergeometric, finite corpus)


def _finite_inputs(
    counts: ArrayLike, sizes: ArrayLike, excluded_sizes: ArrayLike, delta: Any, deltas: Any,
    names: Sequence[str] | None,
) -> tuple[NDArray[np.int64], float, NDArray[np.float64], list[str], NDArray[np.int64], bool]:
    """Validate a Theorem 8 family and invert: (N0, δ, δ_g, names, MU, scalar call)."""
    k, scalar = as_family(counts, "counts", integer=True)
    n, n_scalar = as_family(sizes, "sizes", integer=True)
    big, big_scalar = as_family(excluded_sizes, "excluded_sizes", integer=True)
    m = k.size
    same_size(m, "members", sizes=n, excluded_sizes=big)
    d = check_delta(delta)
    alloc = allocation(deltas, d, m)
    labels = member_names(names, m)
    check_within(k, n, "counts", "sizes")
    check_within(n, big, "sizes", "excluded_sizes")
    mu = np.atleast_1d(hypergeom_upper(k, alloc, population=big, draws=n))
    return big, d, alloc, labels, mu, scalar and n_scalar and big_scalar


@certificate_function("excluded_pool_finite", theorem="Theorem 8")
def excluded_pool_finite_certificate(
    counts: ArrayLike,
    sizes: ArrayLike,
    excluded_sizes: ArrayLike,
    delta: float = 0.05,
    *,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
    corpus_size: int | None = None,
) -> Certificate:
    """Excluded-pool hypergeometric certificate for a finite corpus (Theorem 8).

    For each ``g``, ``n0(g)`` items were drawn uniformly without replacement from its excluded
    pool of ``N0(g)`` items and ``K0(g)`` were relevant. With probability at least ``1 − δ``,
    ``M0(g) ≤ MU(K0(g), δ_g; N0(g), n0(g))`` for every ``g``, each inversion with the member's
    own pool size; ``N0(g) = 0`` gives 0. With the corpus size ``N``, ``r(g) ≤ MU/N``.

    §8 (``--pool-size 70000 --corpus-size 100000 --sample-size 300 --positives 0
    --delta 0.025 --finite``): ``MU = 853``, ``r ≤ 0.00853``.

    :param counts: ``K0(g)``; a scalar or one per member.
    :param sizes: ``n0(g) ≤ N0(g)``.
    :param excluded_sizes: ``N0(g)``, the excluded-pool sizes.
    :param delta: total error probability ``δ``.
    :param deltas: optional shares ``δ_g`` with ``Σ δ_g ≤ δ`` (default ``δ/|G|``).
    :param names: optional member names.
    :param corpus_size: optional ``N ≥ N0(g)``; adds ``details["r_upper"] = MU/N``.
    :returns: ``quantity="M0"``, integer value(s).
    """
    big, d, alloc, labels, mu, scalar = _finite_inputs(
        counts, sizes, excluded_sizes, delta, deltas, names)
    details: dict[str, Any] = {"names": labels}
    if corpus_size is not None:
        big_n = check_corpus_size(corpus_size, int(big.max()))
        details["r_upper"] = out(mu / big_n, scalar)
    value = out(mu, scalar, int)
    r_text = "" if corpus_size is None else \
        f", a missed mass r(g) of at most {format_bound(details['r_upper'], 'upper')}"
    return Certificate(
        quantity="M0",
        side="upper",
        value=value,
        theorem=theorem_of("excluded_pool_finite"),
        function="excluded_pool_finite",
        inputs={"counts": plain(counts, int), "sizes": plain(sizes, int),
                "excluded_sizes": plain(excluded_sizes, int), "delta": d, "deltas": plain(deltas),
                "names": None if names is None else labels,
                "corpus_size": None if corpus_size is None else big_n},
        allocation=member_allocation(labels, alloc),
        delta=d,
        statement=(
            f"With confidence {confidence_text(d)}, the excluded pool{'' if len(labels) == 1 else 's'} of "
            f"{', '.join(labels)} {'holds' if len(labels) == 1 else 'hold'} at most "
            f"{format_bound(value, 'upper')} relevant items{r_text} (hypergeometric inversion, "
            "sampling without replacement)."
        ),
        details=details,
    )


@certificate_function("full_review_recall", theorem="Theorem 8 (included pool fully reviewed)")
def full_review_recall_certificate(
    counts: ArrayLike,
    sizes: ArrayLike,
    excluded_sizes: ArrayLike,
    included_relevant: ArrayLike,
    delta: float = 0.05,
    *,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Recall bound when the included pool was reviewed in full (Theorem 8, second part).

    ``M1(g)``, the relevant items in the included pool, is then known; on the event of
    Theorem 8, ``Recall(g) = M1/(M1 + M0) ≥ M1/(M1 + MU(K0(g), δ_g; N0(g), n0(g)))``
    (the ratio falls as ``M0`` grows). No denominator floor is needed (Remark 9). When
    ``MU = 0`` the cut misses nothing on the event and the bound is read as 1, as rankcut reads
    Corollary 11 too (:func:`rankcut.certify.recall.recall_lower`); the paper reads
    ``ML = MU = 0`` as 0 there, which is also valid but says "recall ≥ 0" of a cut that keeps
    every item (an empty excluded pool), so rankcut takes the tighter reading, valid under the
    paper's assumption ``M0 + M1 > 0`` (Remark 5).

    :param counts: ``K0(g)``, relevant items in the excluded-pool sample.
    :param sizes: ``n0(g) ≤ N0(g)``.
    :param excluded_sizes: ``N0(g)``.
    :param included_relevant: ``M1(g)``, relevant items found by reviewing the whole included pool.
    :param delta: total error probability ``δ``.
    :param deltas: optional shares ``δ_g`` with ``Σ δ_g ≤ δ``.
    :param names: optional member names.
    """
    _, d, alloc, labels, mu, scalar = _finite_inputs(
        counts, sizes, excluded_sizes, delta, deltas, names)
    m1, m1_scalar = as_family(included_relevant, "included_relevant", integer=True)
    same_size(mu.size, "members", included_relevant=m1)
    scalar = scalar and m1_scalar
    recall = recall_lower(m1, mu)
    value = out(recall, scalar)
    return Certificate(
        quantity="recall",
        side="lower",
        value=value,
        theorem=theorem_of("full_review_recall"),
        function="full_review_recall",
        inputs={"counts": plain(counts, int), "sizes": plain(sizes, int),
                "excluded_sizes": plain(excluded_sizes, int),
                "included_relevant": plain(included_relevant, int), "delta": d,
                "deltas": plain(deltas), "names": None if names is None else labels},
        allocation=member_allocation(labels, alloc),
        delta=d,
        statement=family_statement(d, "recall", labels, value, "lower",
                                   "included pool reviewed in full, hypergeometric bound on the "
                                   "excluded pool"
                                   + (f"; {READ_AS_ONE}" if np.any((mu == 0) & (m1 == 0)) else "")),
        details={"names": labels, "M0_upper": out(mu, scalar, int), "M1": out(m1, scalar, int)},
    )


METHODS = ("finite", "binomial")


def _method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    return method


def excluded_pool_bound(
    counts: ArrayLike,
    sizes: ArrayLike,
    delta: float = 0.05,
    *,
    method: str,
    excluded_sizes: ArrayLike | None = None,
    corpus_size: int | None = None,
    p0: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """The excluded-pool bound by ``method``: ``"finite"`` — draws without replacement from pools of
    ``excluded_sizes`` items, :func:`excluded_pool_finite_certificate` (Theorem 8); ``"binomial"`` —
    i.i.d. draws from pools of mass ``p0``, :func:`excluded_pool_certificate` (Theorem 7)."""
    if _method(method) == "finite":
        return excluded_pool_finite_certificate(counts, sizes, excluded_sizes, delta, names=names,
                                                corpus_size=corpus_size)
    return excluded_pool_certificate(counts, sizes, delta, p0=p0, names=names)
