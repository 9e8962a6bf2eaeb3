"""Interleaved certified review: screening and auditing under one anytime-valid bound on R.

**The design.** A collection of ``N`` documents, a fixed unknown labelling with ``R`` relevant,
and one frozen uniformly random order ``π`` of the whole collection (the audit order). At every
step a *policy* chooses one of two moves and a person reads one document:

* **screen** — read a document the policy names (the top unread document of a ranking, or of a
  ranker retrained on the labels so far): no randomness is added;
* **audit** — read the next still-unread document of ``π``.

The policy may use every label read so far, the ranking and anything fixed in advance — even the
true labelling; it must not see the unread part of ``π``. After step ``t`` write ``F_t`` for the
relevant documents found (by either move), ``U_t`` for the unread set and ``W_t = F_t + |U_t|``.

**Lemma (the audit draw is uniform).** Given the history up to an audit step, the next unread
document of ``π`` is uniform on ``U``. *Proof.* The history is a function of ``π``'s entries
that have been revealed: the audited documents and the read documents skipped on the way. Every
permutation consistent with that history orders the unread documents in the remaining positions
in every one of the ``|U|!`` ways equally often, so the first of them is uniform on ``U``. ∎
Hence, when ``R = r``, an audit draw is relevant with probability ``(r − F)/|U|`` — a known
function of the history and ``r`` (``tests/certify/test_interleaved.py`` checks the lemma by
enumerating every permutation under an adaptive policy).

**Theorem (confidence sequence for R).** For a hypothesis ``r`` let
``q_r(y) = ((r − F)/|U|)^y ((W − r)/|U|)^{1−y}`` be the law of an audit label, and
``L_t(r) = Π_{audit steps s ≤ t} q_r(y_s)``. For each ``r`` let ``p̂^r_s`` be any *predictable* law
of the audit label at step ``s`` (a function of the history before it, and of ``r``) and
``Λ_t(r) = Π_{audit s ≤ t} p̂^r_s(y_s) / q_r(y_s)``. Then

    C_t = {r ∈ [F_t, W_t] : Λ_t(r) < 1/δ}

holds ``R`` at every step ``t`` simultaneously with probability at least ``1 − δ``, for every
labelling and every policy. *Proof.* Fix the labelling, so ``R`` is fixed. At an audit step,
by the lemma, ``E[p̂^R_s(y_s)/q_R(y_s) | history] = Σ_y p̂^R_s(y) = 1``; screening steps multiply by
nothing and add no randomness. So ``Λ_t(R)`` is a nonnegative martingale in the history's
filtration, whatever the (predictable) policy, starting at 1, and Ville's inequality gives
``P(∃t: Λ_t(R) ≥ 1/δ) ≤ δ``. ``R ∈ [F_t, W_t]`` always. Only ``Λ_t(R)`` enters, so the law
``p̂^r`` may differ from one hypothesis to the next. ∎

``max C_t`` bounds ``R`` and ``Recall_t = F_t/R ≥ F_t / max C_t``. On the same event
``R ≤ min_{s ≤ t} max C_s`` (the running intersection), so a claim once met stays met: "recall ≥ ρ"
is certified at the first step where ``min_{s ≤ t} max C_s ≤ ⌊F_t/ρ⌋`` and is false with
probability at most ``δ`` — checked by exact enumeration against adversarial policies (that see
the labelling and switch moves on the labels) and by simulation on real topics. ``C_t`` need not
be an interval, so ``max C_t`` is read off every hypothesis in ``[F_t, W_t]``.

**The predictable law used** (:class:`InterleavedReview`): a geometric prior on the unread
relevant count, fixed at the first audit step ``τ`` from the labels read before it — mean
:func:`~rankcut.certify.sequential.default_prior_mean` ``(F_τ)``, or with
:attr:`InterleavedRule.prior_basis` ``= "tail"`` the relevant count the screened labels' tail projects
(:meth:`InterleavedRule.prior_mean_at`), unless given in advance; cut
where its tail falls below ``1e-12`` at ``m_hi`` (support ``r − F_τ ∈ [0, m_hi]``). ``p̂^r_s`` is
the posterior predictive under the prior *anchored* at ``A_s = F_τ`` plus the relevant documents
screening found after ``τ``, **one-sided**: weights ``ρ^{r' − A_s} L_{s−1}(r')`` on the counts
``r' ∈ [F_s, min(A_s + m_hi, W_s, r − 1)]`` *below* the hypothesis. Only an upper bound on ``R``
is claimed, so the evidence against ``r`` need only come from smaller counts; prior mass above
``r`` would be spent for nothing (the two-sided mixture is ``Λ`` with the whole support, and
reads more documents: ``docs/interleaved.md``, "One-sided mixture"). When no count is left below
``r`` (``r = F_s``, or the support is used up), ``p̂^r_s = q_r``: the step leaves ``Λ_s(r)``
unchanged. By memorylessness, a geometric prior conditioned on the documents screening found is
the same geometric moved up by them, so screening after an audit never uses up the prior. The
prior may depend on anything fixed before ``τ`` (here: ``F_τ``), since the martingale argument
starts at ``τ``; it must not change after ``τ``. **Screen-then-audit is the special case**
"screen ``k``, then only audit": the anchor never moves, the predictives telescope to
``Λ_t(r) = Σ_{r' < r} π(r') L_t(r') / (π(< r) L_t(r))``, and ``C_t`` is that of
:class:`~rankcut.certify.sequential.SequentialAudit` (``max C_t = F + max C_t(M)``) — a test
checks the two agree.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from rankcut.certify._validate import check_count, check_delta, check_fraction, check_positive
from rankcut.certify.result import (
    Certificate,
    certificate_function,
    confidence_text,
    found_share,
    theorem_of,
    unread_clause,
)
from rankcut.certify.screening import tail_estimate
from rankcut.certify.sequential import PRIOR_SCALE, PRIOR_TAIL, default_prior_mean

__all__ = ["AUDIT", "PRIOR_BASES", "SCREEN", "TAIL_FIT", "TAIL_FLOOR", "InterleavedReview", "InterleavedRule",
           "audit_order_draw", "interleaved_recall_certificate", "keeping", "remember",
           "replay"]

SCREEN, AUDIT = "s", "a"


#: the bases of the prior mean an :class:`InterleavedRule` fixes at the first audit step
PRIOR_BASES = ("misses", "tail")
TAIL_FIT = 1000      # screened labels the ``tail`` prior's rate is fitted to
TAIL_FLOOR = 0.05    # the least prior mean the ``tail`` basis gives (a positive mean is needed)


@dataclass(frozen=True)
class InterleavedRule:
    """The frozen constants of an interleaved review's certificate (fixed before any label).

    :param target: recall target ``ρ`` in (0, 1].
    :param delta: error probability ``δ``.
    :param prior_scale: the prior mean as a share of its basis (``prior_basis``); ``None``: 1/2 of the
        allowed misses (:data:`~rankcut.certify.sequential.PRIOR_SCALE`), or the whole tail
        projection. Used when ``prior_mean`` is None.
    :param prior_mean: a prior mean fixed in advance instead (any positive number keeps the
        guarantee; it only moves the cost).
    :param prior_basis: the basis of the prior mean fixed at the first audit step ``τ``, from the labels
        read before it (all screened): ``misses``, the misses the target allows at ``F_τ``
        (:func:`~rankcut.certify.sequential.default_prior_mean`, as the sequential design); or
        ``tail``, the relevant documents the ranking still projects:
        :func:`~rankcut.certify.screening.tail_estimate`, an exponential rate fitted to the last
        :data:`TAIL_FIT` screened labels in reading order, summed over the unread rest (at least
        :data:`TAIL_FLOOR`). ``tail`` puts the prior's mass near zero when the ranking has run dry,
        so an audit that finds nothing certifies sooner (``docs/interleaved.md``, "The tail prior").
    """

    target: float = 0.8
    delta: float = 0.05
    prior_scale: float | None = None
    prior_mean: float | None = None
    prior_basis: str = "misses"

    def __post_init__(self) -> None:
        check_fraction(self.target, "target", open_left=True)
        check_delta(self.delta)
        if self.prior_scale is not None:
            check_positive(self.prior_scale, "prior_scale")
        if self.prior_mean is not None:
            check_positive(self.prior_mean, "prior_mean")
        if self.prior_basis not in PRIOR_BASES:
            raise ValueError(f"prior_basis must be one of {', '.join(PRIOR_BASES)}, got {self.prior_basis!r}")

    @property
    def scale(self) -> float:
        """The prior mean's share of its basis (``prior_scale``, or the basis' default)."""
        if self.prior_scale is not None:
            return self.prior_scale
        return PRIOR_SCALE if self.prior_basis == "misses" else 1.0

    def prior_mean_at(self, found: int, screened: Sequence[int], total: int) -> float:
        """The prior mean the first audit step fixes after screening read ``screened`` (0/1 labels in
        reading order, ``found`` of them relevant) of ``total`` documents."""
        if self.prior_mean is not None:
            return self.prior_mean
        if self.prior_basis == "misses":
            return default_prior_mean(found, self.target, self.scale)
        y = np.asarray(screened, dtype=np.int64)
        return max(self.scale * tail_estimate(y, y.size, total, TAIL_FIT), TAIL_FLOOR)

    @cached_property
    def _rho(self) -> Fraction:
        return Fraction(str(self.target))

    def allowed_total(self, found: int) -> int:
        """``⌊F/ρ⌋``: the most relevant documents the collection may hold for ``F/R ≥ ρ`` (exact)."""
        rho = self._rho   # made once: the policies ask at every step
        return found * rho.denominator // rho.numerator

    @cached_property
    def log_level(self) -> float:
        """``log(1/δ)``: the evidence ``log Λ_t(r)`` at which a count leaves the confidence sequence."""
        return -math.log(self.delta)


class InterleavedReview:
    """The confidence sequence for ``R`` along one interleaved review (see the module docstring).

    Feed it every read document in order with :meth:`screen` or :meth:`audit`; the caller picks
    which document (the policy and the frozen audit order live outside). Pure: no I/O.

    :param total: ``N``, the collection's size.
    :param rule: the frozen :class:`InterleavedRule`.
    """

    def __init__(self, total: int, rule: InterleavedRule = InterleavedRule()) -> None:
        self.total = check_count(total, "total")
        self.rule = rule
        self.found = 0
        self.unread = self.total
        self.audit_labels = 0
        self.audit_hits = 0
        self.moves: list[str] = []
        self.labels: list[int] = []
        self.prior_mean: float | None = None     # fixed at the first audit step
        self._log_lik = np.zeros(self.total + 1)   # log L_t(r) for r = 0..N, valid on [F_t, W_t]
        with np.errstate(divide="ignore"):
            self._logs = np.log(np.arange(self.total + 1, dtype=float))
        self._log_lam = np.zeros(self.total + 1)   # log Λ_t(r) for r = 0..N, valid on [F_t, W_t]
        self._anchor = 0
        self._support = 0
        self._log_rho = 0.0
        self._running = self.total                 # min over steps of max C_t
        self._running_step = 0
        self.met_step: int | None = None          # the step at which the target was first met

    @property
    def read(self) -> int:
        """Documents read so far (both moves)."""
        return self.total - self.unread

    @property
    def started(self) -> bool:
        """Whether an audit step has happened (the prior is fixed then)."""
        return self.prior_mean is not None

    def screen(self, label: int) -> None:
        """Record a screened document and its 0/1 label."""
        y = self._check(label, SCREEN)
        self.found += y
        self._anchor += y if self.started else 0
        self._after(SCREEN, y)

    def audit(self, label: int) -> None:
        """Record the next unread document of the frozen audit order and its 0/1 label."""
        y = self._check(label, AUDIT)
        f, w = self.found, self.found + self.unread
        if not self.started:
            self._fix_prior()
        lo, hi = f, min(self._anchor + self._support, w)
        if lo <= hi:          # else no prior mass is left: p̂ = q_r, Λ unchanged (module docstring)
            r = np.arange(lo, hi + 1)
            log_w = (r - self._anchor) * self._log_rho + self._log_lik[lo:hi + 1]
            weight = np.exp(log_w - log_w.max())
            with np.errstate(divide="ignore"):   # p̂·|U| for hypotheses f+1 … hi+1 (support below each)
                share = np.log(np.cumsum(weight * ((r - f) if y else (w - r)))) - np.log(np.cumsum(weight))
            top = min(hi + 1, w)
            # log(p̂^(h)·|U|) − log(q_h·|U|) for h = f+1 … w; h = f has no count below it (factor 1).
            # One array of |U| a step (the hypotheses above the prior's support gain share[-1]).
            gain = -(self._logs[1:w - f + 1] if y else self._logs[w - f - 1::-1])
            gain[:top - f] += share[:top - f]
            gain[top - f:] += share[-1]
            self._log_lam[f + 1:w + 1] += gain
        if y:
            self._log_lik[f + 1:w + 1] += self._logs[1:w - f + 1]      # log(r − F)
        else:
            self._log_lik[f:w] += self._logs[w - f:0:-1]               # log(W − r)
        self.found += y
        self.audit_labels += 1
        self.audit_hits += y
        self._after(AUDIT, y)

    def _check(self, label: int, move: str) -> int:
        if self.unread == 0:
            raise ValueError(f"every one of the {self.total} documents is read: no {move} step is left")
        if label not in (0, 1) or isinstance(label, bool | float):
            raise ValueError(f"a label is 0 or 1, got {label!r}")
        return int(label)

    def _fix_prior(self) -> None:
        mean = self.rule.prior_mean_at(self.found, self.labels, self.total)   # every step so far screened
        rho = mean / (1.0 + mean)
        self.prior_mean = float(mean)
        self._log_rho = math.log(rho)
        self._support = min(self.unread, math.ceil(math.log(PRIOR_TAIL) / self._log_rho))
        self._anchor = self.found

    def _after(self, move: str, y: int) -> None:
        self.unread -= 1
        self.moves.append(move)
        self.labels.append(y)
        f, w = self.found, self.found + self.unread
        self._running = max(self._running, f)   # R ≥ F_t: a bound below it is raised to it
        r0 = min(self._running, w)
        new = r0 if not self.started or self._kept(r0) else min(r0, self.upper())
        if new < self._running:
            self._running, self._running_step = new, len(self.moves)
        if self.met_step is None and self.certified:   # once met, always met (the running bound)
            self.met_step = len(self.moves)

    def _kept(self, r: int) -> bool:
        return bool(self._log_lam[r] < self.rule.log_level)

    def upper(self) -> int:
        """``max C_t`` now: the largest ``R`` the confidence sequence keeps (``F_t`` if it keeps none)."""
        f, w = self.found, self.found + self.unread
        if not self.started:
            return w
        kept = np.flatnonzero(self._log_lam[f:w + 1] < self.rule.log_level)
        return f + int(kept[-1]) if kept.size else f

    def copy(self) -> InterleavedReview:
        """An independent copy: stepping it leaves this review as it is."""
        twin = copy.copy(self)
        twin._log_lik, twin._log_lam = self._log_lik.copy(), self._log_lam.copy()
        twin.moves, twin.labels = list(self.moves), list(self.labels)
        return twin

    def log_evidence(self, r: int) -> float:
        """``log Λ_t(r)``: the evidence against ``R = r`` (``-inf`` before the first audit step)."""
        f, w = self.found, self.found + self.unread
        if not f <= r <= w:
            return math.inf
        return float(self._log_lam[r]) if self.started else -math.inf

    def log_likelihood(self) -> NDArray[np.float64]:
        """``log L_t(r)`` for ``r = F_t … W_t`` (zeros before the first audit step); a copy."""
        return self._log_lik[self.found:self.found + self.unread + 1].copy()

    @property
    def running_upper(self) -> int:
        """``min_{s ≤ t} max C_s`` (at least ``F_t``): the bound on ``R`` the certificate uses."""
        return self._running

    @property
    def running_step(self) -> int:
        """The step (documents read) at which :attr:`running_upper` was last lowered."""
        return self._running_step

    @property
    def recall_lower(self) -> float:
        """``F_t / min_s max C_s``: the certified lower bound on the review's recall now."""
        return self.found / self._running if self._running else 1.0

    @property
    def certified(self) -> bool:
        """Whether "recall ≥ ρ" is certified now (``min_s max C_s ≤ ⌊F_t/ρ⌋``)."""
        return self._running <= self.rule.allowed_total(self.found)

    def audits_to_certify(self) -> int:
        """How many more audit reads certify the target if none of them is relevant (0 once
        certified): the review's tail in the best case for the audit, a projection for planning,
        not part of any claim. Each relevant document found, and each screening step, changes it.
        At most the unread count: with everything read the bound is ``F`` itself.

        Found without stepping (which costs ``O(N)`` per step: 7.7 s for a review of 14,717 records
        at its start). With no audit hit ``F``, the anchor and the prior stay put, and the one-sided
        predictives telescope (module docstring): after ``n`` more irrelevant audit reads,

            log Λ(h) += log Σ_{r ∈ S(h)} w(r) G_n(r) − log Σ_{r ∈ S(h)} w(r) − log G_n(h),

        with ``w(r) = ρ^{r − A} L(r)`` the weights now, ``S(h)`` the counts below ``h`` in their
        support, and ``G_n(r) = (W − r)!/(W − r − n)!`` the chance, times ``|U|!/(|U| − n)!``, that
        ``n`` draws meet no relevant document when ``R = r``. Each step raises every ``Λ(h)`` (the
        counts below ``h`` make an irrelevant read likelier than ``h`` does) and the hypotheses end
        at ``W − n``, so "``max C ≤ ⌊F/ρ⌋``" once true stays true, and the least such ``n`` is found
        by bisection. A count whose evidence comes within ``1e-7`` nats of ``log(1/δ)`` counts as
        not yet refuted: at an exact tie (``Λ = 1/δ`` in exact arithmetic, as with no relevant
        document found, where ``Λ(1) = W/(W − n)``) rounding decides the certificate's own step, and
        the projection then says one read more, which is still true, since a met target stays met.
        The tests check it against stepping, read by read, equal but at such ties.
        """
        if self.certified:
            return 0
        if not self.started:   # the first audit read fixes the prior: take it, then project
            probe = self.copy()
            probe.audit(0)
            return 1 + probe.audits_to_certify()
        lo, hi = 1, self.unread   # met after hi reads (everything read); not after lo − 1
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self._met_after(mid) else (mid + 1, hi)
        return lo

    def _met_after(self, n: int) -> bool:
        """Whether ``max C ≤ ⌊F/ρ⌋`` after ``n`` more irrelevant audit reads (:meth:`audits_to_certify`)."""
        from scipy.special import gammaln

        f, w, allowed = self.found, self.found + self.unread, self.rule.allowed_total(self.found)
        if w - n <= allowed:
            return True
        hi = min(self._anchor + self._support, w)
        if hi < f:             # no prior mass left: no read moves Λ (the step leaves it unchanged)
            return False
        r = np.arange(f, hi + 1)
        log_w = (r - self._anchor) * self._log_rho + self._log_lik[f:hi + 1]
        with np.errstate(divide="ignore"):
            log_g = np.where(r <= w - n, gammaln(w - r + 1) - gammaln(np.maximum(w - r - n, 0) + 1), -np.inf)
            num = np.logaddexp.accumulate(log_w + log_g)
            den = np.logaddexp.accumulate(log_w)
        h = np.arange(allowed + 1, w - n + 1)       # the hypotheses to refute, all above F
        below = np.minimum(h - 1, hi) - f           # S(h) ends there
        log_lam = (self._log_lam[h] + num[below] - den[below]
                   - (gammaln(w - h + 1) - gammaln(w - h - n + 1)))
        return bool((log_lam >= self.rule.log_level + 1e-7).all())

    def allowed_unfound(self) -> int:
        """Relevant documents that may still be unread for recall ``≥ ρ`` now: ``⌊F/ρ⌋ − F``."""
        return self.rule.allowed_total(self.found) - self.found


