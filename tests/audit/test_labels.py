"""Audit labels: the SQLite store, label files, the qrels oracle and the labelling prompt."""

import gzip
import io
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.audit.interactive import LabellingSummary, label_interactively
from rankcut.audit.labels import (
    SCHEMA_VERSION,
    LabelEvent,
    LabelStore,
    read_label_file,
    write_label_file,
)
from rankcut.audit.oracle import qrels_oracle
from rankcut.data.trec import read_qrels

DATASETS = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


@pytest.fixture
def store(tmp_path):
    with LabelStore(tmp_path / "labels.sqlite") as s:
        yield s


def stream(text: str, name: str) -> io.StringIO:
    f = io.StringIO(text)
    f.name = name
    return f


# --- the store ---------------------------------------------------------------------------------------

def test_new_store_is_versioned_and_in_wal_mode(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as s:
        assert s.count() == 0 and s.items() == [] and s.history() == []
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert dict(con.execute("SELECT key, value FROM meta")) == {
        "format": "rankcut-labels", "schema_version": str(SCHEMA_VERSION)}
    con.close()


def test_record_get_missing_items(store):
    items = [("q1", "d1"), ("q1", "d2"), ("q2", "d1")]
    assert store.record(items, [1, 0, True], "file.csv") == 3
    assert store.count() == 3
    assert store.get([("q2", "d1"), ("q9", "d9"), ("q1", "d1")]) == {("q2", "d1"): 1, ("q1", "d1"): 1}
    assert store.missing([("q3", "x"), ("q1", "d2"), ("q0", "y"), ("q3", "x")]) == [("q3", "x"), ("q0", "y")]
    assert store.items() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 1)]
    # numpy labels, an item repeated with the same label, and a label the item already has
    assert store.record([("q3", "a"), ("q3", "a"), ("q1", "d1")], np.array([0, 0, 1]), "numpy") == 1
    assert store.count() == 4
    assert [(e.query_id, e.doc_id, e.old_label, e.new_label, e.source) for e in store.history()] == [
        ("q1", "d1", None, 1, "file.csv"), ("q1", "d2", None, 0, "file.csv"),
        ("q2", "d1", None, 1, "file.csv"), ("q3", "a", None, 0, "numpy")]


def test_lookups_of_more_items_than_labelled_scan_the_store_with_the_same_answer(store):
    """get and sources_of scan the whole store when asked for more items than it holds (a pool of
    2,000,000 asked one query an item took 14 s of status); the answer, its order included, is the
    one the item-by-item lookup gives."""
    store.record([("q1", "d1"), ("q1", "d2"), ("q2", "d1")], [1, 0, 1], "file.csv")
    store.record([("q2", "d2")], [0], "alice")
    asked = [("q2", "d2"), ("q9", "d9"), ("q1", "d1"), ("q2", "d2"), ("q1", "d2"), ("q1", "x")]
    assert list(store.get(asked).items()) == [(("q2", "d2"), 0), (("q1", "d1"), 1), (("q1", "d2"), 0)]
    assert store.sources_of(asked) == {("q2", "d2"): "alice", ("q1", "d1"): "file.csv",
                                       ("q1", "d2"): "file.csv"}
    few = [("q2", "d1"), ("q0", "d0")]   # fewer than held: item by item
    assert store.get(few) == {("q2", "d1"): 1} and store.sources_of(few) == {("q2", "d1"): "file.csv"}
    with pytest.raises(ValueError, match=r"items\[1\] must be a \(query_id, doc_id\) pair"):
        store.get([("q1", "d1"), "q1"])


def test_conflicting_label_is_refused_and_nothing_of_the_call_is_kept(store):
    store.record([("q1", "d1")], [1], "alice")
    with pytest.raises(ValueError, match=r"labels.sqlite: query 'q1', document 'd1' is already labelled 1 "
                                         r"\(source 'alice', .*\); refusing label 0 from source 'bob'"):
        store.record([("q1", "new"), ("q1", "d1")], [1, 0], "bob")
    assert store.items() == [("q1", "d1", 1)]
    assert len(store.history()) == 1


