"""The error that names the parameter at fault, so that a caller can speak of it in its own words
(the command line names it by its flag: ``batch_size`` → ``--batch-size``, :mod:`rankcut.cli._errors`)."""

from __future__ import annotations

__all__ = ["ParamError"]


class ParamError(ValueError):
    """A bad value of the parameter ``param``; ``str(error)`` is ``message``."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param

    def __reduce__(self) -> tuple[type[ParamError], tuple[str, str]]:
        # pickled with both arguments, so that it crosses to and from a Ray worker intact
        return type(self), (self.param, str(self))
