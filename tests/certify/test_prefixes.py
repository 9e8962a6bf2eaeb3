"""Prefix-family certificates: §8 prefix table, allocations, shared reference, Eq. 1, Theorem 19."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankcut.certify.bounds import cp_upper, hypergeom_upper
from rankcut.certify.prefixes import (
    choose_prefix,
    fixed_sequence,
    fixed_sequence_bound,
    fixed_sequence_finite,
    prefix_bounds_separate,
    prefix_bounds_separate_finite,
    prefix_bounds_shared,
    prefix_bounds_shared_finite,
    shared_reference_counts,
)
from rankcut.certify.result import Certificate, format_bound, recompute

# §8: three pre-specified prefixes, separate excluded-pool audits of 300 with no relevant found
P0_S8 = [0.85, 0.70, 0.62]
BURDEN_S8 = [0.15, 0.30, 0.38]


def _section8() -> Certificate:
    return prefix_bounds_separate([0, 0, 0], [300, 300, 300], p0=P0_S8, delta=0.05)


# --- Section 8 prefix table ---------------------------------------------------------------------


def test_section_8_prefix_table() -> None:
    cert = _section8()
    assert format_bound(cert.value, "upper") == "(0.0116, 0.00949, 0.00841)"
    u = cert.details["eta_upper"][0]
    assert u == pytest.approx(0.013555, abs=1e-6)
    assert format_bound(u, "upper", 4) == "0.01356"
    assert cert.allocation == pytest.approx({"g1": 0.05 / 3, "g2": 0.05 / 3, "g3": 0.05 / 3})
    assert cert.theorem == "Corollary 16"


def test_section_8_choice_is_g2() -> None:
    choice = choose_prefix(_section8(), BURDEN_S8, at_most=0.01)
    assert choice.value == "g2"
    assert choice.details["index"] == 1
    assert [row["meets"] for row in choice.details["table"]] == [False, True, True]
    assert choice.side == "choice" and choice.delta == 0.05


def test_no_prefix_meets_a_tighter_target() -> None:
    choice = choose_prefix(_section8(), BURDEN_S8, at_most=0.005)
    assert choice.value is None
    assert choice.statement.startswith("no prefix meets r ≤ 0.005")
    assert "0.00841 (g3)" in choice.statement


def test_remark_21_fixed_sequence_needs_no_split() -> None:
    # the same §8 audits at the pre-set target 0.01: each test at level δ = 0.05 (no δ/3), so
    # the cheaper g1 passes (0.85·U_300(0, 0.05) ≈ 0.00845), where Eq. 1 with Corollary 16 picks g2
    fs = fixed_sequence([0, 0, 0], [300, 300, 300], p0=P0_S8, epsilon=0.01, delta=0.05)
    assert fs.value == "g1"
    assert fs.details["order"] == ["g3", "g2", "g1"]
    assert fs.details["tests"][-1]["upper"] == pytest.approx(0.85 * cp_upper(0, 300, 0.05))


# --- Corollary 16 ---------------------------------------------------------------------------------


def test_separate_bounds_use_each_prefix_share() -> None:
    counts, sizes, p0 = [0, 2, 1], [100, 250, 40], [0.9, 0.5, 0.2]
    deltas = [0.01, 0.03, 0.005]
    cert = prefix_bounds_separate(counts, sizes, p0=p0, delta=0.05, deltas=deltas)
    eta = cp_upper(np.array(counts), np.array(sizes), np.array(deltas))
    assert cert.details["eta_upper"] == pytest.approx(tuple(eta))
    own = np.array(p0) * eta
    assert cert.details["own_bounds"] == pytest.approx(tuple(own))
    assert own[2] > own[1]      # g3's own bound is above g2's, whose pool holds g3's
    assert cert.value == pytest.approx((own[0], own[1], own[1]))
    assert cert.allocation == pytest.approx({"g1": 0.01, "g2": 0.03, "g3": 0.005})


def test_default_split_equals_explicit_delta_over_m() -> None:
    a = prefix_bounds_separate([1, 0], [50, 80], p0=[0.6, 0.3], delta=0.1)
    b = prefix_bounds_separate([1, 0], [50, 80], p0=[0.6, 0.3], delta=0.1, deltas=[0.05, 0.05])
    assert a.value == b.value


def test_shares_must_not_exceed_delta() -> None:
    with pytest.raises(ValueError, match="deltas"):
        prefix_bounds_separate([0, 0], [10, 10], p0=[0.5, 0.4], delta=0.05, deltas=[0.03, 0.03])
    with pytest.raises(ValueError, match="deltas"):
        prefix_bounds_separate([0, 0], [10, 10], p0=[0.5, 0.4], delta=0.05, deltas=[0.05])


def test_empty_pool_and_empty_audit_conventions() -> None:
    cert = prefix_bounds_separate([0, 0], [0, 0], p0=[0.4, 0.0], delta=0.05)
    assert cert.details["eta_upper"] == (1.0, 1.0)  # U_0(0, α) = 1 (Lemma 6)
    assert cert.value == (0.4, 0.0)  # p0 = 0: trivial bound 0 (Remark 5)
    with pytest.raises(ValueError, match="p0=0"):
        prefix_bounds_separate([0], [5], p0=[0.0], delta=0.05)


def test_finite_separate_reproduces_section_8_mu_table() -> None:
    cert = prefix_bounds_separate_finite(
        [0, 1, 2], [300, 300, 300], [70_000] * 3, 0.075, deltas=[0.025] * 3, corpus_size=100_000
    )
    assert cert.details["own_bounds"] == (853, 1287, 1668)     # the paper's MU table, one per count
    # as a nested family of three equal pools, the first bound holds for all (_running_least)
    assert cert.value == (853, 853, 853)
    assert cert.details["r_upper"] == pytest.approx((0.00853,) * 3)
    assert cert.quantity == "M0"


def test_finite_separate_uses_each_pool_size() -> None:
    cert = prefix_bounds_separate_finite([0, 1], [200, 100], [5_000, 800], 0.05)
    expect = hypergeom_upper([0, 1], 0.025, population=[5_000, 800], draws=[200, 100])
    assert cert.value == cert.details["own_bounds"] == tuple(int(v) for v in expect)


def test_a_later_prefix_is_bounded_by_the_earlier_pools_that_hold_it() -> None:
    """E2 ⊆ E1, so M0(g2) ≤ M0(g1) ≤ MU_1 on the simultaneous event: a small audit of g2 printed
    M0 ≤ (1150, 1396, 838) (a stop-55 walk's family); each bound is now the least so far."""
    pools = [85_000, 70_000, 62_000]
    cert = prefix_bounds_separate_finite([0, 1, 0], [300] * 3, pools, 0.05)
    own = cert.details["own_bounds"]
    expect = hypergeom_upper([0, 1, 0], 0.05 / 3, population=pools, draws=[300] * 3)
    assert own == tuple(int(v) for v in expect)
    assert own[1] > own[0] > own[2]
    assert cert.value == (own[0], own[0], own[2])
    assert "at most (" + ", ".join(str(v) for v in cert.value) + ") relevant items" in cert.statement
    mass = prefix_bounds_separate([0, 1, 0], [300] * 3, p0=[0.85, 0.70, 0.62], delta=0.05)
    assert mass.value[1] == mass.value[0] < mass.details["own_bounds"][1]

# --- Theorem 17 and Corollary 18 -----------------------------------------------------------------


def test_shared_reference_counts() -> None:
    # four reference draws, nested pools E1 ⊇ E2 ⊇ E3
    excluded = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]]
    relevant = [True, False, True, True]
    n_eff, k = shared_reference_counts(np.array(excluded, dtype=bool), relevant)
    assert n_eff.tolist() == [3, 2, 1]
    assert k.tolist() == [2, 2, 1]
    with pytest.raises(ValueError, match="relevant"):
        shared_reference_counts(np.array(excluded, dtype=bool), [True, False])


