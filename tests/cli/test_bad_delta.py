"""A δ outside (0, 1) is refused by one check, ``rankcut.certify._validate.check_delta``, with
the same words from Python, the audit and the command line (issue 14: one home per check)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from typer.testing import CliRunner

from rankcut.audit.options import OPTION_NAMES, check_delta
from rankcut.certify._validate import check_delta as certify_check_delta
from rankcut.cli.main import app


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.01, float("nan")])
def test_the_cli_and_the_audit_say_what_the_certificates_say(bad: float) -> None:
    with pytest.raises(ValueError) as want:
        certify_check_delta(bad, "--delta")
    res = CliRunner().invoke(app, ["certify", "excluded-pool", "--sample-size", "300",
                                   "--positives", "0", "--delta", str(bad)])
    assert res.exit_code == 2 and res.stderr == f"error: {want.value}\n"
    token = OPTION_NAMES.set({"delta": "--delta"})
    try:
        with pytest.raises(ValueError, match=f"^{re.escape(str(want.value))}$"):
            check_delta(bad, "delta")
    finally:
        OPTION_NAMES.reset(token)


def test_the_audit_takes_the_numbers_the_certificates_take() -> None:
    assert check_delta(np.float32(0.25), "delta") == 0.25  # refused before: not a Python float
    with pytest.raises(ValueError, match=r"delta must be a number in \(0, 1\), got True"):
        check_delta(True, "delta")


_POOLS = ["--excluded-size", "70000", "--excluded-sample", "300", "--excluded-positives", "0",
          "--included-size", "30000", "--included-sample", "500", "--included-positives", "100"]
_MEANT = (("0.95", "--delta is the chance the certificate is wrong (1 − confidence), so 0.95 would claim "
                   "only 5% confidence: for 95% confidence give --delta 0.05"),
          ("0.5", "so 0.5 would claim only 50% confidence: give --delta below 0.5 (0.05 for 95% confidence)"),
          ("0.999", "so 0.999 would claim only 0.1% confidence: for 99.9% confidence give --delta 0.001"),
          ("5", "--delta must lie in (0, 1), got 5.0 (a share, not a percentage: 0.05 for 5%)"))


@pytest.mark.parametrize("command", [
    ["certify", "excluded-pool", "--sample-size", "300", "--positives", "0"],
    ["certify", "two-pool", *_POOLS],
    ["certify", "whole-population", "--sample-size", "431", "--positives", "0"],
    ["certify", "plan", "--target", "0.01"],
    ["audit", "freeze", "--run", "r.run", "--cut", "c.run", "--target-recall", "0.8", "--out", "A"],
    ["review", "start", "records.csv", "--folder", "R"],
])
def test_a_delta_meant_as_the_confidence_is_refused(command: list[str]) -> None:
    """--delta 0.95 meant as 95% confidence was certified at 5% confidence without a word (a recall
    bound of 0.518 where the truth was 0.374); 5 meant as 5% now names the share."""
    for given, said in _MEANT:
        res = CliRunner().invoke(app, [*command, "--delta", given])
        assert res.exit_code == 2 and said in res.stderr, (command, res.output)
        assert res.stderr.count("\n") == 1
