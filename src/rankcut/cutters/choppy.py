"""Choppy (Bahri, Tay, Zheng, Metzler & Tomkins, "Choppy: Cut Transformer for Ranked List
Truncation", SIGIR 2020), a baseline of AttnCut (Wu et al., AAAI 2021, "Baselines").

A Transformer encoder with learned position embeddings reads the list and gives a softmax over
the cut positions (:class:`rankcut.nn.models.ChoppyNet`); it is trained to maximise the expected
metric under that distribution, ``Σ_k p_k r_k`` (:func:`rankcut.nn.losses.expected_metric_loss`),
and cuts at the most probable position.

torch is imported only when fitting or predicting (:mod:`rankcut.cutters.neural`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankcut.cutters.base import register
from rankcut.cutters.neural import NeuralCutter
from rankcut.data.lists import RankedLists
from rankcut.nn.options import METRIC, RECALL_BASE

if TYPE_CHECKING:
    import torch

    from rankcut.nn.training import DecideFn, LossFn

__all__ = ["Choppy"]


@register("choppy")
class Choppy(NeuralCutter):
    """Choppy: a Transformer's softmax over cuts, trained on the expected metric (module docstring).

    Lists longer than 1000 documents (the position embedding's reach) are refused.

    :param metric: the reward ``r_k`` and the metric that chooses the epoch
        (:data:`rankcut.metrics.METRICS`; F1@k of Eq. 8 or ±1-DCG@k of Eq. 9 of AttnCut).
    :param recall_base: ``"list"`` or ``"judged"`` (:func:`rankcut.metrics.curves`).
    :param epochs, batch_size, lr, patience, val_fraction, seed, score_z, precision, progress: as for
        :class:`rankcut.cutters.attncut.AttnCut`.

    Learned attributes: see :class:`rankcut.cutters.neural.NeuralCutter` (``net_`` is the
    :class:`rankcut.nn.models.ChoppyNet`).
    """

    paper = "Choppy (Bahri et al., SIGIR 2020)"

    def __init__(
        self,
        *,
        metric: str = METRIC,
        recall_base: str = RECALL_BASE,
        **options: Any,
    ) -> None:
        self.metric = metric
        self.recall_base = recall_base
        super().__init__(**options)

    def _build_networks(self, n_features: int) -> dict[str, torch.nn.Module]:
        from rankcut.nn.models import ChoppyNet

        return {"net": ChoppyNet(n_features)}

    def _loss_fn(self, lists: RankedLists) -> LossFn:
        from rankcut.nn.losses import expected_metric_loss

        return lambda out, b, epoch: expected_metric_loss(out, b.rewards, b.mask)

    def _decide_fn(self) -> DecideFn:
        from rankcut.nn.models import argmax_cuts

        return argmax_cuts
