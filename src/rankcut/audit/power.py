"""Whether a sample size can certify anything: the guard of :func:`rankcut.audit.workflow.sample`.

An audit draws its sample once (Assumption 1), so a size that cannot meet the frozen target even in
the best case — no excluded-side draw relevant, every included draw relevant — would use the audit
up for nothing. The best case is certified with the design's own certificates
(:func:`rankcut.audit.designs.certificates`), so the guard is exactly as strict as certify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankcut.audit.designs import design_of
from rankcut.audit.folder import Audit, sizes_text
from rankcut.audit.options import spelled as _o
from rankcut.audit.sampling import Draws

__all__ = ["best_case", "check_power", "least_excluded"]


def check_power(audit: Audit, sizes: Mapping[str, Any], ex_given: Any, in_given: Any,
                defaults: Mapping[str, Any], allow: bool) -> tuple[Sequence[dict[str, Any]], bool]:
    """The draws of ``sizes`` and whether they are underpowered: at best (no excluded-side draw
    relevant, every included draw relevant) they cannot meet the frozen target, or without a target
    they draw nothing from the excluded pool. Underpowered sizes are refused unless ``allow``
    (``allow_underpowered``), naming the least one-number size that can (:func:`least_excluded`):
    the audit has one sample, and such sizes would use it up for nothing. The anytime design
    (sequential) samples its whole pool and is never underpowered."""
    spec = design_of(audit)
    if spec.anytime:   # its sample is the whole pool, in order
        rows, verdict, underpowered = spec.draw(audit, sizes), None, False
    else:
        rows, verdict = best_case(audit, sizes)
        underpowered = (not verdict.met) if verdict is not None else \
            max(m.n0 for m in audit.sizes) > 0 and all(r["pool"] == "included" for r in rows)
    if underpowered and not allow:
        if verdict is None:
            raise ValueError(f"sizes {sizes_text(sizes)} draw nothing from the excluded pool, so they "
                             "certify nothing about what the cut left behind, and the audit has one sample: "
                             f"give {_o('excluded')} > 0, or {_o('allow_underpowered')} to draw them anyway")
        can = ""
        if isinstance(ex_given, int) and isinstance(sizes["excluded"], int):   # one size: search it
            least = least_excluded(audit, ex_given, in_given)
            along = "" if in_given is None else f" with {_o('included')} {in_given}"
            can = (f"the least {_o('excluded')} that can is {least}; " if least is not None else
                   f"no {_o('excluded')} can{along}; ")
        raise ValueError(f"sizes {sizes_text(sizes)} cannot meet the frozen target even if no excluded-pool "
                         f"draw is relevant ({verdict.text}), and the audit has one sample: {can}give "
                         f"larger sizes (the plan's: {sizes_text(defaults) or 'none'}), or "
                         f"{_o('allow_underpowered')} to draw these anyway")
    return rows, underpowered


def best_case(audit: Audit, sizes: Mapping[str, Any]) -> tuple[Sequence[dict[str, Any]], Any]:
    """The draws of ``sizes`` and the verdict the design's own certificates give them at best: no
    excluded-side draw relevant, every included draw relevant (None without a target)."""
    from rankcut.audit.designs import certificates

    spec = design_of(audit)
    rows = spec.draw(audit, sizes)
    # a sample kept as indices says where each draw is from without building its rows
    y = (rows.is_included() if isinstance(rows, Draws) else
         np.array([r["pool"] == "included" for r in rows])).astype(np.int64)
    _, findings = certificates(audit, spec.counts(audit, rows, y, 0))
    return rows, findings.verdict


def least_excluded(audit: Audit, given: int, included: int | None) -> int | None:
    """The smallest one-number excluded size above ``given`` whose best case meets the frozen target
    (doubling, then bisection: the draws grow with the size tried), or None when no size up to the
    largest excluded pool does (without replacement) or up to 2^24 draws (with it)."""
    spec = design_of(audit)
    cap = max(m.n0 for m in audit.sizes) if audit.finite else 1 << 24

    def meets(n: int) -> bool:
        try:
            verdict = best_case(audit, spec.sizes(audit, n, included))[1]
        except ValueError:   # a size the design refuses (beyond a pool)
            return False
        return bool(verdict is not None and verdict.met)

    lo, hi = given, max(1, 2 * given)
    while hi < cap and not meets(hi):
        lo, hi = hi, 2 * hi
    if hi >= cap:
        hi = cap
        if not meets(hi):
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi
