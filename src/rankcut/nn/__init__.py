"""Neural truncation models (AttnCut, BiCut, Choppy), their losses and training loop; needs PyTorch,
except :mod:`rankcut.nn.options` (the training options every neural cutter checks, torch-free).

Kept out of ``import rankcut`` on purpose: torch takes seconds to import and is an optional extra.
The names below are loaded on first use (``rankcut.nn.AttnCutNet``), so that importing
:mod:`rankcut.nn.options` imports no torch.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

_LAZY = {
    **dict.fromkeys(("bicut_loss", "bicut_position_loss", "expected_metric_loss", "masked_log_softmax",
                     "mle_loss", "raml_loss", "raml_targets", "recall_bin_targets", "recall_bins_loss",
                     "relevant_share", "rl_loss"), "losses"),
    **dict.fromkeys(("AttnCutNet", "BiCutNet", "ChoppyNet", "argmax_cuts", "first_eol_cuts",
                     "recall_constrained_cuts"), "models"),
}

__all__ = sorted([*_LAZY, "require_torch"])


def require_torch(what: str) -> None:
    """Raise ImportError naming the extra to install when PyTorch is missing (``what`` needs it),
    without importing it: the neural cutters check it when built, before any data is read."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):   # a finder that refuses it; a module entry without a spec
        found = False
    if not found:
        raise ImportError(f"{what} needs PyTorch: pip install 'rankcut[torch]'")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'rankcut.nn' has no attribute {name!r}")
    require_torch("rankcut.nn")
    value = getattr(importlib.import_module(f"rankcut.nn.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
