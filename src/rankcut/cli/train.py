"""``rankcut train``: fit a neural truncation model on a judged run (or LETOR files, labels and
features inside) and save it as a checkpoint folder (``config.json`` + ``model.safetensors`` +
``README.md``) for ``rankcut cut --model`` and ``rankcut evaluate --model``.

Every option is checked before any file is read; torch is imported inside the command only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rankcut._progress import show_progress
from rankcut.cli._common import (
    MISSING,
    ORDERING,
    SCORE_FEATURE,
    THRESHOLD_HELP,
    Missing,
    Ordering,
    ScoreFeature,
    choice,
    count,
    load_letors,
    load_runs,
    note_grades,
    warn_unranked,
)
from rankcut.cli._errors import input_errors
from rankcut.cutters.attncut import LOSSES
from rankcut.cutters.neural import neural_cutters
from rankcut.cutters.recall_constrained import SIGMA
from rankcut.metrics import METRICS
from rankcut.nn.options import METRIC, RECALL_BASE, TRAINING_DEFAULTS

#: the models ``rankcut train`` fits: registry names of the neural cutters
MODELS: tuple[str, ...] = neural_cutters()
#: library parameters that the messages of this command name by their flags: the cutter keywords
#: set by an option of the same name, the threshold and the feature tables
FLAGS = ("loss", "sigma", "epochs", "batch_size", "lr", "patience", "val_fraction", "seed", "precision",
         "threshold", "features", "score_feature")
_DEFAULT = TRAINING_DEFAULTS

__all__ = ["MODELS", "train"]


def _check_folder(out: Path, overwrite: bool) -> None:
    """The checkpoint folder, before training: its parent must exist; an existing one needs
    --overwrite and must be a checkpoint or empty (no other folder is ever replaced)."""
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise ValueError(f"--out {out}: folder {out.parent} {what}")
    if not out.exists():
        return
    if not overwrite:
        raise ValueError(f"--out {out} exists: choose another folder or pass --overwrite")
    if not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a checkpoint folder")
    from rankcut.cutters.checkpoint import is_checkpoint

    if not is_checkpoint(out) and any(out.iterdir()):
        raise ValueError(f"--out {out} is neither a rankcut checkpoint nor empty: it is not overwritten")


def train(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option("--out", help="Checkpoint folder to create (its parent must exist).",
                                      file_okay=False)],
    run: Annotated[list[Path] | None, typer.Option(
        "--run", help="Training run(s) in TREC format; repeat to merge files.", exists=True,
        dir_okay=False)] = None,
    qrels: Annotated[Path | None, typer.Option("--qrels", help="Qrels judging the training run(s).",
                                               exists=True, dir_okay=False)] = None,
    letor: Annotated[list[Path] | None, typer.Option(
        "--letor", help="LETOR/SVMlight training file(s) instead of --run/--qrels (labels and features "
        "inside, e.g. MQ2008's S1-S3); repeat for several partitions.", exists=True,
        dir_okay=False)] = None,
    score_feature: ScoreFeature = SCORE_FEATURE,
    features: Annotated[list[Path] | None, typer.Option(
        "--features", help="TSV table(s) of per-document features keyed by query_id and doc_id (e.g. "
        "Robust04's features/bm25.train.tsv); every other column becomes an input. Repeat for several "
        "tables.", exists=True, dir_okay=False)] = None,
    model: Annotated[str, typer.Option(
        "--model", help=f"Model to train: {', '.join(MODELS)}.")] = "attncut",
    loss: Annotated[str | None, typer.Option(
        "--loss", help="AttnCut's objective: raml (Eq. 6, default), mle (Eq. 5), bi (BiCut's cost) or "
        "rl (REINFORCE); --model attncut only.")] = None,
    metric: Annotated[str, typer.Option(
        "--metric", help="Metric to optimise and to choose the epoch on: f1 (Eq. 8), dcg (±1-DCG, "
        "Eq. 9), precision or recall.")] = METRIC,
    sigma: Annotated[float | None, typer.Option(
        "--sigma", help=f"Minimal recall in [0, 1] (--model attncut-rc only; default "
        f"{SIGMA}).")] = None,
    epochs: Annotated[int | None, typer.Option(
        "--epochs", help=f"Most epochs (default {_DEFAULT['epochs']}).")] = None,
    batch_size: Annotated[int | None, typer.Option(
        "--batch-size", help=f"Lists per update (default {_DEFAULT['batch_size']}).")] = None,
    lr: Annotated[float | None, typer.Option(
        "--lr", help=f"Adam's learning rate (default {_DEFAULT['lr']}).")] = None,
    patience: Annotated[int | None, typer.Option(
        "--patience", help="Stop after this many epochs without a better validation metric "
        f"(default {_DEFAULT['patience']}).")] = None,
    val_fraction: Annotated[float | None, typer.Option(
        "--val-fraction", help="Share of the training queries held out to choose the epoch "
        f"(default {_DEFAULT['val_fraction']}).")] = None,
    seed: Annotated[int, typer.Option(
        "--seed", help="Seed of the weights, the validation split, the batch order, dropout and RL's "
        "sampled cuts (each its own stream).")] = _DEFAULT["seed"],
    precision: Annotated[str, typer.Option(
        "--precision", help="fp32 (default: the same weights on every machine), bf16 (bfloat16 autocast "
        "with float32 weights, about twice as fast on a CPU with AMX) or auto (bf16 where the CPU has "
        "AMX, else fp32). Saved with the model; fp32 and bf16 predict in the precision they trained "
        "in, auto decides again on the machine that predicts.")] = _DEFAULT["precision"],
    recall_base: Annotated[str, typer.Option(
        "--recall-base", help="Recall denominator: 'list' (relevant documents inside the list, AttnCut's "
        "Eq. 7) or 'judged' (all judged relevant).")] = RECALL_BASE,
    threshold: Annotated[float, typer.Option("--threshold", help=THRESHOLD_HELP + ".")] = 1.0,
    ordering: Ordering = ORDERING,
    missing: Missing = MISSING,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace --out if it is an existing checkpoint.")] = False,
) -> None:
    """Train a neural truncation model (AttnCut, BiCut, Choppy) and save it as a checkpoint folder."""
    with input_errors(FLAGS, keywords=("val_fraction",)):   # an option of train's alone
        from rankcut.data.lists import check_threshold

        if bool(run) == bool(letor):
            raise ValueError("give the training lists either as --run with --qrels or as --letor")
        if run and qrels is None:
            raise ValueError("--run needs --qrels: training reads the labels")
        if letor and (qrels is not None or features):
            raise ValueError("--qrels and --features go with --run; LETOR files carry their labels and "
                             "features")
        choice(ordering, "ordering")
        choice(missing, "missing")
        choice(recall_base, "recall_base")
        check_threshold(threshold)
        if model not in MODELS:
            raise ValueError(f"--model must be one of {', '.join(MODELS)}, got {model!r}")
        if metric not in METRICS:
            raise ValueError(f"--metric must be one of {', '.join(METRICS)}, got {metric!r}")
        if loss is not None and model != "attncut":
            raise ValueError(f"--loss applies to --model attncut, not {model}")
        if loss is not None and loss not in LOSSES:
            raise ValueError(f"--loss must be one of {', '.join(LOSSES)}, got {loss!r}")
        if sigma is not None and model != "attncut-rc":
            raise ValueError(f"--sigma applies to --model attncut-rc, not {model}")
        _check_folder(out, overwrite)  # an input file given as --out is refused there (not a folder)

        given: dict[str, Any] = {"loss": loss, "sigma": sigma, "epochs": epochs, "batch_size": batch_size,
                                 "lr": lr, "patience": patience, "val_fraction": val_fraction}
        params = {k: v for k, v in given.items() if v is not None}
        params.update(metric=metric, recall_base=recall_base, seed=seed, precision=precision,
                      progress=show_progress())
        from rankcut.cutters.base import cutter_class
        from rankcut.cutters.neural import NeuralCutter

        cutter = cutter_class(model)(**params)
        assert isinstance(cutter, NeuralCutter)
        cutter._validate_params()  # its ParamErrors name the options (FLAGS)

        from rankcut.data.features import attach_feature_tables
        from rankcut.data.trec import read_qrels

        if letor:
            lists = load_letors(letor, score_feature=score_feature, threshold=threshold, ordering=ordering)
        else:
            assert run and qrels is not None   # checked above
            judged = read_qrels(qrels)
            note_grades(ctx, qrels, judged, threshold)
            lists = load_runs(list(run), judged, threshold=threshold, ordering=ordering, missing=missing)
            warn_unranked(qrels, judged, [lists], list(run))
            lists = attach_feature_tables(lists, list(features or []))
        cutter.fit(lists)
        cutter.save(out, overwrite=overwrite)
        n_val, history = len(cutter.val_qids_), cutter.history_
        seconds = sum(e["seconds"] for e in history)
        typer.echo(f"wrote {out}: {model} trained on {count(len(lists) - n_val, 'query', 'queries')}, "
                   f"{n_val} held out for validation; epoch {cutter.best_epoch_} of {len(history)} chosen "
                   f"({seconds:.0f} s), validation {metric} {cutter.val_metric_:.4f}")
        typer.echo(f"use it: rankcut cut --model {out} "
                   + (f"--letor FILE --score-feature {score_feature}" if letor else "--run RUN")
                   + " --out CUT.run" + (" --features TABLE.tsv" if features else ""))

