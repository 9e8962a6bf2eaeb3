"""Design-stage calculators (Section 7 and Appendix A of the audit paper).

These bound the *design procedure* — choosing a candidate generator from a class ``H`` on a
labelled whole-population design sample ``(X_i, Y_i)_{i ≤ n}`` — not the realised generator: a
certificate for the chosen generator still needs independent held-out audit labels (Sections 4–6).
With ``r̂_n(g) = n⁻¹ Σ 1{Y_i = 1, g(X_i) = 0}`` and ``B̂_n(g) = n⁻¹ Σ 1{g(X_i) = 1}``:

* :func:`finite_class_design_bound` — Theorem 32, realisable finite class:
  ``r(ĝ) ≤ log(|H|/δ)/n`` for any positive-consistent ``ĝ`` (``r̂_n(ĝ) = 0``).
* :func:`prevalence_design_size` — Corollary 33: ``n ≥ log(|H|/δ)/(π ε_L)`` suffices for
  ``L(ĝ) ≤ ε_L``, or the sharper exact form ``n ≥ log(|H|/δ)/log(1/(1 − π ε_L))``.
* :func:`vc_design_bound` — Theorem 34: ``r(ĝ) ≤ C (d log(en/d) + log(1/δ))/n``.
* :func:`agnostic_finite_class_design_bound` — Theorem 35:
  ``r(ĝ) − inf_H r ≤ 2 √(log(2|H|/δ)/(2n))`` for ``ĝ ∈ argmin r̂_n``.
* :func:`agnostic_vc_design_bound` — Theorem 36: ``r(ĝ) − inf_H r ≤ C √((d log(en/d) + log(1/δ))/n)``.
* :func:`neyman_pearson_slack` — Theorem 37: ``τ_n = C √((d log(en/d) + log(2/δ))/n)``.
* :func:`sparse_union_design_bound` — Theorem 38, ``H = C^{∪k}``:
  ``r(ĝ) ≤ C (d_C k log(3k) log n + log(1/δ))/n`` for ``n ≥ D = 2 d_C k log₂(3k)``.
* :func:`neyman_pearson_select` — the empirical Neyman–Pearson rule, Eq. (6):
  ``min B̂_n(g)`` subject to ``r̂_n(g) ≤ ε − τ_n`` over a finite family.

The paper leaves the universal constant ``C`` of Theorems 34, 36, 37 and 38 unspecified ("it can
be made explicit by choosing a standard realisable VC inequality"), so those functions take it as
a required argument and their guarantee is only as good as the constant supplied. Logarithms are
natural (Theorem 38: the base only changes ``C``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from rankcut.certify._validate import as_sequence, check_count, check_delta, check_number, member_names
from rankcut.certify.result import Certificate, Side, certificate_function, theorem_of

__all__ = [
    "agnostic_finite_class_design_bound",
    "agnostic_vc_design_bound",
    "finite_class_design_bound",
    "neyman_pearson_select",
    "neyman_pearson_slack",
    "prevalence_design_size",
    "sparse_union_design_bound",
    "vc_design_bound",
]

_CONSTANT_NOTE = (
    "The paper leaves the universal constant C unspecified; this bound uses the caller's C "
    "and holds only if that C is valid for the VC inequality invoked."
)


def _check_constant(constant: Any) -> float:
    c = check_number(constant, "constant")
    if c <= 0.0:
        raise ValueError(f"constant (the universal constant C) must be > 0, got {constant!r}")
    return c


def _vc_term(vc_dim: int, n: int) -> float:
    """``d log(en/d)``, the VC complexity term of Theorems 34, 36 and 37."""
    return vc_dim * (1.0 + math.log(n / vc_dim))


def _vc_args(vc_dim: Any, n: Any, delta: Any, constant: Any) -> tuple[int, int, float, float]:
    """Theorems 34, 36 and 37: the VC dimension ``d``, the design size ``n ≥ d``, ``δ`` and the
    caller's constant ``C``, checked in that order."""
    d = check_count(vc_dim, "vc_dim", 1)
    m = check_count(n, "n", 1)
    if m < d:
        raise ValueError(f"n={m} must be at least vc_dim={d} (the theorem assumes n >= d)")
    return d, m, check_delta(delta), _check_constant(constant)


