"""`rankcut` starts without its heavy dependencies: ``--version``, ``cut`` and ``audit status``
load none of scipy, torch, pandas, matplotlib or scikit-learn (each run in a fresh interpreter,
since this test session has imported them all already)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rankcut.cli.main import COMMANDS, app

HEAVY = ("scipy", "torch", "pandas", "matplotlib", "sklearn")

#: runs the command of its arguments in-process, then prints the heavy packages it loaded
_PROBE = """\
import sys
from rankcut.cli.main import app
try:
    app(sys.argv[1:], prog_name="rankcut")
except SystemExit as exc:
    code = exc.code
print("loaded:", ",".join(sorted({m.partition(".")[0] for m in sys.modules} & set(HEAVY))),
      file=sys.stderr)
sys.exit(code)
"""


def loaded(*args: object) -> tuple[str, set[str]]:
    """The stdout of ``rankcut args`` and the heavy packages it imported."""
    done = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + _PROBE, *map(str, args)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    last = done.stderr.rstrip().splitlines()[-1]
    assert last.startswith("loaded:"), done.stderr
    return done.stdout, set(filter(None, last.removeprefix("loaded:").strip().split(",")))


def test_importing_the_app_loads_no_heavy_package() -> None:
    code = f"import sys\nimport rankcut.cli.main\nprint(sorted(set({HEAVY!r}) & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_version_loads_no_heavy_package() -> None:
    out, heavy = loaded("--version")
    assert out.strip() and heavy == set()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    run_, cut = tmp_path / "run.txt", tmp_path / "cut.txt"
    run_.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(5)))
    return {"run": run_, "cut": cut, "audit": tmp_path / "audit", "out": tmp_path / "out.run"}


def test_cut_loads_no_heavy_package(files: dict[str, Path]) -> None:
    out, heavy = loaded("cut", "--run", files["run"], "--cutter", "fixed-k:5", "--out", files["out"])
    # with the columnar extra, pyarrow's CSV reader reads the run, and pyarrow imports pandas (when
    # installed) the first time it converts a Python value; scipy, torch and the rest stay unloaded
    allowed = {"pandas"} if importlib.util.find_spec("pyarrow") is not None else set()
    assert "15 documents kept" in out and heavy - allowed == set()
    assert len(files["out"].read_text().splitlines()) == 15


def test_audit_status_loads_no_heavy_package(files: dict[str, Path]) -> None:
    loaded("audit", "freeze", "--run", files["run"], "--cut", files["cut"], "--design", "excluded",
           "--max-missed", "20", "--seed", "1", "--out", files["audit"])
    out, heavy = loaded("audit", "status", "--audit", files["audit"])
    assert "next: rankcut audit plan" in out and heavy == set()
    loaded("audit", "plan", "--audit", files["audit"])
    out, heavy = loaded("audit", "status", "--audit", files["audit"])
    assert "next: rankcut audit sample" in out and heavy == set()


def test_help_lists_every_command_with_its_help() -> None:
    res = CliRunner().invoke(app, ["--help"])
    assert res.exit_code == 0
    for name in COMMANDS:
        assert f" {name} " in res.stdout, name
    assert "Exact finite-sample audit certificates." in res.stdout
    assert "Cut every list of a run where a cutter" in res.stdout


def test_a_mistyped_command_is_still_suggested() -> None:
    res = CliRunner().invoke(app, ["cutt"])
    assert res.exit_code == 2 and "Did you mean 'cut'?" in res.stderr


def test_a_command_that_fails_to_load_is_not_reported_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # the lazy command table is a mapping: a KeyError raised while importing a command's module
    # must not read as click's "No such command 'cut'. Did you mean 'cut'?"
    from rankcut.cli import main

    def broken(name: str) -> None:
        raise KeyError("ordering")

    monkeypatch.setattr(main, "_load", broken)
    with pytest.raises(RuntimeError, match="loading the 'cut' command failed: KeyError 'ordering'"):
        main._Commands()["cut"]


def test_every_command_summary_is_one_line_of_its_docstring() -> None:
    """The help keeps a docstring's line breaks, so a first paragraph on two source lines breaks
    the command list mid-sentence (``rankcut review --help``): each is one line."""
    import typer.main

    root = typer.main.get_command(app)
    ctx = root.context_class(root)   # typer's own click, whichever it vendors

    def summaries(group: Any, path: str) -> Iterator[tuple[str, str]]:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None
            if hasattr(command, "list_commands"):
                yield from summaries(command, f"{path} {name}")
            else:
                yield f"{path} {name}", (command.help or "").strip().split("\n\n")[0]

    found = dict(summaries(root, "rankcut"))
    assert {"rankcut review next", "rankcut certify audits", "rankcut demo"} <= found.keys()
    assert [cmd for cmd, summary in found.items() if "\n" in summary or not summary] == []


def test_no_flag_is_shown_as_taking_a_value() -> None:
    """A flag (``--interactive``, ``--json``) takes no value; a help that shows it as ``--json
    <bool>`` (typer 0.29's rendering, hence ``typer!=0.29.*``) has users type ``--json true``,
    which is refused."""
    from typer.testing import CliRunner

    for words in (["review", "label"], ["review", "export"], ["audit", "label"], ["demo"]):
        result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, result.output
        assert "--help " in result.output
        assert "<bool>" not in result.output, " ".join(words)


@pytest.mark.parametrize("module", ["rankcut", "rankcut.cli.main"])
def test_python_dash_m_runs_the_command(module: str) -> None:
    """``python -m rankcut.cli.main`` printed nothing and exited 0; ``python -m rankcut`` had no
    ``__main__`` (a user's walk)."""
    done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == importlib.metadata.version("rankcut"), done.stdout
    done = subprocess.run([sys.executable, "-m", module, "evaluate"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2 and "give the lists to evaluate" in done.stderr, done.stderr
