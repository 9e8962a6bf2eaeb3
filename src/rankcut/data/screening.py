"""Systematic-review screening sets: ASReview's labelled CSV files (title, abstract, label).

One record a row, with a header naming at least ``title``, ``abstract`` and the label column
(``label_included`` by default; the Cohen et al. 2006 sets also carry
``label_abstract_screening``), as in ``../shared/datasets/screening/*.csv``::

    record_id,title,abstract,authors,year,label_included
    2,Inhibition of cellular transport processes by 5-thio-D-glucopyranose,"5-Thio-d-glucose ...",,1985,0

Fields may hold quoted commas and line breaks (RFC 4180), so an error names the line where the
record starts. ``record_id`` is optional: without it, records are numbered 1, 2, … in file order
(a column that reads like it, ``Record ID`` or ``id`` say, is refused rather than dropped).
Column names follow ASReview's conventions (``asreview.data.base.BaseReader``): matched without
regard to case or surrounding spaces, with its alternatives (``primary_title`` for the title;
``notes_abstract``, ``abstract note`` for the abstract; :data:`LABEL_COLUMNS` for the label),
and a ``.tsv``/``.tab`` file is tab-separated. :func:`read_table` reads the columns;
:func:`load_screening` and :func:`rankcut.review.records.load_records` give them meaning.

A screening set becomes ranked lists once a model scores its records (:meth:`ScreeningSet.ranked`):
one query, the records in score order, the labels as relevance — the setting of a high-recall
review, where a cut of that list is the candidate generator an audit certifies (§1.1 of the audit
paper).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.data.io import Source, open_text, stream_name
from rankcut.data.lists import Posting, RankedLists

__all__ = ["LABEL_COLUMNS", "ONE_ID_TWO_RECORDS", "ScreeningSet", "Table", "delimiter_for", "load_screening",
           "read_table", "reads_like_labels"]


_LABELS = {"0": False, "1": True}
#: what a records file whose id names two records is told (a merged export: one id for two records,
#: or one record on two lines)
ONE_ID_TWO_RECORDS = ("one id for two records: give each record its own id, or, if the two lines are the "
                      "same record, keep one of them")
_TITLE = ("title", "primary_title")
_ABSTRACT = ("abstract", "notes_abstract", "abstract note")
#: ASReview's label column names, in its order of preference
LABEL_COLUMNS = ("asreview_label", "included", "label", "final_included", "label_included",
                 "included_label", "included_final", "included_flag", "include")


@dataclass(frozen=True, eq=False)
class ScreeningSet:
    """The records of one review: ids, titles, abstracts and 0/1 inclusion labels, in file order.

    :param name: what to call the set (the file stem by default); also the query id of
        :meth:`ranked`.
    :param record_ids: ``[n]`` distinct ids.
    :param titles: ``[n]`` titles (may be empty).
    :param abstracts: ``[n]`` abstracts (may be empty: many records have none).
    :param labels: ``[n]`` booleans, True for an included record.
    :param label_column: the CSV column the labels came from.
    """

    name: str
    record_ids: tuple[str, ...]
    titles: tuple[str, ...]
    abstracts: tuple[str, ...]
    labels: NDArray[np.bool_]
    label_column: str = "label_included"

    def __post_init__(self) -> None:
        n = len(self.record_ids)
        if len(self.titles) != n or len(self.abstracts) != n or self.labels.shape != (n,):
            raise ValueError(f"record_ids ({n}), titles ({len(self.titles)}), abstracts "
                             f"({len(self.abstracts)}) and labels {self.labels.shape} must have one "
                             "entry per record")
        if len(set(self.record_ids)) != n:
            raise ValueError("record_ids must be distinct")

    def __len__(self) -> int:
        return len(self.record_ids)

    def __repr__(self) -> str:
        return (f"ScreeningSet({self.name!r}, {len(self)} records, {self.n_included} included by "
                f"{self.label_column})")

    @property
    def n_included(self) -> int:
        """Records labelled included."""
        return int(self.labels.sum())

    @property
    def texts(self) -> tuple[str, ...]:
        """Title and abstract of each record, joined by a line break (the title alone when there is
        no abstract)."""
        return tuple(f"{t}\n{a}" if a else t for t, a in zip(self.titles, self.abstracts, strict=True))

    def subset(self, indices: ArrayLike) -> ScreeningSet:
        """The records at ``indices`` (positions in file order), in that order.

        :raises ValueError: for an index outside ``[0, n)``, a repeated index, or non-integers.
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(f"indices must be a 1-D array of integers, got shape {idx.shape} "
                             f"and dtype {idx.dtype}")
        bad = np.flatnonzero((idx < 0) | (idx >= len(self)))
        if bad.size:
            raise ValueError(f"index {int(idx[bad[0]])} is outside the {len(self)} records")
        if np.unique(idx).size != idx.size:
            raise ValueError("indices must not repeat a record")
        pick = idx.tolist()
        return ScreeningSet(self.name, tuple(self.record_ids[i] for i in pick),
                            tuple(self.titles[i] for i in pick), tuple(self.abstracts[i] for i in pick),
                            self.labels[idx].copy(), self.label_column)

    def qrels(self) -> dict[str, dict[str, int]]:
        """The labels as TREC-style qrels of one query, :attr:`name`: ``{name: {record_id: 0/1}}``.

        Every record is judged (a screened set is fully labelled), so an audit oracle built on
        these qrels (:func:`rankcut.audit.oracle.qrels_oracle`) is the truth of §2.3 (Assumption 2).
        """
        return {self.name: {r: int(y) for r, y in zip(self.record_ids, self.labels.tolist(), strict=True)}}

    def ranked(self, scores: ArrayLike) -> RankedLists:
        """The records as one ranked list (query :attr:`name`), by score descending.

        Ties keep file order (the rank of a record is its position in the file), as in
        :mod:`rankcut.data.lists`. Gains are the labels, so ``lists.labels`` is the truth.

        :param scores: ``[n]`` finite scores, one per record.
        :raises ValueError: for a wrong shape, non-finite scores or an empty set.
        """
        s = np.asarray(scores, dtype=float)
        if s.shape != (len(self),):
            raise ValueError(f"scores must have shape [{len(self)}] (one per record), got {s.shape}")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"scores must be finite, got {float(s[~np.isfinite(s)][0])} at record "
                             f"{self.record_ids[int(np.flatnonzero(~np.isfinite(s))[0])]!r}")
        run = {self.name: [Posting(r, float(v), i + 1)
                           for i, (r, v) in enumerate(zip(self.record_ids, s.tolist(), strict=True))]}
        return RankedLists.from_postings(run, self.qrels(), threshold=1)