def _finite_class_args(class_size: Any, n: Any, delta: Any) -> tuple[int, int, float]:
    """Theorems 32 and 35: the class size ``|H| ≥ 1``, the design size ``n ≥ 1`` and ``δ``."""
    return check_count(class_size, "class_size", 1), check_count(n, "n", 1), check_delta(delta)


def _design_certificate(function: str, quantity: str, value: float, inputs: dict[str, Any], d: float,
                        statement: str, *, side: Side = "upper", details: dict[str, Any] | None = None
                        ) -> Certificate:
    """A §7 design bound registered as ``function``: the whole ``δ`` is spent on the design sample."""
    return Certificate(quantity=quantity, side=side, value=value, theorem=theorem_of(function),
                       function=function, inputs=inputs, allocation={"design": d}, delta=d,
                       statement=statement, details={} if details is None else details)


def _constant_details(c: float) -> dict[str, Any]:
    """The universal constant the caller supplied (the paper leaves it unspecified)."""
    return {"constant": c, "constant_source": "caller (unspecified in the paper)"}


def _vc_certificate(function: str, quantity: str, value: float, dim: int, m: int, d: float, c: float,
                    claim: str) -> Certificate:
    """A bound of Theorems 34, 36 or 37, valid only for a valid universal constant ``C``: its
    inputs, statement (``claim``, then ``n``, ``C`` and the note on ``C``) and details say which
    ``C`` the caller supplied."""
    return _design_certificate(
        function, quantity, value, {"vc_dim": dim, "n": m, "delta": d, "constant": c}, d,
        f"With probability at least 1 - {d:g}, {claim} (n = {m}, C = {c:g}). " + _CONSTANT_NOTE,
        details=_constant_details(c),
    )


@certificate_function("finite_class_design", theorem="Theorem 32")
def finite_class_design_bound(class_size: int, n: int, delta: float) -> Certificate:
    """Theorem 32: ``r(ĝ) ≤ log(|H|/δ)/n`` with probability at least ``1 − δ`` over the design sample.

    Assumes a finite class ``H`` containing some ``g*`` with ``r(g*) = 0``, and ``ĝ ∈ H``
    positive-consistent on a whole-population design sample of size ``n``.

    :param class_size: ``|H| ≥ 1``.
    :param n: design-sample size ``n ≥ 1``.
    :param delta: error probability ``δ`` in (0, 1).
    """
    h, m, d = _finite_class_args(class_size, n, delta)
    value = math.log(h / d) / m
    return _design_certificate(
        "finite_class_design", "r(g_hat)", value, {"class_size": h, "n": m, "delta": d}, d,
        (
            f"With probability at least 1 - {d:g} over a whole-population design sample of {m}, "
            f"every positive-consistent generator in a realisable class of {h} has missed mass "
            f"at most log(|H|/delta)/n = {value:.6g}."
        ),
    )


@certificate_function("prevalence_design_size", theorem="Corollary 33")
def prevalence_design_size(
    class_size: int,
    prevalence: float,
    epsilon: float,
    delta: float,
    form: Literal["exact", "log"] = "exact",
) -> Certificate:
    """Corollary 33: a design-sample size that gives ``L(ĝ) ≤ ε_L`` with probability ``1 − δ``.

    Under Theorem 32's assumptions with prevalence ``π = P(Y = 1) > 0``, either condition suffices:
    ``n ≥ log(|H|/δ)/(π ε_L)`` (``form="log"``, the displayed corollary) or the exact
    zero-observed-miss form ``n ≥ log(|H|/δ)/log(1/(1 − π ε_L))`` (``form="exact"``, the proof's
    alternative, never larger). The value is the smallest such integer; both are in ``details``.

    :param class_size: ``|H| ≥ 1``.
    :param prevalence: ``π ∈ (0, 1]``.
    :param epsilon: target conditional miss rate ``ε_L ∈ (0, 1)``.
    :param delta: error probability ``δ`` in (0, 1).
    :param form: ``"exact"`` or ``"log"``.
    """
    h = check_count(class_size, "class_size", 1)
    pi = check_number(prevalence, "prevalence")
    if not 0.0 < pi <= 1.0:
        raise ValueError(f"prevalence must lie in (0, 1], got {prevalence!r}")
    eps = check_number(epsilon, "epsilon")
    if not 0.0 < eps < 1.0:
        raise ValueError(f"epsilon must lie in (0, 1), got {epsilon!r}")
    d = check_delta(delta)
    if form not in ("exact", "log"):
        raise ValueError(f"form must be 'exact' or 'log', got {form!r}")
    numerator = math.log(h / d)
    target = pi * eps
    n_log = math.ceil(numerator / target)
    n_exact = math.ceil(numerator / -math.log1p(-target))
    value = n_exact if form == "exact" else n_log
    return _design_certificate(
        "prevalence_design_size", "n", value,
        {"class_size": h, "prevalence": pi, "epsilon": eps, "delta": d, "form": form}, d,
        (
            f"A whole-population design sample of n >= {value} gives, with probability at least "
            f"1 - {d:g}, L(g_hat) <= {eps:g} for every positive-consistent g_hat in a realisable "
            f"class of {h} at prevalence {pi:g} ({form} form)."
        ),
        side="size",
        details={"n_log_form": n_log, "n_exact_form": n_exact, "prevalence_times_epsilon": target},
    )


