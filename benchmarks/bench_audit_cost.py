"""Label cost of certifying a cut's recall, four audit designs, on real data (audit paper §4, §9).

For one cut of real ranked lists, how many audit labels certify ``Recall ≥ 0.8`` with confidence
95%? Four designs, each with the engine's own bounds (``rankcut.certify``):

(i)   binomial elusion audit: ``n`` i.i.d. draws from the excluded pool, ``M0 ≤ N0·U_n(K, δ)``
      (Theorem 7);
(ii)  hypergeometric elusion audit: ``n`` draws without replacement, ``M0 ≤ MU(K, δ; N0, n)``
      (Theorem 8);
(iii) stratified by rank band below the cut, the same number of draws per band,
      ``M0 ≤ Σ_s MU(K_s, δ/S; N_s, n_s)`` (§9);
(iv)  two-pool: ``n0`` from the excluded and ``n1`` from the included pool,
      ``Recall ≥ ML/(ML + MU)`` at ``δ/2`` each (Corollary 11).

(i)–(iii) bound the missed count ``M0`` only; their recall is ``M1/(M1 + bound)``, which needs
``M1`` — the included pool reviewed in full (Theorem 8, second part; Remark 9). That review is
the cut's burden ``N1``, paid anyway when the kept items are read (a screening review), but it is
labels all the same, so the tables show it. (iv) samples the included pool instead.

Columns, per design:

* **plan**: the sizes ``rankcut audit plan`` gives (``rankcut.audit.workflow.plan``, which calls
  the engine's planners in ``rankcut.certify.planning``): the smallest audit that meets the
  target *if it finds no relevant item in the excluded pool* (two-pool: and the included sample
  shows the cut's true precision ``M1/N1``, given to the planner as its expected precision);
* **P(plan)**: the probability that an audit of the planned size meets the target, given the
  true labels — the planner's optimism made visible;
* **n(50%)**, **n(80%)**: the smallest total number of audit labels whose certificate meets the
  target with probability at least 50% / 80%. These probabilities are *computed exactly* from the
  sampling law of the counts (binomial; hypergeometric; a product of hypergeometrics; the
  distribution of a sum of per-band bounds by convolution) with the true ``M0``, ``M1`` per pool
  and band from the qrels — not simulated. ``tests/validity/test_audit_coverage.py`` checks
  that ``rankcut.audit.sampling`` draws counts with exactly these laws and that these bounds are
  the certificates' values. Discrete bounds make the success probability a sawtooth in ``n`` (it
  jumps up where the bound allows one more relevant find, and falls in between), so "the smallest
  ``n``" is found exactly for (i) and (ii), at the teeth (:func:`first_crossing`), and by
  bisection for (iii) and (iv), which finds *a* crossing: on (i) and (ii) bisection was up to 24%
  above the first one (robust04's deepest member, 80%: 95 instead of 77), so the (iii) and (iv)
  figures may overstate their cost by as much. Two-pool: the best split ``n1/n`` on a grid of
  steps of 0.05.

The scenarios (data, cutters and the screening ranker) are defined here once and imported by
``tests/validity/test_audit_coverage.py``, so that the coverage tests and these tables speak of
the same cuts: Robust04 BM25 test lists cut by greedy-k and by AttnCut, both fitted on the train
split only; CLEF TAR 2017 cut at depth 1000 and by the score-distribution cutter; a screening set
ranked by a TF-IDF classifier and cut at 500. Each scenario also carries the nested family of
cuts (depth offsets around its cut) that the prefix and fixed-sequence coverage tests audit.

    .venv/bin/python benchmarks/bench_audit_cost.py            # every table (fits AttnCut: ~1 min)
    .venv/bin/python benchmarks/bench_audit_cost.py --quick    # Robust04 greedy-k and the screening set
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import stats

from rankcut.audit import workflow
from rankcut.audit.pools import Pools, offset_family
from rankcut.certify.bounds import cp_upper, hypergeom_lower, hypergeom_upper
from rankcut.cutters import make_cutter
from rankcut.data.features import tokenize
from rankcut.data.lists import RankedLists
from rankcut.data.screening import ScreeningSet, load_screening
from rankcut.data.trec import load_trec, read_qrels, write_run

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"

RHO, DELTA = 0.8, 0.05
TINY = 1e-12  # probability mass below which a count is left out of the exact sums


# ---------------------------------------------------------------------------------------------
# scenarios: a cut of real ranked lists, with the qrels as the audit oracle


@dataclass(frozen=True, eq=False)
class Scenario:
    """A cut of real ranked lists and everything an audit of it needs.

    :param key: short name.
    :param title: one line: data, ranker, cutter.
    :param lists: the full ranked lists, judged: ``lists.labels`` is what the oracle says.
    :param cuts: ``k_q`` per query, ``[Q]``.
    :param qrels: the audit oracle (``rankcut.audit.oracle.qrels_oracle``; unjudged = 0).
    :param run_path: the full lists as a run file, when one exists (the workflow reads files).
    :param offsets: a nested family around the cut (prefix designs), offsets in documents.
    :param bands: rank bands below the cut (stratified design), offsets starting at 0.
    :param notes: what the reader should know about this cut.
    :param cutter: the fitted cutter that made ``cuts`` (None for a ranker's fixed cut).
    :param train_qids: the queries the cutter was fitted on (empty when it learned nothing).
    """

    key: str
    title: str
    lists: RankedLists
    cuts: NDArray[np.int64]
    qrels: Mapping[str, Mapping[str, int]]
    run_path: Path | None
    offsets: tuple[int, ...]
    bands: tuple[int, ...]
    notes: tuple[str, ...] = field(default=())
    cutter: Any = None
    train_qids: tuple[str, ...] = field(default=())

    @cached_property
    def pools(self) -> Pools:
        return Pools.from_lists(self.lists, self.cuts)

    @cached_property
    def family(self) -> NDArray[np.int64]:
        """Cuts of the nested family ``k_q + offsets`` (clipped to each list), ``[Q, M]``."""
        return offset_family(self.cuts, self.lists.lengths, self.offsets)

    def counts(self, cuts: NDArray[np.int64] | None = None) -> tuple[int, int]:
        """True ``(M1, M0)``: relevant items kept and missed by ``cuts`` (default: the cut)."""
        k = self.cuts if cuts is None else cuts
        inside = np.arange(self.lists.max_len)[None, :] < k[:, None]
        rel = self.lists.labels & self.lists.mask
        return int((rel & inside).sum()), int((rel & ~inside).sum())

    def band_counts(self, cuts: NDArray[np.int64] | None = None) -> tuple[list[int], list[int]]:
        """Per rank band below the cut: ``(sizes N_s, relevant M_s)``."""
        k = self.cuts if cuts is None else cuts
        ends: list[int | None] = [*self.bands[1:], None]
        pos = np.arange(self.lists.max_len)[None, :] - k[:, None]  # 0 = first excluded rank
        rel = self.lists.labels & self.lists.mask
        sizes, missed = [], []
        for lo, hi in zip(self.bands, ends, strict=True):
            inband = (pos >= lo) & self.lists.mask & (True if hi is None else pos < hi)
            sizes.append(int(inband.sum()))
            missed.append(int((inband & rel).sum()))
        return sizes, missed


def _quiet_load(run: Any, qrels: Any) -> RankedLists:
    # qrels cover more queries than a split's run; that warning is expected here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_trec(run, qrels, missing="keep")


#: AttnCut as the robust04 scenario fits it: the paper's RAML loss on F1, seeded, with fewer
#: epochs than the default (60, patience 15) so that a fit costs about a minute on two cores (the
#: validation metric of the training queries' held-out 20% stops improving after ~10-15 epochs)
ATTNCUT_OPTIONS: Mapping[str, Any] = {"epochs": 20, "patience": 5, "seed": 0}


def _fit_predict(cutter: str, options: Mapping[str, Any], train: RankedLists, test: RankedLists
                 ) -> tuple[Any, NDArray[np.int64]]:
    """``make_cutter(cutter, **options)`` fitted on ``train``, and its cuts of ``test``.

    A torch model is fitted with one intra-op thread (restored afterwards): with two threads on two
    cores that other jobs also use, an AttnCut epoch on the 190 training lists was measured at up to
    184 s instead of 2.3 s (threads spinning while waiting for each other).
    """
    model = make_cutter(cutter, **options)
    threads = None
    if cutter.split(":")[0] in ("attncut", "attncut-rc", "bicut", "choppy"):
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
    try:
        cuts = model.fit(train).predict(test)
    finally:
        if threads is not None:
            import torch

            torch.set_num_threads(threads)
    return model, np.asarray(cuts, dtype=np.int64)


def robust04(cutter: str = "greedy-k:f1", offsets: Sequence[int] = (0, 50, 100, 200), *,
             options: Mapping[str, Any] | None = None, key: str = "robust04") -> Scenario:
    """Robust04 BM25 test lists (50 queries × 300), cut by ``cutter`` fitted on the train lists.

    ``cutter`` is a spec of :func:`rankcut.cutters.make_cutter` (``greedy-k:f1``,
    ``distribution``, or a learned model such as ``attncut``), built with ``options``. It is
    fitted on the 190 train lists only (a neural cutter chooses its epoch on a held-out share of
    those); the 50 test lists are cut and audited, and nothing is chosen on them.
    """
    root = DATASETS / "robust04"
    qrels_path = root / "qrels.robust04.positives.txt"
    train = _quiet_load(root / "runs" / "bm25.train.run", qrels_path)
    test = _quiet_load(root / "runs" / "bm25.test.run", qrels_path)
    model, cuts = _fit_predict(cutter, dict(options or {}), train, test)
    learned = f", k_ = {model.k_}" if hasattr(model, "k_") else ""
    shown = ", ".join(f"{k} {v}" for k, v in (options or {}).items())
    notes = ["excluded pool = ranks below the cut within each top-300 list (no corpus): the "
             "qrels' relevant documents outside the lists are no item of these pools"]
    if hasattr(model, "best_epoch_"):
        notes.append(f"{cutter} ({shown}) kept epoch {model.best_epoch_}, chosen on {len(model.val_qids_)} "
                     f"held-out training queries (validation F1 {model.val_metric_:.3f}); its cuts depend "
                     f"on the CPU's floating point, so these figures are one machine's")
    return Scenario(key, f"Robust04 BM25 test, cut by {cutter}{f' ({shown})' if shown else ''} fitted on the "
                         f"train split{learned}",
                    test, cuts, read_qrels(qrels_path), root / "runs" / "bm25.test.run",
                    tuple(offsets), (0, 20, 60), tuple(notes), model, tuple(train.qids))


def robust04_attncut(offsets: Sequence[int] = (0, 50, 100, 200)) -> Scenario:
    """Robust04 BM25 test lists cut by AttnCut (:data:`ATTNCUT_OPTIONS`) trained on the train split."""
    return robust04("attncut", offsets, options=ATTNCUT_OPTIONS, key="robust04-attncut")


#: the nested family around each CLEF cut (offsets in documents): the fixed depth with two
#: slightly deeper cuts and a much deeper one; the score-distribution cut (recall 0.997) with three
#: shallower, cheaper ones
CLEF_OFFSETS: Mapping[str, tuple[int, ...]] = {"fixed-k:1000": (0, 100, 250, 3000),
                                               "distribution": (-1000, -500, -250, 0)}


def clef(cutter: str = "fixed-k:1000", offsets: Sequence[int] | None = None) -> Scenario:
    """CLEF TAR 2017, Waterloo run A (full rankings of 30 topics), abstract-level qrels.

    The cutters here learn nothing from labels (a fixed depth; a score-distribution fit per list,
    unsupervised), so they are fitted on the lists they cut.
    """
    root = DATASETS / "clef-tar-2017"
    run_path = root / "runs" / "waterloo-A-rank-normal.run"
    lists = _quiet_load(run_path, root / "qrel_abs_test.txt")
    if offsets is None:
        offsets = CLEF_OFFSETS.get(cutter, (0, 100, 250, 3000))
    cuts = make_cutter(cutter).fit(lists).predict(lists)
    notes = ["every candidate study of a topic is ranked, so the excluded pool is the whole unread rest"]
    if cutter.startswith("distribution"):
        share = cuts / lists.lengths
        notes.append(
            f"the run's score is minus the rank, so the scores of a list are evenly spaced: the "
            f"normal–exponential fit sees the same shape in every list and cuts each at the same "
            f"share of its length ({share.min():.3f}–{share.max():.3f}), a label-free fixed-fraction "
            f"rule, not an adaptive stopping point")
    return Scenario(f"clef-{cutter}", f"CLEF TAR 2017 Waterloo run A, cut by {cutter}", lists, cuts,
                    read_qrels(root / "qrel_abs_test.txt"), run_path, tuple(offsets), (0, 500, 2000),
                    tuple(notes))


def tfidf_matrix(texts: Sequence[str]) -> sp.csr_matrix:
    """TF-IDF rows ``[n, V]`` (scikit-learn's ``TfidfVectorizer`` on :func:`tokenize`'s tokens):
    sublinear tf ``1 + log tf``, smoothed idf over all ``texts`` (no label is used), rows scaled
    to unit length."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return sp.csr_matrix(TfidfVectorizer(analyzer=tokenize, sublinear_tf=True).fit_transform(texts))


def fit_logistic(x: sp.csr_matrix, y: NDArray[np.bool_], l2: float = 1.0
                 ) -> tuple[NDArray[np.float64], float]:
    """L2-penalised logistic regression (scikit-learn's ``LogisticRegression``, L-BFGS): minimises
    ``Σ_i log(1 + exp(z_i)) − y_i z_i + (l2/2)·|w|²`` with ``z = x·w + b`` (bias not penalised),
    i.e. ``C = 1/l2``.

    :returns: ``(w [V], b)``.
    """
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0 / l2, max_iter=10_000, tol=1e-8).fit(x, y)
    return model.coef_.ravel(), float(model.intercept_[0])


