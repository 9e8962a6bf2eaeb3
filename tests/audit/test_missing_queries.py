"""A cut run that omits a whole query: refused at freeze unless --allow-missing-queries says k = 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.audit import workflow
from rankcut.cli.audit import app


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    run, cut = tmp_path / "run.txt", tmp_path / "cut.run"
    run.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {20 - r} t\n" for q in range(3) for r in range(20)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {20 - r} t\n" for q in (0, 2) for r in range(4)))
    return run, cut


def test_a_query_absent_from_the_cut_run_is_refused_naming_it_and_the_flag(runs: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    run, cut = runs
    with pytest.raises(ValueError, match=r"--cut .*cut.run: query 'q1' of the full ranked lists is not in "
                                         r"the cut run.*give allow_missing_queries"):
        workflow.freeze(tmp_path / "A", run=run, cut=cut, design="excluded", max_missed=5, seed=1)
    assert not (tmp_path / "A" / "manifest.json").exists()
    res = CliRunner().invoke(app, ["freeze", "--run", str(run), "--cut", str(cut), "--design", "excluded",
                                   "--max-missed", "5", "--seed", "1", "--out", str(tmp_path / "B")])
    assert res.exit_code == 2 and "query 'q1'" in res.stderr and "--allow-missing-queries" in res.stderr


def test_allow_missing_queries_takes_the_query_as_cut_at_zero(runs: tuple[Path, Path], tmp_path: Path
                                                              ) -> None:
    run, cut = runs
    m = workflow.freeze(tmp_path / "A", run=run, cut=cut, design="excluded", max_missed=5, seed=1,
                        allow_missing_queries=True)
    assert m["allow_missing_queries"] is True
    assert m["pools"]["per_query"]["n1"] == [4, 0, 4] and m["pools"]["n0"] == 16 + 20 + 16
    workflow.plan(tmp_path / "A")
    assert workflow.sample(tmp_path / "A").n_draws > 0   # later steps rebuild the same pools


def test_a_cut_run_that_keeps_nothing_is_an_empty_file_every_query_at_zero(runs: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    """A cut of 0 writes no line, so a cut keeping nothing anywhere is an empty file: the reader
    refused it as no run, even with allow_missing_queries. The whole list is then excluded."""
    run, _ = runs
    empty = tmp_path / "none.run"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="the run has no line"):
        workflow.freeze(tmp_path / "A", run=run, cut=empty, design="excluded", max_missed=5, seed=1)
    m = workflow.freeze(tmp_path / "B", run=run, cut=empty, design="excluded", max_missed=5, seed=1,
                        allow_missing_queries=True)
    assert m["pools"]["per_query"]["n1"] == [0, 0, 0] and m["pools"]["n0"] == 60
    workflow.plan(tmp_path / "B")
    assert workflow.sample(tmp_path / "B").n_draws > 0   # later steps rebuild the same pools


def test_a_family_member_missing_a_query_is_refused_naming_the_member(runs: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    run, cut = runs
    with pytest.raises(ValueError, match=r"member 1 .*query 'q1' of the full ranked lists is not in the cut"):
        workflow.freeze(tmp_path / "A", run=run, family=[cut, run], design="prefixes", max_missed=5, seed=1)
