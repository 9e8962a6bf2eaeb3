"""Cutters: where to cut each ranked list. One method per file, all registered by name.

``make_cutter("fixed-k:20")`` builds one from its spec; :func:`available_cutters` lists the names.
Importing this package registers the built-in cutters, the neural ones included: their modules
import torch only inside ``fit``/``predict`` (:mod:`rankcut.cutters.neural`), so the registry and
the classical cutters' spec checks stay torch-free; building a neural cutter needs torch installed
(refused naming the extra, before any data is read).
"""

from rankcut.cutters.attncut import AttnCut
from rankcut.cutters.base import (
    Cutter,
    NotFittedError,
    available_cutters,
    clone,
    cutter_class,
    make_cutter,
    register,
)
from rankcut.cutters.bicut import BiCut
from rankcut.cutters.choppy import Choppy
from rankcut.cutters.distribution import ScoreDistribution
from rankcut.cutters.fixed import FixedK, GreedyK, Oracle
from rankcut.cutters.recall_constrained import AttnCutRC
from rankcut.cutters.surprise import Surprise

__all__ = [
    "AttnCut",
    "AttnCutRC",
    "BiCut",
    "Choppy",
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
