"""MarginalCostPolicy's decisions on hand-made label sequences: it screens while the recent
screened ranks are rich, audits once they run dry, goes back to screening after an audit hit,
projects an audit of fewer than the unread documents however few relevant were found, screens on
after an audit hit while the batches beat the audit's hit rate by ``ratio``, cuts a return short when
its probe does not, and its constants are checked."""

from __future__ import annotations

import math

import pytest

from rankcut.certify.interleaved import AUDIT, SCREEN, InterleavedRule
from rankcut.certify.policies import MarginalCostPolicy, ReviewState

POLICY = MarginalCostPolicy(batch=2, chunk=1, window=4, need=3.0)


def _state(total: int, screened: str, audited: str = "") -> ReviewState:
    """A review of ``total`` ranks: ``screened`` read top down, then ``audited`` from the bottom up."""
    state = ReviewState(total, InterleavedRule(0.8, 0.05))
    for rank, label in enumerate(screened):
        state.record(SCREEN, rank, int(label))
    for i, label in enumerate(audited):
        state.record(AUDIT, total - 1 - i, int(label))
    return state


def test_screens_while_the_recent_ranks_are_rich() -> None:
    assert POLICY(_state(400, "1" * 20)) == SCREEN


def test_audits_once_the_recent_ranks_run_dry() -> None:
    assert POLICY(_state(400, "1" * 20 + "0000")) == AUDIT
    # the window decides: the same dry batch after a rich window screens on
    assert MarginalCostPolicy(batch=2, chunk=1, window=24, need=3.0)(_state(400, "1" * 20 + "0000")) == SCREEN


def test_a_larger_audit_projection_keeps_it_screening() -> None:
    assert MarginalCostPolicy(batch=2, chunk=1, window=4, need=6.0)(_state(400, "1" * 20 + "0000")) == SCREEN


def test_returns_to_screening_after_an_audit_hit_and_audits_on_after_a_miss() -> None:
    assert POLICY(_state(400, "1" * 20 + "0000", "1")) == SCREEN
    assert POLICY(_state(400, "1" * 20 + "0000", "0")) == AUDIT


def test_the_first_batch_and_a_batch_under_way_are_screened() -> None:
    assert POLICY(_state(400, "1")) == SCREEN                       # first batch not read
    assert POLICY(_state(400, "1" * 20 + "00000")) == SCREEN        # batch of 2 under way


def test_an_audit_is_projected_under_the_unread_count_when_few_relevant_are_found() -> None:
    # 4 found: the smallest refuting count is 2 unread relevant. Read as |U|·need/2 draws, the audit
    # would cost more than reading everything, and the policy would screen to the end; drawn without
    # replacement, n draws miss both with probability (1 − n/|U|)², e^{−3} at n ≈ 0.78·|U|.
    policy = MarginalCostPolicy(batch=100, chunk=10, window=500, need=3.0)
    state = _state(2000, "1" * 4 + "0" * 596)
    assert policy._audit_draws(4, 1400, 0.8) == pytest.approx(1400 * (1 - math.exp(-1.5)))
    assert policy(state) == AUDIT


def _after_a_batch(audited: str) -> ReviewState:
    """20 found, 100 dry ranks, ``audited``, then a screened batch of 2 that found 1 (precision ½)."""
    state = _state(1000, "1" * 20 + "0" * 100, audited)
    state.record(SCREEN, state.frontier, 0)
    state.record(SCREEN, state.frontier, 1)
    return state


def _marginal(ratio: float) -> MarginalCostPolicy:
    return MarginalCostPolicy(batch=2, chunk=1, window=100, need=3.0, ratio=ratio)


def test_after_an_audit_hit_a_batch_richer_than_ratio_times_the_hit_rate_is_screened_on() -> None:
    # the window is dry, so the projection alone audits; the audit hit once in 9 draws (rate
    # (1 + ½)/10 = 0.15) and the last batch found 1 of 2 (0.5)
    state = _after_a_batch("100000000")
    assert _marginal(0.0)(state) == AUDIT                                  # the rule off
    assert _marginal(3.0)(state) == SCREEN and _marginal(3.0).rich_batch(state.review)   # 0.5 > 0.45
    assert _marginal(4.0)(state) == AUDIT and not _marginal(4.0).rich_batch(state.review)  # 0.5 < 0.6


def test_the_ratio_rule_waits_for_an_audit_hit() -> None:
    state = _after_a_batch("000000000")
    assert not _marginal(3.0).rich_batch(state.review)
    assert _marginal(3.0)(state) == _marginal(0.0)(state) == AUDIT


def _returned(probe_labels: str) -> ReviewState:
    """20 found, 100 dry ranks, an audit that hit once in 9 draws (rate 0.15), then ``probe_labels``
    screened on the return."""
    state = _state(1000, "1" * 20 + "0" * 100, "000000001")
    for label in probe_labels:
        state.record(SCREEN, state.frontier, int(label))
    return state


def _probing(**kw: float) -> MarginalCostPolicy:
    return MarginalCostPolicy(**{"batch": 4, "chunk": 1, "window": 100, "need": 3.0, "ratio": 3.0, "probe": 2,
                                 **kw})


def test_a_return_whose_probe_beats_ratio_times_the_hit_rate_reads_the_whole_batch() -> None:
    assert _probing()(_returned("1")) == SCREEN                       # the probe under way
    assert _probing().probe_read(_returned("01")) and _probing()(_returned("01")) == SCREEN   # 0.5 > 0.45
    assert not _probing().probe_read(_returned("011"))
    assert _probing()(_returned("010")) == SCREEN                     # the rest of the batch


def test_a_return_whose_probe_is_no_richer_goes_back_to_the_audit() -> None:
    assert _probing()(_returned("00")) == AUDIT
    assert _probing(ratio=4.0)(_returned("01")) == AUDIT              # 0.5 < 0.6
    # without the probe (0, the default, or ≥ batch, or the ratio rule off) the return reads the batch
    for off in ({"probe": 0}, {"probe": 4}, {"ratio": 0.0}):
        policy = _probing(**off)
        assert policy(_returned("00")) == SCREEN and not policy.probe_read(_returned("00"))
    assert MarginalCostPolicy().probe == 0


def test_the_first_screening_run_is_no_probe() -> None:
    state = _state(400, "10")                                          # no audit yet: the first batch
    assert not _probing().probe_read(state) and _probing()(state) == SCREEN


@pytest.mark.parametrize(("kw", "match"), [({"need": 0.0}, "need"), ({"window": 0}, "window"),
                                          ({"batch": 0}, "batch"), ({"chunk": 0}, "chunk"),
                                          ({"probe": -1}, "probe"), ({"probe": 2.5}, "probe"),
                                          ({"ratio": -1.0}, "ratio"), ({"ratio": math.inf}, "ratio")])
def test_constants_are_checked(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        MarginalCostPolicy(**kw)
