"""TREC run and qrels files in and out.

Formats (whitespace-separated, blank lines ignored, ``.gz`` paths read transparently):

* run: ``query_id Q0 doc_id rank score tag`` (the second column is not read; CLEF TAR puts other
  text there);
* qrels: ``query_id iteration doc_id relevance`` with integer, graded relevance.

A run is read into columns (:class:`~rankcut.data.lists.RunColumns`), never one Python object per
line. A run path is read by pyarrow's multi-threaded CSV reader when pyarrow is installed (the
``columnar`` extra) and its lines are separated by single spaces; otherwise, and whenever that
reader meets anything it does not accept exactly as the line reader would (a tab, two spaces, a
bad value, a document listed twice), by the line reader, which gives the identical result or
names the bad line. A path ending in ``.parquet`` is read as Parquet
(:mod:`rankcut.data.parquet`).

Bad input raises :class:`ValueError` naming the file and the line. A ``source`` is a path or an
open text file; to parse text held in a string, wrap it in :class:`io.StringIO`.
"""

from __future__ import annotations

import gzip
import math
import os
import warnings
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import numpy as np
from numpy.typing import NDArray

from rankcut._words import count, id_list
from rankcut.data.io import Source, open_text, plain_int, plain_number, write_atomic
from rankcut.data.lists import (
    NoRelevantWarning,
    Posting,
    RankedLists,
    RunColumns,
    check_threshold,
    default_threshold,
    first_repeat,
    warn_if_nothing_relevant,
    warn_if_scores_rise,
)

__all__ = [
    "MISSING_POLICIES",
    "MissingQueriesWarning",
    "UncoveredQueriesWarning",
    "align",
    "load_trec",
    "read_qrels",
    "read_run",
    "read_run_columns",
    "uncovered_queries",
    "warn_if_uncovered",
    "write_run",
]

Run = dict[str, list[Posting]]
Qrels = dict[str, dict[str, int]]
MISSING_POLICIES: tuple[str, ...] = ("drop", "keep", "error")
_MAX_IDS_SHOWN = 10
#: the characters ``str.split()`` splits on (``str.isspace``): an id holding one is not one token
WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
              "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_R = TypeVar("_R", bound="Mapping[str, Sequence[Posting]] | RunColumns")


class MissingQueriesWarning(UserWarning):
    """A run and its qrels do not cover the same queries (see :func:`align`)."""


def _shown(line: str) -> str:
    shown = line.rstrip()
    return repr(shown if len(shown) <= 120 else shown[:117] + "...")


def _json_line(line: str, where: str, what: str) -> None:
    """Refuse a line that reads like JSON, whatever its count of words."""
    if line.lstrip().startswith(("{", "[")):
        parquet = " (or as Parquet, *.parquet)" if what == "runs" else ""
        raise ValueError(f"{where}: {_shown(line)} reads like JSON; rankcut reads {what} as TREC text, "
                         f"whitespace-separated columns a line{parquet}")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _other_form(line: str, parts: list[str], columns: int, *, first: bool = False) -> str:
    """What a line that is not ``columns`` columns reads like, as a hint ("" if nothing); ``first``:
    the file's first line that is not blank, where a table's header would be."""
    if len(parts) > 2 and parts[1].startswith("qid:"):
        return (" — it reads like a LETOR feature file ('label qid:… 1:…'), which rankcut evaluate reads "
                "with --letor")
    if "," in line and len(parts) < columns:
        return " — it reads like comma-separated values; TREC files separate their columns by whitespace"
    if first and not any(_is_number(p) for p in parts):
        table = " (a feature table, a row of features a document, goes to --features)" if columns == 6 else ""
        return f" — a header line (column names)? TREC files have none{table}"
    if columns == 4 and len(parts) == 6:
        return " — it reads like a run line ('query_id Q0 doc_id rank score tag'): a run given as qrels?"
    if columns == 6 and len(parts) == 4 and parts[3].lstrip("-").isdigit():
        return " — it reads like a qrels line ('query_id iteration doc_id relevance'): qrels given as a run?"
    return ""


