"""The nested-family designs: ``prefixes`` (Corollary 16/18, Theorem 17, Eq. 1) and ``fixed-sequence``
(Theorem 19), each from one shared reference sample or from separate samples of each member.

* ``prefixes`` — a nested family ``g_1 ⊆ … ⊆ g_M``: simultaneous bounds on every member's
  ``M0`` at ``δ/M`` each, from one shared reference sample drawn from ``E_1`` (Corollary 18;
  Theorem 17 binomially) or from separate samples of each ``E_m`` (Corollary 16 with Theorem 8 per
  prefix); with a target, the least-burden member whose bound meets it (Eq. 1, ``choose_prefix``).
* ``fixed-sequence`` — Theorem 19 (``fixed_sequence_finite``): a target fixed at freeze, each
  member tested at the full ``δ`` from the largest candidate set down; one member or none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.audit.designs.base import (
    STREAM_EXCLUDED,
    STREAM_MEMBER,
    Findings,
    FixedSampleDesign,
    Plan,
    Row,
    Verdict,
    check_size,
    draw_rows,
    family_options,
    joint,
    member_row,
    method,
    numbered,
    plan_missed,
    rng,
    sizes_line,
)
from rankcut.audit.folder import Audit, FrozenAudit
from rankcut.audit.options import check_int_list
from rankcut.audit.options import spelled as _o
from rankcut.audit.pools import Pools
from rankcut.audit.sampling import draw_excluded, reference_membership

if TYPE_CHECKING:
    from rankcut.certify.report import JointReport
    from rankcut.certify.result import Certificate

__all__ = ["FixedSequence", "Prefixes"]

REFERENCES = ("shared", "separate")


class Prefixes(FixedSampleDesign):
    """Simultaneous missed-count bounds for every member of a nested family, and the least-burden
    member meeting a target (Corollary 16/18, Theorem 17, Eq. 1)."""

    name = "prefixes"
    family = True
    summary = "simultaneous missed-count bounds for every member of a nested family"
    event = "prefixes"
    simultaneous = True  # δ/M per member (Corollary 16/18); fixed-sequence tests each at δ

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of as t

        if reference == "shared":
            return f"{t('prefix_bounds_shared' + ('_finite' if finite else ''))} and {t('choose_prefix')}"
        per = f" with {t('excluded_pool_finite')} per prefix," if finite else ""
        return f"{t('prefix_bounds_separate')}{per} and {t('choose_prefix')}"

    def family_spec(self, cut: Any, family: Any, offsets: Any, depths: Any) -> dict[str, Any] | None:
        given = family_options(family, offsets, depths)
        if len(given) != 1:
            raise ValueError(f"the {self.name} design needs exactly one family: {_o('family')} (cut runs), "
                             f"{_o('offsets')} (with {_o('cut')}) or {_o('depths')}; got "
                             f"{', '.join(_o(g) for g in given) or 'none'}")
        if offsets is not None:
            if cut is None:
                raise ValueError(f"{_o('offsets')} are added to a model's per-query cut: give {_o('cut')} "
                                 "as well")
            return {"kind": "offsets", "offsets": check_int_list(offsets, "offsets")}
        if cut is not None:
            raise ValueError(f"{_o('cut')} is used with {_o('offsets')} only; with {_o('family')} or "
                             f"{_o('depths')} the members are the cuts")
        if depths is not None:
            return {"kind": "depths", "depths": check_int_list(depths, "depths")}
        if isinstance(family, str | bytes) or not isinstance(family, Sequence) or not family:
            raise ValueError(f"{_o('family')} must be a non-empty list of cut-run files, got {family!r}")
        return {"kind": "runs", "members": len(family)}

    def freeze_reference(self, reference: str | None) -> str | None:
        reference = "shared" if reference is None else reference
        if reference not in REFERENCES:
            raise ValueError(f"{_o('reference')} must be one of {', '.join(REFERENCES)}, got {reference!r}")
        return reference

    def freeze_pools(self, base: Pools, names: Sequence[str], bands: Sequence[int] | None
                     ) -> list[int] | None:
        if base.n0 == 0:
            raise ValueError(f"the excluded pool of the shallowest member ({names[0]}) is empty: every "
                             "member keeps every item, there is nothing to certify")
        return None

    @staticmethod
    def shared(audit: FrozenAudit) -> bool:
        return bool(audit.manifest["reference"] == "shared")

    def plan(self, audit: Audit, target: Mapping[str, Any], tolerated: int, precision: float,
             precision_given: bool) -> Plan:
        """Each member's need at ``δ/M`` (Corollary 16/18) or ``δ`` (Theorem 19); a shared reference
        sample of the least size that gives each member its need with probability ≥ 0.95
        (:func:`~rankcut.certify.planning.shared_reference_size`), for each member separately."""
        from rankcut.certify.planning import REFERENCE_PROBABILITY, shared_reference_size
        from rankcut.certify.result import theorem_of

        t = int(target["max_missed"])
        unit = "M0" if audit.finite else "r·N"
        m_count = len(audit.members) if self.simultaneous else 1
        needs: list[int] = []
        certs: list[Certificate] = []
        for p in audit.members:
            n, cert = plan_missed(audit, t, audit.delta, p.n0, tolerated, m_count)
            needs.append(n)
            certs.extend(c for c in (cert,) if c is not None)
        level = f"δ/{m_count} each (Corollary 16/18)" if self.simultaneous else \
            f"δ each ({theorem_of('fixed_sequence')})"
        lines = [f"{name}: {n} draws from its excluded pool of {p.n0} for {unit} ≤ {t} at {level}"
                 for name, p, n in zip(audit.names, audit.members, needs, strict=True)]
        if not self.shared(audit):
            sizes: dict[str, Any] = {"excluded": needs}
            return Plan(sizes, [*lines, sizes_line(sizes)], certs)
        q = max((shared_reference_size(n, excluded_size=p.n0, reference_pool_size=audit.base.n0,
                                       finite=audit.finite).value
                 for n, p in zip(needs, audit.members, strict=True) if n > 0), default=0)
        law = "hypergeometric" if audit.finite else "binomial"
        lines.append(f"shared reference from {audit.names[0]}'s excluded pool: {q} draws give each member "
                     f"its need with probability ≥ {REFERENCE_PROBABILITY:g}, for each member separately "
                     f"(not for all at once; its effective size n_eff_m, the draws that fall in its pool, is "
                     f"{law}: Q draws, a share N0(g_m)/N0(g_1) in its pool)")
        sizes = {"excluded": q}
        return Plan(sizes, [*lines, sizes_line(sizes)], certs)

    def sizes(self, audit: Audit, excluded: Any, included: Any) -> dict[str, Any]:
        if self.shared(audit):
            return super().sizes(audit, excluded, included)
        return self.part_sizes(excluded, included, len(audit.members), "member")

    def draw(self, audit: Audit, sizes: Mapping[str, Any]) -> list[Row]:
        seed, replace = int(audit.manifest["seed"]), not audit.finite
        rows: list[Row] = []
        if self.shared(audit):
            check_size(sizes["excluded"], audit.base.n0, "excluded (shared reference)", audit.finite)
            rows += draw_rows(draw_excluded(audit.base, sizes["excluded"], rng(seed, STREAM_EXCLUDED),
                                            replace=replace), "reference")
        else:
            for m, (n, p) in enumerate(zip(sizes["excluded"], audit.members, strict=True)):
                check_size(n, p.n0, f"excluded ({audit.names[m]})", audit.finite)
                rows += draw_rows(draw_excluded(p, n, rng(seed, STREAM_MEMBER + m), replace=replace),
                                  "excluded", m)
        return numbered(rows)

    def counts(self, audit: Audit, rows: Sequence[Mapping[str, Any]], y: np.ndarray,
               unlabelled: int) -> dict[str, Any]:
        """Per member ``(sizes, counts)``: effective sizes of the shared reference (Theorem 17), or the
        separate samples' sizes."""
        from rankcut.certify.prefixes import shared_reference_counts

        if self.shared(audit):
            items = [(r["query_id"], r["doc_id"]) for r in rows]
            inside = reference_membership(audit.members, items)
            n_eff, k = shared_reference_counts(inside, y.astype(bool))
            sizes, counts = n_eff.tolist(), k.tolist()
        else:
            member = np.array([r["member"] for r in rows], dtype=np.int64)
            sizes = [int((member == m).sum()) for m in range(len(audit.members))]
            counts = [int(y[member == m].sum()) for m in range(len(audit.members))]
        return {"draws": len(rows), "unlabelled": int(unlabelled),
                "members": {"draws": [int(v) for v in sizes], "relevant": [int(v) for v in counts]}}

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify import prefixes as pf

        names, d, big = audit.names, audit.delta, audit.n_items
        members = audit.sizes
        n0s = [p.n0 for p in members]
        sizes, counts = list(stats["members"]["draws"]), list(stats["members"]["relevant"])
        unit = "M0" if audit.finite else "r"
        p0s = [n / big for n in n0s]
        bounds = pf.prefix_bounds(counts, sizes, d, method=method(audit),
                                  reference=audit.manifest["reference"],
                                  excluded_sizes=n0s, p0=p0s, reference_size=int(stats["draws"]),
                                  reference_pool_size=n0s[0], reference_mass=p0s[0], names=names,
                                  corpus_size=big if audit.finite else None)
        charge = {n: "prefixes" for n in names}
        report = joint(audit)
        report = report.attach("bounds", bounds, charge=charge)
        verdict = None
        t = audit.target.get("max_missed")
        chosen_index = None
        if t is not None:
            target = t if audit.finite else t / big
            choice = pf.choose_prefix(bounds, [p.n1 for p in members], at_most=target)
            report = report.attach("choice", choice, charge=charge)
            chosen_index = choice.details["index"]
            verdict = Verdict(choice.value is not None,
                              f"chosen: {choice.value} (least burden with {unit} bound ≤ {t})"
                              if choice.value is not None else f"no member meets {unit} ≤ {t}",
                              choice.value, names_choice=True)
        own = bounds.details["own_bounds"]   # a later member's bound may be an earlier one's (nested pools)
        rows = [member_row(audit, p, b, unit) | {"sample": s, "relevant": k}
                | ({} if own[i] == b else {"bound_of": members[own.index(b)].name})
                for i, (p, b, s, k) in enumerate(zip(members, bounds.value, sizes, counts, strict=True))]
        return report, Findings(verdict, rows, chosen=chosen_index, chooses=True)

    def draw_counts(self, counts: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                    folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        """Separate samples: the draws per member. A shared reference: member ``m``'s draws are its
        effective size ``n_eff_m`` (Theorem 17, Corollary 18), the reference draws that fall in its
        excluded pool ``E_m``, recounted from the pools rebuilt from the frozen (and checked) input
        files, never taken from ``counts``."""
        from rankcut.audit.folder import load_audit

        got = {"members": (counts.get("members") or {}).get("draws")}
        if rows and rows[0].get("member") is not None:  # separate samples
            n = len((counts.get("members") or {}).get("draws") or [])
            return got, {"members": [sum(r["member"] == m for r in rows) for m in range(n)]}
        audit = load_audit(folder)  # the pools, from the input files (their hashes checked)
        inside = reference_membership(audit.members, [(r["query_id"], r["doc_id"]) for r in rows])
        return got, {"members": [int(v) for v in inside.sum(axis=0)]}


class FixedSequence(Prefixes):
    """The least-burden member meeting a target fixed at freeze, testing from the largest candidate
    set down, each test at the full δ (Theorem 19)."""

    name = "fixed-sequence"
    needs_target = True
    summary = "the least-burden member meeting a target fixed in advance, no δ/M split"
    event = "fixed-sequence"
    simultaneous = False

    def theorem(self, reference: str | None, finite: bool) -> str:
        from rankcut.certify.result import theorem_of as t

        if finite:
            return f"{t('fixed_sequence_finite')} ({t('excluded_pool_finite')} tests)"
        return f"{t('fixed_sequence')} ({t('excluded_pool')} tests)"

    def certify(self, audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
        from rankcut.certify.prefixes import fixed_sequence_bound

        names, d, big = audit.names, audit.delta, audit.n_items
        members = audit.sizes
        n0s = [p.n0 for p in members]
        sizes, counts = list(stats["members"]["draws"]), list(stats["members"]["relevant"])
        t = int(audit.target["max_missed"])
        cert = fixed_sequence_bound(counts, sizes, at_most=t if audit.finite else t / big, delta=d,
                                    method=method(audit), excluded_sizes=n0s, p0=[n / big for n in n0s],
                                    names=names)
        unit = "M0" if audit.finite else "r"
        report = joint(audit)
        report = report.attach("fixed-sequence", cert, charge={"each_test": "fixed-sequence"})
        tested = {row["name"]: row for row in cert.details["tests"]}
        rows = [member_row(audit, p, tested[p.name]["upper"] if p.name in tested else None, unit)
                | {"sample": s, "relevant": k, "tested": p.name in tested,
                   "passed": tested[p.name]["passed"] if p.name in tested else None}
                for p, s, k in zip(members, sizes, counts, strict=True)]
        chosen = None if cert.value is None else names.index(cert.value)
        text = (f"returned: {cert.value} (fixed-sequence test of {unit} ≤ {t} at level {d:g})"
                if cert.value is not None else f"no member returned: {names[-1]} fails {unit} ≤ {t}")
        return report, Findings(Verdict(cert.value is not None, text, cert.value, names_choice=True), rows,
                                ["fixed-sequence testing certifies only the returned member, only against "
                                 "this target (Remark 21); the bounds of untested members are not "
                                 "certificates"], chosen=chosen, chooses=True)
