"""Documents read to certify "recall ≥ ρ at 95%" on the screening sets: CAL review beside ASReview (issue 17).

For each screening set (``../shared/datasets/screening``: 13 Cohen et al. 2006 sets and
Bannach-Brown 2019; the labels play the reviewer), in one run on the same records:

* **cal** — :func:`rankcut.review.simulate.simulate_review`: the CAL ranker
  (:class:`rankcut.review.cal.CALScreener`, AutoTAR on scikit-learn, default configuration)
  screening, the review's default policy and prior basis (:data:`rankcut.review.session.POLICY`
  and ``PRIOR_BASIS``: ``MarginalCostPolicy(probe=25)``, its other constants chosen in issue 16 on
  CLEF TAR 2017, the probe and the tail basis leave-one-set-out on these sets,
  ``docs/results-review.md``) choosing screen or audit, stopping at the first certified step of
  the interleaved review; a review that never certifies reads everything;
* **asreview** — ``asreview`` 3's own simulation with its default model (ELAS u4: tf-idf with
  bigrams, SVM, maximum querier, balanced), run by ``--asreview-python`` (its own environment)
  until the last relevant record is found — after it every unread record is irrelevant, so its
  labelling order is complete — and three stopping rules applied to that order: **buscar**
  (``buscarpy.calculate_h0`` every 50 records, stop at ``p < 0.05``), and ASReview's own
  heuristic **n_consecutive_irrelevant** stopper at ``n = 50`` (LAB's default) and ``n = 100``;
  none of them carries a guarantee for every labelling;
* **one-shot** (``--one-shot``) — today's default: a TF-IDF classifier trained on a random seed set
  of 200 records (not counted, as in ``bench_label_efficient.py``; SkeletalMuscleRelaxants drops
  out, its seed set holds no included record), then screen-then-audit with the sequential audit
  (:func:`rankcut.certify.simulate.simulate_screen_then_audit`); its share is of the records outside the
  seed sets;
* **floor** — :func:`rankcut.certify.screening.cost_floor`, a lower bound for any valid review.

Both reviewers start from the same prior knowledge, ASReview's benchmark convention: one included
and one excluded record drawn by ``numpy.random.default_rng(seed)`` (counted as read). Seed ``s``
also draws the audit order of the CAL review and seeds ASReview's model. ``--seeds`` seeds run the
CAL review (its mean cost and the worst set's false-claim rate, "certified, true recall < ρ");
the first ``--asreview-seeds`` of them also run ASReview, and the comparison table is over those.
WSS@95 (work saved over random reading at 95% recall, ``(N − n95)/N − 0.05``) is each ranker's
own reading order read to 95% recall: ASReview's order, and CAL screening alone (no audit).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review.py --seeds 20 --asreview-seeds 1 \\
        --asreview-python ../venv-asr/bin/python --one-shot --jobs 2 --markdown review.md
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from rankcut.certify.interleaved import SCREEN, InterleavedRule
from rankcut.certify.policies import ReviewState
from rankcut.certify.screening import ReviewRule, cost_floor
from rankcut.certify.simulate import simulate_screen_then_audit as simulate_one_shot
from rankcut.review.cal import CALScreener
from rankcut.review.records import Records, load_records
from rankcut.review.simulate import simulate_review

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_label_efficient import buscar_depth, screening_paths  # noqa: E402 -- a script beside this one

DELTA = 0.05
TARGETS = (0.8, 0.95)
HEURISTICS = (50, 100)

#: run by --asreview-python: ASReview's simulate command (asreview.simulation.cli) in Python,
#: priors given by row index; prints the labelling order as JSON
ASREVIEW = """
import json, sys
import numpy as np
from asreview import load_dataset
from asreview.learner import ActiveLearningCycle
from asreview.models.models import get_ai_config
from asreview.models.queriers import TopDown
from asreview.models.stoppers import IsFittable, LastRelevant
from asreview.simulation.simulate import Simulate
path, seed, prior = sys.argv[1], int(sys.argv[2]), [int(i) for i in sys.argv[3].split(",")]
np.random.seed(seed)
with load_dataset(path, dataset_id="d") as db:
    cycles = [ActiveLearningCycle(querier=TopDown(), stopper=IsFittable()),
              ActiveLearningCycle.from_meta(get_ai_config("elas_u4")["value"])]
    sim = Simulate(db.input.get_df(), db.input["included"], cycles, stopper=LastRelevant(),
                   print_progress=False)
    sim.label(prior)
    sim.review()
    print(json.dumps([int(i) for i in sim._results["record_id"]]))
