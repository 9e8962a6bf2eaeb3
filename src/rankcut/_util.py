"""Small checks and conversions shared outside :mod:`rankcut.certify` (which keeps its own, so
that it imports no other rankcut package): integer, bool and number arguments, and numpy values
as strict JSON, and warnings prefixed by their source (the wording of messages is
:mod:`rankcut._words`).

The checks raise :class:`rankcut.errors.ParamError` naming the argument, so that the command
line can name it by its flag.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from rankcut.errors import ParamError

__all__ = ["check_bool", "check_int", "check_number", "jsonable", "warnings_about"]


def check_int(value: Any, arg: str, *, low: int, ge: str = "≥") -> int:
    """``value`` as an int ≥ ``low`` (bools rejected), else ParamError naming ``arg``; ``ge`` is
    how the message writes "≥" (the networks and losses of :mod:`rankcut.nn` write ``>=``)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ParamError(arg, f"{arg} must be an integer {ge} {low}, got {value!r}")
    return int(value)


def check_bool(value: Any, arg: str) -> bool:
    """``value`` as a bool (numpy's included), else ParamError naming ``arg``."""
    if not isinstance(value, bool | np.bool_):
        raise ParamError(arg, f"{arg} must be True or False, got {value!r}")
    return bool(value)


def check_number(value: Any, arg: str, *, low: float | None = None, high: float | None = None,
                 low_closed: bool = False, high_closed: bool = False) -> float:
    """``value`` as a finite float within the given bounds (open unless ``*_closed``), else
    ParamError naming ``arg`` and the interval."""
    ok = not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating) \
        and math.isfinite(value)
    if ok:
        v = float(value)
        ok = (low is None or (v >= low if low_closed else v > low)) and \
            (high is None or (v <= high if high_closed else v < high))
    if not ok:
        if low is not None and high is not None:
            what = f"in {'[' if low_closed else '('}{low:g}, {high:g}{']' if high_closed else ')'}"
        elif low is not None:
            what = f"{'≥' if low_closed else '>'} {low:g}"
        else:
            what = f"{'≤' if high_closed else '<'} {high:g}"
        raise ParamError(arg, f"{arg} must be a finite number {what}, got {value!r}")
    return float(value)


def jsonable(value: Any) -> Any:
    """``value`` as strict JSON: dict keys as strings, tuples as lists, numpy scalars as Python
    numbers, non-finite floats as ``"nan"``/``"inf"``/``"-inf"``."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic) and not isinstance(value, np.str_):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # strict JSON has no NaN / inf
    return value


@contextmanager
def warnings_about(source: str) -> Iterator[None]:
    """Prefix the warnings raised inside with ``source`` (a file), so that those of two inputs (a
    training and a test run; an audit's run) can be told apart."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:  # also when loading fails: the warnings explain the error
        for w in caught:
            warnings.warn(f"{source}: {w.message}", w.category, stacklevel=1)
