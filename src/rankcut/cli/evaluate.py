"""``rankcut cut`` and ``rankcut evaluate``: apply cutters to a run, and compare them as in AttnCut's
Table 3.

numpy, scipy, the cutters and matplotlib are imported inside the commands, so ``rankcut --help``
and the other subcommands do not pay for them.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

_ORDERING_HELP = ("Tie rule: 'rank' (score, then the run's rank order, then doc_id descending) or "
                  "'trec_eval' (score, then doc_id descending).")
_MISSING_HELP = ("Run queries absent from the qrels: 'drop' (trec_eval's convention, right for full "
                 "qrels), 'keep' (no relevant document; right for positives-only qrels such as "
                 "Robust04's, where query 672 has none), or 'error'.")
DEFAULT_CUTTERS = "oracle,fixed-k:5,fixed-k:10,fixed-k:50,greedy-k"
_CHOICES = {
    "ordering": ("rank", "trec_eval"),
    "missing": ("drop", "keep", "error"),
    "test": ("wilcoxon", "ttest"),
    "fit_metric": ("each", "f1", "dcg"),
    "recall_base": ("list", "judged"),
}


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)
    raise typer.Exit(2)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Bad input ends the command with a one-line ``error: ...`` on stderr and exit status 2;
    warnings (e.g. queries dropped from the qrels) are shown as ``warning: ...`` lines."""
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except (ValueError, OSError, ImportError) as exc:
            error = str(exc) or type(exc).__name__
    for w in caught:
        typer.echo(f"warning: {' '.join(str(w.message).split())}", err=True)
    if error is not None:
        _fail(error)


def _choice(value: str, what: str) -> str:
    if value not in _CHOICES[what]:
        raise ValueError(f"--{what.replace('_', '-')} must be one of {', '.join(_CHOICES[what])}, "
                         f"got {value!r}")
    return value


def _read_runs(paths: list[Path]) -> dict[str, Any]:
    """Read and merge run files; a query may appear in one file only."""
    from rankcut.data.trec import read_run

    merged: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    for path in paths:
        for qid, postings in read_run(path).items():
            if qid in merged:
                raise ValueError(f"query {qid!r} is in both {origin[qid]} and {path}")
            merged[qid], origin[qid] = postings, path
    return merged


def _load(run: list[Path], letor: list[Path], qrels: Path | None, *, score_feature: int,
          threshold: float, ordering: str, missing: str) -> Any:
    from rankcut.data.letor import load_letor
    from rankcut.data.trec import load_trec

    if letor:
        return load_letor(letor, score_feature=score_feature, threshold=threshold, ordering=ordering)
    return load_trec(_read_runs(run), qrels, threshold=threshold, ordering=ordering, missing=missing)


def _query_ids(spec: str) -> tuple[str, ...]:
    """``FILE`` or ``FILE#KEY`` (a named list of a JSON splits file)."""
    from rankcut.evaluation import read_query_ids

    path, key = spec, None
    if "#" in spec and not Path(spec).exists():
        path, key = spec.rsplit("#", 1)
    return read_query_ids(path, key=key)


