"""Where a high-recall review stops screening, per query, and the cut run it leaves to audit.

A reviewer screens each ranked list from the top and records labels as they go. From the run and
the labels recorded so far, :func:`screening_stops` says, per query, whether the pre-registered
rule of :mod:`rankcut.certify.screening` (:func:`~rankcut.certify.screening.screening_stop`; the
rule's one home, this module only feeds it each list's labelled prefix) has stopped, and where;
:func:`write_cut` writes the cut run (ranks 1..k of every list) that the sequential audit
(``rankcut audit freeze``, the default design) then certifies. The rule reads the labels of the
screened prefix only, so the cut is fixed before any audit label exists.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rankcut.data.lists import RankedLists

if TYPE_CHECKING:  # rankcut.certify loads scipy: imported where it is used
    from rankcut.certify.screening import ReviewRule

__all__ = ["QueryStop", "screening_stops", "write_cut"]


@dataclass(frozen=True)
class QueryStop:
    """One query: its list length, the labelled prefix, and the stop (None: screen on)."""

    query_id: str
    length: int
    screened: int   # ranks 1..screened all hold a label
    stop: int | None
    found: int      # relevant among ranks 1..stop (or 1..screened while screening on)
    ahead: int      # labels below the screened prefix (not used until the gap above them is filled)

    def render(self, *, simulated: bool = False) -> str:
        """One line; ``simulated``: the labels came from qrels, which label every rank (no reviewer
        read past the stop)."""
        if self.stop is None:
            more = f"; {self.ahead} labels below it wait for the gap" if self.ahead else ""
            return (f"{self.query_id}: screen on — ranks 1–{self.screened} of {self.length} labelled, "
                    f"{self.found} relevant, the rule has not stopped{more}")
        if self.stop == self.length:
            return (f"{self.query_id}: screened to the end ({self.length}), {self.found} relevant: nothing "
                    "to audit")
        below = 0 if simulated else self.screened - self.stop + self.ahead   # read past the stop already
        read = (f" ({below} of them labelled already: the audit takes each label when its random order "
                "reaches that document, as for any other; they do not move the stop, which the rule fixed "
                "where it did)" if below else "")
        return (f"{self.query_id}: stop screening at {self.stop} of {self.length}: {self.found} relevant "
                f"found; audit the {self.length - self.stop} below{read}")


def screening_stops(lists: RankedLists, labels: Mapping[tuple[str, str], int], rule: ReviewRule | None = None,
                    *, progress: bool = False) -> list[QueryStop]:
    """Per query of ``lists``, the rule's stop from the labels of its screened prefix.

    :param labels: ``{(query_id, doc_id): 0/1}`` — the screening labels recorded so far; a label
        of a document the query's list does not hold is refused, naming it.
    :param rule: a :class:`~rankcut.certify.screening.ReviewRule` (default ``ReviewRule()``).
    :param progress: show a tqdm bar on stderr over the screened ranks checked.
    """
    from tqdm import tqdm

    from rankcut.certify.screening import ReviewRule, screening_stop

    rule = ReviewRule() if rule is None else rule
    listed = {(q, d) for i, q in enumerate(lists.qids)
              for d in lists.doc_ids[i, : lists.lengths[i]].tolist()}
    outside = next((item for item in labels if item not in listed), None)
    if outside is not None:
        raise ValueError(f"a label for query {outside[0]!r}, document {outside[1]!r}, which that query's "
                         "list in the run does not hold")
    out = []
    screened = []
    for i, q in enumerate(lists.qids):
        docs = lists.doc_ids[i, : lists.lengths[i]].tolist()
        y = []
        for d in docs:
            if (q, d) not in labels:
                break
            y.append(int(labels[q, d]))
        screened.append((q, docs, y))
    with tqdm(total=sum(len(y) for _, _, y in screened), desc="stop", unit="rank", disable=not progress,
              file=sys.stderr, dynamic_ncols=True) as bar:
        def tick(k: int, at: int) -> None:   # boundary k of the list whose first rank is at + 1
            bar.update(at + k - bar.n)

        for q, docs, y in screened:
            start = bar.n
            ahead = sum((q, d) in labels for d in docs[len(y):])
            stop = screening_stop(y, len(docs), rule, on_check=partial(tick, at=start))
            bar.update(start + len(y) - bar.n)
            found = sum(y[: len(y) if stop is None else stop])
            out.append(QueryStop(q, len(docs), len(y), stop, found, ahead))
    return out


def write_cut(lists: RankedLists, stops: list[QueryStop], out: str | Path) -> Path:
    """Write the cut run — ranks 1..stop of every list — with :func:`rankcut.data.trec.write_run`
    (atomically).

    :raises ValueError: naming the first query still screening (its cut is not fixed yet).
    """
    from rankcut.data.trec import write_run

    open_ = next((s for s in stops if s.stop is None), None)
    if open_ is not None:
        raise ValueError(f"query {open_.query_id!r} is still screening (ranks 1–{open_.screened} of "
                         f"{open_.length} labelled, the rule has not stopped): no cut run is written until "
                         "every query has stopped")
    depth = {s.query_id: s.stop for s in stops}
    write_run(out, lists, [depth[q] for q in lists.qids], tag="rankcut-review")
    return Path(out)
