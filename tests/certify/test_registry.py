"""The registered surface of rankcut.certify: every registered function is exported, and recomputes."""

from __future__ import annotations

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
    cert = shared_reference_size(30, 500, 2000, True)
    assert (cert.side, cert.quantity, cert.value) == ("size", "Q", 152)
    assert cert.function == "shared_reference_size"
    assert certify.verify(cert.to_dict()).value == 152
    assert shared_reference_size(0, 500, 2000, False).value == 0


def test_two_pool_recall_sizes_is_a_registered_plan() -> None:
    kw = dict(excluded_size=70000, included_size=30000, corpus_size=100000, delta0=0.025, delta1=0.025)
    cert = two_pool_recall_sizes(0.8, 0.3, 0, finite=True, **kw)
    assert (cert.side, cert.function, tuple(cert.value)) == ("size", "two_pool_recall_sizes", (191, 50))
    assert cert.allocation == {"excluded audit": 0.025, "included audit": 0.025}
    assert tuple(certify.verify(certify.Certificate.from_json(cert.to_json())).value) == (191, 50)
    none = two_pool_recall_sizes(0.999, 0.001, 0, finite=False, **{**kw, "included_size": 30})
    assert none.value is None
    assert "no sizes within the pools do" in none.statement
