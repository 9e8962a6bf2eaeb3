"""``rankcut certify``: the everyday certificates of the audit paper from the command line.

Each subcommand prints a readable statement (bounds rounded on the safe side) and, with
``--json``, the certificate object with everything needed to recompute it. Invalid arguments
exit with status 2 and a one-line message that names the option (or the CSV file and line) to
fix; an option that a command would not use is an error rather than silently ignored.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import typer

from rankcut.certify._validate import _INT64_MAX, SUM_RTOL
from rankcut.certify.report import JointReport
from rankcut.certify.result import Certificate
from rankcut.cli import _shards
from rankcut.cli._errors import confidence_delta, fail, say_warnings, user_errors

app = typer.Typer(help="Exact finite-sample audit certificates.", no_args_is_help=True)

F = TypeVar("F", bound=Callable[..., Any])

DELTA = typer.Option(0.05, "--delta", help="Error probability δ; confidence is 1 − δ.")
JSON = typer.Option(False, "--json", help="Print the certificate as versioned JSON.")


def _fail_cleanly(fn: F) -> F:
    """Turn a ValueError (bad input) or OSError (unreadable file) into a one-line message and
    exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with user_errors():
            return fn(*args, **kwargs)

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


def _sizes(value: Any) -> list[int]:
    """A plan's size or sizes (one per target) as a list."""
    return list(value) if isinstance(value, list | tuple) else [value]


def _note(text: str) -> None:
    """A remark beside the result, on stderr so that ``--json`` output stays parseable."""
    typer.echo(f"note: {text}", err=True)


