"""``rankcut review export``: the review's records with their labels, as a table (CSV/TSV) or, for
records read from a RIS file, as that RIS file with ASReview's label notes.

Every export names its review (a ``review`` column; a ``rankcut review <id>`` note in RIS), so that
an earlier export of the same review is replaced and any other file, another review's export
included, is refused.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rankcut.audit.designs.interleaved import replayed
from rankcut.audit.folder import FrozenAudit
from rankcut.audit.manifest import Manifest, check_inputs, write_text_atomic
from rankcut.data.io import open_text, writes_through
from rankcut.data.screening import LABEL_COLUMNS, Table, read_table
from rankcut.review.records import RIS_NOTES, RIS_SUFFIXES, load_records, ris_record_id
from rankcut.review.session import (
    TABLES,
    _changed,
    _items,
    _table_rows,
    _texts,
    _write_table,
    kept_answers,
    load_review,
    prior_knowledge,
)

__all__ = ["EXPORT_COLUMNS", "export"]

EXPORT_COLUMNS = ("record_id", "label", "step", "move", "prior_knowledge", "review")
#: the note of a RIS export that names its review, then the record's step
_RIS_NOTE = re.compile(r"^rankcut review ([^\s:]+)")
#: ASReview's label notes (the ones its RIS reader reads back), by the label
_RIS_LABEL = {1: "ASReview_relevant", 0: "ASReview_irrelevant", "": "ASReview_not_seen"}


def _source_table(manifest: Manifest) -> tuple[Table | None, str]:
    """The table (CSV/TSV) the review's records were read from, if it is one and unchanged at its
    path, else ``None``; and the file's path, or why its columns are not exported (``""``: the
    records came from no table)."""
    path, why = _source(manifest, TABLES)
    if path is None:
        return None, why
    try:
        return read_table(path, label=None), str(path)
    except ValueError as err:   # unchanged, but refused by today's reader (a rule added since start)
        return None, f"{path} is not read as a table of records now ({err})"


def _source(manifest: Manifest, kinds: Sequence[str]) -> tuple[Path | None, str]:
    """The one file the review's records were read from, if it is of one of ``kinds`` (suffixes)
    and unchanged at its path; else ``None`` and why (``""``: the records came from no such file)."""
    sources = manifest["screener"]["config"]["sources"]
    if len(sources) != 1 or Path(sources[0]["path"].removesuffix(".gz")).suffix.lower() not in kinds:
        return None, ""
    src = sources[0]
    path = Path(src["path"])
    if not path.is_file():
        return None, f"{path} is gone"
    if _changed(src) is not None:
        return None, f"{path} changed since the review started"
    return path, ""


def _ris_parts(manifest: Manifest) -> tuple[dict[str, tuple[str, str]] | None, str]:
    """Title and abstract of each record, by ID, read again from the RIS file the review's records
    came from, if they did and it is unchanged at its path and read as it was, and its path; else
    ``None`` and why (``""``: the records came from no RIS file). A table of them starts a review
    again (the frozen text joins the two: no reader splits it back)."""
    path, why = _source(manifest, RIS_SUFFIXES)
    if path is None:
        return None, why
    try:
        with warnings.catch_warnings():   # its records without a title or abstract were said at start
            warnings.simplefilter("ignore")
            records = load_records(path)
    except ValueError as err:   # unchanged, but refused by today's reader (a rule added since start)
        return None, f"{path} is not read as records now ({err})"
    return dict(zip(records.ids, zip(records.titles, records.abstracts, strict=True), strict=True)), str(path)


def _export_header(columns: Sequence[str]) -> tuple[str, ...]:
    """:data:`EXPORT_COLUMNS` and a table's columns after them, but its ``record_id`` (the
    review's); a column named as one of the review's, or as a label column ASReview reads
    (:data:`~rankcut.data.screening.LABEL_COLUMNS`), is written ``file_<name>``: ASReview, reading
    the export, takes the first label column of its list it finds, which would be the file's
    ``included`` (the labels before the review) rather than the review's ``label``."""
    taken = {c.lower() for c in (*EXPORT_COLUMNS, *LABEL_COLUMNS)}
    header = list(EXPORT_COLUMNS)
    for name in columns:
        if name.lower() == "record_id":
            continue
        while name.lower() in taken:
            name = f"file_{name}"
        taken.add(name.lower())
        header.append(name)
    return tuple(header)


def _check_table(target: Path, review: str) -> None:
    """Refuse to replace ``target`` unless it is an export of the review ``review`` (short id)."""
    header, *rows = _table_rows(target) or [[]]
    if tuple(header[:len(EXPORT_COLUMNS)]) != EXPORT_COLUMNS:
        raise FileExistsError(f"{target} exists and is not an export of a review: name a new file")
    other = next((row[len(EXPORT_COLUMNS) - 1] for row in rows if len(row) >= len(EXPORT_COLUMNS)
                  and row[len(EXPORT_COLUMNS) - 1] != review), None)
    if other is not None:
        raise FileExistsError(f"{target} is an export of review {other}, not of this one ({review}): name a "
                              "new file (or remove that one)")


