"""Runs as Parquet files, in and out (pyarrow, the ``columnar`` extra, imported inside).

A Parquet run has one row per posting and the columns ``query_id`` and ``doc_id``, ``rank``
(integers) and ``score`` (numbers); ``tag`` is written and ignored on reading, as are any other
columns. Read, the columns are those of a run frame (:mod:`rankcut.data.frames`): the query
``query_id`` or ``qid`` (PyTerrier), the document ``doc_id`` or ``docno``, ``score``, and
``rank`` optional (without it the row order within a query plays the rank); ids are strings or
integers (integers read as their decimal text), ranks integers. The checks are those of a
TREC run (:mod:`rankcut.data.trec`), the rows counted from 1 in the messages: ids non-empty and
without whitespace (so that the run can be written as TREC text), finite scores, no document
twice for one query.

``rankcut cut --out x.parquet`` and any ``--run x.parquet`` choose this form by the suffix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut.data.frames import DOC_COLUMNS, QUERY_COLUMNS
from rankcut.data.io import write_atomic
from rankcut.data.lists import RankedLists, RunColumns, ranks_in_row_order

__all__ = ["COLUMNS", "read_parquet_run", "write_parquet_run"]

#: the columns a Parquet run is written with
COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "rank", "score")
#: the names read for each column (one of each; ``rank`` may be absent): a run frame's
_READ: dict[str, tuple[str, ...]] = {"query_id": QUERY_COLUMNS, "doc_id": DOC_COLUMNS, "score": ("score",),
                                     "rank": ("rank",)}


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
    except ImportError:
        raise ValueError("Parquet runs need pyarrow: pip install 'rankcut[columnar]'") from None
    return pa


def read_parquet_run(path: str | Path, *, name: str | None = None) -> RunColumns:
    """Read a Parquet run into columns (queries in the order of their first row).

    :raises ValueError: naming the file, and the row where one is at fault, for a file that is not
        Parquet, a missing column or one of the wrong type, a null, an empty id or one holding
        whitespace, a score that is not finite, a document listed twice for one query (both rows
        named), or no row.
    """
    pa = _pyarrow()
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from rankcut.data.lists import first_repeat
    from rankcut.data.trec import WHITESPACE

    label = name or str(path)
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{label}: not a Parquet file ({exc})") from None
    named = {}   # our name -> the file's
    for c, names in _READ.items():
        found = [n for n in names if n in schema.names]
        if len(found) > 1:
            raise ValueError(f"{label}: both {found[0]!r} and {found[1]!r} are present; keep one as {c}")
        if found:
            named[c] = found[0]
    absent = [" or ".join(map(repr, names)) for c, names in _READ.items() if c not in named and c != "rank"]
    if absent:
        raise ValueError(f"{label}: no column {', '.join(absent)}; a Parquet run has the columns "
                         f"{', '.join(COLUMNS)} (rank and tag optional; qid and docno read as PyTerrier "
                         f"names them); its columns are {', '.join(schema.names)}")
    table = pq.read_table(path, columns=list(named.values()))
    if table.num_rows == 0:
        raise ValueError(f"{label}: the run has no row (no query, no document)")
    wanted = {"query_id": (_is_id, pa.string()), "doc_id": (_is_id, pa.string()),
              "rank": (pa.types.is_integer, pa.int64()), "score": (_is_number, pa.float64())}
    columns = {}
    for c, given in named.items():
        accepts, target = wanted[c]
        column = table.column(given)
        kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if not accepts(kind):
            held = "string or integer ids" if accepts is _is_id else target
            why = (" (pandas stores a column of integer ids that holds a null as double: fill or drop the "
                   "null first)" if accepts is _is_id and pa.types.is_floating(kind) else "")
            raise ValueError(f"{label}: column {given!r} must hold {held}, got {column.type}{why}")
        if column.null_count:
            row = _first(pc.is_null(column))
            raise ValueError(f"{label}, row {row + 1}: {given} is null")
        try:
            columns[c] = column.cast(target)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{label}: column {given!r} cannot be read as {target} ({exc})") from None
    spaces = "[" + "".join(f"\\x{{{ord(ch):x}}}" for ch in WHITESPACE) + "]"
    for c in ("query_id", "doc_id"):
        bad = pc.or_(pc.equal(pc.binary_length(columns[c]), 0), pc.match_substring_regex(columns[c], spaces))
        if pc.any(bad).as_py():
            row = _first(bad)
            raise ValueError(f"{label}, row {row + 1}: {named[c]} {columns[c][row].as_py()!r} is empty or "
                             "holds whitespace")
    scores = columns["score"].to_numpy()
    finite = np.isfinite(scores)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"{label}, row {row + 1}: score must be finite, got {float(scores[row])!r}")
    queries = pc.dictionary_encode(columns["query_id"]).combine_chunks()
    docs = pc.dictionary_encode(columns["doc_id"]).combine_chunks()
    qcodes, dcodes = queries.indices.to_numpy(), docs.indices.to_numpy()
    vocabulary = np.empty(len(docs.dictionary), dtype=object)
    vocabulary[:] = docs.dictionary.to_pylist()
    repeat = first_repeat(qcodes, dcodes, len(vocabulary))
    if repeat is not None:
        first, again = repeat
        raise ValueError(f"{label}, row {again + 1}: document {vocabulary[dcodes[again]]!r} is listed twice "
                         f"for query {queries.dictionary[qcodes[again]].as_py()!r} (rows {first + 1} and "
                         f"{again + 1})")
    ranks = columns["rank"].to_numpy() if "rank" in columns else ranks_in_row_order(qcodes)
    return RunColumns.from_rows(qcodes, queries.dictionary.to_pylist(), dcodes, vocabulary, scores, ranks)


def _is_id(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind))


def _is_number(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(kind) or pa.types.is_integer(kind))


def _first(flags: Any) -> int:
    return int(np.flatnonzero(np.asarray(flags.to_numpy(zero_copy_only=False), dtype=bool))[0])


def write_parquet_run(path: str | Path, lists: RankedLists, kept: NDArray[np.bool_], *, tag: str) -> None:
    """Write the ``kept`` positions of ``lists`` (a mask ``[n_queries, max_len]`` of prefixes) as a
    Parquet run, atomically: ``query_id, doc_id, rank`` (1..k), ``score``, ``tag``.

    The ids are dictionary-encoded in the file, as they are in memory.
    """
    pa = _pyarrow()
    import pyarrow.parquet as pq

    k = kept.sum(axis=1)
    rows = np.repeat(np.arange(len(lists), dtype=np.int32), k)
    codes = lists.doc_codes[kept]
    qids = pa.array(list(lists.qids), pa.string())
    vocabulary = pa.array(lists.vocabulary.tolist(), pa.string())
    table = pa.table({
        "query_id": pa.DictionaryArray.from_arrays(pa.array(rows, pa.int32()), qids),
        "doc_id": pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), vocabulary),
        "rank": pa.array(np.broadcast_to(np.arange(1, lists.max_len + 1), kept.shape)[kept], pa.int64()),
        "score": pa.array(lists.scores[kept], pa.float64()),
        "tag": pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(rows), dtype=np.int32)), pa.array([tag])),
    })
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    write_atomic(path, sink.getvalue().to_pybytes())
