"""Neural truncation models (AttnCut, BiCut, Choppy) and their losses; needs PyTorch.

Kept out of ``import rankcut`` on purpose: torch takes seconds to import and is an optional extra.
"""

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised by a test that hides torch
    raise ImportError("rankcut.nn needs PyTorch: pip install 'rankcut[torch]'") from exc

from rankcut.nn.losses import (
    bicut_loss,
    bicut_position_loss,
    expected_metric_loss,
    masked_log_softmax,
    mle_loss,
    raml_loss,
    raml_targets,
    recall_bin_targets,
    recall_bins_loss,
    relevant_share,
    rl_loss,
)
from rankcut.nn.models import (
    AttnCutNet,
    BiCutNet,
    ChoppyNet,
    argmax_cuts,
    first_eol_cuts,
    recall_constrained_cuts,
)

__all__ = [
    "AttnCutNet",
    "BiCutNet",
    "ChoppyNet",
    "argmax_cuts",
    "bicut_loss",
    "bicut_position_loss",
    "expected_metric_loss",
    "first_eol_cuts",
    "masked_log_softmax",
    "mle_loss",
    "raml_loss",
    "raml_targets",
    "recall_bin_targets",
    "recall_bins_loss",
    "recall_constrained_cuts",
    "relevant_share",
    "rl_loss",
]