def rank_screening(data: ScreeningSet, *, seed_size: int = 200, seed: int = 0, l2: float = 1.0
                   ) -> tuple[ScreeningSet, NDArray[np.float64]]:
    """Rank a screening set by a text classifier trained on a seed set, the seed left out.

    A uniform random seed set of ``seed_size`` records (``numpy.random.default_rng(seed)``) is
    labelled and trains :func:`fit_logistic` on :func:`tfidf_matrix` of title + abstract; the other
    records are scored by the logit. The seed set is design data (§2.4): it shaped the ranker, so
    it is no part of what the audit certifies.

    :returns: ``(the records outside the seed, their scores)``.
    """
    rng = np.random.default_rng(seed)
    x = tfidf_matrix(data.texts)
    pick = rng.choice(len(data), size=seed_size, replace=False)
    y = data.labels[pick]
    if y.all() or not y.any():
        raise ValueError(f"the seed set of {seed_size} records holds only one class; draw a larger one")
    w, b = fit_logistic(x[pick], y, l2)
    rest = np.setdiff1d(np.arange(len(data)), pick)
    return data.subset(rest), np.asarray(x[rest] @ w + b, dtype=float)


def screening(name: str = "bannach-brown-2019", cutter: str = "fixed-k:500", *, seed_size: int = 200,
              seed: int = 0, offsets: Sequence[int] = (0, 300, 600, 1000)) -> Scenario:
    """A screening set ranked by :func:`rank_screening`, cut by ``cutter``."""
    data = load_screening(DATASETS / "screening" / f"{name}.csv")
    rest, scores = rank_screening(data, seed_size=seed_size, seed=seed)
    lists = rest.ranked(scores)
    cuts = make_cutter(cutter).fit(lists).predict(lists)
    seed_pos = data.n_included - rest.n_included
    return Scenario(
        f"screening-{name}",
        f"{name} ({len(data)} records, {data.n_included} included): TF-IDF + logistic regression trained "
        f"on a random seed set of {seed_size} ({seed_pos} included), the other {len(rest)} ranked, cut by "
        f"{cutter}",
        lists, cuts, rest.qrels(), None, tuple(offsets), (0, 300, 700),
        ("the seed set trained the ranker (design data, §2.4): it is not in the audited pools",))


