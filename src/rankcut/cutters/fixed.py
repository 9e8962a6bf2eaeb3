"""The three traditional baselines of AttnCut (Wu et al., AAAI 2021, "Baselines"): Oracle, Fixed-k
and Greedy-k.

* ``oracle`` — per query, the cut that maximises the metric on the list's *own* labels: an upper
  bound on what any cutter can reach, not a method (it reads the test labels).
* ``fixed-k`` — the same depth ``k`` for every query ("Fixed-k (5)", "(10)", "(50)" in Table 3).
* ``greedy-k`` — the single ``k`` that maximises the mean metric over the training queries.

Metric options (``metric``, ``recall_base``, ``allow_zero``) are passed through to
:mod:`rankcut.metrics`; the metrics are those of Eq. 8 (F1, precision, recall) and Eq. 9 (±1-DCG).
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import NDArray

from rankcut import metrics
from rankcut._util import check_int
from rankcut.cutters.base import Cutter, register
from rankcut.data.lists import RankedLists

__all__ = ["FixedK", "GreedyK", "Oracle"]

def _need_labels(lists: RankedLists, who: str) -> None:
    if lists.gains is None:
        raise ValueError(f"{who} needs relevance judgements: build the lists with qrels")


@register("oracle")
class Oracle(Cutter):
    """Per-query best cut on the lists' own labels (AttnCut's "Oracle" baseline).

    Needs relevance judgements **at predict time**: it is an upper bound for evaluation, never a
    deployable cutter. Ties go to the smallest ``k`` (:func:`rankcut.metrics.oracle_cuts`).

    :param metric: one of :data:`rankcut.metrics.METRICS` (spec param: ``oracle:dcg``).
    :param recall_base: ``"list"`` (relevant documents inside the list, the paper's Eq. 8) or
        ``"judged"`` (all judged relevant documents).
    :param allow_zero: whether keeping no document (``k = 0``) is a candidate.
    """

    spec_param = ("metric", str)

    def __init__(self, *, metric: str = "f1", recall_base: str = "list", allow_zero: bool = False) -> None:
        self.metric = metric
        self.recall_base = recall_base
        self.allow_zero = allow_zero

    def _validate_params(self) -> None:
        metrics.check_options(self.metric, self.recall_base, self.allow_zero)

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        _need_labels(lists, "the oracle cutter (it reads the labels of the lists it cuts)")
        return metrics.oracle_cuts(
            lists, self.metric, recall_base=self.recall_base, allow_zero=self.allow_zero
        )


@register("fixed-k")
class FixedK(Cutter):
    """Keep the top ``k`` documents of every list (AttnCut's "Fixed-k"); shorter lists are kept
    whole, and ``predict`` says so once per call with a :class:`UserWarning` (``fixed-k:1000`` on
    lists of 300 documents keeps them whole: it cuts nothing).

    :param k: depth, an integer ≥ 1 (spec param: ``fixed-k:20``).
    """

    spec_param = ("k", int)

    def __init__(self, *, k: int = 10) -> None:
        self.k = k

    def _validate_params(self) -> None:
        check_int(self.k, "k", low=1)

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        return _kept_whole(lists, int(self.k), f"fixed-k: k={int(self.k)}")


@register("greedy-k")
class GreedyK(Cutter):
    """One depth for all queries, chosen on training lists (AttnCut's "Greedy-k").

    ``fit`` picks ``k_ = argmax_k mean_q metric_q(min(k, length_q))`` over ``k = 1 … max length``
    (``k = 0`` too with ``allow_zero``); ties go to the smallest ``k``. ``predict`` then acts as
    ``fixed-k:k_``, saying so when ``k_`` exceeds the length of a list (kept whole).

    :param metric: one of :data:`rankcut.metrics.METRICS` (spec param: ``greedy-k:dcg``).
    :param recall_base: ``"list"`` or ``"judged"`` (see :func:`rankcut.metrics.curves`).
    :param allow_zero: whether ``k = 0`` is a candidate.

    Learned attributes: ``k_`` (the depth), ``curve_`` (mean training metric per ``k``, index
    ``k``; NaN where ``k`` is not a candidate), ``score_`` (the mean training metric at ``k_``).
    """

    spec_param = ("metric", str)

    def __init__(self, *, metric: str = "f1", recall_base: str = "list", allow_zero: bool = False) -> None:
        self.metric = metric
        self.recall_base = recall_base
        self.allow_zero = allow_zero

    def _validate_params(self) -> None:
        metrics.check_options(self.metric, self.recall_base, self.allow_zero)

    def requires_fit(self) -> bool:
        return True

    def _fit(self, lists: RankedLists) -> None:
        _need_labels(lists, "greedy-k fit")
        # mean over queries at each fixed k, a list shorter than k counting whole (Fixed-k's rule);
        # NaN only in column 0 without allow_zero
        mean = metrics.mean_curve(
            lists, self.metric, recall_base=self.recall_base, allow_zero=self.allow_zero
        )
        self.curve_ = mean
        self.k_ = int(np.nanargmax(mean))  # first maximum: ties → smallest k
        self.score_ = float(mean[self.k_])

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        return _kept_whole(lists, self.k_, f"greedy-k: the depth learned, k={self.k_},")


def _kept_whole(lists: RankedLists, k: int, what: str) -> NDArray[np.int64]:
    """The cut ``k`` of every list (:func:`~rankcut.metrics.clip_cuts`), saying once with a
    :class:`UserWarning` how many lists are shorter and kept whole (``what`` names the depth): a
    depth learned on lists of 1,000 documents keeps lists of 100 whole, and cuts nothing."""
    short = int(np.count_nonzero(lists.lengths < k))
    if short:
        warnings.warn(f"{what} exceeds the length of {short} of {len(lists)} lists (the longest has "
                      f"{int(lists.lengths.max())} documents); they are kept whole", stacklevel=4)
    return metrics.clip_cuts(lists, k)
