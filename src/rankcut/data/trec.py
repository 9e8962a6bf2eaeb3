"""TREC run and qrels files in and out.

Formats (whitespace-separated, blank lines ignored, ``.gz`` paths read transparently):

* run: ``query_id Q0 doc_id rank score tag`` (the second column is not read; CLEF TAR puts other
  text there);
* qrels: ``query_id iteration doc_id relevance`` with integer, graded relevance.

Bad input raises :class:`ValueError` naming the file and the line. A ``source`` is a path or an
open text file; to parse text held in a string, wrap it in :class:`io.StringIO`.
"""

from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rankcut.data.io import Source, open_text, write_atomic
from rankcut.data.lists import Posting, RankedLists, check_threshold, warn_if_nothing_relevant

__all__ = [
    "MISSING_POLICIES",
    "MissingQueriesWarning",
    "align",
    "load_trec",
    "read_qrels",
    "read_run",
    "write_run",
]

Run = dict[str, list[Posting]]
Qrels = dict[str, dict[str, int]]
MISSING_POLICIES: tuple[str, ...] = ("drop", "keep", "error")
_MAX_IDS_SHOWN = 10


class MissingQueriesWarning(UserWarning):
    """A run and its qrels do not cover the same queries (see :func:`align`)."""


def _int(token: str, what: str, where: str) -> int:
    try:
        return int(token)
    except ValueError:
        raise ValueError(f"{where}: {what} must be an integer, got {token!r}") from None


def _bad_run_line(parts: list[str], line: str, where: str) -> NoReturn:
    """Raise the ValueError that says what is wrong with a run line that failed to parse."""
    if len(parts) != 6:
        raise ValueError(f"{where}: expected 6 columns 'query_id Q0 doc_id rank score tag', "
                         f"got {len(parts)}: {line.rstrip()!r}")
    try:
        float(parts[4])
    except ValueError:
        raise ValueError(f"{where}: score must be a number, got {parts[4]!r}") from None
    _int(parts[3], "rank", where)
    raise AssertionError(f"{where}: unreachable, the line parses")


def read_run(source: Source, *, name: str | None = None) -> Run:
    """Read a TREC run into ``{query_id: [Posting, ...]}``.

    Queries and postings keep the file's order (queries need not be contiguous); sort them with
    :func:`rankcut.data.lists.order_postings` or build :class:`RankedLists` via :func:`load_trec`.

    :param source: path (``.gz`` allowed) or open text file.
    :param name: how to call the source in error messages (default: its path or ``.name``).
    :raises ValueError: naming file and line, for a line without exactly 6 columns, a score that
        is not a finite number, a rank that is not an integer, a document listed twice for one
        query (both lines named), or a run with no line at all.
    """
    run: Run = {}
    seen: dict[str, dict[str, int]] = {}  # qid -> doc -> line number, for duplicate reports
    with open_text(source, name) as (label, f):
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                qid, _, doc, rank_s, score_s, _ = parts
                score, rank = float(score_s), int(rank_s)
            except ValueError:
                _bad_run_line(parts, line, f"{label}, line {lineno}")
            if not math.isfinite(score):
                raise ValueError(f"{label}, line {lineno}: score must be finite, got {score_s!r}")
            docs = seen.get(qid)
            if docs is None:
                docs = seen[qid] = {}
                run[qid] = []
            first = docs.setdefault(doc, lineno)
            if first != lineno:
                raise ValueError(
                    f"{label}, line {lineno}: document {doc!r} is listed twice for query {qid!r} "
                    f"(lines {first} and {lineno})"
                )
            run[qid].append(Posting(doc, score, rank))
    if not run:
        raise ValueError(f"{label}: the run has no line (no query, no document)")
    return run


def read_qrels(source: Source, *, name: str | None = None) -> Qrels:
    """Read TREC qrels into ``{query_id: {doc_id: relevance}}`` (graded, integer).

    Negative grades (used by some collections for junk documents) are kept as given.

    :param source: path (``.gz`` allowed) or open text file.
    :param name: how to call the source in error messages.
    :raises ValueError: naming file and line, for a line without exactly 4 columns, a relevance
        that is not an integer, or a (query, document) pair judged twice (both lines named).
    """
    qrels: Qrels = {}
    seen: dict[tuple[str, str], int] = {}
    with open_text(source, name) as (label, f):
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            where = f"{label}, line {lineno}"
            if len(parts) != 4:
                raise ValueError(
                    f"{where}: expected 4 columns 'query_id iteration doc_id relevance', "
                    f"got {len(parts)}: {line.rstrip()!r}"
                )
            qid, _, doc, rel_s = parts
            rel = _int(rel_s, "relevance", where)
            first = seen.setdefault((qid, doc), lineno)
            if first != lineno:
                raise ValueError(
                    f"{where}: query {qid!r}, document {doc!r} is judged twice "
                    f"(lines {first} and {lineno})"
                )
            qrels.setdefault(qid, {})[doc] = rel
    return qrels


def _count(items: Sequence[object], one: str, many: str) -> str:
    """``"1 run query is"`` / ``"2 run queries are"``: the count with the right grammatical number."""
    return f"{len(items)} {one if len(items) == 1 else many}"


def _id_list(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(q) for q in ids[:_MAX_IDS_SHOWN])
    more = len(ids) - _MAX_IDS_SHOWN
    return shown + (f", ... ({len(ids)} in all)" if more > 0 else "")