@certificate_function("vc_design", theorem="Theorem 34")
def vc_design_bound(vc_dim: int, n: int, delta: float, constant: float) -> Certificate:
    """Theorem 34: ``r(ĝ) ≤ C (d log(en/d) + log(1/δ))/n`` for a realisable VC class.

    Assumes ``H`` of VC dimension ``d`` with some ``r(g*) = 0``, ``n ≥ d``, and ``ĝ``
    positive-consistent. The paper leaves the universal constant ``C`` unspecified: pass it.

    :param vc_dim: ``d ≥ 1`` (for a single generator use Theorem 32 with ``|H| = 1``).
    :param n: design-sample size, ``n ≥ d``.
    :param delta: error probability ``δ`` in (0, 1).
    :param constant: the universal constant ``C > 0`` of the realisable VC inequality chosen.
    """
    dim, m, d, c = _vc_args(vc_dim, n, delta, constant)
    value = c * (_vc_term(dim, m) + math.log(1.0 / d)) / m
    return _vc_certificate(
        "vc_design", "r(g_hat)", value, dim, m, d, c,
        f"a positive-consistent generator from a realisable class of VC dimension {dim} has missed "
        f"mass at most {value:.6g}",
    )


@certificate_function("agnostic_finite_class_design", theorem="Theorem 35")
def agnostic_finite_class_design_bound(class_size: int, n: int, delta: float) -> Certificate:
    """Theorem 35: ``r(ĝ) ≤ inf_H r + 2 √(log(2|H|/δ)/(2n))`` for ``ĝ ∈ argmin_H r̂_n``.

    The value is the excess ``2 √(log(2|H|/δ)/(2n))`` over the best missed mass in ``H``.

    :param class_size: ``|H| ≥ 1``.
    :param n: design-sample size ``n ≥ 1``.
    :param delta: error probability ``δ`` in (0, 1).
    """
    h, m, d = _finite_class_args(class_size, n, delta)
    value = 2.0 * math.sqrt(math.log(2.0 * h / d) / (2.0 * m))
    return _design_certificate(
        "agnostic_finite_class_design", "r(g_hat) - inf_H r", value, {"class_size": h, "n": m, "delta": d}, d,
        (
            f"With probability at least 1 - {d:g}, an empirical missed-mass minimiser over a "
            f"class of {h} has missed mass within {value:.6g} of the best in the class (n = {m})."
        ),
    )


@certificate_function("agnostic_vc_design", theorem="Theorem 36")
def agnostic_vc_design_bound(vc_dim: int, n: int, delta: float, constant: float) -> Certificate:
    """Theorem 36: ``r(ĝ) ≤ inf_H r + C √((d log(en/d) + log(1/δ))/n)`` for ``ĝ ∈ argmin r̂_n``.

    The value is the excess over ``inf_H r``. The paper leaves ``C`` unspecified: pass it.

    :param vc_dim: VC dimension ``d ≥ 1``.
    :param n: design-sample size, ``n ≥ d``.
    :param delta: error probability ``δ`` in (0, 1).
    :param constant: the universal constant ``C > 0``.
    """
    dim, m, d, c = _vc_args(vc_dim, n, delta, constant)
    value = c * math.sqrt((_vc_term(dim, m) + math.log(1.0 / d)) / m)
    return _vc_certificate(
        "agnostic_vc_design", "r(g_hat) - inf_H r", value, dim, m, d, c,
        f"an empirical missed-mass minimiser over a class of VC dimension {dim} has missed mass "
        f"within {value:.6g} of the best in the class",
    )