def _bad_run_line(parts: list[str], line: str, where: str, *, first: bool) -> NoReturn:
    """Raise the ValueError that says what is wrong with a run line that failed to parse (``first``:
    the file's first line that is not blank, where a header would be)."""
    _json_line(line, where, "runs")
    if len(parts) != 6:
        raise ValueError(f"{where}: expected 6 columns 'query_id Q0 doc_id rank score tag', "
                         f"got {len(parts)}: {_shown(line)}{_other_form(line, parts, 6, first=first)}")
    try:
        if not plain_number(parts[4]):
            raise ValueError
        float(parts[4])
    except ValueError:
        header = (" — a header line? A TREC run has none: drop it (tail -n +2)"
                  if first and parts[4].isalpha() and not parts[3].isdigit() else "")
        raise ValueError(f"{where}: score must be a number, got {parts[4]!r}{header}") from None
    plain_int(parts[3], "rank", where)
    if "\0" in line:   # an id that matches no qrels entry, without a word
        raise ValueError(f"{where}: the line holds a NUL byte (a binary file, or ids that are not text)")
    raise AssertionError(f"{where}: unreachable, the line parses")


def read_run(source: Source, *, name: str | None = None) -> Run:
    """Read a TREC run into ``{query_id: [Posting, ...]}``.

    Queries and postings keep the file's order (queries need not be contiguous); sort them with
    :func:`rankcut.data.lists.order_postings` or build :class:`RankedLists` via :func:`load_trec`.
    One Python object per line: for large runs read :func:`read_run_columns` instead.

    :raises ValueError: as :func:`read_run_columns`.
    """
    return read_run_columns(source, name=name).to_postings()


