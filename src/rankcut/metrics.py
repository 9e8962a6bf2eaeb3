"""Truncation metrics for every cut of every list at once: P@k, R@k, F1@k and ±1-DCG@k.

The definitions are those of AttnCut ("Learning to Truncate Ranked Lists", Wu et al.), where a
cut ``k`` keeps the first ``k`` documents of a list and ``y_n = +1`` for a relevant document,
``y_n = −1`` otherwise (unjudged counts as non-relevant):

* ``P@k = (1/k) Σ_{n≤k} δ(y_n = 1)`` (Eq. 8);
* ``R@k = (1/N_D) Σ_{n≤k} δ(y_n = 1)`` (Eq. 7 and 8), ``N_D`` the number of relevant documents
  *in the ranked list* (``recall_base="list"``, the paper's). ``recall_base="judged"`` uses all
  judged relevant documents of the qrels instead (``RankedLists.n_relevant``), which is what
  trec_eval / ir_measures ``SetR`` compute;
* ``F1@k = 2·P@k·R@k / (P@k + R@k)`` (Eq. 8), computed as ``2·TP / (k + N_D)`` — the same number,
  but equal fractions give bit-equal floats, so exact ties stay ties for :func:`oracle_cuts`;
* ``DCG@k = Σ_{n≤k} y_n / log2(n + 1)`` (Eq. 9), the ±1-DCG: a non-relevant document costs as
  much as a relevant one gains, so the curve peaks inside the list.

Conventions (every 0/0 is 0):

* F1 is 0 when ``P + R = 0``;
* recall is 0 when its denominator is 0 (no relevant document in the list, or judged), and F1
  is then 0 too. On Robust04 this is query 672, which counts as a query scoring 0 in every mean
  (this reproduces the dataset's known figures);
* ``k = 0`` (keep nothing) is only defined with ``allow_zero=True``: P = R = F1 = 0 and
  DCG = 0 (the empty sum). The empty cut thus scores like a cut that finds nothing, except for
  ±1-DCG where it beats any prefix of non-relevant documents.

Every curve is a ``[n_queries, max_len + 1]`` array whose column ``k`` is the value of keeping
the first ``k`` documents, NaN where ``k`` exceeds the list's length and at ``k = 0`` unless
``allow_zero``. Lists of different lengths are compared at a fixed depth with
:func:`clip_cuts` / :func:`mean_curve`: a fixed ``k`` beyond a list's length keeps the whole
list (PyTerrier's ``% k``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut._util import check_bool
from rankcut.data.lists import RankedLists
from rankcut.errors import ParamError

__all__ = [
    "METRICS",
    "RECALL_BASES",
    "check_options",
    "clip_cuts",
    "curves",
    "mean_curve",
    "oracle_cuts",
    "pm1_dcg_measure",
    "score_at",
]

METRICS: tuple[str, ...] = ("f1", "precision", "recall", "dcg")
RECALL_BASES: tuple[str, ...] = ("list", "judged")

FloatArray = NDArray[np.float64]

#: positions (query × rank) per block of the per-query computations (:func:`_blocks`): bounds the
#: temporary curves to a few arrays of 32 MB, whatever the number of queries
BLOCK_POSITIONS = 1 << 22


def check_options(metric: Any, recall_base: Any, allow_zero: Any) -> None:
    """Validate the metric options that cutters and the training loop pass through to this
    module (ParamError naming the argument)."""
    if metric not in METRICS:
        raise ParamError("metric", f"metric must be one of {METRICS}, got {metric!r}")
    if recall_base not in RECALL_BASES:
        raise ParamError("recall_base", f"recall_base must be one of {RECALL_BASES}, got {recall_base!r}")
    check_bool(allow_zero, "allow_zero")


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with 0/0 (and x/0) defined as 0."""
    return np.divide(num, den, out=np.zeros(np.broadcast_shapes(num.shape, den.shape)), where=den > 0)


def _true_positives(lists: RankedLists) -> FloatArray:
    """``TP[q, k]``: relevant documents among the first ``k`` of list ``q``, shape ``[Q, L+1]``."""
    labels = lists.labels  # raises without qrels
    tp = np.zeros((len(lists), lists.max_len + 1))
    np.cumsum(labels, axis=1, out=tp[:, 1:])
    return tp


def _recall_denominator(lists: RankedLists, tp: FloatArray, recall_base: str) -> FloatArray:
    """``N_D`` per query: relevant documents in the list, or judged relevant (``"judged"``)."""
    in_list = tp[:, -1]
    if recall_base == "list":
        return in_list
    if lists.n_relevant is None:
        raise ValueError("recall_base='judged' needs n_relevant (lists built from qrels)")
    judged = lists.n_relevant.astype(float)
    short = judged < in_list
    if np.any(short):
        q = lists.qids[int(np.flatnonzero(short)[0])]
        raise ValueError(
            f"query {q!r} lists more relevant documents than its qrels judge relevant "
            "(duplicate doc ids in the run?); recall_base='judged' would exceed 1"
        )
    return judged


