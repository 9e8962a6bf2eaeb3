"""The audit workflow: pools of a cut run and the samples drawn from them (the stateful part of
rankcut; the statistics live in :mod:`rankcut.certify`)."""

from rankcut.audit.pools import (
    Corpus,
    Pools,
    cuts_from_run,
    depth_family,
    nested_family,
    offset_family,
)
from rankcut.audit.sampling import (
    draw_excluded,
    draw_included,
    draw_shared_reference,
    draw_stratified,
    reference_membership,
)

__all__ = [
    "Corpus",
    "Pools",
    "cuts_from_run",
    "depth_family",
    "draw_excluded",
    "draw_included",
    "draw_shared_reference",
    "draw_stratified",
    "nested_family",
    "offset_family",
    "reference_membership",
]

# The guarded workflow (freeze → plan → sample → label → certify → report) and its manifest.
from rankcut.audit.manifest import Manifest, load_manifest  # noqa: E402
from rankcut.audit.report import write_report  # noqa: E402
from rankcut.audit.screening import screening_stops, write_cut  # noqa: E402
from rankcut.audit.workflow import (  # noqa: E402
    AuditStepError,
    AuditWarning,
    certify,
    freeze,
    label,
    plan,
    sample,
    status,
)

__all__ += [
    "AuditStepError",
    "AuditWarning",
    "Manifest",
    "certify",
    "freeze",
    "label",
    "load_manifest",
    "plan",
    "sample",
    "screening_stops",
    "status",
    "write_cut",
    "write_report",
]
