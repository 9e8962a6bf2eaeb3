"""Continuous active learning: Cormack & Grossman's BMI / AutoTAR baseline as a screener.

The ranker of "Autonomy and reliability of continuous active learning for technology-assisted
review" (Cormack & Grossman, 2015, §3, AutoTAR; the TREC Total Recall BMI baseline), on
scikit-learn:

* features: ``TfidfVectorizer`` over title and abstract, fitted once on every record (no label
  is used): word tokens, ``1 + log tf`` (``sublinear_tf``), idf, L2-normalised rows; with
  :attr:`CALConfig.ngrams` ``= 2`` word bigrams too (as ASReview's ELAS u4 model does);
* classifier: ``LogisticRegression`` (L2), the objective of BMI's Sofia-ML ``logreg-pegasos``
  with ``λ = l2``: ``C = 1 / (λ · n_train)`` at each fit; with :attr:`CALConfig.balanced`, each
  class weighted by the inverse of its share of the training set (scikit-learn's
  ``class_weight="balanced"``, as ELAS u4's SVM);
* training set at each fit: every document read so far with its label (screening and audit
  reads alike), plus ``presumed`` unread documents drawn at random and *presumed* irrelevant for
  this fit only, plus the seed query as a relevant document if there is one;
* batches: the unread documents the fit scores highest, ``b = 1`` at first, then
  ``b ← b + ⌈b/10⌉`` after each batch.

Start (documented choice): records labelled before the session (prior knowledge) are screened
first, in file order. The model then needs one relevant label; until there is one, and if no
seed query is given (AutoTAR's synthetic document, :attr:`CALConfig.query`), the screener reads
the records in the ranking's order when they come from a run (:attr:`Records.ranked
<rankcut.review.records.Records.ranked>`), else in a seeded random order — the same
random-reading start ASReview uses without prior knowledge.

Two things a replay recomputes may be handed in, computed before: the features
(:func:`tfidf_features`, the texts tokenised once), and the fits' batches (``fits``: a mapping from
a fit's inputs, hashed, to the batch it chose). A batch is taken from ``fits`` only under the hash
of everything that decides it (the features' values, the configuration, the library versions, the
documents read and their labels, the presumed-irrelevant draws, the batch size), so a mapping of
another review's or another version's fits is never used; the draws are made either way, so the
screener's state is the same as after the fit.

Everything random (the presumed-irrelevant draws and the random start) comes from
``numpy.random.default_rng(config.seed)`` drawn afresh for each review, and the fits are
deterministic, so the screen order is a function of the labels read and the seed. The screener
sees the review state only (the labels read), never the frozen audit order, so the interleaved
certificate (:mod:`rankcut.certify.interleaved`) holds whatever it learns.

scikit-learn is imported here only (the ``review`` extra).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections import deque
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # rankcut.certify.policies loads scipy
    from rankcut.certify.policies import ReviewState

__all__ = ["CALConfig", "CALScreener", "library_versions", "pins", "query_features", "tfidf_features"]

MODELS = ("logistic", "svm")


@dataclass(frozen=True)
class CALConfig:
    """The frozen configuration of a CAL ranker (written into a manifest by :meth:`to_json`).

    :param model: ``logistic`` (BMI) or ``svm`` (``LinearSVC``, hinge loss, the same ``C``).
    :param l2: the L2 weight ``λ`` of BMI's objective (Sofia-ML's default ``1e-4``).
    :param presumed: unread documents drawn at random and presumed irrelevant at each fit (100).
    :param first_batch: the first batch's size (1); each batch grows by ``⌈b/10⌉``.
    :param seed: seeds the presumed-irrelevant draws and the random start.
    :param query: the seed query, a synthetic relevant document (AutoTAR); ``None``: none.
    :param ngrams: word n-grams up to this length in the features: 1 (BMI's words) or 2 (bigrams too).
    :param balanced: weight the two classes by the inverse of their training shares.
    """

    model: str = "logistic"
    l2: float = 1e-4
    presumed: int = 100
    first_batch: int = 1
    seed: int = 0
    query: str | None = None
    ngrams: int = 1
    balanced: bool = False

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if not (isinstance(self.l2, int | float) and math.isfinite(self.l2) and self.l2 > 0):
            raise ValueError(f"l2 must be a positive number, got {self.l2!r}")
        for name, least in (("presumed", 0), ("first_batch", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be an integer ≥ {least}, got {value!r}")
        if self.ngrams not in (1, 2) or isinstance(self.ngrams, bool):
            raise ValueError(f"ngrams must be 1 or 2, got {self.ngrams!r}")
        if not isinstance(self.balanced, bool):
            raise ValueError(f"balanced must be true or false, got {self.balanced!r}")
        if self.query is not None and not (isinstance(self.query, str) and self.query.strip()):
            raise ValueError(f"query must be a non-empty text or None, got {self.query!r}")

    def to_json(self) -> dict[str, Any]:
        """The configuration as a JSON object (every field)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CALConfig:
        """Read :meth:`to_json`'s object back; an unknown or missing field is refused by name."""
        names = {f.name for f in dataclasses.fields(cls)}
        if set(data) != names:
            extra, missing = sorted(set(data) - names), sorted(names - set(data))
            wrong = f"unknown: {', '.join(extra)}" if extra else f"missing: {', '.join(missing)}"
            raise ValueError(f"a CAL configuration holds {', '.join(sorted(names))}; {wrong}")
        return cls(**data)


def tfidf_features(texts: Sequence[str], ngrams: int = 1) -> tuple[Any, Callable[[Sequence[str]], Any]]:
    """BMI's features (module docstring): the rows of ``texts`` (CSR), and the map of other texts
    (a query) to rows of the same features.

    The values are those of ``TfidfVectorizer(sublinear_tf=True).fit(texts).transform(texts)``
    bit for bit (the tests check it), so the replay of a review started before is the same; but
    the texts are tokenised once, not twice (half a replay's time on 14,717 records). The counts'
    indices are sorted first, as ``transform`` leaves them: the norms then add up in its order."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    counts = CountVectorizer(ngram_range=(1, ngrams), dtype=np.float64)
    x = counts.fit_transform(texts)
    x.sort_indices()
    weights = TfidfTransformer(sublinear_tf=True).fit(x)
    return weights.transform(x).tocsr(), lambda more: weights.transform(counts.transform(more))


def query_features(texts: Sequence[str], config: CALConfig) -> tuple[Any, Any]:
    """The features of ``texts`` (:func:`tfidf_features`) and the seed query's row (``None``
    without one): what :class:`CALScreener` takes as ``features``."""
    matrix, encode = tfidf_features(texts, config.ngrams)
    return matrix, None if config.query is None else encode([config.query])


def library_versions() -> str:
    """The versions of the libraries a fit's result depends on (part of every cache key), read from
    the installed packages' metadata (importing scikit-learn would load pandas too).

    :raises ModuleNotFoundError: naming ``sklearn`` (as its import would) when it is not installed.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        learn = version("scikit-learn")
    except PackageNotFoundError:
        raise ModuleNotFoundError("No module named 'sklearn'", name="sklearn") from None
    return f"numpy {np.__version__}, scipy {version('scipy')}, scikit-learn {learn}"


