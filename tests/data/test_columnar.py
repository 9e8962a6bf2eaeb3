"""The columnar data layer: runs read into per-query offsets over flat arrays (pyarrow's reader and
the line reader agree, results and errors), one lexsort for the ordering, Parquet in and out."""

import gzip
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.data import trec
from rankcut.data.lists import Posting, RankedLists, RunColumns, concat_columns
from rankcut.data.trec import load_trec, read_qrels, read_run, read_run_columns, write_run

pytest.importorskip("pyarrow")

RUN = ("q2 Q0 b 1 3.0 sys\n"
       "q1 Q0 a 1 2.0 sys\n"
       "q2 Q0 a 2 3.0 sys\n"
       "\n"
       "q1 Q0 c 2 2.0 sys\n"
       "q2 Q0 c 3 -1e3 sys\n"
       "q1 Q0 b 3 1.00000001 sys\n")


def lines_read(text: str, name: str) -> RunColumns | str:
    """The line reader's result on ``text``, or its error message."""
    f = io.StringIO(text)
    try:
        return trec._read_run_lines(f, name)
    except ValueError as exc:
        return str(exc)


def file_read(path: Path) -> RunColumns | str:
    try:
        return read_run_columns(path)
    except ValueError as exc:
        return str(exc)


def same(a: RunColumns | str, b: RunColumns | str) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert a.qids == b.qids
    assert a.vocabulary.tolist() == b.vocabulary.tolist()
    for name in ("offsets", "doc_codes", "scores", "ranks"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def write(tmp_path: Path, text: str, gz: bool = False) -> Path:
    path = tmp_path / ("run.txt.gz" if gz else "run.txt")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


# ----------------------------------------------------------------------------- the two readers agree
def test_pyarrow_reads_a_clean_run_without_the_line_reader(tmp_path, monkeypatch):
    path = write(tmp_path, RUN)
    expected = lines_read(RUN, str(path))

    def no_lines(*args, **kwargs):
        raise AssertionError("the line reader was used")

    monkeypatch.setattr(trec, "_read_run_lines", no_lines)
    got = read_run_columns(path)
    same(got, expected)
    assert got.qids == ("q2", "q1") and got.vocabulary.tolist() == ["a", "b", "c"]
    assert got.offsets.tolist() == [0, 3, 6]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    "text",
    [
        RUN,
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d1 2 1.0 sys\n",  # a document twice
        "q1 Q0 d1 1 2.0\n",
        "q1 Q0 d1 1 2.0 sys extra\n",
        "q1 Q0 d1 1 high sys\n",
        "q1 Q0 d1 1 nan sys\n",
        "q1 Q0 d1 1 inf sys\n",
        "q1 Q0 d1 1 1e400 sys\n",
        "q1 Q0 d1 1.5 2.0 sys\n",
        "q1 Q0 d1 +1 2.0 sys\n",  # Python's int takes '+1', pyarrow does not
        "q1 Q0 d1 1 1_0 sys\n",  # so does Python's float with '1_0'
        "q1 Q0 d1 99999999999999999999 1 sys\n",
        "q1\tQ0\td1\t1\t2.0\tsys\n",  # tabs
        "q1  Q0 d1 1 2.0 sys\n",  # two spaces
        " q1 Q0 d1 1 2.0 sys \n",
        "q1 Q0 d\xa01 1 2.0 sys\n",  # a no-break space splits for Python
        "q1 Q0 d\u30001 1 2.0 sys\n",
        "q1 Q0 d1 1 2.0 sys\n   \nq1 Q0 d2 2 1.0 sys\n",
        "\ufeffq1 Q0 d1 1 2.0 sys\r\nq1 Q0 d2 2 1.0 sys\r\n",
        "q1 Q0 d1 1 2.0 sys\nq1 Q0 d1 2 1.0 sys\nq1 Q0 d2 x 1.0 sys\n",  # the repeat comes first
        "q1 Q0 d2 x 1.0 sys\nq1 Q0 d1 1 2.0 sys\nq1 Q0 d1 2 1.0 sys\n",
        "",
        "\n\n",
    ],
)
def test_both_readers_give_the_same_result_or_error(tmp_path, text, gz):
    path = write(tmp_path, text, gz)
    same(file_read(path), lines_read(text, str(path)))


