"""``rankcut cut`` and ``rankcut evaluate``: apply cutters to a run, and compare them as in AttnCut's
Table 3.

Every option is checked before any file is loaded or any cutter fitted: cutter specs, the
relevance threshold, query-id files, and the output files (their folder must exist; an output
may not be one of the inputs). The cutter registry is imported with this module, so that the
help of ``--cutters`` lists the registered cutters; the evaluation, scipy and matplotlib are
imported inside the commands.
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from rankcut.cli._errors import fail
from rankcut.cutters.base import spec_forms

_ORDERING_HELP = ("Tie rule: 'rank' (score, then the run's rank order, then doc_id descending) or "
                  "'trec_eval' (score as a 32-bit float, as trec_eval stores it, then doc_id descending).")
_MISSING_HELP = ("Run queries absent from the qrels: 'drop' (trec_eval's convention, right for full "
                 "qrels), 'keep' (no relevant document; right for positives-only qrels such as "
                 "Robust04's, where query 672 has none), or 'error'.")
_THRESHOLD_HELP = ("Relevance at or above which a document counts as relevant: a number > 0, since "
                   "unjudged documents count as relevance 0")
_SPECS = ", ".join(spec_forms())
DEFAULT_CUTTERS = "oracle,fixed-k:5,fixed-k:10,fixed-k:50,greedy-k"
_CHOICES = {
    "ordering": ("rank", "trec_eval"),
    "missing": ("drop", "keep", "error"),
    "test": ("wilcoxon", "ttest"),
    "fit_metric": ("each", "f1", "dcg"),
    "recall_base": ("list", "judged"),
}
_MAX_IDS_SHOWN = 10
#: library keywords that are options of these commands under the same name: a message that says
#: ``missing='keep'`` is shown as ``--missing keep``
_KEYWORD = re.compile(r"(?<![\w-])(missing|threshold|ordering|folds|seed|fit_metric|recall_base|"
                      r"baseline|test|alpha|score_feature)=(?:'([^']*)'|([^\s,;:)]+))")


def _cli_words(message: str) -> str:
    """A library message in the words of the command line: one line, options instead of keywords."""
    text = " ".join(str(message).split())
    return _KEYWORD.sub(lambda m: f"--{m[1].replace('_', '-')} {m[2] if m[2] is not None else m[3]}", text)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _fail(message: str) -> NoReturn:
    fail(_cli_words(message))


@contextmanager
def _user_errors() -> Iterator[None]:
    """Bad input ends the command with a one-line ``error: ...`` on stderr and exit status 2;
    warnings (e.g. queries dropped from the qrels) are shown as ``warning: ...`` lines."""
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except BrokenPipeError:
            raise  # stdout closed by the reader (`| head`): click ends quietly, not an input error
        except (ValueError, OSError, ImportError) as exc:
            error = str(exc) or type(exc).__name__
    for w in caught:
        typer.echo(f"warning: {_cli_words(str(w.message))}", err=True)
    if error is not None:
        _fail(error)


@contextmanager
def _warnings_about(source: str) -> Iterator[None]:
    """Prefix the warnings raised inside with ``source``, so that those of the training run and
    of the test run can be told apart."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:  # also when loading fails: the warnings explain the error
        for w in caught:
            warnings.warn(f"{source}: {w.message}", w.category, stacklevel=1)


def _choice(value: str, what: str) -> str:
    if value not in _CHOICES[what]:
        raise ValueError(f"--{what.replace('_', '-')} must be one of {', '.join(_CHOICES[what])}, "
                         f"got {value!r}")
    return value


def _check_output(path: Path, option: str, inputs: dict[str, list[Path]]) -> None:
    """Before any work: the folder of ``path`` must exist (it is not created), and ``path`` must
    not be one of the input files (rankcut never overwrites its input)."""
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ValueError(f"{option} {path}: output folder {folder} {what}")
    if not path.exists():
        return
    for name, paths in inputs.items():
        for given in paths:
            if given.exists() and os.path.samefile(path, given):
                raise ValueError(f"{option} {path} is the input file {name} {given}: writing there "
                                 "would overwrite it; choose another file")