def pins(libraries: str) -> str:
    """The ``pip install`` arguments that install the versions :func:`library_versions` wrote."""
    return " ".join(f"'{name}=={version}'" for name, version in
                    (part.split(" ") for part in libraries.split(", ")))


def _fit_salt(matrix: Any, query: Any, config: CALConfig, ranked: bool) -> str:
    """The part of a fit's key that one review's fits share: the features' values, the
    configuration, the start's order (``ranked``: a one-class fit ranks by it) and the library
    versions."""
    h = hashlib.sha256(json.dumps([config.to_json(), ranked], sort_keys=True).encode())
    h.update(library_versions().encode())
    for m in (matrix, query) if query is not None else (matrix,):
        h.update(np.array(m.shape, dtype=np.int64).tobytes())
        for part in (m.indptr, m.indices, m.data):
            h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def _unread_batch(batch: Sequence[int], labels: NDArray[np.int64], size: int) -> bool:
    """Whether ``batch`` is ``size`` distinct unread documents (as a fit's batch is)."""
    docs = np.asarray(batch, dtype=np.int64)
    return bool(docs.size == size == np.unique(docs).size and ((docs >= 0) & (docs < labels.size)).all()
                and (labels[docs] < 0).all())


class CALScreener:
    """AutoTAR continuous active learning as a :class:`~rankcut.certify.policies.Screener`.

    :param texts: ``[n]`` the records' texts (:attr:`Records.texts
        <rankcut.review.records.Records.texts>`), document ``i`` the ``i``-th.
    :param config: the frozen configuration.
    :param prior: ``[n]`` records known before the session (``0``/``1``; ``-1`` elsewhere): screened
        first, in file order.
    :param ranked: the texts are in a ranking's order: until a relevant record is read, screen
        them in that order rather than a random one.
    :param features: :func:`query_features` of ``texts`` and ``config``, computed before (a cache);
        ``None``: computed here.
    :param fits: a mapping of fits' batches (the module docstring) to take batches from and put
        new ones in; ``None``: every batch is fitted.

    It keeps what it learned for one review and starts afresh when it is handed another
    :class:`~rankcut.certify.policies.ReviewState` (so one screener serves every seed of a
    simulation). ``fits_`` counts the model fits of the current review.
    """

    def __init__(self, texts: Sequence[str], config: CALConfig | None = None, *,
                 prior: NDArray[np.int8] | None = None, ranked: bool = False,
                 features: tuple[Any, Any] | None = None,
                 fits: MutableMapping[str, list[int]] | None = None) -> None:
        self.config = CALConfig() if config is None else config
        self.matrix_, self._query = query_features(texts, self.config) if features is None else features
        n = self.matrix_.shape[0]
        if len(texts) != n:
            raise ValueError(f"the features have {n} rows for {len(texts)} texts")
        known = np.full(n, -1, dtype=np.int8) if prior is None else np.asarray(prior, dtype=np.int8)
        if known.shape != (n,):
            raise ValueError(f"prior must have one entry per text ({n}), got shape {known.shape}")
        self._prior = np.flatnonzero(known >= 0)
        self._ranked = ranked
        self._fits = fits
        self._fits_salt = "" if fits is None else _fit_salt(self.matrix_, self._query, self.config, ranked)
        self._state: ReviewState | None = None

    def _start(self, state: ReviewState) -> None:
        n = self.matrix_.shape[0]
        self._state = state
        self._rng = np.random.default_rng(self.config.seed)
        self._fallback = np.arange(n) if self._ranked else self._rng.permutation(n)
        self._queue: deque[int] = deque(self._prior.tolist())
        self._batch = self.config.first_batch
        self.fits_ = 0

    def next_screen(self, state: ReviewState) -> int:
        """The next unread document: prior knowledge, then the current batch, then a new fit."""
        if state is not self._state:
            self._start(state)
        labels = state.rank_labels
        while self._queue:
            doc = self._queue.popleft()
            if labels[doc] < 0:
                return doc
        unread = np.flatnonzero(labels < 0)
        if self._query is None and not (labels == 1).any():
            return int(self._fallback[np.flatnonzero(labels[self._fallback] < 0)[0]])
        read = np.flatnonzero(labels >= 0)
        presumed = self._rng.choice(unread, size=min(self.config.presumed, unread.size), replace=False)
        key = None if self._fits is None else self._fit_key(read, labels[read], presumed)
        held = None if key is None else self._fits.get(key)   # type: ignore[union-attr]
        if held is not None and _unread_batch(held, labels, min(self._batch, unread.size)):
            top = np.asarray(held, dtype=np.int64)
        else:   # not held, or not a batch of this state (a damaged cache): fitted
            scores = self._fit_scores(labels, read, unread, presumed)
            top = unread[np.argsort(-scores, kind="stable")[:self._batch]]
            if key is not None:
                self._fits[key] = top.tolist()   # type: ignore[index]
        self._batch += -(-self._batch // 10)
        self._queue.extend(top[1:].tolist())
        return int(top[0])

    def _fit_key(self, read: NDArray[np.int64], y: NDArray[np.int64], presumed: NDArray[np.int64]) -> str:
        """The hash of everything that decides a fit's batch (the module docstring)."""
        h = hashlib.sha256(self._fits_salt.encode())
        for part in (read, y, presumed, np.array([self._batch])):
            h.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
            h.update(b"|")
        return h.hexdigest()

    def _fit_scores(self, labels: NDArray[np.int64], read: NDArray[np.int64], unread: NDArray[np.int64],
                    presumed: NDArray[np.int64]) -> NDArray[np.float64]:
        """Fit on the labels read (and the presumed irrelevant, and the query); score ``unread``."""
        import scipy.sparse as sp
        from threadpoolctl import threadpool_limits

        x = self.matrix_[np.concatenate([read, presumed])]
        y = np.concatenate([labels[read], np.zeros(presumed.size, dtype=np.int64)])
        if self._query is not None:
            x = sp.vstack([x, self._query]).tocsr()
            y = np.append(y, 1)
        if y.min() == y.max():      # one class only (everything presumed away): no model to fit
            return -self._fallback_rank(unread)
        self.fits_ += 1
        # one BLAS thread: the solver's dense steps are vectors of the vocabulary's size, which
        # threads only slow down (a 2,054-step replay: 16.8 s with the default threads on 2 busy
        # cores, 3.3 s with one; docs/review.md), and the scores do not depend on the thread count
        with threadpool_limits(limits=1, user_api="blas"):
            return self._model(y.size).fit(x, y).decision_function(self.matrix_[unread])

    def _fallback_rank(self, docs: NDArray[np.int64]) -> NDArray[np.float64]:
        where = np.empty(self._fallback.size, dtype=np.float64)
        where[self._fallback] = np.arange(self._fallback.size)
        return where[docs]

    def _model(self, n_train: int) -> Any:
        c = 1.0 / (self.config.l2 * n_train)
        weight = "balanced" if self.config.balanced else None
        if self.config.model == "svm":
            from sklearn.svm import LinearSVC

            return LinearSVC(C=c, dual="auto", class_weight=weight, random_state=self.config.seed)
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=c, class_weight=weight, max_iter=1000)
