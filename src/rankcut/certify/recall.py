"""Recall certificates (Remark 9, Theorem 10, Corollary 11 of the audit paper).

An excluded-pool audit bounds the missed relevant mass; recall also needs the relevant mass the
generator did catch (Remark 9). Three ways to supply it:

* :func:`recall_from_missed_mass` — Remark 9: a missed-mass upper bound ``u`` and a lower bound
  ``a > 0`` on the total relevant mass (known, from a whole-population audit, ...) give
  ``Recall(g) ≥ 1 − u/a``.
* :func:`two_pool_recall_certificate` — Theorem 10: independent i.i.d. audits of both pools,
  ``Recall(g) ≥ p1·L_{n1}(K1, δ1) / (p1·L_{n1}(K1, δ1) + p0·U_{n0}(K0, δ0))``.
* :func:`two_pool_recall_finite_certificate` — Corollary 11: both pools of a finite corpus
  sampled without replacement, ``Recall(g) ≥ ML(K1, δ1) / (ML(K1, δ1) + MU(K0, δ0))``.

With the included pool reviewed in full, see
:func:`~rankcut.certify.excluded.full_review_recall_certificate` (Theorem 8). The error split
(``δ0 + δ1``, plus whatever the pool-mass bounds cost) is declared before the audit
(Assumption 1) and recorded in the certificate's ``allocation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rankcut.certify._validate import SUM_RTOL, check_count, check_delta, check_fraction, check_number
from rankcut.certify.bounds import cp_lower, cp_upper, hypergeom_lower, hypergeom_upper
from rankcut.certify.result import (
    READ_AS_ONE,
    Certificate,
    certificate_function,
    confidence_text,
    format_bound,
    theorem_of,
)

__all__ = [
    "recall_from_missed_mass",
    "recall_lower",
    "two_pool_recall_certificate",
    "two_pool_recall_finite_certificate",
]


def recall_lower(caught: Any, missed: Any) -> Any:
    """``caught / (caught + missed)``: the recall bound from a lower bound on the relevant items the
    cut keeps and an upper bound on those it misses (Theorem 10, Corollary 11, Theorem 8's full
    review, and their curves), elementwise. Read as 1 when ``missed`` is 0: on the bound's event
    the cut misses nothing, so its recall is 1 whatever ``caught`` (with nothing relevant at all,
    ``R = 0``, recall is 0/0, read as 1 by the certificates' convention; the evaluation metrics
    score such a query 0 instead)."""
    caught, missed = np.asarray(caught, dtype=np.float64), np.asarray(missed, dtype=np.float64)
    return np.where(missed == 0, 1.0, caught / np.maximum(caught + missed, 1e-300))


def _count_pair(k: Any, n: Any, k_name: str, n_name: str) -> tuple[int, int]:
    kk, nn = check_count(k, k_name), check_count(n, n_name)
    if kk > nn:
        raise ValueError(f"{k_name}={kk} exceeds {n_name}={nn}")
    return kk, nn


def _pool_split(deltas: Sequence[float] | None, budget: float) -> tuple[float, float]:
    """``(δ0, δ1)`` for the excluded and included audits; default ``budget/2`` each."""
    if deltas is None:
        return budget / 2, budget / 2
    if (isinstance(deltas, (str, bytes)) or not isinstance(deltas, (Sequence, np.ndarray))
            or np.ndim(deltas) != 1 or len(deltas) != 2):
        raise ValueError(f"deltas must be a pair (delta0, delta1), got {deltas!r}")
    d0, d1 = (check_delta(v, f"deltas[{i}]") for i, v in enumerate(deltas))
    if d0 + d1 > budget * (1 + SUM_RTOL):
        raise ValueError(f"deltas sum to {d0 + d1!r}, more than the {budget!r} left for the two "
                         "audits: the union bound needs delta0 + delta1 <= that")
    return d0, d1


@certificate_function("recall_from_missed_mass", theorem="Remark 9")
def recall_from_missed_mass(
    missed_upper: float,
    relevant_lower: float,
    *,
    missed_delta: float,
    relevant_delta: float = 0.0,
) -> Certificate:
    """Recall from a missed-mass bound and a denominator bound (Remark 9).

    If ``r(g) ≤ u`` (with error ``missed_delta``) and the total relevant mass is at least
    ``a > 0`` (with error ``relevant_delta``; 0 when it is known), then with probability at least
    ``1 − missed_delta − relevant_delta``, ``Recall(g) = 1 − r(g)/π ≥ 1 − u/a`` (reported as
    ``max(0, 1 − u/a)``). ``u`` and ``a`` must be in the same unit: masses, or item counts.
    The bound weakens as ``a`` shrinks: a small absolute missed mass can still be a large share
    of a rare relevant class.

    :param missed_upper: ``u ≥ 0``, an upper bound on the missed relevant mass (or count ``M0``).
    :param relevant_lower: ``a > 0``, a lower bound on the total relevant mass (or count).
    :param missed_delta: error probability of the bound ``u``, in (0, 1).
    :param relevant_delta: error probability of the bound ``a``, in [0, 1).
    """
    u = check_number(missed_upper, "missed_upper")
    a = check_number(relevant_lower, "relevant_lower")
    if u < 0:
        raise ValueError(f"missed_upper must be >= 0, got {missed_upper!r}")
    if a <= 0:
        raise ValueError(f"relevant_lower must be > 0 (Remark 9 needs a positive denominator), "
                         f"got {relevant_lower!r}")
    dm = check_delta(missed_delta, "missed_delta")
    dr = 0.0 if relevant_delta == 0 else check_delta(relevant_delta, "relevant_delta")
    total = dm + dr
    if total >= 1:
        raise ValueError(f"missed_delta + relevant_delta = {total!r} must be < 1")
    value = max(0.0, 1.0 - u / a)
    return Certificate(
        quantity="recall",
        side="lower",
        value=value,
        theorem=theorem_of("recall_from_missed_mass"),
        function="recall_from_missed_mass",
        inputs={"missed_upper": u, "relevant_lower": a, "missed_delta": dm, "relevant_delta": dr},
        allocation={"missed mass": dm, "relevant mass": dr},
        delta=total,
        statement=(
            f"With confidence {confidence_text(total)}, recall is at least {format_bound(value, 'lower')} "
            f"(1 - u/a with missed mass u <= {u:g} and total relevant mass a >= {a:g})."
        ),
        details={"one_minus_ratio": 1.0 - u / a},
    )


@certificate_function("two_pool_recall", theorem="Theorem 10")
def two_pool_recall_certificate(
    k0: int,
    n0: int,
    k1: int,
    n1: int,
    delta: float = 0.05,
    *,
    p0: float,
    p1: float | None = None,
    deltas: Sequence[float] | None = None,
    mass_delta: float = 0.0,
) -> Certificate:
    """Two-pool recall certificate, i.i.d. population model (Theorem 10).

    The fifth argument is ``delta``, as in :func:`two_pool_recall_finite_certificate` and
    :func:`two_pool_recall_bound`; the pool masses are keyword-only (a ``p0`` given fifth was once
    read as it, and a ``delta`` given there as ``p0``, with an optimistic recall).

    Independent samples: ``n0`` draws from ``P(· | g(X) = 0)`` with ``K0`` relevant, ``n1`` draws
    from ``P(· | g(X) = 1)`` with ``K1`` relevant. With probability at least ``1 − δ0 − δ1``,
    ``η(g) ≤ U_{n0}(K0, δ0)`` and ``η1(g) ≥ L_{n1}(K1, δ1)``, so
    ``Recall(g) = p1 η1 / (p1 η1 + p0 η) ≥ p1 L / (p1 L + p0 U)``.

    ``p0`` and ``p1`` are the pool masses (``N0/N``, ``N1/N`` in a finite corpus), or an upper
    bound on ``p0`` and a lower bound on ``p1`` that hold jointly with error ``mass_delta``, which
    is then charged to the allocation. ``p1`` defaults to ``1 − p0`` (valid in both readings:
    ``p0 ≤ p̄0`` implies ``p1 ≥ 1 − p̄0``). Known masses (``mass_delta = 0``) must not sum to more
    than 1; estimated bounds may, since each errs on its own safe side. ``p0 = 0`` gives recall 1
    and ``p1 = 0`` recall 0 (Remark 5; π > 0 is assumed).

    :param k0: ``K0``, relevant items in the excluded-pool sample.
    :param n0: ``n0``, excluded-pool sample size.
    :param k1: ``K1``, relevant items in the included-pool sample.
    :param n1: ``n1``, included-pool sample size.
    :param p0: ``p0(g)`` or an upper bound on it, in [0, 1].
    :param delta: total error probability ``δ``.
    :param p1: ``p1(g)`` or a lower bound on it, in [0, 1]; default ``1 − p0``.
    :param deltas: ``(δ0, δ1)``; default ``((δ − mass_delta)/2, (δ − mass_delta)/2)``.
    :param mass_delta: error probability of the pool-mass bounds (0 when they are known).
    """
    k0_, n0_ = _count_pair(k0, n0, "k0", "n0")
    k1_, n1_ = _count_pair(k1, n1, "k1", "n1")
    q0 = check_fraction(p0, "p0")
    q1 = 1.0 - q0 if p1 is None else check_fraction(p1, "p1")
    d = check_delta(delta)
    dm = check_number(mass_delta, "mass_delta")
    if not 0.0 <= dm < d:
        raise ValueError(f"mass_delta must lie in [0, delta={d!r}), got {mass_delta!r}")
    if q0 == 0 and n0_ > 0:
        raise ValueError(f"p0 = 0 (an empty excluded pool) but n0={n0_}: nothing can be drawn from it")
    if dm == 0 and q0 + q1 > 1 + 1e-12:
        raise ValueError(
            f"p0 + p1 = {q0 + q1:.6g} > 1: known pool masses sum to 1; if they are estimated bounds, "
            "give mass_delta, the error probability of those bounds"
        )
    d0, d1 = _pool_split(deltas, d - dm)
    upper0 = float(cp_upper(k0_, n0_, d0))
    lower1 = float(cp_lower(k1_, n1_, d1))
    caught, missed = q1 * lower1, q0 * upper0
    value = float(recall_lower(caught, missed))   # U0 > 0: missed is 0 exactly when p0 is
    allocation = {"excluded audit": d0, "included audit": d1}
    if dm > 0:
        allocation["pool masses"] = dm
    return Certificate(
        quantity="recall",
        side="lower",
        value=value,
        theorem=theorem_of("two_pool_recall"),
        function="two_pool_recall",
        inputs={"k0": k0_, "n0": n0_, "k1": k1_, "n1": n1_, "p0": q0, "delta": d,
                "p1": None if p1 is None else q1,
                "deltas": None if deltas is None else [d0, d1], "mass_delta": dm},
        allocation=allocation,
        delta=d,
        statement=(
            f"With confidence {confidence_text(d)}, recall is at least {format_bound(value, 'lower')} "
            f"(two-pool audit: {k0_}/{n0_} relevant in the excluded pool, {k1_}/{n1_} in the "
            "included pool)"
            + (f"; recall is {READ_AS_ONE}." if missed == 0 and caught == 0 else ".")
        ),
        details={"eta0_upper": upper0, "eta1_lower": lower1, "p0": q0, "p1": q1,
                 "missed_mass_upper": missed, "caught_mass_lower": caught},
    )


@certificate_function("two_pool_recall_finite", theorem="Corollary 11")
def two_pool_recall_finite_certificate(
    k0: int,
    n0: int,
    k1: int,
    n1: int,
    delta: float = 0.05,
    *,
    pool0: int,
    pool1: int,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """Two-pool recall certificate for a finite corpus (Corollary 11).

    ``n0`` items drawn uniformly without replacement from the ``N0`` excluded items (``K0``
    relevant) and, independently, ``n1`` from the ``N1`` included items (``K1`` relevant). With
    probability at least ``1 − δ0 − δ1``, ``M0 ≤ MU(K0, δ0; N0, n0)`` and
    ``M1 ≥ ML(K1, δ1; N1, n1)``, so ``Recall(g) ≥ ML / (ML + MU)``, read as 1 when ``MU = 0``
    (:func:`recall_lower`: an empty excluded pool, or one sampled through, misses nothing), as the
    binomial version reads an empty excluded pool and the sequential audit a review that found and
    missed nothing. This departs from the paper, which reads ``ML = MU = 0`` as 0: that is valid
    too, but says "recall ≥ 0" of a cut that keeps every item; recall 1 holds on the event under
    the paper's own assumption ``M0 + M1 > 0`` (Remark 5).

    §8: ``k0=0, n0=300, pool0=70000, k1=100, n1=500, pool1=30000, δ=0.05`` (0.025 + 0.025)
    gives ``MU = 853``, ``ML = 4983`` and ``Recall ≥ 4983/5836 ≈ 0.8538``.

    :param k0: ``K0``, relevant items in the excluded-pool sample.
    :param n0: ``n0 ≤ N0``.
    :param k1: ``K1``, relevant items in the included-pool sample.
    :param n1: ``n1 ≤ N1``.
    :param delta: total error probability ``δ``.
    :param pool0: ``N0``, the excluded-pool size (by name, as :func:`two_pool_recall_bound` takes
        it: the counts came positionally in another order, ``k0, n0, pool0, k1, …``).
    :param pool1: ``N1``, the included-pool size.
    :param deltas: ``(δ0, δ1)`` with ``δ0 + δ1 ≤ δ``; default ``(δ/2, δ/2)``.
    """
    k0_, n0_ = _count_pair(k0, n0, "k0", "n0")
    k1_, n1_ = _count_pair(k1, n1, "k1", "n1")
    big0, big1 = check_count(pool0, "pool0"), check_count(pool1, "pool1")
    if n0_ > big0:
        raise ValueError(f"n0={n0_} exceeds pool0={big0}")
    if n1_ > big1:
        raise ValueError(f"n1={n1_} exceeds pool1={big1}")
    d = check_delta(delta)
    d0, d1 = _pool_split(deltas, d)
    mu = int(hypergeom_upper(k0_, d0, population=big0, draws=n0_))
    ml = int(hypergeom_lower(k1_, d1, population=big1, draws=n1_))
    value = float(recall_lower(ml, mu))
    corpus = big0 + big1
    return Certificate(
        quantity="recall",
        side="lower",
        value=value,
        theorem=theorem_of("two_pool_recall_finite"),
        function="two_pool_recall_finite",
        inputs={"k0": k0_, "n0": n0_, "pool0": big0, "k1": k1_, "n1": n1_, "pool1": big1,
                "delta": d, "deltas": None if deltas is None else [d0, d1]},
        allocation={"excluded audit": d0, "included audit": d1},
        delta=d,
        statement=(
            f"With confidence {confidence_text(d)}, recall is at least {format_bound(value, 'lower')}: "
            f"at most {mu} relevant items are missed and at least {ml} are caught (of {corpus} items)"
            + (f"; recall is {READ_AS_ONE}." if mu == 0 and ml == 0 else ".")
        ),
        details={"M0_upper": mu, "M1_lower": ml, "corpus_size": corpus,
                 "missed_mass_upper": mu / corpus if corpus else 0.0,
                 "caught_mass_lower": ml / corpus if corpus else 0.0},
    )


def two_pool_recall_bound(
    k0: int,
    n0: int,
    k1: int,
    n1: int,
    delta: float = 0.05,
    *,
    method: str,
    pool0: int | None = None,
    pool1: int | None = None,
    p0: float | None = None,
    p1: float | None = None,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """The two-pool recall bound by ``method``: ``"finite"`` — draws without replacement from pools of
    ``pool0`` and ``pool1`` items, :func:`two_pool_recall_finite_certificate` (Corollary 11);
    ``"binomial"`` — i.i.d. draws, pool masses ``p0`` (and ``p1``),
    :func:`two_pool_recall_certificate` (Theorem 10)."""
    from rankcut.certify.excluded import _method

    if _method(method) == "finite":
        return two_pool_recall_finite_certificate(k0=k0, n0=n0, pool0=pool0, k1=k1, n1=n1, pool1=pool1,
                                                  delta=delta, deltas=deltas)
    return two_pool_recall_certificate(k0, n0, k1, n1, p0=p0, delta=delta, p1=p1, deltas=deltas)
