"""The certificate record, its JSON form, conservative rounding and the joint report."""

from __future__ import annotations

import json

import pytest

from rankcut.certify.report import JointReport
from rankcut.certify.result import Certificate, format_bound, round_conservative


def _cert(value: float = 0.00853, side: str = "upper", allocation: dict | None = None) -> Certificate:
    return Certificate(
        quantity="r",
        side=side,  # type: ignore[arg-type]
        value=value,
        theorem="Theorem 8",
        function="not-registered",
        inputs={"k": 0},
        allocation=allocation if allocation is not None else {"excluded": 0.025},
        delta=0.025,
        statement="missed relevant mass",
    )


@pytest.mark.parametrize(
    ("x", "side", "digits", "expected"),
    [
        (0.0115942, "upper", 3, 0.0116),   # the paper's prefix table, g1
        (0.0094885, "upper", 3, 0.00949),  # g2
        (0.0084040, "upper", 3, 0.00841),  # g3
        (0.85389, "lower", 3, 0.853),      # recall is reported as 85.3%, not 85.4%
        (0.0084001, "upper", 3, 0.00841),  # any excess rounds up
        (0.00840, "upper", 3, 0.0084),     # exact values stay
        (853.0, "upper", 2, 860.0),
    ],
)
def test_round_conservative(x: float, side: str, digits: int, expected: float) -> None:
    assert round_conservative(x, side, digits) == pytest.approx(expected, rel=1e-12)


def test_rounding_is_on_the_safe_side() -> None:
    for x in (0.123456, 1.0 / 3, 2.0 / 3, 9.87654e-5):
        assert round_conservative(x, "upper", 3) >= x
        assert round_conservative(x, "lower", 3) <= x


def test_format_bound_keeps_integers_and_tuples() -> None:
    assert format_bound(853, "upper") == "853"
    assert format_bound((0.0115942, 0.0094885), "upper") == "(0.0116, 0.00949)"
    assert format_bound(None, "choice") == "none"


def test_json_round_trip_and_schema_checks() -> None:
    c = _cert()
    d = json.loads(c.to_json())
    assert d["schema_version"] == 1 and d["theorem"] == "Theorem 8"
    assert Certificate.from_json(c.to_json()) == c
    d["schema_version"] = 99
    with pytest.raises(ValueError, match="version"):
        Certificate.from_dict(d)
    with pytest.raises(ValueError, match="not a rankcut certificate"):
        Certificate.from_dict({"value": 1})


def test_joint_report_charges_shared_events_once() -> None:
    rep = JointReport(delta=0.05, budget={"excluded": 0.025, "included": 0.025}, facts={"burden": 0.3})
    rep = rep.attach("missed", _cert())
    rep = rep.attach("recall", _cert(0.8538, "lower", {"a0": 0.025, "a1": 0.025}),
                     charge={"a0": "excluded", "a1": "included"})
    assert rep.joint_delta == pytest.approx(0.05)
    only_missed = JointReport(delta=0.05, budget={"excluded": 0.025, "included": 0.025}).attach("m", _cert())
    assert only_missed.joint_delta == pytest.approx(0.025)
    text = rep.render()
    assert "0.95" in text and "0.00853" in text and "0.853" in text and "burden = 0.3" in text
    again = JointReport.from_json(rep.to_json())
    assert again.joint_delta == rep.joint_delta and again["recall"] == rep["recall"]


def test_joint_report_refuses_overspending() -> None:
    with pytest.raises(ValueError, match="more than the joint delta"):
        JointReport(delta=0.05, budget={"a": 0.03, "b": 0.03})
    rep = JointReport(delta=0.05, budget={"excluded": 0.01})
    with pytest.raises(ValueError, match="more than its declared share"):
        rep.attach("m", _cert())
    with pytest.raises(ValueError, match="not a declared event"):
        rep.attach("m", _cert(allocation={"other": 0.001}))
    ok = rep.attach("m", _cert(allocation={"excluded": 0.01}))
    with pytest.raises(ValueError, match="already in the report"):
        ok.attach("m", _cert(allocation={"excluded": 0.01}))