def _one_or_many(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values


# ---------------------------------------------------------------------------------------------
# option checks, phrased with the option names the user typed


def _num(x: float) -> str:
    """A number as the user would type it: ``0`` rather than ``0.0``, unless that loses digits."""
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


def _count(value: int, option: str, minimum: int = 0) -> None:
    if value < minimum:
        raise ValueError(f"{option} must be >= {minimum}, got {value}")
    if value > _INT64_MAX:   # the certificates count in 64-bit integers
        raise ValueError(f"{option} must be at most {_INT64_MAX:,}, got {value}")


def _within(small: int, small_option: str, big: int, big_option: str) -> None:
    if small > big:
        raise ValueError(f"{small_option} {small} exceeds {big_option} {big}")


def _fraction(x: float, option: str, *, open_left: bool = False, open_right: bool = False) -> None:
    """``x`` in [0, 1], with either end open on request."""
    ok = (0.0 < x if open_left else 0.0 <= x) and (x < 1.0 if open_right else x <= 1.0)
    if not ok:  # also refuses nan
        interval = f"{'(' if open_left else '['}0, 1{')' if open_right else ']'}"
        raise ValueError(f"{option} must lie in {interval}, got {_num(x)}")


def _unused(given: dict[str, bool], why: str) -> None:
    """Refuse options that the chosen design would ignore."""
    names = [name for name, is_given in given.items() if is_given]
    if names:
        raise ValueError(f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} not used {why}")


# ---------------------------------------------------------------------------------------------
# excluded-pool


@app.command("excluded-pool")
@_fail_cleanly
def excluded_pool(
    sample_size: int = typer.Option(..., "--sample-size", help="n0: items labelled from the excluded pool."),
    positives: int = typer.Option(..., "--positives", help="K0: relevant items found among them."),
    delta: float = DELTA,
    pool_size: int | None = typer.Option(
        None,
        "--pool-size",
        help="N0: size of the excluded pool. With --finite the pool sampled without replacement; "
        "without --finite it sets p0 = N0/N together with --corpus-size.",
    ),
    corpus_size: int | None = typer.Option(
        None,
        "--corpus-size",
        help="N: size of the whole corpus. With --finite adds r = M0/N; without, p0 = N0/N.",
    ),
    p0: float | None = typer.Option(
        None,
        "--p0",
        help="Excluded-pool mass p0 = P(g = 0) for i.i.d. draws: the bound is then on r = p0·η "
        "(Thm 7). Give either --p0 or --pool-size with --corpus-size.",
    ),
    finite: bool = typer.Option(
        False,
        "--finite",
        help="The draws were made without replacement from a finite pool of --pool-size items: "
        "hypergeometric bound on the missed count M0 (Thm 8; exact up to pools of about 10^6, safe-side "
        "slack above). Without --finite the draws are "
        "i.i.d. (with replacement) and the bound is on the rate η, or on r = p0·η (Thm 7).",
    ),
    included_relevant: int | None = typer.Option(
        None,
        "--included-relevant",
        help="M1: relevant items found by reviewing the whole included pool; with --finite and "
        "--pool-size, adds a recall bound (Thm 8).",
    ),
    as_json: bool = JSON,
) -> None:
    """Missed relevant items in the excluded pool: i.i.d. draws (Theorem 7), or --finite (Theorem 8).

    With --finite the draws are without replacement from a finite pool of --pool-size items."""
    from rankcut.certify import excluded

    confidence_delta(delta)
    _count(sample_size, "--sample-size")
    _count(positives, "--positives")
    _within(positives, "--positives", sample_size, "--sample-size")
    if corpus_size is not None:
        _count(corpus_size, "--corpus-size", 1)
    if pool_size is not None:
        _count(pool_size, "--pool-size")
        if corpus_size is not None:
            _within(pool_size, "--pool-size", corpus_size, "--corpus-size")
    if included_relevant is not None and not (finite and pool_size is not None):
        raise ValueError("--included-relevant needs --finite with --pool-size (Theorem 8's recall bound "
                         "is for a finite excluded pool sampled without replacement)")
    if finite:
        if p0 is not None:
            raise ValueError("--p0 is for i.i.d. draws (Theorem 7); with --finite the excluded pool is "
                             "--pool-size items (add --corpus-size for r = M0/N)")
        if pool_size is None:
            raise ValueError("--finite needs --pool-size (N0)")
        _within(sample_size, "--sample-size", pool_size, "--pool-size")
        missed = excluded.excluded_pool_bound(
            positives, sample_size, delta, method="finite", excluded_sizes=pool_size, corpus_size=corpus_size
        )
        if included_relevant is None:
            _emit(missed, as_json)
            return
        _count(included_relevant, "--included-relevant")
        if corpus_size is not None and included_relevant > corpus_size - pool_size:
            raise ValueError(
                f"--included-relevant {included_relevant} exceeds the included pool, --corpus-size "
                f"{corpus_size} − --pool-size {pool_size} = {corpus_size - pool_size} items"
            )
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
    if pool_size is not None or corpus_size is not None:
        if p0 is not None:
            raise ValueError("give either --p0 or --pool-size with --corpus-size (p0 = N0/N), not both")
        if pool_size is None:
            raise ValueError("--corpus-size needs --pool-size (p0 = N0/N), or --p0")
        if corpus_size is None:
            raise ValueError(
                "--pool-size without --finite needs --corpus-size (p0 = N0/N); for draws without "
                "replacement from a finite pool add --finite (Theorem 8)"
            )
        if pool_size == 0 and sample_size > 0:
            raise ValueError(f"--pool-size 0 means an empty excluded pool, but --sample-size {sample_size} "
                             "items were drawn from it")
        p0 = pool_size / corpus_size
    elif p0 is not None:
        _fraction(p0, "--p0")
        if p0 == 0 and sample_size > 0:
            raise ValueError(f"--p0 0 means an empty excluded pool, but --sample-size {sample_size} items "
                             "were drawn from it")
    _emit(excluded.excluded_pool_bound(positives, sample_size, delta, method="binomial", p0=p0), as_json)


# ---------------------------------------------------------------------------------------------
# plan


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
        None,
        "--max-missed",
        help="Finite pool: certify at most this many missed items (needs --pool-size); repeat for a table.",
    ),
    pool_size: int | None = typer.Option(
        None, "--pool-size", help="N0: excluded-pool size, for --max-missed (finite pool)."
    ),
    tolerated: int = typer.Option(
        0, "--tolerated", help="c: relevant items the audit may find and still pass."
    ),
    prefixes: int = typer.Option(1, "--prefixes", help="M pools certified jointly (δ/M each)."),
    beta: float | None = typer.Option(
        None,
        "--beta",
        help="Zero-miss failure probability for the Thm 13 lower bound shown beside --max-missed "
        "(default 0.5).",
    ),
    delta: float = DELTA,
    as_json: bool = JSON,
) -> None:
    """Audit sizes before any label is opened (Section 4.6, Remark 14, Theorem 13)."""
    from rankcut.certify import planning

    confidence_delta(delta)
    _count(tolerated, "--tolerated")
    _count(prefixes, "--prefixes", 1)
    if target and max_missed:
        raise ValueError("give either --target (a rate) or --max-missed (a count, with --pool-size), "
                         "not both")
    if max_missed:
        _unused({"--p0": p0 is not None}, "with --max-missed (a count of items in the --pool-size pool)")
        if pool_size is None:
            raise ValueError("--max-missed needs --pool-size (N0)")
        _count(pool_size, "--pool-size", 1)
        _within(tolerated, "--tolerated", pool_size, "--pool-size")
        for t in max_missed:
            _count(t, "--max-missed")
            if t < tolerated:
                raise ValueError(f"--max-missed {t} is below --tolerated {tolerated}: an audit that finds "
                                 "c relevant items cannot certify fewer than c")
        sizes = planning.plan_hypergeometric(
            _one_or_many(max_missed), delta, population=pool_size, tolerated=tolerated, n_prefixes=prefixes
        )
        if tolerated or prefixes != 1:
            _unused({"--beta": beta is not None}, "with --tolerated or --prefixes: Theorem 13's lower "
                    "bound is shown only for a zero-count plan of one pool")
            _emit(sizes, as_json)
            return
        # beside the size certify certifies at: Remark 14's zero-count size and Theorem 13's bound, for
        # the targets below N0 (a pool of N0 items cannot hold more than N0 relevant ones)
        reachable = [t for t in max_missed if t < pool_size]
        if len(reachable) < len(max_missed):
            held = ", ".join(str(t) for t in max_missed if t >= pool_size)
            _note(f"--max-missed {held} >= --pool-size {pool_size} holds without an audit (size 0); "
                  "the Remark 14 / Theorem 13 comparison is shown only for targets below --pool-size")
        if not reachable:
            _unused({"--beta": beta is not None}, "when no --max-missed is below --pool-size")
            _emit(sizes, as_json)
            return
        if beta is not None and not 0.0 <= beta < 1.0 - delta:   # (Theorem 13's range; also refuses nan)
            raise ValueError(f"--beta must lie in [0, 1 − --delta) = [0, {_num(1.0 - delta)}), got "
                             f"{_num(beta)}")
        minimum = planning.plan_rule_out(
            _one_or_many([t + 1 for t in reachable]), delta, excluded_size=pool_size,
            beta=0.5 if beta is None else beta,
        )  # fmt: skip
        _emit_all([sizes, minimum], as_json)
        planned = dict(zip(max_missed, _sizes(sizes.value), strict=True))
        closed = dict(zip(reachable, _sizes(minimum.value), strict=True))
        above = any(planned[t] > closed[t] for t in reachable)
        _note("plan with the first size: with it a zero count certifies the target as certify computes it "
              "(the hypergeometric inversion; "
              + ("at pools above about 10^6 it errs on the safe side, so it exceeds the Remark 14 size "
                 "beside it, the paper's closed form, here" if above else
                 "here no larger than the Remark 14 size beside it, the paper's closed form")
              + "); Theorem 13's lower bound says how close to the minimum the plan is")
        return
    if not target:
        raise ValueError("give --target (a rate) or --max-missed with --pool-size")
    if pool_size is not None:
        raise ValueError(
            "--pool-size goes with --max-missed (a count of missed items in a finite pool); for a "
            "finite pool of N0 items and a rate ε, plan --max-missed floor(ε·N0) --pool-size N0"
        )
    _unused({"--beta": beta is not None}, "with --target: Theorem 13's lower bound goes with --max-missed")
    for eps in target:
        _fraction(eps, "--target", open_left=True, open_right=True)
    if p0 is not None:
        _fraction(p0, "--p0", open_left=True)
        result = planning.plan_missed_mass(
            _one_or_many(target), delta, p0=p0, tolerated=tolerated, n_prefixes=prefixes
        )
    else:
        result = planning.plan_binomial(_one_or_many(target), delta, tolerated=tolerated, n_prefixes=prefixes)
    _emit(result, as_json)
    if max(target) >= 0.5:   # "--target 0.8" read as a recall answered a question nobody asked
        rate = "a missed mass (with --p0)" if p0 is not None else "a relevance rate of the excluded pool"
        _note(f"--target {_num(max(target))} is {rate}, not a recall: for recall ≥ ρ, freeze an audit with "
              "rankcut audit freeze --target-recall ρ, whose plan step sizes it")


