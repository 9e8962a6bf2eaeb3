"""``rankcut demo``: an offline end-to-end run on data that rankcut generates deterministically.

1. The audit paper's §8 worked example as one joint report.
2. Where to cut: a synthetic TREC run and qrels (200 queries × 100 documents), the classical
   cutters and — with the ``torch`` extra — a small AttnCut trained on 150 queries and tested on
   the other 50 (AttnCut's Table 3 layout).
3. What the cut left behind: the cut that AttnCut (or, without torch, Greedy-k) produced on the
   test lists is audited with the real workflow (:mod:`rankcut.audit.workflow`: freeze → plan →
   sample → label → certify → report), the qrels playing the reviewer (a simulation), and the
   certificate is said in plain words — then checked against the truth, which a real audit never
   sees, and repeated 2,000 times to show what "95% confidence" means.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import typer

from rankcut._progress import show_progress
from rankcut.certify.report import JointReport
from rankcut.cli._errors import fail

#: the synthetic collection: queries, documents per query, training queries (the rest are tested)
N_QUERIES, DEPTH, N_TRAIN = 200, 100, 150
#: the demo's AttnCut: the paper's network and RAML loss, fewer epochs than the default 60, and
#: bfloat16 where the CPU has AMX (about twice as fast; "auto" is float32 elsewhere)
ATTNCUT_EPOCHS, ATTNCUT_PATIENCE, ATTNCUT_PRECISION = 30, 8, "auto"
#: how long that training takes (README.md's quickstart says the same): the whole demo took 29 s and
#: 39 s wall (49–56 s of CPU) from a fresh clone on two idle cores (`/usr/bin/time rankcut demo`,
#: 2026-12-02), most of it this training; on two busy cores it was measured at 5.5 minutes
#: (issue 15). 15 epochs would shorten it but cost test F1 (0.467 against 0.482 with 30, where
#: epoch 25 is chosen: the model still learns), so the demo keeps 30.
ATTNCUT_MINUTES = "well under a minute on two idle cores, minutes on busy ones"
#: audit sample sizes (excluded pool, included pool) and the joint error probability
AUDIT_SIZES, AUDIT_DELTA = (400, 200), 0.05


def section8_report() -> JointReport:
    """The §8 worked example: N = 100,000, the cut keeps 30,000; 300 excluded-pool labels find
    no relevant item, 500 included-pool labels find 100. δ = 0.025 + 0.025."""
    from rankcut.certify import excluded, recall

    budget = {"excluded audit": 0.025, "included audit": 0.025}
    missed = excluded.excluded_pool_finite_certificate(0, 300, 70_000, 0.025, corpus_size=100_000)
    rec = recall.two_pool_recall_finite_certificate(k0=0, n0=300, pool0=70_000, k1=100, n1=500, pool1=30_000,
                                                    delta=0.05, deltas=(0.025, 0.025))
    report = JointReport(
        delta=0.05,
        budget=budget,
        title="Audit paper §8: a generator flags 30,000 of 100,000 sentences for review",
        facts={"burden B_N(g)": 0.30, "excluded pool N0": 70_000},
    )
    return report.attach("missed", missed, charge={"g": "excluded audit"}).attach("recall", rec)


def demo(
    out: Path | None = typer.Option(
        None, "--out", help="Folder for the generated run, qrels, cut run, audit and report (default: a "
        "temporary folder)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic lists, of AttnCut and of the audit "
                             "sample."),
) -> None:
    """Run the audit paper's §8 example, then cut synthetic ranked lists and audit the cut, offline.

    The cutters are the classical ones and AttnCut."""
    # check the options before printing anything: a bad one gives one line and status 2
    if seed < 0:
        fail(f"--seed must be >= 0, got {seed}")
    try:
        progress = show_progress()
    except ValueError as exc:
        fail(str(exc))
    if out is not None:
        if out.exists() and not out.is_dir():
            fail(f"--out {out} is a file; give a folder (it is created if missing)")
        if out.is_dir() and (out / "audit").exists():
            fail(f"--out {out} holds an earlier demo's audit (an audit is frozen once): give a new folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"--out {out}: cannot create the folder ({exc.strerror or exc})")
    typer.echo("== 1. Certifying what a cut leaves behind (audit paper, §8) ==\n")
    typer.echo(section8_report().render())
    if out is None:
        with tempfile.TemporaryDirectory(prefix="rankcut-demo-") as tmp:
            _cut_and_audit(Path(tmp), seed=seed, kept=False, progress=progress)
    else:
        try:
            _cut_and_audit(out, seed=seed, kept=True, progress=progress)
        except OSError as exc:  # e.g. a folder that exists but cannot be written
            fail(f"--out {out}: {exc.strerror or exc}")


def _cut_and_audit(folder: Path, *, seed: int, kept: bool, progress: bool) -> None:
    cut = _truncation_demo(folder, seed=seed, kept=kept, progress=progress)
    _audit_demo(folder, cut, seed=seed, kept=kept)
    typer.echo(
        "\n== Your own data ==\n"
        "  rankcut evaluate --run RUN --qrels QRELS --folds 5 \\\n"
        "      --cutters oracle,fixed-k:10,greedy-k,distribution,attncut\n"
        "  rankcut train --run TRAIN.run --qrels QRELS --model attncut --loss raml --metric f1 --out MODEL\n"
        "  rankcut cut --model MODEL --run RUN --out cut.run\n"
        "  rankcut audit freeze --run RUN --cut cut.run --design two-pool --delta 0.05 --target-recall 0.8 "
        "--seed 11 --out AUDIT\n"
        "  rankcut audit plan --audit AUDIT   (then sample, label, certify, report)\n"
        "Add --threshold 2 for graded qrels such as TREC DL, and --missing keep for positives-only qrels."
    )


@dataclass(frozen=True)
class _Cut:
    """What part 2 hands to part 3: the judged test lists, their cuts and files, the cutter's name."""

    test: Any
    cuts: Any
    test_run: Path
    cut_run: Path
    qrels: Path
    name: str