def test_allocations_of_one_certificate_add_up_on_an_event() -> None:
    # found in review: two members at 0.025 each charged to one 0.025 event claimed confidence 0.975
    family = _cert(allocation={"g1": 0.025, "g2": 0.025})
    rep = JointReport(delta=0.05, budget={"excluded": 0.025})
    with pytest.raises(ValueError, match="sum to 0.05"):
        rep.attach("r", family, charge={"g1": "excluded", "g2": "excluded"})
    ok = JointReport(delta=0.05, budget={"excluded": 0.05}).attach(
        "r", family, charge={"g1": "excluded", "g2": "excluded"}
    )
    assert ok.joint_delta == pytest.approx(0.05)


def test_rendering_names_only_used_events_and_shared_ones() -> None:
    rep = JointReport(delta=0.05, budget={"excluded": 0.025, "included": 0.025}).attach("m", _cert())
    text = rep.render()
    assert "at least 0.975" in text and "included" not in text
    rep = rep.attach("m2", _cert())
    assert "m and m2 rest on the same excluded bound" in rep.render()


def test_an_event_is_shared_only_by_certificates_that_can_rest_on_one_bound() -> None:
    """Charged once, an event shared by two bounds from different samples claimed more confidence
    than the union bound gives (0.975 for two excluded-pool audits at 0.025 each): where the two
    certificates plainly differ (one function, other inputs; or other shares) it is refused."""
    from rankcut.certify.excluded import excluded_pool_finite_certificate, full_review_recall_certificate

    rep = JointReport(delta=0.05, budget={"excluded": 0.025, "included": 0.025})
    a = excluded_pool_finite_certificate(0, 300, 70_000, 0.025)
    b = excluded_pool_finite_certificate(7, 500, 50_000, 0.025)
    one = rep.attach("missed A", a, {"g": "excluded"})
    with pytest.raises(ValueError, match=r"'missed B' charges 'excluded', as 'missed A' does, but from "
                                         r"other inputs of excluded_pool_finite"):
        one.attach("missed B", b, {"g": "excluded"})
    half = excluded_pool_finite_certificate(0, 300, 70_000, 0.0125)
    with pytest.raises(ValueError, match=r"at δ 0.0125 where 'missed A' is at 0.025"):
        one.attach("again", half, {"g": "excluded"})
    # the paper's §8 pair: the missed mass and the recall of one excluded sample share its bound
    recall = full_review_recall_certificate(0, 300, 70_000, 40, 0.025)
    both = one.attach("recall", recall, {"g": "excluded"})
    assert both.joint_delta == 0.025
    assert "missed A and recall rest on the same excluded bound" in both.render()
    assert one.attach("missed A again", a, {"g": "excluded"}).joint_delta == 0.025


def test_verify_catches_an_edited_certificate() -> None:
    from rankcut.certify.excluded import excluded_pool_finite_certificate
    from rankcut.certify.result import verify

    d = excluded_pool_finite_certificate(0, 300, 70_000, 0.025).to_dict()
    assert verify(d).value == 853
    d["value"] = 100
    with pytest.raises(ValueError, match="value: stored 100, recomputed 853"):
        verify(d)
    d["value"] = 853.0   # equal to Python, but not the integer count the certificate wrote
    with pytest.raises(ValueError, match="value: stored 853.0, recomputed 853"):
        verify(d)


def test_verify_takes_a_fresh_certificate_only_of_the_same_inputs(monkeypatch) -> None:
    """A certificate the caller computed stands for the recomputation only when its function and
    inputs are the stored one's: an edited value is caught either way, and one of other inputs is
    never taken on trust."""
    from rankcut.certify import result
    from rankcut.certify.excluded import excluded_pool_finite_certificate

    stored = excluded_pool_finite_certificate(0, 300, 70_000, 0.025)
    other = excluded_pool_finite_certificate(1, 300, 70_000, 0.025)
    assert other.value != stored.value
    edited = {**stored.to_dict(), "value": other.value}   # the other certificate's value
    calls = []
    real = result.recompute
    monkeypatch.setattr(result, "recompute", lambda c: calls.append(c) or real(c))
    assert result.verify(stored.to_dict(), stored).value == stored.value and not calls   # no recomputation
    with pytest.raises(ValueError, match=f"value: stored {other.value}, recomputed {stored.value}"):
        result.verify(edited, stored)
    assert not calls
    with pytest.raises(ValueError, match=f"value: stored {other.value}, recomputed {stored.value}"):
        result.verify(edited, other)   # of other inputs: recomputed, not trusted
    assert len(calls) == 1
    # inputs equal to Python (0 == False) but not as written: recomputed, and refused as before
    retyped = stored.to_dict()
    retyped["inputs"]["counts"] = False
    with pytest.raises(ValueError, match="counts must hold integers, got False"):
        result.verify(retyped, stored)
    assert len(calls) == 2