@certificate_function("neyman_pearson_slack", theorem="Theorem 37")
def neyman_pearson_slack(vc_dim: int, n: int, delta: float, constant: float) -> Certificate:
    """Theorem 37's uniform-convergence slack ``τ_n = C √((d log(en/d) + log(2/δ))/n)``.

    With probability at least ``1 − δ``, ``sup_H |r − r̂_n| ≤ τ_n`` and ``sup_H |B − B̂_n| ≤ τ_n``;
    use it as ``slack`` in :func:`neyman_pearson_select`. The paper leaves ``C`` unspecified.

    :param vc_dim: VC dimension ``d ≥ 1``.
    :param n: design-sample size, ``n ≥ d``.
    :param delta: error probability ``δ`` in (0, 1).
    :param constant: the universal constant ``C > 0``.
    """
    dim, m, d, c = _vc_args(vc_dim, n, delta, constant)
    value = c * math.sqrt((_vc_term(dim, m) + math.log(2.0 / d)) / m)
    return _vc_certificate(
        "neyman_pearson_slack", "tau_n", value, dim, m, d, c,
        f"the empirical missed mass and burden of every generator in a class of VC dimension {dim} "
        f"are within tau_n = {value:.6g} of their population values",
    )


@certificate_function("sparse_union_design", theorem="Theorem 38")
def sparse_union_design_bound(
    base_vc_dim: int, k: int, n: int, delta: float, constant: float
) -> Certificate:
    """Theorem 38: ``r(ĝ) ≤ C (d_C k log(3k) log n + log(1/δ))/n`` for ``H = C^{∪k}``.

    Assumes a realisable ``H`` of ``k``-fold unions of base detectors of VC dimension ``d_C``,
    ``n ≥ D = 2 d_C k log₂(3k)`` (``D`` bounds the VC dimension of ``H``) and ``ĝ``
    positive-consistent. Logarithms in the rate are natural (the base only changes ``C``, which
    the paper leaves unspecified: pass it).

    :param base_vc_dim: ``d_C ≥ 1``.
    :param k: number of base detectors in the union, ``k ≥ 1``.
    :param n: design-sample size, ``n ≥ D``.
    :param delta: error probability ``δ`` in (0, 1).
    :param constant: the universal constant ``C > 0``.
    """
    dc = check_count(base_vc_dim, "base_vc_dim", 1)
    kk = check_count(k, "k", 1)
    m = check_count(n, "n", 1)
    d = check_delta(delta)
    c = _check_constant(constant)
    big_d = 2.0 * dc * kk * math.log2(3.0 * kk)
    if m < big_d:
        raise ValueError(f"n={m} must be at least D = 2 d_C k log2(3k) = {big_d:.6g} (Theorem 38)")
    value = c * (dc * kk * math.log(3.0 * kk) * math.log(m) + math.log(1.0 / d)) / m
    return _design_certificate(
        "sparse_union_design", "r(g_hat)", value,
        {"base_vc_dim": dc, "k": kk, "n": m, "delta": d, "constant": c}, d,
        (
            f"With probability at least 1 - {d:g}, a positive-consistent union of {kk} base "
            f"detectors (base VC dimension {dc}) has missed mass at most {value:.6g} (n = {m}, "
            f"C = {c:g}). " + _CONSTANT_NOTE
        ),
        details={"vc_dim_bound": big_d, **_constant_details(c)},
    )


