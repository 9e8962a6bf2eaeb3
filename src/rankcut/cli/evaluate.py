"""``rankcut evaluate``: compare cutters as in AttnCut's Table 3.

Every option is checked before any file is loaded or any cutter fitted: cutter specs, the
relevance threshold, query-id files, and the output files (their folder must exist; an output
may not be one of the inputs). The cutter registry is imported with this module, so that the
help of ``--cutters`` lists the registered cutters; the evaluation
(:mod:`rankcut.evaluation`), scipy and matplotlib are imported inside the command.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from rankcut._progress import show_progress
from rankcut._words import id_list
from rankcut.cli import _shards
from rankcut.cli._common import (
    MAX_IDS_SHOWN,
    MISSING,
    ORDERING,
    SCORE_FEATURE,
    THRESHOLD_HELP,
    TRAIN_QRELS_HELP,
    TRAIN_QRELS_HINT,
    Missing,
    Ordering,
    ScoreFeature,
    check_output,
    choice,
    count,
    load_letors,
    load_runs,
    note_grades,
    warn_unranked,
)
from rankcut.cli._errors import input_errors
from rankcut.cutters.base import spec_forms

__all__ = ["DEFAULT_CUTTERS", "evaluate"]

_SPECS = ", ".join(spec_forms())
DEFAULT_CUTTERS = "oracle,fixed-k:5,fixed-k:10,fixed-k:50,greedy-k"
#: library parameters that the messages of this command name by their flags
FLAGS = ("threshold", "features", "folds", "score_feature")


def _cutter_specs(text: str) -> list[str]:
    """The specs of a comma-separated ``--cutters`` value; an empty one is an error."""
    specs = [s.strip() for s in text.split(",")]
    for i, spec in enumerate(specs, 1):
        if not spec:
            raise ValueError(f"--cutters {text!r}: spec {i} is empty (specs are separated by single "
                             f"commas; cutters: {_SPECS})")
    return specs


def _query_file(spec: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE#KEY`` (a named list of a JSON splits file) as the file and the key."""
    if "#" in spec and not Path(spec).exists():
        path, key = spec.rsplit("#", 1)
        return path, key
    return spec, None


def _metric_names(spec: str) -> tuple[str, ...]:
    """``--metrics f1,recall``: distinct names of :data:`rankcut.metrics.METRICS`, in order."""
    from rankcut.metrics import METRICS

    names = tuple(name.strip().lower() for name in spec.split(","))
    bad = next((name for name in names if name not in METRICS), None)
    if bad is not None or len(set(names)) != len(names):
        what = f"{bad!r} is not one of them" if bad is not None else "each once"
        raise ValueError(f"--metrics takes names from {', '.join(METRICS)}, comma-separated ({what}): got "
                         f"{spec!r}")
    return names


def _query_ids(spec: str, option: str) -> tuple[str, ...]:
    """``FILE`` or ``FILE#KEY`` (:func:`_query_file`); errors name ``option``."""
    from rankcut.evaluation import read_query_ids

    path, key = _query_file(spec)
    if not Path(path).exists() or Path(path).is_dir():   # a pipe (<(...), /dev/stdin) is read too
        raise ValueError(f"{option} {spec}: no file {path}")
    if key is not None and Path(path).suffix.lower() != ".json":
        raise ValueError(f"{option} {spec}: #{key} names a list of a JSON splits file, but {path} is a "
                         "text file of one query id per line")
    try:
        return read_query_ids(path, key=key)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


