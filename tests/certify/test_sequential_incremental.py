"""The sequential audit's incremental paths (rankcut.certify.sequential): the per-prefix state of the
confidence sequence extended label by label, and the remembered zero-find scans, give exactly what
the batch computations give (``rankcut serve`` recomputes the bound after every answer)."""

from __future__ import annotations

import numpy as np
import pytest

from rankcut.certify import sequential
from rankcut.certify.sequential import RunningState, SequentialAudit, default_prior_mean


def _batch(audit: SequentialAudit, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """max C_s at every prefix, and the running intersection and its prefix, from scratch."""
    t = np.arange(y.size + 1)
    x = np.concatenate(([0], np.cumsum(y)))
    plain = audit.missed_upper(t, x)
    best = np.minimum.accumulate(plain)
    return plain, np.maximum(best, x), np.maximum.accumulate(np.where(plain == best, t, 0))


@pytest.mark.parametrize("seed", range(6))
def test_a_state_extended_label_by_label_equals_the_batch_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = int(rng.integers(1, 400))
    found = int(rng.integers(0, 60))
    audit = SequentialAudit(pool=pool, found=found, target=float(rng.choice([0.5, 0.8, 0.95, 1.0])),
                            delta=0.05, prior_mean=default_prior_mean(found))
    y = (rng.random(pool) < rng.choice([0.0, 0.02, 0.2, 0.6])).astype(np.int64)   # the pool's order
    state: RunningState | None = None
    t = 0
    for _ in range(40):
        if rng.random() < 0.15 and t:              # an answer taken back, or changed before an opening
            t = int(rng.integers(0, t))
            if rng.random() < 0.5:
                y[t:] = 1 - y[t:]
        else:                                      # one more answer, several, none, or the whole pool
            t = min(pool, t + int(rng.choice([0, 1, 1, 1, 3, pool])))
        state = audit.running_state(y[:t], state)
        plain, bound, where = _batch(audit, y[:t])
        assert np.array_equal(state.upper, plain), (t, seed)
        got_bound, got_where = state.running()
        assert np.array_equal(got_bound, bound) and np.array_equal(got_where, where), (t, seed)
        fresh_bound, fresh_where = audit.running_upper(y[:t])
        assert np.array_equal(fresh_bound, bound) and np.array_equal(fresh_where, where)


def test_a_state_evaluates_only_the_prefixes_it_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    audit = SequentialAudit(pool=500, found=30, target=0.8, delta=0.05, prior_mean=default_prior_mean(30))
    y = np.zeros(200, dtype=np.int64)
    y[[3, 50]] = 1
    state = audit.running_state(y[:100])
    sizes: list[int] = []
    upper = SequentialAudit.missed_upper
    monkeypatch.setattr(SequentialAudit, "missed_upper",
                        lambda self, t, x, **kw: sizes.append(np.size(t)) or upper(self, t, x, **kw))
    state = audit.running_state(y[:101], state)
    assert sizes == [1] and state.upper.size == 102
    state = audit.running_state(y[:60], state)            # taken back: nothing to evaluate
    assert sizes == [1, 0] and state.upper.size == 61
    changed = y[:101].copy()
    changed[50] = 0
    audit.running_state(changed, state)                   # changed at position 51: from prefix 51 on
    assert sizes == [1, 0, 51]


def test_t_zero_and_the_whole_pool() -> None:
    audit = SequentialAudit(pool=40, found=5, target=0.8, delta=0.05, prior_mean=1.0)
    empty = audit.running_state([])
    assert empty.upper.tolist() == [40] and [v.tolist() for v in empty.running()] == [[40], [0]]
    y = np.zeros(40, dtype=np.int64)
    y[[0, 7, 39]] = 1
    full = audit.running_state(y, audit.running_state(y[:39]))
    assert int(full.running()[0][-1]) == 3 and np.array_equal(full.upper, _batch(audit, y)[0])
    with pytest.raises(ValueError, match="0/1 sequence of at most N0 = 40"):
        audit.running_state(np.zeros(41), full)


def test_remembered_zero_find_scans_equal_a_fresh_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    audit = SequentialAudit(pool=1500, found=30, target=0.8, delta=0.05, prior_mean=default_prior_mean(30))
    sequential._SCANS.clear()
    scans: list[tuple[int, int]] = []
    scan = SequentialAudit._scan_zero_find
    monkeypatch.setattr(SequentialAudit, "_scan_zero_find",
                        lambda self, t, x: scans.append((t, x)) or scan(self, t, x))
    for t, x in ((0, 0), (1, 0), (50, 0), (3, 1), (4, 1), (0, 0), (1200, 1), (700, 2), (1500, 0)):
        assert audit.zero_find_stop(t, x) == next(s for s in range(t, 1501) if audit.certified(s, x)), (t, x)
    stop = audit.zero_find_stop(0, 0)
    assert 50 < stop < 1500 and audit.zero_find_stop(stop, 0) == stop
    assert scans == [(0, 0), (3, 1), (1200, 1), (700, 2), (1500, 0), (0, 0)]   # reused within [t0, t*]
    other = SequentialAudit(pool=1500, found=31, target=0.8, delta=0.05,
                            prior_mean=default_prior_mean(30))   # another rule: its own scan
    assert other.zero_find_stop(1, 0) == next(s for s in range(1, 1501) if other.certified(s, 0))
    assert scans[-1] == (1, 0)