def _cutter_specs(text: str) -> list[str]:
    """The specs of a comma-separated ``--cutters`` value; an empty one is an error."""
    specs = [s.strip() for s in text.split(",")]
    for i, spec in enumerate(specs, 1):
        if not spec:
            raise ValueError(f"--cutters {text!r}: spec {i} is empty (specs are separated by single "
                             f"commas; cutters: {_SPECS})")
    return specs


def _query_ids(spec: str, option: str) -> tuple[str, ...]:
    """``FILE`` or ``FILE#KEY`` (a named list of a JSON splits file); errors name ``option``."""
    from rankcut.evaluation import read_query_ids

    path, key = spec, None
    if "#" in spec and not Path(spec).exists():
        path, key = spec.rsplit("#", 1)
    if not Path(path).is_file():
        raise ValueError(f"{option} {spec}: no file {path}")
    if key is not None and Path(path).suffix.lower() != ".json":
        raise ValueError(f"{option} {spec}: #{key} names a list of a JSON splits file, but {path} is a "
                         "text file of one query id per line")
    try:
        return read_query_ids(path, key=key)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


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


def _files(paths: list[Path]) -> str:
    return ", ".join(map(str, paths))


def _load_runs(paths: list[Path], judged: dict[str, Any] | None, *, threshold: float, ordering: str,
               missing: str) -> Any:
    """Lists of the run files, judged by the queries of ``judged`` that they contain; warnings
    and errors name the files."""
    from rankcut.data.trec import load_trec

    run = _read_runs(paths)  # its errors name file and line
    qrels = None if judged is None else {q: judged[q] for q in run if q in judged}
    with _warnings_about(_files(paths)):
        try:
            return load_trec(run, qrels, threshold=threshold, ordering=ordering, missing=missing)
        except ValueError as exc:
            raise ValueError(f"{_files(paths)}: {exc}") from None


def _warn_unranked(qrels: Path, judged: dict[str, Any], loaded: list[Any], runs: list[Path]) -> None:
    """One warning for the qrels queries that no run holds (they are ignored)."""
    from rankcut.data.trec import MissingQueriesWarning

    have = {q for lists in loaded for q in lists.qids}
    unranked = [q for q in judged if q not in have]
    if unranked:
        shown = ", ".join(map(repr, unranked[:_MAX_IDS_SHOWN]))
        more = f", ... ({len(unranked)} in all)" if len(unranked) > _MAX_IDS_SHOWN else ""
        verb = "is" if len(unranked) == 1 else "are"
        warnings.warn(f"{qrels}: {_count(len(unranked), 'query', 'queries')} {verb} in no run "
                      f"({_files(runs)}) and {verb} ignored: {shown}{more}", MissingQueriesWarning,
                      stacklevel=2)


def _table_columns(path: Path) -> tuple[set[str], list[str]]:
    """The query ids and the value columns (header minus ``query_id``, ``doc_id``) of a TSV table."""
    import csv

    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: the file is empty (expected a header line)")
        if "query_id" not in header or "doc_id" not in header:
            raise ValueError(f"{path}:1: header {header} lacks column(s) "
                             f"{[c for c in ('query_id', 'doc_id') if c not in header]}")
        q = header.index("query_id")
        qids = {row[q] for row in reader if len(row) > q}
    return qids, [c for c in header if c not in ("query_id", "doc_id")]


