"""The single-cut designs: ``excluded`` (Theorem 8 / 7) and ``two-pool`` (Corollary 11 / Theorem 10).

* ``excluded`` — Theorem 8 (``excluded_pool_finite_certificate``): ``M0 ≤ MU(K0, δ; N0, n0)``,
  the missed relevant count (and ``r ≤ MU/N``); binomially Theorem 7, ``r ≤ p0·U_{n0}(K0, δ)``.
* ``two-pool`` — Corollary 11 (``two_pool_recall_finite_certificate``):
  ``Recall ≥ ML(K1, δ1)/(ML + MU(K0, δ0))`` with ``δ0 + δ1 = δ`` (default ``δ/2`` each), reported
  jointly with Theorem 8's ``M0 ≤ MU(K0, δ0)``, which rests on the same excluded-pool bound and is
  charged once (:class:`~rankcut.certify.report.JointReport`); binomially Theorem 10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit.designs.base import (
    STREAM_EXCLUDED,
    STREAM_INCLUDED,
    Findings,
    FixedSampleDesign,
    Plan,
    Verdict,
    check_size,
    joint,
    member_row,
    method,
    plan_count,
    plan_mass,
    plan_missed,
    rng,
    sizes_line,
    verdict_missed,
)
from rankcut.audit.folder import Audit, FrozenAudit
from rankcut.audit.options import check_count, check_delta
from rankcut.audit.options import spelled as _o
from rankcut.audit.sampling import Draws, excluded_part, included_part

if TYPE_CHECKING:
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import Certificate

__all__ = ["Excluded", "TwoPool"]


def _missed(audit: FrozenAudit, k0: int, n0: int, delta: float) -> Certificate:
    """Theorem 8's ``M0 ≤ MU(K0, δ; N0, n0)`` (Theorem 7's ``r ≤ p0·U`` with replacement) of the cut."""
    from rankcut.certify.excluded import excluded_pool_bound

    p = audit.sizes[0]
    return excluded_pool_bound(k0, n0, delta, method=method(audit), excluded_sizes=p.n0,
                               corpus_size=audit.n_items, p0=p.n0 / audit.n_items, names=["the cut"])


class Excluded(FixedSampleDesign):
    """The missed relevant count ``M0`` of one cut, from an excluded-pool sample (Theorem 8; Theorem 7
    with replacement)."""

    name = "excluded"
    summary = "missed relevant count M0 of one cut, from an excluded-pool sample"
    event = "excluded audit"

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of

        return theorem_of("excluded_pool_finite" if finite else "excluded_pool")

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        t = int(target["max_missed"])
        unit = "M0" if audit.finite else "r·N"
        n, cert = plan_missed(audit, t, audit.delta, audit.base.n0, tolerated)
        sizes = {"excluded": n}
        lines = [f"{n} excluded-pool draws certify {unit} ≤ {t} when they find at most {tolerated} relevant",
                 sizes_line(sizes)]
        return Plan(sizes, lines, [c for c in (cert,) if c is not None])

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> Draws:
        """The excluded draws, then the included ones, as indices (:class:`Draws`): millions of
        draws are written to ``sample.jsonl`` a chunk at a time, never built as rows."""
        seed, replace = int(audit.manifest["seed"]), not audit.finite
        check_size(sizes["excluded"], audit.base.n0, "excluded", audit.finite)
        parts = [excluded_part(audit.base, sizes["excluded"], rng(seed, STREAM_EXCLUDED), replace=replace)]
        if "included" in sizes:
            check_size(sizes["included"], audit.base.n1, "included", audit.finite)
            parts.append(included_part(audit.base, sizes["included"], rng(seed, STREAM_INCLUDED),
                                       replace=replace))
        return Draws(parts)

    def counts(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray,
               unlabelled: int) -> dict[str, Any]:
        """Draws and relevant draws per pool (``counts`` in ``certificate.json``)."""
        out: dict[str, Any] = {"draws": len(rows), "unlabelled": int(unlabelled)}
        is_in = rows.is_included() if isinstance(rows, Draws) else \
            np.array([r["pool"] == "included" for r in rows], dtype=bool)
        out["excluded"] = {"draws": int((~is_in).sum()), "relevant": int(y[~is_in].sum())}
        if self.name == TwoPool.name:
            out["included"] = {"draws": int(is_in.sum()), "relevant": int(y[is_in].sum())}
        return out

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        p = audit.sizes[0]
        k0, n0 = int(stats["excluded"]["relevant"]), int(stats["excluded"]["draws"])
        missed = _missed(audit, k0, n0, audit.delta)
        unit = "M0" if audit.finite else "r"
        report = joint(audit).attach("missed", missed, charge={"the cut": "excluded audit"})
        t = audit.target.get("max_missed")
        return report, Findings(verdict_missed(audit, float(missed.value), unit, t),
                                [member_row(audit, p, missed.value, unit)])

    def curve(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray) -> dict[str, Any] | None:
        """The bound from the first ``j`` draws, for display (Remark 20)."""
        from rankcut.certify.curves import excluded_curve

        return excluded_curve(y, audit.base.n0, audit.n_items, audit.delta, finite=audit.finite)


class TwoPool(Excluded):
    """Recall of one cut from excluded- and included-pool samples (Corollary 11; Theorem 10 with
    replacement), with Theorem 8's missed count on the same excluded-pool event."""

    name = "two-pool"
    targets: tuple[str, ...] = ("recall",)
    summary = "recall of one cut (and its missed count), from excluded- and included-pool samples"
    plans_precision = True

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of as t

        if finite:
            return f"{t('two_pool_recall_finite')} with {t('excluded_pool_finite')}"
        return f"{t('two_pool_recall')} with {t('excluded_pool')}"

    def events(self, delta: float, allocation: Mapping[str, float] | None) -> dict[str, float]:
        """``{"excluded audit": δ0, "included audit": δ1}``, ``δ0 + δ1 ≤ δ`` (default ``δ/2`` each)."""
        if allocation is None:
            return {"excluded audit": delta / 2, "included audit": delta / 2}
        keys = {"excluded": "excluded audit", "included": "included audit",
                "excluded audit": "excluded audit", "included audit": "included audit"}
        out: dict[str, float] = {}
        for k, v in allocation.items():
            if k not in keys:
                raise ValueError(f"{_o('allocation')} keys are 'excluded' and 'included', got {k!r}")
            out[keys[k]] = check_delta(v, f"{_o('allocation')} {k}")
        if set(out) != {"excluded audit", "included audit"}:
            raise ValueError(f"{_o('allocation')} must give both 'excluded' and 'included' shares")
        total = sum(out.values())
        if total > delta * (1 + 1e-12):
            raise ValueError(f"{_o('allocation')} shares sum to {total:g}, more than {_o('delta')} {delta:g}")
        return out

    def largest_pool(self, base: Any) -> int:
        return max(base.n0, base.n1)

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        sizes, lines, certs = plan_recall(audit, float(target["recall"]), float(precision), tolerated)
        if not precision_given:
            lines.append(f"(planning guess: expected precision {precision:g} of the cut; set "
                         f"{_o('expected_precision')} to change the sizes — never the validity)")
        if sizes is not None:
            lines.append(sizes_line(sizes))
        return Plan(sizes, lines, certs, {"expected_precision": float(precision)})

    def with_included(self, ex: Any, included: Any) -> dict[str, Any]:
        if included is None:
            raise ValueError(f"no included-pool sample size: give {_o('included')} (no target was planned)")
        return {"excluded": ex, "included": check_count(included, "included")}

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify.recall import two_pool_recall_bound

        p, d = audit.sizes[0], audit.delta
        d0, d1 = audit.budget["excluded audit"], audit.budget["included audit"]
        k0, n0 = int(stats["excluded"]["relevant"]), int(stats["excluded"]["draws"])
        k1, n1 = int(stats["included"]["relevant"]), int(stats["included"]["draws"])
        big = audit.n_items
        missed = _missed(audit, k0, n0, d0)
        recall = two_pool_recall_bound(k0, n0, k1, n1, d, method=method(audit), pool0=p.n0, pool1=p.n1,
                                       p0=p.n0 / big, p1=p.n1 / big, deltas=[d0, d1])
        unit = "M0" if audit.finite else "r"
        report = joint(audit)
        report = report.attach("missed", missed, charge={"the cut": "excluded audit"})
        report = report.attach("recall", recall)
        verdict = None
        rho = audit.target.get("recall")
        if rho is not None:
            met = float(recall.value) >= rho
            verdict = Verdict(met, f"target recall ≥ {rho:g}: {'met' if met else 'NOT met'}")
        row = member_row(audit, p, missed.value, unit)
        row["recall"] = float(recall.value)
        return report, Findings(verdict, [row])

    def curve(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray) -> dict[str, Any] | None:
        """The recall bound from the first share of each pool's draws, for display (Remark 20)."""
        from rankcut.certify.curves import two_pool_curve

        is_in = np.array([r["pool"] == "included" for r in rows], dtype=bool)
        p = audit.base
        return two_pool_curve(y[~is_in], y[is_in], p.n0, p.n1, audit.budget["excluded audit"],
                              audit.budget["included audit"], finite=audit.finite)

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        got, expected = super().draw_counts(counts, rows, folder)
        expected["included"] = sum(r["pool"] == "included" for r in rows)
        return {k: (counts.get(k) or {}).get("draws") for k in expected}, expected


