"""The labelling desk: what the page shows and records, without any web framework.

A :class:`Desk` holds one audit folder as ``rankcut audit label`` reads it (the frozen audit, its
checked sample, the design's label order) and records one answer at a time through the same guards
as the label step of :mod:`rankcut.audit.workflow`: the design's ``guard_labelling`` and
``guard_store`` and the store's own refusal of a label that differs from the recorded one; an answer
is taken back (:meth:`~rankcut.audit.labels.LabelStore.undo`) only while nothing may have seen it,
as in ``rankcut audit label --interactive``. Each answer is one transaction of the SQLite label
store, so the command line and the page can label the same folder at once.

The page asks for the items in the design's label order, one at a time: an answer is taken only
for the item the page asked that reviewer (the first unlabelled one that no other reviewer is being
asked), so a stale or tampered form records nothing. The labels are kept between pages: each page
reads only the labels written since the last one
(:meth:`~rankcut.audit.labels.LabelStore.changes_since`, whoever wrote them — this page, another
reviewer, the command line), so an answer costs the same deep into a long audit as at its start.

:class:`Desk` is the page of a design with a fixed sample (excluded, two-pool, prefixes,
fixed-sequence, stratified): certify once every item is labelled. A design whose page shows more
has a desk of its own, a subclass overriding the hooks below (the ``_``-named methods a subclass
extends: what a label read changes, the standing's bound, what an answer must be, what follows
it): the sequential audit's running bound (:mod:`rankcut.serve.sequential_desk`) and the
interleaved review's chosen steps (:mod:`rankcut.serve.interleaved_desk`), by design name in
:mod:`rankcut.serve.desks`.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankcut.audit import workflow
from rankcut.audit.designs import design_of
from rankcut.audit.folder import (
    CERTIFICATE_FILE,
    LABELS_FILE,
    SAMPLE_FILE,
    deleted_store_text,
    load_audit,
    load_sample,
    open_store,
    opened_record,
)
from rankcut.audit.interactive import seen_state
from rankcut.audit.labels import LabelChanges, LabelStore, StoreMark, holds_store, reviewer_source
from rankcut.audit.manifest import load_manifest, read_json
from rankcut.audit.pools import Item
from rankcut.audit.to_label import page_texts

__all__ = ["HOLD_S", "Answer", "Desk", "Given", "Refused", "Standing"]

#: an item asked of one reviewer is not asked of another for this long (seconds)
HOLD_S = 600.0

#: the refusal of a read-on the page does not offer now
NO_READ_ON = ("read on is offered once the target is met and the review asks for nothing more; nothing "
              "was changed")


class Refused(ValueError):
    """A submission the desk refuses; nothing was recorded."""


@dataclass(frozen=True)
class Answer:
    """One submitted answer, as the form sends it back."""

    audit_id: str
    sample_hash: str
    position: str
    query_id: str
    doc_id: str
    label: str


@dataclass(frozen=True)
class Given:
    """An answer recorded: the item, its label and source, and what the store said about openings
    then (an answer may be taken back only while that is unchanged)."""

    item: Item
    label: int
    source: str
    seen: tuple[str | None, ...]
    kept: tuple[str, ...] = ()   # a review: the records whose kept answers were recorded after it
    ahead: bool = False   # a review: a record read ahead, its answer kept (recorded when it is asked)


@dataclass(frozen=True)
class Standing:
    """Where the labelling stands: the item asked now and the header's counts."""

    labelled: int
    total: int
    item: Item | None  # the item asked now (None: every item is labelled)
    position: int | None  # its 0-based place in the label order
    place: str | None  # "audit order 12 of 4,670", "cut 3 of 550", "item 7 of 40"
    progress: str | None  # sequential: the cut, and the labelled start of the audit order;
    # interleaved: the documents read, and why the review asks for this one
    bound: str | None  # the current recall bound (sequential, once the cut is labelled; interleaved)
    met: bool | None
    verdict: str | None
    can_certify: bool
    certified: bool
    done: str | None = None  # why nothing is asked (interleaved: the review asks for nothing more; a
    # fixed sample: the rest is being read by other reviewers); None: it asks, or every item is labelled
    kept: str | None = None  # a rankcut review folder: the answer kept for the record asked, if any
    can_read_on: bool = False  # interleaved: the target is met and the reviewer may read on
    reads_on: bool = False  # interleaved: the reviewer chose to read on after the target was met
    prior_read: int = 0  # a rankcut review folder: the records of its prior knowledge read so far
    kept_answers: int = 0  # a rankcut review folder: answers kept until the review asks for their records


