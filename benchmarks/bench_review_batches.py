"""What reading ahead costs a reviewer: ``rankcut review next --batch N`` then ``label --from``,
batch after batch, to the certificate, the records' labels playing the reviewer (issue 17).

For each set of ``../shared/datasets/screening`` named and each seed, a review is started with the
prior knowledge of ``bench_review.py`` (seed ``s``: one included and one excluded record), then
each round lists the next ``--batch`` records (:func:`rankcut.review.session.next_records`), the
reviewer reads every one of them and answers truly, and :func:`~rankcut.review.session.label`
records the answers as far as the review asks for them (the rest kept for later). It prints one
JSON line per run: the records the review counts (the same steps as a review answered record by
record, ``tests/review/test_batch.py``) and the records the reviewer read (every record listed in a
batch, and the prior knowledge); their difference is the reading the batches cost.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_batches.py --batch 25 --seeds 2 \\
        --only cohen2006-Estrogens --only cohen2006-ADHD
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import DATASETS, screening_paths  # noqa: E402 -- a script beside this one
from bench_review import prior_of, with_prior  # noqa: E402

from rankcut.review import session  # noqa: E402
from rankcut.review.records import Records, load_records  # noqa: E402


def review_in_batches(records: Records, batch: int, seed: int, target: float) -> dict[str, object]:
    """One review read ``batch`` records at a time (module docstring)."""
    assert records.labels is not None
    truth = dict(zip(records.ids, records.labels.tolist(), strict=True))
    read = {rid for rid, y in zip(records.ids, records.prior.tolist(), strict=True) if y >= 0}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder, answers = Path(tmp) / "R", Path(tmp) / "batch.csv"
        session.start(records, folder, target_recall=target, seed=seed)
        rounds = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the kept-for-later warnings
            while listed := session.next_records(folder, batch):
                read |= {r["record_id"] for r in listed}
                answers.write_text("record_id,label\n" + "".join(f"{r['record_id']},{truth[r['record_id']]}\n"
                                                                 for r in listed))
                session.label(folder, from_file=answers)
                rounds += 1
        info = session.status(folder)
    return {"set": records.name, "batch": batch, "seed": seed, "target": target, "N": len(records),
            "review_read": info["read"], "reviewer_read": len(read), "rounds": rounds,
            "certified": info["next_record"] is None and info["read"] < len(records),
            "s": round(time.perf_counter() - start, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.8)
    ap.add_argument("--only", action="append", help="a set's name (default: all 14)")
    args = ap.parse_args()
    if args.batch < 1 or args.seeds < 1 or not 0 < args.target < 1:
        ap.error("--batch and --seeds must be at least 1, --target in (0, 1)")
    names = args.only or [p.stem for p in screening_paths()]
    for name in names:
        path = DATASETS / "screening" / f"{name}.csv"
        if not path.is_file():
            ap.error(f"--only {name}: no {path}")
        records = load_records(path, label="label_included")   # the final decision, not the abstract one
        for s in range(args.seeds):
            print(json.dumps(review_in_batches(with_prior(records, prior_of(records, s)), args.batch, s,
                                               args.target)), flush=True)


if __name__ == "__main__":
    main()