def test_shared_reference_bounds_with_random_sizes() -> None:
    cert = prefix_bounds_shared([1, 0, 0], [120, 60, 0], p0=[0.8, 0.4, 0.1], delta=0.05, reference_size=150,
                                reference_mass=1.0)
    eta = cp_upper([1, 0, 0], [120, 60, 0], 0.05 / 3)
    assert cert.details["eta_upper"] == pytest.approx(tuple(eta))
    assert cert.details["own_bounds"][2] == pytest.approx(0.1)  # n_eff = 0: U_0 = 1, bound p0
    assert cert.value[2] == cert.value[1] == pytest.approx(0.4 * eta[1])  # E3 ⊆ E2
    assert cert.details["expected_effective_sizes"] == pytest.approx([120, 60, 15])
    assert cert.theorem == "Theorem 17"


def test_shared_reference_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="reference_size"):
        prefix_bounds_shared([0], [20], p0=[0.5], reference_size=10)
    with pytest.raises(ValueError, match="reference_mass"):  # E_m ⊆ R needs p0 ≤ P(R)
        prefix_bounds_shared([0, 0], [10, 5], p0=[0.7, 0.5], reference_size=10, reference_mass=0.6)
    with pytest.raises(ValueError, match="reference_mass"):
        prefix_bounds_shared([0], [1], p0=[0.5], reference_size=10, reference_mass=0.0)


