"""The score-distribution cutter (rankcut.cutters.distribution): EM on synthetic mixtures, the
expected-F1 estimator, degenerate lists, and a sanity check on Robust04."""

from __future__ import annotations

import numpy as np
import pytest
from cutters_testdata import lists_from_labels, load_robust04, mixture_lists
from scipy import stats

from rankcut.cutters import ScoreDistribution, make_cutter
from rankcut.cutters.distribution import expected_f1, fit_normal_exponential
from rankcut.data.lists import Posting, RankedLists
from rankcut.metrics import curves, oracle_cuts, score_at

TRUE = {"pi": 0.15, "mu": 5.0, "sigma": 1.0, "rate": 1.0, "origin": 2.0}


def true_posterior(lists: RankedLists) -> np.ndarray:
    x = lists.scores - TRUE["origin"]
    rel = TRUE["pi"] * stats.norm.pdf(x, TRUE["mu"], TRUE["sigma"])
    non = (1 - TRUE["pi"]) * stats.expon.pdf(x, scale=1 / TRUE["rate"])
    return np.where(lists.mask, rel / (rel + non), 0.0)


def test_em_recovers_mixture_parameters() -> None:
    lists = mixture_lists(np.random.default_rng(0), 40, 400, **TRUE)
    fit = fit_normal_exponential(lists.scores, lists.mask)
    assert not fit.fallback.any() and fit.converged.all()
    assert np.median(fit.weight) == pytest.approx(TRUE["pi"], abs=0.02)
    assert np.median(fit.mean) == pytest.approx(TRUE["origin"] + TRUE["mu"], abs=0.1)
    assert np.median(fit.std) == pytest.approx(TRUE["sigma"], abs=0.08)
    assert np.median(fit.rate) == pytest.approx(TRUE["rate"], abs=0.08)
    # the exponential starts at the lowest listed score
    assert np.array_equal(fit.shift, np.nanmin(lists.scores, axis=1))
    # posteriors are the closed-form ones of the reported parameters (score units)
    x = lists.scores - fit.shift[:, None]
    rel = fit.weight[:, None] * stats.norm.pdf(lists.scores, fit.mean[:, None], fit.std[:, None])
    non = (1 - fit.weight[:, None]) * stats.expon.pdf(x, scale=1 / fit.rate[:, None])
    assert fit.posterior == pytest.approx(rel / (rel + non), abs=1e-9)
    # and close to the true posteriors
    assert np.mean(np.abs(fit.posterior - true_posterior(lists))) < 0.02
    # log-likelihood per document, in score units
    ll = np.log(rel + non).mean(axis=1)
    assert fit.log_likelihood == pytest.approx(ll, abs=1e-9)


def test_em_is_invariant_to_score_units() -> None:
    lists = mixture_lists(np.random.default_rng(1), 5, 200, **TRUE)
    fit = fit_normal_exponential(lists.scores, lists.mask)
    scaled = fit_normal_exponential(3.0 * lists.scores - 7.0, lists.mask)
    assert scaled.posterior == pytest.approx(fit.posterior, abs=1e-9)
    assert scaled.weight == pytest.approx(fit.weight)
    assert scaled.mean == pytest.approx(3.0 * fit.mean - 7.0)
    assert scaled.std == pytest.approx(3.0 * fit.std)
    assert scaled.rate == pytest.approx(fit.rate / 3.0)
    assert scaled.log_likelihood == pytest.approx(fit.log_likelihood - np.log(3.0))


def test_em_stops_at_max_iter() -> None:
    lists = mixture_lists(np.random.default_rng(2), 4, 200, **TRUE)
    fit = fit_normal_exponential(lists.scores, lists.mask, max_iter=3)
    assert fit.n_iter.tolist() == [3, 3, 3, 3] and not fit.converged.any()
    full = fit_normal_exponential(lists.scores, lists.mask, tol=1e-10)
    assert np.all(full.n_iter > 3) and full.converged.all()


def test_expected_f1_hand_example() -> None:
    # p = [0.9, 0.5, 0.1], Σp = 1.5: E[F1](k) = 2·Σ_{i≤k} p_i / (k + 1.5)
    curve = expected_f1(np.array([[0.9, 0.5, 0.1, 0.0]]), np.array([[True, True, True, False]]))
    assert np.isnan(curve[0, 0]) and np.isnan(curve[0, 4])
    assert curve[0, 1:4] == pytest.approx([1.8 / 2.5, 2.8 / 3.5, 3.0 / 4.5])
    with pytest.raises(ValueError, match="probabilities in"):
        expected_f1(np.array([[1.5]]), np.array([[True]]))


def test_expected_f1_equals_true_f1_with_certain_labels() -> None:
    """With posteriors 0/1 the estimator is the F1 of Eq. 8 (recall over the list)."""
    labels = [[1, 0, 1, 0, 0], [0, 0, 1, 1, 1]]
    lists = lists_from_labels(labels)
    assert expected_f1(lists.labels.astype(float), lists.mask)[:, 1:] == pytest.approx(
        curves(lists, "f1")[:, 1:]
    )