def read_run_columns(source: Source, *, name: str | None = None) -> RunColumns:
    """Read a TREC run (or a Parquet run, by the suffix ``.parquet``) into columns.

    Queries keep the order of their first line, postings the file's order within a query.

    :param source: path (``.gz`` allowed) or open text file.
    :param name: how to call the source in error messages (default: its path or ``.name``).
    :raises ValueError: naming file and line, for a line without exactly 6 columns, a score that
        is not a finite number, a rank that is not a 64-bit integer, a document listed twice for
        one query (both lines named), or a run with no line at all.
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix.lower() == ".parquet":
            from rankcut.data.parquet import read_parquet_run

            return read_parquet_run(path, name=name)
        fast = _read_run_arrow(path)
        if fast is not None:
            return fast
    return _read_run_lines(source, name)


_BLOCK_BYTES = 1 << 24  # the pyarrow reader's blocks
_SETTLE_IDS = 1 << 20  # the pyarrow reader codes doc ids once this many (or the vocabulary's size) wait


def _read_run_arrow(path: Path) -> RunColumns | None:
    """The run read by pyarrow's CSV reader, or None when pyarrow is absent or the file holds
    anything the line reader would parse differently or refuse (it then says which line)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    text = pa.dictionary(pa.int32(), pa.string())
    # single spaces, nothing quoted, nothing null: any other line makes pyarrow fail, and the
    # line reader takes over
    parse = pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                              newlines_in_values=False, ignore_empty_lines=True)
    convert = pcsv.ConvertOptions(
        column_types={"f0": text, "f1": text, "f2": text, "f3": pa.int64(), "f4": pa.float64(), "f5": text},
        null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=True)
    spaces = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in "\0" + WHITESPACE) + "]"   # NUL: refused there
    queries: dict[str, int] = {}
    vocabulary = pa.array([], pa.string())  # the doc ids coded so far
    qcodes, dcodes, ranks, scores = [], [], [], []
    pending: list[tuple[Any, NDArray[Any]]] = []  # blocks' (dictionary, indices) not coded yet

    def settle() -> None:
        """Code the pending blocks against the vocabulary, extended by their new ids. Done once the
        pending dictionaries are as long as the vocabulary, so each id is hashed a bounded number
        of times in all (coding every block against the whole vocabulary is quadratic in the
        blocks when most ids are new, as in a run over a large corpus)."""
        nonlocal vocabulary
        words = pa.concat_arrays([w for w, _ in pending])
        found = pc.index_in(words, value_set=vocabulary)
        unknown = pc.filter(words, pc.is_null(found))
        fresh = pc.unique(unknown)
        codes = pc.fill_null(found, -1).to_numpy().astype(np.int32)
        codes[codes < 0] = len(vocabulary) + pc.index_in(unknown, value_set=fresh).to_numpy()
        vocabulary = pa.concat_arrays([vocabulary, fresh])
        start = 0
        for w, indices in pending:
            dcodes.append(codes[start:start + len(w)][indices])
            start += len(w)
        pending.clear()
    try:
        with pa.input_stream(str(path), compression="gzip" if path.suffix.lower() == ".gz" else None) as f:
            # streamed block by block: only the compact columns of the blocks read stay in memory
            read = pcsv.ReadOptions(autogenerate_column_names=True, block_size=_BLOCK_BYTES)
            reader = pcsv.open_csv(f, read, parse, convert)
            if len(reader.schema) != 6:
                return None
            for batch in reader:
                for i in (0, 1, 2, 5):
                    values = batch.column(i).dictionary
                    if pc.any(pc.equal(pc.binary_length(values), 0)).as_py() or \
                            pc.any(pc.match_substring_regex(values, spaces)).as_py():
                        return None  # an empty field, a whitespace the line reader splits on, a NUL
                score = batch.column(4).to_numpy()
                if not np.all(np.isfinite(score)):
                    return None
                q, d = batch.column(0), batch.column(2)
                local = np.array([queries.setdefault(x, len(queries)) for x in q.dictionary.to_pylist()],
                                 dtype=np.int32)
                qcodes.append(local[q.indices.to_numpy()])
                pending.append((d.dictionary, d.indices.to_numpy()))
                if sum(len(w) for w, _ in pending) >= max(len(vocabulary), _SETTLE_IDS):
                    settle()
                ranks.append(batch.column(3).to_numpy())
                scores.append(score)
            if pending:
                settle()
    except (pa.ArrowException, OSError):   # OSError: a .gz that is not gzip (the line reader names it)
        return None
    if not qcodes:
        return None
    q_all, d_all, r_all, s_all = (_joined(parts) for parts in (qcodes, dcodes, ranks, scores))
    if _has_repeat(q_all, d_all, len(vocabulary)):
        return None  # the line reader names both lines
    order = pc.sort_indices(vocabulary).to_numpy()  # UTF-8 byte order is code-point order
    return RunColumns.from_rows(q_all, list(queries), d_all, vocabulary.to_numpy(zero_copy_only=False),
                                s_all, r_all, vocabulary_order=order)


def _joined(parts: list[NDArray[Any]]) -> NDArray[Any]:
    """``parts`` concatenated, the list emptied first, so one column at a time is held twice."""
    held = parts[:]
    parts.clear()
    return np.concatenate(held)


def _has_repeat(qcodes: NDArray[Any], dcodes: NDArray[Any], n_docs: int, block: int = 1 << 20) -> bool:
    """Whether some (query, document) pair is on two rows. Queries whose lines are contiguous (as
    retrievers write them) are checked ``block`` rows at a time, so that the sort keys (8 bytes a
    row) never cover the whole run."""
    contiguous = len(qcodes) < 2 or not np.any(qcodes[1:] < qcodes[:-1])
    start = 0
    while start < len(qcodes):
        stop = len(qcodes)
        if contiguous and stop - start > block:  # end the block at a query boundary
            stop = int(np.searchsorted(qcodes, qcodes[start + block], side="left"))
            if stop == start:
                stop = int(np.searchsorted(qcodes, qcodes[start], side="right"))
        keys = qcodes[start:stop].astype(np.int64)
        keys *= max(n_docs, 1)
        keys += dcodes[start:stop]
        keys.sort()
        if np.any(keys[1:] == keys[:-1]):
            return True
        start = stop
    return False


