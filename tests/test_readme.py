"""The README's quickstart stays true: CI runs the line the README shows."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_ci_runs_the_quickstart_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quickstart.*?```bash\n(.*?)```", text, re.S)
    assert block, "README has no Quickstart bash block"
    lines = [ln for ln in block.group(1).splitlines() if ln.strip()]
    assert len(lines) == 2, "the Quickstart is exactly two commands"
    assert lines[0].endswith("rankcut demo")
    marker = re.search(r"<!-- test-command: (.*) -->", text)
    assert marker and marker.group(1) == lines[1]
