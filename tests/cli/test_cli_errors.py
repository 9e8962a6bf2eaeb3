"""One rule names a library parameter as its flag (rankcut.cli._errors.flag), wherever the CLI does it."""

from __future__ import annotations

from rankcut.cli._errors import _message, cli_words, flag, option_names
from rankcut.errors import ParamError


def test_option_names_spell_parameters_by_their_flag() -> None:
    names = option_names(("max_missed", "seed"), limit="--next", plan="rankcut audit plan")
    assert names == {"max_missed": "--max-missed", "seed": "--seed", "limit": "--next",
                     "plan": "rankcut audit plan"}


def test_the_audit_table_uses_the_flag_rule() -> None:
    from rankcut.cli.audit import OPTIONS

    renamed = {"label_format", "from_file", "qrels", "qrels_file", "limit", "plan", "sample", "label",
               "certify", "freeze", "report", "status"}
    assert {k for k, v in OPTIONS.items() if v != flag(k)} == renamed
    assert OPTIONS["target_recall"] == "--target-recall" and OPTIONS["limit"] == "--next"


def test_param_error_and_cli_words_use_the_same_rule() -> None:
    assert _message(ParamError("recall_base", "recall_base must be one of ..."), {"recall_base"}) == \
        f"{flag('recall_base')} must be one of ..."
    assert cli_words("got fit_metric='f1'; set recall_base=judged") == \
        f"got {flag('fit_metric')} f1; set {flag('recall_base')} judged"


def test_an_option_of_one_value_given_twice_is_refused(tmp_path) -> None:
    # click kept the last --qrels without a word: an evaluation of two runs read one qrels file
    from typer.testing import CliRunner

    from rankcut.cli.main import app

    run = tmp_path / "a.run"
    run.write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0 x\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    q = tmp_path / "q.txt"
    for args, twice in (
            (["evaluate", "--run", run, "--qrels", q, "--qrels", q], "--qrels"),
            (["cut", "--run", run, "--cutter", "fixed-k:1", "--cutter=fixed-k:2", "--out",
              tmp_path / "o.run"], "--cutter"),
            (["review", "status", "--folder", tmp_path, "--folder", tmp_path], "--folder")):
        out = CliRunner().invoke(app, [str(a) for a in args])
        assert out.exit_code == 2, out.stderr
        assert out.stderr == (f"error: {twice} is given 2 times, and it takes one value (only the last "
                              "would be read): give it once\n"), out.stderr
    assert not (tmp_path / "o.run").exists()
    twice_run = CliRunner().invoke(app, ["evaluate", "--run", str(run), "--run", str(run), "--qrels",
                                         str(tmp_path / "q.txt"), "--cutters", "fixed-k:1", "--json"])
    assert "is given 2 times" not in twice_run.stderr   # --run is read as often as it is given
