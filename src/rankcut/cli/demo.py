"""``rankcut demo``: an offline end-to-end run on data that rankcut generates deterministically.

Part 1 replays the audit paper's §8 worked example as one joint report. Part 2 writes a
synthetic TREC run and qrels, evaluates the classical cutters on a train/test split, and then
audits the cut that Greedy-k picked: the cut is a candidate generator, its excluded pool is
sampled, and the certificate says how much relevant material the cut left behind.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import typer

from rankcut.certify.report import JointReport
from rankcut.cli._errors import fail


def section8_report() -> JointReport:
    """The §8 worked example: N = 100,000, the cut keeps 30,000; 300 excluded-pool labels find
    no relevant item, 500 included-pool labels find 100. δ = 0.025 + 0.025."""
    from rankcut.certify import excluded, recall

    budget = {"excluded audit": 0.025, "included audit": 0.025}
    missed = excluded.excluded_pool_finite_certificate(0, 300, 70_000, 0.025, corpus_size=100_000)
    rec = recall.two_pool_recall_finite_certificate(
        0, 300, 70_000, 100, 500, 30_000, 0.05, deltas=(0.025, 0.025)
    )
    report = JointReport(
        delta=0.05,
        budget=budget,
        title="Audit paper §8: a generator flags 30,000 of 100,000 sentences for review",
        facts={"burden B_N(g)": 0.30, "excluded pool N0": 70_000},
    )
    return report.attach("missed", missed, charge={"g": "excluded audit"}).attach("recall", rec)


def demo(
    out: Path | None = typer.Option(
        None, "--out", help="Folder for the generated run, qrels and cut run (default: a temporary folder)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic lists and of the audit sample."),
) -> None:
    """Run the audit paper's §8 example, then cut and audit synthetic ranked lists, offline."""
    # check the options before printing anything: a bad one gives one line and status 2
    if seed < 0:
        fail(f"--seed must be >= 0, got {seed}")
    if out is not None:
        if out.exists() and not out.is_dir():
            fail(f"--out {out} is a file; give a folder (it is created if missing)")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"--out {out}: cannot create the folder ({exc.strerror or exc})")
    typer.echo("== 1. Certifying what a cut leaves behind (audit paper, §8) ==\n")
    typer.echo(section8_report().render())
    if out is None:
        with tempfile.TemporaryDirectory(prefix="rankcut-demo-") as tmp:
            _truncation_demo(Path(tmp), seed=seed)
    else:
        try:
            _truncation_demo(out, seed=seed)
        except OSError as exc:  # e.g. a folder that exists but cannot be written
            fail(f"--out {out}: {exc.strerror or exc}")


def _truncation_demo(folder: Path, *, seed: int = 0) -> None:
    from rankcut.certify import excluded
    from rankcut.cutters.fixed import GreedyK
    from rankcut.data.synthetic import write_synthetic
    from rankcut.data.trec import load_trec, write_run
    from rankcut.evaluation import evaluate_cutters, format_table

    run_path, qrels_path = write_synthetic(folder, n_queries=60, depth=100, seed=seed)
    typer.echo("\n== 2. Where to cut: classical cutters on synthetic ranked lists ==\n")
    typer.echo(
        f"Generated {run_path} and {qrels_path} (60 queries x 100 documents, seed {seed}; "
        "pass --out DIR to keep the files)."
    )
    lists = load_trec(run_path, qrels_path)
    train = lists.qids[:40]
    ev = evaluate_cutters(
        ["oracle", "fixed-k:5", "fixed-k:10", "fixed-k:50", "greedy-k", "distribution", "surprise"],
        lists,
        train=train,
        baseline="greedy-k",
    )
    typer.echo("Trained on the first 40 queries, tested on the last 20:\n")
    typer.echo(format_table(ev))

    test = lists.subset(lists.qids[40:])
    cutter = GreedyK().fit(lists.subset(train))
    cuts = cutter.predict(test)
    cut_path = folder / "greedy-k.cut.run"
    write_run(cut_path, test, cuts, tag="greedy-k")
    typer.echo(f"Greedy-k keeps k = {cutter.k_} documents per query; the cut run is {cut_path}.")

    typer.echo("\n== 3. The cut is a candidate generator: audit what it left behind ==\n")
    kept = np.arange(test.max_len)[None, :] < cuts[:, None]
    labels = test.labels
    excluded_rel = labels[test.mask & ~kept]  # relevance of every excluded (query, doc) pair
    pool = int(excluded_rel.size)
    n0 = min(200, pool)
    rng = np.random.default_rng(seed)
    k0 = int(excluded_rel[rng.choice(pool, size=n0, replace=False)].sum())  # the reviewers' labels
    m1 = int(labels[kept].sum())  # the included pool was reviewed in full
    corpus = int(test.mask.sum())
    missed = excluded.excluded_pool_finite_certificate(k0, n0, pool, 0.05, corpus_size=corpus)
    recall = excluded.full_review_recall_certificate(k0, n0, pool, m1, 0.05)
    report = JointReport(
        delta=0.05,
        budget={"excluded audit": 0.05},
        title=f"Greedy-k's cut of the 20 test lists: {corpus - pool} pairs kept, {pool} excluded",
        facts={"burden": f"{(corpus - pool) / corpus:.3f}", "relevant found in the kept pairs M1": m1},
    )
    charge = {"g": "excluded audit"}
    report = report.attach("missed", missed, charge).attach("recall", recall, charge)
    typer.echo(f"Labelled {n0} of the {pool} excluded pairs uniformly at random: {k0} relevant.")
    typer.echo(report.render())
    _peek_at_the_truth(missed.value, int(excluded_rel.sum()), pool, n0, rng)
    typer.echo(
        "\n== Your own data ==\n"
        "  rankcut evaluate --run RUN --qrels QRELS --folds 5 \\\n"
        "      --cutters oracle,fixed-k:10,greedy-k,distribution\n"
        "  rankcut cut --cutter greedy-k --train-run TRAIN.run --qrels QRELS --run RUN --out cut.run\n"
        "  rankcut certify excluded-pool --finite --pool-size N0 --sample-size n0 --positives K0\n"
        "Add --threshold 2 for graded qrels such as TREC DL, and --missing keep for positives-only qrels."
    )


def _peek_at_the_truth(bound: int, truth: int, pool: int, n0: int, rng: np.random.Generator) -> None:
    """Synthetic labels show what a real audit never sees; repeat the audit to show coverage."""
    from rankcut.certify.bounds import hypergeom_upper

    verdict = "held" if truth <= bound else "FAILED: this draw is one of the unlucky ones"
    typer.echo(
        f"The truth, which a real audit never sees: the excluded pool holds {truth} relevant "
        f"pairs, so the bound M0 ≤ {bound} {verdict}."
    )
    k = rng.hypergeometric(truth, pool - truth, n0, size=2000)
    covered = hypergeom_upper(k, 0.05, population=pool, draws=n0) >= truth
    typer.echo(
        f"Repeating the same audit 2,000 times on this pool, the 95% bound held in "
        f"{covered.mean():.1%} of them: a 95% certificate may fail in at most 5% of audits."
    )