def _check_ris(target: Path, review: str) -> None:
    """Refuse to replace ``target`` unless it is a RIS export of the review ``review`` (short id)."""
    import rispy

    try:
        with open_text(target, None) as (_, f):
            entries = rispy.load(f, skip_unknown_tags=True)
    except (OSError, UnicodeDecodeError, ValueError, IndexError):
        entries = []
    named = [next((m.group(1) for n in e.get("notes") or [] if (m := _RIS_NOTE.match(str(n)))), None)
             for e in entries]
    if not named or None in named:
        raise FileExistsError(f"{target} exists and is not a RIS export of a review: name a new file")
    other = next((n for n in named if n != review), None)
    if other is not None:
        raise FileExistsError(f"{target} is an export of review {other}, not of this one ({review}): name a "
                              "new file (or remove that one)")


def _rows(folder: Path, manifest: Manifest) -> tuple[list[tuple[Any, ...]], int, dict[str, int]]:
    """The export's rows (:data:`EXPORT_COLUMNS`): the records read in reading order, then the
    unread ones (labelled where an answer is kept, or by the prior knowledge); the records read;
    the kept answers."""
    review = replayed(FrozenAudit(manifest))
    _, ids = _items(folder)
    prior = prior_knowledge(manifest)
    known = {rid: "yes" if rid in prior else "no" for rid in ids}
    rows: list[tuple[Any, ...]] = [
        (s.item[1], s.label, s.number, s.move, known[s.item[1]], manifest.short_id) for s in review.steps]
    read = {r[0] for r in rows}
    kept = kept_answers(folder)   # answered, not recorded: the review has not asked for them (yet)
    rows += [(rid, kept.get(rid, prior.get(rid, "")), "", "kept" if rid in kept else "", known[rid],
              manifest.short_id) for rid in ids if rid not in read]
    return rows, len(read), kept


def _write_ris(target: Path, source: Path, rows: Sequence[tuple[Any, ...]]) -> None:
    """The RIS file ``source`` (the review's records, unchanged) as ``rows`` order and label them:
    each entry as the file has it, but for its label notes — ASReview's (``ASReview_relevant``,
    ``ASReview_irrelevant``, ``ASReview_not_seen``: its RIS reader takes them as labels) and a
    ``rankcut review <id>: ...`` note of its step — which replace any such notes it held."""
    import rispy

    with open_text(source, None) as (_, f):
        entries = rispy.load(f)
    by_id = {ris_record_id(e, i): e for i, e in enumerate(entries)}
    out = []
    for rid, label, step, move, prior, review in rows:
        entry = {"id": rid, **by_id[rid]}   # one without an ID gets the review's (its number in the file)
        notes = [str(n) for n in entry.get("notes") or []
                 if not _RIS_NOTE.match(str(n)) and not any(k in str(n) for k in RIS_NOTES)]
        how = (("prior knowledge, not read yet" if prior == "yes" else "not read") if move == "" else
               "answered, kept (not counted by the certificate: the review has not asked for it)"
               if move == "kept" else f"step {step}, {move}{', prior knowledge' if prior == 'yes' else ''}")
        entry["notes"] = [*notes, _RIS_LABEL[label], f"rankcut review {review}: {how}"]
        out.append(entry)

    class Unnumbered(rispy.RisWriter):   # rispy >= 0.10 (pyproject): an empty header is left out
        def set_header(self, count: int) -> str:
            return ""   # rispy's "1.", "2.", … line before each record is no RIS tag line

    write_text_atomic(target, rispy.dumps(out, implementation=Unnumbered))


