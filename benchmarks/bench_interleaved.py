"""Documents read before an *interleaved* review certifies "recall ≥ ρ at 95%", per topic (issue 16).

For each topic of a labelled ranking (the qrels play the reviewer), in one run on the same labels:

* **interleaved** — :mod:`rankcut.certify.interleaved` with a policy of
  :mod:`rankcut.certify.policies` (``precision``: :class:`PrecisionPolicy`; ``projected``:
  :class:`ProjectedCostPolicy`; ``marginal``: :class:`MarginalCostPolicy`), ``--seeds`` frozen
  audit orders per topic
  (``numpy.random.default_rng(seed)``); a review that never certifies reads everything;
* **buscar** — ``buscarpy.calculate_h0`` checked every 50 screened documents at the same target
  (a heuristic: no guarantee for every labelling);
* **floor** — :func:`rankcut.certify.screening.cost_floor`, a lower bound for *any* valid review;
* with ``--today``, **screen-then-audit** — today's default (:class:`ReviewRule`, the lookahead
  rule), its exact expected cost (``operating_characteristics``; minutes per CLEF run).

Shown: documents read as a share of all, and the worst topic's false-claim rate
("certified, true recall < ρ") over the seeds.

With ``--loto key=v1,v2,...`` (repeat for a grid of several constants; one ``--policy``) the
policy's constants are chosen **leave-one-topic-out** over every ranking of the invocation: each
topic gets the grid point of least documents read summed over the *other* topics (a topic that
several rankings share — CLEF runs A and B — is left out of all of them), and the figure is the
sum of the held-out costs. Also shown: the grid point chosen on all topics, and its cost. The grid
may also hold the rule's ``prior_scale`` and ``prior_basis`` (``misses`` or ``tail``;
:class:`InterleavedRule`: the prior is fixed from the labels before the first audit draw, so any
value keeps the guarantee).
Without ``--loto``, ``--prior-basis`` and ``--prior-scale`` set the rule of every run.

With ``--topic ID`` (repeat) every ranking of the invocation is cut to the topics named — each
ranking must hold all of them — so one hard topic can be run with many seeds (issue 16's
false-claim bar: CD010339 at 0.95 with 1,000 seeds, ``docs/interleaved.md``).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_interleaved.py --only A --only B --policy marginal \
        --loto need=2,3,4,5 --loto batch=50,100,200 --seeds 5 --target 0.8

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_interleaved.py --seeds 20 --jobs 2   # CLEF A, B, sets
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_interleaved.py --only A --only B --topic CD010339 \
        --policy marginal --seeds 1000 --target 0.95 --json
    .venv/bin/python benchmarks/bench_interleaved.py --run my.run --qrels my.qrels --json    # your ranking
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
import time
from collections.abc import Mapping, Sequence
from functools import partial
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rankcut.certify.interleaved import PRIOR_BASES, InterleavedRule
from rankcut.certify.policies import MarginalCostPolicy, PrecisionPolicy, ProjectedCostPolicy
from rankcut.certify.screening import ReviewRule, cost_floor, plan_review
from rankcut.certify.sequential import operating_characteristics
from rankcut.certify.simulate import InterleavedRuns, simulate_interleaved

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import buscar_depth  # noqa: E402 -- a script beside this one

POLICIES = {"marginal": MarginalCostPolicy(), "precision": PrecisionPolicy(),
            "projected": ProjectedCostPolicy()}
DELTA = 0.05



def topic_row(args: tuple[str, NDArray[np.int64], float, range, tuple[str, ...], bool, InterleavedRule]
              ) -> dict:
    """Every approach on one topic at one target (the interleaved ones under ``rule``'s prior)."""
    q, y, target, seeds, policies, today, prior = args
    row: dict = {"topic": q, "N": int(y.size), "R": int(y.sum()),
                 "floor": cost_floor(y.size, int(y.sum()), target, DELTA),
                 "buscar": buscar_depth(y, target)}
    row["buscar_false"] = float(y[:row["buscar"]].sum() < target * y.sum())   # deterministic per topic
    rule = dataclasses.replace(prior, target=target, delta=DELTA)
    for name in policies:
        runs = simulate_interleaved(y, POLICIES[name], rule, seeds)
        row[name] = float(runs.read.mean())
        row[f"{name}_false"] = float(runs.false_claims.mean())
    if today:
        plan = plan_review(y, ReviewRule(target=target))
        oc = operating_characteristics(plan.audit, int(y[plan.depth:].sum()), plan.check_every)
        row["today"] = plan.depth + oc.expected_labels
        row["today_false"] = oc.p_false_claim
    return row


def evaluate(topics: Mapping[str, NDArray[np.int64]], target: float, seeds: int, policies: tuple[str, ...],
             today: bool, jobs: int, prior: InterleavedRule | None = None, first_seed: int = 0) -> dict:
    """Per approach: share of documents read and the worst topic's false-claim rate; per-topic rows.
    The interleaved reviews use ``prior``'s ``prior_basis`` and ``prior_scale`` (its target and δ are
    the run's)."""
    prior = InterleavedRule() if prior is None else prior
    seed_range = range(first_seed, first_seed + seeds)
    work = [(q, y, target, seed_range, policies, today, prior) for q, y in topics.items()]
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
    return {"target": target, "delta": DELTA, "seeds": seeds, "first_seed": first_seed, "summary": summary,
            "topics": rows}


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


def restrict(title: str, topics: Mapping[str, NDArray[np.int64]], wanted: Sequence[str]
             ) -> dict[str, NDArray[np.int64]]:
    """``topics`` cut to the ``wanted`` topic ids (``--topic``), in their order; an id the ranking lacks
    is an error that names it."""
    missing = [q for q in wanted if q not in topics]
    if missing:
        raise SystemExit(f"--topic: {title} has no topic {', '.join(map(repr, missing))} "
                         f"(its topics: {', '.join(topics)})")
    return {q: topics[q] for q in dict.fromkeys(wanted)}


#: the constants of :class:`InterleavedRule` a grid may hold, and their types: any value keeps the guarantee
RULE_CONSTANTS: dict[str, type] = {"prior_scale": float, "prior_basis": str}


def parse_grid(policy: str, specs: Sequence[str]) -> list[dict]:
    """``key=v1,v2,...`` per constant of ``policy`` (or the rule's ``prior_scale`` and ``prior_basis``) →
    every combination, as keyword arguments."""
    base = POLICIES[policy]
    axes = []
    for spec in specs:
        key, _, values = spec.partition("=")
        if key in RULE_CONSTANTS:
            axes.append([(key, RULE_CONSTANTS[key](v)) for v in values.split(",")])
        elif key in {f.name for f in dataclasses.fields(base)}:
            kind = type(getattr(base, key))
            axes.append([(key, kind(float(v))) for v in values.split(",")])
        else:
            raise SystemExit(f"--loto: {policy} has no constant {key!r} "
                             f"(nor the rule: {', '.join(RULE_CONSTANTS)})")
    return [dict(combo) for combo in itertools.product(*axes)]


def loto(collections: Mapping[str, Mapping[str, NDArray[np.int64]]], target: float, seeds: int, policy: str,
         grid: list[dict]) -> dict:
    """Leave-one-topic-out over ``grid`` (module docstring): per ranking, the held-out cost per topic."""
    def run(y: NDArray[np.int64], kw: dict) -> InterleavedRuns:
        rule = InterleavedRule(target, DELTA, **{k: v for k, v in kw.items() if k in RULE_CONSTANTS})
        own = {k: v for k, v in kw.items() if k not in RULE_CONSTANTS}
        return simulate_interleaved(y, dataclasses.replace(POLICIES[policy], **own), rule, range(seeds))

    cost: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for title, topics in collections.items():
        for q, y in topics.items():
            runs = [run(y, kw) for kw in grid]
            cost[title, q] = [(float(r.read.mean()), float(r.false_claims.mean())) for r in runs]
    totals = np.array([[c[i][0] for c in cost.values()] for i in range(len(grid))]).sum(axis=1)
    on_all = int(np.argmin(totals))
    out = {}
    for title, topics in collections.items():
        rows = []
        for q, y in topics.items():
            others = [sum(c[i][0] for (_, q2), c in cost.items() if q2 != q) for i in range(len(grid))]
            pick = int(np.argmin(others))
            held, every = cost[title, q][pick], cost[title, q][on_all]
            rows.append({"topic": q, "N": int(y.size), "R": int(y.sum()),
                         "floor": cost_floor(y.size, int(y.sum()), target, DELTA),
                         "buscar": buscar_depth(y, target), "chosen": grid[pick],
                         "loto": held[0], "loto_false": held[1], "all": every[0], "all_false": every[1]})
        total = sum(r["N"] for r in rows)
        summary = {a: {"share": sum(r[a] for r in rows) / total,
                       "worst_false": max(r[f"{a}_false"] for r in rows) if a in ("loto", "all") else None}
                   for a in ("floor", "buscar", "loto", "all")}
        out[title] = {"target": target, "delta": DELTA, "seeds": seeds, "policy": policy,
                      "on_all": grid[on_all], "summary": summary, "topics": rows}
    return out


def _constant(key: str, value: float | str) -> str:
    return f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"


def loto_markdown(title: str, result: dict) -> str:
    s, rows, name = result["summary"], result["topics"], result["policy"]
    kw = ", ".join(_constant(k, v) for k, v in result["on_all"].items())
    labels = {"floor": "floor", "buscar": "buscar", "loto": f"{name}, leave-one-topic-out",
              "all": f"{name}, chosen on all topics ({kw})"}
    lines = [f"### {title} — recall ≥ {result['target']:g} at {1 - result['delta']:.0%}, "
             f"{result['seeds']} seeds", "",
             "| approach | documents read | worst topic: P(certified, recall < target) |", "|---|---|---|"]
    for a, label in labels.items():
        w = "—" if s[a]["worst_false"] is None else f"{s[a]['worst_false']:.3f}"
        lines.append(f"| {label} | {s[a]['share']:.1%} | {w} |")
    lines += ["", "| topic | N | R | floor | buscar | leave-one-topic-out | its constants | chosen on all |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        chosen = ", ".join(_constant(k, v) for k, v in r["chosen"].items())
        lines.append(f"| {r['topic']} | {r['N']} | {r['R']} | {r['floor']:.0f} | {r['buscar']:.0f} | "
                     f"{r['loto']:.0f} | {chosen} | {r['all']:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, help="a TREC run: one topic per query (with --qrels)")
    ap.add_argument("--qrels", type=Path)
    ap.add_argument("--threshold", type=float, default=1)
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=0,
                    help="run seeds FIRST … FIRST + SEEDS − 1 (without --loto)")
    ap.add_argument("--target", type=float, action="append", help="recall target (repeat; default 0.8, 0.95)")
    ap.add_argument("--policy", choices=sorted(POLICIES), action="append")
    ap.add_argument("--today", action="store_true", help="also today's screen-then-audit, exactly (slow)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", choices=("A", "B", "screening"), action="append")
    ap.add_argument("--loto", action="append", metavar="KEY=V1,V2,...",
                    help="choose the policy's constants leave-one-topic-out on this grid (module docstring)")
    ap.add_argument("--topic", action="append", metavar="ID",
                    help="only this topic of every ranking (repeat; each ranking must hold it)")
    ap.add_argument("--prior-basis", choices=PRIOR_BASES, default="misses",
                    help="the rule's prior basis (InterleavedRule)")
    ap.add_argument("--prior-scale", type=float, help="the rule's prior scale (default: the basis' own)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--markdown", type=Path, help="write the tables here")
    args = ap.parse_args()
    if (args.run is None) != (args.qrels is None):
        ap.error("--run and --qrels go together")
    if args.seeds < 1 or args.jobs < 1 or args.first_seed < 0:
        ap.error("--seeds and --jobs must be ≥ 1, --first-seed ≥ 0")
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
    if args.topic:   # load and check every ranking now, so an unknown id fails before any run
        loaded = {title: restrict(title, load(), args.topic) for title, load in sets.items()}
        sets = {title: partial(dict, t) for title, t in loaded.items()}
    out, parts = {}, []
    if args.loto:
        if len(policies) != 1:
            ap.error("--loto tunes one --policy")
        grid = parse_grid(policies[0], args.loto)
        collections = {title: load() for title, load in sets.items()}
        for target in targets:
            start = time.perf_counter()
            result = loto(collections, target, args.seeds, policies[0], grid)
            for title, r in result.items():
                out[f"{title} @ {target:g}"] = r
                parts.append(loto_markdown(title, r))
                if not args.json:
                    print(parts[-1], flush=True)
            if not args.json:
                print(f"({time.perf_counter() - start:.0f} s)\n", flush=True)
    for title, load in ({} if args.loto else sets).items():
        topics = load()
        for target in targets:
            start = time.perf_counter()
            result = evaluate(topics, target, args.seeds, policies, args.today, args.jobs,
                              InterleavedRule(prior_scale=args.prior_scale, prior_basis=args.prior_basis),
                              args.first_seed)
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
