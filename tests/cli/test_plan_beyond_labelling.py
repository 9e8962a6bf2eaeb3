"""A plan that asks for more labels than people can give (over ``MAX_LABELS``) says so, in the
plan's output and in ``status`` until the sample is drawn, and names what would shrink it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rankcut.audit.designs.base import MAX_LABELS, MAX_SEQUENTIAL_POOL
from rankcut.cli.audit import app

runner = CliRunner()


def run(*args: object) -> tuple[int, str, str]:
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def freeze(tmp_path: Path, *options: object) -> Path:
    run_, cut = tmp_path / "run.txt", tmp_path / "cut.txt"
    run_.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(30)))
    cut.write_text("".join(f"q{q} Q0 d{q}-{r} {r + 1} {50 - r} t\n" for q in range(3) for r in range(5)))
    audit = tmp_path / "audit"
    code, _, err = run("freeze", "--run", run_, "--cut", cut, "--seed", "1", "--out", audit, *options)
    assert code == 0, err
    return audit


def test_a_plan_beyond_labelling_says_so_and_how_to_shrink_it(tmp_path: Path) -> None:
    audit = freeze(tmp_path, "--design", "excluded", "--max-missed", "10", "--corpus-size", "500000")
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if "more than people can label" in x]
    planned = json.loads((audit / "plan.json").read_text())
    n = planned["sizes"]["excluded"]
    assert n > MAX_LABELS
    assert line.startswith(f"this plan asks for {n:,} labels, more than people can label "
                           f"(over {MAX_LABELS:,})")
    for way in ("a smaller corpus claim (--corpus-size 500000", "a larger --max-missed than 10",
                "--design sequential"):
        assert way in line, line
    assert planned["beyond_labelling"] == line
    code, out, _ = run("status", "--audit", audit)
    assert code == 0 and f"  {line}" in out.splitlines()
    # once drawn (here with sizes given), status no longer speaks of the plan's
    code, _, err = run("sample", "--audit", audit, "--excluded", "300", "--allow-underpowered")
    assert code == 0, err
    code, out, _ = run("status", "--audit", audit)
    assert code == 0 and "more than people can label" not in out


def test_the_sequential_design_is_not_named_for_a_pool_it_refuses(tmp_path: Path) -> None:
    """At corpus scale the plan named --design sequential, which refuses an excluded pool over
    MAX_SEQUENTIAL_POOL and names the two-pool design: each message pointed at the other (the RAG
    engineer walk, --corpus-size 8841823)."""
    audit = freeze(tmp_path, "--design", "two-pool", "--target-recall", "0.5", "--corpus-size",
                   str(MAX_SEQUENTIAL_POOL + 91))
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    (line,) = [x for x in out.splitlines() if "more than people can label" in x]
    assert "a smaller corpus claim" in line and "--design sequential" not in line
    code, _, err = run("freeze", "--run", tmp_path / "run.txt", "--cut", tmp_path / "cut.txt", "--seed", "1",
                       "--out", tmp_path / "seq", "--design", "sequential", "--target-recall", "0.5",
                       "--corpus-size", str(MAX_SEQUENTIAL_POOL + 91))
    assert code != 0 and "the sequential design lists its whole pool" in err


def test_a_recall_target_is_named_as_the_thing_to_lower(tmp_path: Path) -> None:
    audit = freeze(tmp_path, "--design", "two-pool", "--target-recall", "0.8", "--corpus-size", "10000000")
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    assert "a lower --target-recall than 0.8" in out and "--max-missed" not in out


def test_a_plan_people_can_label_says_nothing_of_it(tmp_path: Path) -> None:
    audit = freeze(tmp_path, "--design", "excluded", "--max-missed", "20")
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    assert "more than people can label" not in out
    assert json.loads((audit / "plan.json").read_text())["beyond_labelling"] is None
    code, out, _ = run("status", "--audit", audit)
    assert "more than people can label" not in out


def test_an_anytime_design_counts_only_its_cut_not_its_audit_order(tmp_path: Path) -> None:
    """The sequential design's sample lists the whole excluded pool in the audit order, labelled only
    until the target is met: a pool of 2,000,000 was told "this plan asks for 2,000,000 labels, more
    than people can label" beside its own table of 31,936 labels at F = 1000 (the e-discovery walk)."""
    audit = freeze(tmp_path, "--design", "sequential", "--target-recall", "0.8", "--corpus-size",
                   str(MAX_LABELS + 500))
    code, out, err = run("plan", "--audit", audit)
    assert code == 0, err
    assert json.loads((audit / "plan.json").read_text())["sizes"]["excluded"] > MAX_LABELS
    assert "more than people can label" not in out and "audit labels to certify" in out