class Desk:
    """One audit folder of a design with a fixed sample being labelled through the page (the base
    of the desks of the other designs).

    :param folder: an audit folder whose sample is drawn.
    :param hold_s: how long an item asked of one reviewer is not asked of another (seconds).
    :raises AuditStepError: before ``sample``.
    :raises ValueError: as ``rankcut audit label``, for a changed manifest, input file or sample.
    :raises TypeError: for an anytime design, whose page is a desk of its own
        (:func:`rankcut.serve.desks.open_desk`).
    """

    #: labelling may go on after certify (the bound holds at every step)
    anytime = False
    #: the review asks for one item at a time, chosen from the answers (its page order is the
    #: collection's, and a second reading follows the order the first one read)
    adaptive = False
    #: a folder of rankcut review (records, the ranker's picks)
    review = False
    #: what an item is called
    thing = "document"
    #: why certify is not offered before every item is labelled
    certify_needs = "every sampled item must be labelled first, and the labels are opened once"

    def __init__(self, folder: str | Path, *, hold_s: float = HOLD_S) -> None:
        self.audit = load_audit(folder)
        self.folder = self.audit.folder
        self.spec = design_of(self.audit)
        if self.spec.anytime and not self.anytime:   # a page without the design's bound, or its steps
            raise TypeError(f"the {self.spec.name} design's page is a desk of its own: open the folder with "
                            "rankcut.serve.desks.open_desk")
        self.info, self.rows = load_sample(self.audit)
        self.order = self._label_order()
        self.index = {item: i for i, item in enumerate(self.order)}
        self._place = self.spec.place(self.audit, self.order)   # the design's place of an item, if any
        texts, queries, titles = page_texts(self.audit)   # the frozen texts, if any, in one pass
        self.texts, self.queries = texts, queries or {}
        self.titles = titles   # shown as the text's heading
        self._lock = threading.Lock()  # one answer at a time from this server
        self._hold_s = hold_s
        self._asked: dict[str, tuple[Item, float]] = {}  # reviewer session -> (item asked, when)
        self._names: dict[str, str] = {}   # reviewer session -> the reviewer's name
        self._asking = threading.Lock()
        # the labels as last read, kept up to date from the store's changes (_read)
        self._reading = threading.Lock()
        self._mark: StoreMark | None = None
        self._held: dict[Item, int] = {}
        self._free = 0   # the first unlabelled item of the label order

    def _label_order(self) -> list[Item]:
        """The order the page asks for the items in: the design's label order."""
        return self.spec.label_order(self.audit, self.rows)

    # -- reading

    @property
    def noun(self) -> str:
        """What the folder holds, in the header: ``review`` (rankcut review's) or ``audit``."""
        return "review" if self.review else "audit"

    @property
    def audit_id(self) -> str:
        return self.audit.manifest.audit_id

    @property
    def sample_hash(self) -> str:
        return str(self.info["sample_hash"])

    def text(self, item: Item) -> str | None:
        return None if self.texts is None else self.texts.get(item)

    def title_and_text(self, item: Item) -> tuple[str | None, str | None]:
        """``item``'s title, if the texts file gives one, and its text less the title where the text
        begins with it and a line break (or is the title alone: ``rankcut review``'s records)."""
        title, text = self.titles.get(item), self.text(item)
        if title is not None and text is not None and (text == title or text.startswith(title + "\n")):
            text = text[len(title) + 1:]
        return title, text

    def query_text(self, query_id: str) -> str | None:
        return self.queries.get(query_id)

    def place(self, position: int) -> str:
        """``audit order 12 of 4,670`` (the design's place, numbers grouped), or ``item 7 of 40``."""
        shown = f"item {position + 1}/{len(self.order)}" if self._place is None else self._place(position + 1)
        return grouped(shown)

    def named(self, item: Item) -> str:
        """An item as a refusal names it: ``item 7 of 40 (query 'q1', document 'd9')``."""
        return f"{self.place(self.index[item])} (query {item[0]!r}, document {item[1]!r})"

    def _mend(self, item: Item, label: int) -> str:
        """How a recorded label is mended, for a refusal of an answer that disagrees with it (empty:
        an audit's label is changed with its own step)."""
        return ""

    def _read(self) -> None:
        """Bring the labels of the sampled items up to date: only what the store recorded since the
        last read is read and applied (call with ``_reading`` held)."""
        if not holds_store(self.folder / LABELS_FILE):
            self._mark = None
            self._forget()
            self._caught_up(None)
            return
        with open_store(self.audit, self.info, create=False) as store:
            changes = store.changes_since(self._mark)
            self._read_meta(store)
        if changes.full:
            self._forget()
        for q, d, label in changes.labels:
            self._apply((q, d), label)
        self._mark = changes.mark
        while self._free < len(self.order) and self.order[self._free] in self._held:
            self._free += 1
        self._caught_up(changes)

    def _read_meta(self, store: LabelStore) -> None:
        """Hook: read what else of the store the page shows, with the labels' changes."""

    def _caught_up(self, changes: LabelChanges | None) -> None:
        """Hook: the labels held are up to date, after ``changes`` (None: there is no store)."""

    def _forget(self) -> None:
        """Every label is to be read again (the store was replaced, or is gone)."""
        self._held.clear()
        self._free = 0

    def _apply(self, item: Item, label: int | None) -> None:
        """One label written (None: taken back), for a sampled item."""
        at = self.index.get(item)
        if at is None:
            return
        if label is None:
            self._held.pop(item, None)
            self._free = min(self._free, at)
        else:
            self._held[item] = label

    def _changed_since_opened(self, check: Callable[[LabelStore, Mapping[str, Any] | None], None]
                              ) -> str | None:
        """What certify refuses of the labels now when a certify opened them and they were edited
        since, together with their history (so the labels read are consistent, and the bound shown
        would be of the edited ones): the design's ``check`` (its ``check_opened``) says it, as
        ``rankcut audit status`` warns. None when nothing was opened, or nothing opened changed."""
        if not self._opened():
            return None
        if not holds_store(self.folder / LABELS_FILE):   # deleted (or emptied) after the opening
            record = opened_record(self.audit)
            return None if record is None else deleted_store_text(self.audit, record)
        with LabelStore(self.folder / LABELS_FILE, readonly=True) as store:
            try:
                check(store, opened_record(self.audit))
            except ValueError as err:
                return str(err)
        return None

    def _opened(self) -> bool:
        if opened_record(self.audit) is not None:
            return True
        if not holds_store(self.folder / LABELS_FILE):
            return False
        with LabelStore(self.folder / LABELS_FILE, create=False) as store:
            return store.get_meta("opened_at") is not None

    def ask(self, free: Callable[[Item], bool], who: str | None, start: int = 0,
            order: Iterable[Item] | None = None) -> Item | None:
        """The item to ask reviewer session ``who``: the one it was asked already while still
        ``free`` (to answer), else the first free one in the label order (or ``order``) that no other
        reviewer was asked in the last ``hold_s`` seconds (so that two reviewers are not asked the
        same item). ``who`` None: the first free one, nothing held. ``start``: no item before this
        place in the label order is free."""
        order = iter(order) if order is not None else (self.order[k] for k in range(start, len(self.order)))
        if who is None:
            return next((i for i in order if free(i)), None)
        with self._asking:
            now = time.monotonic()
            held = set(self._held_by_others(who, now))
            mine = self._asked.get(who)
            item = (mine[0] if mine is not None and free(mine[0]) and mine[0] not in held
                    else next((i for i in order if free(i) and i not in held), None))
            if item is None:
                self._asked.pop(who, None)
            else:
                self._asked[who] = (item, now)
            return item

    def _held_by_others(self, who: str, now: float) -> dict[Item, tuple[str | None, float]]:
        """The items asked of other reviewers in the last ``hold_s`` seconds: item → (their name,
        when). A session of the same reviewer name is not another reviewer (a closed tab, another
        device: its item is asked of them again)."""
        name = self._names.get(who)
        return {i: (self._names.get(key), at) for key, (i, at) in self._asked.items()
                if key != who and now - at < self._hold_s and (name is None or self._names.get(key) != name)}

    def _hold_note(self, who: str | None, item: Item) -> str:
        """Who is being asked ``item``, since when, and when it is free again, in words."""
        now = time.monotonic()
        with self._asking:
            name, at = self._held_by_others(who or "", now).get(item, (None, now))
        by = f"reviewer {name!r}" if name else "another reviewer"
        since, free = round((now - at) / 60), max(1, round((at + self._hold_s - now) / 60))
        return (f"being read by {by} (asked {'just now' if since < 1 else f'{since} min ago'}; it is asked "
                f"of another reviewer if not answered within {free} min)")

    def was_asked(self, who: str, item: Item) -> bool:
        """Whether ``item`` is the one reviewer session ``who`` was asked last."""
        with self._asking:
            return self._asked.get(who, (None, 0.0))[0] == item

    def answered(self, who: str) -> None:
        """``who`` answered the item it was asked: the item is no longer held for it."""
        with self._asking:
            self._asked.pop(who, None)

    def standing(self, who: str | None = None, reviewer: str | None = None) -> Standing:
        """The item to ask reviewer session ``who`` (named ``reviewer``) now, and the header."""
        self.check_current()
        if who is not None and reviewer is not None:
            with self._asking:
                self._names[who] = reviewer
        return self._standing(who)

    def _standing(self, who: str | None) -> Standing:
        """The first unlabelled item of the label order not asked of another reviewer, and the
        counts, with the design's running bound (:meth:`_bound`)."""
        with self._reading:   # the labels read, the bound's state and the pointers change together
            self._read()
            labels = self._held
            item = self.ask(lambda i: i not in labels, who, self._free)
            position = None if item is None else self.index[item]
            progress, bound, met, verdict, can_certify = self._bound(labels)
            held = next((i for i in self.order if i not in labels), None) if item is None else None
            left = len(self.order) - len(labels)
            waiting = None if held is None else (   # the rest is asked of other reviewers now
                f"The {left:,} {self.thing}{'s' * (left > 1)} still to label {'are' if left > 1 else 'is'} "
                f"being read by other reviewers (the first, {self.place(self.index[held])}, "
                f"{self._hold_note(who, held)}): reload in a while.")
        return Standing(len(labels), len(self.order), item, position,
                        None if position is None else self.place(position),
                        progress, bound, met, verdict,
                        can_certify, (self.folder / CERTIFICATE_FILE).exists(), waiting)

    def _bound(self, labels: Mapping[Item, int]
               ) -> tuple[str | None, str | None, bool | None, str | None, bool]:
        """Hook: the standing's progress line, bound, whether it meets the target, the verdict, and
        whether certify is offered, for ``labels`` (with ``_reading`` held). A fixed sample: no
        bound before certify, which is offered once every item is labelled and only once."""
        return None, None, None, None, len(labels) == len(self.order) and not self._opened()

    def check_current(self) -> None:
        """Refuse when the folder was re-frozen or resampled since the desk read it."""
        manifest = load_manifest(self.folder)
        if manifest.audit_id != self.audit_id:
            raise Refused(f"{self.folder} was frozen again (now audit {manifest.short_id}, this page labels "
                          f"audit {self.audit_id[:12]}): nothing was recorded — restart rankcut serve")
        info = read_json(self.folder / SAMPLE_FILE, "written by sample")
        if info.get("sample_hash") != self.sample_hash:
            raise Refused(f"the sample of {self.folder} changed since this page read it: nothing was "
                          "recorded — restart rankcut serve")

    # -- recording

    def record(self, answer: Answer, reviewer: str, who: str) -> Given:
        """Record one answer (one transaction), after every check; returns what was given.

        :param reviewer: the reviewer's name, recorded in the label's source.
        :param who: the reviewer's session: a label is taken only for the item it was asked.
        :raises Refused: for a form of another audit or sample, an item not in the sample, another
            item than the one asked, a label already recorded, a tampered field, or a store that
            cannot be written.
        :raises ValueError: as the label step refuses (after an opening of a fixed-size design).
        """
        if not answer.audit_id or not answer.sample_hash:   # not a form this page sent (its fields lost)
            raise Refused("the form lacks the fields the page sends (an incomplete or hand-made request): "
                          "nothing was recorded; reload the page")
        if answer.audit_id != self.audit_id or answer.sample_hash != self.sample_hash:
            raise Refused("this form was made for another audit or sample of this folder (it was frozen or "
                          "sampled again): nothing was recorded")
        item = (answer.query_id, answer.doc_id)
        if item not in self.index:
            raise Refused(f"{self._foreign(item)}: nothing was recorded")
        if answer.label not in ("0", "1"):
            raise Refused(f"the form was altered (its label {answer.label!r} is neither 0 nor 1): nothing "
                          "was recorded")
        if answer.position != str(self.index[item]):
            raise Refused(f"the form was altered ({self.named(item)} is not at the position "
                          f"{answer.position!r} it gives: its item or its position was changed): nothing was "
                          "recorded")
        label, source = int(answer.label), reviewer_source(reviewer)
        with self._lock:
            self.check_current()
            record = opened_record(self.audit)
            self.spec.guard_labelling(self.audit, record)
            with open_store(self.audit, self.info, create=True) as store:
                self.spec.guard_store(store, record, False)
                self._check_store(store)
                held = store.get([item])
                if item in held and held[item] != label:
                    raise Refused(f"{self.named(item)} is already labelled {held[item]}, and this answer "
                                  f"says {label}: two readings disagree. Nothing was recorded: the recorded "
                                  "label stands (labelled elsewhere, or on a page left open)"
                                  f"{self._mend(item, label)}")
                if item in held:
                    raise Refused(f"{self.named(item)} is already labelled {held[item]}: nothing was "
                                  "recorded (a second submit of the same answer, or labelled elsewhere)")
                kept = self._take(store, item, label, source, who)
                if kept is not None:   # kept, not recorded
                    self.answered(who)
                    return kept
                try:
                    store.record([item], [label], source, refusal_hint=self.spec.refusal_hint(store))
                except (sqlite3.Error, OSError) as err:   # read-only folder, full disk, a lock held long
                    raise Refused(f"{store.path} could not be written ({err}): nothing was "
                                  "recorded") from None
                given = Given(item, label, source, seen_state(store))
            given = self._recorded(given)
        self.answered(who)
        return given

    def _foreign(self, item: Item) -> str:
        """An answer's item that is not in the sample, as its refusal names it."""
        return (f"query {item[0]!r}, document {item[1]!r} is not in the sample of audit "
                f"{self.audit_id[:12]}")

    def _check_store(self, store: LabelStore) -> None:
        """Hook: refuse a store the answer must not be recorded in, beyond the design's guards."""

    def _take(self, store: LabelStore, item: Item, label: int, source: str, who: str) -> Given | None:
        """Hook: refuse an answer for an item other than the one asked of ``who`` (a stale page);
        a subclass may keep it instead of recording it (return what was given)."""
        if not self.was_asked(who, item):
            raise Refused(f"this page is stale: the {self.thing} to label now is not "
                          f"{self.place(self.index[item])}; nothing was recorded")
        return None

    def _recorded(self, given: Given) -> Given:
        """Hook: an answer was recorded (under the answer's lock); returns what was given."""
        return given

    def can_undo(self, given: Given | None) -> bool:
        """Whether an answer may be taken back now: while nothing may have seen it, as
        ``rankcut audit label --interactive`` allows (no opening by certify, no reuse by another
        audit since it was given), and it is still the label it gave."""
        if given is None or not holds_store(self.folder / LABELS_FILE):
            return False
        with open_store(self.audit, self.info, create=False) as store:
            return self._undo_refused(given, store) is None

    def _undo_refused(self, given: Given, store: LabelStore) -> str | None:
        """Why ``given`` cannot be taken back now (None: it can)."""
        where = f"{self.named(given.item)} cannot be taken back"
        if seen_state(store) != given.seen:
            return (f"{where}: the labels were opened for certification (or taken by another audit) since "
                    "it was given, and a label that may have been seen is never taken back")
        chosen = self._chosen_from(given, store)
        if chosen is not None:
            return f"{where}: {chosen}"
        if store.get([given.item]).get(given.item) != given.label:
            return f"{where}: its label is no longer the one you gave (changed, or taken back, since)"
        return None

    def _chosen_from(self, given: Given, store: LabelStore) -> str | None:
        """Hook: what was chosen from ``given``'s label since, so that it is not taken back (None:
        nothing)."""
        return None

    def undo(self, given: Given, who: str) -> str:
        """Take back an answer (the label removed, kept in the store's history) and ask its item of
        ``who`` again. Returns what was done, in words.

        :raises Refused: when it may have been seen since it was given, or changed since (saying why).
        """
        with self._lock:
            self.check_current()
            with open_store(self.audit, self.info, create=False) as store:
                why = self._undo_refused(given, store)
                if why is not None:
                    raise Refused(why)
                store.undo(given.item, given.label, given.source)
            self._taken_back()
            self._ask_again(who, given.item)
        return (f"undone: the {self.thing} is asked again (the label taken back is kept in the store's "
                "history)")

    def _ask_again(self, who: str, item: Item) -> None:
        """Ask ``item`` of reviewer session ``who`` (an answer of theirs taken back)."""
        with self._asking:
            self._asked[who] = (item, time.monotonic())

    def _taken_back(self) -> None:
        """Hook: an answer was taken back (under the answer's lock)."""

    # -- certify and report

    def certify(self) -> dict[str, Any]:
        """Run the certify step (``rankcut audit certify``): the labels are opened and
        ``certificate.json`` written. A fixed-size design is certified only once every sampled item is
        labelled: the page never opens its labels before that (nor twice).

        :raises Refused: when the page does not offer certify now (:attr:`certify_needs` says why).
        """
        with self._lock:
            if not self.standing().can_certify:
                raise Refused(f"certify is not offered now: {self.certify_needs}; nothing was certified")
            return workflow.certify(self.folder).content

    def read_on(self) -> str:
        """Read on after the target was met: offered only by a review that stops once its target
        is met (:mod:`rankcut.serve.interleaved_desk`).

        :raises Refused: always, here.
        """
        raise Refused(NO_READ_ON)

    def certificate(self) -> dict[str, Any] | None:
        path = self.folder / CERTIFICATE_FILE
        return read_json(path, "written by certify") if path.exists() else None

    def report_notes(self) -> list[str]:
        """What the report says beside the certificate from outside the audit folder's own files
        (none here; a review's kept answers, :class:`~rankcut.serve.interleaved_desk.InterleavedDesk`)."""
        return []

    def report_html(self) -> str:
        """The HTML report of ``rankcut audit report`` (the plot embedded), made in a scratch folder."""
        from rankcut.audit.report import write_report

        with tempfile.TemporaryDirectory() as tmp:
            files = write_report(self.folder, Path(tmp) / "report.html", self.report_notes())
            return files.report.read_text(encoding="utf-8")

    def plot_png(self) -> bytes | None:
        """The report's plot (None when the report has none, e.g. without matplotlib)."""
        from rankcut.audit.report import write_report

        with tempfile.TemporaryDirectory() as tmp:
            files = write_report(self.folder, Path(tmp) / "report.md")
            return None if files.plot is None else files.plot.read_bytes()


def grouped(text: str) -> str:
    """A place with its numbers grouped: ``audit order 12/4670`` → ``audit order 12 of 4,670``."""
    return re.sub(r"(\d+)/(\d+)", lambda m: f"{int(m[1]):,} of {int(m[2]):,}", text)