"""


def prior_of(records: Records, seed: int) -> list[int]:
    """One included and one excluded record, drawn by ``default_rng(seed)``."""
    assert records.labels is not None
    rng = np.random.default_rng(seed)
    return [int(rng.choice(np.flatnonzero(records.labels == 1))),
            int(rng.choice(np.flatnonzero(records.labels == 0)))]


def with_prior(records: Records, prior: list[int]) -> Records:
    assert records.labels is not None
    return records.with_prior({records.ids[i]: int(records.labels[i]) for i in prior})


def asreview_order(python: str, path: Path, records: Records, seed: int, prior: list[int]
                   ) -> NDArray[np.int64]:
    """ASReview's labelling order (row indices) until its last relevant record, the rest appended
    in file order (all irrelevant)."""
    out = subprocess.run([python, "-c", ASREVIEW, str(path), str(seed), ",".join(map(str, prior))],
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(f"{python} could not run ASReview's simulation on {path.name}:\n"
                           f"{out.stderr[-2000:]}")
    order = np.array(json.loads(out.stdout.strip().splitlines()[-1]), dtype=np.int64)
    assert records.labels is not None
    if np.unique(order).size != order.size or order[:2].tolist() != prior:
        raise RuntimeError(f"ASReview's order on {path.name} repeats a record or does not start from "
                           "the prior")
    if int(records.labels[order].sum()) != int(records.labels.sum()):
        raise RuntimeError(f"ASReview stopped on {path.name} before its last relevant record")
    return np.concatenate([order, np.setdiff1d(np.arange(len(records)), order)])



def consecutive_depth(y: NDArray[np.int64], n: int) -> int:
    """ASReview's ``NConsecutiveIrrelevant(n)``: the first depth past ``n`` ending ``n`` irrelevant."""
    run = 0
    for k, v in enumerate(y.tolist(), 1):
        run = 0 if v else run + 1
        if k > n and run >= n:
            return k
    return int(y.size)


def wss95(y: NDArray[np.int64]) -> float:
    need = math.ceil(0.95 * int(y.sum()))
    n95 = int(np.searchsorted(np.cumsum(y), need) + 1)
    return (y.size - n95) / y.size - 0.05


def cal_screen_order(records: Records) -> NDArray[np.int64]:
    """The CAL ranker's reading order when it screens everything (no audit)."""
    assert records.labels is not None
    screener = CALScreener(records.texts, prior=records.prior, ranked=records.ranked)
    state = ReviewState(len(records), InterleavedRule(0.8))
    order = []
    for _ in range(len(records)):
        doc = screener.next_screen(state)
        order.append(doc)
        state.record(SCREEN, doc, int(records.labels[doc]))
    return np.array(order, dtype=np.int64)


def set_row(args: tuple[Path, int, int, str | None]) -> dict:
    """Every approach on one screening set."""
    path, seeds, asr_seeds, python = args
    records = load_records(path, label="label_included")   # the final decision, not the abstract one
    y = records.labels
    assert y is not None
    big, rel = len(records), int(y.sum())
    row: dict = {"set": records.name, "N": big, "R": rel}
    start = time.perf_counter()
    for t in TARGETS:
        reads, false = [], []
        for s in range(seeds):
            sim = simulate_review(with_prior(records, prior_of(records, s)), target=t, delta=DELTA, seeds=[s])
            reads.append(int(sim.read[0]))
            false.append(bool(sim.false_claims[0]))
        row[f"cal@{t}"] = float(np.mean(reads))
        row[f"cal_cmp@{t}"] = float(np.mean(reads[:asr_seeds])) if asr_seeds else None
        row[f"cal_false@{t}"] = float(np.mean(false))
        row[f"floor@{t}"] = cost_floor(big, rel, t, DELTA)
    row["cal_seconds_per_run"] = (time.perf_counter() - start) / (seeds * len(TARGETS))
    row["cal_wss95"] = float(np.mean([wss95(y[cal_screen_order(with_prior(records, prior_of(records, s)))])
                                      for s in range(max(asr_seeds, 1))]))
    if python and asr_seeds:
        ys = [y[asreview_order(python, path, records, s, prior_of(records, s))].astype(np.int64)
              for s in range(asr_seeds)]
        row["asreview_wss95"] = float(np.mean([wss95(v) for v in ys]))
        for t in TARGETS:
            for name, depth in (("buscar", lambda v, t=t: buscar_depth(v, t)),
                                *((f"consecutive-{n}", lambda v, n=n: consecutive_depth(v, n))
                                  for n in HEURISTICS)):
                ks = [depth(v) for v in ys]
                row[f"{name}@{t}"] = float(np.mean(ks))
                short = [v[:k].sum() < t * rel for v, k in zip(ys, ks, strict=True)]
                row[f"{name}_false@{t}"] = float(np.mean(short))
    return row


