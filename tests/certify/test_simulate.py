"""The simulators (rankcut.certify.simulate) apart from the rules they play (rankcut.certify.screening)."""

from __future__ import annotations

import numpy as np
import pytest

from rankcut.certify import policies, screening, simulate
from rankcut.certify.policies import ScreenThenAudit


def test_the_rule_module_ships_no_simulator() -> None:
    sims = {"ReviewRuns", "simulate_screen_then_audit", "InterleavedRun", "InterleavedRuns", "play",
            "simulate_interleaved"}
    assert sims <= set(simulate.__all__)
    assert not sims & (set(vars(screening)) | set(vars(policies)))


def test_play_names_the_rank_of_a_bad_label() -> None:
    y = np.array([0, 1, 2, 0])
    with pytest.raises(ValueError, match="labels must be 0 or 1: rank 3 holds 2"):
        simulate.play(y, np.arange(4), ScreenThenAudit(2))
    with pytest.raises(ValueError, match="labels must be 0 or 1: rank 3 holds 2"):
        simulate.simulate_interleaved(y, ScreenThenAudit(2), seeds=range(1))


class _Backwards:
    """Screens from the last document up: a screener that never reads the frontier."""

    def next_screen(self, state: policies.ReviewState) -> int:
        return int(np.flatnonzero(state.rank_labels < 0)[-1])


def test_play_screens_the_document_the_screener_picks() -> None:
    y = np.array([1, 0, 0, 0, 1, 1])
    run = simulate.play(y, np.arange(6), ScreenThenAudit(3), screener=_Backwards())
    assert run.moves.startswith("sss") and run.labels.startswith("110")


def test_the_ranking_screener_is_the_default() -> None:
    rng = np.random.default_rng(3)
    y = (rng.random(300) < np.linspace(0.5, 0.01, 300)).astype(int)
    order = rng.permutation(300)
    policy = policies.ProjectedCostPolicy(batch=20, chunk=5)
    assert simulate.play(y, order, policy) == simulate.play(y, order, policy,
                                                           screener=policies.RankingScreener())


def test_the_path_is_the_ranking_prefix_or_the_screened_documents_in_reading_order() -> None:
    from rankcut.certify.interleaved import AUDIT, SCREEN, InterleavedRule

    ranked = policies.ReviewState(5, InterleavedRule())
    for move, doc, label in ((SCREEN, 0, 1), (AUDIT, 1, 0), (SCREEN, 2, 1)):
        ranked.record(move, doc, label)
    assert ranked.path().tolist() == [1, 0, 1]          # the audited rank 1 in its place
    adaptive = policies.ReviewState(5, InterleavedRule())
    for move, doc, label in ((SCREEN, 3, 1), (AUDIT, 0, 0), (SCREEN, 1, 0)):
        adaptive.record(move, doc, label)
    assert adaptive.path().tolist() == [1, 0]            # screened 3, then 1; the audit is off it


def test_play_refuses_a_screener_that_picks_a_read_document() -> None:
    class Stuck:
        def next_screen(self, state: policies.ReviewState) -> int:
            return 0

    with pytest.raises(ValueError, match="a screener returns an unread document of 0 … 3, got 0"):
        simulate.play(np.array([1, 0, 0, 1]), np.arange(4), ScreenThenAudit(2), screener=Stuck())
