"""Policies of an interleaved review (:func:`rankcut.certify.simulate.play` plays one against known labels).

A policy chooses each move of :mod:`rankcut.certify.interleaved` — screen an unread document, or
audit the next unread document of the frozen random order — from what has been read; a
:class:`Screener` chooses *which* document a screening move reads: the top unread one of a fixed
ranking (:class:`RankingScreener`, the default), or the one a ranker retrained on the labels
ranks first (continuous active learning, :mod:`rankcut.review.cal`). The certificate is valid for
*every* policy and screener (the theorem there: neither sees the unread part of the audit order),
so they only move the cost: their constants may be tuned freely on development data.

The policies read the screening *path* (:meth:`ReviewState.path`): the labels in the order the
screener reached them. For a fixed ranking that is the ranking's prefix down to the frontier,
audited documents above it in their rank place; for an adaptive screener, which has no fixed
ranking to place them in, it is the screened documents in reading order. The tail rate the
projections use is fitted to it.

:class:`ProjectedCostPolicy` is the default. At each decision it compares two projections of the
documents still to read — audit from now on, or screen one more batch first — and takes the
cheaper. The projection needs the unread relevant count ``M``; it is estimated from both
sources the review has: the ranking (an exponential rate fitted to the screened labels at the
frontier, :func:`~rankcut.certify.screening.tail_estimate`) as a geometric prior, and the audit
draws' likelihood (the engine's ``L_t``) as evidence. So an audit that finds relevant documents
raises the estimate and sends the review back to screening: an early switch to the audit is never
fatal. Its constants were chosen on the screening sets (development data), never on CLEF.

:class:`MarginalCostPolicy` needs no tail fit: it screens while a batch, at the precision of the
recent screened ranks, is projected to shorten the audit by more than the batch costs, or, once
the audit has met a relevant document, while a batch is richer than the audit's hit rate
(``docs/interleaved.md``, where it reads less than the others on CLEF TAR 2017).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln, logsumexp

from rankcut.certify._validate import check_count, check_number, check_positive
from rankcut.certify.interleaved import AUDIT, SCREEN, InterleavedReview, InterleavedRule
from rankcut.certify.screening import tail_estimate, tail_fit, tail_sum

__all__ = ["MarginalCostPolicy", "Policy", "PrecisionPolicy", "ProjectedCostPolicy", "RankingScreener",
           "ReviewState", "ScreenThenAudit", "Screener"]


class ReviewState:
    """What a policy or screener may see: the engine, and the labels of the documents read so far
    (``-1`` unread).

    :param total: the collection's size; documents are named ``0 … N − 1`` (their rank, for a
        ranking screened by :class:`RankingScreener`).
    """

    def __init__(self, total: int, rule: InterleavedRule) -> None:
        self.review = InterleavedReview(total, rule)
        self.rank_labels = np.full(total, -1, dtype=np.int64)
        self.frontier = 0            # every document below this index is read
        self.screened = 0
        self.screen_docs: list[int] = []   # the screened documents, in reading order
        self.in_rank_order = True    # every screening move so far read the frontier
        self.run = 0                 # length of the current run of the last move
        self.last: str | None = None

    def record(self, move: str, doc: int, label: int) -> None:
        """Record that document ``doc`` was read by ``move`` with ``label``."""
        (self.review.screen if move == SCREEN else self.review.audit)(label)
        self.rank_labels[doc] = label
        if move == SCREEN:
            self.in_rank_order &= doc == self.frontier
            self.screen_docs.append(doc)
        self.screened += move == SCREEN
        self.run = self.run + 1 if move == self.last else 1
        self.last = move
        while self.frontier < self.rank_labels.size and self.rank_labels[self.frontier] >= 0:
            self.frontier += 1

    def path(self) -> NDArray[np.int64]:
        """The labels along the screening path, in the screener's order (module docstring).

        While every screening move read the frontier (a fixed ranking), the ranks above the
        frontier; otherwise the screened documents in reading order.
        """
        if self.in_rank_order:
            return self.rank_labels[:self.frontier]
        return self.rank_labels[np.array(self.screen_docs, dtype=np.int64)]


class Screener(Protocol):
    """Chooses the document a screening move reads."""

    def next_screen(self, state: ReviewState) -> int:
        """The index of the unread document to screen next."""
        ...


class RankingScreener:
    """Screen down a fixed ranking: the top unread rank (documents are named by their rank)."""

    def next_screen(self, state: ReviewState) -> int:
        return state.frontier


class Policy(Protocol):
    """Chooses the next move (:data:`~rankcut.certify.interleaved.SCREEN` or ``AUDIT``)."""

    def __call__(self, state: ReviewState) -> str: ...


@dataclass(frozen=True)
class ScreenThenAudit:
    """Screen the top ``depth`` ranks, then only audit: today's screen-then-audit design."""

    depth: int

    def __call__(self, state: ReviewState) -> str:
        return SCREEN if state.screened < self.depth else AUDIT


