"""TREC runs and qrels: parsing, validation, missing-query policy, atomic writing."""

import gzip
import io
import os
import tempfile
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.data.frames import lists_from_frame
from rankcut.data.lists import GradedQrelsWarning, NoRelevantWarning, Posting, RankedLists
from rankcut.data.trec import (
    MissingQueriesWarning,
    UncoveredQueriesWarning,
    align,
    load_trec,
    read_qrels,
    read_run,
    write_run,
)


def text(s: str, name: str = "inline") -> io.StringIO:
    f = io.StringIO(textwrap.dedent(s))
    f.name = name
    return f


RUN = """\
    q1 Q0 d1 1 3.0 sys
    q1 Q0 d2 2 2.0 sys
    q1 Q0 d3 3 2.0 sys
    q2 Q0 d9 1 0.5 sys

    q1 Q0 d4 4 -1e3 sys
"""


# ----------------------------------------------------------------------------- read_run
def test_read_run_keeps_file_order_and_values():
    run = read_run(text(RUN))
    assert list(run) == ["q1", "q2"]
    assert run["q1"] == [Posting("d1", 3.0, 1), Posting("d2", 2.0, 2), Posting("d3", 2.0, 3),
                         Posting("d4", -1000.0, 4)]
    assert run["q2"] == [Posting("d9", 0.5, 1)]


def test_read_run_any_whitespace_and_any_second_column():
    run = read_run(text("CD1\tAF\t77   1  -1\tUW\n"))
    assert run == {"CD1": [Posting("77", -1.0, 1)]}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("q1 Q0 d1 1 2.0", "expected 6 columns"),
        ("q1 Q0 d1 1 2.0 sys extra", "expected 6 columns"),
        ("0 qid:10002 " + " ".join(f"{i}:0.5" for i in range(1, 47)) + " #docid = GX008",
         r"expected 6 columns .*, got 51: '0 qid:10002 1:0\.5 .{99}\.\.\.' — it reads like a LETOR feature "
         r"file \('label qid:… 1:…'\), which rankcut evaluate reads with --letor"),
        ("q1 Q0 d1 1 high sys", "score must be a number"),
        ("q1 Q0 d1 1 nan sys", "score must be finite"),
        ("q1 Q0 d1 1 -inf sys", "score must be finite"),
        ("q1 Q0 d1 1.5 2.0 sys", "rank must be an integer"),
        ("q1 Q0 d1 one 2.0 sys", "rank must be an integer"),
        # Python's float and int take these, trec_eval not: 1_000 ranked first, ٣ read as 3
        ("q1 Q0 d1 1 1_000 sys", "score must be a number, got '1_000'"),
        ("q1 Q0 d1 1 \u0663 sys", "score must be a number, got '\u0663'"),
        ("q1 Q0 d1 1_0 2.0 sys", "rank must be an integer, got '1_0'"),
        ("q1 Q0 d\x001 1 2.0 sys", "the line holds a NUL byte"),
        # a JSON line was told only its count of columns (the RAG walk); a header is one only first
        ('{"qid": "q1", "docno": "d1", "score": 3.0, "rank": 1}', r"'\{\"qid\": .*' reads like JSON"),
        ('{"qid": "q1", "docid": "d1", "score": 1}', r"'\{.*' reads like JSON"),   # six words
        ("qid Q0 docno rank score tag", r"score must be a number, got 'score'$"),
    ],
)
def test_read_run_bad_line_names_file_and_line(line, message):
    with pytest.raises(ValueError, match=rf"myrun, line 2: {message}"):
        read_run(text(f"q0 Q0 d0 1 1.0 sys\n{line}\n"), name="myrun")


def test_a_header_line_is_named_as_one() -> None:
    """Told only that its score was not a number (the RAG walk), also after a blank line (the re-walk)."""
    for start in ("", "\n"):
        with pytest.raises(ValueError, match=r"myrun, line \d: score must be a number, got 'score' — a "
                                             r"header line\? A TREC run has none: drop it \(tail -n \+2\)"):
            read_run(text(start + "qid Q0 docno rank score tag\nq0 Q0 d0 1 1.0 sys\n"), name="myrun")
    with pytest.raises(ValueError, match=r"qr, line 2: .* — a header line\? TREC qrels have none"):
        read_qrels(text("\nquery_id iteration doc_id relevance\n1 0 a 1\n"), name="qr")


