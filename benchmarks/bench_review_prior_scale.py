"""The CAL review's cost against the interleaved rule's prior scale, on the screening sets (issue 17).

Issue 16 chose the rule's ``prior_scale`` leave-one-topic-out on CLEF TAR 2017; this asks whether
it is a lever for the CAL review. For each of the 14 sets of ``../shared/datasets/screening``, each
seed ``s`` (the prior knowledge of ``bench_review.py``: one included and one excluded record drawn
by ``default_rng(s)``, and the audit order) and each scale, the review of
:func:`rankcut.review.simulate.simulate_review` (CAL ranker, ``ProjectedCostPolicy`` defaults) is
played with ``InterleavedRule(target, δ, prior_scale=scale)`` to its first certified step. Prints
one JSON line per run, then the documents read per scale over all sets (mean over the seeds):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_prior_scale.py --scales 0.5,0.125,0.25,1 \\
        --seeds 2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import screening_paths  # noqa: E402 -- a script beside this one
from bench_review import DELTA, prior_of, with_prior  # noqa: E402

from rankcut.certify.interleaved import InterleavedRule  # noqa: E402
from rankcut.certify.policies import ProjectedCostPolicy  # noqa: E402
from rankcut.certify.simulate import play  # noqa: E402
from rankcut.review.cal import CALConfig, CALScreener  # noqa: E402
from rankcut.review.records import load_records  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", default="0.5,0.125,0.25,1", help="comma-separated prior scales")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.8)
    args = ap.parse_args()
    scales = [float(x) for x in args.scales.split(",")]
    if args.seeds < 1 or not 0 < args.target < 1 or min(scales) <= 0:
        ap.error("--seeds must be at least 1, --target in (0, 1), every scale positive")
    read: dict[float, float] = defaultdict(float)
    total = 0
    for path in screening_paths():
        records = load_records(path, label="label_included")   # the final decision, not the abstract one
        total += len(records)
        for s in range(args.seeds):
            rec = with_prior(records, prior_of(records, s))
            assert rec.labels is not None
            for scale in scales:
                screener = CALScreener(rec.texts, CALConfig(), prior=rec.prior, ranked=rec.ranked)
                run = play(rec.labels, np.random.default_rng(s).permutation(len(rec)), ProjectedCostPolicy(),
                           InterleavedRule(args.target, DELTA, prior_scale=scale), screener)
                read[scale] += run.read / args.seeds
                print(json.dumps({"set": rec.name, "seed": s, "scale": scale, "N": len(rec), "read": run.read,
                                  "false": run.false_claim}), flush=True)
    for scale in scales:
        share = read[scale] / total
        print(f"prior scale {scale:g}: {read[scale]:.1f} documents read ({share:.1%} of {total})")


if __name__ == "__main__":
    main()
