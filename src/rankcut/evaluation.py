"""Evaluate cutters the way AttnCut's Table 3 does: per-query F1@k and ±1-DCG@k, the mean cut, and
paired significance against a baseline.

Protocol (Wu et al., "Learning to Truncate Ranked Lists", AAAI 2021, "Experiments"): every cutter
that learns is fitted on training queries and cuts held-out test queries; the Oracle cuts each
test list on its own labels (an upper bound, not a method); F1@k is Eq. 8 and DCG@k the ±1-DCG
of Eq. 9 (:mod:`rankcut.metrics`). "For methods that optimize F1@k or DCG@k, we report the
performance of the model when it is optimized specifically for that metric": with
``fit_metric="each"`` (the default) a cutter whose spec leaves its ``metric`` open (``oracle``,
``greedy-k``, ``surprise``, and the neural cutters, each trained once per metric) is built and
fitted once per reported metric, and each metric's
column reports its own variant — Greedy-k fitted for F1 in the F1 column, for DCG in the DCG
column. ``fit_metric="f1"`` (or ``"dcg"``) fits every such cutter once, on that metric, and
reports both metrics of the same cuts.

Three ways to split queries, never selecting anything on the test queries:

* a separate training set — ``train=RankedLists`` (e.g. Robust04's ``bm25.train.run``);
* an explicit split of ``lists`` — ``train=[query ids]`` (and optionally ``test_queries``);
* seeded k-fold cross-validation over the queries of ``lists`` — ``folds=5, seed=0``: queries
  are permuted by ``numpy.random.default_rng(seed)`` and dealt into ``folds`` parts of near-equal
  size (``numpy.array_split``); every cutter is fitted on the other parts and cuts the held-out
  one.

Cutters other than those in :data:`READS_TEST_LABELS` cut test lists from which the relevance
judgements have been removed, so no test label can reach them; fitting sees the training lists
only. Significance: every method other than the baseline (and other than the label-reading
Oracle) is compared with the baseline per metric on the same queries by
:func:`rankcut.significance.paired_tests` (Wilcoxon or paired t), Holm-adjusted across methods.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankcut import metrics as _metrics
from rankcut._util import check_int, jsonable
from rankcut._words import count, id_list
from rankcut.cutters import Cutter, clone, cutter_class, make_cutter
from rankcut.data.io import open_text
from rankcut.data.letor import score_feature_of
from rankcut.data.lists import RankedLists
from rankcut.data.trec import MissingQueriesWarning
from rankcut.parallel import Executor, InProcess, cut_shard, shard_bounds

if TYPE_CHECKING:  # rankcut.significance loads scipy, which `rankcut cut` does not need
    from rankcut.significance import PairedTest

__all__ = [
    "DEFAULT_METRICS",
    "FIT_METRICS",
    "READS_TEST_LABELS",
    "Evaluation",
    "MethodResult",
    "check_specs",
    "evaluate_cutters",
    "evaluated_queries",
    "format_table",
    "read_query_ids",
    "seen_queries",
    "with_trained",
]

#: the columns of AttnCut's Table 3: F1@k (Eq. 8) and ±1-DCG@k (Eq. 9)
DEFAULT_METRICS: tuple[str, ...] = ("f1", "dcg")
#: ``"each"``: fit metric-aware cutters once per reported metric (the paper's protocol)
FIT_METRICS: tuple[str, ...] = ("each", *_metrics.METRICS)
#: cutters that read the labels of the lists they cut (upper bounds, not methods): they get the
#: test labels and are left out of the significance tests
READS_TEST_LABELS: frozenset[str] = frozenset({"oracle"})

_METRIC_LABELS = {"f1": "F1@k", "precision": "P@k", "recall": "R@k", "dcg": "DCG@k"}
_BETTER, _WORSE = "†", "‡"
_ORDERING_RULES = {
    "rank": "score descending, ties in the run's rank order, then doc_id descending",
    "trec_eval": "score descending as 32-bit floats, ties by doc_id descending (trec_eval's rule)",
}
_MAX_IDS_SHOWN = 20
_INSTALL_HINT = "Evaluation.to_frame needs pandas: pip install 'rankcut[eval]'"


# --------------------------------------------------------------------------- split files
def read_query_ids(path: str | os.PathLike[str], *, key: str | None = None) -> tuple[str, ...]:
    """Query ids of a split file.

    Two formats:

    * text: one query id per line; blank lines are skipped;
    * JSON (``.json``): a list of ids, or an object of named lists chosen by ``key`` — e.g.
      ``read_query_ids("robust04/splits.json", key="bm25.test")`` (keys ``bm25.train``,
      ``bm25.test``, ``drmm.train``, ``drmm.test``). Integer ids are read as strings.

    :raises ValueError: naming the file (and line) for an id with whitespace, a repeated id, an
        empty list, a missing or unknown ``key``, or a ``key`` given for a text file.
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        return _ids_from_json(p, key)
    if key is not None:
        raise ValueError(f"{p}: key={key!r} selects a list of a JSON file; this is a text file "
                         "of one query id per line")
    ids: list[str] = []
    first: dict[str, int] = {}
    with open_text(p) as (_, f):
        for lineno, line in enumerate(f, 1):
            qid = line.strip()
            if not qid:
                continue
            if len(qid.split()) != 1:
                raise ValueError(f"{p}, line {lineno}: expected one query id per line, got {line.rstrip()!r}")
            seen = first.setdefault(qid, lineno)
            if seen != lineno:
                raise ValueError(f"{p}, line {lineno}: query id {qid!r} repeats line {seen}")
            ids.append(qid)
    if not ids:
        raise ValueError(f"{p}: no query id in the file")
    return tuple(ids)


