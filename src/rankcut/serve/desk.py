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
asked), so a stale or tampered form records nothing. For the sequential design the recall bound
after every answer is computed in memory by the design's own certificate (``Design.certify`` on the
counts certify would take); nothing is written and no opening is recorded — only ``certify``
records one. The confidence sequence's value at each prefix is kept between answers
(:meth:`~rankcut.certify.sequential.SequentialAudit.running_state`), so an answer evaluates only the
prefix it adds. So are the labels, the first unlabelled item and the labelled start of the audit
order: each page reads only the labels written since the last one
(:meth:`~rankcut.audit.labels.LabelStore.changes_since`, whoever wrote them — this page, another
reviewer, the command line), so an answer costs the same deep into a long audit as at its start.

The interleaved design's review chooses each document from the answers: the page asks for the one
step the review asks for (screen or audit, its place and why), and the review — the policy's view,
the engine's confidence sequence, the audit order's pointer — is kept between answers: a label
that is the step asked for is taken into it, and the policy decides the next step once. A label
taken back or changed replays it (resumed from ``review.jsonl``'s steps, as the label step does).
An answer is taken back only while it is the review's last step: once a step was chosen from it, a
recorded step is never changed. A folder of ``rankcut review`` (:func:`rankcut.review.session.is_review`)
is shown in the review's words — records, the ranker's pick and its position in the records — and
the answers it keeps from a batch file read ahead are recorded as far as the review asks for them,
when the desk opens and after each answer (one reached through labels given elsewhere is shown
above its record). While one reviewer holds the record asked now, another is given a record read
ahead (:meth:`Desk._ahead`): its answer is kept the same way, so the ranker and the policy see it
only when the review asks for that record.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
import shlex
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rankcut.audit import workflow
from rankcut.audit.designs import certificates, design_of
from rankcut.audit.designs import interleaved as interleaved_design
from rankcut.audit.designs import sequential as sequential_design
from rankcut.audit.designs.interleaved import (
    READ_ON_META,
    Review,
    Step,
    lookahead,
    read_on_text,
    reads_on,
    recorded_steps,
    review_of,
    stored_labels,
    verdict_text,
    words_of,
    write_review,
)
from rankcut.audit.designs.sequential import engine, parts
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
from rankcut.audit.labels import LabelStore, StoreMark, holds_store
from rankcut.audit.manifest import load_manifest, read_json
from rankcut.audit.options import spelled
from rankcut.audit.pools import Item
from rankcut.audit.to_label import write_to_label
from rankcut.certify.result import format_bound
from rankcut.certify.sequential import RunningState, SequentialAudit
from rankcut.review import session as review_session  # registers the screener of rankcut review's folders

__all__ = ["HOLD_S", "Answer", "Desk", "Given", "Refused", "Standing"]

#: an item asked of one reviewer is not asked of another for this long (seconds)
HOLD_S = 600.0
AHEAD = 8   # a review's page: how many records past the one asked now a reviewer may read ahead


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


def _read_on_since(store: LabelStore) -> bool:
    """Whether the reviewer chose to read on after the last label of ``store`` (that choice was
    made from it, so it is not taken back)."""
    since = store.get_meta(READ_ON_META)
    return since is not None and store.count() <= int(since)


class Desk:
    """One audit folder being labelled through the page.

    :param folder: an audit folder whose sample is drawn.
    :param hold_s: how long an item asked of one reviewer is not asked of another (seconds).
    :raises AuditStepError: before ``sample``.
    :raises ValueError: as ``rankcut audit label``, for a changed manifest, input file or sample.
    """

    def __init__(self, folder: str | Path, *, hold_s: float = HOLD_S) -> None:
        from rankcut.data.texts import read_query_texts, read_texts_jsonl

        self.audit = load_audit(folder)
        self.folder = self.audit.folder
        self.spec = design_of(self.audit)
        self.interleaved = self.spec.name == "interleaved"
        if self.spec.adaptive and not self.interleaved:   # each answer decides the next item
            raise ValueError(f"rankcut serve does not label the {self.spec.name} design: its items are "
                             "chosen one at a time from the answers; use rankcut audit label --interactive")
        self.info, self.rows = load_sample(self.audit)
        # a folder of rankcut review: the page speaks of records, and the answers kept from a batch
        # file read ahead are recorded as far as the review asks for them, as label --interactive does
        self.review = review_session.is_review(self.audit.manifest)
        self.known = review_session.prior_knowledge(self.audit.manifest) if self.review else {}
        if self.review:
            review_session.record_known(self.folder)
        # the interleaved review asks for one document at a time, chosen from the answers: the page's
        # order is the collection's (the ranking), and the review says which one is asked (_review)
        self.order = ([(r["query_id"], r["doc_id"]) for r in self.rows] if self.interleaved
                      else self.spec.label_order(self.audit, self.rows))
        self.index = {item: i for i, item in enumerate(self.order)}
        self._place = None if self.interleaved else self.spec.place(self.audit, self.order)
        entry = self.audit.inputs.get("texts")   # the file found (its path is relative to the folder)
        self.texts = None if entry is None else read_texts_jsonl(entry["path"], by="pair")
        self.queries = {} if entry is None else read_query_texts(entry["path"])
        self.sequential = self.spec.name == "sequential"
        # the sequential audit's two parts: the cut (rank order), then the audit order
        self.cut, self.audit_order = parts(self.rows) if self.sequential else ([], [])
        self._lock = threading.Lock()  # one answer at a time from this server
        self._hold_s = hold_s
        self._asked: dict[str, tuple[Item, float]] = {}  # reviewer session -> (item asked, when)
        self._names: dict[str, str] = {}   # reviewer session -> the reviewer's name
        self._asking = threading.Lock()
        # the sequential bound's max C_s per prefix, for the rule it was computed under
        self._running: tuple[SequentialAudit, RunningState] | None = None
        # the labels as last read, kept up to date from the store's changes (_read)
        self._reading = threading.Lock()
        self._mark: StoreMark | None = None
        self._held: dict[Item, int] = {}
        self._free = 0   # the first unlabelled item of the label order
        self._audit_index = {item: k for k, item in enumerate(self.audit_order)}
        self._y = np.full(len(self.audit_order), -1, dtype=np.int64)   # audit order labels (-1: none)
        self._prefix = 0   # how many items at the start of the audit order are labelled
        # the interleaved review replayed from the labels, kept between answers: a new label that is
        # the step asked for is taken into it (one policy decision), anything else replays it
        self._review: Review | None = None
        self._step: Step | None = None   # the step it asks for now
        self._rewind = False   # a label was taken back or changed since the review was replayed
        self._read_on = False  # the store says the reviewer reads on after the target was met

    @property
    def anytime(self) -> bool:
        """Whether labelling may go on after certify (the bound holds at every step)."""
        return self.sequential or self.interleaved

    # -- reading

    @property
    def noun(self) -> str:
        """What the folder holds, in the header: ``review`` (rankcut review's) or ``audit``."""
        return "review" if self.review else "audit"

    @property
    def thing(self) -> str:
        """What an item is called: the interleaved review's screener's word (``record`` in a review),
        ``document`` otherwise."""
        return words_of(self.audit.manifest).item if self.interleaved else "document"

    @property
    def picker(self) -> str:
        """Who picks the next screened item of the interleaved review (``ranker`` in a review)."""
        return words_of(self.audit.manifest).picker

    @property
    def audit_id(self) -> str:
        return self.audit.manifest.audit_id

    @property
    def sample_hash(self) -> str:
        return str(self.info["sample_hash"])

    def text(self, item: Item) -> str | None:
        return None if self.texts is None else self.texts.get(item)

    def query_text(self, query_id: str) -> str | None:
        return self.queries.get(query_id)

    def place(self, position: int) -> str:
        """``audit order 12 of 4,670`` (the design's place, numbers grouped), or ``item 7 of 40``
        (``rank 7 of 5,220`` for the interleaved review, whose order is the ranking; a review's
        ``number 72 in the file``: its place in the records' file, which is not its ID; ``rank 72
        in the run`` for a run's documents)."""
        if self.review:
            return words_of(self.audit.manifest).screened_at.format(rank=f"{position + 1:,}")
        kind = "rank" if self.interleaved else "item"
        n = len(self.order)
        shown = f"{kind} {position + 1}/{n}" if self._place is None else self._place(position + 1)
        return re.sub(r"(\d+)/(\d+)", lambda m: f"{int(m[1]):,} of {int(m[2]):,}", shown)

    def named(self, item: Item) -> str:
        """An item as a refusal names it: ``rank 7 of 5,220 (query 'q1', document 'd9')``, or a
        review's ``record '72' (number 72 in the file)``."""
        if self.review:
            return f"record {item[1]!r} ({self.place(self.index[item])})"
        return f"{self.place(self.index[item])} (query {item[0]!r}, document {item[1]!r})"

    def _mend(self, item: Item, label: int) -> str:
        """How a review's recorded label is mended, for a refusal of an answer that disagrees
        with it (empty outside a review: an audit's label is changed with its own step)."""
        if not self.review:
            return ""
        command = (f"{spelled('correct')} --folder {shlex.quote(str(self.folder))} --into NEW_FOLDER "
                   f"--relabel {shlex.quote(f'{item[1]}={label}')}")
        return f"; if the recorded label is the wrong one, {command} starts the review again with it mended"

    def _read(self) -> None:
        """Bring the labels of the sampled items up to date: only what the store recorded since the
        last read is read and applied (call with ``_reading`` held)."""
        if not holds_store(self.folder / LABELS_FILE):
            self._mark = None
            self._forget()
            if self.interleaved:
                self._advance()
            return
        with open_store(self.audit, self.info, create=False) as store:
            changes = store.changes_since(self._mark)
            read_on = self.interleaved and reads_on(store)
        if changes.full:
            self._forget()
        if read_on != self._read_on:   # the reviewer chose to read on (rankcut review read-on)
            self._read_on, self._rewind = read_on, True
        for q, d, label in changes.labels:
            self._apply((q, d), label)
        self._mark = changes.mark
        if self.interleaved and (changes.full or changes.labels or self._review is None or self._rewind):
            self._advance()
        while self._free < len(self.order) and self.order[self._free] in self._held:
            self._free += 1
        while self._prefix < len(self.audit_order) and self._y[self._prefix] >= 0:
            self._prefix += 1

    def _advance(self) -> None:
        """Bring the interleaved review up to the labels held: take each step asked for while it
        has a label; replay it (from ``review.jsonl``'s steps, then the policy) after a label was
        taken back or changed, or when a label is left that the review never asked for (refused
        there, as the label step refuses it)."""
        review, step = self._review, self._step
        if review is not None and not self._rewind:
            while step is not None and step.item in self._held:
                review.take(step, self._held[step.item])
                step = review.next()
        if review is None or self._rewind or len(review.steps) != len(self._held):
            self._review = self._step = None   # a refusal below leaves none: the next read replays it
            review = review_of(self.audit, self.rows, self._held, str(self.folder / LABELS_FILE),
                               recorded_steps(self.folder), cached=True, read_on=self._read_on)
            step = review.next()
        self._review, self._step, self._rewind = review, step, False

    def _forget(self) -> None:
        self._held.clear()
        self._rewind = True
        self._free = self._prefix = 0
        self._y[:] = -1

    def _apply(self, item: Item, label: int | None) -> None:
        """One label written (None: taken back), for a sampled item."""
        at = self.index.get(item)
        if at is None:
            return
        k = self._audit_index.get(item)
        if label is None or self._held.get(item, label) != label:
            self._rewind = True
        if label is None:
            self._held.pop(item, None)
            self._free = min(self._free, at)
        else:
            self._held[item] = label
        if k is not None:
            self._y[k] = -1 if label is None else label
            if label is None:
                self._prefix = min(self._prefix, k)

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

    def _ahead(self, who: str, review: Review) -> tuple[Step, int, int] | None:
        """A review's page, when the record asked now is held by another reviewer: a record the
        review asks for after it *if the records before it are not relevant*
        (:func:`~rankcut.audit.designs.interleaved.lookahead` on a copy of the review, the kept
        answers and the prior knowledge as known), held by no other reviewer and with no answer
        known, at most :data:`AHEAD` records ahead; the one this reviewer holds if it still is one.
        Its answer is kept (:func:`~rankcut.review.session.keep`), and recorded only when the review
        asks for that record, as a batch file's is: the ranker and the policy never see it before.
        Returns the step, and how many of the steps between have a known answer."""
        kept = {**review_session.kept_answers(self.folder), **self.known}   # the frozen prior wins
        qid = self.order[0][0]
        with self._asking:
            held = set(self._held_by_others(who, time.monotonic()))
            mine = self._asked.get(who, (None, 0.0))[0]
        probe = copy.deepcopy(review)   # the lookahead takes its steps: on a copy to throw away
        steps = lookahead(probe, {(qid, rid): y for rid, y in kept.items()})
        after = list(itertools.islice(steps, 1, 1 + AHEAD + len(kept) + len(held)))
        free = [step for step in after if step.item[1] not in kept and step.item not in held]
        chosen = next((step for step in free if step.item == mine), free[0] if free else None)
        if chosen is None:
            return None
        with self._asking:
            self._asked[who] = (chosen.item, time.monotonic())
        between = after[:after.index(chosen)]
        return (chosen, sum(step.item[1] in kept for step in between),   # an answered one no longer read
                sum(step.item in held and step.item[1] not in kept for step in between))

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
        if self.interleaved:
            return self._standing_interleaved(who)
        with self._reading:   # the labels read, the bound's state and the pointers change together
            self._read()
            labels = self._held
            item = self.ask(lambda i: i not in labels, who, self._free)
            position = None if item is None else self.index[item]
            bound = met = verdict = None
            progress = None
            cut_done = True
            refused = None
            if self.sequential:
                cut, order, t = self.cut, self.audit_order, self._prefix
                cut_done = all(i in labels for i in cut)
                progress = (f"cut: {sum(i in labels for i in cut)} of {len(cut)} labelled; audit order: "
                            + (f"positions 1–{t}" if t else "none") + f" of {len(order)} labelled")
                if cut_done:
                    bound, met, verdict = self._preview(labels, cut, order, t)
                    refused = self._changed_since_opened(lambda store, record: sequential_design.check_opened(
                        store, record, {i: labels[i] for i in cut}, {i: labels[i] for i in order[:t]}, order))
            done = len(labels) == len(self.order)
            held = next((i for i in self.order if i not in labels), None) if item is None else None
            left = len(self.order) - len(labels)
            waiting = None if held is None else (   # the rest is asked of other reviewers now
                f"The {left:,} {self.thing}{'s' * (left > 1)} still to label {'are' if left > 1 else 'is'} "
                f"being read by other reviewers (the first, {self.place(self.index[held])}, "
                f"{self._hold_note(who, held)}): reload in a while.")
        if refused:
            met, verdict, cut_done = False, refused, False
        can_certify = cut_done if self.sequential else done and not self._opened()
        return Standing(len(labels), len(self.order), item, position,
                        None if position is None else self.place(position),
                        progress, bound, met, verdict,
                        can_certify, (self.folder / CERTIFICATE_FILE).exists(), waiting)

    def _standing_interleaved(self, who: str | None) -> Standing:
        """The step the interleaved review asks for now (move, place, why) and its running bound."""
        with self._reading:
            self._read()
            review, step = self._review, self._step
            assert review is not None   # _read replays it
            rev, screened = review.state.review, review.state.screened
            item = None if step is None else self.ask(lambda i: i == step.item, who, self.index[step.item])
            ahead = (self._ahead(who, review) if step is not None and item is None and self.review and who
                     else None)
            refused = self._changed_since_opened(
                lambda store, record: interleaved_design.check_opened(store, record, review))
        n = len(self.order)
        progress = (f"{rev.read:,} of {n:,} {self.thing}s read ({screened:,} screened, "
                    f"{rev.audit_labels:,} audited; {rev.found:,} relevant found)")
        if step is not None and item is not None:
            progress += f"; step {step.number:,}: {step.why}"
        bound = met = verdict = None
        if review.steps:   # a valid bound at every step (anytime), tightest so far
            rho = float(self.audit.target["recall"])
            bound = f"recall ≥ {format_bound(rev.recall_lower, 'lower')}"   # as status and certify say it
            met = rev.certified
            verdict = verdict_text(rho, met, rev.read, n, screened, rev.audit_labels, rev.found,
                                   rev.running_upper, review.words, rev.met_step)
        if refused:   # what certify refuses, in place of the verdict of labels it would not take
            met, verdict = False, refused
        place = done = kept = None
        if step is None:
            done = (f"The target is certified: the review asks for no further {self.thing}."
                    if rev.certified and not review.read_on else
                    f"Every {self.thing} is read: the review asks for no further {self.thing}.")
            if review.can_read_on:   # the reviewer may read on: the button, or the command beside the page
                command = (f"rankcut review read-on --folder {shlex.quote(str(self.folder))}" if self.review
                           else f"rankcut audit read-on --audit {shlex.quote(str(self.folder))}")
                done += (f" To read on (the {review.words.picker}'s next picks, each counted; the target "
                         f"stays met): press Read on, or run {command}")
        elif ahead is not None:   # a review: the record asked now is another reviewer's; read ahead
            (later, answered, others), item = ahead, ahead[0].item
            place = f"read ahead · {self._step_place(later)}"
            between = later.number - step.number - 1
            counts = ((answered, "answered already (kept, or the prior knowledge)"),
                      (others, "being read ahead by other reviewers, taken as not relevant"),
                      (between - answered - others, "not read yet, taken as not relevant"))
            parts = [f"{n:,} {what}" for n, what in counts if n]
            kept = (f"The record the review asks for now is {self._hold_note(who, step.item)}. This one is "
                    f"asked after it (step {later.number:,}) if that one is not relevant"
                    + (f"; of the {between:,} record{'' if between == 1 else 's'} between, "
                       + " and ".join(parts) if parts else "")
                    + ". Your answer is kept, and recorded when the review asks for it (after a relevant "
                    "answer the ranker may choose other records first, and the answer stays kept).")
        elif item is None:
            done = (f"The {self.thing} the review asks for now is {self._hold_note(who, step.item)}: reload "
                    "in a while.")
        else:
            place = self._step_place(step)
            kept = self._kept(step.item)
        return Standing(len(review.steps), n, item, None if item is None else self.index[item], place,
                        progress, bound, met, verdict, bool(review.steps) and not refused,
                        (self.folder / CERTIFICATE_FILE).exists(), done, kept,
                        step is None and review.can_read_on, review.read_on,
                        sum(s.item[1] in self.known for s in review.steps),
                        len(review_session.kept_answers(self.folder)) if self.review else 0)

    def _step_place(self, step: Step) -> str:
        """``audit · audit order position 1,204, rank 4,011`` (numbers grouped)."""
        return f"{step.move} · " + re.sub(r"\d+", lambda m: f"{int(m[0]):,}", self._where(step))

    def where(self, step: Step) -> str:
        """Where the step's item stands, in the screener's words (as ``to_label`` says it)."""
        return words_of(self.audit.manifest).where(step.move, step.rank, step.position)

    def _where(self, step: Step) -> str:
        """Where the step's document stands: the design's words (``rank 301 of the ranking``), or a
        review's (``the ranker's pick, number 30 in the file``)."""
        if not self.review:
            return self.where(step)
        why = "the ranker's pick" if step.move == "screen" else "the next of the frozen random order"
        return f"{why}, {self.where(step)}"

    def _kept(self, item: Item) -> str | None:
        """A review's answer for ``item`` kept from a batch file read ahead (``label --from``), which
        the page asks again: it is recorded only when the review asks for the record."""
        if not self.review:
            return None
        label = review_session.kept_answers(self.folder).get(item[1])
        if label is None:
            return None
        said = "relevant" if label else "not relevant"
        return (f"this record was answered before the review asked for it (read ahead, or in a batch file): "
                f"{said} (kept, not recorded); answer it here to record it")

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
            what = (f"record {answer.doc_id!r} is not in review {self.audit_id[:12]}" if self.review else
                    f"query {answer.query_id!r}, document {answer.doc_id!r} is not in the sample of audit "
                    f"{self.audit_id[:12]}")
            raise Refused(f"{what}: nothing was recorded")
        if answer.position != str(self.index[item]) or answer.label not in ("0", "1"):
            raise Refused("the form was altered (its position or label is not one the page sent): nothing "
                          "was recorded")
        label, source = int(answer.label), f"serve reviewer {reviewer}"
        with self._lock:
            self.check_current()
            record = opened_record(self.audit)
            self.spec.guard_labelling(self.audit, record)
            with open_store(self.audit, self.info, create=True) as store:
                self.spec.guard_store(store, record, False)
                if self.interleaved:   # a label edited by hand since the page last read the store: the
                    stored_labels(store)   # review replayed from it would be another one (refused)
                held = store.get([item])
                if item in held and held[item] != label:
                    raise Refused(f"{self.named(item)} is already labelled {held[item]}, and this answer "
                                  f"says {label}: two readings disagree. Nothing was recorded: the recorded "
                                  "label stands (labelled elsewhere, or on a page left open)"
                                  f"{self._mend(item, label)}")
                if item in held:
                    raise Refused(f"{self.named(item)} is already labelled {held[item]}: nothing was "
                                  "recorded (a second submit of the same answer, or labelled elsewhere)")
                if item[1] in self.known:   # a page left open from before, or a forged form
                    raise Refused(f"{self.named(item)} is of the review's prior knowledge, labelled "
                                  f"{self.known[item[1]]} before it started: it is never asked, and nothing "
                                  "was recorded")
                now = self._asked_now() if self.interleaved else None
                ahead = self.review and now is not None and now != item   # a record read ahead
                if not self.was_asked(who, item) or (self.interleaved and now != item and not ahead):
                    raise Refused(f"this page is stale: the {self.thing} to label now is not "
                                  f"{self.named(item) if self.review else self.place(self.index[item])}; "
                                  "nothing was recorded")
                if ahead:   # a review's record read ahead: its answer is kept, not recorded
                    try:   # as given; refused where another answer is kept (checked under the lock)
                        review_session.keep(self.folder, {item[1]: label}, source, agreeing=True)
                    except ValueError as err:
                        raise Refused(f"{err}: two readings disagree. Nothing was kept: the kept answer "
                                      "stands") from None
                    self.answered(who)
                    return Given(item, label, source, seen_state(store), ahead=True)
                try:
                    store.record([item], [label], source, refusal_hint=self.spec.refusal_hint(store))
                except (sqlite3.Error, OSError) as err:   # read-only folder, full disk, a lock held long
                    raise Refused(f"{store.path} could not be written ({err}): nothing was "
                                  "recorded") from None
                given = Given(item, label, source, seen_state(store))
            if self.interleaved:
                self._write_review()
            if self.review:
                given = dataclasses.replace(given, kept=self._record_kept())
        self.answered(who)
        return given

    def _record_kept(self) -> tuple[str, ...]:
        """Record the answers a review keeps (read ahead on the page, or given in a batch file) and
        its prior knowledge (which an audit move may meet before the ranker has read it all), as
        long as the review asks for their records next (under the answer's lock): as ``label --from``
        records them, each with the source it was given by (``serve reviewer NAME``, the file,
        :data:`~rankcut.review.session.PRIOR_SOURCE`). Returns their record ids."""
        recorded: list[str] = []
        while (asked := self._asked_now()) is not None:
            kept = ((self.known[asked[1]], review_session.PRIOR_SOURCE) if asked[1] in self.known
                    else review_session.kept_with_sources(self.folder).get(asked[1]))
            if kept is None:
                break
            label, source = kept
            try:
                with open_store(self.audit, self.info, create=True) as store:
                    store.record([asked], [label], source, refusal_hint=self.spec.refusal_hint(store))
            except (sqlite3.Error, OSError):   # the answer itself is recorded; the kept one stays kept
                break
            self._write_review()
            recorded.append(asked[1])
        if recorded:
            review_session.keep(self.folder, {}, "")   # the file lists only the answers still kept
        return tuple(recorded)

    def _asked_now(self) -> Item | None:
        """The document the interleaved review asks for now (after the labels written since)."""
        with self._reading:
            self._read()
            return None if self._step is None else self._step.item

    def _last_step(self) -> Item | None:
        """The document of the interleaved review's last step (None before the first)."""
        with self._reading:
            self._read()
            assert self._review is not None
            return self._review.steps[-1].item if self._review.steps else None

    def _write_review(self) -> None:
        """``review.jsonl`` and ``to_label`` as the label step writes them: every step so far (the
        review's record, and where the next call resumes its replay), and the item asked next."""
        with self._reading:
            self._read()
            assert self._review is not None
            write_review(self.folder, self._review)
            step = self._step   # the positions the design would give, from the review kept here
            fmt = Path(str(self.info["to_label"])).suffix[1:]
            write_to_label(self.audit, [] if step is None else [step.item], fmt,
                           known=([] if step is None else [(step.move, self.where(step), step.why)],
                                  self.texts))

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
        if self.interleaved and self._last_step() != given.item:   # a later step was chosen from it
            return (f"{where}: the review took a step after it, chosen from its label, and a recorded step "
                    "is never changed")
        if _read_on_since(store):
            return (f"{where}: the reviewer chose to read on after it, from the labels up to it (the target "
                    "met)")
        if store.get([given.item]).get(given.item) != given.label:
            return f"{where}: its label is no longer the one you gave (changed, or taken back, since)"
        return None

    def undo(self, given: Given, who: str) -> None:
        """Take back an answer (the label removed, kept in the store's history) and ask its item of
        ``who`` again.

        :raises Refused: when it may have been seen since it was given, or changed since (saying why).
        """
        with self._lock:
            self.check_current()
            with open_store(self.audit, self.info, create=False) as store:
                why = self._undo_refused(given, store)
                if why is not None:
                    raise Refused(why)
                store.undo(given.item, given.label, given.source)
            if self.interleaved:
                self._write_review()
        with self._asking:
            self._asked[who] = (given.item, time.monotonic())

    # -- certify and report

    def certify(self) -> dict[str, Any]:
        """Run the certify step (``rankcut audit certify``): the labels are opened and
        ``certificate.json`` written. A fixed-size design is certified only once every sampled item is
        labelled: the page never opens its labels before that (nor twice).

        :raises Refused: when the page does not offer certify now (a sequential audit whose cut is not
            labelled, a fixed-size one not fully labelled or already opened).
        """
        with self._lock:
            if not self.standing().can_certify:
                raise Refused("certify is not offered now: " + (
                    "every item of the cut must be labelled first" if self.sequential else
                    "the review has no step read yet" if self.interleaved else
                    "every sampled item must be labelled first, and the labels are opened once")
                    + "; nothing was certified")
            return workflow.certify(self.folder).content

    def read_on(self) -> str:
        """Read on after the target was met (``rankcut review read-on``, ``rankcut audit read-on``):
        the review asks for the screener's next picks from now on. Returns what was done, in words.

        :raises Refused: when the page does not offer it now (the target not met, or the review asks
            for a step still).
        """
        with self._lock:
            standing = self.standing()
            if not (standing.can_read_on or standing.reads_on):   # reading on already: said so below
                raise Refused("read on is offered once the target is met and the review asks for nothing "
                              "more; nothing was changed")
            try:
                since, now = (review_session.read_on(self.folder) if self.review
                              else workflow.read_on(self.folder))
            except (sqlite3.Error, OSError) as err:   # a lock held long, a full disk
                raise Refused(f"{self.folder / LABELS_FILE} could not be written ({err}): nothing was "
                              "changed") from None
            return read_on_text(since, now, words_of(self.audit.manifest))

    def certificate(self) -> dict[str, Any] | None:
        path = self.folder / CERTIFICATE_FILE
        return read_json(path, "written by certify") if path.exists() else None

    def report_html(self) -> str:
        """The HTML report of ``rankcut audit report`` (the plot embedded), made in a scratch folder."""
        from rankcut.audit.report import write_report

        with tempfile.TemporaryDirectory() as tmp:
            files = write_report(self.folder, Path(tmp) / "report.html")
            return files.report.read_text(encoding="utf-8")

    def plot_png(self) -> bytes | None:
        """The report's plot (None when the report has none, e.g. without matplotlib)."""
        from rankcut.audit.report import write_report

        with tempfile.TemporaryDirectory() as tmp:
            files = write_report(self.folder, Path(tmp) / "report.md")
            return None if files.plot is None else files.plot.read_bytes()
