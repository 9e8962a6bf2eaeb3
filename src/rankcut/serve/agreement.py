"""A second reading for an agreement check: a second reviewer labels items a first one labelled,
without seeing those labels, and the page shows Cohen's κ on the overlap.

The second labels go to their own label store, ``agreement.sqlite`` in the audit folder (the same
:class:`~rankcut.audit.labels.LabelStore`: one transaction per answer, the reviewer's name and the
time per label, a history). Certify never reads it: the certificate counts the first labels only,
so a second reading can happen before or after certify. The agreement it measures is what the
§9 label-noise setting of the audit paper asks for (how often a reviewer's label is wrong); κ
itself is descriptive, not a certificate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rankcut.audit.folder import LABELS_FILE
from rankcut.audit.labels import LabelStore, reviewer_of, reviewer_source
from rankcut.audit.pools import Item
from rankcut.serve.desk import Answer, Desk, Refused

__all__ = ["AGREEMENT_FILE", "Agreement", "SecondReading", "cohen_kappa"]

AGREEMENT_FILE = "agreement.sqlite"


def cohen_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Cohen's κ of two reviewers' 0/1 labels of the same items (Cohen 1960):
    ``(p_o − p_e) / (1 − p_e)``, ``p_o`` the share of items they agree on, ``p_e`` the agreement
    expected by chance from each one's share of relevant labels. None when ``p_e = 1`` (both gave
    every item the same label, where κ is undefined) or there is no pair."""
    n = len(pairs)
    if n == 0:
        return None
    p_o = sum(a == b for a, b in pairs) / n
    first, second = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    p_e = first * second + (1 - first) * (1 - second)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


@dataclass(frozen=True)
class Agreement:
    """The overlap of the first and the second reading."""

    overlap: int
    agree: int
    kappa: float | None

    def text(self) -> str:
        if not self.overlap:
            return "agreement check: no item read twice yet"
        kappa = ("κ undefined (one label for every item)" if self.kappa is None
                 else f"Cohen's κ {self.kappa:.2f}")
        return f"agreement check: {self.agree} of {self.overlap} items read twice agree; {kappa}"


class SecondReading:
    """The second reading of the items of ``desk``'s audit."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.path = desk.folder / AGREEMENT_FILE

    def _open(self, *, create: bool) -> LabelStore | None:
        """The second store, bound to this audit and sample (None when absent and not ``create``)."""
        if not create and not self.path.exists():
            return None
        store = LabelStore(self.path, create=create)
        owner = store.get_meta("audit_id")
        if owner is None:
            store.set_meta_many({"audit_id": self.desk.audit_id, "sample_hash": self.desk.sample_hash})
        elif owner != self.desk.audit_id or store.get_meta("sample_hash") != self.desk.sample_hash:
            store.close()
            raise Refused(f"{self.path} holds the second reading of audit {owner[:12]}, not of this audit "
                          f"{self.desk.audit_id[:12]} and its sample: move it away")
        return store

    def _first(self) -> dict[Item, tuple[int, str]]:
        """The first reading: each labelled item's label and its source (who gave it), in the order
        the items were first labelled."""
        path = self.desk.folder / LABELS_FILE
        if not path.exists():
            return {}
        with LabelStore(path, create=False) as store:
            last = {(e.query_id, e.doc_id): e for e in store.history()}   # the last event per item
        return {item: (e.new_label, e.source) for item, e in last.items()
                if e.new_label is not None and item in self.desk.index}   # None: an answer taken back

    def _second(self) -> dict[Item, int]:
        store = self._open(create=False)
        if store is None:
            return {}
        with store:
            return {(q, d): y for q, d, y in store.items()}

    def agreement(self) -> Agreement:
        first, second = self._first(), self._second()
        pairs = [(first[i][0], y) for i, y in second.items() if i in first]
        return Agreement(len(pairs), sum(a == b for a, b in pairs), cohen_kappa(pairs))

    def ask(self, reviewer: str, who: str | None) -> Item | None:
        """The next item for a second reading by ``reviewer``: labelled by someone else, not read
        twice yet, not being asked of another reviewer; in the label order, or for the interleaved
        review (whose page order is the collection's) in the order the first reading read them."""
        first, second = self._first(), self._second()

        def other(i: Item) -> bool:   # labelled first by someone else, on the page or the command line
            return i in first and reviewer_of(first[i][1]) != reviewer and i not in second

        return self.desk.ask(other, who, order=list(first) if self.desk.adaptive else None)

    def record(self, answer: Answer, reviewer: str, who: str) -> Item:
        """Record one second label (one transaction), after the checks of :meth:`Desk.record`'s kind.

        :raises Refused: for a form of another audit or sample, an item not asked of ``who``, an item
            read twice already, or one this reviewer labelled first.
        """
        desk = self.desk
        if answer.audit_id != desk.audit_id or answer.sample_hash != desk.sample_hash:
            raise Refused("this form was made for another audit or sample of this folder: nothing was "
                          "recorded")
        item = (answer.query_id, answer.doc_id)
        if item not in desk.index or answer.position != str(desk.index[item]) \
                or answer.label not in ("0", "1"):
            raise Refused("the form was altered (its item, position or label is not one the page sent): "
                          "nothing was recorded")
        desk.check_current()
        if item in self._second():
            raise Refused(f"{desk.place(desk.index[item])} was read twice already: nothing was recorded")
        first = self._first().get(item)
        if first is None or reviewer_of(first[1]) == reviewer or not desk.was_asked(who, item):
            raise Refused("this page is stale (the item is not the one this second reading asked): nothing "
                          "was recorded")
        store = self._open(create=True)
        assert store is not None
        with store:
            store.record([item], [int(answer.label)], reviewer_source(reviewer))
        desk.answered(who)
        return item
