"""Wall time of the query-id checks of :mod:`rankcut.evaluation` against the number of queries:
the split files (``read_query_ids`` of a JSON list), the ``train`` / ``test_queries`` ids of
``evaluate_cutters`` (``_present``) and ``seen_queries``. Each was O(Q²) through ``ids.count`` or
a ``q in sequence`` test.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_evaluation_queries.py [--queries 100000]

Run it with ``PYTHONPATH`` pointing at another source tree to compare (e.g. main's, from
``git archive main src``). ``RankedLists.subset`` (:mod:`rankcut.data.lists`) is timed apart.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    from rankcut import evaluation

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    args = parser.parse_args()
    qids = tuple(f"q{i}" for i in range(args.queries))
    half = list(qids[::2])
    lists: Any = SimpleNamespace(qids=qids)  # the checks read the query ids only
    cutter: Any = SimpleNamespace(train_qids_=half, val_qids_=[])
    with tempfile.TemporaryDirectory() as tmp:
        split = Path(tmp) / "split.json"
        split.write_text(json.dumps(list(qids)), encoding="utf-8")
        rows = {
            "read_query_ids (JSON list)": timed(lambda: evaluation.read_query_ids(split)),
            "train ids checked (_present)": timed(lambda: evaluation._present(lists, half, "train")),
            "seen_queries": timed(lambda: evaluation.seen_queries(cutter, lists, test_queries=half)),
        }
    for name, seconds in rows.items():
        print(f"{args.queries} queries\t{name}\t{seconds:.3f} s")


if __name__ == "__main__":
    main()
