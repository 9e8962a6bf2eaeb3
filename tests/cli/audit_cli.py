"""`rankcut audit` run in-process, for the CLI tests of its commands (imported by them)."""

from __future__ import annotations

from typer.testing import CliRunner

from rankcut.cli.audit import app

runner = CliRunner()


def run(*args: object, input: str | None = None) -> tuple[int, str, str]:
    res = runner.invoke(app, [str(a) for a in args], input=input)
    return res.exit_code, res.stdout, res.stderr