def _check_constants(policy: ProjectedCostPolicy | PrecisionPolicy | MarginalCostPolicy,
                     *positive: str) -> None:
    """A policy's ``batch``, ``chunk`` and ``window`` are counts ≥ 1, and its ``positive`` constants > 0."""
    for name in ("batch", "chunk", "window"):
        check_count(getattr(policy, name), name, minimum=1)
    for name in positive:
        check_positive(getattr(policy, name), name)


@dataclass(frozen=True)
class ProjectedCostPolicy:
    """Screen or audit, whichever leaves fewer documents to read by a projection (module docstring).

    :param batch: screening moves come in batches of this size (and nothing is audited before the
        first batch, or before a relevant document is found).
    :param chunk: audit moves come in runs of this size before the next decision.
    :param window: screened ranks the tail rate is fitted to.
    :param overhead: the prior's cost in the projection, as a multiple of ``log(1 + prior mean)``.
    """

    batch: int = 50
    chunk: int = 10
    window: int = 500
    overhead: float = 0.5

    def __post_init__(self) -> None:
        _check_constants(self, "overhead")

    def __call__(self, state: ReviewState) -> str:
        rev = state.review
        total = state.rank_labels.size
        forced = _forced_move(state, self.batch, self.chunk)
        if forced:
            return forced
        prefix = state.path()
        k = prefix.size
        rate = tail_fit(prefix, k, self.window) or (math.log(0.5 / min(self.window, k)), 0.0)
        rest = total - k
        beyond = rev.found - int(prefix.sum())                    # audit finds off the path
        unfound = self._posterior_mean(rev, max(tail_sum(rate, rest) - beyond, 0.5))
        # screen d more ranks first (d = 0: audit now), then audit: one projection for every d
        steps = np.arange(0, -(-min(rest, rev.unread) // self.batch) + 1) * self.batch
        ahead = np.array([tail_sum(rate, int(d)) for d in np.minimum(steps, rest)])
        whole = tail_sum(rate, rest)
        share = ahead / whole if whole > 0 else np.minimum(steps, rest) / max(rest, 1)
        gains = np.array([round(unfound * g) for g in share], dtype=np.int64)   # half to even, as before
        cost = steps + self._audit_costs(rev, rev.unread - steps, unfound * (1 - share), rev.found + gains)
        return SCREEN if cost.size > 1 and float(cost[1:].min()) < float(cost[0]) else AUDIT

    @staticmethod
    def _posterior_mean(rev: InterleavedReview, prior: float) -> float:
        """Mean unread relevant count: geometric prior (mean ``prior``) times the audit likelihood."""
        f, w = rev.found, rev.found + rev.unread
        m = np.arange(w - f + 1)
        log_w = m * math.log(prior / (1.0 + prior)) + rev.log_likelihood()
        return float(np.exp(log_w - logsumexp(log_w)) @ m)

    def _audit_costs(self, rev: InterleavedReview, unread: NDArray[np.int64], unfound: NDArray[np.float64],
                     found: NDArray[np.int64]) -> NDArray[np.float64]:
        """Audit draws projected to reject every ``R > ⌊F/ρ⌋`` from ``unread`` documents, for each
        start (``unread``, ``unfound``, ``found``) at once, a row each.

        The expected path: after ``n`` draws, ``x = n·M/|U|`` of the ``M = unfound`` have been
        found, so the claim needs ``R ≤ ⌊(F + x)/ρ⌋``; its nearest alternative leaves
        ``K = ⌊(F + x)/ρ⌋ + 1 − F`` relevant unread at the audit's start, and the evidence against
        it is the hypergeometric log-likelihood ratio of ``x`` in ``n`` at the most likely count
        against ``K`` (continuous in ``x``; none while that count is above ``K``), plus what the
        audit has shown so far. The first ``n`` of 80 geometrically spaced sizes (rounded)
        whose evidence reaches ``log(1/δ)`` and the prior's cost ``log(1 + prior mean)``; ``|U|``
        if none does, 0 with nothing unread.
        """
        cost = np.zeros(unread.shape)
        live = unread > 0
        big = unread[live].astype(float)[:, None]
        f = found[live].astype(float)[:, None]
        n: NDArray[np.float64] = np.round(np.geomspace(1.0, big[:, 0], 80, axis=1)).astype(float)
        x = np.maximum(unfound[live], 0.0)[:, None] * n / big
        k = np.floor((f + x) / rev.rule.target + 1e-9) + 1.0 - f
        m_hat = np.minimum(np.maximum(x * (big + 1.0) / n, x), big - n + x)
        ok = k <= big - n + x
        kk = np.where(ok, k, x)
        gain = np.where(kk > m_hat, _log_hyp(x, n, m_hat, big) - _log_hyp(x, n, kk, big), -np.inf)
        need = {int(v): self._evidence_needed(rev, int(v)) for v in np.unique(found[live])}
        hit = ~ok | (gain >= np.array([need[int(v)] for v in found[live]])[:, None])
        first = np.argmax(hit, axis=1)
        cost[live] = np.where(hit.any(axis=1), n[np.arange(n.shape[0]), first], big[:, 0])
        return cost

    def _evidence_needed(self, rev: InterleavedReview, found: int) -> float:
        """``log(1/δ)`` plus the prior's cost, less what the audit has shown, for an audit after
        ``found`` relevant documents."""
        mean = rev.prior_mean if rev.prior_mean is not None else \
            rev.rule.prior_mean_at(found, rev.labels, rev.total)
        a = rev.rule.allowed_total(found) - found
        shown = max(rev.log_evidence(min(found + a + 1, rev.found + rev.unread)), 0.0)
        return rev.rule.log_level + self.overhead * math.log1p(mean) - shown


def _log_hyp(x: NDArray[np.float64], n: NDArray[np.float64], k: NDArray[np.float64],
             big: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log h(x; n, K, N)`` with ``gammaln`` (continuous in ``x`` and ``K``), ``N`` a column."""
    def lc(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1))
    return lc(k, x) + lc(big - k, n - x) - lc(np.broadcast_to(big, n.shape), n)


def _forced_move(state: ReviewState, batch: int, chunk: int) -> str | None:
    """The move that needs no decision: finish the batch or chunk under way, screen until the first
    batch is read and a relevant document found, audit once every document is read."""
    if state.frontier >= state.rank_labels.size:
        return AUDIT
    if state.review.found == 0 or state.screened < batch or (state.last == SCREEN and state.run % batch):
        return SCREEN
    if state.last == AUDIT and state.run % chunk:
        return AUDIT
    return None


def _beats_audit(rev: InterleavedReview, run: int, ratio: float) -> bool:
    """Whether the last ``run`` labels (a screening run) have a precision above ``ratio`` times
    the audit's hit rate ``(hits + ½)/(draws + 1)``, the unread prevalence the audit shows."""
    prevalence = (rev.audit_hits + 0.5) / (rev.audit_labels + 1)
    return sum(rev.labels[-run:]) / run > ratio * prevalence


@dataclass(frozen=True)
class PrecisionPolicy:
    """Screen while the ranking beats the audit, audit when it does not, screen again on audit finds.

    :param batch: screening moves come in batches of this size.
    :param chunk: audit moves come in runs of this size.
    :param ratio: after a screening batch, screen on while its precision exceeds ``ratio`` times
        the unread prevalence the audit draws show (``(hits + ½)/(draws + 1)``).
    :param margin: the first audit starts once the ranking's tail projects at most ``margin``
        times the ``a + 1`` unread relevant items that would refute the claim.
    :param window: screened ranks the tail rate is fitted to.
    """

    batch: int = 50
    chunk: int = 10
    ratio: float = 2.0
    margin: float = 0.5
    window: int = 500

    def __post_init__(self) -> None:
        _check_constants(self, "ratio", "margin")

    def __call__(self, state: ReviewState) -> str:
        rev = state.review
        total = state.rank_labels.size
        forced = _forced_move(state, self.batch, self.chunk)
        if forced:
            return forced
        if not rev.started:
            prefix = state.path()
            beyond = rev.found - int(prefix.sum())
            tail = tail_estimate(prefix, prefix.size, total, self.window) - beyond
            return AUDIT if tail <= self.margin * (rev.allowed_unfound() + 1) else SCREEN
        if state.last == AUDIT:
            return SCREEN if sum(rev.labels[-self.chunk:]) else AUDIT
        return SCREEN if _beats_audit(rev, self.batch, self.ratio) else AUDIT


@dataclass(frozen=True)
class MarginalCostPolicy:
    """Screen while one more batch saves more audit draws than it costs; audit on until a hit.

    An audit that meets no relevant document certifies "recall ≥ ρ" after about
    ``A(F, |U|) = |U| · (1 − exp(−need / (F(1 − ρ)/ρ + 1)))`` draws: the smallest refuting count is
    ``K = a + 1`` unread relevant with ``a = F/ρ − F`` (continuous), and ``n`` draws without
    replacement meet none of them with probability about ``(1 − n/|U|)^K``, which is ``e^{−need}``
    (the evidence ``need``, in nats) at ``n = A``. (For ``need ≪ K`` that is ``|U| · need / K``; for
    few relevant documents the draws without replacement matter, and ``A < |U|`` always.)

    A batch of ``b`` screened ranks at precision ``p`` (of the last ``window`` ranks of the
    screening path, ``(hits + ½)/(ranks + 1)``) adds ``p·b`` to ``F`` and takes ``b`` from ``|U|``.
    After each batch: screen another if ``b + A(F + p·b, |U| − b) < A(F, |U|)``, else audit. After
    each run of ``chunk`` audit draws: back to screening if it found a relevant document (the
    unread part is richer than the projection assumed), else audit on. The
    projection ignores the relevant documents still unread; the return on audit hits pays for that.
    Once the audit has met a relevant document, a screening batch whose precision is above
    ``ratio`` times the audit's hit rate ``(hits + ½)/(draws + 1)`` (the unread prevalence it
    shows) is followed by another whatever the projection says: the frontier is still richer than
    the unread documents on average, so the screening finds what the audit would meet. The same
    test cuts a return short: a screening run that follows the audit reads a *probe* of ``probe``
    ranks first and goes on to the full batch only if the probe beats ``ratio`` times the hit
    rate; else the audit goes on. An audit hit late in a review, when the frontier is no richer
    than the unread rest, then costs ``probe`` screening reads instead of a batch.

    Constants (defaults: the grid point of least documents read on CLEF TAR 2017 runs A and B
    together at recall 0.8 — ``batch``, ``window``, ``need`` at 5 seeds, ``ratio`` at 20; the
    figures in ``docs/interleaved.md`` are leave-one-topic-out, ``benchmarks/bench_interleaved.py
    --loto``):

    :param batch: screening moves come in batches of this size.
    :param chunk: audit moves come in runs of this size.
    :param window: screened ranks whose precision stands for the next batch's.
    :param need: the evidence, in nats, the projection charges the audit (``log(1/δ)`` ≈ 3 at
        δ = 0.05, plus the prior's cost: 4 by the grid).
    :param ratio: screen on after a batch at least this many times richer than the audit's hit
        rate, once the audit has hit (above); 0 turns that rule off, and the probe with it.
    :param probe: the ranks a return from the audit reads before that test (above); 0 (or ``probe ≥
        batch``): every screening run is a full batch.
    """

    batch: int = 100
    chunk: int = 10
    window: int = 1000
    need: float = 4.0
    ratio: float = 3.0
    probe: int = 0

    def __post_init__(self) -> None:
        _check_constants(self, "need")
        check_count(self.probe, "probe")
        if check_number(self.ratio, "ratio") < 0:
            raise ValueError(f"ratio must be >= 0 (0 turns the rule off), got {self.ratio!r}")

    def __call__(self, state: ReviewState) -> str:
        if self.probe_read(state):
            return SCREEN if _beats_audit(state.review, self.probe, self.ratio) else AUDIT
        forced = _forced_move(state, self.batch, self.chunk)
        if forced:
            return forced
        rev = state.review
        if state.last == AUDIT:
            return SCREEN if sum(rev.labels[-self.chunk:]) else AUDIT
        if self.rich_batch(rev):
            return SCREEN
        recent = state.path()[-self.window:]
        precision = (int(recent.sum()) + 0.5) / (recent.size + 1)
        b = min(self.batch, rev.unread)
        now = self._audit_draws(rev.found, rev.unread, rev.rule.target)
        later = b + self._audit_draws(rev.found + precision * b, rev.unread - b, rev.rule.target)
        return SCREEN if later < now else AUDIT

    def probe_read(self, state: ReviewState) -> bool:
        """Whether the screening run under way returned from the audit and has just read its probe
        (``probe`` ranks, short of a batch; only with ``probe`` and ``ratio`` > 0)."""
        return (bool(self.ratio) and 0 < self.probe < self.batch and state.review.started
                and state.last == SCREEN and state.run == self.probe
                and state.frontier < state.rank_labels.size)

    def rich_batch(self, rev: InterleavedReview) -> bool:
        """Whether the screening batch just read beats ``ratio`` times the audit's hit rate (the
        audit having hit; never with ``ratio`` 0)."""
        return bool(self.ratio and rev.audit_hits) and _beats_audit(rev, self.batch, self.ratio)

    def _audit_draws(self, found: float, unread: int, target: float) -> float:
        """``A(F, |U|)``: the draws of an audit that finds nothing (class docstring)."""
        return unread * -math.expm1(-self.need / (found * (1 - target) / target + 1))
