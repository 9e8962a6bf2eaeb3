"""Coverage of an ordered union of detectors, audited on positives (Section 5 of the audit paper).

An ordered sequence of component detectors ``h_1, ..., h_J`` defines the unions
``g_j = max_{l ≤ j} h_l`` (``g_0 ≡ 0``). An audit draws positives ``X_1^+, ..., X_Q^+`` which,
conditional on ``Q``, are i.i.d. from ``P(· | Y = 1)`` (Theorem 24, Remark 25: positives found only
by reviewing an included pool do *not* qualify). Two results use the same sample:

* :func:`direct_miss_rate_certificate` — Proposition 26: ``L(g_J) ≤ U_Q(C_J, δ)`` with ``C_J`` the
  audited positives missed by the full union. One allocation ``δ``; this is the bound to report.
* :func:`incremental_coverage_certificate` — Theorem 24: simultaneous lower bounds
  ``γ_j ≥ L_{Q_j}(H_j, δ_j)`` on the incremental coverages (Definition 23), with ``Σ δ_j ≤ δ``,
  hence ``L(g_J) ≤ Π_j (1 − L_{Q_j}(H_j, δ_j))``. A diagnostic: it attributes coverage to each
  component, and as a bound on ``L(g_J)`` it is looser than Proposition 26 (Section 5.3).
* :func:`amplification_diagnostics` — both, in one result whose value is Proposition 26's bound.

Counts: ``positives = Q``; ``caught[j-1] = H_j``, the residual positives (missed by ``g_{j-1}``)
caught by ``h_j``. The residual sizes follow exactly: ``Q_1 = Q`` and ``Q_{j+1} = Q_j − H_j``, and
the full union misses ``C_J = Q − Σ_j H_j`` of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rankcut.certify._validate import allocation, as_sequence, check_count, check_delta
from rankcut.certify.bounds import cp_lower, cp_upper
from rankcut.certify.result import Certificate, certificate_function, theorem_of

__all__ = [
    "amplification_counts",
    "amplification_diagnostics",
    "direct_miss_rate_certificate",
    "incremental_coverage_certificate",
]

# One entry of ``caught`` (and of ``deltas``) per component detector h_1..h_J.
_COMPONENT = "component detector"


def _residuals(positives: Any, caught: Any) -> tuple[int, list[int], list[int]]:
    """Validate ``Q`` and ``H_1..H_J``; return ``Q``, ``H`` and the residual sizes ``Q_1..Q_J``."""
    q = check_count(positives, "positives")
    h = [check_count(c, f"caught[{j}]") for j, c in enumerate(as_sequence(caught, "caught", _COMPONENT))]
    residual = []
    left = q
    for j, hj in enumerate(h):
        if hj > left:
            raise ValueError(
                f"caught[{j}]={hj} exceeds the residual positives Q_{j + 1}={left} not caught by "
                f"the earlier components (positives={q}, caught so far={q - left})"
            )
        residual.append(left)
        left -= hj
    return q, h, residual


def _split(delta: float, deltas: Any, parts: int) -> list[float]:
    """Per-round allocation ``δ_1..δ_J`` with ``Σ δ_j ≤ δ`` (even split when ``deltas`` is None)."""
    return allocation(deltas, delta, parts, units=f"{_COMPONENT}s (J={parts})", scalar=False).tolist()


def amplification_counts(hits: ArrayLike) -> tuple[int, list[int]]:
    """Counts ``(Q, [H_1..H_J])`` from the component outputs on the audited positives.

    :param hits: boolean array of shape ``[Q, J]``; ``hits[i, j]`` is ``h_{j+1}(X_i^+) = 1``.
    :returns: ``Q`` and ``H_j = #{i : g_{j-1}(X_i^+) = 0, h_j(X_i^+) = 1}`` (Theorem 24).
    """
    arr = np.asarray(hits)
    if arr.ndim != 2:
        raise ValueError(f"hits must have shape [Q, J], got shape {arr.shape}")
    if arr.dtype != bool:
        if not np.all((arr == 0) | (arr == 1)):
            raise ValueError("hits must hold 0/1 or boolean detector outputs")
        arr = arr.astype(bool)
    q, j = arr.shape
    if j == 0:
        raise ValueError("hits must have at least one column (J >= 1 component detectors)")
    # The first detector that catches item i gets the credit; rows caught by none add nothing.
    caught_any = arr.any(axis=1)
    first = np.argmax(arr, axis=1)[caught_any]
    h = np.bincount(first, minlength=j)
    return q, [int(v) for v in h]


def _gamma_lower(h: list[int], residual: list[int], ds: list[float]) -> list[float]:
    return [float(v) for v in np.atleast_1d(cp_lower(h, residual, ds))]


@certificate_function("direct_miss_rate", theorem="Proposition 26")
def direct_miss_rate_certificate(positives: int, missed: int, delta: float) -> Certificate:
    """Proposition 26: ``L(g_J) ≤ U_Q(C_J, δ)``, the direct conditional miss-rate certificate.

    With probability at least ``1 − δ``, the conditional miss rate ``L(g) = P(g(X) = 0 | Y = 1)``
    of the full union is at most the Clopper–Pearson upper bound ``U_Q(C_J, δ)``. ``Q = 0`` gives
    the trivial bound 1 (``U_0(0, δ) = 1``).

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param missed: ``C_J``, how many of them the union ``g_J`` misses.
    :param delta: error probability ``δ`` in (0, 1).
    """
    q = check_count(positives, "positives")
    c = check_count(missed, "missed")
    if c > q:
        raise ValueError(f"missed={c} exceeds positives={q}")
    d = check_delta(delta)
    bound = float(cp_upper(c, q, d))
    return Certificate(
        quantity="L",
        side="upper",
        value=bound,
        theorem=theorem_of("direct_miss_rate"),
        function="direct_miss_rate",
        inputs={"positives": q, "missed": c, "delta": d},
        allocation={"L": d},
        delta=d,
        statement=(
            f"With probability at least 1 - {d:g}, the conditional miss rate of the full union, "
            f"P(g_J(X) = 0 | Y = 1), is at most U_{q}({c}, {d:g}) = {bound:.6g}."
        ),
        details={"positives": q, "missed": c},
    )


@certificate_function("incremental_coverage", theorem="Theorem 24")
def incremental_coverage_certificate(
    positives: int,
    caught: Sequence[int],
    delta: float,
    *,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """Theorem 24: simultaneous lower bounds on the incremental coverages ``γ_j`` (diagnostic).

    With probability at least ``1 − δ``, ``γ_j ≥ ℓ_j := L_{Q_j}(H_j, δ_j)`` for every
    ``j = 1..J`` (with ``L_0(0, α) = 0``), and consequently, by identity (4),
    ``L(g_J) ≤ Π_j (1 − ℓ_j)``. The value is the tuple ``(ℓ_1, ..., ℓ_J)``; the product bound is
    in ``details["miss_rate_product_upper"]``. Report Proposition 26 for ``L(g_J)`` instead: the
    product is looser, and late rounds have small residual sizes ``Q_j`` (Section 5.3).

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param caught: ``H_1..H_J``; ``H_j`` residual positives (missed by ``g_{j-1}``) caught by ``h_j``.
    :param delta: overall error probability ``δ`` in (0, 1).
    :param deltas: per-round levels ``δ_j > 0`` with ``Σ δ_j ≤ δ``, fixed before the audit;
        ``None`` splits ``δ`` evenly.
    """
    q, h, residual = _residuals(positives, caught)
    d = check_delta(delta)
    ds = _split(d, deltas, len(h))
    lower = _gamma_lower(h, residual, ds)
    product = math.prod(1.0 - v for v in lower)
    return Certificate(
        quantity="gamma",
        side="lower",
        value=tuple(lower),
        theorem=theorem_of("incremental_coverage"),
        function="incremental_coverage",
        inputs={"positives": q, "caught": h, "delta": d,
                "deltas": None if deltas is None else ds},
        allocation={f"gamma_{j + 1}": dj for j, dj in enumerate(ds)},
        delta=d,
        statement=(
            f"With probability at least 1 - {d:g}, simultaneously for j = 1..{len(h)}, the "
            f"incremental coverage gamma_j is at least L_(Q_j)(H_j, delta_j); hence "
            f"L(g_J) <= {product:.6g}. Diagnostic: report Proposition 26 for L(g_J)."
        ),
        details={
            "residual": residual,
            "caught": h,
            "deltas": ds,
            "gamma_lower": lower,
            "miss_rate_product_upper": product,
        },
    )


@certificate_function(
    "amplification_diagnostics",
    theorem="Proposition 26 (reported); Theorem 24 (diagnostic)",
)
def amplification_diagnostics(
    positives: int,
    caught: Sequence[int],
    delta: float,
    *,
    deltas: Sequence[float] | None = None,
) -> Certificate:
    """Proposition 26 as the reported guarantee, with Theorem 24 as its diagnostic, in one result.

    The value is Proposition 26's bound ``U_Q(C_J, δ)`` on ``L(g_J)``, with ``C_J = Q − Σ_j H_j``.
    ``details["theorem_24"]`` holds the per-round lower bounds ``L_{Q_j}(H_j, δ_j)`` on ``γ_j`` and
    the product bound ``Π_j (1 − L_{Q_j}(H_j, δ_j))`` (Theorem 24). Each statement holds with
    probability at least ``1 − δ`` on its own (the same sample, not a joint event); the product
    is shown for attribution, never as the reported bound. For ``J = 1`` and ``δ_1 = δ`` the two
    coincide, since ``U_n(k, α) = 1 − L_n(n − k, α)``.

    :param positives: ``Q``, audited positives, i.i.d. from ``P(· | Y = 1)`` given ``Q``.
    :param caught: ``H_1..H_J`` as in :func:`incremental_coverage_certificate`.
    :param delta: error probability ``δ`` in (0, 1) of each statement.
    :param deltas: Theorem 24's per-round split, ``Σ δ_j ≤ δ``; ``None`` splits ``δ`` evenly.
    """
    q, h, residual = _residuals(positives, caught)
    d = check_delta(delta)
    ds = _split(d, deltas, len(h))
    missed = q - sum(h)
    direct = float(cp_upper(missed, q, d))
    lower = _gamma_lower(h, residual, ds)
    product = math.prod(1.0 - v for v in lower)
    return Certificate(
        quantity="L",
        side="upper",
        value=direct,
        theorem=theorem_of("amplification_diagnostics"),
        function="amplification_diagnostics",
        inputs={"positives": q, "caught": h, "delta": d,
                "deltas": None if deltas is None else ds},
        allocation={"L": d},
        delta=d,
        statement=(
            f"Reported guarantee (Proposition 26): with probability at least 1 - {d:g}, the full "
            f"union's conditional miss rate L(g_J) is at most {direct:.6g}. Diagnostic (Theorem "
            f"24, its own 1 - {d:g}): per-component lower bounds on the incremental coverages, "
            f"whose product bound on L(g_J) is {product:.6g}; it is not the reported bound."
        ),
        details={
            "positives": q,
            "missed": missed,
            "theorem_24": {
                "residual": residual,
                "caught": h,
                "deltas": ds,
                "gamma_lower": lower,
                "miss_rate_product_upper": product,
            },
        },
    )
