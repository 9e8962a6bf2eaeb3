"""The hypergeometric plan's analytic bracket: its ends are on the right sides of the answer, and
the sizes found from it are those of the bisection over the whole ``(c, N]`` that it replaced."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rankcut.certify.bounds import hypergeom_upper
from rankcut.certify.planning import _hypergeom_bracket, _hypergeom_sizes, plan_hypergeometric


def _old_sizes(t: np.ndarray, c: np.ndarray, alpha: float, big_n: np.ndarray) -> np.ndarray:
    """The search before the bracket: bisection on ``(c, N]`` (kept here as the reference)."""

    def mu(n: np.ndarray) -> np.ndarray:
        return np.atleast_1d(hypergeom_upper(c, alpha, population=big_n, draws=n))

    lo, hi = c.copy(), big_n.copy()
    while np.any(hi - lo > 1):
        active = hi - lo > 1
        mid = np.where(active, (lo + hi) // 2, hi)
        good = mu(mid) <= t
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid, lo)
    return hi


def _grid() -> list[tuple[int, int, int]]:
    cases = []
    for big_n in (1, 2, 3, 7, 20, 101, 1000, 70_000, 10**6):
        ts = sorted({0, 1, 2, 5, big_n // 3, big_n // 2, big_n - 1} & set(range(big_n)))
        for t, c in itertools.product(ts, (0, 1, 3, 10)):
            if c <= t:
                cases.append((big_n, t, c))
    return cases


@pytest.mark.parametrize("alpha", [0.001, 0.025, 0.05, 0.2, 0.5, 0.9])
def test_sizes_match_the_bisection_over_the_whole_pool(alpha: float) -> None:
    big_n, t, c = (np.array(col, dtype=np.int64) for col in zip(*_grid(), strict=True))
    np.testing.assert_array_equal(_hypergeom_sizes(t, c, alpha, big_n), _old_sizes(t, c, alpha, big_n))


@pytest.mark.parametrize("alpha", [0.001, 0.025, 0.5])
def test_the_bracket_holds_without_its_repair(alpha: float) -> None:
    """The proof's claim, checked with the bound itself: MU > t at ``lo``, MU ≤ t at ``hi``."""
    big_n, t, c = (np.array(col, dtype=np.int64) for col in zip(*_grid(), strict=True))
    lo, hi = _hypergeom_bracket(t, c, alpha, big_n)
    assert np.all((c <= lo) & (lo < hi) & (hi <= big_n))
    assert np.all(np.atleast_1d(hypergeom_upper(c, alpha, population=big_n, draws=lo)) > t)
    assert np.all(np.atleast_1d(hypergeom_upper(c, alpha, population=big_n, draws=hi)) <= t)


def test_the_bracket_is_narrow_for_a_large_pool() -> None:
    """Within a small factor of the answer (so the search never evaluates the tail near N/2)."""
    big_n, t, c = np.array([10**10]), np.array([1000]), np.array([0])
    lo, hi = _hypergeom_bracket(t, c, 0.025, big_n)
    n = int(plan_hypergeometric(1000, 0.025, population=10**10).value)
    assert lo[0] < n <= hi[0] and hi[0] < 3 * n and lo[0] > n / 5


def test_the_paper_example_is_unchanged() -> None:
    # §8: N0 = 70,000, δ = 0.025: 300 draws for MU ≤ 853 at c = 0 and for MU ≤ 1,287 at c = 1
    assert plan_hypergeometric([853, 1287], 0.025, population=70_000, tolerated=[0, 1]).value == (300, 300)