@pytest.mark.parametrize(
    ("reader", "content", "message"),
    [   # what the re-walk met: each was told only its count of columns
        ("qrels", '{"query_id": "1", "doc_id": "a", "relevance": 1}\n',
         r"reads like JSON; rankcut reads qrels"),
        ("run", "q1,Q0,d1,1,2.0,sys\n", r"got 1: .* — it reads like comma-separated values"),
        ("qrels", "q1,0,d1,1\n", r"got 1: .* — it reads like comma-separated values"),
        ("qrels", "q1 Q0 d1 1 2.0 sys\n", r"got 6: .* — it reads like a run line .*: a run given as qrels\?"),
        ("run", "q1 0 d1 1\n", r"got 4: .* — it reads like a qrels line .*: qrels given as a run\?"),
        # a feature table with its header was said to read like qrels (a user's walk)
        ("run", "query_id\tdoc_id\ttfidf_sim\tdoc2vec_sim\nq1\td1\t0.5\t0.2\n",
         r"got 4: .* — a header line \(column names\)\? TREC files have none \(a feature table, .*\)"),
        ("qrels", "qid doc rel\nq1 d1 1\n",
         r"got 3: .* — a header line \(column names\)\? TREC files have none$"),
    ],
)
def test_a_file_in_another_form_is_named_as_such(reader, content, message):
    read = read_run if reader == "run" else read_qrels
    with pytest.raises(ValueError, match=rf"f, line 1: .*{message}"):
        read(text(content), name="f")


def test_a_run_file_with_a_nul_in_an_id_is_refused_by_either_reader(tmp_path):
    """pyarrow's reader (with the columnar extra) took a NUL inside a document id."""
    (tmp_path / "n.run").write_bytes(b"q1 Q0 d0 1 2.0 sys\nq1 Q0 d\x001 2 1.0 sys\n")
    with pytest.raises(ValueError, match=r"n\.run, line 2: not UTF-8 text \(byte 8 of the line, 0x00, a NUL"):
        read_run(tmp_path / "n.run")


def test_read_run_duplicate_doc_names_both_lines():
    with pytest.raises(ValueError, match=r"line 3: document 'd1' is listed twice .* \(lines 1 and 3\)"):
        read_run(text("q1 Q0 d1 1 2 s\nq1 Q0 d2 2 1 s\nq1 Q0 d1 3 0 s\n"))
    # the same document under two queries is fine
    assert len(read_run(text("q1 Q0 d1 1 2 s\nq2 Q0 d1 1 2 s\n"))) == 2


def test_read_run_empty_is_an_error():
    with pytest.raises(ValueError, match="no line"):
        read_run(text("\n  \n"))


def test_read_run_path_and_gzip(tmp_path):
    plain = tmp_path / "a.run"
    plain.write_text(textwrap.dedent(RUN))
    packed = tmp_path / "a.run.gz"
    with gzip.open(packed, "wt") as f:
        f.write(textwrap.dedent(RUN))
    assert read_run(plain) == read_run(str(packed)) == read_run(text(RUN))
    plain.write_text("q1 Q0 d1 1 x s\n")
    with pytest.raises(ValueError, match=rf"{plain}, line 1"):
        read_run(plain)
    # a .gz that is not gzip, or cut short: pyarrow's bare "zlib inflate failed" named no file
    fake = tmp_path / "b.run.gz"
    fake.write_text(textwrap.dedent(RUN))
    cut = tmp_path / "c.run.gz"
    cut.write_bytes(gzip.compress(textwrap.dedent(RUN).encode() * 200)[:-20])
    for bad, why in ((fake, "Not a gzipped file"), (cut, "ended before the end-of-stream marker")):
        with pytest.raises(ValueError, match=rf"{bad}, line \d+: not a readable gzip file \(.*{why}"):
            read_run(bad)


# ----------------------------------------------------------------------------- read_qrels
def test_read_qrels_graded_any_whitespace():
    qrels = read_qrels(text("1 0 a 2\n1\t0\tb   0  \n\n2 Q0 c -1\n"))
    assert qrels == {"1": {"a": 2, "b": 0}, "2": {"c": -1}}