def _attach_features(lists: Any, paths: list[Path], columns: set[str] | None = None) -> Any:
    """``lists`` with the columns of the ``--features`` tables (all their columns, or those in
    ``columns``). Tables with the same columns are parts of one table (e.g. a train and a test
    file): each query takes its rows from the table that holds it, and every listed document needs
    a row (:func:`rankcut.data.features.load_precomputed_features`, whose errors name file and line).
    """
    import numpy as np

    from rankcut.data.features import load_precomputed_features

    groups: dict[tuple[str, ...], list[tuple[Path, set[str]]]] = {}
    for path in paths:
        qids, header = _table_columns(path)
        if not header:
            raise ValueError(f"--features {path}: no column besides query_id and doc_id")
        kept = tuple(c for c in header if columns is None or c in columns)
        if kept:
            groups.setdefault(kept, []).append((path, qids))
    for names, tables in groups.items():
        values = np.zeros((len(lists), lists.max_len, len(names)))
        source: dict[str, Path] = {}
        for path, qids in tables:
            rows = [i for i, q in enumerate(lists.qids) if q in qids]
            for i in rows:
                q = lists.qids[i]
                if q in source:
                    raise ValueError(f"--features: query {q!r} has rows in both {source[q]} and {path}")
                source[q] = path
            if rows:
                part = load_precomputed_features(lists.subset([lists.qids[i] for i in rows]), path, names)
                assert part.features is not None
                values[rows, : part.max_len] = part.features[:, :, -len(names):]
        absent = [q for q in lists.qids if q not in source]
        if absent:
            shown = ", ".join(map(repr, absent[:_MAX_IDS_SHOWN]))
            raise ValueError(f"--features {_files([p for p, _ in tables])}: no row for "
                             f"{_count(len(absent), 'query', 'queries')} of the lists: {shown}")
        before = [] if lists.features is None else [lists.features]
        clash = sorted(set(names) & set(lists.feature_names))
        if clash:
            raise ValueError(f"--features: column(s) {clash} given by two tables with different columns")
        lists = lists.with_features(np.concatenate([*before, values], axis=2), (*lists.feature_names, *names))
    return lists


def _load_checkpoint(path: Path) -> Any:
    """A trained model of ``rankcut train`` (its errors name the file at fault)."""
    from rankcut.cutters.checkpoint import load_checkpoint

    return load_checkpoint(path)


def _model_features(model: Any, lists: Any, paths: list[Path], where: Path) -> Any:
    """``lists`` with the feature columns ``model`` reads, from the ``--features`` tables."""
    from rankcut.nn.inputs import SCORE_COLUMNS

    needed = [c for c in model.encoder_.columns if c not in SCORE_COLUMNS]
    lists = _attach_features(lists, paths, set(needed))
    absent = [c for c in needed if c not in lists.feature_names]
    if absent:
        raise ValueError(f"--model {where} reads the feature column(s) {absent}: give --features tables "
                         "that hold them for the queries of --run")
    return lists


def _load_letor(paths: list[Path], *, score_feature: int, threshold: float, ordering: str) -> Any:
    from rankcut.data.letor import load_letor
    from rankcut.data.lists import warn_if_nothing_relevant

    with _warnings_about(_files(paths)):
        lists = load_letor(paths, score_feature=score_feature, threshold=threshold, ordering=ordering)
        warn_if_nothing_relevant(lists)
        return lists


