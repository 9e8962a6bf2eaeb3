"""LETOR / SVMlight files: parsing, ranking by a feature, feature matrix, errors."""

import io
import textwrap

import numpy as np
import pytest

from rankcut.data.letor import LETOR4_FEATURES, load_letor


def text(s: str, name: str = "inline") -> io.StringIO:
    f = io.StringIO(textwrap.dedent(s))
    f.name = name
    return f


LETOR = """\
    0 qid:7 1:0.5 2:0.1 3:0.0 #docid = A inc = 1 prob = 0.1
    2 qid:7 1:0.9 2:0.2 3:1.0 #docid = B inc = 1 prob = 0.2\r
    1 qid:7 1:0.9 3:2.0 #docid = C
    1 qid:8 1:0.0 2:0.0 3:0.5 #docid = A
"""


def test_ranked_by_feature_with_gains_and_features():
    lists = load_letor(text(LETOR), score_feature=1)
    assert lists.qids == ("7", "8")
    assert lists.doc_ids[0].tolist() == ["B", "C", "A"]  # 0.9 tie kept in line order
    assert lists.scores[0].tolist() == [0.9, 0.9, 0.5]
    assert lists.gains[0].tolist() == [2, 1, 0]
    assert lists.n_relevant.tolist() == [2, 1]
    assert lists.feature_names == ("f1", "f2", "f3")
    assert lists.features[0].tolist() == [[0.9, 0.2, 1.0], [0.9, 0.0, 2.0], [0.5, 0.1, 0.0]]
    assert lists.features[1].tolist() == [[0.0, 0.0, 0.5], [0, 0, 0], [0, 0, 0]]  # padding 0


def test_other_feature_ordering_and_threshold():
    lists = load_letor(text(LETOR), score_feature=3, threshold=2, ordering="trec_eval")
    assert lists.doc_ids[0].tolist() == ["C", "B", "A"]
    assert lists.labels[0].tolist() == [False, True, False]
    tie = load_letor(text(LETOR), score_feature=1, ordering="trec_eval")
    assert tie.doc_ids[0].tolist() == ["C", "B", "A"]  # tie broken by doc_id descending


def test_several_sources_merge_and_missing_docid():
    lists = load_letor([text("1 qid:1 1:1 #docid = x\n"), text("0 qid:1 1:2\n0 qid:2 1:3\n")],
                       score_feature=1)
    assert lists.qids == ("1", "2")
    assert lists.doc_ids[0].tolist() == ["line:1", "x"]
    assert lists.gains[0].tolist() == [0, 1]


@pytest.mark.parametrize(
    ("line", "message"),
    [("1 7 1:0.5", "expected 'label qid:N"), ("1 qid: 1:0.5", "expected 'label qid:N"),
     ("1", "expected 'label qid:N"), ("x qid:7 1:1", "label must be an integer"),
     # a TREC file given to --letor names the option that reads it (a stop-55 walk)
     ("264014 Q0 D1 1 12.5 bm25", r"expected 'label qid:N.* — it reads like a TREC run line .* to --run$"),
     ("264014 0 D1 2", r"expected 'label qid:N.* — it reads like a TREC qrels line .* goes to --qrels$"),
     ("2 1:0.1 2:0.3 3:0.4 4:0.5 5:0.6", r"expected 'label qid:N index:value \.\.\.', got '2 1:0\.1 [^—]*$"),
     ("1 7 1:0.5 2:0.3", r"expected 'label qid:N index:value \.\.\.', got '1 7 1:0\.5 2:0\.3'$"),
     ("1.5 qid:7 1:1", "label must be an integer"), ("1 qid:7 0:1", "feature '0:1'"),
     ("1 qid:7 1:nan", "feature '1:nan'"), ("1 qid:7 a:1", "feature 'a:1'"), ("1 qid:7 1", "feature '1'"),
     ("1 qid:7 1:2:3", "feature '1:2:3'"), ("1 qid:7 2:1 1:inf", "feature '1:inf'"),
     ("1 qid:7 3:1 1:1 3:2", "feature 3 is given twice"),
     # Python's int and float take these: a value of 1000, another query, a label of 1
     ("1 qid:7 1:1_000", "feature '1:1_000'"),
     ("1 qid:\u0661\u0662 1:1", "qid '\u0661\u0662' holds a character"),
     ("\u0661 qid:7 1:1", "label must be an integer, got '\u0661'")],
)
def test_bad_line_names_file_and_line(line, message):
    with pytest.raises(ValueError, match=rf"mq, line 2: {message}"):
        load_letor(text(f"0 qid:7 1:0 #docid = Z\n{line}\n", name="mq"), score_feature=1)


def test_duplicate_document_and_bad_feature_choice():
    match = r"b, line 1: document 'A' is listed twice .* \(first at a, line 1\)"
    with pytest.raises(ValueError, match=match):
        load_letor([text("0 qid:1 1:1 #docid = A\n", "a"), text("0 qid:1 1:1 #docid = A\n", "b")],
                   score_feature=1)
    with pytest.raises(ValueError, match=r"score_feature must be in \[1, 3\]"):
        load_letor(text(LETOR))  # default 25 > 3 features
    with pytest.raises(ValueError, match=r"^S1\.txt: no LETOR line"):   # the file named
        load_letor(text("\n# only a comment\n", "S1.txt"))
    # 25.5 ranked every document at 0 (no feature has that number); "2" gave a bare TypeError
    for given in (2.5, "2", 0, True):
        with pytest.raises(ValueError, match=f"score_feature must be an integer ≥ 1, got {given!r}"):
            load_letor(text(LETOR), score_feature=given)


def test_mq2008_partitions(datasets):
    paths = [datasets / "mq2008" / f"S{i}.txt" for i in range(1, 6)]
    parts = [load_letor(p) for p in paths]
    assert sum(len(p) for p in parts) == 784
    assert sum(int(p.lengths.sum()) for p in parts) == 15_211
    every = load_letor(paths)
    assert len(every) == 784 and every.lengths.min() == 5 and every.lengths.max() == 121
    assert every.feature_names == LETOR4_FEATURES and every.feature_names[24] == "bm25_document"
    assert every.features.shape == (784, 121, 46)
    # scores are feature 25, sorted descending within each list
    assert np.array_equal(every.scores[every.mask], every.features[..., 24][every.mask])
    ranked = np.where(every.mask, every.scores, -np.inf)
    assert np.all(ranked[:, 1:] <= ranked[:, :-1])
    assert set(np.unique(every.gains[every.mask])) == {0.0, 1.0, 2.0}
    s1 = parts[0]
    first = s1.index("10002")
    assert "GX008-86-4444840" in s1.doc_ids[first].tolist()


def test_threshold_above_every_label_warns() -> None:
    import io

    from rankcut.data.lists import NoRelevantWarning

    text = "2 qid:1 1:0.5 #docid = a\n0 qid:1 1:0.2 #docid = b\n"
    with pytest.warns(NoRelevantWarning, match="relevance ≥ 3"):
        load_letor(io.StringIO(text), score_feature=1, threshold=3)
