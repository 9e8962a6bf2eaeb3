"""RankedLists: the relevance threshold and a short repr."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest

from rankcut.data.lists import (
    NoRelevantWarning,
    Posting,
    RankedLists,
    order_postings,
    warn_if_nothing_relevant,
)

RUN = {"q1": [Posting("a", 3.0, 1), Posting("b", 2.0, 2), Posting("c", 1.0, 3)],
       "q2": [Posting("x", 1.0, 1)]}
QRELS = {"q1": {"a": 2, "b": 1}, "q2": {"x": 0}}


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), -float("inf"), 0, 0.0, -1])
def test_threshold_must_be_finite_and_positive(threshold):
    # unjudged documents get relevance 0: a threshold ≤ 0 would make all of them relevant
    with pytest.raises(ValueError, match=r"threshold must be"):
        RankedLists.from_postings(RUN, QRELS, threshold=threshold)
    lists = RankedLists.from_postings(RUN, QRELS)
    with pytest.raises(ValueError, match=r"threshold must be"):
        replace(lists, threshold=threshold)


def test_threshold_message_says_why_zero_is_refused():
    with pytest.raises(ValueError, match="unjudged documents count as relevance 0"):
        RankedLists.from_postings(RUN, QRELS, threshold=0)


def test_small_positive_thresholds_are_accepted():
    lists = RankedLists.from_postings(RUN, QRELS, threshold=0.5)
    assert lists.labels[0].tolist() == [True, True, False]


def test_warns_when_no_judged_document_reaches_the_threshold():
    lists = RankedLists.from_postings(RUN, QRELS, threshold=3)
    with pytest.warns(NoRelevantWarning, match=r"relevance ≥ 3 \(the highest listed grade is 2\): no "
                      r"document of the 2 lists counts as relevant"):
        warn_if_nothing_relevant(lists)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_nothing_relevant(RankedLists.from_postings(RUN, QRELS, threshold=2))  # "a" reaches 2
        warn_if_nothing_relevant(RankedLists.from_postings(RUN))  # no qrels, nothing to warn about
        # a relevant document outside the lists still counts (n_relevant)
        warn_if_nothing_relevant(RankedLists.from_postings(RUN, {"q2": {"unlisted": 5}}, threshold=5))


def test_repr_is_one_short_line():
    run = {f"q{i}": [Posting(f"d{j}", float(-j), j + 1) for j in range(300)] for i in range(50)}
    lists = RankedLists.from_postings(run, {"q0": {"d0": 1}})
    assert repr(lists) == ("RankedLists(50 queries, lengths 300..300, ordering='rank', judged at "
                           "threshold 1, 0 features)")
    one = RankedLists.from_postings({"q": [Posting("a", 1.0, 1)]}, ordering="trec_eval")
    assert repr(one) == "RankedLists(1 query, lengths 1..1, ordering='trec_eval', unjudged, 0 features)"
    short = RankedLists.from_postings(RUN, QRELS, threshold=1.5)
    featured = short.with_features(np.zeros((2, 3, 2)), ["score", "length"])
    assert repr(featured) == ("RankedLists(2 queries, lengths 1..3, ordering='rank', judged at "
                              "threshold 1.5, 2 features)")


def test_trec_eval_rule_compares_scores_as_32_bit_floats() -> None:
    # found in review: trec_eval stores scores as C floats, so 1.00000001 and 1.0 tie (then doc_id desc)
    postings = [Posting("A", 1.00000001, 1), Posting("B", 1.0, 2), Posting("C", 0.5, 3)]
    assert [p.doc_id for p in order_postings(postings, "trec_eval")] == ["B", "A", "C"]
    assert [p.doc_id for p in order_postings(postings, "rank")] == ["A", "B", "C"]


def test_repeated_query_ids_are_refused() -> None:
    docs = np.array([["a"], ["b"]], dtype=object)
    with pytest.raises(ValueError, match="'q' appears more than once"):
        RankedLists(("q", "q"), np.zeros((2, 1), dtype=np.int32), docs[:, 0], np.ones((2, 1)),
                    np.ones((2, 1), dtype=bool))
