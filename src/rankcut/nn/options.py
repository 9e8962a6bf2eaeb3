"""The training options every neural cutter shares, and their one set of defaults; torch-free, so
that the cutters check them without importing torch.

AttnCut (Wu et al., AAAI 2021, "Experimental Settings") trains with Adam at learning rate 1e-3 on
mini-batches of 20 lists; the epoch is chosen on a validation share of the training queries
(:mod:`rankcut.nn.training`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from rankcut import metrics
from rankcut._util import check_bool, check_int, check_number
from rankcut.errors import ParamError

__all__ = ["CLIP", "METRIC", "PRECISIONS", "RECALL_BASE", "TRAINING_DEFAULTS", "WEIGHT_DECAY",
           "check_precision", "check_training_options"]

#: the metric optimised by default (F1@k, Eq. 8 of AttnCut) and its recall denominator
#: (:mod:`rankcut.metrics`)
METRIC, RECALL_BASE = "f1", "list"
#: the ``precision`` options of the neural cutters: float32; bfloat16 autocast with float32
#: weights (:mod:`rankcut.nn.training`); ``"auto"``, bfloat16 where the CPU has AMX, else float32
PRECISIONS: tuple[str, ...] = ("fp32", "bf16", "auto")
#: Adam's L2 penalty and the gradient-norm clip used by every neural cutter
WEIGHT_DECAY = 0.0
CLIP = 1.0
#: the options of the training loop and the input encoder (``score_z``) that every neural cutter
#: takes, with their defaults, in the order of the cutters' parameters
TRAINING_DEFAULTS: MappingProxyType[str, Any] = MappingProxyType({
    "epochs": 60,
    "batch_size": 20,
    "lr": 1e-3,
    "patience": 15,
    "val_fraction": 0.2,
    "seed": 0,
    "score_z": True,
    "precision": "fp32",
    "progress": False,
})


def check_precision(precision: Any) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else ParamError."""
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise ParamError("precision", f"precision must be one of {PRECISIONS}, got {precision!r}")
    return precision


def check_training_options(*, metric: Any, recall_base: Any, epochs: Any, batch_size: Any, lr: Any,
                           patience: Any, val_fraction: Any, seed: Any, progress: Any,
                           precision: Any) -> None:
    """Validate the options of :func:`rankcut.nn.training.fit_network` (ParamError naming the
    argument): metric and recall base of :mod:`rankcut.metrics`, ``epochs``, ``batch_size``,
    ``patience`` integers ≥ 1, ``lr`` > 0, ``val_fraction`` in (0, 1), ``seed`` ≥ 0, ``progress``
    a bool, ``precision`` one of :data:`PRECISIONS`."""
    metrics.check_options(metric, recall_base, False)
    check_int(epochs, "epochs", low=1)
    check_int(batch_size, "batch_size", low=1)
    check_int(patience, "patience", low=1)
    check_int(seed, "seed", low=0)
    check_number(lr, "lr", low=0.0)
    check_number(val_fraction, "val_fraction", low=0.0, high=1.0)
    check_bool(progress, "progress")
    check_precision(precision)