# ---------------------------------------------------------------------------------------------
# prefixes: a CSV table, one row per prefix

_PREFIX_COLUMNS = ("name", "burden", "k", "n", "n_eff", "p0", "excluded_size", "delta")

_PREFIX_HELP = """CSV with a header line and one row per prefix, smallest candidate set first
(nested excluded pools E1 ⊇ E2 ⊇ …, so p0 or excluded_size never increases down the table).
Columns: name, burden (with p0: the included mass p1 = 1 - p0; with --finite: any cost >= 0,
such as N1, never decreasing down the table), k (relevant found), either n (separate audits) or
n_eff (draws of one shared reference sample in each excluded pool, with --reference-size), and
either p0 (excluded mass, in [0, 1]) or excluded_size (N0, with --finite). Optional: delta, each
prefix's error share (declared before the audit; the shares must sum to at most --delta; default
--delta / M each). Example: docs/examples/prefixes.csv."""

# why the effective sizes and counts of a shared reference sample shrink along the prefixes
_DRAW_IN = "a reference draw in a later prefix's excluded pool also lies in every earlier one"


class _Table:
    """The rows of a prefix CSV; every value is checked where it stands (file and line)."""

    def __init__(self, path: Path) -> None:
        import csv

        from rankcut.data.io import open_text

        self.path = path
        if path.is_dir():
            raise ValueError(f"{path} is a directory, not a CSV file")
        if not path.exists():
            raise ValueError(f"{path}: no such file")
        with open_text(path, newline="") as (_, fh):
            reader = csv.reader(fh)
            records = [(reader.line_num, row) for row in reader if any(v.strip() for v in row)]
        if not records:
            raise ValueError(f"{path}: empty file; expected a header line such as name,burden,p0,n,k")
        header = [h.strip() for h in records[0][1]]
        if len(header) == 1:
            raise ValueError(
                f"{path}: the header has one column ({header[0]!r}); the file must be comma-separated "
                "with a header line such as name,burden,p0,n,k"
            )
        for name in header:
            if name not in _PREFIX_COLUMNS:
                raise ValueError(f"{path}: unknown column {name!r} (columns: {', '.join(_PREFIX_COLUMNS)})")
            if header.count(name) > 1:
                raise ValueError(f"{path}: column {name!r} appears twice in the header")
        self.columns = set(header)
        self.rows: list[tuple[int, dict[str, str]]] = []
        for line, values in records[1:]:
            if len(values) != len(header):
                raise ValueError(f"{path}, line {line}: {len(values)} values, but the header has "
                                 f"{len(header)} columns")
            self.rows.append((line, {h: v.strip() for h, v in zip(header, values, strict=True)}))
        if not self.rows:
            raise ValueError(f"{path}: no data rows after the header")

    def fail(self, message: str, line: int | None = None) -> NoReturn:
        raise ValueError(f"{self.path}{'' if line is None else f', line {line}'}: {message}")

    def design(self, *, shared: bool, finite: bool, fixed_sequence: bool) -> None:
        """The columns fit the design: n or n_eff, p0 or excluded_size, no unused delta."""
        has = self.columns.__contains__
        if has("n") and has("n_eff"):
            self.fail("give either n (separate audits) or n_eff (with --reference-size), not both")
        if shared and has("n"):
            self.fail("--reference-size needs an n_eff column (the reference draws that fell in each "
                      "excluded pool) instead of n")
        if not shared and has("n_eff"):
            self.fail("the n_eff column (one shared reference sample) needs --reference-size Q")
        if not (has("n") or has("n_eff")):
            self.fail("missing column 'n' (separate audits) or 'n_eff' (with --reference-size)")
        if has("p0") and has("excluded_size"):
            self.fail("give either p0 (i.i.d. draws) or excluded_size (with --finite), not both")
        if finite and not has("excluded_size"):
            self.fail("--finite needs an excluded_size column (N0 of each prefix)"
                      + (" instead of p0" if has("p0") else ""))
        if not finite and has("excluded_size"):
            self.fail("the excluded_size column needs --finite (or give p0 instead)")
        if fixed_sequence and has("delta"):
            self.fail("--fixed-sequence tests every prefix at the full --delta; remove the delta column")

    def names(self) -> list[str]:
        """Distinct prefix names (``g1..gM`` where the name column is absent or empty)."""
        seen: dict[str, int] = {}
        for i, (line, row) in enumerate(self.rows, start=1):
            name = row.get("name") or f"g{i}"
            if name in seen:
                self.fail(f"name {name!r} is already used on line {seen[name]}", line)
            seen[name] = line
        return list(seen)

    def _raw(self, name: str) -> list[tuple[int, str]]:
        if name not in self.columns:
            self.fail(f"missing column {name!r}")
        for line, row in self.rows:
            if row[name] == "":
                self.fail(f"empty value in column {name!r}", line)
        return [(line, row[name]) for line, row in self.rows]

    def counts(self, name: str) -> list[int]:
        """Whole numbers >= 0."""
        values = []
        for line, raw in self._raw(name):
            try:
                v = int(raw)
            except ValueError:
                self.fail(f"{name}={raw!r} is not a whole number", line)
            if v < 0:
                self.fail(f"{name}={v} must be >= 0", line)
            values.append(v)
        return values

    def numbers(self, name: str, interval: str, inside: Callable[[float], bool]) -> list[float]:
        """Finite numbers for which ``inside`` holds (``interval`` says which, for the message)."""
        values = []
        for line, raw in self._raw(name):
            try:
                v = float(raw)
            except ValueError:
                self.fail(f"{name}={raw!r} is not a number", line)
            if not (math.isfinite(v) and inside(v)):
                self.fail(f"{name}={raw} must lie in {interval}", line)
            values.append(v)
        return values

    def each(self, check: Callable[[int], str | None]) -> None:
        """``check(row index)`` returns what is wrong with a row, or None."""
        for i, (line, _) in enumerate(self.rows):
            problem = check(i)
            if problem:
                self.fail(problem, line)

    def grows(self, name: str, values: list[Any]) -> None:
        """Non-decreasing down the table: a later prefix keeps more, so it costs at least as much."""
        for i in range(1, len(values)):
            if values[i] < values[i - 1]:
                self.fail(f"{name}={values[i]:g} is below {name}={values[i - 1]:g} on line "
                          f"{self.rows[i - 1][0]}; the prefixes are nested (smallest candidate set first), "
                          f"so a later one keeps more and its {name} must be at least as large",
                          self.rows[i][0])

    def nested(self, name: str, values: list[Any], why: str = "") -> None:
        """Non-increasing down the table: the excluded pools are nested, E1 ⊇ E2 ⊇ …"""
        for i in range(1, len(values)):
            if values[i] > values[i - 1]:
                self.fail(
                    f"{name}={values[i]} exceeds {name}={values[i - 1]} on line {self.rows[i - 1][0]}; "
                    f"the prefixes are nested (E1 ⊇ E2 ⊇ …, smallest candidate set first), so {name} "
                    f"must be non-increasing{why}",
                    self.rows[i][0],
                )