def one_shot(seeds: int) -> dict[str, dict]:
    """Today's one-shot TF-IDF ranking with screen-then-audit, per set and target."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_label_efficient import screening_sets

    out: dict[str, dict] = {}
    for name, y in screening_sets().items():
        row: dict = {"N_rest": int(y.size)}
        for t in TARGETS:
            runs = simulate_one_shot(y, ReviewRule(target=t), range(seeds))
            row[f"one-shot@{t}"] = float(runs.cost.mean())
            row[f"one-shot_false@{t}"] = float(runs.false_claims.mean())
        out[name] = row
    return out


def summary(rows: list[dict], shots: dict[str, dict] | None) -> dict:
    total = sum(r["N"] for r in rows)
    out: dict = {}
    for t in TARGETS:
        s: dict = {"floor": sum(r[f"floor@{t}"] for r in rows) / total,
                   "cal": sum(r[f"cal@{t}"] for r in rows) / total,
                   "cal_worst_false": max(r[f"cal_false@{t}"] for r in rows)}
        if rows[0].get(f"cal_cmp@{t}") is not None:
            s["cal (asreview seeds)"] = sum(r[f"cal_cmp@{t}"] for r in rows) / total
        for name in ("buscar", *(f"consecutive-{n}" for n in HEURISTICS)):
            if f"{name}@{t}" in rows[0]:
                s[f"asreview + {name}"] = sum(r[f"{name}@{t}"] for r in rows) / total
                s[f"asreview + {name} worst_false"] = max(r[f"{name}_false@{t}"] for r in rows)
        if shots:
            kept = [r for r in rows if r["set"] in shots]
            read = sum(shots[r["set"]][f"one-shot@{t}"] for r in kept)
            rest = sum(shots[r["set"]]["N_rest"] for r in kept)
            s["one-shot (13 sets, seed sets not counted)"] = read / rest
            s["cal (same 13 sets)"] = sum(r[f"cal@{t}"] for r in kept) / sum(r["N"] for r in kept)
            s["one-shot worst_false"] = max(v[f"one-shot_false@{t}"] for v in shots.values())
        out[str(t)] = s
    return out


def markdown(rows: list[dict], summ: dict, seeds: int, asr_seeds: int) -> str:
    lines = []
    for t in TARGETS:
        s = summ[str(t)]
        lines += [f"### recall ≥ {t:g} at 95% — {seeds} CAL seeds, {asr_seeds} ASReview seed(s)", "",
                  "| approach | documents read (share of all) | worst set: P(certified, recall < target) |",
                  "|---|---|---|"]
        for k, v in s.items():
            if k.endswith("worst_false"):
                continue
            w = {"floor": "— (lower bound, any valid review)"}.get(k)
            if w is None:
                key = ("cal_worst_false" if k.startswith("cal") else
                       "one-shot worst_false" if k.startswith("one-shot") else f"{k} worst_false")
                w = f"{s[key]:.3f}" if key in s else ""
            lines.append(f"| {k} | {v:.1%} | {w} |")
        cols = ["floor", "cal"] + [c for c in ("buscar", "consecutive-50", "consecutive-100")
                                   if f"{c}@{t}" in rows[0]]
        lines += ["", "| set | N | R | " + " | ".join(cols) + " | cal false |",
                  "|---" * (len(cols) + 4) + "|"]
        for r in rows:
            cells = " | ".join(f"{r[f'{c}@{t}']:.0f}" for c in cols)
            lines.append(f"| {r['set']} | {r['N']} | {r['R']} | {cells} | {r[f'cal_false@{t}']:.3f} |")
        lines.append("")
    lines += ["### WSS@95 (each ranker's own reading order, mean over the ASReview seeds)", "",
              "| set | cal (screening only) | asreview |", "|---|---|---|"]
    for r in rows:
        a = f"{r['asreview_wss95']:.3f}" if "asreview_wss95" in r else ""
        lines.append(f"| {r['set']} | {r['cal_wss95']:.3f} | {a} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=200, help="CAL reviews per set and target")
    ap.add_argument("--asreview-seeds", type=int, default=1, help="of those, how many also run ASReview")
    ap.add_argument("--asreview-python", help="the Python of an environment with asreview 3 and buscarpy "
                    "(without it, no ASReview rows)")
    ap.add_argument("--one-shot", action="store_true",
                    help="also today's one-shot ranking with screen-then-audit")
    ap.add_argument("--only", action="append", help="a set's file stem (repeat; default all 14)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--combine", type=Path, nargs="+", help="no new runs: the tables of the sets in "
                    "these --json outputs (e.g. one run per set, in parallel)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    paths = screening_paths()
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    start = time.perf_counter()
    asr = args.asreview_seeds if args.asreview_python else 0
    work = [(p, args.seeds, min(asr, args.seeds), args.asreview_python) for p in paths]
    if args.combine:
        parts = [json.loads(f.read_text()) for f in args.combine]
        if len({(p["seeds"], p["asreview_seeds"]) for p in parts}) != 1:
            ap.error("--combine takes outputs run with the same --seeds and --asreview-seeds")
        rows = sorted((r for p in parts for r in p["sets"]), key=lambda r: r["set"])
        args.seeds, asr = parts[0]["seeds"], parts[0]["asreview_seeds"]
    elif args.jobs > 1:
        with Pool(args.jobs) as pool:
            rows = pool.map(set_row, work)
    else:
        rows = [set_row(w) for w in work]
    shots = one_shot(args.seeds) if args.one_shot else None
    summ = summary(rows, shots)
    text = markdown(rows, summ, args.seeds, asr)
    result = {"delta": DELTA, "seeds": args.seeds, "asreview_seeds": asr, "summary": summ, "sets": rows,
              "one_shot": shots, "seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps(result, indent=1) if args.json else text + f"\n({result['seconds']:.0f} s)")
    if args.markdown:
        args.markdown.write_text(text)


if __name__ == "__main__":
    main()
