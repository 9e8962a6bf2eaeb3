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
