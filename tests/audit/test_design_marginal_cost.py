"""The ``marginal-cost`` policy by its registry name in the interleaved audit design: frozen with its
constants, the review it drives is MarginalCostPolicy played by hand on the same labels and order,
and every step says why in its own words."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_testdata import Data, _frozen, _steps, _truth

from rankcut.audit import workflow as wf
from rankcut.certify.interleaved import InterleavedRule
from rankcut.certify.policies import MarginalCostPolicy
from rankcut.certify.simulate import play


@pytest.mark.parametrize(("ratio", "probe"), [(0.0, 0), (1.5, 0), (1.5, 5)])
def test_marginal_cost_by_name_is_the_policy_played_by_hand(tmp_path: Path, ratio: float, probe: int) -> None:
    topic = Data(tmp_path, queries=1, depth=240, seed=3)
    audit = _frozen(tmp_path, topic,
                    policy=f"marginal-cost:batch=20,chunk=5,window=60,need=2.5,ratio={ratio},probe={probe}")
    wf.label(audit, qrels=topic.qrels)
    result = wf.certify(audit)
    y, order = _truth(topic, audit)
    policy = MarginalCostPolicy(batch=20, chunk=5, window=60, need=2.5, ratio=ratio, probe=probe)
    played = play(y, order, policy, InterleavedRule(0.8, 0.05))
    steps = _steps(audit)
    assert "".join(s["move"][0] for s in steps) == played.moves
    assert result.content["verdict"]["met"] == played.certified
    assert {s["move"] for s in steps} == {"screen", "audit"}
    assert any("projected to" in s["why"] and "audit draws" in s["why"] for s in steps)
    assert any("times the audit's hit rate" in s["why"] for s in steps) == (ratio > 0)
    # a return from the audit says where its probe of 5 screening reads led: on, or back to the audit
    probes = [s for s in steps if "screening reads since the audit's hit" in s["why"]]
    assert bool(probes) == (probe > 0)
    assert all(s["why"].endswith("the batch goes on" if s["move"] == "screen" else "back to the audit")
               for s in probes)


def test_marginal_cost_constants_are_checked_at_freeze(tmp_path: Path) -> None:
    topic = Data(tmp_path, queries=1, depth=40, seed=3)
    with pytest.raises(ValueError, match="need"):
        wf.freeze(tmp_path / "A", run=topic.run, design="interleaved", target_recall=0.8,
                  policy="marginal-cost:need=0")
    with pytest.raises(ValueError, match="takes batch, chunk, window, need, ratio, probe"):
        wf.freeze(tmp_path / "B", run=topic.run, design="interleaved", target_recall=0.8,
                  policy="marginal-cost:margin=2")
