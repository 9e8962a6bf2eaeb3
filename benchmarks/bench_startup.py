"""Wall time of ``rankcut --version`` (and of importing the CLI app): the median of several runs,
each in a fresh interpreter, for the source tree given (default: this checkout's ``src``).

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_startup.py [--src DIR ...] [--runs 9]

Several ``--src`` compare trees (e.g. main's ``src`` from ``git archive main src``) in one run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = {
    "rankcut --version": "from rankcut.cli.main import app; app(['--version'], prog_name='rankcut')",
    "import rankcut.cli.main": "import rankcut.cli.main",
}


def median_wall(src: Path, code: str, runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, action="append",
                        help="a source tree holding the rankcut package (repeatable)")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    for src in args.src or [Path(__file__).resolve().parents[1] / "src"]:
        for name, code in CASES.items():
            print(f"{src}\t{name}\tmedian {median_wall(src, code, args.runs):.3f} s over {args.runs} runs")


if __name__ == "__main__":
    main()
