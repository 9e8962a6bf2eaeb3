"""Tests of rankcut.significance against scipy directly and a hand-computed Holm example."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rankcut.significance import TESTS, PairedTest, holm, paired_tests


def test_holm_hand_example() -> None:
    # sorted p: 0.01, 0.02, 0.03, 0.04 (m = 4) -> 4·0.01, 3·0.02, 2·0.03, 1·0.04 = .04, .06, .06, .04,
    # made monotone: .04, .06, .06, .06; returned in the input order.
    np.testing.assert_allclose(holm([0.03, 0.01, 0.04, 0.02]), [0.06, 0.04, 0.06, 0.06])
    # capped at 1 and a single p-value unchanged
    np.testing.assert_allclose(holm([0.5, 0.4]), [0.8, 0.8])
    np.testing.assert_allclose(holm([0.7, 0.2]), [0.7, 0.4])
    np.testing.assert_allclose(holm([0.6, 0.9]), [1.0, 1.0])
    np.testing.assert_allclose(holm([0.013]), [0.013])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_holm_properties(p: list[float]) -> None:
    adj = holm(p)
    order = np.argsort(p, kind="stable")
    assert np.all(adj >= np.asarray(p)) and np.all(adj <= 1)
    assert np.all(np.diff(adj[order]) >= 0)  # monotone in the raw p-values
    # Bonferroni is never sharper than Holm
    assert np.all(adj <= np.minimum(1, len(p) * np.asarray(p)) + 1e-15)


@pytest.mark.parametrize("bad", [[[0.1, 0.2]], [0.1, 1.5], [-0.1], [np.nan]])
def test_holm_rejects_bad_input(bad: list[object]) -> None:
    with pytest.raises(ValueError, match="p_values"):
        holm(bad)


def scores_fixture() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.1, 0.6, size=40)
    return {
        "bicut": base,
        "attncut": base + rng.normal(0.05, 0.05, size=40),
        "choppy": base + rng.normal(0.0, 0.05, size=40),
        "fixed": base - rng.normal(0.08, 0.05, size=40),
    }


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_against_scipy(alternative: str) -> None:
    scores = scores_fixture()
    for test, scipy_fn in [("wilcoxon", stats.wilcoxon), ("ttest", stats.ttest_rel)]:
        out = paired_tests(scores, "bicut", test=test, alternative=alternative, alpha=0.05)
        assert list(out) == ["attncut", "choppy", "fixed"]
        raw = [scipy_fn(scores[m], scores["bicut"], alternative=alternative) for m in out]
        expected_adj = holm([r.pvalue for r in raw])
        for (m, res), ref, adj in zip(out.items(), raw, expected_adj, strict=True):
            assert isinstance(res, PairedTest)
            assert (res.method, res.baseline, res.test, res.n) == (m, "bicut", test, 40)
            assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
            assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
            assert res.p_adjusted == pytest.approx(adj, rel=1e-12)
            assert res.significant == (adj <= 0.05)
            assert res.mean_difference == pytest.approx(np.mean(scores[m] - scores["bicut"]))
            assert res.note == ""


def test_directions_and_significance() -> None:
    out = paired_tests(scores_fixture(), "bicut", test="wilcoxon")
    assert out["attncut"].direction == "better" and out["attncut"].significant
    assert out["fixed"].direction == "worse" and out["fixed"].significant
    # Holm uses the family: choppy's adjusted p is at least its raw p
    assert out["choppy"].p_adjusted >= out["choppy"].p_value


def test_wilcoxon_direction_follows_signed_ranks_not_mean() -> None:
    # many small gains, one large loss: W+ > W− while the mean difference is negative
    base = np.zeros(6)
    method = np.array([0.1, 0.1, 0.1, 0.1, 0.1, -1.0])
    res = paired_tests({"b": base, "m": method}, "b")["m"]
    assert res.mean_difference < 0 and res.direction == "better"
    assert paired_tests({"b": base, "m": method}, "b", test="ttest")["m"].direction == "worse"


def test_all_zero_differences() -> None:
    base = np.array([0.2, 0.4, 0.3])
    for test in TESTS:
        res = paired_tests({"b": base, "same": base.copy(), "up": base + [0.1, 0.2, 0.3]}, "b", test=test)
        same = res["same"]
        assert (same.statistic, same.p_value, same.direction, same.significant) == (0.0, 1.0, "equal", False)
        assert "all differences are zero" in same.note
        assert res["up"].note == ""


def test_constant_difference_t_test_note() -> None:
    base = np.array([0.2, 0.4, 0.3])
    res = paired_tests({"b": base, "m": base + 0.125}, "b", test="ttest")["m"]
    assert res.statistic == np.inf and res.p_value == 0.0 and res.significant
    assert "zero variance" in res.note


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"baseline": "nope"}, "baseline 'nope'"),
        ({"test": "sign"}, "test must"),
        ({"alternative": "bigger"}, "alternative must"),
        ({"alpha": 1.0}, "alpha"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], match: str) -> None:
    args: dict[str, object] = {"baseline": "b"} | kwargs
    with pytest.raises(ValueError, match=match):
        paired_tests({"b": [0.1, 0.2], "m": [0.3, 0.1]}, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("scores", "match"),
    [
        ({"b": [0.1, 0.2]}, "no method besides"),
        ({"b": [0.1], "m": [0.2]}, "at least 2"),
        ({"b": [0.1, 0.2], "m": [0.2, 0.3, 0.4]}, "scores of 'm' have 3 queries"),
        ({"b": [0.1, 0.2], "m": [0.2, np.nan]}, "scores of 'm' contain NaN"),
        ({"b": [[0.1, 0.2]], "m": [[0.2, 0.3]]}, "scores of 'b' must be one-dimensional"),
    ],
)
def test_bad_scores(scores: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        paired_tests(scores, "b")  # type: ignore[arg-type]


def test_holm_can_overturn_raw_significance() -> None:
    # raw t-test p ≈ 0.039 and 0.034, both below 0.05; Holm: 2·0.034 ≈ 0.067 for both
    d = np.array([0.3, 0.1, 0.2, 0.4, -0.1, 0.2, 0.1, 0.3, -0.2, 0.1])
    base = np.full(10, 0.5)
    out = paired_tests({"b": base, "m1": base + d, "m2": base + np.r_[d[:-1], 0.15]}, "b", test="ttest")
    assert all(r.p_value < 0.05 for r in out.values())
    assert all(r.p_adjusted > 0.05 and not r.significant for r in out.values())
    assert out["m1"].p_adjusted == out["m2"].p_adjusted == pytest.approx(2 * out["m2"].p_value)


def test_wilcoxon_drops_zero_differences() -> None:
    # per-query scores often tie; the classic test discards zero differences (scipy's default)
    base = np.full(11, 0.3)
    method = base + [0, 0, 0, 0.1, 0.2, -0.05, 0.3, 0.15, 0.25, 0.12, -0.01]
    res = paired_tests({"b": base, "m": method}, "b")["m"]
    assert res.p_value == pytest.approx(stats.wilcoxon(method, base).pvalue, rel=1e-12)
    assert res.p_value == pytest.approx(0.0390625)
    assert res.n == 11