def _read_run_lines(source: Source, name: str | None) -> RunColumns:
    """The line reader: one line at a time into compact arrays (no object per line)."""
    queries: dict[str, int] = {}
    docs: dict[str, int] = {}
    qcodes, dcodes, lines = array("i"), array("i"), array("q")
    scores, ranks = array("d"), array("q")

    def refuse(message: str) -> NoReturn:
        """Raise ``message``, unless an earlier line already repeated a document (that comes first)."""
        q, d = np.frombuffer(qcodes, dtype=np.int32), np.frombuffer(dcodes, dtype=np.int32)
        _raise_repeat(q, d, len(docs), np.frombuffer(lines, dtype=np.int64), queries, docs, label)
        raise ValueError(message)

    with open_text(source, name) as (label, f):
        at_start = True   # the first line that is not blank, where a header would be
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            where = f"{label}, line {lineno}"
            try:
                qid, _, doc, rank_s, score_s, _ = parts
                score, rank = float(score_s), int(rank_s)
                if not plain_number(score_s + rank_s) or "\0" in line:
                    raise ValueError
            except ValueError:
                try:
                    _bad_run_line(parts, line, where, first=at_start)
                except ValueError as exc:
                    refuse(str(exc))
            at_start = False
            if not math.isfinite(score):
                refuse(f"{where}: score must be finite, got {score_s!r}")
            try:
                ranks.append(rank)
            except OverflowError:
                refuse(f"{where}: rank must be an integer within ±2^63, got {rank_s!r}")
            qcodes.append(queries.setdefault(qid, len(queries)))
            dcodes.append(docs.setdefault(doc, len(docs)))
            scores.append(score)
            lines.append(lineno)
    if not queries:
        raise ValueError(f"{label}: the run has no line (no query, no document)")
    q, d = np.frombuffer(qcodes, dtype=np.int32), np.frombuffer(dcodes, dtype=np.int32)
    if _has_repeat(q, d, len(docs)):
        _raise_repeat(q, d, len(docs), np.frombuffer(lines, dtype=np.int64), queries, docs, label)
    vocabulary = np.empty(len(docs), dtype=object)
    vocabulary[:] = list(docs)
    return RunColumns.from_rows(q, list(queries), d, vocabulary, np.frombuffer(scores, dtype=np.float64),
                                np.frombuffer(ranks, dtype=np.int64))


def _raise_repeat(qcodes: NDArray[Any], dcodes: NDArray[Any], n_docs: int, lines: NDArray[np.int64],
                  queries: dict[str, int], docs: dict[str, int], label: str) -> None:
    found = first_repeat(qcodes, dcodes, n_docs)
    if found is None:
        return
    first, repeat = found
    qid = next(q for q, c in queries.items() if c == qcodes[repeat])
    doc = next(d for d, c in docs.items() if c == dcodes[repeat])
    raise ValueError(f"{label}, line {lines[repeat]}: document {doc!r} is listed twice for query {qid!r} "
                     f"(lines {lines[first]} and {lines[repeat]})")


