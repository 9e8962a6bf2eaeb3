"""``rankcut review``: screen records with active learning and stop with a certificate (issue 17).

::

    rankcut review start    records.csv --folder REVIEW [--target-recall 0.95] [--seed 7]
                            [--prior-relevant ID,...]
    rankcut review next     --folder REVIEW [--batch N --out batch.csv]   # the record(s) to read now, why
    rankcut review label    --folder REVIEW (--from labels.csv | --interactive
                                             | --simulate (--records records.csv | --qrels Q))
    rankcut review status   --folder REVIEW
    rankcut review certify  --folder REVIEW [--json]
    rankcut review report   --folder REVIEW --out report.html [--json]
    rankcut review export   --folder REVIEW --out labels.csv [--relevant]
    rankcut review correct  --folder REVIEW --into REVIEW2 --relabel ID=LABEL [--relabel ...]
    rankcut review read-on  --folder REVIEW     # once met: the ranker's next picks too, each counted
    rankcut review simulate records.csv --folder REVIEW --seed 7

A review is an audit folder of the ``interleaved`` design whose screener is the CAL ranker
(:mod:`rankcut.review.session`); each command translates to ``rankcut audit``'s workflow. A
refusal is one ``error: ...`` line naming the file, line or option, exit status 2.
"""

from __future__ import annotations

import functools
import json
import shlex
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer

from rankcut._progress import bars, show_progress
from rankcut.cli._errors import confidence_delta, fail, option_names, say_warnings, stdout_aside, user_errors
from rankcut.cli._interleaved import policy_option, prior_basis_option, said_read_on
from rankcut.cli.audit import _echo_json, spoken_as_options

app = typer.Typer(help="Screen records with active learning and stop with a certificate: start → next → "
                       "label → status → certify → report (→ export).\n\nThe review asks for two kinds of "
                       "record: screening reads the ranker's best guess of a relevant one; audit reads the "
                       "next record of a random order frozen at start, and those random reads are what "
                       "lets the certificate say how many relevant records can still be unread. Label "
                       "both kinds the same way.", no_args_is_help=True)

F = TypeVar("F", bound=Callable[..., Any])

OPTIONS = option_names(
    ("target_recall", "delta", "seed", "policy", "texts", "qrels", "threshold", "interactive", "prior_basis",
     "query"),
    from_file="--from", limit="--next", ahead="--batch", label="rankcut review label",
    status="rankcut review status", certify="rankcut review certify", freeze="rankcut review start",
    correct="rankcut review correct", label_column="--label-column",
    report="rankcut review report", start_again="start a new review (rankcut review start)",
) | {"--run": "the review's records", "--texts": "the review's texts"}   # the inputs start froze
FORMATS = ("csv", "tsv", "ris", "trec")
# the modules of the extra ``review``: the ranker (scikit-learn, threadpoolctl) and RIS records (rispy)
REVIEW_EXTRA = ("sklearn", "threadpoolctl", "rispy")

FOLDER = typer.Option(..., "--folder", help="The review folder (made by start).")
JSON = typer.Option(False, "--json", help="Print the result as JSON.")
THRESHOLD = typer.Option(1.0, "--threshold", help="--qrels: the grade counted as relevant (TREC DL: 2).")


