"""Recall-constrained AttnCut (Wu et al., AAAI 2021, section "Recall-Constraint Truncation" and
Table 4): the best metric under a minimal recall ``σ``.

Two networks share AttnCut's encoding and attention layers' design:

* the metric AttnCut (:class:`rankcut.nn.models.AttnCutNet`, trained with RAML, Eq. 4 and 6),
  which ranks the cuts by probability;
* a recall model, the same network with a ``B``-way decision layer that classifies every cut
  into one of ``B`` ordered bins of its recall ``R@k`` (Eq. 7), trained by maximum likelihood
  (:func:`rankcut.nn.losses.recall_bins_loss`); its epoch is chosen on the validation loss.

At prediction, ``j`` is the first cut at which the recall model finds ``R@k ≥ σ`` more likely than
not, and AttnCut's cuts are tried in order of decreasing probability until one is ``≥ j``
(:func:`rankcut.nn.models.recall_constrained_cuts`). ``σ`` enters only there: one fitted model
serves every ``σ`` (set ``sigma`` on the fitted cutter).

torch is imported only when fitting or predicting (:mod:`rankcut.cutters.neural`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from rankcut._util import check_int, check_number
from rankcut.cutters.base import register
from rankcut.cutters.neural import NeuralCutter, summary_of
from rankcut.data.lists import RankedLists
from rankcut.nn.options import METRIC, RECALL_BASE

if TYPE_CHECKING:
    import torch

    from rankcut.nn.inputs import InputEncoder

__all__ = ["SIGMA", "AttnCutRC"]


#: the default minimal recall σ (a constant, so that help texts need no cutter built, nor torch)
SIGMA = 0.5


@register("attncut-rc")
class AttnCutRC(NeuralCutter):
    """AttnCut under a minimal recall ``σ`` (module docstring; Table 4 of AttnCut).

    :param sigma: the minimal recall ``σ`` in [0, 1] (spec param: ``attncut-rc:0.7``); recall is
        ``R@k`` of Eq. 7, over the relevant documents in the list, as predicted by the recall
        model. ``σ = 0`` cuts as AttnCut does.
    :param bins: number ``B`` of ordered recall bins, ≥ 2 (5 in the paper).
    :param metric: the metric of the AttnCut ranking the cuts (:data:`rankcut.metrics.METRICS`).
    :param recall_base: ``"list"`` or ``"judged"``, for ``metric`` (the recall bins always use
        Eq. 7's in-list recall).
    :param tau: RAML temperature of the metric AttnCut (Eq. 4), > 0.
    :param epochs, batch_size, lr, patience, val_fraction, seed, score_z, precision, progress: as for
        :class:`rankcut.cutters.attncut.AttnCut`; both networks use them and the same
        validation queries.

    Learned attributes: those of :class:`rankcut.cutters.neural.NeuralCutter` for the metric
    AttnCut (``net_``), and ``recall_net_``, ``recall_history_``, ``recall_best_epoch_``,
    ``recall_val_loss_`` for the recall model.
    """

    paper = "recall-constrained AttnCut (Wu et al., AAAI 2021, Table 4)"

    spec_param = ("sigma", float)
    networks = ("net", "recall_net")
    summary_attributes = (*NeuralCutter.summary_attributes, "recall_history_", "recall_best_epoch_",
                          "recall_val_loss_")

    def __init__(
        self,
        *,
        sigma: float = SIGMA,
        bins: int = 5,
        metric: str = METRIC,
        recall_base: str = RECALL_BASE,
        tau: float = 0.95,
        **options: Any,
    ) -> None:
        self.sigma = sigma
        self.bins = bins
        self.metric = metric
        self.recall_base = recall_base
        self.tau = tau
        super().__init__(**options)

    def _validate_params(self) -> None:
        check_number(self.sigma, "sigma", low=0.0, high=1.0, low_closed=True, high_closed=True)
        check_int(self.bins, "bins", low=2)
        check_number(self.tau, "tau", low=0.0)
        super()._validate_params()

    def _build_networks(self, n_features: int) -> dict[str, torch.nn.Module]:
        from rankcut.nn.models import AttnCutNet

        return {"net": AttnCutNet(n_features), "recall_net": AttnCutNet(n_features, n_outputs=int(self.bins))}

    def _train(self, lists: RankedLists, encoder: InputEncoder,
               nets: dict[str, torch.nn.Module]) -> dict[str, Any]:
        from rankcut.nn import losses
        from rankcut.nn.models import argmax_cuts
        from rankcut.nn.training import fit_network

        tau, bins = float(self.tau), int(self.bins)
        options = {"encoder": encoder, **self._training_options()}
        ranked = fit_network(
            nets["net"], lambda out, b, epoch: losses.raml_loss(out, b.rewards, b.mask, tau=tau),
            argmax_cuts, lists, desc=f"{self.name} (metric)", **options)
        recall = fit_network(
            nets["recall_net"],
            lambda out, b, epoch: losses.recall_bins_loss(
                out, losses.recall_bin_targets(b.labels, b.mask, bins), b.mask),
            None, lists, desc=f"{self.name} (recall)", **options)
        return {**summary_of(ranked), **summary_of(recall, prefix="recall_")}

    def _decide(self, outputs: dict[str, torch.Tensor], mask: torch.Tensor) -> NDArray[np.int64]:
        from rankcut.nn.models import recall_constrained_cuts

        return recall_constrained_cuts(outputs["net"], outputs["recall_net"], mask, float(self.sigma))
