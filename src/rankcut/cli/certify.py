"""``rankcut certify``: the everyday certificates from the command line."""

from __future__ import annotations

import typer

app = typer.Typer(help="Exact finite-sample audit certificates.", no_args_is_help=True)