def test_a_bad_byte_is_named_by_line_either_way(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 d1 1 2.0 sys\nq1 Q0 d\xff 2 1.0 sys\n")
    with pytest.raises(ValueError, match=r"run.txt, line 2: not UTF-8"):
        read_run_columns(path)


def test_without_pyarrow_the_result_is_identical(tmp_path, monkeypatch):
    path = write(tmp_path, RUN)
    with_arrow = read_run_columns(path)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert trec._read_run_arrow(path) is None
    same(read_run_columns(path), with_arrow)


TOKENS = st.sampled_from(["q1", "q2", "d1", "d2", "Q0", "1", "2", "01", "+1", "-3", "2.5", "1e3", "inf",
                          "nan", "x", "d\xa0", "é"])
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", "\t"])


@st.composite
def run_texts(draw):
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        fields = draw(st.lists(TOKENS, min_size=5, max_size=7))
        lines.append("".join(f + draw(SEPARATORS) for f in fields[:-1]) + fields[-1])
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


@settings(max_examples=150, deadline=None)
@given(run_texts())
def test_readers_agree_on_random_runs(tmp_path_factory, text):
    path = write(tmp_path_factory.mktemp("run"), text)
    same(file_read(path), lines_read(text, str(path)))


def test_read_run_keeps_its_postings_form(tmp_path):
    run = read_run(write(tmp_path, RUN))
    assert list(run) == ["q2", "q1"]
    assert run["q1"] == [Posting("a", 2.0, 1), Posting("c", 2.0, 2), Posting("b", 1.00000001, 3)]


# ----------------------------------------------------------------------------- ordering and judging
def reference_order(postings, ordering):
    """main's order_postings: two Python sorts with lambda keys."""
    out = sorted(postings, key=lambda p: p.doc_id, reverse=True)
    if ordering == "rank":
        out.sort(key=lambda p: (-p.score, p.rank))
    else:
        out.sort(key=lambda p: -np.float32(p.score))
    return out


@st.composite
def runs(draw):
    run = {}
    for q in range(draw(st.integers(1, 5))):
        ids = st.sampled_from(["a", "b", "c", "d", "e", "f", "Z", "aa"])
        docs = draw(st.lists(ids, min_size=1, max_size=8, unique=True))
        run[f"q{q}"] = [Posting(d, draw(st.sampled_from([0.0, -0.0, 1.0, 1.00000001, 2.5, -3.0])),
                                draw(st.integers(1, 4))) for d in docs]
    return run


@settings(max_examples=200, deadline=None)
@given(runs(), st.sampled_from(["rank", "trec_eval"]))
def test_one_lexsort_orders_as_the_two_python_sorts_did(run, ordering):
    qrels = {"q0": {"a": 2, "b": 0, "zz": 1}, "q1": {"c": 1, "Z": -1}}
    lists = RankedLists.from_postings(run, qrels, ordering=ordering)
    for i, q in enumerate(run):
        expected = reference_order(run[q], ordering)
        n = len(expected)
        assert lists.doc_ids[i, :n].tolist() == [p.doc_id for p in expected]
        assert lists.scores[i, :n].tolist() == [p.score for p in expected]
        assert lists.gains[i, :n].tolist() == [float(qrels.get(q, {}).get(p.doc_id, 0)) for p in expected]
        assert lists.doc_ids[i, n:].tolist() == [""] * (lists.max_len - n)
        assert np.all(lists.doc_codes[i, n:] == -1)
        assert lists.n_relevant[i] == sum(1 for r in qrels.get(q, {}).values() if r >= 1)


def test_subset_and_index_by_query_id():
    run = {f"q{i}": [Posting("d", 1.0, 1)] for i in range(5)}
    lists = RankedLists.from_postings(run)
    assert lists.index("q3") == 3
    assert lists.subset(["q4", "q1"]).qids == ("q4", "q1")
    with pytest.raises(KeyError, match="'q9' is not in these ranked lists"):
        lists.subset(["q1", "q9"])


def test_concat_columns_shares_one_vocabulary():
    a = RunColumns.from_postings({"q1": [Posting("b", 1.0, 1), Posting("a", 0.5, 2)]})
    b = RunColumns.from_postings({"q2": [Posting("c", 1.0, 1), Posting("a", 0.7, 2)]})
    both = concat_columns([a, b])
    assert both.vocabulary.tolist() == ["a", "b", "c"]
    assert both.to_postings() == {**a.to_postings(), **b.to_postings()}


# ----------------------------------------------------------------------------- Parquet
def test_parquet_round_trip_and_cli_forms(tmp_path):
    qrels = read_qrels(io.StringIO("q1 0 a 1\nq2 0 c 2\n"))
    lists = load_trec(write(tmp_path, RUN), qrels)
    write_run(tmp_path / "cut.parquet", lists, [2, 1])
    write_run(tmp_path / "cut.run", lists, [2, 1])
    from_parquet = load_trec(tmp_path / "cut.parquet")
    write_run(tmp_path / "again.run", from_parquet)
    assert (tmp_path / "again.run").read_bytes() == (tmp_path / "cut.run").read_bytes()

    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "cut.parquet").to_pydict()
    assert table == {"query_id": ["q2", "q2", "q1"], "doc_id": ["b", "a", "a"], "rank": [1, 2, 1],
                     "score": [3.0, 3.0, 2.0], "tag": ["rankcut"] * 3}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"query_id": ["q"], "doc_id": ["d"], "rank": [1]}, "no column 'score'"),
        ({"query_id": ["q"], "doc_id": ["d"], "rank": [1.5], "score": [1.0]},
         "column 'rank' must hold int64"),
        ({"query_id": ["q", None], "doc_id": ["d", "e"], "rank": [1, 2], "score": [1.0, 1.0]},
         "row 2: query_id is null"),
        ({"query_id": ["q", "q"], "doc_id": ["d", "e f"], "rank": [1, 2], "score": [1.0, 1.0]},
         "row 2: doc_id 'e f' is empty or holds whitespace"),
        ({"query_id": ["q", "q"], "doc_id": ["d", "e"], "rank": [1, 2], "score": [1.0, float("nan")]},
         "row 2: score must be finite"),
        ({"query_id": ["q", "r", "q"], "doc_id": ["d", "e", "d"], "rank": [1, 2, 3],
          "score": [1.0, 1.0, 0.0]},
         r"row 3: document 'd' is listed twice for query 'q' \(rows 1 and 3\)"),
        ({"query_id": [], "doc_id": [], "rank": [], "score": []}, "the run has no row"),
    ],
)
def test_bad_parquet_runs_are_named_by_file_and_row(tmp_path, table, message):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "run.parquet"
    types = {"query_id": pa.string(), "doc_id": pa.string(), "rank": pa.int64(), "score": pa.float64()}
    if table.get("rank") == [1.5]:
        types["rank"] = pa.float64()
    pq.write_table(pa.table({c: pa.array(v, types[c]) for c, v in table.items()}), path)
    with pytest.raises(ValueError, match=f"run.parquet(, )?.*{message}"):
        read_run_columns(path)


