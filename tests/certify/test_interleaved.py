"""The interleaved review's confidence sequence: the lemma, the theorem, the special case, the edges.

Validity is checked by exact enumeration of every audit order on small collections, for policies
that see the whole labelling and switch moves on the labels; reference values come from an
independent (slow, direct) implementation of the definition in the module docstring.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import pytest
from scipy.special import logsumexp

from rankcut.certify import recompute
from rankcut.certify.interleaved import (
    AUDIT,
    PRIOR_BASES,
    SCREEN,
    TAIL_FIT,
    TAIL_FLOOR,
    InterleavedReview,
    InterleavedRule,
    interleaved_recall_certificate,
    keeping,
    remember,
    replay,
)
from rankcut.certify.policies import (
    MarginalCostPolicy,
    PrecisionPolicy,
    ProjectedCostPolicy,
    ScreenThenAudit,
)
from rankcut.certify.screening import tail_estimate
from rankcut.certify.sequential import PRIOR_TAIL, SequentialAudit, default_prior_mean
from rankcut.certify.simulate import play, simulate_interleaved

# A policy of the enumeration: (review, read mask, labelling, step) -> (move, document to screen)
Chooser = Callable[[InterleavedReview, np.ndarray, np.ndarray, list], tuple[str, int]]


def _top_unread(read: np.ndarray) -> int:
    return int(np.flatnonzero(~read)[0])


def screen_then_audit(k: int) -> Chooser:
    return lambda rev, read, y, hist: (SCREEN if rev.read < k else AUDIT, _top_unread(read))


def alternate(rev, read, y, hist):
    return (SCREEN if rev.read % 2 else AUDIT), _top_unread(read)


def back_to_screening(rev, read, y, hist):
    """Audit; after an audit hit, screen the top unread document (the default policy's reflex)."""
    hit = bool(hist) and hist[-1][0] == AUDIT and hist[-1][2] == 1
    return (SCREEN if hit else AUDIT), _top_unread(read)


def hide_and_audit(rev, read, y, hist):
    """Knows the labelling: screens only non-relevant documents, and does so after every audit hit
    (so the unread pool is relevant-rich but the audit saw few), else audits."""
    neg = np.flatnonzero(~read & (y == 0))
    hit = bool(hist) and hist[-1][2] == 1
    return (SCREEN, int(neg[0])) if hit and neg.size else (AUDIT, _top_unread(read))


def early_prior_then_screen_negatives(rev, read, y, hist):
    """Knows the labelling: one audit draw first (the prior is fixed with nothing found), then screens
    the non-relevant documents and audits only when none is left."""
    neg = np.flatnonzero(~read & (y == 0))
    if rev.audit_labels == 0 or not neg.size:
        return AUDIT, _top_unread(read)
    return SCREEN, int(neg[0])


def hashed(seed: int) -> Chooser:
    """A deterministic function of the history: moves and the screened document by a hash."""
    def choose(rev, read, y, hist):
        h = hash((seed, tuple(hist))) & 0xFFFF
        unread = np.flatnonzero(~read)
        return (SCREEN if h % 3 == 0 else AUDIT), int(unread[(h // 3) % unread.size])
    return choose


def enumerate_claims(y: np.ndarray, choose: Chooser, rule: InterleavedRule) -> tuple[float, float]:
    """Exact ``P(false claim)`` and ``P(claim before the end)`` over every audit order."""
    n = y.size
    false = claims = 0
    perms = list(itertools.permutations(range(n)))
    for perm in perms:
        rev, read, hist, pointer = InterleavedReview(n, rule), np.zeros(n, dtype=bool), [], 0
        while rev.unread and not rev.certified:
            move, doc = choose(rev, read, y, hist)
            if move == AUDIT:
                while read[perm[pointer]]:
                    pointer += 1
                doc = perm[pointer]
            assert not read[doc]
            read[doc] = True
            (rev.screen if move == SCREEN else rev.audit)(int(y[doc]))
            hist.append((move, int(doc), int(y[doc])))
        if rev.certified and rev.unread:
            claims += 1
            false += int(y.sum()) > rule.allowed_total(rev.found)
    return false / len(perms), claims / len(perms)


POLICIES = {"screen 0": screen_then_audit(0), "screen 2": screen_then_audit(2), "alternate": alternate,
            "back to screening": back_to_screening, "hide and audit": hide_and_audit,
            "early prior": early_prior_then_screen_negatives,
            **{f"hashed {s}": hashed(s) for s in range(4)}}


@pytest.mark.parametrize("name", sorted(POLICIES))
@pytest.mark.parametrize(("labels", "target", "delta", "prior_mean", "basis"), [
    ("110000", 0.5, 0.3, None, "misses"), ("101010", 0.8, 0.3, None, "misses"),
    ("000011", 0.5, 0.2, 2.0, "misses"), ("1111000", 0.8, 0.4, 0.5, "misses"),
    ("110000", 0.5, 0.3, None, "tail"), ("101010", 0.8, 0.3, None, "tail"),
    ("1100100", 0.5, 0.4, None, "tail")])
def test_false_claims_at_most_delta_for_every_policy(name, labels, target, delta, prior_mean, basis):
    y = np.array([int(c) for c in labels])
    rule = InterleavedRule(target, delta, prior_mean=prior_mean, prior_basis=basis)
    false, _ = enumerate_claims(y, POLICIES[name], rule)
    assert false <= delta + 1e-12


def test_the_enumeration_can_see_a_false_claim():
    """The check above bites: a confidence sequence that keeps too little (δ read as 1) claims falsely
    often, and the adversaries make claims at all."""
    y = np.array([1, 0, 1, 0, 1, 0, 0])
    loose = InterleavedRule(0.8, 0.999)
    assert enumerate_claims(y, hide_and_audit, loose)[0] > 0.3
    assert enumerate_claims(y, alternate, InterleavedRule(0.5, 0.3))[1] > 0


def test_next_unread_of_a_frozen_order_is_uniform():
    """The lemma: given the history, the next unread document of the order is uniform on the unread."""
    y = np.array([1, 0, 1, 0, 0])
    seen: dict[tuple, Counter] = defaultdict(Counter)
    unread_of: dict[tuple, frozenset] = {}
    for perm in itertools.permutations(range(5)):
        read, hist, pointer = np.zeros(5, dtype=bool), [], 0
        while not read.all():
            # adaptive: screen the lowest unread id after an audit hit, else audit
            hit = bool(hist) and hist[-1][0] == AUDIT and y[hist[-1][1]]
            if hit:
                doc, move = _top_unread(read), SCREEN
            else:
                while read[perm[pointer]]:
                    pointer += 1
                doc, move = perm[pointer], AUDIT
                seen[tuple(hist)][doc] += 1
                unread_of[tuple(hist)] = frozenset(np.flatnonzero(~read).tolist())
            read[doc] = True
            hist.append((move, int(doc)))
    assert len(seen) > 20
    for h, counts in seen.items():
        assert set(counts) == unread_of[h]
        assert len(set(counts.values())) == 1, (h, counts)


def _reference_bounds(total: int, moves: str, labels: str, rule: InterleavedRule) -> list[int]:
    """``min(running, max C_t)`` after every step, from the definition, one hypothesis at a time:
    ``Λ(r)`` multiplies the one-sided predictive over the prior's counts below ``r`` by ``1/q_r``."""
    f, unread, anchor, screened = 0, total, None, []
    log_lik = {r: 0.0 for r in range(total + 1)}
    log_lam = {r: 0.0 for r in range(total + 1)}
    running, out = total, []
    support = log_rho = 0.0
    for m, c in zip(moves, labels, strict=True):
        y, w = int(c), f + unread
        if m == AUDIT:
            if anchor is None:
                if rule.prior_basis == "misses":
                    scale = 0.5 if rule.prior_scale is None else rule.prior_scale
                    mean = default_prior_mean(f, rule.target, scale)
                else:   # the tail projection of the labels screened so far, all of them before τ
                    mean = max(tail_estimate(np.array(screened), len(screened), total, TAIL_FIT)
                               * (1.0 if rule.prior_scale is None else rule.prior_scale), TAIL_FLOOR)
                log_rho = math.log(mean / (1 + mean))
                support = min(unread, math.ceil(math.log(PRIOR_TAIL) / log_rho))
                anchor = f
            for h in range(f, w + 1):
                rs = [r for r in range(f, min(w, h - 1) + 1) if r <= anchor + support]
                q_h = (h - f) if y else (w - h)
                if not rs:
                    continue                                   # p̂ = q_h: Λ(h) unchanged
                lw = np.array([(r - anchor) * log_rho + log_lik[r] for r in rs])
                q = np.array([(r - f) if y else (w - r) for r in rs], dtype=float)
                share = float(logsumexp(lw, b=q) - logsumexp(lw)) if q.any() else -math.inf
                log_lam[h] = log_lam[h] + share - math.log(q_h) if q_h else math.inf
            for r in range(f, w + 1):
                p = (r - f) / unread if y else (w - r) / unread
                log_lik[r] = log_lik[r] + math.log(p * unread) if p > 0 else -math.inf
            f += y
        else:
            f += y
            screened.append(y)
            if anchor is not None:
                anchor += y
        unread -= 1
        w = f + unread
        if anchor is None:
            upper = w
        else:
            kept = [r for r in range(f, w + 1) if log_lam[r] < math.log(1 / rule.delta)]
            upper = max(kept) if kept else f
        running = max(min(running, upper), f)
        out.append(running)
    return out


@pytest.mark.parametrize("seed", range(24))
def test_engine_matches_the_definition(seed):
    rng = np.random.default_rng(seed)
    total = int(rng.integers(5, 120))
    moves = "".join(rng.choice([SCREEN, AUDIT], size=total, p=[0.4, 0.6]))
    labels = "".join(str(int(v)) for v in rng.random(total) < rng.choice([0.05, 0.3]))
    rule = InterleavedRule(float(rng.choice([0.5, 0.8, 0.95])), float(rng.choice([0.05, 0.3])),
                           prior_scale=[None, 0.25, 2.0][seed % 3], prior_basis=PRIOR_BASES[seed % 2])
    rev = InterleavedReview(total, rule)
    got = []
    for m, c in zip(moves, labels, strict=True):
        (rev.screen if m == SCREEN else rev.audit)(int(c))
        got.append(rev.running_upper)
    assert got == _reference_bounds(total, moves, labels, rule)


@pytest.mark.parametrize("seed", range(40))
def test_screen_then_audit_reproduces_the_sequential_audit(seed):
    """The special case: screen k, then only audit, with today's prior — the same running bound at
    every audit label as :class:`SequentialAudit` (``F + M``), so the same certificates. With the
    ``tail`` basis, the same as the sequential audit whose prior mean is the rule's tail mean (what
    ``benchmarks/bench_review_stops.py`` relies on for its single-switch costs)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    k = int(rng.integers(1, n))
    y = (rng.random(n) < np.linspace(0.5, 0.01, n)).astype(int)
    target, delta = float(rng.choice([0.5, 0.8, 0.95])), float(rng.choice([0.05, 0.2]))
    rule = InterleavedRule(target, delta, prior_basis=PRIOR_BASES[seed % 2])
    rev = InterleavedReview(n, rule)
    for v in y[:k]:
        rev.screen(int(v))
    found = int(y[:k].sum())
    pool = y[k:][rng.permutation(n - k)]
    mean = default_prior_mean(found, target) if rule.prior_basis == "misses" else max(
        tail_estimate(y[:k], k, n, TAIL_FIT), TAIL_FLOOR)
    audit = SequentialAudit(pool=n - k, found=found, target=target, delta=delta, prior_mean=mean)
    running, _ = audit.running_upper(pool)
    for t, v in enumerate(pool, start=1):
        rev.audit(int(v))
        assert rev.running_upper == found + running[t]
        assert rev.certified == bool(running[t] <= audit.allowed_misses(int(pool[:t].sum())))


@pytest.mark.parametrize("seed", range(10))
def test_audits_to_certify_is_the_first_all_irrelevant_audit_run_that_meets_the_target(seed):
    """``audits_to_certify``: by the definition (the reference bounds), the review with that many
    irrelevant audit labels appended meets the target and with one fewer does not; it does not
    change the review; each irrelevant audit read takes one off it; 0 once certified."""
    rng = np.random.default_rng(seed)
    total = int(rng.integers(8, 50))
    t = int(rng.integers(0, total))
    moves = "".join(rng.choice([SCREEN, AUDIT], size=t, p=[0.6, 0.4]))
    labels = "".join(str(int(v)) for v in rng.random(t) < 0.4)
    rule = InterleavedRule(float(rng.choice([0.5, 0.8, 0.95])), float(rng.choice([0.05, 0.3])))
    rev = replay(total, moves, labels, rule)
    n = rev.audits_to_certify()
    assert rev.moves == list(moves) and 0 <= n <= rev.unread

    def met_after(extra: int) -> bool:
        bounds = _reference_bounds(total, moves + AUDIT * extra, labels + "0" * extra, rule)
        return (bounds[-1] if bounds else total) <= rule.allowed_total(rev.found)

    assert met_after(n) and (n == 0 or not met_after(n - 1))
    assert (n == 0) == rev.certified
    if n:
        rev.audit(0)
        assert rev.audits_to_certify() == n - 1


def _audits_by_steps(rev: InterleavedReview) -> tuple[int, bool]:
    """The irrelevant audit reads that certify, by stepping read by read; and whether the step
    that certifies is an exact tie (a count's evidence within 1e-7 nats of ``log(1/δ)``)."""
    probe, n = copy.deepcopy(rev), 0
    while not probe.certified:
        probe.audit(0)
        n += 1
    hyp = np.arange(probe.rule.allowed_total(probe.found) + 1, probe.found + probe.unread + 1)
    tie = probe.started and n > 0 and bool(np.any(np.abs(probe._log_lam[hyp] - probe.rule.log_level) < 1e-7))
    return n, tie


@pytest.mark.parametrize("seed", range(300))
def test_audits_to_certify_without_stepping_is_the_stepped_count(seed):
    """The bisection over the telescoped evidence gives the count stepping gives, before and after
    the first audit read, with audit hits, with the prior's support used up (a small fixed prior
    mean), at every target and both bases; one more only where stepping certifies at an exact tie
    (where rounding decides, and one more is still true)."""
    rng = np.random.default_rng(seed)
    total = int(rng.integers(1, 120 if seed % 10 else 900))
    t = int(rng.integers(0, total))
    moves = "".join(rng.choice([SCREEN, AUDIT], size=t, p=[p := rng.uniform(0.02, 0.6), 1 - p]))
    labels = "".join(str(int(v)) for v in rng.random(t) < rng.uniform(0, 0.5))
    rule = InterleavedRule(float(rng.choice([0.5, 0.8, 0.95, 1.0])), float(rng.choice([0.05, 0.3])),
                           prior_scale=[None, 0.25, 2.0][seed % 3], prior_basis=PRIOR_BASES[seed % 2],
                           prior_mean=0.05 if seed % 7 == 0 else None)
    rev = replay(total, moves, labels, rule)
    fast = rev.audits_to_certify()
    steps, tie = _audits_by_steps(rev)
    assert fast == steps or (tie and fast == steps + 1), (fast, steps)
    assert rev.moves == list(moves)   # the projection leaves the review as it was


def test_screening_everything_is_exact():
    rev = InterleavedReview(5)
    for v in (1, 0, 1, 1, 0):
        rev.screen(v)
    assert rev.running_upper == 3 and rev.recall_lower == 1.0 and rev.certified
    with pytest.raises(ValueError, match="every one of the 5 documents is read"):
        rev.audit(0)


def test_empty_collection_and_no_relevant():
    empty = InterleavedReview(0)
    assert empty.certified and empty.recall_lower == 1.0 and empty.running_upper == 0
    rev = InterleavedReview(3)
    for v in (0, 0, 0):
        rev.audit(v)
    assert rev.running_upper == 0 and rev.certified


@pytest.mark.parametrize("seed", range(6))
def test_bound_never_rises_and_a_claim_once_met_stays(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random(300) < np.linspace(0.6, 0.02, 300)).astype(int)
    rev = InterleavedReview(300)
    bounds, recalls, met = [], [], []
    for i, v in enumerate(y):
        (rev.screen if i < 80 or i % 7 == 0 else rev.audit)(int(v))
        bounds.append(rev.running_upper)
        recalls.append(rev.recall_lower)
        met.append(rev.certified)
        assert rev.found <= rev.running_upper <= rev.found + rev.unread
    assert all(a >= b for a, b in itertools.pairwise(bounds))
    assert all(a <= b for a, b in itertools.pairwise(recalls))
    assert all(b for a, b in itertools.pairwise(met) if a)


def test_bad_labels_and_replays_are_refused():
    rev = InterleavedReview(4)
    for bad in (2, -1, 0.5, True):
        with pytest.raises(ValueError, match="a label is 0 or 1"):
            rev.screen(bad)
    with pytest.raises(ValueError, match="3 moves but 2 labels"):
        replay(4, "ssa", "01", InterleavedRule())
    with pytest.raises(ValueError, match="step 2: a move is 's' or 'a'"):
        replay(4, "sx", "01", InterleavedRule())
    with pytest.raises(ValueError, match="5 steps exceed the collection's 4 documents"):
        replay(4, "sssss", "00000", InterleavedRule())


def test_certificate_recomputes_from_json_and_states_the_claim():
    rng = np.random.default_rng(3)
    y = (rng.random(400) < np.linspace(0.5, 0.0, 400)).astype(int)
    run = play(y, rng.permutation(400), ProjectedCostPolicy())
    cert = interleaved_recall_certificate(400, run.moves, run.labels)
    again = recompute(json.loads(cert.to_json()))
    assert again.value == cert.value and again.details == cert.details
    assert cert.details["certified"] == run.certified
    assert "anytime-valid" in cert.statement and ("met" in cert.statement)


def test_a_bound_of_nothing_unread_says_it_is_not_a_certainty():
    """'found at least 100% ... at most 0 relevant left unread' with 48 documents unread read as a
    certainty that nothing was missed (the TAR practitioner walk, CLEF CD010633 at 0.95): the
    statement says how many were not read and that the bound is one at its confidence; once all
    is read it says nothing of the kind."""
    cert = interleaved_recall_certificate(300, "s" * 3 + "a" * 290, "111" + "0" * 290, target=0.5)
    assert cert.details["relevant_upper"] == 3
    assert ("at most 0 relevant left unread among the 7 not read (a bound at this confidence, not a "
            "certainty; anytime-valid") in cert.statement
    whole = interleaved_recall_certificate(3, "sss", "111", target=0.5)
    assert "not a certainty" not in whole.statement and "left unread (anytime-valid" in whole.statement
    none = interleaved_recall_certificate(10, "a" * 10, "0" * 10)   # nothing relevant: not "at least 100%"
    assert "as there are none" in none.statement   # all read: certain
    early = interleaved_recall_certificate(300, "a" * 290, "0" * 290)   # 10 unread: a bound
    assert early.details["relevant_upper"] == 0 and "as the bound leaves none to miss" in early.statement
    assert none.value == 1.0 and "100%" not in none.statement
    assert "missed none of the relevant documents, as there are none (recall is taken as 1)" in none.statement


def test_tail_prior_is_the_screened_tail_projection_and_recomputes():
    """``prior_basis="tail"`` fixes the mean at the first audit step from the screened labels' tail (a
    ranking that has run dry gets a small mean, a rich one a large mean), and the certificate
    replays it from its inputs."""
    dry = np.r_[np.ones(40, dtype=int), np.zeros(360, dtype=int)]
    rich = (np.arange(400) % 3 == 0).astype(int)
    rule = InterleavedRule(0.8, 0.05, prior_basis="tail")
    means = {}
    for name, y in (("dry", dry), ("rich", rich)):
        rev = InterleavedReview(y.size, rule)
        for v in y[:100]:
            rev.screen(int(v))
        rev.audit(0)
        means[name] = rev.prior_mean
        assert means[name] == max(tail_estimate(y[:100], 100, y.size, TAIL_FIT), TAIL_FLOOR)
    assert means["dry"] < 1 < 50 < means["rich"]
    misses = InterleavedRule(0.8, 0.05)
    assert misses.prior_mean_at(40, dry[:100].tolist(), 400) == default_prior_mean(40, 0.8, 0.5)
    assert InterleavedRule(prior_basis="tail", prior_scale=2.0).prior_mean_at(33, rich[:100].tolist(), 400) \
        == pytest.approx(2 * means["rich"])
    run = play(dry, np.random.default_rng(1).permutation(400), ProjectedCostPolicy(), rule)
    cert = interleaved_recall_certificate(400, run.moves, run.labels, prior_basis="tail")
    again = recompute(json.loads(cert.to_json()))
    assert again.value == cert.value and again.details == cert.details
    assert cert.inputs["prior_basis"] == "tail"
    assert cert.details["certified"] == run.certified
    assert cert.details["prior_mean"] == means["dry"]


@pytest.mark.parametrize("kw", [{"prior_basis": "flat"}, {"prior_scale": 0.0}, {"prior_mean": -1.0}])
def test_bad_rule_constants_are_refused(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        InterleavedRule(**kw)


@pytest.mark.parametrize(("policy", "kw"), [
    (ProjectedCostPolicy, {"batch": 0}), (ProjectedCostPolicy, {"overhead": 0.0}),
    (PrecisionPolicy, {"batch": 0}), (PrecisionPolicy, {"chunk": 2.5}), (PrecisionPolicy, {"window": -1}),
    (PrecisionPolicy, {"ratio": -1.0}), (PrecisionPolicy, {"margin": float("nan")}),
    (MarginalCostPolicy, {"chunk": 0}), (MarginalCostPolicy, {"need": 0.0}),
])
def test_bad_policy_constants_are_refused(policy, kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        policy(**kw)


def test_policies_are_checked():
    y = np.array([1, 0, 1, 0])
    with pytest.raises(ValueError, match="permutation"):
        play(y, [0, 1, 2, 2], ScreenThenAudit(2))
    with pytest.raises(ValueError, match="returns 's' or 'a'"):
        play(y, [0, 1, 2, 3], lambda state: "x")


def test_simulation_is_seeded_and_the_default_policy_returns_to_screening():
    """On a ranking whose tail hides relevant documents below a dry stretch, the default policy's
    audit finds them and it screens again (an early switch is not fatal)."""
    rng = np.random.default_rng(0)
    head = (rng.random(200) < 0.5).astype(int)
    y = np.concatenate([head, np.zeros(300, int), (rng.random(200) < 0.3).astype(int), np.zeros(1300, int)])
    a = simulate_interleaved(y, ProjectedCostPolicy(), seeds=range(5))
    b = simulate_interleaved(y, ProjectedCostPolicy(), seeds=range(5))
    assert np.array_equal(a.read, b.read)
    runs = [play(y, np.random.default_rng(s).permutation(y.size), ProjectedCostPolicy()) for s in range(5)]
    assert any("as" in r.moves and r.moves.index("a") < r.moves.rindex("s") for r in runs)
    assert not any(r.false_claim for r in runs)


@pytest.mark.parametrize("policy", [PrecisionPolicy(batch=1, chunk=1, window=3),
                                    ProjectedCostPolicy(batch=1, chunk=1, window=3),
                                    MarginalCostPolicy(batch=1, chunk=1, window=3, need=1.0),
                                    MarginalCostPolicy(batch=1, chunk=1, window=3, need=1.0, ratio=2.0)],
                         ids=repr)
@pytest.mark.parametrize("labels", ["110100", "101001"])
def test_library_policies_over_every_audit_order(policy, labels):
    y = np.array([int(c) for c in labels])
    rule = InterleavedRule(0.5, 0.3)
    runs = [play(y, perm, policy, rule) for perm in itertools.permutations(range(y.size))]
    assert np.mean([r.false_claim for r in runs]) <= 0.3
    assert any(r.certified for r in runs)


@pytest.mark.parametrize("labels", ["1100101", "1010101"])
def test_marginal_cost_probes_over_every_audit_order(labels):
    """The probe (a return from the audit cut short when its first rank is no richer than the
    audit's hit rate) changes the moves on some audit orders, and the claims stay valid on all."""
    y = np.array([int(c) for c in labels])
    rule = InterleavedRule(0.8, 0.3)
    perms = list(itertools.permutations(range(y.size)))
    plain, probing = (MarginalCostPolicy(batch=2, chunk=1, window=3, need=1.0, ratio=1.0, probe=p)
                      for p in (0, 1))
    runs = [play(y, perm, probing, rule) for perm in perms]
    assert any(r.moves != play(y, perm, plain, rule).moves for r, perm in zip(runs, perms, strict=True))
    assert np.mean([r.false_claim for r in runs]) <= 0.3
    assert any(r.certified for r in runs)


def _projected_audit_draws(rev: InterleavedReview, unread: int, unfound: float, found: int,
                           overhead: float = 0.5) -> float:
    """ProjectedCostPolicy's projected audit, one start at a time, as its docstring states it: the
    first of 80 geometrically spaced (rounded) sizes whose evidence on the expected path reaches
    log(1/δ) plus the prior's cost, less what the audit has shown."""
    from scipy.special import gammaln

    def log_h(x: float, n: float, k: float, big: float) -> float:
        def lc(a: float, b: float) -> float:
            return float(gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1))
        return lc(k, x) + lc(big - k, n - x) - lc(big, n)

    if unread <= 0:
        return 0.0
    big = float(unread)
    mean = rev.prior_mean if rev.prior_mean is not None else \
        rev.rule.prior_mean_at(found, rev.labels, rev.total)
    shown = max(rev.log_evidence(min(rev.rule.allowed_total(found) + 1, rev.found + rev.unread)), 0.0)
    need = rev.rule.log_level + overhead * math.log1p(mean) - shown
    for n in sorted({round(float(v)) for v in np.geomspace(1.0, big, 80)}):
        x = max(unfound, 0.0) * n / big
        k = math.floor((found + x) / rev.rule.target + 1e-9) + 1.0 - found
        if k > big - n + x:
            return float(n)
        m_hat = min(max(x * (big + 1.0) / n, x), big - n + x)
        if k > m_hat and log_h(x, n, m_hat, big) - log_h(x, n, k, big) >= need:
            return float(n)
    return big


@pytest.mark.parametrize("basis", ["misses", "tail"])
def test_projected_cost_projects_every_candidate_as_one_at_a_time(basis):
    """ProjectedCostPolicy projects the audit after each candidate screening depth in one array (a
    review of 200,000 documents spent 150 s in these projections, one call a candidate): each row
    must be the projection of that start alone, before and after the audit has begun."""
    rng = np.random.default_rng(5)
    y = (rng.random(3000) < np.linspace(0.3, 0.0, 3000)).astype(int)
    policy = ProjectedCostPolicy()
    rev = InterleavedReview(y.size, InterleavedRule(0.8, 0.05, prior_basis=basis))
    for v in y[:400]:
        rev.screen(int(v))
    for started in (False, True):
        if started:
            for v in rng.permutation(y[400:])[:30]:
                rev.audit(int(v))
        unread = np.array([rev.unread, rev.unread - 50, 700, 1, 0, -50, rev.unread - 2600, 2000, 2000])
        unfound = np.array([12.0, 9.5, 0.0, 0.5, 4.0, 1.0, 40.0, 30.0, 30.0])
        found = rev.found + np.array([0, 3, 30, 1, 0, 2, 7, 0, 300])
        got = policy._audit_costs(rev, unread, unfound, found)
        want = [_projected_audit_draws(rev, int(u), float(m), int(f))
                for u, m, f in zip(unread, unfound, found, strict=True)]
        assert got.tolist() == want, (started, got, want)
        assert 0 < got[0] < rev.unread and got[4] == got[5] == 0.0 and got[7] != got[8]


def test_a_replay_takes_the_review_kept_for_exactly_its_steps(audit_steps: list[int]) -> None:
    rule = InterleavedRule(0.8, 0.05)
    moves, labels = "s" * 12 + "a" * 40, "110100100000" + "0" * 39 + "1"
    steps = audit_steps
    replay(90, moves, labels, rule)
    replay(90, moves, labels, rule)               # outside a keeping block nothing is kept
    assert len(steps) == 80
    steps.clear()
    with keeping():
        first = replay(90, moves, labels, rule)
        assert len(steps) == 40
        again = replay(90, moves, labels, rule)   # kept by the first: not stepped again
        assert len(steps) == 40 and again is not first
        assert (again.moves, again.labels, again.running_upper, again.running_step, again.met_step) == \
            (first.moves, first.labels, first.running_upper, first.running_step, first.met_step)
        assert np.array_equal(again.log_likelihood(), first.log_likelihood())
        assert again.log_evidence(30) == first.log_evidence(30)
        again.audit(0)                            # a copy: stepping it leaves the kept one as it was
        assert len(replay(90, moves, labels, rule).moves) == 52 and len(steps) == 41
        # other labels, fewer steps, or another rule: stepped from the start, as without a kept review
        for other in ((moves, labels[:-1] + "0", rule), (moves[:-1], labels[:-1], rule),
                      (moves, labels, InterleavedRule(0.9, 0.05))):
            before = len(steps)
            got = replay(90, *other)
            assert len(steps) == before + other[0].count(AUDIT)
            assert "".join(got.moves) == other[0] and "".join(map(str, got.labels)) == other[1]
            assert got.rule == other[2]
    replay(90, moves, labels, rule)               # the block ended: what it kept is gone
    assert len(steps) == 41 + 40 + 39 + 40 + 40


def test_a_replay_of_the_certified_steps_takes_them_from_a_longer_review(audit_steps: list[int]) -> None:
    rule = InterleavedRule(0.8, 0.05)
    moves, labels = "s" * 12 + "a" * 40, "110100100000" + "0" * 40
    with keeping():
        review = InterleavedReview(90, rule)
        for i, (m, y) in enumerate(zip(moves, labels, strict=True)):
            (review.screen if m == SCREEN else review.audit)(int(y))
            if i + 1 == 30:
                remember(review, certified=True)   # the steps the last certify counted, on the way
        remember(review)
        steps = audit_steps
        steps.clear()
        kept = replay(90, moves[:30], labels[:30], rule)
        assert steps == [] and len(kept.moves) == 30
        fresh = InterleavedReview(90, rule)
        for m, y in zip(moves[:30], labels[:30], strict=True):
            (fresh.screen if m == SCREEN else fresh.audit)(int(y))
        assert (kept.running_upper, kept.met_step, kept.found, kept.unread) == \
            (fresh.running_upper, fresh.met_step, fresh.found, fresh.unread)
        assert np.array_equal(kept.log_likelihood(), fresh.log_likelihood())
        steps.clear()
        before = kept.running_upper
        remember(InterleavedReview(90, rule))      # a later review kept: the certified one stays
        assert replay(90, moves[:30], labels[:30], rule).running_upper == before and steps == []
