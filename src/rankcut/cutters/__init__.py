"""Cutters: where to cut each ranked list. One method per file, all registered by name.

``make_cutter("fixed-k:20")`` builds one from its spec; :func:`available_cutters` lists the names.
Importing this package registers the built-in cutters.
"""

from rankcut.cutters.base import (
    Cutter,
    NotFittedError,
    available_cutters,
    clone,
    cutter_class,
    make_cutter,
    register,
)
from rankcut.cutters.distribution import ScoreDistribution
from rankcut.cutters.fixed import FixedK, GreedyK, Oracle
from rankcut.cutters.surprise import Surprise

__all__ = [
    "Cutter",
    "FixedK",
    "GreedyK",
    "NotFittedError",
    "Oracle",
    "ScoreDistribution",
    "Surprise",
    "available_cutters",
    "clone",
    "cutter_class",
    "make_cutter",
    "register",
]
