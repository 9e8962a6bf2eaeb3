"""The qrels oracle: a reviewer simulated from TREC qrels (§2.3; Assumption 2 holds with respect to
the qrels by construction), what it has no judgement for, the guard that refuses qrels which do
not cover the audit's queries (every unjudged item would be labelled not relevant, and the
certificate would come out falsely tight), and where the qrels' relevant documents outside the run
stand among the unretrieved documents of a corpus known only by its size."""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from rankcut._words import id_list
from rankcut.audit.designs.base import STREAM_PLACED, Words
from rankcut.audit.folder import Audit
from rankcut.audit.labels import LabelStore, check_items
from rankcut.audit.manifest import sha256_file
from rankcut.audit.options import spelled as _o
from rankcut.audit.pools import NUMBERED, Item, Pools
from rankcut.audit.provenance import AuditWarning
from rankcut.data.lists import check_threshold
from rankcut.data.trec import uncovered_queries

__all__ = ["SIMULATION", "check_one_oracle", "check_qrels_cover", "place_unretrieved", "qrels_oracle",
           "qrels_source", "simulated_text", "unjudged_items"]

_DOCUMENTS = Words()   # how an audit of a run calls its items
SIMULATION = "simulation: "
"""How the source of every label a simulation gave begins (qrels or known labels played the
reviewer), in the label store and so in the certificate's ``label_sources`` and its report."""


def simulated_text(sources: Mapping[str, int]) -> str | None:
    """How many of the labels (``{source: count}``, a certificate's ``label_sources``) a simulation
    gave, said beside a verdict so that a simulated certificate never reads like a reviewer's; None
    when none did."""
    simulated = sum(n for source, n in sources.items() if source.startswith(SIMULATION))
    if not simulated:
        return None
    total = sum(sources.values())
    share = f"all {total:,}" if simulated == total else f"{simulated:,} of the {total:,}"
    return (f"Simulated: {share} labels come from a simulation (known labels played the reviewer), not "
            "from a reviewer.")


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
    names = id_list(uncovered, 3)
    what = (f"{qrels} judges none of the documents listed for {len(uncovered)} of the {len(listed)} sampled "
            f"queries ({names}), which hold {n_items} of the {len(order)} sampled items")
    if 2 * n_items > len(order):
        raise ValueError(f"{what}: they may be the qrels of another topic set or collection, and labelling "
                         "their items not relevant would give a falsely tight certificate — refused, nothing "
                         f"was recorded; give the qrels of these queries, or {_o('unjudged_nonrelevant')} to "
                         "label unjudged items not relevant all the same")
    warnings.warn(f"{what}; their items are labelled not relevant (right if these queries have no relevant "
                  "document, wrong if the qrels are another topic set's)", AuditWarning, stacklevel=5)


def place_unretrieved(pools: Pools, judged: Mapping[str, Mapping[str, int]], threshold: float
                      ) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The qrels oracle on a corpus known only by its size (``--corpus-size``), whose unretrieved
    documents are ``#u`` placeholders (:mod:`rankcut.audit.pools`) that no qrels judge: the ``r_q``
    documents the qrels grade relevant (``≥ threshold``) but query ``q``'s list does not hold are
    placed at ``r_q`` of its placeholders drawn uniformly at random, seeded by the query id alone
    (a stream of its own), so every label call and every audit of the same lists places them alike
    (labels reused between audits agree); the other placeholders are judged by none, so not
    relevant, as any unjudged document. A simulation, exact for the designs that draw a query's
    unretrieved documents exchangeably (uniformly, or in a uniformly random order); for a screener
    that reads them in corpus order it takes that order to be unrelated to relevance. Labelling
    every placeholder 0 made the certificate falsely tight.

    :returns: the qrels with the placeholders' grades added, and ``r_q`` per query placed (none for
        a corpus of named ids, whose documents the qrels judge by name).
    :raises ValueError: when a query's list and the relevant documents outside it exceed the corpus.
    """
    corpus = pools.corpus
    qrels = {q: dict(g) for q, g in judged.items()}
    if corpus is None or corpus.kind != "size":
        return qrels, {}
    t = check_threshold(threshold)
    placed = {}
    for q in pools.qids:
        grades = judged.get(q, {})
        listed = set(pools.listed(q))
        outside = sorted(d for d, g in grades.items() if g >= t and d not in listed)
        if not outside:
            continue
        room = len(corpus) - len(listed)
        if len(outside) > room:
            raise ValueError(f"query {q!r}: the qrels grade relevant {len(outside)} documents that its list "
                             f"does not hold, but the corpus of {len(corpus)} documents leaves it only "
                             f"{room} unretrieved ({_o('corpus_size')} too small for these qrels)")
        where = np.random.default_rng([STREAM_PLACED, zlib.crc32(q.encode())]).choice(
            room, size=len(outside), replace=False)
        qrels[q].update({f"{NUMBERED}{int(u)}": grades[d]
                         for u, d in zip(np.sort(where), outside, strict=True)})
        placed[q] = len(outside)
    return qrels, placed


def qrels_source(qrels: str | Path, threshold: float, placed: int) -> str:
    """The label store's source of the qrels oracle's labels: a simulation (:data:`SIMULATION`), the
    file, its hash, the grade counted relevant when it is not 1 (TREC DL's 2: the labels differ by
    it), and how many relevant documents outside the run were placed among the unretrieved ones
    (:func:`place_unretrieved`). Two calls with the same qrels and threshold give the same source."""
    grade = "" if threshold == 1 else f", relevant at grade ≥ {threshold:g}"
    where = f", {placed} relevant outside the run placed at random #u" if placed else ""
    return f"{SIMULATION}qrels {Path(qrels).name} sha256:{sha256_file(qrels)[:12]}{grade}{where}"


def check_one_oracle(store: LabelStore, source: str, judged: Mapping[str, Mapping[str, int]],
                     threshold: float, instead: str, words: Words = _DOCUMENTS) -> None:
    """Refuse to add a simulation's labels to a store where another simulation (other qrels, or the
    same at another ``--threshold``) gave a label this one would not give. Mixed, the labels would
    follow two notions of relevant, and the certificate neither. Labels they agree on may stay, each
    with the source that gave it. ``instead`` says what else the caller may do (relabel every item,
    or start again), in its option names; ``words`` how the items are called (a review's records)."""
    if not any(s.startswith(SIMULATION) and s != source for s in store.sources()):
        return
    held = {(q, d): y for q, d, y in store.items()}
    given = store.sources_of(held)
    other = [item for item, s in given.items() if s.startswith(SIMULATION) and s != source]
    says = qrels_oracle(judged, other, threshold)
    differ = [item for item, y in zip(other, says, strict=True) if held[item] != y]
    if not differ:
        return
    (q, d), s = differ[0], given[differ[0]]
    more = f" (and {len(differ) - 1} more)" if len(differ) > 1 else ""
    where = f"query {q!r}, {words.item} {d!r}" if words.in_run else f"{words.item} {d!r}"
    raise ValueError(f"{where} is labelled {held[q, d]} by "
                     f"{s!r}, and this call's {source!r} says {1 - held[q, d]}{more}: two simulations mixed "
                     f"would certify neither. Simulate with the same labels as before (the same file, and "
                     f"{_o('threshold')}), or {instead} — nothing was recorded")
