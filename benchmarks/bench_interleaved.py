"""Documents read before an *interleaved* review certifies "recall ≥ ρ at 95%", per topic (issue 16).

For each topic of a labelled ranking (the qrels play the reviewer), in one run on the same labels:

* **interleaved** — :mod:`rankcut.certify.interleaved` with a policy of
  :mod:`rankcut.certify.policies` (``precision``: :class:`PrecisionPolicy`; ``projected``:
  :class:`ProjectedCostPolicy`), ``--seeds`` frozen audit orders per topic
  (``numpy.random.default_rng(seed)``); a review that never certifies reads everything;
* **buscar** — ``buscarpy.calculate_h0`` checked every 50 screened documents at the same target
  (a heuristic: no guarantee for every labelling);
* **floor** — :func:`rankcut.certify.screening.cost_floor`, a lower bound for *any* valid review;
* with ``--today``, **screen-then-audit** — today's default (:class:`ReviewRule`, the lookahead
  rule), its exact expected cost (``operating_characteristics``; minutes per CLEF run).

Shown: documents read as a share of all, and the worst topic's false-claim rate
("certified, true recall < ρ") over the seeds.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_interleaved.py --seeds 20 --jobs 2   # CLEF A, B, sets
    .venv/bin/python benchmarks/bench_interleaved.py --run my.run --qrels my.qrels --json    # your ranking
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rankcut.certify.interleaved import InterleavedRule
from rankcut.certify.policies import PrecisionPolicy, ProjectedCostPolicy
from rankcut.certify.screening import ReviewRule, cost_floor, plan_review
from rankcut.certify.sequential import operating_characteristics
from rankcut.certify.simulate import simulate_interleaved

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import buscar_depth  # noqa: E402 -- a script beside this one

POLICIES = {"precision": PrecisionPolicy(), "projected": ProjectedCostPolicy()}
DELTA = 0.05



def topic_row(args: tuple[str, NDArray[np.int64], float, int, tuple[str, ...], bool]) -> dict:
    """Every approach on one topic at one target."""
    q, y, target, seeds, policies, today = args
    row: dict = {"topic": q, "N": int(y.size), "R": int(y.sum()),
                 "floor": cost_floor(y.size, int(y.sum()), target, DELTA),
                 "buscar": buscar_depth(y, target)}
    row["buscar_false"] = float(y[:row["buscar"]].sum() < target * y.sum())   # deterministic per topic
    rule = InterleavedRule(target, DELTA)
    for name in policies:
        runs = simulate_interleaved(y, POLICIES[name], rule, range(seeds))
        row[name] = float(runs.read.mean())
        row[f"{name}_false"] = float(runs.false_claims.mean())
    if today:
        plan = plan_review(y, ReviewRule(target=target))
        oc = operating_characteristics(plan.audit, int(y[plan.depth:].sum()), plan.check_every)
        row["today"] = plan.depth + oc.expected_labels
        row["today_false"] = oc.p_false_claim
    return row


def evaluate(topics: Mapping[str, NDArray[np.int64]], target: float, seeds: int, policies: tuple[str, ...],
             today: bool, jobs: int) -> dict:
    """Per approach: share of documents read and the worst topic's false-claim rate; per-topic rows."""
    work = [(q, y, target, seeds, policies, today) for q, y in topics.items()]
    if jobs > 1:
        with Pool(jobs) as pool:
            rows = pool.map(topic_row, work)
    else:
        rows = [topic_row(w) for w in work]
    total = sum(r["N"] for r in rows)
    names = ["floor", "buscar", *policies] + (["today"] if today else [])
    summary = {a: {"share": sum(r[a] for r in rows) / total,
                   "worst_false": max((r[f"{a}_false"] for r in rows), default=0.0) if a != "floor" else None}
               for a in names}
    return {"target": target, "delta": DELTA, "seeds": seeds, "summary": summary, "topics": rows}


def markdown(title: str, result: dict) -> str:
    s, rows = result["summary"], result["topics"]
    cols = list(s)
    lines = [f"### {title} — recall ≥ {result['target']:g} at {1 - result['delta']:.0%}, "
             f"{result['seeds']} seeds", "",
             "| approach | documents read | worst topic: P(certified, recall < target) |", "|---|---|---|"]
    for a in cols:
        w = "— (lower bound for any valid review)" if a == "floor" else f"{s[a]['worst_false']:.3f}"
        lines.append(f"| {a} | {s[a]['share']:.1%} | {w} |")
    lines += ["", "| topic | N | R | " + " | ".join(cols) + " |", "|---" * (3 + len(cols)) + "|"]
    for r in rows:
        cells = " | ".join(f"{r[a]:.0f}" for a in cols)
        lines.append(f"| {r['topic']} | {r['N']} | {r['R']} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, help="a TREC run: one topic per query (with --qrels)")
    ap.add_argument("--qrels", type=Path)
    ap.add_argument("--threshold", type=float, default=1)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--target", type=float, action="append", help="recall target (repeat; default 0.8, 0.95)")
    ap.add_argument("--policy", choices=sorted(POLICIES), action="append")
    ap.add_argument("--today", action="store_true", help="also today's screen-then-audit, exactly (slow)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", choices=("A", "B", "screening"), action="append")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--markdown", type=Path, help="write the tables here")
    args = ap.parse_args()
    if (args.run is None) != (args.qrels is None):
        ap.error("--run and --qrels go together")
    targets = args.target or [0.8, 0.95]
    policies = tuple(args.policy or sorted(POLICIES))
    from bench_label_efficient import clef, screening_sets, trec_topics

    if args.run:
        sets = {args.run.name: lambda: trec_topics(args.run, args.qrels, args.threshold)}
    else:

        every = {"A": ("CLEF TAR 2017, Waterloo run A", lambda: clef("A")),
                 "B": ("CLEF TAR 2017, Waterloo run B", lambda: clef("B")),
                 "screening": ("Screening sets (one-shot TF-IDF ranking, seed set of 200 not counted)",
                               screening_sets)}
        sets = {every[k][0]: every[k][1] for k in (args.only or every)}
    out, parts = {}, []
    for title, load in sets.items():
        topics = load()
        for target in targets:
            start = time.perf_counter()
            result = evaluate(topics, target, args.seeds, policies, args.today, args.jobs)
            result["seconds"] = round(time.perf_counter() - start, 1)
            out[f"{title} @ {target:g}"] = result
            text = markdown(title, result)
            parts.append(text)
            if not args.json:
                print(text, f"({result['seconds']:.0f} s)\n", flush=True)
    if args.json:
        print(json.dumps(out, indent=1))
    if args.markdown:
        args.markdown.write_text("\n".join(parts))


if __name__ == "__main__":
    main()
