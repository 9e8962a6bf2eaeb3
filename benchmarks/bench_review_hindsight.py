"""Where the CAL review's reads go: screening against auditing, and the hindsight-best switch (issue 17).

For each named screening set and seed (the prior knowledge and audit order of ``bench_review.py``),
one line of JSON:

* the review as ``bench_review.py`` runs it (:func:`rankcut.review.simulate.simulate_review`,
  default ``ProjectedCostPolicy`` and ``CALConfig``): documents read, how many by screening and
  by auditing, the step of the first audit move;
* the **hindsight-best single switch** of the *same* ranker: CAL's screen-only order (its order
  when it screens everything, ``bench_review.cal_screen_order``), screened to depth ``d`` and then
  only audited (``ScreenThenAudit(d)``, the same interleaved certificate, the same audit order),
  for ``d`` on a grid of steps of ``max(10, N // 50)``; the fewest documents read over that grid,
  its ``d`` and the recall the top ``d`` hold. Since CAL sees only screened labels before its first
  audit, ``ScreenThenAudit(d)`` with the learning ranker reads exactly this order. The ``d`` is
  chosen with the labels, so it is a bound on what a better switching policy could reach with this
  ranker, not a review anyone can run.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_hindsight.py \\
        --only cohen2006-Opiods --only cohen2006-BetaBlockers --seeds 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_review import DATASETS, DELTA, cal_screen_order, prior_of, with_prior  # noqa: E402

from rankcut.certify.interleaved import InterleavedRule  # noqa: E402
from rankcut.certify.policies import ScreenThenAudit  # noqa: E402
from rankcut.certify.simulate import play  # noqa: E402
from rankcut.review.records import load_records  # noqa: E402
from rankcut.review.simulate import simulate_review  # noqa: E402


def diagnose(path: Path, seed: int, target: float) -> dict:
    records = load_records(path)
    y = records.labels
    assert y is not None
    known = with_prior(records, prior_of(records, seed))
    run = simulate_review(known, target=target, delta=DELTA, seeds=[seed]).runs[0]
    order = cal_screen_order(known)
    ranked = y[order].astype(np.int64)
    rank_of = np.empty(y.size, dtype=np.int64)
    rank_of[order] = np.arange(y.size)
    audit = rank_of[np.random.default_rng(seed).permutation(y.size)]   # the same documents' order
    rule = InterleavedRule(target, DELTA)
    step = max(10, y.size // 50)
    best = min((play(ranked, audit, ScreenThenAudit(d), rule).read, d)
                for d in range(step, y.size + 1, step))
    return {"set": records.name, "seed": seed, "target": target, "N": int(y.size), "R": int(y.sum()),
            "read": run.read, "screened": run.screened, "audited": run.read - run.screened,
            "first_audit": run.moves.find("a"), "hindsight_read": best[0], "hindsight_depth": best[1],
            "recall_at_depth": float(ranked[:best[1]].sum() / y.sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="a set's file stem (repeat; default all 14)")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.8)
    args = ap.parse_args()
    paths = sorted((DATASETS / "screening").glob("*.csv"))
    for p in paths:
        if args.only is None or p.stem in args.only:
            for s in range(args.seeds):
                print(json.dumps(diagnose(p, s, args.target)), flush=True)


if __name__ == "__main__":
    main()
