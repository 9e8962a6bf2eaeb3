"""The records of a screening review: ids, titles, abstracts, labels if known, prior knowledge.

Three ways in, each refusing bad input in one line that names the file and the line or record:

* :func:`load_records` — CSV/TSV in ASReview's column conventions (the reader of
  :mod:`rankcut.data.screening`: ``title``/``primary_title``, ``abstract``/``notes_abstract``, the
  first of its label columns, names matched without regard to case), RIS through ``rispy`` (a
  record's label in its notes, ASReview's ``ASReview_relevant`` / ``ASReview_irrelevant``);
* :func:`load_trec_records` — one query of a TREC run, the texts from a JSON-lines file
  (:mod:`rankcut.data.texts`), the labels from qrels if given; the records keep the run's order,
  which a ranker may start from (:attr:`Records.ranked`).

Labels, as ASReview reads them (``1``/``0``, ``yes``/``no``, ``y``/``n``; an empty cell is
unlabelled): a column labelled on every record is the truth a simulation plays
(:attr:`Records.labels`); one labelled on some records only is *prior knowledge*, the records a
reviewer labelled before the session (:attr:`Records.prior`), which the ranker starts from and
the review counts as read before its first step (design data, §2.4 of the audit paper).
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut._words import id_list
from rankcut.audit.options import spelled
from rankcut.data.io import Source, open_text, stream_name
from rankcut.data.lists import order_postings
from rankcut.data.screening import ONE_ID_TWO_RECORDS, read_table
from rankcut.data.texts import read_query_texts, read_texts_jsonl
from rankcut.data.trec import read_qrels, read_run

__all__ = ["RIS_NOTES", "RIS_SUFFIXES", "Records", "check_record_id", "load_records",
           "load_trec_records", "qrels_grades", "qrels_labels", "ris_record_id"]

#: a label's spellings: ASReview's (``asreview.data.utils.standardize_included_label``), the
#: 0.0/1.0 and True/False a spreadsheet or pandas writes for a partly filled column, and a screening
#: tool's decisions (Rayyan's and Covidence's include/exclude); "" is unlabelled ("maybe" is no label)
_VALUES = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "false": 0, "true": 1, "no": 0, "yes": 1, "n": 0, "y": 1,
           "exclude": 0, "include": 1, "excluded": 0, "included": 1, "irrelevant": 0, "relevant": 1, "": -1}
_FORMS = "0/1, 0.0/1.0, true/false, yes/no, y/n, include/exclude, relevant/irrelevant or empty"
#: ASReview's RIS notes that carry a label (``asreview.data.ris.RIS_NOTE_LABEL_MAPPING``)
RIS_NOTES = {"ASReview_relevant": 1, "ASReview_irrelevant": 0, "ASReview_not_seen": -1}
RIS_SUFFIXES = (".ris", ".txt")   # the names a RIS file is read by
_WORKBOOKS = (".xlsx", ".xls", ".xlsm", ".ods", ".numbers")   # spreadsheets' own formats, not text
_RIS_START = re.compile(r"^TY  - ")
_RIS_END = re.compile(r"^ER  -")
_RIS_TAG = re.compile(r"^[A-Z][A-Z0-9] {1,2}-")   # a tag line (one space: a typo of its two)
_RIS_ONE_SPACE = re.compile(r"^[A-Z][A-Z0-9] -( |$)")   # read by rispy as the field above's text


@dataclass(frozen=True, eq=False)
class Records:
    """The records of one review, in file (or run) order; a record is named by its position.

    :param name: what to call the review (the file stem by default).
    :param ids: ``[n]`` distinct record ids.
    :param titles: ``[n]`` titles (may be empty).
    :param abstracts: ``[n]`` abstracts or document texts (may be empty).
    :param labels: ``[n]`` 0/1, the truth for a simulation (``None``: not every record is labelled).
    :param prior: ``[n]`` 0/1 for the records labelled before the session, ``-1`` elsewhere
        (default: none).
    :param ranked: the order is a ranking's (a TREC run's), best first.
    :param labelled_by: where the labels (or the prior knowledge) came from: a table's label column,
        a RIS file's ASReview notes, or qrels (``None``: none).
    :param query_text: what the reviewer judges relevance to: a TREC run's query, from its texts
        file (``None``: the records' own review question, which the records do not hold).
    """

    name: str
    ids: tuple[str, ...]
    titles: tuple[str, ...]
    abstracts: tuple[str, ...]
    labels: NDArray[np.int8] | None = None
    prior: NDArray[np.int8] = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    ranked: bool = False
    labelled_by: str | None = None
    query_text: str | None = None

    @property
    def query_id(self) -> str:
        """The query id of the review's frozen collection: the name, white space as ``_`` (a TREC
        run's query id, which is its name)."""
        return re.sub(r"\s+", "_", self.name.strip()) or "review"

    def __post_init__(self) -> None:
        n = len(self.ids)
        if not n:
            raise ValueError("a review needs at least one record")
        if len(self.titles) != n or len(self.abstracts) != n:
            raise ValueError(f"ids ({n}), titles ({len(self.titles)}) and abstracts "
                             f"({len(self.abstracts)}) must have one entry per record")
        if len(set(self.ids)) != n:
            raise ValueError("record ids must be distinct")
        if self.labels is not None:
            lab = np.asarray(self.labels, dtype=np.int8)
            if lab.shape != (n,) or not np.isin(lab, (0, 1)).all():
                raise ValueError(f"labels must be 0 or 1, one per record ({n})")
            object.__setattr__(self, "labels", lab)
        prior = np.asarray(self.prior, dtype=np.int8)
        if prior.size == 0:
            prior = np.full(n, -1, dtype=np.int8)
        if prior.shape != (n,) or not np.isin(prior, (-1, 0, 1)).all():
            raise ValueError(f"prior must be -1 (not known), 0 or 1, one per record ({n})")
        object.__setattr__(self, "prior", prior)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        truth = "unlabelled" if self.labels is None else f"{int(self.labels.sum())} included"
        return (f"Records({self.name!r}, {len(self)} records, {truth}, "
                f"{int((self.prior >= 0).sum())} known before the session)")

    @property
    def texts(self) -> tuple[str, ...]:
        """Title and abstract of each record, joined by a line break (either alone if the other is empty)."""
        pairs = zip(self.titles, self.abstracts, strict=True)
        return tuple("\n".join(p for p in pair if p) for pair in pairs)

    def with_prior(self, known: Mapping[str, int]) -> Records:
        """These records with ``known`` (record id → 0/1) as the prior knowledge instead.

        :raises ValueError: for an id not among the records, or a label other than 0/1.
        """
        index = {r: i for i, r in enumerate(self.ids)}
        prior = np.full(len(self), -1, dtype=np.int8)
        for rid, y in known.items():
            if rid not in index:
                raise ValueError(f"prior knowledge names record {rid!r}, which {self.name} does not hold")
            if y not in (0, 1):
                raise ValueError(f"prior knowledge of record {rid!r} must be 0 or 1, got {y!r}")
            prior[index[rid]] = y
        return dataclasses.replace(self, prior=prior)


def _stem(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        name = Path(source).name.removesuffix(".gz")
        return Path(name).stem
    return "records"


def _labels(values: list[int]) -> tuple[NDArray[np.int8] | None, NDArray[np.int8]]:
    """Truth if every record is labelled, else prior knowledge (none for no values)."""
    arr = np.array(values, dtype=np.int8)
    if arr.size and (arr >= 0).all():
        return arr, np.full(arr.size, -1, dtype=np.int8)
    return None, arr


def load_records(source: str | os.PathLike[str], *, label: str | None = None, name: str | None = None
                 ) -> Records:
    """Read records from a CSV, TSV (``.tsv``/``.tab``) or RIS (``.ris``, ``.txt``) file (module docstring).

    :param label: the label column of a table (case-insensitive; default the first of ASReview's
        label columns the header names, or none).
    :param name: the review's name (default: the file name without its suffixes).
    :raises ValueError: naming the file and the line for a malformed table (as
        :func:`rankcut.data.screening.read_table`) or a label ASReview does not read, and for a RIS
        record without its ``ER`` line. Records with neither title nor abstract are warned of by line.
    """
    suffix = Path(str(source).removesuffix(".gz")).suffix.lower()
    if suffix in RIS_SUFFIXES:
        if label is not None:
            raise ValueError(f"{source}: a RIS file carries its labels in its notes (ASReview_relevant, "
                             f"ASReview_irrelevant); drop {spelled('label_column', 'label')}")
        return _load_ris(source, name)
    if suffix in _WORKBOOKS:   # read as CSV it would be binary noise ("it names 'PK\x03\x04…'")
        raise ValueError(f"{source}: a spreadsheet workbook is not read: save it as CSV UTF-8 (*.csv) or as "
                         "tab-separated text (*.tsv), and give that file")
    table = read_table(source, label=label, name=stream_name(source, name))
    for rid, line in zip(table.record_ids, table.lines, strict=True):
        check_record_id(rid, f"{table.where}, line {line}")
    _warn_empty(table.where, [line for t, a, line in zip(table.titles, table.abstracts, table.lines,
                                                          strict=True) if not (t or a)])
    _warn_empty_column(table.where, table.titles, table.abstracts)
    _warn_duplicates(table.where, table.record_ids, table.titles, table.abstracts, table.lines)
    others = table.other_label_columns()
    if others and label is None:   # the user chose none: say which was taken, and what was left
        one = len(others) == 1
        taken = ("no column holds the labels (none has an ASReview label name)" if table.label_column is None
                 else f"column {table.label_column} holds the labels (the first ASReview label name)")
        warnings.warn(f"{table.where}: {taken}; {', '.join(others)} {'reads' if one else 'read'} like labels "
                      f"too and {'is' if one else 'are'} not read: choose with --label-column (label= in "
                      "Python)", UserWarning, stacklevel=2)
    values = []
    for value, line, rid in zip(table.labels, table.lines, table.record_ids, strict=False):  # no labels: none
        y = _VALUES.get(value.lower())
        if y is None:
            raise ValueError(f"{table.where}, line {line}: {table.label_column} must be {_FORMS} "
                             f"(unlabelled), got {value!r} (record {rid!r})")
        values.append(y)
    truth, prior = _labels(values)     # no label column: no values, no truth, no prior
    return Records(name or _stem(source), table.record_ids, table.titles, table.abstracts, truth, prior,
                   labelled_by=None if table.label_column is None else f"column {table.label_column}")


def _graded(grades: Mapping[str, float], ids: Sequence[str], threshold: float, where: str) -> list[int]:
    """Each record's relevance from qrels ``grades`` (document → grade): 1 where graded at least
    ``threshold``, else 0 (unjudged: 0, the TREC convention).

    :raises ValueError: naming ``where`` when the qrels judge none of the records (qrels of
        another collection or query), or grade none of them relevant: a review with nothing to find
        is met at once ("0 of 0 found"), which is no simulation of it.
    """
    if not any(rid in grades for rid in ids):
        raise ValueError(f"{where}: the qrels judge none of the {len(ids)} records (their documents are "
                         f"others, e.g. {next(iter(grades), '')!r}): give the qrels of these records")
    labels = [int(grades.get(rid, 0) >= threshold) for rid in ids]
    if not any(labels):
        top = max(grades.get(rid, 0) for rid in ids if rid in grades)
        way = ("a threshold of at most that (--threshold) counts it, or give other qrels" if top > 0 else
               "give qrels that grade a relevant record above 0")
        raise ValueError(f"{where}: the qrels grade none of the records relevant (at least {threshold:g}; "
                         f"the highest grade among them is {top:g}): {way}")
    return labels


def qrels_labels(qrels: Source, ids: Sequence[str], query: str, *, threshold: float = 1,
                 ranked: bool = False) -> NDArray[np.int8]:
    """Each record's label from TREC qrels (:func:`_graded`): the judgements of ``query``, the
    review's query id. Records that are not a run's (``ranked`` false) are called by the review's
    name, which qrels need not share: when the qrels hold no ``query``, those of the one query they
    hold.

    :raises ValueError: naming the file when the qrels judge no document of a run's query, or hold
        several queries and none of them ``query``; and as :func:`_graded`.
    """
    named = str(getattr(qrels, "name", qrels))
    return np.array(_graded(qrels_grades(qrels, query, ranked=ranked), ids, threshold, named), dtype=np.int8)


def qrels_grades(qrels: Source, query: str, *, ranked: bool = False) -> dict[str, int]:
    """The grades (document → grade) of the review's query in TREC qrels, by
    :func:`qrels_labels`'s rule.

    :raises ValueError: as :func:`qrels_labels`, for the query.
    """
    judged, named = read_qrels(qrels), str(getattr(qrels, "name", qrels))
    if query in judged:
        return judged[query]
    if ranked:
        raise ValueError(f"{named}: the qrels judge no document of query {query!r}: give the qrels of the "
                         "run's query")
    if len(judged) == 1:
        return next(iter(judged.values()))
    raise ValueError(f"{named}: the qrels hold {len(judged)} queries, none of them the review's "
                     f"{query!r}: give qrels of one query, or of {query!r}")


def _warn_empty(where: str, lines: Sequence[int]) -> None:
    """Warn of the records at ``lines`` of ``where`` that have neither title nor abstract: they are
    kept (a record is read when the review asks), but the ranker learns nothing from them."""
    if lines:
        shown = id_list(lines, quote=False)
        many = len(lines) > 1
        them = "them" if many else "it"
        warnings.warn(f"{where}: {len(lines)} record{'s have' if many else ' has'} neither title nor "
                      f"abstract (line {shown}): the ranker sees nothing of {them}, so it finds {them} only "
                      "by chance", UserWarning, stacklevel=3)


def _warn_empty_column(where: str, titles: Sequence[str], abstracts: Sequence[str]) -> None:
    """Warn of a title or abstract column that is empty on every record (of two or more) while the
    other is not: an export whose texts landed in another column would be screened on half of them,
    without a word (a stop-56 walk: 150,000 records, every abstract empty)."""
    for column, values, other, others in (("abstract", abstracts, "titles", titles),
                                          ("title", titles, "abstracts", abstracts)):
        if len(values) > 1 and not any(values) and any(others):
            warnings.warn(f"{where}: the {column} column is empty on every one of the {len(values)} "
                          f"records: the ranker reads the {other} alone; if the {column}s are in a column of "
                          f"another name, name it {column}", UserWarning, stacklevel=3)


def _warn_duplicates(where: str, ids: Sequence[str], titles: Sequence[str], abstracts: Sequence[str],
                     lines: Sequence[int]) -> None:
    """Warn of the records of ``where`` whose title and abstract (case and spacing aside) are an
    earlier record's: the duplicates of a merged database export, which the review would read and
    count as records of their own. Each is named by its id and line, as is the record it repeats."""
    def key(i: int) -> tuple[str, str]:
        return " ".join(titles[i].lower().split()), " ".join(abstracts[i].lower().split())

    first: dict[int, list[int]] = {}   # hash of the key → the records of it seen first (no copies kept)
    again: list[tuple[int, int]] = []   # (a record, the earlier record it repeats)
    for i in range(len(lines)):
        k = key(i)
        if any(k):
            seen = first.setdefault(hash(k), [])
            j = next((j for j in seen if key(j) == k), None)   # a hash shared by another text is no repeat
            if j is None:
                seen.append(i)
            else:
                again.append((i, j))
    if again:
        many = len(again) > 1
        shown = id_list((f"record {ids[i]}, line {lines[i]} (as record {ids[j]}, line {lines[j]})"
                         for i, j in again), quote=False, sep="; ")
        warnings.warn(f"{where}: {len(again)} record{'s have' if many else ' has'} the title and abstract "
                      f"of an earlier record ({shown}): the review reads and counts each as a record "
                      f"of its own; if {'they are' if many else 'it is'} the same "
                      f"stud{'ies' if many else 'y'} (a merged export), remove the duplicates before "
                      "starting",
                      UserWarning, stacklevel=3)


def check_record_id(rid: str, where: str) -> None:
    """A record id names the record in the review's TREC-format files: not empty, no white space."""
    if not rid or re.search(r"\s", rid):
        raise ValueError(f"{where}: record id {rid!r} {'holds white space' if rid else 'is empty'}: give "
                         "record ids without spaces (the review's files name each record by its id, as TREC "
                         "ids)")


def ris_record_id(entry: Mapping[str, Any], index: int) -> str:
    """A RIS record's ID: its ``ID`` tag, else its number in file order (``index`` + 1)."""
    return str(entry.get("id", "")).strip() or str(index + 1)


def _load_ris(source: Source, name: str | None) -> Records:
    import rispy

    with open_text(source, stream_name(source, name)) as (where, f):
        text = f.read()
    starts: list[int] = []
    open_at = None
    typos: list[int] = []   # lines inside a record like a tag with one space: the field above's text
    for lineno, line in enumerate(text.splitlines(), 1):
        if _RIS_START.match(line):
            if open_at is not None:
                raise ValueError(f"{where}, line {lineno}: a record starts before the record of line "
                                 f"{open_at} ends (no 'ER  -' line)")
            open_at = lineno
            starts.append(lineno)
        elif _RIS_END.match(line):
            open_at = None
        elif open_at is None and _RIS_TAG.match(line):   # rispy drops such a record without a word
            raise ValueError(f"{where}, line {lineno}: a tag outside a record ({line.strip()[:40]!r}): a "
                             "record starts with 'TY  - ' (two spaces, a hyphen, a space)")
        elif _RIS_ONE_SPACE.match(line):
            typos.append(lineno)
    if typos:   # a wrapped line may start so ("UK - wide"): said, not refused
        first = text.splitlines()[typos[0] - 1]
        warnings.warn(f"{where}: line {id_list(typos, quote=False)} "
                      f"read{'s' if len(typos) == 1 else ''} like a tag with one space before its hyphen "
                      f"({first[:40]!r}), so it is read as part of the field above it: a tag is written "
                      "'XX  - ' (two spaces); mend the file if it is one", stacklevel=3)
    if open_at is not None:
        raise ValueError(f"{where}, line {open_at}: the record has no 'ER  -' line")
    entries = rispy.loads(text, skip_unknown_tags=True)
    if not entries or len(entries) != len(starts):
        raise ValueError(f"{where}: no RIS record (a record starts with 'TY  - ' and ends with 'ER  -'); "
                         "a table of records is read by its name: *.csv or *.tsv"
                         if not entries else f"{where}: rispy read {len(entries)} records where "
                         f"{len(starts)} start with 'TY  - '")
    ids: list[str] = []
    titles: list[str] = []
    abstracts: list[str] = []
    values: list[int] = []
    seen: dict[str, int] = {}
    empty: list[int] = []   # the lines of the records with neither title nor abstract
    for i, (entry, at) in enumerate(zip(entries, starts, strict=True)):
        given = str(entry.get("id", "")).strip()
        rid = ris_record_id(entry, i)
        check_record_id(rid, f"{where}, line {at}")
        if rid in seen and given:
            raise ValueError(f"{where}, line {at}: record id {rid!r} is also the id of the record of line "
                             f"{seen[rid]} ({ONE_ID_TWO_RECORDS})")
        if rid in seen:
            raise ValueError(f"{where}, line {at}: the record has no ID, and its number in file order, "
                             f"{rid!r}, is the ID of the record of line {seen[rid]}: give it an ID line "
                             "('ID  - ...')")
        seen[rid] = at
        title = str(entry.get("title") or entry.get("primary_title") or "").strip()
        abstract = str(entry.get("abstract") or entry.get("notes_abstract") or "").strip()
        if not title and not abstract:
            empty.append(at)
        notes = entry.get("notes") or []
        said = {k: v for note in notes for k, v in RIS_NOTES.items() if k in note}
        if len(set(said.values())) > 1:   # the first note was read as the label
            raise ValueError(f"{where}, line {at}: record {rid!r} has notes of two labels "
                             f"({', '.join(said)}): keep the one that holds")
        values.append(next(iter(said.values()), -1))
        ids.append(rid)
        titles.append(title)
        abstracts.append(abstract)
    _warn_empty(where, empty)
    _warn_duplicates(where, ids, titles, abstracts, starts)
    truth, prior = _labels(values)
    return Records(name or _stem(source), tuple(ids), tuple(titles), tuple(abstracts), truth, prior,
                   labelled_by=None if truth is None and not (prior >= 0).any() else "ASReview notes")


def load_trec_records(run: Source, texts: Source, *, qrels: Source | None = None, query: str | None = None,
                      threshold: float = 1) -> Records:
    """The documents of one query of a TREC run as records, in the run's order (best first),
    named by the query (the review's query id, as the run's qrels call it).

    :param texts: JSON-lines texts keyed by ``doc_id`` (:func:`rankcut.data.texts.read_texts_jsonl`);
        a line's ``query`` field, where given for the query, is the text the reviewer is shown.
    :param qrels: if given, the labels: relevance ``≥ threshold`` is 1, anything else (unjudged
        included, the TREC convention) 0.
    :param query: the query to review (needed when the run holds several).
    :raises ValueError: naming the file for a query the run does not hold, a run of several
        queries without ``query``, or a document without a text (an empty text is warned of).
    """
    postings = read_run(run)
    where = str(getattr(run, "name", run))
    if query is None:
        if len(postings) != 1:
            raise ValueError(f"{where}: the run holds {len(postings)} queries; choose one with "
                             f"{spelled('query')}, e.g. {next(iter(postings))!r}")
        query = next(iter(postings))
    if query not in postings:
        raise ValueError(f"{where}: the run holds no query {query!r} (it holds {len(postings)}: "
                         f"{id_list(postings)})")
    docs = [p.doc_id for p in order_postings(postings[query])]
    text = read_texts_jsonl(texts, by="doc")
    missing = [d for d in docs if d not in text]
    if missing:
        raise ValueError(f"{getattr(texts, 'name', texts)}: no text for document {missing[0]!r} of query "
                         f"{query!r} ({len(missing)} of the run's {len(docs)} documents have none)")
    empty = [d for d in docs if not text[d].strip()]
    if empty:   # as a table's record with neither title nor abstract
        shown = id_list(empty)
        warnings.warn(f"{getattr(texts, 'name', texts)}: {len(empty)} of the {len(docs)} documents of query "
                      f"{query!r} {'have' if len(empty) > 1 else 'has'} an empty text (document {shown}): "
                      "the reviewer reads nothing there, and the ranker sees nothing of "
                      f"{'them' if len(empty) > 1 else 'it'}", UserWarning, stacklevel=2)
    labels = None if qrels is None else qrels_labels(qrels, docs, query, threshold=threshold, ranked=True)
    return Records(query, tuple(docs), ("",) * len(docs), tuple(text[d] for d in docs), labels,
                   ranked=True, labelled_by=None if qrels is None else "qrels",
                   query_text=read_query_texts(texts).get(query) if isinstance(texts, str | os.PathLike)
                   else None)   # a stream is read once, for the documents' texts
