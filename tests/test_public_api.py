"""The curated public surface of ``rankcut``: every advertised name resolves, lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import rankcut


@pytest.mark.parametrize("name", rankcut.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(rankcut, name) is not None


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rankcut.nope  # noqa: B018


def test_import_is_cheap() -> None:
    code = "import sys, rankcut; print('scipy' in sys.modules, 'pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: without ``py.typed`` in the package (and in the wheel's package data) a user's type
    checker ignores every annotation and reports the module as untyped (the RAG-engineer walk)."""
    import tomllib
    from importlib import resources
    from pathlib import Path

    assert resources.files("rankcut").joinpath("py.typed").is_file()
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["rankcut"]
