"""Wording shared by rankcut's messages: a count with its grammatical number, and a shortened list
of ids. Imports nothing, so that the command line's fast paths can use it without numpy."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["count", "id_list"]


def count(n: int, one: str, many: str) -> str:
    """``"1 query"`` / ``"2 queries"``: the count with the right grammatical number."""
    return f"{n} {one if n == 1 else many}"


def id_list(ids: Iterable[object], limit: int = 5, *, quote: bool = True, sep: str = ", ") -> str:
    """``"'q1', 'q2', ... (12 in all)"``: the first ``limit`` of ``ids`` (as ``repr``, or as ``str``
    where not ``quote``: line numbers), ``sep`` between them (``"; "`` for items that hold commas),
    and how many there are when some are left out."""
    ids = list(ids)
    shown = sep.join((repr if quote else str)(i) for i in ids[:limit])
    return shown + (f"{sep}... ({len(ids)} in all)" if len(ids) > limit else "")
