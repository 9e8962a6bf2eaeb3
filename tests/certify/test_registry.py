"""The registered surface of rankcut.certify: every registered function is exported, and recomputes."""

from __future__ import annotations

import pytest

import rankcut.certify as certify
from rankcut.certify.planning import shared_reference_size, two_pool_recall_sizes
from rankcut.certify.result import _REGISTRY


def test_every_registered_function_is_exported() -> None:
    missing = sorted(fn.__name__ for fn in _REGISTRY.values()
                     if getattr(certify, fn.__name__, None) is not fn)
    assert missing == []
    assert {fn.__name__ for fn in _REGISTRY.values()} <= set(certify.__all__)


def test_the_default_design_and_the_review_rule_are_exported() -> None:
    for name in ("SequentialAudit", "ReviewRule", "sequential_recall_certificate"):
        assert name in certify.__all__ and getattr(certify, name) is not None


def test_shared_reference_size_is_a_registered_plan() -> None:
    cert = shared_reference_size(30, excluded_size=500, reference_pool_size=2000, finite=True)
    assert (cert.side, cert.quantity, cert.value) == ("size", "Q", 152)
    assert cert.function == "shared_reference_size"
    assert certify.verify(cert.to_dict()).value == 152
    assert shared_reference_size(0, excluded_size=500, reference_pool_size=2000, finite=False).value == 0


def test_shared_reference_size_takes_its_pools_by_name() -> None:
    """``(need, pool, reference)`` swapped gave a size with no error (the naming review: 70,000)."""
    with pytest.raises(TypeError):
        shared_reference_size(30, 500, 2000, True)   # type: ignore[misc]
    with pytest.raises(ValueError, match="excluded_size=2000 exceeds reference_pool_size=500"):
        shared_reference_size(30, excluded_size=2000, reference_pool_size=500, finite=True)
    with pytest.raises(ValueError, match=r"probability must lie in \(0, 1\), got 1"):   # no size reaches it
        shared_reference_size(30, excluded_size=500, reference_pool_size=2000, finite=True, probability=1.0)


def test_two_pool_recall_sizes_is_a_registered_plan() -> None:
    kw = dict(excluded_size=70000, included_size=30000, corpus_size=100000, delta0=0.025, delta1=0.025)
    cert = two_pool_recall_sizes(0.8, 0.3, 0, finite=True, **kw)
    assert (cert.side, cert.function, tuple(cert.value)) == ("size", "two_pool_recall_sizes", (191, 50))
    assert cert.allocation == {"excluded audit": 0.025, "included audit": 0.025}
    assert tuple(certify.verify(certify.Certificate.from_json(cert.to_json())).value) == (191, 50)
    none = two_pool_recall_sizes(0.999, 0.001, 0, finite=False, **{**kw, "included_size": 30})
    assert none.value is None
    assert "no sizes within the pools do" in none.statement


def test_each_function_names_its_theorem_once_at_registration() -> None:
    from rankcut.certify.result import _THEOREMS, theorem_of

    assert set(_THEOREMS) == set(_REGISTRY)
    assert theorem_of("excluded_pool_finite") == "Theorem 8"
    assert certify.excluded_pool_certificate(0, 300).theorem == theorem_of("excluded_pool") == "Theorem 7"
    with pytest.raises(ValueError, match="unknown certificate function 'nope'"):
        theorem_of("nope")


def test_certificates_and_designs_read_the_registered_label(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankcut.audit.designs import DESIGNS
    from rankcut.certify.result import _THEOREMS

    monkeypatch.setitem(_THEOREMS, "excluded_pool_finite", "Theorem 8*")
    monkeypatch.setitem(_THEOREMS, "sequential_recall", "§9*")
    assert DESIGNS["excluded"].theorem(None, True) == "Theorem 8*"
    assert DESIGNS["two-pool"].theorem(None, True) == "Corollary 11 with Theorem 8*"
    assert DESIGNS["fixed-sequence"].theorem(None, True) == "Theorem 19 (Theorem 8* tests)"
    assert DESIGNS["stratified"].theorem(None, True) == "Section 9 (Theorem 8* per band)"
    assert DESIGNS["sequential"].theorem(None, True).startswith("§9* (")
    assert certify.sequential_recall_certificate(found=40, pool=500, labelled=200,
                                                 hits=0).theorem.startswith("§9* (")