def test_shared_reference_finite() -> None:
    cert = prefix_bounds_shared_finite(
        [1, 1, 0], [90, 40, 0], [900, 400, 100], 0.05,
        reference_size=100, reference_pool_size=1_000, corpus_size=2_000,
    )
    expect = hypergeom_upper([1, 1, 0], 0.05 / 3, population=[900, 400, 100], draws=[90, 40, 0])
    assert cert.details["own_bounds"] == tuple(int(v) for v in expect)
    assert cert.details["own_bounds"][2] == 100  # no draw in E3: the trivial bound N0 (Corollary 18)
    assert cert.value == (*cert.details["own_bounds"][:2], min(100, int(expect[1])))     # E3 ⊆ E2
    assert cert.details["r_upper"][2] == pytest.approx(cert.value[2] / 2_000)
    assert cert.theorem == "Corollary 18"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"reference_size": 1_001, "reference_pool_size": 1_000}, "reference_size"),
        ({"reference_size": 100, "reference_pool_size": 800}, "excluded_sizes"),
        # 100 draws, only 5 inside E1 of 900 items: 95 outside, but R has 100 items outside
        ({"reference_size": 100, "reference_pool_size": 1_000, "n_eff": [5, 5, 0]}, None),
        # R has 950 items, 50 of them outside E1: 100 draws cannot all miss E1
        ({"reference_size": 100, "reference_pool_size": 950, "n_eff": [0, 0, 0]}, "outside"),
    ],
)
def test_shared_reference_finite_inputs_are_checked(kwargs: dict, match: str | None) -> None:
    n_eff = kwargs.pop("n_eff", [90, 40, 0])
    call = lambda: prefix_bounds_shared_finite([0, 0, 0], n_eff, [900, 400, 100], **kwargs)  # noqa: E731
    if match is None:
        call()
    else:
        with pytest.raises(ValueError, match=match):
            call()


