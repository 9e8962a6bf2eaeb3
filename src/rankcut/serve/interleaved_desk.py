"""The page of the interleaved review (:mod:`rankcut.audit.designs.interleaved`), and of a folder
of ``rankcut review`` (:func:`rankcut.review.session.is_review`), which is one.

The review chooses each document from the answers: the page asks for the one step the review asks
for (screen or audit, its place and why), and the review — the policy's view, the engine's
confidence sequence, the audit order's pointer — is kept between answers: a label that is the step
asked for is taken into it, and the policy decides the next step once. A label taken back or
changed replays it (resumed from ``review.jsonl``'s steps, as the label step does). An answer is
taken back only while it is the review's last step: once a step was chosen from it, a recorded step
is never changed.

A folder of ``rankcut review`` is shown in the review's words — records, the ranker's pick and its
position in the records — and the answers it keeps from a batch file read ahead are recorded as far
as the review asks for them, when the desk opens and after each answer (one reached through labels
given elsewhere is shown above its record). While one reviewer holds the record asked now, another
is given a record read ahead (:meth:`InterleavedDesk._ahead`): its answer is kept the same way, so
the ranker and the policy see it only when the review asks for that record.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
import shlex
import sqlite3
import time
from pathlib import Path

from rankcut.audit import workflow
from rankcut.audit.designs.interleaved import (
    READ_ON_META,
    Review,
    Step,
    check_opened,
    lookahead,
    read_on_text,
    reads_on,
    recorded_steps,
    review_of,
    stored_labels,
    words_of,
    write_review,
)
from rankcut.audit.folder import CERTIFICATE_FILE, LABELS_FILE, open_store
from rankcut.audit.interactive import seen_state
from rankcut.audit.labels import LabelChanges, LabelStore, holds_store
from rankcut.audit.options import spelled
from rankcut.audit.pools import Item
from rankcut.audit.to_label import write_to_label
from rankcut.certify.result import format_bound
from rankcut.review import session as review_session  # registers the screener of rankcut review's folders
from rankcut.serve.desk import HOLD_S, NO_READ_ON, Desk, Given, Refused, Standing, grouped

__all__ = ["AHEAD", "InterleavedDesk"]

AHEAD = 8   # a review's page: how many records past the one asked now a reviewer may read ahead


def _read_on_since(store: LabelStore) -> bool:
    """Whether the reviewer chose to read on after the last label of ``store`` (that choice was
    made from it, so it is not taken back)."""
    since = store.get_meta(READ_ON_META)
    return since is not None and store.count() <= int(since)


class InterleavedDesk(Desk):
    """An interleaved review labelled through the page, one step at a time as the review asks."""

    anytime = True
    adaptive = True
    certify_needs = "the review has no step read yet"

    def __init__(self, folder: str | Path, *, hold_s: float = HOLD_S) -> None:
        super().__init__(folder, hold_s=hold_s)
        self.words = words_of(self.audit.manifest)   # the screener's: "record", "ranker" in a review
        self.thing, self.picker = self.words.item, self.words.picker   # what an item is; who picks
        # a folder of rankcut review: the page speaks of records, and the answers kept from a batch
        # file read ahead are recorded as far as the review asks for them, as label --interactive does
        self.review = review_session.is_review(self.audit.manifest)
        self.known = review_session.prior_knowledge(self.audit.manifest) if self.review else {}
        if self.review:
            review_session.record_known(self.folder)
        # the review replayed from the labels, kept between answers: a new label that is the step
        # asked for is taken into it (one policy decision), anything else replays it
        self._review: Review | None = None
        self._step: Step | None = None   # the step it asks for now
        self._rewind = False   # a label was taken back or changed since the review was replayed
        self._read_on = False  # the store says the reviewer reads on after the target was met

    def _label_order(self) -> list[Item]:
        """The collection's order (the ranking): the review says which one is asked."""
        return [(r["query_id"], r["doc_id"]) for r in self.rows]

    def place(self, position: int) -> str:
        """``rank 7 of 5,220`` (the order is the ranking); a review's ``number 72 in the file`` (its
        place in the records' file, which is not its ID), or ``rank 72 in the run`` for a run's
        documents."""
        if self.review:
            return self.words.screened_at.format(rank=f"{position + 1:,}")
        return grouped(f"rank {position + 1}/{len(self.order)}")

    def named(self, item: Item) -> str:
        """An item as a refusal names it: ``rank 7 of 5,220 (query 'q1', document 'd9')``, or a
        review's ``record '72' (number 72 in the file)``."""
        if self.review:
            return f"record {item[1]!r} ({self.place(self.index[item])})"
        return super().named(item)

    def _mend(self, item: Item, label: int) -> str:
        """How a review's recorded label is mended (empty outside a review: an audit's label is
        changed with its own step)."""
        if not self.review:
            return ""
        command = (f"{spelled('correct')} --folder {shlex.quote(str(self.folder))} --into NEW_FOLDER "
                   f"--relabel {shlex.quote(f'{item[1]}={label}')}")
        return f"; if the recorded label is the wrong one, {command} starts the review again with it mended"

    def _foreign(self, item: Item) -> str:
        if self.review:
            return f"record {item[1]!r} is not in review {self.audit_id[:12]}"
        return super()._foreign(item)

    # -- reading: the review kept up to the labels

    def _read_meta(self, store: LabelStore) -> None:
        read_on = reads_on(store)
        if read_on != self._read_on:   # the reviewer chose to read on (rankcut review read-on)
            self._read_on, self._rewind = read_on, True

    def _forget(self) -> None:
        super()._forget()
        self._rewind = True

    def _apply(self, item: Item, label: int | None) -> None:
        if item in self.index and (label is None or self._held.get(item, label) != label):
            self._rewind = True
        super()._apply(item, label)

    def _caught_up(self, changes: LabelChanges | None) -> None:
        if changes is None or changes.full or changes.labels or self._review is None or self._rewind:
            self._advance()

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
        now = next(steps, None)   # the one asked now (held by another reviewer)
        # at most AHEAD steps past it (those held by others aside), answered ones included: answers
        # read ahead, kept, never carry the page further from the review than that
        others = len(held - {None if now is None else now.item})
        after = list(itertools.islice(steps, AHEAD + others))
        free = [step for step in after if step.item[1] not in kept and step.item not in held]
        chosen = next((step for step in free if step.item == mine), free[0] if free else None)
        if chosen is None:
            return None
        with self._asking:
            self._asked[who] = (chosen.item, time.monotonic())
        between = after[:after.index(chosen)]
        return (chosen, sum(step.item[1] in kept for step in between),   # an answered one no longer read
                sum(step.item in held and step.item[1] not in kept for step in between))

    def _standing(self, who: str | None) -> Standing:
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
                lambda store, record: check_opened(store, record, review))
        n = len(self.order)
        progress = (f"{rev.read:,} of {n:,} {self.thing}s read ({screened:,} screened, "
                    f"{rev.audit_labels:,} audited; {rev.found:,} relevant found)")
        if step is not None and item is not None:
            progress += f"; step {step.number:,}: {step.why}"
        bound = met = verdict = None
        if review.steps:   # a valid bound at every step (anytime), tightest so far
            bound = f"recall ≥ {format_bound(rev.recall_lower, 'lower')}"   # as status and certify say it
            met = rev.certified
            verdict = review.verdict(float(self.audit.target["recall"]))
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
        return self.words.where(step.move, step.rank, step.position)

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

    # -- recording: the step asked for, or a record read ahead (kept)

    def _check_store(self, store: LabelStore) -> None:
        stored_labels(store)   # a label edited by hand since the page last read the store: the review
        # replayed from it would be another one (refused)

    def _take(self, store: LabelStore, item: Item, label: int, source: str, who: str) -> Given | None:
        """Refuse an answer for a record of the prior knowledge, or for another step than the one
        asked of ``who``; keep a review's record read ahead (:meth:`_ahead`) without recording it."""
        if item[1] in self.known:   # a page left open from before, or a forged form
            raise Refused(f"{self.named(item)} is of the review's prior knowledge, labelled "
                          f"{self.known[item[1]]} before it started: it is never asked, and nothing "
                          "was recorded")
        now = self._asked_now()
        ahead = self.review and now is not None and now != item   # a record read ahead
        if now is None:
            raise Refused(f"this page is stale: the review asks for no further {self.thing} (the target is "
                          f"certified, or every {self.thing} is read); nothing was recorded")
        if not self.was_asked(who, item) or (now != item and not ahead):
            raise Refused(f"this page is stale: the {self.thing} to label now is not "
                          f"{self.named(item) if self.review else self.place(self.index[item])}; "
                          "nothing was recorded")
        if not ahead:
            return None
        try:   # as given; refused where another answer is kept (checked under the lock)
            review_session.keep(self.folder, {item[1]: label}, source, agreeing=True)
        except ValueError as err:
            raise Refused(f"{err}: two readings disagree. Nothing was kept: the kept answer stands") from None
        return Given(item, label, source, seen_state(store), ahead=True)

    def _recorded(self, given: Given) -> Given:
        self._write_review()
        return dataclasses.replace(given, kept=self._record_kept()) if self.review else given

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
                                  self.texts, self.queries))

    def can_undo(self, given: Given | None) -> bool:
        """Whether an answer may be taken back now; a record's answer read ahead, while it is kept
        as given (no step was chosen from it), and once recorded as any step is."""
        if given is not None and given.ahead and self._kept_as(given):
            return True
        return super().can_undo(given)

    def _recorded_as(self, given: Given) -> bool:
        """Whether ``given``'s record is labelled in the store as it answered (a kept answer the
        review recorded when it asked for the record)."""
        if not holds_store(self.folder / LABELS_FILE):
            return False
        with open_store(self.audit, self.info, create=False) as store:
            return store.get([given.item]).get(given.item) == given.label

    def _kept_as(self, given: Given) -> bool:
        return review_session.kept_with_sources(self.folder).get(given.item[1]) == (given.label, given.source)

    def undo(self, given: Given, who: str) -> str:
        """Take back an answer; a record's answer read ahead is removed from the kept answers (it was
        never recorded) while it is kept as given, and the record is asked of ``who`` again; once the
        review recorded it, it is taken back as any step is (:meth:`Desk.undo`).

        :raises Refused: as :meth:`Desk.undo`.
        """
        if given.ahead:
            with self._lock:
                self.check_current()
                taken = review_session.unkeep(self.folder, given.item[1], given.label, given.source)
                if taken:
                    self._ask_again(who, given.item)
                elif not self._recorded_as(given):   # kept no more, and not a step: replaced
                    raise Refused(f"{self.named(given.item)} cannot be taken back: the answer you gave it "
                                  "(read ahead) is no longer kept — another answer replaced it (a batch "
                                  "file, or another reviewer)")
            if taken:
                return (f"undone: your answer for record {given.item[1]} (read ahead) is no longer kept; it "
                        "was never recorded, and the record is asked again")
        return super().undo(given, who)

    def _chosen_from(self, given: Given, store: LabelStore) -> str | None:
        if self._last_step() != given.item:   # a later step was chosen from it
            return ("the review took a step after it, chosen from its label, and a recorded step is never "
                    "changed")
        if _read_on_since(store):
            return "the reviewer chose to read on after it, from the labels up to it (the target met)"
        return None

    def _taken_back(self) -> None:
        self._write_review()

    def read_on(self) -> str:
        """Read on after the target was met (``rankcut review read-on``, ``rankcut audit read-on``):
        the review asks for the screener's next picks from now on. Returns what was done, in words.

        :raises Refused: when the page does not offer it now (the target not met, or the review asks
            for a step still).
        """
        with self._lock:
            standing = self.standing()
            if not (standing.can_read_on or standing.reads_on):   # reading on already: said so below
                raise Refused(NO_READ_ON)
            try:
                since, now = (review_session.read_on(self.folder) if self.review
                              else workflow.read_on(self.folder))
            except (sqlite3.Error, OSError) as err:   # a lock held long, a full disk
                raise Refused(f"{self.folder / LABELS_FILE} could not be written ({err}): nothing was "
                              "changed") from None
            return read_on_text(since, now, self.words)

    def report_notes(self) -> list[str]:
        """A review's report says what ``rankcut review report`` says beside the certificate: the
        records files changed since start, and the records answered relevant but kept, which no
        certificate counts (:func:`rankcut.review.session.report_notes`)."""
        if not self.review:
            return []
        return review_session.report_notes(self.folder, review_session.changed_sources(self.audit.manifest))
