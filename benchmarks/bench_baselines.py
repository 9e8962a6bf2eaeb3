"""The baseline truncation table (AttnCut's Table 3, traditional methods) on the shared datasets.

Runs ``rankcut evaluate`` once per setting and prints, for each, the exact command, its Markdown
table and how long it took — the material of ``docs/results-baselines.md``. Run from the
repository root (the commands use ``../shared/datasets``):

    .venv/bin/python benchmarks/bench_baselines.py [--datasets ../shared/datasets] [--only robust04]

Settings:

* Robust04 BM25 and DRMM top-300: the given train/test split (190/50 and 193/50 queries),
  ``--missing keep`` because the qrels list positives only and query 672 has none (the
  dataset's known figures); then the same split in the convention that reproduces the paper's
  Table 3 (``--missing drop --recall-base judged``);
* Robust04 BM25, 5-fold cross-validation over all 240 queries (train and test runs merged);
* TREC DL 2019 passage, BM25 and SPLADE++ top-100, relevance ≥ 2: no training split exists, so
  seeded 5-fold cross-validation over the 43 judged queries;
* MQ2008 ranked by feature 25 (BM25, whole document): seeded 5-fold cross-validation over all
  784 queries of S1–S5, and LETOR Fold1 (train S1–S3, test S5; S4, the validation part, unused).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import time
from typing import Any

CUTTERS = "oracle,fixed-k:5,fixed-k:10,fixed-k:50,greedy-k,distribution,surprise"
COMMON = ["--cutters", CUTTERS, "--baseline", "greedy-k", "--test", "wilcoxon", "--markdown"]


def settings(d: str) -> list[tuple[str, str, list[str]]]:
    """(key, title, arguments of ``rankcut evaluate``) for every table."""
    r04, dl, mq = f"{d}/robust04", f"{d}/trec-dl", f"{d}/mq2008"
    out = []
    for model in ("bm25", "drmm"):
        out.append((f"robust04-{model}", f"Robust04 {model.upper()} top-300, given split", [
            "--run", f"{r04}/runs/{model}.test.run", "--train-run", f"{r04}/runs/{model}.train.run",
            "--qrels", f"{r04}/qrels.robust04.positives.txt", "--missing", "keep"]))
    for model in ("bm25", "drmm"):
        out.append((f"robust04-{model}-paper", f"Robust04 {model.upper()} top-300, given split, the paper's "
                    "convention (query 672 dropped, recall over all judged relevant documents)", [
                        "--run", f"{r04}/runs/{model}.test.run",
                        "--train-run", f"{r04}/runs/{model}.train.run",
                        "--qrels", f"{r04}/qrels.robust04.positives.txt", "--missing", "drop",
                        "--recall-base", "judged"]))
    out.append(("robust04-bm25-cv", "Robust04 BM25 top-300, 5-fold cross-validation over 240 queries", [
        "--run", f"{r04}/runs/bm25.train.run", "--run", f"{r04}/runs/bm25.test.run",
        "--qrels", f"{r04}/qrels.robust04.positives.txt", "--missing", "keep",
        "--folds", "5", "--seed", "0"]))
    for model, name in (("bm25", "BM25"), ("splade-pp-ed", "SPLADE++ (ED)")):
        out.append((f"dl19-{model}", f"TREC DL 2019 passage, {name} top-100, relevance ≥ 2", [
            "--run", f"{dl}/runs/{model}.dl19.run", "--qrels", f"{dl}/qrels.dl19-passage.txt",
            "--threshold", "2", "--folds", "5", "--seed", "0"]))
    parts = [f"{mq}/S{i}.txt" for i in range(1, 6)]
    out.append(("mq2008-cv", "MQ2008 ranked by feature 25 (BM25), 5-fold cross-validation", [
        *[a for p in parts for a in ("--letor", p)], "--score-feature", "25", "--folds", "5", "--seed", "0"]))
    out.append(("mq2008-fold1", "MQ2008 ranked by feature 25 (BM25), LETOR Fold1 (train S1–S3, test S5)", [
        *[a for p in parts[:3] for a in ("--train-letor", p)], "--letor", parts[4], "--score-feature", "25"]))
    return [(key, title, args + COMMON) for key, title, args in out]


def _short(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def run(command: Any, args: list[str]) -> tuple[str, str]:
    """stdout and stderr of ``rankcut evaluate ARGS``, run in this process."""
    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        # without standalone mode click returns the exit code of typer.Exit instead of exiting
        rc = command.main(["evaluate", *args], prog_name="rankcut", standalone_mode=False)
    if rc:
        raise SystemExit(f"rankcut evaluate {shlex.join(args)} failed (exit {rc}): {err.getvalue()}")
    return buf.getvalue(), err.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="../shared/datasets")
    parser.add_argument("--only", action="append", help="run only settings whose key starts with this")
    opts = parser.parse_args()

    import typer

    from rankcut.cli.main import app

    command = typer.main.get_command(app)
    for key, title, args in settings(opts.datasets.rstrip("/")):
        if opts.only and not any(key.startswith(o) for o in opts.only):
            continue
        start = time.perf_counter()
        table, err = run(command, args)
        took = time.perf_counter() - start
        data = json.loads(run(command, [a for a in args if a != "--markdown"] + ["--json"])[0])
        print(f"### {title}\n\n```\nrankcut evaluate {shlex.join(args)}\n```\n")
        print(table)
        for row in data["summary"]:
            learned = {m: [f["k_"] if "k_" in f else _short(f.get("threshold_")) for f in row[m]["fitted"]]
                       for m in ("f1", "dcg")}
            if learned["f1"]:
                print(f"- {row['method']} learned per fit (F1 / DCG): {learned['f1']} / {learned['dcg']}")
        notes = [line for line in err.splitlines() if line.startswith("warning:")]
        for line in notes:
            print(f"> {line[:200]}{'…' if len(line) > 200 else ''}")
        print(f"\n_{key}: {took:.1f} s_\n")


if __name__ == "__main__":
    main()