@pytest.mark.parametrize(
    ("line", "message"),
    [("1 0 a", "expected 4 columns"), ("1 0 a 1 x", "expected 4 columns"),
     ("1 0 a 1.0", "relevance must be an integer"), ("1 0 a yes", "relevance must be an integer"),
     ("1 0 a 1_0", "relevance must be an integer, got '1_0'")],
)
def test_read_qrels_bad_line(line, message):
    with pytest.raises(ValueError, match=rf"qr, line 2: {message}"):
        read_qrels(text(f"1 0 z 0\n{line}\n"), name="qr")
    with pytest.raises(ValueError) as err:
        read_qrels(text(f"1 0 z 0\n{line}\n"), name="qr")
    assert "header" not in str(err.value)   # a header is a first line's (a reused name said it later)


def test_a_qrels_header_line_is_named_as_one() -> None:
    with pytest.raises(ValueError, match=r"qr, line 1: relevance must be an integer, got 'relevance' — a "
                                         r"header line\? TREC qrels have none"):
        read_qrels(text("query_id iteration doc_id relevance\n1 0 a 1\n"), name="qr")


def test_read_qrels_duplicate_pair_names_both_lines():
    match = r"line 4: query '1', document 'a' is judged twice, differently \(1 on line 2, 2 on line 4\)"
    with pytest.raises(ValueError, match=match):
        read_qrels(text("1 0 b 0\n1 0 a 1\n2 0 a 1\n1 0 a 2\n"))
    # the same judgement again (another iteration column, a file joined twice): read once (it was
    # refused, though there is nothing to choose)
    assert read_qrels(text("1 0 a 1\n1 1 a 1\n1 0 b 0\n")) == {"1": {"a": 1, "b": 0}}


# ----------------------------------------------------------------------------- load_trec / align
def test_load_trec_gains_and_relevant_counts():
    lists = load_trec(text(RUN), text("q1 0 d2 2\nq1 0 d4 0\nq1 0 d8 1\nq2 0 d9 1\n"))
    assert lists.qids == ("q1", "q2")
    assert lists.gains[0].tolist() == [0, 2, 0, 0]
    assert lists.n_relevant.tolist() == [2, 1]  # d8 is relevant but not listed
    assert lists.labels[1].tolist() == [True, False, False, False]
    assert load_trec(text(RUN)).gains is None


def test_ordering_rank_versus_trec_eval():
    rank = load_trec(text(RUN), ordering="rank")
    trec = load_trec(text(RUN), ordering="trec_eval")
    assert rank.doc_ids[0].tolist() == ["d1", "d2", "d3", "d4"]
    assert trec.doc_ids[0].tolist() == ["d1", "d3", "d2", "d4"]  # tie broken by doc_id descending