def _prefix_options(
    target: float, delta: float, finite: bool, reference_size: int | None, reference_mass: float | None,
    reference_pool_size: int | None, corpus_size: int | None, fixed_sequence: bool,
) -> None:
    """The options of ``prefixes``: ranges, and no option that the chosen design would ignore."""
    confidence_delta(delta)
    if finite:
        if not (target >= 0 and float(target).is_integer()):
            raise ValueError(f"--target is a number of missed items with --finite: a whole number >= 0, "
                             f"got {_num(target)}")
    else:  # a rate on r, as in plan
        _fraction(target, "--target", open_left=True, open_right=True)
    if reference_size is not None:
        _count(reference_size, "--reference-size")
    else:
        _unused({"--reference-mass": reference_mass is not None,
                 "--reference-pool-size": reference_pool_size is not None},
                "without --reference-size (one shared reference sample)")
    if finite:
        _unused({"--reference-mass": reference_mass is not None},
                "with --finite: give --reference-pool-size, the number of items in R")
        if reference_size is not None and reference_pool_size is None:
            raise ValueError("--finite with --reference-size needs --reference-pool-size")
        if reference_pool_size is not None:
            _count(reference_pool_size, "--reference-pool-size", 1)
            if reference_size is not None:
                _within(reference_size, "--reference-size", reference_pool_size, "--reference-pool-size")
        if corpus_size is not None:
            _count(corpus_size, "--corpus-size", 1)
            if reference_pool_size is not None:
                _within(reference_pool_size, "--reference-pool-size", corpus_size, "--corpus-size")
    else:
        _unused({"--corpus-size": corpus_size is not None,
                 "--reference-pool-size": reference_pool_size is not None}, "without --finite")
        if reference_mass is not None:
            _fraction(reference_mass, "--reference-mass", open_left=True)
    if fixed_sequence:
        _unused({"--corpus-size": corpus_size is not None},
                "with --fixed-sequence (it tests the count M0 against --target)")


