"""`rankcut audit stop` mid-screening: "screen on" is the normal answer (exit 0), with how far to read."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rankcut.cli.audit import app

runner = CliRunner()


def test_stop_mid_screening_says_screen_on_and_how_many_more(tmp_path: Path) -> None:
    run = tmp_path / "review.run"
    run.write_text("".join(f"t{q} Q0 t{q}-{r} {r + 1} {-r} sys\n" for q in range(2) for r in range(120)))
    labels = tmp_path / "screened.csv"   # t0: ranks 1–60 read (next check at 100); t1: ranks 1–3
    labels.write_text("query_id,doc_id,label\n" + "".join(f"t0,t0-{r},{int(r % 2 == 0)}\n" for r in range(60))
                      + "t1,t1-0,1\nt1,t1-1,0\nt1,t1-2,0\n")
    cut = tmp_path / "cut.run"
    res = runner.invoke(app, ["stop", "--run", str(run), "--labels", str(labels), "--out", str(cut)])
    assert res.exit_code == 0, res.stderr
    assert "0 of 2 queries stopped" in res.stdout
    assert ("screen on: read 87 more before the rule is checked again (t0: 40 more, to rank 100, "
            "t1: 47 more, to rank 50); no cut run is written until every query has stopped") in res.stdout
    assert res.stderr == "" and not cut.exists()
    res = runner.invoke(app, ["stop", "--run", str(run), "--labels", str(labels), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["read_more"] == {"t0": 40, "t1": 47}


def test_stop_out_to_stdout_writes_the_run_alone_there(tmp_path: Path) -> None:
    """The stops, the count and the next step went to stdout after the run, so the file saved from
    it was refused by freeze; the next step named --cut /dev/stdout."""
    import subprocess
    import sys

    run = tmp_path / "r.run"
    run.write_text("".join(f"t{q} Q0 t{q}-{r} {r + 1} {-r} sys\n" for q in range(2) for r in range(30)))
    (tmp_path / "q.qrels").write_text("".join(f"t{q} 0 t{q}-{r} 1\n" for q in range(2) for r in (0, 2, 5)))
    out = tmp_path / "stdout.run"
    out.symlink_to("/dev/stdout")   # as /dev/stdout (a regression replaces only this link)
    done = subprocess.run([sys.executable, "-c", "from rankcut.cli.main import app; app()", "audit", "stop",
                           "--run", str(run), "--qrels", str(tmp_path / "q.qrels"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout and all(len(line.split()) == 6 for line in done.stdout.splitlines()), done.stdout
    assert "2 of 2 queries stopped" in done.stderr and "--cut CUT.run (the run written, saved" in done.stderr
    assert out.is_symlink()


def test_stop_warns_that_the_lookahead_is_slow_on_long_lists(tmp_path: Path) -> None:
    """At 200,000 documents the default lookahead ran for over 10 minutes without a word (the
    e-discovery walk; 265 s since the projection scales): a list longer than LOOKAHEAD_SLOW is
    warned of, with --no-lookahead named."""
    from rankcut.cli.audit import LOOKAHEAD_SLOW

    run = tmp_path / "big.run"
    run.write_text("".join(f"t0 Q0 d{r} {r + 1} {-r} sys\n" for r in range(LOOKAHEAD_SLOW + 1)))
    labels = tmp_path / "screened.csv"   # ten read: no batch boundary, so no check is run
    labels.write_text("query_id,doc_id,label\n" + "".join(f"t0,d{r},{int(r < 3)}\n" for r in range(10)))
    res = runner.invoke(app, ["stop", "--run", str(run), "--labels", str(labels)])
    assert res.exit_code == 0, res.stderr
    assert f"lists up to {LOOKAHEAD_SLOW + 1:,} documents a query: the lookahead" in res.stderr
    assert "--no-lookahead skips it" in res.stderr
    quiet = runner.invoke(app, ["stop", "--run", str(run), "--labels", str(labels), "--no-lookahead"])
    assert quiet.exit_code == 0 and "lookahead" not in quiet.stderr


def test_stop_reads_graded_qrels_at_the_threshold_given_and_says_the_default(tmp_path: Path) -> None:
    """audit stop --qrels counted grade >= 1 as relevant with no --threshold and no word (TREC DL's
    binary measures count >= 2): it takes --threshold, and says the grade counted when it is left at
    its default and the qrels grade above 1; --threshold with --labels is refused (a walk with
    PyTerrier-shaped DL runs)."""
    run = tmp_path / "r.run"
    run.write_text("".join(f"t0 Q0 d{r} {r + 1} {-r} sys\n" for r in range(200)))
    qrels = tmp_path / "q.qrels"   # grade 2 on the even ranks of the top 60, grade 1 on the odd ones
    qrels.write_text("".join(f"t0 0 d{r} {2 - r % 2}\n" for r in range(60)))
    for grade, args in ((1, []), (2, ["--threshold", "2"])):
        res = runner.invoke(app, ["stop", "--run", str(run), "--qrels", str(qrels), "--json", *args])
        assert res.exit_code == 0, res.stderr
        stop = json.loads(res.stdout)["stops"][0]
        assert stop["found"] == sum(2 - r % 2 >= grade for r in range(min(stop["stop"], 60))) > 0
        assert ("grades relevance up to 2; grade ≥ 1 counts as relevant" in res.stderr) == (not args)
    labels = tmp_path / "screened.csv"
    labels.write_text("query_id,doc_id,label\nt0,d0,1\n")
    res = runner.invoke(app, ["stop", "--run", str(run), "--labels", str(labels), "--threshold", "2"])
    assert res.exit_code == 2 and "--threshold is for --qrels" in res.stderr
