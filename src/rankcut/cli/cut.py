"""``rankcut cut``: apply a cutter (or a model of ``rankcut train``) to a run and write the kept
prefixes.

Every option is checked before any file is loaded or any cutter fitted: the cutter spec, the
relevance threshold, and the output file (its folder must exist; it may not be one of the inputs).
The cutter registry is imported with this module, so that the help of ``--cutter`` lists the
registered cutters.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from rankcut._words import id_list
from rankcut.cli import _shards
from rankcut.cli._common import (
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
from rankcut.cli._errors import input_errors, stdout_aside
from rankcut.cutters.base import spec_forms

__all__ = ["cut"]

_SPECS = ", ".join(spec_forms())
#: library parameters that the messages of this command name by their flags
FLAGS = ("threshold", "features", "score_feature")


def cut(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Where to write the cut run (TREC format, or Parquet "
                                      "when it ends in .parquet); its folder must exist, and it may "
                                      "not be an input file.",
                                      dir_okay=False)],
    run: Annotated[Path | None, typer.Option("--run", help="TREC run to cut (.gz read transparently; "
                                             "Parquet when it ends in .parquet).", exists=True,
                                             dir_okay=False)] = None,
    letor: Annotated[Path | None, typer.Option(
        "--letor", help="A LETOR/SVMlight file to cut instead of --run (features inside; the oracle reads "
        "its labels, nothing else does); the cut run names each document by its '#docid'.", exists=True,
        dir_okay=False)] = None,
    train_letor: Annotated[list[Path] | None, typer.Option(
        "--train-letor", help="LETOR training file(s) for cutters that learn, with --letor.", exists=True,
        dir_okay=False)] = None,
    score_feature: ScoreFeature = SCORE_FEATURE,
    cutter: Annotated[str | None, typer.Option("--cutter", help=f"Cutter spec NAME[:PARAM], e.g. greedy-k, "
                                               f"fixed-k:20; cutters: {_SPECS}.")] = None,
    model: Annotated[Path | None, typer.Option(
        "--model", help="A trained model folder of 'rankcut train', instead of --cutter.", exists=True,
        file_okay=False)] = None,
    features: Annotated[list[Path] | None, typer.Option(
        "--features", help="TSV table(s) of per-document features keyed by query_id and doc_id, for "
        "models that read them; repeat for several tables.", exists=True, dir_okay=False)] = None,
    train_run: Annotated[list[Path] | None, typer.Option(
        "--train-run", help="Training run(s) for cutters that learn (needs --qrels or --train-qrels); "
        "repeat for several files.", exists=True, dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option(
        "--qrels", help="Qrels: for fitting on --train-run (unless --train-qrels), and for the oracle, "
        "which reads the labels of the run it cuts.", exists=True, dir_okay=False)] = None,
    train_qrels: Annotated[Path | None, typer.Option(
        "--train-qrels", help=TRAIN_QRELS_HELP, exists=True, dir_okay=False)] = None,
    threshold: Annotated[float, typer.Option("--threshold", help=THRESHOLD_HELP + ".")] = 1.0,
    ordering: Ordering = ORDERING,
    missing: Missing = MISSING,
    recall_base: Annotated[str | None, typer.Option(
        "--recall-base", help="For a cutter fitted on recall (greedy-k's F1): 'list' (relevant documents "
        "inside the list, the default, AttnCut's Eq. 8) or 'judged' (all judged relevant), as evaluate's "
        "--recall-base.")] = None,
    tag: Annotated[str, typer.Option("--tag", help="Run tag written in the sixth column.")] = "rankcut",
    shards: _shards.Shards = None,
    ray: _shards.Ray = None,
) -> None:
    """Cut every list of a run where a cutter (or a trained model) says; write the kept prefixes.

    The output is a TREC run holding, per query, the documents kept. With --shards and --ray the
    lists are cut in shards of queries on Ray workers (a learning cutter is fitted once, here);
    the file written is the same."""
    with input_errors(FLAGS), stdout_aside(out):   # --out /dev/stdout: the run alone there
        from rankcut.cutters import make_cutter
        from rankcut.data.lists import check_threshold
        from rankcut.data.trec import write_run
        from rankcut.parallel import predict_sharded

        train_run, features, train_letor = train_run or [], features or [], train_letor or []
        if (run is None) == (letor is None):
            raise ValueError("give the lists to cut either as --run or as --letor")
        if letor is not None and (train_run or qrels is not None or train_qrels is not None or features):
            raise ValueError("--train-run, --qrels, --train-qrels and --features go with --run; LETOR files "
                             "carry their labels and features (train on --train-letor)")
        if train_qrels is not None and not train_run:
            raise ValueError("--train-qrels goes with --train-run: it holds the training run's qrels")
        if train_letor and letor is None:
            raise ValueError("--train-letor goes with --letor")
        choice(ordering, "ordering")
        choice(missing, "missing")
        if recall_base is not None:
            choice(recall_base, "recall_base")
        check_threshold(threshold)
        _shards.check(shards, ray)
        if (cutter is None) == (model is None):
            raise ValueError("give either --cutter (a cutter spec) or --model (a trained model folder)")
        method: Any
        inputs = {"--run": [run] if run is not None else [], "--letor": [letor] if letor is not None else [],
                  "--train-run": train_run, "--train-letor": train_letor,
                  "--qrels": [qrels] if qrels is not None else [],
                  "--train-qrels": [train_qrels] if train_qrels is not None else [], "--features": features,
                  "--model": [model] if model is not None else []}
        letors: dict[str, Any] = {"score_feature": score_feature, "threshold": threshold,
                                  "ordering": ordering}
        if model is not None:
            if train_run or train_letor or qrels is not None or train_qrels is not None \
                    or recall_base is not None:
                raise ValueError(f"--model {model} is trained already: --train-run, --train-letor, --qrels, "
                                 "--train-qrels and --recall-base go with --cutter")
            check_output(out, "--out", inputs)
            from rankcut.cutters.checkpoint import load_checkpoint  # torch: only for --model
            from rankcut.evaluation import trained_otherwise

            method = load_checkpoint(model)
            if letor is not None:
                given = load_letors([letor], **letors).blind()
            else:
                assert run is not None   # checked above
                given = load_runs([run], None, threshold=threshold, ordering=ordering, missing=missing)
            lists = _model_features(method, given, features, model)
            for said in trained_otherwise(method, lists, None):
                warnings.warn(f"--model {model} {said}", UserWarning, stacklevel=2)
        else:
            assert cutter is not None
            method = make_cutter(cutter)
            if recall_base is not None:   # evaluate --recall-base judged fits greedy-k so; cut could not
                if "recall_base" not in method.get_params():
                    raise ValueError(f"--recall-base is for a cutter fitted on recall, not {cutter!r}")
                method = make_cutter(cutter, recall_base=recall_base)
            check_output(out, "--out", inputs)
            if letor is not None:
                lists = _fit_and_load_letor(method, cutter, letor, train_letor, **letors)
            else:
                assert run is not None   # checked above
                lists = _fit_and_load(ctx, method, cutter, run, train_run, qrels, train_qrels, features,
                                      threshold=threshold, ordering=ordering, missing=missing)
        with _shards.runner(shards, ray) as (where, n_shards):
            cuts = predict_sharded(method, lists, shards=n_shards, runner=where)
        write_run(out, lists, cuts, tag=tag)
        kept = int(cuts.sum())
        source = f", {method.name} from {model}" if model is not None else ""
        written = "the cut run to stdout" if str(out) == "-" else out   # "wrote -:" (the re-walk)
        typer.echo(f"wrote {written}: {count(len(lists), 'query', 'queries')}, "
                   f"{count(kept, 'document', 'documents')} kept (mean k {float(cuts.mean()):.2f}{source}, "
                   f"ordering {ordering})")


def _model_features(model: Any, lists: Any, paths: list[Path], where: Path) -> Any:
    """``lists`` with the feature columns ``model`` reads, from the ``--features`` tables."""
    from rankcut.data.features import attach_feature_tables

    needed = model.feature_columns()
    lists = attach_feature_tables(lists, paths, set(needed))
    absent = [c for c in needed if c not in lists.feature_names]
    if absent:
        raise ValueError(f"--model {where} reads the feature column(s) {absent}: give --features tables "
                         "that hold them for the queries of --run")
    return lists


def _fit(method: Any, spec: str, train: Any) -> None:
    """Fit ``method`` on the training lists and say on what, with what it learned."""
    method.fit(train)
    learned = {k: v for k, v in vars(method).items()
               if k.endswith("_") and not k.startswith("_") and isinstance(v, int | float)}
    said = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in learned.items())
    if "score_" in learned:   # greedy-k's and surprise's: the mean training metric of their choice
        said += f" (score_: the mean {method.get_params().get('metric', 'metric')} on the training queries)"
    typer.echo(f"{spec} fitted on {count(len(train), 'training query', 'training queries')}"
               + (f": {said}" if said else ""))


def _fit_and_load_letor(method: Any, spec: str, letor: Path, train_letor: list[Path], **options: Any) -> Any:
    """As :func:`_fit_and_load`, for LETOR files: fit ``method`` on ``train_letor`` when it learns;
    the lists of ``letor`` to cut, their labels kept for the oracle only."""
    from rankcut.evaluation import READS_TEST_LABELS

    if train_letor and not method.requires_fit():
        raise ValueError(f"--train-letor is not read: {spec!r} learns nothing from training lists")
    if not train_letor and method.requires_fit():
        raise ValueError(f"cutter {spec!r} learns from training lists: give --train-letor")
    train = load_letors(train_letor, **options) if train_letor else None
    if train is not None:
        _fit(method, spec, train)
    lists = load_letors([letor], **options)
    _warn_shared(method, train, lists, "--train-letor", "--letor")
    return lists if method.name in READS_TEST_LABELS else lists.blind()


def _warn_shared(method: Any, train: Any, lists: Any, train_option: str, option: str) -> None:
    """Warn where a learning cutter was fitted on queries it cuts (evaluate refuses such a split)."""
    trained_on = set(train.qids) if train is not None and method.requires_fit() else set()   # fixed-k: none
    if shared := [q for q in lists.qids if q in trained_on]:
        shown = id_list(shared)
        warnings.warn(f"{train_option} holds {len(shared)} of the {len(lists)} queries of {option} "
                      f"({shown}): their cut was fitted on their own labels, so a score of it from those "
                      "labels is optimistic (evaluate refuses such a split)", stacklevel=3)


def _fit_and_load(ctx: typer.Context, method: Any, spec: str, run: Path, train_run: list[Path],
                  qrels: Path | None, train_qrels: Path | None, features: list[Path], **options: Any) -> Any:
    """Fit ``method`` on the training runs (judged by ``train_qrels``, else ``qrels``) when it
    learns; return the lists of ``run`` to cut."""
    from rankcut.data.features import attach_feature_tables
    from rankcut.data.trec import read_qrels
    from rankcut.evaluation import READS_TEST_LABELS

    if train_run and qrels is None and train_qrels is None:
        raise ValueError("--train-run needs --qrels (or --train-qrels): fitting reads the training labels")
    if not train_run and method.requires_fit():
        raise ValueError(f"cutter {spec!r} learns from training lists: give --train-run and its qrels")
    if train_run and not method.requires_fit():   # it said "fixed-k:10 fitted on 43 training queries"
        raise ValueError(f"--train-run is not read: {spec!r} learns nothing from training lists")
    reads_labels = method.name in READS_TEST_LABELS
    if reads_labels and qrels is None:
        raise ValueError(f"cutter {spec!r} reads the labels of the run it cuts: give --qrels")
    if qrels is not None and train_qrels is not None and not reads_labels:
        raise ValueError(f"--qrels is not read: {spec!r} is fitted on --train-qrels and reads no labels of "
                         "the run it cuts (only the oracle does)")

    train_source = train_qrels if train_qrels is not None else qrels
    wanted = [*([train_source] if train_run else []), *([qrels] if reads_labels else [])]
    read = {path: read_qrels(path) for path in dict.fromkeys(wanted) if path is not None}
    for path, judged in read.items():
        note_grades(ctx, path, judged, options["threshold"])
    train = None
    if train_run:
        assert train_source is not None   # checked above
        hint = "" if train_qrels is not None else TRAIN_QRELS_HINT
        train = load_runs(train_run, read[train_source], **options, unjudged_hint=hint)
        train = attach_feature_tables(train, features)
        _fit(method, spec, train)
    # the cut never sees the labels of the run it cuts, except the oracle's
    lists = load_runs([run], read[qrels] if reads_labels and qrels else None, **options)
    lists = attach_feature_tables(lists, features)
    _warn_shared(method, train, lists, "--train-run", "--run")
    for path, judged in read.items():   # a qrels query in no run is ignored: said once a file
        warn_unranked(path, judged, [*([train] if train is not None else []), lists], [run, *train_run])
    return lists
