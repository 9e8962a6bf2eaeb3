"""Records in (rankcut.review.records): CSV/TSV in ASReview's conventions, RIS, a TREC run with texts."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from rankcut.review.records import Records, load_records, load_trec_records

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "screening"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_asreview_column_names_any_case_and_tsv(tmp_path: Path) -> None:
    csv = _write(tmp_path, "r.csv", "Primary_Title,Abstract Note,Included\nA,x,yes\nB,,N\n")
    r = load_records(csv)
    assert r.titles == ("A", "B") and r.abstracts == ("x", "")
    assert r.labels is not None and r.labels.tolist() == [1, 0] and (r.prior == -1).all()
    assert r.texts == ("A\nx", "B") and r.name == "r"
    tsv = _write(tmp_path, "r.tsv", "record_id\ttitle\tabstract\n7\tA\tx, y\n")
    t = load_records(tsv)
    assert t.ids == ("7",) and t.abstracts == ("x, y",) and t.labels is None


def test_a_partly_labelled_column_is_prior_knowledge(tmp_path: Path) -> None:
    r = load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,1\nB,y,\nC,z,0\n"))
    assert r.labels is None and r.prior.tolist() == [1, -1, 0]
    again = r.with_prior({"2": 1})
    assert again.prior.tolist() == [-1, 1, -1]
    with pytest.raises(ValueError, match="prior knowledge names record '9', which r does not hold"):
        r.with_prior({"9": 1})


def test_bad_tables_are_refused_by_file_and_line(tmp_path: Path) -> None:
    forms = (r"0/1, 0\.0/1\.0, true/false, yes/no, y/n, include/exclude, relevant/irrelevant or empty "
             r"\(unlabelled\)")
    with pytest.raises(ValueError, match=rf"r\.csv, line 3: label_included must be {forms}, got 'maybe' "
                                         r"\(record '2'\)"):
        load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,1\nB,y,maybe\n"))
    with pytest.raises(ValueError, match="got '0.5'"):
        load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,1\nB,y,0.5\n"))
    with pytest.raises(ValueError, match=r"r\.csv, line 1: the header names no 'abstract' column "
                                         r"\(nor 'notes_abstract', 'abstract note'\)"):
        load_records(_write(tmp_path, "r.csv", "title,label\nA,1\n"))
    with pytest.raises(ValueError, match=r"r\.csv, line 1: the header names no 'title' column .* — the file "
                                         r"looks separated by tabs: name it \*\.tsv"):
        load_records(_write(tmp_path, "r.csv", "title\tabstract\nA\tx\n"))
    with pytest.raises(ValueError, match=r"r\.csv: the column 'id' reads like the record ids, but only a "
                                         r"column named record_id is read as them: rename it record_id"):
        load_records(_write(tmp_path, "r.csv", "id,title,abstract\n31,A,x\n7,B,y\n"))
    with pytest.raises(ValueError, match=r"r\.csv, line 3: record id 'r 2' holds white space"):
        load_records(_write(tmp_path, "r.csv", "record_id,title,abstract\nr1,A,x\nr 2,B,y\n"))


def test_labels_as_a_spreadsheet_or_pandas_writes_them(tmp_path: Path) -> None:
    # a partly filled column comes out of pandas as floats, and a spreadsheet writes TRUE/FALSE
    r = load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,1.0\nB,y,\nC,z,0.0\n"
                                               "D,w,TRUE\nE,v,False\n"))
    assert r.prior.tolist() == [1, -1, 0, 1, 0]


def test_a_workbook_is_refused_and_a_record_without_text_is_warned_of(tmp_path: Path) -> None:
    (tmp_path / "r.xlsx").write_bytes(b"PK\x03\x04 not text")
    with pytest.raises(ValueError, match=r"r\.xlsx: a spreadsheet workbook is not read: save it as CSV"):
        load_records(tmp_path / "r.xlsx")
    with pytest.warns(UserWarning, match=r"r\.csv: 2 records have neither title nor abstract \(line 3, 5\): "
                                         "the ranker sees nothing of them"):
        r = load_records(_write(tmp_path, "r.csv", "title,abstract\nA,x\n,\nB,\n , \n"))
    assert len(r.ids) == 4
    with pytest.warns(UserWarning, match=r"r\.ris: 1 record has neither title nor abstract \(line 9\): the "
                                         "ranker sees nothing of it"):   # as in a table, not refused
        r = load_records(_write(tmp_path, "r.ris", "TY  - JOUR\nTI  - A\nER  - \n\nTY  - JOUR\nTI  - B\n"
                                                   "ER  - \n\nTY  - JOUR\nPY  - 2001\nER  - \n"))
    assert r.titles == ("A", "B", "")


def test_a_column_empty_on_every_record_is_warned_of(tmp_path: Path) -> None:
    """150,000 records whose abstracts had landed in another column started without a word: the
    ranker read the titles alone (a stop-56 walk)."""
    with pytest.warns(UserWarning, match=r"r\.csv: the abstract column is empty on every one of the 3 "
                                         r"records: the ranker reads the titles alone; if the abstracts "
                                         r"are in a column of another name, name it abstract"):
        load_records(_write(tmp_path, "r.csv", "title,abstract,body\nA,,x\nB,,y\nC,,z\n"))
    with pytest.warns(UserWarning, match=r"the title column is empty on every one of the 2 records: the "
                                         r"ranker reads the abstracts alone"):
        load_records(_write(tmp_path, "r.csv", "title,abstract\n,x\n,y\n"))
    with warnings.catch_warnings():   # some empty: many records have no abstract; one record: said by line
        warnings.simplefilter("error")
        load_records(_write(tmp_path, "r.csv", "title,abstract\nA,\nB,y\n"))
        load_records(_write(tmp_path, "r.csv", "title,abstract\nA,\n"))


def test_labels_as_screening_tools_say_them(tmp_path: Path) -> None:
    """Rayyan's and Covidence's decisions, and relevant/irrelevant, in any case; "maybe" is no label."""
    r = load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,Included\nB,y,exclude\n"
                                               "C,z,\nD,w,RELEVANT\nE,v,irrelevant\nF,u,excluded\n"))
    assert r.prior.tolist() == [1, 0, -1, 1, 0, 0]
    with pytest.raises(ValueError, match="got 'Maybe'"):
        load_records(_write(tmp_path, "r.csv", "title,abstract,label_included\nA,x,Maybe\n"))


RIS = """TY  - JOUR
ID  - 12
TI  - A title
AB  - An abstract
N1  - ASReview_relevant
ER  -