def _repeated(ids: Sequence[str]) -> list[str]:
    """The ids listed more than once, sorted (one pass: ``ids.count`` per id was O(Q²))."""
    return sorted(q for q, n in Counter(ids).items() if n > 1)


def _ids_from_json(p: Path, key: str | None) -> tuple[str, ...]:
    with open_text(p) as (_, f):
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p}: not valid JSON ({exc})") from None
    where = str(p)
    if isinstance(data, dict):
        if key is None:
            raise ValueError(f"{p}: a JSON object of several splits; choose one with a key: "
                             f"{', '.join(map(str, data))}")
        if key not in data:
            raise ValueError(f"{p}: no split {key!r}; keys: {', '.join(map(str, data))}")
        data, where = data[key], f"{p} [{key}]"
    elif key is not None:
        raise ValueError(f"{p}: key={key!r} given, but the file holds a list, not an object of splits")
    if not isinstance(data, list):
        raise ValueError(f"{where}: expected a list of query ids, got {type(data).__name__}")
    ids: list[str] = []
    for item in data:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise ValueError(f"{where}: query ids must be strings or integers, got {item!r}")
        qid = str(item).strip()
        if not qid or len(qid.split()) != 1:
            raise ValueError(f"{where}: query id {item!r} is empty or contains whitespace")
        ids.append(qid)
    if not ids:
        raise ValueError(f"{where}: no query id")
    twice = _repeated(ids)
    if twice:
        raise ValueError(f"{where}: query ids listed twice: {', '.join(map(repr, twice))}")
    return tuple(ids)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, repr=False)
class MethodResult:
    """One cutter spec evaluated on the test queries.

    :param method: the spec, e.g. ``"greedy-k"`` or ``"fixed-k:10"``.
    :param cuts: ``{metric: int array [n_queries]}``, the cut used in that metric's column
        (different per metric only for cutters fitted per metric).
    :param scores: ``{metric: float array [n_queries]}``, the metric at that cut.
    :param fitted: ``{metric: [per fold {"fold": i, learned scalar attributes...}]}`` — what the
        cutter learned (e.g. Greedy-k's ``k_``); empty lists for cutters that learn nothing.
    :param params: ``{metric: constructor keyword arguments of the cutter used}``.
    """

    method: str
    cuts: dict[str, NDArray[np.int64]]
    scores: dict[str, NDArray[np.float64]]
    fitted: dict[str, list[dict[str, Any]]]
    params: dict[str, dict[str, Any]]

    def mean(self, metric: str) -> float:
        return float(self.scores[metric].mean())

    def mean_k(self, metric: str) -> float:
        return float(self.cuts[metric].mean())

    def __repr__(self) -> str:
        n = len(next(iter(self.cuts.values()))) if self.cuts else 0
        means = ", ".join(f"{m} {self.mean(m):.4f} at mean k {self.mean_k(m):.1f}" for m in self.scores)
        return f"MethodResult({self.method!r}, {count(n, 'query', 'queries')}, {means})"