def test_overwrite_is_kept_in_the_history(store):
    store.record([("q1", "d1"), ("q1", "d2")], [1, 1], "alice")
    assert store.record([("q1", "d1"), ("q1", "d2")], [0, 1], "bob", overwrite=True) == 1
    assert store.items() == [("q1", "d1", 0), ("q1", "d2", 1)]
    last = store.history()[-1]
    assert isinstance(last, LabelEvent)
    assert (last.query_id, last.doc_id, last.old_label, last.new_label, last.source) == (
        "q1", "d1", 1, 0, "bob")
    assert len(store.history()) == 3


@pytest.mark.parametrize(
    ("items", "labels", "source", "message"),
    [([("q", "d")], [2], "s", r"labels\[0\] must be 0 or 1, got 2"),
     ([("q", "d")], [0.0], "s", r"labels\[0\] must be 0 or 1, got 0.0"),
     ([("q", "d")], ["1"], "s", r"labels\[0\] must be 0 or 1, got '1'"),
     ([("q", "d")], [1, 0], "s", r"same length, got 1 and 2"),
     ([("q", "d", "x")], [1], "s", r"items\[0\] must be a \(query_id, doc_id\) pair"),
     (["qd"], [1], "s", r"items\[0\] must be a \(query_id, doc_id\) pair"),
     ("qd", [1], "s", r"items must be a sequence of \(query_id, doc_id\) pairs"),
     ([("q", "")], [1], "s", r"items\[0\] doc id must be a non-empty string"),
     ([(" q", "d")], [1], "s", r"items\[0\] query id must be a non-empty string without surrounding"),
     ([("q", 7)], [1], "s", r"items\[0\] doc id must be a non-empty string"),
     ([("q", "d")], [1], " ", r"source must be a non-empty string"),
     ([("q", "d")], [1], None, r"source must be a non-empty string \(or one per item\), got None"),
     ([("q", "d"), ("q", "e")], [1, 0], ["s", ""],
      r"source must be a non-empty string \(or one per item\), got ''"),
     ([("q", "d"), ("q", "e")], [1, 0], ["s"], r"items and sources must have the same length, got 2 and 1"),
     ([("q", "d"), ("q", "d")], [1, 0], "s",
      r"query 'q', document 'd' is given twice with different labels \(1 and 0\)")],
)
def test_bad_records_are_refused(store, items, labels, source, message):
    with pytest.raises(ValueError, match=message):
        store.record(items, labels, source)
    assert store.count() == 0