def cut(
    run: Annotated[Path, typer.Option("--run", help="TREC run to cut.", exists=True, dir_okay=False)],
    out: Annotated[Path, typer.Option("--out", help="Where to write the cut run (TREC format); its "
                                      "folder must exist, and it may not be an input file.",
                                      dir_okay=False)],
    cutter: Annotated[str | None, typer.Option("--cutter", help=f"Cutter spec NAME[:PARAM], e.g. greedy-k, "
                                               f"fixed-k:20; cutters: {_SPECS}.")] = None,
    model: Annotated[Path | None, typer.Option(
        "--model", help="A trained model folder of 'rankcut train', instead of --cutter.", exists=True,
        file_okay=False)] = None,
    features: Annotated[list[Path] | None, typer.Option(
        "--features", help="TSV table(s) of per-document features keyed by query_id and doc_id, for "
        "models that read them; repeat for several tables.", exists=True, dir_okay=False)] = None,
    train_run: Annotated[list[Path] | None, typer.Option(
        "--train-run", help="Training run(s) for cutters that learn (needs --qrels); repeat for "
        "several files.", exists=True, dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="Qrels: for fitting on --train-run, and for the oracle, which reads the "
        "labels of the run it cuts.", exists=True, dir_okay=False)] = None,
    threshold: Annotated[float, typer.Option("--threshold", help=_THRESHOLD_HELP + ".")] = 1.0,
    ordering: Annotated[str, typer.Option("--ordering", help=_ORDERING_HELP)] = "rank",
    missing: Annotated[str, typer.Option("--missing", help=_MISSING_HELP)] = "drop",
    tag: Annotated[str, typer.Option("--tag", help="Run tag written in the sixth column.")] = "rankcut",
) -> None:
    """Cut every list of a run where a cutter (or a trained model) says; write the kept prefixes.

    The output is a TREC run holding, per query, the documents kept."""
    with _user_errors():
        from rankcut.cutters import make_cutter
        from rankcut.data.lists import check_threshold
        from rankcut.data.trec import write_run

        train_run, features = train_run or [], features or []
        _choice(ordering, "ordering")
        _choice(missing, "missing")
        check_threshold(threshold, "--threshold")
        if (cutter is None) == (model is None):
            raise ValueError("give either --cutter (a cutter spec) or --model (a trained model folder)")
        inputs = {"--run": [run], "--train-run": train_run, "--qrels": [qrels] if qrels is not None else [],
                  "--features": features}
        if model is not None:
            if train_run or qrels is not None:
                raise ValueError(f"--model {model} is trained already: --train-run and --qrels go with "
                                 "--cutter")
            _check_output(out, "--out", inputs)
            method = _load_checkpoint(model)
            lists = _model_features(method, _load_runs([run], None, threshold=threshold, ordering=ordering,
                                                       missing=missing), features, model)
        else:
            assert cutter is not None
            method = make_cutter(cutter)
            _check_output(out, "--out", inputs)
            lists = _fit_and_load(method, cutter, run, train_run, qrels, features, threshold=threshold,
                                  ordering=ordering, missing=missing)
        cuts = method.predict(lists)
        write_run(out, lists, cuts, tag=tag)
        kept = int(cuts.sum())
        source = f", {method.name} from {model}" if model is not None else ""
        typer.echo(f"wrote {out}: {_count(len(lists), 'query', 'queries')}, "
                   f"{_count(kept, 'document', 'documents')} kept (mean k {float(cuts.mean()):.2f}{source}, "
                   f"ordering {ordering})")