@dataclass(frozen=True, repr=False)
class Evaluation:
    """The outcome of :func:`evaluate_cutters`.

    :param qids: the test queries, in the order of the evaluated lists.
    :param lengths: the length of each test query's list, shape ``[n_queries]``.
    :param fold: per test query, the cross-validation fold that held it out (``-1`` without
        cross-validation), shape ``[n_queries]``.
    :param metrics: reported metrics (columns), e.g. ``("f1", "dcg")``.
    :param methods: ``{spec: MethodResult}`` in the order the specs were given.
    :param tests: ``{metric: {method: PairedTest}}`` against ``protocol["baseline"]`` (empty
        without a baseline).
    :param protocol: how the numbers were produced: ``mode`` (``"train"``, ``"split"``, ``"cv"``,
        ``"none"``), ``folds``, ``seed``, ``n_train``, ``n_test``, ``fit_metric``,
        ``recall_base``, ``allow_zero``, ``ordering``, ``threshold``, ``no_relevant`` (the test
        queries whose list holds no relevant document), ``baseline``, ``test``, ``alpha``,
        ``description``.

    ``str(evaluation)`` and :meth:`summary` give the table of :func:`format_table`;
    :meth:`to_frame` the same rows as a pandas DataFrame.
    """

    qids: tuple[str, ...]
    lengths: NDArray[np.int64]
    fold: NDArray[np.int64]
    metrics: tuple[str, ...]
    methods: dict[str, MethodResult]
    tests: dict[str, dict[str, PairedTest]] = field(default_factory=dict)
    protocol: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        base = self.protocol.get("baseline")
        return (f"Evaluation({count(len(self.qids), 'test query', 'test queries')}, "
                f"mode {self.protocol.get('mode')!r}, methods {list(self.methods)}, "
                f"metrics {list(self.metrics)}, baseline {base!r})")

    def __str__(self) -> str:
        return format_table(self)

    def summary(self, *, markdown: bool = False, digits: int = 4) -> str:
        """The table in the shape of AttnCut's Table 3, with its legend (:func:`format_table`)."""
        return format_table(self, markdown=markdown, digits=digits)

    def to_frame(self) -> Any:
        """The table as a pandas DataFrame, one row per method (index ``method``).

        Columns per metric ``m``: ``m`` (the mean over the test queries) and ``m_k`` (the mean
        cut behind it); with a baseline also ``m_p`` (Holm-adjusted p-value against the baseline,
        NaN where no test was run) and ``m_marker`` (``†`` / ``‡`` / ``""``).

        :raises ImportError: when pandas is missing (the message names ``rankcut[eval]``).
        """
        try:
            import pandas as pd  # lazy: pandas is an optional extra
        except ImportError as exc:
            raise ImportError(_INSTALL_HINT) from exc
        rows = []
        for name, res in self.methods.items():
            row: dict[str, Any] = {"method": name}
            for m in self.metrics:
                row[m], row[f"{m}_k"] = res.mean(m), res.mean_k(m)
                if self.protocol.get("baseline") is not None:
                    t = self.tests.get(m, {}).get(name)
                    row[f"{m}_p"] = np.nan if t is None else t.p_adjusted
                    row[f"{m}_marker"] = self.marker(name, m)
            rows.append(row)
        return pd.DataFrame(rows).set_index("method")

    def marker(self, method: str, metric: str) -> str:
        """``†`` significantly better than the baseline, ``‡`` significantly worse, else ``""``."""
        t = self.tests.get(metric, {}).get(method)
        if t is None or not t.significant:
            return ""
        return _BETTER if t.direction == "better" else _WORSE if t.direction == "worse" else ""

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: ``protocol``, ``summary`` (one row per method) and ``per_query``.

        Every summary row holds, per metric, ``mean``, ``mean_k``, ``marker``, the ``test``
        against the baseline (or None), ``fitted`` and ``params``. Non-finite floats are written
        as the strings ``"inf"``, ``"-inf"``, ``"nan"`` so the output is strict JSON.
        """
        rows = []
        for name, res in self.methods.items():
            row: dict[str, Any] = {"method": name}
            for m in self.metrics:
                t = self.tests.get(m, {}).get(name)
                row[m] = {
                    "mean": res.mean(m),
                    "mean_k": res.mean_k(m),
                    "marker": self.marker(name, m),
                    "test": None if t is None else vars(t).copy(),
                    "fitted": res.fitted[m],
                    "params": res.params[m],
                }
            rows.append(row)
        out: dict[str, Any] = {"protocol": self.protocol, "summary": rows}
        if per_query:
            out["per_query"] = {
                "qids": list(self.qids),
                "length": self.lengths.tolist(),
                "fold": self.fold.tolist(),
                "methods": {
                    name: {m: {"k": res.cuts[m].tolist(), "score": res.scores[m].tolist()}
                           for m in self.metrics}
                    for name, res in self.methods.items()
                },
            }
        return jsonable(out)


# --------------------------------------------------------------------------- evaluation
def check_specs(specs: Sequence[str], *, baseline: str | None = None) -> list[str]:
    """Validate cutter specs without loading any data, as :func:`evaluate_cutters` does first.

    Every spec is built once with :func:`rankcut.cutters.make_cutter`, so an unknown cutter or a
    bad parameter fails here.

    :returns: the specs with surrounding spaces removed, in order.
    :raises ValueError: for one string instead of a sequence, no spec, an empty or non-string
        spec (naming its position), a bad spec, a spec listed twice, or a ``baseline`` that is
        not among the specs.
    """
    if isinstance(specs, str):
        raise ValueError("specs must be a sequence of cutter specs, not one string")
    names: list[str] = []
    made: dict[str, str] = {}   # each cutter's repr (its class and every parameter) → its spec
    for i, spec in enumerate(specs, 1):
        if not isinstance(spec, str):
            raise ValueError(f"cutter spec {i} must be a string 'NAME[:PARAM]', got {spec!r}")
        if not spec.strip():
            raise ValueError(f"cutter spec {i} is empty")
        cutter = repr(make_cutter(spec))  # unknown names and bad parameters fail here
        if spec.strip() in names:
            raise ValueError(f"cutter {spec.strip()!r} is listed twice")
        if cutter in made:   # fixed-k:10 and fixed-k:010, oracle and oracle:f1: one cutter, two rows
            raise ValueError(f"cutter {spec.strip()!r} is {made[cutter]!r} again ({cutter}): list it once")
        made[cutter] = spec.strip()
        names.append(spec.strip())
    if not names:
        raise ValueError("specs: give at least one cutter")
    if baseline is not None and baseline.strip() not in names:
        try:   # fixed-k:10 for a listed fixed-k:k=10
            same = made.get(repr(make_cutter(baseline)))
        except ValueError:   # not a cutter spec (a model's row, a typo): named as it is
            same = None
        raise ValueError(f"baseline {baseline!r} is {same!r} among the cutters: give it as listed" if same
                         else f"baseline {baseline!r} is not among the cutters {names}")
    return names


@dataclass(frozen=True)
class _Task:
    """One training / test pair, as rows rather than copies: fit on the ``train_rows`` of
    ``train`` (None: nothing to fit on), cut the ``test_rows`` of the evaluated lists. Each fit and
    cut takes its lists when it runs (:func:`_take`), so an evaluation in one process holds one
    fold's training lists at a time, and Ray's object store one copy of the lists."""

    fold: int
    train: RankedLists | None
    train_rows: NDArray[np.int64] | None  # rows of ``train`` (None: all of them)
    test_rows: NDArray[np.int64]  # rows of the evaluated lists
    rows: NDArray[np.int64]  # positions of the test queries among the evaluated queries


def evaluate_cutters(
    specs: Sequence[str],
    lists: RankedLists,
    *,
    train: RankedLists | Sequence[str] | None = None,
    test_queries: Sequence[str] | None = None,
    folds: int | None = None,
    seed: int = 0,
    metrics: Sequence[str] = DEFAULT_METRICS,
    fit_metric: str = "each",
    recall_base: str = "list",
    allow_zero: bool = False,
    baseline: str | None = None,
    test: str = "wilcoxon",
    alpha: float = 0.05,
    progress: bool = False,
    shards: int = 1,
    runner: Executor | None = None,
) -> Evaluation:
    """Fit and apply every cutter of ``specs``; score the cuts of the test queries.

    :param specs: cutter specs ``NAME[:PARAM]`` (:func:`rankcut.cutters.make_cutter`), each
        evaluated once and named by its spec in the result.
    :param lists: ranked lists with relevance judgements: the test lists, or all lists when
        ``train`` is a list of query ids or ``folds`` is given.
    :param train: a separate training set (``RankedLists``; must share no query with the test
        queries), or the query ids of ``lists`` to train on (the test queries are then the
        others, or ``test_queries``), or None. Query ids absent from ``lists`` are reported with
        a :class:`~rankcut.data.trec.MissingQueriesWarning` and skipped.
    :param test_queries: the query ids to evaluate (default: all of ``lists`` not trained on).
    :param folds: number of cross-validation folds over the queries of ``lists`` (≥ 2; not with
        ``train`` or ``test_queries``).
    :param seed: seed of the fold assignment (``numpy.random.default_rng``).
    :param metrics: reported metrics, from :data:`rankcut.metrics.METRICS`.
    :param fit_metric: ``"each"`` — cutters with an open ``metric`` parameter are fitted per
        reported metric (AttnCut's protocol); or one metric used for all of them.
    :param recall_base: ``"list"`` (Eq. 8: relevant documents inside the list) or ``"judged"``;
        used for scoring and passed to the cutters that take it.
    :param allow_zero: let cutters that support it keep no document (``k = 0``).
    :param baseline: the spec every other method is tested against (None: no tests).
    :param test: ``"wilcoxon"`` or ``"ttest"`` (:func:`rankcut.significance.paired_tests`).
    :param alpha: level of the Holm-adjusted tests.
    :param progress: show a tqdm progress bar on stderr (only once the run takes over a second).
    :param shards: cut the test queries of every fit in this many contiguous shards.
    :param runner: where the fits (one task per fold and cutter) and the shards run
        (:mod:`rankcut.parallel`; default: this process). The result is the same whatever the
        shards and the runner: each cut reads its own list only.
    :raises ValueError: for a bad argument, a cutter that must be fitted without training data,
        lists without judgements, or training and test queries that overlap.
    """
    from rankcut.significance import TESTS, paired_tests

    if not isinstance(lists, RankedLists):
        raise ValueError(f"lists must be a RankedLists, got {type(lists).__name__}")
    if lists.gains is None:
        raise ValueError("lists carry no relevance judgements: evaluation needs qrels")
    if isinstance(metrics, str):   # tuple("f1") is ('f', '1')
        raise ValueError(f"metrics must be a sequence of metric names, e.g. ({metrics!r},), not one string")
    metrics = tuple(metrics)
    if not metrics or any(m not in _metrics.METRICS for m in metrics) or len(set(metrics)) != len(metrics):
        raise ValueError(f"metrics must be distinct names from {_metrics.METRICS}, got {metrics!r}")
    if fit_metric != "each" and fit_metric not in _metrics.METRICS:
        raise ValueError(f"fit_metric must be one of {FIT_METRICS}, got {fit_metric!r}")
    if recall_base not in _metrics.RECALL_BASES:
        raise ValueError(f"recall_base must be one of {_metrics.RECALL_BASES}, got {recall_base!r}")
    if test not in TESTS:
        raise ValueError(f"test must be one of {tuple(TESTS)}, got {test!r}")
    check_int(shards, "shards", low=1)
    names = check_specs(specs, baseline=baseline)
    variants = {s: _variants(s, metrics, fit_metric, recall_base=recall_base, allow_zero=allow_zero)
                for s in names}
    tasks, evaluated, mode, n_train = _tasks(lists, train, test_queries, folds, seed)
    need = [s for s, v in variants.items() if any(c.requires_fit() for c in v.values())]
    if mode == "none":
        if need:
            alone = ("; test query ids alone train on nothing (the other queries are trained on only "
                     "when named): give the training query ids too" if test_queries is not None else "")
            raise ValueError(f"cutters {need} must be fitted: give training data (a training run, "
                             f"training query ids, or cross-validation folds){alone}")

    cuts = {s: {key: np.zeros(len(evaluated), dtype=np.int64) for key in v} for s, v in variants.items()}
    fitted: dict[str, dict[str, list[dict[str, Any]]]] = {
        s: {key: [] for key in v} for s, v in variants.items()}
    from tqdm import tqdm  # lazy: only evaluation pays for it

    runner = runner if runner is not None else InProcess()
    stored_lists = runner.put(lists)
    trains = [None if task.train is None else stored_lists if task.train is lists else runner.put(task.train)
              for task in tasks]
    # per task, its test shards: (their positions among the evaluated queries, their rows of lists)
    parts = [[(task.rows[a:b], task.test_rows[a:b]) for a, b in shard_bounds(len(task.rows), shards)]
             for task in tasks]
    units = [(i, s, key) for i in range(len(tasks)) for s, vs in variants.items() for key in vs]
    fits = runner.map(_fit, [(variants[s][key], trains[i], tasks[i].train_rows) for i, s, key in units])
    with tqdm(total=len(units), desc="evaluate", unit="fit", disable=not progress, delay=1.0,
              file=sys.stderr, leave=False) as bar:
        for (i, s, key), cutter in zip(units, fits, strict=True):
            reads_labels = cutter.name in READS_TEST_LABELS
            stored = runner.put(cutter)
            # a cutter's warnings count the lists it cuts: name the fold (numbered from 0, as the JSON)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = list(runner.map(_cut, [(stored, stored_lists, test_rows, reads_labels)
                                             for _, test_rows in parts[i]]))
            where = f"fold {tasks[i].fold} of {len(tasks)}, {len(tasks[i].rows)} test queries: "
            for said in dict.fromkeys((str(w.message), w.category) for w in caught):
                warnings.warn(f"{where if len(tasks) > 1 else ''}{said[0]}", said[1], stacklevel=2)
            for (rows, _), part in zip(parts[i], got, strict=True):
                cuts[s][key][rows] = part
            learned = _learned(cutter)
            if learned:
                fitted[s][key].append({"fold": tasks[i].fold, **learned})
            bar.update()

    scored = _take(lists, np.array([lists.index(q) for q in evaluated], dtype=np.int64))
    results: dict[str, MethodResult] = {}
    for s, vs in variants.items():
        by_metric = {m: (m if m in vs else next(iter(vs))) for m in metrics}
        results[s] = MethodResult(
            method=s,
            cuts={m: cuts[s][key] for m, key in by_metric.items()},
            scores={m: _metrics.score_at(scored, cuts[s][key], m, recall_base=recall_base,
                                         allow_zero=True)
                    for m, key in by_metric.items()},
            fitted={m: fitted[s][key] for m, key in by_metric.items()},
            params={m: vs[key].get_params() for m, key in by_metric.items()},
        )

    fold = np.full(len(evaluated), -1, dtype=np.int64)
    for task in tasks:
        fold[task.rows] = task.fold
    tests_out: dict[str, dict[str, PairedTest]] = {}
    base = baseline.strip() if baseline is not None else None
    if base is not None:
        compared = [s for s in names if s == base or _cutter_name(s) not in READS_TEST_LABELS]
        if len(compared) > 1:
            for m in metrics:
                tests_out[m] = paired_tests({s: results[s].scores[m] for s in compared}, base,
                                            test=test, alpha=alpha)
    protocol = {
        "mode": mode,
        "folds": folds,
        "seed": seed if mode == "cv" else None,
        "n_train": n_train,
        "n_test": len(evaluated),
        "fold_sizes": [len(t.rows) for t in tasks] if mode == "cv" else None,
        "metrics": list(metrics),
        "fit_metric": fit_metric,
        "fitted": bool(need),
        "recall_base": recall_base,
        "allow_zero": allow_zero,
        "ordering": lists.ordering,
        "ordering_rule": _ORDERING_RULES.get(lists.ordering, lists.ordering),
        "threshold": lists.threshold,
        # test queries whose list holds no relevant document: every cut scores F1 0 there
        "no_relevant": int(np.count_nonzero(~scored.labels.any(axis=1))),
        "baseline": base,
        "test": test if base is not None else None,
        "alpha": alpha if base is not None else None,
    }
    protocol["description"] = _describe(protocol)
    return Evaluation(tuple(evaluated), scored.lengths, fold, metrics, results, tests_out, protocol)



def seen_queries(cutter: Cutter, lists: RankedLists, *, train: Sequence[str] | None = None,
                 test_queries: Sequence[str] | None = None) -> list[str]:
    """The queries that an evaluation of ``lists`` would score although the fitted ``cutter`` was
    trained or validated on them (its ``train_qids_`` and ``val_qids_``): its score there would be
    a training fit, not a test. Sorted.

    :param train: query ids of ``lists`` trained on, which are not evaluated (as for
        :func:`evaluate_cutters`).
    :param test_queries: the evaluated query ids (default: all of ``lists`` not trained on).
    """
    fitted = set(getattr(cutter, "train_qids_", ())) | set(getattr(cutter, "val_qids_", ()))
    return sorted(set(evaluated_queries(lists, train=train, test_queries=test_queries)) & fitted)


def evaluated_queries(lists: RankedLists, *, train: Sequence[str] | None = None,
                      test_queries: Sequence[str] | None = None) -> list[str]:
    """The query ids of ``lists`` that an evaluation scores, in list order: ``test_queries`` (default:
    all), less those of ``train`` (query ids trained on, as for :func:`evaluate_cutters`)."""
    held = set(train or ())
    chosen = None if test_queries is None else set(test_queries)
    return [q for q in lists.qids if (chosen is None or q in chosen) and q not in held]


def with_trained(evaluation: Evaluation, lists: RankedLists, trained: Mapping[str, Cutter], *,
                 baseline: str | None, test: str = "wilcoxon", alpha: float = 0.05,
                 note: str | None = None) -> Evaluation:
    """``evaluation`` with a row per fitted cutter of ``trained`` (named by its key): a model
    trained elsewhere, evaluated as saved, not refitted. Its cuts of the evaluated lists, their
    labels removed, are scored as :func:`evaluate_cutters` scored the others — one cut in every
    metric's column, recall over the evaluation's ``recall_base`` — and the paired tests against
    ``baseline`` are redone over every method but those of :data:`READS_TEST_LABELS` (AttnCut's
    Table 3 protocol, module docstring).

    :param lists: the lists of the evaluation (the evaluated queries are taken from them).
    :param note: appended to the protocol's description.
    """
    from rankcut.significance import paired_tests

    recall_base = evaluation.protocol["recall_base"]   # a row scored otherwise would not compare

    scored = lists.subset(evaluation.qids)
    blind = scored.blind()
    methods = dict(evaluation.methods)
    for label, method in trained.items():
        for said in trained_otherwise(method, scored, recall_base):   # the lists it cuts, no others
            warnings.warn(f"{label} {said}", UserWarning, stacklevel=2)
        cuts = method.predict(blind)
        learned = _learned(method)   # a given cut learned nothing: no row of nulls
        fitted = [{"fold": -1, **learned}] if learned else []
        methods[label] = MethodResult(
            method=label,
            cuts={m: cuts for m in evaluation.metrics},
            scores={m: _metrics.score_at(scored, cuts, m, recall_base=recall_base, allow_zero=True)
                    for m in evaluation.metrics},
            fitted={m: fitted for m in evaluation.metrics},
            params={m: method.get_params() for m in evaluation.metrics},
        )
    tests = {}
    if baseline is not None:
        base = baseline.strip()
        compared = [s for s in methods
                    if s == base or s in trained or _cutter_name(s) not in READS_TEST_LABELS]
        if len(compared) > 1:
            tests = {m: paired_tests({s: methods[s].scores[m] for s in compared}, base, test=test,
                                     alpha=alpha)
                     for m in evaluation.metrics}
    tested = baseline is not None
    protocol = {**evaluation.protocol, "baseline": baseline.strip() if baseline is not None else None,
                "test": test if tested else None, "alpha": alpha if tested else None}
    if note is not None:
        protocol["description"] += note
    return replace(evaluation, methods=methods, tests=tests, protocol=protocol)

def _cutter_name(spec: str) -> str:
    """The registry name of a spec ``NAME[:PARAM]``."""
    return spec.partition(":")[0].strip()


def _variants(spec: str, metrics: tuple[str, ...], fit_metric: str, *, recall_base: str,
              allow_zero: bool) -> dict[str, Cutter]:
    """The cutters a spec stands for: ``{metric: cutter}`` when fitted per metric, else ``{"*": cutter}``."""
    cls = cutter_class(_cutter_name(spec))
    params = make_cutter(spec).get_params()
    options: dict[str, Any] = {}
    if "recall_base" in params:
        options["recall_base"] = recall_base
    if "allow_zero" in params:
        options["allow_zero"] = allow_zero
    spec_sets_metric = ":" in spec and cls.spec_param is not None and cls.spec_param[0] == "metric"
    if "metric" not in params or spec_sets_metric:
        return {"*": make_cutter(spec, **options)}
    if fit_metric == "each":
        return {m: make_cutter(spec, metric=m, **options) for m in metrics}
    return {"*": make_cutter(spec, metric=fit_metric, **options)}


def _take(lists: RankedLists, rows: NDArray[np.int64] | None) -> RankedLists:
    """The lists of ``rows`` (:meth:`RankedLists.subset`, trimmed to their own length); ``lists``
    itself for None or every row in order, which a subset would only copy."""
    if rows is None or (len(rows) == len(lists) and np.array_equal(rows, np.arange(len(lists)))):
        return lists
    return lists.subset([lists.qids[r] for r in rows])


def _fit(proto: Cutter, train: RankedLists | None, rows: NDArray[np.int64] | None) -> Cutter:
    """A fresh copy of ``proto``, fitted on the ``rows`` of ``train`` (a task of the runner);
    unfitted without training lists."""
    cutter = clone(proto)
    return cutter if train is None else cutter.fit(_take(train, rows))


def _cut(cutter: Cutter, lists: RankedLists, rows: NDArray[np.int64], labelled: bool) -> NDArray[np.int64]:
    """The cuts of the ``rows`` of ``lists`` (a task of the runner); their judgements removed
    unless the cutter reads test labels (``labelled``: the oracle)."""
    part = _take(lists, rows)
    return cut_shard(cutter, part if labelled else part.blind())


def trained_otherwise(method: Cutter, lists: RankedLists, recall_base: str | None) -> list[str]:
    """How a trained model (``threshold_``, ``ordering_``, ``scored_by_``, ``depth_``, its
    ``recall_base``) learned under other settings than ``lists`` are read with and ``recall_base``
    scores with (None: not scored), each as a clause after the model's name; the threshold only
    where ``lists`` carry labels. It then learned to cut another task: said, never silently
    applied."""
    out = []
    learned = getattr(method, "threshold_", None)
    if learned is not None and lists.gains is not None and learned != lists.threshold:
        out.append(f"was trained with relevance ≥ {learned:g} counted relevant, and these lists count "
                   f"relevance ≥ {lists.threshold:g} (--threshold): it learned to cut for another notion "
                   "of relevant")
    ordering = getattr(method, "ordering_", None)
    if ordering is not None and ordering != lists.ordering:
        out.append(f"was trained on lists ordered by {ordering}, and these are ordered by {lists.ordering} "
                   f"(--ordering): tied scores stand in another order than it learned from; give "
                   f"--ordering {ordering}")
    scored_by = getattr(method, "scored_by_", None)
    if scored_by is not None and scored_by != lists.scored_by:
        feature = score_feature_of(scored_by)
        give = f"; give --score-feature {feature}" if feature is not None else ""
        out.append(f"was trained on lists ranked by {scored_by}, and these are ranked by "
                   f"{lists.scored_by}: the scores it reads are not those it learned from{give}")
    depth = getattr(method, "depth_", None)
    longer = lists.lengths > depth if depth is not None else np.zeros(len(lists), dtype=bool)
    if longer.any():
        first, n = int(np.argmax(longer)), int(longer.sum())
        out.append(f"was trained on lists of at most {depth} documents, and {count(n, 'list', 'lists')} "
                   f"here {'is' if n == 1 else 'are'} longer (query {lists.qids[first]!r} holds "
                   f"{int(lists.lengths[first])}): it never saw a position past {depth}, and its cuts there "
                   f"are untested; give it the top {depth} of each list to cut as it learned")
    trained_base = getattr(method, "recall_base", None)   # F1 and recall count it; precision and DCG not
    if (recall_base is not None and trained_base is not None and trained_base != recall_base
            and getattr(method, "metric", None) in ("f1", "recall")):
        out.append(f"was trained to maximise its metric with recall over {trained_base!r} relevant "
                   f"documents, and these scores count recall over {recall_base!r} (--recall-base): it "
                   "learned to cut for another metric")
    return out


def _learned(cutter: Cutter) -> dict[str, Any]:
    """Scalar learned attributes (names ending in ``_``) of a fitted cutter, e.g. ``k_``."""
    out = {}
    for k, v in sorted(vars(cutter).items()):
        scalar = isinstance(v, int | float | np.integer | np.floating)
        if scalar and k.endswith("_") and not k.startswith("_"):
            out[k] = v.item() if isinstance(v, np.generic) else v
    return out


def _present(lists: RankedLists, ids: Sequence[str], what: str) -> list[str]:
    """``ids`` that are in ``lists`` (warn about the others); ValueError when none is."""
    if isinstance(ids, str):
        raise ValueError(f"{what} must be a sequence of query ids, not one string")
    ids = [str(q) for q in ids]
    twice = _repeated(ids)
    if twice:
        raise ValueError(f"{what}: query ids listed twice: {', '.join(map(repr, twice))}")
    have = set(lists.qids)
    absent = [q for q in ids if q not in have]
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        warnings.warn(f"{count(len(absent), 'query id', 'query ids')} of {what} {verb} not in the ranked "
                      f"lists and {verb} skipped: "
                      f"{id_list(absent, _MAX_IDS_SHOWN)}",
                      MissingQueriesWarning, stacklevel=4)
    kept = [q for q in ids if q in have]
    if not kept:
        if len(ids) == 1:
            raise ValueError(f"{what}: its only query id {ids[0]!r} is not in the ranked lists")
        raise ValueError(f"{what}: none of its {len(ids)} query ids is in the ranked lists")
    return kept


def _tasks(lists: RankedLists, train: RankedLists | Sequence[str] | None,
           test_queries: Sequence[str] | None, folds: int | None, seed: int
           ) -> tuple[list[_Task], list[str], str, int | None]:
    """The training / test pairs, the evaluated query ids (in ``lists`` order), mode and n_train."""
    if folds is not None:
        if train is not None or test_queries is not None:
            raise ValueError("folds: cross-validation splits the queries itself; do not also give "
                             "train or test_queries")
        check_int(folds, "folds", low=2)
        if folds > len(lists):
            raise ValueError(f"folds={folds} exceeds the number of queries ({len(lists)})")
        check_int(seed, "seed", low=0)
        order = np.random.default_rng(int(seed)).permutation(len(lists))
        tasks = []
        for i, part in enumerate(np.array_split(order, int(folds))):
            held = np.zeros(len(lists), dtype=bool)
            held[part] = True
            rows = np.flatnonzero(held)
            tasks.append(_Task(i, lists, np.flatnonzero(~held), rows, rows))
        return tasks, list(lists.qids), "cv", None

    if isinstance(train, RankedLists):
        chosen = set(_present(lists, test_queries, "test_queries")) if test_queries is not None else None
        evaluated = [q for q in lists.qids if chosen is None or q in chosen]
        shared = sorted(set(evaluated) & set(train.qids))
        if shared:
            raise ValueError(f"train and test share {count(len(shared), 'query', 'queries')} (training on "
                             f"test queries would leak their labels): "
                             f"{id_list(shared, _MAX_IDS_SHOWN)}")
        if train.ordering != lists.ordering:
            raise ValueError(f"train lists are ordered by {train.ordering!r}, test lists by "
                             f"{lists.ordering!r}: load both with the same ordering")
        if train.threshold != lists.threshold:
            raise ValueError(f"train lists count relevance ≥ {train.threshold:g} relevant, test lists "
                             f"≥ {lists.threshold:g}: load both with the same threshold")
        mode, train_lists, train_rows, n_train = "train", train, None, len(train)
    elif train is not None:
        train_ids = _present(lists, train, "train")
        if test_queries is not None:
            test_ids = set(_present(lists, test_queries, "test_queries"))
            shared = sorted(test_ids & set(train_ids))
            if shared:
                shown = count(len(shared), "query", "queries")
                raise ValueError(f"the train and test queries share {shown} (training on test queries "
                                 "would leak their labels): "
                                 f"{id_list(shared, _MAX_IDS_SHOWN)}")
        else:
            test_ids = set(lists.qids) - set(train_ids)
            if not test_ids:
                raise ValueError("train holds every query of the lists: no test query is left")
        evaluated = [q for q in lists.qids if q in test_ids]
        mode, train_lists, n_train = "split", lists, len(train_ids)
        train_rows = np.array([lists.index(q) for q in train_ids], dtype=np.int64)
    else:
        chosen = set(_present(lists, test_queries, "test_queries")) if test_queries is not None else None
        evaluated = [q for q in lists.qids if chosen is None or q in chosen]
        mode, train_lists, train_rows, n_train = "none", None, None, None
    test_rows = np.array([lists.index(q) for q in evaluated], dtype=np.int64)
    task = _Task(-1, train_lists, train_rows, test_rows, np.arange(len(evaluated)))
    return [task], evaluated, mode, n_train


def _describe(p: dict[str, Any]) -> str:
    n, n_train = p["n_test"], p["n_train"]
    if p["mode"] == "cv":
        text = (f"{p['folds']}-fold cross-validation over {n} queries (seed {p['seed']}, fold sizes "
                f"{', '.join(map(str, p['fold_sizes']))}): each cutter fitted on the other folds")
    elif p["mode"] == "train":
        text = (f"fitted on {count(n_train, 'training query', 'training queries')} (separate training "
                f"lists), tested on {n}")
    elif p["mode"] == "split":
        text = (f"fitted on {count(n_train, 'training query', 'training queries')} of the lists, tested "
                f"on the {count(n, 'other', 'others')}")
    else:   # nothing is fitted (fixed cutters, the oracle, saved models, cut runs)
        return f"no training data; {count(n, 'query', 'queries')}"
    if not p["fitted"]:   # training data given, but no cutter here learns from it
        return (f"no cutter here learns: the training queries are unused; "
                f"{count(n, 'query', 'queries')} tested")
    fit = ("metric-aware cutters fitted separately per metric" if p["fit_metric"] == "each"
           else f"metric-aware cutters fitted on {p['fit_metric']}")
    return f"{text}; {fit}"


# --------------------------------------------------------------------------- tables
def format_table(evaluation: Evaluation, *, markdown: bool = False, digits: int = 4) -> str:
    """The summary in the shape of AttnCut's Table 3, one row per method: mean metric per
    column with its significance marker, and the mean cut ``k`` behind each column; then a
    legend (protocol, ordering, markers). Returns text; prints nothing.
    """
    ev = evaluation
    header = ["Method"]
    for m in ev.metrics:
        header += [_METRIC_LABELS[m], "k"]
    rows = []
    for name, res in ev.methods.items():
        row = [name]
        for m in ev.metrics:
            row += [f"{res.mean(m):.{digits}f}{ev.marker(name, m)}", f"{res.mean_k(m):.1f}"]
        rows.append(row)
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join([" --- "] + [" ---: "] * (len(header) - 1)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
    else:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        fmt = [r[0].ljust(widths[0]) + "  " + "  ".join(c.rjust(w) for c, w in zip(r[1:], widths[1:],
                                                                                      strict=True))
               for r in [header, *rows]]
        lines = [fmt[0], "-" * len(fmt[0]), *fmt[1:]]
    legend = [f"- {line}" for line in _legend(ev)] if markdown else _legend(ev)
    return "\n".join(lines) + "\n\n" + "\n".join(legend) + "\n"


def _legend(ev: Evaluation) -> list[str]:
    p = ev.protocol
    cols = ", ".join(f"{_METRIC_LABELS[m]}" for m in ev.metrics)
    cites = [said for m, said in (("f1", "F1: Eq. 8"), ("dcg", "DCG: ±1-DCG, Eq. 9")) if m in ev.metrics]
    cited = f"{', '.join(cites)} of AttnCut; " if cites else ""
    out = [
        f"Protocol: {p['description']}.",
        f"Ordering: {p['ordering']} ({p['ordering_rule']}); relevant: relevance ≥ {p['threshold']:g}.",
        f"Columns: {cols} — mean over {count(p['n_test'], 'test query', 'test queries')} ({cited}"
        f"recall base: {p['recall_base']}); k: mean cut behind the column.",
    ]
    zero = [_METRIC_LABELS[m] for m in ev.metrics if m != "dcg"]   # ±1-DCG goes below 0 there
    if p.get("no_relevant") and zero:   # a mean no cutter can raise above (n_test - no_relevant) / n_test
        n = p["no_relevant"]
        out.append(f"{count(n, 'test query', 'test queries')} of {p['n_test']} "
                   f"{'has' if n == 1 else 'have'} no relevant document in {'its' if n == 1 else 'their'} "
                   f"list (relevance ≥ {p['threshold']:g}): every cut scores {', '.join(zero)} 0 there, in "
                   "the mean.")
    if p["baseline"] is None:
        out.append("No significance test (no baseline given).")
    else:
        tested = sorted({name for per in ev.tests.values() for name in per})
        test = {"wilcoxon": "Wilcoxon signed-rank", "ttest": "paired t"}[p["test"]]
        if tested:
            out.append(f"{_BETTER} / {_WORSE}: significantly better / worse than {p['baseline']} "
                       f"({test} test, two-sided, Holm-adjusted over "
                       f"{count(len(tested), 'method', 'methods')}, p ≤ {p['alpha']:g}).")
        else:
            out.append(f"No significance test: no method to compare with the baseline {p['baseline']}.")
        skipped = [n for n in ev.methods if n != p["baseline"] and n not in tested]
        if skipped:
            out.append(f"Not tested: {', '.join(skipped)} (reads the test labels: an upper bound).")
        out.extend(_against_the_mean(ev))
    return out


def _against_the_mean(ev: Evaluation) -> list[str]:
    """A line for each marker whose side is not the mean's: Wilcoxon's side is that of the signed
    ranks (``W+ − W−``), so a method can be significantly better on most queries with a lower mean
    (a few large losses), which a reader of † beside the lower mean would take for a mistake."""
    out = []
    for metric, per in ev.tests.items():
        for name, t in per.items():
            better = t.direction == "better"
            if t.significant and t.direction != "equal" and (t.mean_difference > 0) != better:
                up, down = ("gains", "losses") if better else ("losses", "gains")
                marker = _BETTER if better else _WORSE
                out.append(f"{name} ({_METRIC_LABELS[metric]}): {marker} by Wilcoxon's "
                           f"signed ranks (the ranks of its per-query {up} against {t.baseline} outweigh "
                           f"those of its {down}), though its mean is {'lower' if better else 'higher'} by "
                           f"{abs(t.mean_difference):.4f} (its {down} are larger in sum).")
    return out
