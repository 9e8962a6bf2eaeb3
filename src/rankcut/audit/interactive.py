"""Labelling at the terminal: ask a person item by item, record each answer at once, and undo the
last answer while no certificate can have seen it (``rankcut audit label --interactive``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rankcut.audit.labels import SEEN_META, LabelStore, check_items, unique_items
from rankcut.audit.pools import Item

__all__ = ["LabellingSummary", "label_interactively", "seen_state"]


@dataclass(frozen=True, slots=True)
class LabellingSummary:
    """What one :func:`label_interactively` session did."""

    total: int
    """distinct items asked for"""
    labelled: int
    """labels recorded in this session"""
    skipped: int
    """items skipped in this session (they stay unlabelled)"""
    remaining: int
    """items still without a label afterwards"""
    stopped: bool
    """whether the session ended by a quit (``q`` or end of input) before the last item"""


_PROMPT = "relevant? [y]es / [n]o / [s]kip / [u]ndo the last answer / [q]uit: "
_CHOICES = {"y": "y", "yes": "y", "1": "y", "n": "n", "no": "n", "0": "n", "s": "s", "skip": "s", "u": "u",
            "undo": "u", "q": "q", "quit": "q"}   # 1/0 as a label file says them
def seen_state(store: LabelStore) -> tuple[str | None, ...]:
    """What shows whether the store's labels were seen (:data:`~rankcut.audit.labels.SEEN_META`)."""
    return tuple(store.get_meta(key) for key in SEEN_META)


def label_interactively(store: LabelStore, items: Iterable[Item], *,
                        texts: Mapping[Any, str] | None = None,
                        queries: Mapping[str, str] | None = None,
                        input: Callable[[str], str] = input,
                        output: Callable[[str], Any] = print,
                        source: str = "interactive",
                        place: Callable[[int], str] | None = None) -> LabellingSummary:
    """Ask for the label of each unlabelled item and record every answer at once.

    Each question shows the progress (``[12/300]``: the item's place among the distinct
    ``items``), the query id and its text from ``queries``, the document id and, when known, its
    text. Answers (any case): ``y``/``yes`` relevant, ``n``/``no`` not relevant, ``s``/``skip``
    leaves the item unlabelled, ``u``/``undo`` takes back the last answer of this session (its
    label is removed, kept in the store's history, and its item asked again), ``q``/``quit`` (or
    end of input) stops; anything else is asked again. Items already in the store are not asked,
    so a stopped session resumes where it left off. The order of ``items`` is the audit rule's;
    answers never change it (Assumption 1): an undo goes back to the item it undoes, so the next
    item asked is still the next of that order.

    An undo is refused once the label may have been seen: when the store records an opening for
    certification, or a sight through another audit, that is newer than the answer (``certify`` ran
    meanwhile). A label a certificate or a stop decision used is never taken back.

    :param texts: document texts keyed by ``(query_id, doc_id)`` or by ``doc_id``, as
        :func:`rankcut.data.texts.read_texts_jsonl` returns them with ``by="pair"`` / ``"doc"``.
    :param queries: query texts keyed by query id (:func:`rankcut.data.texts.read_query_texts`).
    :param input: reads one answer given a prompt (the builtin by default; tests pass a script).
    :param output: shows one line of text.
    :param source: recorded as the labels' source.
    :param place: the progress shown for the item at 1-based position ``pos`` (default
        ``"pos/total"``); a sequential audit says where in the cut or the audit order it stands.
    """
    todo = unique_items(check_items(items))
    done = store.get(todo)
    total = len(todo)
    output(f"{len(done)} of {total} items already labelled, {total - len(done)} to go. "
           f"Answer y (relevant), n (not relevant), s (skip), u (undo the last answer) or q (quit).")
    pending = [(pos, item) for pos, item in enumerate(todo, 1) if item not in done]
    # this session's answers, newest last: (index in pending, label or None for a skip, seen state)
    answers: list[tuple[int, int | None, tuple[str | None, ...]]] = []
    labelled = skipped = 0
    stopped = False
    i = 0
    while i < len(pending):
        pos, item = pending[i]
        q, d = item
        query_text = queries.get(q) if queries is not None else None
        output("")
        shown = f"{pos}/{total}" if place is None else place(pos)
        output(f"[{shown}] query {q}" + (f": {query_text}" if query_text else ""))
        output(f"document {d}")
        text = None if texts is None else texts.get(item, texts.get(d))
        if text is not None:
            output(text)
        while True:
            try:
                answer = input(_PROMPT)
            except EOFError:
                answer = "q"
            choice = _CHOICES.get(answer.strip().lower())
            if choice is not None:
                break
            output(f"please answer y (or 1), n (or 0), s, u or q (not {answer!r})")
        if choice == "q":
            stopped = True
            break
        if choice == "u":
            if not answers:
                output("nothing to undo: no answer was given in this session")
                continue
            j, label, seen = answers[-1]
            back = pending[j][1]
            if label is not None:
                if seen_state(store) != seen:
                    output(f"cannot undo the label {label} of query {back[0]}, document {back[1]}: the "
                           "labels were opened for certification (or taken by another audit) since it was "
                           "given, and a label that may have been seen is never taken back")
                    continue
                store.undo(back, label, source)
                labelled -= 1
            else:
                skipped -= 1
            answers.pop()
            output(f"undone: query {back[0]}, document {back[1]} is asked again")
            i = j
            continue
        if choice == "s":
            skipped += 1
            answers.append((i, None, seen_state(store)))
        else:
            label = int(choice == "y")
            store.record([item], [label], source)
            labelled += 1
            answers.append((i, label, seen_state(store)))
        i += 1
    remaining = len(store.missing(todo))
    output(f"{labelled} labelled, {skipped} skipped; {remaining} of {total} items still unlabelled.")
    return LabellingSummary(total=total, labelled=labelled, skipped=skipped, remaining=remaining,
                            stopped=stopped)
