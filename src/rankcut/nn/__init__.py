"""Neural truncation models (AttnCut, BiCut, Choppy), their losses and training loop; needs PyTorch,
except :mod:`rankcut.nn.options` (the training options every neural cutter checks, torch-free).

Kept out of ``import rankcut`` on purpose: torch takes seconds to import and is an optional extra.
The names below are loaded on first use (``rankcut.nn.AttnCutNet``), so that importing
:mod:`rankcut.nn.options` imports no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    **dict.fromkeys(("bicut_loss", "bicut_position_loss", "expected_metric_loss", "masked_log_softmax",
                     "mle_loss", "raml_loss", "raml_targets", "recall_bin_targets", "recall_bins_loss",
                     "relevant_share", "rl_loss"), "losses"),
    **dict.fromkeys(("AttnCutNet", "BiCutNet", "ChoppyNet", "argmax_cuts", "first_eol_cuts",
                     "recall_constrained_cuts"), "models"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'rankcut.nn' has no attribute {name!r}")
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        raise ImportError("rankcut.nn needs PyTorch: pip install 'rankcut[torch]'") from exc
    value = getattr(importlib.import_module(f"rankcut.nn.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
