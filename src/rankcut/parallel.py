"""Sharded execution: the queries of a run split into shards, each cut on a worker, the cuts merged
back in the run's order.

Splitting and merging are plain functions (:func:`shard_bounds`, :func:`shard_lists`,
:func:`predict_sharded`), testable without any engine. The work goes through an executor: in this
process, one call after another (:class:`InProcess`), or on a Ray cluster (:class:`OnRay`; Ray is
the engine PyTerrier's ``.parallel()`` offers for more than one machine). Either way the merged
result is the one a single call on all queries gives: a cut depends on its own list only, and the
shards are contiguous runs of queries concatenated back in order. ``rankcut cut``, ``rankcut
evaluate`` (:func:`rankcut.evaluation.evaluate_cutters`: one task per fold and cutter, its test
queries sharded) and ``rankcut certify audits`` (one task per group of audit folders) use it;
docs/scaling.md has the measurements.

Ray is an optional extra (``pip install 'rankcut[ray]'``), imported only by :class:`OnRay`.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from rankcut._util import check_int
from rankcut.cutters import Cutter
from rankcut.data.lists import RankedLists

__all__ = ["RAY_HINT", "Executor", "InProcess", "OnRay", "cut_shard", "executor", "merge_cuts",
           "predict_sharded", "shard_bounds", "shard_lists"]

RAY_HINT = "pip install 'rankcut[ray]'"


class Executor(Protocol):
    """Where the shards run. ``map`` yields ``fn(*args)`` for each tuple of ``calls``, in order;
    ``put`` stores an argument once for many calls (Ray's object store; itself in process)."""

    @property
    def workers(self) -> int: ...

    def put(self, obj: Any) -> Any: ...

    def map(self, fn: Callable[..., Any], calls: Iterable[tuple[Any, ...]]) -> Iterator[Any]: ...

    def close(self) -> None: ...


class InProcess:
    """Every call in this process, one after another, when its result is asked for."""

    workers = 1

    def put(self, obj: Any) -> Any:
        return obj

    def map(self, fn: Callable[..., Any], calls: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
        return (fn(*args) for args in calls)

    def close(self) -> None:
        pass


def _call(fn: Callable[..., Any], *args: Any
          ) -> tuple[Any, list[tuple[str, type[Warning]]], Exception | None]:
    """``fn(*args)`` on a worker: its value, the warnings it raised and the exception it raised, so
    that the driver shows them as if the call had run there (a worker's own output goes to its log)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, error = fn(*args), None
        except Exception as exc:  # re-raised by the driver, with its own type and message
            value, error = None, exc
    return value, [(str(w.message), w.category) for w in caught], error


class OnRay:
    """Every call a Ray task. ``address`` is Ray's: ``"local"`` starts a Ray instance on this
    machine (stopped by :meth:`close`), ``"auto"`` or ``"ray://HOST:PORT"`` joins a running cluster,
    whose nodes must have rankcut installed. Where Ray is already initialised (a test's fixture, a
    caller's session), that instance is used and left running.

    :raises ImportError: when Ray is not installed, naming the extra to install.
    """

    def __init__(self, address: str) -> None:
        try:
            import ray
        except ImportError:
            raise ImportError(f"--ray {address} needs Ray: {RAY_HINT}") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.WARNING)
        self._task = ray.remote(_call)

    @property
    def workers(self) -> int:
        """The CPUs of the cluster: one shard each."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def put(self, obj: Any) -> Any:
        return self._ray.put(obj)

    def map(self, fn: Callable[..., Any], calls: Iterable[tuple[Any, ...]]) -> Iterator[Any]:
        refs = [self._task.remote(fn, *args) for args in calls]  # all submitted now, run in parallel

        def results() -> Iterator[Any]:
            for ref in refs:
                value, caught, error = self._ray.get(ref)
                for message, category in caught:
                    warnings.warn(message, category, stacklevel=2)
                if error is not None:
                    raise error
                yield value

        return results()

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()


def executor(ray: str | None) -> Executor:
    """:class:`OnRay` at the Ray address ``ray``, or :class:`InProcess` for None."""
    return InProcess() if ray is None else OnRay(ray)


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of ``shards`` contiguous parts of ``n`` items, sizes differing by at most
    one, larger parts first (as ``numpy.array_split``); never an empty part, so at most ``n`` parts.

    :raises ParamError: (``shards``) for a count below 1.
    """
    check_int(shards, "shards", low=1)
    sizes = [len(part) for part in np.array_split(np.arange(n), min(int(shards), max(n, 1)))]
    stops = np.cumsum(sizes).tolist()
    return list(zip([0, *stops[:-1]], stops, strict=True))


def shard_lists(lists: RankedLists, shards: int) -> list[RankedLists]:
    """The lists of ``shards`` contiguous groups of queries (:func:`shard_bounds`), in order;
    ``[lists]`` itself for one shard."""
    bounds = shard_bounds(len(lists), shards)
    if len(bounds) == 1:
        return [lists]
    return [lists.subset(lists.qids[a:b]) for a, b in bounds]


def cut_shard(cutter: Cutter, lists: RankedLists) -> NDArray[np.int64]:
    """The cuts of one shard (a task of :meth:`Executor.map`)."""
    return cutter.predict(lists)


def merge_cuts(parts: Sequence[NDArray[np.int64]] | Iterable[NDArray[np.int64]]) -> NDArray[np.int64]:
    """The cuts of the shards, concatenated back into the order of the queries."""
    return np.concatenate([np.asarray(p, dtype=np.int64) for p in parts])


def predict_sharded(cutter: Cutter, lists: RankedLists, *, shards: int = 1,
                    runner: Executor | None = None) -> NDArray[np.int64]:
    """``cutter.predict(lists)``, the queries cut in ``shards`` contiguous shards by ``runner``
    (default: this process) and merged in order: the same cuts as one call.

    :param cutter: a fitted cutter (fitting reads all training queries; it is not sharded).
    """
    runner = runner if runner is not None else InProcess()
    parts = shard_lists(lists, shards)
    if len(parts) == 1 and isinstance(runner, InProcess):
        return cutter.predict(lists)
    stored = runner.put(cutter)
    return merge_cuts(runner.map(cut_shard, [(stored, runner.put(p)) for p in parts]))
