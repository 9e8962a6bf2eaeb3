"""``rankcut audit``: certify what a cut run left behind, through guarded steps.

::

    rankcut audit stop    --run RUN --labels screened.csv --out CUT.run      # high-recall review: the cut
    rankcut audit freeze  --run RUN --cut CUT.run [--design sequential] --delta 0.05 --target-recall 0.8 \\
                          --seed 11 --out AUDIT
    rankcut audit plan    --audit AUDIT
    rankcut audit sample  --audit AUDIT [--excluded 300] [--included 300]
    rankcut audit label   --audit AUDIT (--from labels.csv | --oracle qrels --qrels Q [--next N]
                                         | --interactive | --reuse)
    rankcut audit certify --audit AUDIT [--json]
    rankcut audit report  --audit AUDIT --out report.html
    rankcut audit status  --audit AUDIT
    rankcut audit read-on --audit AUDIT      # interleaved design, once met: read on (each counted)

Every step checks that the earlier ones happened and that nothing they froze changed (see
:mod:`rankcut.audit.workflow`); a refusal is one ``error: ...`` line naming the option, file or
step, with exit status 2. ``--json`` prints the step's result as JSON.
"""

from __future__ import annotations

import functools
import json
import shlex
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeVar

import typer

from rankcut._progress import bars, show_progress
from rankcut.cli._errors import confidence_delta, option_names, say_warnings, stdout_aside, user_errors
from rankcut.cli._interleaved import policy_option, prior_basis_option, said_read_on

app = typer.Typer(help="Certify what a cut run leaves behind: freeze → plan → sample → label → certify → "
                       "report.", no_args_is_help=True)

F = TypeVar("F", bound=Callable[..., Any])

# Python argument names and step names of rankcut.audit.workflow, as the command line spells them.
OPTIONS = option_names(
    ("run", "cut", "family", "offsets", "depths", "design", "delta", "allocation", "target_recall",
     "max_missed", "seed", "corpus_size", "corpus_ids", "ordering", "sampling", "reference", "bands",
     "allow_incomplete", "texts", "reuse_labels", "design_data", "expected_precision", "tolerated",
     "excluded", "included", "threshold", "interactive", "reuse", "overwrite", "prior_scale", "prior_basis",
     "allow_missing_queries", "allow_underpowered", "unjudged_nonrelevant", "policy"),
    label_format="--format", from_file="--from", qrels="--oracle qrels", qrels_file="--qrels", limit="--next",
    plan="rankcut audit plan", sample="rankcut audit sample", label="rankcut audit label",
    certify="rankcut audit certify", freeze="rankcut audit freeze", report="rankcut audit report",
    status="rankcut audit status",
)

AUDIT = typer.Option(..., "--audit", help="The audit folder (made by freeze).")
JSON = typer.Option(False, "--json", help="Print the result as JSON.")


@contextmanager
def spoken_as_options(options: Mapping[str, str] | None = None) -> Iterator[None]:
    """Messages of the workflow speak in option names while a command runs (``options``, by default
    rankcut audit's; rankcut review passes its own); its warnings go to stderr as ``warning: ...``
    lines, each message once."""
    from rankcut.audit.options import OPTION_NAMES

    token = OPTION_NAMES.set(OPTIONS if options is None else options)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                yield
            except typer.Exit as done:   # an exit status the command chose (certify: 1, not met): said
                if done.exit_code != 2:      # too; a refusal (2) stays its one line
                    say_warnings(str(w.message) for w in caught)
                raise
        say_warnings(str(w.message) for w in caught)
    finally:
        OPTION_NAMES.reset(token)


