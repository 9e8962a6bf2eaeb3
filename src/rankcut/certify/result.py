"""The frozen result every certificate function returns, its JSON form, and conservative rounding.

A :class:`Certificate` holds what is bounded (``quantity``), in which direction (``side``), the
value, the theorem of the audit paper it implements, the inputs and the error allocation, so
that :func:`recompute` can rebuild it from its JSON alone.

Each certificate function names its theorem once, where it is registered
(``@certificate_function(name, theorem=...)``); its certificates, the audit designs, the reports
and the command line read the label from there (:func:`theorem_of`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, Literal

import numpy as np

__all__ = [
    "SCHEMA_VERSION",
    "Certificate",
    "certificate_function",
    "recompute",
    "theorem_of",
    "round_conservative",
    "format_bound",
    "confidence_text",
    "recall_percent",
    "verify",
]

SCHEMA_VERSION = 1

Side = Literal["upper", "lower", "choice", "size", "estimate"]

# name -> pure function; filled by @certificate_function so a JSON certificate can be recomputed.
_REGISTRY: dict[str, Callable[..., Certificate]] = {}
# name -> the result of the audit paper that function implements
_THEOREMS: dict[str, str] = {}


def certificate_function(name: str, theorem: str
                         ) -> Callable[[Callable[..., Certificate]], Callable[..., Certificate]]:
    """Register a pure certificate function under ``name`` (the ``function`` field of its result)
    as implementing ``theorem`` of the audit paper (read back with :func:`theorem_of`)."""

    def deco(fn: Callable[..., Certificate]) -> Callable[..., Certificate]:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"certificate function {name!r} registered twice")
        _REGISTRY[name] = fn
        _THEOREMS[name] = theorem
        return fn

    return deco


def theorem_of(function: str) -> str:
    """The theorem the certificate function registered as ``function`` implements, as registered:
    the one place a label is written (``theorem_of("excluded_pool_finite")`` → ``"Theorem 8"``)."""
    import rankcut.certify  # noqa: F401  (importing the package registers every certificate function)

    try:
        return _THEOREMS[function]
    except KeyError:
        raise ValueError(f"unknown certificate function {function!r}") from None


def _plain(x: Any) -> Any:
    """Convert numpy scalars/arrays and tuples into JSON-ready Python values."""
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


@dataclass(frozen=True)
class Certificate:
    """A finite-sample certificate.

    :param quantity: what is bounded, in the paper's symbols (``"M0"``, ``"r"``, ``"eta"``,
        ``"recall"``, ``"L"``, ``"n0"`` for a planned size, ...).
    :param side: ``"upper"`` or ``"lower"`` for a confidence bound; ``"choice"`` for a selected
        member of a family; ``"size"`` for a planned sample size; ``"estimate"`` for a reported
        diagnostic that carries no guarantee of its own.
    :param value: the bound (a number, a tuple over family members, or ``None`` for "none").
    :param theorem: the result of the audit paper it implements, e.g. ``"Theorem 8"``.
    :param function: registry name of the pure function that produced it.
    :param inputs: the keyword arguments that function was called with.
    :param allocation: error probability allocated to each part; their sum is at most ``delta``.
    :param delta: the overall error probability (confidence ``1 − delta``).
    :param statement: one plain sentence saying what is certified.
    :param details: intermediate values worth showing (per-member bounds, effective sizes, ...).
    """

    quantity: str
    side: Side
    value: Any
    theorem: str
    function: str
    inputs: Mapping[str, Any]
    allocation: Mapping[str, float]
    delta: float | None
    statement: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def confidence(self) -> float | None:
        return None if self.delta is None else 1.0 - self.delta

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "rankcut.certificate",
            "schema_version": SCHEMA_VERSION,
            "quantity": self.quantity,
            "side": self.side,
            "value": _plain(self.value),
            "theorem": self.theorem,
            "function": self.function,
            "inputs": _plain(self.inputs),
            "allocation": _plain(self.allocation),
            "delta": self.delta,
            "statement": self.statement,
            "details": _plain(self.details),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Certificate:
        if d.get("schema") != "rankcut.certificate":
            raise ValueError("not a rankcut certificate (missing schema 'rankcut.certificate')")
        version = d.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"certificate schema version {version!r} is not supported (expected {SCHEMA_VERSION})"
            )
        fields = ("quantity", "side", "value", "theorem", "function", "inputs", "allocation", "delta",
                  "statement")
        lacks = [f for f in fields if f not in d]
        if lacks:   # an auditor's file edited or cut short: said, not a KeyError
            raise ValueError(f"certificate lacks {', '.join(lacks)}")
        for f in ("inputs", "allocation"):
            if not isinstance(d[f], Mapping):
                raise ValueError(f"certificate {f} must be an object, got {d[f]!r}")
        return cls(**{f: d[f] for f in fields}, details=d.get("details", {}))

    @classmethod
    def from_json(cls, text: str) -> Certificate:
        return cls.from_dict(json.loads(text))

    def headline(self, digits: int = 3) -> str:
        """``quantity ≤ value [theorem, confidence]``, rounded on the safe side."""
        conf = "" if self.delta is None else f", confidence {confidence_text(self.delta)}"
        value = format_bound(self.value, self.side, digits)
        return f"{self.quantity} {_relation(self.side)} {value}  [{self.theorem}{conf}]"

    def render(self, digits: int = 3) -> str:
        """Human-readable: the headline, then the plain statement. Upper bounds are rounded up,
        lower bounds down."""
        return f"{self.headline(digits)}\n  {self.statement}"


def _relation(side: str) -> str:
    return {"upper": "≤", "lower": "≥", "choice": "=", "size": "=", "estimate": "≈"}.get(side, "=")


def round_conservative(x: float, side: str, digits: int = 3) -> float:
    """Round ``x`` to ``digits`` significant digits on the safe side.

    Upper bounds round up, lower bounds round down, as the paper's tables do
    (e.g. ``0.0115942 → 0.0116`` as an upper bound). Other sides round to nearest.
    """
    if x is None or not math.isfinite(x) or x == 0:
        return x
    d = Decimal(repr(float(x)))
    exp = d.adjusted() - digits + 1
    quantum = Decimal(1).scaleb(exp)
    if side == "upper":
        rounding = ROUND_CEILING
    elif side == "lower":
        rounding = ROUND_FLOOR
    else:
        return float(round(d, -exp))
    return float(d.quantize(quantum, rounding=rounding))


def confidence_text(delta: float) -> str:
    """``1 − δ`` for display, rounded down; written as ``1 − δ`` when rounding would show 1, with
    ``δ`` rounded up (``1 − 1.24e-07`` for ``δ = 1.2341e-7``: rounded to nearest, it claimed more)."""
    shown = format_bound(1.0 - delta, "lower", 6)
    return f"1 − {format_bound(delta, 'upper')}" if delta < 1e-6 or float(shown) >= 1.0 else shown


def recall_percent(share: float) -> str:
    """A recall lower bound in a statement, as a percentage rounded down to a tenth of a point
    (``0.7826 → "78.2"``); a bound above 0 but under 0.1% keeps two significant digits (``0.0006 →
    "0.06"``), so it never reads as 0%."""
    tenths = math.floor(share * 1000) / 10
    return f"{tenths:g}" if tenths > 0 or share <= 0 else format_bound(share * 100, "lower", 2)


#: how a recall bound of 1 reads where nothing is relevant at all (recall 0/0; the paper reads 0)
READ_AS_ONE = "read as 1 where none is missed, also if nothing is relevant at all (0/0)"


def found_share(recall: float, relevant_upper: int, items: str, *, all_read: bool) -> str:
    """What a review found, in a statement: "found at least <recall>% of the relevant <items>", or,
    where the bound on the relevant count is 0, that there is none to miss (a review of a
    collection with no relevant member read "found at least 100%"): certain where ``all_read``,
    else a bound at the statement's confidence. Internal wording shared by the sequential and
    interleaved certificates; not part of the public API."""
    if relevant_upper == 0:
        why = "as there are none" if all_read else "as the bound leaves none to miss"
        return f"missed none of the relevant {items}, {why} (recall is taken as 1)"
    return f"found at least {recall_percent(recall)}% of the relevant {items}"


def unread_clause(unfound_upper: int, unread: int, what: str) -> str:
    """The opening of a sequential statement's parenthesis: where the bound leaves none unfound
    while ``unread`` items are ``what`` ("not read"), it says so is a bound, not a certainty ("at
    most 0 unfound" with 48 unread read as one); else just ``" ("``. Internal wording shared by
    the sequential and interleaved certificates."""
    if unfound_upper == 0 and unread > 0:
        return f" among the {unread} {what} (a bound at this confidence, not a certainty; "
    return " ("


def family_statement(delta: float, what: str, labels: Sequence[str], value: Any, side: str,
                     how: str) -> str:
    """The statement of a certificate over a family ``G`` (Theorems 7, 8 and 12): "With confidence
    1 − δ, the <what> of g1, g2 are at most <value> (<how>)." (``at least`` for a lower bound).
    Internal wording shared by the certify modules; not part of the public API."""
    bound = "at least" if side == "lower" else "at most"
    return (
        f"With confidence {confidence_text(delta)}, the {what} of {', '.join(labels)} "
        f"{'is' if len(labels) == 1 else 'are'} {bound} {format_bound(value, side)} ({how})."
    )


def format_bound(value: Any, side: str, digits: int = 3) -> str:
    """Format a bound (or a tuple of bounds) with conservative rounding; integers stay exact."""
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(format_bound(v, side, digits) for v in value) + ")"
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{round_conservative(float(value), side, digits):.{digits}g}"
    return str(value)


def recompute(cert: Certificate | Mapping[str, Any]) -> Certificate:
    """Rebuild a certificate from its recorded function name and inputs."""
    if not isinstance(cert, Certificate):
        cert = Certificate.from_dict(cert)
    # importing the package registers every certificate function
    import rankcut.certify  # noqa: F401

    try:
        fn = _REGISTRY[cert.function]
    except KeyError:
        raise ValueError(f"unknown certificate function {cert.function!r}") from None
    try:
        return fn(**cert.inputs)
    except TypeError as err:   # inputs renamed, added or dropped: not the function's arguments
        raise ValueError(f"certificate inputs {sorted(cert.inputs)} are not the arguments of "
                         f"{cert.function} ({err}): an edited certificate, or one another version of rankcut "
                         "wrote with other argument names; compute it again from its data") from None


def verify(cert: Certificate | Mapping[str, Any], fresh: Certificate | None = None) -> Certificate:
    """Recompute a certificate and check that its stored value and allocation match.

    For auditors receiving a certificate as JSON: returns the recomputed certificate, or raises
    ``ValueError`` naming the fields that differ (e.g. an edited value). They are compared as JSON
    text, so a count retyped (``300.0`` or ``true`` for ``300`` or ``1``) differs too.

    :param fresh: a certificate the caller computed already; it stands for the recomputation when
        its function and inputs are the stored certificate's, as JSON text (checked here: ``0``,
        ``0.0`` and ``false`` differ, as the recomputation's checks tell them apart), so a long one,
        an interleaved review's replay, is not computed twice. Otherwise the certificate is
        recomputed.
    """
    stored = cert if isinstance(cert, Certificate) else Certificate.from_dict(cert)
    old = stored.to_dict()
    same = (fresh is not None and fresh.function == stored.function
            and json.dumps(_plain(fresh.inputs), sort_keys=True) == json.dumps(old["inputs"], sort_keys=True))
    again = fresh if same and fresh is not None else recompute(stored)
    new = again.to_dict()
    differ = [key for key in ("value", "allocation", "delta", "theorem", "quantity", "side")
              if json.dumps(new[key], sort_keys=True) != json.dumps(old[key], sort_keys=True)]
    if differ:
        shown = "; ".join(f"{k}: stored {old[k]!r}, recomputed {new[k]!r}" for k in differ)
        raise ValueError(f"certificate does not match a recomputation from its inputs ({shown}): edited, "
                         "or computed by a rankcut whose bounds differ from this one's")
    return again
