"""Cutter parameters outside their domain are refused naming the parameter, and a depth beyond
the lists is said once per call, not clipped silently (issue 15)."""

from __future__ import annotations

import warnings

import pytest

from rankcut.cutters import make_cutter
from rankcut.cutters.base import available_cutters, cutter_class
from rankcut.data.lists import Posting, RankedLists


def _lists(lengths: list[int]) -> RankedLists:
    run = {f"q{i}": [Posting(f"d{j}", float(n - j), j + 1) for j in range(n)]
           for i, n in enumerate(lengths)}
    return RankedLists.from_postings(run, None)


@pytest.mark.parametrize("spec", ["surprise:-1", "surprise:-0.5", "surprise:-inf"])
def test_a_negative_surprise_threshold_is_refused(spec: str) -> None:
    # −log S is never below 0: a negative threshold kept every document, as 0 does
    with pytest.raises(ValueError, match=rf"cutter spec '{spec}': threshold must be >= 0 \(a surprise in "
                                         r"nats; 0 keeps every document\)"):
        make_cutter(spec)


def test_surprise_zero_and_inf_stay_the_two_ends() -> None:
    lists = _lists([30, 30])
    assert make_cutter("surprise:0").predict(lists).tolist() == [30, 30]
    assert make_cutter("surprise:inf").predict(lists).tolist() == [1, 1]


def test_fixed_k_beyond_the_lists_says_so_once_per_call() -> None:
    lists = _lists([300, 300, 50])
    with pytest.warns(UserWarning, match=r"fixed-k: k=1000 exceeds the length of 3 of 3 lists \(the "
                                         r"longest has 300 documents\); they are kept whole") as caught:
        cuts = make_cutter("fixed-k:1000").predict(lists)
    assert cuts.tolist() == [300, 300, 50] and len(caught) == 1
    with pytest.warns(UserWarning, match="exceeds the length of 1 of 3 lists"):
        make_cutter("fixed-k:100").predict(lists)


def test_greedy_k_learned_beyond_the_lists_says_so() -> None:
    """A depth learned on long lists (1,000 documents) kept every shorter test list whole without
    a word, as fixed-k says it (the RAG engineer walk: greedy-k:recall on RepLLaMA, test on BM25)."""
    run = {f"q{i}": [Posting(f"d{j}", float(400 - j), j + 1) for j in range(400)] for i in range(2)}
    train = RankedLists.from_postings(run, {q: {"d399": 1} for q in run})   # relevant: the last one
    cutter = make_cutter("greedy-k:recall").fit(train)
    test = _lists([300, 50])
    with pytest.warns(UserWarning, match=rf"greedy-k: the depth learned, k={cutter.k_}, exceeds the length "
                                         r"of 2 of 2 lists \(the longest has 300 documents\)") as caught:
        assert cutter.predict(test).tolist() == [300, 50]
    assert len(caught) == 1 and cutter.k_ > 300


def test_fixed_k_within_every_list_is_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert make_cutter("fixed-k:50").predict(_lists([300, 50])).tolist() == [50, 50]


@pytest.mark.parametrize("name", [n for n in available_cutters() if cutter_class(n).spec_param])
def test_every_spec_parameter_is_checked_and_named(name: str) -> None:
    key, convert = cutter_class(name).spec_param or ("", str)
    if convert is str:
        with pytest.raises(ValueError, match=rf"cutter spec '{name}:nonsense'.*{key}"):
            make_cutter(f"{name}:nonsense")
    elif convert is float:
        with pytest.raises(ValueError, match=rf"cutter spec '{name}:nan'.*{key}"):
            make_cutter(f"{name}:nan")
    else:
        with pytest.raises(ValueError, match=rf"cutter spec '{name}:0'.*{key}"):
            make_cutter(f"{name}:0")
