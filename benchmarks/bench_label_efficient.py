"""Documents a person reads before "recall ≥ 0.8 at 95%" can be stated, per topic (issue 6).

For every topic of a labelled ranking, each approach reads documents until it stops; a failed
certificate falls back to reading everything. Counted: distinct documents read (screened + audit
labels), summed over topics, as a share of all documents. The labels (qrels) play the reviewer.

Approaches, all run here in the same process on the same rankings:

* **oracle-80** — cut at the true 80%-recall depth, no certificate (not deployable);
* **buscar** — ``buscarpy.calculate_h0`` (Callaghan & Müller-Hansen 2020) checked every 50 screened
  documents, stop when ``p < 0.05``; a heuristic (it assumes the ranking is no better than random
  after the stop), deterministic per topic;
* **uniform audit (Thm 8)** — the same cut as ours, then one fixed-size uniform sample of the
  excluded pool, sized so that a sample without relevant items certifies (``plan_hypergeometric``
  logic, exact hypergeometric bound); certificate "M ≤ m(x)" with the audit's finds credited;
* **one-phase QBCB** (Lewis, Yang & Frieder, CIKM 2021) — a uniform sample of 20% of the topic
  labelled first; the review stops at the rank of the ``j``-th sampled relevant document, ``j``
  the quantile binomial bound for 0.8 at 95%; full review if the sample has too few relevant;
* **screen-then-audit (ours)** — :mod:`rankcut.certify.screening`: the pre-registered screening rule
  picks the cut, then the anytime-valid sequential audit (:mod:`rankcut.certify.sequential`);
* **interleaved, marginal-cost / projected-cost** — the interleaved review of
  :mod:`rankcut.certify.interleaved` (issue 16: screening and auditing under one anytime-valid
  bound on ``R``) with :class:`~rankcut.certify.policies.MarginalCostPolicy` or
  :class:`~rankcut.certify.policies.ProjectedCostPolicy` at their defaults, one frozen audit order
  per seed, stopped at the first certified step (``rankcut audit --design interleaved``);
* **floor** — :func:`rankcut.certify.screening.cost_floor`, a lower bound for *any* valid procedure.

Randomised approaches run ``--seeds`` seeds per topic (``numpy.random.default_rng(seed)``); the
table shows the mean cost, the worst topic's rate of false claims ("certified, true recall <
0.8"), and for ours also the exact false-claim probability and expected cost from
:func:`rankcut.certify.sequential.operating_characteristics`.

Development and test: the rule's one tuned constant (``margin``) was chosen with ``--dev`` on the
screening sets (ASReview / Cohen 2006, ranked by a TF-IDF classifier on a random seed set of 200,
200 more labels per set, not counted), then used unchanged on CLEF TAR 2017.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_label_efficient.py              # CLEF A, B, screening
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_label_efficient.py --dev      # margin sweep
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_label_efficient.py --sweep A  # the same on run A
    .venv/bin/python benchmarks/bench_label_efficient.py --run my.run --qrels my.qrels --json  # your ranking

What every stopping rule of a grid (and the best cut in hindsight) costs, exactly:
``benchmarks/bench_review_stops.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from rankcut.certify.bounds import hypergeom_upper
from rankcut.certify.interleaved import InterleavedRule
from rankcut.certify.policies import MarginalCostPolicy, Policy, ProjectedCostPolicy
from rankcut.certify.screening import ReviewRule, cost_floor, plan_review
from rankcut.certify.sequential import allowed_misses, operating_characteristics
from rankcut.certify.simulate import simulate_interleaved, simulate_screen_then_audit

DATASETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets"
#: approach name → policy of the interleaved review (their defaults)
INTERLEAVED: dict[str, Policy] = {"interleaved, marginal-cost": MarginalCostPolicy(),
                                  "interleaved, projected-cost": ProjectedCostPolicy()}
TARGET, DELTA = 0.8, 0.05


def clef(run: str) -> dict[str, NDArray[np.int64]]:
    """CLEF TAR 2017 Waterloo run ``A`` or ``B``: labels (abstract-level qrels) in rank order, per topic."""
    root = DATASETS / "clef-tar-2017"
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (root / "qrel_abs_test.txt").read_text().splitlines():
        q, _, d, rel = line.split()
        if int(rel) > 0:
            relevant[q].add(d)
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in (root / "runs" / f"waterloo-{run}-rank-normal.run").read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        ranked[q].append((int(rank), d))
    return {q: np.array([d in relevant[q] for _, d in sorted(docs)], dtype=np.int64)
            for q, docs in sorted(ranked.items())}


def trec_topics(run: Path, qrels: Path, threshold: float = 1) -> dict[str, NDArray[np.int64]]:
    """0/1 labels in rank order per query of any TREC run, from TREC qrels (one topic per query)."""
    from rankcut.data.trec import load_trec

    lists = load_trec(run, qrels, threshold=threshold, missing="error")
    return {q: (lists.gains[i, :n] >= threshold).astype(np.int64)
            for i, (q, n) in enumerate(zip(lists.qids, lists.lengths.tolist(), strict=True))}


def screening_paths() -> list[Path]:
    """The screening sets' CSV files, sorted; an error naming the folder where it holds none (a
    checkout without ``../shared`` must not benchmark an empty collection)."""
    paths = sorted((DATASETS / "screening").glob("*.csv"))
    if not paths:
        raise FileNotFoundError(f"no screening sets (*.csv) in {DATASETS / 'screening'}")
    return paths


def screening_sets() -> dict[str, NDArray[np.int64]]:
    """Each screening set without its 200-record seed set, ranked by the classifier the seed trained.

    The seed set is design data (§2.4) read before the review: 200 more documents per set, not in
    the counts of the table.
    """
    from bench_audit_cost import rank_screening

    from rankcut.data.screening import load_screening

    out = {}
    for path in screening_paths():
        data = load_screening(path)
        try:
            rest, scores = rank_screening(data, seed_size=200, seed=0)
        except ValueError as err:   # a seed set without an included record cannot train the ranker
            print(f"skipped {path.stem}: {err}", file=sys.stderr)   # stdout may be --json
            continue
        order = np.argsort(-scores, kind="stable")
        out[path.stem] = rest.labels[order].astype(np.int64)
    return out


def buscar_depth(y: NDArray[np.int64], target: float = TARGET, step: int = 50) -> int:
    """Where buscar (Callaghan & Müller-Hansen 2020) stops on the labels ``y`` in reading order: the
    first multiple of ``step`` at which "recall < target" is rejected at ``DELTA`` (all if never);
    the interleaved and review benchmarks use it too."""
    from buscarpy import calculate_h0

    for k in range(step, y.size, step):
        p = calculate_h0(y[:k], N=y.size, recall_target=target)
        if p is not None and p < DELTA:
            return k
    return int(y.size)


def oracle_depth(y: NDArray[np.int64]) -> int:
    r = int(y.sum())
    return int(np.searchsorted(np.cumsum(y), math.ceil(TARGET * r)) + 1) if r else 0


def uniform_audit(y: NDArray[np.int64], depth: int, found: int, seeds: Sequence[int]
                  ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Fixed-size Theorem 8 audit of the pool below ``depth``: (cost, false claim) per seed."""
    pool = y[depth:]
    n0 = pool.size
    if n0 == 0:
        return np.full(len(seeds), y.size), np.zeros(len(seeds), dtype=bool)
    allowed = int(allowed_misses(found, 0, TARGET))
    size = min(n0, math.ceil(n0 * (1 - DELTA ** (1 / (allowed + 1)))))
    while size < n0 and hypergeom_upper(0, DELTA, population=n0, draws=size) > allowed:
        size += 1
    costs, wrong = [], []
    missed = int(pool.sum())
    for s in seeds:
        x = int(pool[np.random.default_rng(s).permutation(n0)[:size]].sum())
        ok = hypergeom_upper(x, DELTA, population=n0, draws=size) <= allowed_misses(found, x, TARGET)
        costs.append(depth + size if ok else y.size)
        wrong.append(bool(ok and missed > allowed_misses(found, x, TARGET)))
    return np.array(costs), np.array(wrong)


