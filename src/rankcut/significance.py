"""Paired significance tests of several methods against one baseline, over per-query scores.

AttnCut (Table 3) marks a method significantly better than BiCut with a Wilcoxon test at
p < 0.05. Here every method is compared with the baseline on the same queries by the Wilcoxon
signed-rank test or the paired t-test (``scipy.stats.wilcoxon`` / ``scipy.stats.ttest_rel``),
and the p-values of the methods are adjusted together by Holm's step-down procedure (Holm 1979,
"A simple sequentially rejective multiple test procedure"), which controls the family-wise
error rate across methods.

Conventions:

* differences are ``method − baseline``; ``direction`` is ``"better"`` when the test's location
  (mean difference for the t-test, ``W+ − W−`` for Wilcoxon) is positive, ``"worse"`` when
  negative, ``"equal"`` otherwise;
* Wilcoxon drops zero differences (``zero_method="wilcox"``, the classic test);
* all differences zero: neither test is defined; the result has statistic 0, p = 1 and a note;
* the t-test with constant non-zero differences keeps scipy's ``t = ±inf``, ``p = 0`` (a note
  says the variance is zero).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = ["ALTERNATIVES", "TESTS", "PairedTest", "holm", "paired_tests"]

ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class PairedTest:
    """One method against the baseline.

    :param method: name of the method; ``baseline`` the name it is compared with.
    :param test: ``"wilcoxon"`` or ``"ttest"``; ``alternative`` as in scipy (on method − baseline).
    :param n: number of paired queries; ``mean_difference`` mean of method − baseline.
    :param statistic: the test statistic (scipy's: W for Wilcoxon, t for the t-test).
    :param p_value: raw p-value; ``p_adjusted`` Holm-adjusted across the compared methods.
    :param alpha: the level; ``significant`` is ``p_adjusted <= alpha``.
    :param direction: ``"better"``, ``"worse"`` or ``"equal"`` (see module docstring).
    :param note: why a value was set by convention, else empty.
    """

    method: str
    baseline: str
    test: str
    alternative: str
    n: int
    mean_difference: float
    statistic: float
    p_value: float
    p_adjusted: float
    alpha: float
    significant: bool
    direction: str
    note: str = ""


# A raw test: differences (none all zero) and alternative -> (statistic, p, location, note).
RawTest = Callable[[NDArray[np.float64], str], tuple[float, float, float, str]]


def _wilcoxon(d: NDArray[np.float64], alternative: str) -> tuple[float, float, float, str]:
    res = stats.wilcoxon(d, zero_method="wilcox", alternative=alternative)
    nz = d[d != 0]
    ranks = stats.rankdata(np.abs(nz))
    location = float(ranks[nz > 0].sum() - ranks[nz < 0].sum())  # W+ − W−
    return float(res.statistic), float(res.pvalue), location, ""


def _ttest(d: NDArray[np.float64], alternative: str) -> tuple[float, float, float, str]:
    constant = bool(np.all(d == d[0]))
    with warnings.catch_warnings():
        if constant:  # scipy warns of precision loss and returns t = ±inf, the limit we want
            warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_1samp(d, 0.0, alternative=alternative)
    note = "differences have zero variance" if constant else ""
    return float(res.statistic), float(res.pvalue), float(d.mean()), note


TESTS: dict[str, RawTest] = {"wilcoxon": _wilcoxon, "ttest": _ttest}


def holm(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm step-down adjusted p-values, in the input order.

    With ``p_(1) ≤ … ≤ p_(m)``: ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``; rejecting
    ``p̃ ≤ α`` controls the family-wise error rate at ``α``.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}")
    if np.any(~((p >= 0) & (p <= 1))):
        raise ValueError(f"p_values must lie in [0, 1], got {p[~((p >= 0) & (p <= 1))][0]!r}")
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (len(p) - np.arange(len(p))) * p[order])
    out = np.empty_like(p)
    out[order] = np.maximum.accumulate(scaled)
    return out


def paired_tests(
    scores: Mapping[str, ArrayLike],
    baseline: str,
    *,
    test: str = "wilcoxon",
    alpha: float = 0.05,
    alternative: str = "two-sided",
) -> dict[str, PairedTest]:
    """Test every method of ``scores`` against ``baseline``, Holm-adjusted across methods.

    :param scores: per-query scores ``{name: array [n_queries]}``, the same queries in the same
        order for every name (e.g. :func:`rankcut.metrics.score_at` of each method's cuts);
        must include ``baseline`` and at least one other method.
    :param baseline: the name every other method is compared with.
    :param test: a key of :data:`TESTS` (``"wilcoxon"`` or ``"ttest"``).
    :param alpha: level of the Holm-adjusted tests, in (0, 1).
    :param alternative: ``"two-sided"``, ``"greater"`` (method better) or ``"less"``.
    :returns: ``{method: PairedTest}`` in the order of ``scores``, baseline left out.
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {tuple(TESTS)}, got {test!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    if baseline not in scores:
        raise ValueError(f"baseline {baseline!r} is not among the scores {tuple(scores)}")
    base = _scores(scores[baseline], baseline)
    if len(base) < 2:
        raise ValueError(f"need at least 2 paired queries, got {len(base)}")
    methods = [m for m in scores if m != baseline]
    if not methods:
        raise ValueError("scores hold no method besides the baseline")
    raw = []
    for m in methods:
        s = _scores(scores[m], m)
        if s.shape != base.shape:
            raise ValueError(f"scores of {m!r} have {len(s)} queries, baseline {baseline!r} has {len(base)}")
        d = s - base
        if np.all(d == 0):
            raw.append((d, 0.0, 1.0, 0.0, "all differences are zero: test undefined, p set to 1"))
        else:
            raw.append((d, *TESTS[test](d, alternative)))
    adjusted = holm([r[2] for r in raw])
    out = {}
    for m, (d, statistic, p, location, note), p_adj in zip(methods, raw, adjusted, strict=True):
        out[m] = PairedTest(
            method=m, baseline=baseline, test=test, alternative=alternative, n=len(d),
            mean_difference=float(d.mean()), statistic=statistic, p_value=p,
            p_adjusted=float(p_adj), alpha=float(alpha), significant=bool(p_adj <= alpha),
            direction="better" if location > 0 else "worse" if location < 0 else "equal", note=note,
        )
    return out


def _scores(values: ArrayLike, name: str) -> NDArray[np.float64]:
    s = np.asarray(values, dtype=float)
    if s.ndim != 1:
        raise ValueError(f"scores of {name!r} must be one-dimensional, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"scores of {name!r} contain NaN or infinite values")
    return s
