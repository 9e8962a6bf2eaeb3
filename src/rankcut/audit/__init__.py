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