def plan_recall(audit: Audit, rho: float, precision: float, tolerated: int
                 ) -> tuple[dict[str, int] | None, list[str], list[Certificate]]:
    """Two-pool sizes for ``Recall ≥ ρ`` (Corollary 11 / Theorem 10), by search over ``n1``.

    Recall ``≥ ρ`` holds on the certificate's event when ``MU ≤ ML·(1 − ρ)/ρ``. For an included
    sample of ``n1`` items showing the expected precision ``π̂`` (``K1 = ⌊π̂·n1⌋``), ``ML`` is
    known; that turns the recall target into a missed-count tolerance ``t = ⌊ML(1 − ρ)/ρ⌋`` for
    the excluded audit, which the Theorem 8 planner sizes (binomially: ``r ≤ p1·L·(1 − ρ)/ρ``,
    sized by ``plan_missed_mass``): :func:`~rankcut.certify.planning.two_pool_recall_sizes` finds the
    pair with the fewest labels in total; here it is said in words, with the planner's certificate.
    """
    from rankcut.certify.bounds import cp_lower, hypergeom_lower
    from rankcut.certify.planning import two_pool_recall_sizes
    from rankcut.certify.result import theorem_of

    p = audit.base
    d0, d1 = audit.budget["excluded audit"], audit.budget["included audit"]
    big0, big1, big_n = p.n0, p.n1, audit.n_items
    if big1 == 0:
        return None, ["the cut keeps no item (N1 = 0): its recall is 0, no sample can certify a target"], []
    if big0 == 0:
        return {"excluded": 0, "included": 0}, ["the cut keeps every item (N0 = 0): it misses none, so its "
                                                 "recall is 1 without a label"], []

    best = two_pool_recall_sizes(rho, precision, tolerated, excluded_size=big0, included_size=big1,
                                 corpus_size=big_n, delta0=d0, delta1=d1, finite=audit.finite).value
    if best is None:
        return None, [f"no sample size within the pools reaches recall ≥ {rho:g} at expected precision "
                      f"{precision:g}: lower the target or set {_o('expected_precision')}"], []
    n0, n1 = best
    k1 = math.floor(precision * n1)
    if audit.finite:
        ml: float = int(hypergeom_lower(k1, d1, population=big1, draws=n1))
        shown, law = f"M1 ≥ ML = {int(ml)}", theorem_of("excluded_pool_finite")
    else:
        ml = float(cp_lower(k1, n1, d1)) * big1
        shown, law = f"M1 ≥ N1·L = {ml:.1f} items", theorem_of("two_pool_recall")
    t = math.floor(ml * (1 - rho) / rho + 1e-9)
    cert = plan_count(t, d0, big0, tolerated)[1] if audit.finite else \
        plan_mass(t, d0, big0, big_n, tolerated)[1]
    why = (f"an included sample of {n1} at the expected precision {precision:g} (K1 = {k1}) certifies "
           f"{shown}; recall ≥ {rho:g} then needs at most ⌊ML(1 − ρ)/ρ⌋ = {t} missed items, which {n0} "
           f"excluded-pool draws certify when they find at most {tolerated} relevant ({law})")
    return {"excluded": n0, "included": n1}, [why], [c for c in (cert,) if c is not None]
