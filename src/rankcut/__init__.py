"""rankcut: learn where to cut a ranked list, per query, and certify what the cut leaves behind.

The public surface is small; users rarely import deeper than ``rankcut``::

    import rankcut
    lists = rankcut.load_trec("run.txt", "qrels.txt")
    cutter = rankcut.make_cutter("greedy-k").fit(train_lists)
    rankcut.write_run("cut.run", lists, cutter.predict(lists))
    cert = rankcut.certify.excluded_pool_finite_certificate(0, 300, 70_000, 0.025)

Names are loaded on first use, so ``import rankcut`` stays cheap for command-line tools.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "RankedLists": "rankcut.data.lists",
    "load_trec": "rankcut.data.trec",
    "read_run": "rankcut.data.trec",
    "read_qrels": "rankcut.data.trec",
    "write_run": "rankcut.data.trec",
    "load_letor": "rankcut.data.letor",
    "lists_from_frame": "rankcut.data.frames",
    "extract_features": "rankcut.data.features",
    "make_cutter": "rankcut.cutters",
    "available_cutters": "rankcut.cutters",
    "evaluate_cutters": "rankcut.evaluation",
    "Certificate": "rankcut.certify.result",
    "JointReport": "rankcut.certify.report",
}
_SUBMODULES = {"audit", "certify", "metrics", "cutters", "data", "evaluation", "significance"}

__all__ = ["__version__", *sorted(_LAZY), *sorted(_SUBMODULES)]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"rankcut.{name}")
    else:
        raise AttributeError(f"module 'rankcut' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