def test_a_file_that_is_not_parquet_is_refused(tmp_path):
    path = tmp_path / "run.parquet"
    path.write_text(RUN)
    with pytest.raises(ValueError, match="run.parquet: not a Parquet file"):
        read_run_columns(path)


def test_write_run_names_the_first_unwritable_id_in_writing_order(tmp_path):
    lists = RankedLists.from_postings({"q1": [Posting("ok", 2.0, 1), Posting("b d", 1.0, 2)],
                                       "q 2": [Posting("x", 1.0, 1)]})
    with pytest.raises(ValueError, match=r"document id \(query 'q1'\) 'b d' cannot be written"):
        write_run(tmp_path / "out.run", lists)
    write_run(tmp_path / "out.run", lists, [1, 0])  # neither the bad id nor the bad query is written
    assert (tmp_path / "out.run").read_text() == "q1 Q0 ok 1 2.0 rankcut\n"
    with pytest.raises(ValueError, match=r"query id 'q 2' cannot be written"):
        write_run(tmp_path / "out.run", lists, [1, 1])


@settings(max_examples=100, deadline=None)
@given(runs(), st.sampled_from(["rank", "trec_eval"]))
def test_rows_found_in_order_are_not_sorted_again(run, ordering):
    from rankcut.data import lists as lists_module

    ordered = {q: reference_order(p, ordering) for q, p in run.items()}
    fast = RankedLists.from_postings(ordered, ordering=ordering)
    assert lists_module._order(*_keys(RunColumns.from_postings(ordered)), ordering) is None
    for i, q in enumerate(ordered):
        assert fast.doc_ids[i, :len(ordered[q])].tolist() == [p.doc_id for p in ordered[q]]


