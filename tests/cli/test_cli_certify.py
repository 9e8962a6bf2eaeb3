"""`rankcut certify` and `rankcut demo` from the command line."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rankcut.certify.result import Certificate, format_bound, recompute
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
    _, _, err = run("certify", "plan", "--max-missed", "853", "--pool-size", "70000", "--delta", "0.025")
    assert "plan with the first size: with it a zero count certifies the target as certify computes it" in err
    # 300 against Remark 14's 302: the note said the first size can exceed it (the RAG walk)
    assert "here no larger than the Remark 14 size" in err and "errs on the safe side" not in err


def test_the_plan_at_a_billion_is_the_size_certify_certifies_at_not_called_exact() -> None:
    """At N0 = 10^9 the inversion's safe-side slack makes the planned size 401 draws above Remark 14's
    (the true minimum there, by a statistician's high-precision check): it was called "exact". It is
    the size certify needs, which the plan is for."""
    code, out, _ = run("certify", "plan", "--max-missed", "5", "--pool-size", "1000000000", "--json")
    planned, remark14 = json.loads(out)
    assert code == 0 and "exact" not in planned["theorem"] and planned["value"] > remark14["value"]

    def certified(n: int) -> int:
        _, said, _ = run("certify", "excluded-pool", "--finite", "--pool-size", "1000000000", "--sample-size",
                         str(n), "--positives", "0", "--json")
        return int(json.loads(said)["value"])

    assert certified(planned["value"]) == 5 and certified(planned["value"] - 1) == 6
    assert certified(remark14["value"]) == 6
    assert remark14["statement"].endswith("fewer than 75000000 on average (Theorem 13).")   # not 75000000.0
    _, _, err = run("certify", "plan", "--max-missed", "5", "--pool-size", "1000000000")
    assert "it errs on the safe side, so it exceeds the Remark 14 size beside it" in err


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


def test_a_plan_target_that_reads_like_a_recall_is_said_to_be_a_rate() -> None:
    """--target 0.8 answered "2 draws certify a relevance rate ≤ 0.8" without a word to a user who
    meant recall ≥ 0.8 (the e-discovery walk)."""
    _, _, err = run("certify", "plan", "--target", "0.8")
    assert "--target 0.8 is a relevance rate of the excluded pool" in err and "--target-recall" in err
    _, _, err = run("certify", "plan", "--target", "0.01")
    assert "relevance rate of the excluded pool" not in err


def test_prefixes_fixed_sequence_in_counts(tmp_path: Path) -> None:
    """--finite --fixed-sequence --target 3: the count reached the certificate as 3.0, refused once
    the certificate stopped truncating it (the diff review)."""
    p = tmp_path / "p.csv"
    p.write_text("name,k,n,excluded_size\nk10,0,100,1000\nk20,0,80,800\nk30,0,60,600\n")
    code, out, err = run("certify", "prefixes", str(p), "--finite", "--fixed-sequence", "--target", "100",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["inputs"]["max_missed"] == 100


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


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One demo run (it trains a small AttnCut: under a minute on idle cores), read by the tests below."""
    folder = tmp_path_factory.mktemp("demo")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, _ = run("demo", "--out", str(folder))
    assert code == 0, out
    # the demo says what it means in its output: no Python warning escapes it (its graded synthetic
    # qrels drew the graded-qrels warning once)
    assert not caught, [f"{w.category.__name__}: {w.message}" for w in caught]
    return folder, out


def test_demo_prints_the_section8_report(demo_run: tuple[Path, str]) -> None:
    _, out = demo_run
    assert "M0 ≤ 853" in out and "recall ≥ 0.853" in out and "at least 0.95" in out


def test_demo_runs_cutters_and_attncut(demo_run: tuple[Path, str]) -> None:
    folder, out = demo_run
    table = out[out.index("Method "):out.index("Protocol:")]
    rows = {line.split()[0] for line in table.splitlines()[2:] if line.strip()}
    assert rows == {"oracle", "fixed-k:5", "fixed-k:10", "fixed-k:50", "greedy-k", "distribution", "surprise",
                    "attncut"}
    assert "Holm-adjusted over 6 methods" in out  # attncut is tested against greedy-k too
    cut_lines = (folder / "attncut.cut.run").read_text().splitlines()
    assert cut_lines and all(len(line.split()) == 6 for line in cut_lines)
    assert {line.split()[0] for line in cut_lines} == {f"q{q:03d}" for q in range(151, 201)}


def test_demo_audits_the_cut_with_the_workflow(demo_run: tuple[Path, str]) -> None:
    folder, out = demo_run
    certificate = json.loads((folder / "audit" / "certificate.json").read_text())
    assert certificate["design"] == "two-pool" and certificate["labels"]["draws"] == 600
    values = {c["name"]: c["certificate"]["value"] for c in certificate["report"]["certificates"]}
    # the plain-words percentage is the lower bound rounded down, never up
    said = re.search(r"kept at least (\d+)% of the relevant documents", out)
    assert said is not None
    assert values["recall"] - 0.01 < int(said.group(1)) / 100 <= values["recall"]
    assert f"left at most {values['missed']} relevant documents behind" in out
    assert "Corollary 11" in out and "held in" in out and "rankcut audit freeze --run RUN" in out
    assert (folder / "audit-report.md").is_file() and (folder / "audit-report.json").is_file()


def test_demo_without_torch_audits_greedy_k(tmp_path: Path) -> None:
    """Without the torch extra the demo still runs: Greedy-k makes the cut that is audited.
    Without matplotlib it does not say the report has a plot (it did)."""
    import subprocess
    import sys

    # a finder that refuses torch, as on a machine without the extra (scipy probes sys.modules for
    # torch, so a None entry there would break scipy, not rankcut)
    code = ("import sys\n"
            "class NoTorch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.partition('.')[0] in ('torch', 'matplotlib'):\n"
            "            raise ImportError('no torch here')\n"
            "sys.meta_path.insert(0, NoTorch())\n"
            "from rankcut.cli.main import app\n"
            f"app(['demo', '--out', {str(tmp_path)!r}])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "AttnCut needs PyTorch: pip install 'rankcut[torch]'" in done.stdout
    assert (tmp_path / "greedy-k.cut.run").is_file() and "greedy-k's cut kept at least" in done.stdout
    assert f"The report (Markdown, certificate JSON) is {tmp_path / 'audit-report.md'}." in done.stdout


# --- prefixes: the CSV table --------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _fails(args: list[str], *messages: str) -> str:
    code, _, err = run(*args)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "np." not in err and "Traceback" not in err
    for message in messages:
        assert message in err, err
    return err


SEPARATE = "name,burden,p0,n,k\ng1,0.15,0.85,300,0\ng2,0.30,0.70,300,0\ng3,0.38,0.62,300,0\n"
H, HS, HD, HF = "name,burden,p0,n,k\n", "name,burden,p0,n_eff,k\n", "name,burden,p0,n,k,delta\n", \
    "name,burden,excluded_size,n,k\n"
SHARED = "name,burden,p0,n_eff,k\ng1,0.15,0.85,846,2\ng2,0.30,0.70,699,1\ng3,0.38,0.62,617,0\n"


@pytest.mark.parametrize(
    ("text", "extra", "messages"),
    [
        # nested pools: p0 (or N0) never increases down the table, in every design
        ("name,burden,p0,n,k\ng1,0.15,0.62,300,0\ng2,0.30,0.70,300,0\n", [],
         ["line 3", "p0=0.7 exceeds p0=0.62 on line 2", "non-increasing"]),
        ("name,burden,excluded_size,n,k\ng1,1,500,30,0\ng2,2,600,30,0\n", ["--finite"],
         ["line 3", "excluded_size=600 exceeds excluded_size=500"]),
        # a larger candidate set that costs less: Eq. 1 picked it for that (nested prefixes cannot)
        ("name,burden,excluded_size,n,k\nk10,5000,9000,300,0\nk30,3000,7000,300,0\n",
         ["--finite", "--target", "900"],
         ["line 3", "burden=3000 is below burden=5000 on line 2", "must be at least as large"]),
        ("name,burden,p0,n_eff,k\ng1,0.15,0.70,500,0\ng2,0.30,0.70,600,0\n", ["--reference-size", "1000"],
         ["line 3", "n_eff=600 exceeds n_eff=500"]),
        ("name,burden,p0,n_eff,k\ng1,0.15,0.80,500,0\ng2,0.30,0.70,400,1\n", ["--reference-size", "1000"],
         ["line 3", "k=1 exceeds k=0"]),
        ("name,burden,p0,n_eff,k\ng1,0.15,0.80,500,5\ng2,0.30,0.70,499,1\n", ["--reference-size", "1000"],
         ["line 3", "n_eff - k=498 exceeds n_eff - k=495"]),
        ("name,burden,excluded_size,n_eff,k\ng1,1,800,80,0\ng2,2,700,90,0\n",
         ["--finite", "--reference-size", "100", "--reference-pool-size", "1000"], ["line 3", "n_eff=90"]),
        (f"{HS}g1,0.15,0.80,5,6\n", ["--reference-size", "10"], ["line 2", "k=6 exceeds n_eff=5"]),
        ("name,burden,excluded_size,n_eff,k\ng1,1,80,90,0\n",
         ["--finite", "--reference-size", "100", "--reference-pool-size", "1000"],
         ["line 2", "n_eff=90 exceeds excluded_size=80"]),
        # R has 950 items, 50 outside E1: 100 draws cannot put only 10 inside E1
        ("name,burden,excluded_size,n_eff,k\ng1,1,900,10,0\n",
         ["--finite", "--reference-size", "100", "--reference-pool-size", "950"],
         ["line 2", "90 of the --reference-size 100 draws fall outside", "only 50 items outside"]),
        ("name,burden,p0,n_eff,k\ng1,0.15,0.80,50,0\n", ["--reference-size", "10"],
         ["line 2", "n_eff=50 exceeds --reference-size 10"]),
        # columns
        ("name,burden,p0,n,n_eff,k\ng1,0.15,0.85,300,300,0\n", ["--reference-size", "300"],
         ["give either n (separate audits) or n_eff (with --reference-size)"]),
        ("name,burden,p0,n_eff,k\ng1,0.15,0.85,300,0\n", [], ["n_eff column", "needs --reference-size"]),
        (SEPARATE, ["--reference-size", "300"], ["--reference-size needs an n_eff column"]),
        ("name,burden,p0,n,k\ng1,0.15,,300,0\n", [], ["line 2", "empty value in column 'p0'"]),
        ("name,burden,p0,k\ng1,0.15,0.8,0\n", [], ["missing column 'n'"]),
        ("name;burden;p0;n;k\ng1;0.15;0.8;300;0\n", [], ["must be comma-separated with a header"]),
        ("name,burden,p0,n,k,note\ng1,0.15,0.8,300,0,x\n", [], ["unknown column 'note'"]),
        ("name,burden,p0,n,k\ng1,0.15,0.8,300\n", [], ["line 2", "4 values, but the header has 5 columns"]),
        ("name,burden,p0,n,k\n", [], ["no data rows"]),
        ("name,burden,p0,excluded_size,n,k\ng1,0.15,0.8,80,30,0\n", [],
         ["give either p0", "or excluded_size"]),
        ("name,burden,excluded_size,n,k\ng1,1,500,30,0\n", ["--finite", "--target", "0.01"],
         ["--target is a number of missed items with --finite"]),
        # the table's columns first: with n, --reference-size is the mistake, not a missing option
        (SEPARATE, ["--finite", "--reference-size", "100"], ["--reference-size needs an n_eff column"]),
        (f"{H}g1,0.15,0.8,300,0\ng1,0.3,0.7,300,0\n", [], ["line 3", "'g1' is already used on line 2"]),
        # values: file and line, no numpy reprs
        ("name,burden,p0,n,k\ng1,0.15,nan,300,0\n", [], ["line 2", "p0=nan must lie in [0, 1]"]),
        ("name,burden,p0,n,k\ng1,0.15,-0.1,300,0\n", [], ["line 2", "p0=-0.1 must lie in [0, 1]"]),
        (f"{HD}g1,0.15,0.5,300,0,-0.01\n", [], ["line 2", "delta=-0.01 must lie in (0, 1)"]),
        ("name,burden,p0,n,k,delta\ng1,0.15,0.5,300,0,nan\n", [], ["line 2", "delta=nan"]),
        ("name,burden,p0,n,k\ng1,0.15,0.5,-3,0\n", [], ["line 2", "n=-3 must be >= 0"]),
        ("name,burden,p0,n,k\ng1,0.15,0.5,30,31\n", [], ["line 2", "k=31 exceeds n=30"]),
        ("name,burden,p0,n,k\ng1,0.15,0.5,1.5,0\n", [], ["line 2", "n='1.5' is not a whole number"]),
        ("name,burden,p0,n,k\ng1,-1,0.5,30,0\n", [], ["line 2", "burden=-1"]),
        ("name,burden,p0,n,k\ng1,0.1,0,30,0\n", [], ["line 2", "p0=0 (an empty excluded pool)"]),
        (f"{HF}g1,1,20,30,0\n", ["--finite"], ["line 2", "n=30 exceeds excluded_size=20"]),
        ("name,burden,excluded_size,n,k\ng1,1,200,30,0\n", ["--finite", "--corpus-size", "100"],
         ["line 2", "excluded_size=200 exceeds --corpus-size 100"]),
        # options the design would not use
        (SEPARATE, ["--corpus-size", "1000"], ["--corpus-size is not used without --finite"]),
        (SEPARATE, ["--reference-mass", "0.5"], ["--reference-mass is not used without --reference-size"]),
        (SHARED, ["--reference-size", "1000", "--reference-mass", "1.5"],
         ["--reference-mass must lie in (0, 1]"]),
        (f"{HD}g1,0.15,0.5,300,0,0.05\n", ["--fixed-sequence"], ["remove the delta column"]),
        (SEPARATE, ["--delta", "0"], ["--delta must lie in (0, 1), got 0"]),
    ],
)
def test_prefix_tables_that_cannot_be_right_are_refused(
    tmp_path: Path, text: str, extra: list[str], messages: list[str]
) -> None:
    target = [] if "--target" in extra else ["--target", "10" if "--finite" in extra else "0.01"]
    _fails(["certify", "prefixes", str(_csv(tmp_path, text)), *target, *extra], *messages)


def test_prefix_paths_that_are_not_files(tmp_path: Path) -> None:
    _fails(["certify", "prefixes", str(tmp_path), "--target", "0.01"], "is a directory")
    _fails(["certify", "prefixes", str(tmp_path / "none.csv"), "--target", "0.01"], "no such file")


def test_prefixes_finite_with_corpus_size_shows_r(tmp_path: Path) -> None:
    table = _csv(tmp_path, "name,burden,excluded_size,n,k\ng1,0.15,85000,300,0\ng2,0.30,70000,300,0\n")
    code, out, err = run("certify", "prefixes", str(table), "--target", "1000", "--finite",
                         "--corpus-size", "100000")  # fmt: skip
    assert code == 0, err
    code, js, _ = run("certify", "prefixes", str(table), "--target", "1000", "--finite",
                      "--corpus-size", "100000", "--json")  # fmt: skip
    r = json.loads(js)["certificates"][0]["certificate"]["details"]["r_upper"]
    assert f"r = M0/N (N = 100000) of at most {format_bound(tuple(r), 'upper')}" in out


def test_the_documented_examples_run() -> None:
    code, out, err = run("certify", "prefixes", str(EXAMPLES / "prefixes.csv"), "--target", "0.01")
    assert code == 0, err
    assert "r ≤ (0.0116, 0.00949, 0.00841)" in out and "prefix = g2" in out
    code, out, err = run("certify", "prefixes", str(EXAMPLES / "prefixes-shared.csv"), "--target", "0.005",
                         "--reference-size", "1000")  # fmt: skip
    assert code == 0, err
    assert "r ≤ (0.00777, 0.00604, 0.00411)  [Theorem 17" in out and "prefix = g3" in out


# --- excluded-pool, plan, two-pool, whole-population: options ---------------------------------


EP = "excluded-pool --sample-size 30 --positives 0"
TWO = "two-pool --excluded-sample 10 --excluded-positives 1 --included-sample 10 --included-positives 1"


@pytest.mark.parametrize(
    ("args", "messages"),
    [
        ("excluded-pool --sample-size 10 --positives 11", ["--positives 11 exceeds --sample-size 10"]),
        ("excluded-pool --sample-size 10 --positives -1", ["--positives must be >= 0, got -1"]),
        ("excluded-pool --sample-size -1 --positives 0", ["--sample-size must be >= 0"]),
        ("excluded-pool --sample-size 100 --positives 0 --finite --pool-size 50",
         ["--sample-size 100 exceeds --pool-size 50"]),
        (f"{EP} --finite --pool-size 700 --corpus-size 1000 --included-relevant 301",
         ["--included-relevant 301 exceeds the included pool", "= 300 items"]),
        (f"{EP} --included-relevant 5", ["--included-relevant needs --finite with --pool-size"]),
        (f"{EP} --pool-size 700 --included-relevant 5", ["--included-relevant needs --finite with"]),
        (f"{EP} --finite --pool-size 700 --p0 0.5", ["--p0 is for i.i.d. draws"]),
        (f"{EP} --pool-size 700 --corpus-size 1000 --p0 0.5", ["give either --p0 or --pool-size with"]),
        (f"{EP} --pool-size 700", ["--pool-size without --finite needs --corpus-size", "--finite"]),
        (f"{EP} --corpus-size 700", ["--corpus-size needs --pool-size"]),
        (f"{EP} --pool-size 700 --corpus-size 500", ["--pool-size 700 exceeds --corpus-size 500"]),
        (f"{EP} --p0 1.5", ["--p0 must lie in [0, 1], got 1.5"]),
        (f"{EP} --p0 0", ["--p0 0 means an empty excluded pool"]),
        ("plan --target 0", ["--target must lie in (0, 1), got 0"]),
        ("plan --target 0.01 --p0 0", ["--p0 must lie in (0, 1], got 0"]),
        ("plan --target 0.01 --tolerated -1", ["--tolerated must be >= 0, got -1"]),
        ("plan --target 0.01 --prefixes 0", ["--prefixes must be >= 1, got 0"]),
        ("plan --max-missed -1 --pool-size 100", ["--max-missed must be >= 0, got -1"]),
        ("plan --max-missed 5 --pool-size 100 --tolerated 6", ["--max-missed 5 is below --tolerated 6"]),
        ("plan --target 0.01 --max-missed 5 --pool-size 100", ["give either --target (a rate) or"]),
        ("plan --target 0.01 --pool-size 100", ["--pool-size goes with --max-missed"]),
        ("plan --target 0.01 --beta 0.2", ["--beta is not used with --target"]),
        ("plan --max-missed 5 --pool-size 100 --p0 0.5", ["--p0 is not used with --max-missed"]),
        ("plan --max-missed 5 --pool-size 100 --prefixes 2 --beta 0.2",
         ["--beta is not used with --tolerated or --prefixes"]),
        ("plan --max-missed 5 --pool-size 100 --beta 0.99",
         ["--beta must lie in [0, 1 − --delta) = [0, 0.95), got 0.99"]),
        ("excluded-pool --sample-size 99999999999999999999 --positives 0",
         ["--sample-size must be at most 9,223,372,036,854,775,807"]),   # it said "sizes must hold integers"
        ("whole-population --sample-size 10 --positives -1", ["--positives must be >= 0"]),
        ("two-pool --excluded-sample 10 --excluded-positives 11 --included-sample 10 --included-positives 1 "
         "--p0 0.5", ["--excluded-positives 11 exceeds --excluded-sample 10"]),
        (f"{TWO} --p0 0.5 --excluded-size 100", ["--excluded-size", "not used"]),
        (f"{TWO} --p0 0.9 --p1 0.5", ["--p0 0.9 + --p1 0.5 = 1.4 exceeds 1"]),
        (f"{TWO} --p0 0", ["--p0 0 means an empty excluded pool, but --excluded-sample 10"]),
        (f"{TWO} --p0 1", ["--p0 1 means an empty included pool, but --included-sample 10"]),   # "recall ≥ 0"
        (f"{TWO} --p0 0.5 --p1 0", ["--p1 0 means an empty included pool, but --included-sample 10"]),
        (f"{TWO} --finite --excluded-size 100 --included-size 5", ["--included-sample 10 exceeds"]),
        (f"{TWO} --finite --excluded-size 100 --included-size 50 --p0 0.5", ["--p0 is not used with"]),
    ],
)
def test_option_errors_name_the_options(args: str, messages: list[str]) -> None:
    _fails(["certify", *args.split()], *messages)


def test_plan_for_a_million_prefixes_stays_small() -> None:
    # the δ/M union bound is one allocation entry; before, M entries were built
    code, out, err = run("certify", "plan", "--target", "0.01", "--prefixes", "1000000", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert len(out) < 2_000 and d["allocation"] == {"g1..g1000000 (δ/1000000 each)": 0.05}
    assert recompute(Certificate.from_dict(d)) == Certificate.from_dict(d)


def test_plan_max_missed_at_or_above_the_pool_skips_remark_14() -> None:
    code, out, err = run("certify", "plan", "--max-missed", "100", "--pool-size", "100", "--json")
    assert code == 0, err
    assert json.loads(out)["value"] == 0
    assert err.startswith("note: --max-missed 100 >= --pool-size 100") and "Remark 14" in err
    code, out, err = run("certify", "plan", "--max-missed", "5", "--max-missed", "150", "--pool-size", "100",
                         "--json")  # fmt: skip
    assert code == 0, err
    sizes, minimum = json.loads(out)
    assert sizes["value"] == [39, 0] and minimum["inputs"]["m"] == 6
    assert "--max-missed 150 >= --pool-size 100" in err


# --- demo -------------------------------------------------------------------------------------


def test_demo_bad_options_give_one_line(tmp_path: Path) -> None:
    code, out, err = run("demo", "--seed", "-1")
    assert code == 2 and err == "error: --seed must be >= 0, got -1\n" and out == ""
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    code, out, err = run("demo", "--out", str(a_file))
    assert code == 2 and err.count("\n") == 1 and "is a file" in err and out == ""
    code, out, err = run("demo", "--out", str(a_file / "sub"))
    assert code == 2 and err.count("\n") == 1 and "cannot create the folder" in err
    (tmp_path / "old" / "audit").mkdir(parents=True)
    code, out, err = run("demo", "--out", str(tmp_path / "old"))
    assert code == 2 and "holds an earlier demo's audit" in err and out == ""