def test_meta_and_reopening(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as s:
        s.record([("q", "d")], [1], "x")
        s.set_meta("sample_hash", "abc")
        s.set_meta("sample_hash", "def")
        assert s.get_meta("opened_at") is None and s.get_meta("opened_at", "never") == "never"
        for key, value, message in [("format", "x", "reserved"), ("schema_version", "2", "reserved"),
                                    ("", "x", "key must be a non-empty string"),
                                    ("k", 3, "value for key 'k' must be a string")]:
            with pytest.raises(ValueError, match=message):
                s.set_meta(key, value)
    with LabelStore(path, create=False) as s:
        assert s.items() == [("q", "d", 1)]
        assert s.get_meta("sample_hash") == "def"
        assert s.get_meta("format") == "rankcut-labels"


def test_several_meta_values_and_labels_with_meta_in_one_transaction(tmp_path):
    path = tmp_path / "labels.sqlite"
    with LabelStore(path) as s:
        s.set_meta_many({"audit_id": "a", "sample_hash": "h"})
        assert (s.get_meta("audit_id"), s.get_meta("sample_hash")) == ("a", "h")
        # one bad value refuses the whole call
        with pytest.raises(ValueError, match="reserved"):
            s.set_meta_many({"opened_at": "t", "format": "x"})
        assert s.get_meta("opened_at") is None
        assert s.record([("q", "d")], [1], "reused from audit x", meta={"reused_from": "x"}) == 1
        assert s.get_meta("reused_from") == "x" and s.sources() == ["reused from audit x"]
        # a refused record writes no meta either
        with pytest.raises(ValueError, match="already labelled"):
            s.record([("q", "d")], [0], "other", meta={"reused_from": "y"})
        assert s.get_meta("reused_from") == "x"
        with pytest.raises(ValueError, match="must be a string"):
            s.record([("q", "e")], [0], "other", meta={"k": 1})  # type: ignore[dict-item]
        assert s.count() == 1


def test_closed_store_refuses_work(tmp_path):
    with LabelStore(tmp_path / "l.sqlite") as s:
        pass
    with pytest.raises(sqlite3.ProgrammingError):
        s.count()
    s.close()  # idempotent


def _sqlite_file(path: Path, *statements: str) -> Path:
    con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()
    return path


def test_files_that_are_not_label_stores_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    other = _sqlite_file(tmp_path / "other.db", "CREATE TABLE t (x)")
    foreign = _sqlite_file(tmp_path / "foreign.db", "CREATE TABLE meta (key TEXT, value TEXT)",
                           "INSERT INTO meta VALUES ('format', 'something-else')")
    newer = tmp_path / "newer.sqlite"
    LabelStore(newer).close()
    _sqlite_file(newer, f"UPDATE meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'")
    for path, message in [(text, "is not a rankcut label store \\(not an SQLite database\\)"),
                          (other, "is not a rankcut label store \\(an SQLite database without a meta "
                                  "table\\)"),
                          (foreign, "is not a rankcut label store \\(meta format is 'something-else'"),
                          (newer, f"schema version '{SCHEMA_VERSION + 1}' is not one this rankcut reads")]:
        before = path.read_bytes()
        with pytest.raises(ValueError, match=f"{path.name}.*{message}"):
            LabelStore(path)
        assert path.read_bytes() == before  # a foreign file is left as it was
    with pytest.raises(ValueError, match="is a folder"):
        LabelStore(tmp_path)
    with pytest.raises(FileNotFoundError, match="folder .*nowhere does not exist"):
        LabelStore(tmp_path / "nowhere" / "l.sqlite")
    with pytest.raises(FileNotFoundError, match="label store .*absent.sqlite does not exist"):
        LabelStore(tmp_path / "absent.sqlite", create=False)
    assert not (tmp_path / "absent.sqlite").exists()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(st.sampled_from(["q1", "q2"]), st.sampled_from(["a", "b", "c"]),
                                             st.booleans()), max_size=4),
                          st.booleans()), max_size=6))
def test_store_behaves_like_a_dict_of_first_labels(calls):
    """Model check: each call is all-or-nothing; a conflict without overwrite changes nothing."""
    model: dict[tuple[str, str], int] = {}
    changes = 0
    with tempfile.TemporaryDirectory() as tmp, LabelStore(Path(tmp) / "l.sqlite") as s:
        for rows, overwrite in calls:
            items = [(q, d) for q, d, _ in rows]
            labels = [int(y) for *_, y in rows]
            given_ = {}
            clash = any(given_.setdefault(i, y) != y for i, y in zip(items, labels, strict=True))
            conflict = any(model.get(i, y) != y for i, y in given_.items())
            if clash or (conflict and not overwrite):
                with pytest.raises(ValueError):
                    s.record(items, labels, "t", overwrite=overwrite)
                continue
            new = {i: y for i, y in given_.items() if model.get(i) != y}
            assert s.record(items, labels, "t", overwrite=overwrite) == len(new)
            model.update(new)
            changes += len(new)
        assert s.items() == sorted((q, d, y) for (q, d), y in model.items())
        assert len(s.history()) == changes


# --- crash safety ------------------------------------------------------------------------------------

# A child that records calls of BATCH labels, one call per loop, and prints the call's number once
# record() has returned. With a stop number it waits (idle, between calls) after that call.
_CHILD = """
import sys
from rankcut.audit.labels import LabelStore
store = LabelStore(sys.argv[1])
first, stop, batch = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for b in range(first, 10**6):
    items = [("q%d" % (b % 7), "d%d-%d" % (b, j)) for j in range(batch)]
    store.record(items, [(b + j) % 2 for j in range(batch)], "child")
    print(b, flush=True)
    if b == stop:
        sys.stdin.readline()
"""
BATCH = 50