def _fit_and_load(method: Any, spec: str, run: Path, train_run: list[Path], qrels: Path | None,
                  features: list[Path], **options: Any) -> Any:
    """Fit ``method`` on the training runs when it learns; return the lists of ``run`` to cut."""
    from rankcut.data.trec import read_qrels
    from rankcut.evaluation import READS_TEST_LABELS

    if train_run and qrels is None:
        raise ValueError("--train-run needs --qrels: fitting reads the training labels")
    if not train_run and method.requires_fit():
        raise ValueError(f"cutter {spec!r} learns from training lists: give --train-run and --qrels")
    reads_labels = method.name in READS_TEST_LABELS
    if reads_labels and qrels is None:
        raise ValueError(f"cutter {spec!r} reads the labels of the run it cuts: give --qrels")

    judged = read_qrels(qrels) if qrels is not None and (train_run or reads_labels) else None
    loaded = []
    if train_run:
        train = _attach_features(_load_runs(train_run, judged, **options), features)
        loaded.append(train)
        method.fit(train)
        learned = ", ".join(f"{k}={v}" for k, v in vars(method).items()
                            if k.endswith("_") and not k.startswith("_") and isinstance(v, int | float))
        typer.echo(f"{spec} fitted on {_count(len(train), 'training query', 'training queries')}"
                   + (f": {learned}" if learned else ""))
    # the cut never sees the labels of the run it cuts, except the oracle's
    lists = _attach_features(_load_runs([run], judged if reads_labels else None, **options), features)
    loaded.append(lists)
    if qrels is not None and judged is not None:
        _warn_unranked(qrels, judged, loaded, [run, *train_run])
    return lists


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
        "--cutters", help=f"Comma-separated cutter specs NAME[:PARAM], each listed once; cutters: "
        f"{_SPECS}.")] = DEFAULT_CUTTERS,
    model: Annotated[list[Path] | None, typer.Option(
        "--model", help="A trained model folder of 'rankcut train' to evaluate beside --cutters, as "
        "saved (not refitted); repeat for several. Its row is named by the folder as given.",
        exists=True, file_okay=False)] = None,
    features: Annotated[list[Path] | None, typer.Option(
        "--features", help="TSV table(s) of per-document features keyed by query_id and doc_id (e.g. "
        "Robust04's features/bm25.{train,test}.tsv), for --run and --train-run; repeat for several "
        "tables.", exists=True, dir_okay=False)] = None,
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
        "--threshold", help=_THRESHOLD_HELP + " (2 for TREC DL).")] = 1.0,
    ordering: Annotated[str, typer.Option("--ordering", help=_ORDERING_HELP)] = "rank",
    missing: Annotated[str, typer.Option("--missing", help=_MISSING_HELP)] = "drop",
    recall_base: Annotated[str, typer.Option(
        "--recall-base", help="Recall denominator: 'list' (relevant documents inside the list, "
        "AttnCut's Eq. 8) or 'judged' (all judged relevant).")] = "list",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the table as Markdown.")] = False,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write the distribution of cut-offs vs the oracle's (AttnCut's Figure 2) to "
        "this PNG (needs oracle among --cutters; its folder must exist).", dir_okay=False)] = None,
) -> None:
    """Compare cutters on held-out queries: F1@k, DCG@k and mean k per method (AttnCut's Table 3)."""
    with _user_errors():
        import json

        from rankcut.data.lists import check_threshold
        from rankcut.data.trec import read_qrels
        from rankcut.evaluation import check_specs, evaluate_cutters, format_table

        run, letor, train_run, train_letor = run or [], letor or [], train_run or [], train_letor or []
        models, features = model or [], features or []
        for value, what in [(ordering, "ordering"), (missing, "missing"), (test, "test"),
                            (fit_metric, "fit_metric"), (recall_base, "recall_base")]:
            _choice(value, what)
        check_threshold(threshold, "--threshold")
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
        labels = [str(p) for p in models]
        specs = check_specs(_cutter_specs(cutters), baseline=None if baseline in labels else baseline)
        if features and letor:
            raise ValueError("--features goes with --run; LETOR files carry their own features")
        for label in labels:
            if labels.count(label) > 1:
                raise ValueError(f"--model {label} is given twice")
            if label in specs:
                raise ValueError(f"--model {label} has the name of a cutter in --cutters: rename the folder")
        reference = next((s for s in specs if s.partition(":")[0].strip() == "oracle"), "")
        if plot is not None:
            if not reference:
                raise ValueError("--plot draws the cuts of each method against the oracle's: add oracle "
                                 "to --cutters")
            _check_output(plot, "--plot", {"--run": run, "--train-run": train_run, "--letor": letor,
                                           "--train-letor": train_letor,
                                           "--qrels": [qrels] if qrels is not None else []})
            try:
                import matplotlib.figure  # noqa: F401  (fail now, not after the evaluation)
            except ImportError:
                raise ImportError("--plot needs matplotlib: pip install 'rankcut[eval]'") from None
        train: Any = None
        if train_queries is not None:
            train = _query_ids(train_queries, "--train-queries")
        chosen = _query_ids(test_queries, "--test-queries") if test_queries is not None else None
        trained = {label: _load_checkpoint(p) for label, p in zip(labels, models, strict=True)}

        if letor:
            options: dict[str, Any] = {"score_feature": score_feature, "threshold": threshold,
                                       "ordering": ordering}
            lists = _load_letor(letor, **options)
            if train_letor:
                train = _load_letor(train_letor, **options)
        else:
            assert qrels is not None  # checked above
            judged = read_qrels(qrels)
            options = {"threshold": threshold, "ordering": ordering, "missing": missing}
            lists = _load_runs(run, judged, **options)
            loaded = [lists]
            if train_run:
                train = _load_runs(train_run, judged, **options)
                loaded.append(train)
            _warn_unranked(qrels, judged, loaded, [*run, *train_run])
            lists = _attach_features(lists, features)
            if train_run:
                train = _attach_features(train, features)
        _check_models(trained, lists, chosen, train)
        result = evaluate_cutters(
            specs, lists, train=train, test_queries=chosen,
            folds=folds, seed=seed, fit_metric=fit_metric, recall_base=recall_base,
            baseline=None if trained else baseline, test=test, alpha=alpha, progress=sys.stderr.isatty(),
        )
        if trained:
            result = _with_models(result, lists, trained, baseline=baseline, test=test, alpha=alpha,
                                  recall_base=recall_base)
        if plot is not None:
            from rankcut.plots import plot_cutoffs

            plot_cutoffs(result, plot, metric=result.metrics[0], reference=reference)
            typer.echo(f"wrote {plot}", err=True)
        if as_json:
            data = result.to_dict()
            data["inputs"] = {
                "run": [str(p) for p in run], "qrels": None if qrels is None else str(qrels),
                "letor": [str(p) for p in letor], "score_feature": score_feature if letor else None,
                "train_run": [str(p) for p in train_run], "train_letor": [str(p) for p in train_letor],
                "train_queries": train_queries, "test_queries": test_queries, "missing": missing,
                "cutters": specs, "models": labels, "features": [str(p) for p in features],
            }
            typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            typer.echo(format_table(result, markdown=markdown), nl=False)


