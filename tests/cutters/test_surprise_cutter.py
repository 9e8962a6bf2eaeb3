"""The extreme-value Surprise cutter (rankcut.cutters.surprise): the GPD tail fit, the surprise
scores, the cut rule, the learned threshold, and a sanity check on Robust04."""

from __future__ import annotations

import numpy as np
import pytest
from cutters_testdata import lists_from_labels, load_robust04
from scipy import stats

from rankcut.cutters import Surprise, make_cutter
from rankcut.cutters.surprise import XI_BOUND, fit_gpd_tail
from rankcut.data.lists import Posting, RankedLists
from rankcut.metrics import score_at


def gpd_lists(shape: float, n_queries: int, n_docs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores ``5 + Y``, ``Y ~ GPD(shape, scale 2)``, sorted descending, and a full mask."""
    y = stats.genpareto.rvs(shape, scale=2.0, size=(n_queries, n_docs), random_state=seed)
    return -np.sort(-(5.0 + y), axis=1), np.ones((n_queries, n_docs), dtype=bool)


@pytest.mark.parametrize("shape", [-0.2, 0.0, 0.2])
def test_pwm_recovers_gpd_parameters(shape: float) -> None:
    scores, mask = gpd_lists(shape, 30, 1000, seed=11)
    fit = fit_gpd_tail(scores, mask)
    assert np.median(fit.shape) == pytest.approx(shape, abs=0.03)
    assert np.median(fit.scale) == pytest.approx(2.0, rel=0.05)
    assert np.array_equal(fit.threshold, scores[:, -1])


def hosking_wallis(y: np.ndarray) -> tuple[float, float]:
    """Reference PWM estimate (Hosking & Wallis 1987) of one sample, written as a loop."""
    y = np.sort(y)
    n = len(y)
    a0 = sum(y) / n
    a1 = sum((1 - (i - 0.35) / n) * y[i - 1] for i in range(1, n + 1)) / n
    k = a0 / (a0 - 2 * a1) - 2  # their k is −ξ
    return -k, 2 * a0 * a1 / (a0 - 2 * a1)


def test_pwm_matches_the_formula_on_padded_lists() -> None:
    rng = np.random.default_rng(10)
    rows = [np.sort(rng.exponential(1.0, n))[::-1] + 3.0 for n in (12, 30, 17)]
    lists = lists_from_labels([[0] * len(r) for r in rows], [r.tolist() for r in rows])
    fit = fit_gpd_tail(lists.scores, lists.mask)
    for q, r in enumerate(rows):
        xi, sigma = hosking_wallis(r - r.min())
        assert abs(xi) < 0.45  # not clipped
        assert fit.shape[q] == pytest.approx(xi, abs=1e-12)
        assert fit.scale[q] == pytest.approx(sigma, rel=1e-12)


def test_heavy_tails_are_clipped_keeping_the_mean() -> None:
    scores, mask = gpd_lists(0.9, 3, 2000, seed=9)
    fit = fit_gpd_tail(scores, mask)
    assert fit.shape.tolist() == [XI_BOUND] * 3
    y_mean = (scores - fit.threshold[:, None]).mean(axis=1)
    assert fit.scale == pytest.approx(y_mean * (1 - XI_BOUND))  # GPD mean σ / (1 − ξ) = sample mean


def test_surprise_is_minus_log_gpd_survival() -> None:
    scores, mask = gpd_lists(0.1, 5, 200, seed=12)
    fit = fit_gpd_tail(scores, mask)
    y = scores - fit.threshold[:, None]
    sf = stats.genpareto.sf(y, fit.shape[:, None], scale=fit.scale[:, None])
    assert fit.surprise == pytest.approx(-np.log(sf), rel=1e-9, abs=1e-12)
    assert np.all(np.diff(fit.surprise, axis=1) <= 0)  # does not increase down the list
    assert np.all(fit.surprise[:, -1] == 0)  # the lowest score is the threshold itself


@pytest.mark.filterwarnings("error")  # guarded, not by luck through NaN arithmetic
def test_padding_and_degenerate_lists() -> None:
    scores, _ = gpd_lists(0.0, 1, 50, seed=13)
    run = {
        "good": [Posting(f"g{j}", float(s), j + 1) for j, s in enumerate(scores[0])],
        "flat": [Posting(f"f{j}", 1.0, j + 1) for j in range(20)],
        "short": [Posting(f"s{j}", float(5 - j), j + 1) for j in range(5)],
    }
    lists = RankedLists.from_postings(run)
    fit = Surprise(threshold=1.0).fit_tail(lists)
    assert fit.fallback.tolist() == [False, True, True]
    assert np.isnan(fit.surprise[1:]).all() and np.isnan(fit.shape[1:]).all()
    with pytest.warns(UserWarning) as said:
        cuts = make_cutter("surprise:1.0").predict(lists)   # kept whole, and said
    assert [str(w.message).split(":")[0] for w in said] == [
        "1 of the 3 lists score every document alike (query 'flat')",
        "1 of the 3 lists has fewer than min_docs=10 documents (query 'short')"]
    assert cuts[1:].tolist() == [20, 5]
    # the good list: the documents with surprise ≥ 1 (a prefix)
    assert cuts[0] == int(np.sum(fit.surprise[0, :50] >= 1.0))
    assert 1 <= cuts[0] < 50


def test_fixed_threshold_rule() -> None:
    scores, mask = gpd_lists(0.0, 4, 100, seed=14)
    lists = lists_from_labels([[0] * 100] * 4, scores.tolist())
    surprise = fit_gpd_tail(lists.scores, lists.mask).surprise
    for tau in (0.5, 2.0, 4.0):
        cuts = Surprise(threshold=tau).predict(lists)
        assert cuts.tolist() == np.maximum((surprise >= tau).sum(axis=1), 1).tolist()
    assert Surprise(threshold=0.0).predict(lists).tolist() == [100] * 4
    assert Surprise(threshold=1e9).predict(lists).tolist() == [1] * 4
    assert Surprise(threshold=1e9, allow_zero=True).predict(lists).tolist() == [0] * 4
    assert make_cutter("surprise:inf").predict(lists).tolist() == [1] * 4
    with pytest.raises(ValueError, match="threshold must be >= 0"):  # it kept the whole list, as 0 does
        make_cutter("surprise:-inf")
    with pytest.raises(ValueError, match="sorted descending"):
        fit_gpd_tail(lists.scores[:, ::-1], lists.mask)


def test_learned_threshold() -> None:
    rng = np.random.default_rng(15)
    # null scores from an exponential tail, with 5 relevant outliers on top of each list
    labels, scores = [], []
    for _ in range(20):
        null = rng.exponential(1.0, 95)
        rel = 8.0 + rng.exponential(1.0, 5)
        labels.append([1] * 5 + [0] * 95)
        scores.append(np.concatenate([np.sort(rel)[::-1], np.sort(null)[::-1]]).tolist())
    lists = lists_from_labels(labels, scores)
    cutter = Surprise()
    assert cutter.requires_fit()
    cutter.fit(lists)
    cuts = cutter.predict(lists)
    assert cutter.threshold_ in cutter.grid_
    assert cutter.score_ == pytest.approx(score_at(lists, cuts, "f1").mean())
    assert cutter.score_ == pytest.approx(np.max(cutter.curve_))
    assert np.median(cuts) == 5 and cutter.score_ > 0.9


def test_learned_threshold_ties_go_to_the_highest() -> None:
    # only the top document is relevant: every threshold that keeps one document ties, +inf too
    scores, _ = gpd_lists(0.0, 3, 60, seed=16)
    lists = lists_from_labels([[1] + [0] * 59] * 3, scores.tolist())
    cutter = Surprise().fit(lists)
    assert cutter.threshold_ == np.inf
    assert cutter.predict(lists).tolist() == [1, 1, 1]


def test_given_threshold_needs_no_fit_and_no_labels() -> None:
    scores, _ = gpd_lists(0.0, 2, 40, seed=17)
    run = {f"q{i}": [Posting(f"d{j}", float(s), j + 1) for j, s in enumerate(row)]
           for i, row in enumerate(scores)}
    unjudged = RankedLists.from_postings(run)
    cutter = Surprise(threshold=2.0)
    assert not cutter.requires_fit()
    params = dict(vars(cutter))
    assert cutter.fit(unjudged) is cutter and vars(cutter) == params
    with pytest.raises(ValueError, match="needs relevance judgements"):
        Surprise().fit(unjudged)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_grid": 1}, "n_grid must be an integer ≥ 2"),
        ({"min_docs": 2}, "min_docs must be an integer ≥ 3"),
        ({"metric": "ndcg"}, "metric must be one of"),
        ({"threshold": "3"}, "threshold must be a number"),
    ],
)
def test_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Surprise(**kwargs).fit(lists_from_labels([[1, 0, 0]]))  # type: ignore[arg-type]


@pytest.mark.parametrize("model", ["bm25", "drmm"])
def test_robust04_sanity(model: str) -> None:
    """Threshold learned on train, F1 on test between Fixed-k(5) and the oracle (measured:
    BM25 0.3156, DRMM 0.3115)."""
    train, test = load_robust04(model, "train"), load_robust04(model, "test")
    cutter = make_cutter("surprise").fit(train)
    assert 0 < cutter.threshold_ < np.inf
    f1 = score_at(test, cutter.predict(test), "f1").mean()
    assert score_at(test, make_cutter("fixed-k:5").predict(test), "f1").mean() < f1
    assert f1 < score_at(test, make_cutter("oracle").predict(test), "f1").mean()
