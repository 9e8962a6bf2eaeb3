"""Section 7 design-stage calculators (Theorems 32–38, Corollary 33) and the Eq. (6) NP rule."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankcut.certify.learning import (
    agnostic_finite_class_design_bound,
    agnostic_vc_design_bound,
    finite_class_design_bound,
    neyman_pearson_select,
    neyman_pearson_slack,
    prevalence_design_size,
    sparse_union_design_bound,
    vc_design_bound,
)
from rankcut.certify.result import Certificate, recompute


def test_theorem_32_reference():
    c = finite_class_design_bound(class_size=20, n=500, delta=0.05)
    assert c.value == pytest.approx(math.log(20 / 0.05) / 500, rel=1e-12)
    assert c.side == "upper" and c.theorem == "Theorem 32"


@pytest.mark.parametrize(
    ("epsilon", "single", "ten"),
    [(0.10, 29, 51), (0.05, 59, 104), (0.02, 149, 263), (0.01, 299, 528), (0.005, 598, 1058)],
)
def test_corollary_33_exact_form_reproduces_section_4_6_table(epsilon, single, ten):
    """With π = 1 the exact form is n ≥ log(|H|/δ)/log(1/(1 − ε)), the Section 4.6 table."""
    one = prevalence_design_size(class_size=1, prevalence=1.0, epsilon=epsilon, delta=0.05)
    many = prevalence_design_size(class_size=10, prevalence=1.0, epsilon=epsilon, delta=0.05)
    assert (one.value, many.value) == (single, ten)


def test_corollary_33_log_form_reference():
    c = prevalence_design_size(class_size=10, prevalence=0.01, epsilon=0.1, delta=0.05,
                               form="log")
    assert c.value == math.ceil(math.log(10 / 0.05) / (0.01 * 0.1))
    assert c.details["n_exact_form"] <= c.details["n_log_form"] == c.value
    assert c.side == "size" and c.quantity == "n"


@given(st.integers(1, 10_000), st.floats(1e-3, 1.0), st.floats(1e-3, 0.999),
       st.floats(1e-6, 0.5))
def test_corollary_33_sizes_suffice_and_exact_is_minimal(h, pi, eps, delta):
    c = prevalence_design_size(class_size=h, prevalence=pi, epsilon=eps, delta=delta)
    n_exact, n_log = c.details["n_exact_form"], c.details["n_log_form"]
    target = pi * eps
    # |H| (1 − πε)^n ≤ δ: every g with L(g) > ε_L survives n zero-miss draws w.p. ≤ δ/|H|
    log_fail = math.log(h) + n_exact * math.log1p(-target)
    assert log_fail <= math.log(delta) + 1e-9
    if n_exact > 1:
        assert math.log(h) + (n_exact - 1) * math.log1p(-target) > math.log(delta) - 1e-9
    assert n_log * target >= math.log(h / delta) * (1 - 1e-12)
    assert n_exact <= n_log


def test_vc_bounds_reference():
    d, n, delta, c = 7, 2000, 0.05, 2.5
    vc = vc_design_bound(vc_dim=d, n=n, delta=delta, constant=c)
    assert vc.value == pytest.approx(c * (d * math.log(math.e * n / d) + math.log(1 / delta)) / n)
    ag = agnostic_vc_design_bound(vc_dim=d, n=n, delta=delta, constant=c)
    assert ag.value == pytest.approx(
        c * math.sqrt((d * math.log(math.e * n / d) + math.log(1 / delta)) / n))
    tau = neyman_pearson_slack(vc_dim=d, n=n, delta=delta, constant=c)
    assert tau.value == pytest.approx(
        c * math.sqrt((d * math.log(math.e * n / d) + math.log(2 / delta)) / n))
    for cert in (vc, ag, tau):
        assert "unspecified" in cert.statement and cert.details["constant"] == c


def test_agnostic_finite_reference():
    c = agnostic_finite_class_design_bound(class_size=50, n=4000, delta=0.1)
    assert c.value == pytest.approx(2 * math.sqrt(math.log(2 * 50 / 0.1) / (2 * 4000)))


def test_sparse_union_reference():
    c = sparse_union_design_bound(base_vc_dim=3, k=4, n=5000, delta=0.05, constant=1.5)
    assert c.value == pytest.approx(
        1.5 * (3 * 4 * math.log(12) * math.log(5000) + math.log(20)) / 5000)
    assert c.details["vc_dim_bound"] == pytest.approx(2 * 3 * 4 * math.log2(12))
    with pytest.raises(ValueError, match="D = 2 d_C k log2"):
        sparse_union_design_bound(base_vc_dim=3, k=4, n=86, delta=0.05, constant=1.0)
    assert sparse_union_design_bound(base_vc_dim=3, k=4, n=87, delta=0.05, constant=1.0)


@given(st.integers(1, 50), st.integers(0, 10_000), st.floats(1e-4, 0.5), st.floats(0.1, 10))
def test_vc_bounds_decrease_with_n_and_scale_with_c(d, extra, delta, c):
    n = d + extra
    for fn in (vc_design_bound, agnostic_vc_design_bound, neyman_pearson_slack):
        a = fn(vc_dim=d, n=n, delta=delta, constant=c).value
        b = fn(vc_dim=d, n=n + 1, delta=delta, constant=c).value
        twice = fn(vc_dim=d, n=n, delta=delta, constant=2 * c).value
        assert b < a
        assert twice == pytest.approx(2 * a)


@given(st.integers(1, 1000), st.integers(1, 10_000), st.floats(1e-4, 0.5))
def test_finite_class_bounds_monotone(h, n, delta):
    a = finite_class_design_bound(class_size=h, n=n, delta=delta).value
    assert finite_class_design_bound(class_size=h + 1, n=n, delta=delta).value > a
    assert finite_class_design_bound(class_size=h, n=n + 1, delta=delta).value < a
    b = agnostic_finite_class_design_bound(class_size=h, n=n, delta=delta).value
    assert agnostic_finite_class_design_bound(class_size=h, n=n, delta=delta / 2).value > b


def test_neyman_pearson_select_least_burden_among_feasible():
    c = neyman_pearson_select(missed=[9, 4, 1, 0], flagged=[100, 300, 450, 900], n=1000,
                              epsilon=0.01, slack=0.004, names=["a", "b", "c", "d"])
    # threshold 0.006: a (0.009) infeasible; b, c, d feasible; b has least burden
    assert c.value == "b" and c.side == "choice"
    members = {m["name"]: m for m in c.details["members"]}
    assert not members["a"]["feasible"] and "> epsilon - tau_n" in members["a"]["reason"]
    assert "selected" in members["b"]["reason"]
    assert c.details["threshold"] == pytest.approx(0.006)


def test_neyman_pearson_select_none_and_ties():
    none = neyman_pearson_select(missed=[5, 7], flagged=[10, 20], n=100, epsilon=0.05,
                                 slack=0.01)
    assert none.value is None and "selects none" in none.statement
    tie = neyman_pearson_select(missed=[2, 1, 1], flagged=[50, 50, 50], n=100, epsilon=0.05,
                                slack=0.0)
    assert tie.value == "1"        # equal burden: lower r_hat, then the earlier member
    # slack 0 and r_hat exactly epsilon is feasible (the constraint is <=)
    edge = neyman_pearson_select(missed=[5], flagged=[0], n=100, epsilon=0.05, slack=0.0)
    assert edge.value == "0"


@st.composite
def families(draw):
    n = draw(st.integers(1, 500))
    size = draw(st.integers(1, 6))
    missed, flagged = [], []
    for _ in range(size):
        a = draw(st.integers(0, n))
        missed.append(a)
        flagged.append(draw(st.integers(0, n - a)))
    return n, missed, flagged


@given(families(), st.floats(0.001, 1.0), st.floats(0.0, 0.5))
def test_neyman_pearson_select_matches_brute_force(family, epsilon, slack):
    n, missed, flagged = family
    c = neyman_pearson_select(missed=missed, flagged=flagged, n=n, epsilon=epsilon, slack=slack)
    feasible = [i for i in range(len(missed)) if missed[i] / n <= epsilon - slack]
    if not feasible:
        assert c.value is None
    else:
        best = min(flagged[i] for i in feasible)
        chosen = int(c.value)
        assert chosen in feasible and flagged[chosen] == best
    wider = neyman_pearson_select(missed=missed, flagged=flagged, n=n, epsilon=epsilon,
                                  slack=slack / 2)
    if c.value is not None:   # a smaller slack keeps every feasible member feasible
        assert wider.value is not None and flagged[int(wider.value)] <= flagged[int(c.value)]


def test_recompute_round_trip():
    for cert in (
        finite_class_design_bound(class_size=5, n=100, delta=0.05),
        prevalence_design_size(class_size=5, prevalence=0.2, epsilon=0.05, delta=0.05,
                               form="log"),
        vc_design_bound(vc_dim=3, n=100, delta=0.05, constant=1.0),
        agnostic_finite_class_design_bound(class_size=5, n=100, delta=0.05),
        agnostic_vc_design_bound(vc_dim=3, n=100, delta=0.05, constant=1.0),
        neyman_pearson_slack(vc_dim=3, n=100, delta=0.05, constant=0.5),
        sparse_union_design_bound(base_vc_dim=1, k=2, n=100, delta=0.05, constant=1.0),
        neyman_pearson_select(missed=[1, 0], flagged=[10, 30], n=100, epsilon=0.02, slack=0.005,
                              names=["x", "y"]),
    ):
        assert recompute(Certificate.from_json(cert.to_json())) == cert


@pytest.mark.parametrize(
    ("fn", "kwargs", "match"),
    [
        (finite_class_design_bound, {"class_size": 0, "n": 10, "delta": 0.05}, "class_size"),
        (finite_class_design_bound, {"class_size": 2, "n": 0, "delta": 0.05}, "n must be"),
        (finite_class_design_bound, {"class_size": 2, "n": 10, "delta": 1.0}, "delta"),
        (prevalence_design_size,
         {"class_size": 2, "prevalence": 0.0, "epsilon": 0.1, "delta": 0.05}, "prevalence"),
        (prevalence_design_size,
         {"class_size": 2, "prevalence": 0.5, "epsilon": 1.0, "delta": 0.05}, "epsilon"),
        (prevalence_design_size,
         {"class_size": 2, "prevalence": 0.5, "epsilon": 0.1, "delta": 0.05, "form": "ln"},
         "form"),
        (vc_design_bound, {"vc_dim": 5, "n": 4, "delta": 0.05, "constant": 1.0}, "n >= d"),
        (vc_design_bound, {"vc_dim": 0, "n": 4, "delta": 0.05, "constant": 1.0}, "vc_dim"),
        (vc_design_bound, {"vc_dim": 2, "n": 4, "delta": 0.05, "constant": 0.0}, "constant"),
        (agnostic_vc_design_bound, {"vc_dim": 2, "n": 4, "delta": 0.05, "constant": math.inf},
         "constant"),
        (neyman_pearson_slack, {"vc_dim": 2, "n": 1, "delta": 0.05, "constant": 1.0}, "n >= d"),
        (sparse_union_design_bound,
         {"base_vc_dim": 1, "k": 0, "n": 100, "delta": 0.05, "constant": 1.0}, "k must be"),
        (neyman_pearson_select,
         {"missed": [60], "flagged": [50], "n": 100, "epsilon": 0.1, "slack": 0.0}, "disjoint"),
        (neyman_pearson_select,
         {"missed": [1, 2], "flagged": [5], "n": 100, "epsilon": 0.1, "slack": 0.0},
         "one entry per member"),
        (neyman_pearson_select,
         {"missed": [1], "flagged": [5], "n": 100, "epsilon": 0.1, "slack": -0.1}, "slack"),
        (neyman_pearson_select,
         {"missed": [1], "flagged": [5], "n": 100, "epsilon": 0.0, "slack": 0.0}, "epsilon"),
        (neyman_pearson_select,
         {"missed": [1, 1], "flagged": [5, 5], "n": 100, "epsilon": 0.1, "slack": 0.0,
          "names": ["a", "a"]}, "distinct"),
    ],
)
def test_bad_input(fn, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fn(**kwargs)


def test_the_targets_are_keyword_only() -> None:
    """``(missed, flagged, n, epsilon, slack)``: two small numbers in a row, swapped without a word."""
    with pytest.raises(TypeError):
        neyman_pearson_select([1, 0], [10, 30], 100, 0.02, 0.005)   # type: ignore[misc]
