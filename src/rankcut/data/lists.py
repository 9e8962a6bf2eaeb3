"""Two in-memory forms for many ranked lists, neither holding a Python object per document.

* :class:`RunColumns`, the columnar form a run is read into: per-query offsets into flat arrays
  of document codes (the doc-id column dictionary-encoded against a sorted vocabulary), scores and
  ranks, in the run's order;
* :class:`RankedLists`, the ordered lists as padded ``[n_queries, depth]`` arrays and a mask,
  which every later part of rankcut (features, metrics, cutters, the audit pools) reads; document
  ids are int32 codes into the same vocabulary, the strings are looked up only where a caller
  names documents (:attr:`RankedLists.doc_ids`).

Ordering is defined once, here:

* ``ordering="rank"`` (default): score descending, ties kept in the run's own rank order (the
  order the retriever returned), then doc_id descending;
* ``ordering="trec_eval"``: trec_eval's rule, rank ignored: score descending (compared as 32-bit
  floats, as trec_eval stores them), then doc_id descending.

Real runs have many tied scores, so the two rules give different lists; every figure says which
one it uses. A cut ``k`` keeps the first ``k`` documents of a list (PyTerrier's ``% k``).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankcut.errors import ParamError

__all__ = ["ORDERINGS", "PAD_CODE", "PAD_DOC", "GradedQrelsWarning", "NoRelevantWarning", "Posting",
           "RankedLists", "RunColumns", "check_threshold", "concat_columns", "default_threshold",
           "first_repeat", "order_postings", "ranks_in_row_order", "top_grade",
           "warn_if_nothing_relevant", "warn_if_scores_rise"]

Ordering = Literal["rank", "trec_eval"]
ORDERINGS: tuple[str, ...] = ("rank", "trec_eval")
PAD_DOC = ""  # doc id of padded positions (scores there are NaN, mask False)
PAD_CODE = -1  # document code of padded positions


class NoRelevantWarning(UserWarning):
    """No judged document of the lists reaches the relevance threshold: none counts as relevant."""


class GradedQrelsWarning(UserWarning):
    """The qrels grade relevance above 1 and no threshold was given: grade ≥ 1 counts as relevant."""


def top_grade(judged: Mapping[str, Mapping[str, Any]]) -> Any:
    """The highest relevance grade of qrels ``{query: {document: grade}}`` (0 for none)."""
    return max((grade for docs in judged.values() for grade in docs.values()), default=0)


def default_threshold(threshold: float | None, judged: Mapping[str, Mapping[str, Any]]) -> float:
    """``threshold``, or 1 where it is None, with a :class:`GradedQrelsWarning` when ``judged``
    grades relevance above 1: TREC DL's binary measures count grade ≥ 2, Robust04's ≥ 1, and every
    score, cut and certificate depends on the choice (the commands say it as a note)."""
    if threshold is not None:
        return threshold
    top = top_grade(judged)
    if top > 1:
        warnings.warn(f"the qrels grade relevance up to {top}; grade ≥ 1 counts as relevant (the default "
                      "threshold; TREC DL's binary measures count grade ≥ 2): pass threshold= to choose",
                      GradedQrelsWarning, stacklevel=3)
    return 1


def check_threshold(value: Any) -> float:
    """``value`` as a relevance threshold: a finite number > 0, else ParamError (``threshold``).

    Documents the qrels do not judge get relevance 0, so a threshold ≤ 0 would count every
    unjudged document as relevant.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParamError("threshold", f"threshold must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ParamError("threshold", f"threshold must be finite, got {value!r}")
    if value <= 0:
        raise ParamError("threshold", f"threshold must be > 0 (unjudged documents count as relevance 0, so "
                         f"every one of them would be relevant), got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Posting:
    """One line of a run: a document with its score and the rank the retriever gave it."""

    doc_id: str
    score: float
    rank: int


def order_postings(postings: Iterable[Posting], ordering: str = "rank") -> list[Posting]:
    """Sort one query's postings by the canonical rule (see module docstring)."""
    if ordering not in ORDERINGS:
        raise ValueError(f"ordering must be one of {ORDERINGS}, got {ordering!r}")
    postings = list(postings)
    if not postings:
        return []
    docs = np.empty(len(postings), dtype=object)
    docs[:] = [p.doc_id for p in postings]
    _, codes = np.unique(docs, return_inverse=True)
    perm = _order(np.zeros(len(postings), dtype=np.int32), codes.astype(np.int64),
                  np.array([p.score for p in postings], dtype=float),
                  np.array([p.rank for p in postings], dtype=np.int64), ordering)
    return postings if perm is None else [postings[i] for i in perm.tolist()]


def _order(group: NDArray[Any], codes: NDArray[Any], scores: NDArray[np.float64], ranks: NDArray[np.int64],
           ordering: str) -> NDArray[np.intp] | None:
    """The permutation that sorts rows by query ``group`` and, within each, by ``ordering``, or
    None when the rows are in that order already (as a retriever usually writes them).

    ``codes`` follow doc-id order (a sorted vocabulary), so doc_id descending is ``-codes``. One
    stable lexsort; equal rows keep their order, as Python's stable sorts did.
    """
    # trec_eval stores scores as C floats (32 bits) before sorting: scores that differ only
    # beyond that precision are ties for it, broken by doc_id
    s = scores if ordering == "rank" else scores.astype(np.float32)
    if _in_order(group, codes, s, ranks if ordering == "rank" else None):
        return None
    keys: tuple[NDArray[Any], ...]
    if ordering == "rank":
        keys = (-codes, ranks, -s, group)
    else:
        keys = (-codes, -s, group)
    return np.lexsort(keys)


def _in_order(group: NDArray[Any], codes: NDArray[Any], scores: NDArray[Any],
              ranks: NDArray[np.int64] | None) -> bool:
    """Whether every row comes strictly before the next one of its query by the sort keys."""
    if len(group) < 2:
        return True
    same = group[1:] == group[:-1]
    if np.any(group[1:] < group[:-1]):
        return False
    ahead = scores[:-1] > scores[1:]
    tie = scores[:-1] == scores[1:]
    if ranks is not None:
        ahead |= tie & (ranks[:-1] < ranks[1:])
        tie &= ranks[:-1] == ranks[1:]
    ahead |= tie & (codes[:-1] > codes[1:])
    return bool(np.all(ahead | ~same))


def _sorted_vocabulary(vocabulary: NDArray[np.object_], codes: NDArray[Any],
                       order: NDArray[Any] | None = None) -> tuple[NDArray[np.object_], NDArray[np.int32]]:
    """``vocabulary`` sorted (code-point order, as Python compares str) and ``codes`` remapped to it;
    ``order``, when given, is that sorting permutation computed elsewhere (by pyarrow)."""
    if order is None:
        order = np.argsort(vocabulary, kind="stable")
    rank_of = np.empty(len(order), dtype=np.int32)
    rank_of[order] = np.arange(len(order), dtype=np.int32)
    codes = np.require(codes, dtype=np.int32, requirements=["C", "W"])
    for start in range(0, len(codes), 1 << 20):  # in place, a block at a time: no second copy
        block = codes[start:start + (1 << 20)]
        block[:] = rank_of[block]
    return vocabulary[order], codes


@dataclass(frozen=True, eq=False)
class RunColumns:
    """A run in columnar form: query ``i``'s postings are rows ``offsets[i]:offsets[i + 1]``.

    :param qids: query ids in the order of their first line.
    :param offsets: int64 ``[n_queries + 1]``, non-decreasing from 0.
    :param doc_codes: int32 ``[n_rows]``, indices into ``vocabulary``.
    :param scores: float64 ``[n_rows]``.
    :param ranks: int64 ``[n_rows]``, the ranks the retriever gave.
    :param vocabulary: the distinct document ids, sorted (so code order is doc-id order).

    Within a query the rows keep the run's order; :meth:`RankedLists.from_columns` sorts them.
    """

    qids: tuple[str, ...]
    offsets: NDArray[np.int64]
    doc_codes: NDArray[np.int32]
    scores: NDArray[np.float64]
    ranks: NDArray[np.int64]
    vocabulary: NDArray[np.object_]

    def __len__(self) -> int:
        return len(self.qids)

    @property
    def n_rows(self) -> int:
        return int(self.offsets[-1])

    @classmethod
    def from_rows(cls, qcodes: NDArray[Any], qids: Sequence[str], doc_codes: NDArray[Any],
                  vocabulary: NDArray[np.object_], scores: NDArray[np.float64],
                  ranks: NDArray[np.int64], vocabulary_order: NDArray[Any] | None = None) -> RunColumns:
        """From one row per line in file order: ``qcodes`` index ``qids`` (first-appearance order),
        ``doc_codes`` index an unsorted ``vocabulary`` (whose sorting permutation may be given as
        ``vocabulary_order``). Rows are grouped by query, stably; ``doc_codes`` is remapped in
        place when it is a writable int32 array (a run is not held twice)."""
        vocab, codes = _sorted_vocabulary(vocabulary, doc_codes, vocabulary_order)
        qcodes = np.asarray(qcodes)
        if len(qcodes) > 1 and np.any(qcodes[1:] < qcodes[:-1]):  # queries interleaved in the file
            perm = np.argsort(qcodes, kind="stable")
            qcodes, codes, scores, ranks = qcodes[perm], codes[perm], scores[perm], ranks[perm]
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(qcodes, minlength=len(qids)), out=offsets[1:])
        return cls(tuple(qids), offsets, codes, np.asarray(scores, dtype=np.float64),
                   np.asarray(ranks, dtype=np.int64), vocab)

    @classmethod
    def from_postings(cls, run: Mapping[str, Sequence[Posting]]) -> RunColumns:
        """From ``{qid: [Posting, ...]}`` (queries in the mapping's order).

        :raises TypeError: naming the query and place of an entry that is not a :class:`Posting`
            (a ``(doc_id, score)`` tuple was an AttributeError on ``doc_id``), or a query or
            document id that is not a string (an int id failed later, unnamed, against string qrels).
        :raises ValueError: naming the query and document of a score that is not a finite number
            (a NaN went to the bottom of its list without a word; a TREC file refuses it).
        """
        qids = tuple(run)
        for q in qids:
            if not isinstance(q, str):
                raise TypeError(f"run has the query id {q!r} ({type(q).__name__}): query ids are strings")
            for i, p in enumerate(run[q]):
                if not isinstance(p, Posting):
                    raise TypeError(f"run[{q!r}][{i}] is {p!r}: a run's entries are "
                                    "rankcut.data.lists.Posting(doc_id, score, rank), or give the path of a "
                                    "TREC run")
                if not isinstance(p.doc_id, str):
                    raise TypeError(f"run[{q!r}][{i}] has the document id {p.doc_id!r} "
                                    f"({type(p.doc_id).__name__}): document ids are strings")
                number = isinstance(p.score, int | float | np.integer | np.floating)
                if not number or isinstance(p.score, bool) or not math.isfinite(p.score):
                    raise ValueError(f"run[{q!r}][{i}] (document {p.doc_id!r}) has the score {p.score!r}: a "
                                     "score must be a finite number")
        sizes = [len(run[q]) for q in qids]
        postings = [p for q in qids for p in run[q]]
        docs = np.empty(len(postings), dtype=object)
        docs[:] = [p.doc_id for p in postings]
        vocab, codes = np.unique(docs, return_inverse=True)
        offsets = np.zeros(len(qids) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return cls(qids, offsets, codes.reshape(-1).astype(np.int32),
                   np.array([p.score for p in postings], dtype=np.float64),
                   np.array([p.rank for p in postings], dtype=np.int64), vocab)

    def to_postings(self) -> dict[str, list[Posting]]:
        """``{qid: [Posting, ...]}`` in the run's order (one Python object per line: small runs)."""
        docs = self.vocabulary[self.doc_codes].tolist()
        scores, ranks = self.scores.tolist(), self.ranks.tolist()
        bounds = self.offsets.tolist()
        return {q: [Posting(docs[j], scores[j], ranks[j]) for j in range(bounds[i], bounds[i + 1])]
                for i, q in enumerate(self.qids)}

    def select(self, qids: Sequence[str]) -> RunColumns:
        """The postings of ``qids`` (in that order); the vocabulary is kept whole."""
        where = {q: i for i, q in enumerate(self.qids)}
        rows = [where[q] for q in qids]
        starts, stops = self.offsets[:-1][rows], self.offsets[1:][rows]
        sizes = stops - starts
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        take = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1])
        return RunColumns(tuple(qids), offsets, self.doc_codes[take], self.scores[take], self.ranks[take],
                          self.vocabulary)


