"""Oracle, Fixed-k and Greedy-k (rankcut.cutters.fixed): hand examples and the Robust04 figures."""

from __future__ import annotations

import numpy as np
import pytest
from cutters_testdata import lists_from_labels, load_robust04

from rankcut.cutters import FixedK, GreedyK, Oracle, make_cutter
from rankcut.data.lists import Posting, RankedLists
from rankcut.metrics import score_at

# F1@k = 2·TP / (k + R), R = relevant documents in the list (AttnCut Eq. 8):
#   q0 [1,0,1,0] (R=2): 2/3, 1/2, 4/5, 2/3
#   q1 [0,1,0,0] (R=1): 0,   2/3, 1/2, 2/5
#   q2 [1,0]     (R=1): 1,   2/3 (a deeper fixed k keeps the whole list: 2/3)
HAND = [[1, 0, 1, 0], [0, 1, 0, 0], [1, 0]]
HAND_MEANS = {
    1: (2 / 3 + 0 + 1) / 3,
    2: (1 / 2 + 2 / 3 + 2 / 3) / 3,
    3: (4 / 5 + 1 / 2 + 2 / 3) / 3,
    4: (2 / 3 + 2 / 5 + 2 / 3) / 3,
}


def test_greedy_k_hand_example() -> None:
    lists = lists_from_labels(HAND)
    g = GreedyK().fit(lists)
    assert g.k_ == 3
    assert g.score_ == pytest.approx(HAND_MEANS[3])
    assert np.isnan(g.curve_[0])
    assert g.curve_[1:] == pytest.approx([HAND_MEANS[k] for k in (1, 2, 3, 4)])
    assert g.predict(lists).tolist() == [3, 3, 2]
    # the chosen k is applied to new lists, clipped to their length
    assert g.predict(lists_from_labels([[0] * 10, [1]])).tolist() == [3, 1]


def test_greedy_k_ties_go_to_smallest_k() -> None:
    # [1,0,0,1], R=2: F1 = 2/3, 1/2, 2/5, 2/3 -> k=1 and k=4 tie
    g = GreedyK().fit(lists_from_labels([[1, 0, 0, 1]]))
    assert g.curve_[1] == g.curve_[4]
    assert g.k_ == 1


def test_greedy_k_other_metrics_and_allow_zero() -> None:
    lists = lists_from_labels([[0, 0, 1], [0, 0, 0]])
    # ±1-DCG: every prefix is negative, the empty cut scores 0
    g = GreedyK(metric="dcg", allow_zero=True).fit(lists)
    assert g.k_ == 0 and g.predict(lists).tolist() == [0, 0]
    assert GreedyK(metric="dcg").fit(lists).k_ == 1
    # recall is highest keeping everything: ties at k=3 only
    assert GreedyK(metric="recall").fit(lists).k_ == 3
    # [1,0,0,0,1] with 3 more relevant documents judged but not listed:
    #   list base (R=2):   F1@1 = 2/3 > F1@5 = 4/7  -> k = 1
    #   judged base (R=5): F1@1 = 1/3 < F1@5 = 4/10 -> k = 5
    run = {"q": [Posting(f"d{j}", float(5 - j), j + 1) for j in range(5)]}
    lists = RankedLists.from_postings(run, {"q": {"d0": 1, "d4": 1, "x1": 1, "x2": 1, "x3": 1}})
    assert GreedyK().fit(lists).k_ == 1
    assert GreedyK(recall_base="judged").fit(lists).k_ == 5


def test_greedy_k_needs_labels() -> None:
    run = {"q": [Posting("d0", 1.0, 1)]}
    with pytest.raises(ValueError, match="greedy-k fit needs relevance judgements"):
        GreedyK().fit(RankedLists.from_postings(run))


def test_fixed_k_keeps_short_lists_whole() -> None:
    lists = lists_from_labels([[0] * 5, [1, 0], [1]])
    assert FixedK(k=3).predict(lists).tolist() == [3, 2, 1]
    assert FixedK(k=1).predict(lists).tolist() == [1, 1, 1]
    assert make_cutter("fixed-k:50").predict(lists).tolist() == [5, 2, 1]
    # unsupervised: no labels needed, fit learns nothing
    unjudged = RankedLists.from_postings({"q": [Posting("d0", 1.0, 1), Posting("d1", 0.5, 2)]})
    f = FixedK(k=1)
    assert f.fit(unjudged) is f and vars(f) == {"k": 1}
    assert f.predict(unjudged).tolist() == [1]


def test_oracle_hand_example() -> None:
    lists = lists_from_labels(HAND)
    # per-query argmax of the F1 values listed above HAND
    assert Oracle().predict(lists).tolist() == [3, 2, 1]
    # [1,0,0,1]: tie between k=1 and k=4 -> smallest
    assert Oracle().predict(lists_from_labels([[1, 0, 0, 1]])).tolist() == [1]
    # ±1-DCG with the empty cut allowed: an all-non-relevant list is best left empty
    two = lists_from_labels([[0, 0], [1, 0]])
    assert Oracle(metric="dcg", allow_zero=True).predict(two).tolist() == [0, 1]
    assert Oracle(metric="dcg").predict(two).tolist() == [1, 1]


def test_oracle_needs_labels_at_predict_time() -> None:
    unjudged = RankedLists.from_postings({"q": [Posting("d0", 1.0, 1)]})
    with pytest.raises(ValueError, match="oracle cutter .* needs relevance judgements"):
        Oracle().predict(unjudged)


# --------------------------------------------------------------------------- Robust04
@pytest.mark.parametrize(
    ("model", "k", "test_f1", "oracle_f1"),
    [("bm25", 31, 0.3039, 0.4413), ("drmm", 37, 0.2997, 0.4398)],
)
def test_robust04_known_figures(model: str, k: int, test_f1: float, oracle_f1: float) -> None:
    """Greedy-k fitted on the train split, evaluated on test (recall over the list, k = 1..300,
    ties in rank order): the dataset README's known figures (DRMM's k=37 is also the paper's)."""
    train, test = load_robust04(model, "train"), load_robust04(model, "test")
    assert len(test) == 50
    greedy = make_cutter("greedy-k:f1").fit(train)
    assert greedy.k_ == k
    assert score_at(test, greedy.predict(test), "f1").mean() == pytest.approx(test_f1, abs=5e-5)
    oracle = make_cutter("oracle").predict(test)
    assert score_at(test, oracle, "f1").mean() == pytest.approx(oracle_f1, abs=5e-5)
    if model == "bm25":
        for depth, f1 in ((5, 0.2169), (10, 0.2768)):
            cuts = make_cutter(f"fixed-k:{depth}").predict(test)
            assert score_at(test, cuts, "f1").mean() == pytest.approx(f1, abs=5e-5)
