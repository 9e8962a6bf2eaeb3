"""How ``rankcut cut`` and ``rankcut evaluate`` scale with the size of the run (issue 19).

Synthetic runs of 10^5 … 10^7 lines (1,000 documents per query, doc ids drawn from a corpus of
10^6 documents, 2% of each list relevant plus unlisted relevant documents in the qrels) are written
once under ``--work``; then, each in its own process, timed from outside (wall) and measured by
``os.wait4`` (peak resident memory of that process):

* ``cut``: ``rankcut cut --cutter fixed-k:10`` (reads the run, orders every list, writes the cut);
* ``evaluate``: ``rankcut evaluate --cutters oracle,fixed-k:10,greedy-k --folds 5 --json``;
* ``pandas``: ``pandas.read_csv`` of the same file (space-separated, no header);
* ``ir_measures``: ``ir_measures.calc_aggregate([P@10, nDCG@10], qrels, run)`` on the same files;
* with ``--main SRC``, ``cut`` and ``evaluate`` of another checkout (``/work/main/src``), the
  baseline, measured in the same command.

The table (Markdown) gives seconds, peak MB and bytes per line, the ratios the issue's bars name
(``cut`` against ``pandas.read_csv``, ``evaluate`` against ``ir_measures``), and the growth
exponents (the least-squares slope of log time and log memory against log lines).

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_scale.py --sizes 1e5,1e6,1e7,2e7 \
        --main /work/main/src --main-max 1e7

``--identity SRC`` instead runs ``cut`` (fixed-k, greedy-k, oracle; both orderings) and
``evaluate`` on the Robust04 runs of ``../shared/datasets`` with this checkout and with ``SRC`` and
says whether every output is byte-identical.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOCS_PER_QUERY = 1000
CORPUS = 10**6
STRIDE = 997  # coprime with CORPUS: a query's 1,000 doc ids (offset + j·STRIDE) mod CORPUS are distinct

CUT = "from rankcut.cli.main import app; app(['cut', '--run', RUN, '--cutter', 'fixed-k:10', '--out', OUT])"
EVALUATE = ("from rankcut.cli.main import app; app(['evaluate', '--run', RUN, '--qrels', QRELS, '--cutters', "
            "'oracle,fixed-k:10,greedy-k', '--folds', '5', '--json'])")
PANDAS = ("import pandas as pd; pd.read_csv(RUN, sep=' ', header=None, "
          "names=['query_id', 'q0', 'doc_id', 'rank', 'score', 'tag'], "
          "dtype={'query_id': str, 'doc_id': str})")
IR_MEASURES = ("import ir_measures; from ir_measures import P, nDCG; "
               "ir_measures.calc_aggregate([P@10, nDCG@10], ir_measures.read_trec_qrels(QRELS), "
               "ir_measures.read_trec_run(RUN))")


def generate(lines: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write ``run-{lines}.txt`` and ``qrels-{lines}.txt`` under ``folder`` (once)."""
    run, qrels = folder / f"run-{lines}.txt", folder / f"qrels-{lines}.txt"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng(seed)
    n_queries = lines // DOCS_PER_QUERY
    ranks = np.arange(1, DOCS_PER_QUERY + 1)
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as r, \
            tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as q:
        for i in range(n_queries):
            docs = (int(rng.integers(CORPUS)) + np.arange(DOCS_PER_QUERY) * STRIDE) % CORPUS
            scores = np.round(np.sort(rng.gamma(2.0, 3.0, DOCS_PER_QUERY))[::-1], 4)  # ties, as real runs
            qid = f"q{i}"
            r.write("".join(f"{qid} Q0 D{d} {k} {s!r} bench\n" for d, k, s in
                            zip(docs.tolist(), ranks.tolist(), scores.tolist(), strict=True)))
            relevant = docs[rng.random(DOCS_PER_QUERY) < 0.02 * np.exp(-ranks / 300) * 3]
            unlisted = dict.fromkeys(rng.integers(CORPUS, 2 * CORPUS, 5).tolist())  # a repeat judged once
            q.write("".join(f"{qid} 0 D{d} 1\n" for d in [*relevant.tolist(), *unlisted]))
    os.replace(r.name, run)
    os.replace(q.name, qrels)
    return run, qrels


def measure(code: str, src: Path | None, **names: str) -> dict[str, float]:
    """Run ``code`` in a fresh interpreter (``names`` bound as globals, stdout discarded) and
    return its wall seconds and peak resident MB."""
    prelude = "".join(f"{k} = {v!r}\n" for k, v in names.items())
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", prelude + "import sys\ntry:\n    " + code
                             + "\nexcept SystemExit as e:\n    sys.exit(e.code)\n"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"failed: {code[:60]}...\n{err[-2000:]}")
    return {"s": wall, "mb": usage.ru_maxrss / 1024}


def slope(xs: list[float], ys: list[float]) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0]) if len(xs) > 1 else math.nan


TOOLS = {"cut": (CUT, "rankcut"), "evaluate": (EVALUATE, "rankcut"), "pandas.read_csv": (PANDAS, None),
         "ir_measures P@10+nDCG@10": (IR_MEASURES, None)}


