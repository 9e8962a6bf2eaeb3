"""The list to label that ``sample`` writes (``to_label.csv`` or ``.jsonl``), and the frozen texts
the reviewer is shown (``--texts``: document and query texts, :mod:`rankcut.data.texts`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankcut.audit.designs import design_of
from rankcut.audit.folder import TO_LABEL, Audit
from rankcut.audit.manifest import write_text_atomic
from rankcut.audit.pools import Item

__all__ = ["texts_and_queries", "write_to_label"]


def texts_and_queries(audit: Audit) -> tuple[dict[Any, str] | None, dict[str, str] | None]:
    """The frozen document and query texts, in one pass over the file (None: frozen without)."""
    from rankcut.data.texts import read_texts_and_queries

    entry = audit.inputs.get("texts")
    return (None, None) if entry is None else read_texts_and_queries(entry["path"], by="pair")


def page_texts(audit: Audit) -> tuple[dict[Any, str] | None, dict[str, str] | None, dict[Any, str]]:
    """:func:`texts_and_queries` and the titles the frozen texts file gives its documents, in one
    pass over the file (:func:`rankcut.data.texts.read_texts_queries_and_titles`; no titles without
    a texts file)."""
    from rankcut.data.texts import read_texts_queries_and_titles

    entry = audit.inputs.get("texts")
    return (None, None, {}) if entry is None else read_texts_queries_and_titles(entry["path"], by="pair")


def write_to_label(audit: Audit, order: list[Item], fmt: str, *,
                   known: tuple[Sequence[tuple[Any, ...]], Mapping[Item, str] | None,
                                Mapping[str, str] | None] | None = None) -> Path:
    """Write ``to_label.csv`` (or ``.jsonl``): the items of ``order``, an empty label each, where
    each stands and why (the design's ``positions``), its query's text (``query_text``, where the
    texts file gives the queries': a passage is judged against its query) and its text.

    :param known: the positions, the texts and the query texts when the caller holds them already
        (the labelling page's review, which would otherwise be replayed, and the texts file read,
        per answer).
    """
    import csv
    import io

    # a design that counts labels in order says where each item stands (the sequential audit), and
    # one that chooses each item from the labels says also why (the interleaved review's next item)
    where, texts, queries = ((design_of(audit).positions(audit, len(order)), *texts_and_queries(audit))
                             if known is None else known)
    queries = queries or None   # a texts file without query lines: no column
    path = audit.folder / f"{TO_LABEL}.{fmt}"
    buf = io.StringIO(newline="")
    columns = ["part", "position", "why"][:len(where[0])] if where else []
    if fmt == "jsonl":
        for i, (q, d) in enumerate(order):
            row: dict[str, Any] = {"query_id": q, "doc_id": d, "label": None}  # null: to fill in
            if where:
                row.update(zip(columns, where[i], strict=True))
            if queries is not None and q in queries:
                row["query_text"] = queries[q]
            if texts is not None and (q, d) in texts:
                row["text"] = texts[q, d]
            buf.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["query_id", "doc_id", "label"] + columns
                        + (["query_text"] if queries is not None else [])
                        + (["text"] if texts is not None else []))
        for i, (q, d) in enumerate(order):
            writer.writerow([q, d, ""] + (list(where[i]) if where else [])
                            + ([queries.get(q, "")] if queries is not None else [])
                            + ([texts.get((q, d), "")] if texts is not None else []))
    write_text_atomic(path, buf.getvalue())
    return path
