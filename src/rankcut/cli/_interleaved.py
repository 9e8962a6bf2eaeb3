"""What ``rankcut audit`` and ``rankcut review`` share for an interleaved review: the options of
the two commands that freeze one (``rankcut audit freeze --design interleaved`` and ``rankcut
review start``, and ``simulate``), and what ``read-on`` says. Each has its own defaults
(:data:`rankcut.audit.designs.interleaved.DEFAULT_POLICY`, :data:`rankcut.review.session.POLICY`);
the names are spelled here, not imported, so that ``rankcut --help`` loads neither module."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import typer

__all__ = ["policy_option", "prior_basis_option", "said_read_on"]

_POLICIES = ("projected-cost", "precision", "marginal-cost")
_BASES = {"misses": "a share of the misses the target allows",
          "tail": "the relevant count the screened part projects for the rest"}


def policy_option(default: str, scope: str = "") -> Any:
    """``--policy`` (``scope`` opens the help, e.g. ``"interleaved: "``)."""
    names = [f"{default} (default)", *(n for n in _POLICIES if default.partition(":")[0] != n)]
    return typer.Option(None, "--policy", help=_opened(scope, "when to screen and when to audit, "
                        f"NAME[:key=value,...]: {', '.join(names)}, or screen-then-audit:depth=K (it changes "
                        "how much is read, never the guarantee: keep the default unless your own past "
                        "reviews read less with another)."))


def prior_basis_option(default: str, scope: str = "") -> Any:
    """``--prior-basis`` (``scope`` as for :func:`policy_option`)."""
    bases = [f"{b}{' (default)' if b == default else ''}, {what}" for b, what in _BASES.items()]
    return typer.Option(None, "--prior-basis", help=_opened(scope, "the certificate's prior mean, fixed "
                        f"at the first audit step: {'; or '.join(bases)} (it changes how much is read, never "
                        "the guarantee: keep the default unless your own past reviews read less with "
                        "another)."))


def _opened(scope: str, text: str) -> str:
    return scope + text if scope else text[0].upper() + text[1:]


def said_read_on(since: int, now: bool, words: Any, info: Mapping[str, Any], after: Sequence[str],
                 as_json: bool) -> None:
    """What ``read-on`` did (:func:`rankcut.audit.workflow.read_on`'s ``since`` and ``now``), in
    ``words`` (:class:`~rankcut.audit.designs.base.Words`) and then the lines ``after`` it;
    or as JSON, with the status ``info``."""
    from rankcut.audit.designs.interleaved import read_on_text

    if as_json:
        said = {"read_on_after": since, "began_now": now, **info}
        typer.echo(json.dumps(said, indent=2, ensure_ascii=False))
        return
    for line in (read_on_text(since, now, words), *after):
        typer.echo(line)
