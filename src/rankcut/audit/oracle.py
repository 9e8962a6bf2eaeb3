"""The qrels oracle: a reviewer simulated from TREC qrels (§2.3; Assumption 2 holds with respect to
the qrels by construction), what it has no judgement for, and the guard that refuses qrels which do
not cover the audit's queries (every unjudged item would be labelled not relevant, and the
certificate would come out falsely tight)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rankcut.audit.folder import Audit
from rankcut.audit.labels import check_items
from rankcut.audit.options import spelled as _o
from rankcut.audit.pools import NUMBERED, Item
from rankcut.audit.provenance import AuditWarning
from rankcut.data.lists import check_threshold

__all__ = ["check_qrels_cover", "check_unretrieved_judged", "qrels_oracle", "uncovered_queries",
           "unjudged_items"]


def qrels_oracle(qrels: Mapping[str, Mapping[str, int]], items: Iterable[Item],
                 threshold: float = 1) -> list[int]:
    """Labels from qrels, for simulated audits: 1 when the grade is ``≥ threshold``, else 0.

    A document the qrels do not judge gets 0, as in trec_eval. Real qrels judge only pooled
    documents, so a simulation labels the excluded pool as the qrels see it; Assumption 2 (the
    oracle is the truth) then holds with respect to the qrels, not to the unknown full truth.

    :param qrels: ``{query_id: {doc_id: grade}}``, e.g. from :func:`rankcut.data.trec.read_qrels`.
    :param items: ``(query_id, doc_id)`` pairs.
    :param threshold: a finite number > 0.
    :returns: one 0/1 label per item, in order (ready for :meth:`LabelStore.record`).
    """
    t = check_threshold(threshold)
    return [int(qrels.get(q, {}).get(d, 0) >= t) for q, d in check_items(items)]


def unjudged_items(qrels: Mapping[str, Mapping[str, int]], items: Iterable[Item]) -> list[Item]:
    """The items the qrels hold no judgement for (:func:`qrels_oracle` labels them 0)."""
    return [(q, d) for q, d in check_items(items) if d not in qrels.get(q, {})]


def uncovered_queries(qrels: Mapping[str, Mapping[str, int]], listed: Mapping[str, Iterable[str]]
                      ) -> list[str]:
    """The queries of ``listed`` (``{query_id: its documents}``) none of whose documents the qrels
    judge: qrels of another topic set (the query is not judged at all) or of another collection
    (its judged documents are not these). Labelling them from the qrels would call every item not
    relevant."""
    return [q for q, docs in listed.items() if not any(d in qrels.get(q, {}) for d in docs)]


def check_qrels_cover(audit: Audit, judged: Mapping[str, Mapping[str, int]], order: Sequence[Item],
                       qrels: str | Path) -> None:
    """The qrels oracle's guard. A sampled query none of whose documents (those the run lists for
    it, and those sampled for it) the qrels judge is uncovered: the qrels may be another topic
    set's or collection's, or the query may have no relevant document in positives-only qrels —
    the file cannot tell. Refused when most sampled items belong to uncovered queries (nearly
    every label would be a guess of 0), a warning naming them otherwise."""
    known = set(audit.base.qids)
    listed: dict[str, set[str]] = {}
    for q, d in order:
        if q not in listed:
            listed[q] = set(audit.base.listed(q)) if q in known else set()
        listed[q].add(d)
    uncovered = uncovered_queries(judged, listed)
    if not uncovered:
        return
    gone = set(uncovered)
    n_items = sum(q in gone for q, _ in order)
    names = ", ".join(repr(q) for q in uncovered[:3])
    if len(uncovered) > 3:
        names += f" and {len(uncovered) - 3} more"
    what = (f"{qrels} judges none of the documents listed for {len(uncovered)} of the {len(listed)} sampled "
            f"queries ({names}), which hold {n_items} of the {len(order)} sampled items")
    if 2 * n_items > len(order):
        raise ValueError(f"{what}: they may be the qrels of another topic set or collection, and labelling "
                         "their items not relevant would give a falsely tight certificate — refused, nothing "
                         f"was recorded; give the qrels of these queries, or {_o('unjudged_nonrelevant')} to "
                         "label unjudged items not relevant all the same")
    warnings.warn(f"{what}; their items are labelled not relevant (right if these queries have no relevant "
                  "document, wrong if the qrels are another topic set's)", AuditWarning, stacklevel=4)


def check_unretrieved_judged(audit: Audit, judged: Mapping[str, Mapping[str, float]], todo: Sequence[Item],
                             threshold: float, qrels: str | Path) -> None:
    """The qrels oracle's guard for a corpus known only by its size: its unretrieved documents are
    named ``#u`` (:mod:`rankcut.audit.pools`), which no qrels judge. When the qrels grade relevant
    documents that the run does not list for a query with such items to label, the oracle cannot
    tell which of them those documents are, and labelling them all not relevant would give a
    falsely tight certificate: refused."""
    sampled = {q for q, d in todo if d.startswith(NUMBERED)}
    t = check_threshold(threshold)
    outside = {}
    for q in sorted(sampled):
        listed = set(audit.base.listed(q)) if q in audit.base.qids else set()
        n = sum(grade >= t and d not in listed for d, grade in judged.get(q, {}).items())
        if n:
            outside[q] = n
    if not outside:
        return
    names = ", ".join(f"{q!r}: {n}" for q, n in list(outside.items())[:3])
    if len(outside) > 3:
        names += f" and {len(outside) - 3} more queries"
    n = sum(outside.values())
    raise ValueError(f"{qrels} grades relevant {n} document{'s' if n > 1 else ''} that the run does not list "
                     f"({names}), and the corpus is known only by its size ({_o('corpus_size')}): the "
                     f"oracle cannot tell which of the sampled unretrieved documents ({NUMBERED}u) they are, "
                     "and labelling those not relevant would give a falsely tight certificate — refused, "
                     f"nothing was recorded; freeze with {_o('corpus_ids')} FILE (the collection's ids) so "
                     f"that the qrels judge them, or give {_o('unjudged_nonrelevant')} to label them not "
                     "relevant all the same")