def _fail_cleanly(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from rankcut.audit.designs.interleaved import one_replay

        # one replay of the review a command (label, then its status), not one a step of it
        with user_errors(("threshold",)), spoken_as_options(OPTIONS), one_replay():
            try:
                return fn(*args, **kwargs)
            except ModuleNotFoundError as err:
                if (err.name or "").split(".")[0] not in REVIEW_EXTRA:
                    raise      # not a package of the extra: a fault to show, not an install to ask for
                fail(f"rankcut review needs the extra 'review' (pip install 'rankcut[review]'): {err}")

    return wrapper  # type: ignore[return-value]


def _records(path: Path, fmt: str | None, texts: Path | None, label_column: str | None,
             qrels: Path | None = None, query: str | None = None, name: str | None = None,
             threshold: float = 1) -> Any:
    """The records of ``path`` in ``fmt`` (default: from its name; ``trec``: a run with ``--texts``,
    relevant where ``qrels`` grade them at least ``threshold``, called by its query), called ``name``
    (default: the file's name without its suffixes)."""
    from rankcut.review.records import load_records, load_trec_records

    if name is not None and not name.strip():
        raise ValueError("--name must name the review (it is empty): leave it out to call the review by "
                         f"its file, {path.name}")
    if not path.is_file():
        raise FileNotFoundError(f"the records {path}: {'a folder' if path.is_dir() else 'no such file'}")
    stem = path.name.removesuffix(".gz").lower()
    guessed = ("ris" if stem.endswith((".ris", ".txt")) else "tsv" if stem.endswith((".tsv", ".tab"))
               else "csv")
    if fmt is None and stem.endswith(".run"):
        raise ValueError(f"{path} is named as a TREC run: read it with --format trec --texts FILE (the "
                         "documents' texts, JSON lines with doc_id and text); records are read from CSV, TSV "
                         "or RIS")
    fmt = fmt or guessed
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "trec":
        if name is not None:   # the review's query id is its name, and the run's qrels name that query
            raise ValueError("--name is not for --format trec: the review of a run is called by its query, "
                             "as the run's qrels call it")
        if texts is None:
            raise ValueError(f"--format trec reads {path} as a TREC run: give its documents' texts with "
                             "--texts FILE (JSON lines with doc_id and text)")
        if label_column is not None:   # it was taken, and nothing read it
            raise ValueError("--label-column is not for --format trec: a run has no label column; a "
                             "simulation's labels come from --qrels")
        recs = load_trec_records(path, texts, qrels=qrels, query=query, threshold=threshold)
        if qrels is not None:
            _note_unjudged(qrels, recs)
        return recs
    if texts is not None or query is not None:
        raise ValueError(f"{'--texts' if texts is not None else '--query'} is for a TREC run, read with "
                         f"--format trec: add it to read {path} as one, or leave "
                         f"{'--texts' if texts is not None else '--query'} out (a CSV, TSV or RIS file holds "
                         "its records' texts)")
    if fmt != guessed:
        raise ValueError(f"--format {fmt}: {path} is read by its name as {guessed}; name it *.{fmt}")
    return load_records(path, label=label_column, name=name)


def _grade(threshold: float, qrels: Path | None) -> float:
    """``--threshold``, checked: a grade > 0, and only with ``--qrels`` (it grades nothing else)."""
    from rankcut.data.lists import check_threshold

    if check_threshold(threshold) != 1 and qrels is None:
        raise ValueError("--threshold is the grade --qrels count as relevant: it goes with --qrels")
    return threshold


def _say_grade(ctx: typer.Context, threshold: float, qrels: Path | None) -> None:
    """The grade counted relevant, said once the qrels were read into labels when they grade above 1
    and ``--threshold`` was left at its default (:func:`~rankcut.cli._common.note_grades`)."""
    from rankcut.cli._common import note_grades
    from rankcut.data.trec import read_qrels

    if qrels is not None:
        note_grades(ctx, qrels, read_qrels(qrels), threshold)


def _sources(records: Path, texts: Path | None) -> list[Path]:
    """The files the records are read from, frozen by the review for its provenance."""
    return [records, *([texts] if texts else [])]


def _with_prior(records: Any, prior_relevant: str | None, path: Path) -> Any:
    if prior_relevant is None:
        return records
    known = {rid: int(y) for rid, y in zip(records.ids, records.prior.tolist(), strict=True) if y >= 0}
    ids = [p.strip() for p in prior_relevant.split(",") if p.strip()]
    missing = next((p for p in ids if p not in records.ids), None)
    if missing is not None:
        raise ValueError(f"--prior-relevant names record {missing!r}, which {path.name} does not hold")
    clash = next((p for p in ids if known.get(p) == 0), None)
    if clash is not None:
        raise ValueError(f"--prior-relevant names record {clash!r}, which {path.name} marks not relevant "
                         f"(its {records.labelled_by}): drop it from --prior-relevant, or correct the file")
    return records.with_prior({**known, **dict.fromkeys(ids, 1)})


def _config(model: str, seed_query: str | None) -> Any:
    from rankcut.review.cal import CALConfig

    try:
        return CALConfig(model=model, query=seed_query)
    except ValueError as err:
        raise ValueError(f"--model/--seed-query: {err}") from None


def _next_lines(folder: Path, info: dict[str, Any], out: Path | None = None) -> list[str]:
    nxt = info["next_record"]
    if nxt is None:
        step = "certify" if info["next"] == "certify" else "report"   # certified already: its report
        lines = [info["next_move"], f"next: rankcut review {step} --folder {shlex.quote(str(folder))}"
                 + " --out report.html" * (step == "report")]
        return lines + _read_on_hint(folder, info)
    where = nxt["where"]
    kind = ("a screening record (the ranker's pick)" if nxt["move"] == "screen" else
            "an audit record (the next of the frozen random order)")
    lines = [f"query: {info['query_text']}"] * bool(info.get("query_text"))   # what it is judged against
    lines += [f"to read now: record {nxt['record_id']}, {kind}, {where}", f"  why: {nxt['why']}"]
    if nxt["prior"]:
        lines.append("  (prior knowledge: its frozen label is recorded at the next label call)")
    if nxt["text"]:
        lines.append("  " + nxt["text"].replace("\n", "\n  "))
    return lines + _label_hint(folder, out)


def _read_on_hint(folder: Path, info: dict[str, Any]) -> list[str]:
    """The read-on command, once the target is met with records unread (and not read on yet)."""
    if not info["can_read_on"]:
        return []
    return [f"to read on (the ranker's next picks, each counted; the target stays met): rankcut review "
            f"read-on --folder {shlex.quote(str(folder))}"]


def _status_lines(info: dict[str, Any]) -> list[str]:
    from rankcut.certify.result import format_bound

    said = [f"{info['screened']} screened, {info['audited']} audited"] if info["read"] else []
    if info["prior_read"]:
        said.append(f"prior knowledge among them: {info['prior_read']}")
    if info["kept"]:   # answered, but read by the review only once it asks for them
        said.append(f"+{info['kept']} answered, kept until the review asks for them")
    counts = f" ({'; '.join(said)})" if said else ""
    met = "met" if info["recall_bound"] >= info["target"] else "not met yet"
    # the bound is the relevant records found over the most there can be: 0 until one is found (unless
    # the review shows there are none)
    bound = (f"recall ≥ {format_bound(info['recall_bound'], 'lower')} certified now" if info["recall_bound"]
             else f"no recall certified yet ({'nothing read' if not info['read'] else 'none found'})")
    unfound = f", at most {info['unfound_at_most']} unfound" if info["unfound_at_most"] is not None else ""
    lines = [f"review {info['audit_id'][:12]}: {info['read']} of {info['collection']} records read{counts}, "
             f"{info['found']} relevant found{unfound}; {bound} (target {info['target']:g} at "
             f"{1 - info['delta']:.0%} confidence: {met})",
             f"guarantee: {info['guarantee']}"]
    if info["corrects"]:
        fix = info["corrects"]
        lines.append(f"corrects: review {fix['review'][:12]} ("
                     + "; ".join(f"record {rid} labelled {c['now']}, was {c['was']}"
                                 for rid, c in fix["relabelled"].items()) + ")")
    if info["kept"]:
        relevant = len(info["kept_relevant"])
        one = info["kept"] == 1
        which = ("it says relevant" if one else f"{relevant} of them relevant") if relevant else ""
        lines.append(f"kept: {info['kept']} answer{'' if one else 's'} for "
                     f"{'a record' if one else 'records'} the review has not asked for"
                     f"{f', {which}' if which else ''} "
                     + ("(it asks for none now: counted only if you read on and the ranker picks "
                        f"{'it' if one else 'them'})" if info["next_record"] is None else
                        "(recorded when it does)"))
    if info.get("verdict"):
        lines.append(f"certificate: {info['verdict']}")
    lines.extend(f"warning: {info[k]}" for k in ("labels_changed", "certificate_refused") if info.get(k))
    lines.extend(f"warning: {said}" for said in info["changed_sources"])
    if info.get("tail"):
        lines.append(f"ahead: {info['tail']}")
    lines.append("next: restore the labels that were opened (certify refuses these), or start a new review"
                 if info.get("labels_changed") else info["next_move"])
    return lines


@app.command("start")
@_fail_cleanly
def start(
    ctx: typer.Context,
    records: Path = typer.Argument(..., help="The records: CSV/TSV with title and abstract columns "
                                   "(ASReview's names), RIS, or a TREC run (--format trec --texts)."),
    folder: Path = typer.Option(..., "--folder", help="The review folder to create."),
    name: str | None = typer.Option(None, "--name", help="What the certificate and report call the "
                                    "review (default: the records file's name; white space becomes _; "
                                    "not for a TREC run, called by its query)."),
    fmt: str | None = typer.Option(None, "--format", help="csv, tsv, ris or trec (default: from the name)."),
    texts: Path | None = typer.Option(None, "--texts", help="--format trec: the documents' texts (JSON "
                                      "lines with doc_id and text)."),
    query: str | None = typer.Option(None, "--query", help="--format trec: the query of the run to review."),
    label_column: str | None = typer.Option(None, "--label-column", help="The label column (default: "
                                            "ASReview's names); labelled on some records only, it is the "
                                            "prior knowledge; labelled throughout, the truth --simulate "
                                            "plays."),
    target_recall: float = typer.Option(0.95, "--target-recall", help="The recall to certify."),
    delta: float = typer.Option(0.05, "--delta", help="Error probability δ; confidence 1 − δ."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the audit order and the ranker (default: "
                                    "a random one, recorded)."),
    policy: str | None = policy_option("marginal-cost:probe=25"),
    prior_basis: str | None = prior_basis_option("tail"),
    prior_relevant: str | None = typer.Option(None, "--prior-relevant", help="Records known relevant "
                                              "before the session, ID,ID,... (prior knowledge)."),
    model: str = typer.Option("logistic", "--model", help="The ranker's classifier: logistic or svm."),
    seed_query: str | None = typer.Option(None, "--seed-query", help="A text the ranker takes as a "
                                          "relevant document before any is found (AutoTAR)."),
    simulate: bool = typer.Option(False, "--simulate", help="Play the whole review with the label column "
                                  "(or --qrels) as the reviewer, to the certificate."),
    qrels: Path | None = typer.Option(None, "--qrels", help="--simulate: the known labels as TREC qrels."),
    threshold: float = THRESHOLD,
    as_json: bool = JSON,
) -> None:
    """Freeze a review: the records in order, their texts, the ranker and its seed, the target."""
    confidence_delta(delta)
    from rankcut.review import session

    if qrels is not None and not simulate:   # a run's qrels were read into labels no step used
        raise ValueError("--qrels is for --simulate: the known labels played as the reviewer (a review asks "
                         "the reviewer for each record it reads); records known relevant before the "
                         "review are --prior-relevant ID,...")
    read = _records(records, fmt, texts, label_column, qrels if fmt == "trec" else None, query, name,
                    _grade(threshold, qrels))
    recs = _with_prior(read, prior_relevant, records)
    _say_grade(ctx, threshold, qrels)
    options = {"target_recall": target_recall, "delta": delta, "seed": seed, "policy": policy,
               "config": _config(model, seed_query), "sources": _sources(records, texts),
               "prior_basis": prior_basis}
    if show_progress(as_json=as_json):   # the features take seconds on a large collection, silently
        typer.echo(f"freezing {len(recs):,} records and computing the ranker's features …", err=True)
    if simulate:
        again = _simulate_again(folder, records, fmt, texts, query, label_column, qrels, threshold)
        _simulated(recs, records, folder, None if fmt == "trec" else qrels, threshold, options,
                   show_progress(as_json=as_json), as_json, again)
        return
    if recs.labels is not None:
        warnings.warn(f"{records}: its {recs.labelled_by} labels every record, but a review asks the "
                      "reviewer for each record it reads, so those labels are not used: add --simulate to "
                      "play them as the reviewer, or leave empty the labels not known before the session "
                      "(those given are its prior knowledge)", stacklevel=2)
    # Ctrl-C says whether the review was started (a large collection's start takes a while)
    with _interrupted(folder, f"rankcut review next --folder {shlex.quote(str(folder))}"):
        manifest = session.start(recs, folder, **options)
        info = session.status(folder)
    if as_json:
        _echo_json({"audit_id": manifest.audit_id, "folder": str(folder), **_json_status(info)})
        return
    typer.echo(f"started review {manifest.audit_id[:12]} of {len(recs)} records in {folder}: recall ≥ "
               f"{target_recall:g} at {1 - delta:.0%} confidence, seed {manifest['seed']}, policy "
               f"{manifest['policy']['name']}, ranker CAL ({manifest['screener']['config']['cal']['model']})")
    if info["read"]:   # the prior knowledge: from the file's labels, --prior-relevant, or both
        known, in_file = int((recs.prior >= 0).sum()), int((read.prior >= 0).sum())
        later = known - info["prior_read"]   # the policy audits before the ranker has read them all
        more = f"; {later} more when the review asks for them" if later else ""
        relevant = int((recs.prior == 1).sum())   # of the whole prior knowledge, read now or later
        sources = (f"{in_file} from the {read.labelled_by}, {known - in_file} from --prior-relevant"
                   if 0 < in_file < known else
                   f"from the {read.labelled_by}" if in_file else "from --prior-relevant")
        typer.echo(f"recorded the prior knowledge: {info['read']} record{'s' * (info['read'] != 1)}{more} "
                   f"({known} known before the session, {sources}: {relevant} relevant, {known - relevant} "
                   "not)")
    for line in _next_lines(folder, info):
        typer.echo(line)


def _json_status(info: dict[str, Any]) -> dict[str, Any]:
    keys = ("audit_id", "read", "screened", "audited", "prior_read", "kept", "collection", "found",
            "unfound_at_most", "recall_bound", "target", "delta", "guarantee", "verdict", "audits_to_certify",
            "tail", "changed_sources", "kept_relevant", "next_record", "next_move", "next", "met_now",
            "met_step", "reads_on", "can_read_on", "labels_changed", "certificate_refused")
    return {k: info.get(k) for k in keys}


def _known(folder: Path, records: Path | None, qrels: Path | None, fmt: str | None, texts: Path | None,
           label_column: str | None, query: str | None, threshold: float) -> dict[str, int]:
    from rankcut.review import session

    if (records is None) == (qrels is None) and fmt != "trec":
        raise ValueError("--simulate needs the known labels: --records FILE (its label column) or --qrels Q")
    if records is None:
        assert qrels is not None
        return session.known_from_qrels(qrels, folder, threshold=threshold)
    recs = _records(records, fmt, texts, label_column, qrels, query, threshold=threshold)
    return session.known_from_records(recs, records, folder)


def _simulate_again(folder: Path, records: Path, fmt: str | None, texts: Path | None, query: str | None,
                    label_column: str | None, qrels: Path | None, threshold: float) -> str:
    """The command that goes on with a simulation's known labels: the qrels' (the records file
    is frozen), or the records file's (a TREC run's with its texts and qrels)."""
    if qrels is not None and fmt != "trec":
        return _label_again(folder, None, qrels=qrels, threshold=threshold)
    return _label_again(folder, records, format=fmt, texts=texts, query=query, label_column=label_column,
                        qrels=qrels, threshold=threshold)


def _label_again(folder: Path, records: Path | None, **options: Any) -> str:
    """The ``rankcut review label --simulate`` command that goes on with the same known labels."""
    words = ["rankcut", "review", "label", "--folder", str(folder), "--simulate"]
    if records is not None:
        words += ["--records", str(records)]
    for name, value in options.items():
        if value is not None and (name, value) != ("threshold", 1):   # the default grade goes unsaid
            words += [f"--{name.replace('_', '-')}", f"{value:g}" if name == "threshold" else str(value)]
    return shlex.join(words)


@contextmanager
def _interrupted(folder: Path, resume: str) -> Iterator[None]:
    """Ctrl-C: one line saying what is recorded and the command that resumes, exit status 130 (every
    answer is written at once, so nothing is lost but the step being taken)."""
    from rankcut.audit.manifest import MANIFEST_FILE
    from rankcut.review import session

    try:
        yield
    except KeyboardInterrupt:
        if not (folder / MANIFEST_FILE).is_file():   # start removes what it wrote
            typer.echo(f"interrupted: nothing was started in {folder}", err=True)
        else:
            read = session.status(folder)["read"]
            typer.echo(f"interrupted: {read} records read are recorded in {folder}; resume with {resume}",
                       err=True)
        raise typer.Exit(130) from None


def _note_unjudged(qrels: Path, recs: Any) -> None:
    """Say on stderr how many records the qrels do not judge (counted not relevant), as the audit's
    qrels oracle says of its items."""
    from rankcut.review.records import qrels_grades

    grades = qrels_grades(qrels, recs.query_id, ranked=recs.ranked)
    unjudged = sum(rid not in grades for rid in recs.ids)
    if unjudged:
        typer.echo(f"note: {qrels}: {unjudged} of the {len(recs)} records are not judged and count as not "
                   "relevant (trec_eval's rule): the simulation finds what the qrels call relevant", err=True)


def _simulated(recs: Any, source: Path, folder: Path, qrels: Path | None, threshold: float,
               options: dict[str, Any], progress: bool, as_json: bool, resume: str) -> None:
    from rankcut.review import session
    from rankcut.review.records import RIS_SUFFIXES, qrels_labels

    known = None
    if qrels is None and recs.labels is None:
        how = ("give the labels as --qrels FILE" if recs.ranked else
               "label every record with an ASReview note (N1  - ASReview_relevant or ASReview_irrelevant), "
               "or give the labels as --qrels FILE" if Path(source.name.removesuffix(".gz")).suffix.lower()
               in RIS_SUFFIXES else
               "name the column labelled on every record with --label-column, or give the labels as --qrels "
               "FILE")
        raise ValueError(f"{source}: a simulation needs every record's label: {how}")
    if qrels is not None and recs.labels is not None:   # which would play the reviewer?
        raise ValueError(f"{source}: its {recs.labelled_by} labels every record, and --qrels {qrels} would "
                         "label them too: give one of the two (leave --qrels out, or give a file without "
                         "labels)")
    known_from = "the labels given"
    if qrels is not None:
        labels = qrels_labels(qrels, recs.ids, recs.query_id, threshold=threshold, ranked=recs.ranked)
        known, known_from = dict(zip(recs.ids, labels.tolist(), strict=True)), f"--qrels {qrels}"
        _note_unjudged(qrels, recs)
    with _interrupted(folder, resume):
        result = session.simulate(recs, folder, known=known, known_from=known_from, progress=progress,
                                  **options)
    if as_json:
        typer.echo(result.to_json())
        return
    typer.echo(result.render(plain_first=True))
    truth = known if known is not None else dict(zip(recs.ids, recs.labels.tolist(), strict=True))
    done = session.known_outcome(folder, truth)   # what the certificate cannot know
    last = f", the last at step {done['last_found_at']}" if done["found"] else ""
    typer.echo(f"with the known labels: {done['found']} of {done['relevant']} relevant records found (recall "
               f"{done['recall']:.3f}{last}); {done['read']} of {done['collection']} records read "
               f"({done['read'] / done['collection']:.1%})")
    typer.echo(f"next: rankcut review report --folder {shlex.quote(str(folder))} --out report.html")


@app.command("next")
@_fail_cleanly
def next_(
    folder: Path = FOLDER,
    batch: int = typer.Option(1, "--batch", help="List the next N records the review asks for if none of "
                              "them is relevant, to read as a batch (a relevant answer can change those "
                              "after it)."),
    out: Path | None = typer.Option(None, "--out", help="Also write them to this CSV (record_id, an empty "
                                    "label column to fill in, move, position, audit_position, why, "
                                    "records (the review's records, so that no other review takes "
                                    "the file), text), for label --from; it replaces a batch file only "
                                    "once label --from has taken its labels."),
    skip_open: bool = typer.Option(False, "--skip-open", help="Leave out the records of batch files "
                                   "next --out wrote before and not yet answered (another reviewer's "
                                   "batch): list the ones after them."),
    as_json: bool = JSON,
) -> None:
    """The record to read now (or the next --batch N): screening or audit, where it stands, and why."""
    from rankcut.review import session

    handed = session.open_batches(folder, but=out) if out is not None or skip_open else []
    skip = {rid for b in handed for rid in b["records"]} if skip_open else set()
    with bars(show_progress(as_json=as_json)):   # the replay's bar, in a large review
        info = session.status(folder, ahead=batch, skip=skip)
    say_warnings(info["changed_sources"])
    if skip_open and not info["next_records"] and info["next_record"] is not None:
        raise ValueError("every record the review asks for next is in a batch file not answered yet ("
                         f"{', '.join(b['file'] for b in handed)}): label it first (label --from FILE)")
    if out is not None and info["next_records"]:   # none once certified or all is read: no file
        session.write_batch(folder, out, info["next_records"])
        if not skip_open:   # another file handed out: a reviewer's double of one out now, if it overlaps
            say_warnings(_in_open_batches(handed, [r["record_id"] for r in info["next_records"]]))
    if as_json:
        _echo_json(info["next_record"] if batch == 1 else info["next_records"])
        return
    if out is not None and info["next_records"]:
        n = len(info["next_records"])   # (plural by hand: cli._common imports numpy)
        typer.echo(f"wrote {n} record{'s' * (n != 1)} to {out}: fill in its label column (1 relevant, 0 not)")
    elif out is not None:   # a batch file there already (the last one, labelled) is left as it is
        why = ("the review asks for no further record" if info["next_record"] is None else
               "the records the review asks for next are answered already (kept, or its prior knowledge): "
               f"rankcut review label --folder {shlex.quote(str(folder))} --interactive records them first")
        typer.echo(f"{out} is not written: {why}")
        out = None
    lines = (_next_lines(folder, info, out) if (batch == 1 and not skip) or not info["next_records"] else
             _batch_lines(folder, info["next_records"], out, batch))
    if info["query_text"] and batch > 1 and info["next_records"]:   # (_next_lines says it of one)
        typer.echo(f"query: {info['query_text']}")
    for line in lines:
        typer.echo(line)


@app.command("label")
@_fail_cleanly
def label(
    ctx: typer.Context,
    folder: Path = FOLDER,
    from_file: Path | None = typer.Option(None, "--from", help="A CSV/TSV: record_id, label (0/1, "
                                          "true/false, yes/no, include/exclude, relevant/irrelevant; empty: "
                                          "not yet); the labels of the records "
                                          "the review asks for, as far as it holds them; the others are "
                                          "kept until it asks for their records."),
    interactive: bool = typer.Option(False, "--interactive", help="Ask in the terminal, record by record "
                                     "(y or 1, n or 0), until quit (q) or certified (reading on: all read); "
                                     "a record answered in a file before is not asked again."),
    simulate: bool = typer.Option(False, "--simulate", help="Known labels play the reviewer: --records "
                                  "(its label column) or --qrels."),
    records: Path | None = typer.Option(None, "--records", help="--simulate: the records file with a label "
                                        "on every record."),
    qrels: Path | None = typer.Option(None, "--qrels", help="--simulate: the known labels as TREC qrels."),
    fmt: str | None = typer.Option(None, "--format", help="--records: csv, tsv, ris or trec."),
    texts: Path | None = typer.Option(None, "--texts", help="--records with --format trec: the texts."),
    query: str | None = typer.Option(None, "--query", help="--records with --format trec: the query."),
    label_column: str | None = typer.Option(None, "--label-column", help="--records: the label column; "
                                            "--from: the answers' column (any; needed where another "
                                            "label-like column holds answers)."),
    next_n: int | None = typer.Option(None, "--next", help="--simulate: label only the next N steps."),
    reviewer: str | None = typer.Option(None, "--reviewer", help="--from or --interactive: who gives "
                                        "these answers, recorded with each (the report's 'Labels from' "
                                        "names them)."),
    threshold: float = THRESHOLD,
    as_json: bool = JSON,
) -> None:
    """Record labels of the records the review asks for, one step at a time."""
    from rankcut.review import session

    if sum((from_file is not None, interactive, simulate)) != 1:
        raise ValueError("give one source of labels: --from FILE, --interactive or --simulate")
    if not simulate and (records or qrels or next_n is not None):
        raise ValueError("--records, --qrels and --next are for --simulate")
    if interactive and label_column is not None:
        raise ValueError("--label-column is for --from (the answers' column) or --simulate --records")
    if simulate and reviewer is not None:
        raise ValueError("--reviewer is for --from or --interactive: a simulation plays known labels")
    _grade(threshold, qrels)
    who = [] if reviewer is None else ["--reviewer", reviewer]   # said again by the commands offered
    again = (_label_again(folder, records, format=fmt, texts=texts, query=query, label_column=label_column,
                          qrels=qrels, threshold=threshold) if simulate else
             shlex.join(["rankcut", "review", "label", "--folder", str(folder), "--interactive", *who])
             if interactive else shlex.join(["rankcut", "review", "next", "--folder", str(folder)]))
    with bars(show_progress(as_json=as_json) and simulate), _interrupted(folder, again):
        if simulate:
            known = _known(folder, records, qrels, fmt, texts, label_column, query, threshold)
            _say_grade(ctx, threshold, qrels)
            result = session.label(folder, known=known, limit=next_n)
        elif interactive:
            result = session.label(folder, interactive=True, output=typer.echo, input=_prompt,
                                   reviewer=reviewer)
        else:
            result = session.label(folder, from_file=from_file, label_column=label_column, reviewer=reviewer)
    info = session.status(folder)
    if as_json:
        _echo_json({"source": result.source, "recorded": result.recorded, **_json_status(info)})
        return
    typer.echo(f"recorded {result.recorded} label{'' if result.recorded == 1 else 's'} ({result.source})")
    listed = None if from_file is None or info["next_record"] is None else session.batch_records(from_file)
    if from_file is not None and info["next_record"] is not None and (
            not result.recorded or info["next_record"]["record_id"] in (listed or ())):
        # nothing recorded, or a row of the batch left blank: the answers given after it are kept,
        # and the review waits for the one it asks first
        asked = info["next_record"]
        more = [f"waiting for record {asked['record_id']} ({asked['where']}): the review asks for it first, "
                f"and {from_file.name} gives it no label; fill it in and run label --from again",
                "next: " + shlex.join(["rankcut", "review", "label", "--folder", str(folder), "--from",
                                       str(from_file), *who])]
    elif listed is not None and from_file is not None:   # read in batches: the next, of the same size
        # (a new file: the one filled in is the record of its answers, cited by its sha256)
        more = [f"next: rankcut review next --folder {shlex.quote(str(folder))} --batch {len(listed)} --out "
                f"{shlex.quote(str(_batch_after(from_file)))}   # the next records to read"]
    else:
        more = _next_lines(folder, info)
    for line in _status_lines(info)[:1] + more:
        typer.echo(line)


def _batch_after(path: Path) -> Path:
    """The name the next batch file is offered under: ``batch.csv`` → ``batch-2.csv``, ``batch-2.csv``
    → ``batch-3.csv``, ``batch-007.csv`` → ``batch-008.csv`` (the width kept), past names taken. Not
    the file just labelled: the store names it by its sha256, and a team keeps each filled-in file
    as the record of who answered what."""
    import re

    numbered = re.fullmatch(r"(.*)-(\d+)", path.stem)
    stem, k, width = (numbered[1], int(numbered[2]) + 1, len(numbered[2])) if numbered else (path.stem, 2, 1)
    while (fresh := path.with_name(f"{stem}-{k:0{width}d}{path.suffix}")).exists():
        k += 1
    return fresh


def _prompt(prompt: str) -> str:
    """``input``, but answers piped in (not typed at a terminal) are echoed after their prompt, so
    that the output reads as a session, one answer a line. The prompt is written (and flushed)
    before the answer is read, as at a terminal: a program that answers each prompt it sees waited
    for one that came only after its answer."""
    if sys.stdin.isatty():
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    typer.echo(line.rstrip("\n"))
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


@app.command("read-on")
@_fail_cleanly
def read_on(folder: Path = FOLDER, as_json: bool = JSON) -> None:
    """After the target is met: ask for the ranker's next picks again, each counted; the target stays met."""
    from rankcut.audit.designs.interleaved import words_of
    from rankcut.review import session

    since, now = session.read_on(folder)
    info = session.status(folder)
    said_read_on(since, now, words_of(session.load_review(folder)), _json_status(info),
                 _next_lines(folder, info), as_json)


@app.command("status")
@_fail_cleanly
def status(folder: Path = FOLDER, as_json: bool = JSON) -> None:
    """Read and found so far, the recall bound, the audit reads that would meet the target, the next move."""
    from rankcut.review import session

    with bars(show_progress(as_json=as_json)):   # the replay's bar, in a large review
        info = session.status(folder)
    if as_json:
        _echo_json(_json_status(info))
        return
    for line in _status_lines(info) + _read_on_hint(folder, info):
        typer.echo(line)


@app.command("certify")
@_fail_cleanly
def certify(folder: Path = FOLDER, as_json: bool = JSON) -> None:
    """Certify the records read so far (recomputed from the folder; refused if anything frozen changed).

    Exit status 0 when the target is met, 1 when it is not met yet, 2 when refused."""
    from rankcut.review import session

    result = _certified(folder, as_json)
    if result is None:   # no label yet: nothing to certify, the target is not met
        info = session.status(folder)
        text = (f"nothing is read yet: target recall ≥ {info['target']:g} NOT met (0 of "
                f"{info['collection']} records read); {info['next_move']}")
        if as_json:   # no certificate to print: its verdict, for a script that reads verdict.met
            _echo_json({"audit_id": info["audit_id"], "certificate": None, "read": 0,
                        "collection": info["collection"], "verdict": {"met": False, "text": text}})
        else:
            typer.echo(text)
        raise typer.Exit(1)
    typer.echo(result.to_json() if as_json else result.render(plain_first=True))
    say_warnings(session.changed_sources(session.load_review(folder)))
    if not as_json and (kept := session.kept_note(folder)):
        typer.echo(f"note: {kept}")
    if not result.met:
        raise typer.Exit(1)   # a script can stop on "met" alone


def _certified(folder: Path, as_json: bool) -> Any:
    """The review's certificate of the records read now (``workflow.certify``, which replays the
    review and refuses anything changed), or None when nothing is labelled yet."""
    from rankcut.audit import workflow
    from rankcut.audit.folder import LABELS_FILE, OPENED_FILE
    from rankcut.audit.labels import holds_store
    from rankcut.review import session

    session.load_review(folder)   # a review folder (refused by name otherwise)
    # nothing labelled and nothing opened: nothing to certify (a store gone after an opening: certify
    # refuses it, below)
    if not holds_store(folder / LABELS_FILE) and not (folder / OPENED_FILE).exists():
        return None
    with bars(show_progress(as_json=as_json)):
        return workflow.certify(folder)


@app.command("report")
@_fail_cleanly
def report(
    folder: Path = FOLDER,
    out: Path = typer.Option(..., "--out", help="report.html or report.md; the certificate JSON (and the "
                             "Markdown plot) go beside it."),
    as_json: bool = JSON,
) -> None:
    """Write the report: plain words, the recall bound and the relevant found against records read.

    It certifies the records read so far first (as certify does, refusing an edited label store), so
    the report is never of an earlier certificate."""
    from rankcut.audit.report import write_report
    from rankcut.review import session

    if _certified(folder, as_json) is None:
        raise ValueError(f"review {folder}: nothing is read yet, so there is no certificate to report: "
                         f"read records first (rankcut review next --folder {shlex.quote(str(folder))}, then "
                         "label)")
    changed = session.changed_sources(session.load_review(folder))   # hashes the records files: once
    say_warnings(changed)
    kept = session.kept_note(folder)
    files = write_report(folder, out, session.report_notes(folder, changed))
    content = json.loads(files.certificate.read_text(encoding="utf-8"))
    if as_json:
        _echo_json(content)
        return
    typer.echo((content.get("verdict") or {}).get("text", ""))
    for note in content.get("notes", [])[:1]:
        typer.echo(note)
    if kept:
        typer.echo(f"note: {kept}")
    typer.echo(files.said())


@app.command("export")
@_fail_cleanly
def export(
    folder: Path = FOLDER,
    out: Path = typer.Option(..., "--out", help="The CSV to write (TSV for .tsv): record_id, label, step, "
                             "move, prior_knowledge, review, then the records file's own columns (title and "
                             "abstract for RIS records, text for TREC records); the records read in reading "
                             "order, then the unread ones. Or, for records read from a RIS file, *.ris: "
                             "that file with the labels in ASReview's notes. -: the CSV on stdout."),
    relevant: bool = typer.Option(False, "--relevant", help="Only the records labelled relevant."),
) -> None:
    """Write the review's records with their labels (the records found relevant: --relevant).

    --out - (or /dev/stdout) writes the CSV alone on stdout, what was written on stderr."""
    from rankcut.review.export import export as write_export

    with stdout_aside(out):
        _exported(out, relevant, write_export(folder, out, relevant_only=relevant))


def _exported(out: Path, relevant: bool, counts: dict[str, Any]) -> None:
    """What ``export`` wrote, in words."""
    from rankcut.review import session
    from rankcut.review.records import RIS_SUFFIXES

    what = "relevant records" if relevant else "records"
    kept = f", {counts['kept_relevant']} more answered relevant but kept" if counts["kept_relevant"] else ""
    if counts["prior_relevant"]:
        kept += f", {counts['prior_relevant']} more known relevant before the session and not read yet"
    ris = out.suffix.lower() == ".ris"
    columns = ("" if not counts["columns_of"] else
               f", the records of {counts['columns_of']} with ASReview's label notes" if ris else
               f", with the titles and abstracts of {counts['columns_of']}"
               if Path(counts["columns_of"].removesuffix(".gz")).suffix.lower() in RIS_SUFFIXES else
               f", with the columns of {counts['columns_of']}")
    typer.echo(f"wrote {counts['records']} {what} to {out} ({counts['read']} read, {counts['relevant']} "
               f"relevant{kept}){columns}")
    if counts["no_columns"]:
        typer.echo(f"note: {counts['no_columns']}, so the export gives the title and abstract the review "
                   "screened (column text), not the file's columns")
    if counts["kept_relevant"]:
        typer.echo(f"note: {session.kept_relevant_text(counts['kept_relevant'])}; the export lists them "
                   "with move 'kept'")


def _relabel(given: list[str]) -> dict[str, int]:
    from rankcut.review.records import _FORMS, _VALUES

    out: dict[str, int] = {}
    for text in given:
        rid, sep, value = (part.strip() for part in text.partition("="))
        y = _VALUES.get(value.lower())
        if not sep or not rid or y is None:
            raise ValueError(f"--relabel {text!r}: give RECORD=LABEL, the label "
                             f"{_FORMS.removesuffix(' or empty')}")
        if out.get(rid, y) != y:
            raise ValueError(f"--relabel names record {rid!r} twice, with two labels")
        out[rid] = y
    return out


@app.command("correct")
@_fail_cleanly
def correct(
    folder: Path = FOLDER,
    into: Path = typer.Option(..., "--into", help="The new folder of the corrected review."),
    relabel: list[str] = typer.Option(..., "--relabel", help="RECORD=LABEL: a record's right label "
                                      "(repeat for more)."),
) -> None:
    """Start the review again, labels mended: same records, seed and audit order; old answers given again."""
    from rankcut.review import session

    done = session.correct(folder, into, _relabel(relabel))
    manifest = done["manifest"]
    old = manifest["screener"]["config"]["corrects"]["review"][:12]
    changed = ", ".join(f"record {rid} labelled {now} (was {was})"
                        for rid, (was, now) in done["corrected"].items())
    typer.echo(f"started review {manifest.audit_id[:12]} in {into}: review {old} with {changed}; the same "
               f"records, seed {manifest['seed']} (so the same audit order), target, policy and ranker")
    kept = f"; {done['kept']} kept for when it asks ({session.PENDING_FILE})" if done["kept"] else ""
    typer.echo(f"recorded {done['recorded']} of its {done['answers']} answers as the corrected review asked "
               f"for their records{kept}")
    for line in _next_lines(into, session.status(into)):
        typer.echo(line)


def _label_hint(folder: Path, out: Path | None, batch: int = 25) -> list[str]:
    """How to answer: from the batch file just written, else in the terminal or a batch to fill in."""
    f = shlex.quote(str(folder))
    if out is not None:
        return [f"next: rankcut review label --folder {f} --from {shlex.quote(str(out))}"]
    return [f"next: rankcut review label --folder {f} --interactive",
            f"  or: rankcut review next --folder {f} --batch {batch} --out batch.csv   # a CSV to fill in, "
            "then label --from batch.csv"]


def _in_open_batches(handed: list[dict[str, Any]], listed: list[str]) -> list[str]:
    """A warning for each batch file written before and not yet answered (``session.open_batches``)
    that holds records listed now: two reviewers would read them."""
    said = []
    for b in handed:
        held = set(b["records"])
        if common := [rid for rid in listed if rid in held]:
            n, at = len(common), b["written_at"][:19].replace("T", " ")
            said.append(f"{n} of these records {'is' if n == 1 else 'are'} in {b['file']} too (written by "
                        f"next --out at {at} UTC, not answered yet): two reviewers would read "
                        f"{'it' if n == 1 else 'them'} (double screening, if meant); next --skip-open lists "
                        "the records after them")
    return said


def _batch_lines(folder: Path, batch: list[dict[str, Any]], out: Path | None, asked: int) -> list[str]:
    lines = [f"the next {len(batch)} record{'s' * (len(batch) != 1)} to read, if none of them is relevant "
             "(after a relevant one the review may ask for others: label --from records the answers as far "
             "as the review asks for them, and keeps the rest for when it does):"]
    for i, rec in enumerate(batch, 1):
        title = rec["text"].split("\n", 1)[0]
        lines.append(f"{i:>4}. record {rec['record_id']}: {rec['move']}, {rec['where']} — "
                     f"{title[:100] + ('…' if len(title) > 100 else '')}")
    if len(batch) < asked:   # the lookahead ended: met (or all read) if these are all not relevant
        lines.append(f"only {len(batch)} of the {asked} asked for: if none of them is relevant, the review "
                     "asks for no further record after them (the target is met then, or every record is "
                     "read)")
    return lines + _label_hint(folder, out, asked)


@app.command("simulate")
@_fail_cleanly
def simulate(
    ctx: typer.Context,
    records: Path = typer.Argument(..., help="The records, with a label on every record (or --qrels)."),
    folder: Path = typer.Option(..., "--folder", help="The review folder to create."),
    label_column: str | None = typer.Option(None, "--label-column", help="The label column played as the "
                                            "reviewer (default: ASReview's names)."),
    seed: int = typer.Option(..., "--seed", help="Seed of the audit order and the ranker."),
    name: str | None = typer.Option(None, "--name", help="As for start."),
    fmt: str | None = typer.Option(None, "--format", help="csv, tsv, ris or trec (default: from the name)."),
    texts: Path | None = typer.Option(None, "--texts", help="--format trec: the documents' texts."),
    query: str | None = typer.Option(None, "--query", help="--format trec: the query of the run."),
    qrels: Path | None = typer.Option(None, "--qrels", help="The known labels as TREC qrels."),
    target_recall: float = typer.Option(0.95, "--target-recall", help="The recall to certify."),
    delta: float = typer.Option(0.05, "--delta", help="Error probability δ."),
    policy: str | None = typer.Option(None, "--policy", help="As for start."),
    prior_basis: str | None = typer.Option(None, "--prior-basis", help="As for start."),
    prior_relevant: str | None = typer.Option(None, "--prior-relevant", help="As for start."),
    model: str = typer.Option("logistic", "--model", help="logistic or svm."),
    seed_query: str | None = typer.Option(None, "--seed-query", help="As for start."),
    threshold: float = THRESHOLD,
    as_json: bool = JSON,
) -> None:
    """A whole seeded review with known labels as the reviewer, to the certificate (progress bar)."""
    confidence_delta(delta)

    recs = _with_prior(_records(records, fmt, texts, label_column, qrels if fmt == "trec" else None, query,
                                name, _grade(threshold, qrels)), prior_relevant, records)
    _say_grade(ctx, threshold, qrels)
    options = {"target_recall": target_recall, "delta": delta, "seed": seed, "policy": policy,
               "config": _config(model, seed_query), "sources": _sources(records, texts),
               "prior_basis": prior_basis}
    again = _simulate_again(folder, records, fmt, texts, query, label_column, qrels, threshold)
    _simulated(recs, records, folder, None if fmt == "trec" else qrels, threshold, options,
               show_progress(as_json=as_json), as_json, again)
