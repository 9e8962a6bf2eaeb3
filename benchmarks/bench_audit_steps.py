"""Wall time and peak memory of each ``rankcut audit`` step on a large synthetic run (issue 19).

Writes a run of ``--lines`` lines (``--depth`` documents per query, ids shared across queries as in
a real collection), a cut run (the top 10 to 199 of each list) and qrels, freezes a two-pool audit
(``--target-recall 0.8``), then runs plan, sample, label (the qrels oracle), certify, report and
status, each in a fresh Python process, and prints per step its wall and CPU time (the step
itself), the wall time of the whole process with its imports, and the process's peak RSS. Freeze
reads the run once; every later step reads the audit folder's snapshot and checks the inputs by
their file status (``docs/audit.md``, "Large runs"), so its cost should not grow with the run.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_audit_steps.py --lines 1000000
    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_audit_steps.py --lines 10000000 --keep /tmp/b7
    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_audit_steps.py --lines 1000000 --hashed

With ``--keep FOLDER`` the files are written (or, when there, reused) in FOLDER; a fresh audit is
frozen each time. ``--run RUN --cut CUT --qrels QRELS`` audit files written otherwise instead (the
10^8-line chain of ``docs/benchmarks.md``: the run and qrels of ``bench_scale.py``, the cut its
``rankcut cut`` wrote); the audit folder is then made under ``--keep`` or a temporary folder. The
rankcut measured is the one ``import rankcut`` finds (``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = {
    "freeze": "wf.freeze(audit, run=run, cut=cut, design='two-pool', target_recall=0.8, seed=1)",
    "plan": "wf.plan(audit)",
    "sample": "wf.sample(audit)",
    "label": "wf.label(audit, qrels=qrels)",
    "certify": "wf.certify(audit)",
    "report": "write_report(audit, audit.parent / 'report' / 'report.md')",
    "status": "wf.status(audit)",
}

CHILD = """
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from rankcut.audit import workflow as wf
from rankcut.audit.report import write_report
run, cut, qrels, audit = (Path(a) for a in sys.argv[1:5])
if sys.argv[5] == "hashed":
    import rankcut.audit.manifest
    rankcut.audit.manifest.SETTLED_NS = 1 << 62   # no input is ever settled: no status is recorded
t1, c1 = time.perf_counter(), time.process_time()
{step}
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({{"step_s": t2 - t1, "cpu_s": c2 - c1, "imports_s": t1 - t0,
                   "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def write_inputs(folder: Path, lines: int, depth: int) -> None:
    """``run.txt``, ``cut.run`` and ``qrels.txt`` in ``folder`` (skipped when the run is there)."""
    if (folder / "run.txt").exists():
        return
    queries = max(1, lines // depth)
    with open(folder / "run.txt", "w") as run, open(folder / "cut.run", "w") as cut, \
            open(folder / "qrels.txt", "w") as qrels:
        for q in range(queries):
            keep = 10 + (q * 37) % 190
            rows = [f"q{q} Q0 doc{q * 131 + r * 100003} {r + 1} {1000 - r}.5 bench\n" for r in range(depth)]
            run.writelines(rows)
            cut.writelines(rows[:keep])
            qrels.writelines(f"q{q} 0 doc{q * 131 + r * 100003} 1\n" for r in range(0, 300, 17))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=1000, help="documents per query")
    ap.add_argument("--keep", type=Path, help="write (or reuse) the inputs in this folder")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    ap.add_argument("--run", type=Path, help="audit this run (with --cut and --qrels) instead of writing one")
    ap.add_argument("--cut", type=Path)
    ap.add_argument("--qrels", type=Path)
    ap.add_argument("--hashed", action="store_true",
                    help="freeze records no file status, as for inputs written just before it, so every step "
                         "hashes them in full (by default the benchmark waits until they are 2.5 s old, as a "
                         "run written before its audit is, and the steps check their status)")
    args = ap.parse_args()
    given = (args.run, args.cut, args.qrels)
    if any(given) and not all(given):
        ap.error("--run, --cut and --qrels go together")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench_audit_steps_"))
    folder.mkdir(parents=True, exist_ok=True)
    if all(given):
        run, cut, qrels = (p.resolve() for p in given)
    else:
        run, cut, qrels = folder / "run.txt", folder / "cut.run", folder / "qrels.txt"
        t = time.perf_counter()
        write_inputs(folder, args.lines, args.depth)
        print(f"inputs in {folder} ({time.perf_counter() - t:.1f} s)", flush=True)
    print(f"run {run} ({run.stat().st_size / 1e6:.0f} MB), cut {cut}, qrels {qrels}", flush=True)
    newest = max(p.stat().st_ctime for p in (run, cut))
    if time.time() - newest < 2.5:
        time.sleep(2.5 - (time.time() - newest))
    audit = folder / "audit"
    shutil.rmtree(audit, ignore_errors=True)
    shutil.rmtree(folder / "report", ignore_errors=True)
    (folder / "report").mkdir()
    rows = []
    print(f"{'step':8} {'step s':>8} {'step CPU s':>11} {'process s':>10} {'peak RSS MB':>12}")
    for name, code in STEPS.items():
        t = time.perf_counter()
        how = "hashed" if args.hashed and name == "freeze" else "-"
        out = subprocess.run([sys.executable, "-c", CHILD.format(step=code), str(run), str(cut), str(qrels),
                              str(audit), how], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{name} failed:\n{out.stderr[-3000:]}")
        wall = time.perf_counter() - t
        got = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append({"step": name, **got, "process_s": wall})
        print(f"{name:8} {got['step_s']:8.2f} {got['cpu_s']:11.2f} {wall:10.2f} {got['peak_mb']:12.0f}",
              flush=True)
        if name == "freeze":
            frozen = json.loads((audit / "manifest.json").read_text())["inputs"]
            checked = ", ".join(f"{k} by {'status' if v.get('status') else 'hash'}"
                                for k, v in frozen.items())
            print(f"         (later steps check {checked})", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"run": str(run), "lines": None if all(given) else args.lines,
                                         "depth": args.depth, "rows": rows}, indent=2))
    if args.keep is None:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