def export(folder: str | os.PathLike[str], path: str | os.PathLike[str], *, relevant_only: bool = False
           ) -> dict[str, Any]:
    """Write the review's records with their labels to ``path``: a CSV (TSV for ``.tsv``/``.tab``)
    or, for a review of a RIS file, ``.ris``. Written whole or not at all.

    **A table**: :data:`EXPORT_COLUMNS`, the records read first, in reading order (``step``,
    ``move`` ``screen`` or ``audit``, ``prior_knowledge`` ``yes`` for a record labelled before the
    session, else ``no``; ``review`` the review's short id on every row, so that an export names its
    review), then the unread ones in the records' order with empty label, step and move — as
    ASReview exports a project — except that a kept answer (``session.PENDING_FILE``) gives its
    label and the move ``kept``: a reviewer answered it, but no certificate counts it; and a record
    of the prior knowledge the review has not read yet gives the label known before the session
    (``prior_knowledge`` ``yes``, no step, no move), so that an export started from again keeps
    it. ``relevant_only``: only the records labelled relevant, kept and prior ones included. The
    labels are the review's as replayed from its label store (an edited store is refused). After
    those columns come the record's own: every column of the CSV/TSV the review was started from
    (its ``record_id`` but once; one named as a column before it, or as an ASReview label column,
    gets ``file_`` in front, so that ASReview reads the review's labels), with the values as the
    file holds them, so an export carries the PubMed ids, authors and DOIs a review
    goes on with. The file must be unchanged at its path (its sha256 was frozen at start). For
    records from a RIS file unchanged at its path, the last columns are ``title`` and ``abstract``
    as read from it, so that the table starts a review again (its labels as prior knowledge); for
    records from a changed file, a TREC run or Python, the last column is ``text``: the title and
    abstract the review screened, joined.

    **RIS** (``.ris``), for a review started from a RIS file unchanged at its path: that file's
    records in the same order as a table's rows, each with every tag it had, and its label as
    ASReview writes it in a note (``ASReview_relevant``, ``ASReview_irrelevant`` or
    ``ASReview_not_seen``, a kept answer's and the prior knowledge's labels included), beside a note
    ``rankcut review <id>: step 12, screen`` (or ``not read``, ``prior knowledge, not read yet``,
    ``answered, kept ...``). Such notes the file held before are
    replaced, so that ASReview reads the review's labels (a reference manager keeps them as
    notes). A record without an ``ID`` tag gets one: the review's ID for it, its number in the file.

    :returns: ``{"records", "read", "relevant", "kept_relevant", "prior_relevant", "columns_of",
        "no_columns"}``: the rows written, the review's counts (relevant: recorded), the kept
        answers that say relevant, the records known relevant before the session and not read
        yet, the file whose columns (or RIS records) were written (``""``: none), and why a
        table's were not (``""``).
    :raises FileExistsError: when ``path`` exists and is not such an export of this review
        (nothing is replaced but an earlier export of the same review).
    :raises ValueError: for a ``path`` not named ``.csv``, ``.tsv``, ``.tab`` or ``.ris`` (``-`` and
        ``/dev/stdout`` write CSV to stdout), a RIS
        export of a review not read from an unchanged RIS file, when a frozen input changed, or
        when the label store was edited.
    """
    out, target = Path(folder), Path(path)
    stream = writes_through(target)   # --out - or /dev/stdout: a CSV piped on
    suffix = ".csv" if stream else target.suffix.lower()
    if suffix not in (*TABLES, ".ris"):   # an .xlsx of CSV text, say, would not open
        raise ValueError(f"{target}: an export is written as CSV, TSV or RIS: name it *.csv, *.tsv or *.ris")
    manifest = load_review(out)
    ris = None
    if suffix == ".ris":
        ris, why = _source(manifest, RIS_SUFFIXES)
        if ris is None:
            raise ValueError(f"{target}: a RIS export is the RIS file the review's records were read from, "
                             f"with their labels, and {why or 'they were not read from a RIS file'}: "
                             "name it *.csv or *.tsv")
    if target.exists() and not stream:
        (_check_ris if ris is not None else _check_table)(target, manifest.short_id)
    texts_path = check_inputs(manifest)["texts"]["path"]   # refused if a frozen input changed
    rows, read, kept = _rows(out, manifest)
    relevant = sum(r[1] == 1 and r[2] != "" for r in rows)   # recorded: at a step
    if relevant_only:
        rows = [r for r in rows if r[1] == 1]
    qid, _ = _items(out)
    written, why = "", ""   # the file whose columns are written; why no file's are
    if ris is not None:
        _write_ris(target, ris, rows)
        written = str(ris)
    elif (parts := _ris_parts(manifest))[0] is not None:
        by_id = parts[0]
        _write_table(target, (*EXPORT_COLUMNS, "title", "abstract"), ([*r, *by_id[r[0]]] for r in rows))
        written = parts[1]
    else:
        table, source = _source_table(manifest)
        if table is not None:
            own = [i for i, c in enumerate(table.columns) if c.lower() != "record_id"]
            fields = {rid: [row[i] for i in own]
                      for rid, row in zip(table.record_ids, table.rows, strict=True)}
            _write_table(target, _export_header(table.columns), ([*r, *fields[r[0]]] for r in rows))
            written = source
        else:
            texts = _texts(texts_path, out)
            _write_table(target, (*EXPORT_COLUMNS, "text"), ([*r, texts.get((qid, r[0]), "")] for r in rows))
            why = source or parts[1]
    return {"records": len(rows), "read": read, "relevant": relevant,
            "kept_relevant": sum(y for y in kept.values()),
            "prior_relevant": sum(r[1] == 1 and r[2] == "" and r[3] != "kept" for r in rows),
            "columns_of": written, "no_columns": why}
