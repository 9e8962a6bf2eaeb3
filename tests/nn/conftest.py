"""Shared set-up of the rankcut.nn tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
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
