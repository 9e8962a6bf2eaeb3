"""Sample sizes that cannot certify the frozen target, even if the audit finds nothing, are refused
(the audit has one sample), naming the least size that can and --allow-underpowered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.audit import workflow
from rankcut.cli.audit import app


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    run, cut = tmp_path / "run.txt", tmp_path / "cut.run"
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {90 - r} t\n" for q in range(4) for r in range(80)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {90 - r} t\n" for q in range(4) for r in range(10)))
    return run, cut


def test_a_size_that_cannot_meet_the_target_is_refused_naming_the_least_that_can(
        inputs: tuple[Path, Path], tmp_path: Path) -> None:
    run, cut = inputs
    audit = tmp_path / "A"
    workflow.freeze(audit, run=run, cut=cut, design="excluded", max_missed=20, seed=1)
    least = workflow.plan(audit).sizes["excluded"]   # the least size that meets it when nothing is found
    for n in (0, least - 1):
        says = (rf"sizes excluded {n} cannot meet the frozen target even if no excluded-pool draw is "
                rf"relevant .*the least excluded that can is {least}; .*allow_underpowered")
        with pytest.raises(ValueError, match=says):
            workflow.sample(audit, excluded=n)
    assert not (audit / "sample.json").exists() and not (audit / "sample.jsonl").exists()
    res = CliRunner().invoke(app, ["sample", "--audit", str(audit), "--excluded", "0"])
    assert res.exit_code == 2 and f"the least --excluded that can is {least}" in res.stderr
    assert "--allow-underpowered" in res.stderr
    assert workflow.sample(audit, excluded=least).n_draws == least   # the least size is accepted


def test_allow_underpowered_draws_them_and_says_so(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    run, cut = inputs
    audit = tmp_path / "A"
    workflow.freeze(audit, run=run, cut=cut, design="excluded", max_missed=20, seed=1)
    workflow.plan(audit)
    res = CliRunner().invoke(app, ["sample", "--audit", str(audit), "--excluded", "5",
                                   "--allow-underpowered"])
    assert res.exit_code == 0, res.stderr
    assert json.loads((audit / "sample.json").read_text())["underpowered"] is True


def test_without_a_target_a_sample_with_no_excluded_draw_is_refused(inputs: tuple[Path, Path],
                                                                    tmp_path: Path) -> None:
    run, cut = inputs
    audit = tmp_path / "A"
    workflow.freeze(audit, run=run, cut=cut, design="excluded", seed=1)
    workflow.plan(audit)
    with pytest.raises(ValueError, match=r"draw nothing from the excluded pool.*allow_underpowered"):
        workflow.sample(audit, excluded=0)
    assert workflow.sample(audit, excluded=3).n_draws == 3


def test_two_pool_without_an_included_sample_needs_the_excluded_pool_sampled_through(
        inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """No included draw bounds the kept relevant count by ML = 0, so only an excluded sample whose
    all-irrelevant outcome bounds the missed count by MU = 0 meets a recall target (recall 1:
    nothing missed): 274 of the 280, the least n with P(K0 = 0 | M0 = 1) = (280 − n)/280 < δ0."""
    run, cut = inputs
    audit = tmp_path / "A"
    workflow.freeze(audit, run=run, cut=cut, design="two-pool", target_recall=0.5, seed=1)
    workflow.plan(audit)
    with pytest.raises(ValueError, match=r"the least excluded that can is 274; give larger sizes"):
        workflow.sample(audit, excluded=10, included=0)
