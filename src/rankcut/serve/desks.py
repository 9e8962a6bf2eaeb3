"""The page's desk of each audit design, by name: the registry :mod:`rankcut.serve.app` reads.

A design with a fixed sample is labelled through :class:`~rankcut.serve.desk.Desk` itself; a design
whose page shows more has a desk of its own and one line in :data:`DESKS`. A design that chooses its
items from the answers (``Design.adaptive``) and has no desk here is refused: the page would ask for
items in an order the design does not.
"""

from __future__ import annotations

from pathlib import Path

from rankcut.audit.designs import DESIGNS
from rankcut.audit.manifest import load_manifest
from rankcut.serve.desk import HOLD_S, Desk
from rankcut.serve.interleaved_desk import InterleavedDesk
from rankcut.serve.sequential_desk import SequentialDesk

__all__ = ["DESKS", "open_desk"]

DESKS: dict[str, type[Desk]] = {"sequential": SequentialDesk, "interleaved": InterleavedDesk}


def open_desk(folder: str | Path, *, hold_s: float = HOLD_S) -> Desk:
    """The desk of the audit ``folder``'s design.

    :param hold_s: how long an item asked of one reviewer is not asked of another (seconds).
    :raises AuditStepError: before ``sample``.
    :raises ValueError: for a design the page does not label, and as ``rankcut audit label``
        refuses the folder (a changed manifest, input file or sample).
    """
    spec = DESIGNS[str(load_manifest(folder)["design"])]   # the desk reads the folder in full, once
    desk = DESKS.get(spec.name)
    if desk is None and spec.adaptive:   # each answer decides the next item
        raise ValueError(f"rankcut serve does not label the {spec.name} design: its items are chosen one "
                         "at a time from the answers; use rankcut audit label --interactive")
    return (desk or Desk)(folder, hold_s=hold_s)
