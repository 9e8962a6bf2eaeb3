"""``rankcut certify``: the everyday certificates of the audit paper from the command line.

Each subcommand prints a readable statement (bounds rounded on the safe side) and, with
``--json``, the certificate object with everything needed to recompute it. Invalid arguments
exit with status 2 and a one-line message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from rankcut.certify.report import JointReport
from rankcut.certify.result import Certificate

app = typer.Typer(help="Exact finite-sample audit certificates.", no_args_is_help=True)

F = TypeVar("F", bound=Callable[..., Any])

DELTA = typer.Option(0.05, "--delta", help="Error probability δ; confidence is 1 − δ.")
JSON = typer.Option(False, "--json", help="Print the certificate as versioned JSON.")


def _fail_cleanly(fn: F) -> F:
    """Turn a ValueError from the statistics into a one-line message and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, FileNotFoundError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def _emit(result: Certificate | JointReport, as_json: bool) -> None:
    typer.echo(result.to_json() if as_json else result.render())


@app.command("excluded-pool")
@_fail_cleanly
def excluded_pool(
    sample_size: int = typer.Option(..., "--sample-size", help="n0: items labelled from the excluded pool."),
    positives: int = typer.Option(..., "--positives", help="K0: relevant items found among them."),
    delta: float = DELTA,
    pool_size: int | None = typer.Option(None, "--pool-size", help="N0: size of the excluded pool."),
    corpus_size: int | None = typer.Option(None, "--corpus-size", help="N: size of the whole corpus."),
    p0: float | None = typer.Option(
        None, "--p0", help="Excluded-pool mass p0 = P(g = 0) in the population model (else N0/N)."
    ),
    finite: bool = typer.Option(
        False, "--finite", help="Sampling without replacement from a finite pool: exact hypergeometric (Thm 8)."
    ),
    included_relevant: int | None = typer.Option(
        None, "--included-relevant",
        help="M1: relevant items found by reviewing the whole included pool (adds a recall bound, Thm 8).",
    ),
    as_json: bool = JSON,
) -> None:
    """Missed relevant items in the excluded pool (Theorem 7 binomial, Theorem 8 finite corpus)."""
    from rankcut.certify import excluded

    if finite or included_relevant is not None:
        if pool_size is None:
            raise ValueError("--finite needs --pool-size (N0)")
        missed = excluded.excluded_pool_finite_certificate(
            positives, sample_size, pool_size, delta, corpus_size=corpus_size
        )
        if included_relevant is None:
            _emit(missed, as_json)
            return
        recall = excluded.full_review_recall_certificate(
            positives, sample_size, pool_size, included_relevant, delta
        )
        report = JointReport(delta=delta, budget=dict(missed.allocation),
                             title="Excluded-pool audit with a fully reviewed included pool")
        _emit(report.attach("missed", missed).attach("recall", recall), as_json)
        return
    if p0 is None and pool_size is not None and corpus_size is not None:
        if corpus_size <= 0 or pool_size > corpus_size:
            raise ValueError(f"--pool-size {pool_size} must be at most --corpus-size {corpus_size} (> 0)")
        p0 = pool_size / corpus_size
    _emit(excluded.excluded_pool_certificate(positives, sample_size, delta, p0=p0), as_json)


def _read_csv(path: Path) -> list[dict[str, str]]:
    import csv

    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return rows
