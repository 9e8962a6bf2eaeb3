"""What one ``rankcut review`` call costs late in a large review: ``status``, ``next --batch 25`` and
``label --from`` (25 answers), against another checkout in the same command (issue 17, at scale).

Synthetic records, seeded: ``--records`` titles and abstracts drawn from a 4,000-word Zipf
vocabulary, ``--relevant`` of them relevant, which carry a few topic words except a
``--hidden`` share of them (those the ranker cannot find, so the audit reads on). Each checkout
starts its own review of them (a checkout's manifest may hold what the other does not read; the
two must read the same steps: checked): recall 0.8, the first two relevant records as prior
knowledge, the labels play the reviewer for ``--steps`` steps, ``certify`` runs, and 100 more
steps are labelled (so the certificate is behind, as in a review going on: checked); the next 25
records are listed and answered truly into ``answers.csv``; seed 1. Then, ``--runs`` times, this
checkout and ``--main`` (``PYTHONPATH``), which goes first alternating, each command is timed from
outside in its own process; ``label`` on a fresh copy of the folder each time. Prints a Markdown
table: the steps read (by ``status --json``), the median seconds, their ratio, and whether the two
checkouts printed the same (stdout, each folder's path and review id set aside).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_calls.py --records 50000 \\
        --steps 20000 --runs 3 --main /tmp/old/src   # git archive <commit> src | tar -x -C /tmp/old
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "src"
TOPIC = ["fraud", "kickback", "offshore", "shellco", "backdate", "invoice"]


def write_records(path: Path, n: int, relevant: int, hidden: float) -> list[str]:
    """The records CSV (``record_id``, ``title``, ``abstract``, ``label_included``); the relevant ids."""
    rng = random.Random(1)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "da", "gu", "ri", "fo", "be", "zu"]
    words: set[str] = set()
    while len(words) < 4000:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    vocab = sorted(words)
    weights = [1.0 / (i + 1) ** 1.05 for i in range(len(vocab))]
    chosen = set(rng.sample(range(n), relevant))
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["record_id", "title", "abstract", "label_included"])
        for i in range(n):
            title = rng.choices(vocab, weights, k=rng.randint(5, 12))
            abstract = rng.choices(vocab, weights, k=rng.randint(60, 140))
            if i in chosen and rng.random() >= hidden:
                for _ in range(rng.randint(2, 5)):
                    abstract.insert(rng.randrange(len(abstract)), rng.choice(TOPIC))
            elif rng.random() < 0.01:
                abstract.insert(rng.randrange(len(abstract)), rng.choice(TOPIC))
            out.writerow([f"DOC{i:06d}", " ".join(title).capitalize(), " ".join(abstract), int(i in chosen)])
    return [f"DOC{i:06d}" for i in sorted(chosen)]


def rankcut(src: Path, *args: str, check: bool = True, cwd: Path | None = None) -> tuple[float, str]:
    """Seconds one ``rankcut`` command takes in its own process, run from ``src`` (in ``cwd``), and its
    stdout."""
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1", "RANKCUT_PROGRESS": "0"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rankcut", *args], env=env, check=check, capture_output=True,
                          text=True, cwd=cwd)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=50_000)
    ap.add_argument("--relevant", type=int, default=200)
    ap.add_argument("--hidden", type=float, default=0.4)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--main", type=Path, required=True, help="the other checkout's src (the baseline)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "records.csv"
        relevant = write_records(data, args.records, args.relevant, args.hidden)
        both = [("before", args.main), ("after", HERE)]
        # a folder each: a checkout's manifest may hold what the other does not read
        made = {name: prepared(src, work / name, data, relevant, args.steps) for name, src in both}
        read, again = made["before"][0], made["after"][0]
        if read != again:
            raise SystemExit(f"the two checkouts read {read} and {again} steps: not the same review")
        calls = {"review status": ["status"], "review next --batch 25": ["next", "--batch", "25"],
                 "review label --from answers.csv (25)": ["label", "--from", "answers.csv"]}
        times: dict[tuple[str, str], list[float]] = {}
        said: dict[tuple[str, str], set[str]] = {}
        for run in range(args.runs):
            for name, src in both if run % 2 == 0 else both[::-1]:
                folder = work / name / "R"
                short = made[name][1]
                for call, argv in calls.items():
                    if argv[0] == "label":   # on a fresh copy each time
                        shutil.rmtree(work / name / "copy", ignore_errors=True)
                        folder = Path(shutil.copytree(work / name / "R", work / name / "copy"))
                    seconds, out = rankcut(src, "review", *argv, "--folder", str(folder), cwd=work / name)
                    times.setdefault((call, name), []).append(seconds)
                    shown = out.replace(str(work / name), "W").replace(short, "ID")   # its folder and id
                    said.setdefault((call, name), set()).add(shown)
        print(f"| call, {args.records:,} records, {read:,} steps read | before (`--main`, median of "
              f"{args.runs}) | after (this checkout) | before / after | same output |")
        print("|---|---|---|---|---|")
        for call in calls:
            before, after = (statistics.median(times[(call, n)]) for n in ("before", "after"))
            same = "yes" if said[(call, "before")] == said[(call, "after")] else "no"
            print(f"| `{call}` | {before:.2f} s | {after:.2f} s | {before / after:.1f}× | {same} |")


def prepared(src: Path, work: Path, data: Path, relevant: list[str], steps: int) -> tuple[int, str]:
    """A review of ``data`` (``relevant`` its relevant ids, the first two the prior knowledge) in
    ``work/R`` by the checkout ``src``: ``steps`` labelled, certified, 100 more labelled (the
    certificate behind: checked), and ``work/answers.csv`` answering the next 25. Returns the steps
    read and the review's short id."""
    folder = str(work / "R")
    work.mkdir()
    rankcut(src, "review", "start", str(data), "--folder", folder, "--label-column", "label_included",
            "--target-recall", "0.8", "--prior-relevant", ",".join(relevant[:2]), "--seed", "1")
    sim = ["review", "label", "--folder", folder, "--simulate", "--records", str(data),
           "--label-column", "label_included", "--next"]
    rankcut(src, *sim, str(steps))
    rankcut(src, "review", "certify", "--folder", folder, check=False)   # exit 1: not met yet
    certified = json.loads(rankcut(src, "review", "status", "--folder", folder, "--json")[1])["read"]
    rankcut(src, *sim, "100")
    now = json.loads(rankcut(src, "review", "status", "--folder", folder, "--json")[1])
    if not now["read"] > certified or now["next_record"] is None:
        raise SystemExit(f"the review is certified after {now['read']} steps, or its certificate is not "
                         "behind: take fewer --steps or more --records")
    rankcut(src, "review", "next", "--folder", folder, "--batch", "25", "--out", str(work / "batch.csv"))
    with open(work / "batch.csv", newline="", encoding="utf-8") as f, \
            open(work / "answers.csv", "w", newline="", encoding="utf-8") as g:
        out = csv.writer(g)
        out.writerow(["record_id", "label"])
        out.writerows([r["record_id"], int(r["record_id"] in relevant)] for r in csv.DictReader(f))
    return int(now["read"]), str(now["audit_id"])[:12]


if __name__ == "__main__":
    main()
