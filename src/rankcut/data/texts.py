"""Document and query texts from JSON-lines files, for text features and for labelling.

One JSON object a line, as in ``../shared/datasets/trec-dl/texts/*.jsonl``::

    {"query_id": "264014", "query": "how long is ...", "doc_id": "5611210", "text": "..."}

:func:`read_texts_jsonl` reads the documents' ``text``, :func:`read_query_texts` the ``query``,
:func:`read_texts_and_queries` both in one pass. A line may also give the document's ``title``:
:func:`read_titles` reads them (:func:`read_texts_queries_and_titles` all three in one pass), and
the labelling page shows a title as a heading above the text
(less the title where the text begins with it and a line break, as ``rankcut review`` writes a
record's title and abstract).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankcut.data.io import Source, json_objects, open_text

__all__ = ["read_query_texts", "read_texts_and_queries", "read_texts_jsonl", "read_texts_queries_and_titles",
           "read_titles"]

_BY = ("pair", "doc")


def _absent(obj: dict[str, Any], key: str, where: str) -> None:
    """Refuse a line without ``key``, naming the fields it has (``{"docno", "contents"}``: another
    tool's names, which a bare "got None" hid)."""
    if key not in obj:
        fields = ", ".join(map(repr, list(obj)[:8])) + (", ..." if len(obj) > 8 else "")
        raise ValueError(f"{where}: no {key!r} field (its fields: {fields or 'none'})")


def _id(obj: dict[str, Any], key: str, where: str) -> str:
    _absent(obj, key, where)
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise ValueError(f"{where}: {key!r} must be a non-empty string or integer, got {value!r}")
    return str(value)


def _objects(source: Source, name: str | None) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """``(where, line number, object)`` for each non-blank line of a JSON-lines file."""
    with open_text(source, name) as (label, f):
        yield from json_objects(f, label)


def read_query_texts(source: Source, *, name: str | None = None) -> dict[str, str]:
    """Read the ``query`` text per query id from a JSON-lines texts file.

    Lines without a ``query`` key are skipped (a file of document texts only gives ``{}``); every
    line of a query that has one must give the same text.

    :param source: path (``.gz`` allowed) or open text file.
    :param name: how to call the source in error messages.
    :raises ValueError: naming file and line, for a line that is not a JSON object, a ``query`` that
        is not a string, a missing or empty ``query_id``, or a query whose texts differ (both lines
        named).
    """
    queries: dict[str, tuple[str, int]] = {}
    for where, lineno, obj in _objects(source, name):
        _take_query(queries, obj, where, lineno)
    return {qid: text for qid, (text, _) in queries.items()}


def read_texts_jsonl(source: Source, *, by: str = "pair",
                     name: str | None = None) -> dict[Any, str]:
    """Read ``text`` per document from a JSON-lines file.

    :param source: path (``.gz`` allowed) or open text file.
    :param by: ``"pair"`` keys texts by ``(query_id, doc_id)``; ``"doc"`` keys them by ``doc_id``
        alone (a document listed for several queries must carry the same text each time).
    :param name: how to call the source in error messages.
    :raises ValueError: naming file and line, for a line that is not a JSON object, a missing or
        non-string ``text``, a missing or empty id, a key given twice (``"pair"``) or a document
        whose texts differ (``"doc"``); both lines are named.
    """
    if by not in _BY:
        raise ValueError(f"by must be one of {_BY}, got {by!r}")
    texts: dict[Any, tuple[str, int]] = {}
    for where, lineno, obj in _objects(source, name):
        _take_text(texts, obj, where, lineno, by)
    return {key: text for key, (text, _) in texts.items()}


def read_texts_and_queries(source: Source, *, by: str = "pair", name: str | None = None
                           ) -> tuple[dict[Any, str], dict[str, str]]:
    """:func:`read_texts_jsonl`'s texts and :func:`read_query_texts`' queries in one pass over the
    file (a reviewer's list shows both, and the file may be large), with the errors of both."""
    texts, queries, _ = read_texts_queries_and_titles(source, by=by, name=name)
    return texts, queries


def read_texts_queries_and_titles(source: Source, *, by: str = "pair", name: str | None = None
                                  ) -> tuple[dict[Any, str], dict[str, str], dict[Any, str]]:
    """:func:`read_texts_and_queries` and :func:`read_titles` in one pass over the file (the
    labelling page shows all three), with the errors of both."""
    if by not in _BY:
        raise ValueError(f"by must be one of {_BY}, got {by!r}")
    texts: dict[Any, tuple[str, int]] = {}
    queries: dict[str, tuple[str, int]] = {}
    titles: dict[Any, str] = {}
    for where, lineno, obj in _objects(source, name):
        _take_text(texts, obj, where, lineno, by)
        _take_query(queries, obj, where, lineno)
        _take_title(titles, obj, where, by)
    return ({key: text for key, (text, _) in texts.items()},
            {qid: text for qid, (text, _) in queries.items()}, titles)


def read_titles(source: Source, *, by: str = "pair", name: str | None = None) -> dict[Any, str]:
    """The ``title`` of each document whose line gives one, a string not blank (keyed as
    :func:`read_texts_jsonl` keys texts); other lines are skipped (a corpus's ``"title": null``).

    :raises ValueError: naming file and line, for a titled line with a missing or empty id.
    """
    if by not in _BY:
        raise ValueError(f"by must be one of {_BY}, got {by!r}")
    titles: dict[Any, str] = {}
    for where, _, obj in _objects(source, name):
        _take_title(titles, obj, where, by)
    return titles


def _take_title(titles: dict[Any, str], obj: dict[str, Any], where: str, by: str) -> None:
    """A line's ``title``, if it gives one that is a string not blank, into ``titles``."""
    title = obj.get("title")
    if isinstance(title, str) and title.strip():
        doc = _id(obj, "doc_id", where)
        titles[(_id(obj, "query_id", where), doc) if by == "pair" else doc] = title


def _take_query(queries: dict[str, tuple[str, int]], obj: dict[str, Any], where: str, lineno: int) -> None:
    """A line's ``query`` text, if it has one, into ``queries`` (query id → (text, first line))."""
    if "query" not in obj:
        return
    text = obj["query"]
    if not isinstance(text, str):
        raise ValueError(f"{where}: 'query' must be a string, got {text!r}")
    qid = _id(obj, "query_id", where)
    if qid in queries:
        if queries[qid][0] != text:
            raise ValueError(f"{where}: query {qid!r} has a different text than on line {queries[qid][1]}")
        return
    queries[qid] = (text, lineno)


def _take_text(texts: dict[Any, tuple[str, int]], obj: dict[str, Any], where: str, lineno: int,
               by: str) -> None:
    """A line's document ``text`` into ``texts`` (key → (text, first line))."""
    doc = _id(obj, "doc_id", where)
    _absent(obj, "text", where)
    text = obj["text"]
    if not isinstance(text, str):
        raise ValueError(f"{where}: 'text' must be a string, got {text!r}")
    key: Any = (_id(obj, "query_id", where), doc) if by == "pair" else doc
    if key in texts:
        if by == "pair":
            raise ValueError(f"{where}: query {key[0]!r}, document {doc!r} is given twice "
                             f"(lines {texts[key][1]} and {lineno})")
        if texts[key][0] != text:
            raise ValueError(f"{where}: document {doc!r} has a different text than on line {texts[key][1]}")
        return
    texts[key] = (text, lineno)
