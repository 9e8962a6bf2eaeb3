"""Latency of the labelling page (``rankcut serve``): from an answer to the next page, on a large audit.

Builds a synthetic audit of ``--queries`` lists of ``--depth`` documents (100 x 1000 = 100,000 items by
default), cut at ``--cut``, freezes, plans and samples it (the sequential design lists the whole
excluded pool; ``--design excluded`` draws ``--excluded`` items), labels the cut from its qrels (and
the first ``--audited`` items of the audit order, none relevant), then answers ``--answers`` items
through the ASGI test client and times each answer: the POST of the form and the GET of the next page
it redirects to (what a reviewer waits for after a key press). Every ``--find-every``-th answer says
relevant (a find: the header's "next" note is scanned again). The time of the sequential design's
header (the recall bound, computed by the design's certificate after every answer) is timed on its
own too, on a fresh desk (every prefix evaluated, as when the page starts) and after one more label.

    .venv/bin/python benchmarks/bench_serve.py                      # sequential, 100,000 items
    .venv/bin/python benchmarks/bench_serve.py --audited 20000 --find-every 5   # deep, with finds
    .venv/bin/python benchmarks/bench_serve.py --audited 80000 --find-every 5   # deeper
    .venv/bin/python benchmarks/bench_serve.py --design excluded    # a fixed-size sample of 1,000

``--design interleaved`` reviews one query's ranking of ``--depth`` documents (5,000 by default for
it; relevant ones thin out down the ranking, 300 in all), ``--steps`` steps labelled from the qrels
before the page opens (the review resumed from them), under ``--policy``:

    .venv/bin/python benchmarks/bench_serve.py --design interleaved --steps 1500

``--folder PATH`` opens the page on a copy of an existing audit or review folder instead (a
``rankcut review`` of a large collection, docs/scaling.md), answering as above:

    .venv/bin/python benchmarks/bench_serve.py --folder B --answers 300 --find-every 5

The issue's bar: under 100 ms. Results are in docs/serve.md.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from rankcut.audit import workflow as wf
from rankcut.serve.app import create_app
from rankcut.serve.desks import open_desk

TOKEN = "bench"
ORIGIN = {"origin": "http://testserver"}


def build_interleaved(folder: Path, depth: int, steps: int, policy: str) -> Path:
    """One query's ranking of ``depth`` documents, rank ``r`` relevant when ``⌊300·(1 − e^{−r/800})⌋``
    steps up at it (300 relevant, thinning out); ``steps`` steps labelled from the qrels."""
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    with open(run, "w") as f, open(qrels, "w") as g:
        for r in range(depth):
            f.write(f"q0 Q0 d{r} {r + 1} {depth - r} t\n")
            if math.floor(300 * (1 - math.exp(-(r + 1) / 800))) > math.floor(300 * (1 - math.exp(-r / 800))):
                g.write(f"q0 0 d{r} 1\n")
    audit = folder / "audit"
    wf.freeze(audit, run=run, design="interleaved", policy=policy, target_recall=0.8, seed=1)
    wf.plan(audit)
    wf.sample(audit)
    wf.label(audit, qrels=qrels, limit=steps)
    return audit


def build(folder: Path, queries: int, depth: int, cut: int, design: str, excluded: int, audited: int
          ) -> Path:
    run, cut_run, qrels = folder / "run.txt", folder / "cut.run", folder / "qrels.txt"
    with open(run, "w") as f, open(cut_run, "w") as c, open(qrels, "w") as g:
        for q in range(queries):
            for r in range(depth):
                line = f"q{q} Q0 d{q}-{r} {r + 1} {depth - r} t\n"
                f.write(line)
                if r < cut:
                    c.write(line)
                    if r < cut // 2:
                        g.write(f"q{q} 0 d{q}-{r} 1\n")
    audit = folder / "audit"
    if design == "sequential":
        wf.freeze(audit, run=run, cut=cut_run, design="sequential", target_recall=0.9, seed=1)
        wf.plan(audit)
        wf.sample(audit)
        # the cut, as a review would have read it, and the start of the audit order
        wf.label(audit, qrels=qrels, limit=queries * cut + audited)
    else:
        wf.freeze(audit, run=run, cut=cut_run, design=design, max_missed=50, seed=1)
        wf.plan(audit)
        wf.sample(audit, excluded=excluded, allow_underpowered=True)   # a page to time, not a certificate
    return audit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--depth", type=int, default=None, help="1000 (interleaved: 5000)")
    parser.add_argument("--cut", type=int, default=10)
    parser.add_argument("--design", default="sequential")
    parser.add_argument("--excluded", type=int, default=1000)
    parser.add_argument("--answers", type=int, default=20)
    parser.add_argument("--audited", type=int, default=0, help="audit labels recorded before the page opens")
    parser.add_argument("--find-every", type=int, default=0, help="every K-th answer is relevant (0: none)")
    parser.add_argument("--steps", type=int, default=1500,
                        help="interleaved: steps read before the page opens")
    parser.add_argument("--policy", default="projected-cost", help="interleaved: the frozen --policy")
    parser.add_argument("--folder", type=Path, default=None,
                        help="time the page on a copy of this audit or review folder instead of building one")
    args = parser.parse_args()
    interleaved = args.design == "interleaved"
    if args.depth is None:
        args.depth = 5000 if interleaved else 1000
    if interleaved:
        args.queries = 1
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if args.folder is not None:   # answered in a copy: the folder itself is left as it was
            audit = Path(shutil.copytree(args.folder, Path(tmp) / "audit"))
        else:
            audit = (build_interleaved(Path(tmp), args.depth, args.steps, args.policy) if interleaved else
                     build(Path(tmp), args.queries, args.depth, args.cut, args.design, args.excluded,
                           args.audited))
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        client = TestClient(create_app(audit, TOKEN))
        client.get(f"/?token={TOKEN}")
        csrf = re.search(r'name="csrf" value="([^"]*)"', client.get("/").text)
        assert csrf is not None
        client.post("/reviewer", data={"name": "bench", "csrf": csrf[1]}, headers=ORIGIN)
        started = time.perf_counter() - t0
        page = client.get("/").text
        times, cpu = [], []
        for i in range(args.answers):
            find = args.find_every and (i + 1) % args.find_every == 0
            fields = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))
            t0, c0 = time.perf_counter(), time.process_time()
            response = client.post("/answer", data={**fields, "label": "1" if find else "0"}, headers=ORIGIN)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            assert response.status_code == 200, response.text[-500:]
            page = response.text
        desk = open_desk(audit)
        t0 = time.perf_counter()
        standing = desk.standing()
        header = time.perf_counter() - t0
        fields = dict(re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page))
        client.post("/answer", data={**fields, "label": "0"}, headers=ORIGIN)
        t0 = time.perf_counter()
        desk.standing()
        again = time.perf_counter() - t0
    what = (f"{args.folder} (a copy)" if args.folder is not None else
            f"{args.design} design, {args.queries * args.depth:,} items")
    made = "copied" if args.folder is not None else "built"
    print(f"{what} ({standing.total:,} to label): audit {made} in {built:.1f} s, page up in {started:.1f} s")
    print(f"answer -> next page over {len(times)} answers: median {1000 * statistics.median(times):.0f} ms, "
          f"max {1000 * max(times):.0f} ms (bar: 100 ms); CPU time median "
          f"{1000 * statistics.median(cpu):.0f} ms, max {1000 * max(cpu):.0f} ms")
    print(f"the page's state alone (Desk.standing, bound included: {standing.bound}): {1000 * header:.0f} ms "
          f"on a fresh desk, {1000 * again:.0f} ms after one more label")


if __name__ == "__main__":
    main()