def cut(
    cutter: Annotated[str, typer.Option("--cutter", help="Cutter spec NAME[:PARAM], e.g. greedy-k, "
                                        "fixed-k:20, distribution, oracle.")],
    run: Annotated[Path, typer.Option("--run", help="TREC run to cut.", exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option("--out", help="Where to write the cut run (TREC format).",
                                      dir_okay=False)],
    train_run: Annotated[list[Path] | None, typer.Option(
        "--train-run", help="Training run(s) for cutters that learn (needs --qrels); repeat for "
        "several files.", exists=True, dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="Qrels: for fitting on --train-run, and for the oracle, which reads the "
        "labels of the run it cuts.", exists=True, dir_okay=False)] = None,
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Relevance at or above which a document counts as relevant.")] = 1.0,
    ordering: Annotated[str, typer.Option("--ordering", help=_ORDERING_HELP)] = "rank",
    missing: Annotated[str, typer.Option("--missing", help=_MISSING_HELP)] = "drop",
    tag: Annotated[str, typer.Option("--tag", help="Run tag written in the sixth column.")] = "rankcut",
) -> None:
    """Cut every list of a run where a cutter says, and write the kept prefixes as a TREC run."""
    with _user_errors():
        from rankcut.cutters import make_cutter
        from rankcut.data.trec import load_trec, write_run
        from rankcut.evaluation import READS_TEST_LABELS

        _choice(ordering, "ordering")
        _choice(missing, "missing")
        model = make_cutter(cutter)
        if train_run:
            if qrels is None:
                raise ValueError("--train-run needs --qrels: fitting reads the training labels")
            train = load_trec(_read_runs(train_run), qrels, threshold=threshold, ordering=ordering,
                              missing=missing)
            model.fit(train)
            learned = ", ".join(f"{k}={v}" for k, v in vars(model).items()
                                if k.endswith("_") and not k.startswith("_") and isinstance(v, int | float))
            typer.echo(f"{cutter} fitted on {len(train)} training queries"
                       + (f": {learned}" if learned else ""))
        elif model.requires_fit():
            raise ValueError(f"cutter {cutter!r} learns from training lists: give --train-run and --qrels")
        if model.name in READS_TEST_LABELS:
            if qrels is None:
                raise ValueError(f"cutter {cutter!r} reads the labels of the run it cuts: give --qrels")
            lists = load_trec(run, qrels, threshold=threshold, ordering=ordering, missing=missing)
        else:
            lists = load_trec(run, None, ordering=ordering)  # the cut never sees the run's labels
        cuts = model.predict(lists)
        write_run(out, lists, cuts, tag=tag)
        typer.echo(f"wrote {out}: {len(lists)} queries, {int(cuts.sum())} documents kept "
                   f"(mean k {float(cuts.mean()):.2f}, ordering {ordering})")


def evaluate(
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="TREC run(s) to evaluate; repeat to merge files (e.g. a train and a test run "
        "for --folds).", exists=True, dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels for --run and --train-run.", exists=True, dir_okay=False)] = None,
    letor: Annotated[list[Path] | None, typer.Option(
        "--letor", help="LETOR/SVMlight file(s) instead of --run/--qrels (labels inside); repeat for "
        "several partitions.", exists=True, dir_okay=False)] = None,
    score_feature: Annotated[int, typer.Option(
        "--score-feature", help="LETOR feature that ranks the documents (25: BM25 on the whole "
        "document in LETOR 4.0).")] = 25,
    cutters: Annotated[str, typer.Option(
        "--cutters", help="Comma-separated cutter specs NAME[:PARAM].")] = DEFAULT_CUTTERS,
    train_run: Annotated[list[Path] | None, typer.Option(
        "--train-run", help="Separate training run(s), judged by --qrels.", exists=True,
        dir_okay=False)] = None,
    train_letor: Annotated[list[Path] | None, typer.Option(
        "--train-letor", help="Separate training LETOR file(s), e.g. S1-S3 of a LETOR fold.",
        exists=True, dir_okay=False)] = None,
    train_queries: Annotated[str | None, typer.Option(
        "--train-queries", help="Query ids of --run to train on: a file of one id per line, or "
        "FILE.json#KEY (e.g. splits.json#bm25.train).")] = None,
    test_queries: Annotated[str | None, typer.Option(
        "--test-queries", help="Query ids to evaluate (same formats; default: all queries not "
        "trained on).")] = None,
    folds: Annotated[int | None, typer.Option(
        "--folds", help="k-fold cross-validation over the queries.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the cross-validation folds.")] = 0,
    fit_metric: Annotated[str, typer.Option(
        "--fit-metric", help="'each': fit metric-aware cutters (greedy-k, oracle, surprise) "
        "separately for F1 and DCG, as AttnCut's Table 3 does; or 'f1' / 'dcg' for one fit.")] = "each",
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="Cutter spec to test the others against, e.g. greedy-k.")] = None,
    test: Annotated[str, typer.Option(
        "--test", help="Paired test: wilcoxon or ttest (Holm-adjusted across methods).")] = "wilcoxon",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Relevance at or above which a document counts as relevant (2 for "
        "TREC DL).")] = 1.0,
    ordering: Annotated[str, typer.Option("--ordering", help=_ORDERING_HELP)] = "rank",
    missing: Annotated[str, typer.Option("--missing", help=_MISSING_HELP)] = "drop",
    recall_base: Annotated[str, typer.Option(
        "--recall-base", help="Recall denominator: 'list' (relevant documents inside the list, "
        "AttnCut's Eq. 8) or 'judged' (all judged relevant).")] = "list",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the table as Markdown.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write the distribution of cut-offs vs the oracle's (AttnCut's Figure 2) to "
        "this PNG.", dir_okay=False)] = None,
) -> None:
    """Compare cutters on held-out queries: F1@k, DCG@k and mean k per method (AttnCut's Table 3)."""
    with _user_errors():
        import json

        from rankcut.evaluation import evaluate_cutters, format_table

        run, letor, train_run, train_letor = run or [], letor or [], train_run or [], train_letor or []
        for value, what in [(ordering, "ordering"), (missing, "missing"), (test, "test"),
                            (fit_metric, "fit_metric"), (recall_base, "recall_base")]:
            _choice(value, what)
        if bool(run) == bool(letor):
            raise ValueError("give the lists to evaluate either as --run with --qrels or as --letor")
        if run and qrels is None:
            raise ValueError("--run needs --qrels: evaluation scores the cuts against judgements")
        if letor and qrels is not None:
            raise ValueError("--qrels applies to --run; LETOR files carry their own labels")
        if (train_run and not run) or (train_letor and not letor):
            raise ValueError("--train-run goes with --run, --train-letor with --letor")
        modes = [name for name, given in [("--train-run/--train-letor", bool(train_run or train_letor)),
                                          ("--train-queries", train_queries is not None),
                                          ("--folds", folds is not None)] if given]
        if len(modes) > 1:
            raise ValueError(f"choose one way to train: {' or '.join(modes)}")
        if as_json and markdown:
            raise ValueError("--json and --markdown are alternatives: choose one")
        specs = [s.strip() for s in cutters.split(",") if s.strip()]

        def load(runs: list[Path], letors: list[Path]) -> Any:
            return _load(runs, letors, qrels, score_feature=score_feature, threshold=threshold,
                         ordering=ordering, missing=missing)

        lists = load(run, letor)
        train: Any = None
        if train_run or train_letor:
            train = load(train_run, train_letor)
        elif train_queries is not None:
            train = _query_ids(train_queries)
        result = evaluate_cutters(
            specs, lists, train=train,
            test_queries=_query_ids(test_queries) if test_queries is not None else None,
            folds=folds, seed=seed, fit_metric=fit_metric, recall_base=recall_base,
            baseline=baseline, test=test, alpha=alpha, progress=sys.stderr.isatty(),
        )
        if plot is not None:
            from rankcut.plots import plot_cutoffs

            plot_cutoffs(result, plot, metric=result.metrics[0])
            typer.echo(f"wrote {plot}", err=True)
        if as_json:
            data = result.to_dict()
            data["inputs"] = {
                "run": [str(p) for p in run], "qrels": None if qrels is None else str(qrels),
                "letor": [str(p) for p in letor], "score_feature": score_feature if letor else None,
                "train_run": [str(p) for p in train_run], "train_letor": [str(p) for p in train_letor],
                "train_queries": train_queries, "test_queries": test_queries, "missing": missing,
                "cutters": specs,
            }
            typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            typer.echo(format_table(result, markdown=markdown), nl=False)
