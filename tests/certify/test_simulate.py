"""The simulators (rankcut.certify.simulate) apart from the rules they play (rankcut.certify.screening)."""

from __future__ import annotations

import numpy as np
import pytest

from rankcut.certify import policies, screening, simulate
from rankcut.certify.policies import ScreenThenAudit


def test_the_rule_module_ships_no_simulator() -> None:
    sims = {"ReviewRuns", "simulate_review", "InterleavedRun", "InterleavedRuns", "play",
            "simulate_interleaved"}
    assert sims <= set(simulate.__all__)
    assert not sims & (set(vars(screening)) | set(vars(policies)))


def test_play_names_the_rank_of_a_bad_label() -> None:
    y = np.array([0, 1, 2, 0])
    with pytest.raises(ValueError, match="labels must be 0 or 1: rank 3 holds 2"):
        simulate.play(y, np.arange(4), ScreenThenAudit(2))
    with pytest.raises(ValueError, match="labels must be 0 or 1: rank 3 holds 2"):
        simulate.simulate_interleaved(y, ScreenThenAudit(2), seeds=range(1))
