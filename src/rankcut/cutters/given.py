"""Cuts made elsewhere, evaluated as given: the depth a cut run keeps per query.

A cut run written by another tool (or an earlier ``rankcut cut``) keeps a prefix of each list.
Scored on its own it is a list of its own, so recall over the list counts only the relevant
documents it kept; scored as :class:`GivenCuts` on the full lists (``rankcut evaluate --cut
FILE``, :func:`rankcut.evaluation.with_trained`), recall counts those of the full list, as for
every other cutter. Not in the registry: it learns nothing and has no spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from rankcut.cutters.base import Cutter
from rankcut.data.lists import RankedLists

__all__ = ["GivenCuts"]


class GivenCuts(Cutter):
    """The cuts of ``cuts`` (query id → documents kept), read from ``source``.

    :param cuts: per query, how many documents of its list are kept (0 keeps none).
    :param source: where the cuts came from (the cut run's path), for the evaluation's record.
    """

    allow_zero = True

    def __init__(self, *, cuts: Mapping[str, int], source: str) -> None:
        self.cuts = dict(cuts)
        self.source = source

    def get_params(self) -> dict[str, Any]:
        """The source alone: the cuts themselves are the evaluation's per-query rows."""
        return {"source": self.source}

    def _predict(self, lists: RankedLists) -> NDArray[np.int64]:
        absent = [q for q in lists.qids if q not in self.cuts]
        if absent:
            raise ValueError(f"{self.source} holds no cut of query {absent[0]!r} "
                             f"({len(absent)} of the {len(lists)} queries)")
        return np.array([self.cuts[q] for q in lists.qids], dtype=np.int64)