def evaluate(
    ctx: typer.Context,
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="TREC run(s) to evaluate (.gz read transparently; Parquet when a name ends in "
        ".parquet); repeat to merge files (e.g. a train and a test run for --folds).", exists=True,
        dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="TREC qrels for --run, and for --train-run unless --train-qrels.", exists=True,
        dir_okay=False)] = None,
    letor: Annotated[list[Path] | None, typer.Option(
        "--letor", help="LETOR/SVMlight file(s) instead of --run/--qrels (labels inside); repeat for "
        "several partitions.", exists=True, dir_okay=False)] = None,
    score_feature: ScoreFeature = SCORE_FEATURE,
    cutters: Annotated[str, typer.Option(
        "--cutters", help=f"Comma-separated cutter specs NAME[:PARAM], each listed once; cutters: "
        f"{_SPECS}.")] = DEFAULT_CUTTERS,
    model: Annotated[list[Path] | None, typer.Option(
        "--model", help="A trained model folder of 'rankcut train' to evaluate beside --cutters, as "
        "saved (not refitted); repeat for several. Its row is named by the folder as given.",
        exists=True, file_okay=False)] = None,
    cut: Annotated[list[Path] | None, typer.Option(
        "--cut", help="A cut run made elsewhere (a prefix of each list of --run, as 'rankcut cut' "
        "writes it), scored beside --cutters on the full lists, so recall counts what it left out; "
        "repeat for several. Its row is named by the file as given.", exists=True,
        dir_okay=False)] = None,
    allow_missing_queries: Annotated[bool, typer.Option(
        "--allow-missing-queries", help="--cut: a query of --run without a line in the cut run is "
        "cut at 0 (a cut of 0 writes no line; without this it is refused).")] = False,
    features: Annotated[list[Path] | None, typer.Option(
        "--features", help="TSV table(s) of per-document features keyed by query_id and doc_id (e.g. "
        "Robust04's features/bm25.{train,test}.tsv), for --run and --train-run; repeat for several "
        "tables.", exists=True, dir_okay=False)] = None,
    train_run: Annotated[list[Path] | None, typer.Option(
        "--train-run", help="Separate training run(s), judged by --qrels (or --train-qrels).", exists=True,
        dir_okay=False)] = None,
    train_qrels: Annotated[Path | None, typer.Option(
        "--train-qrels", help=TRAIN_QRELS_HELP, exists=True, dir_okay=False)] = None,
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
    metrics: Annotated[str, typer.Option(
        "--metrics", help="The columns, comma-separated: f1, precision, recall, dcg (default f1,dcg, "
        "AttnCut's Table 3; P@k and R@k as a RAG depth is judged).")] = "f1,dcg",
    fit_metric: Annotated[str, typer.Option(
        "--fit-metric", help="'each': fit metric-aware cutters (greedy-k, oracle, surprise and the "
        "neural ones: attncut, attncut-rc, bicut, choppy) separately for each column, as AttnCut's "
        "Table 3 does for F1 and DCG (a neural cutter is trained once per column); or one of the "
        "metrics for one fit.")] = "each",
    baseline: Annotated[str | None, typer.Option(
        "--baseline", help="Cutter spec to test the others against, e.g. greedy-k.")] = None,
    test: Annotated[str, typer.Option(
        "--test", help="Paired test: wilcoxon or ttest (Holm-adjusted across methods).")] = "wilcoxon",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level.")] = 0.05,
    threshold: Annotated[float, typer.Option(
        "--threshold", help=THRESHOLD_HELP + " (2 for TREC DL).")] = 1.0,
    ordering: Ordering = ORDERING,
    missing: Missing = MISSING,
    recall_base: Annotated[str, typer.Option(
        "--recall-base", help="Recall denominator: 'list' (relevant documents inside the list, "
        "AttnCut's Eq. 8) or 'judged' (all judged relevant).")] = "list",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the table as Markdown.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write the distribution of cut-offs vs the oracle's (AttnCut's Figure 2) to "
        "this figure, PNG, PDF or SVG by its suffix (needs oracle among --cutters; its folder must "
        "exist).", dir_okay=False)] = None,
    shards: _shards.Shards = None,
    ray: _shards.Ray = None,
) -> None:
    """Compare cutters on held-out queries: F1@k, DCG@k and mean k per method (AttnCut's Table 3).

    With --ray, every fit (one per fold and cutter) is a Ray task and the test queries of each are
    cut in --shards shards; the table and the JSON are the same as in one process."""
    with input_errors(FLAGS):
        import json

        from rankcut.data.features import attach_feature_tables
        from rankcut.data.lists import check_threshold
        from rankcut.data.trec import read_qrels
        from rankcut.evaluation import (
            check_specs,
            evaluate_cutters,
            evaluated_queries,
            format_table,
            with_trained,
        )

        run, letor, train_run, train_letor = run or [], letor or [], train_run or [], train_letor or []
        models, features, cuts = model or [], features or [], cut or []
        for value, what in [(ordering, "ordering"), (missing, "missing"), (test, "test"),
                            (fit_metric, "fit_metric"), (recall_base, "recall_base")]:
            choice(value, what)
        check_threshold(threshold)
        if not 0.0 < alpha < 1.0:   # checked by the test alone, which some evaluations never run
            raise ValueError(f"--alpha must lie in (0, 1), got {alpha:g}")
        columns = _metric_names(metrics)
        _shards.check(shards, ray)
        if bool(run) == bool(letor):
            raise ValueError("give the lists to evaluate either as --run with --qrels or as --letor")
        if run and qrels is None:
            raise ValueError("--run needs --qrels: evaluation scores the cuts against judgements")
        if letor and qrels is not None:
            raise ValueError("--qrels applies to --run; LETOR files carry their own labels")
        if (train_run and not run) or (train_letor and not letor):
            raise ValueError("--train-run goes with --run, --train-letor with --letor")
        if train_qrels is not None and not train_run:
            raise ValueError("--train-qrels goes with --train-run: it holds the training run's qrels")
        modes = [name for name, given in [("--train-run/--train-letor", bool(train_run or train_letor)),
                                          ("--train-queries", train_queries is not None),
                                          ("--folds", folds is not None)] if given]
        if len(modes) > 1:
            raise ValueError(f"choose one way to train: {' or '.join(modes)}")
        if folds is not None and folds < 2:   # said before the files are read, as the library says it
            raise ValueError(f"--folds must be an integer ≥ 2, got {folds}")
        if as_json and markdown:
            raise ValueError("--json and --markdown are alternatives: choose one")
        if cuts and not run:
            raise ValueError("--cut goes with --run: a cut run keeps a prefix of each of its lists")
        if allow_missing_queries and not cuts:
            raise ValueError("--allow-missing-queries is for --cut: it says how a query without a line "
                             "in the cut run is cut")
        labels = [str(p) for p in models] + [str(p) for p in cuts]
        try:
            specs = check_specs(_cutter_specs(cutters), baseline=None if baseline in labels else baseline)
        except ValueError as exc:
            if labels and baseline is not None and str(exc).startswith("baseline "):
                raise ValueError(f"{exc}, nor a row of --model or --cut, named as given: {labels}") from None
            raise
        if features and letor:
            raise ValueError("--features goes with --run; LETOR files carry their own features")
        for i, label in enumerate(labels):
            flag = "--model" if i < len(models) else "--cut"
            if labels.count(label) > 1:
                raise ValueError(f"{flag} {label} is given twice")
            if label in specs:
                raise ValueError(f"{flag} {label} has the name of a cutter in --cutters: rename the "
                                 f"{'folder' if flag == '--model' else 'file'}")
        reference = next((s for s in specs if s.partition(":")[0].strip() == "oracle"), "")
        if plot is not None:
            if not reference:
                raise ValueError("--plot draws the cuts of each method against the oracle's: add oracle "
                                 "to --cutters")
            check_output(plot, "--plot", {"--run": run, "--train-run": train_run, "--letor": letor,
                                           "--train-letor": train_letor,
                                           "--qrels": [qrels] if qrels is not None else [],
                                           "--train-qrels": [train_qrels] if train_qrels is not None else [],
                                           "--cut": cuts, "--features": features, "--model": models,
                                           **{option: [Path(_query_file(spec)[0])]
                                              for option, spec in [("--train-queries", train_queries),
                                                                   ("--test-queries", test_queries)]
                                              if spec is not None}})
            from rankcut.plots import check_figure_path

            check_figure_path(plot)
            try:
                import matplotlib.figure  # noqa: F401  (fail now, not after the evaluation)
            except ImportError:
                raise ImportError("--plot needs matplotlib: pip install 'rankcut[eval]'") from None
        train: Any = None
        if train_queries is not None:
            train = _query_ids(train_queries, "--train-queries")
        chosen = _query_ids(test_queries, "--test-queries") if test_queries is not None else None
        trained: dict[str, Any] = {}
        if models:
            from rankcut.cutters.checkpoint import load_checkpoint  # torch: only for --model

            trained = {str(p): load_checkpoint(p) for p in models}

        if letor:
            options: dict[str, Any] = {"score_feature": score_feature, "threshold": threshold,
                                       "ordering": ordering}
            lists = load_letors(letor, **options)
            if train_letor:
                train = load_letors(train_letor, **options)
        else:
            assert qrels is not None  # checked above
            judged = read_qrels(qrels)
            note_grades(ctx, qrels, judged, threshold)
            options = {"threshold": threshold, "ordering": ordering, "missing": missing}
            listed: set[str] = set()   # the runs' queries, those dropped for want of qrels included
            lists = load_runs(run, judged, **options, queries=listed)
            sources = {qrels: judged}
            if train_qrels is not None and train_qrels.resolve() != qrels.resolve():
                sources[train_qrels] = read_qrels(train_qrels)   # TREC DL 2019's, to test on 2020
                note_grades(ctx, train_qrels, sources[train_qrels], threshold)
            if train_run:
                train = load_runs(train_run, sources[train_qrels] if train_qrels in sources else judged,
                                  **options, unjudged_hint="" if train_qrels else TRAIN_QRELS_HINT)
            for path, held in sources.items():   # a qrels query in no run is ignored: said once a file
                warn_unranked(path, held, [lists, *([train] if train_run else [])], [*run, *train_run])
            lists = attach_feature_tables(lists, features)
            if train_run:
                train = attach_feature_tables(train, features)
        _check_models(trained, lists, chosen, train)
        # the queries scored (--train-queries' are not): a --cut needs lines of these only
        evaluated = set(evaluated_queries(lists, train=train if isinstance(train, tuple) else None,
                                          test_queries=chosen))
        given = {str(p): _given_cuts(p, lists, evaluated, judged, missing, allow_missing_queries, listed)
                 for p in cuts}
        with _shards.runner(shards, ray) as (where, n_shards):
            result = evaluate_cutters(
                specs, lists, train=train, test_queries=chosen,
                folds=folds, seed=seed, metrics=columns, fit_metric=fit_metric, recall_base=recall_base,
                baseline=None if trained or given else baseline, test=test, alpha=alpha,
                progress=show_progress(as_json=as_json), shards=n_shards, runner=where,
            )
        if trained or given:
            notes = []
            if trained:
                fitted_for = ", ".join(f"{label}: {method.metric}" for label, method in trained.items())
                notes.append(f"{count(len(trained), 'trained model', 'trained models')} (--model) cut as "
                             "saved, not refitted, one cut per model scored in every column (trained for "
                             f"{fitted_for})")
            if given:
                notes.append(f"{count(len(given), 'cut run', 'cut runs')} (--cut) scored as given on the "
                             "full lists, one cut per run in every column")
                empty = {label: n for label, method in given.items()
                         if (n := sum(k == 0 for k in method.cuts.values()))}   # each run its own count
                if empty and any(spec.split(":")[0] == "oracle" for spec in specs):
                    said = ", ".join(f"{'the cut run' if len(given) == 1 else label} keeps nothing of "
                                     f"{count(n, 'list', 'lists')}" for label, n in empty.items())
                    notes.append(f"the oracle cuts at k ≥ 1, as in the paper; {said} "
                                 "(--allow-missing-queries: k = 0, F1 and DCG 0), so "
                                 f"{'it' if len(empty) == 1 else 'they'} can score above it where every cut "
                                 "of a list scores below 0 (DCG)")
            result = with_trained(result, lists, {**trained, **given}, baseline=baseline, test=test,
                                  alpha=alpha, note="; " + "; ".join(notes))
        if plot is not None:
            from rankcut.plots import plot_cutoffs

            plot_cutoffs(result, plot, metric=result.metrics[0], reference=reference)
            typer.echo(f"wrote {plot}", err=True)
        if as_json:
            data = result.to_dict()
            data["inputs"] = {
                "run": [str(p) for p in run], "qrels": None if qrels is None else str(qrels),
                "train_qrels": None if train_qrels is None else str(train_qrels),
                "letor": [str(p) for p in letor], "score_feature": score_feature if letor else None,
                "train_run": [str(p) for p in train_run], "train_letor": [str(p) for p in train_letor],
                "train_queries": train_queries, "test_queries": test_queries, "missing": missing,
                "cutters": specs, "metrics": list(columns), "models": [str(p) for p in models],
                "cuts": [str(p) for p in cuts],
                "features": [str(p) for p in features],
            }
            typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            typer.echo(format_table(result, markdown=markdown), nl=False)


