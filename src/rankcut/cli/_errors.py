"""How every ``rankcut`` command reports bad input: one ``error: ...`` line, exit status 2."""

from __future__ import annotations

from typing import NoReturn

import typer


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and end the command with exit status 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