def _fail_cleanly(fn: F) -> F:
    """A ValueError (bad input, refused step) or OSError (missing or unreadable file) becomes one
    line and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import rankcut.review.session  # noqa: F401 -- registers the screener of rankcut review's folders

        with user_errors():
            with spoken_as_options():
                manifest = _manifest_at(kwargs.get("audit"))
                words = _review_words(manifest, fn.__name__)
            with spoken_as_options(words), _replayed_once(manifest):
                return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


_IN_REVIEW = {"plan": "status", "sample": "next", "label": "label", "status": "status", "read_on": "read-on"}


def _manifest_at(folder: Path | None) -> Any:
    """The manifest of the audit folder a command names, read once for the wrapper's checks (None
    without one: the command itself says what the folder lacks)."""
    from rankcut.audit.manifest import MANIFEST_FILE, load_manifest

    if folder is None or not (Path(folder) / MANIFEST_FILE).is_file():
        return None
    return load_manifest(Path(folder))


def _review_words(manifest: Any, command: str) -> Mapping[str, str] | None:
    """The option names ``certify`` and ``report`` speak in on a ``rankcut review`` folder (its
    notes name the review's commands), None elsewhere; the steps of ``rankcut audit`` refuse such
    a folder: the review's steps are its own (answers kept in its pending-labels.csv are recorded
    only by ``rankcut review label``, and its moves are the CAL ranker's), so these commands and
    the next steps they name would mislead there."""
    from rankcut.review.session import is_review

    if manifest is None or not is_review(manifest):
        return None
    if command in _IN_REVIEW:
        raise ValueError(f"{manifest.folder} is a review of rankcut review start: use rankcut review "
                         f"{_IN_REVIEW[command]} --folder {_q(manifest.folder)}")
    from rankcut.cli import review  # (it imports this module: loaded here, on a review's folder only)

    return review.OPTIONS


def _replayed_once(manifest: Any) -> AbstractContextManager[None]:
    """An interleaved review replayed once a command (label, then its status: ``one_replay``), as
    rankcut review's; nothing for the other designs, whose steps need none (and load no engine)."""
    if manifest is None or manifest["design"] != "interleaved":
        return nullcontext()
    from rankcut.audit.designs.interleaved import one_replay

    return one_replay()


def _family(text: str) -> list[Path]:
    """``--family F1.run,F2.run,...``: its paths, an empty entry refused (``a,,b`` read as ``.``, a
    folder)."""
    parts = [p.strip() for p in text.split(",")]   # "a.run, b.run" as "a.run,b.run"
    empty = next((i for i, p in enumerate(parts, 1) if not p), None)
    if empty is not None:
        raise ValueError(f"--family: entry {empty} of {text!r} is empty; give the cut runs as "
                         "F1.run,F2.run,...")
    return [Path(p) for p in parts]


def _ints(text: str | None, option: str) -> list[int] | None:
    if text is None:
        return None
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{option} must be comma-separated integers, got {text!r}") from None
    return values


def _allocation(text: str | None) -> dict[str, float] | None:
    if text is None:
        return None
    out: dict[str, float] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--allocation must look like excluded=0.03,included=0.02, got "
                             f"{text!r}") from None
    return out


#: the list length above which ``audit stop`` warns that the lookahead is slow (docs/scaling.md:
#: 265 s in all at 200,000)
LOOKAHEAD_SLOW = 100_000


def _echo_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False))