def _given_cuts(path: Path, lists: Any, evaluated: set[str], judged: dict[str, Any], missing: str,
                allow_missing: bool, listed: set[str]) -> Any:
    """``--cut``: the depth the cut run keeps of each list evaluated (a prefix of it, else refused
    naming the query and rank), as a method of the evaluation. Its lines of queries not evaluated
    (``--train-queries``), and of queries that ``--missing drop`` dropped from the run (no qrels),
    are not read; a query of no run (not ``listed``) is refused (the cut of another run or topic
    set)."""
    from rankcut.audit.options import OPTION_NAMES
    from rankcut.audit.pools import cuts_from_run
    from rankcut.cutters.given import GivenCuts
    from rankcut.data.trec import read_run

    kept = set(lists.qids)
    scored = lists.subset([q for q in lists.qids if q in evaluated])
    lines = read_run(path)
    unjudged = [q for q in lines if q not in kept and missing == "drop" and q not in judged]
    if unjudged:   # dropped from the runs for want of qrels, or not in the runs at all
        foreign = [q for q in unjudged if q not in listed]
        if foreign:   # as a judged query of no run is refused (cuts_from_run)
            shown = id_list(foreign)
            raise ValueError(f"--cut {path}: {count(len(foreign), 'query', 'queries')} of it ({shown}) "
                             f"{'is' if len(foreign) == 1 else 'are'} in no --run: the cut of another run or "
                             "topic set? Give the cut of the runs evaluated")
    if unjudged:   # a run's query without qrels is dropped with a warning: so is the cut's
        shown = id_list(unjudged)
        which = count(len(unjudged), "query", "queries")
        warnings.warn(f"--cut {path}: the qrels judge no document of {which} of it ({shown}): not evaluated "
                      "(--missing drop)", UserWarning, stacklevel=2)
    dropped = set(unjudged)
    postings = {q: p for q, p in lines.items() if q in evaluated or (q not in kept and q not in dropped)}
    if not any(q in postings for q in scored.qids):
        raise ValueError(f"--cut {path} holds none of the {len(scored)} queries evaluated: the cut of "
                         "another run or topic set?")
    token = OPTION_NAMES.set({"allow_missing_queries": "--allow-missing-queries"})
    try:
        depth = cuts_from_run(scored, postings, allow_missing_queries=allow_missing)
    except ValueError as exc:
        raise ValueError(f"--cut {path}: {exc}") from None
    finally:
        OPTION_NAMES.reset(token)
    return GivenCuts(cuts=dict(zip(scored.qids, depth.tolist(), strict=True)), source=str(path))


def _check_models(trained: dict[str, Any], lists: Any, chosen: Any, train: Any) -> None:
    """Before evaluating: every ``--model`` finds its feature columns, and none was trained or
    validated on a query it would be evaluated on (its score there would be a training fit)."""
    from rankcut.evaluation import seen_queries

    held = train if isinstance(train, tuple) else None  # --train-queries: not evaluated
    for label, method in trained.items():
        absent = [c for c in method.feature_columns() if c not in lists.feature_names]
        if absent:
            raise ValueError(f"--model {label} reads the feature column(s) {absent}: give --features "
                             "tables that hold them")
        seen = seen_queries(method, lists, train=held, test_queries=chosen)
        if seen:
            raise ValueError(f"--model {label} was trained on {count(len(seen), 'query', 'queries')} that "
                             f"would be evaluated ({id_list(seen, MAX_IDS_SHOWN)}): evaluate it on other "
                             "queries")
