"""Test-wide settings: property tests draw their examples from a fixed seed by default, so that a
run of the suite (CI's included) is reproducible; ``HYPOTHESIS_PROFILE=explore`` draws fresh ones."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

settings.register_profile("reproducible", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Tiny tensors gain nothing from threads, and on a busy machine OpenMP's spinning threads make
    each step ~20x slower (measured: 96 ms vs 4.6 ms per step of the overfitting test's network)."""
    try:
        import torch
    except ImportError:  # the tests that need torch skip themselves
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def audit_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The labels of the audit steps every interleaved review's engine takes in the test (clear it
    to count from a later point): a replay costs one such step per audit read."""
    from rankcut.certify.interleaved import InterleavedReview

    steps: list[int] = []
    audit = InterleavedReview.audit

    def counted(self: InterleavedReview, label: int) -> None:
        steps.append(label)
        audit(self, label)

    monkeypatch.setattr(InterleavedReview, "audit", counted)
    return steps
