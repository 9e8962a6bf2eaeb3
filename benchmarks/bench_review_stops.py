"""What the screening stop costs a screen-then-audit review, exactly, per cut (issue 6).

For every topic of a CLEF TAR 2017 run and every batch boundary ``k`` (multiples of 50) at which
:func:`rankcut.certify.screening.stop_depth` could stop, the exact expected number of documents read
when screening stops at ``k`` and the sequential audit of :mod:`rankcut.certify.sequential` runs
on the rest — ``k + E[audit labels]`` and ``P(false claim)`` from
:func:`~rankcut.certify.sequential.operating_characteristics` (the labels play the reviewer; a
failed certificate has read the whole pool, which is the full review) — for a few prior scales
of the audit (``ReviewRule.prior_scale``; every one keeps the guarantee). From these curves:

* **best cut in hindsight** — per topic the ``k`` (and prior) of least expected cost (not
  deployable: it reads the qrels); what a perfect stopping rule would reach with this audit;
* **lookahead rule, defaults** — :class:`~rankcut.certify.screening.ReviewRule()`: the margin test
  gates the stop, and a one-batch lookahead on projected costs decides it;
* **margin rule, defaults** — ``ReviewRule(lookahead=False)``: stop at the first boundary that
  passes the margin test (the grid below is of this rule: the lookahead's projected costs are
  too slow to sweep);
* **margin rule, best on the screening sets** — the grid point of least cost on the development
  data (the screening sets of ``bench_label_efficient.py --dev``), applied unchanged;
* **margin rule, leave-one-topic-out** — for each topic, the ``(margin, window, prior scale)`` of
  a small grid with the least summed cost over the *other* topics of the same run, applied to it
  (the issue's "parameters chosen on the other topics"; never the topic's own labels);
* **margin rule, chosen on the other run** — the constants best on run B applied to run A and
  back (on the screening sets: those best on run A);
* **knee method, then the audit** — the knee stopping rule of Cormack & Grossman (2016) with its
  published constants as the screening stop.

Curves are cached under ``--cache`` (``.bench-cache/review-stops``, one file per run, prior
scale and version of the certificate's code, so a changed certificate is never read from an old
curve; about 10 minutes each the first time on one thread, ``--jobs 2`` computes two at once; then
about 15 minutes from the cache, most of it the lookahead rule's projected costs):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_review_stops.py --jobs 2
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from bench_label_efficient import clef, screening_sets
from numpy.typing import NDArray

from rankcut.certify import interleaved, screening, sequential
from rankcut.certify.interleaved import InterleavedRule
from rankcut.certify.screening import ReviewRule, cost_floor, stop_depth
from rankcut.certify.sequential import SequentialAudit, operating_characteristics

MARGINS = (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
WINDOWS = (250, 500, 1000, 2000)
PRIORS = (0.125, 0.25, 0.5)
DEFAULT = ReviewRule()
Grid = tuple[float, int, float]   # margin, window, prior scale


def cost_curve(y: NDArray[np.int64], rule: ReviewRule = DEFAULT, basis: str = "misses") -> dict[str, NDArray]:
    """Exact expected cost and false-claim probability of stopping the screening at each ``k``.

    Only the boundaries where the rule may stop are computed (a relevant item found, and an audit
    that finds nothing cheaper than reading the rest); the others hold ``N`` (cost) and 0. The
    audit's prior mean is ``rule.prior_scale`` times its ``basis``
    (:meth:`~rankcut.certify.interleaved.InterleavedRule.prior_mean_at`): ``misses``, the misses the
    target allows (the sequential design's), or ``tail``, the relevant documents the first ``k``
    labels project for the rest (the interleaved review's ``--prior-basis tail``; an interleaved
    review that screens ``k`` and then only audits certifies as this audit does).
    """
    big = y.size
    seen = np.concatenate(([0], np.cumsum(y)))
    ks = np.arange(rule.batch, big, rule.batch)
    cost = np.full(ks.size, float(big))
    prior = InterleavedRule(rule.target, rule.delta, rule.prior_scale, prior_basis=basis)
    false = np.zeros(ks.size)
    for i, k in enumerate(ks.tolist()):
        found = int(seen[k])
        if found == 0:
            continue
        audit = SequentialAudit(pool=big - k, found=found, target=rule.target, delta=rule.delta,
                                prior_mean=prior.prior_mean_at(found, y[:k], big))
        if k + audit.zero_find_size(rule.check_every) >= big:
            continue
        oc = operating_characteristics(audit, int(seen[big] - found), rule.check_every)
        cost[i], false[i] = k + oc.expected_labels, oc.p_false_claim
    return {"k": ks, "cost": cost, "false": false}


def load(run: str) -> dict[str, NDArray[np.int64]]:
    """CLEF TAR 2017 run ``A`` or ``B``, or ``dev``: the screening sets (the development data)."""
    return screening_sets() if run == "dev" else clef(run)


def curve_path(cache: Path, run: str, prior: float, basis: str = "misses") -> Path:
    """Where :func:`curves` keeps the cost curves of ``run`` for the audit prior ``prior`` times
    ``basis``: the name holds a hash of the modules the curves come from, so curves of another
    certificate are not reused."""
    modules = (sequential, screening, interleaved)
    code = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in modules))
    name = "screening" if run == "dev" else f"clef-{run}"
    tail = "" if basis == "misses" else f"-{basis}"
    return cache / f"{name}-prior{prior:g}{tail}-{code.hexdigest()[:12]}.npz"


def curves(run: str, prior: float, cache: Path, fresh: bool, basis: str = "misses"
           ) -> dict[str, dict[str, NDArray]]:
    """The cost curves of every topic of ``run`` for the audit prior ``prior`` times ``basis`` (cached)."""
    topics = load(run)
    path = curve_path(cache, run, prior, basis)
    if path.exists() and not fresh:
        with np.load(path) as z:
            return {q: {f: z[f"{q}/{f}"] for f in ("k", "cost", "false")} for q in topics}
    out = {}
    start = time.perf_counter()
    rule = ReviewRule(prior_scale=prior)
    for n, (q, y) in enumerate(topics.items(), 1):
        out[q] = cost_curve(y, rule, basis)
        print(f"  run {run}, prior {prior:g} × {basis}: {n}/{len(topics)} topics "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    arrays: dict[str, Any] = {f"{q}/{f}": v for q, c in out.items() for f, v in c.items()}
    np.savez(tmp, **arrays)
    tmp.replace(path)
    return out


def at(curve: Mapping[str, NDArray], y: NDArray[np.int64], k: int) -> tuple[float, float]:
    """Expected cost and false-claim probability of stopping the screening at ``k``."""
    if k >= y.size:
        return float(y.size), 0.0
    i = int(np.flatnonzero(curve["k"] == k)[0])
    return float(curve["cost"][i]), float(curve["false"][i])


def knee_depth(y: NDArray[np.int64], rule: ReviewRule = DEFAULT, min_depth: int = 150) -> int:
    """The knee method (Cormack & Grossman 2016) as the screening stop, checked every batch.

    At depth ``s`` the knee ``i`` is the point of the gain curve farthest from the chord from the
    origin to ``(s, rel(s))``; stop when ``s ≥ 150`` and the slope ratio
    ``(rel(i)/i) / ((rel(s) − rel(i) + 1)/(s − i))`` reaches ``156 − min(rel(s), 150)`` — and, as
    for the rule, an audit that finds nothing is cheaper than reading the rest.
    """
    big = y.size
    cs = np.concatenate(([0], np.cumsum(y)))
    for s in range(rule.batch, big, rule.batch):
        rel = int(cs[s])
        if s < min_depth or rel == 0:
            continue
        i = np.arange(1, s + 1)
        j = int(i[np.argmax(np.abs(rel * i - s * cs[1:s + 1]))])
        ratio = (cs[j] / j) / ((rel - cs[j] + 1) / max(s - j, 1))
        if ratio >= 156 - min(rel, 150) \
                and s + rule.audit(big - s, rel).zero_find_size(rule.check_every) < big:
            return s
    return big


def rule_costs(topics: Mapping[str, NDArray[np.int64]], cv: Mapping[float, Mapping[str, dict]]
               ) -> dict[Grid, dict[str, tuple[float, float]]]:
    """Per grid point, per topic: (expected cost, P(false)) of the rule's stop with that audit prior."""
    out: dict[Grid, dict[str, tuple[float, float]]] = {}
    for m, w, p in itertools.product(MARGINS, WINDOWS, sorted(cv)):
        rule = ReviewRule(margin=m, window=w, prior_scale=p, lookahead=False)
        out[m, w, p] = {q: at(cv[p][q], y, stop_depth(y, rule)) for q, y in topics.items()}
    return out


def summarise(topics: Mapping[str, NDArray[np.int64]], cv: Mapping[float, Mapping[str, dict]],
              table: Mapping[Grid, Mapping[str, tuple[float, float]]], other: Grid, dev: Grid
              ) -> list[tuple[str, float, float, str]]:
    total = sum(y.size for y in topics.values())
    rows = []

    def add(name: str, per_topic: Mapping[str, tuple[float, float]], how: str) -> None:
        rows.append((name, sum(c for c, _ in per_topic.values()) / total,
                     max(f for _, f in per_topic.values()), how))

    add("floor (any valid procedure)",
        {q: (cost_floor(y.size, int(y.sum())), 0.0) for q, y in topics.items()}, "lower bound")
    for p in sorted(cv):
        best = {}
        for q, y in topics.items():
            i = int(np.argmin(cv[p][q]["cost"]))
            c = cv[p][q]["cost"]
            best[q] = (float(c[i]), float(cv[p][q]["false"][i])) if c[i] < y.size else (float(y.size), 0.0)
        add(f"best cut in hindsight, prior {p:g}", best, "not deployable (reads the qrels)")
    default = (DEFAULT.margin, DEFAULT.window, DEFAULT.prior_scale)
    add("lookahead rule, defaults", {q: at(cv[DEFAULT.prior_scale][q], y, stop_depth(y, DEFAULT))
                                     for q, y in topics.items()},
        "margin {:g}, window {}, prior {:g}, one-batch lookahead (ReviewRule())".format(*default))
    add("margin rule, defaults", table[default],
        "margin {:g}, window {}, prior {:g} (ReviewRule(lookahead=False))".format(*default))
    add("margin rule, best on the screening sets", table[dev],
        "margin {:g}, window {}, prior {:g} (development data)".format(*dev))
    loto, chosen = {}, []
    for q in topics:
        grid = min(table, key=lambda g: sum(c for t, (c, _) in table[g].items() if t != q))
        chosen.append(grid)
        loto[q] = table[grid][q]
    picks = ", ".join(f"{m:g}/{w}/{p:g}: {chosen.count((m, w, p))}" for m, w, p in sorted(set(chosen)))
    add("margin rule, leave-one-topic-out", loto,
        f"margin/window/prior per topic, from the other topics ({picks})")
    add("margin rule, chosen on the other run", table[other],
        "margin {:g}, window {}, prior {:g}".format(*other))
    add("knee method, then the audit", {q: at(cv[DEFAULT.prior_scale][q], y, knee_depth(y))
                                        for q, y in topics.items()},
        "Cormack & Grossman 2016, fixed constants; default prior")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache") / "review-stops")
    ap.add_argument("--fresh", action="store_true", help="recompute the cached cost curves")
    ap.add_argument("--jobs", type=int, default=1, help="cost curves computed at once (processes)")
    args = ap.parse_args()
    runs = ("dev", "A", "B")
    jobs = [(run, p) for run in runs for p in PRIORS]
    with ProcessPoolExecutor(args.jobs) as pool:
        found = pool.map(curves, [r for r, _ in jobs], [p for _, p in jobs], [args.cache] * len(jobs),
                         [args.fresh] * len(jobs))
        done = dict(zip(jobs, found, strict=True))
    data = {run: (load(run), {p: done[run, p] for p in PRIORS}) for run in runs}
    tables = {run: rule_costs(*data[run]) for run in data}
    best_grid = {run: min(t, key=lambda g: sum(c for c, _ in t[g].values())) for run, t in tables.items()}
    for run, other in (("dev", "A"), ("A", "B"), ("B", "A")):
        topics, cv = data[run]
        total = sum(y.size for y in topics.values())
        title = "Screening sets (development)" if run == "dev" else f"CLEF TAR 2017, Waterloo run {run}"
        print(f"\n### {title}: screen, then the sequential audit (exact expectations)\n")
        print("| stop rule | documents read (share of all) | worst topic: P(certified, recall < 0.8) "
              "| how chosen |")
        print("|---|---|---|---|")
        for name, share, worst, how in summarise(topics, cv, tables[run], best_grid[other],
                                                 best_grid["dev"]):
            print(f"| {name} | {share:.1%} | {worst:.4f} | {how} |")
        grid = tables[run]
        print("\nGrid, margin/window/prior (share of documents, exact): " + "; ".join(
            f"{m:g}/{w}/{p:g}: {sum(c for c, _ in grid[m, w, p].values()) / total:.1%}" for m, w, p in grid))


if __name__ == "__main__":
    main()
