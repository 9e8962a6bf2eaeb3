"""A joint report: several certificates about one generator at one joint confidence.

Section 8 of the audit paper: "any finite collection of the certificates in this paper can be
reported jointly by allocating error shares that sum to δ and taking a union bound". The error
budget is declared up front as named events (one per audit sample and bound, e.g.
``{"excluded": 0.025, "included": 0.025}``); every certificate attached to the report says which
declared event each of its own allocations is charged to.

Within one certificate, different allocations are different failure events, so the allocations
charged to one event add up and must fit its share. Across certificates, charging the same event
is the caller's statement that both rest on the *same* bound from the *same* sample (the §8
missed-mass bound and the recall bound both use the excluded-pool bound MU at 0.025): that event
is charged once, the rendering says which certificates share it, and the joint confidence is
``1 − Σ`` (shares of the events charged). Two certificates from different samples, or from
different bounds on one sample, must be charged to different events. Where that is plainly not so,
``attach`` refuses: the two charge the event different shares (one bound has one δ), or they are of
one certificate function with other inputs (the same bound of one sample is the same computation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rankcut.certify._validate import check_delta
from rankcut.certify.result import SCHEMA_VERSION, Certificate, _plain, confidence_text

__all__ = ["JointReport"]

_RTOL = 1e-12


@dataclass(frozen=True)
class JointReport:
    """Certificates reported jointly by a union bound over a budget declared before the audit.

    :param delta: the joint error probability; the declared budget must sum to at most this.
    :param budget: error share of each named event, declared up front.
    :param title: what is being certified (e.g. the generator or cut policy).
    :param facts: exact quantities that need no labels (burden, pool sizes, ...).
    """

    delta: float
    budget: Mapping[str, float]
    title: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)
    entries: tuple[tuple[str, Certificate, Mapping[str, str]], ...] = ()

    def __post_init__(self) -> None:
        # plain floats: a numpy one (float32 above all) would not write as JSON
        object.__setattr__(self, "delta", check_delta(self.delta))
        if not self.budget:
            raise ValueError("declare at least one event in the budget")
        object.__setattr__(self, "budget", {name: check_delta(a, f"budget share of {name!r}")
                                            for name, a in self.budget.items()})
        total = sum(self.budget.values())
        if total > self.delta * (1 + _RTOL):
            raise ValueError(
                f"declared budget sums to {total:.6g}, more than the joint delta {self.delta:.6g}"
            )

    def attach(self, name: str, cert: Certificate, charge: Mapping[str, str] | None = None) -> JointReport:
        """Return a report with ``cert`` added under ``name``.

        :param charge: maps each key of ``cert.allocation`` to a declared event. Keys that are
            already event names may be left out. Each allocation must not exceed its event's share.
        """
        if any(n == name for n, _, _ in self.entries):
            raise ValueError(f"a certificate named {name!r} is already in the report")
        charge = dict(charge or {})
        resolved: dict[str, str] = {}
        spent: dict[str, float] = {}
        for key, a in cert.allocation.items():
            event = charge.pop(key, key)
            if event not in self.budget:
                raise ValueError(
                    f"certificate {name!r}: allocation {key!r} is charged to {event!r}, which is not a "
                    f"declared event (declared: {', '.join(self.budget)})"
                )
            resolved[key] = event
            spent[event] = spent.get(event, 0.0) + a
        for event, a in spent.items():
            # several allocations of one certificate are different failure events: they add up
            if a > self.budget[event] * (1 + _RTOL):
                keys = ", ".join(k for k, e in resolved.items() if e == event)
                raise ValueError(   # in full: a float32 0.025 is 0.025000000372529 (repr)
                    f"certificate {name!r}: allocations {keys} charged to {event!r} sum to {float(a)!r}, "
                    f"more than its declared share {self.budget[event]!r}"
                )
        if charge:
            raise ValueError(f"certificate {name!r} has no allocation named {', '.join(charge)}")
        for other, before, charged in self.entries:
            for event in set(resolved.values()) & set(charged.values()):
                _check_shared(event, (name, cert, resolved), (other, before, charged))
        return replace(self, entries=(*self.entries, (name, cert, resolved)))

    @property
    def joint_delta(self) -> float:
        """Error actually spent: the sum of the declared shares of the events charged."""
        used = {e for _, _, ch in self.entries for e in ch.values()}
        return float(sum(self.budget[e] for e in used))

    def __getitem__(self, name: str) -> Certificate:
        for n, c, _ in self.entries:
            if n == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "rankcut.joint_report",
            "schema_version": SCHEMA_VERSION,
            "title": self.title,
            "delta": self.delta,
            "budget": dict(self.budget),
            "joint_delta": self.joint_delta,
            "facts": _plain(dict(self.facts)),
            "certificates": [
                {"name": n, "charge": dict(ch), "certificate": c.to_dict()} for n, c, ch in self.entries
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> JointReport:
        if d.get("schema") != "rankcut.joint_report":
            raise ValueError("not a rankcut joint report (missing schema 'rankcut.joint_report')")
        if d.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"joint report schema version {d.get('schema_version')!r} is not supported")
        rep = cls(delta=d["delta"], budget=d["budget"], title=d.get("title", ""), facts=d.get("facts", {}))
        for e in d["certificates"]:
            rep = rep.attach(e["name"], Certificate.from_dict(e["certificate"]), e["charge"])
        return rep

    @classmethod
    def from_json(cls, text: str) -> JointReport:
        return cls.from_dict(json.loads(text))

    def render(self, digits: int = 3) -> str:
        """Plain-text report; upper bounds rounded up, lower bounds down (as the paper's tables)."""
        conf = confidence_text(self.joint_delta)
        lines = [self.title] if self.title else []
        users = {e: [n for n, _, ch in self.entries if e in ch.values()] for e in self.budget}
        used = [e for e in self.budget if users[e]]
        budget = ", ".join(f"{e} {self.budget[e]:g}" for e in used)
        lines.append(f"With simultaneous confidence at least {conf} (union bound over {budget}):"
                     if len(used) > 1 else f"With confidence at least {conf} (δ = {self.joint_delta:g}):")
        shared: dict[tuple[str, ...], list[str]] = {}
        for e in used:
            if len(users[e]) > 1:
                shared.setdefault(tuple(users[e]), []).append(e)
        for names, events in shared.items():
            what = f"{events[0]} bound" if len(events) == 1 else f"bounds {', '.join(events)}"
            lines.append(f"  ({' and '.join(names)} rest on the same {what}, charged once)")
        for key, value in self.facts.items():
            lines.append(f"  {key} = {value} (known exactly, no labels needed)")
        for name, cert, _ in self.entries:
            lines.append(f"  {name}: {cert.headline(digits)}")
            lines.append(f"    {cert.statement}")
        return "\n".join(lines)


def _check_shared(event: str, new: tuple[str, Certificate, Mapping[str, str]],
                  old: tuple[str, Certificate, Mapping[str, str]]) -> None:
    """Refuse to charge ``event`` for the certificate ``new`` where ``old`` charges it too and the
    two plainly do not rest on the same bound: they charge it different shares, or they are of one
    function with other inputs. Charged once, two bounds would claim more confidence than the union
    bound gives."""
    (name, cert, charge), (other, before, charged) = new, old
    share = sum(a for k, a in cert.allocation.items() if charge[k] == event)
    had = sum(a for k, a in before.allocation.items() if charged[k] == event)
    why = None
    if abs(share - had) > _RTOL * max(share, had):
        why = f"at δ {share:g} where {other!r} is at {had:g}"
    elif cert.function == before.function and _plain(cert.inputs) != _plain(before.inputs):
        why = f"from other inputs of {cert.function} than {other!r}"
    if why is not None:
        raise ValueError(
            f"certificate {name!r} charges {event!r}, as {other!r} does, but {why}: certificates charged "
            f"to one event rest on the same bound from the same sample (it is charged once, so two "
            f"bounds would claim more confidence than they have); declare an event for each in the budget"
        )
