"""rankcut._util, rankcut.errors and rankcut.data.io: the small helpers shared outside certify."""

from __future__ import annotations

import gzip
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from rankcut._util import check_bool, check_int, check_number, jsonable
from rankcut.data.io import open_text, write_atomic
from rankcut.errors import ParamError


def test_param_error_names_the_parameter_and_keeps_the_message() -> None:
    err = ParamError("batch_size", "batch_size must be an integer ≥ 1, got 0")
    assert isinstance(err, ValueError) and err.param == "batch_size"
    assert str(err) == "batch_size must be an integer ≥ 1, got 0"


def test_checks_raise_param_errors_naming_the_argument() -> None:
    assert check_int(np.int64(3), "k", low=1) == 3
    with pytest.raises(ParamError, match=r"^k must be an integer ≥ 1, got 0$") as caught:
        check_int(0, "k", low=1)
    assert caught.value.param == "k"
    with pytest.raises(ParamError, match=r"^hidden must be an integer >= 1, got True$"):
        check_int(True, "hidden", low=1, ge=">=")
    with pytest.raises(ParamError, match=r"^lr must be a finite number > 0, got nan$"):
        check_number(math.nan, "lr", low=0.0)
    with pytest.raises(ParamError, match=r"^progress must be True or False, got 1$"):
        check_bool(1, "progress")


def test_jsonable_gives_strict_json() -> None:
    value = {1: (np.int64(2), np.float32(0.5), np.bool_(True), math.inf, np.str_("a"), [math.nan])}
    assert json.dumps(jsonable(value), allow_nan=False) == '{"1": [2, 0.5, true, "inf", "a", ["nan"]]}'


def test_open_text_reads_gzip_and_streams(tmp_path: Path) -> None:
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(b"x y\n"))
    with open_text(tmp_path / "a.txt.gz") as (name, f):
        assert name.endswith("a.txt.gz") and f.read() == "x y\n"
    with open_text(io.StringIO("z"), "given") as (name, f):
        assert (name, f.read()) == ("given", "z")


def test_write_atomic_replaces_and_refuses_a_missing_folder(tmp_path: Path) -> None:
    out = tmp_path / "f.txt"
    write_atomic(out, b"one")
    write_atomic(out, b"two")
    assert out.read_bytes() == b"two" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    with pytest.raises(FileNotFoundError, match="output folder .* does not exist"):
        write_atomic(tmp_path / "no" / "f.txt", b"")


def test_write_atomic_replaces_a_link_and_writes_into_a_device_or_pipe(tmp_path: Path) -> None:
    """``--out /dev/stdout`` replaced the link /dev/stdout with a regular file (a temporary file
    beside it, then os.replace): a device or pipe, a link to one included, is written to. A link
    to a file is replaced, as ``sed -i`` does: the file it named (a DVC or git-annex object) is
    never written."""
    import os
    import stat
    import threading

    real = tmp_path / "real.run"
    real.write_bytes(b"old")
    (tmp_path / "link.run").symlink_to(real)
    write_atomic(tmp_path / "link.run", b"new")
    assert not (tmp_path / "link.run").is_symlink() and (tmp_path / "link.run").read_bytes() == b"new"
    assert real.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.run", "real.run"]
    (tmp_path / "null").symlink_to(os.devnull)
    write_atomic(tmp_path / "null", [b"a", b"b"])
    assert (tmp_path / "null").is_symlink() and stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_atomic(fifo, b"through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
