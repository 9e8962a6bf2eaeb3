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

    renamed = {"label_format", "from_file", "qrels", "limit", "plan", "sample", "label", "certify", "freeze",
               "report", "status"}
    assert {k for k, v in OPTIONS.items() if v != flag(k)} == renamed
    assert OPTIONS["target_recall"] == "--target-recall" and OPTIONS["limit"] == "--next"


def test_param_error_and_cli_words_use_the_same_rule() -> None:
    assert _message(ParamError("recall_base", "recall_base must be one of ..."), {"recall_base"}) == \
        f"{flag('recall_base')} must be one of ..."
    assert cli_words("got fit_metric='f1'; set recall_base=judged") == \
        f"got {flag('fit_metric')} f1; set {flag('recall_base')} judged"