def _keys(columns):
    group = np.repeat(np.arange(len(columns)), np.diff(columns.offsets))
    return group, columns.doc_codes, columns.scores, columns.ranks


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 20])
def test_repeats_are_found_block_by_block(block):
    q = np.array([0, 0, 0, 1, 1, 2, 2, 2], dtype=np.int32)
    d = np.array([5, 6, 7, 5, 6, 1, 2, 3], dtype=np.int32)
    assert not trec._has_repeat(q, d, 8, block)
    d[7] = 1  # query 2 lists document 1 twice
    assert trec._has_repeat(q, d, 8, block)
    assert trec._has_repeat(q[::-1].copy(), d[::-1].copy(), 8, block)  # interleaved queries


class _NoScan(tuple):
    """Query ids whose linear search fails: lookups must go through the dict of rows."""

    def index(self, *args, **kwargs):
        raise AssertionError("tuple.index scans every query: a subset of Q queries took O(Q^2)")


def test_subset_finds_queries_without_scanning():
    from dataclasses import replace

    run = {f"q{i}": [Posting("d", 1.0, 1)] for i in range(2000)}
    lists = RankedLists.from_postings(run)
    lists = replace(lists, qids=_NoScan(lists.qids))
    picked = lists.subset([f"q{i}" for i in range(1999, -1, -2)])
    assert picked.qids[:2] == ("q1999", "q1997") and len(picked) == 1000


@pytest.mark.parametrize("settle", [1, 7, 1 << 20])
def test_many_blocks_and_any_settling_point_give_the_same_columns(tmp_path, monkeypatch, settle):
    """Small blocks (many of them, each with its own dictionary of ids) coded against the
    vocabulary at different moments: the columns are those of one block and of the line reader."""
    rng = np.random.default_rng(3)
    lines = [f"q{q} Q0 D{d} {r + 1} {20 - r * 0.5} sys\n" for q in range(40)
             for r, d in enumerate(rng.choice(300, 25, replace=False))]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    whole = read_run_columns(path)
    monkeypatch.setattr(trec, "_BLOCK_BYTES", 256)
    monkeypatch.setattr(trec, "_SETTLE_IDS", settle)
    blocks = trec._read_run_arrow(path)
    assert blocks is not None
    same(blocks, whole)
    same(blocks, lines_read("".join(lines), str(path)))


