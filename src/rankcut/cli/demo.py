"""``rankcut demo``: an offline end-to-end run on data that rankcut generates deterministically.

Part 1 replays the audit paper's §8 worked example as one joint report. Part 2 writes a
synthetic TREC run and qrels, evaluates the classical cutters on a train/test split, and then
audits the cut that Greedy-k picked: the cut is a candidate generator, its excluded pool is
sampled, and the certificate says how much relevant material the cut left behind.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from rankcut.certify.report import JointReport


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
) -> None:
    """Run the audit paper's §8 example, then cut and audit synthetic ranked lists, offline."""
    typer.echo("== 1. Certifying what a cut leaves behind (audit paper, §8) ==\n")
    typer.echo(section8_report().render())
    if out is None:
        with tempfile.TemporaryDirectory(prefix="rankcut-demo-") as tmp:
            _truncation_demo(Path(tmp))
    else:
        out.mkdir(parents=True, exist_ok=True)
        _truncation_demo(out)


def _truncation_demo(folder: Path) -> None:
    """Placeholder replaced below once evaluation lands."""
