"""One in-memory form for many ranked lists of different lengths: padded arrays and a mask.

Every later part of rankcut (features, metrics, cutters, the audit pools) reads this form.
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
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from rankcut.errors import ParamError

__all__ = ["ORDERINGS", "PAD_DOC", "NoRelevantWarning", "Posting", "RankedLists", "check_threshold",
           "order_postings", "warn_if_nothing_relevant"]

Ordering = Literal["rank", "trec_eval"]
ORDERINGS: tuple[str, ...] = ("rank", "trec_eval")
PAD_DOC = ""  # doc id of padded positions (scores there are NaN, mask False)


class NoRelevantWarning(UserWarning):
    """No judged document of the lists reaches the relevance threshold: none counts as relevant."""


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
    # doc_id descending as the last key: sort ascending on the other keys after a reverse sort
    # by doc_id (Python's sort is stable).
    out = sorted(postings, key=lambda p: p.doc_id, reverse=True)
    if ordering == "rank":
        out.sort(key=lambda p: (-p.score, p.rank))
    else:
        # trec_eval stores scores as C floats (32 bits) before sorting: scores that differ only
        # beyond that precision are ties for it, broken by doc_id
        out.sort(key=lambda p: -np.float32(p.score))
    return out


@dataclass(frozen=True, eq=False, repr=False)
class RankedLists:
    """Ranked lists of many queries as padded ``[n_queries, max_len]`` arrays.

    :param qids: query ids, one per row.
    :param doc_ids: object array ``[n_queries, max_len]``; padding is ``PAD_DOC``.
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
    """

    qids: tuple[str, ...]
    doc_ids: NDArray[np.object_]
    scores: NDArray[np.float64]
    mask: NDArray[np.bool_]
    gains: NDArray[np.float64] | None = None
    threshold: float = 1.0
    n_relevant: NDArray[np.int64] | None = None
    features: NDArray[np.float64] | None = None
    feature_names: tuple[str, ...] = field(default_factory=tuple)
    ordering: str = "rank"

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

        Queries keep the order of ``run``. Postings are sorted by ``ordering``. Queries of the
        run that are absent from the qrels get no relevant document (``n_relevant`` 0); use
        :func:`rankcut.data.trec.align` to report or drop them first.

        :raises ValueError: for a threshold that is not finite and > 0, an unknown ordering, no
            query, or a query without documents.
        """
        threshold = check_threshold(threshold)
        if ordering not in ORDERINGS:
            raise ValueError(f"ordering must be one of {ORDERINGS}, got {ordering!r}")
        qids = tuple(run)
        if not qids:
            raise ValueError("no query in the run")
        lists = [order_postings(run[q], ordering) for q in qids]
        for q, lst in zip(qids, lists, strict=True):
            if not lst:
                raise ValueError(f"query {q!r} has no document")
        width = max(len(lst) for lst in lists)
        n = len(qids)
        doc_ids = np.full((n, width), PAD_DOC, dtype=object)
        scores = np.full((n, width), np.nan)
        mask = np.zeros((n, width), dtype=bool)
        for i, lst in enumerate(lists):
            doc_ids[i, : len(lst)] = [p.doc_id for p in lst]
            scores[i, : len(lst)] = [p.score for p in lst]
            mask[i, : len(lst)] = True
        gains = n_rel = None
        if qrels is not None:
            gains = np.zeros((n, width))
            n_rel = np.zeros(n, dtype=np.int64)
            for i, (q, lst) in enumerate(zip(qids, lists, strict=True)):
                judged = qrels.get(q, {})
                gains[i, : len(lst)] = [float(judged.get(p.doc_id, 0.0)) for p in lst]
                n_rel[i] = sum(1 for r in judged.values() if r >= threshold)
        return cls(qids, doc_ids, scores, mask, gains, float(threshold), n_rel, ordering=ordering)

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

    def index(self, qid: str) -> int:
        try:
            return self.qids.index(qid)
        except ValueError:
            raise KeyError(f"query {qid!r} is not in these ranked lists") from None

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
            doc_ids=take(self.doc_ids),
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
