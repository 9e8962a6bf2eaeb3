"""The options of the two commands that freeze an interleaved review: ``rankcut audit freeze
--design interleaved`` and ``rankcut review start`` (and ``simulate``). Each has its own defaults
(:data:`rankcut.audit.designs.interleaved.DEFAULT_POLICY`, :data:`rankcut.review.session.POLICY`);
the names are spelled here, not imported, so that ``rankcut --help`` loads neither module."""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["policy_option", "prior_basis_option"]

_POLICIES = ("projected-cost", "precision", "marginal-cost")
_BASES = {"misses": "a share of the misses the target allows",
          "tail": "the relevant count the screened part projects for the rest"}


def policy_option(default: str, scope: str = "") -> Any:
    """``--policy`` (``scope`` opens the help, e.g. ``"interleaved: "``)."""
    names = [f"{default} (default)", *(n for n in _POLICIES if default.partition(":")[0] != n)]
    return typer.Option(None, "--policy", help=_opened(scope, "when to screen and when to audit, "
                        f"NAME[:key=value,...]: {', '.join(names)}, or screen-then-audit:depth=K (it changes "
                        "how much is read, never the guarantee)."))


def prior_basis_option(default: str, scope: str = "") -> Any:
    """``--prior-basis`` (``scope`` as for :func:`policy_option`)."""
    bases = [f"{b}{' (default)' if b == default else ''}, {what}" for b, what in _BASES.items()]
    return typer.Option(None, "--prior-basis", help=_opened(scope, "the certificate's prior mean, fixed "
                        f"at the first audit step: {'; or '.join(bases)} (it changes how much is read, never "
                        "the guarantee)."))


def _opened(scope: str, text: str) -> str:
    return scope + text if scope else text[0].upper() + text[1:]
