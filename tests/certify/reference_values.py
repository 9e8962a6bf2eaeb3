"""Reference values for the exact bounds, each with where it came from.

"paper §8" is the worked example of the audit paper (finite-sample-coverage-audits.txt, Section 8);
"R" is ``binom::binom.confint(x, n, conf.level = 0.95, methods = "exact")`` in R, values handed
over by the project lead (R is not installed here, so they are not recomputed by the tests); the
two-sided 95% interval puts α/2 = 0.025 on each side. ``ref_upper`` and ``ref_lower`` compute U_n
and L_n from scipy's beta quantile, not through rankcut's bounds, for the tests of the certificates
built on them.
"""

from __future__ import annotations

from scipy import stats


def ref_upper(k: int, n: int, a: float) -> float:
    """U_n(k, α) from the beta quantile, with Lemma 6's conventions."""
    return 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))


def ref_lower(k: int, n: int, a: float) -> float:
    """L_n(k, α) from the beta quantile, with Lemma 6's conventions."""
    return 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))


# U_n(k, α), one-sided Clopper–Pearson upper bound: (k, n, alpha, value, decimal places)
CP_UPPER = [
    # paper §8: "U_300(0, 0.025) = 1 − 0.025^{1/300} ≈ 0.01222"; 7 places from the closed form
    (0, 300, 0.025, 0.0122210, 7),  # 0.0122209747 to 7 places
    # paper §8 prefix example: "U_300(0, 0.05/3) ≈ 0.01356"; closed form 1 − (0.05/3)^{1/300}
    (0, 300, 0.05 / 3, 0.013555, 6),
]

# MU(k, α; N, n), hypergeometric upper inversion (Theorem 8): (k, alpha, N, n, value)
HYPERGEOM_UPPER = [
    # paper §8 table: n0 = 300 from N0 = 70,000 at δ0 = 0.025, K0 = 0, 1, 2
    (0, 0.025, 70_000, 300, 853),
    (1, 0.025, 70_000, 300, 1_287),
    (2, 0.025, 70_000, 300, 1_668),
]

# ML(k, α; N, n), hypergeometric lower inversion (Corollary 11): (k, alpha, N, n, value)
HYPERGEOM_LOWER = [
    # paper §8 two-pool recall: n1 = 500 from N1 = 30,000, K1 = 100, δ1 = 0.025
    (100, 0.025, 30_000, 500, 4_983),
]

# Two-sided 95% Clopper–Pearson intervals (each side at α/2 = 0.025), from R:
# (x, n, lower, upper, relative tolerance of the printed values)
CP_INTERVAL_95 = [
    # to 3e-12: rankcut moves each bound 1e-12 (relative) to the safe side of floating-point error
    (18, 20, 0.6830172859809176, 0.9876514728297052, 3e-12),
    (4, 200, 0.005475565879556443, 0.05041360908989634, 3e-12),
    (0, 30, 0.0, 0.11570331, 5e-8),  # R's value as handed over has 8 digits
]
