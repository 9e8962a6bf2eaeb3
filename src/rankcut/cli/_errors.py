"""How every ``rankcut`` command reports bad input: one ``error: ...`` line, exit status 2."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and end the command with exit status 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@contextmanager
def user_errors() -> Iterator[None]:
    """A ValueError (bad input, a refused step) or OSError (a missing or unreadable file) raised
    inside ends the command through :func:`fail`. A BrokenPipeError — stdout closed by its reader,
    as in ``| head`` — is no input error: it is left to click, which ends quietly."""
    try:
        yield
    except BrokenPipeError:
        raise
    except (ValueError, OSError) as exc:
        fail(str(exc))