def test_load_trec_checks_the_threshold_and_warns_when_nothing_reaches_it():
    qrels = "q1 0 d1 2\nq1 0 d2 1\nq2 0 d9 0\n"
    for bad in (float("nan"), float("inf"), 0, -1):
        with pytest.raises(ValueError, match="threshold must be"):
            load_trec(text(RUN), text(qrels), threshold=bad)
    with pytest.warns(NoRelevantWarning, match=r"relevance ≥ 3 \(the highest listed grade is 2\)"):
        load_trec(text(RUN), text(qrels), threshold=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trec(text(RUN), text(qrels), threshold=2)


def test_missing_drop_warns_and_drops():
    with pytest.warns(MissingQueriesWarning, match=r"^1 run query is not in the qrels and is dropped "
                      r"\(missing='keep' keeps it .*\): 'q2'$"):
        lists = load_trec(text(RUN), text("q1 0 d1 1\n"))
    assert lists.qids == ("q1",)
    run = {f"q{i}": [Posting("d", 1.0, 1)] for i in range(3)}
    with pytest.warns(MissingQueriesWarning, match=r"^2 run queries are not in the qrels and are dropped "
                      r"\(missing='keep' keeps them "):
        align(run, {"q0": {"d": 1}})


def test_missing_keep_and_error():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lists = load_trec(text(RUN), text("q1 0 d1 1\n"), missing="keep")
    assert lists.qids == ("q1", "q2") and lists.n_relevant.tolist() == [1, 0]
    with pytest.raises(ValueError, match=r"^1 run query is not in the qrels: 'q2'"):
        load_trec(text(RUN), text("q1 0 d1 1\n"), missing="error")
    with pytest.raises(ValueError, match="missing must be one of"):
        load_trec(text(RUN), text("q1 0 d1 1\n"), missing="ignore")


def test_qrels_queries_absent_from_run_are_reported():
    with pytest.warns(MissingQueriesWarning, match=r"^1 qrels query is not in the run and is ignored: 'q7'"):
        lists = load_trec(text(RUN), text("q1 0 d1 1\nq2 0 d9 0\nq7 0 d1 1\n"))
    assert lists.qids == ("q1", "q2")


def test_queries_whose_listed_documents_the_qrels_do_not_judge_are_warned_of():
    """A run writing its ids otherwise than the qrels (``Dd1`` for ``d1``) scored F1 0 everywhere and
    an oracle cut at one document, without a word."""
    prefixed = "".join(f"{q} Q0 D{d} {r} {s} t\n" for q, d, r, s in
                       (("q1", "d1", 1, 3.0), ("q1", "d2", 2, 2.0), ("q2", "d9", 1, 1.0)))
    with pytest.warns(UncoveredQueriesWarning, match=r"^the qrels judge none of the listed documents of 1 of "
                      r"the 2 judged queries \('q2'; query 'q2' lists 'Dd9', its qrels judge 'd9'\): "
                      "every one counts as not relevant"):
        load_trec(text(prefixed.replace("Dd1", "d1")), text("q1 0 d1 1\nq2 0 d9 0\n"))
    # every judged query so: a table of zeros with exit status 0 (the truncation walk): refused
    with pytest.raises(ValueError, match=r"^the qrels judge none of the listed documents of any of the 2 "
                       r"judged queries \('q1', 'q2'; query 'q1' lists 'Dd1', its qrels judge 'd1'\), "
                       r"though they judge documents not relevant too \(a pool\): the run writes its "
                       "document ids otherwise"):
        load_trec(text(prefixed), text("q1 0 d1 1\nq2 0 d9 0\n"))
    # but a run may miss every relevant document of positives-only qrels (Robust04's), or of one
    # query's pool (the diff review): warned of, as before
    with pytest.warns(UncoveredQueriesWarning, match=r"of 2 of the 2 judged queries"):
        load_trec(text(prefixed), text("q1 0 d1 1\nq2 0 d9 1\n"))
    with pytest.warns(UncoveredQueriesWarning, match=r"of 1 of the 1 judged queries"):
        load_trec(text(prefixed), text("q1 0 d1 1\nq1 0 d7 0\n"), missing="keep")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trec(text(RUN), text("q1 0 d1 1\nq2 0 d9 0\n"))   # each query judged where listed


def test_align_no_overlap_is_an_error():
    run = {"a": [Posting("d", 1.0, 1)]}
    with pytest.warns(MissingQueriesWarning), pytest.raises(ValueError, match="no query of the run"):
        align(run, {"b": {"d": 1}})
    # keep too: the qrels of another topic set gave every F1 0 and exit status 0
    with pytest.warns(MissingQueriesWarning), pytest.raises(ValueError, match=r"no query of the run is in "
                                                            r"the qrels \(the run's: 'a'; the qrels': 'b'\): "
                                                            r"the qrels of another topic set, or query ids "
                                                            r"written otherwise\? — missing='keep' keeps"):
        align(run, {"b": {"d": 1}}, missing="keep")
    with pytest.warns(MissingQueriesWarning), pytest.raises(ValueError, match=r"^the qrels hold no judgement "
                                                                              r"\(an empty qrels file\?\)"):
        align(run, {})   # it said "no query of the run is in the qrels", then blamed the topic set
    assert list(align({**run, "b": run["a"]}, {"b": {"d": 1}}, missing="keep")) == ["a", "b"]


def test_long_id_lists_are_shortened():
    run = {f"q{i}": [Posting("d", 1.0, 1)] for i in range(60)}
    with pytest.warns(MissingQueriesWarning, match=r"'q9', \.\.\. \(59 in all\)"):
        align(run, {"q59": {}})


# ----------------------------------------------------------------------------- write_run
def test_write_run_prefixes_and_round_trip(tmp_path):
    lists = load_trec(text(RUN))
    out = tmp_path / "cut.run"
    write_run(out, lists, np.array([2, 1]), tag="mine")
    assert out.read_text().splitlines() == [
        "q1 Q0 d1 1 3.0 mine", "q1 Q0 d2 2 2.0 mine", "q2 Q0 d9 1 0.5 mine"]
    write_run(out, lists, np.array([0, 1]))
    assert out.read_text() == "q2 Q0 d9 1 0.5 rankcut\n"
    write_run(out, lists)
    again = load_trec(out)
    assert np.array_equal(again.doc_ids, lists.doc_ids)
    assert np.array_equal(again.scores, lists.scores, equal_nan=True)
    packed = tmp_path / "cut.run.gz"   # written as its name says (it was plain text, unreadable back)
    write_run(packed, lists, np.array([2, 1]), tag="mine")
    assert gzip.decompress(packed.read_bytes()).decode().splitlines() == [
        "q1 Q0 d1 1 3.0 mine", "q1 Q0 d2 2 2.0 mine", "q2 Q0 d9 1 0.5 mine"]
    assert np.array_equal(load_trec(packed).doc_ids[:, :2], lists.doc_ids[:, :2])
    for suffix in (".bz2", ".XZ", ".zst"):   # plain text was written under these names, unreadable back
        other = tmp_path / f"cut.run{suffix}"
        with pytest.raises(ValueError, match=rf"cannot write {other}: .* not {suffix}: name it \*\.gz"):
            write_run(other, lists)
        assert not other.exists()


@pytest.mark.parametrize(
    ("cuts", "tag", "message"),
    [(np.array([5, 1]), "t", "outside"), (np.array([1]), "t", "expected 2 cuts"),
     (np.array([1, 1]), "two words", "tag 'two words'"), (np.array([1, 1]), "", "tag ''")],
)
def test_write_run_errors_leave_nothing_behind(tmp_path, cuts, tag, message):
    out = tmp_path / "cut.run"
    out.write_text("old\n")
    with pytest.raises(ValueError, match=message):
        write_run(out, load_trec(text(RUN)), cuts, tag=tag)
    assert out.read_text() == "old\n" and os.listdir(tmp_path) == ["cut.run"]


def test_write_run_failure_mid_write_removes_temp(tmp_path, monkeypatch):
    out = tmp_path / "cut.run"
    out.write_text("old\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_run(out, load_trec(text(RUN)), None)
    assert out.read_text() == "old\n" and os.listdir(tmp_path) == ["cut.run"]


def test_write_run_into_a_missing_folder_names_the_folder(tmp_path):
    lists = load_trec(text(RUN))
    with pytest.raises(FileNotFoundError, match=r"cannot write .*cut.run: output folder .*nodir.sub "
                       r"does not exist$"):
        write_run(tmp_path / "nodir" / "sub" / "cut.run", lists)
    (tmp_path / "file").write_text("")
    with pytest.raises(FileNotFoundError, match=r"output folder .*file is not a folder$"):
        write_run(tmp_path / "file" / "cut.run", lists)
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_write_run_os_errors_name_the_output_not_the_temp_file(tmp_path, monkeypatch):
    def refused(**kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".cut.run.abc.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    with pytest.raises(PermissionError, match=r"Permission denied: '.*/cut.run'$") as info:
        write_run(tmp_path / "cut.run", load_trec(text(RUN)))
    assert ".tmp" not in str(info.value) and info.value.errno == 13


def test_write_run_rejects_whitespace_doc_ids(tmp_path):
    lists = RankedLists.from_postings({"q": [Posting("a b", 1.0, 1)]})
    with pytest.raises(ValueError, match=r"document id \(query 'q'\) 'a b'"):
        write_run(tmp_path / "x.run", lists)
    assert not list(tmp_path.iterdir())


ids = st.text(alphabet="abcXYZ019-_.", min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(ids, st.dictionaries(ids, st.floats(-1e6, 1e6, allow_nan=False), min_size=1,
                                            max_size=6), min_size=1, max_size=4),
       st.sampled_from(["rank", "trec_eval"]))
def test_round_trip_property(tmp_path_factory, data, ordering):
    run = {q: [Posting(d, s, r) for r, (d, s) in enumerate(docs.items(), 1)] for q, docs in data.items()}
    lists = RankedLists.from_postings(run, ordering=ordering)
    out = tmp_path_factory.mktemp("rt") / "r.run"
    write_run(out, lists)
    back = load_trec(out, ordering=ordering)
    assert back.qids == lists.qids
    assert np.array_equal(back.doc_ids, lists.doc_ids)
    assert np.array_equal(back.scores, lists.scores, equal_nan=True)


# ----------------------------------------------------------------------------- real data
def test_robust04_bm25_test(datasets, tmp_path):
    run = datasets / "robust04" / "runs" / "bm25.test.run"
    qrels = datasets / "robust04" / "qrels.robust04.positives.txt"
    # the positives-only qrels have no line for query 672 (no relevant document)
    with pytest.warns(MissingQueriesWarning) as record:
        dropped = load_trec(run, qrels)
    messages = sorted(str(w.message) for w in record)
    assert messages[0].startswith("1 run query is not in the qrels") and "'672'" in messages[0]
    assert messages[1].startswith("200 qrels queries are not in the run")
    assert len(dropped) == 49
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQueriesWarning)  # the other 190 qrels queries
        lists = load_trec(run, qrels, missing="keep")
        trec = load_trec(run, qrels, missing="keep", ordering="trec_eval")
    assert len(lists) == 50 and lists.lengths.tolist() == [300] * 50
    assert lists.n_relevant[lists.index("672")] == 0
    ties = (lists.scores[:, 1:] == lists.scores[:, :-1]) & lists.mask[:, 1:]
    # The datasets README says 3,316; the file has 3,317, as an independent count confirms:
    # awk 'prev_q==$1 && prev_s==$5 {n++} {prev_q=$1; prev_s=$5} END{print n}' bm25.test.run
    assert int(ties.sum()) == 3317
    assert not np.array_equal(lists.doc_ids, trec.doc_ids)
    assert np.array_equal(np.sort(lists.doc_ids, axis=1), np.sort(trec.doc_ids, axis=1))
    assert np.array_equal(lists.scores, trec.scores)
    out = tmp_path / "bm25.run"
    write_run(out, lists)
    back = load_trec(out)
    assert np.array_equal(back.doc_ids, lists.doc_ids) and np.array_equal(back.scores, lists.scores)


def test_clef_tar_counts(datasets):
    tar = datasets / "clef-tar-2017"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lists = load_trec(tar / "runs" / "waterloo-A-rank-normal.run", tar / "qrel_abs_test.txt")
    assert len(lists) == 30 and int(lists.lengths.sum()) == 117_558
    assert int(lists.n_relevant.sum()) == 1857


def test_scores_that_rise_with_the_rank_are_warned_of(tmp_path):
    """Distances read as scores: every list was read from its last rank up without a word (the
    rank column said the opposite in every query)."""
    rows = [(q, d, r) for q in ("q1", "q2", "q3") for r, d in enumerate("abcd", 1)]
    far = tmp_path / "dist.run"
    far.write_text("".join(f"{q} Q0 {d} {r} {0.1 * r:.1f} t\n" for q, d, r in rows))
    with pytest.warns(UserWarning, match=r"the scores rise with the rank column in 3 of the 3 queries "
                                         r"\(e\.g\. 'q1'\).*negate them"):
        lists = load_trec(far)
    assert lists.doc_ids[0].tolist() == ["d", "c", "b", "a"]   # still ordered by score, as trec_eval
    near = tmp_path / "near.run"   # one query of three reversed (its scores negated by mistake): said
    near.write_text("".join(f"{q} Q0 {d} {r} {(0.1 * r if q == 'q1' else 1 - 0.1 * r):.1f} t\n"
                            for q, d, r in rows) + "q4 Q0 a 1 1.0 t\nq4 Q0 b 2 1.0 t\n")
    with pytest.warns(UserWarning, match=r"the scores rise with the rank column in 1 of the 4 queries "
                                         r"\(e\.g\. 'q1'\)"):
        load_trec(near)
    mixed = tmp_path / "mixed.run"   # ties, a reranker's scores against the first ranker's ranks, two
    mixed.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 a 1 0.2 t\nq2 Q0 b 2 0.9 t\nq2 Q0 c 3 0.5 t\n"
                     "q3 Q0 a 1 0.1 t\nq3 Q0 b 2 0.2 t\n")   # documents rising once: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trec(mixed)


def test_a_run_of_plain_tuples_names_the_entry():
    # a notebook's {qid: [(doc, score)]} was an AttributeError on 'doc_id'
    with pytest.raises(TypeError, match=r"run\['q1'\]\[1\] is \('d2', 1\.0\): a run's entries are "
                                        r"rankcut\.data\.lists\.Posting\(doc_id, score, rank\)"):
        load_trec({"q1": [Posting("d1", 3.0, 1), ("d2", 1.0)]}, {"q1": {"d1": 1}})


@pytest.mark.parametrize(("run", "error", "message"), [
    ({"q1": [Posting("d1", 3.0, 1), Posting(101, 2.0, 2)]}, TypeError,
     r"run\['q1'\]\[1\] has the document id 101 \(int\): document ids are strings"),
    ({7: [Posting("d1", 3.0, 1)]}, TypeError, r"run has the query id 7 \(int\): query ids are strings"),
    ({"q1": [Posting("d1", 3.0, 1), Posting("d2", float("nan"), 2)]}, ValueError,
     r"run\['q1'\]\[1\] \(document 'd2'\) has the score nan: a score must be a finite number"),
    ({"q1": [Posting("d1", "3.0", 1)]}, ValueError, r"has the score '3\.0': a score must be a finite number"),
])
def test_postings_with_ids_or_scores_a_run_file_cannot_hold_are_named(run, error, message):
    """An int id (pandas, pyserini) failed later as a bare TypeError against string qrels; a NaN score
    sank to the bottom of its list without a word, where a TREC file or a DataFrame refuses it."""
    with pytest.raises(error, match=message):
        load_trec(run, {"q1": {"d1": 1}})


def test_graded_qrels_without_a_threshold_are_warned_of(tmp_path):
    """A RAG engineer's walk: load_trec and lists_from_frame counted TREC DL's grade 1 as relevant
    without a word (oracle F1 0.63 against 0.52 at grade ≥ 2), where every command says it."""
    run = tmp_path / "r.run"
    run.write_text("".join(f"q1 Q0 d{r} {r + 1} {9 - r} t\n" for r in range(4)))
    graded, binary = tmp_path / "g.qrels", tmp_path / "b.qrels"
    graded.write_text("q1 0 d0 3\nq1 0 d1 1\nq1 0 d2 0\n")
    binary.write_text("q1 0 d0 1\nq1 0 d1 0\n")
    with pytest.warns(GradedQrelsWarning, match=r"grade relevance up to 3; grade ≥ 1 counts as relevant .* "
                                                r"pass threshold= to choose"):
        lists = load_trec(run, graded)
    assert lists.threshold == 1 and int(lists.n_relevant.sum()) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(load_trec(run, graded, threshold=2).n_relevant.sum()) == 1   # chosen: no word
        assert load_trec(run, graded, threshold=1).threshold == 1
        assert load_trec(run, binary).threshold == 1                           # nothing to choose
        assert load_trec(run).threshold == 1
    with pytest.raises(ValueError, match="threshold must be finite"):   # still refused before reading
        load_trec(tmp_path / "absent.run", graded, threshold=float("inf"))
    # from a DataFrame too, and said at the caller's line (it named frames.py: the review of the change)
    pd = pytest.importorskip("pandas")
    run_df = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d0", "d1"], "score": [2.0, 1.0]})
    qrels_df = pd.DataFrame({"qid": ["q1"], "docno": ["d0"], "label": [2]})
    with pytest.warns(GradedQrelsWarning) as caught:
        lists_from_frame(run_df, qrels_df)
    assert len(caught) == 1 and caught[0].filename == __file__
