"""The screening rules: where a high-recall review stops screening, and the audit it leaves.

The one home of the rule code. :mod:`rankcut.audit.screening` applies :func:`screening_stop` to
the lists of a run; :mod:`rankcut.certify.policies` reuses the tail estimate;
:mod:`rankcut.certify.simulate` plays the review against known labels for the benchmarks.

A reviewer reads a ranking from the top. Under the pre-registered :class:`ReviewRule`:

1. **Screen** in batches of ``batch`` documents. After each batch at depth ``k`` with ``F ≥ 1``
   relevant found, stop screening when an exponential rate fitted to the last ``window``
   screened labels projects at most ``margin · m(0)`` relevant items below ``k``
   (:func:`tail_estimate`; ``m(0)`` the misses the target allows), an audit that finds
   nothing (:meth:`SequentialAudit.zero_find_size`) is cheaper than reading the rest, and (with
   ``lookahead``) stopping now is projected to cost no more than one batch more
   (:func:`projected_audit_labels`; :func:`stop_depth`). The rule reads only the labels of
   screened documents: the cut is fixed before any audit label is opened (§2.4, Assumption 1).
2. **Audit** the excluded pool in a uniformly random order with the sequential audit of
   :mod:`rankcut.certify.sequential`, checking after every ``check_every`` labels, until
   "recall ≥ ρ" is certified or the pool is exhausted (then the review is complete and recall 1).

Validity: conditional on the cut (a function of the screened labels only), the audit order is
uniform on the excluded pool, so the confidence sequence's guarantee holds given the cut, hence
overall: ``P(certified and recall < ρ) ≤ δ`` for every ranking and labelling. The cost (documents
a person reads: ``k`` + audit labels) depends on the ranking; it is measured by
``benchmarks/bench_label_efficient.py`` (with :func:`~rankcut.certify.simulate.simulate_screen_then_audit`),
never assumed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from rankcut.certify._validate import check_count, check_delta, check_fraction, check_positive
from rankcut.certify.sequential import (
    PRIOR_SCALE,
    SequentialAudit,
    allowed_misses,
    audit_checks,
    default_prior_mean,
    stopping_laws,
)

__all__ = ["ReviewPlan", "ReviewRule", "cost_floor", "plan_review", "projected_audit_labels",
           "screening_stop", "stop_depth", "tail_estimate", "tail_fit", "tail_sum"]


@dataclass(frozen=True)
class ReviewRule:
    """The pre-registered constants of a screen-then-audit review (fixed before any label).

    :param target: recall target ``ρ``.
    :param delta: error probability ``δ`` of the certificate.
    :param batch: screening batch; the stopping rule is evaluated after each.
    :param window: the last screened documents that the tail estimate is fitted to.
    :param margin: screening may stop when the projected unfound relevant items are at most this
        share of the misses the target allows.
    :param check_every: audit labels between two checks of the certificate.
    :param prior_scale: the audit's prior mean as a share of the misses allowed
        (:func:`~rankcut.certify.sequential.default_prior_mean`); any value keeps the guarantee.
    :param lookahead: where the margin test passes, stop only if stopping now is projected to
        cost no more than screening one batch more and stopping then
        (:func:`projected_audit_labels`); without it, stop at the first boundary that passes.
    """

    target: float = 0.8
    delta: float = 0.05
    batch: int = 50
    window: int = 500
    margin: float = 0.5
    check_every: int = 10
    prior_scale: float = PRIOR_SCALE
    lookahead: bool = True

    def __post_init__(self) -> None:
        check_fraction(self.target, "target", open_left=True)
        check_delta(self.delta)
        check_fraction(self.margin, "margin")
        check_positive(self.prior_scale, "prior_scale")
        for name in ("batch", "window", "check_every"):
            check_count(getattr(self, name), name, minimum=1)

    def audit(self, pool: int, found: int) -> SequentialAudit:
        """The sequential audit this rule runs on a pool of ``pool`` items after ``found`` relevant."""
        return SequentialAudit(pool=pool, found=found, target=self.target, delta=self.delta,
                               prior_mean=default_prior_mean(found, self.target, self.prior_scale))


@lru_cache(maxsize=65536)
def _audit_cost(rule: ReviewRule, pool: int, found: int) -> int:
    return rule.audit(pool, found).zero_find_size(rule.check_every) if pool else 0


def _labels(labels: ArrayLike) -> NDArray[np.int64]:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"labels must be a 1-D sequence of 0/1 relevance labels in rank order, "
                         f"got shape {y.shape}")
    bad = np.flatnonzero(~np.isin(y, (0, 1)))
    if bad.size:
        raise ValueError(f"labels must be 0 or 1: rank {bad[0] + 1} holds {y[bad[0]].item()!r}")
    return y.astype(np.int64)


def tail_fit(labels: ArrayLike, depth: int, fit: int) -> tuple[float, float] | None:
    """The rate ``exp(a + b·i)`` of relevant items at rank ``depth + i``, fitted to the last ``fit`` screened.

    Maximum likelihood for counts ``y_i ~ Poisson(exp(a + b·i))`` over the screened ranks
    ``depth − fit ≤ i < depth`` (ranks relative to the depth; Newton's method on the two
    parameters, ``b ≤ 0``). ``None`` when the window holds no relevant item.
    """
    y = _labels(labels)[max(0, depth - fit):depth].astype(float)
    if y.sum() == 0:
        return None
    i = np.arange(y.size, dtype=float) - y.size   # ranks relative to the depth (the last is −1)
    a, b = math.log(y.mean()), 0.0
    for _ in range(50):
        mu = np.exp(a + b * i)
        g = np.array([np.sum(y - mu), np.sum((y - mu) * i)])
        h = np.array([[mu.sum(), np.sum(mu * i)], [np.sum(mu * i), np.sum(mu * i * i)]])
        step = np.linalg.solve(h + 1e-9 * np.eye(2), g)
        a, b = a + step[0], min(b + step[1], 0.0)
        if np.abs(step).max() < 1e-10:
            break
    return a, b


def tail_sum(rate: tuple[float, float], rest: int) -> float:
    """``Σ_{i < rest} exp(a + b·i)``: the relevant items a :func:`tail_fit` rate projects in ``rest``
    ranks."""
    a, b = rate
    if b >= -1e-12:
        return math.exp(a) * rest
    return math.exp(a) * math.exp(b) * (1 - math.exp(b * rest)) / (1 - math.exp(b))


def tail_estimate(labels: ArrayLike, depth: int, total: int, fit: int) -> float:
    """Projected relevant items below ``depth``: an exponential rate fitted to the last ``fit`` screened.

    :func:`tail_fit`, summed over the ``total − depth`` unscreened ranks (:func:`tail_sum`). A
    rate that does not fall (``b ≥ 0``) projects the fitted rate at ``depth`` over the whole
    rest; a window without a relevant item projects half an item per window. A label-free
    estimate for the audit: it reads screened labels only, and only steers the cost, never the
    guarantee.
    """
    rate = tail_fit(labels, depth, fit)
    if rate is None:   # no relevant item in the fit window: half an item per window, not zero
        return 0.5 * (total - depth) / max(min(fit, depth), 1)
    return tail_sum(rate, total - depth)


def projected_audit_labels(rule: ReviewRule, pool: int, found: int, unfound: float) -> float:
    """Expected audit labels of ``rule``'s audit of ``pool`` items after ``found`` relevant, if the
    pool holds a Poisson number of relevant items with mean ``unfound``.

    Exact per count (:func:`~rankcut.certify.sequential.stopping_laws`, the counts in one pass), over the
    counts from 0 to one past the Poisson 0.999 quantile (at most ``pool``) whose probability is
    at least ``1e-4`` or is the largest (renormalised). A projection that only steers where
    screening stops, never the guarantee.
    """
    from scipy.stats import poisson

    if pool == 0:
        return 0.0
    audit = rule.audit(pool, found)
    counts = np.arange(min(pool, int(poisson.ppf(0.999, max(unfound, 1e-9))) + 1) + 1)
    weight = poisson.pmf(counts, unfound)
    if not weight.any():
        weight[-1] = 1.0                        # a mean far above the pool: the pool is full
    keep = weight >= min(1e-4, weight.max())   # a huge mean spreads every count below 1e-4
    stopsets = audit.certified_counts(audit_checks(pool, rule.check_every), x_max=int(counts[keep].max()))
    labels = [law.expected_labels for law in stopping_laws(audit, counts[keep], rule.check_every, stopsets)]
    return float(np.dot(weight[keep], labels) / weight[keep].sum())


def _stop_now_is_cheaper(y: NDArray[np.int64], k: int, total: int, rule: ReviewRule, found: int,
                         unfound: float) -> bool:
    """The lookahead: projected cost of stopping at ``k`` against one batch more (reads ``y[:k]``)."""
    later_k = k + rule.batch
    now = k + projected_audit_labels(rule, total - k, found, unfound)
    if later_k >= total:
        return now <= total
    gain = min(tail_estimate(y, k, later_k, rule.window), unfound)   # projected finds in the batch
    later = later_k + projected_audit_labels(rule, total - later_k, found + round(gain), unfound - gain)
    return now <= later


def screening_stop(screened: ArrayLike, total: int, rule: ReviewRule = ReviewRule(), *,
                   on_check: Callable[[int], None] | None = None) -> int | None:
    """Where screening stops, given the labels of the first ``len(screened)`` of ``total`` ranks.

    The first batch boundary ``k`` where the projected unfound relevant items
    (:func:`tail_estimate`) are at most ``rule.margin`` times the misses the target allows, the
    audit of the rest (if it finds nothing) is cheaper than reading the rest and, with
    ``rule.lookahead``, stopping now is projected to cost no more than screening one batch more
    (the projected audit of :func:`projected_audit_labels`, with the batch's projected finds);
    the decision at ``k`` reads ``screened[:k]`` only. ``None`` while the screened prefix holds
    no such boundary (screen on); ``total`` when the whole list is screened without one. Nothing
    stops before the first relevant item is found. ``on_check(k)``, if given, is called before
    the check at each boundary ``k`` (a progress hook: the lookahead takes seconds a boundary on
    long lists, and certify draws no bar itself).
    """
    y = _labels(screened)
    big = check_count(total, "total")
    if y.size > big:
        raise ValueError(f"{y.size} screened labels exceed the list's {big} ranks")
    seen = np.concatenate(([0], np.cumsum(y)))
    for k in range(rule.batch, min(big, y.size + 1), rule.batch):
        if on_check is not None:
            on_check(k)
        found = int(seen[k])
        if found == 0 or k + _audit_cost(rule, big - k, found) >= big:
            continue
        unfound = tail_estimate(y, k, big, rule.window)
        if unfound <= rule.margin * int(allowed_misses(found, 0, rule.target)) and (
                not rule.lookahead or _stop_now_is_cheaper(y, k, big, rule, found, unfound)):
            return k
    return big if y.size == big else None


def stop_depth(labels: ArrayLike, rule: ReviewRule = ReviewRule()) -> int:
    """The depth ``k`` at which screening of a fully labelled list stops (:func:`screening_stop`);
    ``labels[k:]`` are never read, and ``len(labels)`` means screen everything."""
    y = _labels(labels)
    stop = screening_stop(y, y.size, rule)
    assert stop is not None   # the whole list is screened
    return stop


@dataclass(frozen=True)
class ReviewPlan:
    """The cut chosen by the screening rule and the audit frozen for its excluded pool."""

    depth: int
    found: int
    audit: SequentialAudit
    check_every: int

    @property
    def checks(self) -> NDArray[np.int64]:
        """Audit sizes at which the certificate is checked (and the end of the pool)."""
        return audit_checks(self.audit.pool, self.check_every)


def plan_review(labels: ArrayLike, rule: ReviewRule = ReviewRule()) -> ReviewPlan:
    """Screen ``labels`` (in rank order) under ``rule`` and freeze the audit of what is left."""
    y = _labels(labels)
    k = stop_depth(y, rule)
    found = int(y[:k].sum())
    return ReviewPlan(k, found, rule.audit(y.size - k, found), rule.check_every)


def cost_floor(total: int, relevant: int, target: float = 0.8, delta: float = 0.05) -> float:
    """A lower bound on the expected documents read by *any* valid review of one topic.

    Any procedure whose claim "recall ≥ ρ" is wrong with probability at most ``δ`` for every
    labelling, and which reads everything (cost ``N``) when it does not claim, reads on average at
    least this many documents on a topic of ``N`` documents with ``R`` relevant — whatever the
    ranking. Proof: let ``a = ⌊R(1 − ρ)/ρ⌋ + 1``; for any ``a`` non-relevant documents ``A``, the
    labelling with ``A`` made relevant is indistinguishable until an item of ``A`` is read, and
    under it any claim made without reading ``A`` is wrong (``found ≤ R < ρ(R + a)``). So
    ``P(claim, A unread) ≤ δ`` for every ``A``; averaged over uniform ``A``,
    ``E[1{claim}·g(ℓ)] ≤ δ`` with ``ℓ`` the non-relevant documents read and
    ``g(ℓ) = C(N − R − ℓ, a)/C(N − R, a)``. Minimising ``E[1{claim}ℓ + 1{no claim}(N − r)]``
    under that constraint is a linear programme over laws of ``(claim, ℓ)``, whose value is the
    lower convex envelope of ``{(g(ℓ), ℓ)} ∪ {(0, N − r)}`` at ``δ`` (the same argument as
    Theorem 13, with the zero-miss labelling replaced by the true one). The relevant documents
    count too: a true claim has read at least ``r = ⌈ρR⌉`` of them, and no claim costs
    ``N = (N − r) + r``; under the true labelling a claim is false with probability at most
    ``δ``, so ``E[cost] ≥ E[1{claim}ℓ + 1{no claim}(N − r)] + (1 − δ)·r``.
    """
    big, r = check_count(total, "total"), check_count(relevant, "relevant")
    if r > big:
        raise ValueError(f"relevant = {r} exceeds total = {big}")
    check_fraction(target, "target", open_left=True)
    check_delta(delta)
    a = int(allowed_misses(r, 0, target)) + 1   # ⌊R/ρ⌋ − R + 1 = ⌊R(1 − ρ)/ρ⌋ + 1
    rho = Fraction(str(target))
    need = -(-r * rho.numerator // rho.denominator)   # ⌈ρR⌉, exact
    return _hidden_floor(big - r, a, delta) + (1.0 - delta) * need


def _hidden_floor(neg: int, a: int, delta: float) -> float:
    """The lower convex envelope of ``{(g(ℓ), ℓ)}`` at ``δ``, ``g(ℓ) = C(neg − ℓ, a)/C(neg, a)``.

    ``g`` is a product of ``a`` positive, falling linear factors of ``ℓ`` up to ``neg − a``
    (and 0 beyond), so it is convex and falling, and so is its inverse: the envelope through the
    points is their linear interpolation (the fallback point ``(0, N − r)`` lies above the
    curve's end ``(0, neg − a + 1)`` and never enters). ``0`` when ``a > neg``: there are too few
    non-relevant documents to hide a recall shortfall in.
    """
    if a > neg:
        return 0.0
    ell = np.arange(neg - a + 2, dtype=float)        # g(neg − a + 1) = 0
    log_g = gammaln(neg - ell + 1) - gammaln(np.maximum(neg - ell - a + 1, 1)) \
        - gammaln(neg + 1) + gammaln(neg - a + 1)
    g = np.where(ell <= neg - a, np.exp(log_g), 0.0)
    i = int(np.argmax(g <= delta))                   # g(0) = 1 > δ, so i ≥ 1
    return float(ell[i - 1] + (g[i - 1] - delta) / (g[i - 1] - g[i]))
