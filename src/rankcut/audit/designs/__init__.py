"""The audit designs, by name: the registry the workflow, the report and the command line read.

Adding a design is one module with a :class:`~rankcut.audit.designs.base.Design` and one line in
:data:`DESIGNS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rankcut.audit.designs.base import Design, Findings
from rankcut.audit.designs.interleaved import Interleaved
from rankcut.audit.designs.nested import FixedSequence, Prefixes
from rankcut.audit.designs.sequential import Sequential
from rankcut.audit.designs.single import Excluded, TwoPool
from rankcut.audit.designs.stratified import Stratified
from rankcut.audit.folder import FrozenAudit

if TYPE_CHECKING:
    from rankcut.certify.report import JointReport

__all__ = ["DESIGNS", "Design", "Findings", "certificates", "design_of"]

DESIGNS: dict[str, Design] = {
    d.name: d for d in (Excluded(), TwoPool(), Prefixes(), FixedSequence(), Stratified(), Sequential(),
                        Interleaved())
}


def design_of(audit: FrozenAudit) -> Design:
    """The design an audit was frozen with."""
    return DESIGNS[audit.design]


def certificates(audit: FrozenAudit, stats: Mapping[str, Any]) -> tuple[JointReport, Findings]:
    """The joint report and what ``certificate.json`` says beside it (verdict, members, chosen member,
    bands, notes), from the manifest and the sample's counts only — as certify computes them and the
    report checks them."""
    report, findings = design_of(audit).certify(audit, stats)
    notes = list(findings.notes)
    if stats.get("unlabelled"):
        notes.append(f"{stats['unlabelled']} draws had no label and were counted unfavourably "
                     "(allow_incomplete: excluded-pool draws as relevant, included-pool draws as not "
                     "relevant)")
    reuse = audit.manifest.get("reuse_labels")
    if reuse is not None and reuse["role"] == "design-data":
        notes.append(f"the labels of audit {reuse['audit_id'][:12]} were design data for this cut; none of "
                     "them is counted here (§2.4)")
    return report, findings.with_notes(notes)
