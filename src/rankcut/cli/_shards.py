"""The ``--shards`` and ``--ray`` options of ``cut``, ``evaluate`` and ``certify audits``: the
queries (or audit folders) split into shards, run one after another here or in parallel on Ray
(:mod:`rankcut.parallel`). The output is the same either way."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rankcut.parallel import Executor

__all__ = ["SHARDS_PER_CPU", "Ray", "Shards", "check", "runner"]

#: the default shards per CPU on Ray: shards of unequal cost balance better when smaller (on 2
#: workers, 8 shards cut 10^6 lines in about half the time of 2, docs/scaling.md)
SHARDS_PER_CPU = 4

Shards = Annotated[int | None, typer.Option(
    "--shards", help="Split the queries into this many contiguous shards (default: 4 per CPU of the "
    "Ray cluster with --ray, so that the workers stay busy; else 1); the output is the same for any "
    "number.")]
Ray = Annotated[str | None, typer.Option(
    "--ray", help="Run the shards on Ray: 'local' starts Ray on this machine, 'auto' or ray://HOST:PORT "
    "joins a running cluster whose nodes have rankcut installed (pip install 'rankcut[ray]').",
    metavar="ADDRESS|local")]


def check(shards: int | None, ray: str | None) -> None:
    """Before any file is read: ``--shards`` is a count ≥ 1, and Ray is installed for ``--ray``."""
    from rankcut.parallel import RAY_HINT

    if shards is not None and shards < 1:
        raise ValueError(f"--shards must be >= 1, got {shards}")
    if ray is not None:
        if not ray.strip():
            raise ValueError("--ray needs an address: 'local', 'auto' or ray://HOST:PORT")
        if importlib.util.find_spec("ray") is None:
            raise ImportError(f"--ray {ray} needs Ray: {RAY_HINT}")


@contextmanager
def runner(shards: int | None, ray: str | None) -> Iterator[tuple[Executor, int]]:
    """The executor of ``--ray`` (this process without it) and the number of shards; a Ray
    instance it started is stopped on the way out."""
    from rankcut.parallel import executor

    where = executor(ray)
    try:
        yield where, shards if shards is not None else 1 if ray is None else SHARDS_PER_CPU * where.workers
    finally:
        where.close()