def test_expected_f1_cut_is_near_the_true_f1_optimum() -> None:
    lists = mixture_lists(np.random.default_rng(3), 60, 300, **TRUE)
    cuts = ScoreDistribution().predict(lists)
    # the cut the same estimator gives with the *true* posteriors
    best = expected_f1(true_posterior(lists), lists.mask)
    best[:, 0] = -np.inf
    true_cuts = np.nanargmax(best, axis=1)
    f1 = score_at(lists, cuts, "f1").mean()
    assert f1 >= score_at(lists, true_cuts, "f1").mean() - 0.02
    assert f1 >= score_at(lists, oracle_cuts(lists, "f1"), "f1").mean() - 0.05
    assert np.median(np.abs(cuts - true_cuts)) <= 3


@pytest.mark.filterwarnings("error")  # guarded, not by luck through NaN arithmetic
def test_degenerate_lists_are_kept_whole() -> None:
    rng = np.random.default_rng(4)
    good = mixture_lists(rng, 1, 100, **TRUE)
    run = {
        "good": [Posting(f"g{j}", float(s), j + 1) for j, s in enumerate(good.scores[0])],
        "flat": [Posting(f"f{j}", 2.5, j + 1) for j in range(30)],
        "short": [Posting(f"s{j}", float(9 - j), j + 1) for j in range(9)],
        "one": [Posting("o0", 1.0, 1)],
    }
    lists = RankedLists.from_postings(run)  # unjudged: the cutter needs no labels
    fit = ScoreDistribution().fit_mixture(lists)
    assert fit.fallback.tolist() == [False, True, True, True]
    assert np.isnan(fit.weight[1:]).all() and np.isnan(fit.posterior[1:]).all()
    with pytest.warns(UserWarning) as said:
        cuts = make_cutter("distribution").predict(lists)   # kept whole, and said
    assert [str(w.message).split(":")[0] for w in said] == [
        "1 of the 4 lists score every document alike (query 'flat')",
        "2 of the 4 lists have fewer than min_docs=10 documents (query 'short', 'one')"]
    assert "distribution does not fit them and keeps them whole" in str(said[1].message)
    assert cuts[1:].tolist() == [30, 9, 1]
    assert 1 <= cuts[0] < 100
    # min_docs lowers the bar for short lists
    assert not ScoreDistribution(min_docs=9).fit_mixture(lists).fallback[2]


def test_fit_stores_only_parameters() -> None:
    lists = mixture_lists(np.random.default_rng(5), 3, 50, **TRUE)
    cutter = ScoreDistribution(max_iter=50)
    params = dict(vars(cutter))
    assert cutter.fit(lists) is cutter and vars(cutter) == params
    assert not cutter.requires_fit()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_iter": 0}, "max_iter must be an integer ≥ 1"),
        ({"tol": 0.0}, "tol must be > 0"),
        ({"min_docs": 1}, "min_docs must be an integer ≥ 2"),
        ({"init_top": 0.0}, r"init_top must be in \(0, 1\)"),
    ],
)
def test_fit_normal_exponential_validates(kwargs: dict[str, float], message: str) -> None:
    lists = lists_from_labels([[0, 1, 0]])
    with pytest.raises(ValueError, match=message):
        fit_normal_exponential(lists.scores, lists.mask, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        ScoreDistribution(**kwargs).predict(lists)  # type: ignore[arg-type]


def test_fit_normal_exponential_rejects_bad_arrays() -> None:
    with pytest.raises(ValueError, match="same 2-D shape"):
        fit_normal_exponential(np.zeros((2, 3)), np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="finite"):
        fit_normal_exponential(np.array([[np.inf, 1.0]]), np.array([[True, True]]))
    with pytest.raises(ValueError, match="sorted descending"):
        fit_normal_exponential(np.array([[1.0, 2.0, np.nan]]), np.array([[True, True, False]]))
    with pytest.raises(ValueError, match="padding"):
        fit_normal_exponential(np.array([[2.0, np.nan, 1.0]]), np.array([[True, False, True]]))
    # padding after the list may hold anything
    fit_normal_exponential(np.array([[2.0, 1.0, 5.0]]), np.array([[True, True, False]]), min_docs=2)


@pytest.mark.parametrize("model", ["bm25", "drmm"])
def test_robust04_sanity(model: str) -> None:
    """Unsupervised, so evaluated on test directly: every list fitted, and F1 between Fixed-k(5)
    and the oracle (measured: BM25 0.3143, DRMM 0.3315)."""
    test = load_robust04(model, "test")
    cutter = make_cutter("distribution")
    fit = cutter.fit_mixture(test)
    assert not fit.fallback.any() and fit.converged.all()
    cuts = cutter.predict(test)
    f1 = score_at(test, cuts, "f1").mean()
    assert score_at(test, make_cutter("fixed-k:5").predict(test), "f1").mean() < f1
    assert f1 < score_at(test, make_cutter("oracle").predict(test), "f1").mean()
