"""Extreme-value "Surprise" cutter: keep the documents whose score is surprising under a
generalised Pareto tail.

After Bahri, Zheng, Tay, Metzler & Tomkins, "Surprise: Result List Truncation via Extreme Value
Theory" (arXiv:2010.09797): a ranked list is the top of the query's score distribution over the
whole collection, so by the Pickands–Balkema–de Haan theorem its scores in excess of a high
threshold follow a generalised Pareto distribution (GPD). A document whose score is improbably
high under that tail — high *surprise* — is kept. This is a simple version, not a
re-implementation of the paper's exact procedure. Per list of ``n`` scores ``s_1 ≥ … ≥ s_n``:

1. **Peaks over threshold.** The threshold is the lowest listed score, ``u = s_n``; the
   exceedances are ``y_i = s_i − u ≥ 0`` (the whole list is the tail sample).
2. **GPD fit** ``S(y) = P(Y > y) = (1 + ξ y / σ)^(−1/ξ)`` (``exp(−y/σ)`` at ξ = 0) by
   probability-weighted moments (Hosking & Wallis, "Parameter and quantile estimation for the
   generalized Pareto distribution", Technometrics 1987): with the exceedances sorted
   ascending, ``a₀ = mean y``, ``a₁ = (1/n) Σ_i (1 − (i − 0.35)/n) y_(i)``,
   ``ξ = 2 − a₀ / (a₀ − 2a₁)``, ``σ = 2 a₀ a₁ / (a₀ − 2a₁)``. Closed form, so it is vectorised
   over all lists. ξ is clipped to [−``XI_BOUND``, ``XI_BOUND``], the range where the PWM
   estimator is reliable (it needs ξ < 1/2), and σ is then re-derived as ``a₀(1 − ξ)`` so that
   the fitted mean stays the sample mean.
3. **Surprise** of document ``i``: ``−log S(y_i)`` in nats (infinite beyond a bounded tail's
   end point). It does not increase down the list.
4. **Cut.** Keep the leading documents whose surprise is at least ``threshold``; at least one
   unless ``allow_zero``.
5. **Threshold.** Given (``surprise:3.0``), the cutter is unsupervised. Left None, :meth:`fit`
   picks it on training lists: among the ``n_grid`` quantiles of all training surprises (plus
   +∞), the one whose cuts maximise the mean training metric; ties → the highest threshold (the
   fewest documents kept).
6. **Degenerate lists** — fewer than ``min_docs`` documents or all scores equal — are kept whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rankcut import metrics
from rankcut._util import check_int
from rankcut.cutters.base import Cutter, check_float, check_score_arrays, register
from rankcut.data.lists import RankedLists

__all__ = ["GPDFit", "Surprise", "fit_gpd_tail"]

#: the GPD shape ξ is clipped to [−XI_BOUND, XI_BOUND] (PWM needs ξ < 1/2)
XI_BOUND = 0.45


@dataclass(frozen=True)
class GPDFit:
    """Per-list GPD tail fits (arrays over ``n_queries``).

    :param shape: ξ, the GPD shape (NaN on fallback lists).
    :param scale: σ, in score units.
    :param threshold: ``u``, the lowest listed score (origin of the exceedances).
    :param surprise: ``[n_queries, max_len]`` ``−log S(s_i − u)`` in nats (NaN at padding and
        on fallback lists).
    :param fallback: lists not fitted (fewer than ``min_docs`` documents or all scores equal).
    """

    shape: NDArray[np.float64]
    scale: NDArray[np.float64]
    threshold: NDArray[np.float64]
    surprise: NDArray[np.float64]
    fallback: NDArray[np.bool_]


def fit_gpd_tail(scores: NDArray[np.float64], mask: NDArray[np.bool_], *, min_docs: int = 10) -> GPDFit:
    """Fit a GPD to each list's exceedances over its lowest score and score every document's
    surprise (module docstring, steps 1–3 and 6).

    :param scores: ``[n_queries, max_len]`` scores, each row sorted descending over its mask.
    :param mask: ``[n_queries, max_len]`` True where a document is listed.
    :param min_docs: lists shorter than this are not fitted (≥ 3).
    """
    min_docs = check_int(min_docs, "min_docs", low=3)
    scores, mask = check_score_arrays(scores, mask)
    n = mask.sum(axis=1)
    u = np.where(mask, scores, np.inf).min(axis=1)
    top = np.where(mask, scores, -np.inf).max(axis=1)
    fallback = (n < min_docs) | ~(top > u)
    ok = ~fallback
    nf = np.where(ok, n, 1).astype(float)

    y = np.where(mask, scores - u[:, None], np.nan)
    y_sorted = np.sort(y, axis=1)  # ascending, NaN (padding) last
    i = np.arange(1, y.shape[1] + 1, dtype=float)[None, :]
    weight = np.where(i <= n[:, None], 1.0 - (i - 0.35) / nf[:, None], 0.0)
    a0 = np.nansum(y_sorted, axis=1) / nf
    a1 = np.nansum(weight * np.nan_to_num(y_sorted), axis=1) / nf
    # d > 0 on every fitted list: with y ascending, the weights 2(i − 0.35)/n − 1 ascend and sum
    # to 0.3, so d = (1/n) Σ (2(i − 0.35)/n − 1) y_(i) ≥ 0.3 · mean(y) / n > 0 (Chebyshev's sum
    # inequality)
    d = np.where(ok, a0 - 2.0 * a1, 1.0)
    xi = np.clip(2.0 - a0 / d, -XI_BOUND, XI_BOUND)
    # σ = a₀(1 − ξ) is the PWM σ = 2a₀a₁/d when ξ is not clipped, and keeps the GPD mean
    # σ / (1 − ξ) equal to the sample mean when it is
    sigma = a0 * (1.0 - xi)

    from scipy.stats import genpareto

    xi_c, sig_c = xi[:, None], np.where(ok, sigma, 1.0)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        # −log S(y) of the GPD: log(1 + ξy/σ)/ξ, y/σ at ξ = 0, ∞ beyond a bounded tail's end point
        surprise = -genpareto.logsf(np.where(mask, y, 0.0), xi_c, scale=sig_c)
    surprise = np.where(mask & ok[:, None], surprise, np.nan)
    return GPDFit(
        shape=np.where(ok, xi, np.nan),
        scale=np.where(ok, sigma, np.nan),
        threshold=np.where(ok, u, np.nan),
        surprise=surprise,
        fallback=fallback,
    )


def _cuts_at(surprise: NDArray[np.float64], lengths: NDArray[np.int64], fallback: NDArray[np.bool_],
             thresholds: NDArray[np.float64], allow_zero: bool) -> NDArray[np.int64]:
    """Cuts ``[n_queries, n_thresholds]``: the number of documents with surprise ≥ each threshold.

    Surprise does not increase down a list (scores descend and ``−log S`` increases with the
    score), so these documents are a prefix of the list.
    """
    cuts = np.empty((len(lengths), len(thresholds)), dtype=np.int64)
    for q, n in enumerate(lengths):
        ascending = surprise[q, :n][::-1]
        cuts[q] = n - np.searchsorted(ascending, thresholds, side="left")
    cuts[fallback] = lengths[fallback, None]
    return cuts if allow_zero else np.maximum(cuts, 1)


@register("surprise")
class Surprise(Cutter):
    """Keep the leading documents whose GPD-tail surprise is at least ``threshold``.

    A simple version of Bahri et al.'s Surprise scoring; see the module docstring for the exact
    fit and rule.

    :param threshold: surprise threshold in nats, ``>= 0``, +inf allowed (spec param:
        ``surprise:3.0``); None (default) learns it in :meth:`fit` by maximising the mean training ``metric``.
    :param metric: metric maximised when learning the threshold (one of
        :data:`rankcut.metrics.METRICS`).
    :param recall_base: ``"list"`` or ``"judged"`` (see :func:`rankcut.metrics.curves`).
    :param allow_zero: whether a list with no surprising document is cut at ``k = 0``.
    :param min_docs: lists shorter than this are kept whole.
    :param n_grid: number of candidate thresholds (quantiles of the training surprises).

    Learned attributes (only when ``threshold`` is None): ``threshold_``, ``grid_`` (candidate
    thresholds), ``curve_`` (mean training metric per candidate), ``score_``.
    """

    reads_scores = True

    spec_param = ("threshold", float)

    def __init__(
        self,
        *,
        threshold: float | None = None,
        metric: str = "f1",
        recall_base: str = "list",
        allow_zero: bool = False,
        min_docs: int = 10,
        n_grid: int = 512,
    ) -> None:
        self.threshold = threshold
        self.metric = metric
        self.recall_base = recall_base
        self.allow_zero = allow_zero
        self.min_docs = min_docs
        self.n_grid = n_grid

    def _validate_params(self) -> None:
        if self.threshold is not None:
            # +inf keeps one document (none with allow_zero); a surprise −log S is never below 0,
            # so 0 keeps the whole list and a negative threshold would only be another name for 0
            if check_float(self.threshold, "threshold", allow_inf=True) < 0:
                raise ValueError(f"threshold must be >= 0 (a surprise in nats; 0 keeps every document), "
                                 f"got {self.threshold!r}")
        metrics.check_options(self.metric, self.recall_base, self.allow_zero)
        check_int(self.min_docs, "min_docs", low=3)
        check_int(self.n_grid, "n_grid", low=2)

    def requires_fit(self) -> bool:
        return self.threshold is None

    def fit_tail(self, lists: RankedLists) -> GPDFit:
        """The per-list GPD fits this cutter would use on ``lists``."""
        return fit_gpd_tail(lists.scores, lists.mask, min_docs=self.min_docs)

    def _fit(self, lists: RankedLists) -> None:
        if self.threshold is not None:
            return  # nothing to learn
        if lists.gains is None:
            raise ValueError("surprise fit without a threshold needs relevance judgements (qrels)")
        tail = self.fit_tail(lists)
        finite = tail.surprise[np.isfinite(tail.surprise)]
        grid = np.quantile(finite, np.linspace(0.0, 1.0, self.n_grid)) if finite.size else np.array([])
        grid = np.append(np.unique(grid), np.inf)
        cuts = _cuts_at(tail.surprise, lists.lengths, tail.fallback, grid, self.allow_zero)
        values = metrics.curves(lists, self.metric, recall_base=self.recall_base, allow_zero=self.allow_zero)
        mean = np.take_along_axis(values, cuts, axis=1).mean(axis=0)
        best = int(len(grid) - 1 - np.argmax(mean[::-1]))  # ties → the highest threshold
        self.grid_ = grid
        self.curve_ = mean
        self.threshold_ = float(grid[best])
        self.score_ = float(mean[best])

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        tau = self.threshold if self.threshold is not None else self.threshold_
        tail = self.fit_tail(lists)
        cuts = _cuts_at(tail.surprise, lists.lengths, tail.fallback, np.array([float(tau)]), self.allow_zero)
        return cuts[:, 0]