@app.command("freeze")
@_fail_cleanly
def freeze(
    ctx: typer.Context,
    run: Path = typer.Option(..., "--run", help="The full ranked lists the cut was taken from (TREC run, "
                             "or Parquet by the suffix .parquet)."),
    design: str = typer.Option(
        "sequential", "--design",
        help="sequential (default; high-recall review: recall of a cut read in full plus what the audit "
             "of the rest, in a random order until certified, finds; anytime-valid, §9) | excluded "
             "(missed count, Thm 8) | two-pool (recall, Cor 11) | prefixes (nested family, Cor 16/18 + "
             "Eq. 1) | fixed-sequence (nested family against a target, Thm 19) | stratified (rank bands "
             "below the cut, §9) | interleaved (high-recall review of one topic without a cut: at every "
             "step a frozen --policy screens the ranking or audits a frozen random order, until "
             "certified; anytime-valid for any policy)."),
    out: Path = typer.Option(..., "--out", help="The audit folder to create (must not hold an audit)."),
    cut: Path | None = typer.Option(None, "--cut", help="The cut run: a prefix of every list of --run "
                                    "(with --offsets: the model's cut the offsets are added to)."),
    family: str | None = typer.Option(None, "--family", help="Nested cut runs F1.run,F2.run,..., smallest "
                                      "candidate set first (prefix designs)."),
    offsets: str | None = typer.Option(None, "--offsets", help="Depth offsets added to --cut per query, "
                                       "e.g. -5,0,5,10 (prefix designs)."),
    depths: str | None = typer.Option(None, "--depths", help="Fixed depths, e.g. 10,20,50 (prefix designs)."),
    delta: float = typer.Option(0.05, "--delta", help="Joint error probability δ; confidence 1 − δ."),
    allocation: str | None = typer.Option(None, "--allocation", help="two-pool: δ0 and δ1, e.g. "
                                          "excluded=0.03,included=0.02 (default δ/2 each)."),
    target_recall: float | None = typer.Option(None, "--target-recall", help="sequential and two-pool "
                                               "target: recall ≥ ρ."),
    max_missed: int | None = typer.Option(None, "--max-missed", help="Target: at most this many missed "
                                          "relevant items (required by fixed-sequence)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of every draw (default: a random one, "
                                    "recorded)."),
    corpus_size: int | None = typer.Option(None, "--corpus-size", help="Collection size C: documents a "
                                           "query never retrieved join its excluded pool."),
    corpus_ids: Path | None = typer.Option(None, "--corpus-ids", help="File of the collection's document "
                                           "ids, one a line (instead of --corpus-size)."),
    ordering: str = typer.Option("rank", "--ordering", help="List order: rank or trec_eval."),
    sampling: str = typer.Option("auto", "--sampling", help="without-replacement (finite-corpus bounds), "
                                 "with-replacement (binomial) or auto (without, unless a pool exceeds "
                                 "1e10)."),
    reference: str | None = typer.Option(None, "--reference", help="Prefix designs: shared (one sample from "
                                         "the shallowest member's excluded pool, default) or separate."),
    bands: str | None = typer.Option(None, "--bands", help="stratified: offsets below the cut where bands "
                                     "end, e.g. 10,100 (ranks k+1..k+10, k+11..k+100, the rest)."),
    allow_incomplete: bool = typer.Option(False, "--allow-incomplete", help="Let certify count unlabelled "
                                          "draws unfavourably instead of refusing."),
    allow_missing_queries: bool = typer.Option(
        False, "--allow-missing-queries", help="Take a query of --run that the cut run does not hold as "
        "cut at 0 (nothing kept) instead of refusing."),
    texts: Path | None = typer.Option(None, "--texts", help="JSON lines with query_id, doc_id, text, shown "
                                      "when labelling."),
    reuse_labels: Path | None = typer.Option(None, "--reuse-labels", help="An earlier audit folder whose "
                                             "labels may be reused (label --reuse)."),
    design_data: bool = typer.Option(False, "--design-data", help="With --reuse-labels: those labels "
                                     "informed this cut; record them as design data, never count them."),
    prior_scale: float | None = typer.Option(None, "--prior-scale", help="sequential, interleaved: the "
                                             "audit's prior mean as a share of its basis (default 0.5 of "
                                             "the misses allowed, 1 of the tail; labels only, never "
                                             "validity)."),
    prior_basis: str | None = prior_basis_option("misses", "interleaved: "),
    policy: str | None = policy_option("projected-cost", "interleaved: "),
    as_json: bool = JSON,
) -> None:
    """Freeze the cut (or nested family) and the audit rule before any label is seen."""
    confidence_delta(delta)
    from rankcut.audit import workflow
    from rankcut.cli._common import chosen

    manifest = workflow.freeze(
        out, run=run, design=design, cut=cut,
        family=None if family is None else _family(family),
        offsets=_ints(offsets, "--offsets"), depths=_ints(depths, "--depths"), delta=delta,
        allocation=_allocation(allocation), target_recall=target_recall, max_missed=max_missed, seed=seed,
        corpus_size=corpus_size, corpus_ids=corpus_ids, ordering=ordering, sampling=sampling,
        reference=reference, bands=_ints(bands, "--bands"), allow_incomplete=allow_incomplete,
        allow_missing_queries=allow_missing_queries, texts=texts,
        reuse_labels=reuse_labels, design_data=design_data, prior_scale=prior_scale,
        prior_basis=prior_basis, policy=policy,
    )
    if as_json:
        _echo_json(manifest.to_dict())
        return
    members = manifest["pools"]["members"]
    typer.echo(f"froze audit {manifest.audit_id} in {manifest.folder}")
    typer.echo(f"  {manifest['design']} design: {workflow.DESIGNS[manifest['design']].summary}")
    typer.echo(f"  {manifest['theorem']}, δ = {manifest['delta']:g} "
               f"({', '.join(f'{k} {v:g}' for k, v in manifest['allocation'].items())}), "
               f"{manifest['sampling']}, seed {manifest['seed']}")
    if workflow.DESIGNS[manifest["design"]].adaptive:
        frozen = manifest["policy"]
        typer.echo(f"  the collection: {manifest['pools']['items']} documents; policy {frozen['name']} "
                   f"({', '.join(f'{k}={v}' for k, v in frozen['config'].items())}), screener "
                   f"{manifest['screener']['name']}")
    for m in members if not workflow.DESIGNS[manifest["design"]].adaptive else []:
        typer.echo(f"  {m['name']}: burden N1 = {m['n1']}, excluded pool N0 = {m['n0']} "
                   f"(N = {manifest['pools']['items']})")
    if not chosen(ctx, "design"):
        typer.echo("  (the default design: its target is met by the cut read in full plus what the audit of "
                   "the rest finds; for what the cut alone leaves behind, freeze with --design excluded, "
                   "its missed count, or --design two-pool, its recall)")
    typer.echo(f"next: rankcut audit plan --audit {_q(manifest.folder)}")


