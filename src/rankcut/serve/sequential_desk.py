"""The page of the sequential audit (:mod:`rankcut.audit.designs.sequential`): the cut, then the
audit order, with the recall bound after every answer.

The bound is computed in memory by the design's own certificate (``Design.certify`` on the counts
certify would take); nothing is written and no opening is recorded — only ``certify`` records one.
The confidence sequence's value at each prefix is kept between answers
(:meth:`~rankcut.certify.sequential.SequentialAudit.running_state`), so an answer evaluates only the
prefix it adds; so is the labelled start of the audit order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from rankcut.audit.designs import certificates
from rankcut.audit.designs.sequential import check_opened, engine, parts
from rankcut.audit.labels import LabelChanges
from rankcut.audit.pools import Item
from rankcut.certify.result import format_bound
from rankcut.certify.sequential import RunningState, SequentialAudit
from rankcut.serve.desk import HOLD_S, Desk

__all__ = ["SequentialDesk"]


class SequentialDesk(Desk):
    """A sequential audit labelled through the page: certify is offered once the cut is labelled,
    and labelling may go on after it (the bound is anytime-valid)."""

    anytime = True
    certify_needs = "every item of the cut must be labelled first"

    def __init__(self, folder: str | Path, *, hold_s: float = HOLD_S) -> None:
        super().__init__(folder, hold_s=hold_s)
        self.cut, self.audit_order = parts(self.rows)   # the cut (rank order), then the audit order
        self._audit_index = {item: k for k, item in enumerate(self.audit_order)}
        self._y = np.full(len(self.audit_order), -1, dtype=np.int64)   # audit order labels (-1: none)
        self._prefix = 0   # how many items at the start of the audit order are labelled
        # the bound's max C_s per prefix, for the rule it was computed under
        self._running: tuple[SequentialAudit, RunningState] | None = None

    def _forget(self) -> None:
        super()._forget()
        self._prefix = 0
        self._y[:] = -1

    def _apply(self, item: Item, label: int | None) -> None:
        super()._apply(item, label)
        k = self._audit_index.get(item)
        if k is not None:
            self._y[k] = -1 if label is None else label
            if label is None:
                self._prefix = min(self._prefix, k)

    def _caught_up(self, changes: LabelChanges | None) -> None:
        while self._prefix < len(self.audit_order) and self._y[self._prefix] >= 0:
            self._prefix += 1

    def _bound(self, labels: Mapping[Item, int]
               ) -> tuple[str | None, str | None, bool | None, str | None, bool]:
        """The cut's and the audit order's progress; once the cut is labelled, the bound at the
        labelled prefix and certify (or what certify refuses of labels edited since an opening)."""
        cut, order, t = self.cut, self.audit_order, self._prefix
        cut_done = all(i in labels for i in cut)
        progress = (f"cut: {sum(i in labels for i in cut)} of {len(cut)} labelled; audit order: "
                    + (f"positions 1–{t}" if t else "none") + f" of {len(order)} labelled")
        if not cut_done:
            return progress, None, None, None, False
        bound, met, verdict = self._preview(labels, cut, order, t)
        refused = self._changed_since_opened(lambda store, record: check_opened(
            store, record, {i: labels[i] for i in cut}, {i: labels[i] for i in order[:t]}, order))
        if refused:   # what certify refuses, in place of the verdict of labels it would not take
            return progress, bound, False, refused, False
        return progress, bound, met, verdict, True

    def _preview(self, labels: Mapping[Item, int], cut: list[Item], order: list[Item], t: int
                 ) -> tuple[str, bool, str]:
        """The sequential certificate at the labelled prefix ``t``, in memory (as ``Sequential.open``
        counts it; nothing written)."""
        found = int(sum(labels[i] for i in cut))
        y = self._y[:t].copy()   # the labelled prefix (the state keeps it: a copy, not a view)
        rule = engine(self.audit, found)
        previous = self._running
        state = rule.running_state(y, previous[1] if previous is not None and previous[0] == rule else None)
        self._running = (rule, state)   # the next answer evaluates only the prefixes it adds
        _, reached = state.running()
        stats = {"draws": len(self.rows), "unlabelled": 0,
                 "included": {"draws": len(cut), "relevant": found},
                 "excluded": {"draws": len(order), "labelled": t, "relevant": int(y.sum()),
                              "best_prefix": int(reached[t]), "best_prefix_hits": int(y[:reached[t]].sum())}}
        _, findings = certificates(self.audit, stats)
        recall = float(findings.members[0]["recall"])
        assert findings.verdict is not None  # the sequential design always has its target
        # a lower bound, shown rounded down as the interleaved review's (docs/architecture.md, conventions)
        return f"recall ≥ {format_bound(recall, 'lower')}", findings.verdict.met, findings.verdict.text