def read_qrels(source: Source, *, name: str | None = None) -> Qrels:
    """Read TREC qrels into ``{query_id: {doc_id: relevance}}`` (graded, integer).

    Negative grades (used by some collections for junk documents) are kept as given.

    :param source: path (``.gz`` allowed) or open text file.
    :param name: how to call the source in error messages.
    :raises ValueError: naming file and line, for a line without exactly 4 columns, a relevance
        that is not an integer, or a (query, document) pair judged twice with two grades (both lines
        named); a line that repeats a judgement is read once. A file with no judgement at all is
        refused, naming it (an empty file read as qrels of no query, blamed on the run's queries).
    """
    qrels: Qrels = {}
    seen: dict[tuple[str, str], int] = {}
    with open_text(source, name) as (label, f):
        at_start = True   # the first line that is not blank, where a header would be
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            where = f"{label}, line {lineno}"
            _json_line(line, where, "qrels")
            if len(parts) != 4:
                raise ValueError(
                    f"{where}: expected 4 columns 'query_id iteration doc_id relevance', "
                    f"got {len(parts)}: {_shown(line)}{_other_form(line, parts, 4, first=at_start)}"
                )
            qid, _, doc, rel_s = parts
            header, at_start = at_start, False
            if header and rel_s.isalpha():   # "query_id iteration doc_id relevance": a header
                raise ValueError(f"{where}: relevance must be an integer, got {rel_s!r} — a header line? "
                                 "TREC qrels have none: drop it (tail -n +2)")
            rel = plain_int(rel_s, "relevance", where)
            first = seen.setdefault((qid, doc), lineno)
            if first != lineno:
                if qrels[qid][doc] == rel:   # the same judgement again: nothing to choose, read once
                    continue
                raise ValueError(
                    f"{where}: query {qid!r}, document {doc!r} is judged twice, differently "
                    f"({qrels[qid][doc]} on line {first}, {rel} on line {lineno})"
                )
            qrels.setdefault(qid, {})[doc] = rel
    if not qrels:
        raise ValueError(f"{label}: the qrels file holds no judgement (it is empty)")
    return qrels


def no_query_judged(run_qids: Sequence[str], qrels: Mapping[str, Mapping[str, int]]) -> str:
    """Why a run's queries meet no judgement: the qrels hold none (an empty file), or hold other
    queries, a few of each shown (``0264014`` against ``264014`` is seen at once)."""
    if not any(qrels.values()):
        return "the qrels hold no judgement (an empty qrels file?)"
    return (f"no query of the run is in the qrels (the run's: {id_list(run_qids, _MAX_IDS_SHOWN)}; the "
            f"qrels': {id_list(qrels, _MAX_IDS_SHOWN)}): the qrels of another topic set, or query ids "
            "written otherwise?")


def align(run: _R, qrels: Mapping[str, Mapping[str, int]], *, missing: str = "drop") -> _R:
    """Reconcile the queries of a run (``{qid: [Posting]}`` or :class:`RunColumns`) with those of
    its qrels.

    Run queries absent from the qrels are handled by ``missing``:

    * ``"drop"`` (default): removed, with a :class:`MissingQueriesWarning` listing them — the
      usual choice when the qrels judge a subset of the queries (trec_eval scores only judged
      queries);
    * ``"keep"``: kept silently, with no relevant document — right when the qrels list only
      positives, so that absence means "nothing relevant" (Robust04 query 672);
    * ``"error"``: :class:`ValueError` listing them.

    Qrels queries absent from the run are reported with a :class:`MissingQueriesWarning` and
    ignored (their relevant documents count for no list). Returns the run's queries to keep,
    in the run's order, in the form given.
    """
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    qids = run.qids if isinstance(run, RunColumns) else tuple(run)
    ranked = set(qids)
    unjudged = [q for q in qids if q not in qrels]
    unranked = [q for q in qrels if q not in ranked]
    if unranked:
        warnings.warn(
            f"{count(len(unranked), 'qrels query is', 'qrels queries are')} not in the run and "
            f"{'is' if len(unranked) == 1 else 'are'} ignored: {id_list(unranked, _MAX_IDS_SHOWN)}",
            MissingQueriesWarning, stacklevel=3,
        )
    if unjudged and missing == "error":
        raise ValueError(f"{count(len(unjudged), 'run query is', 'run queries are')} not in the qrels: "
                         f"{id_list(unjudged, _MAX_IDS_SHOWN)}")
    if len(unjudged) == len(qids) and missing == "keep":   # every F1 0, every oracle cut at 1, silently
        raise ValueError(f"{no_query_judged(qids, qrels)} — missing='keep' keeps a query the qrels judge "
                         "nothing of, but here none has a judgement")
    if unjudged and missing == "drop":
        one = len(unjudged) == 1
        warnings.warn(
            f"{count(len(unjudged), 'run query is', 'run queries are')} not in the qrels and "
            f"{'is' if one else 'are'} dropped (missing='keep' keeps {'it' if one else 'them'} with "
            f"no relevant document): {id_list(unjudged, _MAX_IDS_SHOWN)}",
            MissingQueriesWarning, stacklevel=3,
        )
        kept = [q for q in qids if q in qrels]
        if not kept:
            raise ValueError(no_query_judged(qids, qrels))
        if isinstance(run, RunColumns):
            return run.select(kept)  # type: ignore[return-value]
        return {q: run[q] for q in kept}  # type: ignore[return-value]
    return run if isinstance(run, RunColumns) else dict(run)  # type: ignore[return-value]


