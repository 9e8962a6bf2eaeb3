"""ASReview screening CSVs: parsing, errors that name file and line, and ranked lists from scores."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from rankcut.data.screening import ScreeningSet, load_screening

CSV = (
    "record_id,title,abstract,authors,year,label_included\n"
    '10,"Lithium, magnesium and mood","Plasma calcium\nfalls, then rises.",A. B.,1985,1\n'
    "11,Rat ovaries,,C. D.,1990,0\n"
    "12,Panic in shocked rats,Uncontrollable stress.,E. F.,2001,0\n"
)


def _load(text: str, **kw) -> ScreeningSet:
    return load_screening(io.StringIO(text, newline=""), name=kw.pop("name", "toy"), **kw)


def test_records_fields_and_texts() -> None:
    s = _load(CSV)
    assert s.name == "toy" and len(s) == 3 and s.n_included == 1
    assert s.record_ids == ("10", "11", "12")
    assert s.titles[0] == "Lithium, magnesium and mood"
    assert s.abstracts == ("Plasma calcium\nfalls, then rises.", "", "Uncontrollable stress.")
    assert s.labels.tolist() == [True, False, False]
    assert s.texts == ("Lithium, magnesium and mood\nPlasma calcium\nfalls, then rises.", "Rat ovaries",
                       "Panic in shocked rats\nUncontrollable stress.")
    assert s.qrels() == {"toy": {"10": 1, "11": 0, "12": 0}}
    assert "3 records, 1 included" in repr(s)


def test_without_record_id_records_are_numbered_and_blank_lines_skipped() -> None:
    s = _load("title,abstract,label_included\nA,x,1\n\nB,y,0\n")
    assert s.record_ids == ("1", "2") and s.labels.tolist() == [True, False]


def test_other_label_column() -> None:
    text = "record_id,title,abstract,label_abstract_screening,label_included\n1,A,x,1,0\n2,B,y,0,0\n"
    assert _load(text, label="label_abstract_screening").labels.tolist() == [True, False]
    assert _load(text).n_included == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "toy: the file is empty"),
        ("record_id,title,label_included\n1,A,1\n", "toy, line 1: the header names no 'abstract' column"),
        ("record_id,title,abstract\n1,A,x\n", "toy, line 1: the header names no 'label_included' column"),
        ("record_id,title,abstract,label_included\n", "toy: no record after the header"),
        # the record of lines 3-4 spans two lines, so the short record is on line 5
        ('record_id,title,abstract,label_included\n1,A,x,0\n2,B,"two\nlines",1\n3,C,x\n',
         "toy, line 5: the record has 3 fields, the header 4"),
        ("record_id,title,abstract,label_included\n1,A,x,0\n ,B,y,1\n", "toy, line 3: empty record_id"),
        ("record_id,title,abstract,label_included\n7,A,x,0\n8,B,y,1\n7,C,z,0\n",
         "toy, line 4: record_id '7' is also the id of the record of line 2 (one id for two records: "),
        ("record_id,title,abstract,label_included\n1,A,x,yes\n",
         "toy, line 2: label_included must be 0 or 1, got 'yes' (record '1')"),
        ("record_id,title,abstract,label_included\n1,A,x,\n",
         "toy, line 2: label_included must be 0 or 1, got ''"),
        ("Record ID,title,abstract,label_included\n17,A,x,0\n",
         "toy: the column 'Record ID' reads like the record ids, but only a column named record_id is read"),
        # the first label column (all 0) was read and the second (the labels) never
        ("record_id,title,abstract,label_included,Label_Included\n1,A,x,0,1\n",
         "toy, line 1: the header names the column 'label_included' twice (columns are read by name, any "
         "case): rename or remove one"),
    ],
)
def test_errors_name_file_and_line(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        _load(text)


def test_label_argument_is_checked() -> None:
    with pytest.raises(ValueError, match="label must name a column"):
        _load(CSV, label="")


def test_paths_plain_and_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "review.csv"
    plain.write_bytes(("\ufeff" + CSV).encode("utf-8"))  # a byte-order mark is not part of the header
    packed = tmp_path / "review.csv.gz"
    with gzip.open(packed, "wt", encoding="utf-8", newline="") as f:
        f.write(CSV)
    for path in (plain, packed):
        s = load_screening(path)
        assert s.name == "review" and s.record_ids == ("10", "11", "12")
    with pytest.raises(ValueError, match=r"review\.csv, line 1: the header names no 'x' column"):
        load_screening(plain, label="x")


def test_ranked_orders_by_score_ties_in_file_order() -> None:
    s = _load(CSV)
    lists = s.ranked([0.5, 2.0, 0.5])
    assert lists.qids == ("toy",)
    assert lists.doc_ids[0].tolist() == ["11", "10", "12"]
    assert lists.labels[0].tolist() == [False, True, False]
    assert lists.n_relevant is not None and lists.n_relevant.tolist() == [1]


@pytest.mark.parametrize(("scores", "message"), [
    ([1.0, 2.0], r"scores must have shape \[3\]"),
    ([1.0, np.nan, 0.0], "scores must be finite, got nan at record '11'"),
])
def test_ranked_checks_scores(scores: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _load(CSV).ranked(scores)


def test_subset_keeps_order_and_checks_indices() -> None:
    s = _load(CSV)
    sub = s.subset(np.array([2, 0]))
    assert sub.record_ids == ("12", "10") and sub.labels.tolist() == [False, True]
    assert sub.abstracts[1] == s.abstracts[0]
    for bad, message in (([3], "index 3 is outside the 3 records"), ([0, 0], "must not repeat"),
                         ([0.5], "1-D array of integers")):
        with pytest.raises(ValueError, match=message):
            s.subset(np.array(bad))


def test_inconsistent_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="one entry per record"):
        ScreeningSet("x", ("1", "2"), ("a",), ("b", "c"), np.array([True, False]))
    with pytest.raises(ValueError, match="record_ids must be distinct"):
        ScreeningSet("x", ("1", "1"), ("a", "b"), ("", ""), np.array([True, False]))


@pytest.mark.parametrize(("stem", "records", "included"), [
    ("bannach-brown-2019", 1993, 280),
    ("cohen2006-ADHD", 851, 20),
    ("cohen2006-SkeletalMuscleRelaxants", 1643, 9),
])
def test_real_screening_sets(datasets: Path, stem: str, records: int, included: int) -> None:
    s = load_screening(datasets / "screening" / f"{stem}.csv")
    assert (s.name, len(s), s.n_included) == (stem, records, included)
    assert all(s.titles) and len(set(s.record_ids)) == records
