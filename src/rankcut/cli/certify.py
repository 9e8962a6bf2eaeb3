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


def _emit_all(results: list[Certificate], as_json: bool) -> None:
    """Several results that are not one joint statement (e.g. a plan and its minimum)."""
    if as_json:
        import json

        typer.echo(json.dumps([r.to_dict() for r in results], indent=2))
    else:
        typer.echo("\n".join(r.render() for r in results))


def _one_or_many(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values


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
        False,
        "--finite",
        help="Sampling without replacement from a finite pool: exact hypergeometric (Thm 8).",
    ),
    included_relevant: int | None = typer.Option(
        None,
        "--included-relevant",
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
        report = JointReport(
            delta=delta,
            budget=dict(missed.allocation),
            title="Excluded-pool audit with a fully reviewed included pool",
        )
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


@app.command("plan")
@_fail_cleanly
def plan(
    target: list[float] = typer.Option(
        None, "--target", help="Target ε on η (or on r with --p0); repeat for a table."
    ),
    p0: float | None = typer.Option(
        None,
        "--p0",
        help="Excluded-pool mass: the target is on r = p0·η; also shows the whole-population size.",
    ),
    max_missed: list[int] = typer.Option(
        None, "--max-missed", help="Finite pool: certify at most this many missed items (needs --pool-size)."
    ),
    pool_size: int | None = typer.Option(None, "--pool-size", help="N0: excluded-pool size (finite pool)."),
    tolerate: int = typer.Option(
        0, "--tolerate", help="c: relevant items the audit may find and still pass."
    ),
    prefixes: int = typer.Option(1, "--prefixes", help="M pools certified jointly (δ/M each)."),
    beta: float = typer.Option(
        0.5, "--beta", help="Zero-miss failure probability for the Thm 13 lower bound."
    ),
    delta: float = DELTA,
    as_json: bool = JSON,
) -> None:
    """Audit sizes before any label is opened (Section 4.6, Remark 14, Theorem 13)."""
    from rankcut.certify import planning

    if max_missed:
        if pool_size is None:
            raise ValueError("--max-missed needs --pool-size (N0)")
        sizes = planning.plan_hypergeometric(
            _one_or_many(max_missed), delta, population=pool_size, tolerated=tolerate, n_prefixes=prefixes
        )
        if tolerate or prefixes != 1:
            _emit(sizes, as_json)
            return
        # beside the exact size: Remark 14's zero-count size and Theorem 13's lower bound
        minimum = planning.plan_rule_out(
            _one_or_many([m + 1 for m in max_missed]), delta, excluded_size=pool_size, beta=beta
        )
        _emit_all([sizes, minimum], as_json)
        return
    if not target:
        raise ValueError("give --target (a rate) or --max-missed with --pool-size")
    if p0 is not None:
        _emit(
            planning.plan_missed_mass(
                _one_or_many(target), delta, p0=p0, tolerated=tolerate, n_prefixes=prefixes
            ),
            as_json,
        )
    else:
        _emit(
            planning.plan_binomial(_one_or_many(target), delta, tolerated=tolerate, n_prefixes=prefixes),
            as_json,
        )


_PREFIX_HELP = """CSV with one row per prefix, smallest candidate set first. Columns: name, burden,
k (relevant found), and either n (audit size) or n_eff (shared reference sample), and either p0
(excluded mass) or excluded_size (N0, with --finite). Optional: delta, each prefix's error share
(declared before the audit; the shares must sum to at most --delta; default --delta / M each)."""


@app.command("prefixes")
@_fail_cleanly
def prefixes(
    csv_path: Path = typer.Argument(..., help=_PREFIX_HELP, metavar="CSV"),
    target: float = typer.Option(..., "--target", help="ε on r (or a number of items with --finite)."),
    delta: float = DELTA,
    finite: bool = typer.Option(False, "--finite", help="Finite corpus: hypergeometric bounds on M0."),
    reference_size: int | None = typer.Option(
        None, "--reference-size", help="Q: size of one shared reference sample (Thm 17 / Cor 18)."
    ),
    reference_mass: float = typer.Option(1.0, "--reference-mass", help="P(R) of the reference region."),
    reference_pool_size: int | None = typer.Option(
        None, "--reference-pool-size", help="Size of the finite reference pool R (Cor 18)."
    ),
    corpus_size: int | None = typer.Option(None, "--corpus-size", help="N: adds r = M0/N with --finite."),
    fixed_sequence: bool = typer.Option(
        False,
        "--fixed-sequence",
        help="Test from the largest prefix down at level δ against the pre-set target (Thm 19).",
    ),
    as_json: bool = JSON,
) -> None:
    """Simultaneous bounds for nested cuts and the least-burden one meeting the target (Eq. 1)."""
    from rankcut.certify import prefixes as pf

    rows = _read_csv(csv_path)
    shared = reference_size is not None

    def column(name: str, cast: Callable[[str], Any]) -> list[Any]:
        out = []
        for line, row in enumerate(rows, start=2):
            raw = row.get(name)
            if raw is None or raw == "":
                raise ValueError(f"{csv_path}, line {line}: missing column {name!r}")
            try:
                out.append(cast(raw))
            except ValueError:
                raise ValueError(f"{csv_path}, line {line}: {name}={raw!r} is not a valid number") from None
        return out

    names = [r.get("name") or f"g{i}" for i, r in enumerate(rows, start=1)]
    k = column("k", int)
    n = column("n_eff" if shared else "n", int)
    if fixed_sequence:  # n holds n_m or the effective sizes n_eff_m: Thm 19 needs only each test's level
        if finite:
            result = pf.fixed_sequence_finite(
                k, n, column("excluded_size", int), int(target), delta, names=names
            )
        else:
            result = pf.fixed_sequence(k, n, column("p0", float), target, delta, names=names)
        _emit(result, as_json)
        return
    deltas = column("delta", float) if "delta" in rows[0] else None
    if finite and shared:
        if reference_pool_size is None:
            raise ValueError("--finite with --reference-size needs --reference-pool-size")
        bounds = pf.prefix_bounds_shared_finite(
            k, n, column("excluded_size", int), delta, reference_size=reference_size,
            reference_pool_size=reference_pool_size, deltas=deltas, names=names, corpus_size=corpus_size,
        )  # fmt: skip
    elif finite:
        bounds = pf.prefix_bounds_separate_finite(
            k, n, column("excluded_size", int), delta, deltas=deltas, names=names, corpus_size=corpus_size
        )
    elif shared:
        bounds = pf.prefix_bounds_shared(
            k, n, column("p0", float), delta, reference_size=reference_size,
            reference_mass=reference_mass, deltas=deltas, names=names,
        )  # fmt: skip
    else:
        bounds = pf.prefix_bounds_separate(k, n, column("p0", float), delta, deltas=deltas, names=names)
    choice = pf.choose_prefix(bounds, column("burden", float), target)
    report = JointReport(delta=delta, budget=dict(bounds.allocation), title=f"Prefixes of {csv_path}")
    report = report.attach("bounds", bounds).attach("choice", choice)
    _emit(report, as_json)


@app.command("two-pool")
@_fail_cleanly
def two_pool(
    excluded_sample: int = typer.Option(..., "--excluded-sample", help="n0: items labelled from {g = 0}."),
    excluded_positives: int = typer.Option(..., "--excluded-positives", help="K0: relevant among them."),
    included_sample: int = typer.Option(..., "--included-sample", help="n1: items labelled from {g = 1}."),
    included_positives: int = typer.Option(..., "--included-positives", help="K1: relevant among them."),
    delta: float = DELTA,
    finite: bool = typer.Option(False, "--finite", help="Finite corpus: MU and ML inversions (Cor 11)."),
    excluded_size: int | None = typer.Option(None, "--excluded-size", help="N0 (with --finite)."),
    included_size: int | None = typer.Option(None, "--included-size", help="N1 (with --finite)."),
    p0: float | None = typer.Option(None, "--p0", help="Excluded mass p0 = P(g = 0) (population model)."),
    p1: float | None = typer.Option(None, "--p1", help="Included mass p1 (default 1 − p0)."),
    as_json: bool = JSON,
) -> None:
    """Recall from audits of both pools (Theorem 10; Corollary 11 with --finite); δ split in two."""
    from rankcut.certify import recall

    if finite:
        if excluded_size is None or included_size is None:
            raise ValueError("--finite needs --excluded-size (N0) and --included-size (N1)")
        cert = recall.two_pool_recall_finite_certificate(
            excluded_positives, excluded_sample, excluded_size,
            included_positives, included_sample, included_size, delta,
        )  # fmt: skip
    else:
        if p0 is None:
            raise ValueError("give --p0 (population model) or --finite with the pool sizes")
        cert = recall.two_pool_recall_certificate(
            excluded_positives, excluded_sample, included_positives, included_sample, p0, delta, p1=p1
        )
    _emit(cert, as_json)


@app.command("whole-population")
@_fail_cleanly
def whole_population(
    sample_size: int = typer.Option(..., "--sample-size", help="n: items drawn from the whole population."),
    positives: int = typer.Option(
        ..., "--positives", help="Sampled items that are relevant AND excluded by the cut."
    ),
    delta: float = DELTA,
    as_json: bool = JSON,
) -> None:
    """Missed relevant mass from a sample of the whole population (Theorem 12)."""
    from rankcut.certify import whole

    _emit(whole.whole_population_certificate(positives, sample_size, delta), as_json)
