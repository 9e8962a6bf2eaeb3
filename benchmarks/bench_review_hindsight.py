"""Where the CAL review's reads go: screening against auditing, and the hindsight-best switch (issue 17).

For each named screening set and seed (the prior knowledge and audit order of ``bench_review.py``),
one line of JSON:

* the review as ``bench_review.py`` runs it (:func:`rankcut.review.simulate.simulate_review`:
  the review's default policy and prior basis, :data:`rankcut.review.session.POLICY` and
  ``PRIOR_BASIS``, and ``CALConfig()``): documents read, how many by screening and by auditing,
  the step of the first audit move;
* the **hindsight-best single switch** of the *same* ranker: CAL's screen-only order (its order
  when it screens everything, ``bench_review.cal_screen_order``), screened to depth ``d`` and then
  only audited (``ScreenThenAudit(d)``, the same interleaved certificate with the same prior
  basis, the same audit order),
  for ``d`` on a grid of steps of ``max(10, N // 50)``; the fewest documents read over that grid,
  its ``d`` and the recall the top ``d`` hold. Since CAL sees only screened labels before its first
  audit, ``ScreenThenAudit(d)`` with the learning ranker reads exactly this order. The ``d`` is
  chosen with the labels, so it is a bound on what a better switching policy could reach with this
  ranker, not a review anyone can run.
* with ``--orders K``, the **best fixed switch**: the ``d`` of the grid with the fewest documents
  read on average over ``K`` *other* audit orders (``default_rng(ORDERS_SEED + 1000·seed + j)``),
  and what that ``d`` reads on the review's own order. The hindsight-best ``d`` above also knows
  the luck of the review's audit order; this one knows the labels but not the order, so its cost
  on the review's order is an unbiased estimate of that depth's cost: about the best any policy
  that switches once can do with this ranker (no such rule, deciding without the labels, beats it
  on average; one that goes back to screening may).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_hindsight.py \\
        --only cohen2006-Opiods --only cohen2006-BetaBlockers --seeds 2
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_hindsight.py --seeds 2 --orders 5 --table
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import DATASETS, screening_paths  # noqa: E402
from bench_review import DELTA, cal_screen_order, prior_of, with_prior  # noqa: E402

from rankcut.certify.interleaved import InterleavedRule  # noqa: E402
from rankcut.certify.policies import ScreenThenAudit  # noqa: E402
from rankcut.certify.simulate import play  # noqa: E402
from rankcut.review.records import load_records  # noqa: E402
from rankcut.review.session import PRIOR_BASIS  # noqa: E402
from rankcut.review.simulate import simulate_review  # noqa: E402

ORDERS_SEED = 10_000


def diagnose(path: Path, seed: int, target: float, orders: int = 0) -> dict:
    records = load_records(path, label="label_included")   # the final decision, not the abstract one
    y = records.labels
    assert y is not None
    known = with_prior(records, prior_of(records, seed))
    run = simulate_review(known, target=target, delta=DELTA, seeds=[seed]).runs[0]
    order = cal_screen_order(known)
    ranked = y[order].astype(np.int64)
    rank_of = np.empty(y.size, dtype=np.int64)
    rank_of[order] = np.arange(y.size)
    audit = rank_of[np.random.default_rng(seed).permutation(y.size)]   # the same documents' order
    rule = InterleavedRule(target, DELTA, prior_basis=PRIOR_BASIS)   # the review's own certificate
    step = max(10, y.size // 50)
    depths = range(step, y.size + 1, step)
    best = min((play(ranked, audit, ScreenThenAudit(d), rule).read, d) for d in depths)
    fixed = {}
    if orders:
        rngs = [np.random.default_rng(ORDERS_SEED + 1000 * seed + j) for j in range(orders)]
        others = [rank_of[r.permutation(y.size)] for r in rngs]
        mean, d = min((float(np.mean([play(ranked, o, ScreenThenAudit(d), rule).read for o in others])), d)
                      for d in depths)
        fixed = {"fixed_depth": d, "fixed_read_others": mean,
                 "fixed_read": play(ranked, audit, ScreenThenAudit(d), rule).read}
    return {"set": records.name, "seed": seed, "target": target, "N": int(y.size), "R": int(y.sum()),
            "read": run.read, "screened": run.screened, "audited": run.read - run.screened,
            "first_audit": run.moves.find("a"), "hindsight_read": best[0], "hindsight_depth": best[1],
            "recall_at_depth": float(ranked[:best[1]].sum() / y.sum())} | fixed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="a set's file stem (repeat; default all 14)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.8)
    ap.add_argument("--orders", type=int, default=0, help="audit orders the best fixed switch is chosen on")
    ap.add_argument("--table", action="store_true", help="end with the shares over all named sets")
    args = ap.parse_args()
    paths = screening_paths()
    if args.seeds < 1 or args.orders < 0 or not 0 < args.target < 1:
        ap.error("--seeds must be ≥ 1, --orders ≥ 0 and --target in (0, 1)")
    unknown = sorted(set(args.only or ()) - {p.stem for p in paths})
    if unknown:
        ap.error(f"--only: no set {', '.join(unknown)} in {DATASETS / 'screening'} "
                 f"(its sets: {', '.join(p.stem for p in paths)})")
    rows = []
    for p in paths:
        if args.only is None or p.stem in args.only:
            for s in range(args.seeds):
                rows.append(diagnose(p, s, args.target, args.orders))
                print(json.dumps(rows[-1]), flush=True)
    if args.table:
        print(table(rows))


def table(rows: list[dict]) -> str:
    """Documents read as a share of all records, per column: means over seeds, summed over sets."""
    sets: dict[str, list[dict]] = {}
    for r in rows:
        sets.setdefault(r["set"], []).append(r)
    total = sum(rs[0]["N"] for rs in sets.values())
    cols = [c for c in ("read", "hindsight_read", "fixed_read") if c in rows[0]]
    share = {c: sum(np.mean([r[c] for r in rs]) for rs in sets.values()) / total for c in cols}
    return "\n".join(["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|",
                      "| " + " | ".join(f"{100 * share[c]:.1f}%" for c in cols) + " |"])


if __name__ == "__main__":
    main()