@app.command("prefixes")
@_fail_cleanly
def prefixes(
    csv_path: Path = typer.Argument(..., help=_PREFIX_HELP, metavar="CSV"),
    target: float = typer.Option(..., "--target", help="ε on r (or a number of items with --finite)."),
    delta: float = DELTA,
    finite: bool = typer.Option(
        False, "--finite", help="Finite corpus, draws without replacement: hypergeometric bounds on M0."
    ),
    reference_size: int | None = typer.Option(
        None, "--reference-size", help="Q: size of one shared reference sample (Thm 17 / Cor 18)."
    ),
    reference_mass: float | None = typer.Option(
        None, "--reference-mass", help="P(R) of the reference region, with --reference-size (default 1)."
    ),
    reference_pool_size: int | None = typer.Option(
        None, "--reference-pool-size", help="|R|: size of the finite reference pool (Cor 18)."
    ),
    corpus_size: int | None = typer.Option(
        None, "--corpus-size", help="N: with --finite, adds the bounds on r = M0/N."
    ),
    fixed_sequence: bool = typer.Option(
        False,
        "--fixed-sequence",
        help="Test from the largest prefix down at level δ against the pre-set target (Thm 19).",
    ),
    as_json: bool = JSON,
) -> None:
    """Simultaneous bounds for nested cuts and the least-burden one meeting the target (Eq. 1)."""
    from rankcut.certify import prefixes as pf

    table = _Table(csv_path)   # the table's columns first: they say which design the options are for
    table.design(shared=reference_size is not None, finite=finite, fixed_sequence=fixed_sequence)
    _prefix_options(target, delta, finite, reference_size, reference_mass, reference_pool_size, corpus_size,
                    fixed_sequence)
    names = table.names()
    size_col = "n" if reference_size is None else "n_eff"
    k, n = table.counts("k"), table.counts(size_col)
    table.each(lambda i: f"k={k[i]} exceeds {size_col}={n[i]}" if k[i] > n[i] else None)
    if reference_size is not None:
        q = reference_size
        table.each(lambda i: f"n_eff={n[i]} exceeds --reference-size {q}" if n[i] > q else None)
        table.nested("n_eff", n, f" ({_DRAW_IN})")
        table.nested("k", k, f" ({_DRAW_IN})")
        table.nested("n_eff - k", [a - b for a, b in zip(n, k, strict=True)], f" ({_DRAW_IN})")
    big: Any = None  # the excluded pools' sizes (finite) or masses p0 (i.i.d.), read from the table
    p0: Any = None
    mass = 1.0
    if finite:
        big = table.counts("excluded_size")
        table.nested("excluded_size", big)
        if reference_pool_size is not None:  # shared, finite (Cor 18): draws without replacement from R
            pool, q = reference_pool_size, reference_size or 0
            table.each(lambda i: f"excluded_size={big[i]} exceeds --reference-pool-size {pool}: every "
                       "excluded pool must lie in the reference pool R" if big[i] > pool else None)
            table.each(lambda i: f"n_eff={n[i]} exceeds excluded_size={big[i]}" if n[i] > big[i] else None)
            table.each(lambda i: f"{q - n[i]} of the --reference-size {q} draws fall outside this excluded "
                       f"pool, but R holds only {pool - big[i]} items outside it"
                       if q - n[i] > pool - big[i] else None)
        else:
            table.each(lambda i: f"n={n[i]} exceeds excluded_size={big[i]} (draws without replacement)"
                       if n[i] > big[i] else None)
        if corpus_size is not None:
            table.each(lambda i: f"excluded_size={big[i]} exceeds --corpus-size {corpus_size}"
                       if big[i] > corpus_size else None)
    else:
        p0 = table.numbers("p0", "[0, 1]", lambda v: 0.0 <= v <= 1.0)
        table.nested("p0", p0)
        table.each(lambda i: f"p0=0 (an empty excluded pool), but {size_col}={n[i]} draws lie in it"
                   if p0[i] == 0 and n[i] > 0 else None)
        mass = 1.0 if reference_mass is None else reference_mass
        if reference_size is not None:
            table.each(lambda i: f"p0={p0[i]} exceeds --reference-mass {mass}: every excluded pool must "
                       "lie in the reference region R" if p0[i] > mass else None)

    method = "finite" if finite else "binomial"
    if fixed_sequence:  # n holds n_m or the effective sizes n_eff_m: Thm 19 needs only each test's level
        bound = int(target) if finite else target   # --target is a float; a count, checked whole above
        _emit(pf.fixed_sequence_bound(k, n, at_most=bound, delta=delta, method=method, excluded_sizes=big,
                                      p0=p0, names=names), as_json)
        return
    deltas = None
    if "delta" in table.columns:
        deltas = table.numbers("delta", "(0, 1)", lambda v: 0.0 < v < 1.0)
        if math.fsum(deltas) > delta * (1 + SUM_RTOL):
            table.fail(f"the delta column sums to {math.fsum(deltas):g}, more than --delta {delta:g}: the "
                       "union bound needs the shares to sum to at most --delta")
    if p0 is None:  # with --finite: any non-negative cost, e.g. the count N1 or the share N1/N
        burden = table.numbers("burden", "[0, inf)", lambda v: v >= 0.0)
        table.grows("burden", burden)   # with p0 the sum to 1 says it
    else:  # the included mass p1 = 1 − p0, as in Section 8
        burden = table.numbers("burden", "[0, 1]", lambda v: 0.0 <= v <= 1.0)
        table.each(lambda i: None if math.isclose(burden[i] + p0[i], 1.0, rel_tol=0.0, abs_tol=1e-9)
                   else f"burden={burden[i]:g} and p0={p0[i]:g} sum to {burden[i] + p0[i]:g}, not 1: a "
                   f"prefix's burden is its included mass p1 = 1 - p0 (here {1 - p0[i]:g})")
    bounds = pf.prefix_bounds(
        k, n, delta, method=method, reference="separate" if reference_size is None else "shared",
        excluded_sizes=big, p0=p0, reference_size=reference_size, reference_pool_size=reference_pool_size,
        reference_mass=mass, deltas=deltas, names=names, corpus_size=corpus_size,
    )  # fmt: skip
    choice = pf.choose_prefix(bounds, burden, at_most=target)
    report = JointReport(delta=delta, budget=dict(bounds.allocation), title=f"Prefixes of {csv_path}")
    report = report.attach("bounds", bounds).attach("choice", choice)
    _emit(report, as_json)


