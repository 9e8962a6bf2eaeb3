"""A resource failure — out of memory, a full disk — ends a command with one ``error: ...`` line
naming the size that caused it where it is known, and a nonzero exit; never a traceback, and no
file is left half-written."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from typer.testing import CliRunner

import rankcut.cli.cut  # noqa: F401 -- loaded before a test patches what it reads at import
from rankcut.cli.main import app

runner = CliRunner()


def one_error(args: list[object]) -> str:
    """The one ``error:`` line of a failed command (exit status 2, no traceback)."""
    res = runner.invoke(app, [str(a) for a in args])
    assert res.exit_code == 2, (res.exit_code, res.stderr, res.exception)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    return res.stderr.strip()


@pytest.fixture
def run_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    return path


def test_out_of_memory_reading_a_run_names_its_lines(run_file: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(path: object) -> None:
        raise MemoryError

    monkeypatch.setattr("rankcut.data.trec.read_run_columns", exhausted)
    out = tmp_path / "cut.run"
    line = one_error(["cut", "--run", run_file, "--cutter", "fixed-k:5", "--out", out])
    assert line.startswith(f"error: ran out of memory reading 90 lines, "
                           f"{run_file.stat().st_size:,} bytes of {run_file}; "), line
    assert line.endswith("free memory, or run it on part of the input (fewer queries)")
    assert not out.exists()


def test_out_of_memory_building_the_lists_names_their_size(run_file: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data "
                          "type float64")

    monkeypatch.setattr("rankcut.data.trec.load_trec", exhausted)
    line = one_error(["cut", "--run", run_file, "--cutter", "fixed-k:5", "--out", tmp_path / "cut.run"])
    assert line.startswith(f"error: ran out of memory building the ranked lists of {run_file} (3 queries, "
                           "90 documents): Unable to allocate 7.45 GiB for an array with shape"), line


def test_a_full_disk_names_the_file_and_leaves_none_half_written(run_file: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("rankcut.data.io.os.fsync", full)
    out = tmp_path / "cut.run"
    line = one_error(["cut", "--run", run_file, "--cutter", "fixed-k:5", "--out", out])
    assert line.startswith(f"error: No space left on device writing {out}; nothing was left "
                           "half-written"), line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]  # no output, no temporary file


def test_out_of_memory_in_an_audit_step_is_one_line(run_file: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr("rankcut.audit.workflow.freeze", exhausted)
    line = one_error(["audit", "freeze", "--run", run_file, "--cut", run_file, "--design", "excluded",
                      "--max-missed", "5", "--out", tmp_path / "audit"])
    assert line == "error: ran out of memory; free memory, or run it on part of the input (fewer queries)"


def test_out_of_memory_in_any_command_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The top of the command catches what a command does not (here the demo's report)."""
    def exhausted() -> None:
        raise MemoryError("Unable to allocate 80.0 MiB for an array with shape (10000000,) and data "
                          "type int64")

    monkeypatch.setattr("rankcut.cli.demo.section8_report", exhausted)
    line = one_error(["demo"])
    assert line.startswith("error: ran out of memory (Unable to allocate 80.0 MiB for an array"), line


def test_other_errors_are_not_taken_for_resource_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("rankcut.cli.demo.section8_report", broken)
    res = runner.invoke(app, ["demo"])
    assert isinstance(res.exception, PermissionError)
