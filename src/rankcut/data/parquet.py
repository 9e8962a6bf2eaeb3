"""Runs as Parquet files, in and out (pyarrow, the ``columnar`` extra, imported inside).

A Parquet run has one row per posting and the columns ``query_id`` and ``doc_id`` (strings),
``rank`` (integers) and ``score`` (numbers); ``tag`` is written and ignored on reading, as are
any other columns. The checks are those of a TREC run (:mod:`rankcut.data.trec`), the rows
counted from 1 in the messages: ids non-empty and without whitespace (so that the run can be
written as TREC text), finite scores, no document twice for one query.

``rankcut cut --out x.parquet`` and any ``--run x.parquet`` choose this form by the suffix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut.data.io import write_atomic
from rankcut.data.lists import RankedLists, RunColumns

__all__ = ["COLUMNS", "read_parquet_run", "write_parquet_run"]

#: the columns a Parquet run must hold
COLUMNS: tuple[str, ...] = ("query_id", "doc_id", "rank", "score")


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

    from rankcut.data.trec import _WHITESPACE, _first_repeat

    label = name or str(path)
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{label}: not a Parquet file ({exc})") from None
    absent = [c for c in COLUMNS if c not in schema.names]
    if absent:
        raise ValueError(f"{label}: no column {', '.join(map(repr, absent))}; a Parquet run has the columns "
                         f"{', '.join(COLUMNS)} (tag optional)")
    table = pq.read_table(path, columns=list(COLUMNS))
    if table.num_rows == 0:
        raise ValueError(f"{label}: the run has no row (no query, no document)")
    wanted = {"query_id": (pa.types.is_string, pa.string()), "doc_id": (pa.types.is_string, pa.string()),
              "rank": (pa.types.is_integer, pa.int64()), "score": (_is_number, pa.float64())}
    columns = {}
    for c, (accepts, target) in wanted.items():
        column = table.column(c)
        kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if not accepts(kind) and not pa.types.is_large_string(kind):
            raise ValueError(f"{label}: column {c!r} must hold {target}, got {column.type}")
        if column.null_count:
            row = _first(pc.is_null(column))
            raise ValueError(f"{label}, row {row + 1}: {c} is null")
        try:
            columns[c] = column.cast(target)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"{label}: column {c!r} cannot be read as {target} ({exc})") from None
    spaces = "[" + "".join(f"\\x{{{ord(ch):x}}}" for ch in _WHITESPACE) + "]"
    for c in ("query_id", "doc_id"):
        bad = pc.or_(pc.equal(pc.binary_length(columns[c]), 0), pc.match_substring_regex(columns[c], spaces))
        if pc.any(bad).as_py():
            row = _first(bad)
            raise ValueError(f"{label}, row {row + 1}: {c} {columns[c][row].as_py()!r} is empty or holds "
                             "whitespace")
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
    repeat = _first_repeat(qcodes, dcodes, len(vocabulary))
    if repeat is not None:
        first, again = repeat
        raise ValueError(f"{label}, row {again + 1}: document {vocabulary[dcodes[again]]!r} is listed twice "
                         f"for query {queries.dictionary[qcodes[again]].as_py()!r} (rows {first + 1} and "
                         f"{again + 1})")
    return RunColumns.from_rows(qcodes, queries.dictionary.to_pylist(), dcodes, vocabulary, scores,
                                columns["rank"].to_numpy())


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