# ---------------------------------------------------------------------------------------------
# two-pool and whole-population


@app.command("two-pool")
@_fail_cleanly
def two_pool(
    excluded_sample: int = typer.Option(..., "--excluded-sample", help="n0: items labelled from {g = 0}."),
    excluded_positives: int = typer.Option(..., "--excluded-positives", help="K0: relevant among them."),
    included_sample: int = typer.Option(..., "--included-sample", help="n1: items labelled from {g = 1}."),
    included_positives: int = typer.Option(..., "--included-positives", help="K1: relevant among them."),
    delta: float = DELTA,
    finite: bool = typer.Option(
        False, "--finite", help="Finite corpus, draws without replacement: MU and ML inversions (Cor 11)."
    ),
    excluded_size: int | None = typer.Option(None, "--excluded-size", help="N0 (with --finite)."),
    included_size: int | None = typer.Option(None, "--included-size", help="N1 (with --finite)."),
    p0: float | None = typer.Option(
        None, "--p0", help="Excluded mass p0 = P(g = 0), for i.i.d. draws (population model, Thm 10)."
    ),
    p1: float | None = typer.Option(None, "--p1", help="Included mass p1 (default 1 − p0), with --p0."),
    as_json: bool = JSON,
) -> None:
    """Recall from audits of both pools (Theorem 10; Corollary 11 with --finite); δ split in two."""
    from rankcut.certify import recall

    confidence_delta(delta)
    _count(excluded_sample, "--excluded-sample")
    _count(excluded_positives, "--excluded-positives")
    _count(included_sample, "--included-sample")
    _count(included_positives, "--included-positives")
    _within(excluded_positives, "--excluded-positives", excluded_sample, "--excluded-sample")
    _within(included_positives, "--included-positives", included_sample, "--included-sample")
    if finite:
        _unused({"--p0": p0 is not None, "--p1": p1 is not None},
                "with --finite: the pool sizes give the masses")
        if excluded_size is None or included_size is None:
            raise ValueError("--finite needs --excluded-size (N0) and --included-size (N1)")
        _within(excluded_sample, "--excluded-sample", excluded_size, "--excluded-size")
        _within(included_sample, "--included-sample", included_size, "--included-size")
        cert = recall.two_pool_recall_bound(
            excluded_positives, excluded_sample, included_positives, included_sample, delta, method="finite",
            pool0=excluded_size, pool1=included_size,
        )  # fmt: skip
    else:
        _unused({"--excluded-size": excluded_size is not None, "--included-size": included_size is not None},
                "without --finite (draws without replacement from pools of known size)")
        if p0 is None:
            raise ValueError("give --p0 (population model) or --finite with the pool sizes")
        _fraction(p0, "--p0")
        if p0 == 0 and excluded_sample > 0:
            raise ValueError(f"--p0 0 means an empty excluded pool, but --excluded-sample {excluded_sample} "
                             "items were drawn from it")
        if p1 is not None:
            _fraction(p1, "--p1")
            if p0 + p1 > 1.0 + SUM_RTOL:  # rounding of complements such as 0.62 + 0.38
                raise ValueError(f"--p0 {_num(p0)} + --p1 {_num(p1)} = {_num(p0 + p1)} exceeds 1: the two "
                                 "pools split the population")
        if (1.0 - p0 if p1 is None else p1) == 0 and included_sample > 0:   # "recall ≥ 0", without a word
            raise ValueError(f"{'--p0 1' if p1 is None else '--p1 0'} means an empty included pool, but "
                             f"--included-sample {included_sample} items were drawn from it")
        cert = recall.two_pool_recall_bound(
            excluded_positives, excluded_sample, included_positives, included_sample, delta,
            method="binomial", p0=p0, p1=p1,
        )  # fmt: skip
    _emit(cert, as_json)


