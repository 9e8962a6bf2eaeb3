"""The ``stratified`` design (§9): rank bands below the cut partition the excluded pool, and
``M0 ≤ Σ_s MU(K_s, δ/S; N_s, n_s)`` (``stratified_hypergeometric_certificate``; binomially
``stratified_binomial_certificate``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit.designs.base import (
    STREAM_BAND,
    Findings,
    FixedSampleDesign,
    Plan,
    Row,
    check_size,
    draw_rows,
    joint,
    member_row,
    numbered,
    plan_missed,
    rng,
    sizes_line,
    verdict_missed,
)
from rankcut.audit.folder import Audit, FrozenAudit
from rankcut.audit.options import check_int_list
from rankcut.audit.options import spelled as _o
from rankcut.audit.pools import Pools
from rankcut.audit.sampling import draw_stratified

if TYPE_CHECKING:
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import Certificate

__all__ = ["Stratified"]


def band_text(offsets: Sequence[int], s: int) -> str:
    """The ranks of band ``s`` below the cut ``k``."""
    lo = offsets[s] + 1
    return f"k+{lo}..k+{offsets[s + 1]}" if s + 1 < len(offsets) else f"k+{lo}.. (and the rest)"


class Stratified(FixedSampleDesign):
    """The missed count of one cut from samples of rank bands below it (§9, Theorem 8 per band at
    ``δ/S``)."""

    name = "stratified"
    summary = "missed count of one cut from samples of rank bands below the cut"
    event = "strata"

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of as t

        if finite:
            return f"{t('stratified_hypergeometric')} ({t('excluded_pool_finite')} per band)"
        return f"{t('stratified_binomial')} (binomial per band)"

    def freeze_bands(self, bands: Sequence[int] | None) -> list[int] | None:
        if bands is None:
            raise ValueError(f"the stratified design needs {_o('bands')}: offsets below the cut where bands "
                             "end, e.g. [10, 100]")
        return [0, *check_int_list(bands, "bands")]

    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None:
        assert bands is not None
        band_sizes = [int(v) for v in base.band_sizes(bands)]
        if base.n0 == 0:
            raise ValueError("the excluded pool of the cut is empty (it keeps every item): there are no rank "
                             "bands below it to stratify, and nothing is missed")
        return band_sizes

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        """The tolerance split over the bands in proportion to their sizes, ``δ/S`` each."""
        t = int(target["max_missed"])
        band = audit.manifest["band_sizes"]
        total = max(sum(band), 1)
        per: list[int] = []
        certs: list[Certificate] = []
        lines: list[str] = []
        for s, size in enumerate(band):
            ts = t * size / total if not audit.finite else math.floor(t * size / total)
            n, cert = plan_missed(audit, ts, audit.delta, size, min(tolerated, math.floor(ts)), len(band))
            per.append(n)
            certs.extend(c for c in (cert,) if c is not None)
            lines.append(f"band {s + 1} ({size} items): tolerance {ts:g} of {t} (in proportion to its size), "
                         f"δ/{len(band)}: {n} draws")
        sizes = {"excluded": per}
        return Plan(sizes, [*lines, sizes_line(sizes)], certs)

    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]:
        return self.part_sizes(excluded, included, len(audit.manifest["band_sizes"]), "band")

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> list[Row]:
        seed, replace = int(audit.manifest["seed"]), not audit.finite
        for s, (n, size) in enumerate(zip(sizes["excluded"], audit.manifest["band_sizes"], strict=True)):
            check_size(n, size, f"excluded (band {s + 1})", audit.finite)
        rngs = [rng(seed, STREAM_BAND + s) for s in range(len(sizes["excluded"]))]
        bands = draw_stratified(audit.base, audit.bands, sizes["excluded"], rngs, replace=replace)
        rows = [row for s, items in enumerate(bands) for row in draw_rows(items, "excluded", stratum=s)]
        return numbered(rows)

    def counts(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray,
               unlabelled: int) -> dict[str, Any]:
        stratum = np.array([r["stratum"] for r in rows], dtype=np.int64)
        bands = range(len(audit.manifest["band_sizes"]))
        return {"draws": len(rows), "unlabelled": int(unlabelled),
                "bands": {"draws": [int((stratum == s).sum()) for s in bands],
                          "relevant": [int(y[stratum == s].sum()) for s in bands]}}

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify.stratified import (
            stratified_binomial_certificate,
            stratified_hypergeometric_certificate,
        )

        p, d = audit.sizes[0], audit.delta
        band_sizes = [int(v) for v in audit.manifest["band_sizes"]]
        sampled, relevant = list(stats["bands"]["draws"]), list(stats["bands"]["relevant"])
        if audit.finite:
            cert = stratified_hypergeometric_certificate(excluded_sizes=band_sizes, sizes=sampled,
                                                         counts=relevant, delta=d)
            unit = "M0"
        else:
            cert = stratified_binomial_certificate(weights=[n / p.n0 for n in band_sizes], sizes=sampled,
                                                   counts=relevant, delta=d, p0=p.n0 / audit.n_items)
            unit = "r"
        report = joint(audit)
        report = report.attach("missed", cert, charge={k: "strata" for k in cert.allocation})
        offsets = audit.bands
        bands = [{"band": s + 1, "ranks": band_text(offsets, s), "size": n, "sample": ns, "relevant": ks,
                  "bound": cert.details["stratum_upper"][s]}
                 for s, (n, ns, ks) in enumerate(zip(band_sizes, sampled, relevant, strict=True))]
        verdict = verdict_missed(audit, float(cert.value), unit, audit.target.get("max_missed"))
        return report, Findings(verdict, [member_row(audit, p, cert.value, unit)], bands=bands)

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        n = len((counts.get("bands") or {}).get("draws") or [])
        return ({"bands": (counts.get("bands") or {}).get("draws")},
                {"bands": [sum(r["stratum"] == s for r in rows) for s in range(n)]})