# ---------------------------------------------------------------------------------------------
# exact success probabilities: P(the certificate meets the target) under the sampling law


def _hypergeom_pmf(k: NDArray[np.int64], *, population: int, successes: int, draws: int
                   ) -> NDArray[np.float64]:
    return np.asarray(stats.hypergeom.pmf(k, population, successes, draws), dtype=float)


def _support(pmf: Callable[[NDArray[np.int64]], NDArray[np.float64]], lo: int, hi: int
             ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Counts in ``[lo, hi]`` with probability above :data:`TINY`, and their probabilities."""
    k = np.arange(lo, hi + 1, dtype=np.int64)
    p = pmf(k)
    keep = p > TINY
    return k[keep], p[keep]


def _hypergeom_law(population: int, successes: int, draws: int
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    lo, hi = max(0, draws - (population - successes)), min(draws, successes)
    return _support(lambda k: _hypergeom_pmf(k, population=population, successes=successes, draws=draws),
                    lo, hi)


def recall_meets(caught: NDArray[Any] | float, missed_bound: NDArray[Any] | float, rho: float
                 ) -> NDArray[np.bool_]:
    """Whether ``caught / (caught + missed_bound) ≥ rho`` (0 when both are 0), as the certificates
    compute it (``full_review_recall``, ``two_pool_recall_finite``)."""
    c = np.asarray(caught, dtype=float)
    m = np.asarray(missed_bound, dtype=float)
    total = c + m
    value = np.where(total > 0, c / np.maximum(total, 1e-300), 0.0)
    return np.asarray(value >= rho)


@dataclass(frozen=True)
class Target:
    """A cut and its truth: pool sizes, relevant items per pool and per band, the target."""

    n1: int
    n0: int
    m1: int
    m0: int
    band_sizes: tuple[int, ...]
    band_missed: tuple[int, ...]
    rho: float = RHO
    delta: float = DELTA

    @property
    def recall(self) -> float:
        return self.m1 / (self.m1 + self.m0) if self.m1 + self.m0 else 0.0

    def missed_limit(self) -> int:
        """Largest certified ``M0`` bound that still meets the recall target with ``M1`` known
        (``recall_meets`` is monotone in the bound); -1 when none does."""
        limit = int(math.floor(self.m1 * (1 - self.rho) / self.rho)) + 1
        while limit >= 0 and not recall_meets(self.m1, limit, self.rho):
            limit -= 1
        return limit

    @classmethod
    def of(cls, scn: Scenario, cuts: NDArray[np.int64] | None = None, rho: float = RHO,
           delta: float = DELTA) -> Target:
        k = scn.cuts if cuts is None else cuts
        m1, m0 = scn.counts(k)
        sizes, missed = scn.band_counts(k)
        n1 = int(k.sum())
        return cls(n1, int(scn.lists.lengths.sum()) - n1, m1, m0, tuple(sizes), tuple(missed), rho, delta)

    # The bounds each design certifies, as arrays over counts; the success probabilities below sum
    # the sampling law of the counts over them. tests/validity/test_audit_coverage.py checks that
    # they are the values of the certificates of rankcut.certify.

    def binomial_bound(self, k: NDArray[np.int64], n: int) -> NDArray[np.float64]:
        """(i) Theorem 7 in items: ``M0 ≤ N0·U_n(K, δ)`` (the certificate's ``r`` bound times ``N``)."""
        return self.n0 * np.asarray(cp_upper(k, n, self.delta), dtype=float)

    def hypergeometric_bound(self, k: NDArray[np.int64], n: int) -> NDArray[np.int64]:
        """(ii) Theorem 8: ``M0 ≤ MU(K, δ; N0, n)``."""
        return np.asarray(hypergeom_upper(k, self.delta, population=self.n0, draws=n), dtype=np.int64)

    def band_bound(self, band: int, k: NDArray[np.int64], n: int) -> NDArray[np.int64]:
        """(iii) one rank band's share of §9's bound: ``MU(K_s, δ/S; N_s, n_s)``."""
        alpha, size = self.delta / len(self.band_sizes), self.band_sizes[band]
        return np.asarray(hypergeom_upper(k, alpha, population=size, draws=n), dtype=np.int64)

    def two_pool_bounds(self, k0: NDArray[np.int64], n0: int, k1: NDArray[np.int64], n1: int
                        ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(iv) Corollary 11 at ``δ/2`` per pool: ``(ML(K1), MU(K0))``."""
        mu = np.asarray(hypergeom_upper(k0, self.delta / 2, population=self.n0, draws=n0), dtype=float)
        ml = np.asarray(hypergeom_lower(k1, self.delta / 2, population=self.n1, draws=n1), dtype=float)
        return ml, mu

    def _meets(self, bound: NDArray[Any]) -> bool:
        return bool(recall_meets(self.m1, bound, self.rho)[0])

    def n_binomial(self, q: float) -> int | None:
        """(i) exactly the fewest i.i.d. draws meeting the target with probability ``≥ q``."""
        eta = self.m0 / self.n0
        return first_crossing(lambda k, n: self._meets(self.binomial_bound(np.array([k]), n)),
                              lambda k, n: float(stats.binom.cdf(k, n, eta)), q, _binomial_cap(self))

    def n_hypergeometric(self, q: float) -> int | None:
        """(ii) exactly the fewest draws without replacement meeting the target with probability ``≥ q``."""
        return first_crossing(lambda k, n: self._meets(self.hypergeometric_bound(np.array([k]), n)),
                              lambda k, n: float(stats.hypergeom.cdf(k, self.n0, self.m0, n)), q, self.n0)

    # --- (i) binomial elusion audit, n i.i.d. draws from E (Theorem 7)
    def p_binomial(self, n: int) -> float:
        eta = self.m0 / self.n0
        k, p = _support(lambda k: np.asarray(stats.binom.pmf(k, n, eta), dtype=float), 0, n)
        return float(p[recall_meets(self.m1, self.binomial_bound(k, n), self.rho)].sum())

    # --- (ii) hypergeometric elusion audit, n draws without replacement (Theorem 8)
    def p_hypergeometric(self, n: int) -> float:
        k, p = _hypergeom_law(self.n0, self.m0, n)
        return float(p[recall_meets(self.m1, self.hypergeometric_bound(k, n), self.rho)].sum())

    # --- (iii) stratified, per-band sizes (Section 9, Theorem 8 per band at δ/S)
    def band_sizes_for(self, per_band: int) -> list[int]:
        return [min(per_band, size) for size in self.band_sizes]

    def p_stratified(self, sizes: Sequence[int]) -> float:
        """P(Σ_s band bound ≤ the largest missed count that meets the target): the law of the sum
        by convolution, truncated at that count."""
        t = self.missed_limit()
        if t < 0:
            return 0.0
        dist = np.zeros(t + 1)
        dist[0] = 1.0
        for band, (size, missed, n) in enumerate(zip(self.band_sizes, self.band_missed, sizes, strict=True)):
            k, p = _hypergeom_law(size, missed, n)
            bound = self.band_bound(band, k, n)
            law = np.bincount(bound[bound <= t], weights=p[bound <= t], minlength=t + 1)
            dist = np.convolve(dist, law)[: t + 1]
        return float(dist.sum())

    # --- (iv) two-pool recall (Corollary 11), δ/2 per pool
    def p_two_pool(self, n0: int, n1: int) -> float:
        k0, p0 = _hypergeom_law(self.n0, self.m0, n0)
        k1, p1 = _hypergeom_law(self.n1, self.m1, n1)
        ml, mu = self.two_pool_bounds(k0, n0, k1, n1)
        ok = recall_meets(ml[:, None], mu[None, :], self.rho)
        return float(p1 @ ok @ p0)


def first_crossing(passes: Callable[[int, int], bool], cdf: Callable[[int, int], float], q: float, cap: int
                   ) -> int | None:
    """The exact smallest ``n ≤ cap`` at which a one-pool audit meets the target with probability
    ``≥ q``, or None.

    ``passes(k, n)``: whether finding ``k`` relevant items in ``n`` draws meets the target — false
    then true as ``n`` grows, for a fixed ``k`` (the bound shrinks with ``n``); ``cdf(k, n)``:
    ``P(K_n ≤ k)``. With ``n_k`` the smallest ``n`` at which ``k`` finds still pass, the success
    probability on ``[n_k, n_{k+1})`` is ``cdf(k, n)``, which falls as ``n`` grows: the probability is
    a sawtooth whose teeth peak at the ``n_k``, so the first crossing is the first ``n_k`` whose
    peak reaches ``q``. (A bisection on the sawtooth can land on a later tooth: on the screening
    set it gave 237 instead of 208.)
    """

    def first_passing(k: int, lo: int) -> int | None:
        if lo > cap or not passes(k, cap):
            return None
        hi = cap
        while hi > lo:
            mid = (lo + hi) // 2
            if passes(k, mid):
                hi = mid
            else:
                lo = mid + 1
        return hi

    k = 0
    n_k = first_passing(0, 1)
    while n_k is not None:
        top = k  # the largest count that still passes at n_k
        while top + 1 <= n_k and passes(top + 1, n_k):
            top += 1
        if cdf(top, n_k) >= q:
            return n_k
        k = top + 1
        n_k = first_passing(k, max(n_k + 1, k))
    return None


def smallest(prob: Callable[[int], float], q: float, hi: int) -> int | None:
    """``n`` in ``[1, hi]`` with ``prob(n) ≥ q`` (and ``prob(n − 1) < q``) by bisection, or None
    when even ``hi`` falls short. Discrete bounds make ``prob`` a sawtooth in ``n`` (see
    :func:`first_crossing`), so this is a crossing, not always the first one."""
    if prob(hi) < q:
        return None
    lo = 0  # prob(0) < q: an empty audit certifies nothing
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if prob(mid) >= q:
            hi = mid
        else:
            lo = mid
    return hi


def _binomial_cap(t: Target) -> int:
    # i.i.d. draws are not limited by the pool; 20 N0 is far beyond any useful audit here
    return 20 * t.n0


def two_pool_cost(t: Target, q: float, splits: Sequence[float]) -> tuple[int, int] | None:
    """Fewest total labels ``(n0, n1)`` with success probability ≥ q, over split fractions ``n1/n``."""
    best: tuple[int, int] | None = None
    for f in splits:
        def prob(n: int, f: float = f) -> float:
            n1 = min(t.n1, max(1, round(f * n)))
            return t.p_two_pool(min(t.n0, n - n1), n1) if n > n1 else 0.0

        n = smallest(prob, q, t.n0 + t.n1)
        if n is not None:
            n1 = min(t.n1, max(1, round(f * n)))
            if best is None or n < sum(best):
                best = (n - n1, n1)
    return best


# ---------------------------------------------------------------------------------------------
# what `rankcut audit plan` gives (the workflow's planner, on files)


def plans(scn: Scenario, cuts: NDArray[np.int64], t: Target, folder: Path) -> dict[str, dict[str, Any]]:
    """Planned sizes of the four designs, from ``workflow.freeze`` + ``workflow.plan``."""
    run = scn.run_path
    if run is None:
        run = folder / "full.run"
        write_run(run, scn.lists)
    cut = folder / f"cut-{int(cuts.sum())}.run"
    write_run(cut, scn.lists, cuts)
    missed = t.missed_limit()
    out: dict[str, dict[str, Any]] = {}
    specs: dict[str, dict[str, Any]] = {
        "binomial": {"design": "excluded", "max_missed": missed, "sampling": "with-replacement"},
        "hypergeometric": {"design": "excluded", "max_missed": missed, "sampling": "without-replacement"},
        "stratified": {"design": "stratified", "max_missed": missed, "bands": list(scn.bands[1:])},
        "two-pool": {"design": "two-pool", "target_recall": t.rho},
    }
    for name, spec in specs.items():
        audit = folder / f"{name}-{int(cuts.sum())}"
        # the cuts are given: a query cut at 0 has no line in the cut run
        workflow.freeze(audit, run=run, cut=cut, delta=t.delta, seed=0, allow_missing_queries=True, **spec)
        guess = {"expected_precision": t.m1 / t.n1} if name == "two-pool" else {}
        out[name] = dict(workflow.plan(audit, **guess).sizes or {})
    return out


# ---------------------------------------------------------------------------------------------
# the tables


@dataclass(frozen=True)
class CostRow:
    design: str
    certificate: str
    plan: str
    p_plan: float | None
    n50: str
    n80: str
    reviewed: int


def _fmt(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def cost_rows(scn: Scenario, cuts: NDArray[np.int64], folder: Path, splits: Sequence[float]) -> list[CostRow]:
    t = Target.of(scn, cuts)
    planned = plans(scn, cuts, t, folder)
    rows: list[CostRow] = []

    def single(design: str, cert: str, prob: Callable[[int], float], first: Callable[[float], int | None],
               key: str) -> None:
        n_plan = int(planned[key]["excluded"])
        rows.append(CostRow(design, cert, f"{n_plan:,}", prob(n_plan) if n_plan else None,
                            _fmt(first(0.5)), _fmt(first(0.8)), t.n1))

    single("(i) binomial elusion", "Thm 7: M0 ≤ N0·U_n(K, δ)", t.p_binomial, t.n_binomial, "binomial")
    single("(ii) hypergeometric elusion", "Thm 8: M0 ≤ MU(K, δ; N0, n)", t.p_hypergeometric,
           t.n_hypergeometric, "hypergeometric")

    s = len(t.band_sizes)
    band_plan = [int(v) for v in planned["stratified"]["excluded"]]

    def p_strat(total: int) -> float:
        return t.p_stratified(t.band_sizes_for(math.ceil(total / s)))

    def strat_n(q: float) -> str:
        n = smallest(p_strat, q, s * max(t.band_sizes))
        return "—" if n is None else f"{sum(t.band_sizes_for(math.ceil(n / s))):,}"

    rows.append(CostRow(f"(iii) stratified, {s} rank bands", "§9: M0 ≤ Σ MU(K_s, δ/S; N_s, n_s)",
                        f"{sum(band_plan):,} ({' + '.join(f'{v:,}' for v in band_plan)})",
                        t.p_stratified(band_plan), strat_n(0.5), strat_n(0.8), t.n1))

    tp = planned["two-pool"]
    tp_text, tp_p = "—", None
    if tp:
        tp_text = f"{tp['excluded'] + tp['included']:,} ({tp['excluded']:,} + {tp['included']:,})"
        tp_p = t.p_two_pool(int(tp["excluded"]), int(tp["included"]))

    def tp_n(q: float) -> str:
        best = two_pool_cost(t, q, splits)
        return "—" if best is None else f"{sum(best):,} ({best[0]:,} + {best[1]:,})"

    rows.append(CostRow("(iv) two-pool", "Cor 11: Recall ≥ ML/(ML + MU), δ/2 each", tp_text, tp_p,
                        tp_n(0.5), tp_n(0.8), 0))
    return rows


def render(scn: Scenario, cuts: NDArray[np.int64], label: str, rows: list[CostRow]) -> str:
    t = Target.of(scn, cuts)
    depth = cuts.mean()
    bands = ", ".join(f"{n:,} items ({m} relevant)" for n, m in zip(t.band_sizes, t.band_missed, strict=True))
    lines = [
        f"#### {scn.title}{label}",
        "",
        f"Mean depth {depth:.1f}; N1 = {t.n1:,} kept, N0 = {t.n0:,} excluded; relevant kept M1 = {t.m1:,}, "
        f"missed M0 = {t.m0:,}: true recall {t.recall:.3f}, precision {t.m1 / max(t.n1, 1):.3f}, "
        f"elusion M0/N0 = {t.m0 / max(t.n0, 1):.4f}. Rank bands below the cut: "
        f"{bands}.",
        *[f"Note: {n}." for n in scn.notes],
        "",
    ]
    if t.recall < t.rho:
        lines += [f"True recall {t.recall:.3f} < {t.rho}: no audit can certify Recall ≥ {t.rho} for this cut "
                  f"(a valid certificate does so with probability ≤ δ).", ""]
        return "\n".join(lines)
    lines += [
        "| design | certificate | plan (zero-count) | P(plan) | n (P ≥ 50%) | n (P ≥ 80%) | + included pool "
        "reviewed |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        p = "—" if r.p_plan is None else f"{r.p_plan:.2f}"
        lines.append(f"| {r.design} | {r.certificate} | {r.plan} | {p} | {r.n50} | {r.n80} | "
                     f"{r.reviewed:,} |")
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="Robust04 cut by greedy-k and the screening set only (no AttnCut, no CLEF)")
    args = parser.parse_args(argv)
    splits = [round(f, 2) for f in np.arange(0.05, 0.951, 0.05)]
    t0 = time.perf_counter()
    scenarios: list[tuple[Scenario, list[tuple[NDArray[np.int64], str]]]] = []
    r04 = [robust04()] if args.quick else [robust04(), robust04_attncut()]
    for scn in r04:
        deep = scn.family[:, -1]
        scenarios.append((scn, [(scn.cuts, ""),
                                (deep, f" — the family's deepest member, cut + {scn.offsets[-1]}")]))
    if not args.quick:
        for spec in ("fixed-k:1000", "distribution"):
            c = clef(spec)
            scenarios.append((c, [(c.cuts, "")]))
    scr = screening()
    scenarios.append((scr, [(scr.cuts, "")]))
    print(f"Recall ≥ {RHO} at confidence {1 - DELTA:g} (δ = {DELTA}); sizes in labels.\n")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (scn, cuts_list) in enumerate(scenarios):
            for j, (cuts, label) in enumerate(cuts_list):
                folder = Path(tmp) / f"{i}-{j}"
                folder.mkdir()
                rows = cost_rows(scn, cuts, folder, splits) if Target.of(scn, cuts).recall >= RHO else []
                print(render(scn, cuts, label, rows))
    print(f"(measured in {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
