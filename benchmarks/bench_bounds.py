"""Speed of the exact hypergeometric inversions MU and ML (rankcut.certify.bounds).

Measures, in one run, and prints a markdown table:

1. one scalar MU / ML at a pool of N0 = 10^8 items, for several observed counts k (median time);
2. 10,000 vectorised MU and ML on random (k, N, n), next to the plain bisection the module used
   before (from m = k to m = N − n + k, about log2(N) exact tail evaluations per bound), with k
   uniform on 0..n and, closer to real audits, k drawn from a pool with 0.01%–10% relevant items;
3. a naive linear scan of m (m = k, k + 1, ... until the tail condition fails) against the
   same search, on inputs drawn the same way but with a small pool where a linear scan is feasible.

Every method's output is compared with the others before its time is reported.

    .venv/bin/python benchmarks/bench_bounds.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from rankcut.certify.bounds import _guess_upper, hypergeom_lower, hypergeom_upper


def median_seconds(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def random_inputs(size: int, max_population: int, max_draws: int, seed: int, audit: bool = False
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """N uniform on 1..max_population, n uniform on 0..min(N, max_draws); k uniform on 0..n, or
    (``audit``) the count of a real sample from a pool whose share of relevant items is
    log-uniform on [10^-4, 10^-1]."""
    rng = np.random.default_rng(seed)
    big_n = rng.integers(1, max_population + 1, size)
    n = rng.integers(0, np.minimum(big_n, max_draws) + 1)
    if audit:
        relevant = np.round(big_n * 10 ** rng.uniform(-4, -1, size)).astype(np.int64)
        k = rng.hypergeometric(relevant, big_n - relevant, n)
    else:
        k = rng.integers(0, n + 1)
    return k, big_n, n


def _ok(m, k, alpha, big_n, n):
    return stats.hypergeom.cdf(k, big_n, m, n) >= alpha * (1 - 1e-12)


def bisection_upper(k, alpha, big_n, n):
    """The previous method: bisection on m over the whole support [k, N − n + k]."""
    lo, hi = k.copy(), big_n - n + k
    hi_ok = _ok(hi, k, alpha, big_n, n)
    lo = np.where(hi_ok, hi, lo)
    hi = np.where(hi_ok, hi, hi - 1)
    while np.any(lo < hi):
        a = np.flatnonzero(lo < hi)
        mid = lo[a] + (hi[a] - lo[a] + 1) // 2
        ok = _ok(mid, k[a], alpha, big_n[a], n[a])
        lo[a] = np.where(ok, mid, lo[a])
        hi[a] = np.where(ok, hi[a], mid - 1)
    return lo


def linear_scan_upper(k, alpha, big_n, n):
    """Naive: step m up from k while the tail condition still holds at m + 1."""
    m = k.copy()
    active = m < big_n - n + k
    while np.any(active):
        a = np.flatnonzero(active)
        ok = _ok(m[a] + 1, k[a], alpha, big_n[a], n[a])
        m[a] += ok
        active[a] = ok & (m[a] < big_n[a] - n[a] + k[a])
    return m


def vectorised_rows(k, big_n, n, alpha_value: float, repeats: int, what: str) -> list[tuple[str, str, str]]:
    alpha = np.full(k.size, alpha_value)
    t_u, mu = median_seconds(lambda: hypergeom_upper(k, alpha, population=big_n, draws=n), repeats)
    t_l, ml = median_seconds(lambda: hypergeom_lower(k, alpha, population=big_n, draws=n), repeats)
    t_b, mu_b = median_seconds(lambda: bisection_upper(k, alpha_value, big_n, n), max(1, repeats // 2))
    assert np.array_equal(mu, mu_b), "search and bisection disagree"
    assert np.array_equal(ml, big_n - hypergeom_upper(n - k, alpha, population=big_n, draws=n))
    inner = (k < n) & (n < big_n)
    off = np.abs(np.round(_guess_upper(k[inner], alpha[inner], big_n[inner], n[inner])) - mu[inner])
    return [
        (f"MU, {what}", f"{t_u:.3f} s",
         f"plain bisection {t_b:.3f} s ({t_b / t_u:.1f}× slower); starting guess exact "
         f"{np.mean(off == 0):.1%}, off by 1 {np.mean(off == 1):.1%}, by more {np.mean(off > 1):.1%}"),
        ("ML, same inputs", f"{t_l:.3f} s", ""),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000, help="number of random bounds (default 10000)")
    ap.add_argument("--alpha", type=float, default=0.05, help="error level of each bound (default 0.05)")
    ap.add_argument("--max-population", type=int, default=10**6, help="largest random N (default 10^6)")
    ap.add_argument("--max-draws", type=int, default=5000, help="largest random n (default 5000)")
    ap.add_argument("--scan-population", type=int, default=300,
                    help="largest N for the linear-scan comparison (default 300)")
    ap.add_argument("--repeats", type=int, default=5, help="repeats of the vectorised runs (median)")
    ap.add_argument("--scalar-repeats", type=int, default=51, help="repeats of the scalar runs (median)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rows: list[tuple[str, str, str]] = []

    # 1. scalar bounds on a pool of 10^8 items
    big = 10**8
    for k, n in [(0, 300), (2, 300), (100, 500), (1000, 5000)]:
        t_u, mu = median_seconds(partial(hypergeom_upper, k, 0.025, population=big, draws=n),
                                 args.scalar_repeats)
        t_l, ml = median_seconds(partial(hypergeom_lower, k, 0.025, population=big, draws=n),
                                 args.scalar_repeats)
        rows.append((f"MU / ML, N0 = 10^8, n = {n}, k = {k}, α = 0.025",
                     f"{t_u * 1e3:.2f} ms / {t_l * 1e3:.2f} ms", f"MU = {mu}, ML = {ml}"))

    # 2. vectorised bounds on random inputs, and the plain bisection they replace
    for audit, label in [(False, "k uniform"), (True, "k from a 0.01%-10% relevant pool")]:
        inputs = random_inputs(args.size, args.max_population, args.max_draws, args.seed, audit)
        what = (f"{args.size:,} random (k, N, n), {label}: N ≤ {args.max_population:,}, "
                f"n ≤ {args.max_draws}, α = {args.alpha}")
        rows += vectorised_rows(*inputs, args.alpha, args.repeats, what)

    # 3. naive linear scan on a small pool, same generator (k uniform)
    ks, big_ns, ns = random_inputs(args.size, args.scan_population, args.max_draws, args.seed + 1)
    t_s, mu = median_seconds(partial(hypergeom_upper, ks, args.alpha, population=big_ns, draws=ns),
                             args.repeats)
    t_n, mu_n = median_seconds(partial(linear_scan_upper, ks, args.alpha, big_ns, ns), 1)
    assert np.array_equal(mu, mu_n), "search and linear scan disagree"
    rows.append((f"MU, {args.size:,} random (k, N, n), k uniform: N ≤ {args.scan_population}",
                 f"{t_s:.3f} s",
                 f"linear scan {t_n:.3f} s ({t_n / t_s:.0f}× slower)"))

    print("| measurement | median time | notes |")
    print("| --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
