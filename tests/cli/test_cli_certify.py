"""`rankcut certify` and `rankcut demo` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.certify.result import Certificate, recompute
from rankcut.cli.main import app

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_issue_example_excluded_pool_finite_json() -> None:
    code, out, _ = run(
        "certify", "excluded-pool", "--pool-size", "70000", "--corpus-size", "100000",
        "--sample-size", "300", "--positives", "0", "--delta", "0.025", "--finite", "--json",
    )  # fmt: skip
    assert code == 0
    d = json.loads(out)
    assert d["value"] == 853 and d["details"]["r_upper"] == pytest.approx(0.00853)
    assert d["theorem"] == "Theorem 8"
    cert = Certificate.from_dict(d)
    assert recompute(cert) == cert


def test_excluded_pool_binomial_with_p0_from_sizes() -> None:
    code, out, _ = run(
        "certify", "excluded-pool", "--pool-size", "70000", "--corpus-size", "100000",
        "--sample-size", "300", "--positives", "0", "--delta", "0.025", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["value"] == pytest.approx(0.70 * (1 - 0.025 ** (1 / 300)))


def test_two_pool_and_whole_population() -> None:
    code, out, _ = run(
        "certify", "two-pool", "--finite", "--excluded-size", "70000", "--excluded-sample", "300",
        "--excluded-positives", "0", "--included-size", "30000", "--included-sample", "500",
        "--included-positives", "100", "--delta", "0.05", "--json",
    )  # fmt: skip
    assert code == 0
    assert json.loads(out)["value"] == pytest.approx(4983 / (4983 + 853))
    code, out, _ = run("certify", "whole-population", "--sample-size", "431", "--positives", "0",
                       "--delta", "0.025", "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["value"] <= 0.00853


def test_plan_reproduces_the_section_4_6_table() -> None:
    targets = ["--target", "0.1", "--target", "0.05", "--target", "0.02", "--target", "0.01",
               "--target", "0.005"]  # fmt: skip
    code, out, _ = run("certify", "plan", *targets, "--json")
    assert code == 0 and json.loads(out)["value"] == [29, 59, 149, 299, 598]
    code, out, _ = run("certify", "plan", *targets, "--delta", "0.005", "--json")
    assert json.loads(out)["value"] == [51, 104, 263, 528, 1058]
    code, out, _ = run("certify", "plan", "--max-missed", "853", "--pool-size", "70000", "--delta", "0.025",
                       "--json")  # fmt: skip
    exact, minimum = json.loads(out)
    assert exact["value"] == 300 and minimum["theorem"].startswith("Remark 14")


def _prefix_csv(tmp_path: Path, extra: str = "") -> Path:
    p = tmp_path / "prefixes.csv"
    header = "name,burden,p0,n,k" + (",delta" if extra else "")
    rows = [f"g1,0.15,0.85,300,0{extra}", f"g2,0.30,0.70,300,0{extra}", f"g3,0.38,0.62,300,0{extra}"]
    p.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return p


def test_prefixes_section8_table_and_pick(tmp_path: Path) -> None:
    code, out, _ = run("certify", "prefixes", str(_prefix_csv(tmp_path)), "--target", "0.01")
    assert code == 0
    assert "(0.0116, 0.00949, 0.00841)" in out and "prefix = g2" in out
    code, out, _ = run("certify", "prefixes", str(_prefix_csv(tmp_path)), "--target", "0.005")
    assert code == 0 and "prefix = none" in out
    code, out, _ = run("certify", "prefixes", str(_prefix_csv(tmp_path)), "--target", "0.01",
                       "--fixed-sequence", "--json")  # fmt: skip
    assert json.loads(out)["value"] == "g1"  # Remark 21: no δ/M split, the cheaper prefix passes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["excluded-pool", "--sample-size", "300", "--positives", "301"], "exceeds"),
        (
            ["excluded-pool", "--sample-size", "300", "--positives", "0", "--pool-size", "200", "--finite"],
            "exceeds",
        ),
        (["excluded-pool", "--sample-size", "300", "--positives", "0", "--delta", "1.5"], "delta"),
        (["excluded-pool", "--sample-size", "300", "--positives", "0", "--delta", "0"], "delta"),
        (["excluded-pool", "--sample-size", "30", "--positives", "0", "--finite"], "--pool-size"),
        (["whole-population", "--sample-size", "10", "--positives", "11"], "exceeds"),
        (["plan", "--target", "0.01", "--delta", "2"], "delta"),
    ],
)
def test_invalid_arguments_exit_nonzero_with_one_line(args: list[str], message: str) -> None:
    code, out, err = run("certify", *args)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_allocations_summing_past_delta_are_refused(tmp_path: Path) -> None:
    code, _, err = run("certify", "prefixes", str(_prefix_csv(tmp_path, ",0.02")), "--target", "0.01")
    assert code == 2 and "sum" in err and err.count("\n") == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("name,burden,p0,n,k\ng1,0.1,0.9,x,0\n", encoding="utf-8")
    code, _, err = run("certify", "prefixes", str(bad), "--target", "0.01")
    assert code == 2 and "line 2" in err and "'x'" in err


def test_demo_prints_the_section8_report() -> None:
    code, out, _ = run("demo")
    assert code == 0
    assert "M0 ≤ 853" in out and "recall ≥ 0.853" in out and "at least 0.95" in out


def test_demo_runs_cutters_and_audits_the_cut(tmp_path: Path) -> None:
    code, out, _ = run("demo", "--out", str(tmp_path))
    assert code == 0
    assert "greedy-k" in out and "distribution" in out and "F1@k" in out
    assert "Theorem 8" in out and "held in" in out and "rankcut evaluate --run RUN" in out
    cut_lines = (tmp_path / "greedy-k.cut.run").read_text().splitlines()
    assert cut_lines and all(len(line.split()) == 6 for line in cut_lines)