def load_trec(
    run: Source | Mapping[str, Sequence[Posting]] | RunColumns,
    qrels: Source | Mapping[str, Mapping[str, int]] | None = None,
    *,
    threshold: float | None = None,
    ordering: str = "rank",
    missing: str = "drop",
) -> RankedLists:
    """Read a run (and qrels) into :class:`RankedLists`.

    :param run: a run file (see :func:`read_run_columns`), or an already read run: columns or
        ``{qid: [Posting]}``.
    :param qrels: a qrels file (see :func:`read_qrels`), an already read
        ``{qid: {doc_id: relevance}}``, or None for unjudged lists.
    :param threshold: relevance at or above which a document counts as relevant; None: 1, with a
        :class:`~rankcut.data.lists.GradedQrelsWarning` when the qrels grade above 1 (TREC DL's
        binary measures count grade ≥ 2).
    :param ordering: ``"rank"`` (ties in the run's rank order) or ``"trec_eval"`` (ties by
        doc_id descending); see :mod:`rankcut.data.lists`.
    :param missing: what to do with run queries absent from the qrels: ``"drop"``, ``"keep"``
        or ``"error"``; see :func:`align`, which also warns about qrels queries absent from the
        run.

    A :class:`~rankcut.data.lists.NoRelevantWarning` says when no judged document of the kept
    queries reaches ``threshold`` (e.g. ``threshold=3`` on qrels graded 0–2), and
    :func:`~rankcut.data.lists.warn_if_scores_rise` when the scores rise with the rank column
    throughout a query (distances read as scores, or one query's negated), and
    :func:`warn_if_uncovered` names the judged queries none of whose listed documents the qrels
    judge (refused for pooled qrels of two or more queries: its ``refuse_all``).

    :raises ValueError: for a threshold that is not finite and > 0 (unjudged documents count as
        relevance 0), and the errors of :func:`read_run`, :func:`read_qrels` and :func:`align`.
    """
    if threshold is not None:   # refused before the files are read
        check_threshold(threshold)
    columns = (run if isinstance(run, RunColumns) else RunColumns.from_postings(run)
               if isinstance(run, Mapping) else read_run_columns(run))
    warn_if_scores_rise(columns)
    if qrels is None:
        return RankedLists.from_columns(columns, None, threshold=1 if threshold is None else threshold,
                                        ordering=ordering)
    judged = qrels if isinstance(qrels, Mapping) else read_qrels(qrels)
    threshold = check_threshold(default_threshold(threshold, judged))
    columns = align(columns, judged, missing=missing)
    lists = RankedLists.from_columns(columns, judged, threshold=threshold, ordering=ordering)
    warn_if_nothing_relevant(lists)
    warn_if_uncovered(lists, judged, refuse_all=True)
    return lists


class UncoveredQueriesWarning(NoRelevantWarning):
    """The qrels judge a query but none of the documents its list holds: every one counts as not
    relevant, which is right only if the run retrieved none of its relevant documents."""


