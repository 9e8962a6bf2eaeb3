"""Anytime-valid sequential excluded-pool audit for a recall target (audit paper §9, "sequential audits").

The fixed-size audit of Theorem 8 must choose ``n0`` before the labels are opened; too small and
the certificate fails, too large and labels are wasted. Here the excluded pool of ``N0`` items is
audited *in a uniformly random order*, one label at a time, and the reviewer may stop whenever the
certificate holds — or go on to the end of the pool, which is the full review.

**The confidence sequence.** After ``t`` audit labels with ``x`` relevant, the probability of the
observed sequence when the pool holds ``M`` relevant items is proportional to the hypergeometric
pmf ``h(x; t, M, N0)`` (the number of orderings cancels). For a prior ``π`` on ``M``, the
*one-sided* mixture likelihood ratio

    L_t(M') = Σ_{M < M'} π(M) h(x_t; t, M, N0) / (π(< M') h(x_t; t, M', N0))

(``L_t(0) = 1``) is, for each ``M'``, a nonnegative martingale with mean 1 under ``M = M'``: it is
the prior–posterior ratio of Waudby-Smith & Ramdas 2020 ("Confidence sequences for sampling
without replacement", §3) with the prior conditioned on ``M < M'``, a different mixture for each
hypothesis, which the argument allows since it uses only the martingale at the true count. By
Ville's inequality ``P_{M'}(∃ t: L_t(M') ≥ 1/δ) ≤ δ``. Hence ``C_t = {M' : L_t(M') < 1/δ}`` holds
the true ``M`` *at every t simultaneously* with probability at least ``1 − δ``, whatever the
stopping rule. Only an upper bound on ``M`` is claimed, so only counts below ``M'`` are used as
evidence against it: prior mass above ``M'`` would be spent for nothing (the two-sided mixture over
the whole prior certifies later; ``docs/interleaved.md``, "One-sided mixture"). The prior is
geometric with a pre-registered mean (label-free) and is cut where its tail falls below ``1e-12``
at ``M_hi``. Above ``M_hi`` the ratio's numerator is the whole mixture and ``h`` is log-concave in
``M'``, so the kept counts there are an interval found by bisection; at or below ``M_hi`` every
count is checked (``C_t`` need not be an interval there). Its right end is
:meth:`SequentialAudit.missed_upper`; it always holds the maximum-likelihood count, where the
ratio is at most 1.

**The recall claim.** The cut was reviewed in full and holds ``F`` relevant items; relevant items
found by the audit are part of the review's result too. After ``(t, x)`` the review has found
``F + x`` of ``F + M`` relevant, and ``Recall ≥ ρ`` holds iff ``M ≤ m(x)``, the largest integer
with ``(F + x)/(F + m) ≥ ρ``. The certificate "the review's recall is at least ρ" is issued at the
first check where ``max C_t ≤ m(x_t)``; it is false only if the true ``M`` left ``C_t``, so the
claim is wrong with probability at most ``δ`` (checked exactly by :func:`operating_characteristics`
in ``tests/certify/test_sequential.py``, and by simulation on real rankings in
``tests/certify/test_review.py``). When the whole
pool has been labelled, ``C_t = {M}`` and the claim is exact.

**Once met, always met.** Because the sequence covers ``M`` at every ``t`` at once, so does its
running intersection: ``M ≤ min_{s ≤ t} max C_s`` on the same event of probability ``1 − δ``.
:meth:`SequentialAudit.running_upper` is that bound along an audit's labels; it never rises, and
``m(x)`` never falls, so a review once certified stays certified however many labels follow (a
relevant item found later cannot withdraw it). The certificate takes the prefix where the running
bound was reached (``best_prefix``); ``operating_characteristics(..., running=True)`` gives the
exact law of this rule, which stops no later than the plain one.

The cost is measured, not planned: :func:`operating_characteristics` gives the exact law of the
stopping time for a given true ``M`` by dynamic programming over ``(t, x)``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from rankcut.certify._validate import check_count, check_delta, check_fraction, check_positive
from rankcut.certify.result import (
    Certificate,
    certificate_function,
    confidence_text,
    found_share,
    theorem_of,
    unread_clause,
)

__all__ = ["PRIOR_SCALE", "RunningState", "SequentialAudit", "allowed_misses", "audit_checks",
           "default_prior_mean", "ml_count", "operating_characteristics", "sequential_recall_certificate",
           "stopping_laws"]

#: the geometric prior is cut where its tail mass falls below this (conservative, see above)
PRIOR_TAIL = 1e-12
#: a progress hook, ``(done, total)``: certify draws no bar itself (it does no I/O)
Progress = Callable[[int, int], None]


@lru_cache(maxsize=4)
def _log_factorials(n: int) -> NDArray[np.float64]:
    """``log i!`` for ``i = 0 … n``, the very values ``gammaln(i + 1.0)`` gives: a certify over a
    pool of 96,765 labels spent most of its CPU in gammaln (cProfile), a table lookup takes a fraction."""
    table = gammaln(np.arange(n + 1, dtype=float) + 1.0)
    table.flags.writeable = False
    return table


def _log_h(x: NDArray[Any], t: NDArray[Any], m: NDArray[Any], pool: int) -> NDArray[np.float64]:
    """``log h(x; t, m, N0)`` for consistent arguments (``x ≤ m``, ``t − x ≤ N0 − m``)."""
    lf = _log_factorials(int(pool))
    x, t, m = (np.asarray(v, dtype=np.int64) for v in (x, t, m))

    def log_choose(n: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.float64]:
        return np.asarray(lf[n] - lf[k] - lf[n - k], dtype=float)

    return log_choose(m, x) + log_choose(pool - m, t - x) - log_choose(np.asarray(pool), t)


def ml_count(hits: ArrayLike, labelled: ArrayLike, pool: int) -> NDArray[np.int64]:
    """The maximum-likelihood pool count ``argmax_M h(x; t, M, N0) = ⌊x(N0 + 1)/t⌋`` (clipped).

    ``h(x; t, M + 1)/h(x; t, M) ≥ 1`` exactly when ``M ≤ x(N0 + 1)/t − 1``; the result is clipped
    to the counts the sample allows, ``[x, N0 − t + x]``, and is ``x`` when ``t = 0``.
    """
    x, t = np.broadcast_arrays(np.asarray(hits, dtype=np.int64), np.asarray(labelled, dtype=np.int64))
    return np.clip((x * (pool + 1)) // np.maximum(t, 1), x, pool - t + x)


def allowed_misses(found: int, hits: ArrayLike, target: float) -> Any:
    """``m(x)``: the most relevant items a pool may hold with ``(F + x)/(F + m) ≥ ρ``.

    ``⌊(F + x)/ρ⌋ − F`` in exact integer arithmetic (``ρ`` read as the decimal it is written
    as), for a count or an array of counts ``x``. A review that found ``F + x`` of ``R``
    relevant items has recall below ``ρ`` exactly when ``R − F > m(x)``.
    """
    rho = Fraction(str(target))
    return ((found + np.asarray(hits, dtype=np.int64)) * rho.denominator) // rho.numerator - found


def audit_checks(pool: int, every: int) -> NDArray[np.int64]:
    """Audit sizes at which the certificate is checked: every ``every`` labels and the pool's end."""
    check_count(every, "check_every", minimum=1)
    steps = np.arange(every, pool + 1, every, dtype=np.int64)
    return steps if steps.size and steps[-1] == pool else np.append(steps, np.int64(pool))


