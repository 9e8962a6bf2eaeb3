"""pandas DataFrames in the ecosystem's column conventions, to and from :class:`RankedLists`.

Accepted column names (exactly one of each alternative must be present):

* run: query ``qid`` (PyTerrier) or ``query_id`` (ir_measures, ir_datasets); document ``docno``
  or ``doc_id``; ``score``; optional ``rank`` (any base: it only orders tied scores);
* qrels: query ``qid`` or ``query_id``; document ``docno`` or ``doc_id``; grade ``label``
  (PyTerrier) or ``relevance`` (ir_measures, ir_datasets). Other columns are ignored.

pandas is imported only inside the functions: it is an optional extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rankcut.data.lists import RankedLists, RunColumns, default_threshold, first_repeat, ranks_in_row_order
from rankcut.data.trec import load_trec

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DOC_COLUMNS", "QUERY_COLUMNS", "lists_from_frame", "lists_to_frame"]

#: the names a run's query and document columns are read by (PyTerrier's first); the Parquet
#: reader takes the same
QUERY_COLUMNS = ("qid", "query_id")
DOC_COLUMNS = ("docno", "doc_id")


def _column(df: pd.DataFrame, names: tuple[str, ...], what: str, frame: str) -> str | None:
    found = [c for c in names if c in df.columns]
    if len(found) > 1:
        raise ValueError(f"{frame}: both {found[0]!r} and {found[1]!r} are present; keep one as the {what}")
    return found[0] if found else None


def _require(df: pd.DataFrame, names: tuple[str, ...], what: str, frame: str) -> str:
    col = _column(df, names, what, frame)
    if col is None:
        wanted = " or ".join(repr(n) for n in names)
        raise ValueError(f"{frame}: no {what} column ({wanted}); columns are {list(df.columns)}")
    return col


def _ids(values: pd.Series, column: str, frame: str, index: list[Any]) -> pd.Series:
    """``values`` as ``str``, refused where one is missing (None, NaN, NA: it would read ``'nan'``),
    empty or holds whitespace: ``' d2 '`` would not match the qrels' ``d2`` and be scored not
    relevant (as :mod:`rankcut.data.parquet` refuses)."""
    missing = values.isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise ValueError(f"{frame}, row {index[i]!r}: {column} is missing ({values.iloc[i]!r})")
    floats = np.fromiter((isinstance(v, float | np.floating) for v in values), dtype=bool, count=len(values))
    if floats.any():   # 5611210.0 would read '5611210.0': no qrels id, and so written to a cut run
        i = int(np.flatnonzero(floats)[0])
        raise ValueError(f"{frame}, row {index[i]!r}: {column} {float(values.iloc[i])!r} is a float; ids are "
                         f"text or integers (convert the column first, e.g. df[{column!r}] = "
                         f"df[{column!r}].astype('int64'))")
    ids = values.map(str).astype(object)   # an empty numeric column stays numeric under map alone
    bad = (ids.str.len() == 0) | ids.str.contains(r"\s", regex=True)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        edges = ids.iloc[i].strip() != ids.iloc[i] or not ids.iloc[i].strip()   # else spaces inside
        fix = (f"strip the ids first, e.g. df[{column!r}] = df[{column!r}].str.strip()" if edges else
               f"a TREC id is one token: replace the inner spaces, e.g. df[{column!r}] = "
               f"df[{column!r}].str.replace(r'\\s+', '_', regex=True), in the qrels too")
        raise ValueError(f"{frame}, row {index[i]!r}: {column} {ids.iloc[i]!r} is empty or holds whitespace "
                         f"({fix})")
    return ids


def _integral(values: Any, what: str, frame: str, index: list[Any]) -> list[int]:
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return [int(v) for v in arr]
    try:
        floats = arr.astype(float)
    except (TypeError, ValueError):
        raise ValueError(f"{frame}: the {what} column must hold integers, got dtype {arr.dtype}") from None
    bad = ~np.isfinite(floats) | (floats != np.round(floats))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{frame}, row {index[i]!r}: {what} must be an integer, got {arr.tolist()[i]!r}")
    return [int(v) for v in floats]


def lists_from_frame(
    df: pd.DataFrame,
    qrels_df: pd.DataFrame | None = None,
    *,
    threshold: float | None = None,
    ordering: str = "rank",
    missing: str = "drop",
) -> RankedLists:
    """Build :class:`RankedLists` from a run frame and an optional qrels frame.

    Queries keep the order of their first row. Without a ``rank`` column, the row order within
    a query plays the rank (it breaks score ties under ``ordering="rank"``). Query and document
    ids are converted to ``str`` (text or integers; a float id is refused, as it would read
    ``'5611210.0'``). ``threshold``, ``ordering`` and ``missing`` are as in
    :func:`rankcut.data.trec.load_trec`.

    :raises ValueError: naming the frame and the row index, for a missing or ambiguous column, an
        id that is missing, a float, empty or holds whitespace, a score that is not a finite number,
        a rank or grade that is not an integer, a (query, document) pair given twice, or an empty
        run frame.
    """
    q_col = _require(df, QUERY_COLUMNS, "query id", "run frame")
    d_col = _require(df, DOC_COLUMNS, "document id", "run frame")
    s_col = _require(df, ("score",), "score", "run frame")
    if len(df) == 0:
        raise ValueError("run frame: no row (no query, no document)")
    import pandas as pd

    index = df.index.tolist()  # plain Python labels for messages
    qcodes, qids = pd.factorize(_ids(df[q_col], q_col, "run frame", index), sort=False)  # first-row order
    dcodes, docs = pd.factorize(_ids(df[d_col], d_col, "run frame", index), sort=False)
    try:
        scores = np.asarray(df[s_col], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"run frame: scores must be numbers, got dtype {df[s_col].dtype}") from None
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"run frame, row {index[i]!r}: score must be finite, got {float(scores[i])!r}")
    if "rank" in df.columns:
        ranks = np.array(_integral(df["rank"], "rank", "run frame", index), dtype=np.int64)
    else:
        ranks = ranks_in_row_order(qcodes)
    repeat = first_repeat(qcodes, dcodes, len(docs))
    if repeat is not None:
        j, i = repeat
        raise ValueError(f"run frame: document {docs[dcodes[i]]!r} is listed twice for query "
                         f"{qids[qcodes[i]]!r} (rows {index[j]!r} and {index[i]!r})")
    vocabulary = np.empty(len(docs), dtype=object)
    vocabulary[:] = list(docs)
    run = RunColumns.from_rows(qcodes.astype(np.int32), list(qids), dcodes.astype(np.int32), vocabulary,
                               scores, ranks)
    qrels = None if qrels_df is None else _qrels(qrels_df)
    if qrels is not None:   # resolved here, so that a warning names the caller's line
        threshold = default_threshold(threshold, qrels)
    return load_trec(run, qrels, threshold=threshold, ordering=ordering, missing=missing)


def _qrels(df: pd.DataFrame) -> dict[str, dict[str, int]]:
    q_col = _require(df, QUERY_COLUMNS, "query id", "qrels frame")
    d_col = _require(df, DOC_COLUMNS, "document id", "qrels frame")
    r_col = _require(df, ("label", "relevance"), "relevance", "qrels frame")
    index = df.index.tolist()
    grades = _integral(df[r_col], "relevance", "qrels frame", index)
    query_ids = _ids(df[q_col], q_col, "qrels frame", index)
    doc_ids = _ids(df[d_col], d_col, "qrels frame", index)
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for i, (q, d, g) in enumerate(zip(query_ids, doc_ids, grades, strict=True)):
        j = first.setdefault((q, d), i)
        if j != i:
            if qrels[q][d] == g:   # the same judgement again: once, as read_qrels does
                continue
            raise ValueError(f"qrels frame: query {q!r}, document {d!r} is judged twice, differently "
                             f"({qrels[q][d]} in row {index[j]!r}, {g} in row {index[i]!r})")
        qrels.setdefault(q, {})[d] = g
    return qrels


def lists_to_frame(lists: RankedLists, cuts: Any = None) -> pd.DataFrame:
    """The kept prefix of every list as a PyTerrier result frame.

    Columns ``qid, docno, score, rank``, one row per kept document in list order; ``rank``
    starts at 0 as in PyTerrier (``pyterrier.model.FIRST_RANK``). ``cuts=None`` keeps whole
    lists; a cut of 0 gives the query no row (see :meth:`RankedLists.check_cuts`).
    """
    try:
        import pandas as pd  # optional dependency, loaded only when frames are used
    except ImportError as exc:
        raise ImportError("lists_to_frame needs pandas: pip install 'rankcut[eval]'") from exc

    k = lists.lengths if cuts is None else lists.check_cuts(cuts, allow_zero=True)
    keep = np.arange(lists.max_len)[None, :] < k[:, None]
    rows, _ = np.nonzero(keep)
    ranks = np.broadcast_to(np.arange(lists.max_len), keep.shape)[keep]
    return pd.DataFrame({
        "qid": np.asarray(lists.qids, dtype=object)[rows],
        "docno": lists.doc_ids[keep],
        "score": lists.scores[keep],
        "rank": ranks.astype(np.int64),
    })