def _truncation_demo(folder: Path, *, seed: int, kept: bool, progress: bool) -> _Cut:
    """Part 2: evaluate the cutters; write the test lists and the cut of the learned cutter."""
    from rankcut.cutters import AttnCut, GreedyK
    from rankcut.data.synthetic import write_synthetic
    from rankcut.data.trec import load_trec, write_run
    from rankcut.evaluation import evaluate_cutters, format_table, with_trained

    run_path, qrels_path = write_synthetic(folder, n_queries=N_QUERIES, depth=DEPTH, seed=seed)
    typer.echo("\n== 2. Where to cut: classical cutters and AttnCut on synthetic ranked lists ==\n")
    where = "" if kept else " (pass --out DIR to keep the files)"
    typer.echo(f"Generated {run_path} and {qrels_path}: {N_QUERIES} queries x {DEPTH} documents, "
               f"seed {seed}{where}.")
    lists = load_trec(run_path, qrels_path, threshold=1)   # graded 0-2: grade ≥ 1 is relevant here
    train_ids, test_ids = lists.qids[:N_TRAIN], lists.qids[N_TRAIN:]
    train, test = lists.subset(train_ids), lists.subset(test_ids)
    specs = ["oracle", "fixed-k:5", "fixed-k:10", "fixed-k:50", "greedy-k", "distribution", "surprise"]
    typer.echo(f"Fitting the classical cutters ({', '.join(specs)}) on the first {N_TRAIN} queries and "
               f"testing them on the other {len(test_ids)} (seconds) ...")
    ev = evaluate_cutters(specs, lists, train=train_ids, baseline="greedy-k")

    try:
        import safetensors  # noqa: F401  (checkpoints)
        import torch
    except ImportError:
        neural = False
    else:
        neural = True
    if neural:
        torch.set_num_threads(min(2, torch.get_num_threads()))
        cutter: Any = AttnCut(loss="raml", epochs=ATTNCUT_EPOCHS, patience=ATTNCUT_PATIENCE,
                              precision=ATTNCUT_PRECISION, seed=seed, progress=progress)
        typer.echo(f"Training AttnCut on the same {N_TRAIN} queries, at most {ATTNCUT_EPOCHS} epochs "
                   f"({ATTNCUT_MINUTES}, the slow part of the demo; in a terminal a bar on stderr shows "
                   "each epoch's loss and validation F1) ...")
        start = time.perf_counter()
        cutter.fit(train)
        seconds = time.perf_counter() - start
        cuts = cutter.predict(test)
        name = "attncut"
        ev = with_trained(ev, lists, {name: cutter}, baseline=ev.protocol["baseline"])
    else:
        cutter = GreedyK().fit(train)
        cuts = cutter.predict(test)
        name = "greedy-k"
    typer.echo(f"\nTrained on the first {N_TRAIN} queries, tested on the other {len(test_ids)}:\n")
    typer.echo(format_table(ev))
    if neural:
        typer.echo(
            f"attncut: AttnCut (BiLSTM + self-attention over the list, RAML loss, Eq. 6) trained for F1 in "
            f"{seconds:.0f} s; epoch {cutter.best_epoch_} of {len(cutter.history_)} chosen on "
            f"{len(cutter.val_qids_)} validation queries carved from the training queries "
            f"(validation F1 {cutter.val_metric_:.4f}); its DCG column is the F1 model's cut."
        )
    else:
        typer.echo("(AttnCut needs PyTorch: pip install 'rankcut[torch]' adds it to this table.)")

    test_run = folder / "test.run"
    write_run(test_run, test)
    cut_path = folder / f"{name}.cut.run"
    write_run(cut_path, test, cuts, tag=name)
    typer.echo(f"\n{name} keeps {int(cuts.sum())} of {int(test.mask.sum())} documents of the {len(test)} "
               f"test lists (mean k = {cuts.mean():.1f}); the cut run is {cut_path}.")
    return _Cut(test, cuts, test_run, cut_path, qrels_path, name)