def _joint_confidence(deltas: Sequence[float]) -> str:
    """``1 − Σδ`` in decimal arithmetic, rounded down to 6 significant digits ("" when it is not
    above 0): in floats, 1 − (0.03 + 0.04) is 0.92999…, which rounded down read 0.9299."""
    from decimal import ROUND_FLOOR, Decimal

    joint = 1 - sum((Decimal(repr(float(d))) for d in deltas), Decimal(0))
    if joint <= 0:
        return ""
    return f"{joint.quantize(Decimal(1).scaleb(joint.adjusted() - 5), rounding=ROUND_FLOOR).normalize():f}"


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

    confidence_delta(delta)
    _count(sample_size, "--sample-size")
    _count(positives, "--positives")
    _within(positives, "--positives", sample_size, "--sample-size")
    _emit(whole.whole_population_certificate(positives, sample_size, delta), as_json)


# ---------------------------------------------------------------------------------------------
# audits: the certify step of many audit folders, one batch


def _certify_audits(folders: list[str]) -> list[tuple[str, dict[str, Any] | None, str]]:
    """``rankcut audit certify`` of each folder (a task of the runner): per folder its certificate
    (None when refused) and its rendered text, or the one-line refusal."""
    import rankcut.review.session  # noqa: F401 -- registers the screener of rankcut review's folders
    from rankcut.audit import workflow
    from rankcut.audit.options import OPTION_NAMES
    from rankcut.cli.audit import OPTIONS

    out: list[tuple[str, dict[str, Any] | None, str]] = []
    token = OPTION_NAMES.set(OPTIONS)  # the refusals name rankcut audit's options, as its certify does
    try:
        for folder in folders:
            try:
                result = workflow.certify(folder)
            except (ValueError, OSError) as exc:
                out.append((folder, None, str(exc)))
            else:
                out.append((folder, result.content, result.render()))
    finally:
        OPTION_NAMES.reset(token)
    return out