def ranks_in_row_order(qcodes: NDArray[Any]) -> NDArray[np.int64]:
    """Each row's place (from 1) among its query's rows, in row order: the rank of a run read
    without one (a run frame, a Parquet run)."""
    order = np.argsort(qcodes, kind="stable")
    sorted_codes = qcodes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sizes = np.diff(np.r_[starts, qcodes.size])
    ranks = np.empty(qcodes.size, dtype=np.int64)
    ranks[order] = np.arange(qcodes.size) - np.repeat(starts, sizes) + 1
    return ranks


def first_repeat(qcodes: NDArray[Any], dcodes: NDArray[Any], n_docs: int) -> tuple[int, int] | None:
    """``(first, repeat)`` rows of the earliest row whose (query, document) pair came before, or None."""
    if len(qcodes) < 2:
        return None
    keys = qcodes.astype(np.int64) * max(n_docs, 1) + dcodes
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    again = ordered[1:] == ordered[:-1]
    if not again.any():
        return None
    repeat = int(order[1:][again].min())
    return int(np.flatnonzero(keys == keys[repeat])[0]), repeat


def concat_columns(parts: Sequence[RunColumns]) -> RunColumns:
    """The runs ``parts`` one after the other (their queries must differ), on one vocabulary."""
    if len(parts) == 1:
        return parts[0]
    merged = np.concatenate([p.vocabulary for p in parts])
    vocab, inverse = np.unique(merged, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int32)
    codes, start = [], 0
    for p in parts:
        codes.append(inverse[start:start + len(p.vocabulary)][p.doc_codes])
        start += len(p.vocabulary)
    offsets = np.concatenate([[0]] + [p.offsets[1:] + before for p, before in
                                      zip(parts, np.cumsum([0] + [p.n_rows for p in parts[:-1]]),
                                          strict=True)]).astype(np.int64)
    return RunColumns(tuple(q for p in parts for q in p.qids), offsets, np.concatenate(codes),
                      np.concatenate([p.scores for p in parts]), np.concatenate([p.ranks for p in parts]),
                      vocab)