#: the engines kept in the current :func:`keeping` block (:func:`remember`); None outside one
_KEPT: ContextVar[dict[str, InterleavedReview] | None] = ContextVar("rankcut_kept_engines", default=None)


@contextlib.contextmanager
def keeping() -> Iterator[None]:
    """Within the block, :func:`remember` keeps engines for :func:`replay` (outside a block it keeps
    none): the replays of one command share them, and they are freed when it ends. A block inside a
    block is the outer one. The engines kept are copies that nothing steps, so threads that share
    the block (a copied context) may share them."""
    if _KEPT.get() is not None:
        yield
        return
    token = _KEPT.set({})
    try:
        yield
    finally:
        _KEPT.reset(token)


def remember(review: InterleavedReview, *, certified: bool = False) -> None:
    """Within a :func:`keeping` block, keep a copy of ``review`` for :func:`replay`: a replay of
    exactly its steps (the same collection, rule, moves and labels) takes a copy of it instead of
    stepping again, which costs ``O(N)`` an audit step (about half a millisecond at 150,000
    documents: docs/review.md, "One replay a command"). So a caller that stepped a review (the
    audit folder's replay) spares the certificate's recomputation from the same steps a second
    pass. Two a block: the last one, and the last one kept as
    ``certified`` (the steps a certificate counted, passed on the way to more)."""
    kept = _KEPT.get()
    if kept is not None:
        kept["certified" if certified else "last"] = review.copy()