def uncovered_queries(qrels: Mapping[str, Mapping[str, Any]], listed: Mapping[str, Any]) -> list[str]:
    """The queries of ``listed`` (``{query_id: its documents}``) none of whose documents the qrels
    judge: qrels of another topic set (the query is not judged at all) or of another collection
    (its judged documents are not these). Labelling them from the qrels would call every document
    not relevant."""
    return [q for q, docs in listed.items() if not any(d in qrels.get(q, {}) for d in docs)]


def warn_if_uncovered(lists: RankedLists, qrels: Mapping[str, Mapping[str, Any]], *, where: str = "",
                      stacklevel: int = 2, refuse_all: bool = False) -> None:
    """Warn (:class:`UncoveredQueriesWarning`) of the queries the qrels judge none of whose listed
    documents they judge: their F1 is 0 and an oracle cuts them at one document, silently, when the
    run writes its document ids otherwise than the qrels (``D123`` against ``123``) or the qrels
    are another collection's. A query the qrels hold nothing for is :func:`align`'s to say.
    ``where`` begins the message (the qrels file, as a command names it).

    :param refuse_all: raise ValueError instead when it is so for every one of two or more judged
        queries and their qrels judge documents not relevant too (pooled judgements, as TREC DL's
        and CLEF's): a run that retrieved none of a pool's documents for every query is another
        collection's, or writes its ids otherwise, and nothing could be scored (a table of zeros,
        exit status 0, as :func:`align` refuses qrels of another topic set). Qrels of relevant
        documents alone (Robust04's positives) are only warned of: a run may miss them all."""
    rows = {q: i for i, q in enumerate(lists.qids)}
    found: NDArray[np.bool_] = (np.zeros(len(lists), dtype=bool) if lists.gains is None
                                else np.asarray((lists.gains > 0).any(axis=1)))
    # a query with a relevant document listed is covered: only the others are looked up, one by one
    judged = {q: qrels[q] for q in lists.qids if qrels.get(q) and not found[rows[q]]}
    listed = {q: (lists.vocabulary[c] for c in lists.doc_codes[rows[q], : lists.lengths[rows[q]]])
              for q in judged}
    uncovered = uncovered_queries(judged, listed)
    if not uncovered:
        return
    shown = id_list(uncovered, _MAX_IDS_SHOWN)
    q = uncovered[0]
    example = (f"query {q!r} lists {lists.vocabulary[lists.doc_codes[rows[q], 0]]!r}, its qrels judge "
               f"{next(iter(judged[q]))!r}")
    n_judged = sum(bool(qrels.get(q)) for q in lists.qids)
    pooled = any(grade <= 0 for q in uncovered for grade in qrels[q].values())   # negatives judged too
    if refuse_all and len(uncovered) == n_judged >= 2 and pooled:
        raise ValueError(f"{where}the qrels judge none of the listed documents of any of the {n_judged} "
                         f"judged queries ({shown}; {example}), though they judge documents not relevant too "
                         "(a pool): the run writes its document ids otherwise, or the qrels are another "
                         "collection's; every one would count as not relevant, so nothing could be scored")
    warnings.warn(f"{where}the qrels judge none of the listed documents of {len(uncovered)} of the "
                  f"{n_judged} judged queries ({shown}; {example}): every one counts as not relevant — "
                  "right if the run retrieved none of their relevant documents, wrong if the run writes its "
                  "document ids otherwise or the qrels are another collection's", UncoveredQueriesWarning,
                  stacklevel=stacklevel + 1)


#: suffixes of compressions a run is not written in (it was written as plain text under the name)
_OTHER_COMPRESSIONS = frozenset({".bz2", ".xz", ".lzma", ".zst", ".lz4", ".zip", ".7z", ".z"})


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{what} {value!r} cannot be written to a TREC run (empty or whitespace)")


