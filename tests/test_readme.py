"""The README's quickstart stays true: CI runs the line the README shows."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

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


def test_the_python_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"From Python, a cutter.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no Python example of a cutter"
    rng = np.random.default_rng(0)
    for name in ("train.run", "new.run", "test.run"):
        (tmp_path / name).write_text("".join(f"q{q} Q0 d{d} {d + 1} {30 - d} t\n"
                                             for q in range(6) for d in range(30)))
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{d} {rng.integers(0, 4) if d < 10 else 0}\n"
                                                for q in range(6) for d in range(30)))
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(block.group(1), scope)
    depth = scope["depth"]
    assert isinstance(depth, dict) and sorted(depth) == [f"q{q}" for q in range(6)]
    exec("f1 = " + block.group(1).strip().splitlines()[-1].split("#")[0], scope)   # the last line's value
    assert 0.0 <= float(scope["f1"]) <= 1.0   # type: ignore[arg-type]
    kept = (tmp_path / "cut.run").read_text().splitlines()
    assert len(kept) == sum(depth.values()) and all(k >= 0 for k in depth.values())


def test_the_dataframe_example_runs_as_written() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"DataFrames take PyTerrier's.*?```python\n(.*?)```", text, re.S)
    assert block, "README has no DataFrame example"
    scope: dict[str, object] = {}
    exec(block.group(1), scope)
    lists = scope["lists"]
    assert list(lists.qids) == ["q1", "q2"] and lists.n_relevant.tolist() == [1, 0]   # type: ignore[attr-defined]