def replay(total: int, moves: str, labels: str, rule: InterleavedRule) -> InterleavedReview:
    """The review after the recorded steps (``moves`` of ``s``/``a``, ``labels`` of ``0``/``1``);
    a copy of one :func:`remember` kept when that one took exactly these steps (the engine is
    deterministic: the same steps give the same review)."""
    if len(moves) != len(labels):
        raise ValueError(f"{len(moves)} moves but {len(labels)} labels")
    if len(moves) > total:
        raise ValueError(f"{len(moves)} steps exceed the collection's {total} documents")
    for twin in (_KEPT.get() or {}).values():
        if (twin.total == total and twin.rule == rule and len(twin.moves) == len(moves)
                and "".join(twin.moves) == moves and "".join(map(str, twin.labels)) == labels):
            return twin.copy()
    review = InterleavedReview(total, rule)
    for i, (m, y) in enumerate(zip(moves, labels, strict=True)):
        if m not in (SCREEN, AUDIT) or y not in "01":
            raise ValueError(f"step {i + 1}: a move is 's' or 'a' and a label '0' or '1', got {m!r}, {y!r}")
        (review.screen if m == SCREEN else review.audit)(int(y))
    remember(review)
    return review


@certificate_function(
    "interleaved_recall",
    theorem=("interleaved review (one-sided predictable mixture confidence sequence for R, "
             "Ville's inequality)"),
)
def interleaved_recall_certificate(total: int, moves: str, labels: str, target: float = 0.8,
                                   delta: float = 0.05, prior_scale: float | None = None,
                                   prior_mean: float | None = None, items: str = "documents",
                                   prior_basis: str = "misses") -> Certificate:
    """Recall of an interleaved review, anytime-valid (the theorem of this module).

    :param total: ``N``, the collection's size.
    :param moves: one character a step read: ``s`` screened, ``a`` the next unread document of
        the frozen audit order.
    :param labels: the 0/1 label of each step's document, as a string of ``0``/``1``.
    :param items: what the statement calls the collection's members ("records" for a review of
        records); words only.
    :param prior_basis: the basis of the prior mean (:class:`InterleavedRule`).
    :returns: ``quantity="recall"``, ``side="lower"``: ``F_t / min_s max C_s``;
        ``details["certified"]`` says whether it meets ``target``.
    """
    rule = InterleavedRule(target, delta, prior_scale, prior_mean, prior_basis)
    review = replay(check_count(total, "total"), moves, labels, rule)
    upper, ok = review.running_upper, review.certified
    screened = moves.count(SCREEN)
    first = review.met_step   # read on after it: the statement says when the target was first met
    met = (f"met (first at step {first} of the {review.read} read)" if first not in (None, review.read)
           else "met")
    return Certificate(
        quantity="recall",
        side="lower",
        value=review.recall_lower,
        theorem=theorem_of("interleaved_recall"),
        function="interleaved_recall",
        inputs={"total": total, "moves": moves, "labels": labels, "target": target, "delta": delta,
                "prior_scale": prior_scale, "prior_mean": prior_mean, "items": items,
                "prior_basis": prior_basis},
        allocation={"audit": float(delta)},
        delta=float(delta),
        statement=(
            f"With confidence {confidence_text(delta)}, the review "
            f"{found_share(review.recall_lower, upper, items, all_read=review.read == total)}: "
            f"{review.found} found in {review.read} of {total} {items} read ({screened} screened, "
            f"{review.audit_labels} in the frozen audit order, {review.audit_hits} of them relevant), "
            f"at most {upper - review.found} relevant left unread"
            + unread_clause(upper - review.found, total - review.read, "not read")
            + "anytime-valid: it holds wherever "
            f"the review stops, whatever decided each move); target {target:g} "
            f"{met if ok else 'not met yet'}."
        ),
        details={"relevant_upper": upper, "allowed_total": rule.allowed_total(review.found),
                 "certified": ok, "met_step": review.met_step, "best_step": review.running_step,
                 "prior_mean": review.prior_mean},
    )


def audit_order_draw(order: NDArray[np.int64], pointer: int, read: NDArray[np.bool_]) -> tuple[int, int]:
    """The next still-unread document of the frozen audit ``order`` from ``pointer`` on.

    :returns: ``(document, new pointer)``; the documents skipped were read by screening.
    """
    while read[order[pointer]]:
        pointer += 1
    return int(order[pointer]), pointer + 1
