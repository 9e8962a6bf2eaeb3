"""Tests of rankcut.evaluation: splits, cross-validation without test-label leaks, per-metric fits,
significance markers, split files, tables and the cut-off figure."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut import metrics
from rankcut.cutters import FixedK, GreedyK, Oracle
from rankcut.data.lists import Posting, RankedLists
from rankcut.data.trec import MissingQueriesWarning
from rankcut.evaluation import check_specs, evaluate_cutters, format_table, read_query_ids
from rankcut.significance import paired_tests

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"

A = [1, 1, 0, 0, 0, 0, 0, 0]  # F1 peaks at k = 2
B = [1, 1, 1, 1, 1, 1, 1, 1]  # F1 peaks at k = 8


def make_lists(labels: list[list[int]], prefix: str = "q") -> RankedLists:
    """Lists ``q0, q1, …`` with documents ``d0, d1, …`` in score order and the given 0/1 labels."""
    run = {f"{prefix}{i}": [Posting(f"d{j}", float(len(lab) - j), j + 1) for j in range(len(lab))]
           for i, lab in enumerate(labels)}
    qrels = {f"{prefix}{i}": {f"d{j}": r for j, r in enumerate(lab)} for i, lab in enumerate(labels)}
    return RankedLists.from_postings(run, qrels)


# --------------------------------------------------------------------------- explicit splits
def test_separate_training_lists_fit_greedy_on_train_only():
    train = make_lists([A] * 3, prefix="t")
    test = make_lists([B] * 4)
    assert GreedyK().fit(make_lists([A] * 3 + [B] * 4)).k_ == 8  # what a leak would pick
    ev = evaluate_cutters(["oracle", "fixed-k:3", "greedy-k"], test, train=train)
    assert ev.protocol["mode"] == "train" and ev.protocol["n_train"] == 3
    assert ev.methods["greedy-k"].cuts["f1"].tolist() == [2] * 4
    assert ev.methods["greedy-k"].fitted["f1"] == [{"fold": -1, "k_": 2, "score_": 1.0}]
    assert ev.methods["oracle"].cuts["f1"].tolist() == [8] * 4
    assert ev.methods["fixed-k:3"].cuts["f1"].tolist() == [3] * 4
    np.testing.assert_allclose(ev.methods["greedy-k"].scores["f1"], 2 * 2 / (2 + 8))
    assert ev.methods["oracle"].mean("f1") == 1.0


def test_split_by_query_ids_trains_on_those_and_tests_on_the_rest():
    lists = make_lists([A, A, B, B, B])
    ev = evaluate_cutters(["greedy-k"], lists, train=["q0", "q1"])
    assert ev.qids == ("q2", "q3", "q4") and ev.protocol["mode"] == "split"
    assert ev.methods["greedy-k"].cuts["f1"].tolist() == [2, 2, 2]
    only = evaluate_cutters(["greedy-k"], lists, train=["q2", "q3", "q4"], test_queries=["q1"])
    assert only.qids == ("q1",) and only.methods["greedy-k"].cuts["f1"].tolist() == [8]


def test_scores_are_the_metrics_of_the_cuts():
    rng = np.random.default_rng(3)
    lists = make_lists((rng.random((12, 15)) < 0.3).astype(int).tolist())
    ev = evaluate_cutters(["oracle", "distribution", "greedy-k"], lists, folds=3, seed=1)
    for res in ev.methods.values():
        for m in ("f1", "dcg"):
            np.testing.assert_array_equal(res.scores[m], metrics.score_at(lists, res.cuts[m], m))
            assert res.mean(m) == pytest.approx(res.scores[m].mean())
    np.testing.assert_array_equal(ev.methods["oracle"].cuts["dcg"], metrics.oracle_cuts(lists, "dcg"))


# --------------------------------------------------------------------------- cross-validation
def test_cross_validation_never_uses_the_labels_of_the_held_out_fold():
    base = make_lists([A] * 5)
    folds = evaluate_cutters(["fixed-k:1"], base, folds=2, seed=0).fold
    held = np.flatnonzero(folds == 0)
    assert len(held) == 3  # array_split of 5 into 2 parts: 3 + 2
    # fold 0 becomes B queries: they dominate, so fitting on all queries would pick k = 8 ...
    labels = [B if i in held else A for i in range(5)]
    changed = make_lists(labels)
    assert GreedyK().fit(changed).k_ == 8
    ev = evaluate_cutters(["greedy-k"], changed, folds=2, seed=0)
    np.testing.assert_array_equal(ev.fold, folds)  # the assignment does not depend on labels
    cuts = ev.methods["greedy-k"].cuts["f1"]
    # ... but fold 0 is cut by a Greedy-k fitted on fold 1 (the A queries) alone,
    assert cuts[held].tolist() == [2, 2, 2]
    # and fold 1 by one fitted on fold 0 (the B queries)
    assert cuts[folds == 1].tolist() == [8, 8]
    assert [f["k_"] for f in ev.methods["greedy-k"].fitted["f1"]] == [2, 8]


def test_only_the_oracle_sees_the_labels_of_the_lists_it_cuts(monkeypatch):
    seen: dict[str, list[bool]] = {"fixed-k": [], "oracle": []}
    for cls in (FixedK, Oracle):
        original = cls._predict

        def spy(self, lists, _original=original):
            seen[self.name].append(lists.gains is not None or lists.n_relevant is not None)
            return _original(self, lists)

        monkeypatch.setattr(cls, "_predict", spy)
    lists = make_lists([A, B, A, B])
    evaluate_cutters(["fixed-k:2", "oracle"], lists, folds=2, seed=0, fit_metric="f1")
    evaluate_cutters(["fixed-k:2", "oracle"], lists, train=["q0", "q1"], fit_metric="f1")
    assert seen == {"fixed-k": [False] * 3, "oracle": [True] * 3}


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_folds_partition_the_queries_evenly_and_reproducibly(n, data, seed):
    folds = data.draw(st.integers(2, n))
    lists = make_lists([[1, 0, 1]] * n)
    ev = evaluate_cutters(["fixed-k:2"], lists, folds=folds, seed=seed)
    assert ev.qids == lists.qids
    sizes = np.bincount(ev.fold, minlength=folds)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1 and sizes.min() >= 1
    again = evaluate_cutters(["fixed-k:2"], lists, folds=folds, seed=seed)
    np.testing.assert_array_equal(again.fold, ev.fold)


def test_the_seed_changes_the_folds():
    lists = make_lists([[1, 0, 1]] * 20)
    one = evaluate_cutters(["fixed-k:2"], lists, folds=5, seed=0).fold
    other = evaluate_cutters(["fixed-k:2"], lists, folds=5, seed=1).fold
    assert not np.array_equal(one, other)


# --------------------------------------------------------------------------- per-metric fitting
def test_fit_metric_each_reports_each_metric_of_its_own_fit():
    c = [1, 0, 0, 0, 1, 1, 0, 0]  # F1 peaks at k = 6, ±1-DCG at k = 1
    train = make_lists([c] * 3, prefix="t")
    f1_k = GreedyK(metric="f1").fit(train).k_
    dcg_k = GreedyK(metric="dcg").fit(train).k_
    assert f1_k != dcg_k
    test = make_lists([A, c])
    each = evaluate_cutters(["greedy-k", "greedy-k:dcg"], test, train=train)
    assert each.methods["greedy-k"].cuts["f1"].tolist() == [f1_k] * 2
    assert each.methods["greedy-k"].cuts["dcg"].tolist() == [dcg_k] * 2
    assert each.methods["greedy-k"].params["dcg"]["metric"] == "dcg"
    # a spec that names its metric is fitted on it for both columns
    assert each.methods["greedy-k:dcg"].cuts["f1"].tolist() == [dcg_k] * 2
    single = evaluate_cutters(["greedy-k", "oracle"], test, train=train, fit_metric="f1")
    assert single.methods["greedy-k"].cuts["dcg"].tolist() == [f1_k] * 2
    np.testing.assert_array_equal(single.methods["oracle"].cuts["dcg"], metrics.oracle_cuts(test, "f1"))
    np.testing.assert_allclose(single.methods["greedy-k"].scores["dcg"],
                               metrics.score_at(test, [f1_k] * 2, "dcg"))


def test_recall_base_reaches_cutters_and_scores():
    run = {"q0": [Posting(f"d{j}", 5.0 - j, j + 1) for j in range(5)]}
    qrels = {"q0": {"d0": 1, "x1": 1, "x2": 1}}  # two relevant documents are not in the list
    lists = RankedLists.from_postings(run, qrels)
    ev = evaluate_cutters(["oracle"], lists, recall_base="judged", metrics=("f1",))
    assert ev.methods["oracle"].params["f1"]["recall_base"] == "judged"
    assert ev.methods["oracle"].mean("f1") == pytest.approx(2 * 1 / (1 + 3))


# --------------------------------------------------------------------------- significance
def test_markers_follow_holm_adjusted_paired_tests():
    rng = np.random.default_rng(0)
    labels = [[1] * int(r) + [0] * (8 - int(r)) for r in rng.integers(1, 4, size=14)]  # peaks ≤ 3
    lists = make_lists(labels)
    specs = ["oracle", "fixed-k:2", "fixed-k:8", "fixed-k:3"]
    ev = evaluate_cutters(specs, lists, baseline="fixed-k:8")
    expected = paired_tests({s: ev.methods[s].scores["f1"] for s in specs[1:]}, "fixed-k:8")
    assert ev.tests["f1"] == expected
    assert "oracle" not in ev.tests["f1"]  # reads the test labels: not a method
    assert ev.marker("fixed-k:2", "f1") == "†" and ev.marker("oracle", "f1") == ""
    worse = evaluate_cutters(specs, lists, baseline="fixed-k:2")
    assert worse.marker("fixed-k:8", "f1") == "‡" and worse.marker("fixed-k:8", "dcg") == "‡"
    none = evaluate_cutters(specs, lists)
    assert none.tests == {} and none.marker("fixed-k:2", "f1") == ""


def test_a_marker_against_the_mean_is_said():
    """Wilcoxon's side is its signed ranks': 30 small gains outrank 3 large losses, so fixed-k:2 is
    significantly better than fixed-k:1 with a lower mean F1, which the legend says (a † beside a
    lower mean read as a mistake, a walk)."""
    lists = make_lists([[1] * 60 + [0, 0]] * 30 + [[1, 0]] * 3)   # F1 +0.032 thirty times, -0.333 three
    ev = evaluate_cutters(["fixed-k:2", "fixed-k:1"], lists, baseline="fixed-k:1", metrics=("f1",))
    test = ev.tests["f1"]["fixed-k:2"]
    assert ev.marker("fixed-k:2", "f1") == "†" and test.mean_difference < 0
    assert (f"fixed-k:2 (F1@k): † by Wilcoxon's signed ranks (the ranks of its per-query gains against "
            f"fixed-k:1 outweigh those of its losses), though its mean is lower by "
            f"{-test.mean_difference:.4f} (its losses are larger in sum).") in format_table(ev)
    agree = evaluate_cutters(["fixed-k:2", "fixed-k:1"], lists, baseline="fixed-k:1", metrics=("f1",),
                             test="ttest")   # the t-test's side is the mean's: nothing to say
    assert "signed ranks" not in format_table(agree)


def test_table_has_table_3_shape_and_a_legend():
    lists = make_lists([A] * 6 + [B] * 2)
    ev = evaluate_cutters(["oracle", "fixed-k:2", "fixed-k:8"], lists, baseline="fixed-k:8")
    text = format_table(ev)
    header = text.splitlines()[0].split()
    assert header == ["Method", "F1@k", "k", "DCG@k", "k"]
    row = next(line for line in text.splitlines() if line.startswith("fixed-k:2"))
    assert row.split()[1] == f"{ev.methods['fixed-k:2'].mean('f1'):.4f}{ev.marker('fixed-k:2', 'f1')}"
    assert "Ordering: rank" in text and "than fixed-k:8" in text and "Not tested: oracle" in text
    md = format_table(ev, markdown=True)
    assert md.startswith("| Method | F1@k | k | DCG@k | k |\n| --- | ---: |")
    assert "- Protocol:" in md


def test_to_dict_is_strict_json_with_per_query_rows():
    lists = make_lists([A, B, A, B, A])
    ev = evaluate_cutters(["greedy-k", "surprise:inf", "fixed-k:1"], lists, folds=2, seed=0,
                          baseline="fixed-k:1")
    data = json.loads(json.dumps(ev.to_dict(), allow_nan=False))
    assert data["protocol"]["mode"] == "cv" and data["protocol"]["fold_sizes"] == [3, 2]
    row = data["summary"][0]
    assert row["method"] == "greedy-k" and row["f1"]["mean"] == ev.methods["greedy-k"].mean("f1")
    assert row["f1"]["test"]["baseline"] == "fixed-k:1"
    assert data["summary"][1]["f1"]["params"]["threshold"] == "inf"
    assert data["per_query"]["qids"] == list(lists.qids)
    assert data["per_query"]["methods"]["fixed-k:1"]["f1"]["k"] == [1] * 5


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"specs": ["greedy-k"]}, "must be fitted"),
        ({"specs": ["oracle", " oracle"]}, r"^cutter 'oracle' is listed twice$"),
        ({"specs": ["fixed-k:10", "fixed-k:010"]},
         r"^cutter 'fixed-k:010' is 'fixed-k:10' again \(FixedK\(k=10\)\): list it once$"),
        ({"specs": ["oracle", "oracle:f1"]}, r"^cutter 'oracle:f1' is 'oracle' again"),
        ({"specs": ["oracle", "", "greedy-k"]}, r"^cutter spec 2 is empty$"),
        ({"specs": ["oracle", 3]}, r"^cutter spec 2 must be a string"),
        ({"specs": []}, "at least one"),
        ({"specs": "oracle"}, "not one string"),
        ({"specs": ["nope"]}, "unknown cutter"),
        ({"baseline": "fixed-k:3"}, "baseline"),
        ({"folds": 1}, "folds must be"),
        ({"folds": 9}, "exceeds"),
        ({"folds": 2, "train": ["q0"]}, "do not also give"),
        ({"folds": 2, "seed": -1}, "seed"),
        ({"train": ["q0", "q1", "q2", "q3"]}, "no test query"),
        ({"train": ["q0"], "test_queries": ["q0", "q1"]}, "share"),
        ({"train": ["q0", "q0"]}, "twice"),
        ({"fit_metric": "map"}, "fit_metric"),
        ({"metrics": ("f1", "f1")}, "metrics"),
        ({"recall_base": "all"}, "recall_base"),
        ({"test": "sign"}, "test must be"),
    ],
)
def test_bad_arguments_raise_value_errors_that_name_them(kwargs, message):
    lists = make_lists([A, B, A, B])
    args = {"specs": ["oracle"], **kwargs}
    with pytest.raises(ValueError, match=message):
        evaluate_cutters(args.pop("specs"), lists, **args)


def test_training_on_test_queries_or_without_labels_is_refused():
    lists = make_lists([A, B])
    with pytest.raises(ValueError, match="share 1 query "):
        evaluate_cutters(["greedy-k"], lists, train=make_lists([A]))
    other_order = RankedLists.from_postings({"t0": [Posting("d0", 1.0, 1)]}, {"t0": {"d0": 1}},
                                            ordering="trec_eval")
    with pytest.raises(ValueError, match="same ordering"):
        evaluate_cutters(["greedy-k"], lists, train=other_order)
    # trained counting grade ≥ 2 and tested at ≥ 1: its protocol line named the test lists' alone
    other_grade = RankedLists.from_postings({"t0": [Posting("d0", 1.0, 1)]}, {"t0": {"d0": 2}}, threshold=2)
    with pytest.raises(ValueError, match=r"train lists count relevance ≥ 2 relevant, test lists ≥ 1: load "
                                         r"both with the same threshold"):
        evaluate_cutters(["greedy-k"], lists, train=other_grade)
    unjudged = RankedLists.from_postings({"q0": [Posting("d0", 1.0, 1)]})
    with pytest.raises(ValueError, match="no relevance judgements"):
        evaluate_cutters(["fixed-k:1"], unjudged)


def test_query_ids_missing_from_the_lists_are_reported_and_skipped():
    lists = make_lists([A, B, A])
    with pytest.warns(MissingQueriesWarning, match="'q9'"):
        ev = evaluate_cutters(["greedy-k"], lists, train=["q0", "q9"])
    assert ev.qids == ("q1", "q2")
    with pytest.raises(ValueError, match="train: its only query id 'q9' is not in the ranked lists"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        evaluate_cutters(["greedy-k"], lists, train=["q9"])
    with pytest.raises(ValueError, match="none of its 2 query ids is"), warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)
        evaluate_cutters(["greedy-k"], lists, train=["q8", "q9"])
    with pytest.warns(MissingQueriesWarning, match=r"^1 query id of train is not in the ranked lists and is "
                      r"skipped: 'q9'$"):
        evaluate_cutters(["greedy-k"], lists, train=["q0", "q9"])
    with pytest.warns(MissingQueriesWarning, match=r"^2 query ids of test_queries are not in the ranked "
                      r"lists and are skipped"):
        evaluate_cutters(["fixed-k:1"], lists, test_queries=["q0", "q8", "q9"])


def test_check_specs_validates_without_data():
    assert check_specs([" oracle", "fixed-k:2 "], baseline=" fixed-k:2") == ["oracle", "fixed-k:2"]
    for specs, message in [(["oracle", "nope"], "unknown cutter 'nope'"), (["fixed-k:0"], "fixed-k:0"),
                           (["oracle", "  "], "cutter spec 2 is empty"), ([], "at least one")]:
        with pytest.raises(ValueError, match=message):
            check_specs(specs)
    with pytest.raises(ValueError, match="baseline 'greedy-k' is not among"):
        check_specs(["oracle"], baseline="greedy-k")
    with pytest.raises(ValueError, match="baseline 'nope' is not among"):
        check_specs(["oracle"], baseline="nope")
    # one cutter written two ways (the keyword form --help shows): named, not "not among"
    with pytest.raises(ValueError, match=r"^baseline 'fixed-k:10' is 'fixed-k:k=10' among the cutters: give "
                                         r"it as listed$"):
        check_specs(["oracle", "fixed-k:k=10"], baseline="fixed-k:10")


# --------------------------------------------------------------------------- text and reprs
def test_the_legend_counts_the_test_queries_no_cut_can_score_on():
    """A query whose list holds no relevant document scores F1 0 under every cut and pulls every
    mean down: the legend counted nothing of it (at --threshold 3, 10 of DL20's 54 lists)."""
    lists = make_lists([A, B, [0, 0, 0, 0], A])
    text = format_table(evaluate_cutters(["fixed-k:2", "oracle"], lists))
    assert ("1 test query of 4 has no relevant document in its list (relevance ≥ 1): every cut scores "
            "F1@k 0 there, in the mean.") in text
    recall = format_table(evaluate_cutters(["fixed-k:2"], lists, metrics=("recall", "dcg")))
    assert "every cut scores R@k 0 there" in recall
    dcg = format_table(evaluate_cutters(["fixed-k:2"], lists, metrics=("dcg",)))
    assert "no relevant document" not in dcg
    assert "no relevant document" not in format_table(evaluate_cutters(["fixed-k:2"], make_lists([A, B])))


def test_legend_counts_in_words_and_says_when_nothing_is_compared():
    lists = make_lists([A, B, A, B])
    only_baseline = format_table(evaluate_cutters(["oracle", "fixed-k:2"], lists, baseline="fixed-k:2"))
    assert "No significance test: no method to compare with the baseline fixed-k:2." in only_baseline
    assert "Holm" not in only_baseline and "Not tested: oracle" in only_baseline
    one = format_table(evaluate_cutters(["fixed-k:2", "fixed-k:8"], lists, baseline="fixed-k:2"))
    assert "Holm-adjusted over 1 method," in one
    with pytest.raises(ValueError, match=r"must be fitted: .* test query ids alone train on nothing .* "
                                         r"give the training query ids too"):
        evaluate_cutters(["greedy-k"], lists, test_queries=["q1"])
    single = evaluate_cutters(["fixed-k:2"], lists, test_queries=["q1"])
    assert "Protocol: no training data; 1 query." in format_table(single)   # no cutter fitted per metric
    assert "mean over 1 test query (" in format_table(single)
    unused = evaluate_cutters(["fixed-k:2"], lists, train=["q0"], test_queries=["q1"])   # said "fitted"
    assert "Protocol: no cutter here learns: the training queries are unused; 1 query tested." in \
        format_table(unused)
    split = evaluate_cutters(["greedy-k"], lists, train=["q0"], test_queries=["q1"])
    assert "fitted on 1 training query of the lists, tested on the 1 other;" in str(split)


def test_evaluation_repr_is_short_and_str_is_the_table():
    lists = make_lists([A, B] * 100)
    ev = evaluate_cutters(["oracle", "fixed-k:2"], lists, baseline="fixed-k:2")
    assert repr(ev) == ("Evaluation(200 test queries, mode 'none', methods ['oracle', 'fixed-k:2'], "
                        "metrics ['f1', 'dcg'], baseline 'fixed-k:2')")
    assert str(ev) == ev.summary() == format_table(ev)
    assert ev.summary(markdown=True) == format_table(ev, markdown=True)
    f1, dcg = ev.methods["fixed-k:2"].mean("f1"), ev.methods["fixed-k:2"].mean("dcg")
    assert repr(ev.methods["fixed-k:2"]) == (f"MethodResult('fixed-k:2', 200 queries, f1 {f1:.4f} at mean k "
                                             f"2.0, dcg {dcg:.4f} at mean k 2.0)")


def test_to_frame_is_the_table():
    pd = pytest.importorskip("pandas")
    lists = make_lists([A] * 6 + [B] * 2)
    ev = evaluate_cutters(["oracle", "fixed-k:2", "fixed-k:8"], lists, baseline="fixed-k:8")
    frame = ev.to_frame()
    assert list(frame.index) == ["oracle", "fixed-k:2", "fixed-k:8"] and frame.index.name == "method"
    assert list(frame.columns) == ["f1", "f1_k", "f1_p", "f1_marker", "dcg", "dcg_k", "dcg_p", "dcg_marker"]
    for name, res in ev.methods.items():
        assert frame.loc[name, "f1"] == res.mean("f1") and frame.loc[name, "dcg_k"] == res.mean_k("dcg")
        assert frame.loc[name, "f1_marker"] == ev.marker(name, "f1")
    assert frame.loc["fixed-k:2", "f1_p"] == ev.tests["f1"]["fixed-k:2"].p_adjusted
    assert pd.isna(frame.loc["oracle", "f1_p"])
    plain = evaluate_cutters(["fixed-k:2"], lists).to_frame()
    assert list(plain.columns) == ["f1", "f1_k", "dcg", "dcg_k"]


def test_to_frame_without_pandas_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    ev = evaluate_cutters(["fixed-k:2"], make_lists([A, B]))
    with pytest.raises(ImportError, match=r"pip install 'rankcut\[eval\]'"):
        ev.to_frame()


# --------------------------------------------------------------------------- split files
def test_read_query_ids_text_and_json(tmp_path):
    text = tmp_path / "train.txt"
    text.write_text("301\n\n302 \n 303\n")
    assert read_query_ids(text) == ("301", "302", "303")
    plain = tmp_path / "ids.json"
    plain.write_text(json.dumps(["a", 7]))
    assert read_query_ids(plain) == ("a", "7")
    splits = tmp_path / "splits.json"
    splits.write_text(json.dumps({"bm25.train": ["1", "2"], "bm25.test": ["3"]}))
    assert read_query_ids(splits, key="bm25.test") == ("3",)


@pytest.mark.parametrize(
    ("name", "content", "key", "message"),
    [
        ("a.txt", "1\n2 3\n", None, r"a.txt, line 2: expected one query id"),
        ("a.txt", "1\n2\n1\n", None, r"line 3: query id '1' repeats line 1"),
        ("a.txt", "\n\n", None, "no query id"),
        ("a.txt", "1\n", "train", "text file"),
        ("s.json", '{"train": ["1"], "test": ["2"]}', None, "choose one with a key: train, test"),
        ("s.json", '{"train": ["1"]}', "dev", "no split 'dev'; keys: train"),
        ("s.json", '["1", "1"]', None, "listed twice: '1'"),
        ("s.json", '["1"]', "train", "holds a list"),
        ("s.json", '[true]', None, "strings or integers"),
        ("s.json", '{"train": "1"}', "train", "expected a list"),
        ("s.json", "[1,", None, "not valid JSON"),
    ],
)
def test_read_query_ids_errors_name_the_file(tmp_path, name, content, key, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_query_ids(path, key=key)


def test_read_query_ids_robust04_splits():
    splits = DATASETS / "robust04" / "splits.json"
    if not splits.is_file():
        pytest.skip(f"real datasets not found at {splits.parent}")
    test = read_query_ids(splits, key="bm25.test")
    assert len(test) == 50 and "672" in test
    assert len(read_query_ids(splits, key="bm25.train")) == 190


# --------------------------------------------------------------------------- figure
def test_plot_cutoffs_writes_a_png_and_needs_the_reference(tmp_path):
    pytest.importorskip("matplotlib")
    from rankcut.plots import plot_cutoffs

    lists = make_lists([A, B, A, B, A, B])
    ev = evaluate_cutters(["oracle", "fixed-k:3", "distribution"], lists)
    out = plot_cutoffs(ev, tmp_path / "cuts.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the format is the suffix's (a PDF name got PNG bytes, which LaTeX does not open)
    assert plot_cutoffs(ev, tmp_path / "cuts.PDF").read_bytes()[:5] == b"%PDF-"
    assert b"<svg" in plot_cutoffs(ev, tmp_path / "cuts.svg").read_bytes()[:400]
    with pytest.raises(ValueError, match=r"cuts\.jpg: a figure is written as \*\.png, \*\.pdf, \*\.svg"):
        plot_cutoffs(ev, tmp_path / "cuts.jpg")
    assert not (tmp_path / "cuts.jpg").exists()
    no_oracle = evaluate_cutters(["fixed-k:3"], lists)
    with pytest.raises(ValueError, match="reference 'oracle'"):
        plot_cutoffs(no_oracle, tmp_path / "x.png")
    with pytest.raises(ValueError, match="metric"):
        plot_cutoffs(ev, tmp_path / "x.png", metric="recall")
    with pytest.raises(ValueError, match="bin_width"):
        plot_cutoffs(ev, tmp_path / "x.png", bin_width=0)


def test_plot_cutoffs_checks_the_folder_before_drawing(tmp_path, monkeypatch):
    from rankcut import plots

    ev = evaluate_cutters(["oracle", "fixed-k:3"], make_lists([A, B]))

    def no_drawing(**kwargs):
        raise AssertionError("drew a figure for a path it cannot write")

    monkeypatch.setattr(plots, "_figure", no_drawing)
    with pytest.raises(FileNotFoundError, match=r"output folder .*nodir.sub does not exist$"):
        plots.plot_cutoffs(ev, tmp_path / "nodir" / "sub" / "x.png")


def test_plot_cutoffs_without_matplotlib_names_the_quoted_extra(tmp_path, monkeypatch):
    from rankcut.plots import plot_cutoffs

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    ev = evaluate_cutters(["oracle", "fixed-k:3"], make_lists([A, B]))
    with pytest.raises(ImportError, match=r"pip install 'rankcut\[eval\]'$"):
        plot_cutoffs(ev, tmp_path / "x.png")


def test_a_row_added_with_trained_is_scored_with_the_evaluations_recall_base():
    """with_trained scored recall over the list (its own default) in an evaluation made with
    recall over every judged relevant document: the added row read 0.2482 beside 0.1600 for the
    same cuts, and the table still said "judged"."""
    from rankcut.cutters.given import GivenCuts
    from rankcut.evaluation import with_trained

    run = {f"q{i}": [Posting(f"d{j}", float(8 - j), j + 1) for j in range(8)] for i in range(3)}
    qrels = {q: {**{f"d{j}": r for j, r in enumerate(A)}, "unlisted": 1} for q in run}   # one not retrieved
    lists = RankedLists.from_postings(run, qrels)
    ev = evaluate_cutters(["fixed-k:2"], lists, recall_base="judged")
    added = with_trained(ev, lists, {"given": GivenCuts(cuts=dict.fromkeys(run, 2), source="cut.run")},
                         baseline=None)
    for metric in ev.metrics:
        np.testing.assert_array_equal(added.methods["given"].scores[metric],
                                      ev.methods["fixed-k:2"].scores[metric])
    assert added.methods["given"].mean("f1") == pytest.approx(2 * (2 / 2) * (2 / 3) / (1 + 2 / 3))


def test_metrics_given_as_one_string_are_refused():
    """metrics="f1" said "got ('f', '1')"."""
    with pytest.raises(ValueError, match=r"metrics must be a sequence of metric names, e\.g\. \('f1',\)"):
        evaluate_cutters(["fixed-k:2"], make_lists([A, B]), metrics="f1")