@certificate_function("neyman_pearson_select", theorem="Eq. (6) / Theorem 37")
def neyman_pearson_select(
    missed: Sequence[int],
    flagged: Sequence[int],
    n: int,
    *,
    epsilon: float,
    slack: float,
    names: Sequence[str] | None = None,
) -> Certificate:
    """Empirical Neyman–Pearson rule, Eq. (6): ``min B̂_n(g)`` s.t. ``r̂_n(g) ≤ ε − τ_n``.

    ``epsilon`` and ``slack`` are keyword-only: two small numbers in a row that a swap would not
    reveal.

    Over a finite family, from design-sample counts: ``r̂_n(g) = missed[g]/n`` and
    ``B̂_n(g) = flagged[g]/n``. Returns the feasible member of least empirical burden (ties: lower
    empirical missed mass, then the earlier member), or value ``None`` when no member is feasible;
    ``details["members"]`` gives each member's reason. With ``slack = τ_n`` of Theorem 37
    (:func:`neyman_pearson_slack`), and some ``g`` with ``r(g) ≤ ε − 2τ_n``, Theorem 37 gives, with
    probability at least ``1 − δ``, ``r(ĝ) ≤ ε`` and
    ``B(ĝ) ≤ inf{B(g) : r(g) ≤ ε − 2τ_n} + 2τ_n``. The choice must still be certified on
    independent audit labels.

    :param missed: per member, design items with ``Y = 1`` and ``g(X) = 0``.
    :param flagged: per member, design items with ``g(X) = 1``; ``missed + flagged ≤ n``.
    :param n: design-sample size ``n ≥ 1`` (whole-population sample).
    :param epsilon: missed-mass target ``ε``.
    :param slack: uniform-convergence slack ``τ_n ≥ 0``.
    :param names: optional distinct member names (default ``"0"``, ``"1"``, ...).
    """
    m = check_count(n, "n", 1)
    miss = [check_count(v, f"missed[{i}]") for i, v in enumerate(as_sequence(missed, "missed", "member"))]
    flag = [check_count(v, f"flagged[{i}]") for i, v in enumerate(as_sequence(flagged, "flagged", "member"))]
    if len(miss) != len(flag):
        raise ValueError(f"missed ({len(miss)}) and flagged ({len(flag)}) need one entry per member")
    for i, (a, b) in enumerate(zip(miss, flag, strict=True)):
        if a + b > m:
            raise ValueError(
                f"missed[{i}] + flagged[{i}] = {a + b} exceeds n={m}: missed items are excluded "
                f"(g = 0) and flagged items included (g = 1), so they are disjoint"
            )
    eps = check_number(epsilon, "epsilon")
    if not 0.0 < eps <= 1.0:
        raise ValueError(f"epsilon must lie in (0, 1], got {epsilon!r}")
    tau = check_number(slack, "slack")
    if tau < 0.0:
        raise ValueError(f"slack must be >= 0, got {slack!r}")
    labels = [str(i) for i in range(len(miss))] if names is None else member_names(names, len(miss))
    threshold = eps - tau
    members: list[dict[str, Any]] = []
    feasible: list[tuple[int, int, int]] = []
    for i, (a, b) in enumerate(zip(miss, flag, strict=True)):
        r_hat, b_hat = a / m, b / m
        ok = r_hat <= threshold
        members.append({
            "name": labels[i],
            "r_hat": r_hat,
            "B_hat": b_hat,
            "feasible": ok,
            "reason": (f"r_hat = {r_hat:.6g} <= epsilon - tau_n = {threshold:.6g}" if ok
                       else f"r_hat = {r_hat:.6g} > epsilon - tau_n = {threshold:.6g}"),
        })
        if ok:
            feasible.append((b, a, i))
    if feasible:
        _, _, best = min(feasible)
        choice: str | None = labels[best]
        members[best]["reason"] = (
            f"{members[best]['reason']}; least empirical burden among feasible members (selected)"
        )
        statement = (
            f"Eq. (6) selects {choice!r}: empirical burden {flag[best] / m:.6g} is the least among "
            f"the {len(feasible)} member(s) with empirical missed mass <= {threshold:.6g}."
        )
    else:
        choice = None
        statement = (
            f"No member satisfies the empirical constraint r_hat <= epsilon - tau_n = "
            f"{threshold:.6g}; Eq. (6) selects none."
        )
    return Certificate(
        quantity="g_hat",
        side="choice",
        value=choice,
        theorem=theorem_of("neyman_pearson_select"),
        function="neyman_pearson_select",
        inputs={"missed": miss, "flagged": flag, "n": m, "epsilon": eps, "slack": tau,
                "names": None if names is None else labels},
        allocation={},
        delta=None,
        statement=statement,
        details={"threshold": threshold, "members": members},
    )
