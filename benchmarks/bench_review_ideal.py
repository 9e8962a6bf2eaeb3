"""How cheap could a valid review be on these rankings? Idealised costs of whole design families (issue 6).

The measured designs (``bench_label_efficient.py``, ``bench_review_stops.py``) pay for a stopping
rule, for the anytime validity of the audit and for relevant items the audit meets. This benchmark
removes all of that and asks what a design *family* would cost at its best, on the real labels:

* every document ``i`` is read with a probability ``π_i``; the rates may be chosen **in hindsight**
  (with the qrels) per band of ``width`` consecutive ranks;
* the recall claim is checked as if the audit found nothing: the lowest rate ``p`` must make ``a``
  hidden relevant items all unread with probability at most ``δ``, ``(1 − p)^a ≤ δ``, with
  ``a = m + 1`` and ``m`` the misses the claim allows (zero-find fixed size, no anytime overhead);
* the relevant items found are counted in expectation, ``F = Σ π_i y_i``, and the claim must be
  right: ``R − F ≤ m`` and ``m ≤ F(1 − ρ)/ρ``;
* rates fixed per band before reading (a hindsight allocation, not an adaptive one).

All but one favour the design, so each row is optimistic for its family (it is no bound: a
real design of the family pays more). The exception, the with-replacement rate ``(1 − p)^a``
where sampling without replacement needs a little less, is worth a few hundredths of a point
on run A (0.01 on the prefix row, measured with the exact hypergeometric zero-find size).
The model fixes the band rates in advance; for designs that adapt where they read to the labels
(interleaving), it is an argument, not a bound. Rows:

* **prefix, then a uniform sample** — rates raised to 1 from the top of the ranking (screen-then-
  audit with the best cut for each topic, a fixed-size audit that finds nothing);
* **bands of w ranks** — the ranking cut in bands of ``w``; the bands richest in relevant items
  (known from the qrels) read in full, the rest at ``p``: a stratified design with a perfect
  allocation, or an interleaved screening that knew where to look; ``w = 1`` knows every label;
* **floor** — :func:`rankcut.certify.screening.cost_floor`, a proven lower bound for *any* valid
  review, whatever its ranking.

With ``bench_review_stops.py``'s cache present it also takes run A's measured hindsight cuts apart
(exact cost; the same cuts if the audit found nothing). Run (seconds; reads ``../shared/datasets``)::

    .venv/bin/python benchmarks/bench_review_ideal.py
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from fractions import Fraction
from functools import partial
from pathlib import Path

import numpy as np
from bench_label_efficient import DELTA, TARGET, clef, screening_sets
from bench_review_stops import curve_path, curves
from numpy.typing import NDArray

from rankcut.certify.screening import cost_floor
from rankcut.certify.sequential import SequentialAudit, default_prior_mean

WIDTHS = (250, 100, 50, 10, 5, 3, 1)


def ideal_cost(y: NDArray[np.int64], width: int, by_rank: bool, target: float = TARGET,
               delta: float = DELTA) -> float:
    """The least ``Σ π_i`` of the idealised model above, rates constant on bands of ``width`` ranks.

    :param by_rank: raise the bands to rate 1 from the top of the ranking (a prefix); otherwise
        richest band first (hindsight). For a given allowance ``m`` this is a fractional knapsack:
        all at ``p``, then bands raised in that order until the expected found meets the claim.
    """
    big, rel = y.size, int(y.sum())
    starts = np.arange(0, big, width)
    size = np.diff(np.append(starts, big)).astype(float)
    hits = np.add.reduceat(y, starts).astype(float)
    order = np.arange(starts.size) if by_rank else np.argsort(-hits / size, kind="stable")
    size, hits = size[order], hits[order]
    odds = Fraction(str(target)) / (1 - Fraction(str(target)))   # ρ/(1 − ρ), exact: 4 at ρ = 0.8
    best = float(big)
    for m in range(rel + 1):
        if m * odds > rel:
            break                                     # the claim would need more found than exist
        p = 1 - delta ** (1 / (m + 1))
        need = max(float(m * odds), rel - m)
        short = need - p * rel                        # expected found still to gain above rate p
        if short <= 0:
            best = min(best, p * big)
            continue
        gain = np.cumsum((1 - p) * hits)
        i = int(np.searchsorted(gain, short - 1e-9))  # a sum of (1 − p)'s may round below R − pR
        if i >= gain.size:
            continue
        before = gain[i - 1] if i else 0.0
        raised = (size[:i].sum() + (short - before) / ((1 - p) * hits[i]) * size[i]) * (1 - p)
        best = min(best, p * big + raised)
    return best


def table(runs: Mapping[str, Mapping[str, NDArray[np.int64]]]) -> list[str]:
    """One markdown row per design family, one column per run: share of all documents read."""
    rows = [("floor (any valid review, proven)", lambda y: cost_floor(y.size, int(y.sum()), TARGET, DELTA)),
            ("prefix, then a uniform sample (best cut in hindsight)", lambda y: ideal_cost(y, 1, True))]
    rows += [(f"bands of {w} rank{'s' if w > 1 else ''}, richest read in full (hindsight)",
              partial(ideal_cost, width=w, by_rank=False)) for w in WIDTHS]
    out = ["| design family, idealised | " + " | ".join(runs) + " |",
           "|---|" + "---|" * len(runs)]
    for name, cost in rows:
        shares = [sum(cost(y) for y in topics.values()) / sum(y.size for y in topics.values())
                  for topics in runs.values()]
        out.append(f"| {name} | " + " | ".join(f"{100 * s:.1f}%" for s in shares) + " |")
    return out


def at_hindsight_cuts(topics: Mapping[str, NDArray[np.int64]], cache: Path) -> list[str]:
    """Run A's measured hindsight cuts (``bench_review_stops.py``'s cost curves, prior 1/8) taken
    apart: the exact cost, the same cuts with an audit that finds nothing (sequential, checked
    every 10 labels), and with Theorem 8's fixed zero-find size."""
    cv = curves("A", 0.125, cache, fresh=False)
    parts = np.zeros(3)
    for q, y in topics.items():
        i = int(np.argmin(cv[q]["cost"]))
        k = int(cv[q]["k"][i])
        found = int(y[:k].sum())
        audit = SequentialAudit(pool=y.size - k, found=found, target=TARGET, delta=DELTA,
                                prior_mean=default_prior_mean(found, TARGET, 0.125))
        fixed = math.ceil((y.size - k) * (1 - DELTA ** (1 / (audit.allowed_misses(0) + 1))))
        parts += (float(cv[q]["cost"][i]), k + audit.zero_find_size(10), k + fixed)
    share = 100 * parts / sum(y.size for y in topics.values())
    return [f"run A at the hindsight cuts (prior 1/8): exact {share[0]:.1f}%; if the audit found nothing "
            f"{share[1]:.1f}% (sequential), {share[2]:.1f}% (fixed size)"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", action="store_true", help="also print run A per topic")
    parser.add_argument("--cache", type=Path, default=Path(".bench-cache") / "review-stops",
                        help="bench_review_stops.py's cost-curve cache (run A, prior 1/8; used if present)")
    args = parser.parse_args()
    runs = {"run A": clef("A"), "run B": clef("B"), "screening sets": screening_sets()}
    print("\n".join(table(runs)))
    if curve_path(args.cache, "A", 0.125).exists():
        print("\n" + "\n".join(at_hindsight_cuts(runs["run A"], args.cache)))
    if args.topics:
        print("\n| topic | N | R | floor | prefix | bands of 50 | bands of 10 |")
        print("|---|---|---|---|---|---|---|")
        for q, y in runs["run A"].items():
            print(f"| {q} | {y.size} | {int(y.sum())} | {cost_floor(y.size, int(y.sum())):.0f} | "
                  f"{ideal_cost(y, 1, True):.0f} | {ideal_cost(y, 50, False):.0f} | "
                  f"{ideal_cost(y, 10, False):.0f} |")


if __name__ == "__main__":
    main()
