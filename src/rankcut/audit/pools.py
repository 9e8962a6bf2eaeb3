"""Included and excluded pools of a cut run, exact and never materialised (§2.2–2.3, §4 of the audit paper).

A cut run keeps, per query ``q``, the first ``k_q`` documents of ``q``'s full ranked list (depth
``L_q``). Every (query, document) pair is an item of the finite corpus of §2.2 and the cut is the
candidate generator ``g``:

* included pool ``I = {g = 1}``: the kept items, ``N1 = Σ_q k_q``; the review burden (§2.1);
* excluded pool ``E = {g = 0}``: ranks ``k_q+1..L_q`` of every list and, with a :class:`Corpus`
  of ``C`` documents, every document that ``q``'s list does not hold (``C − L_q`` more per
  query); ``N0 = |E|``. Missed relevant items can only lie here (Proposition 3), which is why the
  audit samples it (Theorems 7 and 8).

Indexing. A query's items lie on one line of positions: position ``p < L_q`` is the document at
rank ``p + 1`` of its list, position ``L_q + u`` the ``u``-th (from 0) document of the corpus,
in corpus order, that the list does not hold. ``I_q`` is positions ``[0, k_q)``, ``E_q`` positions
``[k_q, L_q + U_q)`` (``U_q = C − L_q`` with a corpus, 0 without). A pool's global index counts
queries in order, then positions, so index ``i`` of ``E`` is found from the cumulative sizes
``N0_1 + … + N0_q`` by one binary search: a bijection ``[0, N0) → E`` that needs nothing beyond
the lists themselves and ``O(Q)`` sizes, whatever ``N0`` is (``10^11`` items included). With an
id-list corpus, the ``u``-th unretrieved document of ``q`` is found by a second binary search in
the sorted corpus positions ``p_1 < … < p_L`` of ``q``'s listed documents: it sits at corpus
position ``u + #{t : p_t − (t − 1) ≤ u}``, so no per-query complement is ever built.

Documents never retrieved are named by the corpus: with :meth:`Corpus.ids` by their own id; with
:meth:`Corpus.size` as ``"#u"``, the ``u``-th (from 0) document, in the user's own fixed order of
the collection, among those the query's list does not hold.

A nested family of cuts ``k^(1) ≤ … ≤ k^(M)`` per query (:func:`nested_family`,
:func:`offset_family`, :func:`depth_family`) gives the prefix generators of §4.7 with
``E_1 ⊇ … ⊇ E_M``; fix it before the audit labels are seen (Assumption 1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.audit.options import spelled
from rankcut.data.io import open_text
from rankcut.data.lists import Posting, RankedLists, order_postings

__all__ = [
    "Corpus",
    "IdColumn",
    "Item",
    "Pools",
    "check_nested",
    "cuts_from_run",
    "depth_family",
    "nested_family",
    "offset_family",
]

Item = tuple[str, str]  # (query_id, doc_id)

# Prefix of the names of unretrieved documents of a corpus known only by its size.
NUMBERED = "#"


def _count(x: Any, name: str, minimum: int = 0) -> int:
    """One integer ``>= minimum``; bools and floats are refused."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    if x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {int(x)}")
    return int(x)


def _int_array(x: Any, name: str, ndim: int) -> NDArray[np.int64]:
    """An integer array of ``ndim`` dimensions (floats and bools refused)."""
    try:
        arr = np.asarray(x)
    except ValueError:  # ragged nesting
        raise ValueError(f"{name} must be a {ndim}-D array of integers") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array of integers, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _member(m: int, names: Sequence[str] | None) -> str:
    return f"member {m + 1}" + ("" if names is None else f" ({names[m]!r})")


# ---------------------------------------------------------------------------------------------
# the corpus


