"""Noisy audit labels with a known sensitivity floor (Section 9 of the audit paper).

Assumption 2 of the paper (noiseless labels) is relaxed for one certificate only: the i.i.d.
excluded-pool missed-mass certificate (Theorem 7). If the oracle returns ``Ỹ`` with per-item
sensitivity ``s(X) = P(Ỹ = 1 | Y = 1, X) ≥ s_min`` for a known ``s_min ∈ (0, 1]``, with noisy labels
realised independently across audited items given the items, then
``η̃(g) = P(Ỹ = 1 | g(X) = 0) ≥ s_min η(g)`` and ``K̃_0 ~ Bin(n_0, η̃(g))``, so with probability at
least ``1 − δ``

    ``r(g) ≤ p_0(g) · min{1, U_{n_0}(K̃_0, δ) / s_min}``.

False-positive labels only raise ``η̃(g)`` and so make the bound more conservative.

The paper gives no such correction for the other designs, and :func:`noisy_label_certificate`
refuses them with the paper's reason:

* two-pool recall (Theorem 10, Corollary 11) also needs a *lower* bound on
  ``η_1(g) = P(Y = 1 | g(X) = 1)``; false-positive labels can inflate the included pool's observed
  positive rate, so a sensitivity floor gives no such bound (a specificity floor or adjudicated
  labels would be needed);
* Theorem 24, Proposition 26 and Theorem 29 sample conditional on true relevance ``Y = 1``; noisy
  labels change that conditional sampling distribution;
* every other design (finite-corpus hypergeometric, whole-population, prefix families, stratified)
  is outside the argument, which is specific to the i.i.d. excluded-pool certificate.
"""

from __future__ import annotations

from typing import Any

from rankcut.certify._validate import check_count, check_delta, check_fraction
from rankcut.certify.bounds import cp_upper
from rankcut.certify.result import Certificate, certificate_function, theorem_of

__all__ = ["NOISY_LABEL_DESIGNS", "noisy_excluded_pool_certificate", "noisy_label_certificate"]


@certificate_function(
    "noisy_excluded_pool",
    theorem="Section 9 (label noise with a sensitivity floor; i.i.d. excluded pool)",
)
def noisy_excluded_pool_certificate(
    *,
    counts: int,
    sizes: int,
    delta: float,
    sensitivity_floor: float,
    p0: float | None = None,
) -> Certificate:
    """i.i.d. excluded-pool certificate under label noise with a sensitivity floor (Section 9).

    With probability at least ``1 − δ``, ``η(g) ≤ min{1, U_{n_0}(K̃_0, δ)/s_min}`` and, when
    ``p_0(g)`` is given, ``r(g) ≤ p_0(g) · min{1, U_{n_0}(K̃_0, δ)/s_min}``. ``s_min = 1`` recovers
    Theorem 7 for one generator. For a family ``G`` call it once per member with ``δ_g``,
    ``Σ_g δ_g ≤ δ`` (Theorem 7's union bound).

    The arguments are keyword-only (three of them are numbers in (0, 1] that a swap would not
    reveal) and named as :func:`rankcut.certify.excluded.excluded_pool_certificate` names them.

    :param counts: ``K̃_0``, draws the noisy oracle labelled relevant.
    :param sizes: ``n_0``, i.i.d. draws from ``P(· | g(X) = 0)``.
    :param delta: error probability ``δ`` in (0, 1).
    :param sensitivity_floor: known ``s_min ∈ (0, 1]`` with ``P(Ỹ = 1 | Y = 1, X) ≥ s_min`` for
        every item.
    :param p0: ``p_0(g)`` in [0, 1]; when given the value bounds ``r(g)``, otherwise
        ``η(g) = P(Y = 1 | g(X) = 0)``.
    """
    n = check_count(sizes, "sizes")
    k = check_count(counts, "counts")
    if k > n:
        raise ValueError(f"counts={k} noisy relevant labels exceed sizes={n} draws")
    d = check_delta(delta)
    s = check_fraction(sensitivity_floor, "sensitivity_floor", open_left=True)
    mass = None if p0 is None else check_fraction(p0, "p0")
    u_noisy = float(cp_upper(k, n, d))
    eta = min(1.0, u_noisy / s)
    value = eta if mass is None else mass * eta
    return Certificate(
        quantity="eta" if mass is None else "r",
        side="upper",
        value=value,
        theorem=theorem_of("noisy_excluded_pool"),
        function="noisy_excluded_pool",
        inputs={"counts": k, "sizes": n, "delta": d, "sensitivity_floor": s, "p0": mass},
        allocation={"eta": d},
        delta=d,
        statement=(
            f"With probability at least 1 - {d:g}, if every relevant excluded item is labelled "
            f"relevant with probability at least {s:g}, the "
            + ("excluded-pool relevance rate eta(g)" if mass is None
               else f"missed relevant mass r(g) = {mass:g} * eta(g)")
            + f" is at most {value:.6g}."
        ),
        details={"noisy_upper": u_noisy, "eta_upper": eta},
    )