@app.command("stop")
@_fail_cleanly
def stop(
    ctx: typer.Context,
    run: Path = typer.Option(..., "--run", help="The ranked lists being screened (TREC run, or Parquet by "
                             "the suffix .parquet)."),
    labels: Path | None = typer.Option(None, "--labels", help="The screening labels so far: CSV/TSV/JSONL "
                                       "with query_id, doc_id, label."),
    qrels: Path | None = typer.Option(None, "--qrels", help="Simulation: every listed document labelled "
                                      "from TREC qrels (unjudged = not relevant)."),
    threshold: float = typer.Option(1, "--threshold", help="--qrels: grade counted as relevant."),
    target_recall: float = typer.Option(0.8, "--target-recall", help="The review's recall target ρ."),
    delta: float = typer.Option(0.05, "--delta", help="The audit's error probability δ."),
    margin: float = typer.Option(0.5, "--margin", help="Stop when the projected unfound relevant items are "
                                 "at most this share of the misses the target allows."),
    window: int = typer.Option(500, "--window", help="Screened labels the projection is fitted to."),
    prior_scale: float = typer.Option(0.5, "--prior-scale", help="The audit's prior mean, as a share of "
                                      "the misses allowed: give freeze the same (costs only, never "
                                      "validity)."),
    lookahead: bool = typer.Option(True, "--lookahead/--no-lookahead", help="Where the margin test "
                                   "passes, stop only if stopping now is projected to cost no more than "
                                   "one batch more (slower: seconds a call on a topic of thousands of "
                                   "documents, minutes on a whole CLEF run; never affects validity)."),
    ordering: str = typer.Option("rank", "--ordering", help="List order: rank or trec_eval."),
    out: Path | None = typer.Option(None, "--out", help="Write the cut run here once every query has "
                                    "stopped."),
    as_json: bool = JSON,
) -> None:
    """Where screening stops, per query, by the pre-registered rule; then write the cut run to audit."""
    confidence_delta(delta)
    from rankcut._progress import show_progress
    from rankcut.audit.labels import read_label_file
    from rankcut.audit.oracle import qrels_oracle
    from rankcut.audit.screening import screening_stops, write_cut
    from rankcut.certify.screening import ReviewRule
    from rankcut.cli._common import chosen, note_grades
    from rankcut.data.io import writes_through
    from rankcut.data.trec import load_trec, read_qrels, warn_if_uncovered

    if labels is not None and qrels is not None:
        raise ValueError("give the screening labels once: --labels FILE, or --qrels Q to simulate a "
                         "reviewer, not both")
    if labels is None and qrels is None:
        raise ValueError("give the screening labels: --labels FILE, or --qrels Q to simulate a reviewer")
    if qrels is None and chosen(ctx, "threshold"):
        raise ValueError("--threshold is for --qrels: it says which grade of the qrels counts as relevant "
                         "(a label file holds 0/1 labels)")
    if not 0 < target_recall < 1:   # the cut is frozen next, and freeze takes no other target
        from rankcut.certify._validate import percent_hint

        raise ValueError(f"--target-recall must lie in (0, 1), got {target_recall!r}"
                         + percent_hint(target_recall))
    progress = show_progress(as_json=as_json)
    lists = load_trec(run, ordering=ordering)
    if labels is not None:
        given = {(q, d): int(y) for q, d, y in read_label_file(labels)}
    else:
        assert qrels is not None
        listed = [(q, d) for i, q in enumerate(lists.qids)
                  for d in lists.doc_ids[i, : lists.lengths[i]].tolist()]
        judged = read_qrels(qrels)
        warn_if_uncovered(lists, judged, where=f"--qrels {qrels}: ")   # its labels all 0 there
        note_grades(ctx, qrels, judged, threshold)
        given = dict(zip(listed, qrels_oracle(judged, listed, threshold), strict=True))
    try:
        rule = ReviewRule(target=target_recall, delta=delta, margin=margin, window=window,
                          prior_scale=prior_scale, lookahead=lookahead)
    except ValueError as err:   # the rule names its fields; say the options they came from
        field, _, rest = str(err).partition(" ")
        flag = {"target": "--target-recall", "delta": "--delta", "margin": "--margin",
                "window": "--window", "prior_scale": "--prior-scale"}.get(field)
        raise ValueError(f"{flag} {rest}" if flag else str(err)) from None
    longest = int(lists.lengths.max())
    if lookahead and longest > LOOKAHEAD_SLOW:   # said now, before the wait, not with the warnings at the end
        typer.echo(f"warning: {run} lists up to {longest:,} documents a query: the lookahead projects the "
                   "audit of the unread rest exactly, which takes seconds a check at this size and "
                   "minutes in all (about 12 s a check at 196,000 unread, 265 s in all at 200,000; "
                   "docs/scaling.md); --no-lookahead skips it (the stop then rests on the margin test "
                   "alone)", err=True)
    try:
        stops = screening_stops(lists, given, rule, progress=progress)
    except ValueError as err:
        raise ValueError(f"{labels or qrels}: {err}") from None
    screening = [s for s in stops if s.stop is None]
    # mid-screening is the normal answer, not an error: no cut yet, and how far to read before the
    # rule is next checked (it is checked at batch boundaries only)
    more = {s.query_id: min(s.length, (s.screened // rule.batch + 1) * rule.batch) - s.screened
            for s in screening}
    written = write_cut(lists, stops, out) if out is not None and not screening else None
    with stdout_aside(out):   # --out /dev/stdout: the run alone there
        if as_json:
            _echo_json({"stops": [vars(s) for s in stops], "cut": None if written is None else str(written),
                        "read_more": more})
            return
        for s in stops:
            typer.echo(s.render(simulated=qrels is not None))
        typer.echo(f"{len(stops) - len(screening)} of {len(stops)} queries stopped")
        if screening:
            todo = ", ".join(f"{s.query_id}: {more[s.query_id]} more, to rank {s.screened + more[s.query_id]}"
                             for s in screening)
            typer.echo(f"screen on: read {sum(more.values())} more before the rule is checked again ({todo})"
                       + ("; no cut run is written until every query has stopped" if out is not None else ""))
        if written is not None:
            scale = "" if prior_scale == ReviewRule().prior_scale else f" --prior-scale {prior_scale:g}"
            order = "" if ordering == "rank" else f" --ordering {ordering}"   # the cut's prefixes are in it
            cut = "CUT.run (the run written, saved to a file)" if writes_through(written) else _q(written)
            typer.echo(f"wrote {written}; next: rankcut audit freeze --run {_q(run)} --cut {cut} "
                       f"--target-recall {target_recall:g} --delta {delta:g}{scale}{order} --out AUDIT")


@app.command("plan")
@_fail_cleanly
def plan(
    audit: Path = AUDIT,
    expected_precision: float | None = typer.Option(
        None, "--expected-precision",
        help="two-pool: share of relevant items expected in the included pool (planning guess, default "
             "0.5; changes sizes, never validity)."),
    tolerated: int = typer.Option(0, "--tolerated", help="Relevant items the excluded-pool audit may find "
                                  "and still meet the target."),
    as_json: bool = JSON,
) -> None:
    """Sample sizes for the frozen target, from the engine's planners, before any labelling."""
    from rankcut.audit import workflow

    result = workflow.plan(audit, expected_precision=expected_precision, tolerated=tolerated)
    if as_json:
        _echo_json(result.content)
    else:
        typer.echo(result.render())
        typer.echo(_next_line(workflow.status(audit), audit))   # a plan re-run later: where it stands


@app.command("sample")
@_fail_cleanly
def sample(
    audit: Path = AUDIT,
    excluded: str | None = typer.Option(
        None, "--excluded",
        help="Excluded-pool draws (default: the plan). Separate prefix samples: one per member "
             "(300,200,...); stratified: one per band, or one for every band; shared reference: its size."),
    included: int | None = typer.Option(None, "--included", help="two-pool: included-pool draws "
                                        "(default: the plan)."),
    label_format: str = typer.Option("csv", "--format", help="The list to label: csv or jsonl."),
    allow_underpowered: bool = typer.Option(
        False, "--allow-underpowered", help="Draw sizes that cannot meet the frozen target even if the "
        "audit finds nothing (refused without it: the audit has one sample)."),
    as_json: bool = JSON,
) -> None:
    """Draw the audit items from the frozen manifest and seed (once) and write the list to label."""
    from rankcut.audit import workflow

    sizes = _ints(excluded, "--excluded")
    one_or_many = None if sizes is None else sizes[0] if len(sizes) == 1 else sizes
    result = workflow.sample(audit, excluded=one_or_many, included=included, label_format=label_format,
                             allow_underpowered=allow_underpowered)
    if as_json:
        _echo_json({"sizes": result.sizes, "draws": result.n_draws, "items": result.n_items,
                    "sample_hash": result.sample_hash, "to_label": str(result.to_label)})
    else:
        info = workflow.status(audit)
        design = workflow.DESIGNS[info["design"]]
        if design.adaptive:   # nothing drawn to label: an order frozen
            typer.echo(f"froze the audit order of the collection's {result.n_items:,} documents (sample hash "
                       f"{result.sample_hash[:12]})")
            typer.echo(f"{result.to_label} holds the one document the review asks for first; each label "
                       "decides the next, so label one step at a time (--interactive, or --oracle qrels "
                       "[--next N] to simulate)")
            typer.echo(info["next_move"])
        else:
            typer.echo(result.render())
            if design.anytime:
                typer.echo(f"label {result.to_label} from the top: the cut's {result.sizes['included']} "
                           "items, then the excluded pool in the audit order, as far as needed; certify "
                           "whenever you like")
        typer.echo(_label_next(audit, result.to_label))


@app.command("label")
@_fail_cleanly
def label(
    ctx: typer.Context,
    audit: Path = AUDIT,
    from_file: Path | None = typer.Option(None, "--from", help="A CSV/TSV/JSONL file: query_id, doc_id, "
                                          "label (0/1, yes/no)."),
    oracle: str | None = typer.Option(None, "--oracle", help="Simulation: 'qrels' takes labels from --qrels "
                                      "(unjudged = not relevant; the count is shown)."),
    qrels: Path | None = typer.Option(None, "--qrels", help="TREC qrels for --oracle qrels."),
    threshold: float = typer.Option(1, "--threshold", help="--oracle qrels: grade counted as relevant."),
    unjudged_nonrelevant: bool = typer.Option(
        False, "--unjudged-nonrelevant",
        help="--oracle qrels: label unjudged items not relevant even when the qrels judge none of the "
             "documents listed for the queries holding most of the sample (refused otherwise: they may be "
             "another topic set's or collection's)."),
    interactive: bool = typer.Option(False, "--interactive", help="Ask in the terminal, item by item, with "
                                     "the query and document texts of freeze --texts (resumable; u undoes "
                                     "the last answer)."),
    reuse: bool = typer.Option(False, "--reuse", help="Copy labels of sampled items from --reuse-labels."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a different earlier label (kept in "
                                   "the store's history)."),
    next_n: int | None = typer.Option(None, "--next", help="--oracle qrels: label only the next N "
                                      "unlabelled items of the list (a simulated reviewer, in batches)."),
    as_json: bool = JSON,
) -> None:
    """Record labels of the sampled items in the audit's label store."""
    from rankcut.audit import workflow
    from rankcut.cli._common import chosen, note_grades

    if oracle is not None and oracle != "qrels":
        raise ValueError(f"--oracle takes 'qrels', got {oracle!r}")
    if (oracle is None) != (qrels is None):
        raise ValueError("--oracle qrels and --qrels go together")
    if qrels is None and chosen(ctx, "threshold"):   # taken by nothing else
        raise ValueError("--threshold is for --oracle qrels: it says which grade of the qrels counts as "
                         "relevant (a label file's labels are 0 or 1)")
    with bars(show_progress(as_json=as_json) and not interactive):   # an interleaved review's steps
        result = workflow.label(audit, from_file=from_file, qrels=qrels, threshold=threshold,
                                unjudged_nonrelevant=unjudged_nonrelevant, interactive=interactive,
                                reuse=reuse, overwrite=overwrite, limit=next_n, output=typer.echo)
    if qrels is not None:   # the grade the labels took, said once they are recorded
        from rankcut.data.trec import read_qrels

        note_grades(ctx, qrels, read_qrels(qrels), threshold)
    if as_json:
        _echo_json({"source": result.source, "recorded": result.recorded, "labelled": result.labelled,
                    "total": result.total, "unjudged": result.unjudged})
    else:
        typer.echo(result.render())
        info = None if result.missing == 0 else workflow.status(audit)
        if info is not None and info.get("incomplete"):   # --allow-incomplete: certify counts the rest
            typer.echo(_incomplete_next(audit, info))
        elif info is None or info["next"] == "certify":   # (the sequential design: at any time)
            typer.echo(f"next: rankcut audit certify --audit {_q(audit)}")


@app.command("certify")
@_fail_cleanly
def certify(audit: Path = AUDIT, as_json: bool = JSON) -> None:
    """Compute the certificates; refuses when anything frozen changed or the labels do not fit.

    Exit status 0 when the frozen target is met (or none was frozen), 1 when it is not met, 2 when
    refused."""
    from rankcut.audit import workflow

    with bars(show_progress(as_json=as_json)):
        result = workflow.certify(audit)
    typer.echo(result.to_json() if as_json else result.render())
    if not result.met:
        raise typer.Exit(1)   # a script can stop on "met" alone, as with `rankcut review certify`


@app.command("report")
@_fail_cleanly
def report(
    audit: Path = AUDIT,
    out: Path = typer.Option(..., "--out", help="report.html or report.md; the certificate JSON (and the "
                             "Markdown plot) go beside it."),
    as_json: bool = JSON,
) -> None:
    """Write a readable report, the certificate JSON and a plot (--json: print that JSON)."""
    from rankcut.audit.report import write_report

    files = write_report(audit, out)
    if files.warning:   # labels or inputs changed since the certificate: said in the report, and here
        say_warnings([files.warning])
    if as_json:
        typer.echo(files.certificate.read_text(encoding="utf-8"), nl=False)
        return
    typer.echo(files.said())


@app.command("status")
@_fail_cleanly
def status(audit: Path = AUDIT, as_json: bool = JSON) -> None:
    """Which steps the audit has done, and the next one."""
    from rankcut.audit import workflow

    info = workflow.status(audit)
    if as_json:
        _echo_json(info)
        return
    typer.echo(f"audit {info['audit_id']} ({info['design']}), frozen at {info['frozen_at']}")
    # an anytime audit certified and not met yet: "[ ] certify" alone read as never run (the scale walk)
    not_met = info.get("met") is False and not info.get("certificate_refused")
    for step, done in info["steps"].items():
        said = _counts(info) if step == "label" else ""
        if step == "certify" and not done and not_met:
            said = ": run, the target not met yet"
        typer.echo(f"  {'[x]' if done else '[ ]'} {step}{said}")
    if info.get("beyond_labelling"):
        typer.echo(f"  {info['beyond_labelling']}")
    if info.get("opened_at"):
        typer.echo(f"  labels opened for certification at {info['opened_at']}")
    if info.get("verdict"):
        typer.echo(f"  {info['verdict']}")
    for refused in ("labels_changed", "inputs_changed", "certificate_refused"):   # what certify/report refuse
        if info.get(refused):
            typer.echo(f"  warning: {info[refused]}")
    if info.get("next_move"):   # the interleaved review: the document asked for next, and why
        typer.echo(f"  {info['next_move']}")
        typer.echo(f"  guarantee: {info['guarantee']}")
        if info.get("tail"):
            typer.echo(f"  ahead: {info['tail']}")
        if info["can_read_on"]:   # met with documents unread
            typer.echo(f"  to read on (the screener's next picks, each counted; the target stays met): "
                       f"rankcut audit read-on --audit {_q(audit)}")
    typer.echo(_next_line(info, audit))


@app.command("read-on")
@_fail_cleanly
def read_on(audit: Path = AUDIT, as_json: bool = JSON) -> None:
    """Interleaved design, once met: ask for the screener's next picks again, each counted."""
    from rankcut.audit import workflow
    from rankcut.audit.designs.base import Words

    since, now = workflow.read_on(audit)
    info = workflow.status(audit)
    said_read_on(since, now, Words(), info, [info["next_move"], _next_line(info, audit)], as_json)


def _q(path: Path | str) -> str:
    """A path as the shell reads it back (quoted where it holds spaces or other special characters)."""
    return shlex.quote(str(path))


def _label_next(audit: Path, to_label: Path) -> str:
    """The label step as a command that runs as printed: from the list to label, once filled in."""
    return (f"next: rankcut audit label --audit {_q(audit)} --from {_q(to_label)}"
            "   # after filling its label column")


def _counts(info: dict[str, Any]) -> str:
    """How far labelling has come, for the ``label`` line of ``status``."""
    if "sample" not in info:
        return ""
    text = f": {info.get('labelled', 0)} of {info['sample']['items']} sampled items labelled"
    if "review_steps" in info:   # the interleaved design: the steps read
        return f": {info['review_steps']} of {info['sample']['items']} documents read"
    if "audit_labels" in info:   # the sequential design: the labelled start of the audit order
        t = info["audit_labels"]
        text += f" (audit order: {f'positions 1–{t}' if t else 'no position'} labelled)"
    return text


def _next_line(info: dict[str, Any], audit: Path) -> str:
    """The step after what the audit folder records (``workflow.status``), as a command that runs as
    printed."""
    if info.get("inputs_changed"):   # certify refuses the audit now: neither "done" nor a step to run
        return "next: restore the input file named above (certify refuses it), or freeze a new audit"
    if info.get("labels_changed"):   # certify refuses the labels now: neither "done" nor a step to run
        return ("next: restore the labels that were opened (certify refuses these), or freeze a new audit; "
                "the certificate written before can still be read with rankcut audit report")
    if info["next"] is None:
        return "done"
    if info["next"] == "label":
        return _label_next(audit, Path(audit) / info["sample"]["to_label"])
    if info["next"] == "certify" and info.get("incomplete"):
        return _incomplete_next(audit, info)
    if info["next"] == "sample" and "planned_sizes" in info and info["planned_sizes"] is None:
        sizes = "--excluded N" + (" --included N" if info["design"] == "two-pool" else "")
        return (f"next: rankcut audit sample --audit {_q(audit)} {sizes}, with N the sample sizes you "
                "choose (no target was frozen to plan them)")
    return f"next: rankcut audit {info['next']} --audit {_q(audit)}"


def _incomplete_next(audit: Path, info: dict[str, Any]) -> str:
    """The next step of an audit frozen with --allow-incomplete while sampled items are unlabelled
    (``workflow.status``'s ``incomplete``): label them, or certify now, which counts them against
    the cut and opens the labels for good."""
    n, to_label = info["incomplete"], Path(audit) / info["sample"]["to_label"]
    return (f"next: label the {n} item{'s' * (n != 1)} left (rankcut audit label --audit {_q(audit)} --from "
            f"{_q(to_label)}), or rankcut audit certify --audit {_q(audit)} now: --allow-incomplete counts "
            "them against the cut, and certify opens the labels for good (no label is taken after it)")
