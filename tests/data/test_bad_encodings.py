"""Text inputs that are not plain UTF-8: a byte-order mark is dropped, and bytes that are not
UTF-8 are refused naming the file and the exact line, by every reader (they share
:func:`rankcut.data.io.open_text`)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankcut.audit.labels import read_label_file
from rankcut.audit.pools import Corpus
from rankcut.cli.main import app
from rankcut.data.features import attach_feature_tables, load_precomputed_features
from rankcut.data.io import open_text
from rankcut.data.letor import load_letor
from rankcut.data.screening import load_screening
from rankcut.data.texts import read_texts_jsonl
from rankcut.data.trec import load_trec, read_qrels, read_run
from rankcut.evaluation import read_query_ids

BOM = b"\xef\xbb\xbf"
RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 1.0 t\n"
QRELS = b"q1 0 d1 1\nq2 0 d3 1\n"


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("name", ["run.txt", "run.txt.gz"])
def test_a_bom_is_no_part_of_the_first_query_id(tmp_path: Path, name: str) -> None:
    run = read_run(_write(tmp_path, name, BOM + RUN))
    assert list(run) == ["q1", "q2"]
    qrels = read_qrels(_write(tmp_path, "q" + name, BOM + QRELS))
    assert list(qrels) == ["q1", "q2"]
    # no phantom query: the BOM-marked run and qrels align as the plain ones do
    lists = load_trec(tmp_path / name, tmp_path / ("q" + name), missing="error")
    assert list(lists.qids) == ["q1", "q2"]


def test_a_bom_in_an_open_stream_is_dropped_too() -> None:
    assert list(read_run(io.StringIO("\ufeff" + RUN.decode()))) == ["q1", "q2"]
    with open_text(io.StringIO("\ufeffx\ny")) as (_, f):
        assert f.read() == "x\ny"


def test_the_bad_byte_is_named_by_its_line_not_by_the_block_read(tmp_path: Path) -> None:
    # 0xe9 is Latin-1's é; line 2002 is far past the first block a text stream decodes
    data = b"".join(b"q1 Q0 d%d %d 1.0 t\n" % (i, i) for i in range(1, 2002)) + b"q\xe9 Q0 d 1 1.0 t\n"
    path = _write(tmp_path, "latin1.run", data)
    with pytest.raises(ValueError, match=r"latin1\.run, line 2002: not UTF-8 text \(byte 2 of the "
                                         r"line, 0xe9: invalid continuation byte\).*convert"):
        read_run(path)


def test_a_gzip_file_without_gz_is_named_as_gzip_not_as_an_encoding(tmp_path: Path) -> None:
    # it was told "not UTF-8 ... convert the file (e.g. iconv -f latin1 -t utf-8)"
    path = _write(tmp_path, "x.run", gzip.compress(RUN))
    with pytest.raises(ValueError, match=r"x\.run: a gzip-compressed file .* rename it \*\.gz"):
        read_run(path)
    qrels = _write(tmp_path, "q", QRELS)
    res = CliRunner().invoke(app, ["evaluate", "--run", str(path), "--qrels", str(qrels), "--folds", "2",
                                   "--cutters", "fixed-k:1"])
    assert res.exit_code == 2 and "a gzip-compressed file" in res.stderr and "iconv" not in res.stderr


def test_a_parquet_file_under_another_name_is_named_as_parquet(tmp_path: Path) -> None:
    """``run.pq`` was told it is UTF-16 text, to convert with iconv (the RAG-engineer walk)."""
    data = b"PAR1\x15\x04\x15\x00" + bytes(64) + b"PAR1"
    path = _write(tmp_path, "x.pq", data)
    with pytest.raises(ValueError, match=r"x\.pq: a Parquet file .* ending \.parquet \(rename it\)"):
        read_run(path)
    # qrels are text only, and a compressed Parquet run is not read: neither is told to rename it
    with pytest.raises(ValueError, match=r"q\.parquet: a Parquet file .* convert this file to TREC text"):
        read_qrels(_write(tmp_path, "q.parquet", data))
    with pytest.raises(ValueError, match=r"r\.parquet\.gz: a Parquet file .* \(gunzip it\)"):
        read_run(_write(tmp_path, "r.parquet.gz", data))   # _write compresses it


def _zipped(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("run.txt", data)
    return buf.getvalue()


@pytest.mark.parametrize(("name", "pack", "said"), [
    ("x.run.bz2", bz2.compress, "a bzip2-compressed file"),
    ("x.run.xz", lzma.compress, "an xz-compressed file"),
    ("x.run.zst", lambda data: b"\x28\xb5\x2f\xfd\x00\x58\xff" + data, "a zstd-compressed file"),
    ("x.zip", lambda data: _zipped(data), "a zip archive or workbook"),
])
def test_other_compressions_are_named_not_taken_for_an_encoding(tmp_path: Path, name: str, pack: Any,
                                                                 said: str) -> None:
    # it was told "not UTF-8 ... convert the file (e.g. iconv -f latin1 -t utf-8)"
    path = _write(tmp_path, name, pack(RUN))
    with pytest.raises(ValueError, match=rf"{re.escape(name)}: {said} \(by its first bytes\), which rankcut "
                                         r"does not read: decompress it, or recompress it with gzip"):
        read_run(path)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_is_named_with_its_conversion(tmp_path: Path, encoding: str) -> None:
    """A UTF-16 file was told to convert from latin1; without its byte-order mark, it is valid
    UTF-8 with a NUL after every ASCII character, which no step refused by name; with an accent,
    the accent's byte was found first, and latin1 advised again."""
    text = RUN.decode("utf-8").replace("d3", "d\u00e9")   # an accent on line 3
    path = _write(tmp_path, "w.run", text.encode(encoding))
    wide = "utf-32" if "32" in encoding else "utf-16"
    said = (rf"{wide.upper()} text \(by its byte-order mark\)" if encoding in ("utf-16", "utf-32") else
            r"not UTF-8 text \(byte [12] of the line, 0x00, a NUL: UTF-16 text, or a binary file\)")
    with pytest.raises(ValueError, match=rf"w\.run(, line 1)?: {said}.*iconv -f {wide} -t utf-8"):
        read_run(path)