@dataclass(frozen=True, eq=False, repr=False)
class RankedLists:
    """Ranked lists of many queries as padded ``[n_queries, max_len]`` arrays.

    :param qids: query ids, one per row.
    :param doc_codes: int32 array ``[n_queries, max_len]`` of indices into ``vocabulary``; padding
        is ``PAD_CODE``. :attr:`doc_ids` gives the ids themselves.
    :param vocabulary: object array of the distinct document ids (sorted when the lists were
        built from a run, which the doc-id tie rule relies on).
    :param scores: float array ``[n_queries, max_len]``; padding is NaN.
    :param mask: bool array ``[n_queries, max_len]``, True where a document is listed.
    :param gains: graded relevance ``[n_queries, max_len]`` from the qrels (0 for unjudged and
        padding), or None when no qrels were given.
    :param threshold: relevance at or above which a document counts as relevant; finite and > 0
        (see :func:`check_threshold`).
    :param n_relevant: per query, the number of judged relevant documents in the qrels (listed
        or not), or None without qrels.
    :param features: optional float array ``[n_queries, max_len, n_features]`` (0 at padding).
    :param feature_names: names of the feature columns.
    :param ordering: the rule the lists were sorted by (``"rank"`` or ``"trec_eval"``).
    :param scored_by: what the scores are: ``"run scores"`` (a run's, the default), or the feature
        of LETOR files that ranks them (``"LETOR feature 25"``); a trained model records it.
    """

    qids: tuple[str, ...]
    doc_codes: NDArray[np.int32]
    vocabulary: NDArray[np.object_]
    scores: NDArray[np.float64]
    mask: NDArray[np.bool_]
    gains: NDArray[np.float64] | None = None
    threshold: float = 1.0
    n_relevant: NDArray[np.int64] | None = None
    features: NDArray[np.float64] | None = None
    feature_names: tuple[str, ...] = field(default_factory=tuple)
    ordering: str = "rank"
    scored_by: str = "run scores"

    def __post_init__(self) -> None:
        check_threshold(self.threshold)
        if len(set(self.qids)) != len(self.qids):
            dup = next(q for q, c in Counter(self.qids).items() if c > 1)
            raise ValueError(f"query {dup!r} appears more than once in the ranked lists")

    def __repr__(self) -> str:
        n, lengths = len(self), self.lengths
        judged = "unjudged" if self.gains is None else f"judged at threshold {self.threshold:g}"
        n_features = 0 if self.features is None else self.features.shape[2]
        return (f"RankedLists({n} {'query' if n == 1 else 'queries'}, lengths "
                f"{lengths.min()}..{lengths.max()}, ordering={self.ordering!r}, {judged}, "
                f"{n_features} features)")

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_postings(
        cls,
        run: Mapping[str, Sequence[Posting]],
        qrels: Mapping[str, Mapping[str, float]] | None = None,
        *,
        threshold: float = 1.0,
        ordering: str = "rank",
    ) -> RankedLists:
        """Build from ``{qid: [Posting, ...]}`` and optional ``{qid: {doc_id: relevance}}``.

        Queries keep the order of ``run``; the rest is :meth:`from_columns`.
        """
        return cls.from_columns(RunColumns.from_postings(run), qrels, threshold=threshold, ordering=ordering)

    @classmethod
    def from_columns(
        cls,
        run: RunColumns,
        qrels: Mapping[str, Mapping[str, float]] | None = None,
        *,
        threshold: float = 1.0,
        ordering: str = "rank",
    ) -> RankedLists:
        """Build from a columnar run and optional ``{qid: {doc_id: relevance}}``.

        Queries keep the order of ``run``. Postings are sorted by ``ordering`` (one lexsort over
        all rows). Queries of the run that are absent from the qrels get no relevant document
        (``n_relevant`` 0); use :func:`rankcut.data.trec.align` to report or drop them first.

        :raises ValueError: for a threshold that is not finite and > 0, an unknown ordering, no
            query, or a query without documents.
        """
        threshold = check_threshold(threshold)
        if ordering not in ORDERINGS:
            raise ValueError(f"ordering must be one of {ORDERINGS}, got {ordering!r}")
        qids = run.qids
        if not qids:
            raise ValueError("no query in the run")
        sizes = np.diff(run.offsets)
        if np.any(sizes == 0):
            raise ValueError(f"query {qids[int(np.flatnonzero(sizes == 0)[0])]!r} has no document")
        n, width = len(qids), int(sizes.max())
        group = np.repeat(np.arange(n, dtype=np.int32), sizes)
        perm = _order(group, run.doc_codes, run.scores, run.ranks, ordering)
        del group
        sorted_codes = run.doc_codes if perm is None else run.doc_codes[perm]
        sorted_scores = run.scores if perm is None else run.scores[perm]
        del perm
        if np.all(sizes == width):  # every list as long: the sorted rows are the padded matrix
            mask = np.ones((n, width), dtype=bool)
            codes = sorted_codes.reshape(n, width)
            scores = sorted_scores.reshape(n, width)
        else:
            mask = np.arange(width)[None, :] < sizes[:, None]
            codes = np.full((n, width), PAD_CODE, dtype=np.int32)
            scores = np.full((n, width), np.nan)
            codes[mask] = sorted_codes  # row-major order of the mask is the sorted order
            scores[mask] = sorted_scores
        del sorted_codes, sorted_scores
        gains = n_rel = None
        if qrels is not None:
            gains, n_rel = _judge(qids, codes, mask, run.vocabulary, qrels, threshold)
        return cls(qids, codes, run.vocabulary, scores, mask, gains, float(threshold), n_rel,
                   ordering=ordering)

    # ----------------------------------------------------------------- views
    def __len__(self) -> int:
        return len(self.qids)

    @property
    def lengths(self) -> NDArray[np.int64]:
        """Number of listed documents per query."""
        return self.mask.sum(axis=1).astype(np.int64)

    @property
    def max_len(self) -> int:
        return int(self.mask.shape[1])

    @property
    def labels(self) -> NDArray[np.bool_]:
        """Binary relevance ``gains ≥ threshold`` (False at padding); needs qrels."""
        if self.gains is None:
            raise ValueError("these ranked lists carry no relevance judgements (no qrels given)")
        return (self.gains >= self.threshold) & self.mask

    @cached_property
    def doc_ids(self) -> NDArray[np.object_]:
        """Object array ``[n_queries, max_len]`` of the document ids; padding is ``PAD_DOC``.

        Built on first use (one reference per position, the strings are the vocabulary's); the
        metrics and cutters never need it.
        """
        out = np.full(self.mask.shape, PAD_DOC, dtype=object)
        out[self.mask] = self.vocabulary[self.doc_codes[self.mask]]
        return out

    @cached_property
    def _rows(self) -> dict[str, int]:
        return {q: i for i, q in enumerate(self.qids)}

    def index(self, qid: str) -> int:
        try:
            return self._rows[qid]
        except KeyError:
            raise KeyError(f"query {qid!r} is not in these ranked lists") from None

    def blind(self) -> RankedLists:
        """These lists without their judgements (gains and relevant counts): what a cutter is given
        to cut, since only the oracle may read the labels of what it cuts."""
        return replace(self, gains=None, n_relevant=None)

    def rows(self, start: int, stop: int) -> RankedLists:
        """Rows ``start:stop`` as views of these arrays: no copy, and the width is kept (so a
        curve over the rows has the columns of a curve over all lists)."""
        part = slice(start, stop)

        def view(a: Any) -> Any:
            return None if a is None else a[part]

        return replace(self, qids=self.qids[part], doc_codes=self.doc_codes[part], scores=self.scores[part],
                       mask=self.mask[part], gains=view(self.gains), n_relevant=view(self.n_relevant),
                       features=view(self.features))

    def subset(self, qids: Iterable[str]) -> RankedLists:
        """The lists of ``qids`` (in that order), trimmed to their own maximum length."""
        rows = [self.index(q) for q in qids]
        if not rows:
            raise ValueError("subset of no query")
        width = int(self.mask[rows].sum(axis=1).max())

        def take(a: Any) -> Any:
            return None if a is None else a[rows][:, :width] if a.ndim >= 2 else a[rows]

        return replace(
            self,
            qids=tuple(self.qids[r] for r in rows),
            doc_codes=take(self.doc_codes),
            scores=take(self.scores),
            mask=take(self.mask),
            gains=take(self.gains),
            n_relevant=take(self.n_relevant),
            features=take(self.features),
        )

    def with_features(self, features: NDArray[np.float64], names: Sequence[str]) -> RankedLists:
        """A copy carrying ``features`` of shape ``[n_queries, max_len, len(names)]``."""
        features = np.asarray(features, dtype=float)
        expected = (len(self), self.max_len, len(names))
        if features.shape != expected:
            raise ValueError(f"features have shape {features.shape}, expected {expected}")
        return replace(self, features=np.where(self.mask[..., None], features, 0.0),
                       feature_names=tuple(names))

    def check_cuts(self, cuts: Any, *, allow_zero: bool = False) -> NDArray[np.int64]:
        """Validate one cut per query (``1 ≤ k ≤ length``, or ``0 ≤ k`` with ``allow_zero``)."""
        k = np.asarray(cuts)
        if k.shape != (len(self),):
            raise ValueError(f"expected {len(self)} cuts (one per query), got shape {k.shape}")
        if k.dtype.kind not in "iu":
            raise ValueError(f"cuts must be integers, got dtype {k.dtype}")
        low = 0 if allow_zero else 1
        bad = (k < low) | (k > self.lengths)
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"cut {int(k[i])} for query {self.qids[i]!r} is outside [{low}, {self.lengths[i]}]"
            )
        return k.astype(np.int64)