@dataclass(frozen=True, eq=False)
class Corpus:
    """The collection the lists were retrieved from, so that the excluded pool can hold the
    documents a query never retrieved (§2.2: the finite corpus ``X_N``).

    Build it with :meth:`size` (only the number ``C`` of documents is known; an unretrieved
    document is named ``"#u"``, see the module docstring) or :meth:`ids` (the ids, in a fixed
    order). Per query the unretrieved rest is the corpus minus the documents its list holds.

    :param n_documents: ``C ≥ 1``.
    :param doc_ids: the ids in corpus order, distinct and non-empty, or None for a size-only corpus.
    :param source: where the ids came from (a file name), for error messages.
    """

    n_documents: int
    doc_ids: tuple[str, ...] | None = None
    source: str | None = None
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        n = _count(self.n_documents, "n_documents", 1)
        index: dict[str, int] = {}
        if self.doc_ids is not None:
            if isinstance(self.doc_ids, str) or not isinstance(self.doc_ids, Sequence):
                raise ValueError(f"doc_ids must be a sequence of document ids, got {self.doc_ids!r}")
            object.__setattr__(self, "doc_ids", tuple(self.doc_ids))
            if len(self.doc_ids) != n:
                raise ValueError(f"n_documents={n} but {len(self.doc_ids)} document ids were given")
            bad = next((i for i, d in enumerate(self.doc_ids) if not isinstance(d, str) or not d), None)
            if bad is not None:
                raise ValueError(f"{self._where(bad)}: a document id must be a non-empty string, "
                                 f"got {self.doc_ids[bad]!r}")
            index = dict(zip(self.doc_ids, range(n), strict=True))
            if len(index) != n:
                first: dict[str, int] = {}
                for i, d in enumerate(self.doc_ids):
                    j = first.setdefault(d, i)
                    if j != i:
                        raise ValueError(f"{self._where(i)}: document {d!r} is listed twice in the "
                                         f"corpus (also {self._where(j, short=True)})")
        object.__setattr__(self, "_index", index)

    def _where(self, i: int, *, short: bool = False) -> str:
        if self.source is None:
            return f"corpus entry {i}"
        return f"line {i + 1}" if short else f"{self.source}, line {i + 1}"

    @classmethod
    def size(cls, n: int) -> Corpus:
        """A corpus of ``n`` documents known only by their number."""
        return cls(_count(n, "corpus size", 1))

    @classmethod
    def ids(cls, source: Sequence[str] | NDArray[np.str_] | str | os.PathLike[str]) -> Corpus:
        """A corpus from its document ids: a sequence, or a UTF-8 file (``.gz`` allowed; a
        byte-order mark is ignored) with one id a line. Blank lines at the end of a file are
        ignored; any other line must hold exactly one id.

        :raises ValueError: naming the file and line of a blank or malformed line or a repeated id.
        """
        if isinstance(source, str | os.PathLike):
            path = Path(source)
            with open_text(path) as (_, f):
                lines = f.read().splitlines()
            while lines and not lines[-1].strip():
                lines.pop()
            ids = []
            for lineno, line in enumerate(lines, 1):
                parts = line.split()
                if len(parts) != 1:
                    raise ValueError(f"{path}, line {lineno}: expected one document id, got {line!r}")
                ids.append(parts[0])
            if not ids:
                raise ValueError(f"{path}: the corpus file lists no document id")
            return cls(len(ids), tuple(ids), str(path))
        if isinstance(source, np.ndarray):
            source = source.tolist()  # plain str, not numpy str_
        if not isinstance(source, Sequence):
            raise ValueError(f"corpus ids must be a sequence of ids or a file path, got {source!r}")
        if not source:
            raise ValueError("the corpus id list is empty")
        return cls(len(source), tuple(source))

    @property
    def kind(self) -> str:
        """``"ids"`` or ``"size"``."""
        return "size" if self.doc_ids is None else "ids"

    def __len__(self) -> int:
        return self.n_documents

    def position(self, doc: str) -> int | None:
        """Position of ``doc`` in corpus order, or None when it is not in an id-list corpus (or
        the corpus is size-only)."""
        return self._index.get(doc)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "documents": self.n_documents}


# ---------------------------------------------------------------------------------------------
# the lists, shared by every cut of them


class IdColumn:
    """Many ids as one column: their UTF-8 bytes end to end and where each starts (the layout of an
    Arrow string column), so that 10^7 ids are two buffers, not 10^7 Python objects.
    ``column[index]``, for an integer array or a slice, decodes the ids there into an object array.

    :param data: the ids' UTF-8 bytes, one after another.
    :param offsets: where id ``i`` starts and ends: ``data[offsets[i]:offsets[i + 1]]``, ``[n + 1]``.
    """

    __slots__ = ("data", "offsets")

    def __init__(self, data: bytes, offsets: NDArray[np.int64]) -> None:
        self.data = data
        self.offsets = offsets

    @classmethod
    def encode(cls, ids: Sequence[str], chunk: int = 1 << 20) -> IdColumn:
        """The column of ``ids`` (ASCII ids in one join; others encoded ``chunk`` ids at a time, never
        a bytes object per id for all of them)."""
        text = "".join(ids)
        if text.isascii():  # a byte per character: the sizes are the lengths
            sizes_all = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
            offsets = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(sizes_all, out=offsets[1:])
            return cls(text.encode("ascii"), offsets)
        del text
        parts, sizes = [], []
        for start in range(0, len(ids), chunk):
            coded = [i.encode("utf-8") for i in ids[start:start + chunk]]
            sizes.append(np.fromiter(map(len, coded), dtype=np.int64, count=len(coded)))
            parts.append(b"".join(coded))
        ends = np.cumsum(np.concatenate([np.zeros(1, dtype=np.int64), *sizes]))
        return cls(b"".join(parts), ends.astype(np.int64))

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def size(self) -> int:
        return len(self)

    def __getitem__(self, index: slice | NDArray[np.int64]) -> NDArray[np.object_]:
        if isinstance(index, slice) and index.step in (None, 1):  # one run of ids: one decode
            start, stop, _ = index.indices(len(self))
            stop = max(start, stop)
            first = int(self.offsets[start])
            text = self.data[first:int(self.offsets[stop])].decode("utf-8")
            if text.isascii():  # a character per byte: cut the text where the bytes are cut
                ends = (self.offsets[start:stop + 1] - first).tolist()
                out = np.empty(stop - start, dtype=object)
                out[:] = [text[a:b] for a, b in zip(ends[:-1], ends[1:], strict=True)]
                return out
        rows = (np.arange(*index.indices(len(self)), dtype=np.int64) if isinstance(index, slice)
                else np.asarray(index, dtype=np.int64))
        out = np.empty(rows.size, dtype=object)
        data = self.data
        out[:] = [data[a:b].decode("utf-8") for a, b in
                  zip(self.offsets[rows].tolist(), self.offsets[rows + 1].tolist(), strict=True)]
        return out