def _precision(lists: RankedLists, recall_base: str) -> FloatArray:
    tp = _true_positives(lists)
    return _ratio(tp, np.arange(tp.shape[1], dtype=float)[None, :])


def _recall(lists: RankedLists, recall_base: str) -> FloatArray:
    tp = _true_positives(lists)
    return _ratio(tp, _recall_denominator(lists, tp, recall_base)[:, None])


def _f1(lists: RankedLists, recall_base: str) -> FloatArray:
    tp = _true_positives(lists)
    den = np.arange(tp.shape[1], dtype=float)[None, :] + _recall_denominator(lists, tp, recall_base)[:, None]
    return _ratio(2.0 * tp, den)


def _dcg(lists: RankedLists, recall_base: str) -> FloatArray:
    y = np.where(lists.labels, 1.0, -1.0) * lists.mask
    discount = np.log2(np.arange(2, lists.max_len + 2, dtype=float))
    out = np.zeros((len(lists), lists.max_len + 1))
    np.cumsum(y / discount[None, :], axis=1, out=out[:, 1:])
    return out


_CURVES: dict[str, Callable[[RankedLists, str], FloatArray]] = {
    "f1": _f1,
    "precision": _precision,
    "recall": _recall,
    "dcg": _dcg,
}


def curves(
    lists: RankedLists, metric: str, *, recall_base: str = "list", allow_zero: bool = False
) -> FloatArray:
    """Value of ``metric`` for every cut ``k = 0..max_len`` of every list (Eq. 7–9 of AttnCut).

    :param lists: ranked lists with relevance judgements.
    :param metric: one of :data:`METRICS` (``"dcg"`` is the ±1-DCG of Eq. 9).
    :param recall_base: ``"list"`` — recall over the relevant documents inside the list (the
        paper's ``N_D``); ``"judged"`` — over all judged relevant documents (``n_relevant``).
    :param allow_zero: define the empty cut ``k = 0`` (all metrics 0), else NaN there.
    :returns: array of shape ``[n_queries, max_len + 1]``; column ``k`` keeps the first ``k``
        documents; NaN where ``k`` exceeds the list's length.
    """
    try:
        fn = _CURVES[metric]
    except KeyError:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}") from None
    if recall_base not in RECALL_BASES:
        raise ValueError(f"recall_base must be one of {RECALL_BASES}, got {recall_base!r}")
    out = fn(lists, recall_base)
    k = np.arange(out.shape[1])[None, :]
    out[k > lists.lengths[:, None]] = np.nan
    if not allow_zero:
        out[:, 0] = np.nan
    return out