def _run_and_kill(path: Path, first: int, stop: int, wait_for: int, delay: float = 0.0) -> int:
    """Start the child, kill it (SIGKILL) ``delay`` seconds after it printed ``wait_for`` calls;
    return how many calls it printed."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), str(first), str(stop), str(BATCH)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    for _ in range(wait_for):
        assert child.stdout.readline(), "the labelling child stopped early"
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    printed = wait_for + len(child.stdout.read().split())
    child.stdout.close()
    child.stdin.close()
    return printed


def _check_calls(path: Path) -> int:
    """Every call in the store is there in full (all BATCH labels, right values, one history event
    each), calls form a prefix 0..n-1, the file passes integrity_check and takes a new label; returns n."""
    with LabelStore(path) as s:
        labels = {(q, d): y for q, d, y in s.items() if q != "parent"}
        calls = {int(d[1:].split("-")[0]) for _, d in labels}
        assert calls == set(range(len(calls)))
        for b in calls:
            for j in range(BATCH):
                assert labels[f"q{b % 7}", f"d{b}-{j}"] == (b + j) % 2
        assert sum(e.source == "child" for e in s.history()) == len(labels) == BATCH * len(calls)
        assert s._con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert s.record([("parent", f"probe{len(calls)}")], [1], "parent") == 1
        return len(calls)


def test_killed_writer_keeps_every_returned_label_and_no_half_call(tmp_path):
    path = tmp_path / "labels.sqlite"
    # killed while idle after call 24 returned: exactly calls 0..24 are there
    assert _run_and_kill(path, 0, stop=24, wait_for=25) == 25
    assert _check_calls(path) == 25
    # then resumed and killed wherever it happens to be, a few times: every call that returned is
    # there, and at most the call in flight besides, whole or not at all
    done = 25
    for delay in (0.0, 0.001, 0.003, 0.01):
        printed = _run_and_kill(path, done, stop=-1, wait_for=5, delay=delay)
        now = _check_calls(path)
        assert done + printed <= now <= done + printed + 1
        done = now


# A child that, call after call, writes three meta values in one transaction, then one label with a
# meta value in the same transaction, and prints the call's number once both returned.
_META_CHILD = """
import sys
from rankcut.audit.labels import LabelStore
store = LabelStore(sys.argv[1])
for b in range(int(sys.argv[2]), 10**6):
    store.set_meta_many({"opened_at": "t%d" % b, "opened_sample_hash": "s%d" % b,
                         "opened_labels_hash": "h%d" % b})
    store.record([("q", "d%d" % b)], [b % 2], "reused from audit x", meta={"reused_from": "r%d" % b})
    print(b, flush=True)