def _check_models(trained: dict[str, Any], lists: Any, chosen: Any, train: Any) -> None:
    """Before evaluating: every ``--model`` finds its feature columns, and none was trained or
    validated on a query it would be evaluated on (its score there would be a training fit)."""
    from rankcut.nn.inputs import SCORE_COLUMNS

    held = set(train) if isinstance(train, tuple) else set()  # --train-queries: not evaluated
    evaluated = {q for q in lists.qids if (chosen is None or q in chosen) and q not in held}
    for label, method in trained.items():
        absent = [c for c in method.encoder_.columns
                  if c not in SCORE_COLUMNS and c not in lists.feature_names]
        if absent:
            raise ValueError(f"--model {label} reads the feature column(s) {absent}: give --features "
                             "tables that hold them")
        seen = sorted(evaluated & (set(method.train_qids_) | set(method.val_qids_)))
        if seen:
            shown = ", ".join(map(repr, seen[:_MAX_IDS_SHOWN]))
            raise ValueError(f"--model {label} was trained on {_count(len(seen), 'query', 'queries')} that "
                             f"would be evaluated ({shown}): evaluate it on other queries")


def _with_models(result: Any, lists: Any, trained: dict[str, Any], *, baseline: str | None, test: str,
                 alpha: float, recall_base: str) -> Any:
    """``result`` with a row per trained model: its cuts of the (unjudged) test lists, scored as
    :func:`rankcut.evaluation.evaluate_cutters` scores the others, and the significance tests
    against ``baseline`` redone over every method."""
    from dataclasses import replace

    from rankcut import metrics
    from rankcut.evaluation import READS_TEST_LABELS, MethodResult
    from rankcut.significance import paired_tests

    scored = lists.subset(result.qids)
    blind = replace(scored, gains=None, n_relevant=None)
    methods = dict(result.methods)
    for label, method in trained.items():
        cuts = method.predict(blind)
        fitted = {"fold": -1, "best_epoch_": method.best_epoch_, "val_metric_": method.val_metric_}
        methods[label] = MethodResult(
            method=label,
            cuts={m: cuts for m in result.metrics},
            scores={m: metrics.score_at(scored, cuts, m, recall_base=recall_base, allow_zero=True)
                    for m in result.metrics},
            fitted={m: [fitted] for m in result.metrics},
            params={m: method.get_params() for m in result.metrics},
        )
    tests = {}
    if baseline is not None:
        base = baseline.strip()
        compared = [s for s in methods if s == base or s in trained
                    or s.partition(":")[0].strip() not in READS_TEST_LABELS]
        if len(compared) > 1:
            tests = {m: paired_tests({s: methods[s].scores[m] for s in compared}, base, test=test,
                                     alpha=alpha)
                     for m in result.metrics}
    tested = baseline is not None
    protocol = {**result.protocol, "baseline": baseline.strip() if baseline is not None else None,
                "test": test if tested else None, "alpha": alpha if tested else None}
    fitted_for = ", ".join(f"{label}: {method.metric}" for label, method in trained.items())
    protocol["description"] += (f"; {_count(len(trained), 'trained model', 'trained models')} (--model) "
                                f"cut as saved, not refitted, one cut per model scored in every column "
                                f"(trained for {fitted_for})")
    return replace(result, methods=methods, tests=tests, protocol=protocol)