def _audit_demo(folder: Path, cut: _Cut, *, seed: int, kept: bool) -> None:
    """Part 3: the audit workflow on the cut, the certificate in plain words, and the truth."""
    from rankcut import audit
    from rankcut.audit.pools import Pools

    typer.echo("\n== 3. The cut is a candidate generator: audit what it left behind ==\n")
    audit_dir = folder / "audit"
    n0, n1 = AUDIT_SIZES
    # the cuts are the cutter's own: a query it cut at 0 has no line in the cut run
    manifest = audit.freeze(audit_dir, run=cut.test_run, cut=cut.cut_run, design="two-pool",
                            delta=AUDIT_DELTA, seed=seed, allow_missing_queries=True)
    typer.echo(f"rankcut audit freeze: audit {manifest.audit_id[:12]} — the cut, its pools and the rule "
               f"(two-pool design, δ = {AUDIT_DELTA}, seed {seed}) are fixed before any label is seen.")
    audit.plan(audit_dir)  # no target: the sizes are the demo's, given to sample
    drawn = audit.sample(audit_dir, excluded=n0, included=n1)
    typer.echo(f"rankcut audit sample: {drawn.n_draws} documents drawn uniformly at random, {n0} from the "
               f"excluded pool (below the cut) and {n1} from the included pool (kept).")
    audit.label(audit_dir, qrels=cut.qrels)
    typer.echo("rankcut audit label --oracle qrels: the qrels play the reviewer (a simulation).")
    result = audit.certify(audit_dir)
    files = audit.write_report(audit_dir, folder / "audit-report.md")
    typer.echo("rankcut audit certify:\n")
    typer.echo(result.render())

    certs = {c["name"]: c["certificate"] for c in result.content["report"]["certificates"]}
    bound, missed_bound = float(certs["recall"]["value"]), int(certs["missed"]["value"])
    lists, name = cut.test, cut.name
    pools = Pools.from_lists(lists, cut.cuts)
    relevant = lists.labels.astype(bool) & lists.mask
    kept_mask = np.arange(lists.max_len)[None, :] < cut.cuts[:, None]
    m1, m0 = int(relevant[kept_mask].sum()), int(relevant[~kept_mask].sum())
    truth = m1 / (m1 + m0)
    typer.echo(
        f"\nIn plain words: after reading {n0 + n1} of the {pools.n_items} documents, we can say with 95% "
        f"confidence that {name}'s cut kept at least {math.floor(bound * 100)}% of the relevant documents "
        f"of these lists and left at most {missed_bound} relevant documents behind, while keeping "
        f"{pools.n1} documents (a burden of {pools.n1 / pools.n_items:.0%})."
    )
    parts = "Markdown, plot, certificate JSON" if files.plot is not None else "Markdown, certificate JSON"
    if kept:
        typer.echo(f"The report ({parts}) is {files.report}.")
    else:
        typer.echo(f"The report ({parts}) went to a temporary folder: pass --out DIR to keep it.")
    held = truth >= bound and m0 <= missed_bound
    verdict = "held" if held else "FAILED: this draw is one of the unlucky ones (at most 5% are)"
    typer.echo(f"The truth, which a real audit never sees: the cut kept {m1} of {m1 + m0} relevant documents "
               f"(recall {truth:.3f}) and missed {m0}, so the certificate {verdict}.")
    _repeat(pools.n0, m0, pools.n1, m1, n0, n1, seed)


def _repeat(pool0: int, m0: int, pool1: int, m1: int, n0: int, n1: int, seed: int) -> None:
    """The same two-pool audit 2,000 times on these pools: how often the 95% certificate holds."""
    from rankcut.certify.bounds import hypergeom_lower, hypergeom_upper
    from rankcut.certify.recall import recall_lower

    rng = np.random.default_rng([seed, 2000])
    k0 = rng.hypergeometric(m0, pool0 - m0, n0, size=2000)
    k1 = rng.hypergeometric(m1, pool1 - m1, n1, size=2000)
    d = AUDIT_DELTA / 2  # Corollary 11's default split, as the workflow froze it
    mu = hypergeom_upper(k0, d, population=pool0, draws=n0)
    ml = hypergeom_lower(k1, d, population=pool1, draws=n1)
    bound = recall_lower(ml, mu)   # Corollary 11, as two_pool_recall_finite_certificate reads it
    held = (bound <= m1 / (m1 + m0)) & (mu >= m0)
    typer.echo(f"Repeating this audit 2,000 times on the same pools, the 95% certificate held in "
               f"{held.mean():.1%} of them: a 95% certificate may fail in at most 5% of audits.")
