"""``rankcut.certify`` stays pure statistics: it imports no other rankcut package, no torch and no
I/O module, and opens no file (the audit paper's certificates are functions of counts and sizes)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rankcut.certify

CERTIFY = Path(rankcut.certify.__file__).parent
IO_MODULES = {"csv", "gzip", "io", "os", "pathlib", "pickle", "shutil", "socket", "sqlite3", "tempfile",
              "urllib"}


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


@pytest.mark.parametrize("path", sorted(CERTIFY.glob("*.py")), ids=lambda p: p.name)
def test_a_certify_module_imports_only_statistics(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        assert not (top == "rankcut" and not name.startswith("rankcut.certify")), f"{path.name}: {name}"
        assert top != "torch", f"{path.name}: {name}"
        assert top not in IO_MODULES, f"{path.name}: {name}"
    calls = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "open"]
    assert not calls, f"{path.name} opens a file"


def test_importing_certify_loads_no_other_rankcut_package_and_no_torch() -> None:
    code = ("import sys, rankcut.certify; print(sorted(m for m in sys.modules if m == 'torch' or "
            "(m.startswith('rankcut.') and not m.startswith('rankcut.certify'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
