"""`rankcut audit status` and every printed `next:` line: counts shown, and each command runs as
printed, quoted, from a folder whose path holds a space."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.cli.audit import app

runner = CliRunner()


def run(*args: object) -> tuple[int, str, str]:
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def next_command(out: str) -> list[str]:
    """The arguments of the ``next:`` line, read as the shell reads them (comments dropped)."""
    line = next(line for line in reversed(out.splitlines()) if "next: " in line)
    words = shlex.split(line.split("next: ", 1)[1], comments=True)
    assert words[:2] == ["rankcut", "audit"], line
    return words[2:]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    here = tmp_path / "my audits"
    here.mkdir()
    run_, cut, qrels = here / "full run.txt", here / "cut run.txt", here / "qrels.txt"
    run_.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(5)))
    qrels.write_text("".join(f"q{q} 0 d{q}-{r} 1\n" for q in range(3) for r in range(0, 30, 7)))
    return {"run": run_, "cut": cut, "qrels": qrels, "audit": here / "the audit"}


def test_every_printed_next_command_runs_as_printed(files: dict[str, Path]) -> None:
    audit = files["audit"]
    code, out, err = run("freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded",
                         "--max-missed", "20", "--seed", "1", "--out", audit)
    assert code == 0, err
    assert next_command(out) == ["plan", "--audit", str(audit)]
    code, out, err = run(*next_command(out))              # plan
    assert code == 0, err
    code, out, err = run(*next_command(out))              # sample
    assert code == 0, err
    to_label = audit / "to_label.csv"
    assert next_command(out) == ["label", "--audit", str(audit), "--from", str(to_label)]
    code, out, err = run("status", "--audit", audit)
    assert code == 0, err
    assert next_command(out) == ["label", "--audit", str(audit), "--from", str(to_label)]
    # the reviewer fills in 3 of the 9 rows, then runs the printed command
    rows = to_label.read_text().splitlines()
    to_label.write_text("\n".join([rows[0], *(r + "0" for r in rows[1:4]), *rows[4:]]) + "\n")
    code, out2, err = run(*next_command(out))
    assert code == 0, err
    assert "recorded 3 labels" in out2
    code, out, err = run("status", "--audit", audit)
    assert code == 0 and "  [ ] label: 3 of 9 sampled items labelled" in out, out
    assert next_command(out)[:2] == ["label", "--audit"]
    code, out, err = run("label", "--audit", audit, "--oracle", "qrels", "--qrels", files["qrels"])
    assert code == 0, err
    assert next_command(out) == ["certify", "--audit", str(audit)]
    code, out, err = run("status", "--audit", audit)
    assert code == 0 and "  [x] label: 9 of 9 sampled items labelled" in out
    code, out, err = run(*next_command(out))              # certify
    assert code == (1 if "NOT met" in out else 0), err    # exit status 1 says "not met" to a script
    code, out, err = run("status", "--audit", audit)
    assert code == 0 and out.rstrip().endswith("done")


def test_stop_prints_a_freeze_command_that_runs(files: dict[str, Path]) -> None:
    cut = files["audit"].parent / "new cut.run"
    qrels = files["qrels"]
    long_run = files["run"].parent / "long run.txt"
    long_run.write_text("".join(f"t0 Q0 t0-{r} {r + 1} {-r} sys\n" for r in range(400)))
    qrels.write_text("".join(f"t0 0 t0-{r} 1\n" for r in range(0, 60, 3)))
    code, out, err = run("stop", "--run", long_run, "--qrels", qrels, "--out", cut)
    assert code == 0 and cut.exists(), err
    words = next_command(out)
    assert words[words.index("--run") + 1] == str(long_run) and words[words.index("--cut") + 1] == str(cut)
    code, out, err = run(*words[:-1], files["audit"])    # AUDIT: the folder to create, named by the user
    assert code == 0, err
