"""Leave-one-set-out choice of the CAL review's constants on the screening sets (issue 17).

Each candidate (:data:`CANDIDATES`: the review's default until 2026-12-04, ``default``; one
``ProjectedCostPolicy`` constant moved at a time; ``PrecisionPolicy``'s and
``MarginalCostPolicy``'s defaults; the default and ``MarginalCostPolicy`` under the ``tail`` prior
basis (``tail``, ``marginal+tail``), the latter also with a probe of 10, 25 or 50 screening reads
before a return from the audit goes on (``marginal+tail+probe25``:
``MarginalCostPolicy(probe=25)``, the review's default since, and with one more constant moved,
``probe25+window100``); the ``CALConfig`` options that
follow ASReview's ELAS u4 model, word bigrams and balanced class weights) runs
:func:`rankcut.review.simulate.simulate_review` on the 14 sets of ``../shared/datasets/screening``
with the prior knowledge of ``bench_review.py`` (seed ``s``: one included and one excluded record
drawn by ``default_rng(s)``, and the audit order). Then, for each set ``s``, the candidate with the
fewest documents read summed over the *other* 13 sets (mean over seeds) is the one used on ``s``;
the sum of those held-out costs is the LOSO figure, beside the default's. No figure chooses
its own constant.

Every run is one JSON line of ``--jsonl`` (appended; a run already there is not run again), so a
long grid can be resumed and the table redrawn from the file:

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_loso.py --target 0.8 --seeds 2 \\
        --jsonl loso08.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import screening_paths  # noqa: E402 -- a script beside this one
from bench_review import DELTA, prior_of, with_prior  # noqa: E402

from rankcut.certify.policies import MarginalCostPolicy, Policy, PrecisionPolicy, ProjectedCostPolicy  # noqa: E402
from rankcut.review.cal import CALConfig  # noqa: E402
from rankcut.review.records import load_records  # noqa: E402
from rankcut.review.simulate import simulate_review  # noqa: E402

#: name → (policy, CAL configuration[, the rule's prior basis, default misses]); the first is the
#: review's default until 2026-12-04 (``ProjectedCostPolicy``, misses basis), every table's baseline;
#: the review's default since is ``marginal+tail+probe25``
CANDIDATES: dict[str, tuple[Policy, CALConfig] | tuple[Policy, CALConfig, str]] = {
    "default": (ProjectedCostPolicy(), CALConfig()),
    "batch25": (ProjectedCostPolicy(batch=25), CALConfig()),
    "overhead0.25": (ProjectedCostPolicy(overhead=0.25), CALConfig()),
    "window200": (ProjectedCostPolicy(window=200), CALConfig()),
    "batch100": (ProjectedCostPolicy(batch=100), CALConfig()),
    "overhead1": (ProjectedCostPolicy(overhead=1.0), CALConfig()),
    "window1000": (ProjectedCostPolicy(window=1000), CALConfig()),
    "chunk25": (ProjectedCostPolicy(chunk=25), CALConfig()),
    "precision": (PrecisionPolicy(), CALConfig()),
    "marginal": (MarginalCostPolicy(), CALConfig()),
    "tail": (ProjectedCostPolicy(), CALConfig(), "tail"),
    "marginal+tail": (MarginalCostPolicy(), CALConfig(), "tail"),
    "marginal+tail+probe10": (MarginalCostPolicy(probe=10), CALConfig(), "tail"),
    "marginal+tail+probe25": (MarginalCostPolicy(probe=25), CALConfig(), "tail"),
    "marginal+tail+probe50": (MarginalCostPolicy(probe=50), CALConfig(), "tail"),
    **{f"probe25+{k}{v:g}": (MarginalCostPolicy(probe=25, **{k: v}), CALConfig(), "tail")
       for k, v in (("window", 100), ("window", 200), ("window", 300), ("window", 500), ("batch", 50),
                    ("need", 3.0), ("need", 5.0))},
    "bigrams": (ProjectedCostPolicy(), CALConfig(ngrams=2)),
    "balanced": (ProjectedCostPolicy(), CALConfig(balanced=True)),
    "bigrams+balanced": (ProjectedCostPolicy(), CALConfig(ngrams=2, balanced=True)),
}


def run_grid(out: Path, target: float, seeds: int, names: list[str]) -> None:
    """Append one line per (candidate, set, seed) not yet in ``out``."""
    done = {(r["config"], r["set"], r["seed"]) for r in read_rows(out) if r["target"] == target}
    records = [load_records(p, label="label_included") for p in screening_paths()]
    with out.open("a") as f:
        for name in names:
            policy, config, *basis = CANDIDATES[name]
            for rec in records:
                for s in range(seeds):
                    if (name, rec.name, s) in done:
                        continue
                    start = time.perf_counter()
                    run = simulate_review(with_prior(rec, prior_of(rec, s)), target=target, delta=DELTA,
                                          seeds=[s], policy=policy, config=config,
                                          prior_basis=basis[0] if basis else "misses").runs[0]
                    f.write(json.dumps({"config": name, "target": target, "set": rec.name, "seed": s,
                                        "read": run.read,
                                        "screened": run.screened, "false": run.false_claim,
                                        "s": round(time.perf_counter() - start, 2)}) + "\n")
                    f.flush()


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def loso(rows: list[dict[str, Any]], target: float, seeds: int, among: list[str]) -> str:
    """The table: each candidate of ``among`` (the default always) with its total, each set's
    held-out pick, the LOSO sum."""
    reads: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in rows:
        if r["seed"] < seeds and r["target"] == target:
            reads[(r["config"], r["set"])].append(r["read"])
    sets = sorted({s for _, s in reads})
    names = [c for c in CANDIDATES if (c == "default" or c in among)
             and all(len(reads.get((c, s), [])) == seeds for s in sets)]
    mean = {k: sum(v) / len(v) for k, v in reads.items()}
    total = {c: sum(mean[(c, s)] for s in sets) for c in names}
    lines = [f"recall ≥ {target:g}: {len(sets)} sets, {seeds} seed(s); documents read, summed over "
             "the sets (mean over seeds)",
             "", "| candidate | read |", "|---|---|"]
    lines += [f"| {c} | {total[c]:.1f} |" for c in names]
    lines += ["", "| held-out set | chosen on the other sets | read | default |", "|---|---|---|---|"]
    held = 0.0
    for s in sets:
        pick = min(names, key=lambda c: (total[c] - mean[(c, s)], names.index(c)))
        held += mean[(pick, s)]
        lines.append(f"| {s} | {pick} | {mean[(pick, s)]:.1f} | {mean[('default', s)]:.1f} |")
    lines += ["", f"LOSO held-out sum {held:.1f} against the default's {total['default']:.1f}"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", type=float, default=0.8)
    ap.add_argument("--seeds", type=int, default=2, help="reviews per candidate and set")
    ap.add_argument("--jsonl", type=Path, required=True, help="the runs, appended and resumed")
    ap.add_argument("--only", action="append", choices=list(CANDIDATES),
                    help="a candidate (repeat; the default is always one)")
    ap.add_argument("--table", action="store_true", help="no new runs: the table of --jsonl")
    args = ap.parse_args()
    names = list(dict.fromkeys(["default", *(args.only or CANDIDATES)]))   # the table needs the default
    if not args.table:
        run_grid(args.jsonl, args.target, args.seeds, names)
    print(loso(read_rows(args.jsonl), args.target, args.seeds, names))


if __name__ == "__main__":
    main()
