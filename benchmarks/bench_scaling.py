"""Where the time of a sharded cut goes (docs/scaling.md): loading the run, starting Ray, and the
cut itself in this process and on Ray, for a synthetic run of ``--queries`` x ``--depth`` lines.

Every sharded result is compared with the single-process cuts before its time is printed.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_scaling.py --queries 1000 --depth 1000

The end-to-end commands (``rankcut cut`` / ``evaluate`` with and without ``--ray local``) are in
docs/scaling.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from rankcut.cli._common import load_runs
from rankcut.cutters import make_cutter
from rankcut.data.synthetic import write_synthetic
from rankcut.parallel import OnRay, predict_sharded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--cutter", default="distribution", help="a cutter that learns nothing")
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--ray", default="local", help="Ray address")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        run, _ = write_synthetic(folder, n_queries=args.queries, depth=args.depth, seed=0)
        t = time.perf_counter()
        lists = load_runs([Path(run)], None, threshold=1.0, ordering="rank", missing="drop")
        print(f"| load {args.queries * args.depth:,} lines | {time.perf_counter() - t:.1f} s |")
    cutter = make_cutter(args.cutter)
    t = time.perf_counter()
    one = cutter.predict(lists)
    print(f"| {args.cutter} cut, in process | {time.perf_counter() - t:.1f} s |")
    t = time.perf_counter()
    where = OnRay(args.ray)
    print(f"| Ray start ({where.workers} workers) | {time.perf_counter() - t:.1f} s |")
    for shards in args.shards:
        t = time.perf_counter()
        got = predict_sharded(cutter, lists, shards=shards, runner=where)
        seconds = time.perf_counter() - t
        assert np.array_equal(got, one), f"{shards} shards cut otherwise than one process"
        print(f"| {args.cutter} cut, Ray, {shards} shards | {seconds:.1f} s |")
    t = time.perf_counter()
    where.close()
    print(f"| Ray stop | {time.perf_counter() - t:.1f} s |")


if __name__ == "__main__":
    main()