@dataclass(frozen=True, eq=False)
class _Layout:
    """Full lists of every query, flattened, and how the corpus extends them (no cuts)."""

    qids: tuple[str, ...]
    lengths: NDArray[np.int64]  # L_q
    starts: NDArray[np.int64]  # where query q's documents start in ``flat``
    flat: NDArray[np.object_] | IdColumn  # every listed document, query after query, in rank order
    corpus: Corpus | None
    unlisted: NDArray[np.int64]  # U_q = C - L_q (0 without a corpus)
    # id corpus only: per listed document, grouped by query and sorted by corpus position p_t,
    # q·(C+1) + p_t − t (the number of unretrieved documents before p_t; sorted overall)
    gaps: NDArray[np.int64] | None
    # caches filled on first use: query id -> row; row -> {doc: list position}
    _rows: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _positions: dict[int, dict[str, int]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def build(cls, qids: Sequence[str], doc_ids: Sequence[Sequence[str]], corpus: Corpus | None) -> _Layout:
        if isinstance(qids, str) or not isinstance(qids, Sequence):
            raise ValueError(f"qids must be a sequence of query ids, got {qids!r}")
        q_ids = tuple(qids)
        if not q_ids:
            raise ValueError("no query: qids is empty")
        for q in q_ids:
            if not isinstance(q, str) or not q:
                raise ValueError(f"a query id must be a non-empty string, got {q!r}")
        if len(set(q_ids)) != len(q_ids):
            dup = next(q for i, q in enumerate(q_ids) if q in q_ids[:i])
            raise ValueError(f"query {dup!r} appears more than once in qids")
        if isinstance(doc_ids, str) or not isinstance(doc_ids, Sequence) or len(doc_ids) != len(q_ids):
            raise ValueError(f"doc_ids must hold one list of document ids per query ({len(q_ids)})")
        if corpus is not None and not isinstance(corpus, Corpus):
            raise ValueError(f"corpus must be a Corpus (Corpus.size or Corpus.ids) or None, got {corpus!r}")
        lists = []
        for q, docs in zip(q_ids, doc_ids, strict=True):
            if isinstance(docs, str) or not isinstance(docs, Sequence | np.ndarray):
                raise ValueError(f"query {q!r}: its documents must be a sequence of ids, got {docs!r}")
            docs = tuple(docs.tolist() if isinstance(docs, np.ndarray) else docs)
            for d in docs:
                if not isinstance(d, str) or not d:
                    raise ValueError(f"query {q!r}: a document id must be a non-empty string, got {d!r}")
            if len(set(docs)) != len(docs):
                first: dict[str, int] = {}
                for r, d in enumerate(docs, 1):
                    s = first.setdefault(d, r)
                    if s != r:
                        raise ValueError(f"query {q!r}: document {d!r} is listed twice (ranks {s} and {r})")
            lists.append(docs)
        lengths = np.array([len(d) for d in lists], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        flat = np.empty(int(lengths.sum()), dtype=object)
        flat[:] = [d for docs in lists for d in docs]
        unlisted = np.zeros(len(q_ids), dtype=np.int64)
        gaps = None
        if corpus is not None:
            c = corpus.n_documents
            too_long = np.flatnonzero(lengths > c)
            if too_long.size:
                i = int(too_long[0])
                raise ValueError(f"the corpus holds {c} documents but the list of query {q_ids[i]!r} "
                                 f"holds {lengths[i]}: the corpus size must be at least every list's depth")
            unlisted = c - lengths
            if corpus.doc_ids is None:
                numbered = next(((q, d) for q, docs in zip(q_ids, lists, strict=True) for d in docs
                                 if d.startswith(NUMBERED)), None)
                if numbered is not None:
                    raise ValueError(
                        f"query {numbered[0]!r} lists document {numbered[1]!r}, which reads like the "
                        f"name of an unretrieved document of a size-only corpus ({NUMBERED}u); use "
                        "Corpus.ids so that every document has its own id"
                    )
            else:
                gaps = cls._gaps(q_ids, lists, lengths, starts, flat, corpus)
        return cls(q_ids, lengths, starts, flat, corpus, unlisted, gaps)

    @staticmethod
    def _gaps(q_ids: tuple[str, ...], lists: list[tuple[str, ...]], lengths: NDArray[np.int64],
              starts: NDArray[np.int64], flat: NDArray[np.object_], corpus: Corpus) -> NDArray[np.int64]:
        pos = np.fromiter((corpus._index.get(d, -1) for d in flat), dtype=np.int64, count=flat.size)
        missing = np.flatnonzero(pos < 0)
        if missing.size:
            t = int(missing[0])
            row = int(np.searchsorted(starts, t, side="right")) - 1
            while lengths[row] == 0:  # an empty list starts where the next one does
                row -= 1
            where = f" ({corpus.source})" if corpus.source else ""
            raise ValueError(f"query {q_ids[row]!r} lists document {flat[t]!r} (rank {t - starts[row] + 1}), "
                             f"which is not in the corpus id list{where}")
        row_of = np.repeat(np.arange(len(q_ids), dtype=np.int64), lengths)
        keys = np.sort(row_of * (corpus.n_documents + 1) + pos)
        return keys - (np.arange(flat.size, dtype=np.int64) - starts[row_of])

    # ----------------------------------------------------------------- cuts and items
    def check_cuts(self, cuts: Any) -> NDArray[np.int64]:
        k = _int_array(cuts, "cuts", 1)
        if k.shape != (len(self.qids),):
            raise ValueError(f"cuts must hold one cut per query ({len(self.qids)}), got {k.size}")
        bad = np.flatnonzero((k < 0) | (k > self.lengths))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"cuts: cut {int(k[i])} for query {self.qids[i]!r} is outside "
                             f"[0, {int(self.lengths[i])}] (its list depth)")
        k.setflags(write=False)
        return k

    def items(self, rows: NDArray[np.int64], pos: NDArray[np.int64]) -> list[Item]:
        """The items at positions ``pos`` of queries ``rows`` (see the module docstring)."""
        listed = pos < self.lengths[rows]
        docs = np.empty(rows.size, dtype=object)
        docs[listed] = self.flat[self.starts[rows[listed]] + pos[listed]]
        out = ~listed
        if out.any():
            r = rows[out]
            u = pos[out] - self.lengths[r]
            assert self.corpus is not None  # positions beyond a list exist only with a corpus
            if self.corpus.doc_ids is None:
                docs[out] = [f"{NUMBERED}{v}" for v in u.tolist()]
            else:
                assert self.gaps is not None
                c = self.corpus.n_documents
                before = np.searchsorted(self.gaps, r * (c + 1) + u, side="right") - self.starts[r]
                ids = self.corpus.doc_ids
                docs[out] = [ids[j] for j in (u + before).tolist()]
        return [(self.qids[q], d) for q, d in zip(rows.tolist(), docs.tolist(), strict=True)]

    def row(self, qid: Any) -> int:
        if not self._rows:
            self._rows.update((q, i) for i, q in enumerate(self.qids))
        i = self._rows.get(qid)
        if i is None:
            raise ValueError(f"query {qid!r} is not in the pools")
        return i

    def position(self, row: int, doc: Any) -> int:
        """Position of ``doc`` on query ``row``'s line of items (ValueError if it is none)."""
        known = self._positions.get(row)
        if known is None:
            s, n = int(self.starts[row]), int(self.lengths[row])
            known = self._positions[row] = {d: p for p, d in enumerate(self.flat[s:s + n].tolist())}
        p = known.get(doc)
        if p is not None:
            return p
        q, c = self.qids[row], self.corpus
        if c is None:
            raise ValueError(f"document {doc!r} is not in the list of query {q!r} (and no corpus was given)")
        if c.doc_ids is None:
            u = doc[len(NUMBERED):] if isinstance(doc, str) and doc.startswith(NUMBERED) else ""
            if not (u.isascii() and u.isdigit() and str(int(u)) == u) or int(u) >= self.unlisted[row]:
                raise ValueError(
                    f"document {doc!r} is neither in the list of query {q!r} nor one of its "
                    f"{int(self.unlisted[row])} unretrieved documents {NUMBERED}0..{NUMBERED}"
                    f"{int(self.unlisted[row]) - 1}"
                )
            return int(self.lengths[row]) + int(u)
        if c.position(doc) is None:
            raise ValueError(f"document {doc!r} of query {q!r} is neither in its list nor in the corpus")
        return int(self.lengths[row])  # some unretrieved position: beyond every cut

    def same_as(self, other: _Layout) -> bool:
        if self is other:
            return True
        same_corpus = (self.corpus is other.corpus) or (
            self.corpus is not None and other.corpus is not None
            and self.corpus.n_documents == other.corpus.n_documents
            and self.corpus.doc_ids == other.corpus.doc_ids)
        return (self.qids == other.qids and np.array_equal(self.lengths, other.lengths)
                and bool(np.all(self.flat[:] == other.flat[:])) and same_corpus)


def _locate(sizes: NDArray[np.int64], idx: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Global indices ``idx`` of a union of per-query segments of ``sizes`` → (query row, offset)."""
    ends = np.cumsum(sizes)
    rows = np.searchsorted(ends, idx, side="right").astype(np.int64)
    return rows, idx - (ends[rows] - sizes[rows])


def _check_bands(bands: Any) -> NDArray[np.int64]:
    b = _int_array(bands, "bands", 1)
    if b.size == 0 or b[0] != 0:
        raise ValueError("bands must be offsets below the cut starting at 0 (e.g. [0, 10, 100]: ranks "
                         f"k+1..k+10, k+11..k+100, and the rest), got {np.asarray(bands).tolist()}")
    steps = np.flatnonzero(np.diff(b) <= 0)
    if steps.size:
        i = int(steps[0])
        raise ValueError(f"{spelled('bands')} must be strictly increasing, got {int(b[i])} before "
                         f"{int(b[i + 1])}")
    return b


# ---------------------------------------------------------------------------------------------
# pools


class Pools:
    """Included and excluded pools of one cut of ranked lists (§2.2–2.3 of the audit paper).

    :param qids: query ids, ``[Q]``, distinct.
    :param doc_ids: per query, the full ranked list of document ids (distinct within a query; a
        list may be empty).
    :param cuts: ``k_q``, documents kept per query, ``[Q]`` integers in ``[0, L_q]``.
    :param corpus: optional :class:`Corpus`; its documents a query did not retrieve join that
        query's excluded pool.
    :raises ValueError: naming the query (and document) for repeated query or document ids, a cut
        outside ``[0, L_q]``, a corpus smaller than a list, or a listed document that an id-list
        corpus does not hold.

    Sizes are exact Python integers: ``n1 = N1 = Σ k_q``, ``n0 = N0 = Σ (L_q − k_q + U_q)`` with
    ``U_q = C − L_q`` with a corpus and 0 without; ``burden = N1`` (§2.2, ``B_N(g) = N1/N``).
    """

    __slots__ = ("_layout", "_cuts")

    def __init__(self, qids: Sequence[str], doc_ids: Sequence[Sequence[str]], cuts: ArrayLike,
                 corpus: Corpus | None = None) -> None:
        self._layout = _Layout.build(qids, doc_ids, corpus)
        self._cuts = self._layout.check_cuts(cuts)

    @classmethod
    def from_lists(cls, full: RankedLists, cuts: ArrayLike, corpus: Corpus | None = None) -> Pools:
        """Pools of ``full`` (the uncut lists, in their canonical order) cut at ``cuts``."""
        docs = [tuple(full.doc_ids[i, :n].tolist()) for i, n in enumerate(full.lengths.tolist())]
        return cls(full.qids, docs, cuts, corpus)

    @classmethod
    def from_columns(cls, qids: Sequence[str], lengths: NDArray[np.int64], docs: IdColumn, cuts: ArrayLike,
                     corpus: Corpus | None = None, gaps: NDArray[np.int64] | None = None) -> Pools:
        """Pools from the columns of pools built before (:meth:`columns`: the audit folder's snapshot,
        :mod:`rankcut.audit.snapshot`), without checking the lists again (they were when built) and
        without a Python object per document. The cuts are checked.

        :param qids: query ids, ``[Q]``.
        :param lengths: ``L_q``, ``[Q]``.
        :param docs: every listed document, query after query, in rank order, ``[Σ L_q]``.
        :param corpus: as for :class:`Pools`.
        :param gaps: with an id-list corpus, :meth:`columns`'s ``gaps`` (None otherwise).
        """
        lengths = np.asarray(lengths, dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        unlisted = np.zeros(lengths.size, dtype=np.int64) if corpus is None else corpus.n_documents - lengths
        new = object.__new__(Pools)
        new._layout = _Layout(tuple(qids), lengths, starts, docs, corpus, unlisted, gaps)
        new._cuts = new._layout.check_cuts(cuts)
        return new

    def columns(self) -> tuple[tuple[str, ...], NDArray[np.int64], IdColumn, NDArray[np.int64] | None]:
        """The lists as columns, what :meth:`from_columns` rebuilds them from: the query ids, the
        depths ``[Q]``, every listed document query after query ``[Σ L_q]`` and, with an id-list
        corpus, per listed document the count of unretrieved documents before it (None otherwise)."""
        lay = self._layout
        docs = lay.flat if isinstance(lay.flat, IdColumn) else IdColumn.encode(lay.flat.tolist())
        return lay.qids, lay.lengths.copy(), docs, None if lay.gaps is None else lay.gaps.copy()

    def listed(self, qid: str) -> list[str]:
        """The documents of query ``qid``'s list, in rank order.

        :raises ValueError: for a query that is not in the pools.
        """
        lay = self._layout
        row = lay.row(qid)
        s = int(lay.starts[row])
        return list(lay.flat[s:s + int(lay.lengths[row])].tolist())

    def with_cuts(self, cuts: ArrayLike) -> Pools:
        """The same lists and corpus cut at other ``cuts`` (shares the lists; cheap)."""
        new = object.__new__(Pools)
        new._layout = self._layout
        new._cuts = self._layout.check_cuts(cuts)
        return new

    def same_lists(self, other: Pools) -> bool:
        """Whether ``other`` has the same queries, lists and corpus (whatever its cuts)."""
        return self._layout.same_as(other._layout)

    def __repr__(self) -> str:
        c = self.corpus
        corpus = "no corpus" if c is None else f"corpus of {c.n_documents} ({c.kind})"
        return f"Pools({len(self.qids)} queries, N1={self.n1}, N0={self.n0}, {corpus})"

    # ----------------------------------------------------------------- sizes
    @property
    def qids(self) -> tuple[str, ...]:
        return self._layout.qids

    @property
    def cuts(self) -> NDArray[np.int64]:
        """``k_q`` per query, ``[Q]`` (read-only)."""
        return self._cuts

    @property
    def lengths(self) -> NDArray[np.int64]:
        """List depth ``L_q`` per query, ``[Q]``."""
        return self._layout.lengths.copy()

    @property
    def corpus(self) -> Corpus | None:
        return self._layout.corpus

    @property
    def n1_q(self) -> NDArray[np.int64]:
        """Included-pool size per query, ``[Q]`` (``k_q``)."""
        return self._cuts.copy()

    @property
    def n0_q(self) -> NDArray[np.int64]:
        """Excluded-pool size per query, ``[Q]`` (``L_q − k_q`` plus ``C − L_q`` with a corpus)."""
        return self._layout.lengths - self._cuts + self._layout.unlisted

    @property
    def n1(self) -> int:
        """``N1``: items kept for review."""
        return int(self._cuts.sum())

    @property
    def n0(self) -> int:
        """``N0``: items of the excluded pool."""
        return int(self.n0_q.sum())

    @property
    def burden(self) -> int:
        """Review burden as a number of items, ``N1`` (``B_N(g) = N1/N``, §2.2)."""
        return self.n1

    @property
    def n_items(self) -> int:
        """``N = N1 + N0``: every (query, document) item, the finite corpus of §2.2."""
        return int((self._layout.lengths + self._layout.unlisted).sum())

    # ----------------------------------------------------------------- items
    def _indices(self, indices: ArrayLike, total: int, pool: str) -> NDArray[np.int64]:
        idx = _int_array(indices, "indices", 1)
        bad = np.flatnonzero((idx < 0) | (idx >= total))
        if bad.size:
            raise ValueError(f"index {int(idx[bad[0]])} is outside the {pool} pool [0, {total})")
        return idx

    def excluded_items(self, indices: ArrayLike) -> list[Item]:
        """Items of the excluded pool at global indices ``0 ≤ i < N0`` (vectorised; a bijection
        onto ``E`` in the order of the module docstring)."""
        sizes = self.n0_q
        idx = self._indices(indices, int(sizes.sum()), "excluded")
        rows, offset = _locate(sizes, idx)
        return self._layout.items(rows, self._cuts[rows] + offset)

    def included_items(self, indices: ArrayLike) -> list[Item]:
        """Items of the included pool at global indices ``0 ≤ i < N1``: query by query, rank order."""
        idx = self._indices(indices, self.n1, "included")
        rows, offset = _locate(self._cuts, idx)
        return self._layout.items(rows, offset)

    def excluded_item(self, i: int) -> Item:
        """The excluded item at global index ``0 ≤ i < N0``."""
        return self.excluded_items([_count(i, "i")])[0]

    def included_item(self, i: int) -> Item:
        """The included item at global index ``0 ≤ i < N1``."""
        return self.included_items([_count(i, "i")])[0]

    def excluded_mask(self, items: Sequence[Item]) -> NDArray[np.bool_]:
        """Whether each ``(qid, doc)`` lies in the excluded pool, ``[n]``.

        :raises ValueError: for an item that is in no pool (unknown query, or a document neither
            listed nor in the corpus).
        """
        rows, pos = self.item_positions(items)
        return pos >= self._cuts[rows]

    def item_positions(self, items: Sequence[Item]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Per ``(qid, doc)``: its query's row and its position on that query's line of items
        (0-based rank in the list; an unretrieved corpus document is at or beyond the list's depth),
        ``([n], [n])``. An item is excluded by a cut ``k`` exactly when its position is ``≥ k``.

        :raises ValueError: as :meth:`excluded_mask`.
        """
        lay = self._layout
        rows = np.empty(len(items), dtype=np.int64)
        pos = np.empty(len(items), dtype=np.int64)
        for j, item in enumerate(items):
            if not isinstance(item, tuple | list) or len(item) != 2:
                raise ValueError(f"items[{j}] must be a (query_id, doc_id) pair, got {item!r}")
            rows[j] = row = lay.row(item[0])
            pos[j] = lay.position(row, item[1])
        return rows, pos

    # ----------------------------------------------------------------- rank bands
    def _band_segments(self, bands: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Per query and band, ``(sizes [Q, B], first offsets below the cut [B])``."""
        b = _check_bands(bands)
        n0 = self.n0_q[:, None]
        lo = np.minimum(b[None, :], n0)
        hi = np.minimum(np.append(b[1:], np.iinfo(np.int64).max)[None, :], n0)
        return hi - lo, b

    def band_sizes(self, bands: ArrayLike) -> NDArray[np.int64]:
        """Sizes ``N_s`` of the rank bands below the cut, ``[B]`` (the strata of §9).

        ``bands`` are offsets ``0 = o_1 < … < o_B``: band ``s`` of query ``q`` is positions
        ``k_q + 1 + o_s … k_q + o_{s+1}`` (1-based) of ``q``'s line of items — the ranks of its list
        below the cut and then, with a :class:`Corpus`, its unretrieved documents in corpus order
        (module docstring) — and the last band everything beyond ``k_q + o_B``. So a band holds
        unretrieved corpus documents wherever a list ends inside or above it: for a list shorter
        than ``k_q + o_B``, not only the last band does. The bands partition ``E`` and depend on
        nothing but the lists, the cut and the corpus.
        """
        sizes, _ = self._band_segments(bands)
        return sizes.sum(axis=0)

    def band_items(self, bands: ArrayLike, band: int, indices: ArrayLike) -> list[Item]:
        """Items of band ``band`` (see :meth:`band_sizes`) at global indices ``0 ≤ i < N_band``."""
        sizes, b = self._band_segments(bands)
        s = _count(band, "band")
        if s >= b.size:
            raise ValueError(f"band must be < {b.size} (the number of bands), got {s}")
        idx = self._indices(indices, int(sizes[:, s].sum()), f"band {s}")
        rows, offset = _locate(sizes[:, s], idx)
        return self._layout.items(rows, self._cuts[rows] + b[s] + offset)

    def to_dict(self) -> dict[str, Any]:
        """Sizes only (JSON-ready), for an audit manifest."""
        return {
            "queries": len(self.qids),
            "items": self.n_items,
            "n1": self.n1,
            "n0": self.n0,
            "burden": self.burden,
            "corpus": None if self.corpus is None else self.corpus.to_dict(),
            "per_query": {"qids": list(self.qids), "depth": self._layout.lengths.tolist(),
                          "n1": self._cuts.tolist(), "n0": self.n0_q.tolist()},
        }


# ---------------------------------------------------------------------------------------------
# cuts and nested families


def _prefix_under_trec_eval(full: RankedLists, row: int, postings: Sequence[Posting]) -> bool:
    """Whether a cut that is no prefix of list ``row`` in its ``rank`` ordering is one in trec_eval's
    (ties by doc_id descending): a cut written by ``rankcut cut --ordering trec_eval`` and read
    under the default ordering (the truncation walk)."""
    if full.ordering != "rank":
        return False
    n = int(full.lengths[row])
    listed = [Posting(str(d), float(s), j + 1) for j, (d, s) in
              enumerate(zip(full.vocabulary[full.doc_codes[row, :n]], full.scores[row, :n], strict=True))]
    prefix = order_postings(listed, "trec_eval")[: len(postings)]
    return [p.doc_id for p in order_postings(postings, "trec_eval")] == [p.doc_id for p in prefix]


def cuts_from_run(full: RankedLists, cut_run: Mapping[str, Sequence[Posting]], *,
                  allow_missing_queries: bool = False) -> NDArray[np.int64]:
    """Per query, how many documents a cut run keeps, ``[Q]`` (``k_q``).

    The cut run must hold, for each query, a prefix of the full list: the same documents in the
    same order once sorted by ``full.ordering`` (as :func:`rankcut.data.trec.write_run` writes
    it). A query of the full lists absent from the cut run is refused, as a missing document is: a
    cut of 0 writes no line, so the run cannot tell a query cut at 0 from one left out by mistake.
    With ``allow_missing_queries`` it keeps nothing (``k_q = 0``).

    :raises ValueError: naming the query and rank where the cut run departs from the full list, a
        query of the cut run that the full lists do not hold, or (without ``allow_missing_queries``)
        a query of the full lists that the cut run does not hold.
    """
    known = set(full.qids)
    extra = [q for q in cut_run if q not in known]
    if extra:
        raise ValueError(f"query {extra[0]!r} of the cut run is not in the full ranked lists")
    lengths = full.lengths
    cuts = np.zeros(len(full), dtype=np.int64)
    for i, q in enumerate(full.qids):
        postings = order_postings(cut_run.get(q, ()), full.ordering)
        listed = full.vocabulary[full.doc_codes[i, :min(len(postings), lengths[i])]]  # the prefix only
        if len(postings) > lengths[i]:
            raise ValueError(f"query {q!r}: the cut run keeps {len(postings)} documents but the full list "
                             f"holds only {lengths[i]}")
        for r, p in enumerate(postings):
            if p.doc_id != listed[r]:
                raise ValueError(
                    f"query {q!r}, rank {r + 1}: the cut run has {p.doc_id!r} where the full list has "
                    f"{listed[r]!r}; a cut run must keep a prefix of the full list (same documents, "
                    f"same order under ordering={full.ordering!r})"
                    + ("; it is one under ordering='trec_eval', which breaks ties otherwise: give that "
                       "ordering" if _prefix_under_trec_eval(full, i, postings) else "")
                )
        cuts[i] = len(postings)
    absent = [q for q in full.qids if q not in cut_run]
    if absent and not allow_missing_queries:
        more = f" (and {len(absent) - 1} more of the {len(full)} queries)" if len(absent) > 1 else ""
        raise ValueError(f"query {absent[0]!r} of the full ranked lists is not in the cut run{more}: a cut "
                         "of 0 writes no line, so it is not known whether it keeps nothing or was left out "
                         f"— refused; give {spelled('allow_missing_queries')} to take an absent query as "
                         "keeping nothing (k = 0)")
    return cuts


def check_nested(cuts: ArrayLike, qids: Sequence[str], names: Sequence[str] | None = None
                 ) -> NDArray[np.int64]:
    """Check a family of cuts ``[Q, M]`` is nested, ``k^(1)_q ≤ … ≤ k^(M)_q`` for every query
    (candidate sets ``S_1 ⊆ … ⊆ S_M``, excluded pools ``E_1 ⊇ … ⊇ E_M``, §4.7).

    :raises ValueError: naming the query and the two members out of order.
    """
    k = _int_array(cuts, "cuts", 2)
    if k.shape[0] != len(qids) or k.shape[1] == 0:
        raise ValueError(f"a family of cuts must have shape [Q, M] = [{len(qids)}, M ≥ 1], got {k.shape}")
    if names is not None and len(names) != k.shape[1]:
        raise ValueError(f"names must name each of the {k.shape[1]} members, got {len(names)}")
    q, m = np.nonzero(np.diff(k, axis=1) < 0)
    if q.size:
        i, j = int(q[0]), int(m[0])
        raise ValueError(
            f"query {qids[i]!r}: {_member(j, names)} keeps {k[i, j]} documents but {_member(j + 1, names)} "
            f"keeps only {k[i, j + 1]}; a nested family needs g1 ⊆ g2 ⊆ … (cuts nondecreasing "
            "from member to member)"
        )
    return k


def nested_family(full: RankedLists, cut_runs: Sequence[Mapping[str, Sequence[Posting]]], *,
                  names: Sequence[str] | None = None, allow_missing_queries: bool = False
                  ) -> NDArray[np.int64]:
    """Cuts of a nested family of cut runs, ``[Q, M]`` (prefix generators ``g_1 ⊆ … ⊆ g_M`` of
    §4.7; certify with Corollary 16, Theorem 17 / Corollary 18 or Theorem 19).

    :param cut_runs: the members, smallest candidate set first; each as for :func:`cuts_from_run`.
    :param names: optional member names for error messages.
    :param allow_missing_queries: as for :func:`cuts_from_run`.
    :raises ValueError: naming the member (and query, rank) of a run that is not a prefix, or the
        query and members where the family is not nested.
    """
    if isinstance(cut_runs, Mapping) or not isinstance(cut_runs, Sequence) or not cut_runs:
        raise ValueError("cut_runs must be a non-empty sequence of cut runs, smallest candidate set first")
    if names is not None and len(names) != len(cut_runs):
        raise ValueError(f"names must name each of the {len(cut_runs)} cut runs, got {len(names)}")
    columns = []
    for m, run in enumerate(cut_runs):
        try:
            columns.append(cuts_from_run(full, run, allow_missing_queries=allow_missing_queries))
        except ValueError as err:
            raise ValueError(f"{_member(m, names)}: {err}") from None
    return check_nested(np.stack(columns, axis=1), full.qids, names)


def offset_family(cuts: ArrayLike, lengths: ArrayLike, offsets: ArrayLike) -> NDArray[np.int64]:
    """A nested family around one cut: member ``m`` keeps ``k_q + offsets[m]`` documents, clipped
    to ``[0, L_q]``, ``[Q, M]``.

    :param cuts: ``k_q``, ``[Q]``, within ``[0, L_q]``.
    :param lengths: ``L_q``, ``[Q]``.
    :param offsets: strictly increasing integers (negative ones keep fewer documents), ``[M]``.
    """
    L = _int_array(lengths, "lengths", 1)
    k = _int_array(cuts, "cuts", 1)
    o = _int_array(offsets, "offsets", 1)
    if np.any(L < 0):
        raise ValueError(f"lengths must be >= 0, got {int(L[L < 0][0])}")
    if k.shape != L.shape:
        raise ValueError(f"cuts ({k.size}) and lengths ({L.size}) must have one entry per query")
    bad = np.flatnonzero((k < 0) | (k > L))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"cuts[{i}]={int(k[i])} is outside [0, lengths[{i}]={int(L[i])}]")
    _check_increasing(o, "offsets")
    return np.clip(k[:, None] + o[None, :], 0, L[:, None])


def depth_family(lengths: ArrayLike, depths: ArrayLike) -> NDArray[np.int64]:
    """A nested family of fixed depths: member ``m`` keeps ``min(depths[m], L_q)`` documents, ``[Q, M]``.

    :param lengths: ``L_q``, ``[Q]``.
    :param depths: strictly increasing integers ``≥ 0``, ``[M]``.
    """
    L = _int_array(lengths, "lengths", 1)
    d = _int_array(depths, "depths", 1)
    if np.any(L < 0):
        raise ValueError(f"lengths must be >= 0, got {int(L[L < 0][0])}")
    _check_increasing(d, "depths")
    if d[0] < 0:
        raise ValueError(f"depths must be >= 0, got depths[0]={int(d[0])}")
    return np.minimum(d[None, :], L[:, None])


def _check_increasing(x: NDArray[np.int64], name: str) -> None:
    if x.size == 0:
        raise ValueError(f"{name} must list at least one member")
    steps = np.flatnonzero(np.diff(x) <= 0)
    if steps.size:
        i = int(steps[0])
        raise ValueError(f"{spelled(name)} must be strictly increasing (one member each), got {int(x[i])} "
                         f"before {int(x[i + 1])}")