_SUPPORTED = "excluded-pool"

_CONDITIONAL_ON_Y = (
    "samples conditional on true relevance Y = 1; replacing true labels by noisy ones changes "
    "that conditional sampling distribution, so it needs further noise assumptions or "
    "adjudicated labels (audit paper, Section 9)"
)
_OUTSIDE = (
    "is not covered: the sensitivity-floor argument of Section 9 is specific to the i.i.d. "
    "excluded-pool missed-mass certificate (binomial noisy count K~_0 ~ Bin(n_0, eta~(g)))"
)

# design -> why the paper's label-noise correction does not apply to it.
_REFUSED: dict[str, str] = {
    "two-pool": (
        "the two-pool recall certificate (Theorem 10, Corollary 11) also needs a lower bound on "
        "eta_1(g) = P(Y = 1 | g(X) = 1); a sensitivity floor gives none, because false-positive "
        "audit labels can inflate the observed positive rate in the included pool; it needs an "
        "additional assumption such as a known specificity floor, or adjudicated labels "
        "(audit paper, Section 9)"
    ),
    "incremental-coverage": "Theorem 24 " + _CONDITIONAL_ON_Y,
    "direct-miss-rate": "Proposition 26 " + _CONDITIONAL_ON_Y,
    "stress-test": "Theorem 29 " + _CONDITIONAL_ON_Y,
    "hypergeometric": "the finite-corpus hypergeometric certificate (Theorem 8) " + _OUTSIDE,
    "whole-population": "the whole-population certificate (Theorem 12) " + _OUTSIDE,
    "shared-reference": "the shared-reference prefix certificate (Theorem 17) " + _OUTSIDE,
    "stratified": "the stratified excluded-pool audit " + _OUTSIDE,
}

#: Every design name :func:`noisy_label_certificate` knows, the supported one first.
NOISY_LABEL_DESIGNS: tuple[str, ...] = (_SUPPORTED, *_REFUSED)


def noisy_label_certificate(design: str, **kwargs: Any) -> Certificate:
    """Certificate under noisy audit labels, for the one design the paper covers (Section 9).

    ``design="excluded-pool"`` forwards ``kwargs`` to :func:`noisy_excluded_pool_certificate`.
    Every other design in :data:`NOISY_LABEL_DESIGNS` raises ``ValueError`` saying why the
    sensitivity-floor correction does not apply to it; unknown names raise too.

    :param design: the audit design the labels came from.
    :param kwargs: the arguments of :func:`noisy_excluded_pool_certificate`.
    """
    if design == _SUPPORTED:
        return noisy_excluded_pool_certificate(**kwargs)
    if design in _REFUSED:
        raise ValueError(f"no noisy-label certificate for design {design!r}: {_REFUSED[design]}")
    raise ValueError(
        f"unknown design {design!r}; known designs: {', '.join(NOISY_LABEL_DESIGNS)} "
        f"(only {_SUPPORTED!r} has a noisy-label certificate)"
    )