def _blocks(lists: RankedLists) -> Iterator[tuple[int, RankedLists]]:
    """``(first row, rows)`` of contiguous blocks of about :data:`BLOCK_POSITIONS` positions
    (:meth:`RankedLists.rows`: views, full width). Each query's curve depends on its own row only,
    so a result assembled block by block is the whole-matrix result, while the temporary curves
    (a few float arrays of the block's shape) stay small whatever the number of queries."""
    step = max(1, BLOCK_POSITIONS // max(lists.max_len + 1, 1))
    if step >= len(lists):
        yield 0, lists
        return
    for start in range(0, len(lists), step):
        yield start, lists.rows(start, start + step)


def score_at(
    lists: RankedLists,
    cuts: Any,
    metric: str,
    *,
    recall_base: str = "list",
    allow_zero: bool = False,
) -> FloatArray:
    """Per-query value of ``metric`` at one cut per query, shape ``[n_queries]``.

    ``cuts`` are validated by :meth:`RankedLists.check_cuts` (``1 ≤ k ≤ length``, or ``0 ≤ k``
    with ``allow_zero``).
    """
    k = lists.check_cuts(cuts, allow_zero=allow_zero)
    out = np.empty(len(lists))
    for start, part in _blocks(lists):
        values = curves(part, metric, recall_base=recall_base, allow_zero=allow_zero)
        out[start:start + len(part)] = values[np.arange(len(part)), k[start:start + len(part)]]
    return out


def oracle_cuts(
    lists: RankedLists, metric: str, *, recall_base: str = "list", allow_zero: bool = False
) -> NDArray[np.int64]:
    """Per-query cut maximising ``metric`` (the "Oracle" of AttnCut, Table 3); ties → smallest k."""
    out = np.empty(len(lists), dtype=np.int64)
    for start, part in _blocks(lists):
        values = curves(part, metric, recall_base=recall_base, allow_zero=allow_zero)
        out[start:start + len(part)] = np.where(np.isnan(values), -np.inf, values).argmax(axis=1)
    return out


def clip_cuts(lists: RankedLists, k: int) -> NDArray[np.int64]:
    """The fixed cut ``k`` for every query, clipped to each list's length (PyTerrier's ``% k``).

    A list shorter than ``k`` is kept whole. ``k = 0`` gives empty cuts, which only
    ``allow_zero=True`` accepts downstream.
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"k must be an integer, got {k!r}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    longest = int(lists.lengths.max(initial=0))   # a k past every list keeps each whole, however large
    return np.minimum(min(int(k), longest), lists.lengths).astype(np.int64)


def mean_curve(
    lists: RankedLists, metric: str, *, recall_base: str = "list", allow_zero: bool = False
) -> FloatArray:
    """Mean over queries of ``metric`` at each fixed cut ``k = 0..max_len``, shape ``[max_len + 1]``.

    Entry ``k`` is the mean of :func:`score_at` at :func:`clip_cuts` ``(lists, k)``: a list
    shorter than ``k`` contributes its whole-list value, so every query counts at every ``k``
    (entry ``k`` is the Fixed-k baseline of AttnCut's Table 3). Entry 0 is NaN unless
    ``allow_zero``.
    """
    total: FloatArray | None = None
    for _, part in _blocks(lists):
        values = curves(part, metric, recall_base=recall_base, allow_zero=allow_zero)
        k = np.minimum(np.arange(values.shape[1])[None, :], part.lengths[:, None])
        taken = np.take_along_axis(values, k, axis=1)
        # the running sum enters as the first row: numpy adds the rows of an axis-0 sum one after
        # another, so the blocks give the bits of one sum over all rows
        total = np.add.reduce(taken if total is None else np.vstack([total[None, :], taken]), axis=0)
    assert total is not None  # RankedLists hold at least one query
    return total / len(lists)


def pm1_dcg_measure(cutoff: int | None = None, *, rel: int = 1) -> Any:
    """The ±1-DCG of Eq. 9 of AttnCut as an ir_measures measure (``ir_measures.define``).

    Documents are ordered as trec_eval does (score descending, then doc_id descending) — the
    ``ordering="trec_eval"`` of :mod:`rankcut.data.lists` — and the first ``cutoff`` are kept
    (all when None). A document is relevant when its qrels relevance is ``>= rel``; unjudged
    documents count as non-relevant. The cutoff is applied here, after the tie-break, because
    ir_measures' own cutoff truncates before any tie-break.

    Queries are those of trec_eval / ``SetP``: a run query absent from the qrels is not
    evaluated (``define_byquery`` would score it with every document non-relevant), and a qrels
    query absent from the run gets the empty list's value 0 (ir_measures' default).

    Usage: ``ir_measures.calc_aggregate([pm1_dcg_measure(10)], qrels, run)``, with ``qrels``
    kept to the run's queries when the run holds a subset of them (a test split): otherwise the
    aggregate averages over every qrels query, each one the run lacks counted 0 (as trec_eval's
    ``-c`` does), where ``rankcut evaluate`` scores the run's queries.
    """
    if cutoff is not None and (isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1):
        raise ValueError(f"cutoff must be a positive integer or None, got {cutoff!r}")
    try:
        import ir_measures  # lazy: ir_measures and pandas are slow to import for the command line
    except ImportError as exc:
        raise ImportError("pm1_dcg_measure needs ir_measures: pip install 'rankcut[eval]'") from exc

    def one_query(relevant: set[str], run: Any) -> float:
        # trec_eval's order: scores as 32-bit floats (as it stores them), ties by doc_id descending
        run = run.assign(score=run["score"].astype(np.float32))
        ranked = run.sort_values(["score", "doc_id"], ascending=False)["doc_id"].to_numpy()[:cutoff]
        y = np.array([1.0 if d in relevant else -1.0 for d in ranked])
        return float(np.sum(y / np.log2(np.arange(2, len(y) + 2))))

    def impl(qrels: Any, run: Any) -> Iterator[tuple[str, float]]:
        relevant = {
            str(q): set(g.loc[g["relevance"] >= rel, "doc_id"]) for q, g in qrels.groupby("query_id")
        }
        for q, g in run.groupby("query_id"):
            if str(q) in relevant:
                yield str(q), one_query(relevant[str(q)], g)

    name = "PM1DCG" if cutoff is None else f"PM1DCG@{cutoff}"
    return ir_measures.define(
        impl, name=name, support_cutoff=False,
        pretty_name="±1-DCG", short_desc="DCG with gain +1 (relevant) / -1 (other), Eq. 9 of AttnCut",
    )