def test_a_character_cut_at_the_end_of_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cut\.run, line 2: not UTF-8 text \(byte 1 of the line, "
                                         r"0xe2: unexpected end of data\)"):
        read_run(_write(tmp_path, "cut.run", b"q1 Q0 d1 1 2.0 t\n\xe2\x82"))


def _cli_prefixes(path: Path) -> Any:
    """The CLI's prefix table: exit 0, or raise its one-line error."""
    res = CliRunner().invoke(app, ["certify", "prefixes", str(path), "--target", "0.01"])
    if res.exit_code:
        assert res.exit_code == 2 and res.stderr.count("\n") == 1
        raise ValueError(res.stderr)


READERS: list[tuple[str, bytes, Callable[[Path], Any]]] = [
    ("run.txt", RUN, read_run),
    ("run.txt.gz", RUN, read_run),
    ("qrels.txt", QRELS, read_qrels),
    ("texts.jsonl", b'{"query_id": "q1", "doc_id": "d1", "text": "a"}\n', read_texts_jsonl),
    ("l.txt", b"1 qid:1 1:0.5 #docid = A\n", partial(load_letor, score_feature=1)),
    ("s.csv", b"title,abstract,label_included\nt,a,1\n", load_screening),
    ("labels.csv", b"query_id,doc_id,label\nq1,d1,1\n", read_label_file),
    ("labels.jsonl.gz", b'{"query_id": "q1", "doc_id": "d1", "label": 1}\n', read_label_file),
    ("corpus.txt", b"d1\nd2\n", Corpus.ids),
    ("prefixes.csv", b"name,burden,p0,n,k\ng1,0.15,0.85,300,0\n", _cli_prefixes),
    ("split.txt", b"q1\nq2\n", read_query_ids),
    ("split.json", b'["q1", "q2"]\n', read_query_ids),
]


@pytest.mark.parametrize(("name", "good", "read"), READERS, ids=[r[0] for r in READERS])
def test_every_reader_names_file_and_line_of_latin1_bytes(tmp_path: Path, name: str, good: bytes,
                                                          read: Callable[[Path], Any]) -> None:
    read(_write(tmp_path, name, BOM + good))  # a BOM is fine everywhere
    bad = good.replace(b"1", b"\xe9", 1) if b"\n" not in good[:-1] else good + b"\xe9\n"
    stem = name.removesuffix(".gz")
    line = bad.count(b"\n", 0, bad.index(b"\xe9")) + 1
    with pytest.raises(ValueError, match=rf"{stem}(\.gz)?, line {line}: not UTF-8 text"):
        read(_write(tmp_path, name, bad))


def test_feature_tables_name_file_and_line(tmp_path: Path) -> None:
    lists = read_run_lists(tmp_path)
    table = _write(tmp_path, "f.tsv", b"query_id\tdoc_id\tx\nq1\td1\t0.5\nq1\td2\t0.\xff\n")
    with pytest.raises(ValueError, match=r"f\.tsv, line 3: not UTF-8 text"):
        load_precomputed_features(lists, table, columns=("x",))
    with pytest.raises(ValueError, match=r"f\.tsv, line 3: not UTF-8 text"):
        attach_feature_tables(lists, [table])
    good = _write(tmp_path, "g.tsv", BOM + b"query_id\tdoc_id\tx\nq1\td1\t0.5\nq1\td2\t0.25\n"
                                          b"q2\td3\t1\n")
    assert load_precomputed_features(lists, good, columns=("x",)).features is not None


def read_run_lists(tmp_path: Path) -> Any:
    return load_trec(_write(tmp_path, "r.txt", RUN), _write(tmp_path, "q.txt", QRELS))


def test_binary_garbage_is_refused_on_its_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"garbage\.bin, line 1: not UTF-8 text \(byte 1 of the line, "
                                         r"0x89: invalid start byte\)"):
        read_qrels(_write(tmp_path, "garbage.bin", b"\x89PNG\r\n\x1a\n\x00\x00"))
