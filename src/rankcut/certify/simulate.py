"""Simulators: a review played against known labels, for the benchmarks and the tests.

The labels play the reviewer; each seed draws the audit order with
``numpy.random.default_rng(seed)``. :func:`simulate_screen_then_audit` runs the screen-then-audit
rule of :mod:`rankcut.certify.screening` (the CAL review of :mod:`rankcut.review` has its own,
:func:`rankcut.review.simulate.simulate_review`); :func:`play` and :func:`simulate_interleaved`
run a policy and a screener of :mod:`rankcut.certify.policies` on the interleaved review of
:mod:`rankcut.certify.interleaved`.
Measurement only: no certificate depends on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankcut.certify.interleaved import AUDIT, SCREEN, InterleavedRule, audit_order_draw
from rankcut.certify.policies import Policy, RankingScreener, ReviewState, Screener
from rankcut.certify.screening import ReviewRule, _labels, plan_review
from rankcut.certify.sequential import allowed_misses

__all__ = ["InterleavedRun", "InterleavedRuns", "ReviewRuns", "play", "simulate_interleaved",
           "simulate_screen_then_audit"]


@dataclass(frozen=True)
class ReviewRuns:
    """Outcomes of repeated reviews of one ranking, one entry per seed."""

    depth: int
    found: int
    audit_labels: NDArray[np.int64]   # audit labels read before the stop
    hits: NDArray[np.int64]           # relevant among them
    certified: NDArray[np.bool_]      # certified before the pool was exhausted
    recall: NDArray[np.float64]       # the review's true recall (cut + audit finds)
    cost: NDArray[np.int64]           # documents read: depth + audit labels
    missed: int                       # relevant items below the cut
    target: float

    @property
    def false_claims(self) -> NDArray[np.bool_]:
        """Runs that certified recall ≥ ρ although the truth is below it (exact integer test)."""
        return self.certified & (self.missed > allowed_misses(self.found, self.hits, self.target))


def simulate_screen_then_audit(labels: ArrayLike, rule: ReviewRule | None = None,
                               seeds: ArrayLike = range(200)) -> ReviewRuns:
    """Run the review on a labelled ranking once per seed (the labels play the reviewer).

    The screening part is deterministic; each seed draws the audit order with
    ``numpy.random.default_rng(seed)``. ``rule`` defaults to ``ReviewRule()``.
    """
    y = _labels(labels)
    rule = ReviewRule() if rule is None else rule
    plan = plan_review(y, rule)
    pool = y[plan.depth:]
    relevant = int(y.sum())
    checks = plan.checks
    stopsets = plan.audit.certified_counts(checks, x_max=int(pool.sum())) if pool.size else []
    lookup = [set(s.tolist()) for s in stopsets]
    rows = []
    for seed in np.asarray(seeds, dtype=np.int64).ravel():
        if not pool.size:       # screened to the end: the review is complete
            rows.append((0, 0, False))
            continue
        order = np.random.default_rng(int(seed)).permutation(pool.size)
        hits_at = np.cumsum(pool[order])[checks - 1]
        stop = next((i for i, (x, ok) in enumerate(zip(hits_at, lookup, strict=True)) if int(x) in ok),
                    len(checks) - 1)
        rows.append((int(checks[stop]), int(hits_at[stop]), int(checks[stop]) < pool.size))
    t_arr = np.array([r[0] for r in rows], dtype=np.int64)
    x_arr = np.array([r[1] for r in rows], dtype=np.int64)
    cert = np.array([r[2] for r in rows], dtype=bool)
    recall = (plan.found + x_arr) / relevant if relevant else np.ones(t_arr.size)
    return ReviewRuns(plan.depth, plan.found, t_arr, x_arr, cert, recall, plan.depth + t_arr,
                      int(pool.sum()), rule.target)


@dataclass(frozen=True)
class InterleavedRun:
    """One interleaved review played to its end against known labels."""

    read: int               # documents read when it stopped (all of them if never certified)
    screened: int
    certified: bool         # certified before everything was read
    found: int
    relevant: int
    false_claim: bool       # certified while the recall was below the target
    moves: str              # one character a step: s screened, a audited
    labels: str             # the label read at each step, 0 or 1


def play(labels: ArrayLike, order: ArrayLike, policy: Policy, rule: InterleavedRule | None = None,
         screener: Screener | None = None) -> InterleavedRun:
    """Play ``policy`` on the 0/1 ``labels`` of documents ``0 … N − 1`` with the frozen audit
    ``order`` (a permutation of them), stopping at the first certified step.

    ``screener`` picks the document of each screening move (default :class:`RankingScreener`:
    the labels are a ranking's, read top down). It sees the state, never ``order``.
    """
    y = _labels(labels)
    perm = np.asarray(order, dtype=np.int64)
    if perm.shape != y.shape or not np.array_equal(np.sort(perm), np.arange(y.size)):
        raise ValueError(f"order must be a permutation of the {y.size} ranks")
    rule = rule or InterleavedRule()
    screener = RankingScreener() if screener is None else screener
    state = ReviewState(y.size, rule)
    read = np.zeros(y.size, dtype=bool)
    pointer = 0
    rev = state.review
    while rev.unread and not rev.certified:
        move = policy(state)
        if move == SCREEN:
            doc = screener.next_screen(state)
            if not 0 <= doc < y.size or read[doc]:
                raise ValueError(f"a screener returns an unread document of 0 … {y.size - 1}, got {doc!r}")
        elif move == AUDIT:
            doc, pointer = audit_order_draw(perm, pointer, read)
        else:
            raise ValueError(f"a policy returns {SCREEN!r} or {AUDIT!r}, got {move!r}")
        read[doc] = True
        state.record(move, doc, int(y[doc]))
    relevant = int(y.sum())
    cert = rev.certified and rev.unread > 0
    return InterleavedRun(rev.read, state.screened, cert, rev.found, relevant,
                          bool(rev.certified and relevant > rule.allowed_total(rev.found)),
                          "".join(rev.moves), "".join(map(str, rev.labels)))


@dataclass(frozen=True)
class InterleavedRuns:
    """Outcomes of :func:`play` over seeds (one frozen audit order each)."""

    read: NDArray[np.int64]
    screened: NDArray[np.int64]
    certified: NDArray[np.bool_]
    false_claims: NDArray[np.bool_]


def simulate_interleaved(labels: ArrayLike, policy: Policy, rule: InterleavedRule | None = None,
                         seeds: Sequence[int] | range = range(200), screener: Screener | None = None
                         ) -> InterleavedRuns:
    """:func:`play` once per seed, the audit order drawn by ``numpy.random.default_rng(seed)``.

    The same ``screener`` serves every seed; one that learns must start afresh on a new
    :class:`ReviewState` (:class:`rankcut.review.cal.CALScreener` does).
    """
    y = _labels(labels)
    runs = [play(y, np.random.default_rng(int(s)).permutation(y.size), policy, rule, screener)
            for s in seeds]
    return InterleavedRuns(np.array([r.read for r in runs], dtype=np.int64),
                           np.array([r.screened for r in runs], dtype=np.int64),
                           np.array([r.certified for r in runs], dtype=bool),
                           np.array([r.false_claim for r in runs], dtype=bool))