def test_judgements_looked_up_block_by_block_are_the_same(tmp_path, monkeypatch):
    import rankcut.data.lists as lists_module

    rng = np.random.default_rng(5)
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{q} Q0 D{d} {r + 1} {9 - r * 0.25} sys\n" for q in range(30)
                           for r, d in enumerate(rng.choice(90, int(rng.integers(1, 30)), replace=False))))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 D{d} {int(rng.integers(0, 3))}\n" for q in range(0, 30, 2)
                             for d in rng.choice(90, 20, replace=False)))
    whole = load_trec(run, qrels, missing="keep")
    monkeypatch.setattr(lists_module, "_JUDGE_BLOCK", 7)
    blocks = load_trec(run, qrels, missing="keep")
    assert whole.gains is not None and blocks.gains is not None and whole.gains.any()
    assert np.array_equal(whole.gains, blocks.gains) and np.array_equal(whole.n_relevant, blocks.n_relevant)


def test_parquet_runs_in_the_frame_readers_column_names(tmp_path):
    """A PyTerrier result frame saved as Parquet (qid, docno, integer ids, ranks from 0) and an
    ir_measures-style one without ranks read as the run frames they are (rankcut.data.frames);
    both names of one column, or ids that are neither text nor integers, are refused."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rankcut.data.frames import lists_from_frame

    frame = pd.DataFrame({"qid": [301, 301, 302, 301], "docid": [7, 8, 9, 10],
                          "docno": [1001, 1002, 1001, 1003], "rank": [0, 1, 0, 2],
                          "score": [2.0, 2.0, 5.0, 1.0], "query": ["a b", "a b", "c", "a b"]})
    frame.to_parquet(tmp_path / "pyterrier.parquet")
    def ranked(lists):
        return {q: (lists.doc_ids[i][lists.mask[i]].tolist(), lists.scores[i][lists.mask[i]].tolist())
                for i, q in enumerate(lists.qids)}

    from_parquet = ranked(load_trec(tmp_path / "pyterrier.parquet"))
    assert from_parquet == ranked(lists_from_frame(frame))
    assert from_parquet == {"301": (["1001", "1002", "1003"], [2.0, 2.0, 1.0]), "302": (["1001"], [5.0])}

    plain = pd.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["b", "a", "c"], "score": [1.0, 1.0, 0.5]})
    plain.to_parquet(tmp_path / "plain.parquet")
    assert ranked(load_trec(tmp_path / "plain.parquet")) == ranked(lists_from_frame(plain))
    assert ranked(load_trec(tmp_path / "plain.parquet"))["q"][0] == ["b", "a"]  # row order breaks the tie
    assert [(p.doc_id, p.rank) for p in read_run(tmp_path / "plain.parquet")["q"]] == [("b", 1), ("a", 2)]

    # without ranks the row order is the rank, so distances (rising down the rows) are warned of
    pd.DataFrame({"qid": ["q"] * 3, "docno": ["a", "b", "c"], "score": [0.1, 0.2, 0.3]}).to_parquet(
        tmp_path / "distances.parquet")
    with pytest.warns(UserWarning, match="the scores rise with the rank column in 1 of the 1 queries"):
        load_trec(tmp_path / "distances.parquet")

    frame.assign(query_id=frame["qid"].astype(str)).to_parquet(tmp_path / "both.parquet")
    with pytest.raises(ValueError, match="both.parquet: both 'qid' and 'query_id' are present; keep one as "
                                         "query_id"):
        read_run_columns(tmp_path / "both.parquet")
    pq.write_table(pa.table({"qid": ["q"], "docno": [1.5], "score": [1.0]}), tmp_path / "float.parquet")
    with pytest.raises(ValueError, match="column 'docno' must hold string or integer ids, got double "
                                         r"\(pandas stores a column of integer ids that holds a null as "
                                         "double"):
        read_run_columns(tmp_path / "float.parquet")
    pq.write_table(pa.table({"qid": ["q"], "score": [1.0]}), tmp_path / "nodoc.parquet")
    with pytest.raises(ValueError, match="no column 'docno' or 'doc_id'; .* its columns are qid, score"):
        read_run_columns(tmp_path / "nodoc.parquet")
