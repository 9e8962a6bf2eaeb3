"""Whole-population missed-mass certificate (Theorem 12 of the audit paper).

The audit samples i.i.d. from the whole population ``P`` rather than from the excluded pool and
counts the items that are relevant *and* excluded, ``K_g = #{i : Y_i = 1, g(X_i) = 0}``. Each
indicator is Bernoulli(``r(g)``), so ``K_g ~ Bin(n, r(g))`` and Clopper–Pearson bounds ``r(g)``
directly. One labelled sample serves every member of a family ``G``.

It is mainly a baseline for missed mass: at zero observed events it needs about ``1/p0(g)``
times as many labels as the excluded-pool audit of Theorem 7 for the same target (§8: 431
whole-population labels against 300 excluded-pool labels for ``r ≤ 0.00853`` at ``δ = 0.025``;
``rankcut.certify.planning.plan_missed_mass`` computes both sizes). Its own uses are prevalence
and the recall denominator of Remark 9.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from rankcut.certify._validate import (
    allocation,
    as_family,
    check_count,
    check_delta,
    check_within,
    member_allocation,
    member_names,
    out,
    plain,
)
from rankcut.certify.bounds import cp_upper
from rankcut.certify.result import (
    Certificate,
    certificate_function,
    family_statement,
    theorem_of,
)

__all__ = ["whole_population_certificate"]


@certificate_function("whole_population", theorem="Theorem 12")
def whole_population_certificate(
    counts: ArrayLike,
    sample_size: int,
    delta: float = 0.05,
    *,
    deltas: ArrayLike | None = None,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Whole-population certificate for a family ``G`` (Theorem 12).

    ``(X_i, Y_i)``, ``i = 1..n``, i.i.d. from ``P``; ``K_g`` of them are relevant and excluded by
    ``g``. With probability at least ``1 − δ``, ``r(g) ≤ U_n(K_g, δ_g)`` for every ``g`` at once,
    where ``Σ_g δ_g ≤ δ`` (default ``δ/|G|``).

    :param counts: ``K_g``, sampled items with ``Y = 1`` and ``g(X) = 0``; a scalar or one per
        member.
    :param sample_size: ``n``, the size of the shared whole-population sample.
    :param delta: total error probability ``δ``.
    :param deltas: optional shares ``δ_g`` with ``Σ δ_g ≤ δ``, fixed before the audit.
    :param names: optional member names.
    :returns: ``quantity="r"``, the upper bound(s) on the missed relevant mass.
    """
    k, scalar = as_family(counts, "counts", integer=True)
    n = check_count(sample_size, "sample_size")
    check_within(k, n, "counts", "sample_size")
    d = check_delta(delta)
    alloc = allocation(deltas, d, k.size)
    labels = member_names(names, k.size)
    r = np.atleast_1d(cp_upper(k, n, alloc)).astype(float)
    value = out(r, scalar)
    return Certificate(
        quantity="r",
        side="upper",
        value=value,
        theorem=theorem_of("whole_population"),
        function="whole_population",
        inputs={"counts": plain(counts, int), "sample_size": n, "delta": d, "deltas": plain(deltas),
                "names": None if names is None else labels},
        allocation=member_allocation(labels, alloc),
        delta=d,
        statement=family_statement(d, "missed relevant mass r(g)", labels, value, "upper",
                                   f"Clopper-Pearson on {n} whole-population draws"),
        details={"names": labels, "counts": out(k, scalar, int)},
    )
