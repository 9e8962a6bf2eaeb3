"""Audit labels: a crash-safe store and label files in and out.

An audit sends the sampled items ``(query_id, doc_id)`` to a labelling oracle and gets back their
relevance ``y ∈ {0, 1}`` (§2.3 of the audit paper). Every certificate assumes those labels are the
true ones (Assumption 2) and that the thing certified was fixed before they were looked at
(Assumption 1, §2.4). This module keeps the labels so that both can be checked afterwards:

* :class:`LabelStore` — an SQLite file (stdlib :mod:`sqlite3`, write-ahead log, one transaction
  per write): a label whose :meth:`~LabelStore.record` returned survives a killed process, a
  second, different label for an item is refused unless ``overwrite=True``, and every change is
  kept in a history with the old and the new label. A ``meta`` table holds key/value notes, e.g.
  which sample the labels belong to and when it was opened for certification. Opened with
  ``readonly=True`` it never writes, and reads a store in a read-only folder too (:func:`writable`).
* :func:`read_label_file` / :func:`write_label_file` — CSV, TSV or JSON-lines label files
  (``query_id, doc_id, label``), errors naming file and line, written atomically.

The qrels oracle is :mod:`rankcut.audit.oracle`; labelling at the terminal, with undo, is
:mod:`rankcut.audit.interactive`.

Items are pairs of non-empty strings without surrounding whitespace; labels are 0 or 1.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import operator
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal, NamedTuple, Self
from urllib.parse import quote

from rankcut.data.io import json_objects, open_text, write_atomic

__all__ = [
    "LABEL_FILE_KINDS",
    "SCHEMA_VERSION",
    "SEEN_META",
    "LabelChanges",
    "LabelEvent",
    "StoreMark",
    "LabelStore",
    "ReadOnlyStoreError",
    "check_items",
    "holds_store",
    "remove_store",
    "unique_items",
    "writable",
    "read_label_file",
    "reviewer_name",
    "reviewer_of",
    "reviewer_source",
    "write_label_file",
]

Item = tuple[str, str]
Row = tuple[str, str, int]

SCHEMA_VERSION = 1
MAX_NAME = 60   # a reviewer's name, recorded in the source of each answer they give
_FORMAT = "rankcut-labels"
_RESERVED_META = ("format", "schema_version")
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE labels (query_id TEXT NOT NULL, doc_id TEXT NOT NULL,"
    " label INTEGER NOT NULL CHECK (label IN (0, 1)), source TEXT NOT NULL, recorded_at TEXT NOT NULL,"
    " PRIMARY KEY (query_id, doc_id)) WITHOUT ROWID",
    # One row per label written: old_label is NULL for a first label, else the label it replaced;
    # new_label is NULL where an answer was undone (the label removed).
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,"
    " old_label INTEGER CHECK (old_label IN (0, 1)), new_label INTEGER CHECK (new_label IN (0, 1)),"
    " source TEXT NOT NULL, recorded_at TEXT NOT NULL)",
)

LABEL_FILE_KINDS: tuple[str, ...] = ("csv", "tsv", "jsonl")
_DELIMITERS = {"csv": ",", "tsv": "\t"}
_ROLES = ("query_id", "doc_id", "label")
_ALIASES = {"query_id": "query_id", "query": "query_id", "qid": "query_id",
            "doc_id": "doc_id", "doc": "doc_id", "docno": "doc_id",
            "label": "label", "relevant": "label"}
_ANSWERS = {"1": 1, "0": 0, "yes": 1, "no": 0, "true": 1, "false": 0, "y": 1, "n": 0}
_LABEL_FORMS = "0/1, yes/no, true/false or y/n"


class LabelEvent(NamedTuple):
    """One label written to a :class:`LabelStore`: ``old_label`` is None for a first label,
    ``new_label`` None for an undone one (:meth:`LabelStore.undo`)."""

    query_id: str
    doc_id: str
    old_label: int | None
    new_label: int | None
    source: str
    recorded_at: str


class StoreMark(NamedTuple):
    """How far :meth:`LabelStore.changes_since` read a store: its last event (``seq`` 0 and
    ``recorded_at`` "" for a store without any)."""

    seq: int
    recorded_at: str


class LabelChanges(NamedTuple):
    """What :meth:`LabelStore.changes_since` read: the labels to apply, in order, as
    ``(query_id, doc_id, label)`` with ``label`` None for a label taken back; ``full`` when they are
    every current label instead (no mark given, or the store is not the one the mark was read from),
    to apply to nothing; ``mark`` is for the next call."""

    mark: StoreMark
    full: bool
    labels: list[tuple[str, str, int | None]]


# --- checks shared by the store and the files ------------------------------------------------------

def _check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or value != value.strip() or "\0" in value:
        raise ValueError(f"{what} must be a non-empty string without surrounding whitespace or a NUL, got "
                         f"{value!r}")   # a NUL: no text file rankcut reads holds one
    return value


def check_items(items: Iterable[Any]) -> list[Item]:
    if isinstance(items, str | bytes):
        raise ValueError(f"items must be a sequence of (query_id, doc_id) pairs, got {items!r}")
    out: list[Item] = []
    for i, item in enumerate(items):
        if isinstance(item, str | bytes) or not isinstance(item, Sequence) or len(item) != 2:
            raise ValueError(f"items[{i}] must be a (query_id, doc_id) pair, got {item!r}")
        out.append((_check_id(item[0], f"items[{i}] query id"), _check_id(item[1], f"items[{i}] doc id")))
    return out


def _check_label(value: Any, what: str) -> int:
    try:
        label = operator.index(value)  # bool and numpy integers too; floats are refused
    except TypeError:
        label = -1
    if label not in (0, 1):
        raise ValueError(f"{what} must be 0 or 1, got {value!r}")
    return label


def unique_items(items: Iterable[Item]) -> list[Item]:
    return list(dict.fromkeys(items))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# --- the store ---------------------------------------------------------------------------------------

class ReadOnlyStoreError(PermissionError):
    """A write to a label store that cannot be written: its folder (or the file) is read-only, or
    it was opened with ``readonly=True``."""


_STORE_FILES = ("", "-wal", "-shm", "-journal")


def writable(path: str | os.PathLike[str]) -> bool:
    """Whether a label store at ``path`` can be written: its folder can (SQLite writes its journal
    beside it), and so can the file where it exists. False on a read-only copy or mount."""
    p = Path(path)
    return os.access(p.parent, os.W_OK) and (not p.exists() or os.access(p, os.W_OK))


def reviewer_name(name: str) -> str:
    """A reviewer's name as the sources of their answers record it (``serve reviewer NAME`` from
    the labelling page, ``..., reviewer NAME`` from the command line): white space runs made one
    space, 1 to :data:`MAX_NAME` printable characters.

    :raises ValueError: for a name that is empty, too long or holds a control character.
    """
    name = " ".join(name.split())
    if not name or len(name) > MAX_NAME or not name.isprintable():
        raise ValueError(f"a reviewer name is 1 to {MAX_NAME} printable characters, got {name!r}")
    return name


_ON_THE_PAGE, _BY = "serve reviewer ", ", reviewer "   # the two forms of a source naming its reviewer


def reviewer_source(name: str, given_by: str | None = None) -> str:
    """The source recorded with the answers ``name`` (:func:`reviewer_name`'s form) gives: on the
    labelling page (``serve reviewer NAME``), or by ``given_by``, a file or the terminal, on the
    command line (``file batch.csv sha256:…, reviewer NAME``). :func:`reviewer_of` reads it back."""
    return f"{_ON_THE_PAGE}{name}" if given_by is None else f"{given_by}{_BY}{name}"


def reviewer_of(source: str) -> str | None:
    """The reviewer a label's source names (:func:`reviewer_source`), None for a source that names
    none (a file alone, ``interactive``, a simulation)."""
    if source.startswith(_ON_THE_PAGE):
        return source[len(_ON_THE_PAGE):]
    _, mark, name = source.rpartition(_BY)
    return name if mark else None


def holds_store(path: str | os.PathLike[str]) -> bool:
    """Whether a label store is at ``path``: a file with content (an empty one is what a label call
    stopped before its first write leaves: no store, and no label)."""
    p = Path(path)
    return p.exists() and p.stat().st_size > 0


def absence(path: str | os.PathLike[str]) -> str:
    """Why no store is at ``path`` (not :func:`holds_store`), in a word: ``missing`` or ``empty``."""
    return "empty" if Path(path).exists() else "missing"


def remove_store(path: str | os.PathLike[str]) -> None:
    """Delete the label store at ``path`` with its journal files (each where present)."""
    for end in _STORE_FILES:
        Path(f"{path}{end}").unlink(missing_ok=True)


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A connection that never writes the store. Where the folder can be written (a writer may be
    at work) an ordinary connection with ``query_only`` set: SQLite refuses every write, and on
    close it tidies its log files away as any reader does. Where it cannot, ``immutable=1``: no
    writer can exist there, and ``mode=ro`` cannot open a write-ahead-log database without its
    shared-memory index beside it. A read-only folder whose log still holds labels (a copy taken
    while a writer had the store open) is refused: immutable reads would miss them."""
    if writable(path):
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("PRAGMA query_only = ON")
        return con
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise ReadOnlyStoreError(f"{path} cannot be read in its read-only folder {path.parent}: {wal.name} "
                                 "still holds labels not yet merged into it (the copy was taken while the "
                                 "store was open); open it once in a writable copy, or copy it again after "
                                 "labelling ended")
    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?immutable=1", uri=True, isolation_level=None)


class LabelStore:
    """Relevance labels of audited items in one SQLite file (created when absent).

    Writes are transactions in write-ahead-log mode with ``synchronous=FULL``: when
    :meth:`record` returns, its labels are on disk, and a process killed at any moment leaves
    each call either fully recorded or not at all. The file carries a ``meta`` row
    ``format = rankcut-labels`` and its ``schema_version``; other files are refused.

    Use it as a context manager, or call :meth:`close`.

    :param path: the store's file; its folder must exist.
    :param create: create the store when ``path`` does not exist (else FileNotFoundError).
    :param readonly: open an existing store for reading only: nothing is ever written to it or
        beside it, so it also reads a store in a read-only folder (an audit shipped to be checked).
        Every write raises :class:`ReadOnlyStoreError`.
    :raises ValueError: naming the file, when it is not a rankcut label store (another SQLite
        database, or not SQLite at all) or was written by a newer schema.
    :raises FileNotFoundError: when the folder is missing, or the file with ``create=False`` or
        ``readonly=True``.
    :raises ReadOnlyStoreError: when the store is to be written (not ``readonly``) but its folder
        or file is read-only, naming it.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        _check_store_file(self.path, create and not readonly)
        if readonly:
            self._con = _connect_readonly(self.path)
        elif not writable(self.path):
            raise ReadOnlyStoreError(self._read_only_text())
        else:
            self._con = sqlite3.connect(self.path, isolation_level=None)  # transactions are explicit
        try:
            self._open()
        except BaseException:
            self._con.close()
            raise

    def _read_only_text(self) -> str:
        if writable(self.path):
            return f"{self.path} was opened read-only: it is not written"
        if os.access(self.path.parent, os.W_OK):
            return f"the label store {self.path} is read-only: it cannot be written"
        return f"the folder {self.path.parent} is read-only, so the label store {self.path} cannot be written"

    def _open(self) -> None:
        not_store = f"{self.path} is not a rankcut label store"
        try:
            with self._transaction(read=self.readonly) as con:
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if not tables and self.readonly:
                    raise ValueError(f"{not_store} (an SQLite database without tables)")
                if not tables:
                    for statement in _SCHEMA:
                        con.execute(statement)
                    con.executemany("INSERT INTO meta VALUES (?, ?)",
                                    [("format", _FORMAT), ("schema_version", str(SCHEMA_VERSION))])
                    meta = {"format": _FORMAT, "schema_version": str(SCHEMA_VERSION)}
                elif "meta" not in tables:
                    raise ValueError(f"{not_store} (an SQLite database without a meta table)")
                else:
                    meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN (?, ?)",
                                            _RESERVED_META).fetchall())
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"{not_store} (SQLite: {exc})") from None
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{not_store} (meta format is {meta.get('format')!r}, not {_FORMAT!r})")
        version = meta.get("schema_version", "")
        if not version.isdigit() or not 1 <= int(version) <= SCHEMA_VERSION:
            raise ValueError(f"{self.path}: label store schema version {version!r} is not one this rankcut "
                             f"reads (1 to {SCHEMA_VERSION}); it may come from a newer rankcut")
        if self.readonly:
            return
        # WAL cannot be switched on inside a transaction, and must not be switched on in a
        # database that is not ours, so it comes last.
        self._con.execute("PRAGMA journal_mode = WAL")
        self._con.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def _transaction(self, *, read: bool = False) -> Iterator[sqlite3.Connection]:
        if self.readonly and not read:
            raise ReadOnlyStoreError(self._read_only_text())
        self._con.execute("BEGIN" if read else "BEGIN IMMEDIATE")
        try:
            yield self._con
        except BaseException:
            self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._con.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"LabelStore({str(self.path)!r})"

    def record(self, items: Sequence[Item], labels: Sequence[Any], source: str | Sequence[str], *,
               overwrite: bool = False, meta: Mapping[str, str] | None = None,
               refusal_hint: str = "pass overwrite=True to replace it (the change is kept in the history)"
               ) -> int:
        """Record ``labels[i]`` for ``items[i]``, all in one transaction.

        Recording the label an item already has changes nothing. A different label is refused
        unless ``overwrite=True``; an overwrite is kept in :meth:`history` with the old label.

        :param items: ``(query_id, doc_id)`` pairs.
        :param labels: 0/1 (or bool) per item.
        :param source: who or what gave the labels (``"interactive"``, a file name, ``"qrels"``), or
            one such per item (labels copied from another store keep their own).
        :param meta: ``meta`` values written in the same transaction as the labels (as
            :meth:`set_meta_many`), so that a killed process leaves both or neither.
        :param refusal_hint: what the refusal of a different label tells the caller to do (the
            command line names its option).
        :returns: how many labels were written (new or changed).
        :raises ValueError: for malformed items or labels, an item given twice with different
            labels, or (unless ``overwrite``) an item whose stored label differs — naming query,
            document and both labels. Nothing of the call is recorded then.
        """
        pairs = check_items(items)
        values = [_check_label(v, f"labels[{i}]") for i, v in enumerate(labels)]
        if len(values) != len(pairs):
            raise ValueError(f"items and labels must have the same length, "
                             f"got {len(pairs)} and {len(values)}")
        one = isinstance(source, str) or not isinstance(source, Sequence)
        given: list[Any] = [source] if one else list(source)
        bad = [s for s in given if not isinstance(s, str) or not s.strip()]
        if bad:
            raise ValueError(f"source must be a non-empty string (or one per item), got {bad[0]!r}")
        sources: list[str] = given * len(pairs) if one else given
        if len(sources) != len(pairs):
            raise ValueError(f"items and sources must have the same length, "
                             f"got {len(pairs)} and {len(sources)}")
        meta_rows = _meta_rows(meta or {})
        wanted: dict[Item, tuple[int, str]] = {}
        for (q, d), label, src in zip(pairs, values, sources, strict=True):
            if wanted.setdefault((q, d), (label, src))[0] != label:
                raise ValueError(f"items: query {q!r}, document {d!r} is given twice with different labels "
                                 f"({wanted[q, d][0]} and {label})")
        now = _now()
        written = 0
        with self._transaction() as con:
            for (q, d), (label, source) in wanted.items():
                old = con.execute("SELECT label, source, recorded_at FROM labels "
                                  "WHERE query_id = ? AND doc_id = ?", (q, d)).fetchone()
                if old is None:
                    con.execute("INSERT INTO labels VALUES (?, ?, ?, ?, ?)", (q, d, label, source, now))
                elif old[0] == label:
                    continue
                elif not overwrite:
                    raise ValueError(
                        f"{self.path}: query {q!r}, document {d!r} is already labelled {old[0]} (source "
                        f"{old[1]!r}, {old[2]}); refusing label {label} from source {source!r} — "
                        f"{refusal_hint}")
                else:
                    con.execute("UPDATE labels SET label = ?, source = ?, recorded_at = ? "
                                "WHERE query_id = ? AND doc_id = ?", (label, source, now, q, d))
                con.execute("INSERT INTO events (query_id, doc_id, old_label, new_label, source, "
                            "recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
                            (q, d, None if old is None else old[0], label, source, now))
                written += 1
            _write_meta(con, meta_rows)
        return written

    def undo(self, item: Item, label: int, source: str) -> None:
        """Remove the first label ``label`` that ``source`` gave ``item`` (an answer taken back).

        The removal is kept in :meth:`history` (``new_label`` None); the item is unlabelled again.
        Only a first label that nothing changed since can be undone: an overwrite keeps its history.

        :raises ValueError: naming the item, when its label is not that first label any more.
        """
        ((q, d),) = check_items([item])
        label = _check_label(label, "label")
        with self._transaction() as con:
            row = con.execute("SELECT label, source FROM labels WHERE query_id = ? AND doc_id = ?",
                              (q, d)).fetchone()
            last = con.execute("SELECT old_label, new_label, source FROM events WHERE query_id = ? AND "
                               "doc_id = ? ORDER BY seq DESC LIMIT 1", (q, d)).fetchone()
            if row is None or tuple(row) != (label, source) or tuple(last) != (None, label, source):
                raise ValueError(f"{self.path}: query {q!r}, document {d!r} no longer holds the first label "
                                 f"{label} from {source!r}; nothing was undone")
            con.execute("DELETE FROM labels WHERE query_id = ? AND doc_id = ?", (q, d))
            con.execute("INSERT INTO events (query_id, doc_id, old_label, new_label, source, recorded_at) "
                        "VALUES (?, ?, ?, NULL, ?, ?)", (q, d, label, source, _now()))

    def get(self, items: Iterable[Item]) -> dict[Item, int]:
        """``{item: label}`` for the labelled ones among ``items``."""
        return {item: int(v) for item, v in self._column("label", items).items()}

    def sources_of(self, items: Iterable[Item]) -> dict[Item, str]:
        """The source of each of ``items`` that has a label (who gave the label it holds now)."""
        return {item: str(v) for item, v in self._column("source", items).items()}

    def _column(self, column: Literal["label", "source"], items: Iterable[Item]) -> dict[Item, Any]:
        asked = unique_items(check_items(items))
        if len(asked) > self.count():   # more items asked than labelled (a whole pool): one scan of the store
            rows = self._con.execute(f"SELECT query_id, doc_id, {column} FROM labels")
            held = {(q, d): v for q, d, v in rows}
            return {item: held[item] for item in asked if item in held}
        out: dict[Item, Any] = {}
        for item in asked:
            row = self._con.execute(f"SELECT {column} FROM labels WHERE query_id = ? AND doc_id = ?",
                                    item).fetchone()
            if row is not None:
                out[item] = row[0]
        return out

    def missing(self, items: Iterable[Item]) -> list[Item]:
        """The items without a label, in the given order, each once."""
        labelled = self.get(items := unique_items(check_items(items)))
        return [item for item in items if item not in labelled]

    def count(self) -> int:
        """How many items have a label."""
        return int(self._con.execute("SELECT COUNT(*) FROM labels").fetchone()[0])

    def items(self) -> list[Row]:
        """Every label as ``(query_id, doc_id, label)``, sorted by query then document id.

        Ready for :func:`write_label_file`.
        """
        return [(q, d, int(y)) for q, d, y in
                self._con.execute("SELECT query_id, doc_id, label FROM labels ORDER BY query_id, doc_id")]

    def logged(self) -> dict[Item, int]:
        """The labels the history gives, every write applied in order: :meth:`items` as a dict,
        unless the store was edited other than through :meth:`record` and :meth:`undo`."""
        out: dict[Item, int] = {}
        for q, d, y in self._con.execute("SELECT query_id, doc_id, new_label FROM events ORDER BY seq"):
            if y is None:
                out.pop((q, d), None)
            else:
                out[q, d] = int(y)
        return out

    def changes_since(self, mark: StoreMark | None) -> LabelChanges:
        """The labels written since ``mark`` (what an earlier call returned), read in one snapshot.

        Every write of a label (a first label, an overwrite, an undo) is one row of the history, so
        applying them in order to the labels read up to ``mark`` gives the store's labels now. When
        ``mark`` is None, or its last event is not in this store any more (the store was removed and
        written afresh), every current label is returned with ``full`` set.
        """
        with self._transaction(read=True) as con:
            last = con.execute("SELECT seq, recorded_at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            now = StoreMark(0, "") if last is None else StoreMark(int(last[0]), str(last[1]))
            if mark is not None and mark.seq > 0:
                row = con.execute("SELECT recorded_at FROM events WHERE seq = ?", (mark.seq,)).fetchone()
                if row is None or row[0] != mark.recorded_at:
                    mark = None
            # (a mark of an empty store stays: every event since is new)
            if mark is None:
                rows = con.execute("SELECT query_id, doc_id, label FROM labels").fetchall()
                return LabelChanges(now, True, [(q, d, int(y)) for q, d, y in rows])
            rows = con.execute("SELECT query_id, doc_id, new_label FROM events WHERE seq > ? ORDER BY seq",
                               (mark.seq,)).fetchall()
        return LabelChanges(now, False, [(q, d, None if y is None else int(y)) for q, d, y in rows])

    def history(self) -> list[LabelEvent]:
        """Every label ever written, oldest first, including overwritten ones."""
        rows = self._con.execute("SELECT query_id, doc_id, old_label, new_label, source, recorded_at "
                                 "FROM events ORDER BY seq")
        return [LabelEvent(*row) for row in rows]

    def sources(self) -> list[str]:
        """The distinct sources of the current labels, sorted."""
        return [str(r[0]) for r in self._con.execute("SELECT DISTINCT source FROM labels ORDER BY source")]

    def source_counts(self) -> dict[str, int]:
        """How many current labels each source gave, the source that gave its first earliest first (a
        review's prior knowledge, then its files in the order given), by the order labels were written."""
        first = dict(self._con.execute("SELECT source, MIN(seq) FROM events GROUP BY source").fetchall())
        counts = self._con.execute("SELECT source, COUNT(*) FROM labels GROUP BY source").fetchall()
        return {str(source): int(n) for source, n in sorted(counts, key=lambda r: (first.get(r[0], 0), r[0]))}

    def set_meta(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` (replacing an earlier value) in the ``meta`` table.

        :raises ValueError: for an empty key, a non-string value, or the reserved keys
            ``format`` and ``schema_version``.
        """
        self.set_meta_many({key: value})

    def set_meta_many(self, values: Mapping[str, str]) -> None:
        """Store several ``meta`` values in one transaction: a process killed at any moment
        leaves all of them written or none.

        :raises ValueError: as :meth:`set_meta`, for any of them (nothing is written then).
        """
        rows = _meta_rows(values)
        with self._transaction() as con:
            _write_meta(con, rows)

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """The value stored under ``key``, or ``default``."""
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else str(row[0])


def _meta_rows(values: Mapping[str, str]) -> list[tuple[str, str]]:
    if not isinstance(values, Mapping):
        raise ValueError(f"meta values must be a mapping of keys to strings, got {values!r}")
    rows = []
    for key, value in values.items():
        if not isinstance(key, str) or not key.strip():
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        if key in _RESERVED_META:
            raise ValueError(f"key {key!r} is reserved for the label store itself")
        if not isinstance(value, str):
            raise ValueError(f"value for key {key!r} must be a string, got {value!r}")
        rows.append((key, value))
    return rows


def _write_meta(con: sqlite3.Connection, rows: Sequence[tuple[str, str]]) -> None:
    con.executemany("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    rows)


def _check_store_file(path: Path, create: bool) -> None:
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a rankcut label store")
    if not path.exists():
        if not path.parent.is_dir():
            raise FileNotFoundError(f"cannot open label store {path}: folder {path.parent} does not exist")
        if not create:
            raise FileNotFoundError(f"label store {path} does not exist")
        return
    with open(path, "rb") as f:
        head = f.read(len(_SQLITE_MAGIC))
    if head and head != _SQLITE_MAGIC:
        raise ValueError(f"{path} is not a rankcut label store (not an SQLite database)")


# --- label files -------------------------------------------------------------------------------------

def _kind(name: str, kind: str | None) -> str:
    if kind is not None:
        if kind not in LABEL_FILE_KINDS:
            raise ValueError(f"kind must be one of {LABEL_FILE_KINDS}, got {kind!r}")
        return kind
    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    found = suffixes[-1].lstrip(".") if suffixes else ""
    if found not in LABEL_FILE_KINDS:
        raise ValueError(f"{name}: cannot tell the label file format from the name; use a .csv, .tsv or "
                         f".jsonl name (.gz allowed; in Python, or pass kind=)")
    return found


def _parse_label(value: Any, where: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip().lower() in _ANSWERS:
        return _ANSWERS[value.strip().lower()]
    graded = str(value).strip().isdecimal() and int(str(value).strip()) > 1
    raise ValueError(f"{where}: label must be {_LABEL_FORMS}, got {value!r}"
                     + ("; for graded judgments, write 1 for the grades you count as relevant, or let "
                        "rankcut audit label --oracle qrels --qrels FILE --threshold GRADE read them"
                        if graded else ""))


def _file_id(value: Any, what: str, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: {what} must be a non-empty string, got {value!r}")
    return value.strip()


def _roles(keys: Iterable[str], where: str, columns: str) -> dict[str, str]:
    """``{role: key}`` for the keys (header cells or JSON keys) that name a role."""
    found: dict[str, str] = {}
    for key in keys:
        role = _ALIASES.get(key.strip().lower())
        if role is None:
            continue
        if role in found:
            raise ValueError(f"{where}: {columns}s {found[role]!r} and {key!r} both name the {role}")
        found[role] = key
    missing = [r for r in _ROLES if r not in found]
    if missing:
        whose = "the header line names" if columns == "column" else "the object has"
        raise ValueError(f"{where}: {whose} no {' / '.join(missing)} {columns} (expected query_id, doc_id "
                         f"and label; also accepted: query/qid, doc/docno, relevant); got {list(keys)}")
    return found


class _Collector:
    """Rows of one file, each item once: a repeat with the same label is dropped, another label
    is an error naming both places (``where``, and ``place``: "on line 3" / "in rows[2]")."""

    def __init__(self) -> None:
        self.rows: dict[Item, tuple[int, str]] = {}

    def add(self, q: str, d: str, label: int, where: str, place: str) -> None:
        prev = self.rows.setdefault((q, d), (label, place))
        if prev[0] != label:
            raise ValueError(f"{where}: query {q!r}, document {d!r} is labelled {label} here but "
                             f"{prev[0]} {prev[1]}")

    def result(self) -> list[Row]:
        return [(q, d, label) for (q, d), (label, _) in self.rows.items()]


def _read_delimited(lines: Iterator[str], label: str, delimiter: str) -> list[Row]:
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    header: dict[str, int] | None = None
    width = 0
    out = _Collector()
    end = 0
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ValueError(f"{label}, line {start}: {exc}") from None
        end = reader.line_num
        where = f"{label}, line {start}"
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            try:
                roles = _roles(row, where, "column")
            except ValueError as err:   # a semicolon-separated file (a European spreadsheet), say
                from rankcut.data.screening import separator_hint  # (numpy: imported where needed)

                raise ValueError(f"{err}{separator_hint(row, delimiter)}") from None
            header = {role: row.index(key) for role, key in roles.items()}
            width = len(row)
            continue
        if len(row) != width:
            raise ValueError(f"{where}: expected {width} columns as in the header, got {len(row)}")
        if not row[header["label"]].strip():
            continue  # a blank label cell: the item is not labelled yet (a partly filled to_label.csv)
        q = _file_id(row[header["query_id"]], "query id", where)
        d = _file_id(row[header["doc_id"]], "doc id", where)
        out.add(q, d, _parse_label(row[header["label"]], where), where, f"on line {start}")
    if header is None:
        raise ValueError(f"{label}: empty label file; a header line query_id,doc_id,label is required")
    return out.result()


def _read_jsonl(lines: Iterator[str], label: str) -> list[Row]:
    out = _Collector()
    for where, lineno, obj in json_objects(lines, label):
        roles = _roles(obj, where, "key")
        value = obj[roles["label"]]
        if value is None or (isinstance(value, str) and not value.strip()):
            continue  # a null or blank label: not labelled yet
        q = _file_id(obj[roles["query_id"]], "query id", where)
        d = _file_id(obj[roles["doc_id"]], "doc id", where)
        out.add(q, d, _parse_label(value, where), where, f"on line {lineno}")
    return out.result()


def read_label_file(source: str | os.PathLike[str] | IO[str], *, kind: str | None = None,
                    name: str | None = None) -> list[Row]:
    """Read ``(query_id, doc_id, label)`` rows from a CSV, TSV or JSON-lines label file.

    * CSV / TSV: a header line is required; it names the columns ``query_id`` (or ``query``,
      ``qid``), ``doc_id`` (or ``doc``, ``docno``) and ``label`` (or ``relevant``), in any
      order and case; other columns are ignored. Cells are stripped of surrounding spaces.
    * JSON lines: one object a line with the same keys; ids may be strings or integers.

    Labels are ``0/1``, ``yes/no``, ``true/false`` or ``y/n`` (any case; JSON booleans too); a
    row whose label is blank (an empty cell, JSON ``null`` or ``""``) is skipped — its item stays
    unlabelled, as in a partly filled list to label. Blank lines and a UTF-8 byte-order mark are
    ignored. An item given twice with the same label
    is returned once, in the order of its first line.

    :param source: path (``.gz`` allowed) or open text file.
    :param kind: ``"csv"``, ``"tsv"`` or ``"jsonl"``; by default taken from the file name.
    :param name: how to call the source in error messages (and its format, when ``kind`` is None).
    :raises ValueError: naming file and line, for a missing header or column, a row with another
        number of cells than the header, an empty id, a label that is neither blank nor one of the
        forms above, or
        an item labelled twice with different labels (both lines named).
    """
    with open_text(source, name, newline="") as (label, f):
        found = _kind(label, kind)
        if found == "jsonl":
            return _read_jsonl(iter(f), label)
        return _read_delimited(iter(f), label, _DELIMITERS[found])


def write_label_file(path: str | os.PathLike[str], rows: Iterable[Sequence[Any]], *,
                     kind: str | None = None) -> None:
    """Write ``(query_id, doc_id, label)`` rows as CSV, TSV or JSON lines, atomically.

    CSV/TSV get the header ``query_id,doc_id,label``; JSON lines get those keys. Labels are
    written as 0/1, so :func:`read_label_file` returns the same rows (an exact repeat of a row is
    written once). The text goes to a temporary file in the same folder that is moved over
    ``path``, so a failure never leaves half a file; a ``.gz`` name is compressed.

    :param kind: ``"csv"``, ``"tsv"`` or ``"jsonl"``; by default taken from the file name.
    :raises ValueError: for a row that is not ``(query_id, doc_id, 0/1)``, an id that is empty or
        has surrounding whitespace, or an item given twice with different labels.
    :raises FileNotFoundError: when the folder of ``path`` does not exist.
    """
    out = Path(path)
    found = _kind(str(out), kind)
    collected = _Collector()
    for i, row in enumerate(rows):
        if isinstance(row, str | bytes) or not isinstance(row, Sequence) or len(row) != 3:
            raise ValueError(f"rows[{i}] must be (query_id, doc_id, label), got {row!r}")
        q = _check_id(row[0], f"rows[{i}] query id")
        d = _check_id(row[1], f"rows[{i}] doc id")
        collected.add(q, d, _check_label(row[2], f"rows[{i}] label"), f"rows[{i}]", f"in rows[{i}]")
    buf = io.StringIO(newline="")
    if found == "jsonl":
        for q, d, y in collected.result():
            buf.write(json.dumps({"query_id": q, "doc_id": d, "label": y}, ensure_ascii=False) + "\n")
    else:
        writer = csv.writer(buf, delimiter=_DELIMITERS[found])  # \r\n ends rows, so a \r in an id is quoted
        writer.writerow(_ROLES)
        writer.writerows(collected.result())
    data = buf.getvalue().encode("utf-8")
    if out.suffix.lower() == ".gz":
        data = gzip.compress(data, mtime=0)
    write_atomic(out, data)


# what shows that labels were seen (certify opened them, another audit took them): a label recorded
# before one of these changed may have been seen and is never undone
SEEN_META = ("opened_at", "opened_labels_hash", "opened_prefix", "seen_at")