# --- Eq. 1: bicriteria choice ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 6),
    data=st.data(),
)
def test_choice_is_the_least_burden_member_that_meets(m: int, data: st.DataObject) -> None:
    sizes = data.draw(st.lists(st.integers(0, 400), min_size=m, max_size=m))
    counts = [data.draw(st.integers(0, min(n, 3))) for n in sizes]
    p0 = sorted(data.draw(st.lists(st.floats(0.01, 1.0), min_size=m, max_size=m)), reverse=True)
    burdens = data.draw(st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.5]), min_size=m, max_size=m))
    target = data.draw(st.floats(0.001, 0.2))
    cert = prefix_bounds_separate(counts, sizes, p0=p0, delta=0.05)
    choice = choose_prefix(cert, burdens, at_most=target)
    ok = [i for i in range(m) if cert.value[i] <= target]
    if not ok:
        assert choice.value is None
    else:
        best = min(ok, key=lambda i: (burdens[i], i))
        assert choice.value == f"g{best + 1}"


def test_choice_recomputes_and_rejects_tampered_bounds() -> None:
    cert = _section8()
    choice = choose_prefix(cert.to_dict(), BURDEN_S8, at_most=0.01)
    assert recompute(Certificate.from_json(choice.to_json())) == choice
    forged = cert.to_dict()
    forged["value"] = [0.001, 0.001, 0.001]
    with pytest.raises(ValueError, match="recomputation"):
        choose_prefix(forged, BURDEN_S8, at_most=0.01)


def test_choice_needs_a_simultaneous_family_certificate() -> None:
    fs = fixed_sequence([0], [300], p0=[0.5], epsilon=0.01)
    with pytest.raises(ValueError, match="certificate must come from"):
        choose_prefix(fs, [0.5], at_most=0.01)
    with pytest.raises(ValueError, match="burdens"):
        choose_prefix(_section8(), [0.1, 0.2], at_most=0.01)
    with pytest.raises(ValueError, match="at_most must be a missed mass > 0"):
        choose_prefix(_section8(), BURDEN_S8, at_most=0.0)


def test_choice_in_counts_for_finite_certificates_and_names() -> None:
    cert = prefix_bounds_separate_finite(
        [0, 0, 0], [300, 300, 300], [85_000, 70_000, 62_000], 0.05,
        names=["top100", "top200", "top300"],
    )
    choice = choose_prefix(cert, [15_000, 30_000, 38_000], at_most=1_000)
    bounds = cert.value
    assert choice.value == next(n for n, b in zip(["top100", "top200", "top300"], bounds,
                                                  strict=True) if b <= 1_000)
    assert choice.details["bounded"] == "M0"


def test_the_binomial_families_take_delta_third_as_the_excluded_pool_certificate_does() -> None:
    """``excluded_pool_certificate(counts, sizes, delta, *, p0)`` beside ``prefix_bounds_separate(counts,
    sizes, p0, delta)``: a delta given third here was read as ``p0 = 0.05``, an optimistic bound."""
    for call in (lambda: prefix_bounds_separate([0], [300], 0.05),   # type: ignore[call-arg]
                 lambda: prefix_bounds_shared([0], [300], 0.05, reference_size=300),   # type: ignore[call-arg]
                 lambda: fixed_sequence([0], [300], 0.05, 0.01)):   # type: ignore[misc]
        with pytest.raises(TypeError):
            call()
    with pytest.raises(TypeError):
        fixed_sequence_finite([0], [300], [70_000], 500, 0.05)   # type: ignore[misc]
    named = prefix_bounds_separate([0], [300], 0.01, p0=[0.5])
    assert named.delta == 0.01 and named.value[0] == pytest.approx(0.5 * cp_upper(0, 300, 0.01))


def test_the_target_on_the_bound_is_named_and_never_truncated() -> None:
    """``target`` named a missed mass or count here and a recall target elsewhere: ``0.8`` meant as
    a recall chose a prefix, and the finite fixed sequence read it as ``int(0.8) = 0`` missed."""
    with pytest.raises(TypeError):
        choose_prefix(_section8(), BURDEN_S8, 0.01)   # type: ignore[misc]
    assert choose_prefix(_section8(), BURDEN_S8, at_most=0.01).inputs["at_most"] == 0.01
    with pytest.raises(ValueError, match="max_missed"):
        fixed_sequence_bound([0], [300], at_most=0.8, method="finite", excluded_sizes=[70_000])
    assert fixed_sequence_bound([0], [300], at_most=500, method="finite", excluded_sizes=[70_000]) == \
        fixed_sequence_finite([0], [300], [70_000], max_missed=500)


