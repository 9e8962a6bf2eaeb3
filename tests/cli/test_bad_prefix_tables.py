"""``certify prefixes`` refuses what ``certify plan`` refuses: a rate target outside (0, 1), and
(with p0) a burden that is not the included mass p1 = 1 - p0 of its row (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.cli.main import app


def _prefixes(tmp_path: Path, table: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "t.csv"
    path.write_text(table, encoding="utf-8")
    res = CliRunner().invoke(app, ["certify", "prefixes", str(path), *args])
    return res.exit_code, res.stdout, res.stderr


GOOD = "name,burden,p0,n,k\ng1,0.15,0.85,300,0\ng2,0.30,0.70,300,0\n"


@pytest.mark.parametrize(("table", "message"), [
    ("name,burden,p0,n,k\ng1,0.15,0.85,300,0\ng2,1.5,0.70,300,0\n", "line 3: burden=1.5 must lie in [0, 1]"),
    ("name,burden,p0,n,k\ng1,0.15,0.85,300,0\ng2,0.20,0.70,300,0\n",
     "line 3: burden=0.2 and p0=0.7 sum to 0.9, not 1: a prefix's burden is its included mass "
     "p1 = 1 - p0 (here 0.3)"),
])
def test_a_burden_that_is_not_the_included_mass_is_refused(tmp_path: Path, table: str,
                                                            message: str) -> None:
    code, _, err = _prefixes(tmp_path, table, "--target", "0.01")
    assert code == 2 and err.count("\n") == 1 and message in err


@pytest.mark.parametrize("extra", [[], ["--fixed-sequence"]])
@pytest.mark.parametrize("target", ["1", "1.5", "inf", "0"])
def test_a_rate_target_outside_0_1_is_refused_as_plan_refuses_it(tmp_path: Path, target: str,
                                                                 extra: list[str]) -> None:
    code, _, err = _prefixes(tmp_path, GOOD, "--target", target, *extra)
    plan = CliRunner().invoke(app, ["certify", "plan", "--target", target])
    assert code == plan.exit_code == 2
    assert err == plan.stderr and err.startswith("error: --target must lie in (0, 1), got ")


def test_the_section_8_table_and_finite_costs_still_pass(tmp_path: Path) -> None:
    assert _prefixes(tmp_path, GOOD, "--target", "0.01")[0] == 0
    finite = "name,burden,excluded_size,n,k\ng1,1550,13450,300,0\ng2,4050,10950,300,0\n"
    code, _, err = _prefixes(tmp_path, finite, "--target", "100", "--finite")
    assert code == 0, err