"""


def test_killed_meta_writer_leaves_all_values_or_none(tmp_path):
    """The audit workflow writes related meta values (audit id and sample hash; the opening time
    and hashes; reused labels and where they came from) together: a kill never splits them."""
    path = tmp_path / "labels.sqlite"
    first = 0
    for delay in (0.0, 0.0005, 0.002, 0.005, 0.01):
        child = subprocess.Popen([sys.executable, "-c", _META_CHILD, str(path), str(first)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline(), "the child stopped early"
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        child.stdout.close()
        with LabelStore(path) as s:
            at = s.get_meta("opened_at")
            assert at is not None
            b = at[1:]
            assert (s.get_meta("opened_sample_hash"), s.get_meta("opened_labels_hash")) == (f"s{b}", f"h{b}")
            calls = sorted(int(d[1:]) for _, d, _ in s.items())
            assert calls == list(range(calls[-1] + 1))
            assert s.get_meta("reused_from") == f"r{calls[-1]}"  # the label and its meta together
            assert int(b) in (calls[-1], calls[-1] + 1)  # killed after a call, or inside the next one
            first = calls[-1] + 1


# --- label files -------------------------------------------------------------------------------------

def test_csv_aliases_bom_case_blank_lines_extra_columns():
    text = ("\ufeffRelevant, note ,QID,Docno\n"
            "Yes,fine,q1,d1\n"
            "\n"
            "n,,q1,d2\n"
            'TRUE,"a, b",q2,"d,3"\n'
            "0,,q2, d4 \n"
            "y,again,q1,d1\n")
    assert read_label_file(stream(text, "labels.csv")) == [
        ("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d,3", 1), ("q2", "d4", 0)]


def test_csv_header_query_doc_label_and_tsv():
    assert read_label_file(stream("query,doc,label\nq,d,False\n", "x.csv")) == [("q", "d", 0)]
    assert read_label_file(stream("query_id\tdoc_id\tlabel\nq\td,e\t1\n", "x.tsv")) == [("q", "d,e", 1)]
    assert read_label_file(stream("query_id\tdoc_id\tlabel\nq\td\t1\n", "x"), kind="tsv") == [("q", "d", 1)]


def test_jsonl_keys_and_label_forms():
    text = ('\ufeff{"query_id": "q1", "doc_id": "d1", "label": 1}\n'
            '{"qid": 2, "docno": 7, "relevant": false}\n'
            "\n"
            '{"Query": "q3", "doc": "d", "label": "Y", "extra": [1]}\n')
    assert read_label_file(stream(text, "labels.jsonl")) == [("q1", "d1", 1), ("2", "7", 0), ("q3", "d", 1)]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [("a.csv", "", r"a.csv: empty label file; a header line query_id,doc_id,label is required"),
     ("a.csv", "\n\nq1,d1,1\n", r"a.csv, line 3: the header line names no query_id / doc_id / label column"),
     ("a.csv", "query,doc\nq,d\n", r"a.csv, line 1: the header line names no label column"),
     ("a.csv", "query_id;doc_id;label\nq;d;1\n",
      r"names no query_id / doc_id / label column .* — the file looks separated by ';': save it with ','"),
     ("a.csv", "query,qid,doc,label\n", r"a.csv, line 1: columns 'query' and 'qid' both name the query_id"),
     ("a.csv", "query,doc,label\nq,d,1\nq,e\n", r"a.csv, line 3: expected 3 columns as in the header, got 2"),
     ("a.csv", "query,doc,label\nq,d,maybe\n",
      r"a.csv, line 2: label must be 0/1, yes/no, true/false or y/n, got 'maybe'"),
     ("a.csv", "query,doc,label\nq,d,²\n", r"a.csv, line 2: label must be .*got '²'$"),   # isdigit took it
     ("a.csv", "query,doc,label\nq,d,2\n",
      r"a.csv, line 2: label must be .*got '2'; for graded judgments, write 1 for the grades you count as "
      r"relevant, or let rankcut audit label --oracle qrels --qrels FILE --threshold GRADE read them"),
     ("a.csv", "query,doc,label\n , d,1\n", r"a.csv, line 2: query id must be a non-empty string"),
     ("a.csv", 'query,doc,label\n"q\nr",d,1\nq,"x,0\n', r"a.csv, line 4: unexpected end of data"),
     ("a.csv", 'query,doc,label\nq,"x,0\nmore\n', r"a.csv, line 2: unexpected end of data"),
     ("a.csv", "query,doc,label\nq,d,1\n\nq,e,1\nq,d,no\n",
      r"a.csv, line 5: query 'q', document 'd' is labelled 0 here but 1 on line 2"),
     ("a.csv", 'query,doc,label\n"q\nr",d,1\nq,e,x\n', r"a.csv, line 4: label must be"),
     ("a.jsonl", '{"query": "q", "doc": "d", "label": 1}\n{oops\n', r"a.jsonl, line 2: not valid JSON"),
     ("a.jsonl", '["q", "d", 1]\n', r"a.jsonl, line 1: expected a JSON object, got list"),
     ("a.jsonl", '{"query": "q", "label": 1}\n', r"a.jsonl, line 1: the object has no doc_id key"),
     ("a.jsonl", '{"query": "q", "doc": "d", "label": 1.0}\n', r"a.jsonl, line 1: label must be .*got 1.0"),
     ("a.jsonl", '{"query": "q", "doc": true, "label": 1}\n', r"a.jsonl, line 1: doc id must be a non-empty"),
     ("a.jsonl", '{"q": 1}\n\n{"query": "q", "doc": "d", "label": 1}\n',
      r"a.jsonl, line 1: the object has no query_id / doc_id / label key"),
     ("a.txt", "query,doc,label\n", r"a.txt: cannot tell the label file format from the name")],
)
def test_bad_label_files_name_file_and_line(name, text, message):
    with pytest.raises(ValueError, match=message):
        read_label_file(stream(text, name))


def test_blank_labels_leave_their_items_unlabelled():
    """A partly filled list to label: blank cells (and JSON null or "") are skipped, anything else
    that is no label is still refused."""
    text = "query_id,doc_id,label,text\nq,d1,1,x\nq,d2,,y\nq,d3,  ,z\nq,d4,no,w\n"
    assert read_label_file(stream(text, "to_label.csv")) == [("q", "d1", 1), ("q", "d4", 0)]
    assert read_label_file(stream("query_id\tdoc_id\tlabel\nq\td\t\n", "x.tsv")) == []
    text = ('{"query_id": "q", "doc_id": "d1", "label": null}\n'
            '{"query_id": "q", "doc_id": "d2", "label": ""}\n'
            '{"query_id": "q", "doc_id": "d3", "label": true}\n')
    assert read_label_file(stream(text, "to_label.jsonl")) == [("q", "d3", 1)]
    with pytest.raises(ValueError, match=r"line 2: label must be .*got '-'"):
        read_label_file(stream("query_id,doc_id,label\nq,d,-\n", "a.csv"))
    with pytest.raises(ValueError, match=r"line 1: label must be .*got \[\]"):
        read_label_file(stream('{"query_id": "q", "doc_id": "d", "label": []}\n', "a.jsonl"))


def test_conflicting_jsonl_duplicate_and_bad_kind():
    text = '{"query": "q", "doc": "d", "label": 1}\n{"query": "q", "doc": "d", "label": "no"}\n'
    with pytest.raises(ValueError, match=r"a.jsonl, line 2: query 'q', document 'd' is labelled 0 here but "
                                         r"1 on line 1"):
        read_label_file(stream(text, "a.jsonl"))
    with pytest.raises(ValueError, match=r"kind must be one of \('csv', 'tsv', 'jsonl'\), got 'xls'"):
        read_label_file(stream(text, "a.jsonl"), kind="xls")


def test_files_on_disk_gzip_and_undecodable_bytes(tmp_path):
    (tmp_path / "l.csv").write_bytes(b"\xef\xbb\xbfquery_id,doc_id,label\r\nq,d,1\r\n")
    assert read_label_file(tmp_path / "l.csv") == [("q", "d", 1)]
    with gzip.open(tmp_path / "l.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write('{"query_id": "q", "doc_id": "d", "label": 0}\n')
    assert read_label_file(tmp_path / "l.jsonl.gz") == [("q", "d", 0)]
    (tmp_path / "bad.csv").write_bytes(b"query_id,doc_id,label\nq,\xff,1\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 2: not UTF-8 text"):
        read_label_file(tmp_path / "bad.csv")


ids = st.text(st.characters(exclude_characters="\0"), min_size=1, max_size=6).filter(lambda s: s == s.strip())


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(ids, ids, st.integers(0, 1)), max_size=8, unique_by=lambda r: r[:2]),
       name=st.sampled_from(["l.csv", "l.tsv", "l.jsonl", "l.csv.gz", "L.JSONL.GZ"]))
def test_written_files_read_back_the_same_rows(rows, name):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        write_label_file(path, rows + rows[:1])  # an exact repeat is written once
        assert read_label_file(path) == rows
        assert os.listdir(tmp) == [name]


def test_store_round_trip_through_a_file(tmp_path, store):
    store.record([("q2", "b"), ("q1", "a,x"), ("q1", 'say "hi"')], [1, 0, 1], "seed")
    write_label_file(tmp_path / "out.csv", store.items())
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "query_id,doc_id,label"
    rows = read_label_file(tmp_path / "out.csv")
    with LabelStore(tmp_path / "copy.sqlite") as copy:
        copy.record([r[:2] for r in rows], [r[2] for r in rows], "out.csv")
        assert copy.items() == store.items()


def test_write_refuses_bad_rows_and_leaves_the_old_file(tmp_path):
    out = tmp_path / "l.csv"
    out.write_text("old\n")
    for rows, message in [([("q", "d", 1), ("q", "d", 0)],
                           r"rows\[1\]: query 'q', document 'd' is labelled 0 here but 1 in rows\[0\]"),
                          ([("q", "d")], r"rows\[0\] must be \(query_id, doc_id, label\)"),
                          ([("q", "d ", 1)], r"rows\[0\] doc id must be a non-empty string without"),
                          ([("q", "d", "yes")], r"rows\[0\] label must be 0 or 1")]:
        with pytest.raises(ValueError, match=message):
            write_label_file(out, rows)
    assert out.read_text() == "old\n" and os.listdir(tmp_path) == ["l.csv"]
    with pytest.raises(FileNotFoundError, match="output folder .*missing does not exist"):
        write_label_file(tmp_path / "missing" / "l.csv", [])
    with pytest.raises(ValueError, match="cannot tell the label file format"):
        write_label_file(tmp_path / "l.xlsx", [])


# --- oracle ------------------------------------------------------------------------------------------

def test_qrels_oracle_thresholds_and_unjudged():
    qrels = read_qrels(stream("1 0 a 2\n1 0 b 1\n1 0 c 0\n2 0 a -1\n", "q.txt"))
    items = [("1", "a"), ("1", "b"), ("1", "c"), ("1", "z"), ("2", "a"), ("3", "a")]
    assert qrels_oracle(qrels, items) == [1, 1, 0, 0, 0, 0]
    assert qrels_oracle(qrels, items, threshold=2) == [1, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="threshold must be > 0"):
        qrels_oracle(qrels, items, threshold=0)
    with pytest.raises(ValueError, match=r"items\[0\] must be a \(query_id, doc_id\) pair"):
        qrels_oracle(qrels, ["1a"])


def test_qrels_oracle_on_trec_dl_counts_the_relevant_judgements():
    path = DATASETS / "trec-dl" / "qrels.dl19-passage.txt"
    if not path.is_file():
        pytest.skip(f"real datasets not found at {DATASETS}")
    qrels = read_qrels(path)
    items = [(q, d) for q, docs in qrels.items() for d in docs]
    labels = qrels_oracle(qrels, items, threshold=2)
    assert sum(labels) == sum(g >= 2 for docs in qrels.values() for g in docs.values()) > 0


# --- interactive labelling ---------------------------------------------------------------------------

def script(*answers: str):
    """An ``input`` that gives ``answers`` in turn and ends like a closed terminal."""
    prompts: list[str] = []
    it = iter(answers)

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None
    ask.prompts = prompts  # type: ignore[attr-defined]
    return ask


ITEMS = [("q1", "d1"), ("q1", "d2"), ("q2", "d1"), ("q2", "d3"), ("q1", "d1")]


def test_interactive_session_records_each_answer_and_resumes(store):
    store.record([("q2", "d1")], [0], "earlier")
    shown: list[str] = []
    texts = {("q1", "d1"): "text of d1 for q1", "d3": "text of d3"}
    summary = label_interactively(store, ITEMS, texts=texts, queries={"q1": "how long is a piece"},
                                  input=script("y", "maybe", " N "), output=shown.append)
    assert summary == LabellingSummary(total=4, labelled=2, skipped=0, remaining=1, stopped=True)
    assert store.items() == [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d1", 0)]
    assert {e.source for e in store.history()[1:]} == {"interactive"}
    page = "\n".join(shown)
    assert "1 of 4 items already labelled, 3 to go" in page
    assert "[1/4] query q1: how long is a piece\ndocument d1\ntext of d1 for q1" in page
    assert "please answer y (or 1), n (or 0), s, u or q (not 'maybe')" in page
    assert "[2/4] query q1: how long is a piece\ndocument d2\nrelevant?" not in page  # no text known
    assert "[4/4] query q2\ndocument d3\ntext of d3" in page  # the end of input quit at item 4
    assert "[3/4]" not in page  # labelled before: not asked

    shown.clear()
    summary = label_interactively(store, ITEMS, input=script("s", "y"), output=shown.append)
    assert summary == LabellingSummary(total=4, labelled=0, skipped=1, remaining=1, stopped=False)
    assert "[4/4] query q2" in "\n".join(shown) and "[1/4]" not in "\n".join(shown)
    summary = label_interactively(store, ITEMS, input=script("yes"), output=shown.append, source="alice")
    assert summary == LabellingSummary(total=4, labelled=1, skipped=0, remaining=0, stopped=False)
    assert store.history()[-1].source == "alice"
    ask = script()
    assert label_interactively(store, ITEMS, input=ask, output=shown.append).remaining == 0
    assert ask.prompts == []  # nothing left to ask


def test_quit_keeps_what_was_answered_and_an_interrupt_too(store):
    summary = label_interactively(store, ITEMS, input=script("n", "Q", "y"), output=lambda line: None)
    assert summary.stopped and summary.labelled == 1 and store.items() == [("q1", "d1", 0)]

    def interrupted(prompt: str) -> str:
        if store.count() == 2:
            raise KeyboardInterrupt
        return "y"
    with pytest.raises(KeyboardInterrupt):
        label_interactively(store, ITEMS, input=interrupted, output=lambda line: None)
    assert store.items() == [("q1", "d1", 0), ("q1", "d2", 1)]


def test_logged_is_the_history_replayed_and_tells_a_hand_edit(tmp_path: Path) -> None:
    with LabelStore(tmp_path / "l.sqlite") as store:
        store.record([("q", "a"), ("q", "b"), ("q", "c")], [1, 0, 1], "first")
        store.record([("q", "b")], [1], "second", overwrite=True)
        store.undo(("q", "c"), 1, "first")
        assert store.logged() == {(q, d): y for q, d, y in store.items()} == {("q", "a"): 1, ("q", "b"): 1}
    con = sqlite3.connect(tmp_path / "l.sqlite")
    con.execute("UPDATE labels SET label = 0 WHERE doc_id = 'a'")
    con.commit()
    con.close()
    with LabelStore(tmp_path / "l.sqlite", readonly=True) as store:
        assert store.logged()[("q", "a")] == 1 != dict(((q, d), y) for q, d, y in store.items())[("q", "a")]


def test_each_item_may_have_its_own_source(store):
    """Labels copied from another store keep who gave each; :meth:`sources_of` reads them back."""
    assert store.record([("q", "a"), ("q", "b"), ("q", "c")], [1, 0, 1], ["ann", "bob", "ann"]) == 3
    assert list(store.source_counts().items()) == [("ann", 2), ("bob", 1)]
    assert store.sources_of([("q", "b"), ("q", "x"), ("q", "a"), ("q", "b")]) == {("q", "b"): "bob",
                                                                                  ("q", "a"): "ann"}
    assert [(e.doc_id, e.source) for e in store.history()] == [("a", "ann"), ("b", "bob"), ("c", "ann")]
    assert store.record([("q", "d")], [0], ["aaron"]) == 1
    assert store.record([("q", "e"), ("q", "f")], [0, 1], ["zoe", "abe"]) == 2   # one call, one time
    # the first given first, also within one call (the report's order), not by name
    assert list(store.source_counts()) == ["ann", "bob", "aaron", "zoe", "abe"]
