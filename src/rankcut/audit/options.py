"""How the audit's messages name arguments and steps, and the small argument checks phrased that way.

Python names by default; the command line installs its option names (``--max-missed``) and
commands (``rankcut audit plan``) in :data:`OPTION_NAMES` while a command runs, so one message
reads right from Python and from the shell. The table is built by
:func:`rankcut.cli._errors.option_names`, with the flag rule that also names a
:class:`~rankcut.errors.ParamError`'s parameter; it is a table, not that error, because these
messages name arguments and steps anywhere in a sentence, not only at its start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

__all__ = ["OPTION_NAMES", "check_count", "check_delta", "check_int_list", "spelled", "start_again"]

OPTION_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar("OPTION_NAMES", default=None)


def spelled(name: str, python: str | None = None) -> str:
    """``name`` as the caller spells it (an argument, an option or a step); ``python``: the
    argument's name where a command's table keys it otherwise (``qrels_file``, the ``--qrels``
    file, beside ``qrels``, the ``--oracle qrels`` choice)."""
    names = OPTION_NAMES.get()
    return (python or name) if names is None else names.get(name, python or name)


def start_again() -> str:
    """How a refusal tells the caller to begin afresh: "freeze a new audit", unless the command
    running says it otherwise (``rankcut review``: start a new review)."""
    names = OPTION_NAMES.get()
    return "freeze a new audit" if names is None else names.get("start_again", "freeze a new audit")


def check_delta(x: Any, name: str) -> float:
    """``x`` as an error probability in (0, 1): the certificates' own check, the name spelled as
    the caller spells it."""
    from rankcut.certify._validate import check_delta as _check_delta  # rankcut.certify loads scipy

    return _check_delta(x, spelled(name))


def check_count(x: Any, name: str, minimum: int = 0) -> int:
    """``x`` as an integer of at least ``minimum``."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer) or x < minimum:
        raise ValueError(f"{spelled(name)} must be an integer >= {minimum}, got {x!r}")
    return int(x)


def check_int_list(x: Any, name: str) -> list[int]:
    """``x`` as a non-empty list of integers."""
    if isinstance(x, str | bytes) or not isinstance(x, Sequence) or not x:
        raise ValueError(f"{spelled(name)} must be a non-empty list of integers, got {x!r}")
    out = []
    for i, v in enumerate(x):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise ValueError(f"{spelled(name)}[{i}] must be an integer, got {v!r}")
        out.append(int(v))
    return out
