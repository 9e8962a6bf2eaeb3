"""Progress bars on long work (issue 15): one rule decides them (:func:`rankcut._progress.show_progress`),
they go to stderr only, and never under ``--json``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut._progress import ENV, show_progress
from rankcut.cli.main import app

runner = CliRunner()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bars_show_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert show_progress(stream=_Terminal())
    assert not show_progress(stream=io.StringIO())          # a pipe or a log file
    assert not show_progress(as_json=True, stream=_Terminal())


def test_the_environment_overrides_the_terminal_but_not_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    assert show_progress(stream=io.StringIO())
    assert not show_progress(as_json=True, stream=_Terminal())
    monkeypatch.setenv(ENV, "0")
    assert not show_progress(stream=_Terminal())
    monkeypatch.setenv(ENV, "yes")
    with pytest.raises(ValueError, match=f"environment variable {ENV} must be 1 .* or 0 .*, got 'yes'"):
        show_progress(stream=_Terminal())


@pytest.fixture
def review(tmp_path: Path) -> dict[str, Path]:
    """Two ranked lists of 300 documents with relevance falling with rank, and their qrels."""
    rng = np.random.default_rng(5)
    run, qrels = tmp_path / "review.run", tmp_path / "review.qrels"
    with open(run, "w") as f, open(qrels, "w") as g:
        for q in range(2):
            for r in range(300):
                f.write(f"t{q} Q0 t{q}-{r} {r + 1} {-r} sys\n")
                if rng.random() < 0.6 * np.exp(-r / 40):
                    g.write(f"t{q} 0 t{q}-{r} 1\n")
    return {"run": run, "qrels": qrels}


def _stop(review: dict[str, Path], *extra: str) -> object:
    return runner.invoke(app, ["audit", "stop", "--run", str(review["run"]), "--qrels", str(review["qrels"]),
                               "--no-lookahead", *extra])


def test_audit_stop_shows_a_bar_on_stderr(review: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    res = _stop(review)
    assert res.exit_code == 0, res.output
    assert "stop: 100%" in res.stderr and "600/600" in res.stderr, res.stderr
    assert "stop:" not in res.stdout and res.stdout.rstrip().endswith("2 of 2 queries stopped")


def test_json_output_has_no_bar(review: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    res = _stop(review, "--json")
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    assert [s["query_id"] for s in json.loads(res.stdout)["stops"]] == ["t0", "t1"]
    monkeypatch.delenv(ENV)
    assert _stop(review, "--json").stdout == res.stdout


def test_a_bad_override_is_one_line_naming_the_variable(review: dict[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "on")
    res = _stop(review)
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: environment variable {ENV} must be 1"), res.stderr


def test_train_shows_the_epoch_bar_with_loss_and_validation(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from rankcut.data.synthetic import write_synthetic

    run, qrels = write_synthetic(tmp_path, n_queries=12, depth=20, seed=3)
    # --threshold given: its synthetic qrels grade 0–2, and the default would add a note on stderr
    args = ["train", "--run", str(run), "--qrels", str(qrels), "--threshold", "1", "--epochs", "2", "--out"]
    monkeypatch.setenv(ENV, "1")
    res = runner.invoke(app, [*args, str(tmp_path / "m1")])
    assert res.exit_code == 0, res.output
    assert "attncut:" in res.stderr and "2/2" in res.stderr and "val_f1=" in res.stderr, res.stderr
    assert "val_f1=" not in res.stdout
    monkeypatch.setenv(ENV, "0")
    res = runner.invoke(app, [*args, str(tmp_path / "m2")])
    assert res.exit_code == 0 and res.stderr == "", res.output


def test_audit_certify_shows_a_bar_but_not_under_json(review: dict[str, Path], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cut, audit = tmp_path / "cut.run", tmp_path / "AUDIT"
    assert _stop(review, "--out", str(cut)).exit_code == 0
    for step in (["freeze", "--run", str(review["run"]), "--cut", str(cut), "--target-recall", "0.8",
                  "--out", str(audit)],
                 ["plan", "--audit", str(audit)], ["sample", "--audit", str(audit)],
                 ["label", "--audit", str(audit), "--oracle", "qrels", "--qrels", str(review["qrels"])]):
        res = runner.invoke(app, ["audit", *step])
        assert res.exit_code == 0, res.output
    monkeypatch.setenv(ENV, "1")
    res = runner.invoke(app, ["audit", "certify", "--audit", str(audit)])
    assert res.exit_code == 0, res.output
    assert "certify: 100%" in res.stderr and "certify:" not in res.stdout, res.stderr
    res = runner.invoke(app, ["audit", "certify", "--audit", str(audit), "--json"])
    assert res.exit_code == 0 and res.stderr == "", res.output
    assert json.loads(res.stdout)["schema"]


def test_the_demo_says_what_it_does_and_shows_the_training_bar(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from rankcut.cli import demo

    # a small demo: the messages and the bar, not the results, are under test here
    for name, value in (("N_QUERIES", 40), ("N_TRAIN", 30), ("ATTNCUT_EPOCHS", 2), ("AUDIT_SIZES", (10, 10))):
        monkeypatch.setattr(demo, name, value)
    monkeypatch.setenv(ENV, "1")
    res = runner.invoke(app, ["demo", "--out", str(tmp_path / "demo")])
    assert res.exit_code == 0, res.output
    said = res.stdout
    assert "Fitting the classical cutters (oracle, fixed-k:5" in said
    assert f"Training AttnCut on the same 30 queries, at most 2 epochs ({demo.ATTNCUT_MINUTES}, " in said
    trained = said.index("Trained on the first 30 queries")
    assert said.index("Training AttnCut") < trained < said.index("Method ")
    assert "attncut:" in res.stderr and "2/2" in res.stderr and "val_f1=" in res.stderr, res.stderr
    assert "val_f1=" not in said


def test_certify_reports_through_hooks_and_answers_the_same() -> None:
    from scipy.special import gammaln

    from rankcut.certify.screening import ReviewRule, screening_stop
    from rankcut.certify.sequential import SequentialAudit, _log_factorials

    # the table certify looks log-factorials up in holds gammaln's very values
    n = np.arange(5001)
    assert np.array_equal(_log_factorials(5000), gammaln(n + 1.0))
    audit = SequentialAudit(pool=2000, found=40, target=0.8, delta=0.05, prior_mean=5.0)
    y = (np.random.default_rng(2).random(1500) < 0.01).astype(int)
    seen: list[tuple[int, int]] = []
    with_hook = audit.running_upper(y, on_progress=lambda done, total: seen.append((done, total)))
    assert all(np.array_equal(a, b) for a, b in zip(with_hook, audit.running_upper(y), strict=True))
    assert seen[-1] == (1501, 1501) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    checked: list[int] = []
    labels = (np.random.default_rng(3).random(400) < 0.3 * np.exp(-np.arange(400) / 60)).astype(int)
    rule = ReviewRule(lookahead=False)
    stop = screening_stop(labels, 400, rule, on_check=checked.append)
    assert stop == screening_stop(labels, 400, rule)
    assert stop is not None and stop < 400   # stopped at a boundary: every one up to it was checked
    assert checked == list(range(rule.batch, stop + 1, rule.batch))