def bench(sizes: list[int], work: Path, main: Path | None, main_max: int,
          only: list[str] | None = None) -> dict[str, dict[int, dict[str, float]]]:
    chosen = [t for t in TOOLS if only is None or t in only]
    tools: dict[str, tuple[str, Path | None]] = {t: (TOOLS[t][0], ROOT / "src" if TOOLS[t][1] else None)
                                                 for t in chosen}
    if main is not None:
        tools["cut (main)"] = (CUT, main)
        tools["evaluate (main)"] = (EVALUATE, main)
    results: dict[str, dict[int, dict[str, float]]] = {t: {} for t in tools}
    for n in sizes:
        run, qrels = generate(n, work)
        for tool, (code, src) in tools.items():
            if main is not None and src == main and n > main_max:
                continue
            results[tool][n] = measure(code, src, RUN=str(run), QRELS=str(qrels), OUT=str(work / "cut.run"))
            print(f"{n:>10} {tool:<28} {results[tool][n]['s']:8.2f} s {results[tool][n]['mb']:9.1f} MB",
                  file=sys.stderr, flush=True)
    return results


def table(results: dict[str, dict[int, dict[str, float]]]) -> str:
    sizes = sorted(next(iter(results.values())))
    out = ["| lines | tool | wall s | peak MB | bytes/line |", "|---:|---|---:|---:|---:|"]
    for n in sizes:
        for tool, by_size in results.items():
            if n not in by_size:
                continue
            r = by_size[n]
            out.append(f"| {n:.0e} | {tool} | {r['s']:.2f} | {r['mb']:.0f} | {r['mb'] * 2**20 / n:.0f} |")
    if set(TOOLS) <= set(results):   # the ratios the bars name
        out += ["", "| lines | cut / pandas.read_csv (wall) | evaluate / ir_measures (wall) |",
                "|---:|---:|---:|"]
        for n in sizes:
            cut = results["cut"][n]["s"] / results["pandas.read_csv"][n]["s"]
            ev = results["evaluate"][n]["s"] / results["ir_measures P@10+nDCG@10"][n]["s"]
            out.append(f"| {n:.0e} | {cut:.2f} | {ev:.2f} |")
    out += ["", "| tool | time exponent | memory exponent |", "|---|---:|---:|"]
    for tool, by_size in results.items():
        have = [n for n in sizes if n in by_size]
        xs = [float(n) for n in have]
        out.append(f"| {tool} | {slope(xs, [by_size[n]['s'] for n in have]):.2f} | "
                   f"{slope(xs, [by_size[n]['mb'] for n in have]):.2f} |")
    return "\n".join(out)


def identity(other: Path, work: Path) -> bool:
    """Whether ``cut`` and ``evaluate`` write byte-identical outputs here and with ``other``."""
    data = ROOT.parent / "shared" / "datasets" / "robust04"
    qrels = data / "qrels.robust04.positives.txt"
    same = True
    for r in ("bm25", "drmm"):
        test, train = data / "runs" / f"{r}.test.run", data / "runs" / f"{r}.train.run"
        jobs = {}
        for cutter in ("fixed-k:10", "greedy-k", "oracle"):
            extra = {"greedy-k": ["--train-run", str(train), "--qrels", str(qrels)],
                     "oracle": ["--qrels", str(qrels)]}.get(cutter, [])
            for ordering in ("rank", "trec_eval"):
                jobs[f"{r}.{cutter}.{ordering}.run"] = ["cut", "--run", str(test), "--cutter", cutter, *extra,
                                                        "--ordering", ordering, "--missing", "keep"]
        jobs[f"{r}.evaluate.json"] = ["evaluate", "--run", str(train), "--run", str(test),
                                      "--qrels", str(qrels), "--cutters", "oracle,fixed-k:10,greedy-k",
                                      "--folds", "5", "--missing", "keep", "--json"]
        for name, args in jobs.items():
            outputs = []
            for src in (ROOT / "src", other):
                out = work / f"{src.parent.name}.{name}"
                argv = [*args, "--out", str(out)] if args[0] == "cut" else args
                env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1")
                proc = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()",
                                       *argv], env=env, capture_output=True, check=True, cwd=work)
                text = out.read_bytes() if args[0] == "cut" else proc.stdout
                outputs.append((text, proc.stdout.replace(str(out).encode(), b"OUT"), proc.stderr))
            ok = outputs[0] == outputs[1]
            same &= ok
            print(f"{name}: {'identical' if ok else 'DIFFERENT'}", flush=True)
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1e5,1e6,1e7", help="comma-separated line counts")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "rankcut-bench-scale")
    parser.add_argument("--main", type=Path, help="src folder of a baseline checkout, measured beside")
    parser.add_argument("--main-max", type=float, default=1e7,
                        help="the largest run the baseline is measured on (its memory grows fastest)")
    parser.add_argument("--identity", type=Path, metavar="SRC",
                        help="compare the outputs with those of the checkout SRC instead")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--tools", help=f"comma-separated subset of {', '.join(TOOLS)} (default: all; "
                        "pandas and ir_measures need 12 and 18 GB at 10^8 lines)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.identity is not None:
        sys.exit(0 if identity(args.identity, args.work) else 1)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    only = args.tools.split(",") if args.tools else None
    if only is not None and not set(only) <= set(TOOLS):
        parser.error(f"--tools: choose from {', '.join(TOOLS)}")
    results = bench(sizes, args.work, args.main, int(args.main_max), only)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