TY  - JOUR
T1  - Second
N1  - ASReview_irrelevant
ER  -
"""


def test_ris_with_asreview_labels_in_the_notes(tmp_path: Path) -> None:
    r = load_records(_write(tmp_path, "r.ris", RIS))
    assert r.ids == ("12", "2") and r.titles == ("A title", "Second") and r.abstracts == ("An abstract", "")
    assert r.labels is not None and r.labels.tolist() == [1, 0]
    partly = load_records(_write(tmp_path, "p.ris", RIS.replace("N1  - ASReview_irrelevant\n", "")))
    assert partly.labels is None and partly.prior.tolist() == [1, -1]


def test_records_that_repeat_an_earlier_one_are_warned_of(tmp_path: Path) -> None:
    """A merged export's duplicates (title and abstract, case and spacing aside) are named by id and
    line, with the record they repeat; a shared title alone, or two empty records, is no duplicate."""
    table = ("record_id,title,abstract\n1,Cats purr,They do.\n2,Cats purr,Another study.\n3,,\n4,,\n"
             "5,CATS  purr, they do.\n")
    with pytest.warns(UserWarning, match=r"1 record has the title and abstract of an earlier record "
                      r"\(record 5, line 6 \(as record 1, line 2\)\): the review reads and counts each as "
                      r"a record of its own") as seen:
        records = load_records(_write(tmp_path, "r.csv", table))
    assert records.ids == ("1", "2", "3", "4", "5")   # kept: the reviewer decides
    assert sum("earlier record" in str(w.message) for w in seen) == 1
    twice = RIS.replace("T1  - Second", "TI  - A title\nAB  - An abstract")
    with pytest.warns(UserWarning, match=r"r\.ris: 1 record has the title and abstract of an earlier record "
                      r"\(record 2, line 8 \(as record 12, line 1\)\)"):
        load_records(_write(tmp_path, "r.ris", twice))


def test_bad_ris_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"r\.ris, line 8: the record has no 'ER  -' line"):
        load_records(_write(tmp_path, "r.ris", RIS.rsplit("ER", 1)[0]))
    with pytest.raises(ValueError, match=r"r\.ris, line 7: a record starts before the record of line 1 ends"):
        load_records(_write(tmp_path, "r.ris", RIS.replace("ER  -\n\n", "\n", 1)))
    with pytest.raises(ValueError, match=r"r\.ris, line 8: the record has no ID, and its number in file "
                       r"order, '2', is the ID of the record of line 1: give it an ID line"):
        load_records(_write(tmp_path, "r.ris", RIS.replace("ID  - 12", "ID  - 2")))
    with pytest.raises(ValueError, match=r"r\.ris, line 8: record id '12' is also the id of the record of "
                       r"line 1 \(one id for two records: give each record its own id, or, if the two "
                       r"lines are the same record, keep one of them\)"):
        load_records(_write(tmp_path, "r.ris", RIS.replace("T1  - Second", "ID  - 12\nT1  - Second")))
    with pytest.raises(ValueError, match=r"t\.txt: no RIS record .*; a table of records is read by its name: "
                       r"\*\.csv or \*\.tsv"):
        load_records(_write(tmp_path, "t.txt", "record_id,title\n1,A title\n"))
    with pytest.raises(ValueError, match=r"r\.ris, line 1: record id 'x y' holds white space"):
        load_records(_write(tmp_path, "r.ris", "TY  - JOUR\nID  - x y\nTI  - A title\nER  - \n"))
    # rispy dropped a record without its TY line, a relevant one too, and read the first of two
    # labels in the notes
    for typo in ("", "TY - JOUR\n"):
        with pytest.raises(ValueError, match=r"r\.ris, line 8: a tag outside a record "
                                             rf"\('{'TY - JOUR' if typo else 'T1  - Second'}'\): a record "
                                             r"starts with 'TY  - ' \(two spaces"):
            load_records(_write(tmp_path, "r.ris", RIS.replace("TY  - JOUR\nT1", typo + "T1")))
    both = "N1  - ASReview_relevant\nN1  - ASReview_irrelevant\n"
    with pytest.raises(ValueError, match=r"r\.ris, line 1: record '12' has notes of two labels "
                                         r"\(ASReview_relevant, ASReview_irrelevant\): keep the one that "
                                         "holds"):
        load_records(_write(tmp_path, "r.ris", RIS.replace("N1  - ASReview_relevant\n", both)))


def test_a_ris_tag_with_one_space_is_named_where_it_is_read_as_text(tmp_path: Path) -> None:
    """rispy reads 'KW - typo' as the text of the field above it: after AB it joined the abstract
    without a word, after ID it made an id "with white space"."""
    typo = RIS.replace("AB  - An abstract\n", "AB  - An abstract\nKW - typo tag\n")
    with pytest.warns(UserWarning, match=r"r\.ris: line 5 reads like a tag with one space before its hyphen "
                                         r"\('KW - typo tag'\), so it is read as part of the field above"):
        records = load_records(_write(tmp_path, "r.ris", typo))
    assert records.abstracts[0] == "An abstract KW - typo tag"
    with pytest.warns(UserWarning, match=r"r\.ris: line 3 reads like a tag"), \
            pytest.raises(ValueError, match=r"record id '12 TI - A title' holds white space"):
        load_records(_write(tmp_path, "r.ris", RIS.replace("TI  - A title", "TI - A title")))
    with warnings.catch_warnings():   # two spaces, and a wrapped line that starts otherwise: nothing said
        warnings.simplefilter("error")
        load_records(_write(tmp_path, "r.ris", RIS.replace("An abstract", "An abstract\nof UK-wide scope")))


def test_a_trec_run_with_texts_and_qrels(tmp_path: Path) -> None:
    run = _write(tmp_path, "r.run", "q1 Q0 d1 2 0.5 t\nq1 Q0 d2 1 0.9 t\nq2 Q0 d1 1 1.0 t\n")
    texts = _write(tmp_path, "t.jsonl", "\n".join(json.dumps({"doc_id": d, "text": f"text {d}"})
                                                  for d in ("d1", "d2")) + "\n")
    qrels = _write(tmp_path, "q.qrels", "q1 0 d1 1\n")
    r = load_trec_records(run, texts, qrels=qrels, query="q1")
    assert r.ids == ("d2", "d1") and r.abstracts == ("text d2", "text d1") and r.ranked
    assert r.labels is not None and r.labels.tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"the run holds 2 queries; choose one with query, e\.g\. 'q1'"):
        load_trec_records(run, texts)
    with pytest.raises(ValueError, match=r"t\.jsonl: no text for document 'd3' of query 'q3'"):
        load_trec_records(_write(tmp_path, "s.run", "q3 Q0 d3 1 1 t\n"), texts)
    blank = _write(tmp_path, "b.jsonl", '{"doc_id": "d1", "text": " \\n "}\n{"doc_id": "d2", "text": "x"}\n')
    with pytest.warns(UserWarning, match=r"b\.jsonl: 1 of the 2 documents of query 'q1' has an empty text "
                                         r"\(document 'd1'\): the reviewer reads nothing there"):
        load_trec_records(run, blank, query="q1")


def test_records_check_their_fields() -> None:
    with pytest.raises(ValueError, match="record ids must be distinct"):
        Records("x", ("1", "1"), ("a", "b"), ("", ""))
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        Records("x", ("1",), ("a",), ("",), np.array([2]))


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/datasets/screening")
def test_the_shared_screening_sets_read_as_records() -> None:
    r = load_records(SHARED / "cohen2006-ADHD.csv", label="label_included")
    assert len(r) == 851 and r.labels is not None and int(r.labels.sum()) == 20


def test_a_second_column_that_reads_like_labels_is_named_unless_the_column_is_chosen(tmp_path: Path) -> None:
    """The Cohen et al. sets carry the abstract decision and the final one: the review takes the first
    ASReview label name and says which other column it did not read."""
    path = tmp_path / "two.csv"
    path.write_text("record_id,title,abstract,label_abstract_screening,label_included,labelled_by\n"
                    "1,a,x,1,0,Ada\n2,b,y,0,0,Bob\n")
    with pytest.warns(UserWarning, match=r"two.csv: column label_included holds the labels \(the first "
                      r"ASReview label name\); label_abstract_screening reads like labels too and is not "
                      r"read: choose with --label-column"):
        assert load_records(path).labels.tolist() == [0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_records(path, label="label_abstract_screening").labels.tolist() == [1, 0]
    path.write_text("record_id,title,abstract,label_abstract_screening,label_included\n1,a,x, ,1\n2,b,y,,0\n")
    with warnings.catch_warnings():   # a column empty in every row holds no labels to choose from
        warnings.simplefilter("error")
        assert load_records(path).labels.tolist() == [1, 0]
    path.write_text("record_id,title,abstract,label_abstract_screening,label_fulltext\n1,a,x,1,0\n")
    with pytest.warns(UserWarning, match="no column holds the labels .*; label_abstract_screening, "
                      "label_fulltext read like labels too and are not read"):
        assert load_records(path).labels is None