def write_run(path: str | os.PathLike[str], lists: RankedLists, cuts: Any = None, *,
              tag: str = "rankcut") -> None:
    """Write the kept prefix of every list as a TREC run (gzip-compressed for a name ending ``.gz``;
    or Parquet, by the suffix ``.parquet``), atomically.

    Each query's first ``cuts[i]`` documents are written in list order with ranks ``1..k``, the
    scores as stored (``repr`` of the float, so they read back exactly) and ``tag``. A cut of 0
    writes no line for that query. ``cuts=None`` writes the whole lists. A ``.parquet`` path gets
    the columns of :func:`rankcut.data.parquet.write_parquet_run` instead.

    The file is written to a temporary file in the same folder and moved over ``path`` with
    :func:`os.replace`, so an error never leaves a half-written run behind.

    :raises ValueError: for cuts outside ``[0, length]`` (see :meth:`RankedLists.check_cuts`), or a
        tag, query id or document id that is empty or contains whitespace, or a name ending in another
        compression's suffix (``.bz2``, ``.xz``, ...: it was written as plain text under that name).
    :raises FileNotFoundError: when the folder of ``path`` does not exist (it is not created).
    :raises OSError: when the folder cannot be written; the message names ``path``, not the
        temporary file.
    """
    k = lists.lengths if cuts is None else lists.check_cuts(cuts, allow_zero=True)
    _check_token(tag, "tag")
    out = Path(path)
    if out.suffix.lower() in _OTHER_COMPRESSIONS:
        raise ValueError(f"cannot write {out}: rankcut writes a run as gzip (a name ending .gz), Parquet "
                         f"(.parquet) or plain text, not {out.suffix}: name it *.gz, or leave out "
                         f"{out.suffix}")
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise FileNotFoundError(f"cannot write {out}: output folder {out.parent} {what}")
    kept = np.arange(lists.max_len)[None, :] < k[:, None]
    _check_ids(lists, kept)
    if out.suffix.lower() == ".parquet":
        from rankcut.data.parquet import write_parquet_run

        write_parquet_run(out, lists, kept, tag=tag)
        return
    rows = np.repeat(np.arange(len(lists)), k).tolist()
    ranks = np.broadcast_to(np.arange(1, lists.max_len + 1), kept.shape)[kept].tolist()
    docs = lists.vocabulary[lists.doc_codes[kept]].tolist()
    scores = lists.scores[kept].tolist()
    qids = lists.qids
    text = "".join([f"{qids[r]} Q0 {d} {j} {s!r} {tag}\n"
                    for r, d, j, s in zip(rows, docs, ranks, scores, strict=True)])
    data = text.encode("utf-8")   # gzip-compressed for a name ending .gz, as the readers take it
    write_atomic(out, gzip.compress(data, mtime=0) if out.suffix.lower() == ".gz" else data)


def _bad_token(value: object) -> bool:
    return not isinstance(value, str) or not value or any(c.isspace() for c in value)


def _check_ids(lists: RankedLists, kept: NDArray[np.bool_]) -> None:
    """The error :func:`_check_token` gives for the first id, in writing order, that cannot be
    written; each distinct id is checked once."""
    used = np.unique(lists.doc_codes[kept])
    bad_code = np.zeros(len(lists.vocabulary), dtype=bool)
    bad_code[used] = [_bad_token(d) for d in lists.vocabulary[used].tolist()]
    bad_cell = bad_code[lists.doc_codes] & kept
    bad_qid = np.array([_bad_token(q) for q in lists.qids]) & kept.any(axis=1)
    bad_row = bad_qid | bad_cell.any(axis=1)
    if not bad_row.any():
        return
    i = int(np.flatnonzero(bad_row)[0])
    qid = lists.qids[i]
    if bad_qid[i]:
        _check_token(qid, "query id")
    doc = lists.vocabulary[lists.doc_codes[i, int(np.flatnonzero(bad_cell[i])[0])]]
    _check_token(doc, f"document id (query {qid!r})")