def test_choice_of_counts_takes_a_target_of_zero_missed_items() -> None:
    """M0 ≤ 0 (nothing missed) is a target in items: met by a bound of 0, never by a mass target."""
    cert = prefix_bounds_separate_finite([0, 0], [95, 60], [100, 60], 0.05, names=["a", "b"])
    assert cert.value[1] == 0 < cert.value[0]  # the whole pool of b was drawn
    choice = choose_prefix(cert, [10, 50], at_most=0)
    assert choice.value == "b" and recompute(choice) == choice
    assert choose_prefix(cert, [10, 50], at_most=0.0).value == "b"
    with pytest.raises(ValueError, match="at_most must be >= 0"):
        choose_prefix(cert, [10, 50], at_most=-1)


# --- Theorem 19 -----------------------------------------------------------------------------------


def test_fixed_sequence_stops_at_first_failure() -> None:
    # g3 passes, g2 fails, g1 would pass but is never tested
    p0 = [0.9, 0.6, 0.3]
    fs = fixed_sequence([0, 5, 0], [400, 400, 400], p0=p0, epsilon=0.01, delta=0.05)
    assert fs.value == "g3"
    assert [t["name"] for t in fs.details["tests"]] == ["g3", "g2"]
    assert [t["passed"] for t in fs.details["tests"]] == [True, False]
    # Theorem 19 bounds P(a prefix is returned and misses the target): "the returned prefix has ..."
    # read as a conditional claim (the statistician's review)
    assert fs.statement.endswith("with probability ≥ 0.95 the procedure returns no prefix or one with "
                                 "r ≤ 0.01 (Theorem 19), so g3 is certified at that confidence.")


def test_fixed_sequence_returns_none_when_largest_fails() -> None:
    fs = fixed_sequence([0, 0, 9], [400, 400, 400], p0=[0.9, 0.6, 0.3], epsilon=0.01, delta=0.05)
    assert fs.value is None
    assert fs.details["order"] == ["g3"]
    assert "no prefix is returned" in fs.statement


def test_fixed_sequence_levels_are_full_delta() -> None:
    fs = fixed_sequence([0, 0], [200, 200], p0=[0.5, 0.4], epsilon=0.5, delta=0.1)
    assert [t["upper"] for t in fs.details["tests"]] == pytest.approx(
        [0.4 * cp_upper(0, 200, 0.1), 0.5 * cp_upper(0, 200, 0.1)]
    )
    assert fs.allocation == {"each_test": 0.1}


def test_fixed_sequence_with_empty_effective_sample() -> None:
    # a shared reference sample put no draw in E3: U_0 = 1, so g3 passes only if p0 ≤ ε
    assert fixed_sequence([0, 0, 0], [100, 50, 0], p0=[0.5, 0.2, 0.005], epsilon=0.01).details["tests"][0][
        "passed"
    ]
    assert fixed_sequence([0, 0, 0], [100, 50, 0], p0=[0.5, 0.2, 0.05], epsilon=0.01).value is None


def test_fixed_sequence_needs_nested_pools() -> None:
    with pytest.raises(ValueError, match="non-increasing"):
        fixed_sequence([0, 0], [10, 10], p0=[0.3, 0.5], epsilon=0.01)
    with pytest.raises(ValueError, match="non-increasing"):
        fixed_sequence_finite([0, 0], [10, 10], [300, 500], max_missed=10)


