"""What the commands that read runs (``cut``, ``evaluate``, ``train``) share: option help and
choices, run loading with warnings that name the files, and output checks.

The choices and defaults are the library's (:mod:`rankcut.data.lists`, :mod:`rankcut.data.trec`,
:mod:`rankcut.metrics`, :mod:`rankcut.significance`); data modules are imported inside the
functions, so that ``rankcut --help`` stays fast.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from rankcut._util import warnings_about
from rankcut._words import count, id_list
from rankcut.data.lists import ORDERINGS, top_grade
from rankcut.data.trec import MISSING_POLICIES, load_trec
from rankcut.metrics import METRICS, RECALL_BASES

__all__ = ["CHOICES", "MISSING", "ORDERING", "THRESHOLD_HELP", "Missing", "Ordering", "check_output",
           "choice", "count", "files", "load_runs", "warn_unranked", "warnings_about"]

_ORDERING_HELP = ("Tie rule: 'rank' (score, then the run's rank order, then doc_id descending) or "
                  "'trec_eval' (score as a 32-bit float, as trec_eval stores it, then doc_id descending).")
_MISSING_HELP = ("Run queries absent from the qrels: 'drop' (trec_eval's convention, right for full "
                 "qrels), 'keep' (no relevant document; right for positives-only qrels such as "
                 "Robust04's, where query 672 has none), or 'error'.")
THRESHOLD_HELP = ("Relevance at or above which a document counts as relevant: a number > 0, since "
                  "unjudged documents count as relevance 0")
#: the ``--ordering`` and ``--missing`` options of the commands that read runs, and their defaults:
#: those of :func:`rankcut.data.trec.load_trec`
Ordering = Annotated[str, typer.Option("--ordering", help=_ORDERING_HELP)]
Missing = Annotated[str, typer.Option("--missing", help=_MISSING_HELP)]
ORDERING: str = inspect.signature(load_trec).parameters["ordering"].default
MISSING: str = inspect.signature(load_trec).parameters["missing"].default
#: the values of the options that take a choice
CHOICES: dict[str, tuple[str, ...]] = {
    "ordering": ORDERINGS,
    "missing": MISSING_POLICIES,
    "test": ("wilcoxon", "ttest"),
    "fit_metric": ("each", *METRICS),
    "recall_base": RECALL_BASES,
}
#: the most query ids a message lists
MAX_IDS_SHOWN = 10


def files(paths: list[Path]) -> str:
    """The paths, each once (a file given as both --train-run and --run is one file)."""
    return ", ".join(dict.fromkeys(map(str, paths)))


def choice(value: str, what: str) -> str:
    """``value`` if it is one of :data:`CHOICES` ``[what]``, else ValueError naming the option."""
    if value not in CHOICES[what]:
        raise ValueError(f"--{what.replace('_', '-')} must be one of {', '.join(CHOICES[what])}, "
                         f"got {value!r}")
    return value


def check_output(path: Path, option: str, inputs: dict[str, list[Path]]) -> None:
    """Before any work: the folder of ``path`` must exist (it is not created), and ``path`` must
    not be one of the input files, nor lie in an input folder (a trained model's): rankcut never
    overwrites its input."""
    folder = path.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ValueError(f"{option} {path}: output folder {folder} {what}")
    for name, paths in inputs.items():
        for given in paths:
            if given.is_dir() and folder.resolve().is_relative_to(given.resolve()):
                raise ValueError(f"{option} {path} is in the input folder {name} {given}: writing there "
                                 "would change it; choose a file elsewhere")
            if path.exists() and given.exists() and os.path.samefile(path, given):
                raise ValueError(f"{option} {path} is the input file {name} {given}: writing there "
                                 "would overwrite it; choose another file")


def _read_runs(paths: list[Path]) -> Any:
    """Read and merge run files (as columns); a query may appear in one file only."""
    from rankcut.data.lists import concat_columns
    from rankcut.data.trec import read_run_columns

    parts = []
    origin: dict[str, Path] = {}
    for path in paths:
        try:
            part = read_run_columns(path)
        except MemoryError:
            part = None  # measured below, once the partial run is freed
        if part is None:
            raise MemoryError(f"ran out of memory reading {_lines(path)} of {path}")
        for qid in part.qids:
            if qid in origin:
                raise ValueError(f"query {qid!r} is in both {origin[qid]} and {path}")
            origin[qid] = path
        parts.append(part)
    return concat_columns(parts)


def _lines(path: Path) -> str:
    """``"100,000,000 lines, 4.1 GB"``: the size of a file, counted in one streaming pass (what a
    reader that ran out of memory could not hold)."""
    import gzip

    lines = 0
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            lines += block.count(b"\n")
    size = path.stat().st_size
    shown = f"{size / 1e9:.1f} GB" if size >= 10**8 else f"{size / 1e6:.1f} MB" if size >= 10**5 \
        else f"{size:,} bytes"
    return f"{lines:,} lines, {shown}"


#: ``--score-feature`` of the commands that read LETOR files (``--letor``)
ScoreFeature = Annotated[int, typer.Option(
    "--score-feature", help="LETOR feature that ranks the documents (25: BM25 on the whole document in "
    "LETOR 4.0).")]
SCORE_FEATURE = 25


def load_letors(paths: list[Path], *, score_feature: int, threshold: float, ordering: str) -> Any:
    """Lists of LETOR/SVMlight files (labels and features inside); warnings name the files."""
    from rankcut.data.letor import load_letor
    from rankcut.data.lists import warn_if_nothing_relevant

    with warnings_about(files(paths)):
        lists = load_letor(paths, score_feature=score_feature, threshold=threshold, ordering=ordering)
        warn_if_nothing_relevant(lists)
        return lists


def load_runs(paths: list[Path], judged: dict[str, Any] | None, *, threshold: float, ordering: str,
              missing: str, queries: set[str] | None = None, unjudged_hint: str = "") -> Any:
    """Lists of the run files, judged by the queries of ``judged`` that they contain; warnings
    and errors name the files. ``queries``, when given, is filled with every query of the files,
    those ``missing="drop"`` drops included (a file is read once: it may be a pipe).
    ``unjudged_hint`` ends the refusal of files none of whose queries ``judged`` holds."""
    from rankcut.data.trec import load_trec

    run = _read_runs(paths)  # its errors name file and line
    if queries is not None:
        queries.update(run.qids)
    qrels = None if judged is None else {q: judged[q] for q in run.qids if q in judged}
    if judged is not None and not qrels:   # said before the warnings of every query dropped
        from rankcut.data.trec import no_query_judged

        raise ValueError(f"{files(paths)}: {no_query_judged(run.qids, judged)}{unjudged_hint}")
    with warnings_about(files(paths)):
        try:
            return load_trec(run, qrels, threshold=threshold, ordering=ordering, missing=missing)
        except ValueError as exc:
            raise ValueError(f"{files(paths)}: {exc}") from None
        except MemoryError as exc:
            size = (f"{count(len(run), 'query', 'queries')}, "
                    f"{count(run.n_rows, 'document', 'documents')}")
            raise MemoryError(f"ran out of memory building the ranked lists of {files(paths)} ({size})"
                              + (f": {exc}" if str(exc) else "")) from None


#: ``--train-qrels``: the qrels of the training runs, where they are not ``--qrels``.
TRAIN_QRELS_HELP = ("Qrels of --train-run where they are another file than --qrels (TREC DL 2019's "
                    "for a run trained on DL 2019 and tested on DL 2020); default --qrels.")

#: ``load_runs``' hint for training runs that ``--qrels`` does not judge.
TRAIN_QRELS_HINT = "; if --train-run is judged in a qrels file of its own, give it as --train-qrels"


def chosen(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` was given (on the command line or from the environment), not
    left at its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def note_grades(ctx: typer.Context, qrels: Path, judged: Mapping[str, Mapping[str, int]],
                threshold: float) -> None:
    """Say on stderr which grade counts as relevant when the qrels grade relevance above 1 and
    ``--threshold`` was left at its default: TREC DL's binary measures count grade ≥ 2, Robust04's
    ≥ 1, and every score, model and certificate depends on the choice, which was made without a
    word before."""
    if chosen(ctx, "threshold"):   # the user chose
        return
    top = top_grade(judged)
    if top > 1:
        typer.echo(f"note: {qrels} grades relevance up to {top}; grade ≥ {threshold:g} counts as relevant "
                   "(the default --threshold; TREC DL's binary measures count grade ≥ 2): give --threshold "
                   "to choose", err=True)


def warn_unranked(qrels: Path, judged: dict[str, Any], loaded: list[Any], runs: list[Path]) -> None:
    """One warning for the qrels queries that no run holds (they are ignored)."""
    from rankcut.data.trec import MissingQueriesWarning

    have = {q for lists in loaded for q in lists.qids}
    unranked = [q for q in judged if q not in have]
    if unranked:
        verb = "is" if len(unranked) == 1 else "are"
        warnings.warn(f"{qrels}: {count(len(unranked), 'query', 'queries')} {verb} in no run "
                      f"({files(runs)}) and {verb} ignored: {id_list(unranked, MAX_IDS_SHOWN)}",
                      MissingQueriesWarning, stacklevel=2)