_JUDGE_BLOCK = 1 << 22  # positions whose judgements are looked up at once


def _judge(qids: Sequence[str], codes: NDArray[np.int32], mask: NDArray[np.bool_],
           vocabulary: NDArray[np.object_], qrels: Mapping[str, Mapping[str, float]],
           threshold: float) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The gains ``[n_queries, width]`` of the listed documents and, per query, the number of
    judged relevant documents (listed or not). Judgements are matched by sorted ``(query, code)``
    keys, so the cost is one search per listed document, in numpy."""
    n_vocab = len(vocabulary)
    n_rel = np.zeros(len(qids), dtype=np.int64)
    rows: list[int] = []
    docs: list[str] = []
    grades: list[float] = []
    for i, q in enumerate(qids):
        judged = qrels.get(q, {})
        n_rel[i] = sum(1 for r in judged.values() if r >= threshold)
        rows.extend([i] * len(judged))
        docs.extend(judged)
        grades.extend(float(r) for r in judged.values())
    judged_docs = np.empty(len(docs), dtype=object)
    judged_docs[:] = docs
    at = np.minimum(np.searchsorted(vocabulary, judged_docs), max(n_vocab - 1, 0))
    listed = vocabulary[at] == judged_docs if n_vocab else np.zeros(len(docs), dtype=bool)
    keys = (np.array(rows, dtype=np.int64) * n_vocab + at)[listed]
    grades_listed = np.array(grades)[listed]
    gains = np.zeros(codes.shape)
    if len(keys):
        order = np.argsort(keys)
        sorted_keys, sorted_grades = keys[order], grades_listed[order]
        # a block of rows at a time, so that the int64 keys are a block's, not the whole run's
        step = max(1, _JUDGE_BLOCK // max(codes.shape[1], 1))
        for start in range(0, len(qids), step):
            rows_at = slice(start, start + step)
            block = np.arange(start, min(start + step, len(qids)), dtype=np.int64)
            cell = block[:, None] * n_vocab + codes[rows_at]
            at_cell = np.minimum(np.searchsorted(sorted_keys, cell), len(sorted_keys) - 1)
            hit = (sorted_keys[at_cell] == cell) & mask[rows_at]
            gains[rows_at][hit] = sorted_grades[at_cell[hit]]
    return gains, n_rel


def warn_if_nothing_relevant(lists: RankedLists, *, stacklevel: int = 2) -> None:
    """Warn (:class:`NoRelevantWarning`) when lists carry judgements but no query has a judged
    document at or above ``lists.threshold``, e.g. ``threshold=3`` on qrels graded 0–2: every
    document then counts as not relevant, which is rarely what was meant.

    Loaders call this (:func:`rankcut.data.trec.load_trec`); lists built by hand, e.g. with
    deliberately all-irrelevant labels, are not checked.
    """
    if lists.gains is None or lists.n_relevant is None or lists.n_relevant.any():
        return
    top = float(lists.gains[lists.mask].max())
    warnings.warn(f"no judged document reaches relevance ≥ {lists.threshold:g} (the highest listed grade "
                  f"is {top:g}): no document of the {len(lists)} lists counts as relevant",
                  NoRelevantWarning, stacklevel=stacklevel + 1)


def warn_if_scores_rise(columns: RunColumns) -> None:
    """Warn when, in any query, the scores rise with the run's rank column throughout (at least two
    rises, no fall): a list is ordered by score, highest first, as trec_eval does, so such lists are
    read from the bottom up; scores that are distances (smaller is better) must be negated first.
    A run whose rank column merely disagrees in places (ties, a reranker's scores) is not warned
    of; one query's scores negated by mistake is (it was only when most queries rose)."""
    n = len(columns)
    if n == 0 or columns.n_rows < 2:
        return
    query = np.repeat(np.arange(n), np.diff(columns.offsets))
    order = np.lexsort((columns.ranks, query))
    step = np.diff(columns.scores[order])
    same = query[order][1:] == query[order][:-1]
    q = query[order][1:]
    up = np.bincount(q[same & (step > 0)], minlength=n)
    down = np.bincount(q[same & (step < 0)], minlength=n) > 0
    rising = (up >= 2) & ~down
    if rising.any():
        first = columns.qids[int(np.flatnonzero(rising)[0])]
        warnings.warn(f"the scores rise with the rank column in {int(rising.sum())} of the {n} queries (e.g. "
                      f"{first!r}): a list is ordered by score, highest first, as trec_eval does, so these "
                      "lists are read from their last rank up; if the scores are distances (smaller is "
                      "better), negate them (if instead the rank column runs backwards, the order by score "
                      "is right)", UserWarning, stacklevel=3)