@dataclass(frozen=True, kw_only=True)
class SequentialAudit:
    """The frozen rule of one sequential audit (fix it before the first audit label is opened).

    :param pool: ``N0``, the excluded pool's size.
    :param found: ``F``, relevant items in the reviewed cut.
    :param target: the recall target ``ρ`` in (0, 1].
    :param delta: error probability ``δ``.
    :param prior_mean: mean of the geometric prior on ``M`` (any positive number keeps the
        guarantee; it only moves the cost). :func:`default_prior_mean` is the pre-registered choice.
    """

    pool: int
    found: int
    target: float = 0.8
    delta: float = 0.05
    prior_mean: float = 1.0

    def __post_init__(self) -> None:
        check_count(self.pool, "pool")
        check_count(self.found, "found")
        check_fraction(self.target, "target", open_left=True)
        check_delta(self.delta)
        check_positive(self.prior_mean, "prior_mean")

    @property
    def _rho(self) -> float:
        return self.prior_mean / (1.0 + self.prior_mean)

    def _prior(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Support ``0..M_hi`` and log-weights of the (cut) geometric prior."""
        rho = self._rho
        m_hi = min(self.pool, math.ceil(math.log(PRIOR_TAIL) / math.log(rho)))
        m = np.arange(m_hi + 1, dtype=np.int64)
        return m, np.asarray(math.log1p(-rho) + m * math.log(rho), dtype=np.float64)

    def allowed_misses(self, x: int) -> int:
        """``m(x)``: the largest missed count for which the review's recall is still ``≥ ρ``."""
        return int(allowed_misses(self.found, x, self.target))

    def _scan_prior(self, prior: tuple[NDArray[np.int64], NDArray[np.float64]], t: NDArray[np.int64],
                    x: NDArray[np.int64], on_progress: Progress | None
                    ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """For pairs ``(t, x)`` (``t ≥ 1``): ``log Σ_M π(M) h(x; t, M)/π(all)``, the numerator of
        every ratio above ``M_hi``, and the largest kept count ``M' ≤ M_hi`` (``-1`` if none), under
        ``prior`` (:meth:`_prior`)."""
        m, log_pi = prior
        log_below = np.logaddexp.accumulate(log_pi)             # log π(≤ j)
        full = np.empty(t.shape, dtype=float)
        low = np.empty(t.shape, dtype=np.int64)
        for lo in range(0, t.size, 512):  # chunks keep the (pairs × support) table small
            tt, xx = t[lo:lo + 512, None], x[lo:lo + 512, None]
            ok = (m[None, :] >= xx) & (self.pool - m[None, :] >= tt - xx)
            log_h = np.where(ok, _log_h(xx, tt, np.where(ok, m[None, :], xx), self.pool), -np.inf)
            mixed = np.logaddexp.accumulate(log_h + log_pi[None, :], axis=1)   # log Σ_{M ≤ j} π h
            full[lo:lo + 512] = mixed[:, -1] - log_below[-1]
            # M' = j ≥ 1 is kept when log h(M') > log Σ_{M < M'} π h − log π(< M') + log δ
            kept = ok & np.concatenate((np.ones((tt.shape[0], 1), dtype=bool), log_h[:, 1:] > (
                mixed[:, :-1] - log_below[None, :-1] + math.log(self.delta))), axis=1)
            low[lo:lo + 512] = np.where(kept.any(axis=1), m.size - 1 - np.argmax(kept[:, ::-1], axis=1), -1)
            if on_progress is not None:
                on_progress(min(lo + 512, t.size), t.size)
        return full, low

    def missed_upper(self, t: ArrayLike, x: ArrayLike, *, on_progress: Progress | None = None
                     ) -> NDArray[np.int64]:
        """``max C_t``: the confidence sequence's upper end for ``M`` after ``t`` labels, ``x`` relevant.

        ``C_t`` is the set of counts ``M'`` consistent with the sample whose one-sided mixture
        likelihood ratio is below ``1/δ`` (module docstring): every count up to the prior's
        support ``M_hi`` is checked, and above it the right end is found by bisection from
        ``max(⌊x(N0 + 1)/t⌋, M_hi + 1)``. ``on_progress(done, total)``, if given, is called after
        each chunk of pairs (a hook for a progress bar: over a whole pool this is the slow part of
        a certify).
        """
        t_arr, x_arr = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(x, dtype=np.int64))
        if np.any(t_arr < 0) or np.any(t_arr > self.pool) or np.any(x_arr < 0) or np.any(x_arr > t_arr):
            raise ValueError(f"need 0 ≤ x ≤ t ≤ N0 = {self.pool}")
        shape = t_arr.shape
        t_arr, x_arr = t_arr.ravel(), x_arr.ravel()
        prior = self._prior()
        full, low = self._scan_prior(prior, t_arr, x_arr, on_progress)
        hi_ok = self.pool - t_arr + x_arr                      # the most relevant items consistent
        start = np.maximum(ml_count(x_arr, t_arr, self.pool), prior[0].size)   # M_hi + 1
        threshold = full + math.log(self.delta)                 # above M_hi: reject when log h ≤ this

        def kept(m: NDArray[np.int64]) -> NDArray[np.bool_]:
            return _log_h(x_arr, t_arr, np.minimum(m, hi_ok), self.pool) > threshold

        high = (start <= hi_ok) & kept(start)                  # some count above M_hi is kept
        todo = high & ~kept(hi_ok)                             # ... and the right end is below the last
        lo, hi = start.copy(), hi_ok.copy()                    # invariant: kept(lo), not kept(hi)
        while np.any(todo & (hi - lo > 1)):
            mid = (lo + hi) // 2
            k = kept(mid)
            lo = np.where(todo & k, mid, lo)
            hi = np.where(todo & ~k, mid, hi)
        upper = np.where(high, np.where(todo, lo, hi_ok), low)
        return np.where(t_arr == 0, self.pool, upper).astype(np.int64).reshape(shape)

    def running_upper(self, labels: ArrayLike, *, on_progress: Progress | None = None
                      ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The running intersection ``min_{s ≤ t} max C_s`` after each prefix of an audit's labels.

        :param labels: the audit's 0/1 labels in the frozen audit order (the labelled prefix).
        :param on_progress: as for :meth:`missed_upper`, over the ``len(labels) + 1`` prefixes.
        :returns: for ``t = 0 … len(labels)``, the bound (at least ``x_t``, the count already seen)
            and the prefix ``s ≤ t`` where it was reached (the latest such ``s``).
        """
        return self.running_state(labels, on_progress=on_progress).running()

    def running_state(self, labels: ArrayLike, previous: RunningState | None = None, *,
                      on_progress: Progress | None = None) -> RunningState:
        """``max C_s`` at every prefix ``s`` of an audit's labels, reusing ``previous`` where it agrees.

        ``max C_s`` depends on the prefix ``s`` alone (its size and its count ``x_s``), so the values
        ``previous`` holds for the prefixes its labels share with ``labels`` are kept and only the
        later prefixes are evaluated: one more audit label costs one :meth:`missed_upper`, not
        ``t + 1``. The result is the one a fresh call gives, value for value (§9: the running
        intersection is then a running minimum, :meth:`RunningState.running`).

        :param labels: as for :meth:`running_upper`.
        :param previous: a state this audit (the same rule) returned before, for any labels — an
            earlier prefix, or labels since taken back or changed: it is used up to where they differ.
        :param on_progress: as for :meth:`missed_upper`, over the prefixes evaluated.
        """
        y = np.asarray(labels, dtype=np.int64)
        if y.ndim != 1 or y.size > self.pool or np.any((y != 0) & (y != 1)):
            raise ValueError(f"labels must be a 0/1 sequence of at most N0 = {self.pool} audit labels")
        kept = 0   # prefixes 0 … kept - 1 are taken from previous
        if previous is not None:
            shared = min(previous.labels.size, y.size)
            differ = np.flatnonzero(previous.labels[:shared] != y[:shared])
            kept = (int(differ[0]) if differ.size else shared) + 1
        t = np.arange(kept, y.size + 1, dtype=np.int64)
        x = np.concatenate(([0], np.cumsum(y)))[kept:]
        fresh = self.missed_upper(t, x, on_progress=on_progress)
        upper = fresh if previous is None else np.concatenate((previous.upper[:kept], fresh))
        y.flags.writeable = upper.flags.writeable = False
        return RunningState(y, upper)

    def certified(self, t: int, x: int) -> bool:
        """Whether ``(t, x)`` certifies the review's recall ``≥ ρ`` (``max C_t ≤ m(x)``)."""
        return bool(self.certifies(t, x))

    def certifies(self, t: ArrayLike, x: ArrayLike) -> NDArray[np.bool_]:
        """Whether each pair ``(t, x)`` certifies (``max C_t ≤ m(x)``): :meth:`missed_upper`'s
        verdict, evaluated in full only where two bounds leave it open.

        Let ``a = m(x)``, ``L = ⌊x(N0 + 1)/t⌋`` the maximum-likelihood count (:func:`ml_count`) and
        ``K = N0 − t + x`` the most relevant items the sample allows. Then:

        - ``L > a``: no, since ``L ∈ C_t`` (its ratio is at most 1);
        - ``a ≥ K``: yes, since ``C_t ⊆ [x, K]``;
        - otherwise ``h`` is non-increasing in ``M' ≥ L`` (log-concave with mode ``L``), so over the
          counts that matter, ``M' > a``, it is largest at ``a + 1``. ``M'`` is kept when
          ``h(M') > δ·A(M')`` with ``A(M')`` the prior-weighted mean of ``h`` over ``M < M'``
          (module docstring; above the prior's support the mean over all of it). That mean is at
          most ``h(L)``, so ``h(a + 1) > δ·h(L)`` keeps ``a + 1``: no. When ``B = min(L, M_hi)``,
          the count of the prior's support nearest the mode, is one the sample allows (``B ≥ x``),
          the mean is at least ``π(B)·h(B)`` (``π`` the cut geometric weights, whose total is
          below 1), so ``h(a + 1) < δ·π(B)·h(B)`` keeps no ``M' > a``: yes.

        The bounds are applied with a margin far above the rounding of the log-factorial table,
        so they agree with :meth:`missed_upper`'s arithmetic, which decides the pairs in between
        (:meth:`_decide_in_full`; tested against it pair for pair). Inverting a whole stopping set
        this way evaluates a few percent of the pairs in full (15,608 of the 433,236 pairs of
        ``projected_audit_labels(ReviewRule(target=0.8), 16000, 1802, 223.5)``). A subclass that
        changes :meth:`missed_upper` must change this too.
        """
        t_arr, x_arr = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(x, dtype=np.int64))
        if np.any(t_arr < 0) or np.any(t_arr > self.pool) or np.any(x_arr < 0) or np.any(x_arr > t_arr):
            raise ValueError(f"need 0 ≤ x ≤ t ≤ N0 = {self.pool}")
        shape = t_arr.shape
        t_arr, x_arr = t_arr.ravel(), x_arr.ravel()
        allowed = np.asarray(allowed_misses(self.found, x_arr, self.target), dtype=np.int64)
        mode = ml_count(x_arr, t_arr, self.pool)
        most = self.pool - t_arr + x_arr
        result = allowed >= most
        open_ = (mode <= allowed) & ~result
        support, log_pi = self._prior()
        base = np.minimum(mode, support[-1])
        margin = 1e-9 * (1.0 + float(_log_factorials(self.pool)[-1]))
        log_delta = math.log(self.delta)
        tt, xx, aa, ll, bb = (v[open_] for v in (t_arr, x_arr, allowed, mode, base))
        log_next = _log_h(xx, tt, aa + 1, self.pool)
        no = log_next > log_delta + _log_h(xx, tt, ll, self.pool) + margin
        in_support = bb >= xx
        floor = np.where(in_support, log_delta + log_pi[bb] - margin
                         + _log_h(xx, tt, np.where(in_support, bb, xx), self.pool), -np.inf)
        verdict = log_next < floor
        rest = np.flatnonzero(~verdict & ~no)
        if rest.size:
            verdict[rest] = self._decide_in_full(tt[rest], xx[rest], aa[rest], floor[rest])
        result[open_] = verdict
        return result.reshape(shape)

    def _decide_in_full(self, t: NDArray[np.int64], x: NDArray[np.int64], allowed: NDArray[np.int64],
                        floor: NDArray[np.float64]) -> NDArray[np.bool_]:
        """:meth:`certifies` for the pairs its bounds leave open (``L ≤ a < K``).

        A count ``M' > a`` can be kept only while ``log h(M') ≥ floor`` (the second bound), and ``h``
        falls above the mode, so those counts run from ``a + 1`` (the bound leaves the pair open
        there) to a last one ``E`` (bisection).
        Whether one of them is kept is :meth:`_scan_prior`'s test on the prior cut at ``E``: the
        running sums from ``M = 0`` are the ones the whole support gives, in the same order, so the
        verdict is :meth:`missed_upper`'s, and the scan costs ``E`` counts where the support has
        ``M_hi``. Pairs with ``E`` above the support are passed to :meth:`missed_upper`.
        """
        most = self.pool - t + x

        def above(m: NDArray[np.int64]) -> NDArray[np.bool_]:
            return _log_h(x, t, m, self.pool) >= floor

        last = above(most)
        lo = np.where(last, most, allowed + 1)   # invariant: above(lo), and hi = K + 1 or not above(hi)
        hi = np.where(last, most + 1, most)
        while np.any(busy := hi - lo > 1):
            mid = (lo + hi) // 2
            up = above(mid)
            lo, hi = np.where(busy & up, mid, lo), np.where(busy & ~up, mid, hi)
        verdict = np.empty(t.shape, dtype=bool)
        support, log_pi = self._prior()
        wide = lo > support[-1]
        if wide.any():
            verdict[wide] = self.missed_upper(t[wide], x[wide]) <= allowed[wide]
        order = np.flatnonzero(~wide)
        order = order[np.argsort(lo[order], kind="stable")]
        for group in np.array_split(order, -(-order.size // 512)) if order.size else []:
            end = int(lo[group].max())
            _, low = self._scan_prior((support[:end + 1], log_pi[:end + 1]), t[group], x[group], None)
            verdict[group] = low <= allowed[group]
        return verdict

    def certified_counts(self, t: ArrayLike, x_max: int | None = None) -> list[NDArray[np.int64]]:
        """For each ``t``, the counts ``x ≤ x_max`` at which ``(t, x)`` certifies (the stopping set).

        The pairs are decided by :meth:`certifies`, many checks at a time.
        """
        result: list[NDArray[np.int64]] = []
        ts = np.asarray(t, dtype=np.int64).ravel()
        top = self.pool if x_max is None else x_max
        for lo in range(0, ts.size, 1024):
            sizes = np.minimum(ts[lo:lo + 1024], top) + 1
            starts = np.cumsum(sizes) - sizes
            xx = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(starts, sizes)
            ok = self.certifies(np.repeat(ts[lo:lo + 1024], sizes), xx)
            result.extend(xx[s:s + n][ok[s:s + n]] for s, n in zip(starts, sizes, strict=True))
        return result

    def zero_find_stop(self, t: int, x: int) -> int:
        """The least audit size ``t' ≥ t`` that certifies if labels ``t + 1 … t'`` find no relevant item.

        At most ``N0``: with the whole pool labelled ``C_t = {x}`` and the claim is exact. Scanned
        in blocks of doubling length (no monotonicity in ``t'`` is assumed).

        A scan is remembered per rule and ``x`` (the last :data:`_SCANS_KEPT`): when the scan from
        ``t0`` gave ``t*``, no size in ``t0 … t* − 1`` certifies with ``x`` and ``t*`` does, so for
        every ``t`` with ``t0 ≤ t ≤ t*`` the answer is ``t*`` again — an audit labelling on without a
        find asks this after every label (``rankcut serve``'s header), and scans once.
        """
        if not 0 <= check_count(x, "x") <= check_count(t, "t") <= self.pool:
            raise ValueError(f"need 0 ≤ x ≤ t ≤ N0 = {self.pool}, got t = {t}, x = {x}")
        with _SCANS_LOCK:
            scanned = _SCANS.get((self, x))
        if scanned is not None and scanned[0] <= t <= scanned[1]:
            return scanned[1]
        stop = self._scan_zero_find(t, x)
        with _SCANS_LOCK:
            _SCANS.pop((self, x), None)
            _SCANS[self, x] = (t, stop)
            while len(_SCANS) > _SCANS_KEPT:
                del _SCANS[next(iter(_SCANS))]
        return stop

    def _first_certifying(self, sizes: NDArray[np.int64], x: int) -> int:
        """The first audit size of ``sizes`` (increasing) that certifies with ``x`` hits, ``N0`` if
        none; evaluated in blocks of doubling length, so an early answer costs little."""
        lo, width = 0, 64
        while lo < sizes.size:
            ts = sizes[lo:lo + width]
            ok = self.certifies(ts, np.full(ts.shape, x))
            if ok.any():
                return int(ts[np.argmax(ok)])
            lo, width = lo + width, 2 * width
        return self.pool

    def _scan_zero_find(self, t: int, x: int) -> int:
        return self._first_certifying(np.arange(t, self.pool + 1, dtype=np.int64), x)

    def zero_find_size(self, check_every: int = 1) -> int:
        """The audit size at which a run that has found nothing certifies (``N0`` if never sooner):
        the first of ``0`` and the checks with ``max C_t ≤ m(0)`` when ``x = 0`` (``0`` when the
        pool is no larger than the misses allowed)."""
        return self._first_certifying(np.concatenate(([0], audit_checks(self.pool, check_every))), 0)


#: how many :meth:`SequentialAudit.zero_find_stop` scans are remembered, ``(rule, x) → (t0, t*)``
_SCANS_KEPT = 64
_SCANS: dict[tuple[SequentialAudit, int], tuple[int, int]] = {}
_SCANS_LOCK = threading.Lock()


@dataclass(frozen=True)
class RunningState:
    """An audit's labels and ``max C_s`` at each of their prefixes ``s = 0 … len(labels)``
    (:meth:`SequentialAudit.running_state`; pass it back to evaluate only the prefixes added since)."""

    labels: NDArray[np.int64]
    upper: NDArray[np.int64]

    def running(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """:meth:`SequentialAudit.running_upper` of these labels: the running intersection
        ``min_{s ≤ t} max C_s`` (at least ``x_t``) and the latest prefix where it was reached."""
        t = np.arange(self.upper.size, dtype=np.int64)
        x = np.concatenate(([0], np.cumsum(self.labels)))
        best = np.minimum.accumulate(self.upper)
        where = np.maximum.accumulate(np.where(self.upper == best, t, 0))
        return np.maximum(best, x), where


#: the default prior mean, as a share of the misses the target allows (fixed by reasoning, not tuned)
PRIOR_SCALE = 0.5


def default_prior_mean(found: int, target: float = 0.8, scale: float = PRIOR_SCALE) -> float:
    """The pre-registered prior mean: ``scale`` times the misses the target allows with nothing found,
    at least 1/2.

    The default ``scale`` (1/2) was fixed before any data was run, by reasoning: the prior should
    favour pools that hold fewer relevant items than the certificate can tolerate. Any positive
    mean keeps the guarantee; a smaller one certifies sooner when the audit finds nothing and later
    when it finds some (``benchmarks/bench_review_stops.py`` measures it).
    """
    return max(0.5, int(allowed_misses(found, 0, target)) * check_positive(scale, "scale"))


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Exact law of a sequential audit for one true missed count ``M`` (:func:`operating_characteristics`)."""

    missed: int
    p_false_claim: float       # P(certified while the review's recall is below ρ)
    p_certified_early: float   # P(certified before the pool is exhausted)
    expected_labels: float     # E[audit labels until the stop] (the full pool if never certified)
    stop_pmf: NDArray[np.float64]   # P(stop at check i), checks at ``checks``
    checks: NDArray[np.int64]


def operating_characteristics(audit: SequentialAudit, missed: int, check_every: int = 1,
                              running: bool = False, stopsets: list[NDArray[np.int64]] | None = None
                              ) -> OperatingCharacteristics:
    """Exact stopping law of ``audit`` when the pool truly holds ``missed`` relevant items.

    The audit order is a uniformly random permutation, so ``x_t`` is an urn (Markov) chain:
    ``P(x_{t+1} = x + 1 | x_t = x) = (M − x)/(N0 − t)``. The certificate is checked after every
    ``check_every`` labels and at the end of the pool; mass at a certifying ``(t, x)`` stops.

    :param running: the rule of :meth:`SequentialAudit.running_upper` (the running intersection
        over every prefix, as ``rankcut audit certify`` uses it): the chain is then ``(t, x, u)``
        with ``u`` the running bound — ``O(N0²·M)`` work, meant for small pools.
    :param stopsets: ``audit.certified_counts(audit_checks(N0, check_every), x_max)`` for some
        ``x_max ≥ missed``, computed once for several true counts (the inversion is most of the work).
    """
    big, m_true = audit.pool, check_count(missed, "missed")
    if m_true > big:
        raise ValueError(f"missed = {m_true} exceeds the pool size {big}")
    if running:
        return _running_characteristics(audit, m_true, audit_checks(big, check_every))
    return stopping_laws(audit, [m_true], check_every, stopsets=stopsets)[0]


def stopping_laws(audit: SequentialAudit, missed: ArrayLike, check_every: int = 1,
                  stopsets: list[NDArray[np.int64]] | None = None) -> list[OperatingCharacteristics]:
    """:func:`operating_characteristics` (the plain rule) for several true missed counts at once.

    One pass of the urn chain with the counts side by side, a row each (a count ``M`` has no mass
    at ``x > M``), so a projection over many counts costs one pass, not one a count. The pass ends
    once every row's mass has stopped.

    :param stopsets: as for :func:`operating_characteristics`, for some ``x_max`` at least the
        largest count.
    """
    big = audit.pool
    counts = np.array([check_count(m, "a missed count") for m in np.asarray(missed, dtype=object).ravel()],
                      dtype=np.int64)
    if counts.size == 0:
        return []
    if np.any(counts > big):
        raise ValueError(f"missed counts must be in 0 … {big} (the pool size), got {counts.tolist()}")
    top = int(counts.max())
    checks = audit_checks(big, check_every)
    stopsets = audit.certified_counts(checks, x_max=top) if stopsets is None else \
        [s[s <= top] for s in stopsets]
    xs = np.arange(top + 1)
    room = np.maximum(counts[:, None] - xs[None, :], 0).astype(float)   # M − x relevant items unread
    wrong = counts[:, None] > allowed_misses(audit.found, xs, audit.target)[None, :]
    prob = np.zeros((counts.size, top + 1))
    prob[:, 0] = 1.0
    up, moved = np.empty_like(prob), np.empty_like(prob)
    false_claim, early, labels = np.zeros(counts.size), np.zeros(counts.size), np.zeros(counts.size)
    stop_pmf = np.zeros((counts.size, checks.size))
    t = 0
    for i, check in enumerate(checks):
        while t < check:
            np.divide(room, big - t, out=up)          # P(the next label is relevant | x)
            np.multiply(prob, up, out=moved)
            prob -= moved
            prob[:, 1:] += moved[:, :-1]
            t += 1
        stop_x = stopsets[i]
        mass = prob[:, stop_x]
        stopped = mass.sum(axis=1)
        stop_pmf[:, i] = stopped
        false_claim += np.where(wrong[:, stop_x], mass, 0.0).sum(axis=1)
        if t < big:
            early += stopped
        labels += t * stopped
        prob[:, stop_x] = 0.0
        if not prob.any():   # all mass stopped: nothing is left to move
            break
    labels += big * prob.sum(axis=1)   # never certified: the whole pool was labelled
    return [OperatingCharacteristics(int(m), float(f), float(e), float(n), stop_pmf[j], checks)
            for j, (m, f, e, n) in enumerate(zip(counts, false_claim, early, labels, strict=True))]


def _running_characteristics(audit: SequentialAudit, m_true: int, checks: NDArray[np.int64]
                             ) -> OperatingCharacteristics:
    """:func:`operating_characteristics` for the running-intersection rule: mass over ``(x, u)``."""
    big = audit.pool
    xs = np.arange(m_true + 1)
    allowed = np.asarray(allowed_misses(audit.found, xs, audit.target))
    prob = np.zeros((m_true + 1, big + 1))       # [x, u]
    prob[0, big] = 1.0                           # max C_0 = N0
    false_claim = early = labels = 0.0
    stop_pmf = np.zeros(checks.size)
    t, i = 0, 0
    while t < big:
        up = np.where(xs < m_true, (m_true - xs) / (big - t), 0.0)[:, None]
        prob = prob * (1.0 - up) + np.vstack((np.zeros((1, big + 1)), (prob * up)[:-1]))
        t += 1
        bound = audit.missed_upper(np.full(xs.shape, t), np.minimum(xs, t))   # max C_t at each x
        moved = np.zeros_like(prob)
        for x in range(min(t, m_true) + 1):      # u ← min(u, max C_t(x))
            b = int(bound[x])
            moved[x, :b] = prob[x, :b]
            moved[x, b] += prob[x, b:].sum()
        prob = moved
        if t != checks[i]:
            continue
        stop = np.arange(big + 1)[None, :] <= allowed[:, None]
        mass = np.where(stop, prob, 0.0).sum(axis=1)
        stop_pmf[i] = mass.sum()
        false_claim += float(mass[m_true > allowed].sum())
        if t < big:
            early += float(mass.sum())
        labels += t * float(mass.sum())
        prob = np.where(stop, 0.0, prob)
        i += 1
    labels += big * float(prob.sum())
    return OperatingCharacteristics(m_true, false_claim, early, labels, stop_pmf, checks)


@certificate_function("sequential_recall", theorem="§9 sequential audit")
def sequential_recall_certificate(*, found: int, pool: int, labelled: int, hits: int, target: float = 0.8,
                                  delta: float = 0.05, prior_mean: float = 1.0,
                                  best_prefix: int | None = None, best_prefix_hits: int | None = None
                                  ) -> Certificate:
    """Recall of a review (cut reviewed in full + sequential excluded-pool audit), anytime-valid.

    ``labelled`` items of the excluded pool were audited in the frozen random order and ``hits``
    were relevant. With probability at least ``1 − δ`` over the audit order, at every point of
    the audit simultaneously, ``M ≤ max C_t`` and hence ``Recall ≥ (F + x)/(F + max C_t)``; on
    the same event ``M ≤ max C_s`` for every earlier prefix ``s``, so the bound may take the
    tightest of them (:meth:`SequentialAudit.running_upper`).

    :param found: ``F``, relevant items in the reviewed cut.
    :param pool: ``N0``, the excluded pool's size.
    :param labelled: ``t``, audit labels opened so far (a prefix of the frozen order).
    :param hits: ``x``, relevant among them.
    :param best_prefix: ``s ≤ t``, an earlier prefix of the same audit whose ``max C_s`` is used
        when it is lower (the running intersection); with ``best_prefix_hits``, ``x_s``.
    :returns: ``quantity="recall"``, ``side="lower"``; ``details["certified"]`` says whether the
        bound meets ``target``.
    """
    audit = SequentialAudit(pool=pool, found=found, target=target, delta=delta, prior_mean=prior_mean)
    if check_count(labelled, "labelled") > pool:
        raise ValueError(f"labelled = {labelled} exceeds the excluded pool's {pool} items")
    if check_count(hits, "hits") > labelled:
        raise ValueError(f"hits = {hits} exceeds the {labelled} audit labels")
    upper = int(audit.missed_upper(labelled, hits))
    if (best_prefix is None) != (best_prefix_hits is None):
        raise ValueError("best_prefix and best_prefix_hits go together")
    if best_prefix is not None and best_prefix_hits is not None:
        s, xs = check_count(best_prefix, "best_prefix"), check_count(best_prefix_hits, "best_prefix_hits")
        if s > labelled or xs > hits or xs > s or hits - xs > labelled - s:
            raise ValueError(f"best_prefix = {s} with {xs} hits cannot be a prefix of {labelled} audit "
                             f"labels with {hits} hits")
        earlier = int(audit.missed_upper(s, xs))
        tighter = earlier < upper
        upper = max(min(upper, earlier), hits)
        extra = {"best_prefix": s, "best_prefix_hits": xs}
    else:
        extra, tighter = {}, False
    total = found + upper
    recall = (found + hits) / total if total else 1.0
    ok = upper <= audit.allowed_misses(hits)
    return Certificate(
        quantity="recall",
        side="lower",
        value=recall,
        theorem=(f"{theorem_of('sequential_recall')} (one-sided mixture-likelihood-ratio confidence "
                 "sequence, Ville's inequality)"),
        function="sequential_recall",
        inputs={"found": found, "pool": pool, "labelled": labelled, "hits": hits, "target": target,
                "delta": delta, "prior_mean": prior_mean} | extra,
        allocation={"audit": float(delta)},
        delta=float(delta),
        statement=(
            f"With confidence {confidence_text(delta)}, the review "
            f"{found_share(recall, total, 'items', all_read=labelled == pool)}: "
            f"the cut's {found} plus {hits} found in {labelled} audit labels of the {pool} excluded items "
            f"leave at most {upper - hits} unfound"
            + unread_clause(upper - hits, pool - labelled, "not audited")
            + "anytime-valid: it holds wherever the audit stops"
            + (f"; the bound is the tightest of the audit so far, from its first {extra['best_prefix']} "
               "labels" if tighter else "")
            + f"); target {target:g} "
            f"{'met' if ok else 'not met yet'}."
        ),
        details={"missed_upper": upper, "allowed_misses": audit.allowed_misses(hits), "certified": ok},
    )