def test_confidence_never_rounds_up_to_one() -> None:
    from rankcut.certify.result import confidence_text

    assert confidence_text(0.05) == "0.95"
    assert confidence_text(1e-300) == "1 − 1e-300"
    assert confidence_text(1.5e-6) != "1"
    assert confidence_text(1.2341e-7) == "1 − 1.24e-07"    # δ rounded up: to nearest, it claimed more


def test_a_recall_bound_is_shown_rounded_down_and_never_as_zero_when_above_it() -> None:
    from rankcut.certify.result import recall_percent
    from rankcut.certify.sequential import sequential_recall_certificate

    assert [recall_percent(x) for x in (0.0, 0.7826, 0.0205, 0.999, 1.0)] == ["0", "78.2", "2", "99.9", "100"]
    assert [recall_percent(x) for x in (0.0006, 0.000603, 0.00099)] == ["0.06", "0.06", "0.099"]
    cert = sequential_recall_certificate(found=1, pool=50_000, labelled=10, hits=0)
    assert 0 < cert.value < 1e-4
    assert f"found at least {recall_percent(cert.value)}% of the relevant items" in cert.statement
    assert float(recall_percent(cert.value)) / 100 <= cert.value and "at least 0%" not in cert.statement


def test_a_joint_report_of_numpy_numbers_writes_json_and_names_bad_ones() -> None:
    """numpy facts or a float32 delta made to_json a TypeError (render worked); a string delta was
    a bare TypeError from '<'."""
    import numpy as np

    rep = JointReport(delta=np.float32(0.05), budget={"excluded": np.float64(0.025)},
                      facts={"kept": np.int64(12), "depths": np.array([3, 4])}).attach("m", _cert())
    back = json.loads(rep.to_json())
    assert back["facts"] == {"kept": 12, "depths": [3, 4]} and back["delta"] == float(np.float32(0.05))
    with pytest.raises(ValueError, match=r"delta must be a number in \(0, 1\), got '0\.05'"):
        JointReport(delta="0.05", budget={"a": 0.01})   # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"budget share of 'a' must lie in \(0, 1\)"):
        JointReport(delta=0.05, budget={"a": 0.0})
    # a float32 share is a hair above 0.025: said in full, not as "0.025, more than 0.025"
    with pytest.raises(ValueError, match=r"sum to 0\.02500000037252903, more than its declared share 0\.025"):
        JointReport(delta=0.05, budget={"excluded": 0.025}).attach(
            "m", _cert(allocation={"excluded": float(np.float32(0.025))}))
    with pytest.raises(ValueError, match=r"sum to 0\.03, more than its declared share 0\.025$"):   # no np.
        JointReport(delta=0.05, budget={"excluded": 0.025}).attach(
            "m", _cert(allocation={"excluded": np.float64(0.03)}))


def test_verify_names_what_a_malformed_certificate_lacks() -> None:
    """verify promises a ValueError to an auditor who receives JSON; a missing key was a KeyError,
    a renamed input a TypeError."""
    from rankcut.certify.excluded import excluded_pool_finite_certificate
    from rankcut.certify.result import verify

    good = excluded_pool_finite_certificate(0, 300, 70_000, 0.025).to_dict()
    for key in ("value", "inputs"):
        with pytest.raises(ValueError, match=f"certificate lacks {key}"):
            verify({k: v for k, v in good.items() if k != key})
    renamed = {**good, "inputs": {("n" if k == "sizes" else k): v for k, v in good["inputs"].items()}}
    assert renamed["inputs"] != good["inputs"]
    with pytest.raises(ValueError, match="are not the arguments of"):
        verify(renamed)
    with pytest.raises(ValueError, match="certificate inputs must be an object"):
        verify({**good, "inputs": [1, 2]})
