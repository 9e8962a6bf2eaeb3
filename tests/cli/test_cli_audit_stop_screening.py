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
