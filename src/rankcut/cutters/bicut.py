"""BiCut (Lien, Cohen & Croft, "An Assumption-Free Approach to the Dynamic Truncation of Ranked
Lists", ICTIR 2019), the neural baseline of AttnCut (Wu et al., AAAI 2021, "Baselines").

A BiLSTM reads the list and says *continue* or *end of list* at every position
(:class:`rankcut.nn.models.BiCutNet`); the list is cut at the first end of list
(:func:`rankcut.nn.models.first_eol_cuts`). It is trained with BiCut's cost-sensitive loss
(:func:`rankcut.nn.losses.bicut_loss`): continuing past a non-relevant document costs ``alpha``,
stopping at a relevant one ``1 - alpha``, each divided by the share of its class among the training
documents (BiCut's normalisation factor ``r``). The metric serves only to choose the epoch on the
validation queries.

torch is imported only when fitting or predicting (:mod:`rankcut.cutters.neural`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankcut._util import check_number
from rankcut.cutters.base import register
from rankcut.cutters.neural import NeuralCutter, training_share
from rankcut.data.lists import RankedLists
from rankcut.nn.options import METRIC, RECALL_BASE

if TYPE_CHECKING:
    import torch

    from rankcut.nn.training import DecideFn, LossFn

__all__ = ["BiCut"]


@register("bicut")
class BiCut(NeuralCutter):
    """BiCut: a BiLSTM's first end-of-list decision (module docstring).

    :param alpha: cost of keeping a non-relevant document, in [0, 1] (``1 - alpha`` for cutting
        off a relevant one); 0.65 by default. Larger ``alpha`` cuts earlier.
    :param metric: the metric that chooses the epoch on the validation queries
        (:data:`rankcut.metrics.METRICS`; F1@k of Eq. 8 or ±1-DCG@k of Eq. 9 of AttnCut).
    :param recall_base: ``"list"`` or ``"judged"`` (:func:`rankcut.metrics.curves`).
    :param epochs, batch_size, lr, patience, val_fraction, seed, score_z, precision, progress: as for
        :class:`rankcut.cutters.attncut.AttnCut`.

    Learned attributes: see :class:`rankcut.cutters.neural.NeuralCutter` (``net_`` is the
    :class:`rankcut.nn.models.BiCutNet`).
    """

    paper = "BiCut (Lien, Cohen & Croft, ICTIR 2019)"

    def __init__(
        self,
        *,
        alpha: float = 0.65,
        metric: str = METRIC,
        recall_base: str = RECALL_BASE,
        **options: Any,
    ) -> None:
        self.alpha = alpha
        self.metric = metric
        self.recall_base = recall_base
        super().__init__(**options)

    def _validate_params(self) -> None:
        check_number(self.alpha, "alpha", low=0.0, high=1.0, low_closed=True, high_closed=True)
        super()._validate_params()

    def _build_networks(self, n_features: int) -> dict[str, torch.nn.Module]:
        from rankcut.nn.models import BiCutNet

        return {"net": BiCutNet(n_features)}

    def _loss_fn(self, lists: RankedLists) -> LossFn:
        from rankcut.nn.losses import bicut_loss

        alpha, share = float(self.alpha), training_share(lists)
        return lambda out, b, epoch: bicut_loss(out, b.labels, b.mask, alpha=alpha, relevant_share=share)

    def _decide_fn(self) -> DecideFn:
        from rankcut.nn.models import first_eol_cuts

        return first_eol_cuts