def delimiter_for(source: Source) -> str:
    """A table's field separator by its name: a tab for ``.tsv``/``.tab`` (``.gz`` allowed), else a
    comma (and a comma for an open file)."""
    stem = str(source).removesuffix(".gz") if isinstance(source, str | os.PathLike) else ""
    return "\t" if stem.endswith((".tsv", ".tab")) else ","


def _stem(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        name = Path(source).name
        for suffix in (".gz", ".csv", ".tsv", ".tab"):
            name = name.removesuffix(suffix)
        return name
    return "screening"


@dataclass(frozen=True)
class Table:
    """The columns of a screening table, as read (:func:`read_table`); one entry per record.

    :param where: the file, as errors name it.
    :param label_column: the label column's name as the header spells it (``None``: no label column).
    :param labels: the label column's stripped values (empty without a label column).
    :param lines: the line each record starts on.
    :param columns: the header's column names, stripped.
    :param rows: each record's fields as the file holds them (unstripped), one per column.
    """

    where: str
    record_ids: tuple[str, ...]
    titles: tuple[str, ...]
    abstracts: tuple[str, ...]
    label_column: str | None
    labels: tuple[str, ...]
    lines: tuple[int, ...]
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()

    def other_label_columns(self) -> list[str]:
        """The columns besides :attr:`label_column` whose names read like labels
        (:func:`reads_like_labels`) and that hold a value in some row: a file with two, such as
        the abstract and the full-text decision, leaves the choice to its user."""
        return [c for i, c in enumerate(self.columns) if c != self.label_column and reads_like_labels(c)
                and any(len(row) > i and row[i].strip() for row in self.rows)]


_LABEL_WORD = re.compile(r"(?:^|_)(?:labels?|included|include|inclusion)(?:_|$)")


def reads_like_labels(column: str) -> bool:
    """Whether a column's name reads like labels: one of :data:`LABEL_COLUMNS`, or a word
    ``label``/``included``/``include`` in it, as in ``label_abstract_screening`` (any case)."""
    return column.lower() in LABEL_COLUMNS or _LABEL_WORD.search(column.lower()) is not None


def separator_hint(header: Sequence[str], delimiter: str) -> str:
    """A hint when a one-column header looks separated by another character than ``delimiter``."""
    if len(header) != 1:
        return ""
    other = next((c for c in (";", "\t", ",") if c != delimiter and c in header[0]), None)
    if other is None:
        return ""
    if other == "\t":   # the user's separator is fine: only the name says otherwise
        return " — the file looks separated by tabs: name it *.tsv (a TSV is read by that name)"
    name = {";": "';'", ",": "','"}[other]
    return f" — the file looks separated by {name}: save it with ',' (*.csv) or tabs (*.tsv)"


def _column(columns: list[str], names: tuple[str, ...], where: str, delimiter: str) -> int:
    low = [c.lower() for c in columns]
    for n in names:
        if n in low:
            return low.index(n)
    others = f" (nor {', '.join(repr(n) for n in names[1:])})" if len(names) > 1 else ""
    raise ValueError(f"{where}, line 1: the header names no {names[0]!r} column{others}; it names "
                     f"{', '.join(repr(c) for c in columns)}{separator_hint(columns, delimiter)}")


def read_table(source: Source, *, label: str | None, name: str | None = None) -> Table:
    """Read the columns of a screening table (module docstring): fields separated by a tab in
    ``.tsv``/``.tab`` paths, else by a comma.

    :param source: a path (``.gz`` allowed) or an open text file (opened with ``newline=""``).
    :param label: the label column (case-insensitive); ``None`` takes the first of
        :data:`LABEL_COLUMNS` the header names, or none.
    :raises ValueError: naming the file and line for an empty file, a header without a title,
        abstract or the named label column, a column read named twice, a record with another number of
        fields than the header, or an empty or repeated ``record_id`` (both lines named).
    """
    if label is not None and (not isinstance(label, str) or not label):
        raise ValueError(f"label must name a column, got {label!r}")
    delimiter = delimiter_for(source)
    ids: list[str] = []
    titles: list[str] = []
    abstracts: list[str] = []
    labels: list[str] = []
    lines: list[int] = []
    rows: list[tuple[str, ...]] = []
    seen: dict[str, int] = {}
    with open_text(source, name, newline="") as (where, f):
        reader = csv.reader(f, delimiter=delimiter)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{where}: the file is empty; expected a header line naming title, "
                             f"abstract and {label or 'a label column'}") from None
        except csv.Error as exc:
            raise ValueError(f"{where}, line 1: not a CSV header ({exc})") from None
        columns = [c.strip() for c in header]
        low = [c.lower() for c in columns]
        read = {"record_id", *_TITLE, *_ABSTRACT, *LABEL_COLUMNS, *([label.lower()] if label else [])}
        twice = next((c for i, c in enumerate(low) if c in read and c in low[:i]), None)
        if twice is not None:   # the first would be read, the other never, without a word
            raise ValueError(f"{where}, line 1: the header names the column {columns[low.index(twice)]!r} "
                             "twice (columns are read by name, any case): rename or remove one")
        t_col = _column(columns, _TITLE, where, delimiter)
        a_col = _column(columns, _ABSTRACT, where, delimiter)
        if label is not None:
            l_col: int | None = _column(columns, (label.lower(),), where, delimiter)
        else:
            l_col = next((low.index(n) for n in LABEL_COLUMNS if n in low), None)
        id_col = low.index("record_id") if "record_id" in low else None
        # "Record ID", or a bare "id" (a label file's record id column may be named so)
        near = next((c for c in columns if re.sub(r"[^a-z0-9]", "", c.lower()) in ("recordid", "id")), None)
        if id_col is None and near is not None:   # its ids would be dropped without a word
            raise ValueError(f"{where}: the column {near!r} reads like the record ids, but only a column "
                             "named record_id is read as them: rename it record_id (its ids are kept), or "
                             "give it another name (the records are numbered 1, 2, … in file order)")
        start = reader.line_num + 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise ValueError(f"{where}, line {start}: not a valid CSV record ({exc})") from None
            line, start = start, reader.line_num + 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # a blank line
            if len(row) != len(columns):
                raise ValueError(f"{where}, line {line}: the record has {len(row)} fields, the header "
                                 f"{len(columns)}")
            rid = row[id_col].strip() if id_col is not None else str(len(ids) + 1)
            if not rid:
                raise ValueError(f"{where}, line {line}: empty record_id")
            if rid in seen:
                raise ValueError(f"{where}, line {line}: record_id {rid!r} is also the id of the record of "
                                 f"line {seen[rid]} ({ONE_ID_TWO_RECORDS})")
            seen[rid] = line
            ids.append(rid)
            titles.append(row[t_col].strip())
            abstracts.append(row[a_col].strip())
            if l_col is not None:
                labels.append(row[l_col].strip())
            lines.append(line)
            rows.append(tuple(row))
    if not ids:
        raise ValueError(f"{where}: no record after the header")
    return Table(where, tuple(ids), tuple(titles), tuple(abstracts),
                 columns[l_col] if l_col is not None else None, tuple(labels), tuple(lines), tuple(columns),
                 tuple(rows))


def load_screening(source: Source, *, label: str = "label_included", name: str | None = None
                   ) -> ScreeningSet:
    """Read an ASReview screening CSV (module docstring) into a fully labelled :class:`ScreeningSet`.

    :param source: a path (``.gz`` allowed) or an open text file (opened with ``newline=""``).
    :param label: the label column: ``label_included`` (final inclusion) or, for the Cohen et al.
        sets, ``label_abstract_screening``. Labels are ``0`` or ``1``.
    :param name: the set's name (default: the file name without ``.csv``/``.gz``).
    :raises ValueError: as :func:`read_table`, and naming the file and line for a label other
        than 0/1.
    """
    if not isinstance(label, str) or not label:
        raise ValueError(f"label must name a column, got {label!r}")
    table = read_table(source, label=label, name=stream_name(source, name))
    for value, line, rid in zip(table.labels, table.lines, table.record_ids, strict=True):
        if value not in _LABELS:
            raise ValueError(f"{table.where}, line {line}: {label} must be 0 or 1, got {value!r} "
                             f"(record {rid!r})")
    return ScreeningSet(name or _stem(source), table.record_ids, table.titles, table.abstracts,
                        np.array([_LABELS[v] for v in table.labels], dtype=bool), label)