def qbcb(y: NDArray[np.int64], seeds: Sequence[int], share: float = 0.2
         ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """One-phase QBCB review (Lewis, Yang & Frieder 2021): (cost, false claim) per seed."""
    big, total = y.size, int(y.sum())
    n = math.ceil(share * big)
    costs, wrong = [], []
    for s in seeds:
        sample = np.sort(np.random.default_rng(s).choice(big, size=n, replace=False))
        pos = sample[y[sample] == 1]           # ranks of the sampled relevant, in rank order
        r = pos.size
        j = next((j for j in range(1, r + 1) if stats.binom.sf(j - 1, r, TARGET) <= DELTA), None)
        if j is None:
            costs.append(big)
            wrong.append(False)
            continue
        depth = int(pos[j - 1]) + 1
        found = int(y[:depth].sum()) + int(y[sample[sample >= depth]].sum())
        costs.append(depth + int((sample >= depth).sum()))
        wrong.append(total - found > allowed_misses(found, 0, TARGET))
    return np.array(costs), np.array(wrong)


def evaluate(topics: Mapping[str, NDArray[np.int64]], rule: ReviewRule, seeds: int, *,
             baselines: bool = True, exact: bool = True) -> tuple[dict[str, dict[str, float]], list[dict]]:
    """Per approach: share of documents read, worst topic's false-claim rate; per-topic rows."""
    seeds_list = list(range(seeds))
    total = sum(y.size for y in topics.values())
    cost: dict[str, float] = defaultdict(float)
    worst: dict[str, float] = defaultdict(float)
    rows = []
    for q, y in topics.items():
        row: dict = {"topic": q, "N": y.size, "R": int(y.sum())}
        runs = simulate_screen_then_audit(y, rule, seeds_list)
        row.update(depth=runs.depth, found=runs.found, ours=float(runs.cost.mean()),
                   ours_cert=float(runs.certified.mean()), ours_false=float(runs.false_claims.mean()))
        cost["ours"] += runs.cost.mean()
        worst["ours"] = max(worst["ours"], runs.false_claims.mean())
        if exact:
            plan = plan_review(y, rule)
            oc = operating_characteristics(plan.audit, int(y[plan.depth:].sum()), rule.check_every)
            row.update(ours_exact=plan.depth + oc.expected_labels, ours_p_false=oc.p_false_claim)
            cost["ours (exact)"] += plan.depth + oc.expected_labels
            worst["ours (exact)"] = max(worst["ours (exact)"], oc.p_false_claim)
        floor = cost_floor(y.size, int(y.sum()), TARGET, DELTA)
        cost["floor"] += floor
        row["floor"] = floor
        k80 = oracle_depth(y)
        cost["oracle-80"] += k80
        if baselines:
            kb = buscar_depth(y)
            cost["buscar"] += kb
            row["buscar"] = kb
            worst["buscar"] = max(worst["buscar"], float(y[:kb].sum() < TARGET * y.sum()))
            uc, uw = uniform_audit(y, runs.depth, runs.found, seeds_list)
            cost["uniform audit"] += uc.mean()
            worst["uniform audit"] = max(worst["uniform audit"], uw.mean())
            row["uniform"] = float(uc.mean())
            qc, qw = qbcb(y, seeds_list)
            cost["qbcb 20%"] += qc.mean()
            worst["qbcb 20%"] = max(worst["qbcb 20%"], qw.mean())
            row["qbcb"] = float(qc.mean())
            for name, policy in INTERLEAVED.items():
                runs_i = simulate_interleaved(y, policy, InterleavedRule(TARGET, DELTA), seeds_list)
                cost[name] += runs_i.read.mean()
                worst[name] = max(worst[name], runs_i.false_claims.mean())
                row[name] = float(runs_i.read.mean())
        rows.append(row)
    summary = {a: {"share": c / total, "worst_false": worst.get(a, float("nan"))} for a, c in cost.items()}
    return summary, rows


def markdown(title: str, summary: Mapping[str, Mapping[str, float]], rows: list[dict], seeds: int) -> str:
    order = ["oracle-80", "floor", "buscar", "qbcb 20%", "uniform audit", "ours", "ours (exact)",
             *INTERLEAVED]
    head = "| approach | documents read (share of all) | worst topic: P(certified, recall < 0.8) |"
    lines = [f"### {title}", "", head,
             "|---|---|---|"]
    for a in order:
        if a in summary:
            w = summary[a]["worst_false"]
            note = {"oracle-80": "— (no certificate)", "floor": "— (lower bound, any valid procedure)"}.get(a)
            wt = note or (f"{w:.3f} (exact)" if a == "ours (exact)" else
                          f"{w:.3f}" + ("" if a == "buscar" else f" ({seeds} seeds)"))
            lines.append(f"| {a} | {summary[a]['share']:.1%} | {wt} |")
    cols = ("| topic | N | R | cut | found | floor | buscar | qbcb 20% | uniform | ours | ours exact "
            "| P(false) exact | marginal-cost | projected-cost |")
    lines += ["", cols,
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        nan = float("nan")
        lines.append(f"| {r['topic']} | {r['N']} | {r['R']} | {r['depth']} | {r['found']} | "
                     f"{r['floor']:.0f} | "
                     f"{r.get('buscar', '')} | {r.get('qbcb', nan):.0f} | {r.get('uniform', nan):.0f} | "
                     f"{r['ours']:.0f} | {r.get('ours_exact', nan):.0f} | {r.get('ours_p_false', nan):.4f} | "
                     + " | ".join(f"{r.get(a, nan):.0f}" for a in INTERLEAVED) + " |")
    return "\n".join(lines) + "\n"


def _plain(x: object) -> object:
    """JSON-ready: numpy numbers as Python ones, NaN (no false-claim rate: the oracle, the floor) as null."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    return None if isinstance(x, float) and math.isnan(x) else x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--dev", action="store_true", help="sweep the margin rule's margin (no lookahead) on "
                    "the screening sets only")
    ap.add_argument("--sweep", choices=("A", "B"), help="after the fact: the margin rule's sweep on a CLEF "
                    "run (50 seeds; shows what the dev choice costs, not used to choose)")
    ap.add_argument("--margin", type=float, default=ReviewRule().margin)
    ap.add_argument("--markdown", type=Path, help="write the tables here")
    ap.add_argument("--run", type=Path, help="any TREC run, one topic per query (with --qrels)")
    ap.add_argument("--qrels", type=Path)
    ap.add_argument("--threshold", type=float, default=1, help="the least relevant grade of --qrels")
    ap.add_argument("--json", action="store_true", help="print each approach's share read and worst "
                    "false-claim rate, and the per-topic rows, as JSON")
    args = ap.parse_args()
    if (args.run is None) != (args.qrels is None):
        ap.error("--run and --qrels go together")
    if args.dev or args.sweep:
        data = screening_sets() if args.dev else clef(args.sweep)
        for margin in (0.0625, 0.125, 0.25, 0.5):
            s, _ = evaluate(data, ReviewRule(margin=margin, lookahead=False), 50, baselines=False,
                            exact=False)
            ours = s["ours"]
            print(f"margin {margin}: ours {ours['share']:.1%} (worst false {ours['worst_false']:.3f}), "
                  f"floor {s['floor']['share']:.1%}", flush=True)
        return
    rule = ReviewRule(margin=args.margin)
    mine = (f"{args.run.name} with {args.qrels.name}" if args.run else "",
            lambda: trec_topics(args.run, args.qrels, args.threshold))
    sets = (mine,) if args.run else (
        ("CLEF TAR 2017, Waterloo run A (30 topics)", lambda: clef("A")),
        ("CLEF TAR 2017, Waterloo run B (30 topics)", lambda: clef("B")),
        ("Screening sets (TF-IDF ranking trained on a 200-record seed set, not counted)", screening_sets))
    parts, out = [], {}
    for title, load in sets:
        start = time.perf_counter()
        summary, rows = evaluate(load(), rule, args.seeds)
        text = markdown(title, summary, rows, args.seeds)
        out[title] = {"target": TARGET, "delta": DELTA, "seeds": args.seeds,
                      "summary": summary, "topics": rows, "seconds": round(time.perf_counter() - start, 1)}
        if not args.json:
            print(text, f"({out[title]['seconds']:.0f} s)\n", flush=True)
        parts.append(text)
    if args.json:
        print(json.dumps(_plain(out), indent=1))
    if args.markdown:
        args.markdown.write_text("\n".join(parts))


if __name__ == "__main__":
    main()