def align(run: Mapping[str, Sequence[Posting]], qrels: Mapping[str, Mapping[str, int]], *,
          missing: str = "drop") -> dict[str, Sequence[Posting]]:
    """Reconcile the queries of a run with those of its qrels.

    Run queries absent from the qrels are handled by ``missing``:

    * ``"drop"`` (default): removed, with a :class:`MissingQueriesWarning` listing them — the
      usual choice when the qrels judge a subset of the queries (trec_eval scores only judged
      queries);
    * ``"keep"``: kept silently, with no relevant document — right when the qrels list only
      positives, so that absence means "nothing relevant" (Robust04 query 672);
    * ``"error"``: :class:`ValueError` listing them.

    Qrels queries absent from the run are reported with a :class:`MissingQueriesWarning` and
    ignored (their relevant documents count for no list). Returns the run's queries to keep,
    in the run's order.
    """
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    unjudged = [q for q in run if q not in qrels]
    unranked = [q for q in qrels if q not in run]
    if unranked:
        warnings.warn(
            f"{_count(unranked, 'qrels query is', 'qrels queries are')} not in the run and "
            f"{'is' if len(unranked) == 1 else 'are'} ignored: {_id_list(unranked)}",
            MissingQueriesWarning, stacklevel=3,
        )
    if unjudged and missing == "error":
        raise ValueError(f"{_count(unjudged, 'run query is', 'run queries are')} not in the qrels: "
                         f"{_id_list(unjudged)}")
    if unjudged and missing == "drop":
        one = len(unjudged) == 1
        warnings.warn(
            f"{_count(unjudged, 'run query is', 'run queries are')} not in the qrels and "
            f"{'is' if one else 'are'} dropped (missing='keep' keeps {'it' if one else 'them'} with "
            f"no relevant document): {_id_list(unjudged)}",
            MissingQueriesWarning, stacklevel=3,
        )
        kept = {q: p for q, p in run.items() if q in qrels}
        if not kept:
            raise ValueError("no query of the run is in the qrels")
        return kept
    return dict(run)


def load_trec(
    run: Source | Mapping[str, Sequence[Posting]],
    qrels: Source | Mapping[str, Mapping[str, int]] | None = None,
    *,
    threshold: float = 1,
    ordering: str = "rank",
    missing: str = "drop",
) -> RankedLists:
    """Read a run (and qrels) into :class:`RankedLists`.

    :param run: a run file (see :func:`read_run`) or an already read ``{qid: [Posting]}``.
    :param qrels: a qrels file (see :func:`read_qrels`), an already read
        ``{qid: {doc_id: relevance}}``, or None for unjudged lists.
    :param threshold: relevance at or above which a document counts as relevant.
    :param ordering: ``"rank"`` (ties in the run's rank order) or ``"trec_eval"`` (ties by
        doc_id descending); see :mod:`rankcut.data.lists`.
    :param missing: what to do with run queries absent from the qrels: ``"drop"``, ``"keep"``
        or ``"error"``; see :func:`align`, which also warns about qrels queries absent from the
        run.

    A :class:`~rankcut.data.lists.NoRelevantWarning` says when no judged document of the kept
    queries reaches ``threshold`` (e.g. ``threshold=3`` on qrels graded 0–2).

    :raises ValueError: for a threshold that is not finite and > 0 (unjudged documents count as
        relevance 0), and the errors of :func:`read_run`, :func:`read_qrels` and :func:`align`.
    """
    threshold = check_threshold(threshold)
    postings = run if isinstance(run, Mapping) else read_run(run)
    if qrels is None:
        return RankedLists.from_postings(postings, None, threshold=threshold, ordering=ordering)
    judged = qrels if isinstance(qrels, Mapping) else read_qrels(qrels)
    postings = align(postings, judged, missing=missing)
    lists = RankedLists.from_postings(postings, judged, threshold=threshold, ordering=ordering)
    warn_if_nothing_relevant(lists)
    return lists


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{what} {value!r} cannot be written to a TREC run (empty or whitespace)")


def write_run(path: str | os.PathLike[str], lists: RankedLists, cuts: Any = None, *,
              tag: str = "rankcut") -> None:
    """Write the kept prefix of every list as a TREC run, atomically.

    Each query's first ``cuts[i]`` documents are written in list order with ranks ``1..k``, the
    scores as stored (``repr`` of the float, so they read back exactly) and ``tag``. A cut of 0
    writes no line for that query. ``cuts=None`` writes the whole lists.

    The file is written to a temporary file in the same folder and moved over ``path`` with
    :func:`os.replace`, so an error never leaves a half-written run behind.

    :raises ValueError: for cuts outside ``[0, length]`` (see :meth:`RankedLists.check_cuts`), or a
        tag, query id or document id that is empty or contains whitespace.
    :raises FileNotFoundError: when the folder of ``path`` does not exist (it is not created).
    :raises OSError: when the folder cannot be written; the message names ``path``, not the
        temporary file.
    """
    k = lists.lengths if cuts is None else lists.check_cuts(cuts, allow_zero=True)
    _check_token(tag, "tag")
    out = Path(path)
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {out}: output folder {out.parent} {what}")
    buf = io.StringIO()
    for i, qid in enumerate(lists.qids):
        n = int(k[i])
        if n:
            _check_token(qid, "query id")
        for j, (doc, score) in enumerate(zip(lists.doc_ids[i, :n], lists.scores[i, :n], strict=True)):
            _check_token(doc, f"document id (query {qid!r})")
            buf.write(f"{qid} Q0 {doc} {j + 1} {float(score)!r} {tag}\n")
    write_atomic(out, buf.getvalue().encode("utf-8"))