def test_fixed_sequence_finite() -> None:
    fs = fixed_sequence_finite([0, 3, 0], [300, 300, 300], [85_000, 70_000, 62_000], max_missed=1_000,
                               delta=0.05)
    mu = hypergeom_upper([0, 3, 0], 0.05, population=[85_000, 70_000, 62_000], draws=300)
    assert [t["upper"] for t in fs.details["tests"]] == [int(mu[2]), int(mu[1])]
    assert mu[2] <= 1_000 < mu[1]
    assert fs.value == "g3"
    assert recompute(Certificate.from_json(fs.to_json())) == fs


# --- inputs and JSON ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cert",
    [
        prefix_bounds_separate([0, 1], [50, 60], p0=[0.5, 0.4], delta=0.05, names=["a", "b"]),
        prefix_bounds_separate_finite([0, 1], [50, 60], [500, 400], 0.05, deltas=[0.02, 0.03]),
        prefix_bounds_shared([1, 0], [50, 30], p0=[0.5, 0.3], delta=0.05, reference_size=60),
        prefix_bounds_shared_finite([1, 1], [50, 30], [500, 300], 0.05, reference_size=60,
                                    reference_pool_size=600),
        fixed_sequence([0, 0], [100, 100], p0=[0.5, 0.3], epsilon=0.02),
    ],
    ids=lambda c: c.function,
)
def test_recompute_from_json(cert: Certificate) -> None:
    assert recompute(Certificate.from_json(cert.to_json())) == cert
    assert sum(cert.allocation.values()) <= cert.delta * (1 + 1e-12)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: prefix_bounds_separate([0, 1], [10], p0=[0.5, 0.5]), "sizes"),
        (lambda: prefix_bounds_separate([11], [10], p0=[0.5]), "counts"),
        (lambda: prefix_bounds_separate([-1], [10], p0=[0.5]), "counts"),
        (lambda: prefix_bounds_separate([0.5], [10], p0=[0.5]), "counts"),
        (lambda: prefix_bounds_separate([0], [10], p0=[1.5]), "p0"),
        (lambda: prefix_bounds_separate([0], [10], p0=[0.5], delta=0.0), "delta"),
        (lambda: prefix_bounds_separate([0, 0], [1, 1], p0=[0.5, 0.4], names=["a", "a"]), "names"),
        (lambda: prefix_bounds_separate_finite([0], [11], [10]), "sizes"),
        (lambda: prefix_bounds_separate_finite([0], [5], [10], corpus_size=9), "corpus_size"),
        (lambda: fixed_sequence([0], [10], p0=[0.5], epsilon=0.0), "epsilon"),
        (lambda: fixed_sequence_finite([0], [10], [50], max_missed=-1), "max_missed"),
    ],
)
def test_bad_input_names_the_argument(call, name: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=name):
        call()



# --- nesting E_1 ⊇ … ⊇ E_M -----------------------------------------------------------------------