@app.command("audits")
@_fail_cleanly
def audits(
    folders: list[Path] = typer.Argument(
        ..., help="Audit folders made by 'rankcut audit freeze', each sampled and labelled.",
        metavar="AUDIT...",
    ),
    as_json: bool = JSON,
    shards: _shards.Shards = None,
    ray: _shards.Ray = None,
) -> None:
    """Certify many audits in one batch, each as 'rankcut audit certify --audit AUDIT' does.

    Each certificate.json is written in its audit's folder; with --ray the audits are certified in
    parallel, in --shards groups. The output is the same, in the order given. An audit refused is
    reported and the others are certified; the exit status is then 2, else 1 when an audit's frozen
    target is not met, else 0."""
    import json
    import warnings

    from rankcut.audit import workflow
    from rankcut.parallel import shard_bounds

    names = [str(f) for f in folders]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"audit folder {name} is given twice")
    try:
        _shards.check(shards, ray)
    except ImportError as exc:
        fail(str(exc))
    with warnings.catch_warnings(record=True) as caught, _shards.runner(shards, ray) as (where, n_shards):
        warnings.simplefilter("always")
        groups = [(names[a:b],) for a, b in shard_bounds(len(names), n_shards)]
        results = [r for group in where.map(_certify_audits, groups) for r in group]
    say_warnings(str(w.message) for w in caught)  # those of the workers too (rankcut.parallel)
    refused = [(folder, text) for folder, content, text in results if content is None]
    if as_json:
        typer.echo(json.dumps([{"audit": folder, "certificate": content} if content is not None else
                               {"audit": folder, "error": text} for folder, content, text in results],
                              indent=2, ensure_ascii=False))
    else:
        typer.echo("\n\n".join(f"== {folder}\n{text}" for folder, content, text in results
                               if content is not None))
        deltas = [float(content["delta"]) for _, content, _ in results if content is not None]
        if len(deltas) > 1:   # each holds at its own confidence, not all of them at once
            joint = _joint_confidence(deltas)
            typer.echo(f"\nEach certificate holds at its own confidence; all {len(deltas)} together hold "
                       + (f"with confidence at least {joint} (1 − the sum of their δ, a union bound)"
                          if joint else "with no confidence: the union bound gives none where their δ sum "
                          "to 1 or more") + ", not at each one's.")
    for folder, text in refused:
        typer.echo(f"error: {folder}: {text}", err=True)
    if refused:
        raise typer.Exit(2)
    if not all(workflow.target_met(content) for _, content, _ in results if content is not None):
        raise typer.Exit(1)
