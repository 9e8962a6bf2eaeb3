"""Whether a command shows progress bars: the one rule, for every command that runs long.

The bars are tqdm's, on stderr, so that stdout stays the command's result. They are off under
``--json`` (the output is for a program) and off when stderr is not a terminal (a log file or a
pipe would fill with redrawn lines); ``RANKCUT_PROGRESS=1`` shows them anyway (e.g. to watch a
job's log) and ``RANKCUT_PROGRESS=0`` hides them on a terminal. The library functions take a
plain ``progress`` bool; the command line decides it here. Where a step's signature is shared
by many implementations (an audit design's ``open``), the command sets :data:`BARS` for its
duration instead (:func:`bars`). :mod:`rankcut.certify` shows nothing itself: it offers a hook,
and the audit layer draws the bar.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

#: the environment variable that overrides the terminal check: ``1`` on, ``0`` off
ENV = "RANKCUT_PROGRESS"

#: whether the step running now draws its bars (set by :func:`bars`; off for library callers)
BARS: ContextVar[bool] = ContextVar("BARS", default=False)

__all__ = ["BARS", "ENV", "bars", "show_progress"]


def show_progress(*, as_json: bool = False, stream: TextIO | None = None) -> bool:
    """Whether to draw progress bars on ``stream`` (default ``sys.stderr``).

    :param as_json: the command prints JSON: never a bar, whatever :data:`ENV` says.
    :raises ValueError: :data:`ENV` holds something other than ``0``, ``1`` or nothing.
    """
    if as_json:
        return False
    given = os.environ.get(ENV, "").strip()
    if given not in ("", "0", "1"):
        raise ValueError(f"environment variable {ENV} must be 1 (show progress bars) or 0 (hide them), "
                         f"got {given!r}")
    if given:
        return given == "1"
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


@contextmanager
def bars(enabled: bool) -> Iterator[None]:
    """Within the block, :data:`BARS` is ``enabled``."""
    token = BARS.set(enabled)
    try:
        yield
    finally:
        BARS.reset(token)