AB = {"names": ["a", "b"]}
SHARED = {"reference_size": 20, **AB}
SHARED_FINITE = {"reference_size": 20, "reference_pool_size": 1_000, **AB}


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: prefix_bounds_separate([0, 0], [10, 10], p0=[0.3, 0.5], **AB),
         r"p0\[0\]=0.3 \(a\) < p0\[1\]=0.5 \(b\)"),
        (lambda: prefix_bounds_separate_finite([0, 0], [10, 10], [300, 500], **AB),
         r"excluded_sizes\[0\]=300 \(a\) < excluded_sizes\[1\]=500 \(b\)"),
        (lambda: prefix_bounds_shared([0, 0], [10, 10], p0=[0.3, 0.5], **SHARED), r"p0\[0\]=0.3 \(a\)"),
        (lambda: prefix_bounds_shared([0, 0], [5, 10], p0=[0.5, 0.3], **SHARED),
         r"effective_sizes\[0\]=5 \(a\) < effective_sizes\[1\]=10 \(b\)"),
        (lambda: prefix_bounds_shared([0, 1], [10, 5], p0=[0.5, 0.3], **SHARED),
         r"counts\[0\]=0 \(a\) < counts\[1\]=1 \(b\)"),
        # E_1 holds 10 - 5 = 5 irrelevant draws, yet E_2 ⊆ E_1 would hold 8 - 1 = 7 of them
        (lambda: prefix_bounds_shared([5, 1], [10, 8], p0=[0.5, 0.3], **SHARED),
         r"effective_sizes - counts\[0\]=5 \(a\) < effective_sizes - counts\[1\]=7 \(b\)"),
        (lambda: prefix_bounds_shared_finite([0, 0], [10, 10], [300, 500], **SHARED_FINITE),
         r"excluded_sizes\[0\]=300 \(a\)"),
        (lambda: prefix_bounds_shared_finite([0, 0], [5, 10], [500, 300], **SHARED_FINITE),
         r"effective_sizes\[0\]=5 \(a\)"),
        (lambda: prefix_bounds_shared_finite([0, 1], [10, 5], [500, 300], **SHARED_FINITE),
         r"counts\[0\]=0 \(a\)"),
        (lambda: prefix_bounds_shared_finite([5, 1], [10, 8], [500, 300], **SHARED_FINITE),
         r"effective_sizes - counts\[0\]=5 \(a\)"),
    ],
)
def test_inputs_that_contradict_nested_pools_are_refused(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="non-increasing along the prefixes") as info:
        call()
    assert info.match(match)


def test_a_delta_given_where_the_finite_pools_go_is_named() -> None:
    """δ given third, where the finite certificates take the excluded pools' sizes: said, with
    where δ goes (it read as excluded_sizes 0.05, 'a non-empty 1-D sequence')."""
    for call in (lambda: prefix_bounds_separate_finite([0, 1], [100, 200], 0.05),
                 lambda: prefix_bounds_shared_finite([0, 1], [100, 200], 0.05, reference_size=300,
                                                     reference_pool_size=1000)):
        with pytest.raises(ValueError, match=r"excluded_sizes, the third argument, is the excluded pools' "
                                             r"sizes N0\(g_m\), one per prefix, got 0.05: δ comes after them "
                                             r"\(or as delta=0.05\)"):
            call()


def test_equal_neighbours_are_nested() -> None:
    # ties are allowed: two cut points may leave the same excluded pool and the same draws
    cert = prefix_bounds_shared([1, 1], [10, 10], p0=[0.5, 0.5], delta=0.05, reference_size=20)
    assert cert.value[0] == cert.value[1]


def test_finite_statement_shows_r_with_the_corpus_size() -> None:
    cert = prefix_bounds_separate_finite([0, 0], [300, 300], [70_000, 60_000], 0.05, corpus_size=100_000)
    assert "r = M0/N (N = 100000)" in cert.statement
    assert format_bound(cert.details["r_upper"], "upper") in cert.statement
    assert "r = M0/N" not in prefix_bounds_separate_finite([0], [300], [70_000]).statement


def test_messages_show_plain_numbers_not_numpy_reprs() -> None:
    with pytest.raises(ValueError, match=r"got 1.5$"):
        prefix_bounds_shared([0], [1], p0=[0.5], reference_size=10, reference_mass=np.float64(1.5))
    with pytest.raises(ValueError, match=r"p0\[0\]=0.6 exceeds"):
        prefix_bounds_shared([0], [1], p0=np.array([0.6]), reference_size=10, reference_mass=0.5)
    with pytest.raises(ValueError, match=r"got -0.5$"):
        fixed_sequence([0], [10], p0=[0.5], epsilon=np.float64(-0.5))


def test_tiny_delta_is_not_shown_as_confidence_one() -> None:
    cert = prefix_bounds_separate([0], [300], p0=[0.5], delta=1e-300)
    assert "confidence 1 − 1e-300" in cert.statement
